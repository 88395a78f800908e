"""Tensor memory (issue 32, classes E and G; sm_100a): the events of ``tcgen05.st``, ``tcgen05.ld``,
``tcgen05.wait::{st,ld}`` and ``tcgen05.alloc``, each rule next to the PTX ISA text it rests on, and
which racing pairs are class E's (:func:`in_flight`).

* ``tcgen05.st`` / ``tcgen05.ld`` are asynchronous (PTX ISA "tcgen05.st", "tcgen05.ld"; the tcgen05
  memory consistency model): each is one weak generic-proxy access of its ``tmem`` cell (a write of the
  register's value, a read into the register) performed at an unspecified point after its issue --
  the events of an asynchronous *unit* (:meth:`.trace._State.add_unit`: after the thread's earlier
  events, before none of its later ones), as ``cp.async``'s write is.
* ``tcgen05.wait::st`` / ``::ld`` (PTX ISA "tcgen05.wait": the executing thread blocks "until all
  prior tcgen05.st [tcgen05.ld] operations issued by the executing thread have completed"): a thread
  event after the completed accesses (:meth:`.trace._State.complete`), so they precede, in program
  order, everything the thread does after the wait -- a release, a barrier, a reuse of the cell.
* ``tcgen05.alloc`` "writes the address of the allocated Tensor Memory" to shared memory: an ordinary
  weak generic write of its slot, in program order (the instruction blocks until it allocated); another
  thread reads it only through synchronization -- bar.sync, a release/acquire pattern -- with
  ``tcgen05.fence::before_thread_sync`` / ``::after_thread_sync`` around that synchronization for the
  tcgen05 pipeline (the fences order no memory access the model has: :mod:`.mechanisms`).

Not modelled: the destination register of a ``tcgen05.ld`` read before its wait (it holds the loaded
value at once; the ISA makes it undefined), tensor-memory lanes and columns beyond one 32-bit cell per
location, and ``tcgen05.mma``/``tcgen05.cp``/``tcgen05.commit``.
"""

from __future__ import annotations

from .. import ir
from .event import Event
from .trace import _Ctx, _State

ST, LD = "tcgen05_st", "tcgen05_ld"
#: the action of a tcgen05.wait's event, by the kind of access it completes
WAIT = "tcgen05_wait"


def step(st: _State, ins: ir.Instruction, ctx: _Ctx) -> list[_State]:
    """One tcgen05 tensor-memory instruction (the contract of :func:`.events._step`: [] goes on with
    ``st``, a list of states replaces it -- a ``tcgen05.ld`` forks on the value it reads)."""
    pc, tid = st.pc, ctx.tid
    if isinstance(ins, ir.Tcgen05Ld):
        options = sorted(ctx.values[ctx.physical[ins.loc]].items())
        return [_loaded(s2, ctx, ins, v, cost) for s2, (v, cost) in zip(st.split(len(options)), options)]
    if isinstance(ins, ir.Tcgen05St):
        loc = ctx.physical[ins.loc]
        value = ins.src if isinstance(ins.src, int) else st.regs.get(ins.src, 0)
        (idx,) = st.add_unit([Event(-1, tid, pc, "W", ir.Sem.WEAK, None, ir.Proxy.GENERIC, loc, ctx.virtual[ins.loc], value,
                                    action=ST)])
        deps = st.taint.get(ins.src, frozenset()) if isinstance(ins.src, str) else frozenset()
        st.data.extend((r, idx) for r in deps)
        st.write_cost(idx, deps, ctx.loc_index[loc], ctx.width)
        st.tc_pending = st.tc_pending + (("st", idx),)
    elif isinstance(ins, ir.Tcgen05Wait):
        done = [i for kind, i in st.tc_pending if kind == ins.kind]
        st.tc_pending = tuple(p for p in st.tc_pending if p[0] != ins.kind)
        st.complete(done, Event(-1, tid, pc, "X", action=WAIT))
    else:
        assert isinstance(ins, ir.Tcgen05Alloc)
        loc = ctx.physical[ins.slot]
        idx = st.add(Event(-1, tid, pc, "W", ir.Sem.WEAK, None, ir.Proxy.GENERIC, loc, ctx.virtual[ins.slot], ins.value))
        st.write_cost(idx, set(), ctx.loc_index[loc], ctx.width)
    st.pc += 1
    return []


def _loaded(s2: _State, ctx: _Ctx, ins: ir.Tcgen05Ld, value: int, cost: tuple[int, ...]) -> _State:
    """``s2`` (one of :meth:`.trace._State.split`'s states) after the load of ``value``."""
    (idx,) = s2.add_unit([Event(-1, ctx.tid, s2.pc, "R", ir.Sem.WEAK, None, ir.Proxy.GENERIC, ctx.physical[ins.loc],
                                ctx.virtual[ins.loc], value, action=LD)])
    s2.cost[idx] = cost
    s2.regs[ins.dst], s2.taint[ins.dst] = value, frozenset({idx})
    s2.tc_pending = s2.tc_pending + (("ld", idx),)
    s2.pc += 1
    return s2


def written(ins: ir.Instruction) -> tuple[str, ...]:
    """The locations a tcgen05 instruction may write (``tcgen05.st``'s cell, ``tcgen05.alloc``'s slot)."""
    if isinstance(ins, ir.Tcgen05St):
        return (ins.loc,)
    return (ins.slot,) if isinstance(ins, ir.Tcgen05Alloc) else ()


def in_flight(e: Event, completed: bool) -> bool:
    """Whether ``e`` is a ``tcgen05.st``/``tcgen05.ld`` access that no ``tcgen05.wait`` of its thread
    completed before the handoff (``completed``: a wait after ``e`` in program order precedes the other
    access of the racing pair in the program's intended order); class E (:func:`.race.classify`) when
    ``e`` is the racing pair's access meant to come first (a later one's wait completes nothing of the
    handoff: a race of a completed store and a later load is the handoff's own failure)."""
    return e.action in (ST, LD) and not completed


__all__ = ["LD", "ST", "WAIT", "in_flight", "step", "written"]
