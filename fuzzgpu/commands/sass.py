"""``fuzzgpu sass``: the static SASS oracle on the command line."""

from __future__ import annotations

import argparse
import json
import sys

from .. import sass as oracle
from ..errors import EXIT_USAGE, SourceError, UserError, clip

HELP = "find memory operations that ptxas moved across a synchronisation point"

DESCRIPTION = """\
Compile CUDA (.cu), PTX (.ptx) or a litmus test (.litmus) with the local nvcc/ptxas, or read a
cubin (.cubin), disassemble it (nvdisasm or cuobjdump), and compare the SASS with the PTX:

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
                (seen on an H200 to miss the data: docs/findings.md).

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

For a .cu file the compiler's own PTX (nvcc -keep) is compared with its cubin; a .ptx file is
assembled with ptxas; a .cubin needs the PTX it was built from beside it (NAME.ptx); a .litmus file is
turned into one kernel per thread by fuzzgpu.codegen.  Each input is checked for every --arch.

A function is "clean" only when every memory operation and every ordering synchronisation point of
its PTX and SASS is accounted for; otherwise it is "not fully checked" and the lines "not checked:"
say what was left (--notes shows more).

Exit status (the first that applies): 1 at least one finding, 2 an error (missing file, compile
error, unknown arch: one line on stderr for each such input, and the other inputs are still checked
and reported), 0 clean (no finding, everything checked), 3 no finding but not fully checked (never reported as clean), as
for every fuzzgpu command whose result could not be fully checked, and 3 when the environment failed:
nvcc, ptxas or the disassembler missing (one line naming it; nvdisasm/cuobjdump: `pip install
nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump`).

examples:
  fuzzgpu sass tests/kernels/D_flashmla_shape.cu   sm_90, sm_90a and sm_100a, -O3
  fuzzgpu sass --arch sm_90 -O 2 tests/kernels/D_flashmla_shape.cu   one arch, ptxas -O2
  fuzzgpu sass --json tests/kernels/D_flashmla_shape.cu   one JSON object per input and arch
  fuzzgpu sass --nvcc-flag=-DPDL --nvcc-flag=-lineinfo tests/kernels/D_flashmla_shape.cu
  fuzzgpu sass --keep out/ tests/kernels/D_flashmla_shape.cu   also write out/D_flashmla_shape.sm_90.ptx, .sass, ...
  fuzzgpu sass tests/litmus/gpu/MP-relacq-gpu.litmus   the kernels fuzzgpu generates for a litmus test
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help=".cu, .ptx, .cubin or .litmus files")
    parser.add_argument("--arch", action="append", default=None, metavar="ARCH",
                        help=f"target architecture, repeatable (default: {' '.join(oracle.DEFAULT_ARCHS)})")
    parser.add_argument("-O", dest="opt", type=int, default=oracle.DEFAULT_OPT, choices=range(0, 4), metavar="N",
                        help="optimisation level for nvcc and ptxas (default: 3)")
    parser.add_argument("--nvcc-flag", action="append", default=[], metavar="FLAG",
                        help="extra flag for nvcc (repeatable; -Xptxas values are passed to ptxas for .ptx input)")
    parser.add_argument("--json", action="store_true", help="one JSON object per input and arch")
    parser.add_argument("--notes", action="store_true", help="also print what could not be mapped or checked")
    parser.add_argument("--keep", metavar="DIR", default=None,
                        help="write the PTX and SASS that the line numbers refer to (STEM.ARCH.ptx/.sass) into DIR")


def _print_human(reports: list[oracle.Report], show_notes: bool) -> None:
    from rich.console import Console
    from rich.markup import escape

    console = Console(highlight=False, soft_wrap=True)
    for rep in reports:
        for fn in rep.functions:
            if fn.findings:
                status = f"[red]{len(fn.findings)} finding(s)[/]" + ("" if fn.complete else ", [yellow]not fully checked[/]")
            else:
                status = "[green]clean[/]" if fn.complete else "[yellow]not fully checked[/]"
            console.print(
                f"[bold]{escape(rep.source)}[/] {rep.arch} [bold]{escape(fn.short_name)}[/]: {status} "
                f"({fn.mapped_mem_ops}/{fn.ptx_mem_ops} memory operations and {fn.mapped_syncs}/{fn.ptx_syncs} "
                f"synchronisation points mapped one-to-one)"
            )
            for why in fn.unchecked:
                console.print(f"  [yellow]not checked:[/] {escape(why)}")
            reasons: dict[str, int] = {}
            for f in fn.findings:
                colour = "red" if f.verdict == oracle.FORBIDDEN else "yellow"
                n = reasons.setdefault(f.reason, len(reasons) + 1)
                what = f.direction if f.check == oracle.CROSSING else f.check
                console.print(f"  [{colour}]{f.verdict}[/] {what} [dim](why: {n})[/]")
                rows = [("op", f.op_ptx, f.op_ptx_line, f.op_sass, f.op_sass_offset)]
                label = {"crossing": "sync", "merged": "with", "loop-deleted": "loop", "unguarded-wait": "wait"}.get(f.check, "")
                if f.sync_ptx:
                    rows.append((label, f.sync_ptx, f.sync_ptx_line, f.sync_sass, f.sync_sass_offset))
                for tag, ptx, line, sass, off in rows:
                    console.print(f"    {tag:<4} ptx:{line:<5} {escape(ptx)}" if ptx else f"    {tag:<4} ptx:-     (not mapped)")
                    if sass:
                        console.print(f"         sass:{off:04x}  {escape(sass)}")
                if f.src_line:
                    console.print(f"    src  {escape(f.src_file)}:{f.src_line}")
                if len(f.crossed) > 1:
                    console.print(f"    also crossed: {escape('; '.join(f.crossed[1:]))}")
                if f.evidence:
                    console.print(f"    [dim]evidence: {escape(f.evidence)}[/]")
            for reason, n in reasons.items():
                console.print(f"  [dim]why {n}:[/] {escape(reason)}")
            if show_notes:
                for note in fn.notes:
                    console.print(f"  [dim]note: {escape(note)}[/]")
        for why in rep.unchecked:
            console.print(f"  [yellow]not checked:[/] {escape(why)}")
        for note in rep.notes:
            if show_notes or note.startswith("kept "):
                console.print(f"  [dim]note: {escape(note)}[/]")


def run(args: argparse.Namespace) -> int:
    archs = tuple(args.arch) if args.arch else oracle.DEFAULT_ARCHS
    for a in archs:
        oracle.parse_arch(a)
    reports: list[oracle.Report] = []
    bad = 0
    for path in args.paths:
        try:
            reps = oracle.check_path(path, archs, args.opt, tuple(args.nvcc_flag), keep_dir=args.keep)
        except UserError as e:  # this input (missing, a compile error); the others are still checked
            bad += 1
            line = str(e) if isinstance(e, SourceError) else f"fuzzgpu sass: error: {e}"
            print(clip(line.splitlines()[0] if line.strip() else "fuzzgpu sass: error", 2000), file=sys.stderr, flush=True)
            continue
        if args.json:
            for r in reps:
                print(json.dumps(r.to_dict()), flush=True)
        reports.extend(reps)
    if not args.json and (reports or not bad):  # every input failed: its error lines say all
        _print_human(reports, args.notes)
        n = sum(len(r.findings) for r in reports)
        forb = sum(1 for r in reports for f in r.findings if f.verdict == oracle.FORBIDDEN)
        sys.stdout.flush()
        partial = sum(1 for r in reports for fn in r.functions if not fn.complete) + sum(1 for r in reports if r.unchecked)
        tail = (f", {partial} function(s) not fully checked" if partial else "") + (f", {bad} input(s) not checked (the error lines above)" if bad else "")
        print(f"{n} finding(s), {forb} forbidden, in {len(reports)} module(s){tail}", file=sys.stderr)
    status = oracle.exit_status(reports)
    return status if status == oracle.EXIT_FINDING or not bad else EXIT_USAGE


__all__ = ["HELP", "DESCRIPTION", "configure", "run", "UserError"]
