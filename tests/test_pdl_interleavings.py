"""The oracle's SC labels under PDL against the interleaving interpreter (tests/interleavings.py,
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

from fuzzgpu import strategies as fst
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
