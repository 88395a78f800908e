"""A static SASS oracle: compile with the local toolchain, disassemble, and report memory operations
that ptxas moved across a synchronisation point (and same-address loads it merged, and delay loops it
deleted).

The pipeline has three layers, kept apart so that the middle one is pure and testable on captured text:

1. **Toolchain edges** (subprocess): :func:`compile_cu`, :func:`assemble_ptx`, :func:`disassemble`.
2. **Parsers** (pure): :func:`parse_ptx` turns PTX text into functions of typed instructions, memory
   operations and synchronisation points in program order; :func:`parse_sass` does the same for the
   disassembly.
3. **Analysis** (pure): :func:`analyse` maps every PTX memory operation and synchronisation point of a
   function to its SASS counterpart and reports :class:`Finding` objects.

How the mapping works (see docs/sass.md for the long form):

* Memory operations are grouped into *classes* (SASS family such as ``LDG``/``STS``/``ATOMG`` plus the
  strength that ptxas encodes: ``.CONSTANT``, ``.STRONG.SM/GPU/SYS``, ``.MMIO``).  Within a class, when
  every SASS operation's immediate offset matches the offset of a PTX operation from its root register
  (the case for every fuzzgpu kernel: each location is a distinct compile-time offset from one base
  pointer), the mapping is by offset, independent of order: exact.  Otherwise it is by order within the
  class when the counts agree; else the class is left unmapped and a note says so (no guessing, so no
  false alarm).
* Synchronisation points expand to the SASS instructions that ptxas emits for them (``fence.acq_rel.gpu``
  is ``MEMBAR.ALL.GPU ... CCTL.IVALL``; ``ld.acquire.gpu`` is ``LDG.E.STRONG.GPU; CCTL.IVALL``;
  ``griddepcontrol.wait`` is ``ACQBULK``...).  Those are matched by a longest common subsequence over the
  synchronisation instructions of the function, so an extra or missing ``MEMBAR`` does not shift the
  rest.  The analysis assumes ptxas keeps synchronisation instructions in order among themselves (they
  are scheduling barriers for it); it checks memory operations against them.
* A memory operation that preceded a synchronisation point in PTX must be before the *first* SASS
  instruction of that point; one that followed it must be after the *last* (a load between ``MEMBAR`` and
  ``CCTL.IVALL`` could still hit a stale L1 line).

Only the main line of each SASS function is used: instructions after the first unconditional ``EXIT``
are out-of-line copies (ptxas moves the retry loops of ``mbarrier.try_wait`` there) and instructions
predicated on ``!PT`` never execute.
"""

from __future__ import annotations

import concurrent.futures as _futures
import functools
import os
import re
import shutil
import subprocess
import tempfile
import dataclasses
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

from . import semantics
from .errors import EnvError, MissingTool, UserError

DEFAULT_ARCHS: tuple[str, ...] = ("sm_90", "sm_90a", "sm_100a")
DEFAULT_OPT = 3

FORBIDDEN = "forbidden"
HAZARD = "permitted-hazard"
VERDICTS = (FORBIDDEN, HAZARD)

CROSSING = "crossing"
MERGED = "merged"
LOOP_DELETED = "loop-deleted"
DELETED = "deleted"
UNGUARDED_WAIT = "unguarded-wait"

#: exit statuses of ``fuzzgpu sass`` (and :func:`exit_status`)
EXIT_CLEAN = 0  # every function fully checked, no finding
EXIT_FINDING = 1  # at least one finding
EXIT_ERROR = 2  # bad input (the CLI's UserError)
EXIT_NOT_FULLY_CHECKED = 3  # no finding, but something was not checked: never "clean" (the exit status of
#: every command for a result that could not be fully checked, docs/reliability.md "Exit codes")

HOISTED = "hoisted above"
SUNK = "sunk below"

_ARCH_RE = re.compile(r"^sm_(\d{2,3})([af]?)$")


# ---------------------------------------------------------------------------------------------------
# typed instructions
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PtxInstr:
    """One PTX statement: ``index`` in program order within its function, ``line`` in the file."""

    index: int
    line: int
    text: str
    predicate: str
    opcode: str
    mods: tuple[str, ...]
    operands: tuple[str, ...]


@dataclass(frozen=True)
class PtxMemOp:
    instr: PtxInstr
    kind: str  # load | store | atomic | reduction
    space: str  # global | shared | cluster | local | const | generic
    sem: str  # weak | relaxed | acquire | release | acq_rel | volatile | mmio | nc
    scope: str  # cta | cluster | gpu | sys | "" (weak, nc)
    width: int  # bits
    root: str  # root register/symbol of the address
    offset: int  # byte offset from root

    @property
    def address(self) -> tuple[str, int]:
        return (self.root, self.offset)


@dataclass(frozen=True)
class PtxSync:
    instr: PtxInstr
    kind: str  # fence | barrier | arrive | griddep-wait | griddep-launch | mbarrier-* | proxy-fence ...
    release: bool  # earlier operations must not move below it
    acquire: bool  # later operations must not move above it
    space: str = ""  # for proxy fences: the only state space it orders ("" = all)
    #: for the cp.async / bulk async-group waits: the PTX instruction indices of the memory
    #: operations of the function that conflict with a copy the wait completes (see
    #: :func:`_async_conflicts`); None: the point orders every later operation (an acquire)
    orders_only: frozenset[int] | None = None


@dataclass(frozen=True)
class AsyncAccess:
    """What an asynchronous copy (cp.async, cp{.reduce}.async.bulk) reads (its source) or writes
    (its destination), as far as the PTX says: the state space, the address (``root`` "" when
    unknown, e.g. a tensor map) and the size in bytes (0 when not an immediate)."""

    space: str
    root: str
    offset: int
    size: int
    write: bool


@dataclass(frozen=True)
class PtxEvent:
    """A PTX instruction the analysis cares about: a memory operation, a synchronisation point, or
    both (``ld.acquire``), with the SASS token classes ptxas is expected to emit for it."""

    instr: PtxInstr
    mem: PtxMemOp | None
    sync: PtxSync | None
    mem_class: str | None
    sync_classes: tuple[str, ...]


@dataclass(frozen=True)
class PtxLoop:
    head: int  # instruction index of the first statement after the label
    tail: int  # instruction index of the backward branch
    line: int
    reads_clock: bool
    delay: bool  # no memory operation or synchronisation inside


@dataclass(frozen=True)
class PtxFunction:
    name: str
    entry: bool
    line: int
    instrs: tuple[PtxInstr, ...]
    events: tuple[PtxEvent, ...]
    loops: tuple[PtxLoop, ...]


@dataclass(frozen=True)
class SassInstr:
    index: int
    offset: int
    line: int
    text: str
    predicate: str
    opcode: str  # e.g. LDG
    mods: tuple[str, ...]  # e.g. ("E", "128", "CONSTANT")
    operands: str
    mainline: bool  # False: after the first unconditional EXIT, or predicated on !PT

    @property
    def full_opcode(self) -> str:
        return ".".join((self.opcode,) + self.mods)


@dataclass(frozen=True)
class SassMemOp:
    instr: SassInstr
    kind: str  # load | store | atomic | reduction
    space: str  # global | shared | local | constant | generic
    width: int
    constant: bool  # .CONSTANT (the non-coherent path)
    strength: str  # "" | SM | GPU | SYS
    na: bool
    mmio: bool
    base: str
    offset: int


@dataclass(frozen=True)
class SassSync:
    instr: SassInstr
    kind: str  # ACQBULK PREEXIT MEMBAR FENCE.VIEW.ASYNC BAR SYNCS CCTL.IVALL ERRBAR CGAERRBAR BULK DEPBAR ...
    token: str | None  # the class used for matching (None: not matched, e.g. ERRBAR)


@dataclass(frozen=True)
class SassLoop:
    head: int  # index of the branch target
    tail: int  # index of the backward branch
    reads_clock: bool
    delay: bool


@dataclass(frozen=True)
class SassFunction:
    name: str
    instrs: tuple[SassInstr, ...]
    mem_ops: tuple[SassMemOp, ...]
    syncs: tuple[SassSync, ...]
    loops: tuple[SassLoop, ...]
    #: for a device function that nvdisasm lists inside a kernel's text (``$KERNEL$FUNC:``), the kernel
    container: str = ""


@dataclass(frozen=True)
class Finding:
    """One thing ptxas did that the PTX did not say.

    ``check`` is ``crossing`` (a memory operation moved across a synchronisation point), ``merged``
    (two PTX loads of one address became one SASS load; ``sync_*`` then names the other load) or
    ``loop-deleted`` (a delay loop of the PTX has no SASS loop; ``op_*`` names the loop) or ``deleted``
    (a PTX memory operation with no SASS at all: ptxas removed a load whose value is unused)."""

    check: str
    verdict: str
    direction: str
    arch: str
    function: str
    op_ptx: str
    op_ptx_line: int
    op_sass: str
    op_sass_line: int
    op_sass_offset: int
    sync_ptx: str
    sync_ptx_line: int
    sync_sass: str
    sync_sass_line: int
    sync_sass_offset: int
    reason: str
    source: str = ""
    #: "" when ``op_*`` is the PTX operation the mapping paired with ``op_sass``; otherwise how the
    #: finding was established without that pairing (a count of the operations on each side)
    evidence: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class FunctionReport:
    name: str
    short_name: str
    ptx_mem_ops: int
    sass_mem_ops: int
    mapped_mem_ops: int
    ptx_syncs: int
    mapped_syncs: int
    findings: tuple[Finding, ...]
    notes: tuple[str, ...]
    #: why the function is not fully checked (empty: every memory operation and every ordering
    #: synchronisation point of PTX and SASS is accounted for)
    unchecked: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        return not self.unchecked


@dataclass(frozen=True)
class Report:
    source: str
    arch: str
    functions: tuple[FunctionReport, ...]
    notes: tuple[str, ...] = ()

    #: why the module is not fully checked beyond its functions (a kernel with no SASS)
    unchecked: tuple[str, ...] = ()

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(f for fn in self.functions for f in fn.findings)

    @property
    def complete(self) -> bool:
        """Every function fully checked: only then does "no finding" mean "clean"."""
        return not self.unchecked and all(fn.complete for fn in self.functions)

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "arch": self.arch,
            "clean": not self.findings and self.complete,
            "complete": self.complete,
            "unchecked": list(self.unchecked),
            "findings": [f.to_dict() for f in self.findings],
            "functions": [
                {
                    "name": fn.name,
                    "short_name": fn.short_name,
                    "ptx_mem_ops": fn.ptx_mem_ops,
                    "sass_mem_ops": fn.sass_mem_ops,
                    "mapped_mem_ops": fn.mapped_mem_ops,
                    "ptx_syncs": fn.ptx_syncs,
                    "mapped_syncs": fn.mapped_syncs,
                    "findings": len(fn.findings),
                    "complete": fn.complete,
                    "unchecked": list(fn.unchecked),
                    "notes": list(fn.notes),
                }
                for fn in self.functions
            ],
            "notes": list(self.notes),
        }


