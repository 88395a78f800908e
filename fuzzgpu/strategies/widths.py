"""Issue 32, class L (mixed-size accesses) in the general generator: a flag handoff's poll drawn
narrower than the flag's store (``ld.acquire.gpu.u16`` of a word written by a 32-bit
``st.release.gpu``, vllm #2760).  The two overlap partially, so they are not morally strong
(:func:`fuzzgpu.semantics.access_extent`) and the handoff synchronizes nothing.

Drawn as a flag pattern of its own (``mixed-size`` in ``producer_consumer._PATTERN_SEMS``: the
release/acquire pattern with the poll 16 bits wide, one flag handoff in five; release/acquire, the
right pattern, comes first, so a shrink keeps the narrow poll only where it is the bug).  As the last
choice of every flag handoff (one strong poll in eight narrowed, whatever the pattern: 9c580b2) it
came up in 0.67% of profile all's draws (seeds 1-3 x 300) and alone (the race key class L only) in
none: most narrow polls were of relaxed or volatile flags, already a flag race.  Narrowed only where the
IR allows a narrow access (every write of the flag a ``st`` of an immediate that fits) and the poll
is strong (a weak flag is class ``flag`` whatever the sizes)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ..ir import Instruction, Load, Sem, Store

#: the narrow poll's width in bits (the flag's store is 32 bits wide)
WIDTH = 16


def narrow_flag(consumer: Sequence[Instruction], code: Sequence[Sequence[Instruction]], flag: str,
                width: int = WIDTH) -> list[Instruction]:
    """``consumer`` with its (last) load of ``flag`` ``width`` bits wide where a narrow load of ``flag``
    is valid and meaningful; ``consumer`` unchanged otherwise."""
    at = [k for k, ins in enumerate(consumer) if isinstance(ins, Load) and ins.loc == flag]
    writes = [ins for c in code for ins in c if flag in ins.locations() and not isinstance(ins, Load)]
    if not at or not writes or not all(isinstance(w, Store) and isinstance(w.src, int) and 0 <= w.src < 1 << width
                                       for w in writes):
        return list(consumer)
    k = at[-1]
    load = consumer[k]
    assert isinstance(load, Load)
    if load.sem is Sem.WEAK or load.nc:
        return list(consumer)
    return [*consumer[:k], dataclasses.replace(load, width=width), *consumer[k + 1:]]


__all__ = ["WIDTH", "narrow_flag"]
