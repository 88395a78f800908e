"""From a Program to its events: each thread's possible paths (traces) with the values its reads
return -- one step per instruction, building the events of the path (:class:`.trace._State`) --
and the fixpoint of the values the program can write (:func:`program_traces`).  The candidate
executions built from one trace per thread (reads-from, barrier arrival orders, fence orders) are
:mod:`.candidates`; their names are re-exported here.  Coherence orders are enumerated by the
model, once the relations that constrain them are known.

How loops are bounded: a backward jump may be taken at most ``loop_bound`` times per label; longer
paths are dropped.  Dropped paths are executions that do not terminate within the bound; for the
spin loops of litmus tests (side-effect-free retries) every outcome is already reached with fewer
iterations, because removing a failed iteration's reads from a consistent execution leaves it
consistent.
"""

from __future__ import annotations

import sys
from typing import Mapping

from .. import ir

from .. import semantics

from .bar_reads import bar_options, frozen_round, initial_writers, readable
from .event import Budget, Event, Unsupported
from . import mechanisms as mech
from . import wgmma
from . import tensormap as tm
from . import tensor_memory as tmem
from .candidates import (
    Candidate,
    assemble,
    barrier_deadlock,
    barrier_syncs,
    barriers_complete,
    candidates,
    feasible,
)
from ..recent import Recent
from .trace import ProgramTraces, Trace, Values, _Ctx, _Paths, _Reading, _Round, _State, copy_with

__all__ = [
    "beyond_loop_bound",
    "Candidate",
    "Event",
    "FORK_COST",
    "MAX_TRACE_STEPS",
    "MAX_VALUES_PER_LOCATION",
    "ProgramTraces",
    "Trace",
    "Unsupported",
    "Values",
    "address_maps",
    "assemble",
    "barrier_deadlock",
    "barrier_syncs",
    "barriers_complete",
    "candidates",
    "copy_with",
    "feasible",
    "program_traces",
    "rmw_result",
    "rmw_sites",
    "thread_traces",
]

MAX_VALUES_PER_LOCATION = 32
MAX_TRACE_STEPS = 4096
#: budget units one fork of a thread path costs, plus 4 per event of the path so far (a read forks
#: per value and each fork copies the path's state; see event.ORACLE_BUDGET)
FORK_COST = 20


# --------------------------------------------------------------------------------------------
# Locations
# --------------------------------------------------------------------------------------------


def address_maps(p: ir.Program) -> tuple[dict[str, str], dict[str, str]]:
    """(physical, virtual): the physical location and the virtual address of each location name.

    ``y @ generic aliases x`` is a second virtual address for x's memory (PTX "virtual aliases"):
    same physical location, different virtual address.  ``s @ surface aliases x`` is x's address
    seen through the surface proxy: same virtual address (Dat3M's ``vloc``)."""
    by_name = {loc.name: loc for loc in p.locations}
    physical: dict[str, str] = {}
    virtual: dict[str, str] = {}
    for name in by_name:
        physical[name] = p.physical(name)
        loc = by_name[name]
        while loc.alias_of is not None and loc.proxy is not ir.Proxy.GENERIC:
            loc = by_name[loc.alias_of]
        virtual[name] = loc.name
    return physical, virtual


# --------------------------------------------------------------------------------------------
# Traces
# --------------------------------------------------------------------------------------------


def _operand(v: ir.Operand, regs: Mapping[str, int]) -> int:
    return v if isinstance(v, int) else regs.get(v, 0)


def _arith(op: ir.ArithOp, a: int, b: int) -> int:
    if op is ir.ArithOp.ADD:
        return a + b
    if op is ir.ArithOp.SUB:
        return a - b
    if op is ir.ArithOp.MUL:
        return a * b
    if op is ir.ArithOp.DIV:
        return 0 if b == 0 else int(a / b)
    if op is ir.ArithOp.AND:
        return a & b
    if op is ir.ArithOp.OR:
        return a | b
    return a ^ b


def rmw_result(op: ir.RmwOp, old: int, operands: tuple[int, ...]) -> int | None:
    """The value an atom writes, or None when it writes nothing (a failed cas)."""
    b = operands[0]
    if op is ir.RmwOp.ADD:
        return old + b
    if op is ir.RmwOp.SUB:
        return old - b
    if op is ir.RmwOp.AND:
        return old & b
    if op is ir.RmwOp.OR:
        return old | b
    if op is ir.RmwOp.XOR:
        return old ^ b
    if op is ir.RmwOp.EXCH:
        return b
    if op is ir.RmwOp.CAS:
        return operands[1] if old == b else None
    if op is ir.RmwOp.MIN:
        return min(old, b)
    if op is ir.RmwOp.MAX:
        return max(old, b)
    if op is ir.RmwOp.INC:
        return 0 if old >= b else old + 1
    if op is ir.RmwOp.DEC:
        return b if old == 0 or old > b else old - 1
    raise Unsupported(f"atom.{op}")