# ---------------------------------------------------------------------------------------------------
# small helpers
# ---------------------------------------------------------------------------------------------------


def short_name(mangled: str) -> str:
    """``_Z10fuzzgpu_P0Pi`` -> ``fuzzgpu_P0``; an unmangled name is returned as is."""
    m = re.match(r"_Z(\d+)(\w+)", mangled)
    if m:
        n = int(m.group(1))
        return m.group(2)[:n]
    return mangled


def parse_arch(arch: str) -> tuple[int, str]:
    m = _ARCH_RE.fullmatch(arch) if isinstance(arch, str) else None
    if not m:
        raise UserError(f"unknown arch {arch!r}: expected sm_NN, sm_NNa or sm_NNf (e.g. sm_90, sm_90a, sm_100a)")
    n = int(m.group(1))
    if n < 70:
        raise UserError(f"unknown arch {arch!r}: the PTX memory model needs sm_70 or later")
    return n, m.group(2)


def _int(text: str) -> int:
    text = text.strip()
    neg = text.startswith("-")
    if neg:
        text = text[1:]
    v = int(text, 16) if text.lower().startswith("0x") else int(text)
    return -v if neg else v


# ---------------------------------------------------------------------------------------------------
# PTX parser
# ---------------------------------------------------------------------------------------------------

_PTX_FUNC_RE = re.compile(r"^\s*(?:\.visible\s+|\.extern\s+|\.weak\s+)*\.(entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)")
_PTX_LABEL_RE = re.compile(r"^([\w$]+):\s*")
_PTX_PRED_RE = re.compile(r"^@!?%?[\w$]+\s+")
_SPACES = {"global", "shared", "shared::cta", "shared::cluster", "local", "const", "param", "generic"}
_SEMS = {"relaxed", "acquire", "release", "acq_rel", "volatile", "weak", "mmio", "sc"}
_SCOPES = {"cta", "cluster", "gpu", "sys"}
_TYPE_BITS = {
    "b8": 8, "u8": 8, "s8": 8,
    "b16": 16, "u16": 16, "s16": 16, "f16": 16, "bf16": 16, "f16x2": 32, "bf16x2": 32,
    "b32": 32, "u32": 32, "s32": 32, "f32": 32,
    "b64": 64, "u64": 64, "s64": 64, "f64": 64,
    "b128": 128,
}


def _strip_ptx_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


_PTX_LINE_DIRECTIVE_RE = re.compile(r"^[ \t]*\.(?:loc|file)\b[^\n]*", re.M)


def _strip_line_directives(text: str) -> str:
    """Blank out ``.loc`` and ``.file`` (``nvcc -lineinfo``/``-G``): they end at the end of the line,
    not at a ``;``, so left in they would swallow the statement that follows (PTX ISA, Debugging
    Directives)."""
    return _PTX_LINE_DIRECTIVE_RE.sub("", text)


def _split_operands(text: str) -> tuple[str, ...]:
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return tuple(out)


def _ptx_statements(body: str, first_line: int) -> list[tuple[int, str, tuple[str, ...]]]:
    """Split a function body into ``(line, statement, labels)``: statements end at ``;``; braces of
    inline-asm scopes and directives (``.reg``...) are dropped; labels attach to the next statement."""
    out: list[tuple[int, str, tuple[str, ...]]] = []
    labels: list[str] = []
    chunks: list[tuple[int, str]] = []

    def flush() -> None:
        nonlocal labels
        line = chunks[0][0] if chunks else first_line
        text = ""
        for ln, part in chunks:
            rest = part
            if not text.strip():
                while True:
                    rest = rest.lstrip(" \t{}")
                    m = _PTX_LABEL_RE.match(rest)
                    if not m or rest[m.end() - 1 : m.end() + 1] == "::":
                        break
                    labels.append(m.group(1))
                    rest = rest[m.end():]
                if rest.strip(" \t{}"):
                    line = ln
            text += " " + rest
        stmt = text.strip(" \t{}")
        if stmt and not stmt.startswith("."):
            out.append((line, stmt, tuple(labels)))
            labels = []
        chunks.clear()

    for n, line_text in enumerate(body.split("\n")):
        parts = line_text.split(";")
        for i, part in enumerate(parts):
            chunks.append((first_line + n, part))
            if i < len(parts) - 1:
                flush()
    if chunks:
        flush()
    return out


def _parse_ptx_instr(index: int, line: int, stmt: str) -> PtxInstr:
    pred = ""
    m = _PTX_PRED_RE.match(stmt)
    if m:
        pred = m.group(0).strip()
        stmt_body = stmt[m.end():]
    else:
        stmt_body = stmt
    parts = stmt_body.split(None, 1)
    op = parts[0] if parts else ""
    operands = _split_operands(parts[1]) if len(parts) > 1 else ()
    pieces = op.split(".")
    # re-join "shared::cta" style qualifiers, which contain no dots, so a plain split is right
    return PtxInstr(index, line, " ".join(stmt.split()), pred, pieces[0], tuple(pieces[1:]), operands)


def _ptx_width(mods: Sequence[str]) -> int:
    vec = 1
    bits = 32
    for m in mods:
        if m in ("v2", "v4", "v8"):
            vec = int(m[1:])
        elif m in _TYPE_BITS:
            bits = _TYPE_BITS[m]
    return vec * bits


def _ptx_address(operand: str) -> tuple[str, int]:
    inner = operand.strip()
    if inner.startswith("[") and inner.endswith("]"):
        inner = inner[1:-1]
    inner = inner.replace(" ", "")
    m = re.fullmatch(r"([%\w$.]+)?(?:\+?(-?(?:0x[0-9a-fA-F]+|\d+)))?", inner)
    if not m:
        return (inner, 0)
    root = m.group(1) or ""
    off = _int(m.group(2)) if m.group(2) else 0
    if root and re.fullmatch(r"-?(0x[0-9a-fA-F]+|\d+)", root):
        return ("", _int(root) + off)
    return (root, off)


def _mem_class(family: str, strength: str) -> str:
    return f"{family}{'.' + strength if strength else ''}"


def _classify_ptx_mem(ins: PtxInstr, defs: dict[str, tuple[str, int]]) -> PtxMemOp | None:
    op = ins.opcode
    if op not in ("ld", "st", "atom", "red", "ldu"):
        return None
    mods = ins.mods
    space = "generic"
    for m in mods:
        if m in _SPACES:
            space = {"shared::cta": "shared", "shared::cluster": "cluster"}.get(m, m)
    if space == "param":
        return None
    kind = {"ld": "load", "ldu": "load", "st": "store", "atom": "atomic", "red": "reduction"}[op]
    sem = "weak"
    scope = ""
    for m in mods:
        if m in _SEMS:
            sem = m
        if m in _SCOPES:
            scope = m
    if "nc" in mods or op == "ldu":
        sem = "nc"
    if kind in ("atomic", "reduction"):
        if sem == "weak":
            sem = "relaxed"
        scope = scope or "gpu"
    elif sem in ("relaxed", "acquire", "release", "acq_rel", "mmio") and not scope:
        scope = "sys" if sem == "mmio" else "gpu"
    elif sem == "volatile":
        scope = "sys"
    addr_operand = ""
    for o in ins.operands:
        if o.startswith("["):
            addr_operand = o
            break
    root, off = _ptx_address(addr_operand) if addr_operand else ("", 0)
    if root in defs:
        r0, o0 = defs[root]
        root, off = r0, o0 + off
    width = _ptx_width(mods)
    return PtxMemOp(ins, kind, space, sem, scope, width, root, off)


def _sass_strength_for(mem: PtxMemOp) -> str:
    if mem.space not in ("global", "generic"):
        return ""
    if mem.kind in ("atomic", "reduction"):
        return ""
    if mem.sem == "nc":
        return "CONSTANT"
    if mem.sem == "mmio":
        return "MMIO"
    if mem.sem == "weak":
        # cache operators that ptxas encodes as strengths (seen with ptxas 13.0 on sm_90/sm_100a)
        for op, strength in (("cg", "STRONG.GPU"), ("cv", "STRONG.SYS"), ("ca", "STRONG.SM")):
            if op in mem.instr.mods and mem.kind == "load":
                return strength
        return ""
    return {"cta": "STRONG.SM", "cluster": "STRONG.GPU", "gpu": "STRONG.GPU", "sys": "STRONG.SYS"}[mem.scope]


def _ptx_mem_family(mem: PtxMemOp) -> str:
    if mem.kind in ("atomic", "reduction"):
        return {"global": "ATOMG", "shared": "ATOMS"}.get(mem.space, "ATOM")
    load = mem.kind == "load"
    return {
        "global": "LDG" if load else "STG",
        "shared": "LDS" if load else "STS",
        "local": "LDL" if load else "STL",
        "const": "LDC" if load else "STC",
    }.get(mem.space, "LD" if load else "ST")


def _membar(scope: str, sc: bool) -> str:
    s = {"cta": "CTA", "cluster": "GPU", "gpu": "GPU", "sys": "SYS"}.get(scope, "GPU")
    return f"MEMBAR.{'SC' if sc else 'ALL'}.{s}"


def _sync(ins: PtxInstr, kind: str, key: str | None = None, space: str = "") -> PtxSync:
    """The synchronisation point ``kind`` of ``ins``: what it orders (release: the thread's earlier
    accesses before it; acquire: it before the later ones) is the instruction-semantics table's
    entry ``key`` (default ``kind``; :mod:`fuzzgpu.semantics`), with its ``.sem`` qualifier."""
    sem = next((m for m in ins.mods if m in _SEMS), None)
    release, acquire = semantics.entry(key or kind).orders_directions(sem)
    return PtxSync(ins, kind, release, acquire, space)


