"""The checks: from the mapping of one function's PTX to its SASS, the findings -- crossings
(mapped and counted), merged loads, deleted loads, deleted delay loops, unguarded mbarrier waits --
and what was not checked (:func:`analyse_function`, :func:`analyse`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from .cfg import Cfg, ptx_cfg, sass_cfg
from .matching import _forwarding_store, _map_memory, _map_syncs, _sass_mem_class, claim_expansions
from .order import cfg_findings, local_registers, private, sass_private, user_src
from .ptx_parser import PtxEvent, PtxFunction, PtxInstr, PtxLoop, _dests_of, _ptx_dests, async_family, parse_ptx
from .ptx_text import read_later
from .report import (
    DELETED,
    FORBIDDEN,
    HAZARD,
    LOOP_DELETED,
    MERGED,
    UNGUARDED_WAIT,
    Finding,
    FunctionReport,
    Report,
    short_name,
)
from .rules import RULE_LOOP, RULE_UNGUARDED_TOKEN, RULE_UNGUARDED_WAIT, judge_deleted, judge_merge, merge_is_finding
from .sass_parser import SassFunction, SassInstr, SassLoop, SassMemOp, parse_sass
from .waits import pred_writes, retry_primary, tested_later, unguarded_accesses, wait_checks


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
             where: _Where, elsewhere: Sequence[SassMemOp] = (), ignore: set[int] = frozenset(),  # type: ignore[assignment]
             shared: set[int] = frozenset()  # type: ignore[assignment]
             ) -> tuple[list[Finding], list[str], list[str], set[int]]:
    """Unmapped PTX memory operations: deleted (no SASS operation of the family left over: a
    finding), forwarded from a store (a note), held by one of several wider SASS loads (``shared``,
    :func:`fuzzgpu.sass.matching._map_widened`: not checked, never deleted), left to the counted
    crossings (SASS of their class left over), or not checked.  Returns the findings, notes, what is
    not checked, and the events that have no SASS by design (deleted, forwarded)."""
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
        if e.mem is None or k in mem_pos or k in ignore:
            continue
        if _forwarding_store(e.mem, all_mems, instrs) is not None:
            skip.add(k)
            continue
        if k in shared:
            # (the wider loads are the source line's; the load may also be one of the line's own width that the
            # addresses did not pair, CUB's reduce: a vectorised and a scalar path of one line)
            unchecked.append(f"PTX line {e.instr.line} `{e.instr.text}`: no SASS load paired with it; it may be part of one "
                             "of several wider SASS loads of its source line (loads combined), which one, if any, not known: "
                             "not checked")
            continue
        if e.mem_class and e.mem_class.split(".")[0] not in families_left and e.mem.kind == "load" and value_read_later(e.instr, instrs):
            # an instruction reads its value (forwarded and merged loads are mapped before): the pairing by address
            # missed its SASS load (FlashInfer: a shared symbol addressed from the window's base, three loads read as
            # one LDS.128) -- or ptxas deleted it with the code that reads it, when that code's result is never used
            # (TransformerEngine's nvfp4 quantize: 128 ld.shared feeding a shfl.sync whose result nothing reads).  The
            # read is one step deep, not a liveness to an observable effect: which of the two is not known
            unchecked.append(f"PTX line {e.instr.line} `{e.instr.text}`: no SASS load paired with it, and an instruction "
                             "reads its value: the addresses did not tell which SASS load it is, or ptxas deleted it with "
                             "code whose result nothing uses: not checked")
        elif e.mem_class and e.mem_class.split(".")[0] not in families_left and e.mem.kind != "load":
            # ptxas deletes a store only when a later store of the address overwrites it first; otherwise the
            # pairing missed it (combined into a wider store of another strength, say): no verdict either way
            unchecked.append(f"PTX line {e.instr.line} `{e.instr.text}`: no SASS {e.mem.kind} paired with it and none of "
                             "its family left over (a later store of the address may overwrite it, or it is part of a "
                             "wider access): not checked")
        elif e.mem_class and e.mem_class.split(".")[0] not in families_left:
            verdict, reason = judge_deleted(e.mem)
            f, n = user_src(e.instr.src)
            findings.append(dataclasses.replace(where.finding(DELETED, verdict, "", e.instr, None, None, None, reason),
                                                src_file=f, src_line=n))
            skip.add(k)
        elif e.mem_class not in left_classes:
            unchecked.append(f"PTX line {e.instr.line} `{e.instr.text}`: no SASS {e.mem_class} mapped or left over "
                             "(encoded in another class, or split)")
    extra = [m for m in sass_mem if id(m) not in used]
    if extra:
        notes.append(f"{len(extra)} SASS memory operation(s) not mapped one-to-one (counted instead): "
                     + ", ".join(f"{m.instr.full_opcode}@{m.instr.offset:04x}" for m in extra[:6]) + (" ..." if len(extra) > 6 else ""))
    return findings, notes, unchecked, skip


def value_read_later(load: PtxInstr, instrs: Sequence[PtxInstr]) -> bool:
    """Whether an instruction after ``load`` reads a register ``load`` writes before it is written again
    (:func:`~fuzzgpu.sass.ptx_text.read_later`; a use only on a path back through a loop is not seen: then
    the load may still be called deleted)."""
    return read_later(set(_ptx_dests(load)), instrs[load.index + 1:], _dests_of)


#: which side of a synchronisation point an operation executes on (kept for callers of the former
#: counting check; the crossings are on the control-flow graph now, :mod:`fuzzgpu.sass.order`)
BEFORE, AFTER, BOTH = "before", "after", "both"

def _unguarded_waits(events: Sequence[PtxEvent], sass: SassFunction, g_sass: Cfg, g_ptx: Cfg, mem_pos: dict, intervals: dict,
                     where: _Where) -> tuple[list[Finding], list[str]]:
    """Memory operations after an acquiring ``mbarrier.try_wait``/``test_wait`` (or a relaxed one and
    a fence) whose predicate nothing tests before them (docs/findings.md): ``SYNCS.PHASECHK.TRANS64[.TRYWAIT]
    P0, [...]``, then an access that some path of the SASS control-flow graph reaches with no
    ``@P0``/``@!P0 BRA`` on it, not predicated on ``P0`` nor computed from it
    (:func:`fuzzgpu.sass.waits.unguarded_accesses`).  Nothing then makes the access wait for the
    phase check; on an H200 such a load missed the data the completed phase published
    (corpus/73416467ed043580).  A ``MEMBAR`` does not guard (on an H200 a load after
    ``try_wait.acquire; fence.sc.cta`` missed the data too); a ``.relaxed`` wait followed by a fence is
    the fence-based acquire pattern: the accesses after the fence are checked.  The phase check of a
    PTX wait is the one with its mbarrier operand where that tells them apart
    (:func:`fuzzgpu.sass.waits.checks_by_operand`), else the one the synchronisation tokens pair with
    it.  An access mapped to a PTX operation before the wait is not its (a later iteration's).  One
    finding per wait: the first unguarded access, with the others in its evidence.  A wait whose phase
    check is not found -- no synchronisation token nor mbarrier operand pairs one with it, or the one paired
    lies off the main line (after another warp role's ``EXIT``) -- is not checked, and says so (the second
    list), so that a function is never "fully checked, clean" with such a wait in it (FlashMLA 9241ae3's sm100
    decode kernel)."""
    findings: list[Finding] = []
    unchecked: list[str] = []
    ptx_of: dict[int, int] = {}
    for k, m in mem_pos.items():
        ptx_of.setdefault(m.instr.index, k)
    checks, why_not = wait_checks(events, sass, g_sass, g_ptx, intervals)
    for s, e in enumerate(events):
        sync = e.sync
        if sync is None or sync.kind not in ("mbarrier.try_wait", "mbarrier.test_wait"):
            continue
        if s not in checks:
            unchecked.append(f"PTX line {e.instr.line} `{e.instr.text}`: no SASS phase check (SYNCS.PHASECHK) is paired "
                             f"with it ({why_not[s]}): whether an access after it is unguarded was not checked")
            continue
        found: list[tuple[SassInstr, str, SassMemOp, int | None]] = []
        for check in checks[s]:
            preds = pred_writes(check)
            if not preds:
                unchecked.append(f"PTX line {e.instr.line} `{e.instr.text}`: its SASS phase check {check.full_opcode}@"
                                 f"{check.offset:04x} writes no predicate: whether an access after it is unguarded was not checked")
                continue
            found += _unguarded_after(sass, g_sass, check, sorted(preds)[0], sync.acquire, ptx_of, s)
        if not found:
            continue
        # one finding per wait (one root cause): the first unguarded access, the others in the evidence.
        # A lone wait (its result never tested) is the deviation GPU runs showed; a result tested
        # later (a token) leaves the accesses before the test to a person's judgement
        found.sort(key=lambda f: (f[0].index, f[2].instr.index))
        check, pred, m, k = found[0]
        token = tested_later(sass, g_sass, check, pred, sync.acquire)
        f = where.finding(UNGUARDED_WAIT, HAZARD if token else FORBIDDEN, "", events[k].instr if k is not None else None, m.instr,
                          sync.instr, check, (RULE_UNGUARDED_TOKEN if token else RULE_UNGUARDED_WAIT).format(pred=pred))
        evidence = [] if k is not None else ["the SASS access is not mapped to a PTX one: it follows the phase check in SASS"]
        if len(found) > 1:
            evidence.append(f"{len(found) - 1} more access(es) before any guard: "
                            + ", ".join(f"{o.instr.full_opcode}@{o.instr.offset:04x}" for _, _, o, _ in found[1:7])
                            + (" ..." if len(found) > 7 else ""))
        findings.append(dataclasses.replace(f, evidence="; ".join(evidence)))
    return findings, unchecked


def _unguarded_after(sass: SassFunction, g_sass: Cfg, check: SassInstr, pred: str, acquire: bool, ptx_of: dict[int, int],
                     s: int) -> list[tuple[SassInstr, str, SassMemOp, int | None]]:
    """The accesses some path from the phase check ``check`` of the PTX wait ``s`` reaches unguarded
    (:func:`fuzzgpu.sass.waits.unguarded_accesses`), with the PTX operation each is paired with: an
    acquiring wait orders the accesses after it, a relaxed one those after a later fence (the fence-based
    acquire pattern).  A later iteration's access (paired with a PTX operation before the wait) is not the
    wait's; a spill or refill of the thread's own local memory (ptxas's STL/LDL) or a constant-bank load is
    nothing the barrier publishes: RULE_LOCAL."""
    out: list[tuple[SassInstr, str, SassMemOp, int | None]] = []
    for m in unguarded_accesses(sass, g_sass, check, pred, acquire):
        k = ptx_of.get(m.instr.index)
        if (k is None or k > s) and not sass_private(m):
            out.append((check, pred, m, k))
    return out


def _async_unchecked(events: Sequence[PtxEvent], mem_pos: dict) -> list[str]:
    """``st.async``/``red.async`` paired with their STAS/REDAS: their order as weak/relaxed accesses
    is checked, their completion is not -- a complete-tx on the peer CTA's mbarrier (PTX ISA: with
    release semantics at cluster scope), which the checker does not follow."""
    return [f"PTX line {e.instr.line} `{e.instr.text}` (SASS {mem_pos[k].instr.full_opcode}@{mem_pos[k].instr.offset:04x}): "
            "asynchronous, completed through the mbarrier's complete-tx, which the SASS checker does not follow: not checked"
            for k, e in enumerate(events) if k in mem_pos and async_family(e.instr) in ("STAS", "REDAS")]


def _merge_findings(events: Sequence[PtxEvent], merges: list, where: _Where, g_ptx: Cfg) -> list[Finding]:
    """Two PTX loads of one address read once in SASS (:func:`~fuzzgpu.sass.rules.judge_merge`); loads on paths
    that exclude each other (no path runs both: an ``if``'s two arms, each with its own SASS load) were never
    one read merged from two, whatever the address mapping paired them with."""
    findings = []
    for ks, s_op in merges:
        ks = sorted(ks)
        first = events[ks[0]]
        for k in ks[1:]:
            e = events[k]
            if not merge_is_finding(first.mem, e.mem):  # type: ignore[arg-type]
                continue
            if not g_ptx.reaches(first.instr.index, e.instr.index):
                continue
            between = [ev.sync for ev in events[ks[0] + 1:k] if ev.sync is not None]
            verdict, reason = judge_merge(first.mem, e.mem, between)  # type: ignore[arg-type]
            findings.append(where.finding(MERGED, verdict, "", e.instr, s_op.instr, first.instr, s_op.instr, reason))
    return findings


def _loop_lines(instrs: Sequence[Any], indices: Iterable[int]) -> frozenset[tuple[str, int]]:
    """The innermost source lines (``src[0]``) of a loop's instructions that carry one."""
    return frozenset(instrs[i].src[0] for i in indices if instrs[i].src)


def _kept_first(ptx_loops: Sequence[PtxLoop], sass_loops: Sequence[SassLoop], ptx: PtxFunction,
                sass: SassFunction) -> list[PtxLoop]:
    """``ptx_loops``, those that a SASS loop shares a source line with first (each SASS loop taken for one),
    then the others: the last ones are those ptxas deleted, when the line tables say (without them, or
    where they do not tell, the listing's order).  Counting alone blamed NCCL's ``unpack.h:165`` loop, still in the SASS, for the
    two-trip loop of ``prims_simple.h:593`` that ptxas unrolled (bench/results/sass/hostile5-2026-12-06/)."""
    free = [_loop_lines(sass.instrs, range(lp.head, lp.tail + 1)) for lp in sass_loops]
    unkept, kept = [], []
    for lp in ptx_loops:
        lines = _loop_lines(ptx.instrs, lp.body)
        k = next((i for i, f in enumerate(free) if lines and f and not lines.isdisjoint(f)), None)
        if k is None:
            unkept.append(lp)
        else:
            kept.append(lp)
            free[k] = frozenset()
    return kept + unkept


def _loop_findings(ptx: PtxFunction, sass: SassFunction, where: _Where) -> list[Finding]:
    """Delay loops of the PTX (clock loops first, then register loops) without a SASS delay loop: as
    many as the SASS has fewer, those whose source lines no SASS loop has (:func:`_kept_first`)."""
    ptx_delay = [lp for lp in ptx.loops if lp.delay]
    sass_delay = [lp for lp in sass.loops if lp.delay]
    clock_loops = [lp for lp in ptx_delay if lp.reads_clock]
    other_loops = [lp for lp in ptx_delay if not lp.reads_clock]
    sass_clock = [lp for lp in sass_delay if lp.reads_clock]
    n_clock = len(sass_clock)
    missing = _kept_first(clock_loops, sass_clock, ptx, sass)[n_clock:] if len(clock_loops) > n_clock else []
    have = max(0, len(sass_delay) - min(n_clock, len(clock_loops)))
    if len(other_loops) > have:
        spare = [lp for lp in sass_delay if not lp.reads_clock] + sass_clock[len(clock_loops):]
        missing += _kept_first(other_loops, spare, ptx, sass)[have:]
    findings = []
    for lp in missing:
        ins = ptx.instrs[lp.tail]
        head = ptx.instrs[lp.head] if lp.head < len(ptx.instrs) else ins
        what = "a %clock delay loop" if lp.reads_clock else "a register loop"
        findings.append(where.finding(LOOP_DELETED, HAZARD, "", ins, None, head, None,
                                      f"{what} (PTX lines {head.line}-{ins.line}) has no SASS loop: {RULE_LOOP}"))
    return findings


def analyse_function(ptx: PtxFunction, sass: SassFunction, arch: str, source: str = "") -> FunctionReport:
    """Map one function's PTX events to its SASS and report crossings (on the control-flow graphs,
    :mod:`fuzzgpu.sass.order`), merges, deleted loads, deleted delay loops and unguarded mbarrier
    waits, and what was not checked."""
    where = _Where(arch, ptx.name, source)
    events = ptx.events
    g_sass = sass_cfg(sass)
    sass_mem = [m for m in sass.mem_ops if g_sass.is_reachable(m.instr.index) and m.instr.predicate != "@!PT"]
    claims = claim_expansions(events, sass_mem)
    expanded = frozenset(k for ks in claims.values() for k in ks)
    mem_pos, merges, notes, shared = _map_memory(events, [m for m in sass_mem if m.instr.index not in claims], ptx.instrs,
                                                 expanded)
    local_regs = local_registers(ptx)
    # (an instruction ptxas expands into several accesses is a store, a copy or an atomic: never deleted as a dead load)
    ignore = {k for k, e in enumerate(events) if e.mem is not None and (private(e, local_regs) or e.parts)}
    notes += _expansion_notes(events, sass_mem, claims, mem_pos)
    unreachable = [m for m in sass.mem_ops if not g_sass.is_reachable(m.instr.index) and m.instr.predicate != "@!PT"]
    deleted, del_notes, del_unchecked, skip = _deleted(events, [m for m in sass_mem if not sass_private(m) and m.instr.index not in claims],
                                                       mem_pos, ptx.instrs, where, unreachable, ignore, shared)
    g_ptx = ptx_cfg(ptx)
    result = cfg_findings(ptx, sass, g_ptx, g_sass, mem_pos, merges, skip | ignore, arch, source, local_regs, claims)
    intervals = _wait_intervals(events, sass, g_sass, result.mem_pos)
    waits, waits_unchecked = _unguarded_waits(events, sass, g_sass, g_ptx, result.mem_pos, intervals, where)
    findings = (list(result.findings) + _merge_findings(events, merges, where, g_ptx) + deleted + _loop_findings(ptx, sass, where)
                + waits)
    return FunctionReport(
        name=ptx.name,
        short_name=short_name(ptx.name),
        ptx_mem_ops=sum(1 for e in events if e.mem is not None),
        sass_mem_ops=len(sass_mem),
        mapped_mem_ops=len(result.mem_pos) + len(expanded - set(result.mem_pos)),
        ptx_syncs=sum(1 for e in events if e.sync is not None),
        mapped_syncs=result.mapped_syncs,
        findings=tuple(findings),
        notes=tuple(notes + del_notes + list(result.notes)),
        unchecked=tuple(del_unchecked + list(result.unchecked) + _async_unchecked(events, result.mem_pos) + waits_unchecked),
    )


def _expansion_notes(events: Sequence[PtxEvent], sass_mem: Sequence[SassMemOp], claims: dict[int, tuple[int, ...]],
                     mem_pos: dict) -> list[str]:
    """One note per PTX instruction ptxas expands into several SASS accesses (:attr:`PtxEvent.parts`):
    the SASS operations its source line gives it, or that none does (without line information they
    are counted with the operations of their class, :func:`fuzzgpu.sass.order.cfg_findings`)."""
    by_event: dict[int, list[SassMemOp]] = {}
    for m in sass_mem:
        for k in claims.get(m.instr.index, ()):
            by_event.setdefault(k, []).append(m)
    notes = []
    for k, e in enumerate(events):
        if not e.parts:
            continue
        ops = by_event.get(k, [])
        if ops:
            notes.append(f"PTX line {e.instr.line} `{e.instr.text}` is ptxas's expansion into "
                         + ", ".join(f"{m.instr.full_opcode}@{m.instr.offset:04x}" for m in ops[:6]) + (" ..." if len(ops) > 6 else "")
                         + " (by its source line; each checked as the access it stands for)")
        elif k not in mem_pos:
            notes.append(f"PTX line {e.instr.line} `{e.instr.text}`: no SASS access told by its source line "
                         "(counted with the SASS operations of its families)")
    return notes


def _wait_intervals(events: Sequence[PtxEvent], sass: SassFunction, g_sass: Cfg, mem_pos: dict) -> dict:
    """The SASS of each PTX ``mbarrier.try_wait``/``test_wait`` (for :func:`_unguarded_waits`): the
    longest common subsequence of the synchronisation tokens (:func:`_map_syncs`) when that is
    cheap, else the waits paired by source line when both sides carry one.  A retry loop's checks
    (:func:`fuzzgpu.sass.waits.retry_primary`) are the first check's, not tokens of their own: counted
    as tokens, the predicated re-check of a ``try_wait`` with a suspend-time hint (``@!P0 SYNCS.PHASECHK``
    after the ``NANOSLEEP``) paired the next PTX wait, another warp role's."""
    retries = frozenset(t.instr.index for t in sass.syncs
                        if t.token == "SYNCS.PHASECHK" and retry_primary(sass, g_sass, t.instr) is not None)
    n_ptx = sum(len(e.sync_classes) for e in events)
    n_sass = sum(1 for t in sass.syncs if t.token and t.instr.index not in retries)
    if n_ptx * n_sass <= 250_000:
        return _map_syncs(events, sass, mem_pos, retries)[0]
    checks = [t.instr for t in sass.syncs if t.token == "SYNCS.PHASECHK" and t.instr.mainline and t.instr.src
              and t.instr.index not in retries]
    out = {}
    for k, e in enumerate(events):
        if e.sync is not None and e.sync.kind in ("mbarrier.try_wait", "mbarrier.test_wait") and e.instr.src:
            same = [c for c in checks if c.src[:1] == e.instr.src[:1]]
            if len(same) == 1:
                out[k] = (same[0], same[0])
    return out


def analyse(ptx_text: str, sass_text: str, arch: str, source: str = "",
            ptx_funcs: Sequence[PtxFunction] | None = None) -> Report:
    """Pure: compare the PTX of a module with its disassembly (``ptx_funcs``: the PTX already
    parsed by :func:`~fuzzgpu.sass.ptx_parser.parse_ptx`, when the caller has it)."""
    by_name = {f.name: f for f in (parse_ptx(ptx_text) if ptx_funcs is None else ptx_funcs)}
    sass_funcs: dict[str, list[SassFunction]] = {}
    for f in parse_sass(sass_text):
        sass_funcs.setdefault(f.name, []).append(f)
    reports = []
    notes: list[str] = []
    unchecked: list[str] = []
    for name, pf in by_name.items():
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
    # SASS the PTX does not define (a cubin paired with another module's PTX): not checked, never "clean"
    # (a kernel's section, or a device function's copy inside one: ``__noinline__`` code is code too)
    unchecked += [f"function {name} has SASS but no PTX to compare with (the PTX does not define it)"
                  for name in sass_funcs if name not in by_name and not is_compiler_routine(name)]
    if not reports and not unchecked:
        unchecked.append("no kernel in the module: nothing was checked")
    return Report(source=source, arch=arch, functions=tuple(reports), notes=tuple(notes), unchecked=tuple(unchecked))


def is_compiler_routine(name: str) -> bool:
    """A routine ptxas adds (the 64-bit division's ``__cuda_sm20_div_u64``, a float division's slow path
    ``__internal_..._slowpath``): SASS with no PTX of its own, the compiler's arithmetic, not the
    module's memory operations."""
    return name.startswith(("__cuda_sm", "__internal_", "$__internal_", "$__cuda_sm"))
