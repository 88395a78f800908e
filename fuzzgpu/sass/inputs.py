"""Every kind of input ``fuzzgpu sass`` checks, and what it takes from each: ``.cu``/``.cuh``
(compiled here, cached by preprocessed source), ``.ptx`` (assembled), ``.litmus`` (generated CUDA),
``.cubin`` (its PTX beside it, given, or embedded), and built binaries (``.o``, executables, ``.so``,
fatbins: :mod:`~fuzzgpu.sass.binaries`); a real build's command line (:mod:`~fuzzgpu.sass.buildline`)
gives the targets, the flags and the folder to compile in."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ..errors import UserError
from .binaries import check_binary, listed, own_functions, ptx_functions, sass_functions
from .buildline import BuildLine, split_target_flags
from .report import DEFAULT_ARCHS, DEFAULT_OPT, Report
from .toolchain import analysed, check_cu, check_litmus, check_ptx, cubin_arch, disassemble, shown_path

#: suffixes of built binaries whose embedded cubins and PTX cuobjdump extracts
BINARY_SUFFIXES = (".o", ".obj", ".so", ".a", ".fatbin", ".exe", ".out")


def is_binary(p: Path) -> bool:
    """A built binary: a known suffix, or an ELF file (an executable usually has no suffix)."""
    if p.suffix.lower() in BINARY_SUFFIXES or ".so." in p.name:
        return True
    try:
        with p.open("rb") as f:
            return f.read(4) == b"\x7fELF" and p.suffix.lower() != ".cubin"
    except OSError:
        return False


def check_cubin(path: Path, ptx_given: str | None = None) -> list[Report]:
    """A cubin, with the PTX it was built from: given (``--ptx``), beside it (``NAME.ptx``), or
    embedded in it."""
    where = "the PTX given (--ptx)"
    if ptx_given is None:
        stem = path.name[: -len(".cubin")]
        cands = [path.with_name(stem + ".ptx")]
        if "." in stem:
            cands.append(path.with_name(stem.split(".")[0] + ".ptx"))
        for c in cands:
            if c.is_file():
                ptx_given, where = c.read_text(errors="replace"), f"the PTX beside it ({shown_path(c)})"
                break
        else:
            try:
                return check_binary(path)
            except UserError:
                raise UserError(f"{shown_path(path)}: a cubin has no PTX to compare with; put the PTX it was built from at "
                                f"{shown_path(cands[0])}, pass --ptx FILE, or pass the .cu/.ptx") from None
    sass_text = disassemble(path)
    kernels = own_functions(sass_functions(sass_text))
    if kernels and not kernels & ptx_functions(ptx_given):
        raise UserError(f"{shown_path(path)}: {where} defines none of the cubin's functions ({listed(kernels)}): "
                        "pass the PTX the cubin was assembled from")
    return [analysed(ptx_given, sass_text, cubin_arch(sass_text), str(path))]


def targets_of(archs: Sequence[str] | None, nvcc_flags: Sequence[str]) -> tuple[tuple[str, ...], dict[str, str], tuple[str, ...]]:
    """The archs to check, the PTX arch of each (when not its own), and the flags without the targets.

    Targets in the flags (``-gencode=...``, ``-arch=compute_X -code=sm_Y``) are checked, each alone;
    ``archs`` (``--arch``) then keeps only those it names.  Without targets in the flags: ``archs``, or
    the default archs."""
    targets, _ptx_only, rest = split_target_flags(nvcc_flags)
    if not targets:
        return tuple(archs or DEFAULT_ARCHS), {}, rest
    use = [t for t in targets if not archs or t.real in archs]
    if not use:
        raise UserError(f"--arch {' '.join(archs or ())} names none of the targets of the flags ({', '.join(t.real for t in targets)})")
    return tuple(t.real for t in use), {t.real: t.virtual for t in use}, rest


def check_path(path: str | Path, archs: Sequence[str] | None = DEFAULT_ARCHS, opt: int = DEFAULT_OPT,
               nvcc_flags: Sequence[str] = (), keep_dir: str | Path | None = None,
               cache_dir: str | Path | None = None, ptx: str | None = None,
               cwd: str | None = None) -> list[Report]:
    """Check one input of any supported kind; ``keep_dir`` receives the PTX and SASS of each arch.

    ``nvcc_flags`` may name targets (``-gencode``): those are the archs of a ``.cu`` input.
    ``cache_dir``: memoise a ``.cu`` input's PTX and SASS there (:func:`~fuzzgpu.sass.toolchain.check_cu`).
    ``ptx``: the PTX text to compare a ``.cubin`` or a binary with when it carries none."""
    p = Path(path)
    if not p.exists():
        raise UserError(f"{path}: no such file")
    if p.is_dir():
        raise UserError(f"{path}: is a folder; pass .cu, .ptx, .cubin, .litmus files or a built binary")
    suffix = p.suffix.lower()
    use, virtual, flags = targets_of(archs, nvcc_flags)
    if suffix in (".cu", ".cuh"):
        defaults = not virtual and (archs is None or tuple(archs) == DEFAULT_ARCHS) and tuple(use) == DEFAULT_ARCHS
        return check_cu(p, use, opt, flags, keep_dir=keep_dir, virtual=virtual, cwd=cwd, file_cache=cache_dir,
                        defaults=defaults)
    if suffix == ".ptx":
        return check_ptx(p, use, opt, flags, keep_dir=keep_dir)
    if suffix == ".cubin":
        return check_cubin(p, ptx)
    if suffix == ".litmus":
        return check_litmus(p, use, opt, flags, keep_dir=keep_dir, chosen=archs is not None and tuple(archs) != DEFAULT_ARCHS)
    if is_binary(p):
        return check_binary(p, archs if archs and tuple(archs) != DEFAULT_ARCHS else (), ptx)
    raise UserError(f"{path}: unknown input type {suffix or '(none)'}; expected .cu, .ptx, .cubin, .litmus, "
                    f"or a binary built with nvcc (.o, .so, .fatbin, an executable)")


def check_build(line: BuildLine, archs: Sequence[str] | None = None, opt: int | None = None,
                keep_dir: str | Path | None = None, cache_dir: str | Path | None = None) -> list[Report]:
    """Every source of one nvcc command line, for its targets (``archs`` keeps only those it names),
    with its flags, in its folder, at its ``-O`` (or ``opt``, or the default)."""
    if not line.sources:
        raise UserError("the nvcc command line names no .cu file")
    if not line.targets:
        raise UserError("the nvcc command line names no GPU code target (-arch=sm_NN or -gencode=arch=compute_NN,code=sm_NN)"
                        + (f"; PTX only: {', '.join(line.ptx_only)}" if line.ptx_only else ""))
    use = [t for t in line.targets if not archs or t.real in archs]
    if not use:
        raise UserError(f"--arch {' '.join(archs or ())} names none of the build's targets ({', '.join(t.real for t in line.targets)})")
    level = line.opt if line.opt is not None else opt if opt is not None else DEFAULT_OPT
    out: list[Report] = []
    for src in line.sources:
        p = Path(src) if not line.cwd or Path(src).is_absolute() else Path(line.cwd) / src
        if not p.is_file():
            raise UserError(f"{src}: no such file" + (f" (in {line.cwd})" if line.cwd else ""))
        out.extend(check_cu(p, tuple(t.real for t in use), level, line.flags, source=_as_shown(src), keep_dir=keep_dir,
                            virtual={t.real: t.virtual for t in use}, cwd=line.cwd or None, file_cache=cache_dir))
    return out


def _as_shown(src: str) -> str:
    """A source path as a report names it: relative to the current folder when inside it."""
    p = Path(src)
    if p.is_absolute():
        try:
            return str(p.relative_to(Path.cwd()))
        except ValueError:
            return src
    return src
