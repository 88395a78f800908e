"""The PDL review (programmatic dependent launch): warnings of their own kind, not compiler verdicts.

1. **read-before-wait**: in a kernel that executes ``griddepcontrol.wait``
   (``cudaGridDependencySynchronize()``), a global-memory read that the PTX -- the source's order --
   places on a path from the kernel's entry that does not pass the wait.  Under PDL the primary grid
   may still be writing: "is this written by the primary grid?"  A reviewer's question, which the
   code alone cannot answer (cutlass #2962, cccl #11569's hand-written "pdl-sync" rule).
2. **compiled-out**: the source calls ``cudaGridDependencySynchronize()`` / ``griddepcontrol.wait``
   or CUTLASS's ``wait_on_dependent_grids()``, but the PTX for the target has no
   ``griddepcontrol.wait`` (cccl #9134, flashinfer #2708; CUTLASS compiles it in only with
   ``-DCUTLASS_ENABLE_GDC_FOR_SM90`` / ``_SM100``).

The path question is answered on a small control-flow graph of the PTX of each kernel
(:func:`reads_before_wait`: blocks split at labels and branches, a breadth-first walk from the entry
that stops at the wait), kept apart so that a fuller CFG module can replace it.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Sequence

READ_BEFORE_WAIT = "read-before-wait"
COMPILED_OUT = "compiled-out"

_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"', re.M)
_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)")
#: an inlined callee's ``.loc`` names the call site of the outermost caller last: the user's line
_INLINED_AT = re.compile(r"inlined_at\s+(\d+)\s+(\d+)")
_FUNC = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+|\.extern\s+)*\.(entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)")
_LABEL = re.compile(r"^\s*([\w$]+):\s*$")
_BRA = re.compile(r"^\s*(@!?%\w+\s+)?bra(?:\.uni)?\s+([\w$]+)\s*;")
_CALL = re.compile(r"\bcall(?:\.uni)?\s*(?:\([^)]*\)\s*,\s*)?([\w$]+)")
#: a read of global memory: ld/ldu of .global (``.nc`` included), a copy or bulk copy from .global,
#: an atomic on .global; generic loads (no state space) are not reported
_GLOBAL_READ = re.compile(r"^\s*(?:@!?%\w+\s+)?((?:ld|ldu)\.global[\w.:]*|cp\.async[\w.:]*\.global[\w.:]*|atom\.global[\w.:]*)\s")
_WAIT = re.compile(r"\bgriddepcontrol\.wait\b")

#: what a source writes to wait for the primary grid (comments removed first)
_SOURCE_WAIT = re.compile(r"\bcudaGridDependencySynchronize\s*\(|griddepcontrol\.wait|\bwait_on_dependent_grids\s*\(")


@dataclass(frozen=True)
class PdlNote:
    """One PDL-review warning."""

    kind: str  # READ_BEFORE_WAIT or COMPILED_OUT
    arch: str
    function: str  # the kernel (mangled); "" for a whole translation unit
    text: str  # the PTX read, or the source text that waits
    ptx_line: int
    src_file: str
    src_line: int
    message: str

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class _Stmt:
    line: int  # 1-based PTX line
    text: str
    src_file: str
    src_line: int


@dataclass(frozen=True)
class _Fn:
    name: str
    entry: bool
    body: tuple[_Stmt, ...]


def _functions(ptx: str) -> list[_Fn]:
    """The functions of a PTX module: their statements (one per line, as nvcc writes them) with the
    ``.loc`` source position in force at each."""
    files = {int(n): os.path.normpath(p) if p else p for n, p in _FILE.findall(ptx)}
    out: list[_Fn] = []
    cur: tuple[str, bool] | None = None
    body: list[_Stmt] = []
    depth = 0
    frames: list[tuple[str, int]] = []  # the .loc run before the next statement, outermost first
    loc = ("", 0)
    fresh = True  # the next .loc starts a new run
    for i, raw in enumerate(ptx.splitlines(), 1):
        line = raw.split("//", 1)[0]
        if cur is None:
            m = _FUNC.match(line)
            if m:
                cur, body, depth, loc, frames, fresh = (m[2], m[1] == "entry"), [], 0, ("", 0), [], True
            if cur is None:
                continue
        lm = _LOC.match(line)
        if lm:
            if fresh:
                frames, fresh = [], False
            frames.extend((files.get(int(f), ""), int(n)) for f, n in _INLINED_AT.findall(line))
            frames.append((files.get(int(lm[1]), ""), int(lm[2])))
            loc = source_line(frames)
            continue
        if depth == 0 and line.strip().endswith(";"):  # a declaration (.extern .func vprintf(...);): no body
            cur = None
            continue
        opened = depth
        depth += line.count("{") - line.count("}")
        if line.strip() and opened > 0:
            body.append(_Stmt(i, line.strip(), *loc))
            fresh = True
        if opened > 0 and depth == 0:
            out.append(_Fn(cur[0], cur[1], tuple(body)))
            cur = None
    return out


#: where the toolkit's and the libraries' headers live: the line a person reads is rarely there
_TOOLKIT = re.compile(r"/cuda[^/]*/(?:targets/[^/]+/)?include/|/cccl/|/nvidia/cu\d+/include/")
_LIBRARY = re.compile(r"/include/(?:cute|cutlass|cub|thrust|cuda)/")


def source_line(frames: Sequence[tuple[str, int]]) -> tuple[str, int]:
    """The source position to report for a statement whose ``.loc`` run (an inlined call chain,
    outermost first) is ``frames``: the innermost frame outside the toolkit's and the libraries'
    headers (CUTLASS, CuTe, CUB), else the innermost outside the toolkit, else the innermost.  So
    an ``__ldg`` is reported at the user's line that calls it, not in ``sm_32_intrinsics.hpp``, and a
    CUTLASS kernel's read at its kernel header's line, not at ``device_kernel.h``'s call of it."""
    named = [f for f in frames if f[0]]
    for keep in (lambda p: not _TOOLKIT.search(p) and not _LIBRARY.search(p), lambda p: not _TOOLKIT.search(p)):
        for f in reversed(named):
            if keep(f[0]):
                return f
    return named[-1] if named else ("", 0)


