"""Control-flow graphs of PTX and SASS functions: basic blocks, successors, dominators and
post-dominators, reachability (:class:`Cfg`, :func:`build_cfg`, :func:`ptx_cfg`, :func:`sass_cfg`).

The checker orders a memory operation against the synchronisation points on its *dominator* chain
(the points every path from the entry runs before it) and on its *post-dominator* chain (the points
every path to an exit runs after it), in the PTX and in the SASS -- not against listing offsets
(docs/sass.md, "Order on the control-flow graph").  Operations of mutually exclusive branches never
dominate each other, so they never pair; inlined copies and warp-role branches keep their own points.

A graph is built from one :class:`Flow` per instruction: where control goes after it.  A branch
that is predicated (``@%p bra``, ``@P0 BRA``) also falls through; ``ret``/``exit``/``trap``/``brkpt``/``EXIT``/``RET``/
``BPT.TRAP`` leave the function (predicated: and fall through); an indirect branch (``brx.idx``, ``BRX``,
``JMX``, ``BRXU``, ``JMXU``) to the targets nvdisasm lists, else to any labelled instruction.  Everything here is pure."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Callable, Hashable, Mapping, Sequence

from .ptx_ir import PtxFunction
from .sass_ir import SassFunction, SassInstr


@dataclass(frozen=True)
class Flow:
    """Where control goes after one instruction: ``targets`` (instruction indices it may branch to),
    whether it may fall through to the next instruction, and whether it may leave the function."""

    targets: tuple[int, ...] = ()
    falls_through: bool = True
    exits: bool = False
    #: a conditional branch's predicate: "P0" (taken when P0 is true) or "!P0"
    test: str = ""
    #: the predicate registers the instruction writes
    writes: frozenset[str] = frozenset()
    #: for an ``ISETP`` of kernel constants (immediates, ``LDC c[0x0][imm]`` loads of its block): what it
    #: computes, so that two such tests of one value are known equal (``""``: not known)
    value: str = ""
    #: neither memory access nor synchronisation (a parameter ``LDC``, a constant ``ISETP``, ``NOP``, a register ``MOV``): an
    #: edge that knows where the block's branch goes may skip the block (:func:`_thread_correlated_branches`)
    inert: bool = False


_PLAIN = Flow()


@dataclass(frozen=True)
class Cfg:
    """Basic blocks over instruction indices ``0..n-1``.  Block ``b`` holds the instructions
    ``starts[b]..ends[b]`` (inclusive).  ``idom[b]`` is its immediate dominator (-1: the entry, or
    unreachable), ``ipdom[b]`` its immediate post-dominator (-1: it leaves the function itself, or no
    path from it leaves the function, or it is unreachable); both are computed when first asked for
    (the SASS graphs need neither)."""

    n: int
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    block_of: tuple[int, ...]
    succs: tuple[tuple[int, ...], ...]
    preds: tuple[tuple[int, ...], ...]
    exits: frozenset[int]
    reachable: frozenset[int]

    @functools.cached_property
    def idom(self) -> tuple[int, ...]:
        return tuple(_dominators(len(self.starts), self.succs, self.preds, [0])[0]) if self.starts else ()

    @functools.cached_property
    def ipdom(self) -> tuple[int, ...]:
        # the reverse graph from a virtual exit (index nb) joined to every exit block
        nb = len(self.starts)
        if not nb:
            return ()
        rsuccs = [list(p) for p in self.preds] + [sorted(self.exits)]
        rpreds = [list(s) + ([nb] if b in self.exits else []) for b, s in enumerate(self.succs)] + [[]]
        pidom, _ = _dominators(nb + 1, rsuccs, rpreds, [nb])
        return tuple((-1 if d == nb or b not in self.reachable else d) for b, d in enumerate(pidom[:nb]))

    def is_reachable(self, i: int) -> bool:
        return self.block_of[i] in self.reachable

    def _tree_above(self, b: int, tree: Sequence[int]) -> list[int]:
        out = []
        while tree[b] >= 0:
            b = tree[b]
            out.append(b)
        return out

    def dominates(self, a: int, i: int) -> bool:
        """Instruction ``a`` runs before ``i`` on every path from the entry to ``i`` (strictly)."""
        ba, bi = self.block_of[a], self.block_of[i]
        if ba not in self.reachable or bi not in self.reachable:
            return False
        if ba == bi:
            return a < i
        return ba in self._tree_above(bi, self.idom)

    def post_dominates(self, a: int, i: int) -> bool:
        """Instruction ``a`` runs after ``i`` on every path from ``i`` to an exit (strictly)."""
        ba, bi = self.block_of[a], self.block_of[i]
        if ba not in self.reachable or bi not in self.reachable:
            return False
        if ba == bi:
            return a > i
        return ba in self._tree_above(bi, self.ipdom)

    def reaches(self, a: int, i: int) -> bool:
        """Some path runs ``a`` and later ``i`` (``a`` before ``i`` in one block, or a path of
        edges from ``a``'s block to ``i``'s; a block on a cycle reaches itself)."""
        ba, bi = self.block_of[a], self.block_of[i]
        if ba == bi and a < i:
            return True
        seen: set[int] = set()
        stack = list(self.succs[ba])
        while stack:
            b = stack.pop()
            if b == bi:
                return True
            if b not in seen:
                seen.add(b)
                stack.extend(self.succs[b])
        return False

    def marks_on_chain(self, marks: Mapping[int, Hashable], post: bool = False) -> Callable[[int], tuple[int, ...]]:
        """A function ``i -> the marked instructions that dominate i`` (``post``: post-dominate),
        nearest last (dominators: in the order a path from the entry runs them; post-dominators: in
        the reverse of the order a path to the exit runs them, so again nearest to ``i`` last).
        ``marks`` maps instruction index -> anything (only its keys are used).  Per-block chains
        are computed once, so each query costs the length of one block."""
        tree = self.ipdom if post else self.idom
        in_block: dict[int, list[int]] = {}
        for i in sorted(marks):
            in_block.setdefault(self.block_of[i], []).append(i)
        chain: dict[int, tuple[int, ...]] = {}

        def chain_of(b: int) -> tuple[int, ...]:
            # the marks of the strict tree ancestors of b, farthest first
            if b in chain:
                return chain[b]
            path = []
            x = b
            while x not in chain and tree[x] >= 0:
                path.append(x)
                x = tree[x]
            base = chain.get(x, ())
            if x not in chain:
                chain[x] = base = ()
            for y in reversed(path):
                parent = tree[y]
                own = in_block.get(parent, [])
                base = base + tuple(reversed(own) if post else own)
                chain[y] = base
            return chain[b]

        def query(i: int) -> tuple[int, ...]:
            b = self.block_of[i]
            if b not in self.reachable:
                return ()
            here = in_block.get(b, [])
            local = tuple(reversed([m for m in here if m > i])) if post else tuple(m for m in here if m < i)
            return chain_of(b) + local

        return query


def build_cfg(flows: Sequence[Flow]) -> Cfg:
    """The control-flow graph of a function whose instruction ``i`` has flow ``flows[i]``; instruction
    0 is the entry."""
    n = len(flows)
    if n == 0:
        return Cfg(0, (), (), (), (), (), frozenset(), frozenset())
    leaders = {0}
    # (most instructions are _PLAIN: no target, fall through, do not exit)
    for i in [i for i, f in enumerate(flows) if f is not _PLAIN]:
        f = flows[i]
        targets = f.targets
        if targets:
            leaders.update(t for t in targets if 0 <= t < n)
        if (targets or f.exits or not f.falls_through) and i + 1 < n:
            leaders.add(i + 1)
    starts = sorted(leaders)
    ends = [s - 1 for s in starts[1:]] + [n - 1]
    block_of = [0] * n
    for b, (s, e) in enumerate(zip(starts, ends)):
        block_of[s:e + 1] = [b] * (e + 1 - s)
    nb = len(starts)
    succs: list[list[int]] = [[] for _ in range(nb)]
    exits = set()
    for b, e in enumerate(ends):
        f = flows[e]
        out = [block_of[t] for t in f.targets if 0 <= t < n]
        if f.falls_through and e + 1 < n:
            out.append(block_of[e + 1])
        if f.exits or (f.falls_through and e + 1 >= n):
            exits.add(b)
        succs[b] = list(dict.fromkeys(out))
    _thread_correlated_branches(flows, starts, ends, block_of, succs)
    preds: list[list[int]] = [[] for _ in range(nb)]
    for b, ss in enumerate(succs):
        for s in ss:
            preds[s].append(b)
    reachable = {0}
    stack = [0]
    while stack:
        for c in succs[stack.pop()]:
            if c not in reachable:
                reachable.add(c)
                stack.append(c)
    return Cfg(n, tuple(starts), tuple(ends), tuple(block_of), tuple(tuple(s) for s in succs),
               tuple(tuple(p) for p in preds), frozenset(exits), frozenset(reachable))


def _block_writes(flows: Sequence[Flow], block_of: Sequence[int], nb: int) -> list[frozenset[str]]:
    """The predicate registers each block writes."""
    written: list[set[str]] = [set() for _ in range(nb)]
    for i, f in enumerate(flows):
        if f.writes:
            written[block_of[i]].update(f.writes)
    return [frozenset(w) for w in written]


def _thread_correlated_branches(flows: Sequence[Flow], starts: Sequence[int], ends: Sequence[int],
                                block_of: Sequence[int], succs: list[list[int]]) -> None:
    """An edge into a block that is one conditional branch on a predicate whose value the edge
    already knows (an earlier branch on it, no write of it between; or a write of one value, an
    ``ISETP`` of kernel constants, that an earlier branch tested) goes straight to where that branch
    goes: ptxas tests one predicate twice (the cluster barrier's one-CTA fallback: ``@!P0 BRA L5;
    ...ARV...; BRA L6; L5: NOP; L6: @!P0 BRA L7``; at -O1 the second test computes the predicate
    again from the cluster size), and the path that takes the first branch one way and the second the
    other never runs."""
    nb = len(starts)
    tests = {b: flows[ends[b]].test for b in range(nb) if flows[ends[b]].test}
    # a block that is one conditional branch, or whose other instructions are inert (ptxas -O1 tests the
    # cluster size again, ``LDC R0, c[0x0][0x140]; ISETP.EQ.U32.AND P1, PT, R0, 0x1, PT; @!P1 BRA``) and
    # do not write its predicate, or write it with a value (Flow.value)
    last_value = _last_values(flows, block_of, nb)
    tested = [last_value[c].get(tests[c].lstrip("!"), "") for c in tests]
    again = {v for v in tested if v and tested.count(v) > 1}  # values two blocks' branches test
    skippable = {c for c in tests if starts[c] == ends[c] or (
        last_value[c].get(tests[c].lstrip("!")) in again and all(flows[i].inert for i in range(starts[c], ends[c])))}
    if not skippable:
        return  # no edge to redirect
    writes = _block_writes(flows, block_of, nb)
    valued = [any(lv.values()) for lv in last_value]

    def edge_fact(b: int, c: int, known: dict[str, bool]) -> dict[str, bool]:
        # (the facts are never changed in place: a block that writes no predicate passes ``known`` on);
        # a fact "=<value>" is of a value (Flow.value), never written again: a predicate written with
        # a value known is known
        w = writes[b]
        if w and known:
            out = {p: v for p, v in known.items() if p not in w}
            if valued[b]:
                out.update({p: known["=" + v] for p, v in last_value[b].items() if v and "=" + v in known})
        else:
            out = known
        t = tests.get(b)
        if t:
            reg, neg = t.lstrip("!"), t.startswith("!")
            target = [block_of[x] for x in flows[ends[b]].targets]
            taken = c in target and not (flows[ends[b]].falls_through and ends[b] + 1 < len(block_of) and block_of[ends[b] + 1] == c)
            fall = c not in target
            if taken or fall:
                out = {**out, reg: (not neg) if taken else neg}
                if last_value[b].get(reg):
                    out["=" + last_value[b][reg]] = out[reg]
        return out

    def where(b: int, c: int, known: dict[str, bool]) -> list[int]:
        """Where the edge b -> c goes on: past ``c`` when the edge knows ``c``'s branch, else ``c``."""
        t = tests[c]
        fact = edge_fact(b, c, known)
        reg, neg = t.lstrip("!"), t.startswith("!")
        if reg in writes[c]:  # written in the block: known when written with a value known
            v = last_value[c].get(reg)
            fact = {reg: fact["=" + v]} if v and "=" + v in fact else {}
        if reg not in fact:
            return [c]
        f = flows[ends[c]]
        if fact[reg] != neg:  # the second branch is taken
            return [block_of[x] for x in f.targets] or [c]
        return [block_of[ends[c] + 1]] if ends[c] + 1 < len(block_of) else [c]

    entry = _must_facts(nb, succs, edge_fact)
    for b in range(nb):
        known = entry[b]
        if known is not None:
            succs[b] = list(dict.fromkeys(x for c in succs[b] for x in (where(b, c, known) if c in skippable else [c])))