def _classify_ptx_sync(ins: PtxInstr, mem: PtxMemOp | None) -> tuple[PtxSync | None, tuple[str, ...]]:
    """The synchronisation meaning of a PTX instruction and the SASS token classes it expands to
    (in SASS order), or ``(None, ())``."""
    op, mods = ins.opcode, ins.mods
    scope = next((m for m in mods if m in _SCOPES), "")
    if mem is not None:
        rel, acq = semantics.entry({"ldu": "ld"}.get(op, op)).orders_directions(mem.sem)
        if not (rel or acq):
            return None, ()
        classes: list[str] = []
        if rel:
            classes.append(_membar(mem.scope, False))
        classes.append("@mem")
        if acq and mem.scope in ("gpu", "sys", "cluster"):
            classes.append("CCTL.IVALL")
        kind = {(True, False): "release", (False, True): "acquire", (True, True): "acq_rel"}[(rel, acq)]
        return PtxSync(ins, kind, rel, acq), tuple(classes)
    if op in ("fence", "membar"):
        if op == "membar":
            sc_scope = {"cta": "cta", "gl": "gpu", "sys": "sys"}.get(mods[0] if mods else "gl", "gpu")
            toks = (_membar(sc_scope, True),) + (() if sc_scope == "cta" else ("CCTL.IVALL",))
            return _sync(ins, "fence.sc", "membar"), toks
        if "proxy" in mods:
            if "async" in mods or any(m.startswith("async") for m in mods):
                space = ""
                if "global" in mods:
                    return _sync(ins, "fence.proxy.async", space="global"), ("FENCE.VIEW.ASYNC.G",)
                if "shared::cta" in mods:
                    return _sync(ins, "fence.proxy.async", space="shared"), ("MEMBAR.ALL.CTA", "FENCE.VIEW.ASYNC.S")
                if "shared::cluster" in mods:
                    return _sync(ins, "fence.proxy.async", space="shared"), ("FENCE.VIEW.ASYNC.S",)
                return _sync(ins, "fence.proxy.async", space=space), ("MEMBAR.ALL.GPU", "FENCE.VIEW.ASYNC.S")
            # fence.proxy.alias / tensormap: ordering between proxies of one location; no known token
            return _sync(ins, "fence.proxy." + (mods[1] if len(mods) > 1 else ""), "fence.proxy"), ()
        if "mbarrier_init" in mods:
            # a release fence for prior mbarrier.init only (PTX ISA, membar/fence: fence.mbarrier_init)
            return _sync(ins, "fence.mbarrier_init"), ()
        if "sc" in mods or "acq_rel" in mods:
            sc = "sc" in mods
            sc_scope = scope or "sys"
            toks = (_membar(sc_scope, sc),) + (() if sc_scope == "cta" else ("CCTL.IVALL",))
            return _sync(ins, "fence.sc" if sc else "fence.acq_rel"), toks
        if "acquire" in mods:
            return _sync(ins, "fence.acquire"), ()
        if "release" in mods:
            return _sync(ins, "fence.release"), ()
        return None, ()
    if op == "barrier" and "cluster" in mods:
        # barrier.cluster.arrive (release unless .relaxed) / barrier.cluster.wait (acquire); ptxas 13.0,
        # sm_90: arrive[.release] is MEMBAR.ALL.GPU; ERRBAR; CGAERRBAR; UCGABAR_ARV, arrive.relaxed is
        # UCGABAR_ARV alone, wait[.acquire] is UCGABAR_WAIT; CCTL.IVALL (.aligned or not)
        if "arrive" in mods:
            if "relaxed" in mods:
                return _sync(ins, "barrier.cluster.arrive"), ("UCGABAR_ARV",)
            return _sync(ins, "barrier.cluster.arrive"), ("MEMBAR.ALL.GPU", "UCGABAR_ARV")
        if "wait" in mods:
            return _sync(ins, "barrier.cluster.wait"), ("UCGABAR_WAIT", "CCTL.IVALL")
        return None, ()
    if op in ("bar", "barrier"):
        sub = [m for m in mods if m not in ("cta", "aligned")]
        if not sub or sub[0] == "sync":
            return _sync(ins, "bar.sync"), ("BAR.SYNC",)
        if sub[0] == "arrive":
            return _sync(ins, "bar.arrive"), ("BAR.ARV",)
        if sub[0] == "red":
            return _sync(ins, "bar.red"), ("BAR.RED",)
        return None, ()  # bar.warp.sync: execution only
    if op == "griddepcontrol":
        if "wait" in mods:
            return _sync(ins, "griddepcontrol.wait"), ("ACQBULK",)
        if "launch_dependents" in mods:
            return _sync(ins, "griddepcontrol.launch_dependents"), ("PREEXIT",)
        return None, ()
    if op == "mbarrier":
        if mods and mods[0] == "init":
            return _sync(ins, "mbarrier.init"), ("SYNCS.EXCH",)
        if mods and mods[0] in ("arrive", "arrive_drop"):
            if "expect_tx" in mods:
                return _sync(ins, "mbarrier.arrive.expect_tx"), ("SYNCS.ARRIVE",)
            return _sync(ins, "mbarrier.arrive"), ("SYNCS.ARRIVE",)
        if mods and mods[0] in ("expect_tx", "complete_tx"):
            return _sync(ins, "mbarrier." + mods[0]), ("SYNCS.ARRIVE",)
        if mods and mods[0] in ("try_wait", "test_wait"):
            toks: tuple[str, ...] = ("SYNCS.PHASECHK",)
            if "acquire" in mods and ("cluster" in mods or "gpu" in mods or "sys" in mods):
                toks += ("CCTL.IVALL",)
            return _sync(ins, "mbarrier." + mods[0]), toks
        return _sync(ins, "mbarrier." + (mods[0] if mods else ""), "mbarrier"), ()
    if op == "cp":
        if mods[:1] == ("async",) and len(mods) > 1 and mods[1] in ("ca", "cg"):
            return _sync(ins, "cp.async"), ("LDGSTS",)
        if mods[:2] == ("async", "commit_group"):
            return _sync(ins, "cp.async.commit_group"), ("LDGDEPBAR",)
        if mods[:2] in (("async", "wait_group"), ("async", "wait_all")):
            return _sync(ins, "cp.async.wait"), ("DEPBAR",)
        if mods[:2] == ("async", "bulk") or mods[:3] == ("reduce", "async", "bulk"):
            if "commit_group" in mods:
                return _sync(ins, "cp.async.bulk.commit_group"), ("UTMACMDFLUSH",)
            if "wait_group" in mods:
                return _sync(ins, "cp.async.bulk.wait_group"), ("DEPBAR",)
            return _sync(ins, ".".join(("cp",) + mods[:3]), "cp.async.bulk"), ("BULK",)
        return None, ()
    if op == "tcgen05" and "fence" in mods:
        return _sync(ins, "tcgen05.fence"), ()  # emits no SASS (toolchain §5)
    return None, ()


_SPACE_OF = {"shared": "shared", "shared::cta": "shared", "shared::cluster": "cluster", "global": "global"}


def _async_copy(ins: PtxInstr, defs: dict[str, tuple[str, int]]) -> tuple[str, tuple[AsyncAccess, ...]] | None:
    """``(family, accesses)`` of an asynchronous copy -- family ``cp.async`` (non-bulk) or
    ``bulk_group`` (a bulk copy completing on a bulk async-group) -- or None (not a copy, or a bulk
    copy completing on an mbarrier, which no wait_group waits for).  The first state-space qualifier
    is the destination's, the second the source's (PTX ISA cp.async, cp.async.bulk,
    cp.reduce.async.bulk: ``.dst.src``)."""
    mods = ins.mods
    bulk = mods[:2] == ("async", "bulk") or mods[:3] == ("reduce", "async", "bulk")
    plain = mods[:1] == ("async",) and len(mods) > 1 and mods[1] in ("ca", "cg")
    if ins.opcode != "cp" or not (bulk or plain) or "prefetch" in mods or len(ins.operands) < 2:
        return None
    if bulk and "bulk_group" not in mods:
        return None
    spaces = [_SPACE_OF[m] for m in mods if m in _SPACE_OF]
    if len(spaces) < 2:
        return None
    size_text = ins.operands[2] if len(ins.operands) > 2 and "tensor" not in mods else ""
    size = _int(size_text) if re.fullmatch(r"0x[0-9a-fA-F]+|\d+", size_text) else 0

    def access(operand: str, space: str, write: bool) -> AsyncAccess:
        if "," in operand or "{" in operand:  # [tensorMap, {coordinates}]: the address is not in the PTX
            return AsyncAccess(space, "", 0, 0, write)
        root, off = _ptx_address(operand)
        if root in defs:
            r0, o0 = defs[root]
            root, off = r0, o0 + off
        return AsyncAccess(space, root, off, size, write)

    return ("cp.async" if plain else "bulk_group",
            (access(ins.operands[0], spaces[0], True), access(ins.operands[1], spaces[1], False)))


