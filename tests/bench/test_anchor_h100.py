"""bench/results/anchor/h100-h100only/: the figures its README and the anchor page quote are its anchor.json's."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "bench" / "results" / "anchor" / "h100-h100only"


def flat(path: Path) -> str:
    return " ".join(path.read_text().split())


def test_the_h100_run_is_its_file() -> None:
    d = json.loads(gzip.decompress((RUN / "anchor.json.gz").read_bytes()))
    rows = d["rows"]
    fz = {r["variant"] for r in rows if r["fuzzgpu"].get("condition", 0) > 0}
    an = {r["variant"] for r in rows if (r.get("anchor") or {}).get("condition", 0) > 0}
    assert len(rows) == 146 and all(r["seen"] for r in rows)
    assert d["forbidden_observed"]["fuzzgpu"] == 0  # no outcome the model forbids
    said = (f"fuzzgpu {len(fz)} of the 146, cuda-litmus's runner {len(an)} ({len(fz & an)} both, {len(fz - an)} fuzzgpu "
            f"alone, {len(an - fz)} the runner alone)")
    assert said in flat(RUN / "README.md")
    assert f"fuzzgpu showed {len(fz)}, the runner {len(an)}" in flat(ROOT / "bench" / "results" / "anchor" / "README.md")
    assert all(0.45 <= r["fuzzgpu"]["gpu_s"] <= 0.75 for r in rows)


def test_the_h100_runs_throughputs_are_its_file() -> None:
    """The README's instance rates (the harness's three configurations, the two tools' mean search rates) are
    anchor.json's."""
    d = json.loads(gzip.decompress((RUN / "anchor.json.gz").read_bytes()))
    tp = d["throughput"]
    text = flat(RUN / "README.md")
    assert (f"the harness {tp['default']['rate'] / 1e9:.2f}e9/s on the fixed MP test ({tp['stripe_ctas']['rate'] / 1e9:.2f}e9/s "
            f"`stripe_ctas`, {tp['test_ctas=512']['rate'] / 1e9:.2f}e9/s 512 test CTAs") in text
    fz = [r["fuzzgpu"]["instances"] / r["fuzzgpu"]["gpu_s"] for r in d["rows"]]
    an = [r["anchor"]["instances"] / r["anchor"]["seconds"] for r in d["rows"] if r["anchor"].get("seconds")]
    assert f"fuzzgpu's searches ran {sum(fz) / len(fz) / 1e8:.1f}e8 instances/s on average, the runner {sum(an) / len(an) / 1e8:.1f}e8/s" in text


def test_the_unshown_list_is_the_unions_unshown_seen_variants() -> None:
    """unshown-105.txt is every seen variant with no condition instance by fuzzgpu over the runs and mechanism
    calls the union was computed from (h200-mended/union.json names them)."""
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    from anchor_union import union

    a = ROOT / "bench" / "results" / "anchor"
    named = json.loads((a / "h200-mended" / "union.json").read_text())
    u = union([ROOT / r for r in named["runs"]], [ROOT / m for m in named["mechanisms"]])
    unshown = sorted(n for n, v in u.items() if v["seen"] and v["fuzzgpu"] == 0)
    assert (a / "unshown-105.txt").read_text().split() == unshown and len(unshown) == 105


