"""Issue 32, class L in the general generator (fuzzgpu/strategies/widths.py): a strong flag poll
drawn 16 bits wide, a valid program whose racy outcomes are class 19; nothing narrowed where the IR
or the class does not allow it."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, find, settings

from fuzzgpu import strategies as fst
from fuzzgpu.ir import Load, Red, RmwOp, Scope, Sem, Store
from fuzzgpu.model.race import analyse_races
from fuzzgpu.semantics import checked
from fuzzgpu.bug_classes import finding_class
from fuzzgpu.strategies.widths import narrow_flag

SEARCH = settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck), database=None)


def _narrow(p) -> bool:
    return any(isinstance(i, (Load, Store)) and i.width != 32 for t in p.threads for i in t.code)


def _classes(p) -> set:
    ra = analyse_races(p)
    return {finding_class(p, pr.mechanism, pr.other_at) for prs in ra.racy.values() for pr in prs}


def test_a_narrow_poll_is_drawn_valid():
    p = find(fst.producer_consumer(), _narrow, settings=SEARCH)
    assert checked(p) is p
    (poll,) = [i for t in p.threads for i in t.code if isinstance(i, (Load, Store)) and i.width != 32]
    assert isinstance(poll, Load) and poll.width == 16 and poll.sem is not Sem.WEAK
    writes = [i for t in p.threads for i in t.code if poll.loc in i.locations() and not isinstance(i, Load)]
    assert writes and all(isinstance(w, Store) and w.width == 32 for w in writes)


@pytest.mark.slow  # a race analysis of each narrow draw while shrinking: about 90 s on 2 shared cores
def test_a_narrow_flag_poll_is_drawn_and_is_class_19():
    """Class 19 where nothing else fails (a narrow poll with a .cta scope across CTAs is class 5's)."""
    p = find(fst.producer_consumer(), lambda p: _narrow(p) and 19 in _classes(p), settings=SEARCH)
    assert _classes(p) == {19}, p


POLL = Load("r1", "f", Sem.ACQUIRE, Scope.GPU)


def test_nothing_is_narrowed_where_it_may_not_be():
    weak = Load("r1", "f")
    # a red writes the flag (no narrow access of a location an RMW names); a weak poll (class flag);
    # a value that does not fit 16 bits
    assert narrow_flag([POLL], [[Red("f", RmwOp.ADD, 1, Sem.RELEASE, Scope.GPU)], [POLL]], "f") == [POLL]
    assert narrow_flag([weak], [[Store("f", 1, Sem.RELEASE, Scope.GPU)], [weak]], "f") == [weak]
    assert narrow_flag([POLL], [[Store("f", 1 << 16, Sem.RELEASE, Scope.GPU)], [POLL]], "f") == [POLL]
    out = narrow_flag([POLL], [[Store("f", 1, Sem.RELEASE, Scope.GPU)], [POLL]], "f")
    assert out == [Load("r1", "f", Sem.ACQUIRE, Scope.GPU, width=16)]