def _may_overlap(mem: PtxMemOp, acc: AsyncAccess, writes: dict[str, int]) -> bool:
    """Whether ``mem`` may touch a byte ``acc`` touches: False only where the PTX proves them apart
    (state spaces that cannot alias, two different variables, or one address root -- a symbol or a
    register written once -- with disjoint byte ranges)."""
    space = {"cluster": "shared"}.get(mem.space, mem.space)
    other = {"cluster": "shared"}.get(acc.space, acc.space)
    if space in ("local", "const", "param") or (space != "generic" and space != other):
        return False
    if not mem.root or not acc.root:
        return True
    if mem.root != acc.root:
        return mem.root.startswith("%") or acc.root.startswith("%")  # two symbols are two variables
    if acc.size <= 0 or (mem.root.startswith("%") and writes.get(mem.root, 0) > 1):
        return True
    return mem.offset < acc.offset + acc.size and acc.offset < mem.offset + max(mem.width // 8, 1)


def _async_conflicts(wait: PtxInstr, copies: Sequence[tuple[int, str, tuple[AsyncAccess, ...]]],
                     events: Sequence[PtxEvent], loops: Sequence[PtxLoop], writes: dict[str, int]) -> frozenset[int]:
    """The memory operations (PTX instruction indices) that conflict with a copy ``wait`` completes:
    overlapping and at least one of the two a write (PTX ISA memory model, conflicting accesses).

    ``cp.async.wait_group``/``wait_all`` complete the thread's cp.async copies (their source reads and
    destination writes), ``cp.async.bulk.wait_group`` its bulk_group copies, ``.read`` only their
    source reads.  A copy counts when it precedes the wait or shares a loop with it (a later
    iteration's wait completes it); every group counts, also those ``wait_group N > 0`` leaves
    pending (conservative)."""
    bulk = "bulk" in wait.mods
    family = "bulk_group" if bulk else "cp.async"
    read_only = bulk and "read" in wait.mods
    in_loops = {i for i, lp in enumerate(loops) if lp.head <= wait.index <= lp.tail}
    awaited = [a for idx, fam, accs in copies if fam == family and (
        idx < wait.index or any(loops[i].head <= idx <= loops[i].tail for i in in_loops))
        for a in accs if not (read_only and a.write)]
    return frozenset(e.instr.index for e in events if e.mem is not None and any(
        (a.write or e.mem.kind != "load") and _may_overlap(e.mem, a, writes) for a in awaited))


def sync_of_text(text: str) -> PtxSync | None:
    """The synchronisation meaning of one PTX statement's text (as a finding's ``sync_ptx`` holds
    it), or None when it orders nothing."""
    ins = _parse_ptx_instr(0, 0, text.strip().rstrip(";"))
    sync, _ = _classify_ptx_sync(ins, _classify_ptx_mem(ins, {}))
    return sync


def orders_weak_access(sync: PtxSync, direction: str, space: str = "global") -> bool:
    """Does ``sync`` order a weak access of ``space`` moved ``direction`` across it?  Sunk below: a
    release; hoisted above: an acquire; a proxy fence only in the state space it names."""
    if not (sync.release if direction == SUNK else sync.acquire if direction == HOISTED else False):
        return False
    return semantics.proxy_fence_covers(sync.space, space)


_WRITES_NONE = {"st", "red", "bar", "barrier", "bra", "ret", "exit", "fence", "membar", "griddepcontrol", "cp", "prefetch", "prefetchu", "call"}


def _ptx_dests(ins: PtxInstr) -> tuple[str, ...]:
    if ins.opcode in _WRITES_NONE or not ins.operands:
        return ()
    first = ins.operands[0]
    if first.startswith("["):
        return ()
    return tuple(r.strip() for r in first.strip("{}").split(",") if r.strip().startswith("%"))


def _track_defs(ins: PtxInstr, defs: dict[str, tuple[str, int]]) -> None:
    """Follow ``add/sub reg, reg, imm``, ``mov``, ``cvta`` so that an address is (root, offset)."""
    dests = _ptx_dests(ins)
    for d in dests:
        defs.pop(d, None)
    if len(dests) != 1:
        return
    d = dests[0]
    ops = ins.operands
    src = None
    if ins.opcode in ("mov", "cvta", "cvt") and len(ops) == 2 and not ops[1].startswith("{"):
        if re.fullmatch(r"[%\w$]+", ops[1]) and not re.fullmatch(r"-?\d+|0x[0-9a-fA-F]+", ops[1]):
            if ops[1].startswith("%") and not ops[1].startswith(("%tid", "%ctaid", "%clock", "%ntid", "%laneid", "%smid", "%nctaid", "%globaltimer")):
                src = defs.get(ops[1], (ops[1], 0))
            elif not ops[1].startswith("%"):
                src = (ops[1], 0)  # a symbol (shared variable)
    elif ins.opcode in ("add", "sub") and len(ops) == 3:
        a, b = ops[1], ops[2]
        imm = re.fullmatch(r"-?(0x[0-9a-fA-F]+|\d+)", b)
        if imm and a.startswith("%"):
            base = defs.get(a, (a, 0))
            k = _int(b)
            src = (base[0], base[1] + (k if ins.opcode == "add" else -k))
    if src is not None and src[0] != d:
        defs[d] = src


def _find_functions(text: str) -> list[tuple[str, bool, int, str, int]]:
    """``(name, entry, header_line, body, body_first_line)`` for every function with a body."""
    lines = text.split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = _PTX_FUNC_RE.match(lines[i])
        if not m:
            i += 1
            continue
        name, entry, header = m.group(2), m.group(1) == "entry", i + 1
        # find the opening brace of the body (after the parameter list)
        j = i
        depth_paren = 0
        found = None
        while j < len(lines):
            seg = lines[j] if j != i else lines[j][m.end():]
            for k, ch in enumerate(seg):
                if ch == "(":
                    depth_paren += 1
                elif ch == ")":
                    depth_paren -= 1
                elif ch == ";" and depth_paren == 0:
                    found = ("decl", j, k)
                    break
                elif ch == "{" and depth_paren == 0:
                    found = ("body", j, k)
                    break
            if found:
                break
            j += 1
        if not found or found[0] == "decl":
            i = (found[1] if found else j) + 1
            continue
        _, bj, bk = found
        depth = 0
        body_lines: list[str] = []
        end = bj
        done = False
        for jj in range(bj, len(lines)):
            seg = lines[jj][bk + 1:] if jj == bj else lines[jj]
            if jj == bj:
                depth = 1
            keep = []
            for ch in seg:
                if ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                    if depth == 0:
                        done = True
                        break
                keep.append(ch)
            body_lines.append("".join(keep))
            end = jj
            if done:
                break
        out.append((name, entry, header, "\n".join(body_lines), bj + 1))
        i = end + 1
    return out


def parse_ptx(text: str) -> tuple[PtxFunction, ...]:
    """Parse PTX into functions whose events (memory operations and synchronisation points) are in
    program order."""
    clean = _strip_line_directives(_strip_ptx_comments(text))
    funcs = []
    for name, entry, header, body, first in _find_functions(clean):
        stmts = _ptx_statements(body, first)
        instrs = []
        label_at: dict[str, int] = {}
        for idx, (line, stmt, labels) in enumerate(stmts):
            for lab in labels:
                label_at[lab] = idx
            instrs.append(_parse_ptx_instr(idx, line, stmt))
        defs: dict[str, tuple[str, int]] = {}
        events = []
        copies = []
        for ins in instrs:
            mem = _classify_ptx_mem(ins, defs)
            sync, classes = _classify_ptx_sync(ins, mem)
            copy = _async_copy(ins, defs)
            if copy is not None:
                copies.append((ins.index, *copy))
            _track_defs(ins, defs)
            if mem is None and sync is None:
                continue
            mem_class = _mem_class(_ptx_mem_family(mem), _sass_strength_for(mem)) if mem else None
            events.append(PtxEvent(ins, mem, sync, mem_class, tuple(c for c in classes if c != "@mem")))
        loops = []
        for ins in instrs:
            if ins.opcode == "bra" and ins.operands:
                target = ins.operands[0]
                head = label_at.get(target)
                if head is not None and head <= ins.index:
                    body_ins = instrs[head:ins.index]
                    clock = any("%clock" in o for b in body_ins for o in b.operands)
                    busy = any(e.instr.index in range(head, ins.index + 1) for e in events)
                    loops.append(PtxLoop(head, ins.index, ins.line, clock, not busy))
        writes: dict[str, int] = {}
        for ins in instrs:
            for d in _ptx_dests(ins):
                writes[d] = writes.get(d, 0) + 1
        events = [e if e.sync is None or _rule_key(e.sync) != "cp.async.wait" else dataclasses.replace(
            e, sync=dataclasses.replace(e.sync, orders_only=_async_conflicts(e.instr, copies, events, loops, writes)))
            for e in events]
        funcs.append(PtxFunction(name, entry, header, tuple(instrs), tuple(events), tuple(loops)))
    return tuple(funcs)


# ---------------------------------------------------------------------------------------------------
# SASS parser
# ---------------------------------------------------------------------------------------------------

_SASS_LINE_RE = re.compile(r"^\s*/\*([0-9a-fA-F]{4,})\*/\s+(.*?)\s*;")
_SASS_FUNC_RES = (
    re.compile(r"^\s*\.text\.([\w$.]+):\s*$"),  # nvdisasm
    re.compile(r"^\s*Function\s*:\s*([\w$.]+)\s*$"),  # cuobjdump -sass
)
_SASS_SUBROUTINE_RE = re.compile(r"^\$([\w.]+)\$([\w$.]+):\s*$")  # nvdisasm: $KERNEL$FUNC:
_SASS_PRED_RE = re.compile(r"^@!?U?P(?:T|\d+)\s+")
_SASS_LABEL_RE = re.compile(r"^\s*(\.L_[\w$]+):\s*$")

_SASS_MEM = {
    "LDG": ("load", "global"), "STG": ("store", "global"),
    "LDS": ("load", "shared"), "STS": ("store", "shared"), "LDSM": ("load", "shared"), "STSM": ("store", "shared"),
    "LD": ("load", "generic"), "ST": ("store", "generic"),
    "LDL": ("load", "local"), "STL": ("store", "local"),
    "LDC": ("load", "constant"),
    "ATOMG": ("atomic", "global"), "REDG": ("reduction", "global"),
    "ATOMS": ("atomic", "shared"), "ATOM": ("atomic", "generic"), "RED": ("reduction", "generic"),
}
_SASS_BULK = {"UBLKCP", "UBLKRED", "UBLKPF", "UTMALDG", "UTMASTG", "UTMAREDG", "UTMAPF", "UTMACCTL"}


def _sass_address(operands: str, opcode: str) -> tuple[str, int]:
    if opcode == "LDC":
        m = re.search(r"c\[(0x[0-9a-f]+)\]\[([^\]]*)\]", operands)
        if not m:
            return ("", 0)
        terms = m.group(2)
        base = f"c{int(m.group(1), 16)}"
    else:
        groups = re.findall(r"\[([^\]]*)\]", operands)
        # desc[URx][Ry.64+off]: the last group is the address
        if not groups:
            return ("", 0)
        terms = groups[-1]
        base = ""
    off = 0
    for t in re.split(r"\+(?=[^+])", terms.replace(" ", "")):
        if not t:
            continue
        if re.fullmatch(r"-?0x[0-9a-fA-F]+|-?\d+", t):
            off += _int(t)
        elif not base and t not in ("RZ", "URZ"):
            base = t.split(".")[0]
    return (base, off)


def _classify_sass(ins: SassInstr) -> SassMemOp | SassSync | None:
    op, mods = ins.opcode, ins.mods
    if op in _SASS_MEM:
        kind, space = _SASS_MEM[op]
        if op == "LDC":
            m = re.search(r"c\[(0x[0-9a-f]+)\]", ins.operands)
            if not m or int(m.group(1), 16) == 0:
                return None  # kernel parameters and driver constants
        width = 32
        for m in mods:
            if m in ("U8", "S8", "8"):
                width = 8
            elif m in ("U16", "S16", "16"):
                width = 16
            elif m == "64":
                width = 64
            elif m == "128":
                width = 128
        strength = ""
        if "STRONG" in mods:
            i = mods.index("STRONG")
            strength = mods[i + 1] if i + 1 < len(mods) else ""
        base, off = _sass_address(ins.operands, op)
        return SassMemOp(ins, kind, space, width, "CONSTANT" in mods, strength, "NA" in mods, "MMIO" in mods, base, off)
    if op == "ACQBULK":
        return SassSync(ins, "ACQBULK", "ACQBULK")
    if op == "PREEXIT":
        return SassSync(ins, "PREEXIT", "PREEXIT")
    if op == "MEMBAR":
        kind_ = "SC" if "SC" in mods else "ALL"
        scope = next((m for m in mods if m in ("CTA", "GPU", "SYS", "VC")), "GPU")
        return SassSync(ins, "MEMBAR", f"MEMBAR.{kind_}.{scope}")
    if op == "FENCE" and mods[:2] == ("VIEW", "ASYNC"):
        return SassSync(ins, "FENCE.VIEW.ASYNC", "FENCE.VIEW.ASYNC." + (mods[2] if len(mods) > 2 else ""))
    if op == "BAR":
        sub = mods[0] if mods else "SYNC"
        tok = {"SYNC": "BAR.SYNC", "ARV": "BAR.ARV", "RED": "BAR.RED"}.get(sub)
        return SassSync(ins, "BAR", tok)
    if op == "SYNCS":
        sub = mods[0] if mods else ""
        tok = {"EXCH": "SYNCS.EXCH", "PHASECHK": "SYNCS.PHASECHK"}.get(sub)
        if sub.startswith("ARRIVE"):
            tok = "SYNCS.ARRIVE"
        return SassSync(ins, "SYNCS", tok)
    if op == "CCTL" and "IVALL" in mods:
        return SassSync(ins, "CCTL.IVALL", "CCTL.IVALL")
    if op in ("ERRBAR", "CGAERRBAR"):
        return SassSync(ins, op, None)
    if op in ("UCGABAR_ARV", "UCGABAR_WAIT"):  # barrier.cluster.arrive / .wait
        return SassSync(ins, op, op)
    if op in _SASS_BULK:
        return SassSync(ins, "BULK", "BULK")
    if op == "UTMACMDFLUSH":
        return SassSync(ins, "UTMACMDFLUSH", "UTMACMDFLUSH")
    if op == "DEPBAR":
        return SassSync(ins, "DEPBAR", "DEPBAR")
    if op == "LDGDEPBAR":
        return SassSync(ins, "LDGDEPBAR", "LDGDEPBAR")
    if op == "LDGSTS":
        return SassSync(ins, "LDGSTS", "LDGSTS")
    return None


def _parse_sass_instr(index: int, line: int, offset: int, text: str, mainline: bool) -> SassInstr:
    pred = ""
    m = _SASS_PRED_RE.match(text)
    body = text
    if m:
        pred = m.group(0).strip()
        body = text[m.end():]
    parts = body.split(None, 1)
    op = parts[0] if parts else ""
    pieces = op.split(".")
    operands = parts[1] if len(parts) > 1 else ""
    return SassInstr(index, offset, line, " ".join(text.split()), pred, pieces[0], tuple(pieces[1:]), operands, mainline)


def parse_sass(text: str) -> tuple[SassFunction, ...]:
    """Parse ``nvdisasm -c`` or ``cuobjdump -sass`` output into functions.  A device function that
    was not inlined is listed by nvdisasm inside the text of each kernel that calls it, after a
    ``$KERNEL$FUNC:`` label: it becomes a function of its own (``container`` names the kernel)."""
    funcs: list[tuple[str, list[tuple[int, int, str]], dict[str, int], str]] = []
    pending: list[str] = []
    kernel = ""
    for lineno, raw in enumerate(text.split("\n"), start=1):
        sub = _SASS_SUBROUTINE_RE.match(raw)
        if sub and sub.group(1) == kernel:
            funcs.append((sub.group(2), [], {}, kernel))
            pending = []
            continue
        for rx in _SASS_FUNC_RES:
            fm = rx.match(raw)
            if fm:
                name = fm.group(1)
                if not funcs or funcs[-1][0] != name:
                    funcs.append((name, [], {}, ""))
                kernel = name
                pending = []
                break
        else:
            m = _SASS_LINE_RE.match(raw)
            if m and funcs:
                off = int(m.group(1), 16)
                funcs[-1][1].append((lineno, off, m.group(2)))
                for lab in pending:
                    funcs[-1][2][lab] = off
                pending = []
                continue
            lm = _SASS_LABEL_RE.match(raw)
            if lm:
                pending.append(lm.group(1))
    return tuple(dataclasses.replace(_build_sass_function(name, rows, labels), container=container)
                 for name, rows, labels, container in funcs)


def _build_sass_function(name: str, rows: list[tuple[int, int, str]], labels: dict[str, int] | None = None) -> SassFunction:
    labels = labels or {}
    instrs = []
    after_exit = False
    for i, (line, off, text) in enumerate(rows):
        ins = _parse_sass_instr(i, line, off, text, True)
        mainline = not after_exit and ins.predicate != "@!PT"
        if not mainline:
            ins = SassInstr(ins.index, ins.offset, ins.line, ins.text, ins.predicate, ins.opcode, ins.mods, ins.operands, False)
        instrs.append(ins)
        if ins.opcode in ("EXIT", "RET") and not ins.predicate:
            after_exit = True  # a device function's main line ends at its first unconditional RET
    mem_ops, syncs = [], []
    for ins in instrs:
        c = _classify_sass(ins)
        if isinstance(c, SassMemOp):
            mem_ops.append(c)
        elif isinstance(c, SassSync):
            syncs.append(c)
    by_offset = {ins.offset: ins.index for ins in instrs}
    loops = []
    busy_idx = {m.instr.index for m in mem_ops} | {s.instr.index for s in syncs}
    for ins in instrs:
        if ins.opcode in ("BRA", "JMP") and ins.predicate != "@!PT":
            lm = re.search(r"\((\.L_[\w$]+)\)", ins.operands)
            m = re.search(r"0x([0-9a-fA-F]+)", ins.operands)
            target = labels.get(lm.group(1)) if lm else (int(m.group(1), 16) if m else None)
            if target is None:
                continue
            if target == ins.offset and not ins.predicate:
                continue  # the end-of-function self loop
            head = by_offset.get(target)
            if head is not None and head <= ins.index:
                body = instrs[head:ins.index + 1]
                clock = any("SR_CLOCK" in b.operands for b in body)
                busy = any(b.index in busy_idx for b in body)
                loops.append(SassLoop(head, ins.index, clock, not busy))
    return SassFunction(name, tuple(instrs), tuple(mem_ops), tuple(syncs), tuple(loops))


def _sass_mem_class(m: SassMemOp) -> str:
    op = m.instr.opcode
    family = {"REDG": "ATOMG", "RED": "ATOM", "LDSM": "LDS", "STSM": "STS"}.get(op, op)
    if family in ("LDG", "STG", "LD", "ST"):
        strength = "CONSTANT" if m.constant else ("MMIO" if m.mmio else (f"STRONG.{m.strength}" if m.strength else ""))
    else:
        strength = ""
    return _mem_class(family, strength)


# ---------------------------------------------------------------------------------------------------
# analysis
# ---------------------------------------------------------------------------------------------------

# Rules, cited from the PTX ISA (9.x).  Kept as data so the reasons in findings quote them.
RULE_NC = (
    "ld.global.nc is outside the memory model: the ISA (ld.global.nc; Memory Consistency Model, scope "
    "and applicability) makes it valid only for data that is read-only for the lifetime of the kernel, so "
    "ptxas may move it across any synchronisation; it reads stale data if the location is written while "
    "the kernel runs (a PDL primary still running, another thread of the grid)"
)
RULE_CONST = "the .const state space is read-only for the kernel (PTX ISA, State Spaces: .const): no other thread can write it"
RULE_LOCAL = "the .local state space is private to the thread (PTX ISA, State Spaces: .local): no other thread can observe the move"
RULE_ACQUIRE_ONLY = (
    "{sync} has acquire semantics only (PTX ISA memory model, acquire patterns): it orders the operations "
    "after it, not those before it, so sinking an earlier operation below it is allowed ('roach motel'); "
    "the program order the source wrote is lost"
)
RULE_RELEASE_ONLY = (
    "{sync} has release semantics only (PTX ISA memory model, release patterns): it orders the operations "
    "before it, not those after it, so hoisting a later operation above it is allowed ('roach motel'); "
    "the program order the source wrote is lost"
)
RULE_NO_ORDER = "{sync} has no memory-ordering semantics of its own for this operation ({why}); the move is allowed but the program order the source wrote is lost"
RULE_FORBIDDEN = {
    "fence": "a fence.sc/fence.acq_rel orders every memory operation before it with every one after it (PTX ISA memory model: fence-SC order, release and acquire patterns; membar/fence)",
    "bar": "bar.sync/bar.red/barrier: memory accesses requested before the barrier are performed relative to all participating threads before it completes, and the barrier is a release-acquire for the CTA (PTX ISA bar/barrier; memory model: barriers synchronise)",
    "bar.arrive": "bar.arrive has release semantics: memory accesses before it are performed before the arrival is observed (PTX ISA bar/barrier)",
    "griddep": "griddepcontrol.wait blocks until all prerequisite grids have completed and their memory operations are performed and visible to the current grid (PTX ISA griddepcontrol); an operation after it must not be performed before it",
    "acquire": "an acquire operation is ordered before every memory operation after it in program order (PTX ISA memory model: acquire patterns; ld.acquire/atom.acquire)",
    "release": "a release operation is ordered after every memory operation before it in program order (PTX ISA memory model: release patterns; st.release/atom.release)",
    "mbarrier": "mbarrier.arrive has release and a completed mbarrier.try_wait/test_wait has acquire semantics at .cta scope by default (PTX ISA mbarrier)",
    "proxy": "fence.proxy.async orders generic-proxy accesses before it with async-proxy accesses after it and vice versa (PTX ISA membar/fence: fence.proxy; memory model: proxies)",
    "cp.async.wait": (
        "cp.async.wait_group/wait_all and cp.async.bulk.wait_group complete the thread's copies -- 'Writes performed by "
        "cp.async operations are made visible to the executing thread only after: The completion of cp.async.wait_all "
        "or ... cp.async.wait_group on the cp.async-group in which the cp.async belongs to' (PTX ISA cp.async.wait_group; "
        "cp.async.bulk.wait_group: reading the sources, writing the destinations, writes made visible to the executing "
        "thread; .read: the source reads only) -- so an access that may conflict with a copy (its destination, or a write "
        "of its source), or a release that must publish the copies, must not be performed before the wait"
    ),
}
RULE_ASYNC_WAIT_OTHER = (
    "'cp.async.wait_group and cp.async.wait_all does not provide any ordering and visibility guarantees for any other "
    "memory operation apart from cp.async' (PTX ISA cp.async.wait_group; cp.async.bulk.wait_group likewise orders only "
    "the bulk copies of its groups): this access cannot touch the destination of a copy {sync} completes (nor write its "
    "source) and has no release semantics, so hoisting it above the wait is allowed; the program order the source wrote is lost"
)
RULE_MERGE_PLAIN = (
    "two loads of one location may read the same write (coherence allows it; PTX ISA memory model, "
    "coherence order), so merging them is allowed; a litmus test loses one observation"
)
RULE_MERGE_VOLATILE = (
    "the number of volatile/mmio instructions must be preserved (PTX ISA memory model, volatile "
    "operations: 'the number of volatile instructions (not operations) executed by a program is preserved'; ld.mmio is performed exactly once)"
)
RULE_MERGE_ACROSS = "the loads are merged across {sync}, which orders the earlier load before and the later one after it: {rule}"
RULE_DELETED = (
    "a load whose value is never used has no observable effect, so ptxas may delete it (its ordering "
    "constraints go with it); a litmus test loses the observation: keep the loaded register alive"
)
RULE_UNGUARDED_WAIT = (
    "an mbarrier.try_wait/test_wait with acquire semantics (or a relaxed one and a later fence) that returns True is an acquire pattern, and "
    "'any memory synchronization established by an acquire pattern only affects operations occurring in "
    "program order after the last instruction in that pattern' (PTX ISA memory model, release and acquire "
    "patterns; mbarrier.test_wait/try_wait), so when it returns True this access must observe what the "
    "completed phase published; but no branch tests the wait's predicate {pred} before it, so nothing makes it wait for "
    "the phase check, and on an H200 such a load missed the data in up to 12.6% of instances "
    "(docs/findings.md, corpus/73416467ed043580): branch on the predicate (retry loop) before the access"
)
RULE_LOOP = (
    "a loop with no side effect has no observable behaviour in PTX (no timing or forward-progress "
    "guarantee), so ptxas may delete or fold it; the delay the source asked for is gone"
)


def judge_deleted(mem: PtxMemOp) -> tuple[str, str]:
    """A PTX memory operation with no SASS at all (pure)."""
    if mem.sem in ("volatile", "mmio"):
        return FORBIDDEN, RULE_MERGE_VOLATILE
    return HAZARD, RULE_DELETED


def judge_merge(first: PtxMemOp, later: PtxMemOp, between: Sequence[PtxSync]) -> tuple[str, str]:
    """The verdict for two PTX loads of one address that became one SASS load (pure).

    Merging is moving one load to the other and reading once.  Two adjacent loads of one location may
    read the same write (coherence), so the merge is allowed exactly when the synchronisation points
    between them let the earlier load sink and/or the later one rise to a common point: the earlier
    may sink below points that are not releases for it, the later may rise above points that are not
    acquires for it ("roach motel").  Volatile and mmio instructions may never be merged."""
    if first.sem in ("volatile", "mmio") or later.sem in ("volatile", "mmio"):
        return FORBIDDEN, RULE_MERGE_VOLATILE
    if not between or later.sem == "nc" or later.space in ("local", "const"):
        return HAZARD, RULE_MERGE_PLAIN
    for split in range(len(between) + 1):
        sink_ok = all(judge_crossing(first, s, SUNK)[0] != FORBIDDEN for s in between[:split])
        rise_ok = all(judge_crossing(later, s, HOISTED)[0] != FORBIDDEN for s in between[split:])
        if sink_ok and rise_ok:
            names = ", ".join(s.instr.text.split()[0] for s in between)
            return HAZARD, RULE_MERGE_PLAIN + f"; the synchronisation in between ({names}) does not order both loads (roach motel: the earlier load may sink below an acquire, the later rise above a release)"
    blocker = next(s for s in between if judge_crossing(first, s, SUNK)[0] == FORBIDDEN and judge_crossing(later, s, HOISTED)[0] == FORBIDDEN) if any(
        judge_crossing(first, s, SUNK)[0] == FORBIDDEN and judge_crossing(later, s, HOISTED)[0] == FORBIDDEN for s in between) else between[0]
    return FORBIDDEN, RULE_MERGE_ACROSS.format(sync=blocker.instr.text, rule=RULE_FORBIDDEN[_rule_key(blocker)])


def _rule_key(sync: PtxSync) -> str:
    """The key of :data:`RULE_FORBIDDEN` a forbidden move across ``sync`` cites: the semantics
    table's ``rule`` (:mod:`fuzzgpu.semantics`), else by direction (an acquire only, a release only,
    or a fence)."""
    key = _semantics_key(sync.kind)
    rule = semantics.TABLE[key].rule if key in semantics.TABLE else ""
    if rule:
        return rule
    if sync.acquire and not sync.release:
        return "acquire"
    if sync.release and not sync.acquire:
        return "release"
    return "fence"


def _semantics_key(kind: str) -> str:
    """The semantics-table key of a :class:`PtxSync` kind (``fence.proxy.alias`` -> ``fence.proxy``,
    a bulk copy ``cp.async.bulk.shared::cluster`` -> ``cp.async.bulk``)."""
    if kind.startswith("fence.proxy.") and kind != "fence.proxy.async":
        return "fence.proxy"
    if kind.startswith(("cp.async.bulk.", "cp.reduce.async.bulk")) and kind not in semantics.TABLE:
        return "cp.async.bulk"
    if kind.startswith("mbarrier.") and kind not in semantics.TABLE:
        return "mbarrier"
    return kind


def judge_crossing(mem: PtxMemOp, sync: PtxSync, direction: str) -> tuple[str, str]:
    """The verdict and reason for ``mem`` moved ``direction`` across ``sync`` (pure).

    A move is forbidden exactly when the synchronisation point orders that operation in that direction:
    earlier operations may not sink below a release (fences, bar.sync, bar.arrive, release operations,
    mbarrier.arrive), later ones may not rise above an acquire (fences, bar.sync, griddepcontrol.wait,
    acquire operations, completed mbarrier waits; cp.async and bulk async-group waits only for the
    accesses that conflict with their copies and for releases, ``PtxSync.orders_only``).  Everything
    outside the model is permitted (and a hazard)."""
    name = sync.instr.text.split()[0] if sync.instr.text else sync.kind
    if mem.space == "local":
        return HAZARD, RULE_LOCAL
    if mem.sem == "nc":
        return HAZARD, RULE_NC
    if mem.space == "const":
        return HAZARD, RULE_CONST
    if direction == SUNK and not sync.release:
        if sync.acquire:
            return HAZARD, RULE_ACQUIRE_ONLY.format(sync=name)
        return HAZARD, RULE_NO_ORDER.format(sync=name, why="it neither releases nor acquires")
    if direction == HOISTED and not sync.acquire:
        if sync.release:
            return HAZARD, RULE_RELEASE_ONLY.format(sync=name)
        return HAZARD, RULE_NO_ORDER.format(sync=name, why="it neither releases nor acquires")
    if (direction == HOISTED and sync.orders_only is not None and mem.instr.index not in sync.orders_only
            and mem.sem not in ("release", "acq_rel")):
        return HAZARD, RULE_ASYNC_WAIT_OTHER.format(sync=name)
    if not semantics.proxy_fence_covers(sync.space, {"cluster": "shared"}.get(mem.space, mem.space)):
        return HAZARD, RULE_NO_ORDER.format(sync=name, why=f"it orders the .{sync.space} state space only and this access is .{mem.space}")
    return FORBIDDEN, RULE_FORBIDDEN[_rule_key(sync)]


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


def _order_consistent(pairs: Sequence[tuple[PtxMemOp, SassMemOp]]) -> bool:
    """True when, for every SASS base register, SASS offset - PTX offset is one constant: the mapping
    agrees with the addresses (ptxas may rebase a pointer, ``[R4.64]`` for ``[%rd1+4]``)."""
    delta: dict[str, int] = {}
    for pm, sm in pairs:
        d = pm.offset - sm.offset
        if delta.setdefault(sm.base, d) != d:
            return False
    return True


def _base_deltas(ptx_offsets: set[int], sass: Sequence[SassMemOp]) -> dict[str, int] | None:
    """For each SASS base register, the one shift that maps all its offsets onto PTX offsets; None
    when some base has no such shift or more than one (ambiguous)."""
    by_base: dict[str, list[SassMemOp]] = {}
    for m in sass:
        by_base.setdefault(m.base, []).append(m)
    out = {}
    for base, ops in by_base.items():
        cands = sorted({po - m.offset for m in ops for po in ptx_offsets})
        feasible = [d for d in cands if all(m.offset + d in ptx_offsets for m in ops)]
        if len(feasible) > 1 and 0 in feasible:
            feasible = [0]  # ptxas addresses from the root pointer itself unless it had to rebase
        if len(feasible) != 1:
            return None
        out[base] = feasible[0]
    return out


def _match_class(cls: str, evs: list[tuple[int, PtxEvent]], sass: list[SassMemOp], instrs: Sequence[PtxInstr],
                 all_mems: Sequence[PtxMemOp] = ()) -> tuple[dict, list, list]:
    """Map the PTX events of one memory class to SASS operations of that class.

    1. Same count and the order-wise pairing agrees with the addresses: take it.
    2. Otherwise, when the offsets identify the operations (one consistent shift per SASS base
       register), map by offset, independent of order: reorders within the class, merges of
       same-address loads, loads combined into a wider access and dead loads are all recognised.
    3. Otherwise, same count: by order (a note says so).  Else nothing is mapped."""
    mapping: dict[int, SassMemOp] = {}
    merged: list = []
    notes: list[str] = []
    mems = [e.mem for _, e in evs]
    if len(sass) == len(evs) and _order_consistent(list(zip(mems, sass))):  # type: ignore[arg-type]
        for (k, _), m in zip(evs, sass):
            mapping[k] = m
        return mapping, merged, notes
    ptx_offsets = {m.offset for m in mems}  # type: ignore[union-attr]
    deltas = _base_deltas(ptx_offsets, sass) if sass else None
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
            ss = exact if len(exact) == len(group) else sorted(exact + cover, key=lambda m: m.instr.index)
            if len(ss) == len(group):
                for (k, _), m in zip(group, ss):
                    mapping[k] = m
                continue
            if not ss:
                for _, e in group:
                    notes.append(f"no SASS {cls} for PTX line {e.instr.line} `{e.instr.text}` (deleted: its result is unused?)")
                continue
            if len(ss) > len(group):
                notes.append(f"{len(group)} PTX {cls} at offset {off:#x} but {len(ss)} in SASS (split?): not mapped")
                continue
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
                continue
            gm = [e.mem for _, e in group]
            if len(ss) == 1 and all(m.kind == "load" for m in gm) and all(_same_address(gm[0], m, instrs) for m in gm[1:]) and not any(  # type: ignore[union-attr,arg-type]
                _forwarding_store(m, all_mems, instrs) for m in gm[1:]):  # type: ignore[arg-type]
                for k, _ in group:
                    mapping[k] = ss[0]
                merged.append((tuple(k for k, _ in group), ss[0]))
                continue
            notes.append(f"{len(group)} PTX {cls} at offset {off:#x} but {len(ss)} in SASS: not mapped")
        return mapping, merged, notes
    if len(sass) == len(evs):
        for (k, _), m in zip(evs, sass):
            mapping[k] = m
        notes.append(f"{cls}: mapped by order (the addresses do not identify the operations)")
        return mapping, merged, notes
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
            return mapping, merged, notes
    notes.append(f"{len(evs)} PTX {cls} operations but {len(sass)} in SASS: not mapped")
    return mapping, merged, notes


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


def _map_memory(events: Sequence[PtxEvent], sass_mem: Sequence[SassMemOp], instrs: Sequence[PtxInstr]) -> tuple[dict, list, list]:
    """PTX event index -> SASS memory operation, the merged groups, and notes: first per class
    (family + strength), then what is left per family (ptxas encodes the cache operators
    ``ld.global.cg/.cv/.ca`` as ``.STRONG.GPU/.SYS/.SM``)."""
    all_mems = [e.mem for e in events if e.mem is not None]
    by_cls_ptx: dict[str, list[tuple[int, PtxEvent]]] = {}
    for k, e in enumerate(events):
        if e.mem_class:
            by_cls_ptx.setdefault(e.mem_class, []).append((k, e))
    by_cls_sass: dict[str, list[SassMemOp]] = {}
    for m in sass_mem:
        by_cls_sass.setdefault(_sass_mem_class(m), []).append(m)
    mem_pos: dict[int, SassMemOp] = {}
    merges: list = []
    notes: list[str] = []

    def take(cls: str, evs: list, ss: list) -> None:
        mp, mg, nt = _match_class(cls, evs, ss, instrs, all_mems)
        notes.extend(n for n in nt if "forwarded" in n or "by order" in n)
        mem_pos.update(mp)
        merges.extend(mg)

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
    return mem_pos, merges, notes


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


def _map_syncs(events: Sequence[PtxEvent], sass: SassFunction, mem_pos: dict) -> tuple[dict, list[str], list[str]]:
    """PTX event index -> (first, last) SASS instruction of that synchronisation point.  Tokens are
    matched by a longest common subsequence; an acquire/release access includes its own SASS access.
    Also returns notes and what is not checked: a point that orders memory (a release or an
    acquire) but was not found in the SASS or emits none."""
    notes: list[str] = []
    unchecked: list[str] = []
    ptx_tokens = [(k, c) for k, e in enumerate(events) for c in e.sync_classes]
    sass_tokens = [t for t in sass.syncs if t.token and t.instr.mainline]
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
        if e.sync is not None and not e.sync_classes and e.mem is None:
            if orders(k):
                unchecked.append(f"`{e.instr.text}` (PTX line {e.instr.line}) has no known SASS: not checked")
            else:
                notes.append(f"`{e.instr.text}` (PTX line {e.instr.line}) emits no SASS and orders no memory operation of its thread")
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
                excess = sorted(inside, key=lambda m: m.instr.index)[own:]
                sides = {sd for sd in side.values() if sd != BOTH}
                if not excess:
                    pass
                elif looped:
                    unchecked.append(f"{len(inside)} SASS {cls} inside the SASS of `{sync.instr.text}`: a PTX {cls} in a loop "
                                     "with it could stand for them, so whether one crossed is not known")
                elif len(sides) == 1:
                    (sd,) = sides
                    direction, anchor = (SUNK, first) if sd == BEFORE else (HOISTED, last)
                    findings.extend(_counted_finding(m, only[sd], 0, len(inside), "inside", direction, events, s, anchor, cls, where)
                                    for m in excess)
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
#: returned true (bench/results/campaign-h200-session4.md)
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


def exit_status(reports: Sequence[Report]) -> int:
    """1 when there is a finding, else 3 when something was not fully checked, else 0."""
    if any(r.findings for r in reports):
        return EXIT_FINDING
    if not all(r.complete for r in reports):
        return EXIT_NOT_FULLY_CHECKED
    return EXIT_CLEAN


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


# ---------------------------------------------------------------------------------------------------
# toolchain edges
# ---------------------------------------------------------------------------------------------------


#: where a CUDA toolkit is installed when its bin/ is not on PATH
TOOLKIT_DIRS: tuple[Path, ...] = (Path("/usr/local/cuda/bin"),)


@functools.lru_cache(maxsize=None)
def find_tool(name: str) -> str | None:
    """``nvdisasm``/``cuobjdump``/``nvcc``/``ptxas``: on PATH, else in the installed nvidia wheels,
    else in :data:`TOOLKIT_DIRS`."""
    p = shutil.which(name)
    if p:
        return p
    try:
        import nvidia  # type: ignore[import-not-found]

        for root in getattr(nvidia, "__path__", []):
            for sub in ("cu13", "cu12", "cuda_nvcc", "cuda_nvdisasm", "cuda_cuobjdump"):
                cand = Path(root) / sub / "bin" / name
                if cand.is_file() and os.access(cand, os.X_OK):
                    return str(cand)
    except ImportError:
        pass
    for cand in (d / name for d in TOOLKIT_DIRS):
        if cand.is_file():
            return str(cand)
    return None


#: how to get each tool, for the one line of :class:`~fuzzgpu.errors.MissingTool`
TOOL_HELP = {
    "nvdisasm": "install it with `pip install nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump` (or `pip install fuzzgpu[sass]`), "
                "or put the CUDA toolkit's bin/ on PATH",
    "cuobjdump": "install it with `pip install nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump` (or `pip install fuzzgpu[sass]`), "
                 "or put the CUDA toolkit's bin/ on PATH",
}
_TOOLKIT_HELP = "install the CUDA toolkit (nvcc, ptxas) and put its bin/ on PATH"


def require_tool(name: str) -> str:
    """The path of a toolchain program; a missing one is the environment's failure (exit 3)."""
    p = find_tool(name)
    if p:
        return p
    raise MissingTool(name, TOOL_HELP.get(name, _TOOLKIT_HELP))


def _first_error(stderr: str, tool: str) -> str:
    lines = [l.strip() for l in stderr.splitlines() if l.strip()]
    for l in lines:
        if "error" in l.lower():
            return l
    return lines[0] if lines else f"{tool} failed"


def _run(cmd: list[str], tool: str) -> subprocess.CompletedProcess:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        raise EnvError(f"cannot run {tool}: {e}") from None
    if r.returncode != 0:
        raise UserError(f"{tool}: {_first_error(r.stderr or r.stdout, tool)}")
    return r


def _ptxas_flags(nvcc_flags: Sequence[str]) -> list[str]:
    out = []
    it = iter(nvcc_flags)
    for f in it:
        if f in ("-Xptxas", "--ptxas-options"):
            out.extend(next(it, "").split(","))
        elif f.startswith(("-Xptxas=", "--ptxas-options=")):
            out.extend(f.split("=", 1)[1].split(","))
    return [f for f in out if f]


def compile_cu(src: Path, arch: str, outdir: Path, opt: int = DEFAULT_OPT, nvcc_flags: Sequence[str] = ()) -> tuple[str, Path]:
    """``.cu`` -> (the compiler's PTX text, cubin path), one nvcc call (``-cubin -keep``)."""
    parse_arch(arch)
    nvcc = require_tool("nvcc")
    outdir.mkdir(parents=True, exist_ok=True)
    cubin = outdir / (src.stem + f".{arch}.cubin")
    cmd = [nvcc, f"-arch={arch}", "-cubin", "-keep", "-keep-dir", str(outdir), f"-O{opt}", f"-Xptxas=-O{opt}",
           *nvcc_flags, "-o", str(cubin), str(src)]
    _run(cmd, "nvcc")
    ptx = outdir / (src.stem + ".ptx")
    if not ptx.is_file():
        cands = sorted(outdir.glob("*.ptx"))
        if not cands:
            raise UserError(f"nvcc kept no PTX for {src}")
        ptx = cands[0]
    return ptx.read_text(), cubin


def assemble_ptx(ptx: Path, arch: str, outdir: Path, opt: int = DEFAULT_OPT, ptxas_flags: Sequence[str] = ()) -> Path:
    parse_arch(arch)
    ptxas = require_tool("ptxas")
    outdir.mkdir(parents=True, exist_ok=True)
    cubin = outdir / (ptx.stem + f".{arch}.cubin")
    _run([ptxas, f"-arch={arch}", f"-O{opt}", *ptxas_flags, "-o", str(cubin), str(ptx)], "ptxas")
    return cubin


def disassemble(cubin: Path) -> str:
    """SASS text of a cubin: ``nvdisasm -c`` when found, else ``cuobjdump -sass``."""
    nvd = find_tool("nvdisasm")
    if nvd:
        # -ndf: no dataflow analysis; the -c listing is identical and ~0.15 s faster
        return _run([nvd, "-c", "-ndf", str(cubin)], "nvdisasm").stdout
    cuo = find_tool("cuobjdump")
    if cuo:
        return _run([cuo, "-sass", str(cubin)], "cuobjdump").stdout
    require_tool("nvdisasm")
    return ""


def cubin_arch(sass_text: str) -> str:
    m = re.search(r"\.target\s+(sm_\w+)|arch\s*=\s*(sm_\w+)", sass_text)
    return (m.group(1) or m.group(2)) if m else "unknown"


def ptx_target(ptx_text: str) -> str:
    m = re.search(r"^\s*\.target\s+(sm_\w+)", ptx_text, re.M)
    return m.group(1) if m else ""


def archs_for_ptx(ptx_text: str, archs: Sequence[str]) -> list[str]:
    """The requested archs the PTX can be assembled for (an ``sm_90a`` target only for itself)."""
    tgt = ptx_target(ptx_text)
    if not tgt:
        return list(archs)
    n, suffix = parse_arch(tgt)
    if suffix:
        return [a for a in archs if a == tgt] or [tgt]
    return [a for a in archs if parse_arch(a)[0] >= n]


def _pmap(fn, items: Sequence):
    if len(items) <= 1:
        return [fn(x) for x in items]
    with _futures.ThreadPoolExecutor(max_workers=min(len(items), os.cpu_count() or 2)) as ex:
        return list(ex.map(fn, items))


def _keep(keep_dir: str | Path | None, stem: str, arch: str, ptx_text: str, sass_text: str) -> tuple[str, ...]:
    """Write the PTX and SASS that a report's line numbers refer to (``--keep DIR``)."""
    if keep_dir is None:
        return ()
    d = Path(keep_dir)
    d.mkdir(parents=True, exist_ok=True)
    ptx_p, sass_p = d / f"{stem}.{arch}.ptx", d / f"{stem}.{arch}.sass"
    ptx_p.write_text(ptx_text)
    sass_p.write_text(sass_text)
    return (str(ptx_p), str(sass_p))


@functools.lru_cache(maxsize=None)
def toolchain_id() -> str:
    """The versions of nvcc, ptxas and the disassembler (part of the cache key)."""
    out = []
    for tool in ("nvcc", "ptxas", "nvdisasm", "cuobjdump"):
        p = find_tool(tool)
        if p:
            r = subprocess.run([p, "--version"], capture_output=True, text=True)
            out.append(f"{tool}:{p}:{r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ''}")
    return "|".join(out)


def _cache_dir(cache_dir: str | Path | None) -> Path | None:
    if cache_dir is not None:
        return Path(cache_dir)
    env = os.environ.get("FUZZGPU_SASS_CACHE")
    return Path(env) if env else None


def _with_cache(cache: Path | None, key_parts: Sequence[str], make) -> tuple[str, str]:
    """``make() -> (ptx_text, sass_text)``, memoised on disk by a content hash when ``cache`` is set."""
    if cache is None:
        return make()
    import hashlib

    key = hashlib.sha256("\0".join((toolchain_id(), *key_parts)).encode()).hexdigest()
    d = cache / key[:2] / key
    if (d / "ptx").is_file() and (d / "sass").is_file():
        return (d / "ptx").read_text(), (d / "sass").read_text()
    ptx_text, sass_text = make()
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=str(cache)))
    (tmp / "ptx").write_text(ptx_text)
    (tmp / "sass").write_text(sass_text)
    d.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.replace(tmp, d)  # atomic: a concurrent writer of the same key loses harmlessly
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
    return ptx_text, sass_text