def _last_values(flows: Sequence[Flow], block_of: Sequence[int], nb: int) -> list[dict[str, str]]:
    """Per block, the value (:attr:`Flow.value`) of each predicate's last write in it ("": not known)."""
    out: list[dict[str, str]] = [{} for _ in range(nb)]
    for i, f in enumerate(flows):
        for p in f.writes:
            out[block_of[i]][p] = f.value
    return out


def _must_facts(nb: int, succs: Sequence[Sequence[int]],
                edge_fact: Callable[[int, int, dict[str, bool]], dict[str, bool]]) -> list[dict[str, bool] | None]:
    """The predicate values known on entering each block (None: not reached), by a forward
    must-analysis from block 0: the facts of an edge (``edge_fact``) met by intersection.  A few
    rounds are enough for the shapes it is for (at most 4); a round that changed nothing ends it
    (every further round would change nothing)."""
    entry: list[dict[str, bool] | None] = [None] * nb
    entry[0] = {}
    for _ in range(4):
        changed = False
        for b in range(nb):
            known = entry[b]
            if known is None:
                continue
            for c in succs[b]:
                fact = edge_fact(b, c, known)
                old = entry[c]
                merged = fact if old is None else {p: v for p, v in old.items() if fact.get(p) == v}
                if merged != old:
                    changed = True
                entry[c] = merged
        if not changed:
            break
    return entry


