"""Matching: which SASS memory operation each PTX memory operation became (by class, then by
offset or order) and which SASS instructions each PTX synchronisation point became (a longest common
subsequence of their tokens)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping, Sequence

from .ptx_parser import PtxEvent, PtxInstr, PtxMemOp, _mem_class, _ptx_dests, sync_of, unmatched_sync
from .sass_parser import SassFunction, SassInstr, SassMemOp
from .shared_layout import rebased, shared_layout


#: no base register's shift known in advance (:func:`_base_deltas`)
_NO_SHIFTS: Mapping[str, int] = MappingProxyType({})


def _sass_mem_class(m: SassMemOp) -> str:
    return _class_of(m.instr.opcode, m.constant, m.mmio, m.strength)


@functools.lru_cache(maxsize=1024)  # a handful of values, asked for many times per operation
def _class_of(op: str, constant: bool, mmio: bool, strength_: str) -> str:
    family = {"REDG": "ATOMG", "RED": "ATOM", "LDSM": "LDS", "STSM": "STS"}.get(op, op)
    strength = "CONSTANT" if constant else ("MMIO" if mmio else (f"STRONG.{strength_}" if strength_ else ""))
    return _mem_class(family, strength)  # (the strength only where the family carries one: ptx_parser.STRENGTH_FAMILIES)


# Source chains (innermost location first, then the call sites it was inlined at, from PTX `.loc ...
# inlined_at` and `nvdisasm -gi`), compared four ways, each for its own question: may two be one
# instruction's (`locations_meet`: loosest, for coarse line-table rows; `same_source`: for pairing memory
# operations), does a wait's phase check sit at the wait's place (`same_location`), is it another copy of
# the wait (`call_sites_differ`); `agreement` counts the frames that agree.


def locations_meet(a: Sequence[tuple[str, int]], b: Sequence[tuple[str, int]]) -> bool:
    """May two source chains (innermost first, then the call sites it was inlined at) be one
    instruction's?  Yes when one side has none; else when the innermost location of either is a
    location of the other's chain -- an inlined helper's line on one side and the call site it was
    inlined at on the other agree, two different innermost lines that neither chain names do not."""
    return not a or not b or a[0] in b or b[0] in a


def same_source(a: Sequence[tuple[str, int]], b: Sequence[tuple[str, int]]) -> bool:
    """Can two source locations be one instruction's?  The innermost lines agree, and so do the
    call sites they were inlined at when both sides give one (PTX ``.loc ... inlined_at``,
    ``nvdisasm -gi``): every ``__ldg`` is ``sm_32_intrinsics.hpp:112`` inlined at its own line.
    No location on one side: anything."""
    if not a or not b:
        return True
    if a[0] != b[0] or (len(a) > 1 and len(b) > 1 and a[1] != b[1]):
        return False
    # the outermost frames (the kernel's own lines) agree; the middle of a deep template chain is
    # rebuilt from the PTX heuristically (a .loc names one call site), so it is not compared
    k = min(len(a), len(b), 5) - 2
    return k <= 0 or tuple(a[-k:]) == tuple(b[-k:])


def same_location(ptx_src: Sequence[tuple[str, int]], sass_src: Sequence[tuple[str, int]]) -> bool:
    """Whether a PTX statement's source chain and a SASS instruction's name one place: both known, the
    same innermost ``(file, line)``, and the same call sites as far as both carry them (the SASS line
    table may carry fewer inlining frames than the PTX)."""
    n = min(len(ptx_src), len(sass_src))
    return n > 0 and tuple(ptx_src[:n]) == tuple(sass_src[:n])


def call_sites_differ(ptx_src: Sequence[tuple[str, int]], sass_src: Sequence[tuple[str, int]]) -> bool:
    """Whether two source chains name different call sites: both carry some, and the frames outside the innermost
    one, compared from the outermost as far as both have them, differ.  The innermost line alone may differ
    (ptxas's line table gives a phase check the line of the address arithmetic before it, inside the same
    inlined wait); another call site is another copy of the wait: an inlined helper called from another line,
    another warp role's."""
    a, b = tuple(ptx_src[1:]), tuple(sass_src[1:])
    n = min(len(a), len(b))
    return n > 0 and a[len(a) - n:] != b[len(b) - n:]


