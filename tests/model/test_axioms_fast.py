"""The witness-free axiom tests (:mod:`fuzzgpu.model.axioms`, what ``analyse`` and
``analyse_races`` ask) agree with the checks that build a witness (:func:`.ptx.check_before_co`,
:func:`.ptx.check_with_co`) on every candidate execution and coherence order of the litmus suites
and of generated programs; and the bitset relation algebra's closure and acyclicity agree with
their definitions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzgpu.litmus import parse_file
from fuzzgpu.model import _executions, _final_locs, _in_model
from fuzzgpu.model.axioms import consistent_before_co, consistent_with_co
from fuzzgpu.model.events import program_traces
from fuzzgpu.model.ptx import check_before_co, check_with_co
from fuzzgpu.model.relations import Rel

from paths import DAT3M
from strategies.draws import examples, sample

LITMUS = DAT3M.parent


def _agree(p) -> tuple[int, int]:
    """Both ways of asking, over every candidate and coherence order of ``p``; returns how many
    (consistent-before-co, rejected) candidates were seen."""
    pt = program_traces(p)
    finals = _final_locs(pt, p.outcome_keys())
    ok = bad = 0
    for _, x in _executions(p, pt):
        for v in [_in_model(x)] + ([x] if x.free else []):
            assert v.po @ v.po == (v.po @ v.po) & v.po  # program order is transitive, as base causality assumes
            cb = (v.po | v.synchronizes_with).plus()  # the ISA's definition, as written
            assert v.base_causality == (cb if v.async_release.is_empty() else cb | (v.async_completion @ cb.opt()))
            before = consistent_before_co(v)
            assert before == (check_before_co(v) is None), p.name
            if not before:
                bad += 1
                continue
            ok += 1
            for co in v.coherence_orders(finals):
                assert consistent_with_co(v, co) == (check_with_co(v, co) is None), p.name
    return ok, bad


@pytest.mark.parametrize("suite", ["dat3m", "async-proxy", "mbarrier-complete-tx", "pdl", "nc", "race", "cluster"])
def test_litmus_suites_agree(suite):
    files = sorted((LITMUS / suite).rglob("*.litmus"))
    assert files, suite
    ok = bad = 0
    for f in files:
        a, b = _agree(parse_file(f))
        ok, bad = ok + a, bad + b
    assert ok  # some candidate got as far as coherence orders
    if suite == "dat3m":
        assert bad  # and Dat3M's suite has candidates the axioms reject before coherence order


def test_generated_programs_agree():
    ok = bad = 0
    for p in sample(40, 29):
        a, b = _agree(p)
        ok, bad = ok + a, bad + b
    assert ok and bad


def _naive_plus(r: Rel) -> set[tuple[int, int]]:
    edges = set(r.pairs())
    while True:
        more = edges | {(a, d) for a, b in edges for c, d in edges if b == c}
        if more == edges:
            return edges
        edges = more


rels = st.integers(1, 9).flatmap(
    lambda n: st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n).map(lambda ps: Rel.from_pairs(n, ps))
)


@examples(300)
@given(rels)
def test_closure_and_acyclicity_match_their_definitions(r):
    closed = _naive_plus(r)
    assert set(r.plus().pairs()) == closed
    assert r.is_acyclic() == all(a != b for a, b in closed)
    assert set(r.opt().pairs()) == set(r.pairs()) | {(i, i) for i in range(r.n)}
    assert set(r.star().pairs()) == closed | {(i, i) for i in range(r.n)}
    t = Rel.from_pairs(r.n, [(i, j) for i, j in closed if (i + j) % 3])
    t = t.plus()  # a transitive relation
    assert r.plus().closed_with(t) == (r | t).plus() == t.closed_with(r.plus() - t)
    assert set(Rel.identity(r.n, 0b1011).pairs()) == {(i, i) for i in range(r.n) if 0b1011 >> i & 1}
