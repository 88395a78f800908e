"""The oracle's value domain: every value a program can hold at each outcome key and each location.

A candidate execution (before any axiom) reads, at each read, some value written to its location
(``events.program_traces``: a fixpoint of the values the program can write, bounded by the write
budget and the loop bound).  So the values an outcome key holds in *some* candidate execution are
exactly the values of that key in the threads' traces: for a register, its final value in the
thread's paths; for a location, its initial value and every value a path writes to it.

A run that shows a key with a value outside this domain did not read a value any store of the
program wrote: no ordering of the program's accesses explains it, allowed or forbidden.  That is
a harness or hardware fault (a decoding error, a corrupted word), not a memory-model verdict --
``fuzzgpu.properties`` reports it as its own kind, and the GPU harness sizes its value tables by
this domain (``fuzzgpu.codegen``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..ir import Program
from .events import program_traces
from ..recent import Recent

Domain = tuple[tuple[str, frozenset[int]], ...]
#: a program's domains (:func:`domains`): per key, per location, whether the loop bound cut a loop
Domains = tuple[Domain, Domain, bool]

#: the domains of the programs asked about most recently, computed here or adopted (:func:`adopt`)
_DOMAINS: Recent[tuple[Program, int], Domains] = Recent(2048)


def domains(p: Program, loop_bound: int = 1) -> Domains:
    """(per key, per location, whether the loop bound cut a re-entered loop: the domains are then
    those of the executions within the bound, and a longer one may hold other values) -- computed
    once per program (those asked about most recently are kept: :data:`_DOMAINS`), or adopted from the
    process that computed them."""
    key = (p, loop_bound)
    hit = _DOMAINS.get(key)
    return hit if hit is not None else _DOMAINS.put(key, _compute(p, loop_bound))


def adopt(known: Iterable[tuple[Program, Domains]]) -> None:
    """Take the domains another process computed at the default loop bound, the one the harness's
    value tables are written at (a campaign worker computes them with the oracle's traces; the backend
    process that writes the tables would compute the traces again): :func:`domains` then answers with
    them.  They are a pure function of the program, so adopting them changes no answer, only who
    computes it."""
    for p, d in known:
        _DOMAINS.put((p, 1), d)


def _compute(p: Program, loop_bound: int) -> Domains:
    pt = program_traces(p, loop_bound)
    # one pass over the events: per location, the values written and those read or written (each set
    # filled in the order of the traces and their events)
    written: dict[str, set[int]] = {loc: {v} for loc, v in pt.init.items()}
    locs: dict[str, set[int]] = {loc: {v} for loc, v in pt.init.items()}
    for per in pt.traces:
        for tr in per:
            for e in tr.events:
                if e.kind in ("R", "W") and e.loc in locs and e.value is not None:
                    locs[e.loc].add(e.value)
                    if e.kind == "W":
                        written[e.loc].add(e.value)
    regs: dict[int, list[dict[str, int]]] = {}  # per thread, each trace's final registers
    keys: dict[str, set[int]] = {}
    for k in p.outcome_keys():
        if ":" in k:
            name, reg = k.split(":", 1)
            tid = next(i for i, t in enumerate(p.threads) if t.name == name)
            init = p.threads[tid].init_value(reg)
            final = regs.setdefault(tid, [dict(tr.regs) for tr in pt.traces[tid]])
            keys[k] = {r.get(reg, init) for r in final}
        else:
            keys[k] = set(written[pt.physical[k]])
    return (tuple((k, frozenset(v)) for k, v in keys.items()),
            tuple((k, frozenset(v)) for k, v in sorted(locs.items())), bool(pt.cut))


def key_values(p: Program, *, loop_bound: int = 1) -> dict[str, frozenset[int]]:
    """Per outcome key (``Program.outcome_keys``), the values it holds in some candidate execution.
    Raises ``Unsupported`` where the oracle does not cover the program."""
    return dict(domains(p, loop_bound)[0])


def location_values(p: Program, *, loop_bound: int = 1) -> dict[str, frozenset[int]]:
    """Per physical location, its initial value and every value a candidate execution reads from
    it or writes to it.  Raises ``Unsupported`` where the oracle does not cover the program."""
    return dict(domains(p, loop_bound)[1])


def unwritten(p: Program, outcome: Mapping[str, int | None], *, loop_bound: int = 1) -> tuple[str, ...]:
    """The keys of ``outcome`` whose value no candidate execution gives them (``None``: a value the
    run could not name: outside the harness's value table, which holds the key's domain).  A key
    whose domain is empty (a thread with no complete path within the loop bound) is never listed:
    nothing can be said of it; nor is any key when the loop bound cut a re-entered loop (a counter
    that spun longer than the bound holds a value the bounded domain lacks: no fault, and the
    oracle's verdict on it is "not covered", ``events.beyond_loop_bound``)."""
    keys, _, cut = domains(p, loop_bound)
    if cut:
        return ()
    dom = dict(keys)
    return tuple(k for k, v in outcome.items() if dom.get(k) and (v is None or v not in dom[k]))


__all__ = ["Domains", "adopt", "domains", "key_values", "location_values", "unwritten"]
