"""``fuzzgpu sass``: the static SASS oracle on the command line."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from .. import __version__
from .. import sass as oracle
from ..errors import EXIT_USAGE, EnvError, SourceError, UserError, clip, printable
from ..sass import ci
from ..sass.buildline import BuildLine, compile_commands_lines, parse_nvcc_args
from ..sass.names import demangle, display_names
from ..sass.pdl import PdlNote
from ..sass.toolchain import default_cache_dir

HELP = "find memory operations that ptxas moved across a synchronisation point"

DESCRIPTION = """\
Compile CUDA (.cu), PTX (.ptx) or a litmus test (.litmus) with the local nvcc/ptxas, or read a
cubin or a built binary, disassemble it (nvdisasm or cuobjdump), and compare the SASS with the PTX:

  crossing      a memory operation whose SASS position is on the other side of a synchronisation
                point than in the PTX: "hoisted above" (it followed the point in PTX) or "sunk below"
                (it preceded it).  Synchronisation points: griddepcontrol.wait (ACQBULK),
                griddepcontrol.launch_dependents (PREEXIT), fence.* / membar.* (MEMBAR, CCTL.IVALL),
                fence.proxy.async (FENCE.VIEW.ASYNC), bar.sync/arrive/red (BAR.*), mbarrier.*
                (SYNCS.*), barrier.cluster.arrive/wait (UCGABAR_ARV/UCGABAR_WAIT), acquire loads
                and release stores, cp.async waits (DEPBAR), bulk copies.
  merged        two PTX loads of one address became one SASS load.
  deleted       a PTX memory operation has no SASS at all (ptxas removes loads whose value is unused).
  loop-deleted  a delay loop of the PTX (a %clock loop or a register loop with no memory operation)
                has no loop in the SASS.
  unguarded-wait
                a memory operation after an acquiring mbarrier.try_wait/test_wait
                (SYNCS.PHASECHK) whose predicate no branch tests before it, and that is neither
                predicated on it nor computed from it: nothing makes it wait for the phase check
                (seen on an H200 to miss the data: docs/findings.md); forbidden for a lone wait,
                a permitted hazard where a branch tests the result only after the access.

A crossing needs no one-to-one mapping: SASS memory operations the mapping could not pair (loops,
unrolling, addresses in registers) are counted on each side of every synchronisation point, and
one that no PTX operation of its class on that side accounts for (e.g. an LDG.E.128.CONSTANT above
ACQBULK with every ld.global.nc after griddepcontrol.wait) is a finding.

Verdicts:
  forbidden         the PTX memory model orders the operation in that direction: a compiler bug
                    (e.g. a weak, relaxed, acquire or volatile access moved above a fence, an
                    acquire or griddepcontrol.wait; two volatile loads merged).
  permitted-hazard  the model allows the move, but the program no longer does what its source says:
                    ld.global.nc / __ldg / const __restrict__ loads (.CONSTANT) are outside the
                    model, and read stale data when hoisted above griddepcontrol.wait under PDL
                    (FlashMLA 01a2772); moves the synchronisation does not forbid (an earlier access
                    sunk below an acquire-only point, a later one hoisted above a release-only one);
                    thread-private .local data; merged plain loads; deleted loads and delay loops.

Inputs: a .cu file is compiled here (nvcc -arch=ARCH -cubin -keep) and its own PTX compared with
its cubin, cached by its preprocessed source, flags and nvcc version ($XDG_CACHE_HOME/fuzzgpu/sass or
~/.cache/fuzzgpu/sass; --no-cache); a .ptx file is assembled with ptxas; a .cubin is read with the
PTX it was built from (--ptx FILE, NAME.ptx beside it, or embedded); a built binary (.o, .so,
.fatbin, an executable) is read as it is: cuobjdump (pip install nvidia-cuda-cuobjdump) extracts
its cubins and embedded PTX (build with the PTX embedded: -arch=sm_90a, or code=[sm_90a,compute_90a]);
a .litmus file is turned into one kernel per thread by fuzzgpu.codegen.  A real build: targets in
--nvcc-flag (-gencode=arch=compute_90a,code=sm_90a, -arch=compute_X -code=sm_Y) are checked each
alone; --compile-commands FILE takes each entry's flags, include paths, defines and targets; after
--, an nvcc command line is checked as it would compile.  Each input is checked for every --arch.
-G needs ptxas -O0: --nvcc-flag=-G -O 0.

