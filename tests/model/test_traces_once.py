"""A program's traces are computed once for every question asked of it (issue 29), and a repeated
question costs its budget what the computation cost: the oracle's bound is unchanged."""

from __future__ import annotations

import pytest

from fuzzgpu.model import events
from fuzzgpu.model.event import Budget, TooLarge
from programs import MP  # tests/programs.py


def test_the_traces_of_one_program_are_computed_once() -> None:
    events._TRACES.clear()
    first = events.program_traces(MP)
    assert events.program_traces(MP) is first
    assert events.program_traces(MP, loop_bound=2) is not first  # another question: another key


def test_a_repeated_question_is_charged_the_work_of_the_computation() -> None:
    events._TRACES.clear()
    fresh = Budget(10**9)
    events.compute_traces(MP, 1, fresh)
    assert fresh.used > 0
    a, b = Budget(10**9), Budget(10**9)
    events.program_traces(MP, 1, a)  # computed
    events.program_traces(MP, 1, b)  # from the cache
    assert a.used == b.used == fresh.used
    with pytest.raises(TooLarge):  # a budget too small for it runs out from the cache as it did computing
        events.program_traces(MP, 1, Budget(fresh.used - 1))


def test_a_budget_too_small_stops_the_computation_and_caches_nothing() -> None:
    events._TRACES.clear()
    with pytest.raises(TooLarge):
        events.program_traces(MP, 1, Budget(1))
    assert not events._TRACES


def test_a_batch_of_programs_keeps_its_traces_and_large_ones_make_room(monkeypatch: pytest.MonkeyPatch) -> None:
    """A campaign worker asks a batch's (64) value domains before the oracle's questions of each: the
    traces of the whole batch stay; past the work bound the oldest go, the newest always stays."""
    import dataclasses

    batch = [dataclasses.replace(MP, name=f"MP{i}") for i in range(64)]
    events._TRACES.clear()
    first = [events.program_traces(p) for p in batch]
    assert all(events.program_traces(p) is t for p, t in zip(batch, first))
    monkeypatch.setattr(events._TRACES, "limit", 1)  # every program's work is over it: only the newest is kept
    events.program_traces(dataclasses.replace(MP, name="last"))
    assert [p.name for p, *_ in events._TRACES] == ["last"]