def test_the_unshown_105_on_an_h100_is_its_file() -> None:
    """h100-unshown-105/: fuzzgpu alone on the 105 variants unshown-105.txt names, 4.5 GPU-s each; the variants it
    showed, their condition instances and the instances of the rest are what its README and the anchor page say."""
    run = ROOT / "bench" / "results" / "anchor" / "h100-unshown-105"
    d = json.loads(gzip.decompress((run / "anchor.json.gz").read_bytes()))
    rows = d["rows"]
    names = (ROOT / "bench" / "results" / "anchor" / "unshown-105.txt").read_text().split()
    assert sorted(r["variant"] for r in rows) == sorted(names) and d["forbidden_observed"]["fuzzgpu"] == 0
    assert all(4.5 <= r["fuzzgpu"]["gpu_s"] <= 4.52 for r in rows)
    shown = [r for r in rows if r["fuzzgpu"].get("condition", 0) > 0]
    text = flat(run / "README.md")
    assert f"**What it showed: {len(shown)} of the {len(rows)}**" in text
    h100_only = {r["variant"] for r in json.loads(gzip.decompress((RUN / "anchor.json.gz").read_bytes()))["rows"]}
    for r in shown:  # the artifact's column: the H100's alone exactly when h100-h100only/ (all 146 of those) ran it
        f = r["fuzzgpu"]
        gpus = "the H100 only" if r["variant"] in h100_only else "the H100 and the GH200"
        assert (f"| `{r['variant']}` | {f['condition']:,} | {f['instances']:.3g} | {gpus} |"
                .replace("e+09", "e9").replace("e+07", "e7")) in text
    rest = [r["fuzzgpu"]["instances"] for r in rows if not r["fuzzgpu"].get("condition")]
    said = f"the other {len(rest)} nothing in {min(rest) / 1e9:.1f}-{max(rest) / 1e9:.1f}e9 instances each"
    assert said.replace("the other", "The other").replace(" nothing", " showed nothing") in text
    assert f"**fuzzgpu showed {len(shown)} of the {len(rows)}**" in flat(ROOT / "bench" / "results" / "anchor" / "README.md")
    # the list the next H200 run includes (h100-shown-5.txt) is exactly the variants this run showed
    assert sorted((ROOT / "bench" / "results" / "anchor" / "h100-shown-5.txt").read_text().split()) == sorted(r["variant"] for r in shown)
    assert said in flat(ROOT / "bench" / "results" / "anchor" / "README.md")


def test_the_two_wwc_variants_are_the_last_of_the_413() -> None:
    """The anchor page's "the last 2 of the 413 both the artifact's H100 and GH200 showed": the union's row of those
    413 lacks two, the unshown variants that are not the H100's alone (h100-h100only/ ran all 146 of those) are two,
    and the H100 run of the 105 showed both."""
    a = ROOT / "bench" / "results" / "anchor"
    both = next(r for r in json.loads((a / "h200-mended" / "union.json").read_text())["rows"]
                if r["shown by (the artifact)"] == "H100 and GH200")
    h100_only = {r["variant"] for r in json.loads(gzip.decompress((RUN / "anchor.json.gz").read_bytes()))["rows"]}
    rest = set((a / "unshown-105.txt").read_text().split()) - h100_only
    shown = {r["variant"] for r in json.loads(gzip.decompress((a / "h100-unshown-105" / "anchor.json.gz").read_bytes()))["rows"]
             if r["fuzzgpu"].get("condition", 0) > 0}
    assert both["variants"] - both["fuzzgpu"] == len(rest) == 2 and rest <= shown
    assert f"the last {len(rest)} of the {both['variants']} both" in flat(a / "README.md")
    assert f"among them the last {len(rest)} of the {both['variants']} both GPUs showed" in flat(ROOT / "README.md")


def test_the_unshown_105_runs_rates_are_its_file() -> None:
    """h100-unshown-105/README.md's search rate, total instances and the harness's three rates are anchor.json's."""
    run = ROOT / "bench" / "results" / "anchor" / "h100-unshown-105"
    d = json.loads(gzip.decompress((run / "anchor.json.gz").read_bytes()))
    rows, tp = d["rows"], d["throughput"]
    mean = sum(r["fuzzgpu"]["instances"] / r["fuzzgpu"]["gpu_s"] for r in rows) / len(rows)
    total = sum(r["fuzzgpu"]["instances"] for r in rows)
    text = flat(run / "README.md")
    assert f"fuzzgpu's searches ran {mean / 1e8:.1f}e8 instances/s on average, {total / 1e11:.1f}e11 instances in all" in text
    assert (f"the harness {tp['default']['rate'] / 1e9:.2f}e9/s on the fixed MP test, {tp['stripe_ctas']['rate'] / 1e9:.2f}e9/s "
            f"`stripe_ctas`, {tp['test_ctas=512']['rate'] / 1e9:.2f}e9/s 512 test CTAs") in text