A function is "clean" only when every memory operation and every ordering synchronisation point of
its PTX and SASS is accounted for; otherwise it is "not fully checked" and the lines "not checked:"
say what was left (--notes shows more).  A module with no kernel, or a cubin function the PTX does
not define, is "not fully checked" too; findings --only leaves out are counted, never called clean.

Output: for each input and arch a first summary line ("N finding(s) (a permitted-hazard, b
forbidden) in K function(s); fully checked; PDL code compiled in: yes; -D ..."), one line per
function, each finding in a few lines (--details: in full) with its fingerprint; kernel names are
demangled and kept apart per instantiation.  --json, --sarif FILE (SARIF 2.1.0, GitHub code
scanning; what was not checked, and inputs that failed, as the run's tool execution
notifications), --baseline FILE / --write-baseline FILE (a finding whose fingerprint is in the baseline
is "known": exit 1 only for new ones), --only nc|pdl|proxy|mbarrier.

PDL review (warnings, not compiler verdicts; counted as findings only with --pdl-review or --only
pdl): in a kernel that executes griddepcontrol.wait, each global read that the PTX places before
the wait on a path from the entry ("is this written by the primary grid?"; file:line with
--nvcc-flag=-lineinfo), and "PDL compiled out" when the source waits
(cudaGridDependencySynchronize, wait_on_dependent_grids) but the PTX has no griddepcontrol.wait
(CUTLASS needs -DCUTLASS_ENABLE_GDC_FOR_SM90 / _SM100).

Exit status (the first that applies): 1 at least one (new) finding; 2 an error (missing file,
compile error, unknown arch: one line on stderr for each such input, and the other inputs are still
checked and reported; an output path that is a folder or in no folder: before any compile); 3 the environment failed: nvcc, ptxas or the disassembler missing (one line
naming it; nvdisasm/cuobjdump: `pip install nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump`); 4 no finding
but not fully checked (never reported as clean); 0 clean (no finding, everything checked).

examples:
  fuzzgpu sass tests/kernels/D_flashmla_shape.cu   sm_90, sm_90a and sm_100a, -O3
  fuzzgpu sass --arch sm_90 -O 2 tests/kernels/D_flashmla_shape.cu   one arch, ptxas -O2
  fuzzgpu sass --json tests/kernels/D_flashmla_shape.cu   one JSON object per input and arch
  fuzzgpu sass --nvcc-flag=-DPDL --nvcc-flag=-lineinfo tests/kernels/D_flashmla_shape.cu
  fuzzgpu sass --nvcc-flag=-gencode=arch=compute_90a,code=sm_90a tests/kernels/D_flashmla_shape.cu
  fuzzgpu sass --compile-commands tests/data/sass/compile_commands.json   each CUDA entry with its own flags
  fuzzgpu sass -- nvcc -O3 -gencode arch=compute_90a,code=sm_90a -c tests/kernels/D_flashmla_shape.cu -o x.o
  fuzzgpu sass --only nc --sarif sass.sarif tests/kernels/D_flashmla_shape.cu   .nc findings, also as SARIF
  fuzzgpu sass --pdl-review --nvcc-flag=-lineinfo tests/data/sass/pdl_early_read.cu   reads before the wait
  fuzzgpu sass --keep out/ tests/kernels/D_flashmla_shape.cu   also write out/D_flashmla_shape.sm_90.ptx, .sass, ...
  fuzzgpu sass tests/litmus/gpu/MP-relacq-gpu.litmus   the kernels fuzzgpu generates for a litmus test
