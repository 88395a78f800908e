"""The first steps of a race-catalogue test (tests/litmus/race, tests/litmus/race-lifecycle): the
program, its race analysis, the row's racy/race-free verdict checked, and the outcomes that satisfy
the test's condition."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fuzzgpu.ir import Program, eval_expr
from fuzzgpu.litmus import parse_file
from fuzzgpu.model.race import RaceAnalysis, analyse_races


def judged(path: Path, row: dict[str, Any]) -> tuple[Program, RaceAnalysis, list[Any]]:
    p = parse_file(path)
    ra = analyse_races(p)
    assert ra.is_racy == (row["racy"] == "true")
    return p, ra, [o for o in ra.possible if eval_expr(p.condition.expr, dict(o))]
