"""The toolchain edges, the only part of the oracle that runs programs: ptxas/nvcc, nvdisasm and
cuobjdump as subprocesses (:func:`compile_cu`, :func:`assemble_ptx`, :func:`disassemble`), the
on-disk cache of their output, and the ``check_*`` entry points that feed it to :func:`analyse`."""

from __future__ import annotations

import concurrent.futures as _futures
import contextlib
import dataclasses
import functools
import gc
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Callable, Iterator, Mapping, Sequence

from ..errors import EnvError, MissingTool, UserError, clip
from . import pdl
from .buildline import defines_of
from .checks import analyse
from .ptx_parser import parse_ptx
from .report import DEFAULT_ARCHS, DEFAULT_OPT, PdlNote, Report, parse_arch


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
        import nvidia  # type: ignore[import-not-found,import-untyped]  # the wheels' namespace package has no py.typed

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


def temp_dir(prefix: str) -> tempfile.TemporaryDirectory[str]:
    """A scratch folder for a tool's outputs (the other modules of the package import no tempfile)."""
    return tempfile.TemporaryDirectory(prefix=prefix)


def demangle_with_tools(name: str, tools: Sequence[str]) -> str | None:
    """``name`` demangled by the first of ``tools`` on PATH that reads it (a demangler's command
    line: ``cu++filt NAME``); None when none does."""
    for tool in tools:
        exe = shutil.which(tool)
        if exe:
            try:
                r = subprocess.run([exe, name], capture_output=True, text=True, timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                continue
            out = r.stdout.strip()
            if r.returncode == 0 and out and out != name:
                return out
    return None


def _first_error(stderr: str, tool: str) -> str:
    """The first line of a failed tool's output that says an error (ptxas says ``fatal``), else its first line."""
    lines = [l.strip() for l in stderr.splitlines() if l.strip()]
    for l in lines:
        if "error" in l.lower() or "fatal" in l.lower():
            return l
    return lines[0] if lines else f"{tool} failed"


def arg_path(path: Path) -> str:
    """``path`` as a tool's argument: a relative path gets ``./`` so that a user's file named
    ``-o.cu`` or ``-DX.cu`` is never read as an option."""
    s = str(path)
    return s if s.startswith("/") else os.path.join(".", s)


def shown_path(path: str | Path) -> str:
    """A path as an error line names it: one printable line (a file name may hold a newline or a
    terminal escape), at most 200 characters."""
    return clip(str(path), 200)


def rename_paths(text: str, names: Mapping[str, str]) -> str:
    """A tool's output with each path it was given (a key of ``names``) replaced by the name the
    user knows the file by, longest first, in one pass (a replacement is never renamed again)."""
    keys = sorted((k for k in names if k), key=len, reverse=True)
    if not keys:
        return text
    return re.sub("|".join(map(re.escape, keys)), lambda m: names[m.group(0)], text)


#: how nvcc relays an error of the ptxas it runs on its intermediate PTX
_PTXAS_AT = re.compile(r"ptxas (?P<path>.+?\.ptx), line (?P<line>\d+);\s*(?P<rest>.*)")


def intermediate_ptx_error(line: str, keep_dir: Path, shown: str) -> str:
    """nvcc's error ``line``, where it is ptxas's about the intermediate PTX that nvcc wrote to
    ``keep_dir`` (a temporary folder the user never sees), as an error about ``shown``: the line of
    that PTX and its text.  Any other line is returned as it is."""
    m = _PTXAS_AT.fullmatch(line)
    if m is None or Path(m["path"]).parent != keep_dir:
        return line
    n = int(m["line"])
    try:
        lines = Path(m["path"]).read_text(errors="replace").splitlines()
    except OSError:
        lines = []
    code = lines[n - 1].strip() if 0 < n <= len(lines) else ""
    at = f"line {n} of the PTX nvcc made from it" + (f" ({clip(code, 120)!r})" if code else "")
    return f"{shown}: ptxas, {at}: {' '.join(m['rest'].split())}"


def _run(cmd: list[str], tool: str, names: Mapping[str, str] | None = None,
         explain: Callable[[str], str] | None = None, cwd: str | None = None) -> subprocess.CompletedProcess:
    """Run a tool (in ``cwd``); a failure is one line: its first error, with the paths of ``names``
    renamed (:func:`rename_paths`) and then passed through ``explain``."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd or None)
    except OSError as e:
        raise EnvError(f"cannot run {tool}: {e}") from None
    if r.returncode != 0:
        line = _first_error(rename_paths(r.stderr or r.stdout, names or {}), tool)
        raise UserError(f"{tool}: {explain(line) if explain else line}")
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


#: a hint for an nvcc error line that names no way out by itself
_HINTS = (
    ("Optimized debugging not supported",
     "-G (device debug) needs ptxas -O0: add -O 0 (fuzzgpu sass --nvcc-flag=-G -O 0 FILE.cu)"),
    ("is not allowed when compiling for multiple GPU code instances",
     "give one target per arch (-gencode=arch=compute_90a,code=sm_90a); fuzzgpu sass compiles each target alone"),
    ("Unresolved extern",
     "the PTX of a relocatable (-rdc) build, which ptxas assembles here as a whole program: check the cubin its build made "
     "(ptxas -c) with --ptx FILE, or the .cu with its build line after --"),
)


def hint(line: str) -> str:
    """nvcc's error ``line`` with a hint of what to do, when one of :data:`_HINTS` applies."""
    for needle, what in _HINTS:
        if needle in line:
            return f"{line} (hint: {what})"
    return line


def arch_flags(arch: str, virtual: str = "") -> list[str]:
    """nvcc's flags for one GPU code: ``-arch=sm_90a`` (PTX of its own arch), or the PTX of another
    virtual arch assembled for ``arch`` (``-arch=compute_80 -code=sm_90``)."""
    if not virtual or virtual == "compute_" + arch[3:]:
        return [f"-arch={arch}"]
    return [f"--gpu-architecture={virtual}", f"--gpu-code={arch}"]


#: characters of an input's path that nvcc's shell would interpret (:func:`nvcc_input` refuses them)
_SHELL_SPECIAL = frozenset("$`\"'\\!;&|<>(){}*?")


def nvcc_input(arg: str, name: str) -> str:
    """``arg``, the path nvcc is given for input ``name``, when nvcc can take it: nvcc hands its input's
    name to a shell (a file named ``y$(touch X).cu`` ran the command, a quote broke the call), so a
    path with a character that shell would interpret, or a control character, is refused."""
    special = sorted({c for c in arg if c in _SHELL_SPECIAL or not c.isprintable()})
    if special:
        raise UserError(f"{name}: its path has {' '.join(repr(c) for c in special)}, which nvcc's shell would interpret: "
                        "rename the file (or copy it to a plain name) and check that")
    return arg


def compile_cu(src: Path, arch: str, outdir: Path, opt: int = DEFAULT_OPT, nvcc_flags: Sequence[str] = (),
               shown: str | None = None, virtual: str = "", cwd: str | None = None) -> tuple[str, Path]:
    """``.cu`` -> (the compiler's PTX text, cubin path), one nvcc call (``-cubin -keep``), in ``cwd``.

    A compile error is one line about ``shown`` (default: ``src``), never about a file of the
    temporary ``outdir``: nvcc's ``file:line`` names it, and a ptxas error on nvcc's intermediate
    PTX gives that PTX's line and text (:func:`intermediate_ptx_error`); an error with a known way
    out gets a hint (:func:`hint`: ``-G`` without ``-O 0``)."""
    parse_arch(arch)
    nvcc = require_tool("nvcc")
    outdir.mkdir(parents=True, exist_ok=True)
    cubin = outdir / (src.stem + f".{arch}.cubin")
    arg = str(src) if src.is_absolute() else arg_path(src)
    name = shown_path(src) if shown is None else shown
    nvcc_input(arg, name)
    # nvcc takes its input's language from the suffix and knows no .cuh ("Don't know what to do with")
    lang = [] if src.suffix == ".cu" else ["-x", "cu"]
    # line information (.loc in the PTX, .debug_line in the cubin) attributes each finding to its
    # source line and pairs inlined copies; it does not change the code (the SASS of tests/kernels
    # is identical with and without it on sm_90 and sm_100a, docs/sass.md)
    lineinfo = [] if {"-G", "--device-debug", "-lineinfo", "--generate-line-info"} & set(nvcc_flags) else ["-lineinfo"]
    cmd = [nvcc, *arch_flags(arch, virtual), "-cubin", "-keep", "-keep-dir", str(outdir), f"-O{opt}",
           f"-Xptxas=-O{opt}", *lineinfo, *nvcc_flags, "-o", str(cubin), *lang, arg]
    _run(cmd, "nvcc", {arg: name}, lambda line: hint(intermediate_ptx_error(line, outdir, name)), cwd=cwd)
    ptx = outdir / (src.stem + ".ptx")
    if not ptx.is_file():
        cands = sorted(outdir.glob("*.ptx"))
        if not cands:
            raise UserError(f"nvcc kept no PTX for {name}")
        ptx = cands[0]
    return ptx.read_text(), cubin


def preprocessed_hash(src: Path, arch: str, nvcc_flags: Sequence[str], virtual: str = "",
                      cwd: str | None = None, shown: str | None = None) -> str:
    """The SHA-256 of nvcc's device-side preprocessed source (``nvcc -E``, with ``__CUDA_ARCH__`` of
    ``arch`` and the flags' defines and include paths): every header the kernel reads is in it, so
    a cached result is never used after an edit of any of them."""
    import hashlib

    nvcc = require_tool("nvcc")
    name = shown_path(src) if shown is None else shown
    arg = nvcc_input(str(src) if src.is_absolute() else arg_path(src), name)
    lang = [] if src.suffix == ".cu" else ["-x", "cu"]
    cmd = [nvcc, *arch_flags(arch, virtual), "-E", *nvcc_flags, *lang, arg]
    out = _run(cmd, "nvcc", {arg: name}, hint, cwd=cwd).stdout
    return hashlib.sha256(out.encode()).hexdigest()


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/fuzzgpu/sass``, else ``~/.cache/fuzzgpu/sass``: where ``fuzzgpu sass``
    keeps the PTX and SASS of the ``.cu`` files it compiled (``--no-cache`` to go without)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "fuzzgpu" / "sass"


def assemble_ptx(ptx: Path, arch: str, outdir: Path, opt: int = DEFAULT_OPT, ptxas_flags: Sequence[str] = ()) -> Path:
    parse_arch(arch)
    ptxas = require_tool("ptxas")
    outdir.mkdir(parents=True, exist_ok=True)
    cubin = outdir / (ptx.stem + f".{arch}.cubin")
    arg = arg_path(ptx)
    _run([ptxas, f"-arch={arch}", f"-O{opt}", *ptxas_flags, "-o", str(cubin), arg], "ptxas", {arg: shown_path(ptx)}, hint)
    return cubin


#: the instructions nvdisasm's dataflow analysis annotates (seen with 13.0 on fuzzgpu's kernels, CUB's and
#: the test reproducers'): an indirect branch's targets, ``BRX R6 -0x120 (*"BRANCH_TARGETS .L_x_12,..."*)``,
#: which the control-flow graph needs, and a register spill, ``STL [R1], R32 (*"SpillRefill"*)``
_DATAFLOW_ANNOTATED = re.compile(r"\b(?:BRXU?|JMXU?|STL|LDL)\b")


def disassemble(cubin: Path, ndf_first: bool = False) -> str:
    """SASS text of a cubin: ``nvdisasm -c -gi`` when found, else ``cuobjdump -sass``.

    ``ndf_first`` (fuzzgpu's generated kernels: the static check's, the harness's): nvdisasm runs
    first without its dataflow analysis (``-ndf``: a fifth less CPU a call on the VM,
    ``bench/results/throughput/ndf/compile-phases.md``), and again with it only when the listing has an instruction the
    analysis annotates (:data:`_DATAFLOW_ANNOTATED`): the text is the one a plain ``nvdisasm -c -gi``
    prints either way (``tests/sass/test_disassemble.py``).  Not for a user's kernels, whose spills
    and jump tables would make most calls two (a large cubin's ``-ndf`` pass costs ~85% of a full one)."""
    nvd = find_tool("nvdisasm")
    if nvd:
        # -gi: the source line of each instruction with its inlining chain (comments; nothing
        # without line info)
        names = {arg_path(cubin): shown_path(cubin)}
        if ndf_first:
            quick = _run([nvd, "-c", "-gi", "-ndf", arg_path(cubin)], "nvdisasm", names).stdout
            if not _DATAFLOW_ANNOTATED.search(quick):
                return quick
        return _run([nvd, "-c", "-gi", arg_path(cubin)], "nvdisasm", names).stdout
    cuo = find_tool("cuobjdump")
    if cuo:
        return _run([cuo, "-sass", arg_path(cubin)], "cuobjdump", {arg_path(cubin): shown_path(cubin)}).stdout
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


def analysed(ptx_text: str, sass_text: str, arch: str, source: str, sources: Sequence[str | Path] = (),
             nvcc_flags: Sequence[str] = ()) -> Report:
    """:func:`~fuzzgpu.sass.checks.analyse` with the PDL review of the same PTX, parsed once
    (:func:`fuzzgpu.sass.pdl.review`; ``sources``: the files to look for a wait in), whether PDL code
    is compiled in, and the ``-D`` macros."""
    with _gc_paused():
        rep, notes = _analysed(ptx_text, sass_text, arch, source, sources)
    return dataclasses.replace(rep, pdl=notes, pdl_compiled_in=pdl.pdl_compiled_in(ptx_text, sass_text),
                               defines=defines_of(nvcc_flags))


def _analysed(ptx_text: str, sass_text: str, arch: str, source: str,
              sources: Sequence[str | Path]) -> tuple[Report, tuple[PdlNote, ...]]:
    """The report and the PDL review; the parsed PTX is freed when this returns (see :func:`_gc_paused`)."""
    funcs = parse_ptx(ptx_text)
    rep = analyse(ptx_text, sass_text, arch, source, funcs)
    return rep, pdl.review(ptx_text, rep.arch, sources, funcs)


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while one module is analysed, and resumed after
    (if it ran before): the parsers and the analysis make tens of thousands of small objects that
    form no cycles (reference counting frees them), and the collections they trigger cost about a
    seventh of the analysis of a large module (DeepEP's intranode.cu).  The collector counts the
    objects made while it was paused, so its first collection after it resumes looks at every one
    still alive: the parsed functions are freed before it resumes (:func:`_analysed` returns only
    the report), or that one collection costs what the paused ones would have."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


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

    # "lineinfo-gi": the listings carry line information since issue 26 (an older entry does not)
    key = hashlib.sha256("\0".join((toolchain_id(), "lineinfo-gi", *key_parts)).encode()).hexdigest()
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
             cache_key: str | None = None, shown: str | None = None,
             virtual: Mapping[str, str] | None = None, cwd: str | None = None,
             file_cache: str | Path | None = None, defaults: bool = False,
             runtime_header: str | None = None) -> list[Report]:
    """Compile a ``.cu`` file for each arch (in parallel), disassemble and analyse.

    ``runtime_header``: what nvcc pre-includes instead of cuda_runtime.h (:func:`runtime_header_flags`;
    fuzzgpu's generated sources); its flags are the compile's own, not the user's, so no report shows them.
    A module compiled with it is fuzzgpu's own code, disassembled ``ndf_first`` (:func:`disassemble`).

    ``defaults``: the archs are the default ones, not the user's: an arch whose ptxas refuses an
    instruction of the source (``not supported on .target 'sm_90'``: sm_90a-only wgmma, tensormap) is
    left out and the other reports' notes say so; only when every arch is refused is it an error.

    ``shown``: what a compile error calls the file (default: ``path``; :func:`check_cu_source`
    names the user's file the text was generated from, never its temporary copy).  ``virtual``:
    the PTX arch of each real arch when it is not the arch's own (``-arch=compute_80 -code=sm_90``);
    ``cwd``: the folder nvcc runs in (a compile command's).

    ``keep_dir``: write ``STEM.ARCH.ptx``/``.sass`` there.  ``cache_key`` (the full source text, for
    generated sources without local includes) with ``cache_dir`` or ``$FUZZGPU_SASS_CACHE`` memoises the
    toolchain output by content hash (with the toolchain versions, arch, -O and flags in the key).
    ``file_cache``: a folder that memoises a ``.cu`` file's output keyed by its preprocessed source
    (:func:`preprocessed_hash`: the file and every header it includes), the arch, -O, the flags and
    the toolchain versions."""
    for a in archs:
        parse_arch(a)
    src_name = source or str(path)
    virt = dict(virtual or {})
    cache = Path(file_cache) if file_cache is not None else _cache_dir(cache_dir) if cache_key is not None else None
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="fuzzgpu-sass-") as tmp:
        def one(arch: str) -> Report:
            v = virt.get(arch, "")

            def make() -> tuple[str, str]:
                lean = runtime_header_flags(Path(tmp), runtime_header) if runtime_header is not None else []
                ptx_text, cubin = compile_cu(path, arch, Path(tmp) / arch, opt, [*nvcc_flags, *lean], shown, v, cwd)
                return ptx_text, disassemble(cubin, ndf_first=runtime_header is not None)
            key = cache_key if cache_key is not None else (
                "pp:" + preprocessed_hash(path, arch, nvcc_flags, v, cwd, shown) if file_cache is not None else "")
            header = () if runtime_header is None else ("runtime header", runtime_header)
            ptx_text, sass_text = _with_cache(cache, ("cu", key, arch, v, str(opt), *nvcc_flags, *header), make)
            rep = analysed(ptx_text, sass_text, arch, src_name,
                           () if cache_key is not None else (path if cwd is None or path.is_absolute() else Path(cwd) / path,),
                           nvcc_flags)
            kept = _keep(keep_dir, path.stem, arch, ptx_text, sass_text)
            return dataclasses.replace(rep, notes=rep.notes + tuple(f"kept {k}" for k in kept))

        def lenient(arch: str) -> Report | UserError:
            try:
                return one(arch)
            except UserError as e:
                if defaults and _NOT_ON_TARGET.search(str(e)):
                    return e
                raise
        done = _pmap(lenient, list(archs))
    refused = {a: r for a, r in zip(archs, done) if isinstance(r, UserError)}
    reports = [r for r in done if isinstance(r, Report)]
    if not reports and refused:
        a, e = next(iter(refused.items()))
        raise UserError(f"{e} (none of the default archs {' '.join(archs)} compiles it: --arch names the targets to check)")
    note = tuple(f"not checked for {a} (a default arch; --arch names the targets to check): {str(e).splitlines()[0]}"
                 for a, e in refused.items())
    return [dataclasses.replace(r, notes=r.notes + note) for r in reports] if note else reports


