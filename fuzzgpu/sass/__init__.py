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

The package, one job per module, each importing only those listed before it:
:mod:`~fuzzgpu.sass.report` (the report types and verdicts), :mod:`~fuzzgpu.sass.ptx_parser`,
:mod:`~fuzzgpu.sass.sass_parser`, :mod:`~fuzzgpu.sass.cfg` (the control-flow graphs),
:mod:`~fuzzgpu.sass.pdl` (the PDL review, on the PTX CFG), :mod:`~fuzzgpu.sass.matching` (PTX <-> SASS),
:mod:`~fuzzgpu.sass.rules` (the forbidden-move table and the verdicts), :mod:`~fuzzgpu.sass.waits`
(unguarded mbarrier waits on the SASS CFG), :mod:`~fuzzgpu.sass.checks`
(the findings, :func:`analyse`), :mod:`~fuzzgpu.sass.buildline` (nvcc command lines, pure),
:mod:`~fuzzgpu.sass.toolchain` (the subprocesses), :mod:`~fuzzgpu.sass.binaries` (built binaries
through cuobjdump), :mod:`~fuzzgpu.sass.inputs` (every kind of input), :mod:`~fuzzgpu.sass.names`
and :mod:`~fuzzgpu.sass.ci` (what the command prints and writes).  This module
re-exports their public names (a private helper is imported from its own module) and answers the
two questions :mod:`fuzzgpu.properties` asks of a PTX statement (:func:`sync_of_text`,
:func:`orders_weak_access`).  A re-exported name is a second reference: patch the module that
reads it (``fuzzgpu.sass.toolchain.find_tool``, ``fuzzgpu.sass.toolchain.TOOLKIT_DIRS``), since
patching ``fuzzgpu.sass.find_tool`` changes nothing the toolchain calls.
"""

from __future__ import annotations

from .. import semantics
from ..errors import EnvError, MissingTool, UserError
from . import ptx_parser
from .checks import AFTER, BEFORE, BOTH, analyse, analyse_function
from .ptx_parser import (
    AsyncAccess,
    PtxEvent,
    PtxFunction,
    PtxInstr,
    PtxLoop,
    PtxMemOp,
    PtxSync,
    parse_ptx,
)
from .report import (
    CROSSING,
    DEFAULT_ARCHS,
    DEFAULT_OPT,
    DELETED,
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDING,
    EXIT_NOT_FULLY_CHECKED,
    FORBIDDEN,
    HAZARD,
    HOISTED,
    LOOP_DELETED,
    MERGED,
    SUNK,
    UNGUARDED_WAIT,
    VERDICTS,
    Finding,
    FunctionReport,
    Report,
    exit_status,
    parse_arch,
    short_name,
)
from .rules import (
    RULE_ACQUIRE_ONLY,
    RULE_ASYNC_WAIT_OTHER,
    RULE_CONST,
    RULE_DELETED,
    RULE_FORBIDDEN,
    RULE_LOCAL,
    RULE_LOOP,
    RULE_MERGE_ACROSS,
    RULE_MERGE_PLAIN,
    RULE_MERGE_VOLATILE,
    RULE_NC,
    RULE_NO_ORDER,
    RULE_RELEASE_ONLY,
    RULE_UNGUARDED_WAIT,
    judge_crossing,
    judge_deleted,
    judge_merge,
)
from .sass_parser import SassFunction, SassInstr, SassLoop, SassMemOp, SassSync, parse_sass
from .toolchain import (
    TOOL_HELP,
    TOOLKIT_DIRS,
    analysed,
    archs_for_ptx,
    assemble_ptx,
    check_cu,
    check_cu_source,
    check_litmus,
    runtime_header_flags,
    check_ptx,
    compile_cu,
    cubin_arch,
    disassemble,
    find_tool,
    ptx_target,
    require_tool,
    toolchain_id,
)
from .inputs import check_build, check_cubin, check_path
from .ptx_text import source_lines as ptx_source_lines  # a PTX line -> its source locations


def sync_of_text(text: str) -> PtxSync | None:
    """The synchronisation meaning of one PTX statement's text (as a finding's ``sync_ptx`` holds
    it), or None when it orders nothing."""
    return ptx_parser.sync_of(ptx_parser._parse_ptx_instr(0, 0, text.strip().rstrip(";")))


def orders_weak_access(sync: PtxSync, direction: str, space: str = "global") -> bool:
    """Does ``sync`` order a weak access of ``space`` moved ``direction`` across it?  Sunk below: a
    release; hoisted above: an acquire; a proxy fence only in the state space it names."""
    if not (sync.release if direction == SUNK else sync.acquire if direction == HOISTED else False):
        return False
    return semantics.proxy_fence_covers(sync.space, space)


__all__ = [
    "DEFAULT_ARCHS", "FORBIDDEN", "HAZARD", "CROSSING", "MERGED", "LOOP_DELETED", "DELETED", "UNGUARDED_WAIT",
    "HOISTED", "SUNK", "EXIT_CLEAN", "EXIT_FINDING", "EXIT_ERROR", "EXIT_NOT_FULLY_CHECKED",
    "PtxInstr", "PtxMemOp", "PtxSync", "PtxEvent", "PtxFunction", "PtxLoop",
    "SassInstr", "SassMemOp", "SassSync", "SassFunction", "SassLoop",
    "Finding", "FunctionReport", "Report",
    "parse_ptx", "parse_sass", "analyse", "analyse_function", "judge_crossing",
    "exit_status", "compile_cu", "assemble_ptx", "disassemble", "check_path", "check_cu", "check_cu_source", "runtime_header_flags",
    "check_ptx", "check_cubin", "check_litmus", "find_tool", "short_name",
    # also used by the CLI, the properties, the semantics table, the tests and bench/
    "DEFAULT_OPT", "VERDICTS", "AsyncAccess", "BEFORE", "AFTER", "BOTH",
    "RULE_NC", "RULE_CONST", "RULE_LOCAL", "RULE_ACQUIRE_ONLY", "RULE_RELEASE_ONLY", "RULE_NO_ORDER", "RULE_FORBIDDEN",
    "RULE_ASYNC_WAIT_OTHER", "RULE_MERGE_PLAIN", "RULE_MERGE_VOLATILE", "RULE_MERGE_ACROSS", "RULE_DELETED",
    "RULE_UNGUARDED_WAIT", "RULE_LOOP", "judge_deleted", "judge_merge", "sync_of_text", "orders_weak_access",
    "parse_arch", "TOOLKIT_DIRS", "TOOL_HELP", "require_tool", "cubin_arch", "ptx_target", "archs_for_ptx",
    "toolchain_id", "EnvError", "MissingTool", "UserError", "check_build",
    # the SASS check of a harness that ran (fuzzgpu.backends.ran_sass)
    "analysed", "ptx_source_lines",
]