"""


def _strict(parser: argparse.ArgumentParser) -> None:
    """Unknown options are this command's error ("fuzzgpu sass: error: ..."), as when PATH was
    required: every positional is optional here (an nvcc line or --compile-commands may stand for
    them), and argparse would otherwise leave them to the top-level parser."""
    known = parser.parse_known_args

    def parse_known_args(args=None, namespace=None):  # type: ignore[no-untyped-def]
        ns, extra = known(args, namespace)
        if extra:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        return ns, extra

    parser.parse_known_args = parse_known_args  # type: ignore[method-assign]


def configure(parser: argparse.ArgumentParser) -> None:
    _strict(parser)
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help=".cu, .ptx, .cubin, .litmus files or built binaries (.o, .so, .fatbin, executables); "
                             "or, after --, an nvcc command line (fuzzgpu sass -- nvcc -O3 -gencode=... -c x.cu -o x.o)")
    parser.add_argument("--arch", action="append", default=None, metavar="ARCH",
                        help=f"target architecture, repeatable (default: the targets of the flags or build, else "
                             f"{' '.join(oracle.DEFAULT_ARCHS)}; with targets, --arch keeps only those it names)")
    parser.add_argument("-O", dest="opt", type=int, default=None, choices=range(0, 4), metavar="N",
                        help="optimisation level for nvcc and ptxas (default: the build's -O, else 3)")
    parser.add_argument("--nvcc-flag", action="append", default=[], metavar="FLAG",
                        help="extra flag for nvcc (repeatable; -gencode/-arch/-code name the targets to check; "
                             "-Xptxas values are passed to ptxas for .ptx input)")
    parser.add_argument("--compile-commands", metavar="FILE", default=None,
                        help="check the CUDA entries of a compile_commands.json with each entry's flags, "
                             "include paths, defines and targets (PATHs or --entry pick entries)")
    parser.add_argument("--entry", action="append", default=[], metavar="SRC",
                        help="with --compile-commands: the entry of this source file (repeatable)")
    parser.add_argument("--ptx", metavar="FILE", action="append", default=[],
                        help="the PTX a .cubin or a binary without embedded PTX was built from (repeatable: a "
                             "device-linked -rdc build's cubin, from the PTX of each of its translation units)")
    parser.add_argument("--no-cache", action="store_true",
                        help="compile .cu inputs again even when the cache holds their PTX and SASS "
                             "($XDG_CACHE_HOME/fuzzgpu/sass or ~/.cache/fuzzgpu/sass)")
    parser.add_argument("--only", action="append", default=[], choices=ci.CATEGORIES, metavar="KIND",
                        help="report only findings of this kind (repeatable): nc (ld.global.nc/.CONSTANT), "
                             "pdl (griddepcontrol; also the PDL review), proxy (fence.proxy, bulk copies), "
                             "mbarrier (mbarrier waits and arrives)")
    parser.add_argument("--pdl-review", action="store_true",
                        help="count the PDL review's warnings (reads before griddepcontrol.wait, PDL compiled out) "
                             "as findings (exit 1); they are printed anyway")
    parser.add_argument("--baseline", metavar="FILE", default=None,
                        help="findings whose fingerprint is in FILE are listed as known, not new; exit 1 only for new ones")
    parser.add_argument("--write-baseline", metavar="FILE", default=None,
                        help="write every finding reported (after --only) to FILE as a baseline")
    parser.add_argument("--sarif", metavar="FILE", default=None, help="also write the findings as SARIF 2.1.0 to FILE")
    parser.add_argument("--json", action="store_true", help="one JSON object per input and arch")
    parser.add_argument("--details", action="store_true",
                        help="each finding in full (PTX and SASS of the operation and of the point) instead of a few lines")
    parser.add_argument("--notes", action="store_true", help="also print what could not be mapped or checked")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="progress on stderr while each input compiles, disassembles and is checked (default: when stderr is a terminal)")
    parser.add_argument("--keep", metavar="DIR", default=None,
                        help="write the PTX and SASS that the line numbers refer to (STEM.ARCH.ptx/.sass) into DIR")


@dataclass(frozen=True)
class _Shown:
    """A finding or a PDL note as reported: its report, kernel names, fingerprint and whether it is new."""

    report: oracle.Report
    function: str  # mangled
    kernel: str  # demangled (the fingerprint's)
    display: str  # short and unique
    fingerprint: str
    new: bool
    finding: oracle.Finding | None = None
    note: PdlNote | None = None


def _jobs(args: argparse.Namespace) -> list[tuple[str, Callable[[], list[oracle.Report]]]]:
    """(what it is, how to check it) for every input of the command line."""
    archs = tuple(args.arch) if args.arch else None
    cache = None if args.no_cache else default_cache_dir()
    ptx = _read_ptx(args.ptx)
    if args.paths and Path(args.paths[0]).name in ("nvcc", "nvcc.exe"):
        line = parse_nvcc_args(args.paths, cwd="")
        line = BuildLine(line.sources, line.targets, (*line.flags, *args.nvcc_flag), line.opt, "", line.ptx_only)
        return [("nvcc " + " ".join(line.sources), lambda: oracle.check_build(line, archs, args.opt, args.keep, cache))]
    if args.compile_commands:
        lines = compile_commands_lines(args.compile_commands, (*args.entry, *args.paths))
        return [(ln.sources[0], functools.partial(oracle.check_build, ln, archs, args.opt, args.keep, cache)) for ln in lines]
    if args.entry:
        raise UserError("--entry needs --compile-commands FILE")
    if not args.paths:
        raise UserError("no input: pass .cu, .ptx, .cubin, .litmus files or binaries, --compile-commands FILE, or -- nvcc ...")
    opt = args.opt if args.opt is not None else oracle.DEFAULT_OPT
    return [(p, functools.partial(oracle.check_path, p, archs, opt, tuple(args.nvcc_flag), keep_dir=args.keep,
                                  cache_dir=cache, ptx=ptx)) for p in args.paths]


def _read_ptx(paths: Sequence[str]) -> str | None:
    """The PTX of every ``--ptx`` file as one text (a device-linked cubin's kernels come from several
    modules: :func:`~fuzzgpu.sass.ptx_text.join_modules` keeps each module's source files its own)."""
    if not paths:
        return None
    texts = []
    for path in paths:
        try:
            texts.append(Path(path).read_text(errors="replace"))
        except OSError as e:
            raise UserError(f"{path}: cannot read the PTX: {e.strerror or e}") from None
    from ..sass.ptx_text import join_modules

    return join_modules(texts)


def _shown(reports: list[oracle.Report], args: argparse.Namespace, known: ci.Known | None) -> list[_Shown]:
    """Every finding (and PDL note) the run reports, after --only, with its fingerprint and newness."""
    names = display_names({fn.name for r in reports for fn in r.functions}
                          | {f.function for r in reports for f in r.findings} | {n.function for r in reports for n in r.pdl if n.function})
    only = set(args.only)
    rows: list[_Shown] = []
    for r in reports:
        for f in r.findings:
            if only and not (ci.categories(f) & only):
                continue
            kernel = demangle(f.function)
            rows.append(_Shown(r, f.function, kernel, names.get(f.function, f.function), ci.fingerprint(f, kernel), True, finding=f))
        for n in r.pdl:
            if only and "pdl" not in only:
                continue
            kernel = demangle(n.function) if n.function else ""
            rows.append(_Shown(r, n.function, kernel, names.get(n.function, n.function), ci.note_fingerprint(n, kernel), True, note=n))
    new = ci.mark_new([s.fingerprint for s in rows], known)
    return [dataclasses.replace(s, new=flag) for s, flag in zip(rows, new)]


def _counts(rows: list[_Shown], pdl_counts: bool) -> bool:
    return any(s.new and (s.finding is not None or pdl_counts) for s in rows)


def _summary(rep: oracle.Report, rows: list[_Shown], with_baseline: bool) -> str:
    fs = [s.finding for s in rows if s.finding is not None]
    forb = sum(1 for f in fs if f.verdict == oracle.FORBIDDEN)
    new = sum(1 for s in rows if s.finding is not None and s.new)
    notes = sum(1 for s in rows if s.note is not None)
    n_fn = len(rep.functions)
    partial = sum(1 for fn in rep.functions if not fn.complete)
    why = ", ".join(([f"{partial} function(s)"] if partial else []) + (["the module"] if rep.unchecked else []))
    hidden = len(rep.findings) - len(fs)  # left out by --only: never "clean"
    state = (f"not fully checked ({why})" if why else "fully checked"
             + ("" if fs else f", no finding of the kinds --only names ({hidden} other(s) not shown)" if hidden else ", clean"))
    base = f" ({new} new, {len(fs) - new} known)" if with_baseline and fs else ""
    pdl = {True: "yes", False: "no", None: "-"}[rep.pdl_compiled_in]
    defines = f"; -D {' '.join(rep.defines)}" if rep.defines else ""
    review = f"; {notes} PDL review warning(s)" if notes else ""
    return (f"{rep.source} {rep.arch}: {len(fs)} finding(s) ({len(fs) - forb} permitted-hazard, {forb} forbidden){base} "
            f"in {n_fn} function(s); {state}{review}; PDL code compiled in: {pdl}{defines}")


def _print_human(reports: list[oracle.Report], rows: list[_Shown], args: argparse.Namespace) -> None:
    from rich.console import Console
    from rich.markup import escape

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            """The reader went away (``| head``, ``| true``): the rest goes to /dev/null and the exit status
            stays the check's (rich's default exits 1, which here means a finding)."""
            self.quiet = True
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())

        def print(self, *objects: Any, **kwargs: Any) -> None:
            """Each call prints one line: a file name's or a flag's control characters (a newline, a
            terminal escape) shown escaped, never a line of the report broken or a terminal driven."""
            super().print(*(printable(o) if isinstance(o, str) else o for o in objects), **kwargs)

    console = _Console(highlight=False, soft_wrap=True)
    by_report: dict[int, list[_Shown]] = {}
    for s in rows:
        by_report.setdefault(id(s.report), []).append(s)
    names = display_names({fn.name for r in reports for fn in r.functions})
    for rep in reports:
        mine = by_report.get(id(rep), [])
        console.print(f"[bold]{escape(_summary(rep, mine, args.baseline is not None))}[/]")
        reasons: dict[str, int] = {}
        for fn in rep.functions:
            fn_rows = [s for s in mine if s.finding is not None and s.finding in fn.findings and s.function == fn.name]
            n = len(fn_rows)
            if n:
                status = f"[red]{n} finding(s)[/]" + ("" if fn.complete else ", [yellow]not fully checked[/]")
            elif fn.findings:  # every one left out by --only
                status = (f"no finding of the kinds --only names ({len(fn.findings)} other(s) not shown)"
                          + ("" if fn.complete else ", [yellow]not fully checked[/]"))
            else:
                status = "[green]clean[/]" if fn.complete else "[yellow]not fully checked[/]"
            where = fn.short_name.partition(" (in ")[2]
            shown = names.get(fn.name, fn.short_name) + (f" (in {where}" if where else "")
            console.print(
                f"{escape(rep.source)} {rep.arch} [bold]{escape(shown)}[/]: {status} "
                f"({fn.mapped_mem_ops}/{fn.ptx_mem_ops} memory operations and {fn.mapped_syncs}/{fn.ptx_syncs} "
                f"synchronisation points mapped one-to-one)")
            for why in fn.unchecked:
                console.print(f"  [yellow]not checked:[/] {escape(why)}")
            if args.details:  # how the operations not mapped one-to-one were checked
                for note in fn.notes:
                    console.print(f"  note: {escape(note)}")
            for s in fn_rows:
                assert s.finding is not None
                k = reasons.setdefault(s.finding.reason, len(reasons) + 1)
                for line in (_details if args.details else _compact)(s, k):
                    console.print(line)
            if args.notes:
                for note in fn.notes:
                    console.print(f"  [dim]note: {escape(note)}[/]")
        for line in _review_lines(mine, args.baseline is not None):
            console.print(line)
        for reason, k in reasons.items():
            console.print(f"  [dim]why {k}:[/] {escape(reason)}")
        for why in rep.unchecked:
            console.print(f"  [yellow]not checked:[/] {escape(why)}")
        for note in rep.notes:
            if args.notes or note.startswith(("kept ", "not checked for ")):
                console.print(f"  [dim]note: {escape(note)}[/]")


