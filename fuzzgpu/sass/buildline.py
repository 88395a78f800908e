"""A real build's nvcc command line as the oracle needs it (pure): which ``.cu`` files it compiles,
for which GPU targets (``-gencode``, ``-arch=compute_X -code=sm_Y``, ``-arch=sm_X``), with which
flags (defines, include paths, ``-std``, ``-Xptxas``...), and what the oracle must leave out to get the
PTX and cubin of one target (``-c``, ``-o``, dependency files, the other targets).  Sources of such a
line: ``fuzzgpu sass -- nvcc ...``, ``--nvcc-flag``, and an entry of a ``compile_commands.json``."""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..errors import UserError, clip
from ..files import read_json

#: the largest JSON input (a compile_commands.json, a baseline) read
MAX_JSON_BYTES = 256 << 20

#: nvcc options that take their value as the next argument (when not written ``-X=V`` or ``-XV``)
_WITH_VALUE = frozenset({
    "-o", "--output-file", "-I", "--include-path", "-isystem", "--system-include", "-D", "--define-macro",
    "-U", "--undefine-macro", "-include", "--pre-include", "-x", "--x", "-std", "--std", "-ccbin",
    "--compiler-bindir", "-Xcompiler", "--compiler-options", "-Xptxas", "--ptxas-options", "-Xlinker",
    "--linker-options", "-Xnvlink", "--nvlink-options", "-Xfatbin", "--fatbin-options", "-Xcudafe",
    "-gencode", "--generate-code", "-arch", "--gpu-architecture", "-code", "--gpu-code", "-MF",
    "--dependency-output", "-MT", "-MQ", "-L", "--library-path", "-l", "--library", "-t", "--threads",
    "-maxrregcount", "--maxrregcount", "--default-stream", "-default-stream", "-odir", "--output-directory",
    "-keep-dir", "--keep-dir", "-time", "--time", "-diag-suppress", "--diag-suppress", "-isystem-after",
    "-rdc", "--relocatable-device-code", "-O", "--optimize", "-split-compile", "--split-compile",
})
#: options that only say what to produce, or where: the oracle makes its own PTX and cubin
_DROP = frozenset({
    "-c", "--compile", "-dc", "--device-c", "-dw", "--device-w", "-cubin", "--cubin", "-ptx", "--ptx",
    "-fatbin", "--fatbin", "-E", "--preprocess", "-M", "-MM", "-MD", "-MMD", "-MP", "--generate-dependencies",
    "-keep", "--keep", "-shared", "--shared", "-lib", "--lib", "-link", "--link", "-v", "--verbose",
    "-dryrun", "--dryrun", "-lineinfo-none",
})
_DROP_WITH_VALUE = frozenset({
    "-o", "--output-file", "-MF", "--dependency-output", "-MT", "-MQ", "-L", "--library-path", "-l",
    "--library", "-Xlinker", "--linker-options", "-Xnvlink", "--nvlink-options", "-Xfatbin",
    "--fatbin-options", "-odir", "--output-directory", "-keep-dir", "--keep-dir", "-time", "--time",
    "-t", "--threads", "-split-compile", "--split-compile",
})
_TARGET = frozenset({"-gencode", "--generate-code", "-arch", "--gpu-architecture", "-code", "--gpu-code"})
_SOURCE_SUFFIXES = (".cu", ".cuh")
#: C and C++ sources, CUDA after ``-x cu``
_CXX_SUFFIXES = (".cpp", ".cc", ".cxx", ".c++", ".c", ".C")
#: single-dash options that begin like a short option with a value (``-l``ineinfo is no library)
_PLAIN_FLAGS = frozenset({"-lineinfo", "-lto", "-dlto", "-lmem", "-Ofast-compile"})
_INCLUDE_OPTS = ("-I", "--include-path", "-isystem", "--system-include", "-include", "--pre-include")
_ARCH_NUM = re.compile(r"^(?:sm|compute|lto)_(\d{2,3}[af]?)$")


