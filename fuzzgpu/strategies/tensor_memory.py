"""Issue 32, classes E and G (tensor memory, sm_100a) in the general generator: in one draw of
:data:`SHARE`, a shared data word of the drawn handoff becomes

* ``E``: a tensor-memory cell (a ``tmem`` location): each ``st`` of it a ``tcgen05.st``, followed by
  its ``tcgen05.wait::st`` or not (a store published in flight: class E), each ``ld`` of it a
  ``tcgen05.ld`` followed by its ``tcgen05.wait::ld`` (the register is read after it);
* ``G``: the slot ``tcgen05.alloc`` writes its address to: the ``st`` of an immediate becomes the
  allocation (``tcgen05.alloc slot, value``: the allocator returns that value), published by the
  draw's own handoff -- weakly or not (class G when weakly).

Only a word every access of which is a 32-bit ``st`` (or the one ``red.add`` of a word that starts at 0)
or ``ld`` of its own CTA (no copy, no other atomic, no ``.nc``, no distributed shared memory, no poll)
qualifies; ``none`` is the first choice (the shrink goes back
to the plain handoff).  Never in a ``runnable`` draw: the harness runs on an H200 (sm_90), which has
no tensor memory (:data:`fuzzgpu.codegen.runnable._NOT_EMITTED_WHY`); the static backend compiles
the tcgen05 instructions for sm_100a.
"""

from __future__ import annotations

import dataclasses

import hypothesis.strategies as st

from ..ir import (Branch, Instruction, Load, Operand, Program, Red, RmwOp, Space, Store, Tcgen05Alloc, Tcgen05Ld, Tcgen05St, Tcgen05Wait,
                  validate)

#: of this many qualifying draws, one turns a word into tensor memory (E) and one into an allocation's slot (G):
#: about 3% of profile all's draws (sm_100a: not runnable on the H200; the runnable share stays over 85%,
#: tests/strategies/test_producer_consumer_cluster.py)
SHARE = 8
#: the choices, the plain handoff first (the shrink order)
KINDS = ("none",) * (SHARE - 2) + ("E", "G")


def _written_value(i: Instruction) -> Operand | None:
    """The value a data write of a word writes, when the write is a plain one: a 32-bit ``st``, or a
    ``red.add`` (into a word that starts at 0 and is written once: the value it adds)."""
    if isinstance(i, Store) and i.width == 32 and not i.shared_cluster:
        return i.src
    if isinstance(i, Red) and i.operation is RmwOp.ADD and not i.shared_cluster:
        return i.value
    return None


def _candidates(p: Program) -> list[str]:
    """The shared data words whose every access is a plain write (:func:`_written_value`) or a 32-bit
    ``ld`` by threads of one CTA, and which no branch polls (a flag); a word a ``red.add`` writes starts
    at 0 and has that one write."""
    out = []
    for loc in p.locations:
        if loc.kind != "data" or loc.space is not Space.SHARED or loc.alias_of is not None or loc.cta is not None:
            continue
        if any(other.alias_of == loc.name for other in p.locations):
            continue
        users = [(t, i) for t in p.threads for i in t.code if loc.name in i.locations()]
        writes = [i for _, i in users if not isinstance(i, Load)]
        reads = [i for _, i in users if isinstance(i, Load)]
        plain = all(_written_value(i) is not None for i in writes) and all(
            type(i) is Load and i.width == 32 and not i.shared_cluster and not i.nc for i in reads)
        if any(isinstance(i, Red) for i in writes) and (len(writes) > 1 or loc.init != 0):
            plain = False
        polled = any(isinstance(i, Load) and any(isinstance(b, Branch) and i.dst in (b.a, b.b) for b in t.code)
                     for t, i in users)  # a flag, not data
        ctas = {(t.placement.grid, t.placement.cluster, t.placement.cta) for t, _ in users}
        if writes and plain and not polled and len(ctas) == 1:
            out.append(loc.name)
    return out


def _as_tmem(code: tuple[Instruction, ...], name: str, wait_st: bool) -> tuple[Instruction, ...]:
    out: list[Instruction] = []
    for i in code:
        value = _written_value(i) if name in i.locations() else None
        if value is not None:
            out += [Tcgen05St(name, value)] + ([Tcgen05Wait("st")] if wait_st else [])
        elif isinstance(i, Load) and i.loc == name:
            out += [Tcgen05Ld(i.dst, name), Tcgen05Wait("ld")]
        else:
            out.append(i)
    return tuple(out)


def _as_alloc(code: tuple[Instruction, ...], name: str) -> tuple[Instruction, ...]:
    out: list[Instruction] = []
    for i in code:
        value = _written_value(i) if name in i.locations() else None
        out.append(Tcgen05Alloc(name, value) if isinstance(value, int) else i)
    return tuple(out)


def tensor_memory(draw: st.DrawFn, p: Program, runnable: bool) -> Program:
    """``p`` with one of its shared data words made a tensor-memory cell or an allocation's slot (module
    text), else ``p`` unchanged."""
    if runnable:
        return p
    names = _candidates(p)
    kind = draw(st.sampled_from(KINDS)) if names else "none"
    if kind == "none":
        return p
    name = draw(st.sampled_from(names))
    if kind == "G":
        values = [_written_value(i) for t in p.threads for i in t.code if name in i.locations() and not isinstance(i, Load)]
        if not all(isinstance(v, int) and not isinstance(v, bool) and 0 < v < 1 << 31 for v in values):
            return p
        threads = tuple(dataclasses.replace(t, code=_as_alloc(t.code, name)) for t in p.threads)
        return validate(dataclasses.replace(p, threads=threads))
    wait_st = draw(st.booleans())
    threads = tuple(dataclasses.replace(t, code=_as_tmem(t.code, name, wait_st)) for t in p.threads)
    locs = tuple(dataclasses.replace(loc, kind="tmem") if loc.name == name else loc for loc in p.locations)
    return validate(dataclasses.replace(p, threads=threads, locations=locs))


__all__ = ["KINDS", "SHARE", "tensor_memory"]