#: the paths of the threads enumerated most recently (:func:`_thread_paths`), by thread and the layout
#: its enumeration reads of the program (:meth:`_Round.layout_of`): the paths of each set of values read
#: (:attr:`.trace._Paths.read`), the newest first.  A fix search, a shrink and ``necessity`` each ask for
#: programs that differ from one another in one thread, and each fixpoint round asks for every thread
#: again: an unchanged thread that reads the same values has the same paths, whatever the other threads
#: write elsewhere or do.  Kept: the last 1024 threads while their paths' work is at most 4e6 units in all
#: (as :data:`_TRACES`, whose traces are these: ~4 bytes a unit), and at most 64 sets of values read a thread
_THREADS: Recent[tuple[object, ...], tuple[_Paths, ...]] = Recent(1024, weight=lambda known: sum(ps.work + 1 for ps in known),
                                                                   limit=4_000_000)
_VARIANTS = 64


def _thread_paths(p: ir.Program, tid: int, r: _Round, work: Budget | None, previous: _Paths | None = None) -> _Paths:
    """:func:`thread_traces` of thread ``tid`` in round ``r``, computed once per thread, layout and
    values read, or ``previous`` (the thread's paths in the round before) when none of the values they
    read changed: the enumeration reads nothing else of the program or the round
    (:meth:`_Round.layout_of`).  A repeated question charges ``work`` the units the enumeration spent,
    so a budget runs out exactly where it did when every question and every round enumerated (as
    :func:`program_traces`)."""
    key = r.layout_of(p, tid)
    known = _THREADS.get(key) or ()
    hit = next((ps for ps in known if r.reads_as(ps)), None)
    if hit is None and previous is not None and r.reads_as(previous):
        hit = previous
        _THREADS.put(key, (previous,) + known[: _VARIANTS - 1])
    if hit is None:
        counted = work if work is not None else Budget(sys.maxsize)
        before = counted.used
        dropped: list[tuple[str, int, tuple[int, ...]]] = []
        cut: set[tuple[int, int]] = set()
        read: set[str] = set()
        traces = thread_traces(p, tid, r.values, r.physical, r.virtual, r.loop_bound, dropped, counted, cut, read, r.writers)
        paths = _Paths(tuple(traces), tuple(dropped), frozenset(cut), counted.used - before,
                       tuple((loc, r.frozen[loc]) for loc in sorted(read)))
        _THREADS.put(key, (paths,) + known[: _VARIANTS - 1])
        return paths
    if work is not None:
        work.spend(hit.work)
    return hit


def thread_traces(
    p: ir.Program,
    tid: int,
    values: Values,
    physical: Mapping[str, str],
    virtual: Mapping[str, str],
    loop_bound: int = 1,
    dropped: list[tuple[str, int, tuple[int, ...]]] | None = None,
    budget: Budget | None = None,
    cut: set[tuple[int, int]] | None = None,
    read: set[str] | None = None,
    writers: Mapping[str, Mapping[int, frozenset[int]]] | None = None,
) -> list[Trace]:
    """Every path of thread ``tid`` whose reads return values from ``values`` (per physical
    location), with at most ``loop_bound`` traversals of each backward jump.  The writes of paths
    dropped at the loop bound are added to ``dropped`` as (location, value, cost): another thread
    may read them before this one spins forever.  The (thread, pc) of a re-entered loop's jump
    (:func:`_back_limits`: a body that writes or computes) that cut a path is added to ``cut``: a
    longer path may reach an outcome this enumeration does not (a spin loop's cut loses none).  The
    locations whose values the enumeration asks for are added to ``read``.  ``writers``: :mod:`.bar_reads`."""
    thread = p.threads[tid]
    code = thread.code
    labels = {ins.name: i for i, ins in enumerate(code) if isinstance(ins, ir.Label)}
    loc_index = {loc: i for i, loc in enumerate(sorted(values))}
    sites = {site: len(loc_index) + j for j, site in enumerate(rmw_sites(p))}
    ctx = _Ctx(tid, labels, values if read is None else _Reading(values, read), physical, virtual, loc_index, _back_limits(code, labels, loop_bound), sites,
               len(loc_index) + len(sites), frozenset(physical[loc.name] for loc in p.locations if loc.kind == "tensormap"),
               readable=readable(thread.code, tid, physical, writers or {}))
    start = _State(0, dict(thread.init), {}, frozenset(), [], [], [], [], {})
    out: list[Trace] = []
    stack = [start]
    steps = (lambda s, i, c: wgmma.step(s, i, c, _step)) if wgmma.uses_wgmma(code) else _step  # class F (.wgmma)
    while stack:
        st = stack.pop()
        while True:
            if st.pc >= len(code) and st.wg is not None and wgmma.pending(st):  # wgmmas no wait covered (.wgmma)
                stack.extend(wgmma.finish(st, len(code)))
                break
            if st.pc >= len(code):
                costs = tuple([(i, st.cost[i]) for i, e in enumerate(st.events) if e.kind == "W"])
                out.append(
                    Trace(
                        tuple(st.events),
                        tuple(sorted(st.regs.items())),
                        tuple(st.data),
                        tuple(st.ctrls),
                        tuple(st.rmws),
                        tuple(st.po),
                        costs,
                        wgmma.hazards(st),
                    )
                )
                break
            st.steps += 1
            before = len(st.events)  # a step that forks may continue one of its paths in ``st`` itself (_State.split)
            forks = None if st.steps > MAX_TRACE_STEPS else steps(st, code[st.pc], ctx)
            if forks is None:  # path dropped (loop bound)
                lim = ctx.back_limits.get(st.pc, 0)
                if cut is not None and lim > 0 and st.back.get(st.pc, 0) > lim:
                    cut.add((tid, st.pc))
                if dropped is not None:
                    dropped.extend((*e.access, st.cost[i]) for i, e in enumerate(st.events) if e.kind == "W")
                break
            if forks:
                if budget is not None:
                    budget.spend((FORK_COST + 4 * before) * len(forks))
                stack.extend(forks)
                break
    return out