def _dominators(n: int, succs: Sequence[Sequence[int]], preds: Sequence[Sequence[int]],
                roots: Sequence[int]) -> tuple[list[int], set[int]]:
    """Immediate dominators from ``roots[0]`` (Cooper, Harvey, Kennedy, "A Simple, Fast Dominance
    Algorithm", 2001): -1 for the root and for nodes it does not reach; and the reached nodes."""
    root = roots[0]
    order: list[int] = []
    seen = {root}
    stack: list[tuple[int, int]] = [(root, 0)]
    while stack:  # iterative post-order
        node, k = stack[-1]
        if k < len(succs[node]):
            stack[-1] = (node, k + 1)
            nxt = succs[node][k]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, 0))
        else:
            stack.pop()
            order.append(node)
    rpo = list(reversed(order))
    pos = {b: i for i, b in enumerate(rpo)}
    idom = [-2] * n
    idom[root] = root
    changed = True
    while changed:
        changed = False
        for b in rpo[1:]:
            new = -2
            for p in preds[b]:
                if p in pos and idom[p] != -2:
                    new = p if new == -2 else _intersect(p, new, idom, pos)
            if new != idom[b]:
                idom[b] = new
                changed = True
    out = [(-1 if d == -2 or b == root else d) for b, d in enumerate(idom)]
    return out, seen


