"""Which values a thread's read of an mbarrier may return, where the path enumeration prunes
(``events.compute_traces(prune_bars=True)``): a read by the thread's own (not asynchronous) operation
returns a value its initial value, another thread or the thread's own earlier operations give the
mbarrier -- never one only its own later operations write, which no consistent execution reads
(:func:`reads_no_later_own_write`).  Not where the thread may access the
mbarrier's location otherwise (:func:`own_accesses`).  Every consistent execution's traces stay, and
fewer of the inconsistent candidates' (so fewer loops are cut by the loop bound: ``ProgramTraces.cut``).

The fixpoint (``events.compute_traces``) then also keeps, per mbarrier value, the threads whose paths
write it (``_Round.writers``: :func:`initial_writers`, then each round's writes), and a thread's paths
depend on them (:func:`frozen_round`)."""

from __future__ import annotations

import dataclasses
from typing import Mapping

from .. import ir
from .trace import _Ctx, _State

__all__ = ["bar_options", "frozen_round", "initial_writers", "own_accesses", "readable", "reads_no_later_own_write"]


def reads_no_later_own_write(read: ir.Proxy, write: ir.Proxy, same_virtual: bool) -> bool:
    """Whether no consistent execution has a read take its value from a write of its own thread that
    follows it in program order.  PTX ISA 9.x, 8.10 "Axioms", Causality: a read does not read from a write
    that it precedes in causality order (``irreflexive(rf ; cause)``: :func:`.ptx.causality_rf`); "Base
    causality order" includes program order, and causality order is *proxy-preserved* base causality (8.x
    "Proxy-preserved base causality order"), which keeps a program-order pair with nothing else on the path
    between two generic-proxy accesses of the same virtual address (:attr:`.ptx.Execution.proxy_preserved_base_causality`;
    among other cases: the same non-generic proxy in one CTA, through proxy fences).  So for those the read
    precedes the later write in causality order and cannot read it: a sufficient condition -- across proxies
    or aliases program order alone need not preserve it (``semantics.keeps_location_order`` reads the same
    argument for the SASS checker)."""
    return read is ir.Proxy.GENERIC and write is ir.Proxy.GENERIC and same_virtual


#: the instructions that access an mbarrier object (their ``bar``): each of its accesses is a generic-proxy
#: read or write (the events :mod:`.events` makes of it)
_BAR_OPS = (ir.MbarrierInit, ir.MbarrierArrive, ir.MbarrierExpectTx, ir.MbarrierCompleteTx, ir.MbarrierWait,
            ir.CpAsyncBulk, ir.CpAsyncMbarrierArrive)


def _named(ins: ir.Instruction) -> set[str]:
    """The names an instruction's fields give (a location's among them), but an mbarrier operation's ``bar``."""
    skip = "bar" if isinstance(ins, _BAR_OPS) else None
    return {v for f in dataclasses.fields(ins) if f.name != skip and isinstance(v := getattr(ins, f.name), str)}


def own_accesses(code: tuple[ir.Instruction, ...], loc: str, physical: Mapping[str, str],
                  virtual: Mapping[str, str]) -> set[tuple[ir.Proxy, str]] | None:
    """(proxy, virtual address) of each access of the physical mbarrier ``loc`` the thread's ``code`` makes,
    when every one is one of its mbarrier operations (generic-proxy accesses of the mbarrier's own name);
    None where an instruction may access it otherwise -- through another name of its location (an alias:
    another virtual address), or naming it in another role (a copy's destination, a plain ``st``)."""
    names = {n for n, ph in physical.items() if ph == loc}
    if len(names) != 1 or any(names & _named(ins) for ins in code):
        return None
    return {(ir.Proxy.GENERIC, virtual[ins.bar]) for ins in code if isinstance(ins, _BAR_OPS) and ins.bar in names}


def readable(code: tuple[ir.Instruction, ...], tid: int, physical: Mapping[str, str], virtual: Mapping[str, str],
              writers: Mapping[str, Mapping[int, frozenset[int]]]) -> dict[str, frozenset[int]]:
    """Per mbarrier (physical) that thread ``tid`` accesses, the values its initial value or another thread's
    paths give it (``writers``): the values a read of it by this thread may return, with those of the
    thread's own earlier operations -- not one only its own later operations write, where no such read
    can read it (:func:`reads_no_later_own_write`, each of the thread's accesses against
    the read's: a generic-proxy read of the mbarrier's one virtual address).  An mbarrier the thread may
    access otherwise (:func:`own_accesses`) is left out: every value of its domain stays readable."""
    out: dict[str, frozenset[int]] = {}
    for loc, by_value in writers.items():
        own = own_accesses(code, loc, physical, virtual)
        if not own:
            continue
        (read_vloc,) = {v for _, v in own}  # one name, one virtual address
        if all(reads_no_later_own_write(ir.Proxy.GENERIC, proxy, vloc == read_vloc) for proxy, vloc in own):
            out[loc] = frozenset(v for v, by in by_value.items() if by - {tid})
    return out


def bar_options(st: _State, ctx: _Ctx, loc: str) -> list[tuple[int, tuple[int, ...]]]:
    """The values (and costs) a read of the mbarrier ``loc`` by a thread's own (not asynchronous)
    operation may return on the path ``st``: of the round's values, those another thread or its
    initial value gives it (:attr:`.trace._Ctx.readable`) and those the path's own earlier operations
    wrote to it; every value where the thread's accesses of it are not all of one virtual address.
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