@dataclass(frozen=True)
class Target:
    """One GPU code the build makes: the real arch (``sm_90a``) and the virtual arch of the PTX it
    is assembled from (``compute_90a``)."""

    real: str
    virtual: str

    @property
    def plain(self) -> bool:
        """The PTX is the real arch's own (``compute_90a`` for ``sm_90a``): ``-arch=sm_90a`` makes it."""
        return self.virtual == "compute_" + self.real[3:]


@dataclass(frozen=True)
class BuildLine:
    """What one nvcc command line asks for, in the oracle's terms."""

    sources: tuple[str, ...]
    targets: tuple[Target, ...]
    #: every flag that changes the code (defines, include paths, -std, -G, -lineinfo, -Xptxas...),
    #: in order, without the targets, the outputs and the optimisation level
    flags: tuple[str, ...]
    opt: int | None = None
    #: the folder the command runs in (relative paths of ``flags`` and ``sources`` are relative to it)
    cwd: str = ""
    #: targets that make PTX only (``code=compute_90``), which the oracle cannot check
    ptx_only: tuple[str, ...] = ()

    @property
    def defines(self) -> tuple[str, ...]:
        return defines_of(self.flags)


def _option(tok: str) -> tuple[str, str | None]:
    """``-X=V`` -> (``-X``, V); ``-Ipath`` -> (``-I``, path); ``-O3`` -> (``-O``, 3); else (tok, None)."""
    if tok.startswith("--") or tok.startswith("-") and "=" in tok:
        name, eq, val = tok.partition("=")
        if eq and name in _WITH_VALUE | _DROP | _TARGET:
            return name, val
        if eq and tok.startswith("--"):
            return name, val
    if tok in _PLAIN_FLAGS:
        return tok, None
    for short in ("-I", "-D", "-U", "-L", "-l", "-O", "-x"):
        if tok.startswith(short) and len(tok) > len(short) and not tok.startswith("-Xc"):
            return short, tok[len(short):]
    return tok, None


def _gencode_targets(spec: str) -> tuple[list[Target], list[str]]:
    """``arch=compute_90a,code=[sm_90a,compute_90a]`` -> the real targets and the PTX-only ones."""
    m = re.fullmatch(r"\s*arch=(\w+)\s*,\s*code=(?:\[([^\]]*)\]|\"?([\w,]+)\"?)\s*", spec)
    if not m:
        raise UserError(f"cannot read -gencode {clip(spec, 120)!r}: expected arch=compute_NN,code=sm_NN (or code=[sm_NN,compute_NN])")
    virtual = m[1]
    codes = [c.strip() for c in (m[2] or m[3] or "").split(",") if c.strip()]
    real = [Target(c, virtual) for c in codes if c.startswith("sm_")]
    return real, [c for c in codes if not c.startswith("sm_")]


def _arch_targets(arch: str | None, codes: str | None) -> tuple[list[Target], list[str]]:
    """``-arch=A [-code=C,...]`` as nvcc reads them."""
    if arch is None and codes is None:
        return [], []
    if arch in ("native", "all", "all-major") or arch is None:
        raise UserError(f"-arch={arch}: name the GPU arch to check (e.g. -arch=sm_90a or -gencode=arch=compute_90a,code=sm_90a)")
    m = _ARCH_NUM.fullmatch(arch)
    if not m:
        raise UserError(f"-arch={clip(arch, 60)}: expected sm_NN or compute_NN (e.g. sm_90a)")
    virtual = "compute_" + m[1]
    if codes is None:
        return ([Target("sm_" + m[1], virtual)], []) if arch.startswith("sm_") else ([], [arch])
    cs = [c.strip() for c in codes.split(",") if c.strip()]
    return [Target(c, virtual) for c in cs if c.startswith("sm_")], [c for c in cs if not c.startswith("sm_")]


