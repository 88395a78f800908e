"""Invariants of the oracle over random programs (Hypothesis):

* every SC outcome (an interleaving) is allowed by the PTX model;
* strengthening one annotation never adds an allowed outcome;
* the oracle's per-outcome judgement agrees with the set of allowed outcomes.
"""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzgpu.model import analyse, judge
from fuzzgpu.strategies import litmus_programs, strengthenings

PROPERTY_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY_SETTINGS
@given(litmus_programs())
def test_sc_outcomes_are_allowed(p):
    a = analyse(p)
    assert a.sc, "an interleaving always exists for straight-line programs without barriers"
    assert a.sc <= a.allowed, f"SC outcomes the model forbids: {sorted(a.sc - a.allowed)}"


@PROPERTY_SETTINGS
@given(litmus_programs(max_threads=2, max_instructions=3), st.data())
def test_strengthening_never_adds_outcomes(p, data):
    base = analyse(p, sc=False).allowed
    options = list(strengthenings(p))
    what, stronger = data.draw(st.sampled_from(options))
    allowed = analyse(stronger, sc=False).allowed
    assert allowed <= base, f"{what} added {sorted(allowed - base)}"


@settings(max_examples=60, deadline=None)
@given(litmus_programs(max_threads=2, max_instructions=3))
def test_judge_agrees_with_allowed_set(p):
    a = analyse(p)
    for o in list(a.allowed)[:4]:
        assert judge(p, dict(o)).verdict in ("sc", "allowed")
    for o in list(a.sc)[:4]:
        assert judge(p, dict(o)).verdict == "sc"