def _review_lines(rows: list[_Shown], with_baseline: bool) -> list[str]:
    """The PDL review's warnings of one report, one group per kind and source line (or PTX text):
    a template's instantiations read the same line."""
    from rich.markup import escape

    groups: dict[tuple, list[_Shown]] = {}
    for s in rows:
        if s.note is not None:
            n = s.note
            key = (n.kind, n.src_file, n.src_line) if n.src_file else (n.kind, n.function, n.ptx_line)
            groups.setdefault(key, []).append(s)
    out = []
    for group in groups.values():
        first = group[0].note
        assert first is not None
        where = f"{first.src_file}:{first.src_line}" if first.src_file else f"ptx:{first.ptx_line}"
        names = list(dict.fromkeys(s.display or "(module)" for s in group))
        who = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        new = sum(1 for s in group if s.new)
        tag = "" if not with_baseline else f" ({new} new)" if new else " (known)"
        fps = group[0].fingerprint + (f" +{len(group) - 1}" if len(group) > 1 else "")
        out.append(f"  [magenta]pdl-review {first.kind}[/]{tag} at {escape(where)} in {escape(who)}: "
                   f"{escape(first.text)} [dim]{escape(f'[{fps}]')}[/]")
        out.append(f"    [dim]{escape(first.message)}[/]")
    return out


