"""A wgmma's register operands in flight (issue 32, class F; DeepGEMM #448/#449): fuzzgpu's reading
of the undefined behaviour of :func:`fuzzgpu.semantics.wgmma_register_window`, one thread's path at a
time (:func:`.events.thread_traces` steps through :func:`step`).

``wgmma.mma_async d, a`` (:class:`fuzzgpu.ir.WgmmaMma`) reads its A fragment ``a`` and writes its
accumulator ``d`` asynchronously.  The ISA makes any other access of either register undefined
until a ``wgmma.wait_group`` covers the wgmma's group, and a write of them before the wgmma
undefined unless a ``wgmma.fence`` comes between.  The model reads that as:

* the wgmma's read of ``a`` returns any value ``a`` holds in its *window*: from the last
  ``wgmma.fence`` before it (the value before the first write since that fence, when there is one:
  no fence ordered that write) to the wait covering its group (each value written in flight);
* its write of ``d`` happens at that wait (or the thread's end), or earlier: a read of ``d`` in flight
  returns ``d``'s earlier value or the result (any value the A read may return so far), and a write
  of ``d`` in flight is either kept or overwritten by the result.

Every such access is a *hazard* -- a racing pair of the race property (mechanism ``wgmma-register``,
class 13): ``(access index, wgmma index, register, taken)``, ``taken`` when the path's values come
from it (the wgmma read a value written out of its window, an early read of the accumulator, a
result that overwrote a later write, or registers read at the thread's end with no wait).  A path
whose hazards are none taken is what the program meant (:mod:`.race`: its outcome is not racy).
Not modelled: the accumulator as an input (scale-d is 0: ``d = A x B``), several wgmmas of one
accumulator, and accesses by other threads of the warpgroup (each litmus thread stands for its own).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Iterator

from .. import ir
from .. import semantics
from .trace import _Ctx, _State

#: (access index, wgmma index, register, taken) -- the access is ``len(code)`` for the thread's end
Hazard = tuple[int, int, str, bool]
#: a value the wgmma's read of ``a`` may return: (value, index of the write that made it or None for
#: the value at the issue, the reads the value depends on)
Choice = tuple[int, int | None, frozenset[int]]


@dataclass(frozen=True)
class InFlight:
    """One issued ``wgmma.mma_async``: where, its registers, the values its A read may return, and
    the writes of its accumulator in flight (value, index, taint)."""

    pc: int
    dst: str
    a: str
    choices: tuple[Choice, ...]
    dst_writes: tuple[Choice, ...] = ()


@dataclass(frozen=True)
class WgState:
    """A path's wgmma bookkeeping: the registers written since the last ``wgmma.fence`` (register,
    value before that write, its index, taint), the uncommitted wgmmas, the committed groups not yet
    waited for (oldest first), and the hazards so far."""

    unfenced: tuple[tuple[str, int, int, frozenset[int]], ...] = ()
    open: tuple[InFlight, ...] = ()
    groups: tuple[tuple[InFlight, ...], ...] = ()
    hazards: tuple[Hazard, ...] = ()

    @property
    def pending(self) -> tuple[InFlight, ...]:
        return self.open + tuple(w for g in self.groups for w in g)


def uses_wgmma(code: tuple[ir.Instruction, ...]) -> bool:
    return any(isinstance(i, ir.WGMMA_REGISTER_INSTRUCTIONS) for i in code)


#: a path's bookkeeping before its first wgmma instruction (immutable: shared by every path)
_NONE = WgState()


def _wg(st: _State) -> WgState:
    return st.wg if isinstance(st.wg, WgState) else _NONE


def pending(st: _State) -> bool:
    """Whether wgmmas of the path are still in flight (issued, not covered by a wait)."""
    return bool(_wg(st).pending)


def step(st: _State, ins: ir.Instruction, ctx: _Ctx, inner: Callable[[_State, ir.Instruction, _Ctx], list[_State] | None]
         ) -> list[_State] | None:
    """``inner`` (:func:`.events._step`) with the wgmma register instructions and the hazards of the
    other instructions' register accesses (the same contract: None drops the path, [] goes on with ``st``)."""
    wg = _wg(st)
    if isinstance(ins, ir.WGMMA_REGISTER_INSTRUCTIONS):
        return _wgmma_step(st, ins, wg)
    read = set(ins.registers_read())
    landing = [w for w in wg.pending if w.dst in read]  # the accumulator read in flight: old value or result
    if not landing:
        return _access(st, ins, ctx, inner, wg, read)
    out: list[_State] = []
    for s in _landed(st, landing):
        forks = _access(s, ins, ctx, inner, wg, read)
        out += [s] if forks == [] else forks or []
    return out or None


def _landed(st: _State, landing: list[InFlight]) -> list[_State]:
    """The paths of a read of the accumulators of ``landing`` (wgmmas in flight): each accumulator still
    its older value, or already the result -- any value the wgmma's A read may return so far (on the
    H200, ptxas 13.0 moved such a read after the wait: it returned the result, bench/results/wgmma-regs)."""
    states = [st]
    for w in landing:
        nxt = []
        for s in states:
            for value, _, taint in dict.fromkeys(((s.regs.get(w.dst, 0), None, s.taint.get(w.dst, frozenset())),) + w.choices):
                s2 = s.fork()
                s2.regs[w.dst], s2.taint[w.dst] = value, taint
                nxt.append(s2)
        states = nxt
    return states


