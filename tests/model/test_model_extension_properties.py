"""Invariants of the oracle over random programs that use the mechanisms no public PTX model covers
(DESIGN.md, "The oracle"): ``.cluster`` scope, ``ld/st.volatile``, ``ld.global.nc``, kernel boundaries
and PDL, mbarrier, the async proxy (bulk copies, async-proxy operand reads, ``fence.proxy.async``) and
``cp.async``.

* every SC outcome (an interleaving) is allowed;
* strengthening one annotation never adds a possible outcome: weak -> relaxed -> acquire/release,
  mbarrier arrive/wait .relaxed -> .release/.acquire, scope cta -> cluster -> gpu -> sys,
  ``ld.global.nc`` -> ``ld``, fence.acq_rel -> fence.sc, adding a fence (``fence.sc.sys``,
  ``fence.proxy.async``, ``griddepcontrol.wait``, ``cp.async.wait_all``), waiting for more
  (``cp.async.wait_group``/``cp.async.bulk.wait_group`` n -> n-1, ``.read`` -> full), and launching a
  PDL grid as an ordinary kernel;
* ``parse(format_program(p)) == p`` (the litmus dialect writes every extension instruction);
* the per-outcome judgement agrees with the set of allowed outcomes.

The generator is this file's own (independent of ``fuzzgpu.strategies``): small programs, two or three
threads, so that the exhaustive oracle stays fast on CI's two cores.
"""

from __future__ import annotations

import dataclasses
from typing import Iterator

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzgpu.ir import (AsyncRead, Barrier, BulkCommit, BulkWait, CpAsync, CpAsyncBulk, CpAsyncCommit, CpAsyncMbarrierArrive, CpAsyncWait,
                        Fence, GridDepControl, Instruction, Load, Location, MbarrierArrive, MbarrierInit, MbarrierWait, Placement, Program,
                        ProxyFence, ProxyFenceKind, Scope, Sem, Space, Store, Thread, validate)
from fuzzgpu.litmus import format_program, parse
from fuzzgpu.model import analyse, judge

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

SCOPES = (Scope.CTA, Scope.CLUSTER, Scope.GPU, Scope.SYS)
GLOBALS = ("x", "y")
LOCATIONS = (
    Location("x"),
    Location("y"),
    Location("g", init=7),
    Location("s", space=Space.SHARED),
    Location("bar", space=Space.SHARED, kind="mbarrier"),
)

# --------------------------------------------------------------------------------------------
# Generator
# --------------------------------------------------------------------------------------------


@st.composite
def _placements(draw, n: int) -> tuple[tuple[Placement, ...], tuple[int, ...]]:
    """Thread 0 is always in CTA 0 of grid 0 (the CTA that owns the shared locations).  Others: the
    same CTA, another CTA of the same cluster, another cluster, another GPU, or a later grid (an
    ordinary kernel or a PDL dependent)."""
    out = [Placement(cta=0, cluster=0)]
    pdl: set[int] = set()
    for _ in range(1, n):
        kind = draw(st.sampled_from(("same-cta", "same-cluster", "other-cluster", "other-gpu", "next-grid")))
        if kind == "same-cta":
            out.append(Placement(cta=0, cluster=0))
        elif kind == "same-cluster":
            out.append(Placement(cta=1, cluster=0))
        elif kind == "other-cluster":
            out.append(Placement(cta=1, cluster=1))
        elif kind == "other-gpu":
            out.append(Placement(cta=0, gpu=1))
        else:
            out.append(Placement(cta=0, grid=1))
            if draw(st.booleans()):
                pdl.add(1)
    return tuple(out), tuple(sorted(pdl))


def _scope(draw) -> Scope:
    return draw(st.sampled_from(SCOPES))


@st.composite
def _global_instruction(draw, reg: str, value: int, pdl_thread: bool) -> Instruction:
    loc = draw(st.sampled_from(GLOBALS))
    kind = draw(st.sampled_from(("ld", "st", "fence", "nc", "volatile") + (("gdc",) if pdl_thread else ())))
    if kind == "ld":
        sem = draw(st.sampled_from((Sem.WEAK, Sem.RELAXED, Sem.ACQUIRE)))
        return Load(reg, loc, sem, None if sem is Sem.WEAK else _scope(draw))
    if kind == "st":
        sem = draw(st.sampled_from((Sem.WEAK, Sem.RELAXED, Sem.RELEASE)))
        return Store(loc, value, sem, None if sem is Sem.WEAK else _scope(draw))
    if kind == "volatile":
        return draw(st.sampled_from((Load(reg, loc, Sem.VOLATILE), Store(loc, value, Sem.VOLATILE))))
    if kind == "nc":
        return Load(reg, loc, nc=True)
    if kind == "gdc":
        return GridDepControl(draw(st.sampled_from(("wait", "launch_dependents"))))
    return Fence(draw(st.sampled_from((Sem.ACQ_REL, Sem.SC))), _scope(draw))