def check_cu(path: Path, archs: Sequence[str] = DEFAULT_ARCHS, opt: int = DEFAULT_OPT,
             nvcc_flags: Sequence[str] = (), source: str | None = None,
             keep_dir: str | Path | None = None, cache_dir: str | Path | None = None,
             cache_key: str | None = None) -> list[Report]:
    """Compile a ``.cu`` file for each arch (in parallel), disassemble and analyse.

    ``keep_dir``: write ``STEM.ARCH.ptx``/``.sass`` there.  ``cache_key`` (the full source text, for
    generated sources without local includes) with ``cache_dir`` or ``$FUZZGPU_SASS_CACHE`` memoises the
    toolchain output by content hash (with the toolchain versions, arch, -O and flags in the key)."""
    for a in archs:
        parse_arch(a)
    src_name = source or str(path)
    cache = _cache_dir(cache_dir) if cache_key is not None else None
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="fuzzgpu-sass-") as tmp:
        def one(arch: str) -> Report:
            def make() -> tuple[str, str]:
                ptx_text, cubin = compile_cu(path, arch, Path(tmp) / arch, opt, nvcc_flags)
                return ptx_text, disassemble(cubin)
            ptx_text, sass_text = _with_cache(cache, ("cu", cache_key or "", arch, str(opt), *nvcc_flags), make)
            rep = analyse(ptx_text, sass_text, arch, src_name)
            kept = _keep(keep_dir, path.stem, arch, ptx_text, sass_text)
            return dataclasses.replace(rep, notes=rep.notes + tuple(f"kept {k}" for k in kept))
        return _pmap(one, list(archs))