def _access(st: _State, ins: ir.Instruction, ctx: _Ctx, inner: Callable[[_State, ir.Instruction, _Ctx], list[_State] | None],
            wg: WgState, read: set[str]) -> list[_State] | None:
    """``inner`` on an instruction other than the wgmma ones, with the hazards of its register accesses."""
    pc = st.pc
    early = tuple((pc, w.pc, w.dst, True) for w in wg.pending if w.dst in read)  # the accumulator read in flight
    early += tuple((pc, w.pc, w.a, False) for w in wg.pending if w.a in read)  # an A fragment read in flight
    reg = ins.register_written()
    old, old_taint = st.regs.get(reg, 0) if reg else 0, st.taint.get(reg, frozenset()) if reg else frozenset()
    forks = inner(st, ins, ctx)
    if forks is None:
        return None
    for s in forks or [st]:
        s.wg = _written(replace(wg, hazards=wg.hazards + early), s, reg, pc, old, old_taint)
    return forks


def _written(wg: WgState, st: _State, reg: str | None, pc: int, old: int, old_taint: frozenset[int]) -> WgState:
    """After the instruction at ``pc`` wrote ``reg`` (now ``st.regs[reg]``): remembered as unfenced,
    and added to the window of each wgmma in flight that reads it (or to its accumulator's writes)."""
    if reg is None:
        return wg
    unfenced = wg.unfenced if any(r == reg for r, *_ in wg.unfenced) else wg.unfenced + ((reg, old, pc, old_taint),)
    new: Choice = (st.regs.get(reg, 0), pc, st.taint.get(reg, frozenset()))
    hazards = wg.hazards + tuple((pc, w.pc, reg, False) for w in wg.pending if reg in (w.a, w.dst))

    def add(w: InFlight) -> InFlight:
        if w.a == reg:
            return replace(w, choices=w.choices + (new,))
        return replace(w, dst_writes=w.dst_writes + (new,)) if w.dst == reg else w

    return WgState(unfenced, tuple(map(add, wg.open)), tuple(tuple(map(add, g)) for g in wg.groups), hazards)


def _wgmma_step(st: _State, ins: ir.Instruction, wg: WgState) -> list[_State]:
    pc = st.pc
    st.pc += 1
    if isinstance(ins, ir.WgmmaFence):
        st.wg = replace(wg, unfenced=())
    elif isinstance(ins, ir.WgmmaMma):
        now: Choice = (st.regs.get(ins.a, 0), None, st.taint.get(ins.a, frozenset()))
        stale = tuple((v, i, t) for r, v, i, t in wg.unfenced if r == ins.a)  # written with no wgmma.fence since
        st.wg = replace(wg, open=wg.open + (InFlight(pc, ins.dst, ins.a, (now,) + stale),))
    elif isinstance(ins, ir.WgmmaCommit):
        st.wg = replace(wg, open=(), groups=wg.groups + ((wg.open,) if wg.open else ()))
    else:
        assert isinstance(ins, ir.WgmmaWait)
        k = semantics.wgmma_register_window(len(wg.groups), ins.n)
        st.wg = replace(wg, groups=wg.groups[k:])
        return _complete(st, [w for g in wg.groups[:k] for w in g])
    return []


def finish(st: _State, end: int) -> list[_State]:
    """The thread's end (index ``end``) with wgmmas no wait covered: they complete there, and the
    registers the end reads (the outcome's) are a taken hazard of each."""
    wg = _wg(st)
    pending = wg.pending
    st.wg = replace(wg, open=(), groups=(), hazards=wg.hazards + tuple((end, w.pc, w.dst, True) for w in pending))
    return _complete(st, list(pending)) or [st]


def _complete(st: _State, done: list[InFlight]) -> list[_State]:
    """The wgmmas ``done`` complete (in issue order): one path per value each one's A read may have
    returned and, where its accumulator was written in flight, whether the result overwrote that."""
    states = [st]
    for w in done:
        nxt = []
        for s in states:
            for value, writer, taint in dict.fromkeys(w.choices):
                taken: tuple[Hazard, ...] = () if writer is None else ((writer, w.pc, w.a, True),)
                for kept in (None, *w.dst_writes[-1:]):
                    s2 = s.fork()
                    lost: tuple[Hazard, ...] = ()
                    if kept is None:  # the result lands last: a write of the accumulator in flight is lost
                        s2.regs[w.dst], s2.taint[w.dst] = value, taint
                        lost = tuple((i, w.pc, w.dst, True) for _, i, _ in w.dst_writes[-1:] if i is not None)
                    s2.wg = replace(_wg(s2), hazards=_wg(s2).hazards + taken + lost)
                    nxt.append(s2)
        states = nxt
    return states if done else []


def hazards(st: _State) -> tuple[Hazard, ...]:
    return tuple(dict.fromkeys(st.wg.hazards)) if isinstance(st.wg, WgState) else ()


def names(p: ir.Program, tid: int, h: Hazard) -> tuple[str, str, str]:
    """(the access, the wgmma, the register) of a hazard, as a racing pair names them (``P0:mov r1, 2``)."""
    from ..litmus import format_instruction

    t = p.threads[tid]
    access, wgmma, reg, _ = h
    first = f"{t.name}:{format_instruction(t.code[access])}" if access < len(t.code) else f"{t.name}:(end: registers read)"
    return first, f"{t.name}:{format_instruction(t.code[wgmma])}", f"{t.name}:{reg}"


def inserts(code: tuple[ir.Instruction, ...]) -> Iterator[tuple[str, str, ir.Instruction]]:
    """The fix search's insertions for a thread with wgmmas (:func:`fuzzgpu.fixes.changes`): the wait
    that covers every group, then the fence that orders earlier register writes."""
    if any(isinstance(i, ir.WgmmaMma) for i in code):
        yield "wait", "insert", ir.WgmmaWait(0)
        yield "fence", "insert", ir.WgmmaFence()


__all__ = ["Hazard", "InFlight", "WgState", "finish", "hazards", "inserts", "names", "pending", "step", "uses_wgmma"]