def _blocks(body: Sequence[_Stmt]) -> tuple[list[list[_Stmt]], dict[str, int], list[set[int]]]:
    """Basic blocks of a body, the block of each label, and each block's successors."""
    blocks: list[list[_Stmt]] = [[]]
    labels: dict[str, int] = {}
    for s in body:
        m = _LABEL.match(s.text)
        if m:
            if blocks[-1]:
                blocks.append([])
            labels[m[1]] = len(blocks) - 1
            continue
        blocks[-1].append(s)
        if _BRA.match(s.text) or re.match(r"^\s*(?:@!?%\w+\s+)?(ret|exit|trap)\b", s.text):
            blocks.append([])
    succ: list[set[int]] = []
    for n, b in enumerate(blocks):
        nxt: set[int] = set()
        last = b[-1].text if b else ""
        m = _BRA.match(last)
        if m:
            if m[2] in labels:
                nxt.add(labels[m[2]])
            if m[1] and n + 1 < len(blocks):  # a conditional branch also falls through
                nxt.add(n + 1)
        elif re.match(r"^\s*(ret|exit|trap)\b", last):
            pass
        elif n + 1 < len(blocks):
            nxt.add(n + 1)
        succ.append(nxt)
    return blocks, labels, succ


def reads_before_wait(body: Sequence[_Stmt], is_wait) -> list[_Stmt]:
    """The global reads on a path from the entry that does not pass a wait (``is_wait(stmt)``):
    a walk over the basic blocks that stops inside a block at its first wait."""
    blocks, _, succ = _blocks(body)
    seen: set[int] = set()
    todo = [0]
    out: list[_Stmt] = []
    while todo:
        n = todo.pop()
        if n in seen or n >= len(blocks):
            continue
        seen.add(n)
        stopped = False
        for s in blocks[n]:
            if is_wait(s):
                stopped = True
                break
            if _GLOBAL_READ.match(s.text):
                out.append(s)
        if not stopped:
            todo.extend(succ[n])
    return sorted(out, key=lambda s: s.line)


def _strip_comments(src: str) -> str:
    src = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), src, flags=re.S)
    return re.sub(r"//[^\n]*", "", src)


#: a definition of a wait, not a call: ``void wait_on_dependent_grids() {``, the runtime's
#: ``void CUDARTAPI cudaGridDependencySynchronize(void)``, and the ``asm`` in such a body
_DEFINES_WAIT = re.compile(r"\bvoid\s+(?:CUDARTAPI\s+)?(?:\w+::)*(?:wait_on_dependent_grids|cudaGridDependencySynchronize)\s*\(")
#: the files that define the waits (their own ``asm("griddepcontrol.wait")`` is no call)
_WAIT_DEFINERS = ("grid_dependency_control.h", "cuda_device_runtime_api.h")


