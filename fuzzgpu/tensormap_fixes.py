"""The fix of issue 32's class D (a tensor map rewritten and used without the tensormap proxy fence
pair): the candidate fences and which two of them :func:`fuzzgpu.fix_pairs.pairs` judges together.

Neither fence of the pair orders anything alone (PTX ISA "membar/fence": "A .release proxy fence can
form a release sequence that synchronizes with an acquire sequence that contains a .acquire proxy
fence"; :mod:`fuzzgpu.model.tensormap`), so no single change makes progress and the pair search's
progress rule would never pair them: a ``.release`` fence in a thread that rewrites a map and an
``.acquire`` fence on a map in a thread that copies through it, at one scope, are judged as a pair
(cheapest scope first, as every fence).  The other half of the class, a rewrite while a copy still
reads the map, is fixed by the waits :func:`fuzzgpu.fixes.changes` already tries.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

from .ir import CpAsyncBulk, Instruction, Program, Scope, Sem, TensormapFence, TensormapReplace


class Change(Protocol):
    """What :func:`fence_pair` reads of a :class:`fuzzgpu.fixes.Change` (no import of it: ``fixes`` uses this module)."""

    @property
    def op(self) -> str: ...

    @property
    def new(self) -> Instruction | None: ...


def inserts(p: Program, tid: int, scopes: Sequence[Scope]) -> Iterator[tuple[str, str, Instruction]]:
    """(kind, op, instruction) of each tensormap proxy fence to try in thread ``tid``: a release fence
    where it rewrites a tensor map, an acquire fence on each map it copies through, at ``scopes``."""
    maps = {loc.name for loc in p.locations if loc.kind == "tensormap"}
    code = p.threads[tid].code
    writes = any(isinstance(i, TensormapReplace) for i in code)
    used = sorted({i.src_loc for i in code if isinstance(i, CpAsyncBulk) and i.src_loc in maps})
    for s in scopes:
        if writes:
            yield "fence.proxy", "insert", TensormapFence(Sem.RELEASE, s)
        for m in used:
            yield "fence.proxy", "insert", TensormapFence(Sem.ACQUIRE, s, m)


def fence_pair(a: Change, b: Change) -> bool:
    """Are ``a`` and ``b`` the two halves of a tensormap proxy fence pair at one scope?"""
    fa, fb = a.new, b.new
    return (isinstance(fa, TensormapFence) and isinstance(fb, TensormapFence) and a.op == b.op == "insert"
            and {fa.sem, fb.sem} == {Sem.RELEASE, Sem.ACQUIRE} and fa.scope is fb.scope)


__all__ = ["fence_pair", "inserts"]