@st.composite
def _cta0_instruction(draw, reg: str, value: int, first: bool) -> Instruction:
    """Instructions that name shared memory or the mbarrier: only threads of CTA 0 run them."""
    kind = draw(
        st.sampled_from(
            ("st.shared", "ld.shared", "arrive", "wait", "cp.async", "cp.async.wait", "bulk.store", "bulk.load", "proxy", "async.read", "cp.async.arrive")
        )
    )
    if kind == "st.shared":
        sem = draw(st.sampled_from((Sem.WEAK, Sem.RELAXED, Sem.RELEASE)))
        return Store("s", value, sem, None if sem is Sem.WEAK else Scope.CTA)
    if kind == "ld.shared":
        sem = draw(st.sampled_from((Sem.WEAK, Sem.RELAXED, Sem.ACQUIRE)))
        return Load(reg, "s", sem, None if sem is Sem.WEAK else Scope.CTA)
    if kind == "arrive":
        return MbarrierArrive(
            "bar",
            draw(st.sampled_from((Sem.RELEASE, Sem.RELAXED))),
            draw(st.sampled_from((Scope.CTA, Scope.CLUSTER))),
            draw(st.sampled_from((None, 4))),
        )
    if kind == "wait":
        return MbarrierWait(
            reg, "bar", 0, draw(st.sampled_from(("try_wait", "test_wait"))), draw(st.sampled_from((Sem.ACQUIRE, Sem.RELAXED))), draw(st.sampled_from((Scope.CTA, Scope.CLUSTER)))
        )
    if kind == "cp.async":
        return CpAsync("s", "g")
    if kind == "cp.async.wait":
        return draw(st.sampled_from((CpAsyncCommit(), CpAsyncWait(None), CpAsyncWait(0), CpAsyncWait(1))))
    if kind == "cp.async.arrive":
        return CpAsyncMbarrierArrive("bar")
    if kind == "bulk.store":
        return draw(st.sampled_from((CpAsyncBulk("x", "s"), BulkCommit(), BulkWait(0), BulkWait(0, read=True))))
    if kind == "bulk.load":
        return CpAsyncBulk("s", "g", "mbarrier", "bar")
    if kind == "proxy":
        return ProxyFence(ProxyFenceKind.ASYNC, draw(st.sampled_from((None, "shared::cta"))))
    return AsyncRead(reg, "s")


def _opt(draw, *instructions: Instruction) -> list[Instruction]:
    """The instructions, or nothing (shrinks toward nothing)."""
    return list(instructions) if draw(st.booleans()) else []


def _program(threads, placements, pdl=()) -> Program:
    ts = tuple(Thread(f"P{i}", pl, tuple(code)) for i, (pl, code) in enumerate(zip(placements, threads)))
    used = {loc for t in ts for ins in t.code for loc in ins.locations()}
    observed = [f"{t.name}:{ins.dst}" for t in ts for ins in t.code if isinstance(ins, (Load, MbarrierWait, AsyncRead))]
    observed += [g for g in GLOBALS if g in used]
    return validate(
        Program("ext", ts, tuple(loc for loc in LOCATIONS if loc.name in used), observed=tuple(dict.fromkeys(observed)), pdl_grids=tuple(pdl))
    )