#: ptxas refusing an instruction for the arch (``Instruction 'wgmma.mma_async' not supported on .target
#: 'sm_90'``; ``... requires .target sm_90a``)
_NOT_ON_TARGET = re.compile(r"not supported on \.target '?sm_\w+|requires \.target sm_\w+")


def check_cu_source(text: str, archs: Sequence[str] = DEFAULT_ARCHS, opt: int = DEFAULT_OPT,
                    nvcc_flags: Sequence[str] = (), source: str = "<source>", name: str = "kernels",
                    keep_dir: str | Path | None = None, cache_dir: str | Path | None = None,
                    runtime_header: str | None = None) -> list[Report]:
    """:func:`check_cu` for CUDA source text.  Batch many kernels in one text: one nvcc and one
    nvdisasm call per arch, whatever their number.  Cached by content hash when ``cache_dir`` or
    ``$FUZZGPU_SASS_CACHE`` is set.  ``runtime_header``: the text nvcc pre-includes instead of
    cuda_runtime.h (:func:`runtime_header_flags`)."""
    with tempfile.TemporaryDirectory(prefix="fuzzgpu-sass-src-") as tmp:
        p = Path(tmp) / f"{name}.cu"
        p.write_text(text)
        return check_cu(p, archs, opt, nvcc_flags, source=source, keep_dir=keep_dir, cache_dir=cache_dir,
                        cache_key=text, shown=f"{shown_path(source)} (generated CUDA)", runtime_header=runtime_header)


