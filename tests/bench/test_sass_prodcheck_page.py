"""The FlashInfer/DeepGEMM page (bench/results/sass/prodcheck-2026-12-05/README.md): its before/after table is
the analyses it names -- each kept PTX/SASS pair of the hostile check analysed by the checker before (c9e6e26)
and after this round's fixes, `rejudge.py`'s JSON in rejudge/before and rejudge/after (the projects' sources
and their PTX/SASS are not in the repository) -- row for row, computed here."""

from __future__ import annotations

import json
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "bench" / "results" / "sass" / "prodcheck-2026-12-05"


def cell(d: dict) -> str:
    """One analysis as the table says it: its findings by check and verdict, its functions not fully checked."""
    parts = [f"{n} {k}" for k, n in sorted(d["findings"].items())]
    if d["incomplete_functions"]:
        parts.append(f"{d['incomplete_functions']} not fully checked")
    return "; ".join(parts) or ("clean" if d["complete"] else "0 findings, the module not fully checked")


def rows() -> list[str]:
    out = []
    for after in sorted((PAGE / "rejudge" / "after").glob("*.json")):
        a = json.loads(after.read_text())
        b = json.loads((PAGE / "rejudge" / "before" / after.name).read_text())
        assert a["functions"] == b["functions"]
        folder, tu = after.stem.split("__")
        out.append(f"| `{tu}` (`{folder}`) | {a['functions']} | {cell(b)} | {cell(a)} |")
    return out


def test_the_before_and_after_table_is_the_analyses() -> None:
    page = (PAGE / "README.md").read_text()
    table = rows()
    assert len(table) == 18 and all(r in page for r in table), "\n".join(r for r in table if r not in page)


def test_every_finding_at_O3_is_gone_and_the_O1_ones_left_are_said() -> None:
    """The page's headline figures: at -O3 no finding is left; at ptxas -O1 and -O0 some false "forbidden" are."""
    def of(name: str, when: str) -> dict:
        return json.loads((PAGE / "rejudge" / when / f"{name}.json").read_text())

    o3 = [p.stem for p in (PAGE / "rejudge" / "after").glob("*.json") if not p.stem.startswith(("keep_tar_O1", "keep_ar_O0"))]
    before = sum(sum(of(n, "before")["findings"].values()) for n in o3)
    assert before == 102 and all(of(n, "after")["findings"] == {} for n in o3)
    flat = " ".join((PAGE / "README.md").read_text().split())
    o1, o0 = of("keep_tar_O1__tar_driver.sm_90a", "after"), of("keep_ar_O0__tar_driver.sm_90a", "after")
    assert f"`tar_driver` at `-O1`: 84 -> **{o1['findings']['crossing/forbidden']}** false \"forbidden\"" in flat
    assert f"at `-O0`: 84 -> **{o0['findings']['crossing/forbidden']}**" in flat
    assert of("keep_tar_O1__tar_driver.sm_90a", "before")["findings"] == {"crossing/forbidden": 84}


def test_the_O0_mending_is_its_analysis() -> None:
    """The page's -O0 figures after c64fabc are rejudge/now-c64fabc's analyses (the rebuilt pairs)."""
    now = PAGE / "rejudge" / "now-c64fabc"
    o0 = json.loads((now / "keep_ar_O0__tar_driver.sm_90a.json").read_text())
    before = json.loads((PAGE / "rejudge" / "after" / "keep_ar_O0__tar_driver.sm_90a.json").read_text())
    dev = json.loads((now / "keep_routing__trtllm_fused_moe_dev_kernel.sm_90a.json").read_text())
    page = " ".join((PAGE / "README.md").read_text().split())
    assert before["findings"] == {"crossing/forbidden": 28} and o0["findings"] == {} and o0["complete"]
    assert f"28 -> 0, all {o0['functions']} functions fully checked" in page
    assert f"{dev['functions']} functions, {dev['incomplete_functions']} not fully checked, as before" in page


def test_the_O1_mending_is_its_analysis() -> None:
    """The page's -O1 figures after 3b96ed0 are the rebuilt pairs' analyses: rejudge/rebuilt-583756c (the checker
    before the fix) and rejudge/now-3b96ed0 (after), each at -O1, -O0 and -O3."""
    rebuilt, now = PAGE / "rejudge" / "rebuilt-583756c", PAGE / "rejudge" / "now-3b96ed0"
    names = ("keep_tar_O1", "keep_ar_O0", "keep_tar")
    before = [json.loads((rebuilt / f"{n}__tar_driver.sm_90a.json").read_text()) for n in names]
    after = [json.loads((now / f"{n}__tar_driver.sm_90a.json").read_text()) for n in names]
    assert [b["findings"] for b in before] == [{"crossing/forbidden": 9}, {}, {}]
    assert all(a["findings"] == {} and a["complete"] and a["incomplete_functions"] == 0 for a in after)
    assert all(d["functions"] == 66 for d in before + after)
    page = " ".join((PAGE / "README.md").read_text().split())
    assert f"9 -> 0, all {after[0]['functions']} functions fully checked" in page
    assert "9 crossing/forbidden, clean, clean" in page and "after: clean, clean, clean" in page
