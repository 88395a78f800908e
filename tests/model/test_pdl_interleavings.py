"""The oracle's SC labels under PDL against the interleaving interpreter (tests/model/interleavings.py,
written independently of the model's rule), on the two-grid programs the project's own strategy
draws: ``fuzzgpu.strategies.programs("pdl")``, what `fuzzgpu campaign --profile pdl` runs (issue 27).

Property: for each drawn program the interpreter runs (straight-line code: ``supported``), the
oracle's ``sc`` set is exactly the outcomes of the interleavings, so every outcome the oracle labels
``sc`` is produced by an interleaving and every interleaving's outcome is labelled ``sc`` (never
``forbidden``).  400 examples, derandomized (a few seconds); bench/pdl_interleavings.py runs
thousands.
"""

from __future__ import annotations

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fuzzgpu import strategies as fst
from fuzzgpu.ir import Fence, GridDepControl, Load, Location, Placement, Program, Scope, Sem, Store, Thread, validate
from fuzzgpu.litmus import format_program
from fuzzgpu.model import analyse

from interleavings import Interleavings, supported


def agree(p) -> tuple[set, set]:
    """(the oracle's sc set, the interleavings' outcomes) of ``p``."""
    return set(analyse(p).sc), Interleavings(p).outcomes()


@settings(max_examples=400, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(fst.programs("pdl"))
def test_oracle_sc_labels_are_the_interleavings(p):
    assume(supported(p))
    got, want = agree(p)
    assert got == want, (f"{format_program(p)}\nonly in the oracle's sc set: {sorted(got - want)}\n"
                         f"only in the interleavings: {sorted(want - got)}")


@st.composite
def trigger_programs(draw) -> Program:
    """A PDL pair focused on the triggers: 1-2 primary threads (one CTA or two) of 2-4 instructions
    from launch_dependents, a load or store of x or y, and a fence of any semantics and scope; a
    dependent of 1-2 loads, stores or a griddepcontrol.wait.  Draws issue 27's M1 and M2 shapes."""
    value, threads, observed = 0, [], []
    n_primary = draw(st.integers(1, 2))
    for tid in range(n_primary + 1):
        dependent = tid == n_primary
        code = []
        for i in range(draw(st.integers(1, 2) if dependent else st.integers(2, 4))):
            kinds = ("ld", "st", "wait") if dependent else ("launch", "ld", "st", "fence")
            kind = draw(st.sampled_from(kinds))
            loc = draw(st.sampled_from(("x", "y")))
            value += 1
            if kind == "ld":
                code.append(Load(f"r{i}", loc))
                observed.append(f"P{tid}:r{i}")
            elif kind == "st":
                code.append(Store(loc, value))
            elif kind == "fence":
                code.append(Fence(draw(st.sampled_from((Sem.ACQ_REL, Sem.SC, Sem.ACQUIRE, Sem.RELEASE))),
                                  draw(st.sampled_from((Scope.CTA, Scope.GPU, Scope.SYS)))))
            else:
                code.append(GridDepControl("launch_dependents" if kind == "launch" else "wait"))
        cta = 0 if dependent else draw(st.integers(0, 1))
        threads.append(Thread(f"P{tid}", Placement(cta=cta, grid=1 if dependent else 0), tuple(code)))
    return validate(Program("triggers", tuple(threads), (Location("x"), Location("y")), None,
                            observed=tuple(observed) + ("x", "y"), pdl_grids=(1,)))


@settings(max_examples=300, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(trigger_programs())
def test_oracle_sc_labels_on_trigger_shapes(p):
    got, want = agree(p)
    assert got == want, (f"{format_program(p)}\nonly in the oracle's sc set: {sorted(got - want)}\n"
                         f"only in the interleavings: {sorted(want - got)}")