#: the file :func:`runtime_header_flags` writes
RUNTIME_HEADER = "fuzzgpu_runtime.cuh"


def runtime_header_flags(folder: Path, text: str) -> list[str]:
    """nvcc's flags to pre-include ``text`` instead of cuda_runtime.h, written to ``folder`` as
    :data:`RUNTIME_HEADER` (a temporary folder of the compile: the caller keys its cache by ``text``,
    not by these flags).  nvcc pre-includes cuda_runtime.h in every compile, and parsing it is most of
    a call's fixed CPU cost; defining its include guard, ``__CUDA_RUNTIME_H__``, skips it.  For
    fuzzgpu's generated modules, whose few CUDA declarations ``text`` holds
    (``fuzzgpu/codegen/cuda_decls.cuh``: the same builtins, so the same PTX and SASS)."""
    path = folder / RUNTIME_HEADER
    path.write_text(text)
    return ["-D__CUDA_RUNTIME_H__", "-include", str(path)]


def check_ptx(path: Path, archs: Sequence[str] = DEFAULT_ARCHS, opt: int = DEFAULT_OPT,
              nvcc_flags: Sequence[str] = (), keep_dir: str | Path | None = None) -> list[Report]:
    ptx_text = path.read_text()
    use = archs_for_ptx(ptx_text, archs)
    with tempfile.TemporaryDirectory(prefix="fuzzgpu-sass-") as tmp:
        def one(arch: str) -> Report:
            cubin = assemble_ptx(path, arch, Path(tmp) / arch, opt, _ptxas_flags(nvcc_flags))
            sass_text = disassemble(cubin)
            rep = analysed(ptx_text, sass_text, arch, str(path), (), nvcc_flags)
            kept = _keep(keep_dir, path.stem, arch, ptx_text, sass_text)
            return dataclasses.replace(rep, notes=rep.notes + tuple(f"kept {k}" for k in kept))
        return _pmap(one, use)


