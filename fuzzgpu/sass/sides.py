"""Which side of each synchronisation point an operation lies on, on both graphs (docs/sass.md, "Order on
the control-flow graph"): the kinds of points (:func:`ptx_keys`, :func:`sass_key`), the points that
dominate and post-dominate each operation (:func:`ptx_sides`, :func:`sass_sides`) and what a SASS
operation crossed against its PTX operation (:func:`crossed`).  :mod:`fuzzgpu.sass.order` judges the
crossings."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Hashable, Sequence

from .cfg import Cfg, _stops_by_block, min_marks
from .ptx_parser import PtxEvent, PtxFunction, PtxInstr, _classify_ptx_sync
from .report import HOISTED, SUNK
from .sass_parser import SassFunction, SassInstr, SassMemOp

#: what a move crossed: (PTX event index of the point, direction)
Crossed = tuple[int, str]


def _bar_id(operands: Sequence[str], red: bool) -> str:
    ops = [o.strip() for o in operands]
    if red:
        ops = ops[1:]
    if ops and re.fullmatch(r"0x[0-9a-fA-F]+|\d+", ops[0]):
        return str(int(ops[0], 0))
    return "?"


def ptx_keys(e: PtxEvent, k: int) -> tuple[Hashable | None, Hashable | None]:
    """``(hoist_key, sink_key)`` of a PTX synchronisation point: the SASS kind a later operation
    must follow (None: the point acquires nothing) and the one an earlier operation must precede
    (None: it releases nothing).  ``("@mem", k)``: the point's own SASS access."""
    sync = e.sync
    if sync is None:
        return None, None
    _, classes = _classify_ptx_sync(e.instr, e.mem)
    if not classes:
        return None, None

    def key(tok: str) -> Hashable:
        if tok == "@mem":
            return ("@mem", k)
        if tok.startswith("BAR."):
            return f"{tok}#{_bar_id(e.instr.operands, tok == 'BAR.RED')}"
        return tok

    if sync.kind.startswith("barrier.cluster"):
        # ptxas 13.0 (sm_90) tests at run time whether the CTA is in a cluster of more than one:
        # if not, the cluster barrier is a CTA barrier (BAR.SYNC) and the UCGABAR path is skipped;
        # the kinds are the release arrive's MEMBAR and the wait, which a CTA barrier also stands for (_covers)
        wait = [c for c in classes if c == "UCGABAR_WAIT"]
        return (("CLUSTER:" + wait[-1]) if sync.acquire and wait else None), (("CLUSTER:" + classes[0]) if sync.release else None)
    return (key(classes[-1]) if sync.acquire else None), (key(classes[0]) if sync.release else None)


def sass_key(ins: SassInstr, token: str) -> str:
    if token.startswith("BAR."):
        ops = [o.strip() for o in ins.operands.split(",")]
        return f"{token}#{int(ops[0], 16) if ops and re.fullmatch(r'0x[0-9a-fA-F]+', ops[0]) else '?'}"
    return token


def _covers(have: Hashable, want: Hashable) -> bool:
    """A SASS instance of kind ``have`` stands for a PTX point of kind ``want``: the same kind, or
    a CTA barrier whose id one side does not give as an immediate."""
    if have == want:
        return True
    if isinstance(have, str) and isinstance(want, str) and want.startswith("CLUSTER:"):
        # the release arrive's MEMBAR / the wait itself; in a cluster of one CTA the cluster barrier
        # is a CTA barrier (ptx_keys)
        return have == want[len("CLUSTER:"):] or have.startswith("BAR.SYNC")
    if isinstance(have, str) and isinstance(want, str) and have.startswith("BAR.") and want.startswith("BAR."):
        (t1, i1), (t2, i2) = have.split("#", 1), want.split("#", 1)
        return t1 == t2 and "?" in (i1, i2)
    return False


def _applies(pred_point: str, block_point: int, pred_op: str, block_op: int) -> bool:
    """A predicated point orders only an operation under the same predicate in its block (an
    if-converted branch); an unpredicated one everything it dominates."""
    return not pred_point or pred_point in ("@PT",) or (pred_point == pred_op and block_point == block_op)


@dataclass(frozen=True)
class Sides:
    """For one operation and each kind: the fewest points of that kind any path runs before it
    (``before``: from the entry) and after it (``after``: to an exit).  For a PTX operation also
    its dominator and post-dominator chains of points (event indices, nearest last), which name
    the points a move crossed."""

    before: dict
    after: dict
    chain_before: tuple[int, ...] = ()
    chain_after: tuple[int, ...] = ()


#: the opcodes of :func:`_is_async_op`'s operations
_ASYNC_OPCODES = frozenset(("wgmma", "cp", "tcgen05"))


def _is_async_op(ins: PtxInstr) -> bool:
    """An operation of the async proxy: wgmma.mma_async (reads shared memory), a bulk copy
    (cp{.reduce}.async.bulk{.tensor}, not a prefetch), tcgen05.mma/cp (semantics table)."""
    m = ins.mods
    return ((ins.opcode == "wgmma" and m[:1] == ("mma_async",))
            or (ins.opcode == "cp" and (m[:2] == ("async", "bulk") or m[:3] == ("reduce", "async", "bulk"))
                and "prefetch" not in m and "commit_group" not in m and "wait_group" not in m)
            or (ins.opcode == "tcgen05" and m[:1] in (("mma",), ("cp",))))