def check_cu_source(text: str, archs: Sequence[str] = DEFAULT_ARCHS, opt: int = DEFAULT_OPT,
                    nvcc_flags: Sequence[str] = (), source: str = "<source>", name: str = "kernels",
                    keep_dir: str | Path | None = None, cache_dir: str | Path | None = None) -> list[Report]:
    """:func:`check_cu` for CUDA source text.  Batch many kernels in one text: one nvcc and one
    nvdisasm call per arch, whatever their number.  Cached by content hash when ``cache_dir`` or
    ``$FUZZGPU_SASS_CACHE`` is set."""
    with tempfile.TemporaryDirectory(prefix="fuzzgpu-sass-src-") as tmp:
        p = Path(tmp) / f"{name}.cu"
        p.write_text(text)
        return check_cu(p, archs, opt, nvcc_flags, source=source, keep_dir=keep_dir, cache_dir=cache_dir,
                        cache_key=text)


def check_ptx(path: Path, archs: Sequence[str] = DEFAULT_ARCHS, opt: int = DEFAULT_OPT,
              nvcc_flags: Sequence[str] = (), keep_dir: str | Path | None = None) -> list[Report]:
    ptx_text = path.read_text()
    use = archs_for_ptx(ptx_text, archs)
    with tempfile.TemporaryDirectory(prefix="fuzzgpu-sass-") as tmp:
        def one(arch: str) -> Report:
            cubin = assemble_ptx(path, arch, Path(tmp) / arch, opt, _ptxas_flags(nvcc_flags))
            sass_text = disassemble(cubin)
            rep = analyse(ptx_text, sass_text, arch, str(path))
            kept = _keep(keep_dir, path.stem, arch, ptx_text, sass_text)
            return dataclasses.replace(rep, notes=rep.notes + tuple(f"kept {k}" for k in kept))
        return _pmap(one, use)


