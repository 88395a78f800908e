"""``fuzzgpu campaign``: a long fuzzing run with a profile, a backend, a time budget and a corpus."""

from __future__ import annotations

import argparse
import sys

HELP = "fuzz for a while: generate, run, judge, shrink and save findings to a corpus"

DESCRIPTION = """\
Generate litmus programs with Hypothesis from a profile, run each on a backend, judge every observed
outcome with the PTX memory-model oracle, and when a program breaks the property, shrink it with
Hypothesis to a minimal reproducer and save it to the corpus (one JSON file + a .litmus file per
finding, deduplicated).  A live display shows programs/s, instances/s, findings, the time since the
last finding, and the weak (non-SC) rate per shape.

Profiles (--profile NAME reads ./strategies/NAME.toml when present, else the copy shipped with
fuzzgpu; --profile PATH reads any file):
  classic    MP, SB, LB, S, R, 2+2W, IRIW, WRC, ISA2, CoRR, CoWW with random annotations
  scopes     strong accesses and fences at every scope, threads in one CTA / CTAs / a cluster
  pdl        PDL handoff between two grids (griddepcontrol), load type incl. ld.global.nc
  proxy      TMA store / load through the async proxy, fence.proxy.async, cp.async
  mbarrier   mbarrier producer/consumer, release/relaxed arrive, acquire/relaxed wait
  random     free-form random programs

Backends:
  auto    the GPU when PyCUDA imports and a device exists; otherwise `static` (said on screen)
  cuda    the GPU (many millions of instances per program, under the profile's stress settings)
  sim     a CPU SIMULATION: outcomes sampled from the oracle's allowed set; finds nothing real, it
          tests the fuzzer.  --sim-fault relacq-as-relaxed injects a fault (release/acquire
          treated as relaxed) so that the campaign has something to find
  static  no execution: compile each program's kernels with nvcc, disassemble, and report memory
          operations ptxas moved across a synchronisation point (e.g. ld.global.nc hoisted above
          griddepcontrol.wait)

Properties: model (no outcome the oracle forbids; default) or sc (no non-SC outcome: the pattern
is under-synchronised).  Programs whose mechanism the oracle does not cover are counted as
"not covered", never guessed.

Interrupting: Ctrl-C finishes the current program, saves the smallest failing program seen when a
shrink was under way, and writes the report; a second Ctrl-C stops at once.  Everything is saved
atomically in the corpus folder (.fuzzgpu/ holds the state, Hypothesis's example database and the
evidence cache), so running the same command again resumes the campaign, even after a kill.

Report: DIR/report/report.txt, report.json and weak-rates.png (needs matplotlib).

Exit status: 0 when no new finding was saved, 1 when at least one was, 2 on an error.

examples:
  fuzzgpu campaign --profile classic --time 600 --corpus corpus/
  fuzzgpu campaign --profile pdl --backend static --time 120 --corpus /tmp/pdl
  fuzzgpu campaign --profile pdl --backend static --time 120 --max-findings 1 --corpus /tmp/pdl
  fuzzgpu campaign --profile classic --backend sim --sim-fault relacq-as-relaxed --time 60 --corpus /tmp/c
  fuzzgpu campaign --profile strategies/my-profile.toml --property sc --seed 7 --corpus runs/mine
"""


def _seconds(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return v


def _seed(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {text!r}")
    return v


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", default="classic", metavar="NAME|PATH", help="profile name or .toml path (default: classic)")
    parser.add_argument("--backend", default="auto", choices=("auto", "cuda", "sim", "static"), help="where programs run (default: auto)")
    parser.add_argument("--time", type=_seconds, default=60.0, metavar="SECONDS", help="time budget of this session (default: 60)")
    parser.add_argument("--corpus", default="corpus", metavar="DIR", help="corpus folder: findings, state, report (default: corpus)")
    parser.add_argument("--property", default="model", choices=("model", "sc"), help="what counts as a failure (default: model)")
    parser.add_argument("--seed", type=_seed, default=None, metavar="N", help="random seed (default: random; kept in the corpus state)")
    parser.add_argument("--sim-fault", default=None, metavar="FAULT", help="with --backend sim: inject a fault (relacq-as-relaxed)")
    parser.add_argument("--max-findings", type=_seed, default=None, metavar="N",
                        help="stop once N new findings are saved (default: run for the whole --time)")
    parser.add_argument("--no-live", action="store_true", help="plain status lines instead of the live table")
    parser.add_argument("--json", action="store_true", help="print the final report as JSON")


def run(args: argparse.Namespace) -> int:
    from ..campaign import run_campaign

    res = run_campaign(args.profile, args.backend, args.time, args.corpus, args.property, args.seed, args.sim_fault,
                       out=sys.stdout, live=False if args.no_live else None,
                       max_findings=args.max_findings)
    text = (res.report_dir / "report.txt").read_text()
    if args.json:
        print((res.report_dir / "report.json").read_text())
    else:
        print()
        print(text, end="")
        print(f"report: {res.report_dir}/report.txt, report.json" + (", weak-rates.png" if (res.report_dir / "weak-rates.png").exists() else " (no plot: matplotlib missing)"))
        print(f"session: {res.session_programs} programs, {res.session_instances:.3g} instances in {res.session_seconds:.1f} s; "
              f"new findings {len(res.new_findings)}; ended: {res.reason}")
    return 1 if res.new_findings else 0
