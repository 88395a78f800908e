"""The async-proxy release is a relation the model derives from the events (issue 14):
``ptx.async_release``, next to its ISA sentences, not pairs recorded by the path builder."""

from __future__ import annotations

import dataclasses

import pytest

from fuzzgpu import litmus
from fuzzgpu.model import candidates, events, executions, ptx, trace
from fuzzgpu.model.event import Event

#: the tests' litmus conditions are placeholders naming a register no instruction writes (what they test is the
#: model's relations, not the condition): the parser's true warning about it is not theirs to show
pytestmark = pytest.mark.filterwarnings("ignore::fuzzgpu.errors.SourceWarning")

CP_ASYNC = """PTX async-release-cp-async
{
g = 1; h = 2;
s @ shared = 0; t @ shared = 0; x @ shared = 0;
bar @ shared mbarrier = 0; bar2 @ shared mbarrier = 0;
}
 P0@cta 0,gpu 0                      | P1@cta 0,gpu 0 ;
 mbarrier.init bar, 1                | bar.sync 0     ;
 mbarrier.init bar2, 1               |                ;
 bar.sync 0                          |                ;
 cp.async s, g                       |                ;
 st.weak x, 1                        |                ;
 cp.async.mbarrier.arrive.noinc bar  |                ;
 cp.async t, h                       |                ;
 cp.async.mbarrier.arrive.noinc bar2 |                ;
exists (P0:r9 == 0)
"""

BULK = """PTX async-release-bulk
{
x @ shared = 0; g = 1; h = 2;
s @ shared = 0; t @ shared = 0;
bar @ shared mbarrier = 0;
}
 P0@cta 0,gpu 0                               | P1@cta 0,gpu 0 ;
 mbarrier.init bar, 1                         | bar.sync 0     ;
 bar.sync 0                                   |                ;
 mbarrier.arrive.expect_tx.relaxed.cta bar, 8 |                ;
 st.weak x, 1                                 |                ;
 cp.async.bulk.shared.global s, g, bar        |                ;
 cp.async.bulk.shared.global t, h, bar        |                ;
exists (P0:r9 == 0)
"""


def _first(text: str) -> ptx.Execution:
    p = litmus.parse(text)
    return next(x for _, x in executions._executions(p, events.program_traces(p)))


def _named(x: ptx.Execution, pred) -> list[Event]:
    return [e for e in x.ev if e.tid == 0 and pred(e)]


def test_no_recorded_pairs_left() -> None:
    for cls in (candidates.Candidate, trace.Trace, trace._State):
        assert "async_release" not in {f.name for f in dataclasses.fields(cls)}, cls
    assert "cp_issued" not in {f.name for f in dataclasses.fields(trace._State)}


def test_cp_async_arrive_releases_the_earlier_cp_async_writes_only() -> None:
    x = _first(CP_ASYNC)
    (ws,) = _named(x, lambda e: e.kind == "W" and e.loc == "s")
    (wt,) = _named(x, lambda e: e.kind == "W" and e.loc == "t")
    a1, a2 = (e.eid for e in _named(x, lambda e: e.action == "cp_async_arrive"))
    (a1bar,) = {x.ev[a1].loc}
    assert a1bar == "bar"
    # the st.weak x of the thread and the copies' reads are not released; the later cp.async is
    # not released by the earlier arrive
    assert ptx.async_release(x.ev) == {(ws.eid, a1), (ws.eid, a2), (wt.eid, a2)}
    assert sorted(x.async_release.pairs()) == sorted(ptx.async_release(x.ev))


def test_bulk_complete_tx_releases_its_own_copy_only() -> None:
    x = _first(BULK)
    (ws,) = _named(x, lambda e: e.kind == "W" and e.loc == "s")
    (wt,) = _named(x, lambda e: e.kind == "W" and e.loc == "t")
    pfs = {e.unit: e.eid for e in _named(x, lambda e: e.kind == "PF")}
    cs = {e.unit: e.eid for e in _named(x, lambda e: e.action == "complete_tx")}
    assert set(pfs) == set(cs) == {ws.unit, wt.unit} and ws.unit != wt.unit
    assert ptx.async_release(x.ev) == {
        (ws.eid, cs[ws.unit]), (pfs[ws.unit], cs[ws.unit]), (wt.eid, cs[wt.unit]), (pfs[wt.unit], cs[wt.unit])
    }
    assert not x.static.async_release.is_empty() and x.async_release is x.static.async_release
