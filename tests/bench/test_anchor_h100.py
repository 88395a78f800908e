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