def _intersect(a: int, b: int, idom: Sequence[int], pos: Mapping[int, int]) -> int:
    while a != b:
        while pos[a] > pos[b]:
            a = idom[a]
        while pos[b] > pos[a]:
            b = idom[b]
    return a


def ptx_flows(fn: PtxFunction) -> tuple[Flow, ...]:
    """One :class:`Flow` per PTX instruction of ``fn``: ``bra`` to its label (predicated: also on),
    ``ret``/``exit``/``trap``/``brkpt`` out, ``brx.idx`` to any labelled instruction, ``call`` on (opaque).
    ``brkpt`` "suspends execution" (PTX ISA brkpt): ptxas emits the ``BPT.TRAP`` it emits for ``trap``, which
    the SASS graph takes for an exit (:func:`sass_flows`), so the PTX graph does too: were a path through it to
    run on in one graph and end in the other, a load before CUTLASS's ``pipeline_check_is_producer`` (a
    ``brkpt`` before the producer's ``mbarrier.arrive`` in a build without ``-DNDEBUG``) would look "sunk
    below" the arrive (``tests/kernels/captured/brkpt_exit.cu``; CUTLASS example 77)."""
    labels = dict(fn.labels)
    resolved = dict(fn.branches)
    anywhere = tuple(sorted(set(labels.values())))
    out = []
    for ins in fn.instrs:
        pred = bool(ins.predicate)
        if ins.opcode == "bra" and ins.operands:
            t = resolved.get(ins.index, labels.get(ins.operands[0].strip()) if not fn.branches else None)
            # a label with no statement after it ends the function
            out.append(Flow((t,), pred) if t is not None else Flow((), pred, True))
        elif ins.opcode == "brx":
            out.append(Flow(anywhere, pred))
        elif ins.opcode in ("ret", "exit", "trap", "brkpt"):
            out.append(Flow((), pred, True))
        else:
            out.append(_PLAIN)
    return tuple(out)