@st.composite
def _pdl_handoff(draw) -> Program:
    """A primary writes x (after an optional early trigger, with an optional fence); a later grid,
    launched with or without PDL, reads x with a plain, relaxed or nc load, before or after an
    optional griddepcontrol.wait."""
    store = Store("x", 1, *draw(st.sampled_from(((Sem.WEAK, None), (Sem.RELAXED, Scope.GPU), (Sem.RELEASE, Scope.GPU)))))
    prim = _opt(draw, GridDepControl("launch_dependents")) + [store] + _opt(draw, Fence(Sem.ACQ_REL, Scope.GPU), GridDepControl("launch_dependents"))
    load = draw(st.sampled_from((Load("r0", "x"), Load("r0", "x", nc=True), Load("r0", "x", Sem.ACQUIRE, Scope.GPU))))
    wait = _opt(draw, GridDepControl("wait"))
    dep = wait + [load] if draw(st.booleans()) else [load] + wait
    pdl = (1,) if draw(st.booleans()) else ()
    return _program([prim, dep], (Placement(cta=0, cluster=0), Placement(cta=0, grid=1)), pdl)


@st.composite
def _mbarrier_handoff(draw) -> Program:
    """One CTA: P0 initialises the mbarrier, stores data (shared or global), arrives; P1 waits and
    reads; optional fences on both sides."""
    data = draw(st.sampled_from(("s", "x")))
    prod = [MbarrierInit("bar", 1), Barrier(0), Store(data, 1)] + _opt(draw, Fence(Sem.ACQ_REL, Scope.CTA))
    prod.append(MbarrierArrive("bar", draw(st.sampled_from((Sem.RELAXED, Sem.RELEASE))), draw(st.sampled_from((Scope.CTA, Scope.CLUSTER)))))
    cons = [Barrier(0), MbarrierWait("r0", "bar", 0, "try_wait", draw(st.sampled_from((Sem.RELAXED, Sem.ACQUIRE))), Scope.CTA)]
    cons += _opt(draw, Fence(Sem.ACQ_REL, Scope.CTA)) + [Load("r1", data)]
    return _program([prod, cons], (Placement(cta=0, cluster=0),) * 2)


@st.composite
def _tma_store(draw) -> Program:
    """P0 writes shared s, barrier, P1 bulk-copies s to global x, waits (full, .read, or not at all),
    reads x; fence.proxy.async in the writer before or after the barrier, in the issuer, or nowhere."""
    fence = ProxyFence(ProxyFenceKind.ASYNC, "shared::cta")
    where = draw(st.sampled_from(("none", "writer", "issuer", "late")))
    writer = [Store("s", 1)] + ([fence] if where == "writer" else []) + [Barrier(0)] + ([fence] if where == "late" else [])
    wait = draw(st.sampled_from(([BulkWait(0)], [BulkWait(0, read=True)], [])))
    issuer = [Barrier(0)] + ([fence] if where == "issuer" else []) + [CpAsyncBulk("x", "s"), BulkCommit(), *wait, Load("r0", "x")]
    return _program([writer, issuer], (Placement(cta=0, cluster=0),) * 2)


@st.composite
def _tma_load(draw) -> Program:
    """P0 arrives with expect_tx and bulk-copies g into shared s on the mbarrier; P1 waits (acquire or
    relaxed, optional fence) and reads s."""
    prod = [MbarrierInit("bar", 1), Barrier(0), MbarrierArrive("bar", expect_tx=4), CpAsyncBulk("s", "g", "mbarrier", "bar")]
    cons = [Barrier(0), MbarrierWait("r0", "bar", 0, sem=draw(st.sampled_from((Sem.RELAXED, Sem.ACQUIRE))))]
    cons += _opt(draw, Fence(Sem.ACQ_REL, Scope.CTA)) + [Load("r1", "s")]
    return _program([prod, cons], (Placement(cta=0, cluster=0),) * 2)


@st.composite
def _cp_async(draw) -> Program:
    """P0 copies g into shared s with cp.async, completes it one way or none, then bar.sync or an
    mbarrier arrival; P1 reads s after it."""
    via = draw(st.sampled_from(("bar", "mbarrier")))
    done = draw(st.sampled_from(([], [CpAsyncWait(None)], [CpAsyncCommit(), CpAsyncWait(0)], [CpAsyncCommit(), CpAsyncWait(1)])))
    if via == "bar":
        prod, cons = [CpAsync("s", "g"), *done, Barrier(0)], [Barrier(0), Load("r0", "s")]
    else:
        prod = [MbarrierInit("bar", 1), Barrier(0), CpAsync("s", "g"), *done, CpAsyncMbarrierArrive("bar")]
        cons = [Barrier(0), MbarrierWait("r0", "bar", 0), Load("r1", "s")]
    return _program([prod, cons], (Placement(cta=0, cluster=0),) * 2)