def check_cubin(path: Path) -> list[Report]:
    """A cubin carries no PTX: the PTX it was built from must sit beside it (``NAME.ptx``)."""
    sass_text = disassemble(path)
    arch = cubin_arch(sass_text)
    stem = path.name[: -len(".cubin")]
    cands = [path.with_name(stem + ".ptx")]
    if "." in stem:
        cands.append(path.with_name(stem.split(".")[0] + ".ptx"))
    for c in cands:
        if c.is_file():
            return [analyse(c.read_text(), sass_text, arch, str(path))]
    raise UserError(f"{path}: a cubin has no PTX to compare with; put the PTX it was built from at {cands[0]} or pass the .cu/.ptx")


def check_litmus(path: Path, archs: Sequence[str] = DEFAULT_ARCHS, opt: int = DEFAULT_OPT,
                 nvcc_flags: Sequence[str] = (), keep_dir: str | Path | None = None) -> list[Report]:
    """``.litmus`` -> Program (fuzzgpu.litmus) -> CUDA with one kernel per thread (fuzzgpu.codegen)."""
    try:
        from . import codegen, litmus  # type: ignore[attr-defined]
    except ImportError:
        raise UserError("codegen not available yet: .litmus input needs fuzzgpu.codegen and fuzzgpu.litmus") from None
    if not hasattr(litmus, "parse_file") or not hasattr(codegen, "generate_static"):
        raise UserError("codegen not available yet: needs fuzzgpu.litmus.parse_file and fuzzgpu.codegen.generate_static")
    program = litmus.parse_file(str(path))
    cu = codegen.generate_static(program)
    return check_cu_source(cu, archs, opt, nvcc_flags, source=str(path), name=path.stem, keep_dir=keep_dir)