def parse_nvcc_args(argv: Sequence[str], cwd: str = "") -> BuildLine:
    """An nvcc command line (without or with the program name first) as a :class:`BuildLine`.

    An option is never taken for a source: ``-o x.cu`` names an output.  A value-less target
    (``-arch=native``) is refused with a one-line error naming what to write instead."""
    args = list(argv)
    if args and Path(args[0]).name in ("nvcc", "nvcc.exe") or args and args[0].endswith("/nvcc"):
        args = args[1:]
    sources: list[str] = []
    flags: list[str] = []
    targets: list[Target] = []
    ptx_only: list[str] = []
    arch: str | None = None
    code: str | None = None
    opt: int | None = None
    lang = ""  # -x LANG: the language of the input files that follow (-x cu: a .cpp compiled as CUDA, as CMake does)
    i = 0
    while i < len(args):
        tok = args[i]
        i += 1
        if not tok.startswith("-"):
            if _is_source(tok, lang):
                sources.append(tok)
            continue  # an object file or library to link: not the oracle's
        name, val = _option(tok)
        if val is None and name in _WITH_VALUE and tok == name:
            if i >= len(args):
                raise UserError(f"nvcc option {clip(tok, 40)} needs a value")
            val = args[i]
            i += 1
        lang = _language(name, val, lang)
        if name in ("-gencode", "--generate-code"):
            real, ptx = _gencode_targets(val or "")
            targets.extend(real)
            ptx_only.extend(ptx)
        elif name in ("-arch", "--gpu-architecture"):
            arch = val
        elif name in ("-code", "--gpu-code"):
            code = val
        elif name in ("-O", "--optimize"):
            try:
                opt = int(val or "")
            except ValueError:
                raise UserError(f"nvcc option -O{clip(val or '', 20)}: expected -O0 .. -O3") from None
        elif name in _DROP or name in _DROP_WITH_VALUE:
            continue
        elif val is not None:
            flags.append(f"{name}={val}" if name.startswith("--") or name in (
                "-Xcompiler", "-Xptxas", "-Xcudafe", "-std", "-ccbin", "-rdc", "-maxrregcount", "-default-stream",
                "-diag-suppress", "-include", "-isystem", "-x", "--x") else f"{name}{val}")
        else:
            flags.append(tok)
    a_real, a_ptx = _arch_targets(arch, code)
    seen: dict[str, Target] = {}
    for t in [*targets, *a_real]:
        seen.setdefault(t.real, t)
    return BuildLine(tuple(sources), tuple(seen.values()), _split_joined(flags), opt, cwd,
                     tuple(dict.fromkeys([*ptx_only, *a_ptx])))


def _language(name: str, val: str | None, lang: str) -> str:
    """The language of the input files after the option ``name val`` (nvcc's ``-x``/``--x``)."""
    return (val or "") if name in ("-x", "--x") else lang


def _is_source(tok: str, lang: str) -> bool:
    """A CUDA source: ``.cu``/``.cuh``, or a C/C++ source after ``-x cu`` (``lang``)."""
    suffix = Path(tok).suffix
    return tok.endswith(_SOURCE_SUFFIXES) or suffix in _SOURCE_SUFFIXES or lang == "cu" and suffix in _CXX_SUFFIXES


def _split_joined(flags: list[str]) -> tuple[str, ...]:
    """``-include=x.h`` and ``-isystem=dir`` are not nvcc spellings: give them back as two arguments."""
    out: list[str] = []
    for f in flags:
        name, eq, val = f.partition("=")
        if eq and name in ("-include", "-isystem", "-x"):
            out.extend([name, val])
        else:
            out.append(f)
    return tuple(out)