#: the word for a finding's point, by check
_POINT = {"crossing": "sync", "merged": "with", "loop-deleted": "loop", "unguarded-wait": "wait"}


def _head_parts(f: oracle.Finding) -> tuple[str, str, str]:
    """A finding's colour (forbidden red), what happened (the direction of a crossing, else the
    check) and the word for its point."""
    return ("red" if f.verdict == oracle.FORBIDDEN else "yellow",
            f.direction if f.check == oracle.CROSSING else f.check, _POINT.get(f.check, ""))


def _compact(s: _Shown, why: int) -> list[str]:
    """A finding in two or three lines."""
    from rich.markup import escape

    f = s.finding
    assert f is not None
    colour, what, tag = _head_parts(f)
    file, line = ci.source_location(f)
    at = f" at {file}:{line}" if file else ""
    state = "" if s.new else " [dim](known)[/]"
    sync = f.sync_ptx or f.sync_sass
    head = f"  [{colour}]{f.verdict}[/]{state} {escape(ci.op_kind(f) or f.check)} {what}" + (f" {escape(sync)}" if sync and f.check == oracle.CROSSING else "")
    lines = [head + f"{escape(at)} [dim](why {why}) {escape(f'[{s.fingerprint}]')}[/]"]
    op = f"op   ptx:{f.op_ptx_line} {f.op_ptx}" if f.op_ptx else "op   ptx:- (not mapped)"
    op += f"  =  sass:{f.op_sass_offset:04x} {f.op_sass}" if f.op_sass else ""
    lines.append(f"    {escape(op)}")
    if f.sync_ptx or f.sync_sass:
        sync_line = f"{tag:<4} ptx:{f.sync_ptx_line} {f.sync_ptx or '-'}" + (f"  =  sass:{f.sync_sass_offset:04x} {f.sync_sass}" if f.sync_sass else "")
        lines.append(f"    {escape(sync_line)}")
    more = []
    crossed = [c for c in getattr(f, "crossed", ()) if c != f.sync_ptx and not c.startswith(f"{f.sync_ptx} (")]
    if crossed:
        more.append("also crossed: " + ", ".join(crossed))
    if f.evidence:
        more.append("evidence: " + clip(f.evidence, 160))  # --details: in full
    if more:
        lines.append(f"    [dim]{escape('; '.join(more))}[/]")
    return lines