def beyond_loop_bound(p: ir.Program, cut: frozenset[tuple[int, int]], loop_bound: int) -> str:
    """Why an outcome outside the allowed set is not judged forbidden when the loop bound cut a
    re-entered loop's paths (``ProgramTraces.cut``): more iterations than the bound may produce
    it ("" when nothing was cut).  The oracle explores executions of at most ``loop_bound``
    iterations; one it did not explore is not one the model forbids."""
    if not cut:
        return ""
    where = ", ".join(sorted(f"{p.threads[t].name}'s loop at {getattr(p.threads[t].code[pc], 'target', pc)}" for t, pc in cut))
    return (f"not covered: the outcome may need more than {loop_bound} iteration(s) of a loop that writes or "
            f"computes in registers ({where}), past the oracle's loop bound (--loop-bound {loop_bound})")


def _back_limits(code: tuple[ir.Instruction, ...], labels: Mapping[str, int], loop_bound: int) -> dict[int, int]:
    """How often each backward jump may be taken.  A loop whose body writes nothing and has no
    barrier (a spin loop) is never re-entered: a failed iteration only adds reads, and removing
    reads from a consistent execution leaves it consistent, so every outcome is reached by a path
    that leaves the loop on its first iteration.  A body that computes in registers (``add``,
    ``mov``: an iteration count, a sum of the values read) is no spin loop: its registers carry
    from one iteration to the next, so a path that leaves on its first iteration does not reach
    every outcome (``add r2, r2, 1`` in a spin on a flag: ``r2 == 3`` after three reads of the flag)."""
    limits = {}
    for pc, ins in enumerate(code):
        if isinstance(ins, (ir.Branch, ir.Goto)) and labels[ins.target] <= pc:
            body = code[labels[ins.target] : pc + 1]
            writes = any(_written(b) or isinstance(b, (ir.Barrier, ir.CpAsync, ir.CpAsyncBulk, ir.Arith, ir.Mov)) for b in body)
            limits[pc] = loop_bound if writes else 0
    return limits


def _step(st: _State, ins: ir.Instruction, ctx: _Ctx) -> list[_State] | None:
    """Execute one instruction in place.  Returns None to drop the path, a list of states to
    continue with instead of ``st`` (a read forks on its value), or [] to continue with ``st``."""
    pc, tid = st.pc, ctx.tid
    if isinstance(ins, (ir.Label, ir.Filler)):
        st.pc += 1
        return []
    if isinstance(ins, ir.Mov):
        st.regs[ins.dst] = _operand(ins.src, st.regs)
        st.taint[ins.dst] = _taint(ins.src, st.taint)
        st.pc += 1
        return []
    if isinstance(ins, ir.Arith):
        st.regs[ins.dst] = _arith(ins.operation, _operand(ins.a, st.regs), _operand(ins.b, st.regs))
        st.taint[ins.dst] = _taint(ins.a, st.taint) | _taint(ins.b, st.taint)
        st.pc += 1
        return []
    if isinstance(ins, (ir.Branch, ir.Goto)):
        taken = True
        if isinstance(ins, ir.Branch):
            taken = ins.cond.holds(_operand(ins.a, st.regs), _operand(ins.b, st.regs))
            st.ctrl = st.ctrl | _taint(ins.a, st.taint) | _taint(ins.b, st.taint)
        if taken:
            target = ctx.labels[ins.target]
            if target <= pc:
                st.back[pc] = st.back.get(pc, 0) + 1
                if st.back[pc] > ctx.back_limits[pc]:
                    return None
            st.pc = target
        else:
            st.pc += 1
        return []
    if isinstance(ins, ir.Store):
        sem, scope = ir.effective(ins.sem, ins.scope)
        loc = ctx.physical[ins.loc]
        idx = st.add(Event(-1, tid, pc, "W", sem, scope, ins.proxy, loc, ctx.virtual[ins.loc], _operand(ins.src, st.regs),
                           width=ins.width))
        deps = _taint(ins.src, st.taint)
        for r in deps:
            st.data.append((r, idx))
        st.write_cost(idx, deps, ctx.loc_index[loc], ctx.width)
        st.pc += 1
        return []
    if isinstance(ins, ir.Fence):
        unknown = semantics.unknown_fence(ins.sem)
        if unknown is not None:
            raise Unsupported(unknown)
        st.add(Event(-1, tid, pc, "F", ins.sem, ins.scope))
        st.pc += 1
        return []
    if isinstance(ins, ir.ProxyFence):
        st.add(Event(-1, tid, pc, "PF", ir.Sem.WEAK, None, semantics.proxy_fence_proxy(ins.kind), fence_kind=ins.kind,
                     fence_space=ins.space))
        st.pc += 1
        return []
    if isinstance(ins, ir.Barrier):
        st.add(
            Event(
                -1, tid, pc, "B", ir.Sem.WEAK, ir.Scope.CTA,
                barrier=(ins.instance, _operand(ins.id, st.regs)),
                barrier_count=None if ins.count is None else _operand(ins.count, st.regs),
                barrier_mode=ins.mode,
            )
        )
        st.pc += 1
        return []
    if isinstance(ins, ir.Load):
        sem, scope = ir.effective(ins.sem, ins.scope)
        return _read(st, ctx, ins.loc, sem, scope, ins.proxy, ins.dst, nc=ins.nc, width=ins.width)
    if isinstance(ins, (ir.Atom, ir.Red)):
        return _rmw(st, ins, ctx)
    return _extension_step(st, ins, ctx)