_SASS_TARGET_RE = re.compile(r"\((\.L_[\w$]+)\)")
_SASS_UNIFORM_TEST_RE = re.compile(r"^\s*(!?UP[0-6])\s*,")
_SASS_PRED_DEST_RE = re.compile(r"\b(U?P[0-6])\b")
_SASS_BRANCH_TARGETS_RE = re.compile(r'BRANCH_TARGETS\s+([^"*)]*)')
_SASS_ABS_RE = re.compile(r"^\s*`?\s*0x([0-9a-fA-F]+)")
#: a branch whose first operand is a condition (``BRA.DIV UR4, target``, ``BRA !P0, target``)
_SASS_COND_OPERAND_RE = re.compile(r"^\s*!?U?P?R?\d*\s*,|^\s*!?U?P\w*\s*,")
_SASS_P_PRED_RE = re.compile(r"@!?P\d")
#: the indirect branches: through a register (BRX relative, JMX absolute) or a uniform register
#: (BRXU, JMXU: sm_100a's CUTLASS grouped GEMM, ``BRXU UR8 -0x5f70 (*"BRANCH_TARGETS ..."*)``)
SASS_INDIRECT_BRANCHES = frozenset(("BRX", "JMX", "BRXU", "JMXU"))
_SASS_FLOW_OPCODES = frozenset(("BRA", "JMP", "EXIT", "RET", "BPT")) | SASS_INDIRECT_BRANCHES


def _writer_flow(ins: SassInstr, writers: dict[frozenset[str], Flow]) -> Flow:
    """The flow of a SASS instruction that does not branch: on, writing the predicates among its
    first two operands (not a store's: those are its address and value)."""
    head = ins.operands.split(",", 2)
    dest = head[0] + "," + (head[1] if len(head) > 1 else "")  # the first two operands
    w = _SASS_PRED_DEST_RE.findall(dest) if "P" in dest else ()
    if not w or ins.opcode in ("ST", "STG", "STS"):
        return _PLAIN
    key = frozenset(w)
    flow = writers.get(key)
    if flow is None:
        flow = writers[key] = Flow(writes=key)  # one per set of predicates (they repeat)
    return flow


_SASS_LDC_PARAM_RE = re.compile(r"^(R\d+), (c\[0x0\]\[0x[0-9a-f]+\])$")
_SASS_IMMEDIATE_RE = re.compile(r"^(?:-?0x[0-9a-f]+|-?\d+|RZ)$")
_SASS_P_REG_RE = re.compile(r"P[0-6]")
_CONSTANT_OPCODES = frozenset(("NOP", "LDC", "ISETP", "MOV"))
_INERT = Flow(inert=True)


def _constant_flow(ins: SassInstr, constants: dict[str, tuple[str, int]], instrs: Sequence[SassInstr]) -> Flow | None:
    """The flow of a parameter ``LDC`` (recorded in ``constants``: the register, the constant and where),
    of an ``ISETP`` of kernel constants (its value: the comparison and its operands, each loaded register
    named by its constant when no instruction since its ``LDC`` wrote it), or of a ``NOP``: all inert;
    None for any other instruction.  Kernel parameters and constants do not change during the kernel."""
    op = ins.opcode
    if op == "NOP" and not ins.predicate:
        return _INERT
    if op == "MOV" and not ins.predicate and ins.operands.strip()[:1] == "R":
        # a register copy (ptxas -O0 puts one at the join before the cluster barrier's second test of the
        # cluster size: ``MOV R14, R14``): no predicate written, no memory; a constant register it overwrites is
        # no longer known to a later ISETP (_constant_at reads its write)
        return _INERT
    if op == "LDC" and not ins.mods and not ins.predicate:
        m = _SASS_LDC_PARAM_RE.match(ins.operands.strip())
        if m:
            constants[m.group(1)] = (m.group(2), ins.index)
            return _INERT
    elif op == "ISETP" and not ins.predicate and constants:
        ops = [o.strip() for o in ins.operands.split(",")]
        if len(ops) == 5 and ops[1] == ops[4] == "PT" and _SASS_P_REG_RE.fullmatch(ops[0]) and "EX" not in ins.mods:
            srcs = [_constant_at(o, constants, instrs, ins.index) or (o if _SASS_IMMEDIATE_RE.match(o) else "") for o in ops[2:4]]
            if all(srcs):
                return Flow(writes=frozenset((ops[0],)), value=".".join((op, *ins.mods)) + " " + " ".join(srcs), inert=True)
    return None


#: SASS instructions whose register result is one 32-bit register unless a width modifier says more
#: (``.64``/``.WIDE``: two, ``.128``: four; :func:`_result_width`).  Any other instruction with a register
#: destination -- a matrix or texture result (``HMMA``, ``HGMMA``, ``LDSM``, ``TEX``: many registers), sm_100's
#: paired ``FADD2``/``FFMA2`` -- and a 256-bit load (sm_100's ``LDG.E.ENL2.256 R8, R4, ...``: two destinations)
#: may write any register for :func:`_writes_register`.
_ONE_REGISTER_RESULT = frozenset((
    "MOV", "IMAD", "IADD3", "IADD", "IMUL", "LEA", "SHF", "SHL", "SHR", "LOP3", "LOP", "PRMT", "SEL", "IABS",
    "IMNMX", "VIMNMX", "VIADD", "VIADDMNMX", "POPC", "FLO", "BREV", "BMSK", "SGXT", "P2R", "S2R", "CS2R",
    "VOTE", "MATCH", "REDUX", "SHFL", "FADD", "FMUL", "FFMA", "FMNMX", "FSEL", "FSET", "MUFU", "FRND",
    "I2F", "I2FP", "F2I", "F2F", "F2FP", "HADD2", "HMUL2", "HFMA2", "HMNMX2", "HSET2",
    "LDC", "LDS", "LDG", "LD", "LDL", "ATOM", "ATOMS", "ATOMG"))