#: a call of a wait function (in a header, an ``asm("griddepcontrol.wait")`` is a helper's body)
_CALLS_WAIT = re.compile(r"\bcudaGridDependencySynchronize\s*\(|\bwait_on_dependent_grids\s*\(")


def source_waits(paths: Iterable[str | Path], asm_too: bool = True) -> list[tuple[str, int, str]]:
    """Where the source files wait for the primary grid, (file, line, text): a call of
    ``cudaGridDependencySynchronize()`` or ``wait_on_dependent_grids()``, or (``asm_too``: for the
    translation unit's own files) a ``griddepcontrol.wait`` in an ``asm`` -- not their definitions,
    not in comments or preprocessor lines, not in the toolkit's headers nor in the files that
    define them."""
    pattern = _SOURCE_WAIT if asm_too else _CALLS_WAIT
    out = []
    for p in paths:
        norm = os.path.normpath(str(p))
        if _TOOLKIT.search(norm) or Path(norm).name in _WAIT_DEFINERS:
            continue
        try:
            text = _strip_comments(Path(p).read_text(errors="replace"))
        except OSError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if pattern.search(line) and not line.lstrip().startswith("#") and not _DEFINES_WAIT.search(line):
                out.append((str(p), n, line.strip()))
    return out


def _cutlass_hint(arch: str, text: str) -> str:
    if "wait_on_dependent_grids" not in text:
        return ""
    fam = "SM100" if arch.startswith("sm_10") else "SM90" if arch.startswith("sm_9") else ""
    return f" (CUTLASS compiles it in only with -DCUTLASS_ENABLE_GDC_FOR_{fam})" if fam else ""


def pdl_compiled_in(ptx: str, sass: str = "") -> bool:
    """The PDL code is in the build: the PTX has ``griddepcontrol`` or the SASS ``ACQBULK``/``PREEXIT``."""
    return "griddepcontrol." in ptx or bool(re.search(r"\b(ACQBULK|PREEXIT)\b", sass))


def review(ptx: str, arch: str, sources: Sequence[str | Path] = ()) -> tuple[PdlNote, ...]:
    """The PDL-review warnings of one module (``ptx``) for ``arch``; ``sources``: the source files to
    look for a wait in (the ``.cu`` input; else the files the PTX's ``.file`` directives name)."""
    fns = _functions(ptx)
    waiting = {f.name for f in fns if any(_WAIT.search(s.text) for s in f.body)}

    def is_wait(s: _Stmt) -> bool:
        if _WAIT.search(s.text):
            return True
        m = _CALL.search(s.text)
        return bool(m and m[1] in waiting)

    notes: list[PdlNote] = []
    for f in fns:
        if not f.entry or not any(is_wait(s) for s in f.body):
            continue
        for s in reads_before_wait(f.body, is_wait):
            where = f"{s.src_file}:{s.src_line}" if s.src_file else f"ptx:{s.line}"
            notes.append(PdlNote(READ_BEFORE_WAIT, arch, f.name, " ".join(s.text.rstrip(";").split()), s.line, s.src_file, s.src_line,
                                 f"global read at {where} before griddepcontrol.wait on a path from the kernel's entry: "
                                 "is this written by the primary grid?"))
    if not any(_WAIT.search(line) for line in ptx.splitlines()):
        # the input's source, and every file the line information names: a header whose code is in
        # the PTX (CUTLASS's kernel headers) and that calls the wait had the call compiled out
        named = sorted({p for p in _FILE_PATHS(ptx) if Path(p).is_file()})
        own = list(dict.fromkeys([*map(str, sources), *(p for p in named if p.endswith(".cu"))]))
        hits = source_waits(own) + source_waits([p for p in named if p not in own], asm_too=False)
        if hits:
            file, line, text = hits[0]
            notes.append(PdlNote(COMPILED_OUT, arch, "", text, 0, file, line,
                                 f"the source waits for the primary grid ({Path(file).name}:{line}: {text[:80]}) but the PTX "
                                 f"for {arch} has no griddepcontrol.wait: PDL compiled out{_cutlass_hint(arch, text)}"))
    return tuple(notes)


def _FILE_PATHS(ptx: str) -> list[str]:  # noqa: N802 -- reads as the directive it collects
    return [p for _, p in _FILE.findall(ptx)]
