"""The one table of instruction semantics (fuzzgpu.semantics) and its three readers: the model, the
SASS checker's classification of PTX synchronisation, and the properties (docs/architecture.md)."""

from __future__ import annotations

import dataclasses

import pytest

from fuzzgpu import ir, properties, sass, semantics
from fuzzgpu.ir import Proxy, ProxyFenceKind, Sem
from fuzzgpu.model import ptx
from fuzzgpu.sass import ptx_parser

# every IR instruction class is either in the table or has no memory-model meaning
IR_CLASSES = [c for c in vars(ir).values() if isinstance(c, type) and issubclass(c, ir.Instruction) and c is not ir.Instruction]


def test_every_entry_is_complete():
    for key, e in semantics.TABLE.items():
        assert key == e.ptx
        assert e.source in (semantics.ISA, semantics.FUZZGPU), key
        assert e.isa and e.orders, key
        assert e.rule in ("", *sass.RULE_FORBIDDEN), (key, e.rule)


def test_every_ir_instruction_kind_has_an_entry():
    missing = [c.__name__ for c in IR_CLASSES if c.__name__ not in semantics.NO_MEMORY_EFFECT
               and not any(e.ir.split(" ")[0] == c.__name__ for e in semantics.TABLE.values())]
    assert not missing, f"IR instructions with no semantics entry: {missing}"


G = ir.Scope.GPU


@pytest.mark.parametrize("ins, release, acquire", [
    (ir.Load("r0", "x", Sem.ACQUIRE, G), False, True),
    (ir.Load("r0", "x", Sem.RELAXED, G), False, False),
    (ir.Store("x", 1, Sem.RELEASE, G), True, False),
    (ir.Atom("r0", "x", ir.RmwOp.ADD, (1,), Sem.ACQ_REL, G), True, True),
    (ir.Load("r0", "x", nc=True), False, False),
    (ir.Fence(Sem.SC, G), True, True),
    (ir.Barrier(0), True, True),
    (ir.Barrier(0, 64, "arrive"), True, False),
    (ir.GridDepControl("wait"), False, True),
    (ir.GridDepControl("launch_dependents"), False, False),
    (ir.MbarrierArrive("bar", Sem.RELAXED), False, False),
    (ir.MbarrierArrive("bar"), True, False),
    (ir.MbarrierWait("r1", "bar", 0, sem=Sem.RELAXED), False, False),
    (ir.MbarrierWait("r1", "bar", 0), False, True),
    (ir.CpAsyncWait(0), False, True),
    (ir.BulkWait(0), False, True),
    (ir.ClusterBarrier("arrive", Sem.RELAXED), False, False),
    (ir.ClusterBarrier("arrive"), True, False),
    (ir.ClusterBarrier("wait"), False, True),
    (ir.FenceMbarrierInit(), False, False),
    (ir.Tcgen05Fence("after_thread_sync"), False, False),
    (ir.Mov("r0", 1), False, False),
])
def test_the_ir_reads_the_table(ins, release, acquire):
    assert semantics.directions(ins) == (release, acquire)


@pytest.mark.parametrize("ptx_text, key", [
    ("griddepcontrol.wait;", "griddepcontrol.wait"),
    ("bar.arrive 1, 64;", "bar.arrive"),
    ("mbarrier.try_wait.parity.relaxed.cta.shared::cta.b64 p, [bar], 0;", "mbarrier.try_wait"),
    ("cp.async.wait_all;", "cp.async.wait"),
    ("fence.proxy.async.global;", "fence.proxy.async"),
    ("barrier.cluster.arrive.release.aligned;", "barrier.cluster.arrive"),
])
def test_the_sass_classification_reads_the_table(ptx_text, key, monkeypatch):
    """Changing an entry changes what the SASS checker says the instruction orders: the table is the
    one source (fails if the classifier kept its own booleans)."""
    before = sass.sync_of_text(ptx_text)
    assert before is not None
    e = semantics.TABLE[key]
    sem = next((m for m in before.instr.mods if m in ("relaxed", "release", "acquire")), None)
    assert (before.release, before.acquire) == e.orders_directions(sem)
    flipped = dict(semantics.TABLE, **{key: dataclasses.replace(e, release=not e.release, acquire=not e.acquire,
                                                                   relaxed_orders_nothing=False)})
    monkeypatch.setattr(semantics, "TABLE", flipped)
    after = sass.sync_of_text(ptx_text)
    assert after is not None and (after.release, after.acquire) == (not e.release, not e.acquire)


