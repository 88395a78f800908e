"""fuzzgpu.model.termination: must every bounded wait complete, or may one spin for ever?

tests/litmus/termination/ holds one litmus test per case of the rule (docs/oracle.md, "Termination
of waits"), each with a comment quoting the PTX ISA sentence that decides it, and ``expected.csv``
(``path,status``) written by hand from that reasoning, never from the oracle's output.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings

from fuzzgpu import model
from fuzzgpu import strategies as fst
from fuzzgpu.litmus import parse_file
from fuzzgpu.model import liveness as T

from paths import catalogue_rows

FOLDER = Path(__file__).resolve().parents[1] / "litmus" / "termination"


@pytest.mark.parametrize("row", catalogue_rows(FOLDER), ids=lambda r: r["path"])
def test_termination_catalogue(row):
    p = parse_file(FOLDER / row["path"])
    t = model.termination(p)
    assert t.status == row["status"], f"{row['path']}: {t.status}: {t.reason}"
    assert t.may_hang == (row["status"] in ("may-hang", "must-hang"))
    assert t.must_complete == (row["status"] == "must-complete")
    if t.may_hang:  # the reason names the thread and the wait that may spin for ever
        assert t.hang is not None and t.hang.thread in t.reason and t.hang.label in t.reason
        assert t.hang.text.split(":")[0] == t.hang.label


def test_catalogue_shape():
    rows = catalogue_rows(FOLDER)
    files = sorted(f.name for f in FOLDER.glob("*.litmus"))
    assert sorted(r["path"] for r in rows) == files
    assert {r["status"] for r in rows} == set(T.STATUSES)
    for name in files:
        text = " ".join(parse_file(FOLDER / name).comments)
        assert "PTX ISA" in text and "Verdict" in text and "'" in text, f"{name}: no quoted ISA justification"


def test_waits_are_the_backward_jumps():
    p = parse_file(FOLDER / "Spin-handshake.litmus")
    ws = T.waits(p)
    assert [(w.thread, w.label) for w in ws] == [("P0", "LC00"), ("P1", "LC01")]
    assert ws[0].text == "LC00: ld.acquire.gpu r0, y; beq r0, 0, LC00"


def test_may_hang_reason_says_why():
    weak = model.termination(parse_file(FOLDER / "MP-spin-weak-flag.litmus"))
    assert "not morally strong" in weak.reason and "other executions complete" in weak.reason
    never = model.termination(parse_file(FOLDER / "MP-spin-flag-never-set.litmus"))
    assert "returns the last value, y=0" in never.reason and "no execution completes" in never.reason
    mbar = model.termination(parse_file(FOLDER / "MBAR-spin-count2-one-arrive.litmus"))
    assert "1 arrival(s) pending" in mbar.reason


def test_unsupported_is_unknown(monkeypatch):
    def boom(*a, **k):
        raise model.Unsupported("a mechanism the oracle does not model")

    monkeypatch.setattr(T, "_judge", boom)
    p = parse_file(FOLDER / "Spin-MP-relacq-gpu.litmus")
    T.termination.cache_clear()
    try:
        t = T.termination(p)
    finally:
        T.termination.cache_clear()
    assert t.status == "unknown" and "not covered by the oracle" in t.reason


def test_the_name_changes_nothing():
    """Renaming the program keeps the verdict (a pure function of the code, not of the name)."""
    p = parse_file(FOLDER / "MBAR-spin-count1-one-arrive.litmus")
    assert model.termination(dataclasses.replace(p, name="other")).status == "must-complete"


@settings(max_examples=25, deadline=None)
@given(fst.classic())
def test_loop_free_programs_must_complete(p):
    t = model.termination(p)
    assert t.must_complete and not t.waits


def test_barrier_deadlock_has_no_final_state():
    """Named barriers waited in opposite orders (issue 12, item 10): no execution completes, so the
    oracle allows no final state, and ``fuzzgpu check`` says so; the same barriers in the same order
    are a plain barrier-synchronised MP."""
    from fuzzgpu.commands.check import check_one, format_herd
    from fuzzgpu.model import check_condition

    path = FOLDER / "Barrier-named-opposite-order.litmus"
    p = parse_file(path)
    obs = check_condition(p)
    assert obs.analysis.allowed == frozenset() and not obs.witness_reachable and obs.observation == "Never"
    out = format_herd(check_one(p, str(path), 1, False))
    assert "States 0" in out and "No final state is reachable" in out and "cycle" in out
    same = parse_file(FOLDER / "Barrier-named-same-order.litmus")
    assert check_condition(same).analysis.allowed == frozenset({(("P1:r0", 1),)})
    assert "No final state" not in format_herd(check_one(same, "same", 1, False))


def test_barrier_hang_reason_names_the_barriers():
    t = model.termination(parse_file(FOLDER / "Barrier-named-opposite-order.litmus"))
    assert t.status == T.MUST_HANG and t.hang is not None
    assert "P0 in bar.cta.sync 0" in t.reason and "P1 in bar.cta.sync 1" in t.reason
