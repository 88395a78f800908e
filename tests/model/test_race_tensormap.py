"""Class D (a tensor map updated in flight) of issue 32: the hand-written catalogue
tests/litmus/race-tensormap (verdicts argued from the PTX ISA in each file; its rows are checked in test_race_catalogues.py), the race property's
class of each racy witness, and the fixes (the tensormap proxy fence pair; a wait before the
rewrite)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu import fixes
from fuzzgpu.ir import eval_expr
from fuzzgpu.litmus import format_program, parse, parse_file
from fuzzgpu.model.race import analyse_races
from fuzzgpu.bug_classes import CLASS_NAMES, CLASSES


HERE = Path(__file__).resolve().parents[1] / "litmus" / "race-tensormap"


def test_the_class_has_its_number():
    assert CLASS_NAMES[11] == "tensormap-update-in-flight" and CLASSES[11].startswith("D.")


@pytest.mark.parametrize("name", sorted(f.stem for f in HERE.glob("*.litmus")))
def test_the_litmus_text_round_trips(name):
    p = parse_file(HERE / f"{name}.litmus")
    assert parse(format_program(p)) == p


def test_the_fix_of_a_rewrite_in_flight_waits_first():
    """One change: a wait for the copy's phase before the rewrite (NORACE-11-rewrite-after-completion
    moves the program's own wait there instead; the fix search inserts a wait loop)."""
    p = parse_file(HERE / "RACE-11-rewrite-in-flight.litmus")
    ra = analyse_races(p)
    fix = fixes.find_fix(p, [dict(o) for o in ra.possible if eval_expr(p.condition.expr, dict(o))])
    assert fix is not None and len(fix.changes) == 1, fix
    assert fix.changes[0].kind == "wait" and "before `tensormap.replace" in fix.text, fix.text
    assert not analyse_races(fix.program).is_racy


@pytest.mark.parametrize("racy", ["RACE-11-replace-no-fence", "RACE-11-same-thread-no-fence"])
def test_the_fix_adds_the_tensormap_fence_pair(racy):
    """Neither fence alone orders the replace before the copy's read of the map (ISA: a release
    sequence synchronizes with an acquire sequence): the fix is the pair, two changes (the acquire
    may land after the flag's acquire load inside the spin loop: the loop leaves only past it)."""
    p = parse_file(HERE / f"{racy}.litmus")
    ra = analyse_races(p)
    outs = [dict(o) for o in ra.possible if eval_expr(p.condition.expr, dict(o))]
    fix = fixes.find_fix(p, outs)
    assert fix is not None and len(fix.changes) == 2, fix
    assert "fence.proxy.tensormap::generic.release" in fix.text and "fence.proxy.tensormap::generic.acquire" in fix.text
    assert not analyse_races(fix.program).is_racy