def _details(s: _Shown, why: int) -> list[str]:
    """A finding in full, one row for the operation and one for the point, PTX above SASS."""
    from rich.markup import escape

    f = s.finding
    assert f is not None
    colour, what, label = _head_parts(f)
    out = [f"  [{colour}]{f.verdict}[/] {what} [dim](why: {why}) {escape(f'[{s.fingerprint}' + ('' if s.new else ', known') + ']')}[/]"]
    rows = [("op", f.op_ptx, f.op_ptx_line, f.op_sass, f.op_sass_offset)]
    if f.sync_ptx:
        rows.append((label, f.sync_ptx, f.sync_ptx_line, f.sync_sass, f.sync_sass_offset))
    for tag, ptx, line, sass_text, off in rows:
        out.append(f"    {tag:<4} ptx:{line:<5} {escape(ptx)}" if ptx else f"    {tag:<4} ptx:-     (not mapped)")
        if sass_text:
            out.append(f"         sass:{off:04x}  {escape(sass_text)}")
    file, line_no = ci.source_location(f)
    if file:
        out.append(f"    source {escape(file)}:{line_no}")
    for c in getattr(f, "crossed", ()):
        out.append(f"    crossed {escape(c)}")
    if f.evidence:
        out.append(f"    [dim]evidence: {escape(f.evidence)}[/]")
    return out