def test_the_forbidden_rule_is_the_tables():
    assert ptx_parser._rule_key(sass.sync_of_text("griddepcontrol.wait")) == "griddep"
    assert ptx_parser._rule_key(sass.sync_of_text("cp.async.wait_group 1")) == "cp.async.wait"
    assert ptx_parser._rule_key(sass.sync_of_text("fence.proxy.alias")) == "proxy"
    assert ptx_parser._rule_key(sass.sync_of_text("mbarrier.inval.shared::cta.b64 [bar]")) == "mbarrier"
    assert ptx_parser._rule_key(sass.sync_of_text("ld.acquire.gpu.global.u32 %r1, [%rd1]")) == "acquire"
    assert ptx_parser._rule_key(sass.sync_of_text("barrier.cluster.arrive")) == "release"


@pytest.mark.parametrize("sync, direction, orders", [
    ("griddepcontrol.wait", sass.HOISTED, True),
    ("griddepcontrol.wait", sass.SUNK, False),
    ("bar.sync 0", sass.HOISTED, True),
    ("st.release.gpu.global.u32 [%rd1], %r1", sass.HOISTED, False),  # roach motel
    ("st.release.gpu.global.u32 [%rd1], %r1", sass.SUNK, True),
    ("mbarrier.try_wait.parity.relaxed.cta.shared::cta.b64 %p1, [%r1], 0", sass.HOISTED, False),
    ("mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], 0", sass.HOISTED, True),
    ("cp.async.wait_all", sass.HOISTED, True),
    # the three the string prefixes got wrong (they now read the ISA's semantics from the table):
    # barrier.cluster.wait is an acquire ("barrier.cluster": .acquire is the default) ...
    ("barrier.cluster.wait.aligned", sass.HOISTED, True),
    # ... barrier.cluster.arrive a release unless .relaxed ...
    ("barrier.cluster.arrive.aligned", sass.SUNK, True),
    ("barrier.cluster.arrive.relaxed.aligned", sass.SUNK, False),
    # ... and fence.mbarrier_init orders the thread's mbarrier.init only, not a load ("membar/fence")
    ("fence.mbarrier_init.release.cluster", sass.SUNK, False),
    # fence.proxy.async orders generic with async accesses of the state space it names (global here)
    ("fence.proxy.async.global", sass.HOISTED, True),
    ("fence.proxy.async.shared::cta", sass.HOISTED, False),
])
def test_properties_judge_nc_moves_by_the_table(sync, direction, orders):
    assert properties._would_order(sync, direction) is orders


def test_the_model_reads_the_tables_strengths_and_proxy_fences():
    assert set(ptx.RELEASE_SEMS) == {Sem.RELEASE, Sem.ACQ_REL}
    assert set(ptx.ACQUIRE_SEMS) == {Sem.ACQUIRE, Sem.ACQ_REL}
    assert set(ptx.FENCE_SEMS) == {Sem.ACQ_REL, Sem.SC}
    assert [s for s in Sem if semantics.is_strong(s)] == [s for s in Sem if s is not Sem.WEAK]
    assert not semantics.is_strong(Sem.RELAXED, nc=True)
    assert semantics.proxy_fence_proxy(ProxyFenceKind.ASYNC) is Proxy.ASYNC
    assert semantics.proxy_fence_proxy(ProxyFenceKind.ALIAS) is Proxy.GENERIC
    assert ptx._in_space("global", ir.Space.GLOBAL) and not ptx._in_space("global", ir.Space.SHARED)
    assert ptx._in_space("shared::cta", ir.Space.SHARED) and ptx._in_space(None, ir.Space.SHARED)


def test_proxy_fence_covers():
    cov = semantics.proxy_fence_covers
    assert cov(None, "shared") and cov("", "global") and cov("global", "generic") and cov("global", None)
    assert cov("global", "global") and not cov("global", "shared")
    assert cov("shared::cluster", "shared") and not cov("shared::cta", "global") and cov("shared", "shared")


def test_handoff_mechanisms_are_made_of_table_instructions():
    for m in semantics.MECHANISMS.values():
        for i in m.instructions:
            assert i in semantics.TABLE or i in (".cta", ".cluster", ".gpu", ".sys"), (m.name, i)
