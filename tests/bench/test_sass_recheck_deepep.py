"""The recheck page's table of DeepEP's -rdc build with NVSHMEM (bench/results/sass/recheck-2026-12-05/README.md,
its last section) is what `fuzzgpu sass` printed on each object before (c9e6e26) and after this round's checker
changes (deepep-rdc/*.before.txt, *.after.txt: the objects and PTX are not in the repository), computed here."""

from __future__ import annotations

import re
from pathlib import Path

RECHECK = Path(__file__).resolve().parents[2] / "bench" / "results" / "sass" / "recheck-2026-12-05"
_HEAD = re.compile(r"^\S+ sm_90: (\d+) finding\(s\) \((\d+) permitted-hazard, (\d+) forbidden\) in (\d+) function\(s\); ([^;]+);")


def said(path: Path) -> tuple[int, str]:
    """(functions, the table's cell) of one output: its findings, how fully it was checked, its exit status."""
    text = path.read_text().splitlines()
    m = _HEAD.match(text[0])
    assert m is not None, text[0]
    exit_status = text[-1].removeprefix("exit ")
    findings = f"{m[1]} findings" + (f" ({m[2]} permitted-hazard, {m[3]} forbidden)" if int(m[1]) else "")
    return int(m[4]), f"{findings}, {m[5]} (exit {exit_status})"


def test_the_deepep_table_is_the_outputs() -> None:
    page = (RECHECK / "README.md").read_text()
    for obj in ("internode", "internode_ll", "intranode", "layout", "runtime", "dlink"):
        n, before = said(RECHECK / "deepep-rdc" / f"{obj}.before.txt")
        n2, after = said(RECHECK / "deepep-rdc" / f"{obj}.after.txt")
        assert n == n2
        row = f"| `{obj}.o` | {n} | {before} | {after} |"
        assert row in page, row


def test_the_17_kept_pairs_analyse_alike_before_and_after() -> None:
    """The page's "identical output for all 17": rejudge.py's JSON of each kept production-kernel pair
    (its CPU time left out) by the checker before (c9e6e26) and after this round's changes, one for one."""
    import json

    before = sorted((RECHECK / "rejudge-17" / "before").glob("*.json"))
    assert len(before) == 17
    for b in before:
        assert json.loads(b.read_text()) == json.loads((RECHECK / "rejudge-17" / "after" / b.name).read_text()), b.name
    flashmla = json.loads((RECHECK / "rejudge-17" / "after" / "flashmla-70b9468-splitkv.json").read_text())
    assert flashmla["findings"] == {"crossing/permitted-hazard": 2}


def _pairing_row(name: str, before: dict, after: dict) -> str:
    def unchecked(d: dict) -> int:
        return sum(d["unchecked"].values())

    return (f"| `{name}` | {sum(before['findings'].values())} | {'same' if before['findings'] == after['findings'] else 'CHANGED'} | "
            f"{before['functions'] - before['incomplete_functions']}/{before['functions']} -> "
            f"{after['functions'] - after['incomplete_functions']}/{after['functions']} | {unchecked(before)} -> {unchecked(after)} |")


def test_the_wait_pairing_pages_table_is_its_rejudged_files() -> None:
    """after-wait-pairing.md's table is the 17 kept builds re-judged by rejudge.py with bf3981c's checker and with
    2311b64's (rejudge-wait-pairing/<commit>/*.json), computed here: the same findings in all 17, FlashMLA 70b9468's
    hoist kept, and every not-checked line that changed is about a wait."""
    import json

    base = RECHECK / "rejudge-wait-pairing"
    page = (RECHECK / "after-wait-pairing.md").read_text()
    before = sorted((base / "bf3981c").glob("*.json"))
    assert len(before) == 17
    for b in before:
        old, new = json.loads(b.read_text()), json.loads((base / "2311b64" / b.name).read_text())
        assert _pairing_row(b.name[:-5], old, new) in page, b.name
        assert old["findings"] == new["findings"], b.name
        changed = [k for k in set(old["unchecked"]) | set(new["unchecked"]) if old["unchecked"].get(k) != new["unchecked"].get(k)]
        # a key is a not-checked line's first word: a predicated wait's is its guard (`@P2 mbarrier.test_wait...`)
        assert all("wait" in k or k.startswith("@P") for k in changed), (b.name, changed)
    flashmla = json.loads((base / "2311b64" / "flashmla-70b9468-splitkv.splitkv_mla.sm_90a.json").read_text())
    assert flashmla["findings"] == {"crossing/permitted-hazard": 2}
