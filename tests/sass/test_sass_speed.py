"""The faster forms of the parsers and of the counting on the control-flow graph against plain
restatements of what they compute (the line-by-line parsers they replaced, a walk over single
instructions), on captured listings, the real-kernel slices and random graphs: the speed-ups of
issue 26 must not change one report (bench/sass_speed.py compares whole reports on real kernels)."""

from __future__ import annotations

import gzip
import heapq
import random
import re
from pathlib import Path

import pytest

from fuzzgpu.sass import parse_sass
from fuzzgpu.sass.cfg import Flow, build_cfg, min_marks
from fuzzgpu.sass.matching import _base_deltas
from fuzzgpu.sass.sides import Sides, sass_sides
from fuzzgpu.sass.ptx_text import source_lines

TESTS = Path(__file__).parents[1]
CAPTURED = TESTS / "kernels" / "captured"
REAL = TESTS / "data" / "real-kernels"


def _texts(suffix: str) -> list[tuple[str, str]]:
    out = [(p.name, p.read_text()) for p in sorted(CAPTURED.glob(f"*{suffix}"))]
    out += [(p.name, gzip.decompress(p.read_bytes()).decode()) for p in sorted(REAL.glob(f"*/*{suffix}.gz"))]
    return out


# ------------------------------------------------------------------ the SASS listing, line by line


_LINE = re.compile(r"^\s*/\*([0-9a-fA-F]{4,})\*/\s+(.*?)\s*;")
_FUNCS = (re.compile(r"^\s*\.text\.([\w$.]+):\s*$"), re.compile(r"^\s*Function\s*:\s*([\w$.]+)\s*$"))
_SUB = re.compile(r"^\$([\w.]+)\$([\w$.]+):\s*$")
_LABEL = re.compile(r"^\s*(\.L_[\w$]+):\s*$")
_FILE = re.compile(r"^\s*//## File ")
_LOC = re.compile(r'"([^"]*)", line (\d+)')


def _sass_by_lines(text: str) -> list[tuple[str, str, dict, list]]:
    """``(name, container, labels, [(line, offset, text, source)])`` per function, one line at a
    time with one pattern per kind of line (the parser before it read the text in one scan)."""
    funcs: list[tuple[str, str, dict, list]] = []
    pending: list[str] = []
    kernel = ""
    src: tuple = ()
    chained = False
    for lineno, raw in enumerate(text.split("\n"), start=1):
        m = _LINE.match(raw)
        if m:
            if funcs:
                funcs[-1][3].append((lineno, int(m.group(1), 16), m.group(2), src))
                chained = False
                for lab in pending:
                    funcs[-1][2][lab] = int(m.group(1), 16)
                pending = []
            continue
        if _FILE.match(raw):
            locs = tuple((f, int(n)) for f, n in _LOC.findall(raw))
            if len(locs) > 1 and chained and src and src[-1] == locs[0]:
                src = src + locs[1:]
            elif locs and (len(locs) > 1 or not chained):
                src, chained = locs, len(locs) > 1
            continue
        sub = _SUB.match(raw)
        if sub and sub.group(1) == kernel:
            funcs.append((sub.group(2), kernel, {}, []))
            pending = []
            continue
        for rx in _FUNCS:
            fm = rx.match(raw)
            if fm:
                if not funcs or funcs[-1][0] != fm.group(1):
                    funcs.append((fm.group(1), "", {}, []))
                kernel = fm.group(1)
                pending = []
                break
        else:
            lm = _LABEL.match(raw)
            if lm:
                pending.append(lm.group(1))
    return funcs


_EDGES = "\n".join((
    "/*0000*/ NOP ;",  # before any function: not read
    ".text.k:",
    "\t//## File \"a.cu\", line 3 inlined at \"b.cu\", line 9",
    "\t//## File \"b.cu\", line 9",
    "        /*0000*/                   @!P0 LDG.E.128.CONSTANT R4, desc[UR10][R6.64] ;   ",
    ".L_x_1:\r",
    "        /*0010*/   \t@P1   BRA `(.L_x_1) ;\r",
    "        /*0020*/ STS [R0], R13",  # no ';': not an instruction line
    "\t//## File \"c.cu\", line 1",
    "  /*0030*/  EXIT ;",
    "$k$_Z3devv:",
    "        /*0040*/ MEMBAR.SC.GPU ; /* a comment; with a ';' */",
    "$other$_Z1fv:",  # a subroutine of another kernel: not read
    "        Function : k2",
    "        /*0000*/                   RET.ABS.NODEC R20 0x0 ;",
    "        /*0000*/ ;",
))