#: instructions whose first operands are read, never written (a barrier id, a mask, a delay)
_NO_REGISTER_RESULT = frozenset(("BAR", "WARPSYNC", "NANOSLEEP", "ST", "STG", "STS", "STL", "RED", "REDG"))


def _result_width(ins: SassInstr) -> int:
    """How many consecutive registers the register result of an instruction of :data:`_ONE_REGISTER_RESULT`
    covers, from its modifiers (a ``64`` in any -- ``LDC.64``, ``IMAD.WIDE``, ``F2I.S64`` -- two; ``CS2R``
    without ``.32`` reads a 64-bit special register)."""
    mods = ins.mods
    if any("128" in m for m in mods):
        return 4
    if any("64" in m for m in mods) or "WIDE" in mods or (ins.opcode == "CS2R" and "32" not in mods):
        return 2
    return 1


def _writes_register(ins: SassInstr, n: int) -> bool:
    """Whether ``ins`` may write ``Rn``: its register destination (its first operand, or its second after a
    predicate: ``ATOM P0, R4, ...``, ``SHFL PT, R5, ...``) and as many registers after it as its result is wide
    (:func:`_result_width`); an instruction of unknown result width with a register destination, or a call
    (the callee's registers are not read here), may write any."""
    if ins.opcode in ("CALL", "JCAL"):
        return True
    if ins.opcode in _NO_REGISTER_RESULT:
        return False
    head = [o.strip() for o in ins.operands.split(",", 2)[:2]]
    dests = head if head and head[0][:1] == "P" else head[:1]
    regs = [int(d[1:]) for d in dests if d[:1] == "R" and d[1:].isdigit()]
    if not regs:
        return False
    if ins.opcode not in _ONE_REGISTER_RESULT or any("256" in m for m in ins.mods):
        return True
    width = _result_width(ins)
    return any(0 <= n - r < width for r in regs)


def _constant_at(reg: str, constants: dict[str, tuple[str, int]], instrs: Sequence[SassInstr], at: int) -> str:
    """The kernel constant ``reg`` holds at instruction ``at``: its ``LDC``'s, when no instruction between
    may write it (:func:`_writes_register`: a 32-bit result writes its own register only -- ``LDS R0`` or
    ``@!P0 S2R R5`` between ``LDC R2``/``LDC R6`` and the ``ISETP`` leaves it known); "" when not known."""
    got = constants.get(reg)
    if got is None:
        return ""
    n = int(reg[1:])
    if any(_writes_register(i, n) for i in instrs[got[1] + 1:at]):
        return ""
    return got[0]


