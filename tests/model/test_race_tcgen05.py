"""Classes E (12) and G (14) of issue 32 (tensor memory, sm_100a): the hand-written catalogue
tests/litmus/race-tcgen05 (verdicts argued from the PTX ISA in each file; its rows are checked in test_race_catalogues.py), the race property's class
of each racy witness, and the fixes (a tcgen05.wait::st / ::ld inserted before the handoff; the
allocation's publication strengthened)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu.bug_classes import CLASS_NAMES, CLASSES
from fuzzgpu.litmus import format_program, parse, parse_file
from fuzzgpu.model.race import analyse_races

from race_catalogue import fix_matches

HERE = Path(__file__).resolve().parents[1] / "litmus" / "race-tcgen05"


def test_the_classes_have_their_numbers():
    assert CLASS_NAMES[12] == "tcgen05-not-awaited" and CLASSES[12].startswith("E.")
    assert CLASS_NAMES[14] == "tmem-alloc-published-weakly" and CLASSES[14].startswith("G.")


@pytest.mark.parametrize("name", sorted(f.stem for f in HERE.glob("*.litmus")))
def test_the_litmus_text_round_trips(name):
    p = parse_file(HERE / f"{name}.litmus")
    assert parse(format_program(p)) == p


def _fix(name: str):
    from fuzzgpu import fixes
    from fuzzgpu.ir import eval_expr

    p = parse_file(HERE / f"{name}.litmus")
    ra = analyse_races(p)
    outs = [dict(o) for o in ra.possible if eval_expr(p.condition.expr, dict(o))]
    return p, outs, fixes.find_fix(p, outs)


def test_the_fix_of_a_store_published_in_flight_is_the_wait():
    """One change: tcgen05.wait::st right after the store -- the code of NORACE-12-st-wait-then-publish."""
    assert not analyse_races(fix_matches(HERE, "RACE-12-st-published-before-wait", "NORACE-12-st-wait-then-publish")).is_racy


def test_the_fix_of_a_cell_released_in_flight_is_the_wait():
    """One change: tcgen05.wait::ld right after the load, before the release (NORACE-12-ld-wait-then-release
    moves the program's own wait there; the fix search inserts one and leaves the later one)."""
    _, _, fix = _fix("RACE-12-ld-cell-released-before-wait")
    assert fix is not None and len(fix.changes) == 1, fix
    c = fix.changes[0]
    assert (c.kind, c.thread, c.index) == ("wait", 0, 1) and "tcgen05.wait::ld" in fix.text, fix.text
    assert not analyse_races(fix.program).is_racy


def test_the_fix_of_a_weak_publication_strengthens_it():
    """The weak flag of RACE-14-alloc-weak-flag: the fix search's answer forbids the witness (no spin
    loop: P1 may still read early, so the program stays racy, as NORACE-14-alloc-release-acquire's loop
    is not the search's) by strengthening the flag or adding fences: no tcgen05.wait, which orders no
    allocation."""
    p, outs, fix = _fix("RACE-14-alloc-weak-flag")
    assert fix is not None and all(c.kind in ("strengthen", "fence") for c in fix.changes), fix
    assert "tcgen05.wait" not in fix.text
    assert not [o for o in analyse_races(fix.program).possible if dict(o) in outs]


def test_a_completed_store_published_by_a_weak_flag_is_the_flags_race_not_class_e():
    """The store was waited for (tcgen05.wait::st before the flag): what fails is the weak flag (8.8: a
    weak flag forms no release pattern), so the racing pair is the flag's, not class E's -- the
    consumer's own tcgen05.ld, after the handoff, has nothing to complete before it."""
    from fuzzgpu.bug_classes import finding_class

    p = parse("PTX T\n{\nt @ shared tmem = 0;\nf @ shared = 0;\n}\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n"
              " tcgen05.st t, 1 | ld.weak r1, f ;\n tcgen05.wait::st | tcgen05.ld r2, t ;\n st.weak f, 1 | tcgen05.wait::ld ;\n"
              "exists (P1:r1 == 1 /\\ P1:r2 == 0)\n")
    ra = analyse_races(p)
    (witness,) = [o for o in ra.racy if dict(o) == {"P1:r1": 1, "P1:r2": 0}]
    assert {rp.mechanism for rp in ra.racy[witness]} == {"flag"}
    assert {finding_class(p, rp.mechanism, rp.other_at) for rp in ra.racy[witness]} == {None}


def test_a_thread_reading_its_own_store_after_the_wait_is_race_free():
    p = parse("PTX T\n{\nt @ shared tmem = 0;\n}\n P0@cta 0,gpu 0 ;\n tcgen05.st t, 1 ;\n tcgen05.wait::st ;\n"
              " tcgen05.ld r1, t ;\n tcgen05.wait::ld ;\nexists (P0:r1 == 0)\n")
    ra = analyse_races(p)
    assert not ra.is_racy and {dict(o)["P0:r1"] for o in ra.possible} == {1}


def test_tmem_is_named_only_by_tcgen05_st_and_ld():
    from fuzzgpu.errors import SourceError

    with pytest.raises(SourceError, match="tensor memory"):
        parse("PTX T\n{\nt @ shared tmem = 0;\n}\n P0@cta 0,gpu 0 ;\n ld.weak r1, t ;\nexists (P0:r1 == 0)\n")
    with pytest.raises(SourceError, match="not a tmem location"):
        parse("PTX T\n{\nx @ shared = 0;\n}\n P0@cta 0,gpu 0 ;\n tcgen05.st x, 1 ;\nexists (x == 0)\n")