def _extension_step(st: _State, ins: ir.Instruction, ctx: _Ctx) -> list[_State]:
    """PDL, mbarrier, asynchronous copies (see :mod:`.mechanisms` for each rule)."""
    pc, tid = st.pc, ctx.tid
    if isinstance(ins, ir.GridDepControl):
        st.add(Event(-1, tid, pc, "X", action="gdc_wait" if ins.action == "wait" else "gdc_launch"))
        st.pc += 1
        return []
    if isinstance(ins, ir.Tcgen05Fence):
        st.add(Event(-1, tid, pc, "X", action="tcgen05"))
        st.pc += 1
        return []
    if isinstance(ins, ir.ClusterBarrier):  # mechanisms.cluster_barrier_syncs
        st.add(Event(-1, tid, pc, "B", ins.effective_sem, ir.Scope.CLUSTER, barrier_mode=f"cluster_{ins.mode}"))
        st.pc += 1
        return []
    if isinstance(ins, ir.FenceMbarrierInit):  # mechanisms.cluster_barrier_syncs
        st.add(Event(-1, tid, pc, "X", ir.Sem.RELEASE, ir.Scope.CLUSTER, action="mbarrier_init_fence"))
        st.pc += 1
        return []
    if isinstance(ins, ir.TensormapFence):  # model.tensormap: the fence pair's rule
        loc = None if ins.map is None else ctx.physical[ins.map]
        st.add(tm.fence_event(tid, pc, ins.sem, ins.scope, loc, None if ins.map is None else ctx.virtual[ins.map]))
        st.pc += 1
        return []
    if isinstance(ins, ir.TensormapReplace):  # a weak generic write of the map: the location it now names
        loc = ctx.physical[ins.map]
        idx = st.add(Event(-1, tid, pc, "W", ir.Sem.WEAK, None, ir.Proxy.GENERIC, loc, ctx.virtual[ins.map],
                           tm.map_code(ctx.loc_index, ctx.physical[ins.address])))
        st.write_cost(idx, set(), ctx.loc_index[loc], ctx.width)
        st.pc += 1
        return []
    if isinstance(ins, ir.TCGEN05_MEMORY_INSTRUCTIONS):  # tensor memory (classes E, G): model.tensor_memory
        return tmem.step(st, ins, ctx)
    if isinstance(ins, ir.AsyncRead):
        return _read(st, ctx, ins.loc, ir.Sem.WEAK, None, ir.Proxy.ASYNC, ins.dst)
    if isinstance(ins, ir.MbarrierInit):
        loc = ctx.physical[ins.bar]
        idx = st.add(Event(-1, tid, pc, "W", ir.Sem.WEAK, None, ir.Proxy.GENERIC, loc, ctx.virtual[ins.bar], mech.mbarrier_init(ins.count)))
        st.write_cost(idx, set(), ctx.loc_index[loc], ctx.width)
        st.pc += 1
        return []
    if isinstance(ins, ir.MbarrierArrive):
        return _mbarrier_rmw(st, ctx, ins.bar, ins.sem, ins.scope, "arrive", ins.count, ins.expect_tx or 0)
    if isinstance(ins, ir.MbarrierExpectTx):
        return _mbarrier_rmw(st, ctx, ins.bar, ir.Sem.RELAXED, ir.Scope.CTA, "expect_tx", 0, ins.tx)
    if isinstance(ins, ir.MbarrierCompleteTx):  # ISA "mbarrier.complete_tx": .relaxed; the tx-count drops by tx
        return _mbarrier_rmw(st, ctx, ins.bar, ir.Sem.RELAXED, ins.scope, "complete_tx", 0, ins.tx)
    if isinstance(ins, ir.MbarrierWait):
        return _mbarrier_wait(st, ctx, ins)
    if isinstance(ins, (ir.CpAsync, ir.CpAsyncBulk)):
        return _async_copy(st, ctx, ins)
    if isinstance(ins, (ir.CpAsyncCommit, ir.BulkCommit)):  # the thread's open copies of that kind become a group
        if isinstance(ins, ir.CpAsyncCommit):
            st.cp_groups.append(st.cp_open)
            st.cp_open = []
        else:
            st.bulk_groups.append(st.bulk_open)
            st.bulk_open = []
        st.pc += 1
        return []
    if isinstance(ins, ir.CpAsyncWait):
        if ins.n is None:
            done, st.cp_groups, st.cp_open = list(st.cp_all), [], []
        else:
            k = max(0, len(st.cp_groups) - ins.n)
            done = [e for g in st.cp_groups[:k] for e in g]
            st.cp_groups = st.cp_groups[k:]
        st.cp_all = [e for e in st.cp_all if e not in done]
        st.complete(done, Event(-1, tid, pc, "X", action="wait"))
        st.pc += 1
        return []
    if isinstance(ins, ir.CpAsyncMbarrierArrive):
        # an arrive-on operation once every earlier cp.async of the thread has completed
        # (ISA: ordered after "all prior cp.async operations initiated by the executing thread",
        # waited for or not); it publishes their writes (the relation: ptx.async_release)
        return _mbarrier_rmw(st, ctx, ins.bar, ir.Sem.RELAXED, ir.Scope.CTA, "arrive", 1, 0, unit_after=list(st.cp_all))
    if isinstance(ins, ir.BulkWait):
        k = max(0, len(st.bulk_groups) - ins.n)
        done = [(r if ins.read else f) for g in st.bulk_groups[:k] for r, f in g]
        st.bulk_groups = st.bulk_groups[k:]
        st.complete(done, Event(-1, tid, pc, "X", action="wait"))
        st.pc += 1
        return []
    raise Unsupported(f"the oracle does not model {type(ins).__name__} instructions yet")


