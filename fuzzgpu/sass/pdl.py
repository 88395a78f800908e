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

The path question is answered on the PTX control-flow graph of :mod:`fuzzgpu.sass.cfg`, the one the
crossing check uses, over the functions :func:`fuzzgpu.sass.ptx_parser.parse_ptx` parsed (the analysis
passes its own, so the PTX is parsed once): a read is before the wait when some path from the entry
runs no wait before it (:func:`fuzzgpu.sass.cfg.min_marks`, the fewest waits on a path, is 0).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Callable, Iterable, Sequence

from .cfg import min_marks, ptx_cfg
from .file_names import ptx_file_name
from .ptx_parser import PtxFunction, PtxInstr, parse_ptx
from .report import COMPILED_OUT, READ_BEFORE_WAIT, PdlNote

#: ``.file N "NAME"`` anywhere (:func:`_FILE_PATHS` keeps those with only blanks before them since
#: a line's start: a pattern that starts with ``^`` would be tried at every position of the text)
_FILE = re.compile(r'\.file\s+(\d+)\s+"([^"]*)"')
_CALL = re.compile(r"\bcall(?:\.uni)?\s*(?:\([^)]*\)\s*,\s*)?([\w$]+)")
#: the state-space qualifiers of an asynchronous copy (PTX ISA cp.async, cp.async.bulk[.tensor]: ``.dst.src``)
_COPY_SPACES = frozenset(("global", "shared", "shared::cta", "shared::cluster"))
_WAIT = re.compile(r"\bgriddepcontrol\.wait\b")
#: a kernel in the PTX (``.entry``)
_ENTRY = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+)?\.entry\s", re.M)

#: what a source writes to wait for the primary grid (comments removed first)
_SOURCE_WAIT = re.compile(r"\bcudaGridDependencySynchronize\s*\(|griddepcontrol\.wait|\bwait_on_dependent_grids\s*\(")

__all__ = ["COMPILED_OUT", "READ_BEFORE_WAIT", "PdlNote", "pdl_compiled_in", "reads_before_wait", "reads_global", "review",
           "source_line", "source_waits"]


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


def _user_line(ins: PtxInstr) -> tuple[str, int]:
    """The source line of a PTX instruction to report (:func:`source_line` over its inlining chain,
    outermost first, the file names normalised)."""
    return source_line([(os.path.normpath(f) if f else f, n) for f, n in reversed(ins.src)])


def _called_at(ins: PtxInstr, at: tuple[str, int]) -> str:
    """`` (inlined at FILE:LINE)`` -- where the function holding ``at`` (a frame of ``ins``'s inlining
    chain) was called from, outside the toolkit's headers -- when there is such a caller: reads of one
    helper from several call sites stay told apart; "" otherwise."""
    chain = [(os.path.normpath(f) if f else f, n) for f, n in ins.src]  # innermost first
    if at not in chain:
        return ""
    for f, n in chain[chain.index(at) + 1:]:
        if f and not _TOOLKIT.search(f):
            return f" (inlined at {Path(f).name}:{n})"
    return ""


def reads_before_wait(fn: PtxFunction, is_wait: Callable[[PtxInstr], bool]) -> list[PtxInstr]:
    """The global reads of ``fn`` on a path from the entry that runs no wait (``is_wait``) before
    them: on the PTX control-flow graph, the fewest waits any path runs before the read is 0."""
    waits = {ins.index: 1 for ins in fn.instrs if is_wait(ins)}
    before = min_marks(ptx_cfg(fn), waits)
    return [ins for ins in fn.instrs if reads_global(ins) and before(ins.index) == 0]


def reads_global(ins: PtxInstr) -> bool:
    """Does ``ins`` read global memory into the program: an ``ld``/``ldu``/``atom`` of the ``.global`` state
    space, wherever its qualifier stands (``ld.global.nc``, ``ld.volatile.global``, ``ld.relaxed.gpu.global``,
    ``atom.relaxed.gpu.global.add``), or an asynchronous copy whose source is ``.global`` -- the second of its
    state spaces, ``.dst.src`` (PTX ISA cp.async, cp.async.bulk, cp.async.bulk.tensor): ``cp.async.ca.shared.global``
    and a TMA load ``.shared::cluster.global`` read it; a bulk or TMA store (``.global.shared::cta``) writes it.
    A prefetch (``cp.async.bulk.prefetch[.tensor]...L2.global``) brings data into L2, the point of coherence
    for global memory, and returns none to the program: not a read.  Generic loads (no state space) are not
    reported."""
    mods = ins.mods
    if ins.opcode in ("ld", "ldu", "atom"):
        return "global" in mods
    if ins.opcode == "cp" and mods[:1] == ("async",) and "prefetch" not in mods:
        return [m for m in mods if m in _COPY_SPACES][1:2] == ["global"]
    return False


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
    return "griddepcontrol." in ptx or (("ACQBULK" in sass or "PREEXIT" in sass) and bool(re.search(r"\b(ACQBULK|PREEXIT)\b", sass)))


