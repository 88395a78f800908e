"""Issue 32, classes E and G in the general generator (fuzzgpu/strategies/tensor_memory.py): the
default profile's generator draws a handoff through tensor memory (a store with and without its
tcgen05.wait::st) and an allocation's address published by the handoff; never in a runnable draw
(the H200 harness has no tensor memory: refused with a named reason)."""

from __future__ import annotations

from hypothesis import HealthCheck, find, given, settings

from fuzzgpu import strategies as fst
from fuzzgpu.codegen.runnable import unrunnable_reasons
from fuzzgpu.ir import Tcgen05Alloc, Tcgen05Ld, Tcgen05St, Tcgen05Wait
from fuzzgpu.strategies.producer_consumer import producer_consumer

SEARCH = settings(max_examples=4000, deadline=None, suppress_health_check=list(HealthCheck), database=None)


def _has(p, cls, **fields) -> bool:
    return any(isinstance(i, cls) and all(getattr(i, k) == v for k, v in fields.items()) for t in p.threads for i in t.code)


def test_the_profile_draws_a_tmem_handoff_with_and_without_the_store_wait():
    waited = find(fst.handoff(), lambda p: _has(p, Tcgen05St) and _has(p, Tcgen05Wait, kind="st"), settings=SEARCH)
    unwaited = find(fst.handoff(), lambda p: _has(p, Tcgen05St) and not _has(p, Tcgen05Wait, kind="st"), settings=SEARCH)
    for p in (waited, unwaited):
        assert all(p.location(i.loc).kind == "tmem" for t in p.threads for i in t.code if isinstance(i, (Tcgen05St, Tcgen05Ld)))
        assert any("needs sm_100a hardware" in r or "tensor memory" in r for r in unrunnable_reasons(p))


def test_the_profile_draws_an_allocation_slot():
    p = find(fst.handoff(), lambda p: _has(p, Tcgen05Alloc), settings=SEARCH)
    assert any("tensor memory" in r for r in unrunnable_reasons(p))


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(producer_consumer(runnable=True))
def test_no_runnable_draw_has_tensor_memory(p):
    assert not any(_has(p, c) for c in (Tcgen05St, Tcgen05Ld, Tcgen05Wait, Tcgen05Alloc))