def _read(st: _State, ctx: _Ctx, name: str, sem: ir.Sem, scope: ir.Scope | None, proxy: ir.Proxy, dst: str,
          nc: bool = False, width: int = 32) -> list[_State]:
    """A read of ``name`` into ``dst``: one state per value the location can hold (a narrow read's
    location holds only values that fit in it, ``ir.validate``: it reads the word's value)."""
    loc, pc = ctx.physical[name], st.pc
    options = sorted(ctx.values[loc].items())
    forks = []
    for s2, (v, cost) in zip(st.split(len(options)), options):
        ev = ctx.reads.get((pc, v))
        if ev is None:
            ev = ctx.reads[(pc, v)] = Event(-1, ctx.tid, pc, "R", sem, scope, proxy, loc, ctx.virtual[name], v, nc=nc, width=width)
        forks.append(_past_read(s2, ev, cost, dst, v))
    return forks


def _past_read(s2: _State, ev: Event, cost: tuple[int, ...], dst: str, value: int) -> _State:
    """``s2`` (one of :meth:`.trace._State.split`'s states) after the read ``ev`` (of that cost):
    ``dst`` holds ``value``, tainted by the read."""
    idx = s2.add(ev)
    s2.cost[idx] = cost
    s2.regs[dst] = value
    s2.taint[dst] = frozenset({idx})
    s2.pc += 1
    return s2


def _mbarrier_rmw(
    st: _State,
    ctx: _Ctx,
    bar: str,
    sem: ir.Sem,
    scope: ir.Scope,
    op: str,
    n: int,
    tx: int,
    unit_after: list[int] | None = None,
) -> list[_State]:
    """An mbarrier arrival / expect_tx: a read-modify-write of the mbarrier object whose write
    carries the operation's semantics (``mbarrier.arrive`` is a release at ``.cta`` scope by
    default; ISA "mbarrier.arrive").  With ``unit_after`` it is asynchronous (performed once those
    events have happened), as for ``cp.async.mbarrier.arrive``, whose write is marked
    ``action="cp_async_arrive"``: what it publishes is the relation :func:`.ptx.async_release`."""
    loc, vloc, pc = ctx.physical[bar], ctx.virtual[bar], st.pc
    options = bar_options(st, ctx, loc) if unit_after is None else sorted(ctx.values[loc].items())  # async: any
    forks = []
    for s2, (v, cost) in zip(st.split(len(options)), options):
        new = mech.mbarrier_update(v, op, n, tx)
        r = Event(-1, ctx.tid, pc, "R", ir.Sem.RELAXED, scope, ir.Proxy.GENERIC, loc, vloc, v, rmw=True)
        w = Event(-1, ctx.tid, pc, "W", sem, scope, ir.Proxy.GENERIC, loc, vloc, new, rmw=True,
                  action=None if unit_after is None else "cp_async_arrive")
        if unit_after is None:
            ridx, widx = s2.add(r), s2.add(w)
        else:  # cp.async.mbarrier.arrive: an arrival once the thread's cp.async complete; it
            # publishes their writes, not the thread's other operations (ptx.async_release)
            ridx, widx = s2.add_unit([r, w])
            s2.po.extend((d, ridx) for d in unit_after)
        s2.cost[ridx] = cost
        s2.rmws.append((ridx, widx))
        s2.data.append((ridx, widx))
        s2.write_cost(widx, {ridx}, ctx.loc_index[loc], ctx.width)
        s2.pc += 1
        forks.append(s2)
    return forks


def _mbarrier_wait(st: _State, ctx: _Ctx, ins: ir.MbarrierWait) -> list[_State]:
    """``mbarrier.test_wait/try_wait.parity``: a read of the mbarrier object; ``dst`` is 1 when
    the phase of that parity has completed, and then the read has the wait's semantics (acquire by
    default: "the memory operations of the threads that arrived are visible" -- ISA
    "mbarrier.test_wait/try_wait"); a wait that returns 0 orders nothing."""
    loc, vloc, pc = ctx.physical[ins.bar], ctx.virtual[ins.bar], st.pc
    options = bar_options(st, ctx, loc)
    forks = []
    for s2, (v, cost) in zip(st.split(len(options)), options):
        ev = ctx.reads.get((pc, v))
        if ev is None:
            sem = ins.sem if mech.mbarrier_wait_result(v, ins.parity) else ir.Sem.RELAXED
            ev = ctx.reads[(pc, v)] = Event(-1, ctx.tid, pc, "R", sem, ins.scope, ir.Proxy.GENERIC, loc, vloc, v)
        done = ctx.waits.get((pc, v))
        if done is None:
            done = ctx.waits[(pc, v)] = mech.mbarrier_wait_result(v, ins.parity)
        forks.append(_past_read(s2, ev, cost, ins.dst, done))
    return forks


