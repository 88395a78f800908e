"""bench/oracle_speed.py --bars: the fix search's question of a candidate asked over every path and with
``prune_bars`` (the answers must be equal: tests/model/test_bar_pruning.py says why); here on a few
campaign draws, and the committed run's file: every answer equal, and the page's figures its own.  And the fix
searches of a campaign's corpus before and after (throughput/fix-search/prune-bars-b08c4ef): the same fixes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_few_campaign_draws_get_the_same_answer() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    import oracle_speed

    rows = oracle_speed.bars_rows("all", 12, [1])
    assert any("mbarrier" in r["uses"] for r in rows) and all(r["same"] for r in rows)
    assert all(r["full"] == r["pruned"] for r in rows)


def flat(path: Path) -> str:
    return " ".join(path.read_text().split())


def test_the_committed_run_and_the_pages_that_quote_it() -> None:
    doc = json.loads((ROOT / "bench" / "results" / "oracle_speed" / "bars-b08c4ef.json").read_text())
    assert doc["same"] == doc["programs"] == 600 and all(r["full"] == r["pruned"] for r in doc["rows"])
    mb = doc["with an mbarrier"]
    page = flat(ROOT / "bench" / "results" / "throughput" / "README.md")
    assert (f"{mb['full_ms']['mean']} -> {mb['pruned_ms']['mean']} CPU ms a program with an mbarrier (mean), the same answers "
            f"for {doc['same']} of {doc['programs']}") in page


def test_the_fix_search_before_and_after_and_every_path() -> None:
    """fix-search/prune-bars-b08c4ef: the figures the README and the throughput page give are the three runs' files; the
    searches whose result changed are the ones searched again over every path, with the same result, fix text and
    candidates; every fix the campaign wrote is found again with its text."""
    import tarfile

    base = ROOT / "bench" / "results" / "throughput" / "fix-search" / "prune-bars-b08c4ef"
    before, after, every = (json.loads((base / d / "fix-search.json").read_text()) for d in ("before-b2dea86", "after", "every-path"))
    b, a = before["summary"], after["summary"]
    within = [sum(x[k]["fixes_within"] for k in ("shrunk", "unshrunk")) for x in (b["by_bound"][0], a["by_bound"][0])]
    assert b["by_bound"][0]["bound_s"] == a["by_bound"][0]["bound_s"] == 30.0
    folder, page = flat(base / "README.md"), flat(ROOT / "bench" / "results" / "throughput" / "README.md")
    cut = round(100 * (1 - a["cpu_s_total_at_bound"] / b["cpu_s_total_at_bound"]))
    assert (f"**{b['cpu_s_total_at_bound']} CPU-s before, {a['cpu_s_total_at_bound']} after (-{cut}%)**; **{within[0]} fixes found "
            f"within 30 CPU-s before, {within[1]} after**") in folder
    assert (f"{b['cpu_s_total']} against {a['cpu_s_total']} CPU-s, {b['past_limit']} searches past it before, {a['past_limit']} after; "
            f"{b['fix']} fixes and {b['no_fix']} \"no fix\" before, {a['fix']} and {a['no_fix']} after") in folder
    assert (f"**{b['cpu_s_total_at_bound']} -> {a['cpu_s_total_at_bound']} CPU-s with each search stopped at 30 CPU-s (-{cut}%), "
            f"{within[0]} -> {within[1]} fixes found within it**") in page
    rb, ra = ({r["entry"]: r for r in d["rows"]} for d in (before, after))
    changed = sorted(k for k in rb if rb[k].get("found") != ra[k].get("found"))
    assert sorted(r["entry"] for r in every["rows"]) == changed and len(changed) == 11
    assert all(rb[k]["found"] == "past the limit" for k in changed)
    assert all(rb[k].get("found") != "fix" or ra[k].get("found") == "fix" for k in rb)  # no fix lost
    for r in every["rows"]:
        assert (r["found"], r["fix_text"], r["candidates"]) == (ra[r["entry"]]["found"], ra[r["entry"]]["fix_text"], ra[r["entry"]]["candidates"])
    fixes = [r for r in every["rows"] if r["found"] == "fix"]
    e_cpu, a_cpu = round(sum(r["cpu_s"] for r in every["rows"]), 1), round(sum(ra[r["entry"]]["cpu_s"] for r in every["rows"]), 1)
    assert f"the same result for all 11 -- {len(fixes)} fixes of the same text, {11 - len(fixes)} \"no fix\" --" in folder
    assert f"in {e_cpu} CPU-s against the pruned searches' {a_cpu}" in folder and f"{e_cpu} CPU-s against {a_cpu}" in page
    with tarfile.open(ROOT / "bench" / "results" / "throughput" / "h100-600s-2665391-w20" / "corpus.tar.gz") as tf:
        wrote = {k: json.load(tf.extractfile(f"corpus/{k}"))["verdict"].get("fix") or "" for k in ra if ra[k]["campaign"] == "fix"}  # type: ignore[arg-type]
    assert len(wrote) == 100 and all(ra[k]["found"] == "fix" and ra[k]["fix_text"] in text for k, text in wrote.items())
