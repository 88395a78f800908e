"""Which values a thread's read of an mbarrier may return, where the path enumeration prunes
(``events.compute_traces(prune_bars=True)``): a read by the thread's own (not asynchronous) operation
returns a value its initial value, another thread or the thread's own earlier operations give the
mbarrier -- never one only its own later operations write, which no consistent execution reads
(:func:`later_writes_unreadable`: Causality; not where the thread may access the mbarrier's location
otherwise).  Every consistent execution's traces stay, and
fewer of the inconsistent candidates' (so fewer loops are cut by the loop bound: ``ProgramTraces.cut``).

The fixpoint (``events.compute_traces``) then also keeps, per mbarrier value, the threads whose paths
write it (``_Round.writers``: :func:`initial_writers`, then each round's writes), and a thread's paths
depend on them (:func:`frozen_round`)."""

from __future__ import annotations

import dataclasses
from typing import Mapping

from .. import ir
from .trace import _Ctx, _State

__all__ = ["bar_options", "frozen_round", "initial_writers", "later_writes_unreadable", "readable"]


#: the instructions that access an mbarrier object (their ``bar``): each of its accesses is a generic-proxy
#: read or write of the mbarrier's name (the events :mod:`.events` makes of it)
_BAR_OPS = (ir.MbarrierInit, ir.MbarrierArrive, ir.MbarrierExpectTx, ir.MbarrierCompleteTx, ir.MbarrierWait,
            ir.CpAsyncBulk, ir.CpAsyncMbarrierArrive)


def _named(ins: ir.Instruction) -> set[str]:
    """The names an instruction's fields give (a location's among them), but an mbarrier operation's ``bar``."""
    skip = "bar" if isinstance(ins, _BAR_OPS) else None
    return {v for f in dataclasses.fields(ins) if f.name != skip and isinstance(v := getattr(ins, f.name), str)}


def later_writes_unreadable(code: tuple[ir.Instruction, ...], loc: str, physical: Mapping[str, str]) -> bool:
    """Whether a read of the physical mbarrier ``loc`` by one of ``code``'s own mbarrier operations cannot read a
    write of the same thread that follows it in program order.  True when the location has one name and every
    instruction of ``code`` that names it is an mbarrier operation on it: each of the thread's accesses of it is
    then a generic-proxy access of one virtual address.  PTX ISA 9.x, 8.10 "Axioms", Causality: a read does not
    read from a write that it precedes in causality order (``irreflexive(rf ; cause)``: :func:`.ptx.causality_rf`);
    "Base causality order" includes program order, and causality order is *proxy-preserved* base causality (8.x
    "Proxy-preserved base causality order"), which keeps program order between two generic-proxy accesses of
    the same virtual address (:attr:`.ptx.Execution.proxy_preserved_base_causality`).  False (no pruning) where
    the thread may access the location otherwise -- through another name of it (an alias: another virtual
    address, which program order alone does not keep after the read) or naming it in another role (a copy's
    destination, a plain ``st``): a sufficient condition, not the only one."""
    names = {n for n, ph in physical.items() if ph == loc}
    return len(names) == 1 and not any(names & _named(ins) for ins in code)


def readable(code: tuple[ir.Instruction, ...], tid: int, physical: Mapping[str, str],
             writers: Mapping[str, Mapping[int, frozenset[int]]]) -> dict[str, frozenset[int]]:
    """Per mbarrier (physical) whose thread-``tid`` reads cannot read its own later writes
    (:func:`later_writes_unreadable`), the values its initial value or another thread's paths give it
    (``writers``): with those of the thread's own earlier operations, the values such a read may return."""
    return {loc: frozenset(v for v, by in by_value.items() if by - {tid})
            for loc, by_value in writers.items() if later_writes_unreadable(code, loc, physical)}


def bar_options(st: _State, ctx: _Ctx, loc: str) -> list[tuple[int, tuple[int, ...]]]:
    """The values (and costs) a read of the mbarrier ``loc`` by a thread's own (not asynchronous)
    operation may return on the path ``st``: of the round's values, those another thread or its
    initial value gives it (:attr:`.trace._Ctx.readable`) and those the path's own earlier operations
    wrote to it; every value where the thread may access it otherwise (:func:`later_writes_unreadable`).
    Never empty: the initial value is always readable."""
    options = sorted(ctx.values[loc].items())
    ok = ctx.readable.get(loc)
    if ok is None:
        return options
    own = {e.value for e in st.events if e.kind == "W" and e.loc == loc}
    return [(v, cost) for v, cost in options if v in ok or v in own]


def initial_writers(p: ir.Program, physical: Mapping[str, str], init: Mapping[str, int]) -> dict[str, dict[int, frozenset[int]]]:
    """Per mbarrier (physical), its initial value, written by none of the threads (-1)."""
    return {loc: {init[loc]: frozenset({-1})} for loc in sorted({physical[x.name] for x in p.locations if x.kind == "mbarrier"})}


def frozen_round(values: Mapping[str, Mapping[int, tuple[int, ...]]],
                 writers: Mapping[str, Mapping[int, frozenset[int]]]) -> dict[str, tuple[object, ...]]:
    """A round's values per location in hashable form (``_Round.frozen``), an mbarrier's with the threads that
    write each value: a thread's paths are a function of these where it reads (``events._thread_paths``)."""
    frozen: dict[str, tuple[object, ...]] = {loc: tuple(sorted(vs.items())) for loc, vs in values.items()}
    for loc, by_value in writers.items():
        frozen[loc] = (frozen[loc], tuple(sorted((v, tuple(sorted(by))) for v, by in by_value.items())))
    return frozen