def review(ptx: str, arch: str, sources: Sequence[str | Path] = (),
           funcs: Sequence[PtxFunction] | None = None) -> tuple[PdlNote, ...]:
    """The PDL-review warnings of one module (``ptx``) for ``arch``; ``sources``: the source files to
    look for a wait in (the ``.cu`` input; else the files the PTX's ``.file`` directives name);
    ``funcs``: the module's functions as :func:`~fuzzgpu.sass.ptx_parser.parse_ptx` gives them, when
    the caller has them (else the PTX is parsed here, only if it has a wait)."""
    notes: list[PdlNote] = []
    if "griddepcontrol.wait" in ptx and _WAIT.search(ptx):
        fns = parse_ptx(ptx) if funcs is None else funcs
        waiting = {f.name for f in fns if any(_WAIT.search(i.text) for i in f.instrs)}

        def is_wait(ins: PtxInstr) -> bool:
            if _WAIT.search(ins.text):
                return True
            m = _CALL.search(ins.text) if ins.opcode == "call" else None
            return bool(m and m[1] in waiting)

        for f in fns:
            if not f.entry or not any(is_wait(i) for i in f.instrs):
                continue
            for ins in reads_before_wait(f, is_wait):
                file, line = _user_line(ins)
                where = f"{file}:{line}{_called_at(ins, (file, line))}" if file else f"ptx:{ins.line}"
                notes.append(PdlNote(READ_BEFORE_WAIT, arch, f.name, ins.text.rstrip(";"), ins.line, file, line,
                                     f"global read at {where} before griddepcontrol.wait on a path from the kernel's entry: "
                                     "is this written by the primary grid?"))
    elif _ENTRY.search(ptx):  # a module with no kernel (a template never instantiated) compiled nothing out
        # the input's source, and every file the line information names: a header whose code is in
        # the PTX (CUTLASS's kernel headers) and that calls the wait had the call compiled out
        named = sorted({p for p in _FILE_PATHS(ptx) if Path(p).is_file()})
        own = list(dict.fromkeys([*map(str, sources), *(p for p in named if p.endswith(".cu"))]))
        emitted = _loc_lines(ptx)
        # a header's call counts only where the function around it has code in the PTX: a helper the translation unit
        # never calls (ggml's ``ggml_cuda_pdl_sync`` in common.cuh, in every TU) compiled nothing out
        hits = source_waits(own) + [h for h in source_waits([p for p in named if p not in own], asm_too=False)
                                    if _in_emitted_function(h[0], h[1], emitted.get(os.path.normpath(h[0])))]
        if hits:
            file, line, text = hits[0]
            notes.append(PdlNote(COMPILED_OUT, arch, "", text, 0, file, line,
                                 f"the source waits for the primary grid ({Path(file).name}:{line}: {text[:80]}) but the PTX "
                                 f"for {arch} has no griddepcontrol.wait: PDL compiled out{_cutlass_hint(arch, text)}"))
    return tuple(notes)


_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)", re.M)
#: text before a ``{`` that opens no function body: a namespace, a class, an ``extern "C"`` block, an initialiser
_NOT_A_BODY = re.compile(r'(\bnamespace\b[^;{}()]*|\b(?:struct|class|union|enum)\b[^;{}()]*|\bextern\s*"C"\s*|=\s*)$')


def _loc_lines(ptx: str) -> dict[str, frozenset[int]]:
    """The source lines the PTX's ``.loc`` directives give code to, per file (its ``.file`` path, normalised)."""
    files = {m.group(1): os.path.normpath(ptx_file_name(m.group(2))) for m in _FILE.finditer(ptx)}
    out: dict[str, set[int]] = {}
    for m in _LOC.finditer(ptx):
        if m.group(1) in files:
            out.setdefault(files[m.group(1)], set()).add(int(m.group(2)))
    return {f: frozenset(v) for f, v in out.items()}


def function_lines(src: str, line: int) -> tuple[int, int] | None:
    """The lines of the function body around ``line`` of C++ source ``src`` (its braces, comments
    left out; the outermost brace block that no namespace, class or ``extern "C"`` opens), or None
    when the line is in none."""
    text = _strip_comments(src)
    stack: list[tuple[int, bool]] = []  # (line of the "{", whether it opens a function body)
    ln, found = 1, None
    for k, ch in enumerate(text):
        if ch == "\n":
            ln += 1
        elif ch == "{":
            is_body = not any(b for _, b in stack) and not _NOT_A_BODY.search(text[max(0, k - 200):k].rstrip())
            stack.append((ln, is_body))
        elif ch == "}" and stack:
            start, is_body = stack.pop()
            if is_body and start <= line <= ln:
                found = (start, ln)
                break
    return found


def _in_emitted_function(path: str, line: int, emitted: frozenset[int] | None) -> bool:
    """Whether the function around ``path:line`` has code in the PTX (a ``.loc`` line inside it); a call the
    scan places in no function, or in a file the PTX gives no ``.loc`` line (``emitted`` None), counts."""
    if emitted is None:
        return True
    try:
        span = function_lines(Path(path).read_text(errors="replace"), line)
    except OSError:
        return True
    return span is None or any(span[0] <= n <= span[1] for n in emitted)


def _FILE_PATHS(ptx: str) -> list[str]:  # noqa: N802 -- reads as the directive it collects
    out = []
    for m in _FILE.finditer(ptx):
        k = m.start()
        while k > 0 and ptx[k - 1].isspace():  # (the blanks before it: a line start among them?)
            k -= 1
        if k == 0 or "\n" in ptx[k:m.start()]:
            out.append(ptx_file_name(m.group(2)))
    return out