def agreement(a: Sequence[tuple[str, int]], b: Sequence[tuple[str, int]]) -> int:
    """How many frames of two source chains agree, from the innermost and from the outermost."""
    n = min(len(a), len(b))
    inner = next((i for i in range(n) if a[i] != b[i]), n)
    outer = next((i for i in range(n) if a[-1 - i] != b[-1 - i]), n)
    return inner + outer


def sass_family(m: SassMemOp) -> str:
    """The family of a SASS memory operation's class (``LDS``, ``STG``, ``ATOMG``...)."""
    return _sass_mem_class(m).split(".")[0]


def claim_expansions(events: Sequence[PtxEvent], sass_mem: Sequence[SassMemOp]) -> dict[int, tuple[int, ...]]:
    """The SASS memory operations that are ptxas's expansion of a PTX instruction of several
    accesses (:attr:`PtxEvent.parts`: tensormap.replace, tensormap.cp_fenceproxy, a generic atom), told by their
    source lines: SASS instruction index -> the expanding events of its family whose location
    agrees best with its, when that agreement is better than any ordinary PTX operation's of its
    class (a tie is left to :func:`fuzzgpu.sass.order.cfg_findings`, which weighs both).  Nothing
    without line information on both sides."""
    exps = [(k, e) for k, e in enumerate(events) if e.parts and e.instr.src]
    if not exps:
        return {}
    ordinary: dict[str | None, set[tuple[tuple[str, int], ...]]] = {}
    for e in events:
        if e.mem is not None and not e.parts and e.instr.src:
            ordinary.setdefault(e.mem_class, set()).add(e.instr.src)
    out: dict[int, tuple[int, ...]] = {}
    for m in sass_mem:
        src = m.instr.src
        fam = sass_family(m)
        mine = [(agreement(e.instr.src, src), k) for k, e in exps
                if src and any(f == fam for f, _ in e.parts) and locations_meet(e.instr.src, src)]
        if not mine:
            continue
        best = max(a for a, _ in mine)
        rival = max((agreement(o, src) for o in ordinary.get(_sass_mem_class(m), ()) if locations_meet(o, src)), default=-1)
        if best > rival:
            out[m.instr.index] = tuple(k for a, k in mine if a == best)
    return out


def _lcs_match(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int]]:
    """Pairs ``(i, j)`` of a longest common subsequence of two token sequences."""
    n, m = len(a), len(b)
    if not n or not m:
        return []
    dp = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        ai, row, nxt = a[i], dp[i], dp[i + 1]
        for j in range(m - 1, -1, -1):
            row[j] = nxt[j + 1] + 1 if ai == b[j] else max(nxt[j], row[j + 1])
    out, i, j = [], 0, 0
    while i < n and j < m:
        if a[i] == b[j] and dp[i][j] == dp[i + 1][j + 1] + 1:
            out.append((i, j))
            i += 1
            j += 1
        elif dp[i + 1][j] >= dp[i][j + 1]:
            i += 1
        else:
            j += 1
    return out


@dataclass(frozen=True)
class _MemMatch:
    mapping: dict  # PtxEvent index (in events) -> SassMemOp
    merged: tuple  # (tuple of event indices, SassMemOp)
    notes: tuple


def _same_address(a: PtxMemOp, b: PtxMemOp, instrs: Sequence[PtxInstr]) -> bool:
    if a.address != b.address or not a.root or a.width != b.width:
        return False
    if a.root.startswith("%"):
        lo, hi = sorted((a.instr.index, b.instr.index))
        for ins in instrs[lo + 1:hi]:
            if a.root in _ptx_dests(ins):
                return False
    return True


def _order_consistent(pairs: Sequence[tuple[PtxMemOp, SassMemOp]], known: Mapping[str, int] = _NO_SHIFTS) -> bool:
    """True when, for every SASS base register, SASS offset - PTX offset is one constant (the one ``known``
    gives, when it gives one: :mod:`fuzzgpu.sass.shared_layout`): the mapping agrees with the addresses
    (ptxas may rebase a pointer, ``[R4.64]`` for ``[%rd1+4]``)."""
    delta: dict[str, int] = dict(known)
    for pm, sm in pairs:
        d = pm.offset - sm.offset
        if delta.setdefault(sm.base, d) != d:
            return False
    return True