def sass_flows(fn: SassFunction) -> tuple[Flow, ...]:
    """One :class:`Flow` per SASS instruction of ``fn``: ``BRA``/``JMP`` to their target (a label
    or an offset; predicated: also on), ``EXIT``/``RET``/``BPT.TRAP`` out, an indirect branch
    (``BRX``/``JMX``/``BRXU``/``JMXU``) to its listed ``BRANCH_TARGETS``, else to any labelled
    instruction; ``CALL`` and everything else on.  An instruction predicated on ``!PT``
    never runs: it falls through."""
    labels = dict(fn.labels)
    index_at = {ins.offset: ins.index for ins in fn.instrs}
    anywhere = tuple(sorted(index_at[o] for o in set(labels.values()) if o in index_at))
    out = []
    writers: dict[frozenset[str], Flow] = {}
    written: dict[tuple[str, str], Flow] = {}  # the flow of an instruction that branches nowhere, by opcode and operands
    constants: dict[str, tuple[str, int]] = {}  # register -> the kernel constant its block loaded into it (LDC R2, c[0x0][0x140])
    starts = set(labels.values())
    for ins in fn.instrs:
        if ins.offset in starts:
            constants.clear()
        flow = _constant_flow(ins, constants, fn.instrs) if ins.opcode in _CONSTANT_OPCODES else None
        if flow is not None:
            out.append(flow)
            continue
        if ins.predicate == "@!PT":
            out.append(_PLAIN)
            continue
        if ins.opcode not in _SASS_FLOW_OPCODES or (ins.opcode == "BPT" and "TRAP" not in ins.mods):
            if "P" not in ins.operands:  # no predicate register among its operands: it writes none
                out.append(_PLAIN)
                continue
            flow = written.get((ins.opcode, ins.operands))
            if flow is None:
                flow = written[(ins.opcode, ins.operands)] = _writer_flow(ins, writers)
            out.append(flow)
            continue
        pred = bool(ins.predicate) and ins.predicate != "@PT"
        # BRA.DIV UR4, target (and any branch with a condition operand before its target) is taken
        # only when the warp diverged: it falls through too
        pred = pred or "DIV" in ins.mods or bool(_SASS_COND_OPERAND_RE.match(ins.operands))
        if ins.opcode in ("BRA", "JMP"):
            lm = _SASS_TARGET_RE.search(ins.operands)
            am = _SASS_ABS_RE.match(ins.operands)
            off = labels.get(lm.group(1)) if lm else (int(am.group(1), 16) if am else None)
            t = index_at.get(off) if off is not None else None
            test = ins.predicate[1:] if _SASS_P_PRED_RE.fullmatch(ins.predicate) and not ins.mods else ""
            um = _SASS_UNIFORM_TEST_RE.match(ins.operands)
            if not test and not ins.predicate and tuple(ins.mods) == ("U",) and um:
                # a uniform branch takes its condition as an operand: BRA.U !UP0, `(.L_x_5) (sm_100a's
                # cluster-barrier fallback tests UP0 twice, as sm_90's tests P0)
                test = um.group(1)
            out.append(Flow((t,), pred, test=test) if t is not None else Flow((), pred, True))
        elif ins.opcode in SASS_INDIRECT_BRANCHES:
            # nvdisasm names an indirect branch's targets: BRX R6 -0x2b90 (*"BRANCH_TARGETS .L_x_1,.L_x_2"*)
            listed = _SASS_BRANCH_TARGETS_RE.search(ins.operands)
            named = [index_at[labels[t.strip()]] for t in listed.group(1).split(",")
                     if t.strip() in labels and labels[t.strip()] in index_at] if listed else []
            out.append(Flow(tuple(named) if named else anywhere, pred))
        else:  # EXIT, RET, BPT.TRAP
            out.append(Flow((), pred, True))
    return tuple(out)


def successors(flows: Sequence[Flow]) -> list[list[int]]:
    """The instruction-level graph of ``flows``: each instruction's branch targets, and the next
    instruction where it may fall through (what :mod:`fuzzgpu.sass.loops` walks)."""
    n = len(flows)
    return [[*f.targets, i + 1] if f.falls_through and i + 1 < n else list(f.targets) for i, f in enumerate(flows)]


def ptx_cfg(fn: PtxFunction) -> Cfg:
    return build_cfg(ptx_flows(fn))


def sass_cfg(fn: SassFunction) -> Cfg:
    return build_cfg(sass_flows(fn))


def reaches_avoiding(g: Cfg, sources: Sequence[int], target: int, blockers: frozenset[int]) -> bool:
    """Some path runs an instruction of ``sources`` and later ``target`` without running an
    instruction of ``blockers`` in between."""
    tb = g.block_of[target]
    seen: set[int] = set()
    work: list[int] = []
    for s in sources:
        b = g.block_of[s]
        if b not in g.reachable:
            continue
        stop = next((i for i in range(s + 1, g.ends[b] + 1) if i in blockers), None)
        if b == tb and s < target and (stop is None or target < stop):
            return True
        if stop is None:
            work.extend(g.succs[b])
    while work:
        b = work.pop()
        if b in seen:
            continue
        seen.add(b)
        stop = next((i for i in range(g.starts[b], g.ends[b] + 1) if i in blockers), None)
        if b == tb and (stop is None or target < stop):
            return True
        if stop is None:
            work.extend(g.succs[b])
    return False


def _stops_by_block(g: Cfg, weights: Mapping[int, int], resets: frozenset[int] | None) -> dict[int, list[int]]:
    """The marked and reset instructions of each block, in order: only those change a walk through
    it (:func:`min_marks`), so a walk visits those, not every instruction.  ``_stops_by_block(g, {},
    resets)`` is :func:`min_marks`'s ``reset_stops`` (the resets of ``resets``, bucketed once for
    several calls)."""
    stops: dict[int, list[int]] = {}
    for j in sorted(set(weights) | (resets if resets is not None else frozenset())):
        if 0 <= j < g.n:
            stops.setdefault(g.block_of[j], []).append(j)
    return stops