def _async_copy(st: _State, ctx: _Ctx, ins: ir.CpAsync | ir.CpAsyncBulk) -> list[_State]:
    """Issue one asynchronous copy: its events form a unit of the issuing thread (see
    :meth:`_State.add_unit`).  ``cp.async``: generic read then write (:func:`mech.cp_async_events`);
    ``cp.async.bulk``: async-proxy read, write (a read-modify-write for ``cp.reduce``), the implicit
    proxy fence, then the ``complete_tx`` on the mbarrier (a release at ``.cta`` scope: the phase
    it completes makes the copy visible to the waiting threads)."""
    dst = (ctx.physical[ins.dst_loc], ctx.virtual[ins.dst_loc])
    options = []
    for src, through in _copy_sources(st, ctx, ins):
        for v, cost in sorted(ctx.values[src[0]].items()):
            olds = sorted(ctx.values[dst[0]].items()) if isinstance(ins, ir.CpAsyncBulk) and ins.reduce is not None else [(None, None)]
            bars = sorted(ctx.values[ctx.physical[ins.bar]].items()) if isinstance(ins, ir.CpAsyncBulk) and ins.bar else [(None, None)]
            options += [(src, v, cost, old, old_cost, bv, bcost, through) for old, old_cost in olds for bv, bcost in bars]
    return [_issue_copy(s2, ctx, ins, src, dst, v, cost, old, old_cost, bv, bcost, through)
            for s2, (src, v, cost, old, old_cost, bv, bcost, through) in zip(st.split(len(options)), options)]


_Source = tuple[tuple[str, str], tuple[Event, tuple[int, ...]] | None]


def _copy_sources(st: _State, ctx: _Ctx, ins: ir.CpAsync | ir.CpAsyncBulk) -> list[_Source]:
    """The copy's source (physical, virtual), and for a tensor copy through a tensor map the map's
    read and its cost: one option per value the map may hold -- the location it names (model.tensormap)."""
    src = ctx.physical[ins.src_loc]
    if src not in ctx.maps:
        return [((src, ctx.virtual[ins.src_loc]), None)]
    out: list[_Source] = []
    for mv, mcost in sorted(ctx.values[src].items()):
        named = tm.map_named(ctx.loc_index, mv)
        if named is not None:
            out.append(((named, named), (tm.map_read(ctx.tid, st.pc, src, ctx.virtual[ins.src_loc], mv), mcost)))
    return out


def _issue_copy(s2, ctx, ins, src, dst, v, cost, old, old_cost, bv, bcost, through=None) -> _State:
    bulk = isinstance(ins, ir.CpAsyncBulk)
    if not bulk:
        read, write = mech.cp_async_events(ctx.tid, s2.pc, src, dst)
        evs = [copy_with(read, value=v), copy_with(write, value=v)]
    else:
        read, write, fence = mech.bulk_copy_events(ctx.tid, s2.pc, src, dst)
        evs = [copy_with(read, value=v)]
        if ins.reduce is not None:
            evs.append(Event(-1, ctx.tid, s2.pc, "R", ir.Sem.WEAK, None, ir.Proxy.ASYNC, dst[0], dst[1], old, rmw=True))
            new = rmw_result(ins.reduce, old, (v,))
            evs.append(copy_with(write, value=new, rmw=True))
        else:
            evs.append(copy_with(write, value=v))
        evs.append(fence)
        if ins.bar is not None:
            bloc, bvloc = ctx.physical[ins.bar], ctx.virtual[ins.bar]
            evs.append(Event(-1, ctx.tid, s2.pc, "R", ir.Sem.RELAXED, ir.Scope.CLUSTER, ir.Proxy.GENERIC, bloc, bvloc, bv, rmw=True))
            nb = mech.mbarrier_update(bv, "complete_tx", tx=ins.size)
            evs.append(Event(-1, ctx.tid, s2.pc, "W", ir.Sem.RELAXED, ir.Scope.CLUSTER, ir.Proxy.GENERIC, bloc, bvloc, nb, rmw=True,
                             action="complete_tx"))
    ids = s2.add_unit(([through[0]] if through else []) + evs)
    if through:  # the map read first (its value names the source), completed by a bulk group too (model.tensormap)
        mid, ids = ids[0], ids[1:]
        s2.cost[mid] = through[1]
        s2.data.append((mid, ids[1]))
        s2.bulk_open.append((mid, mid))
    s2.cost[ids[0]] = cost
    if bulk and ins.reduce is not None:
        s2.cost[ids[1]] = old_cost
        s2.rmws.append((ids[1], ids[2]))
        s2.data.extend([(ids[0], ids[2]), (ids[1], ids[2])])
        s2.write_cost(ids[2], {ids[0], ids[1]}, ctx.loc_index[dst[0]], ctx.width)
        wi = ids[2]
    else:
        s2.data.append((ids[0], ids[1]))
        s2.write_cost(ids[1], {ids[0]}, ctx.loc_index[dst[0]], ctx.width)
        wi = ids[1]
    if bulk and ins.bar is not None:
        rb, wb = ids[-2], ids[-1]
        s2.cost[rb] = bcost
        s2.rmws.append((rb, wb))
        s2.data.append((rb, wb))
        s2.write_cost(wb, {rb}, ctx.loc_index[ctx.physical[ins.bar]], ctx.width)
    if not bulk:
        s2.cp_open.append(ids[-1])
        s2.cp_all.append(ids[-1])
    elif ins.completion == "bulk_group":
        s2.bulk_open.append((ids[0], ids[-1]))
    del wi
    s2.pc += 1
    return s2