def split_target_flags(flags: Sequence[str]) -> tuple[tuple[Target, ...], tuple[str, ...], tuple[str, ...]]:
    """``--nvcc-flag`` values: the GPU targets they name (``-gencode=...``, ``-arch=...``,
    ``-code=...``), the PTX-only ones, and the other flags unchanged (in order)."""
    target_toks: list[str] = []
    rest: list[str] = []
    it = iter(flags)
    for f in it:
        name, val = _option(f)
        if name in _TARGET:
            target_toks.append(f)
            if val is None:
                target_toks.append(next(it, ""))
        else:
            rest.append(f)
    line = parse_nvcc_args(["nvcc", *target_toks])
    return line.targets, line.ptx_only, tuple(rest)


def defines_of(flags: Sequence[str]) -> tuple[str, ...]:
    """The ``-D`` macros a flag list defines (``NAME`` or ``NAME=VALUE``), in order."""
    out = []
    it = iter(flags)
    for f in it:
        if f in ("-D", "--define-macro"):
            out.append(next(it, ""))
        elif f.startswith("--define-macro="):
            out.append(f.split("=", 1)[1])
        elif f.startswith("-D") and len(f) > 2:
            out.append(f[2:])
    return tuple(d for d in out if d)


def absolute_flags(flags: Sequence[str], cwd: str) -> tuple[str, ...]:
    """``flags`` with relative include paths made absolute against ``cwd`` (the compile command's
    folder), so that nvcc can run anywhere."""
    if not cwd:
        return tuple(flags)
    out: list[str] = []
    it = iter(flags)
    for f in it:
        if f in _INCLUDE_OPTS:
            v = next(it, "")
            out.extend([f, v if os.path.isabs(v) else os.path.join(cwd, v)])
            continue
        name, val = _option(f)
        if name in _INCLUDE_OPTS and val:
            v = val if os.path.isabs(val) else os.path.join(cwd, val)
            out.append(f"{name}={v}" if f.startswith(name + "=") else f"{name}{v}")
        else:
            out.append(f)
    return tuple(out)


def compile_commands_lines(path: str | Path, entries: Sequence[str] = ()) -> list[BuildLine]:
    """The entries of a ``compile_commands.json`` that compile CUDA, as :class:`BuildLine` objects
    with absolute include paths; ``entries``: keep only those whose file is one of these (a path as
    written in the entry, relative to the current folder, or a path suffix)."""
    p = Path(path)
    try:
        data = read_json(p, MAX_JSON_BYTES, "a compile_commands.json")
    except ValueError as e:
        raise UserError(f"{path}: {e}") from None
    if not isinstance(data, list):
        raise UserError(f"{path}: not a compile_commands.json: expected a JSON array of entries")
    out: list[BuildLine] = []
    for n, ent in enumerate(data):
        if not isinstance(ent, dict) or not isinstance(ent.get("file"), str):
            raise UserError(f"{path}: entry {n}: expected an object with \"file\" and \"command\" or \"arguments\"")
        # "directory" is absolute in what CMake writes; a relative one is taken from the file's folder
        d = os.path.normpath(os.path.join(str(p.parent.resolve()), str(ent.get("directory") or ".")))
        argv = ent.get("arguments")
        if not isinstance(argv, list):
            cmd = ent.get("command")
            if not isinstance(cmd, str):
                raise UserError(f"{path}: entry {n} ({clip(ent['file'], 100)}): no \"command\" or \"arguments\"")
            argv = shlex.split(cmd)
        src = os.path.normpath(os.path.join(d, ent["file"]))
        if not src.endswith(_SOURCE_SUFFIXES):
            continue
        if entries and not any(_same_file(src, want) for want in entries):
            continue
        line = parse_nvcc_args([str(a) for a in argv], cwd=d)
        out.append(BuildLine((src,), line.targets, absolute_flags(line.flags, d), line.opt, d, line.ptx_only))
    if not out:
        what = f"no entry for {', '.join(entries)}" if entries else "no entry that compiles a .cu file"
        raise UserError(f"{path}: {what}")
    return out


def _same_file(src: str, want: str) -> bool:
    if os.path.normpath(os.path.abspath(want)) == src:
        return True
    w = os.path.normpath(want)
    return src == w or src.endswith(os.sep + w)
