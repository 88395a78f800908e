"""The first steps of a race-catalogue test (tests/litmus/race, tests/litmus/race-lifecycle): the
program, its race analysis, the row's racy/race-free verdict checked, and the row's witness: none
when the row says ``forbidden`` (no outcome satisfies the test's condition), else the one outcome
that does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fuzzgpu import fixes
from fuzzgpu.ir import Program, eval_expr
from fuzzgpu.litmus import parse_file
from fuzzgpu.model.race import RaceAnalysis, analyse_races
from fuzzgpu.bug_classes import finding_class


def judged(path: Path, row: dict[str, Any]) -> tuple[Program, RaceAnalysis, Any | None]:
    p = parse_file(path)
    ra = analyse_races(p)
    assert ra.is_racy == (row["racy"] == "true")
    witnesses = [o for o in ra.possible if eval_expr(p.condition.expr, dict(o))]
    if row["witness"] == "forbidden":
        assert witnesses == []
        return p, ra, None
    assert len(witnesses) == 1
    return p, ra, witnesses[0]


def fix_matches(folder: Path, racy: str, fixed: str) -> Program:
    """The fix search's answer for the racy catalogue program ``racy``: one change, giving exactly
    the code of the race-free ``fixed`` program (both files of ``folder``); returns the fix."""
    p = parse_file(folder / f"{racy}.litmus")
    ra = analyse_races(p)
    outs = [dict(o) for o in ra.possible if eval_expr(p.condition.expr, dict(o))]
    fix = fixes.find_fix(p, outs)
    assert fix is not None and len(fix.changes) == 1, fix
    want = parse_file(folder / f"{fixed}.litmus")
    assert [t.code for t in fix.program.threads] == [t.code for t in want.threads], fix.text
    return fix.program


def check_row(folder: Path, row: dict[str, str]) -> None:
    """A catalogue row (path, racy, witness, mechanism, class) against the race analysis: the
    racy/race-free verdict, the witness's verdict and, when it is racy, the mechanism and class of
    every racing pair that explains it."""
    p, ra, witness = judged(folder / row["path"], row)
    if witness is None:
        return
    assert ra.verdict(witness) == row["witness"]
    if row["witness"] != "racy":
        return
    pairs = ra.racy[witness]
    assert {pr.mechanism for pr in pairs} == {row["mechanism"]}
    assert {finding_class(p, pr.mechanism, pr.other_at) for pr in pairs} == {int(row["class"])}
