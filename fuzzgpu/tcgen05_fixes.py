"""The fix search's insertions for tensor memory (issue 32, class E; :func:`fuzzgpu.fixes.changes`):
a ``tcgen05.wait::st`` in a thread with a ``tcgen05.st``, a ``tcgen05.wait::ld`` in one with a
``tcgen05.ld`` -- the wait that completes the thread's asynchronous tensor-memory accesses before the
handoff (PTX ISA "tcgen05.wait"; the rule: :mod:`fuzzgpu.model.tensor_memory`).  Class G (the
allocation's address published weakly) needs no insertion of its own: the search's strengthenings
and fences of the flag, or a barrier's, are its fixes."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from .ir import Instruction, Tcgen05Ld, Tcgen05St, Tcgen05Wait


def inserts(code: Sequence[Instruction]) -> Iterator[tuple[str, str, Instruction]]:
    """(kind, op, instruction) of each tcgen05 wait worth inserting into a thread with ``code``."""
    if any(isinstance(i, Tcgen05St) for i in code):
        yield "wait", "insert", Tcgen05Wait("st")
    if any(isinstance(i, Tcgen05Ld) for i in code):
        yield "wait", "insert", Tcgen05Wait("ld")


__all__ = ["inserts"]