def check_litmus(path: Path, archs: Sequence[str] = DEFAULT_ARCHS, opt: int = DEFAULT_OPT,
                 nvcc_flags: Sequence[str] = (), keep_dir: str | Path | None = None,
                 chosen: bool = True) -> list[Report]:
    """``.litmus`` -> Program (fuzzgpu.litmus) -> CUDA with one kernel per thread (fuzzgpu.codegen).
    An arch that lacks one of the program's instructions (tcgen05: sm_100a; tensormap.replace: an
    ``a`` target) is refused before nvcc runs (exit 2) when the user ``chosen`` it; among the default
    archs it is left out, and each report's notes say so (all left out: refused)."""
    try:
        from .. import codegen, litmus
    except ImportError:
        raise UserError("codegen not available yet: .litmus input needs fuzzgpu.codegen and fuzzgpu.litmus") from None
    if not hasattr(litmus, "parse_file") or not hasattr(codegen, "generate_static"):
        raise UserError("codegen not available yet: needs fuzzgpu.litmus.parse_file and fuzzgpu.codegen.generate_static")
    program = litmus.parse_file(str(path))
    try:
        cu = codegen.generate_static(program)
    except codegen.Unrunnable as e:
        raise UserError(f"{path}: {e}") from None  # the file, not only the test's name
    lacking: dict[str, list[str]] = {}
    for a in archs:
        try:
            codegen.generate_static(program, a)
        except codegen.Unrunnable as e:
            lacking[a] = list(e.reasons)
    use = [a for a in archs if a not in lacking]
    if lacking and (chosen or not use):
        a, r = next(iter(lacking.items()))
        raise UserError(f"{path}: {'; '.join(r)} (--arch names the targets to check)")
    # compiled as the static backend compiles it (codegen.CUDA_DECLS: the same SASS as with cuda_runtime.h)
    reports = check_cu_source(cu, use, opt, nvcc_flags, source=str(path), name=path.stem, keep_dir=keep_dir,
                              runtime_header=codegen.CUDA_DECLS)
    note = tuple(f"not checked for {a}: {'; '.join(r)}" for a, r in lacking.items())
    return [dataclasses.replace(rep, notes=rep.notes + note) for rep in reports] if note else reports