def _base_deltas(ptx_offsets: set[int], sass: Sequence[SassMemOp], known: Mapping[str, int] = _NO_SHIFTS) -> dict[str, int] | None:
    """For each SASS base register, the one shift that maps all its offsets onto PTX offsets; None
    when some base has no such shift or more than one (ambiguous).  A base whose shift the shared
    window's layout proves (``known``, :mod:`fuzzgpu.sass.shared_layout`) has that one, when it maps
    all its offsets onto PTX offsets (else None, as for a base with none)."""
    by_base: dict[str, list[SassMemOp]] = {}
    for m in sass:
        by_base.setdefault(m.base, []).append(m)
    out = {}
    for base, ops in by_base.items():
        # the shifts d with offset + d a PTX offset for every operation of the base: the
        # intersection of each distinct offset's shifts (not every shift of any offset tried
        # against every operation: that is cubic in a large class)
        common: set[int] | None = None
        for off in dict.fromkeys(m.offset for m in ops):
            shifts = {po - off for po in ptx_offsets}
            common = shifts if common is None else common & shifts
            if not common:
                break
        feasible = sorted(common or ())
        if base in known:
            feasible = [known[base]] if known[base] in feasible else []
        elif len(feasible) > 1 and 0 in feasible:
            feasible = [0]  # ptxas addresses from the root pointer itself unless it had to rebase
        if len(feasible) != 1:
            return None
        out[base] = feasible[0]
    return out


