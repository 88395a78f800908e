"""The oracle against Dat3M's published verdicts: all 183 PTX litmus tests of
tests/litmus/dat3m (provenance and licences in its README.md).  ``witness_reachable`` is true when
some consistent, terminating execution satisfies the witness (the condition for exists/~exists,
its negation for forall)."""

import csv

import pytest

from fuzzgpu.litmus import parse_file
from fuzzgpu.model import check_condition

from paths import DAT3M as SUITE


def _rows():
    with open(SUITE / "expected.csv") as f:
        return [r for r in csv.reader(f) if r and not r[0].startswith("#")]


ROWS = _rows()


def test_suite_is_complete():
    """The suite is all there: every row of expected.csv (a truncated file would run fewer verdicts)."""
    assert len(ROWS) == 183


@pytest.mark.parametrize("path,quantifier,reachable", [pytest.param(*r, id=r[0]) for r in ROWS])
def test_verdict(path, quantifier, reachable):
    p = parse_file(SUITE / path)
    obs = check_condition(p)
    assert p.condition.quantifier == quantifier
    assert obs.witness_reachable == (reachable == "true"), (
        f"{path}: {obs.observation} {obs.positive} {obs.negative}; allowed {sorted(obs.analysis.allowed)}"
    )