def ptx_sides(fn: PtxFunction, g: Cfg, points: dict[int, tuple[Hashable | None, Hashable | None]]) -> dict[int, Sides]:
    """For each memory event (index into ``fn.events``): the fewest ordering points of each kind on
    a path to it (hoist kinds) and from it (sink kinds).  A predicated point (``@%p bar.sync``)
    counts on no path: it may not run."""
    idx = {k: fn.events[k].instr.index for k in points}
    ev_of = {i: k for k, i in idx.items()}
    resets = frozenset(e.instr.index for e in fn.events if e.mem is not None) | frozenset(
        i.index for i in fn.instrs if i.opcode in _ASYNC_OPCODES and _is_async_op(i))
    counts = {}
    reset_stops = _stops_by_block(g, {}, resets)
    for which, post in ((0, False), (1, True)):
        kinds = {v[which] for v in points.values() if v[which] is not None}
        for kind in kinds:
            w = {idx[k]: 1 for k, v in points.items() if v[which] == kind and not fn.events[k].instr.predicate}
            counts[(which, kind)] = min_marks(g, w, post, resets, reset_stops)
    dom = g.marks_on_chain({idx[k]: 0 for k, (h, _) in points.items() if h is not None})
    pdom = g.marks_on_chain({idx[k]: 0 for k, (_, s) in points.items() if s is not None}, post=True)
    out: dict[int, Sides] = {}
    hoist = [(kind, q) for (which, kind), q in counts.items() if which == 0]
    sink = [(kind, q) for (which, kind), q in counts.items() if which == 1]
    inf = float("inf")
    for k, e in enumerate(fn.events):
        if e.mem is None:
            continue
        i = e.instr.index
        before = {kind: n for kind, q in hoist if 0 < (n := q(i)) < inf}
        after = {kind: n for kind, q in sink if 0 < (n := q(i)) < inf}
        out[k] = Sides(before, after, tuple(ev_of[j] for j in dom(i) if ev_of[j] != k),
                       tuple(ev_of[j] for j in pdom(i) if ev_of[j] != k))
    return out


def sass_sides(fn: SassFunction, g: Cfg, marks: dict[int, tuple[Hashable, ...]], ops: Sequence[SassMemOp],
               kinds: tuple[set, set]) -> dict[int, Sides]:
    """For each SASS memory operation (by instruction index) and each PTX kind (``kinds``: the
    hoist kinds and the sink kinds): the fewest SASS instances of that kind any path runs before
    it and after it.  A predicated instance counts: ptxas predicates a point that the PTX runs
    unconditionally (``@P0 MEMBAR; @P0 ATOMG`` for a warp-aggregated release atomic), and
    counting more instances can only hide a move, never invent one.  Instances in a row are all
    counted (the PTX side merges those with no memory operation between them: fewer there, too,
    only hides a move).  An instance at the
    operation's own instruction (an acquire load that is one ``LDS.64`` with its neighbour) is on
    both sides."""
    queries = {}
    for which, post in ((0, False), (1, True)):
        for kind in kinds[which]:
            w = {i: n for i, ks in marks.items() if (n := sum(1 for x in ks if _covers(x, kind)))}
            queries[(which, kind)] = (min_marks(g, w, post), w)
    out: dict[int, Sides] = {}
    seen: dict[tuple, Sides] = {}
    for m in ops:
        i = m.instr.index
        sides: tuple[dict, dict] = ({}, {})
        for (which, kind), (q, w) in queries.items():
            sides[which][kind] = q(i) + w.get(i, 0)
        # operations with the same counts share one Sides object (most do: the counts change only
        # at the points), so that what depends on the counts alone is computed once for them
        # (:meth:`_Ctx.judged`)
        sig = (tuple(sides[0].items()), tuple(sides[1].items()))
        one = seen.get(sig)
        if one is None:
            one = seen[sig] = Sides(sides[0], sides[1])
        out[i] = one
    return out


def crossed(ptx: Sides, sass: Sides, all_points: dict[Hashable, tuple[list[int], list[int]]], here: int,
            index_of: Callable[[int], int]) -> list[Crossed]:
    """The PTX points a SASS copy of a PTX operation crossed: for each kind, when every path to the
    SASS copy runs fewer instances than the fewest any PTX path runs (hoisted above), or every path
    from it fewer than the fewest after it in PTX (sunk below), the nearest points of that kind on
    its dominator (post-dominator) chain; nearest first."""
    out: list[Crossed] = []
    for which, pts, have, chain, direction in ((0, ptx.before, sass.before, ptx.chain_before, HOISTED),
                                                 (1, ptx.after, sass.after, ptx.chain_after, SUNK)):
        for kind, need in pts.items():
            got = have.get(kind, 0)
            if got == float("inf") or got >= need:
                continue
            missing = int(need - got)
            mine = [p for p in reversed(chain) if p in all_points[kind][which]][:missing]
            if not mine:  # no point of the kind on every path: the nearest one on the side it was on
                side = [p for p in all_points[kind][which] if (index_of(p) < here) == (which == 0)]
                mine = sorted(side, key=lambda p: abs(index_of(p) - here))[:1]
            out.extend((p, direction) for p in mine)
    out.sort(key=lambda c: abs(index_of(c[0]) - here))
    return list(dict.fromkeys(out))