@pytest.mark.parametrize("name, text", [("edges", _EDGES), *_texts(".sass")])
def test_listing_scan_reads_what_the_line_by_line_parser_read(name: str, text: str) -> None:
    want = _sass_by_lines(text)
    got = parse_sass(text)
    assert [(f.name, f.container, dict(f.labels)) for f in got] == [(n, c, lab) for n, c, lab, _ in want]
    for f, (_, _, _, rows) in zip(got, want):
        assert [(i.line, i.offset, i.text, i.src) for i in f.instrs] == [
            (line, off, " ".join(t.split()), src) for line, off, t, src in rows]


def test_repeated_instruction_texts_keep_their_own_instructions() -> None:
    text = "\n".join((".text.a:", "  /*0000*/ LDG.E R2, desc[UR4][R2.64] ;", "  /*0010*/ EXIT ;",
                      ".text.b:", "  /*0000*/ LDG.E R2, desc[UR4][R2.64] ;", "  /*0010*/ LDG.E R2, desc[UR4][R2.64] ;"))
    a, b = parse_sass(text)
    assert [m.instr.index for m in b.mem_ops] == [0, 1] and [m.instr.line for m in b.mem_ops] == [5, 6]
    assert a.mem_ops[0].instr is a.instrs[0] and b.mem_ops[1].instr is b.instrs[1]
    assert a.mem_ops[0].width == b.mem_ops[1].width == 32 and a.mem_ops[0].base == "R2"
    assert b.instrs[1].mainline and not parse_sass(text.replace("LDG.E R2, desc[UR4][R2.64] ;\n  /*0010*/ EXIT",
                                                                "EXIT ;\n  /*0010*/ EXIT"))[0].instrs[1].mainline


# ------------------------------------------------------------------ the PTX .loc lines, line by line


def _source_lines_by_lines(text: str) -> dict[int, tuple]:
    files = {m.group(1): m.group(2) for m in re.finditer(r'^[ \t]*\.file\s+(\d+)\s+"([^"]*)"', text, re.M)}
    if not files:
        return {}
    out: dict[int, tuple] = {}
    cur: tuple = ()
    chain_at: dict = {}
    for n, raw in enumerate(text.split("\n"), start=1):
        m = re.match(r"^[ \t]*\.loc\s+(\d+)\s+(\d+)\s+(\d+)(.*)$", raw)
        if m:
            here = (files.get(m.group(1), m.group(1)), int(m.group(2)))
            at_m = re.search(r"inlined_at\s+(\d+)\s+(\d+)\s+(\d+)", m.group(4))
            if not here[1]:
                cur = ()
                continue
            if at_m:
                at = (files.get(at_m.group(1), at_m.group(1)), int(at_m.group(2)))
                cur = (here,) + chain_at.get((at_m.group(1), at_m.group(2), at_m.group(3)), (at,))
            else:
                cur = (here,)
            chain_at[(m.group(1), m.group(2), m.group(3))] = cur
            continue
        if re.match(r"^\s*\.(entry|func)\b|^\s*\.visible\s+\.(entry|func)\b", raw):
            cur = ()
        if cur:
            out[n] = cur
    return out


_PTX_EDGES = "\n".join((
    '.file 1 "k.cu"', '.file 2 "h.h"',
    ".visible .entry k(", ")", "{",
    "\t.loc 1 10 3", "\tld.global.u32 %r1, [%rd1];",
    "\t.loc 2 5 1, function_name $L__info_string0, inlined_at 1 10 3", "\tst.global.u32 [%rd1], %r1;", "",
    "\t.loc 2 0 0", "\tret;", "}",
    ".func f()", "{", "\tret;", "\t.loc\t1 20 1", "\t\tbar.sync 0;", "}",
))


@pytest.mark.parametrize("name, text", [("edges", _PTX_EDGES), *_texts(".ptx")])
def test_loc_scan_gives_every_line_the_location_the_line_by_line_reader_gave(name: str, text: str) -> None:
    want = _source_lines_by_lines(text)
    got = source_lines(text)
    assert all(got(n) == want.get(n, ()) for n in range(1, text.count("\n") + 2))


# ------------------------------------------------------------------ fewest marks: one instruction at a time