def _rmw(st: _State, ins: ir.Atom | ir.Red, ctx: _Ctx) -> list[_State]:
    """``atom``/``red``: a read and (unless a cas fails) a write, related by ``rmw``.  The read
    carries the acquire half of the semantics, the write the release half (PTX ISA, "atom":
    ``.acq_rel`` is both)."""
    sem, scope = ir.effective(ins.sem, ins.scope)
    rsem = ir.Sem.ACQUIRE if sem in (ir.Sem.ACQUIRE, ir.Sem.ACQ_REL) else ir.Sem.RELAXED
    wsem = ir.Sem.RELEASE if sem in (ir.Sem.RELEASE, ir.Sem.ACQ_REL) else ir.Sem.RELAXED
    loc = ctx.physical[ins.loc]
    vloc = ctx.virtual[ins.loc]
    operands = ins.operands if isinstance(ins, ir.Atom) else (ins.value,)
    pc = st.pc
    options = sorted(ctx.values[loc].items())
    forks = []
    for s2, (v, cost) in zip(st.split(len(options)), options):
        ridx = s2.add(Event(-1, ctx.tid, pc, "R", rsem, scope, ins.proxy, loc, vloc, v, rmw=True))
        s2.cost[ridx] = cost
        new = rmw_result(ins.operation, v, tuple(_operand(o, s2.regs) for o in operands))
        if new is not None:
            widx = s2.add(Event(-1, ctx.tid, pc, "W", wsem, scope, ins.proxy, loc, vloc, new, rmw=True))
            s2.rmws.append((ridx, widx))
            deps: set[int] = set()
            for o in operands:
                deps |= _taint(o, s2.taint)
            if ins.operation is not ir.RmwOp.EXCH:  # the value written depends on the value read
                deps.add(ridx)
            for r in deps:
                s2.data.append((r, widx))
            s2.write_cost(widx, deps, ctx.loc_index[loc], ctx.width, ctx.sites[(ctx.tid, pc)])
        if isinstance(ins, ir.Atom):
            s2.regs[ins.dst] = v
            s2.taint[ins.dst] = frozenset({ridx})
        s2.pc += 1
        forks.append(s2)
    return forks


def _taint(v: ir.Operand, taint: Mapping[str, frozenset[int]]) -> frozenset[int]:
    return taint.get(v, frozenset()) if isinstance(v, str) else frozenset()


# --------------------------------------------------------------------------------------------
# Values and traces of the whole program
# --------------------------------------------------------------------------------------------


def _times(code: tuple[ir.Instruction, ...], loop_bound: int) -> list[int]:
    """How often each instruction can execute in one execution: once, times the iterations of the
    loops around it."""
    labels = {ins.name: i for i, ins in enumerate(code) if isinstance(ins, ir.Label)}
    times = [1] * len(code)
    for pc, limit in _back_limits(code, labels, loop_bound).items():
        jump = code[pc]
        assert isinstance(jump, (ir.Branch, ir.Goto))  # _back_limits: the pcs of backward jumps
        for i in range(labels[jump.target], pc + 1):
            times[i] *= limit + 1
    return times


def rmw_sites(p: ir.Program) -> list[tuple[int, int]]:
    """The (thread, pc) of every ``atom``/``red``, in order: each has a cost component, so that a
    read-modify-write's result is never fed back into more executions of the same instruction
    than it can have (without it, ``atom.add`` would seem to produce x+b, x+2b, x+3b...)."""
    return [(tid, pc) for tid, t in enumerate(p.threads) for pc, ins in enumerate(t.code) if isinstance(ins, (ir.Atom, ir.Red))]


def _write_budget(p: ir.Program, physical: Mapping[str, str], loop_bound: int) -> dict[str, int]:
    """How many writes to each physical location one execution can perform at most: one per
    write instruction, times the iterations of the loops around it."""
    budget: dict[str, int] = {}
    for t in p.threads:
        times = _times(t.code, loop_bound)
        for i, ins in enumerate(t.code):
            for name in _written(ins):
                loc = physical[name]
                budget[loc] = budget.get(loc, 0) + times[i]
    return budget


def _written(ins: ir.Instruction) -> tuple[str, ...]:
    """The locations an instruction may write."""
    if isinstance(ins, (ir.Store, ir.Atom, ir.Red)):
        return (ins.loc,)
    if isinstance(ins, (ir.MbarrierInit, ir.MbarrierArrive, ir.MbarrierExpectTx, ir.MbarrierCompleteTx, ir.CpAsyncMbarrierArrive)):
        return (ins.bar,)
    if isinstance(ins, ir.CpAsync):
        return (ins.dst_loc,)
    if isinstance(ins, ir.CpAsyncBulk):
        return (ins.dst_loc,) + ((ins.bar,) if ins.bar else ())
    if isinstance(ins, ir.TensormapReplace):
        return (ins.map,)
    return tmem.written(ins)


