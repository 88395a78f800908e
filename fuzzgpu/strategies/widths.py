"""Issue 32, class L (mixed-size accesses) in the general generator: a flag handoff's poll drawn
narrower than the flag's store (``ld.acquire.gpu.u16`` of a word written by a 32-bit
``st.release.gpu``, vllm #2760).  The two overlap partially, so they are not morally strong
(:func:`fuzzgpu.semantics.access_extent`) and the handoff synchronizes nothing.

Drawn in one flag handoff of :data:`SHARE` (the poll's width is the draw's last choice: 32 bits
first, so a shrink goes back to the word), only where the IR allows a narrow access (every write of
the flag a ``st`` of an immediate that fits) and the poll is strong (a weak flag is class
``flag`` whatever the sizes)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import hypothesis.strategies as st

from ..ir import Instruction, Load, Sem, Store

#: one flag handoff in this many polls its flag with a 16-bit load
SHARE = 8


def narrow_flag(draw: st.DrawFn, consumer: Sequence[Instruction], code: Sequence[Sequence[Instruction]],
                flag: str) -> list[Instruction]:
    """``consumer`` with its (last) load of ``flag`` drawn 32 or 16 bits wide (16 in one draw of
    :data:`SHARE`) where a narrow load of ``flag`` is valid and meaningful; ``consumer`` unchanged
    otherwise (nothing drawn)."""
    at = [k for k, ins in enumerate(consumer) if isinstance(ins, Load) and ins.loc == flag]
    writes = [ins for c in code for ins in c if flag in ins.locations() and not isinstance(ins, Load)]
    if not at or not writes or not all(isinstance(w, Store) and isinstance(w.src, int) and 0 <= w.src < 1 << 16
                                       for w in writes):
        return list(consumer)
    k = at[-1]
    load = consumer[k]
    assert isinstance(load, Load)
    if load.sem is Sem.WEAK or load.nc:
        return list(consumer)
    width = draw(st.sampled_from((32,) * (SHARE - 1) + (16,)))
    return [*consumer[:k], dataclasses.replace(load, width=width), *consumer[k + 1:]]


__all__ = ["SHARE", "narrow_flag"]