def check_path(path: str | Path, archs: Sequence[str] = DEFAULT_ARCHS, opt: int = DEFAULT_OPT,
               nvcc_flags: Sequence[str] = (), keep_dir: str | Path | None = None) -> list[Report]:
    """Check one input of any supported kind; ``keep_dir`` receives the PTX and SASS of each arch."""
    p = Path(path)
    if not p.exists():
        raise UserError(f"{path}: no such file")
    if p.is_dir():
        raise UserError(f"{path}: is a folder; pass .cu, .ptx, .cubin or .litmus files")
    suffix = p.suffix.lower()
    if suffix in (".cu", ".cuh"):
        return check_cu(p, archs, opt, nvcc_flags, keep_dir=keep_dir)
    if suffix == ".ptx":
        return check_ptx(p, archs, opt, nvcc_flags, keep_dir=keep_dir)
    if suffix == ".cubin":
        return check_cubin(p)
    if suffix == ".litmus":
        return check_litmus(p, archs, opt, nvcc_flags, keep_dir=keep_dir)
    raise UserError(f"{path}: unknown input type {suffix or '(none)'}; expected .cu, .ptx, .cubin or .litmus")


__all__ = [
    "DEFAULT_ARCHS", "FORBIDDEN", "HAZARD", "CROSSING", "MERGED", "LOOP_DELETED", "DELETED", "UNGUARDED_WAIT",
    "HOISTED", "SUNK", "EXIT_CLEAN", "EXIT_FINDING", "EXIT_ERROR", "EXIT_NOT_FULLY_CHECKED",
    "PtxInstr", "PtxMemOp", "PtxSync", "PtxEvent", "PtxFunction", "PtxLoop",
    "SassInstr", "SassMemOp", "SassSync", "SassFunction", "SassLoop",
    "Finding", "FunctionReport", "Report",
    "parse_ptx", "parse_sass", "analyse", "analyse_function", "judge_crossing",
    "exit_status", "compile_cu", "assemble_ptx", "disassemble", "check_path", "check_cu", "check_cu_source",
    "check_ptx", "check_cubin", "check_litmus", "find_tool", "short_name",
]
