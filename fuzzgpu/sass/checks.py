"""The checks: from the mapping of one function's PTX to its SASS, the findings -- crossings
(mapped and counted), merged loads, deleted loads, deleted delay loops, unguarded mbarrier waits --
and what was not checked (:func:`analyse_function`, :func:`analyse`)."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Sequence

from .matching import _forwarding_store, _map_memory, _map_syncs, _sass_mem_class
from .ptx_parser import PtxEvent, PtxFunction, PtxInstr, PtxLoop, parse_ptx
from .report import (
    CROSSING,
    DELETED,
    FORBIDDEN,
    HAZARD,
    HOISTED,
    LOOP_DELETED,
    MERGED,
    SUNK,
    UNGUARDED_WAIT,
    Finding,
    FunctionReport,
    Report,
    short_name,
)
from .rules import RULE_LOOP, RULE_UNGUARDED_WAIT, judge_crossing, judge_deleted, judge_merge
from .sass_parser import _SASS_MEM, SassFunction, SassInstr, SassMemOp, parse_sass


def _finding(check, verdict, direction, arch, fn, op_ptx: PtxInstr | None, op_sass: SassInstr | None,
             sync_ptx: PtxInstr | None, sync_sass: SassInstr | None, reason, source) -> Finding:
    return Finding(
        check=check, verdict=verdict, direction=direction, arch=arch, function=fn,
        op_ptx=op_ptx.text if op_ptx else "", op_ptx_line=op_ptx.line if op_ptx else 0,
        op_sass=op_sass.text if op_sass else "", op_sass_line=op_sass.line if op_sass else 0,
        op_sass_offset=op_sass.offset if op_sass else -1,
        sync_ptx=sync_ptx.text if sync_ptx else "", sync_ptx_line=sync_ptx.line if sync_ptx else 0,
        sync_sass=sync_sass.text if sync_sass else "", sync_sass_line=sync_sass.line if sync_sass else 0,
        sync_sass_offset=sync_sass.offset if sync_sass else -1,
        reason=reason, source=source,
    )


@dataclass(frozen=True)
class _Where:
    arch: str
    function: str
    source: str

    def finding(self, check, verdict, direction, op_ptx, op_sass, sync_ptx, sync_sass, reason) -> Finding:
        return _finding(check, verdict, direction, self.arch, self.function, op_ptx, op_sass, sync_ptx, sync_sass, reason, self.source)


def _deleted(events: Sequence[PtxEvent], sass_mem: Sequence[SassMemOp], mem_pos: dict, instrs: Sequence[PtxInstr],
             where: _Where, elsewhere: Sequence[SassMemOp] = ()) -> tuple[list[Finding], list[str], list[str], set[int]]:
    """Unmapped PTX memory operations: deleted (no SASS operation of the family left over: a
    finding), forwarded from a store (a note), left to :func:`_counted_crossings` (SASS of their
    class left over), or not checked.  Returns the findings, notes, what is not checked, and the
    events that have no SASS by design (deleted, forwarded)."""
    findings: list[Finding] = []
    notes: list[str] = []
    unchecked: list[str] = []
    skip: set[int] = set()
    all_mems = [e.mem for e in events if e.mem is not None]
    used = {id(m) for m in mem_pos.values()}
    left_classes = {_sass_mem_class(m) for m in sass_mem if id(m) not in used}
    # a family with SASS out of line (after the first EXIT) is not deleted, only not checked
    families_left = {c.split(".")[0] for c in left_classes} | {_sass_mem_class(m).split(".")[0] for m in elsewhere}
    for k, e in enumerate(events):
        if e.mem is None or k in mem_pos:
            continue
        if _forwarding_store(e.mem, all_mems, instrs) is not None:
            skip.add(k)
            continue
        if e.mem_class and e.mem_class.split(".")[0] not in families_left:
            verdict, reason = judge_deleted(e.mem)
            findings.append(where.finding(DELETED, verdict, "", e.instr, None, None, None, reason))
            skip.add(k)
        elif e.mem_class not in left_classes:
            unchecked.append(f"PTX line {e.instr.line} `{e.instr.text}`: no SASS {e.mem_class} mapped or left over "
                             "(encoded in another class, or split)")
    extra = [m for m in sass_mem if id(m) not in used]
    if extra:
        notes.append(f"{len(extra)} SASS memory operation(s) not mapped one-to-one (counted instead): "
                     + ", ".join(f"{m.instr.full_opcode}@{m.instr.offset:04x}" for m in extra[:6]) + (" ..." if len(extra) > 6 else ""))
    return findings, notes, unchecked, skip


def _crossings(events: Sequence[PtxEvent], mem_pos: dict, intervals: dict, merges: list, where: _Where) -> list[Finding]:
    """Every mapped memory operation against every mapped synchronisation point: before it in PTX
    means before its first SASS instruction, after it means after its last.  A load merged into an
    earlier one is judged by the merge check instead."""
    findings = []
    merged_later = {k for ks, _ in merges for k in sorted(ks)[1:]}
    for k, e in enumerate(events):
        if e.mem is None or k not in mem_pos or k in merged_later:
            continue
        p = mem_pos[k].instr
        for s, (first, last) in intervals.items():
            sync = events[s].sync
            if s == k or sync is None:
                continue
            if k < s and p.index > first.index:
                direction, anchor = SUNK, first
            elif k > s and p.index < last.index:
                direction, anchor = HOISTED, last
            else:
                continue
            if events[s].mem is not None and s in mem_pos and mem_pos[s].instr.index == p.index:
                continue  # one SASS instruction for both
            verdict, reason = judge_crossing(e.mem, sync, direction)
            findings.append(where.finding(CROSSING, verdict, direction, e.instr, p, sync.instr, anchor, reason))
    return findings


BEFORE, AFTER, BOTH = "before", "after", "both"
_MANY = 1 << 30  # a PTX operation in a loop may stand for any number of SASS copies (unrolling)


def _loops_of(index: int, loops: Sequence[PtxLoop]) -> set[int]:
    return {i for i, lp in enumerate(loops) if lp.head <= index <= lp.tail}


def _side(k: int, s: int, events: Sequence[PtxEvent], loops: Sequence[PtxLoop]) -> str:
    """Where PTX event ``k`` executes relative to synchronisation point ``s``: before, after, or both
    (one loop holds both, so a later iteration of ``k`` follows ``s``, an earlier one precedes it)."""
    if k == s or _loops_of(events[k].instr.index, loops) & _loops_of(events[s].instr.index, loops):
        return BOTH
    return BEFORE if k < s else AFTER


@dataclass(frozen=True)
class _Counted:
    findings: tuple[Finding, ...]
    notes: tuple[str, ...]
    unchecked: tuple[str, ...]


def _counted_crossings(events: Sequence[PtxEvent], loops: Sequence[PtxLoop], sass_mem: Sequence[SassMemOp],
                       mem_pos: dict, intervals: dict, skip: set[int], where: _Where) -> _Counted:
    """Crossings that need no one-to-one mapping: the SASS memory operations the mapping left over,
    counted on each side of every mapped synchronisation point, per class (family and strength).

    A leftover SASS operation of class C on one side of a point must stand for a PTX operation of
    class C on that side.  Each PTX operation the mapping left unpaired stands for one SASS
    operation, or for any number of them when it sits in a loop (unrolling); a mapped one in a loop
    stands for its extra copies.  When a side holds more leftover SASS operations than its PTX
    operations can stand for, the rest came from the other side: a crossing, reported whichever
    PTX operation it was (FlashMLA before 01a2772 with its loop of ``__ldg``: the metadata's
    ``LDG.E.128.CONSTANT`` above ``ACQBULK``).  The verdict is forbidden only when it is forbidden
    for every PTX operation of that class on the other side.  When both sides have PTX operations
    that could stand for a leftover, which one it is cannot be told: the function is not fully
    checked.  ``skip``: PTX events with no SASS by design (forwarded loads, deleted loads)."""
    used = {id(m) for m in mem_pos.values()}
    left: dict[str, list[SassMemOp]] = {}
    for m in sass_mem:
        if id(m) not in used:
            left.setdefault(_sass_mem_class(m), []).append(m)
    findings: list[Finding] = []
    notes: list[str] = []
    unchecked: list[str] = []
    for cls, ops in left.items():
        cands = [k for k, e in enumerate(events)
                 if e.mem is not None and e.mem_class == cls and k not in skip
                 and (k not in mem_pos or _loops_of(e.instr.index, loops))]
        if not cands:
            if all(m.space == "local" for m in ops):
                notes.append(f"{len(ops)} SASS {cls} with no PTX counterpart: spills (thread-private)")
            else:
                unchecked.append(f"{len(ops)} SASS {cls} operation(s) with no PTX {cls} to account for them: "
                                 + ", ".join(f"{m.instr.full_opcode}@{m.instr.offset:04x}" for m in ops[:6])
                                 + (" ..." if len(ops) > 6 else ""))
            continue
        unpaired = [k for k in cands if k not in mem_pos and not _loops_of(events[k].instr.index, loops)]
        if len(unpaired) > len(ops):
            unchecked.append(f"{len(unpaired)} PTX {cls} operation(s) not mapped but only {len(ops)} SASS {cls} left: "
                             "which were deleted or merged is not known")
        for s, (first, last) in intervals.items():
            sync = events[s].sync
            if sync is None:
                continue
            side = {k: _side(k, s, events, loops) for k in cands}
            cap = {BEFORE: 0, AFTER: 0}
            for k, sd in side.items():
                n = _MANY if (sd == BOTH or _loops_of(events[k].instr.index, loops)) else 1
                for where_ in ((BEFORE, AFTER) if sd == BOTH else (sd,)):
                    cap[where_] += n
            only = {BEFORE: [k for k in cands if side[k] == BEFORE], AFTER: [k for k in cands if side[k] == AFTER]}
            before = [m for m in ops if m.instr.index < first.index]
            after = [m for m in ops if m.instr.index > last.index]
            inside = [m for m in ops if first.index <= m.instr.index <= last.index]
            # as for mapped crossings: hoisted means above the point's last instruction, sunk below its first
            groups = [(before, BEFORE, AFTER, HOISTED, last), (after, AFTER, BEFORE, SUNK, first)]
            for here, this_side, other_side, direction, anchor in groups:
                if not here:
                    continue
                if len(here) > cap[this_side]:
                    excess = len(here) - cap[this_side]
                    if not only[other_side]:
                        unchecked.append(f"{excess} SASS {cls} {this_side} `{sync.instr.text}` with no PTX {cls} to account for them")
                        continue
                    chosen = sorted(here, key=lambda m: m.instr.index)
                    chosen = chosen[-excess:] if this_side == BEFORE else chosen[:excess]
                    findings.extend(_counted_finding(m, only[other_side], cap[this_side], len(here), this_side, direction,
                                                     events, s, anchor, cls, where) for m in chosen)
                elif only[other_side] and cap[this_side]:
                    unchecked.append(f"{len(here)} SASS {cls} {this_side} `{sync.instr.text}`: PTX {cls} on both sides "
                                     "could stand for them, so whether one crossed is not known")
            if inside:
                # the point's own access (atom.acq_rel, ld.acquire, st.release, unmapped) lies inside
                # the point's SASS and stands for one of them; one in a loop with the point, for any
                own = 1 if s in side else 0
                looped = any(sd == BOTH for k, sd in side.items() if k != s)
                surplus = sorted(inside, key=lambda m: m.instr.index)[own:]
                sides = {sd for sd in side.values() if sd != BOTH}
                if not surplus:
                    pass
                elif looped:
                    unchecked.append(f"{len(inside)} SASS {cls} inside the SASS of `{sync.instr.text}`: a PTX {cls} in a loop "
                                     "with it could stand for them, so whether one crossed is not known")
                elif len(sides) == 1:
                    (sd,) = sides
                    direction, anchor = (SUNK, first) if sd == BEFORE else (HOISTED, last)
                    findings.extend(_counted_finding(m, only[sd], 0, len(inside), "inside", direction, events, s, anchor, cls, where)
                                    for m in surplus)
                elif sides:
                    unchecked.append(f"{len(inside)} SASS {cls} inside the SASS of `{sync.instr.text}` with PTX {cls} on both sides")
    return _Counted(tuple(findings), tuple(notes), tuple(dict.fromkeys(unchecked)))


def _counted_finding(m: SassMemOp, cands: Sequence[int], cap: int, n_here: int, this_side: str, direction: str,
                     events: Sequence[PtxEvent], s: int, anchor: SassInstr, cls: str, where: _Where) -> Finding:
    """One crossing established by counting: the verdict is forbidden only when it is for every
    candidate PTX operation; the finding names the candidate of the same width when there is
    exactly one, else the first in program order, and says which it could have been."""
    sync = events[s].sync
    assert sync is not None
    judged = [(k, *judge_crossing(events[k].mem, sync, direction)) for k in cands]  # type: ignore[arg-type]
    if all(v == FORBIDDEN for _, v, _ in judged):
        verdict, reason = FORBIDDEN, judged[0][2]
    else:
        verdict, reason = next((v, r) for _, v, r in judged if v == HAZARD)
    same_width = [k for k in cands if events[k].mem.width == m.width]  # type: ignore[union-attr]
    named = same_width[0] if len(same_width) == 1 else cands[0]
    lines = ", ".join(str(events[k].instr.line) for k in cands[:8]) + (" ..." if len(cands) > 8 else "")
    where_side = "inside the SASS of" if this_side == "inside" else this_side
    evidence = (f"not mapped one-to-one; by count: {n_here} SASS {cls} {where_side} {anchor.full_opcode}@{anchor.offset:04x} "
                f"but PTX {cls} {'' if this_side == 'inside' else this_side + ' '}`{sync.instr.text}` (line {sync.instr.line}) "
                f"stand for {'none' if cap == 0 else cap}; it is one of the PTX {cls} at line(s) {lines}"
                + ("; named by its width" if len(same_width) == 1 and len(cands) > 1 else ""))
    f = where.finding(CROSSING, verdict, direction, events[named].instr, m.instr, sync.instr, anchor, reason)
    return dataclasses.replace(f, evidence=evidence)


_SASS_PRED_REG_RE = re.compile(r"^!?(U?P\d+)$")
#: instructions after which the scan for an unguarded wait stops: a CTA barrier, a new wait.  A
#: MEMBAR does not stop it: it does not consume the phase check's predicate either, and on an H200
#: a load after `try_wait.acquire; fence.sc.cta` (and after `try_wait.relaxed; fence.sc.cta`, the
#: ISA's fence-based acquire pattern) missed the data in 0.1-10% of the instances whose wait
#: returned true (bench/results/campaigns/h200-all-600s.md)
_WAIT_SCAN_STOPS = ("BAR.SYNC", "BAR.RED", "SYNCS.PHASECHK")
#: the SASS of a fence that makes a relaxed wait's later accesses acquire (fence.sc / fence.acq_rel)
_ACQUIRE_FENCES = ("MEMBAR",)


def _pred_writes(ins: SassInstr) -> set[str]:
    """Predicate registers an instruction writes: its leading predicate operands (``ISETP.NE.AND
    P0, PT, ...``, ``SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [...]``); branches write none."""
    if ins.opcode in ("BRA", "JMP", "BRX", "CALL", "RET", "EXIT"):
        return set()
    out = set()
    for o in ins.operands.split(","):
        m = _SASS_PRED_REG_RE.match(o.strip())
        if not m and o.strip() != "PT":
            break
        if m:
            out.add(m.group(1))
    return out


def _guarded_by(ins: SassInstr, pred: str) -> bool:
    return ins.predicate in (f"@{pred}", f"@!{pred}")


_SASS_REG_RE = re.compile(r"\b(U?R\d+|U?P\d+)\b")
_SASS_NO_DEST = {"ST", "STG", "STS", "STL", "RED", "REDG", "BRA", "JMP", "BRX", "EXIT", "BAR", "MEMBAR", "FENCE", "CCTL",
                 "ERRBAR", "CGAERRBAR", "DEPBAR", "ACQBULK", "PREEXIT", "NOP", "WARPSYNC", "BSSY", "BSYNC"}


def _sass_reads(ins: SassInstr) -> set[str]:
    """Registers an instruction reads: its predicate guard and its source operands (for a store
    or a branch every operand; otherwise all but the first)."""
    ops = ins.operands.split(",")
    srcs = ops if ins.opcode in _SASS_NO_DEST else ops[1:]
    regs = {r for o in srcs for r in _SASS_REG_RE.findall(o)}
    if ins.opcode in _SASS_MEM and ins.opcode not in _SASS_NO_DEST:
        regs |= set(_SASS_REG_RE.findall(ops[1] if len(ops) > 1 else ""))
    if ins.predicate:
        regs |= set(_SASS_REG_RE.findall(ins.predicate))
    return regs


def _sass_writes(ins: SassInstr) -> set[str]:
    """Registers an instruction writes: its first operand (a 64/128-bit destination covers the
    following registers too); stores, branches and barriers write none."""
    if ins.opcode in _SASS_NO_DEST or not ins.operands:
        return set()
    first = ins.operands.split(",")[0]
    if "[" in first:
        return set()
    out = set(_SASS_REG_RE.findall(first)) | _pred_writes(ins)
    n = 4 if "128" in ins.mods else (2 if "64" in ins.mods else 1)
    for r in list(out):
        m = re.fullmatch(r"(U?R)(\d+)", r)
        if m:
            out |= {f"{m.group(1)}{int(m.group(2)) + i}" for i in range(1, n)}
    return out


def _unguarded_waits(events: Sequence[PtxEvent], sass: SassFunction, mem_pos: dict, intervals: dict,
                     where: _Where) -> list[Finding]:
    """Memory operations after an acquiring ``mbarrier.try_wait``/``test_wait`` (or a relaxed one and
    a fence) whose predicate no
    branch tests before them (docs/findings.md): ``SYNCS.PHASECHK.TRANS64[.TRYWAIT] P0, [...]``
    then the access, with no ``@P0``/``@!P0 BRA`` between them and the access not predicated on
    ``P0``.  Nothing then makes the access wait for the phase check; on an H200 such a load missed
    the data the completed phase published (corpus/73416467ed043580).  The scan stops at a branch
    on the predicate (guarded from there on), and an access predicated on it or computed from it
    (an address or a value that depends on it) is guarded too; it stops at a CTA barrier
    (``BAR.SYNC``/``RED``), another phase check and ``EXIT`` -- not at a ``MEMBAR``, which does not
    consume the predicate (on an H200 a load after ``try_wait.acquire; fence.sc.cta`` missed the
    data too).  A ``.relaxed`` wait followed by a fence is the fence-based acquire pattern: the
    accesses after the fence are checked.  One finding per wait: the first unguarded access, with
    the others in its evidence."""
    findings: list[Finding] = []
    by_index = {m.instr.index: m for m in sass.mem_ops}
    ptx_of: dict[int, int] = {}
    for k, m in mem_pos.items():
        ptx_of.setdefault(m.instr.index, k)
    for s, (first, _last) in intervals.items():
        sync = events[s].sync
        if sync is None or sync.kind not in ("mbarrier.try_wait", "mbarrier.test_wait"):
            continue
        # an acquiring wait orders the accesses after it; a relaxed one those after a later fence
        # (the fence-based acquire pattern): only those may the hardware not hold back
        acquiring = sync.acquire
        check = first
        if check.full_opcode.split(".")[:2] != ["SYNCS", "PHASECHK"] or not check.mainline:
            continue
        preds = _pred_writes(check)
        if not preds:
            continue
        pred = sorted(preds)[0]
        unguarded: list[tuple[SassMemOp, int | None]] = []
        tainted = {pred}  # registers whose value depends on the phase check
        for ins in sass.instrs[check.index + 1:]:
            if not ins.mainline:
                break
            reads = _sass_reads(ins)
            depends = bool(reads & tainted)
            if ins.opcode in ("BRA", "JMP", "BRX") and depends:
                break
            if ins.opcode == "EXIT" and not ins.predicate:
                break
            if ins.full_opcode.startswith(_WAIT_SCAN_STOPS):
                break
            if ins.full_opcode.startswith(_ACQUIRE_FENCES):
                acquiring = True
            writes = _sass_writes(ins)
            tainted = (tainted | writes) if depends else (tainted - writes)
            m = by_index.get(ins.index)
            k = ptx_of.get(ins.index)
            if m is not None and acquiring and not depends and (k is None or k > s):
                unguarded.append((m, k))
        if not unguarded:
            continue
        # one finding per wait (one root cause): the first unguarded access, the others in the evidence
        m, k = unguarded[0]
        f = where.finding(UNGUARDED_WAIT, FORBIDDEN, "", events[k].instr if k is not None else None, m.instr,
                          sync.instr, check, RULE_UNGUARDED_WAIT.format(pred=pred))
        evidence = [] if k is not None else ["the SASS access is not mapped to a PTX one: it follows the phase check in SASS"]
        if len(unguarded) > 1:
            evidence.append(f"{len(unguarded) - 1} more access(es) before any guard: "
                            + ", ".join(f"{o.instr.full_opcode}@{o.instr.offset:04x}" for o, _ in unguarded[1:7])
                            + (" ..." if len(unguarded) > 7 else ""))
        findings.append(dataclasses.replace(f, evidence="; ".join(evidence)))
    return findings


def _merge_findings(events: Sequence[PtxEvent], merges: list, where: _Where) -> list[Finding]:
    findings = []
    for ks, s_op in merges:
        ks = sorted(ks)
        first = events[ks[0]]
        for k in ks[1:]:
            e = events[k]
            between = [ev.sync for ev in events[ks[0] + 1:k] if ev.sync is not None]
            verdict, reason = judge_merge(first.mem, e.mem, between)  # type: ignore[arg-type]
            findings.append(where.finding(MERGED, verdict, "", e.instr, s_op.instr, first.instr, s_op.instr, reason))
    return findings


def _loop_findings(ptx: PtxFunction, sass: SassFunction, where: _Where) -> list[Finding]:
    """Delay loops of the PTX (clock loops first, then register loops) without a SASS delay loop."""
    ptx_delay = [lp for lp in ptx.loops if lp.delay]
    sass_delay = [lp for lp in sass.loops if lp.delay]
    clock_loops = [lp for lp in ptx_delay if lp.reads_clock]
    other_loops = [lp for lp in ptx_delay if not lp.reads_clock]
    n_clock = sum(1 for lp in sass_delay if lp.reads_clock)
    missing = clock_loops[n_clock:]
    have = max(0, len(sass_delay) - min(n_clock, len(clock_loops)))
    missing += other_loops[have:]
    findings = []
    for lp in missing:
        ins = ptx.instrs[lp.tail]
        head = ptx.instrs[lp.head] if lp.head < len(ptx.instrs) else ins
        what = "a %clock delay loop" if lp.reads_clock else "a register loop"
        findings.append(where.finding(LOOP_DELETED, HAZARD, "", ins, None, head, None,
                                      f"{what} (PTX lines {head.line}-{ins.line}) has no SASS loop: {RULE_LOOP}"))
    return findings


def analyse_function(ptx: PtxFunction, sass: SassFunction, arch: str, source: str = "") -> FunctionReport:
    """Map one function's PTX events to its SASS and report crossings (mapped and counted), merges,
    deleted loads, deleted delay loops and unguarded mbarrier waits, and what was not checked."""
    where = _Where(arch, ptx.name, source)
    events = ptx.events
    sass_mem = [m for m in sass.mem_ops if m.instr.mainline]
    mem_pos, merges, notes = _map_memory(events, sass_mem, ptx.instrs)
    out_of_line = [m for m in sass.mem_ops if not m.instr.mainline and m.instr.predicate != "@!PT"]
    deleted, del_notes, del_unchecked, skip = _deleted(events, sass_mem, mem_pos, ptx.instrs, where, out_of_line)
    intervals, sync_notes, sync_unchecked = _map_syncs(events, sass, mem_pos)
    counted = _counted_crossings(events, ptx.loops, sass_mem, mem_pos, intervals, skip, where)
    ool = ([f"{len(out_of_line)} SASS memory operation(s) out of line (after the first EXIT): "
            + ", ".join(f"{m.instr.full_opcode}@{m.instr.offset:04x}" for m in out_of_line[:6])] if out_of_line else [])
    findings = (_crossings(events, mem_pos, intervals, merges, where) + list(counted.findings)
                + _merge_findings(events, merges, where) + deleted + _loop_findings(ptx, sass, where)
                + _unguarded_waits(events, sass, mem_pos, intervals, where))
    return FunctionReport(
        name=ptx.name,
        short_name=short_name(ptx.name),
        ptx_mem_ops=sum(1 for e in events if e.mem is not None),
        sass_mem_ops=len(sass_mem),
        mapped_mem_ops=len(mem_pos),
        ptx_syncs=sum(1 for e in events if e.sync is not None),
        mapped_syncs=len(intervals),
        findings=tuple(findings),
        notes=tuple(notes + del_notes + sync_notes + list(counted.notes)),
        unchecked=tuple(del_unchecked + sync_unchecked + list(counted.unchecked) + ool),
    )


def analyse(ptx_text: str, sass_text: str, arch: str, source: str = "") -> Report:
    """Pure: compare the PTX of a module with its disassembly."""
    ptx_funcs = {f.name: f for f in parse_ptx(ptx_text)}
    sass_funcs: dict[str, list[SassFunction]] = {}
    for f in parse_sass(sass_text):
        sass_funcs.setdefault(f.name, []).append(f)
    reports = []
    notes: list[str] = []
    unchecked: list[str] = []
    for name, pf in ptx_funcs.items():
        copies = sass_funcs.get(name, [])
        if not copies:
            if pf.entry:
                unchecked.append(f"kernel {name} has no SASS")
            continue  # a device function inlined everywhere
        for sf in copies:  # a device function: one copy in each kernel that calls it
            rep = analyse_function(pf, sf, arch, source)
            if sf.container:
                rep = dataclasses.replace(rep, short_name=f"{rep.short_name} (in {short_name(sf.container)})")
            reports.append(rep)
    return Report(source=source, arch=arch, functions=tuple(reports), notes=tuple(notes), unchecked=tuple(unchecked))