def _fewest_by_instruction(flows: list[Flow], weights: dict[int, int], post: bool, resets: frozenset[int] | None) -> list[float]:
    """min_marks's answer for every instruction from a shortest-path search whose steps are single
    instructions (no blocks, no bisection): a node is (instruction about to run, a mark ran since
    the last reset)."""
    g = build_cfg(flows)
    inf = float("inf")

    def step(j: int, st: bool) -> tuple[int, bool]:
        if j in weights:
            return (0 if st else weights[j]), resets is not None
        if resets is not None and j in resets:
            return 0, False
        return 0, st

    def nexts(j: int) -> list[int]:
        b = g.block_of[j]
        if post:
            return [j - 1] if j > g.starts[b] else [g.ends[p] for p in g.preds[b]]
        return [j + 1] if j < g.ends[b] else [g.starts[s] for s in g.succs[b]]

    starts = [g.ends[b] for b in g.exits if b in g.reachable] if post else [0]
    dist: dict[tuple[int, bool], float] = {}
    heap = [(0, j, False) for j in starts]
    for j in starts:
        dist[(j, False)] = 0
    while heap:
        d, j, st = heapq.heappop(heap)
        if d > dist.get((j, st), inf):
            continue
        cost, out = step(j, st)
        for c in nexts(j):
            if d + cost < dist.get((c, out), inf):
                dist[(c, out)] = d + cost
                heapq.heappush(heap, (d + cost, c, out))
    return [min(dist.get((i, False), inf), dist.get((i, True), inf)) if g.block_of[i] in g.reachable else inf
            for i in range(len(flows))]


def _random_flows(rng: random.Random, n: int) -> list[Flow]:
    flows = []
    for i in range(n):
        r = rng.random()
        if r < 0.15:
            flows.append(Flow((rng.randrange(n),), rng.random() < 0.6))  # a branch, maybe predicated
        elif r < 0.2:
            flows.append(Flow((), rng.random() < 0.5, True))  # an exit, maybe predicated
        else:
            flows.append(Flow())
    return flows


@pytest.mark.parametrize("seed", range(40))
def test_min_marks_is_the_fewest_marks_on_any_path(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randrange(2, 40)
    flows = _random_flows(rng, n)
    g = build_cfg(flows)
    weights = {i: rng.choice((1, 1, 2)) for i in rng.sample(range(n), rng.randrange(0, max(1, n // 3)))}
    memops = frozenset(rng.sample(range(n), rng.randrange(0, max(1, n // 2))))
    for post in (False, True):
        for resets in (None, memops):
            want = _fewest_by_instruction(flows, weights, post, resets)
            q = min_marks(g, weights, post, resets)
            assert [q(i) for i in range(n)] == want, (post, resets)


# ------------------------------------------------------------------ the shift of a SASS base register


@pytest.mark.parametrize("seed", range(60))
def test_base_shifts_are_those_every_offset_admits(seed: int) -> None:
    rng = random.Random(seed)

    class Op:  # what _base_deltas reads of a SassMemOp
        def __init__(self, base: str, offset: int) -> None:
            self.base, self.offset = base, offset

    ptx = {rng.randrange(0, 64, 4) for _ in range(rng.randrange(1, 8))}
    ops = [Op(rng.choice("AB"), rng.randrange(-16, 64, 4)) for _ in range(rng.randrange(1, 8))]
    want: dict[str, int] | None = {}
    for base in dict.fromkeys(m.base for m in ops):
        mine = [m for m in ops if m.base == base]
        cands = sorted({po - m.offset for m in mine for po in ptx})
        feasible = [d for d in cands if all(m.offset + d in ptx for m in mine)]
        if len(feasible) > 1 and 0 in feasible:
            feasible = [0]
        if len(feasible) != 1:
            want = None
            break
        want[base] = feasible[0]  # type: ignore[index]
    assert _base_deltas(ptx, ops) == want  # type: ignore[arg-type]


# ------------------------------------------------------------------ equal counts, one Sides


def test_sass_operations_with_equal_counts_share_one_sides() -> None:
    text = "\n".join((".text.k:", "  /*0000*/ STG.E desc[UR4][R2.64], R0 ;", "  /*0010*/ STG.E desc[UR4][R2.64+0x4], R0 ;",
                      "  /*0020*/ MEMBAR.SC.GPU ;", "  /*0030*/ STG.E desc[UR4][R2.64+0x8], R0 ;", "  /*0040*/ EXIT ;"))
    (fn,) = parse_sass(text)
    g = build_cfg([Flow()] * 4 + [Flow((), False, True)])
    sides = sass_sides(fn, g, {2: ("MEMBAR.SC.GPU",)}, fn.mem_ops, ({"MEMBAR.SC.GPU"}, {"MEMBAR.SC.GPU"}))
    assert sides[0] is sides[1] and sides[1] is not sides[3]
    assert sides[0] == Sides({"MEMBAR.SC.GPU": 0}, {"MEMBAR.SC.GPU": 1}) and sides[3] == Sides({"MEMBAR.SC.GPU": 1}, {"MEMBAR.SC.GPU": 0})