def _json(rep: oracle.Report, rows: list[_Shown]) -> dict:
    d = rep.to_dict()
    names = display_names({fn.name for fn in rep.functions})
    for fd, fn in zip(d["functions"], rep.functions):
        fd["display_name"] = names.get(fn.name, fn.short_name)
        fd["demangled"] = demangle(fn.name)
    mine = {id(s.finding): s for s in rows if s.finding is not None}
    shown = []
    for fd, f in zip(d["findings"], rep.findings):
        s = mine.get(id(f))
        if s is None:
            continue  # left out by --only
        shown.append({**fd, "kernel": s.display, "fingerprint": s.fingerprint, "new": s.new})
    d["findings"] = shown
    notes = {id(s.note): s for s in rows if s.note is not None}
    d["pdl_review"] = [{**n.to_dict(), "fingerprint": notes[id(n)].fingerprint, "new": notes[id(n)].new}
                       for n in rep.pdl if id(n) in notes]
    return d


def _write(path: str, doc: dict) -> None:
    try:
        Path(path).write_text(json.dumps(doc, indent=1) + "\n")
    except OSError as e:
        raise EnvError(f"cannot write {path}: {e.strerror or e}") from None


def _check_outputs(args: argparse.Namespace) -> None:
    """The files and folder the run writes, checked before any compile (exit 2): a folder or a
    missing folder named as a file, a file named as --keep's folder."""
    from .argtypes import check_output_file

    if args.sarif:
        check_output_file("--sarif", args.sarif, "a SARIF file")
    if args.write_baseline:
        check_output_file("--write-baseline", args.write_baseline, "a baseline JSON file")
    if args.keep and Path(args.keep).exists() and not Path(args.keep).is_dir():
        raise UserError(f"--keep {args.keep}: is a file (expected a folder to write the PTX and SASS into)")