@st.composite
def _message_passing(draw) -> Program:
    """MP between two CTAs of one cluster, of two clusters, or two GPUs, with random annotations
    (including .cluster, volatile and ld.global.nc)."""
    placements, _ = draw(_placements(2).filter(lambda r: r[0][1].grid == 0))
    flag_st = draw(st.sampled_from((Store("y", 1, Sem.RELAXED, _scope(draw)), Store("y", 1, Sem.RELEASE, _scope(draw)), Store("y", 1, Sem.VOLATILE))))
    flag_ld = draw(st.sampled_from((Load("r0", "y", Sem.RELAXED, _scope(draw)), Load("r0", "y", Sem.ACQUIRE, _scope(draw)), Load("r0", "y", Sem.VOLATILE))))
    data_ld = draw(st.sampled_from((Load("r1", "x"), Load("r1", "x", nc=True), Load("r1", "x", Sem.VOLATILE))))
    prod = [Store("x", 2)] + _opt(draw, Fence(Sem.ACQ_REL, _scope(draw))) + [flag_st]
    cons = [flag_ld] + _opt(draw, Fence(Sem.ACQ_REL, _scope(draw))) + [data_ld]
    return _program([prod, cons], placements)


def extension_programs(max_threads: int = 3, max_instructions: int = 3):
    """Free-form programs over every extension mechanism, or one of the patterns above."""
    return st.one_of(
        _free_programs(max_threads, max_instructions),
        _pdl_handoff(),
        _mbarrier_handoff(),
        _tma_store(),
        _tma_load(),
        _cp_async(),
        _message_passing(),
    )


@st.composite
def _free_programs(draw, max_threads: int = 3, max_instructions: int = 3) -> Program:
    n = draw(st.integers(2, max_threads))
    placements, pdl = draw(_placements(n))
    cta0 = [i for i, pl in enumerate(placements) if pl.same_cta(placements[0])]
    values = iter(range(1, 100))
    threads = []
    for tid, pl in enumerate(placements):
        code: list[Instruction] = []
        in_cta0 = tid in cta0
        if tid == 0 and draw(st.booleans()):
            code.append(MbarrierInit("bar", draw(st.sampled_from((1, 2)))))
        for i in range(draw(st.integers(1, max_instructions))):
            reg = f"r{i}"
            if in_cta0 and draw(st.booleans()):
                code.append(draw(_cta0_instruction(reg, next(values), False)))
            else:
                code.append(draw(_global_instruction(reg, next(values), pl.grid in pdl)))
        threads.append(code)
    if len(cta0) > 1 and draw(st.booleans()):  # one bar.sync in every thread of CTA 0, after thread 0's first instruction
        for tid in cta0:
            at = 1 if tid == 0 and threads[0] and isinstance(threads[0][0], MbarrierInit) else draw(st.integers(0, len(threads[tid])))
            threads[tid].insert(at, Barrier(0))
    return _program(threads, placements, pdl)


# --------------------------------------------------------------------------------------------
# Strengthenings
# --------------------------------------------------------------------------------------------

_NEXT_SCOPE = {Scope.CTA: Scope.CLUSTER, Scope.CLUSTER: Scope.GPU, Scope.GPU: Scope.SYS}


