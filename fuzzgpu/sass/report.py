"""The report types of the SASS oracle: the verdict and check vocabulary, :class:`Finding`,
:class:`FunctionReport`, :class:`Report` and the exit status of ``fuzzgpu sass``; and the small
helpers the parsers and the toolchain share (:func:`short_name`, :func:`parse_arch`)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Sequence

from ..errors import UserError

@dataclass(frozen=True)
class PdlNote:
    """One PDL-review warning (:mod:`fuzzgpu.sass.pdl`): not a finding, not a compiler verdict.
    ``kind`` is :data:`READ_BEFORE_WAIT` or :data:`COMPILED_OUT`; ``function`` the kernel (mangled),
    "" for a whole translation unit; ``text`` the PTX read, or the source text that waits."""

    kind: str
    arch: str
    function: str
    text: str
    ptx_line: int
    src_file: str
    src_line: int
    message: str

    def to_dict(self) -> dict:
        return asdict(self)


#: the PDL review's kinds of warning (fuzzgpu.sass.pdl)
READ_BEFORE_WAIT = "read-before-wait"
COMPILED_OUT = "compiled-out"


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
EXIT_ENVIRONMENT = 3  # the environment failed: nvcc, ptxas or the disassembler missing (errors.EnvError)
EXIT_NOT_FULLY_CHECKED = 4  # no finding, but something was not checked: never "clean"; a status of its own,
#: apart from 3, so that a CI gate can tell "the tool could not run" from "the kernel was only partly
#: checked" (docs/sass.md "Exit status", docs/reliability.md "Exit codes")

HOISTED = "hoisted above"
SUNK = "sunk below"

_ARCH_RE = re.compile(r"^sm_(\d{2,3})([af]?)$")


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
    #: every synchronisation point the operation crossed (its PTX text and source line), nearest
    #: first; ``sync_*`` is the first of them
    crossed: tuple[str, ...] = ()
    #: the source line of the operation (``-lineinfo``): the innermost one outside the CUDA headers
    src_file: str = ""
    src_line: int = 0

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
    #: the PDL review's warnings (fuzzgpu.sass.pdl): not findings, not compiler verdicts
    pdl: tuple[PdlNote, ...] = ()
    #: the PTX has griddepcontrol or the SASS ACQBULK/PREEXIT (None: not looked at)
    pdl_compiled_in: bool | None = None
    #: the -D macros the input was compiled with
    defines: tuple[str, ...] = ()

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
            "pdl_compiled_in": self.pdl_compiled_in,
            "defines": list(self.defines),
            "pdl_review": [n.to_dict() for n in self.pdl],
        }


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


def exit_status(reports: Sequence[Report]) -> int:
    """1 when there is a finding, else 4 when something was not fully checked, else 0."""
    if any(r.findings for r in reports):
        return EXIT_FINDING
    if not all(r.complete for r in reports):
        return EXIT_NOT_FULLY_CHECKED
    return EXIT_CLEAN
