"""Loops on an instruction-level control-flow graph, for both parsers: the natural loop of a backward
branch (:func:`natural_loop`) and whether a value the loop computes is read after it
(:func:`written_and_read_after`).  Pure: a graph is ``succs[i]``, the instructions that may run after
instruction ``i``.

A loop's body is the set of instructions on a cycle through its head and its backward branch, never
the listing between the two: LLVM rotates a loop and places its header and latch together, its body
after the latch (FlashInfer's grid-stride loops at sm_100a: ``$L__BB19_3: setp; @%p bra $L__BB19_5;
$L__BB19_4: add; setp; @%p bra $L__BB19_3``, the body at ``$L__BB19_5`` with a ``bra.uni $L__BB19_4``
back), and ptxas lays the same loop out contiguously, so a check of the listing calls the PTX loop
empty and the SASS loop busy."""

from __future__ import annotations

from typing import Callable, Collection, Sequence


def natural_loop(succs: Sequence[Sequence[int]], head: int, tail: int) -> frozenset[int]:
    """The instructions of the loop the branch ``tail`` -> ``head`` closes: the instructions on a path
    from ``head`` to ``tail`` (when ``head`` dominates ``tail``, the natural loop of the back edge: ``head``
    and every instruction that reaches ``tail`` without passing ``head``).  Empty when ``head`` does not
    reach ``tail``: no cycle (a branch back to a block that only returns, ptxas's shared exit)."""
    return _loop(succs, _preds(succs), head, tail)[0]


def _preds(succs: Sequence[Sequence[int]]) -> dict[int, list[int]]:
    preds: dict[int, list[int]] = {}
    for i, ss in enumerate(succs):
        for s in ss:
            preds.setdefault(s, []).append(i)
    return preds


def _loop(succs: Sequence[Sequence[int]], preds: dict[int, list[int]], head: int, tail: int) -> tuple[frozenset[int], bool]:
    """:func:`natural_loop`, and whether ``head`` dominates ``tail`` (every path from the entry,
    instruction 0, to ``tail`` runs ``head``).  The walk goes back from ``tail`` and stops at ``head``:
    when ``head`` dominates, it stays within the loop; when it reaches the entry, ``head`` does not."""
    back = {tail}
    work = [tail] if tail != head else []
    while work:
        for p in preds.get(work.pop(), ()):
            if p != head and p not in back:
                back.add(p)
                work.append(p)
    # the instructions of ``back`` that ``head`` reaches: on a path head -> ... -> tail
    body = {head}
    work = [head]
    while work:
        for s in succs[work.pop()]:
            if s in back and s not in body:
                body.add(s)
                work.append(s)
    if tail not in body:
        return frozenset(), False
    return frozenset(body), head == 0 or 0 not in back


def back_edges(succs: Sequence[Sequence[int]], candidates: Sequence[tuple[int, int]]) -> list[tuple[int, int, frozenset[int]]]:
    """The loops of the backward branches ``candidates`` (``(branch, target)``, the target before the
    branch in the listing), each with its instructions (:func:`natural_loop`); a branch whose target does
    not reach it closes none.  A branch back into a loop whose target does not dominate it (LLVM's rotated
    loop: the body after the latch jumps back to the latch) is a retreating edge of a loop another branch
    closes: when the loop of a branch whose target dominates it holds its whole cycle, it is left out, so
    that one loop is counted once.  Any other (an irreducible cycle, entered at two places) is kept.
    (The walks go over the straight-line runs of instructions, each a node.)"""
    if not candidates:
        return []
    n = len(succs)
    npred = [0] * n
    for ss in succs:
        for t in ss:
            npred[t] += 1
    starts = [0] + [i for i in range(1, n) if npred[i] != 1 or len(succs[i - 1]) != 1 or succs[i - 1][0] != i]
    ends = [x - 1 for x in starts[1:]] + [n - 1]
    block_of = [0] * n
    for b, (lo, hi) in enumerate(zip(starts, ends)):
        block_of[lo:hi + 1] = [b] * (hi + 1 - lo)
    bsuccs = [sorted({block_of[t] for t in succs[e]}) for e in ends]
    bpreds = _preds(bsuccs)
    found = []
    for bra, head in candidates:
        blocks, dom = _loop(bsuccs, bpreds, block_of[head], block_of[bra])
        if blocks:
            body = frozenset(i for b in blocks for i in range(starts[b], ends[b] + 1))
            found.append((bra, head, body, dom))
    natural = [body for _, _, body, dom in found if dom]
    return [(bra, head, body) for bra, head, body, dom in found
            if dom or not any(body <= other for other in natural)]


def written_and_read_after(body: Collection[int], succs: Sequence[Sequence[int]], regs: Collection[str],
                           reads: Callable[[int], Collection[str]], writes: Callable[[int], Collection[str]]) -> bool:
    """Whether a value of ``regs`` (the registers the loop ``body`` writes) reaches a read outside the
    loop: some path leaves the body and runs an instruction that reads one of them (``reads(i)``: its
    operands and guard) before an instruction writes it again (``writes(i)``).  A path that comes back
    into the body ends there: the loop's reads of its own registers are not a use of its result, and
    whatever leaves it again starts from its exits anew.  Reaching definitions on the graph, joined as
    a union; not the listing after the branch (the body of a rotated loop lies there)."""
    state: dict[int, frozenset[str]] = {}
    work: list[int] = []
    start = frozenset(regs)
    for i in body:
        for s in succs[i]:
            if s not in body and not start <= state.get(s, frozenset()):
                state[s] = state.get(s, frozenset()) | start
                work.append(s)
    while work:
        i = work.pop()
        live = state[i]
        if any(r in live for r in reads(i)):
            return True
        out = live.difference(writes(i))
        if not out:
            continue
        for s in succs[i]:
            if s in body:
                continue
            have = state.get(s, frozenset())
            if not out <= have:
                state[s] = have | out
                work.append(s)
    return False