def _stronger(ins: Instruction) -> Iterator[tuple[str, Instruction]]:
    r = dataclasses.replace
    if isinstance(ins, Load):
        if ins.nc:
            yield "ld.global.nc -> ld", r(ins, nc=False)
        elif ins.sem is Sem.WEAK:
            yield "ld.weak -> ld.relaxed.cta", r(ins, sem=Sem.RELAXED, scope=Scope.CTA)
        elif ins.sem is Sem.RELAXED:
            yield "ld.relaxed -> ld.acquire", r(ins, sem=Sem.ACQUIRE)
    if isinstance(ins, Store):
        if ins.sem is Sem.WEAK:
            yield "st.weak -> st.relaxed.cta", r(ins, sem=Sem.RELAXED, scope=Scope.CTA)
        elif ins.sem is Sem.RELAXED:
            yield "st.relaxed -> st.release", r(ins, sem=Sem.RELEASE)
    if isinstance(ins, (Load, Store, Fence)) and ins.scope in _NEXT_SCOPE:
        yield f"scope .{ins.scope} -> .{_NEXT_SCOPE[ins.scope]}", r(ins, scope=_NEXT_SCOPE[ins.scope])
    if isinstance(ins, Fence) and ins.sem is Sem.ACQ_REL:
        yield "fence.acq_rel -> fence.sc", r(ins, sem=Sem.SC)
    if isinstance(ins, MbarrierArrive):
        if ins.sem is Sem.RELAXED:
            yield "mbarrier.arrive.relaxed -> .release", r(ins, sem=Sem.RELEASE)
        if ins.scope is Scope.CTA:
            yield "mbarrier.arrive .cta -> .cluster", r(ins, scope=Scope.CLUSTER)
    if isinstance(ins, MbarrierWait):
        if ins.sem is Sem.RELAXED:
            yield "mbarrier wait .relaxed -> .acquire", r(ins, sem=Sem.ACQUIRE)
        if ins.scope is Scope.CTA:
            yield "mbarrier wait .cta -> .cluster", r(ins, scope=Scope.CLUSTER)
    if isinstance(ins, BulkWait):
        if ins.read:
            yield "cp.async.bulk.wait_group.read -> wait_group", r(ins, read=False)
        elif ins.n > 0:
            yield "cp.async.bulk.wait_group n -> n-1", r(ins, n=ins.n - 1)
    if isinstance(ins, CpAsyncWait) and ins.n:
        yield "cp.async.wait_group n -> n-1", r(ins, n=ins.n - 1)


def extension_strengthenings(p: Program) -> Iterator[tuple[str, Program]]:
    def with_code(tid: int, code) -> Program:
        threads = list(p.threads)
        threads[tid] = dataclasses.replace(threads[tid], code=tuple(code))
        return dataclasses.replace(p, threads=tuple(threads))

    for tid, t in enumerate(p.threads):
        for i, ins in enumerate(t.code):
            for what, new in _stronger(ins):
                yield f"{t.name}[{i}] {what}", with_code(tid, t.code[:i] + (new,) + t.code[i + 1 :])
        for i in range(len(t.code) + 1):
            added = [Fence(Sem.SC, Scope.SYS), ProxyFence(ProxyFenceKind.ASYNC), CpAsyncWait(None)]
            if t.placement.grid in p.pdl_grids:
                added.append(GridDepControl("wait"))
            for f in added:
                yield f"{t.name}[{i}] + {type(f).__name__}", with_code(tid, t.code[:i] + (f,) + t.code[i:])
    for g in p.pdl_grids:
        yield f"grid {g} launched without PDL", dataclasses.replace(p, pdl_grids=tuple(x for x in p.pdl_grids if x != g))


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------


@SETTINGS
@given(extension_programs())
def test_sc_outcomes_are_allowed(p):
    a = analyse(p)
    assert a.sc <= a.allowed, f"SC outcomes the model forbids: {sorted(a.sc - a.allowed)}\n{format_program(p)}"


@SETTINGS
@given(extension_programs(max_threads=2, max_instructions=3), st.data())
def test_strengthening_never_adds_outcomes(p, data):
    base = analyse(p, sc=False)
    what, stronger = data.draw(st.sampled_from(list(extension_strengthenings(p))))
    a = analyse(validate(stronger), sc=False)
    assert a.allowed <= base.allowed, f"{what} added {sorted(a.allowed - base.allowed)}\n{format_program(p)}"
    assert a.possible <= base.possible, f"{what} added {sorted(a.possible - base.possible)}\n{format_program(p)}"


@settings(max_examples=100, deadline=None)
@given(extension_programs())
def test_print_parse_identity(p):
    text = format_program(p)
    assert parse(text) == p, text
    assert "{" not in text.split("}", 1)[1], "an extension instruction fell back to the JSON form"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(extension_programs(max_threads=2, max_instructions=3))
def test_judge_agrees_with_allowed_set(p):
    a = analyse(p)
    for o in sorted(a.allowed)[:3]:
        assert judge(p, dict(o)).verdict in ("sc", "allowed"), f"{o}\n{format_program(p)}"
    for o in sorted(a.sc)[:3]:
        assert judge(p, dict(o)).verdict == "sc", f"{o}\n{format_program(p)}"
    for o in sorted(a.outside_model - a.allowed)[:3]:
        assert judge(p, dict(o)).verdict == "allowed-outside-model", f"{o}\n{format_program(p)}"