def _match_class(cls: str, evs: list[tuple[int, PtxEvent]], sass: list[SassMemOp], instrs: Sequence[PtxInstr],
                 all_mems: Sequence[PtxMemOp] = (), known: Mapping[str, int] = _NO_SHIFTS) -> tuple[dict, list, list, set[int]]:
    """Map the PTX events of one memory class to SASS operations of that class.

    1. Same count and the order-wise pairing agrees with the addresses: take it.
    2. Otherwise, when the offsets identify the operations (one consistent shift per SASS base
       register), map by offset, independent of order: reorders within the class, merges of
       same-address loads, loads combined into a wider access and dead loads are all recognised
       (split by source line where offsets alone mix two address roots, :func:`_by_source`; a
       load left over that a wider SASS load holds is paired with it, :func:`_map_widened`).
    3. Otherwise, same count: by order (a note says so).  Else nothing is mapped.

    Also returns the PTX loads accounted for by one of several wider SASS loads (not paired)."""
    mapping: dict[int, SassMemOp] = {}
    merged: list = []
    notes: list[str] = []
    shared: set[int] = set()
    mems = [e.mem for _, e in evs]
    if len(sass) == len(evs) and _order_consistent(list(zip(mems, sass)), known):  # type: ignore[arg-type]
        for (k, _), m in zip(evs, sass):
            mapping[k] = m
        return mapping, merged, notes, shared
    ptx_offsets = {m.offset for m in mems}  # type: ignore[union-attr]
    deltas = _base_deltas(ptx_offsets, sass, known) if sass else None
    if deltas is not None:
        voff = {id(m): m.offset + deltas[m.base] for m in sass}
        by_off: dict[int, list[tuple[int, PtxEvent]]] = {}
        for k, e in evs:
            by_off.setdefault(e.mem.offset, []).append((k, e))  # type: ignore[union-attr]
        for off, group in by_off.items():
            width = max(e.mem.width for _, e in group)  # type: ignore[union-attr]
            exact = [m for m in sass if voff[id(m)] == off]
            # a wider SASS access that covers this offset (two adjacent loads combined into LDS.64)
            cover = [w for w in sass if voff[id(w)] < off and off + width // 8 <= voff[id(w)] + w.width // 8]
            for sub, sub_exact, sub_cover in _by_source(group, exact, cover):
                _map_offset_group(cls, off, sub, sub_exact, sub_cover, instrs, all_mems, mapping, merged, notes)
        _map_widened(evs, sass, voff, mapping, notes, shared)
        return mapping, merged, notes, shared
    if len(sass) == len(evs):
        for (k, _), m in zip(evs, sass):
            mapping[k] = m
        notes.append(f"{cls}: mapped by order (the addresses do not identify the operations)")
        return mapping, merged, notes, shared
    if len(sass) < len(evs):
        # collapse same-address loads (no store of that address in between), then map in order
        groups: list[list[tuple[int, PtxEvent]]] = []
        for k, e in evs:
            for g in groups:
                if e.mem.kind == "load" and g[0][1].mem.kind == "load" and _same_address(g[0][1].mem, e.mem, instrs) and not _forwarding_store(e.mem, all_mems, instrs):  # type: ignore[union-attr,arg-type]
                    g.append((k, e))
                    break
            else:
                groups.append([(k, e)])
        groups.sort(key=lambda g: g[0][0])
        if len(groups) == len(sass):
            for g, m in zip(groups, sass):
                for k, _ in g:
                    mapping[k] = m
                if len(g) > 1:
                    merged.append((tuple(k for k, _ in g), m))
            return mapping, merged, notes, shared
    notes.append(f"{len(evs)} PTX {cls} operations but {len(sass)} in SASS: not mapped")
    return mapping, merged, notes, shared


_Group = list[tuple[int, PtxEvent]]


def _line(src: tuple[tuple[str, int], ...]) -> tuple[tuple[str, int], ...]:
    """The innermost source frame of an instruction (the SASS line table may carry fewer of the
    inlining frames than the PTX one)."""
    return src[:1]


def _by_source(group: _Group, exact: list[SassMemOp], cover: list[SassMemOp]
               ) -> list[tuple[_Group, list[SassMemOp], list[SassMemOp]]]:
    """The PTX operations of one offset with their SASS candidates (of that offset, and wider ones
    covering it), split by source line (:func:`_line`) when that tells them apart: when every PTX
    operation and every candidate has a source line (``-lineinfo``), the lines are not all one,
    and each PTX line has a candidate of its own.  Offsets alone cannot tell two address roots
    apart (CUTLASS example 88 loads ``[%r573+65536]`` at one line and ``[%r915+65536]`` at the next
    but five, and ptxas addresses both as ``[Rn+0x10000]``); otherwise the one group, as before."""
    whole = [(group, exact, cover)]
    cands = exact + cover
    if not cands or not all(e.instr.src for _, e in group) or not all(m.instr.src for m in cands):
        return whole
    lines = list(dict.fromkeys(_line(e.instr.src) for _, e in group))
    cand_lines = {_line(m.instr.src) for m in cands}
    if len(set(lines) | cand_lines) < 2 or not all(s in cand_lines for s in lines):
        return whole
    return [([(k, e) for k, e in group if _line(e.instr.src) == s], [m for m in exact if _line(m.instr.src) == s],
             [m for m in cover if _line(m.instr.src) == s]) for s in lines]


def _orders_between(instrs: Sequence[PtxInstr], a: int, b: int) -> bool:
    """Whether a PTX statement between instruction indices ``a`` and ``b`` (in the listing) is a synchronisation point."""
    lo, hi = sorted((a, b))
    return any(sync_of(ins) is not None for ins in instrs[lo + 1:hi])


def _map_offset_group(cls: str, off: int, group: _Group, exact: list[SassMemOp], cover: list[SassMemOp],
                      instrs: Sequence[PtxInstr], all_mems: Sequence[PtxMemOp], mapping: dict[int, SassMemOp],
                      merged: list, notes: list[str]) -> None:
    """Map the PTX operations of one offset (``group``) to the SASS ones of that offset (``exact``)
    or wider ones covering it (``cover``), adding to ``mapping``, ``merged`` and ``notes``."""
    ss = exact if len(exact) == len(group) else sorted(exact + cover, key=lambda m: m.instr.index)
    if len(ss) == len(group):
        for (k, _), m in zip(group, ss):
            mapping[k] = m
        return
    if not ss:
        for _, e in group:
            notes.append(f"no SASS {cls} for PTX line {e.instr.line} `{e.instr.text}` (deleted: its result is unused?)")
        return
    if len(ss) > len(group):
        notes.append(f"{len(group)} PTX {cls} at offset {off:#x} but {len(ss)} in SASS (split?): not mapped")
        return
    # fewer SASS than PTX: loads whose value ptxas forwarded from a store of this thread, or
    # loads merged with an earlier load of the same address
    forwarded = [(k, e) for k, e in group if e.mem.kind == "load" and _forwarding_store(e.mem, all_mems, instrs) is not None]  # type: ignore[union-attr,arg-type]
    rest = [(k, e) for k, e in group if (k, e) not in forwarded]
    if forwarded and len(rest) == len(ss):
        for (k, _), m in zip(rest, ss):
            mapping[k] = m
        for k, e in forwarded:
            st_op = _forwarding_store(e.mem, all_mems, instrs)  # type: ignore[arg-type]
            notes.append(f"PTX line {e.instr.line} `{e.instr.text}` has no SASS load: its value is forwarded from the store at PTX line {st_op.instr.line}")  # type: ignore[union-attr]
        return
    if len(ss) == 1 and len(group) > 1:
        # the line table gives the SASS load to one call site: an inlined helper's copy at an earlier call site, with a
        # synchronisation point between, would have sunk below it into the later copy's load -- rather it is another
        # load, whatever the innermost line they share (NCCL's prims_ll.h at three call sites, bench/results/sass/
        # hostile5-2026-12-06/: two loads "merged" across barriers into the third copy's LDS.128, each merged in its
        # own copy).  A later copy read by an earlier call site's load (FlashMLA's two __ldg at lines 1088 and 1089,
        # TMA copies between), or copies with no such point between (CUB's radix sort: 29 in ggml's argsort.cu), merge.
        own = [(k, e) for k, e in group if not call_sites_differ(e.instr.src, ss[0].instr.src)]
        first_own = min((e.instr.index for _, e in own), default=-1)
        other = [(k, e) for k, e in group if (k, e) not in own and own and e.instr.index < first_own
                 and _orders_between(instrs, e.instr.index, first_own)]
        if other:
            for _, e in other:
                notes.append(f"PTX line {e.instr.line} `{e.instr.text}`: the SASS {cls} at offset {off:#x} is a later call "
                             "site's, with a synchronisation point between: not mapped")
            _map_offset_group(cls, off, [g for g in group if g not in other], exact, cover, instrs, all_mems, mapping,
                              merged, notes)
            return
    gm = [e.mem for _, e in group]
    if len(ss) == 1 and all(m.kind == "load" for m in gm) and all(_same_address(gm[0], m, instrs) for m in gm[1:]) and not any(  # type: ignore[union-attr,arg-type]
            _forwarding_store(m, all_mems, instrs) for m in gm[1:]):  # type: ignore[arg-type]
        for k, _ in group:
            mapping[k] = ss[0]
        merged.append((tuple(k for k, _ in group), ss[0]))
        return
    notes.append(f"{len(group)} PTX {cls} at offset {off:#x} but {len(ss)} in SASS: not mapped")


def _widened_candidates(e: PtxEvent, sass: Sequence[SassMemOp], voff: dict[int, int],
                        mapping: dict[int, SassMemOp], evs: _Group) -> list[SassMemOp]:
    """The SASS loads wider than the PTX load ``e`` that cover its bytes (``voff``: each SASS
    operation's offset in PTX terms) and are of its source line -- or, where the PTX load has no
    source line, that are paired with another PTX load of the same address root (the other part
    of the combined access)."""
    mem = e.mem
    assert mem is not None
    size = max(mem.width // 8, 1)
    wide = [w for w in sass if w.width > mem.width and w.kind == "load"
            and voff[id(w)] <= mem.offset and mem.offset + size <= voff[id(w)] + w.width // 8]
    if e.instr.src:  # its line, and the call sites it was inlined at as far as both name them: a helper inlined at
        # three call sites with barriers between is three copies (NCCL's prims_ll.h, bench/results/sass/hostile5-2026-12-06/)
        return [w for w in wide if _line(w.instr.src) == _line(e.instr.src) and not call_sites_differ(e.instr.src, w.instr.src)]
    partners = {id(mapping[k]) for k, o in evs if k in mapping and o.mem is not None and o.mem.root == mem.root and mem.root}
    return [w for w in wide if id(w) in partners]


def _map_widened(evs: _Group, sass: Sequence[SassMemOp], voff: dict[int, int], mapping: dict[int, SassMemOp],
                 notes: list[str], shared: set[int]) -> None:
    """Pair each PTX load left unpaired with the wider SASS load that holds it: ptxas combines
    adjacent loads into one (``ld.shared.f32 [r+65536]`` and ``[r+65540]`` into one
    ``LDS.64 [R11+0x10000]``, both halves used), also when the PTX addresses them through two
    registers or when two PTX paths of one source line became one SASS path.  That is a widening,
    not a deletion.  One such SASS load: paired (its order is checked as that load's); several:
    ``shared`` (accounted for, its position not known: not checked, never "deleted")."""
    for k, e in evs:
        if k in mapping or e.mem is None or e.mem.kind != "load":
            continue
        cands = _widened_candidates(e, sass, voff, mapping, evs)
        if len(cands) == 1:
            mapping[k] = cands[0]
            notes.append(f"PTX line {e.instr.line} `{e.instr.text}` is part of the wider "
                         f"{cands[0].instr.full_opcode}@{cands[0].instr.offset:04x} (loads combined)")
        elif cands:
            shared.add(k)


def _forwarding_store(load: PtxMemOp, all_mems: Sequence[PtxMemOp], instrs: Sequence[PtxInstr]) -> PtxMemOp | None:
    """The store of this thread whose value ptxas may forward to ``load``: the nearest earlier access
    to the same address, when that access is a store."""
    prev = None
    for m in all_mems:
        if m.instr.index >= load.instr.index:
            break
        if m.address == load.address and m.root and m.space == load.space:
            prev = m
    if prev is not None and prev.kind in ("store", "atomic", "reduction") and _same_address_store(prev, load, instrs):
        return prev
    return None


def _same_address_store(st_op: PtxMemOp, load: PtxMemOp, instrs: Sequence[PtxInstr]) -> bool:
    if st_op.root.startswith("%"):
        for ins in instrs[st_op.instr.index + 1:load.instr.index]:
            if st_op.root in _ptx_dests(ins):
                return False
    return True


def _map_memory(events: Sequence[PtxEvent], sass_mem: Sequence[SassMemOp], instrs: Sequence[PtxInstr],
                skip: frozenset[int] = frozenset()) -> tuple[dict, list, list, set[int]]:
    """PTX event index -> SASS memory operation, the merged groups, notes, and the PTX loads that one
    of several wider SASS loads holds (:func:`_map_widened`): first per class (family + strength),
    then what is left per family (ptxas encodes the cache operators ``ld.global.cg/.cv/.ca`` as
    ``.STRONG.GPU/.SYS/.SM``).  The events ``skip`` (expansions whose SASS was told by its lines,
    :func:`claim_expansions`) are not mapped.  The PTX offsets of the shared variables the SASS places in
    their window are moved to their places first (:mod:`fuzzgpu.sass.shared_layout`; for the matching only)."""
    layout = shared_layout(events, sass_mem, skip, _sass_mem_class)
    events = rebased(events, layout)
    all_mems = [e.mem for e in events if e.mem is not None]
    by_cls_ptx: dict[str, list[tuple[int, PtxEvent]]] = {}
    for k, e in enumerate(events):
        if e.mem_class and k not in skip:
            by_cls_ptx.setdefault(e.mem_class, []).append((k, e))
    by_cls_sass: dict[str, list[SassMemOp]] = {}
    for m in sass_mem:
        by_cls_sass.setdefault(_sass_mem_class(m), []).append(m)
    mem_pos: dict[int, SassMemOp] = {}
    merges: list = []
    notes: list[str] = list(layout.notes)
    shared: set[int] = set()

    def take(cls: str, evs: list, ss: list) -> None:
        mp, mg, nt, sh = _match_class(cls, evs, ss, instrs, all_mems, layout.bases)
        notes.extend(n for n in nt if "forwarded" in n or "by order" in n or "loads combined" in n)
        mem_pos.update(mp)
        merges.extend(mg)
        shared.update(sh)

    for cls, evs in by_cls_ptx.items():
        take(cls, evs, by_cls_sass.get(cls, []))
    used = {id(m) for m in mem_pos.values()}
    left_ptx: dict[str, list[tuple[int, PtxEvent]]] = {}
    for cls, evs in by_cls_ptx.items():
        for k, e in evs:
            if k not in mem_pos:
                left_ptx.setdefault(cls.split(".")[0], []).append((k, e))
    left_sass: dict[str, list[SassMemOp]] = {}
    for m in sass_mem:
        if id(m) not in used:
            left_sass.setdefault(_sass_mem_class(m).split(".")[0], []).append(m)
    for fam, evs in left_ptx.items():
        if fam in left_sass:
            take(fam, evs, left_sass[fam])
    _map_combined_stores(events, mem_pos, notes)
    return mem_pos, merges, notes, shared - set(mem_pos)


def _map_combined_stores(events: Sequence[PtxEvent], mem_pos: dict[int, SassMemOp], notes: list[str]) -> None:
    """Pair each PTX store left unpaired with the wider SASS store it was combined into: ptxas writes adjacent
    stores of one address root as one, also from other source lines.  The wider store is the one SASS store of
    the PTX store's family paired with other stores of the same root whose bytes, with this one's, fit in it;
    its order is then checked as that store's.  Only stores of one ``.sem`` and scope are paired so: ptxas also
    combines weak stores with a ``.release`` one after the release's ``MEMBAR`` (four ``multimem.st.global.u32``
    at ``[%rd1+16..28]``, the last ``.release.gpu``, as one ``STG.E.128.STRONG.GPU``), and whether one wide
    store keeps the release's order for the others (a vector access is not one access in the PTX memory model)
    is not this checker's to say: such a store is left unpaired, not checked (a note says with what)."""
    stores = {k: e.mem for k, e in enumerate(events) if e.mem is not None and e.mem.kind == "store" and e.mem.root}
    # each SASS store paired with stores, and those stores (kept up to date below): a scan of every store for every
    # candidate of every unpaired store was cubic -- 95% of 225 CPU-s on ggml's argsort.cu (hostile5-2026-12-06)
    wides: dict[int, SassMemOp] = {}
    parts_of: dict[int, list[PtxMemOp]] = {}
    for j, m in stores.items():
        if j in mem_pos:
            wides.setdefault(id(mem_pos[j]), mem_pos[j])
            parts_of.setdefault(id(mem_pos[j]), []).append(m)
    for k, mem in stores.items():
        if k in mem_pos:
            continue
        family = (events[k].mem_class or "").split(".")[0]
        cands = []
        for wid, w in wides.items():
            size = w.width // 8
            parts = parts_of[wid]
            if w.kind != "store" or w.width <= mem.width or sass_family(w) != family or any(q.root != mem.root for q in parts):
                continue
            lo = min([q.offset for q in parts] + [mem.offset])
            hi = max([q.offset + max(q.width // 8, 1) for q in parts] + [mem.offset + max(mem.width // 8, 1)])
            if hi - lo <= size:
                cands.append((w, all((q.sem, q.scope) == (mem.sem, mem.scope) for q in parts)))
        if len(cands) != 1:
            continue
        w, alike = cands[0]
        where = f"PTX line {events[k].instr.line} `{events[k].instr.text}` is part of the wider {w.instr.full_opcode}@{w.instr.offset:04x}"
        if alike:
            mem_pos[k] = w
            parts_of[id(w)].append(mem)
            notes.append(where + " (stores combined)")
        else:
            notes.append(where + ", combined with a store of another .sem or scope: not paired, its order not checked")


def _map_syncs(events: Sequence[PtxEvent], sass: SassFunction, mem_pos: dict,
               skip: frozenset[int] = frozenset()) -> tuple[dict, list[str], list[str]]:
    """PTX event index -> (first, last) SASS instruction of that synchronisation point.  Tokens are
    matched by a longest common subsequence; an acquire/release access includes its own SASS access.
    The SASS instructions ``skip`` (indices: a wait's retry checks, no PTX point of their own) are
    not tokens.  Also returns notes and what is not checked: a point that orders memory (a release or an
    acquire) but was not found in the SASS or emits none."""
    notes: list[str] = []
    unchecked: list[str] = []
    ptx_tokens = [(k, c) for k, e in enumerate(events) for c in e.sync_classes]
    sass_tokens = [t for t in sass.syncs if t.token and t.instr.mainline and t.instr.index not in skip]
    pairs = _lcs_match([c for _, c in ptx_tokens], [t.token for t in sass_tokens])  # type: ignore[misc]
    sync_tok: dict[int, list[SassInstr]] = {}
    for i, j in pairs:
        sync_tok.setdefault(ptx_tokens[i][0], []).append(sass_tokens[j].instr)

    def orders(k: int) -> bool:
        sy = events[k].sync
        return sy is not None and (sy.release or sy.acquire)

    for k in sorted({k for k, _ in ptx_tokens} - set(sync_tok)):
        msg = f"synchronisation at PTX line {events[k].instr.line} `{events[k].instr.text}` not found in SASS: not checked"
        (unchecked if orders(k) else notes).append(msg)
    for k, e in enumerate(events):
        if e.sync is not None and not e.sync_classes and (e.mem is None or e.parts):
            bad, msg = unmatched_sync(e.instr, orders(k))
            (unchecked if bad else notes).append(msg)
    intervals: dict[int, tuple[SassInstr, SassInstr]] = {}
    for k, e in enumerate(events):
        if e.sync is None:
            continue
        toks = list(sync_tok.get(k, []))
        if e.mem is not None and k in mem_pos:
            toks.append(mem_pos[k].instr)
        if toks:
            toks.sort(key=lambda t: t.index)
            intervals[k] = (toks[0], toks[-1])
    return intervals, notes, unchecked