def _fewest(g: Cfg, through: Mapping[tuple[int, bool], tuple[int, bool]], post: bool) -> list[float]:
    """For each (block, state), at index ``2 * block + state``: the fewest marks any path runs before
    it enters the block, in walking order (from the entry; ``post``: from the exits, backwards);
    ``through``: what a walk through a block costs and the state it leaves (Dijkstra; a block not in
    it costs nothing and keeps the state)."""
    import heapq

    inf = float("inf")
    nb = len(g.starts)
    # what a walk through each (block, state) costs and the (block-less) state it leaves, by index
    cost = [0] * (2 * nb)
    leaves = [0, 1] * nb
    for (b, st), (walked, left) in through.items():
        cost[2 * b + st] = walked
        leaves[2 * b + st] = left
    dist = [inf] * (2 * nb)
    heap: list[tuple[float, int]] = []
    starts = [b for b in g.exits if b in g.reachable] if post else ([0] if g.starts else [])
    for b in starts:
        dist[2 * b] = 0
        heap.append((0, 2 * b))
    nxt = g.preds if post else g.succs
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        d, node = pop(heap)
        if d > dist[node]:
            continue
        nd = d + cost[node]
        out = leaves[node]
        for c in nxt[node >> 1]:
            x = 2 * c + out
            if nd < dist[x]:
                dist[x] = nd
                push(heap, (nd, x))
    return dist


def _cleared(reset_stops: Mapping[int, list[int]], marked: Mapping[int, list[int]]) -> dict[tuple[int, bool], tuple[int, bool]]:
    """What a walk through a block with a reset and no mark (not in ``marked``) costs, whatever the
    state it enters with: nothing, and it leaves with no mark since the last reset."""
    return {(b, st): (0, False) for b in reset_stops if b not in marked for st in (False, True)}


def min_marks(g: Cfg, weights: Mapping[int, int], post: bool = False,
              resets: frozenset[int] | None = None,
              reset_stops: Mapping[int, list[int]] | None = None) -> Callable[[int], float]:
    """A function ``i -> the fewest marked instructions any path runs before i`` (from the entry;
    ``post``: after ``i``, to an exit); ``inf`` where no such path exists.  Unlike the marks on the
    dominator chain this counts a point that ptxas duplicated into both arms of a branch (each
    path runs one copy).  With ``resets`` (memory operations), marks in a row with no reset
    between them count once: the second of two fences with nothing between them orders nothing
    more, and ptxas drops it on such a path.  Without, every mark counts.

    Only the blocks that hold a mark are walked instruction by instruction: a block with resets
    and no mark costs nothing and leaves the state "no mark since the last reset", one with
    neither costs nothing and keeps the state; a query in either is the count on entering it.
    So the work per kind of mark is the blocks of that kind, not every block with a memory
    operation (``reset_stops``: the resets bucketed by block once, for several calls)."""
    import bisect

    inf = float("inf")
    if reset_stops is None:
        reset_stops = _stops_by_block(g, {}, resets)
    in_block: dict[int, list[int]] = {}
    for j in weights:
        if 0 <= j < g.n:
            in_block.setdefault(g.block_of[j], []).append(j)
    # the marks and resets of each block that holds a mark, in order
    stops = {b: sorted(set(reset_stops.get(b, ())) | set(js)) for b, js in in_block.items()}

    def walk(b: int, state: bool, lo: int, hi: int) -> tuple[int, bool]:
        cost = 0
        here = stops[b]
        a, z = bisect.bisect_left(here, lo), bisect.bisect_right(here, hi)
        rng = reversed(here[a:z]) if post else here[a:z]
        for j in rng:
            if j in weights:
                cost += 0 if state else weights[j]
                state = resets is not None
            elif resets is not None and j in resets:
                state = False
        return cost, state

    # a block with no mark and no reset costs 0 and keeps the state (_fewest's default)
    through = _cleared(reset_stops, stops) if resets is not None else {}
    for b in stops:
        through[(b, False)] = walk(b, False, g.starts[b], g.ends[b])
        through[(b, True)] = walk(b, True, g.starts[b], g.ends[b])
    dist = _fewest(g, through, post)

    def query(i: int) -> float:
        b = g.block_of[i]
        if b not in g.reachable:
            return inf
        if b not in stops:  # no mark in the block: the count is the one on entering it
            return min(dist[2 * b], dist[2 * b + 1])
        best = inf
        for st in (False, True):
            d = dist[2 * b + st]
            if d < inf:
                part = walk(b, st, i + 1, g.ends[b])[0] if post else walk(b, st, g.starts[b], i - 1)[0]
                best = min(best, d + part)
        return best

    return query
