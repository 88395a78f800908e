"""What a built binary carries: the cubins (SASS) and PTX that nvcc embedded in an object file, an
executable, a shared library or a fatbin, extracted with ``cuobjdump -xelf all`` / ``-xptx all``
(the ``nvidia-cuda-cuobjdump`` wheel), each cubin paired with the PTX of its arch that defines its
kernels, and analysed as a ``.cu`` input's PTX and cubin are."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..errors import UserError
from .checks import is_compiler_routine
from .report import Report
from .toolchain import _run, analysed, arg_path, disassemble, ptx_target, require_tool, shown_path, temp_dir

#: the file name cuobjdump gives an extracted cubin or PTX: STEM.N.sm_90a.cubin / .ptx
_EXTRACTED = re.compile(r"\.(\d+)\.(sm_\w+)\.(cubin|ptx)$")
_SASS_FUNC = re.compile(r"^\s*\.section\s+\.text\.([^,\s]+)", re.M)
_PTX_ENTRY = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+|\.extern\s+)?\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)", re.M)


@dataclass(frozen=True)
class Embedded:
    """One cubin of a binary, with the PTX it was assembled from when the binary carries it."""

    arch: str
    cubin: str  # its name in cuobjdump's listing
    sass: str
    ptx: str | None
    ptx_name: str = ""


def sass_functions(sass_text: str) -> set[str]:
    return set(_SASS_FUNC.findall(sass_text))


def own_functions(functions: set[str]) -> set[str]:
    """The module's own functions among a cubin's: not ptxas's arithmetic routines, which no PTX defines
    (:func:`~fuzzgpu.sass.checks.is_compiler_routine`)."""
    return {k for k in functions if not is_compiler_routine(k)}


def listed(names: set[str], most: int = 4) -> str:
    """``a, b, c, d, ...``: the first ``most`` of ``names``, sorted, for a one-line message."""
    shown = sorted(names)
    return ", ".join(shown[:most]) + (", ..." if len(shown) > most else "")


def ptx_functions(ptx_text: str) -> set[str]:
    return set(_PTX_ENTRY.findall(ptx_text))


def pair_ptx(arch: str, kernels: set[str], ptxs: Sequence[tuple[str, str]]) -> tuple[str, str] | None:
    """The PTX (name, text) a cubin of ``arch`` with ``kernels`` was assembled from: one that
    defines every kernel, of the same target (``sm_90a``) first, else of its family (``sm_90`` for
    ``sm_90a``: the PTX nvcc embeds for JIT)."""
    own = own_functions(kernels)
    fits = [(n, t) for n, t in ptxs if own and own <= ptx_functions(t)]
    base = re.sub(r"[af]$", "", arch)
    for want in (arch, base):
        for n, t in fits:
            if ptx_target(t) == want:
                return n, t
    return None


def extract(path: Path, ptx_given: str | None = None) -> list[Embedded]:
    """The cubins of ``path`` (an object file, executable, shared library, fatbin or cubin) with
    their SASS and PTX.  ``ptx_given``: the PTX to compare with, for a binary that embeds none."""
    cuo = require_tool("cuobjdump")
    shown = shown_path(path)
    src = str(path.resolve())
    with temp_dir("fuzzgpu-sass-bin-") as tmp:
        names = {src: shown}
        is_cubin = path.name.endswith(".cubin")
        listing = "" if is_cubin else _run([cuo, "-lelf", "-lptx", arg_path(Path(src))], "cuobjdump", names).stdout
        if not is_cubin and "ELF file" not in listing:
            raise UserError(f"{shown}: no GPU code in it (cuobjdump lists no cubin); was it built with nvcc for an sm_ target?")
        if is_cubin:
            cubins = [path]
        else:
            _run_in(tmp, [cuo, "-xelf", "all", src], names)
            cubins = sorted(Path(tmp).glob("*.cubin"))
        if "PTX file" in listing:
            _run_in(tmp, [cuo, "-xptx", "all", src], names)
        ptxs = [(p.name, p.read_text(errors="replace")) for p in sorted(Path(tmp).glob("*.ptx"))]
        if ptx_given is not None:
            ptxs.insert(0, ("(given)", ptx_given))
        out = []
        for c in cubins:
            sass_text = disassemble(c)
            kernels = sass_functions(sass_text)
            if not kernels:
                continue  # a cubin with no code (the runtime's, or an empty TU)
            m = _EXTRACTED.search(c.name)
            arch = m[2] if m else _cubin_arch_of(sass_text)
            hit = pair_ptx(arch, kernels, ptxs)
            if hit is None and ptx_given is not None and own_functions(kernels) & ptx_functions(ptx_given):
                # the PTX given defines part of the cubin (a device link with a library shipped without PTX):
                # what it defines is checked, the rest listed as not checked (checks.analyse), never refused whole
                hit = ("(given: part of the cubin)", ptx_given)
            out.append(Embedded(arch, c.name, sass_text, hit[1] if hit else None, hit[0] if hit else ""))
        return out


def _cubin_arch_of(sass_text: str) -> str:
    m = re.search(r"\.target\s+(sm_\w+)|arch\s*=\s*(sm_\w+)", sass_text)
    return (m.group(1) or m.group(2)) if m else "unknown"


def _run_in(cwd: str, cmd: list[str], names: dict[str, str]) -> None:
    """cuobjdump extracts into the folder it runs in, and has no option for another."""
    _run(cmd, "cuobjdump", names, cwd=cwd)


def check_binary(path: Path, archs: Sequence[str] = (), ptx_given: str | None = None) -> list[Report]:
    """One report per cubin of ``path`` whose arch is one of ``archs`` (all when empty).  A cubin
    without PTX to compare with is an error naming how to get it: build with the PTX embedded
    (``-gencode=arch=compute_90a,code=[sm_90a,compute_90a]``, or ``-arch=sm_90a``) or pass ``--ptx``."""
    emb = extract(path, ptx_given)
    shown = shown_path(path)
    if archs:
        emb = [e for e in emb if e.arch in archs]
        if not emb:
            raise UserError(f"{shown}: no cubin for {', '.join(archs)} in it")
    missing = [e for e in emb if e.ptx is None]
    if missing and len(missing) == len(emb):
        e = missing[0]
        if ptx_given is not None:  # given, and it defines none of the cubin's functions
            raise UserError(f"{shown}: the PTX given (--ptx) defines none of the functions of its {e.arch} cubin ({e.cubin}): "
                            f"{listed(own_functions(sass_functions(e.sass)))}; a device-linked (-rdc) "
                            "build's cubin holds the code of several translation units: pass each one's PTX (--ptx a.ptx --ptx b.ptx)")
        raise UserError(f"{shown}: its {e.arch} cubin ({e.cubin}) has no PTX to compare with: {_how_ptx(e.arch)}")
    reports = []
    for e in emb:
        if e.ptx is None:  # another cubin of the binary is checked; this one is said not to be
            reports.append(Report(str(path), e.arch, (), notes=(f"cubin {e.cubin}",),
                                  unchecked=(f"cubin {e.cubin} has no PTX to compare with: {_how_ptx(e.arch)}",)))
            continue
        rep = analysed(e.ptx, e.sass, e.arch, str(path))
        reports.append(dataclasses.replace(rep, notes=rep.notes + (f"cubin {e.cubin} with PTX {e.ptx_name}",)))
    return reports


def _how_ptx(arch: str) -> str:
    v = "compute_" + arch[3:]
    return (f"build with the PTX embedded (-gencode=arch={v},code=[{arch},{v}] or -arch={arch}; a device-linked -rdc "
            "executable embeds none) or pass the PTX with --ptx FILE (repeatable: one per translation unit)")