def _label_index(code: tuple[ir.Instruction, ...], name: str) -> int:
    return next(i for i, ins in enumerate(code) if isinstance(ins, ir.Label) and ins.name == name)


#: the traces of the programs asked about most recently (:func:`program_traces`): a program's race,
#: model, class and fix questions each ask for the same traces, and a campaign worker asks the value
#: domains of a batch's programs (``codegen.values.harness_domains``) before the oracle's questions of
#: each; with the work they cost.  Kept: the last 160 programs (a campaign's batch is 64) while their
#: work is at most 4e6 units in all (~4 bytes of pickled traces a unit; a drawn program's median is
#: ~500 units, a rare large one ~10^6)
_TRACES: Recent[tuple[ir.Program, int, bool], tuple[ProgramTraces, int]] = Recent(160, weight=lambda hit: hit[1], limit=4_000_000)


def program_traces(p: ir.Program, loop_bound: int = 1, work: Budget | None = None, prune_bars: bool = False) -> ProgramTraces:
    """:func:`compute_traces`, computed once for the questions asked of one program (a campaign asks
    the race analysis, the model, the class and the fix search of each): the traces of the programs
    asked about most recently are kept (:data:`_TRACES`), and a repeated question charges ``work`` the units the
    computation spent, so a budget runs out exactly where it did when every question computed them."""
    key = (p, loop_bound, prune_bars)
    hit = _TRACES.get(key)
    if hit is None:  # computed under the caller's budget (never unbounded where it was bounded)
        counted = work if work is not None else Budget(sys.maxsize)
        before = counted.used
        pt = compute_traces(p, loop_bound, counted, prune_bars)
        _TRACES.put(key, (pt, counted.used - before))
        return pt
    if work is not None:
        work.spend(hit[1])
    return hit[0]


def compute_traces(p: ir.Program, loop_bound: int = 1, work: Budget | None = None, prune_bars: bool = False) -> ProgramTraces:
    """Each thread's traces, reading values from a fixpoint of the values the program can write.

    With ``prune_bars`` an mbarrier's reads fork on fewer values (:mod:`.bar_reads`): every consistent
    execution's traces, fewer of the others' (and fewer loops cut) -- for questions about consistent executions
    alone (the fix search's race analyses); not for the value domains, ``explain`` or liveness, which read
    every candidate.

    Each value carries a cost vector: how many writes to each location, and how many executions of
    each ``atom``/``red`` (:func:`rmw_sites`), the chain of writes that produced it needs at least.
    A value whose chain needs more writes to some location than an execution can perform there
    (:func:`_write_budget`), or more executions of a read-modify-write than it can have
    (:func:`_times`), is never read, which keeps read-modify-write chains finite and short."""
    physical, virtual = address_maps(p)
    locs = {loc.name: loc for loc in p.locations}
    order = sorted(set(physical.values()))
    init = {name: mech.UNINITIALISED if locs[name].kind == "mbarrier" else  # a tensor map names its target (model.tensormap)
            tm.map_code({n: i for i, n in enumerate(order)}, physical[t]) if (t := locs[name].target) is not None else
            locs[name].init for name in order}
    order = sorted(init)
    budget = _write_budget(p, physical, loop_bound)
    limit = tuple(budget.get(loc, 0) for loc in order) + tuple(
        _times(p.threads[tid].code, loop_bound)[pc] for tid, pc in rmw_sites(p)
    )
    zero = tuple(0 for _ in limit)
    values: dict[str, dict[int, tuple[int, ...]]] = {loc: {v: zero} for loc, v in init.items()}
    maps = frozenset(physical[loc.name] for loc in p.locations if loc.kind == "tensormap")
    sites = tuple(rmw_sites(p))
    layout = (tuple(sorted(physical.items())), tuple(sorted(virtual.items())), len(sites), maps, loop_bound)
    writers = initial_writers(p, physical, init) if prune_bars else {}
    paths: list[_Paths] = []
    while True:
        r = _Round(values, physical, virtual, loop_bound, layout, sites, frozen_round(values, writers), writers)
        paths = [_thread_paths(p, tid, r, work, paths[tid] if paths else None) for tid in range(len(p.threads))]
        traces = tuple(ps.traces for ps in paths)
        cut = {c for ps in paths for c in ps.cut}
        grown = {loc: dict(vs) for loc, vs in values.items()}
        known = {loc: dict(by) for loc, by in writers.items()}
        for tid, ps in enumerate(paths):
            for loc, value, cost in ps.writes:  # the same write of many traces counts once: min is order-free
                if any(c > lim for c, lim in zip(cost, limit)):
                    continue
                old = grown[loc].get(value)
                grown[loc][value] = cost if old is None else tuple(min(a, b) for a, b in zip(old, cost))
                if loc in known:
                    known[loc][value] = known[loc].get(value, frozenset()) | {tid}
        if grown == values and known == writers:
            break
        if any(len(v) > MAX_VALUES_PER_LOCATION for v in grown.values()):
            raise Unsupported(f"more than {MAX_VALUES_PER_LOCATION} values written to one location")
        values, writers = grown, known
    return ProgramTraces(physical, virtual, init, traces, frozenset(cut))