def run(args: argparse.Namespace) -> int:
    for a in args.arch or ():
        oracle.parse_arch(a)
    _check_outputs(args)
    known = ci.read_baseline(args.baseline) if args.baseline else None
    reports: list[oracle.Report] = []
    bad = 0
    errors: list[tuple[str, str]] = []  # (input, its error line): the SARIF's error notifications
    from ..progress import Progress, wanted

    jobs = _jobs(args)
    with Progress(wanted(args.progress), "fuzzgpu sass", total=len(jobs)) as bar:
        for i, (label, job) in enumerate(jobs):
            bar.update(f"{clip(str(label), 60)}: compile, disassemble and check", completed=i)
            try:
                reps = job()
            except UserError as e:  # this input (missing, a compile error); the others are still checked
                bad += 1
                line = str(e) if isinstance(e, SourceError) else f"fuzzgpu sass: error: {e}"
                line = clip(line.splitlines()[0] if line.strip() else "fuzzgpu sass: error", 2000)
                print(line, file=sys.stderr, flush=True)
                errors.append((str(label), line))
                continue
            reports.extend(reps)
        bar.update("fuzzgpu sass: every input done", completed=len(jobs))
    rows = _shown(reports, args, known)
    pdl_counts = args.pdl_review or "pdl" in args.only
    if args.json:
        for r in reports:
            print(json.dumps(_json(r, rows)), flush=True)
    elif reports or not bad:  # every input failed: its error lines say all
        _print_human(reports, rows, args)
        sys.stdout.flush()
        fs = [s for s in rows if s.finding is not None]
        forb = sum(1 for s in fs if s.finding is not None and s.finding.verdict == oracle.FORBIDDEN)
        partial = sum(1 for r in reports for fn in r.functions if not fn.complete) + sum(1 for r in reports if r.unchecked)
        hidden = sum(len(r.findings) for r in reports) - len(fs)
        tail = ((f", {hidden} other finding(s) left out by --only" if hidden else "")
                + (f", {partial} function(s) not fully checked" if partial else "")
                + (f", {bad} input(s) not checked (the error lines above)" if bad else ""))
        base = f" ({sum(1 for s in fs if s.new)} new)" if known else ""
        n_notes = sum(1 for s in rows if s.note is not None)
        review = f", {n_notes} PDL review warning(s)" + (" (counted: --pdl-review)" if pdl_counts else "") if n_notes else ""
        print(f"{len(fs)} finding(s){base}, {forb} forbidden{review}, in {len(reports)} module(s){tail}", file=sys.stderr)
    if args.sarif:
        results = [ci.result_of_finding(s.finding, s.display, s.fingerprint, s.new, s.report.source) if s.finding is not None
                   else ci.result_of_note(s.note, s.display, s.fingerprint, s.new, s.report.source)  # type: ignore[arg-type]
                   for s in rows]
        _write(args.sarif, ci.sarif_document(results, __version__, ci.notices_of(reports, errors)))
    if args.write_baseline:
        _write(args.write_baseline, ci.baseline_document(
            {"fingerprint": s.fingerprint, "kernel": s.display, "arch": s.report.arch,
             "what": (f"{s.finding.check} {s.finding.verdict} {ci.op_kind(s.finding)} {s.finding.direction} {s.finding.sync_ptx}".strip()
                      if s.finding is not None else f"pdl-review {s.note.kind if s.note else ''}")}
            for s in rows))
    if _counts(rows, pdl_counts):
        return oracle.EXIT_FINDING
    if bad:
        return EXIT_USAGE
    if not all(r.complete for r in reports):
        return oracle.EXIT_NOT_FULLY_CHECKED
    return oracle.EXIT_CLEAN


__all__ = ["HELP", "DESCRIPTION", "configure", "run", "UserError"]
