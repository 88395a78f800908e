"""``fuzzgpu campaign``: a long fuzzing run with a profile, a backend, a time budget and a corpus."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import math

from .argtypes import non_negative_int, number

#: the longest session --time accepts (30 days) and the longest --watchdog (one day): a campaign
#: that should run longer resumes from its corpus; a watchdog past a day never fires
MAX_TIME = 30 * 86400.0
MAX_WATCHDOG = 86400.0
#: where a campaign writes without --corpus: a folder of its own, never the tracked corpus/ of
#: reproducers (a simulated-fault finding must not land beside the real ones); .gitignore lists it
DEFAULT_CORPUS = "fuzz-corpus"

HELP = "fuzz for a while: generate, run, judge, shrink and save findings to a corpus"

DESCRIPTION = """\
Generate litmus programs with Hypothesis from a profile, run each on a backend, judge every observed
outcome with the PTX memory-model oracle, and when a program breaks the property, shrink it with
Hypothesis to a minimal reproducer and save it to the corpus (one JSON file + a .litmus file per
class of findings, below).  A live display shows programs judged/s and run/s (judged: every
program judged, the evidence cache's answers to a program asked again and the draws the backend
cannot run included; run: those the backend ran), instances/s, "N findings in K classes", the time
since the last finding, and the weak (non-SC) rate per shape.

Profiles (--profile NAME reads ./strategies/NAME.toml when present, else the copy shipped with
fuzzgpu; --profile PATH reads any file):
  all        (default) the general generator: producer/consumer handoffs over every mechanism
             (flags, bar.sync, mbarrier, PDL, stream order, cp.async, TMA load/store, proxy fences,
             every load type, scope and placement); see docs/fuzzing.md
  classic    MP, SB, LB, S, R, 2+2W, IRIW, WRC, ISA2, CoRR, CoWW with random annotations
  scopes     strong accesses and fences at every scope, threads in one CTA / CTAs / a cluster
  pdl        PDL handoff between two grids (griddepcontrol), load type incl. ld.global.nc
  proxy      TMA store / load through the async proxy, fence.proxy.async, cp.async
  mbarrier   mbarrier producer/consumer, release/relaxed arrive, acquire/relaxed wait
  random     free-form random programs
  reliability  bounded waits (spin on a flag, mbarrier try_wait loop) among classic shapes, with
             programs whose wait may never complete: their timeouts are expected; a timeout where
             the model says every wait completes is a finding (docs/reliability.md)

Backends:
  auto    the GPU when PyCUDA imports and a device exists; otherwise `static` (said on screen)
  cuda    the GPU (many millions of instances per program, under the profile's stress settings)
  sim     a CPU SIMULATION: outcomes sampled from the oracle's allowed set; finds nothing real, it
          tests the fuzzer.  --sim-fault relacq-as-relaxed injects a fault (release/acquire
          treated as relaxed) so that the campaign has something to find; --sim-fault
          timeout[:RATE] makes 1% of the instances of programs with a wait time out; --sim-fault
          unwritten[:RATE] makes 1% read a value no store wrote (`?`: a harness fault, reported
          as such, never as a forbidden outcome); --sim-fault refused[:RATE] fails some runs as
          a launch the CUDA driver refuses (not covered; the program kept in DIR/refused/)
  static  no execution: compile each program's kernels with nvcc, disassemble, and report memory
          operations ptxas moved across a synchronisation point (e.g. ld.global.nc hoisted above
          griddepcontrol.wait)

Properties: model (no outcome the oracle forbids; default), sc (no non-SC outcome: the pattern
is under-synchronised; needs executed outcomes: refused with --backend static, exit 2, and said
loudly on screen and in the report when --backend auto finds no GPU) or race (no outcome only a data race produces: the program races in the PTX
ISA's sense and the run showed the handoff fail; each finding names the racing pair, the mechanism
that failed and the weakest change (one, else two) that fixes it; on sim and static the finding is the
oracle's).  Programs whose mechanism the oracle does not cover are counted as
"not covered", never guessed.

Corpus folder: --corpus DIR (default ./fuzz-corpus): the findings, the state and the report.  The
default is never the repository's tracked corpus/ (its reviewed reproducers, which CI replays): a
campaign's findings -- a simulated fault's among them -- are copied there by hand once understood.

Deadline: --time SECONDS is a deadline for the whole session.  Hypothesis generates and shrinks until
15% of it (at most 15 s) is left; the last finding's fix search stops 8% (at most 5 s) before the end,
and any finding's fix search after 30 s ("fix search stopped at its bound": explain runs it whole); then the state and the report are
written.  What the deadline cut short (a shrink: the smallest failing program so far is saved, "not
fully shrunk"; a fix search: "fix search stopped at the deadline after N candidates: no fix claimed")
is printed as "CUT SHORT by the deadline: ..." and listed in the report ("cut short").  A fix search
that runs longer than the status interval prints "[finishing] fix search ..." lines while it runs.

Interrupting: Ctrl-C finishes the current program, saves the smallest failing program seen when a
shrink was under way, and writes the report; a second Ctrl-C stops at once.  Everything is saved
atomically in the corpus folder (.fuzzgpu/ holds the state, Hypothesis's example database and the
evidence cache), so running the same command again resumes the campaign, even after a kill.

Several GPUs: --gpus all|N|0,2 starts one worker process per GPU (pinned with CUDA_VISIBLE_DEVICES),
all sharing the corpus, the Hypothesis example database and the evidence cache; --workers N does the
same with N worker processes on the CPU backends (sim, static).  One combined status and report.
Compiling dominates a GPU campaign (the GPU runs 1e7 instances in a few ms): --workers-per-gpu K puts
K workers on each GPU, so that K programs compile on the CPU while another runs (default: five for every
four CPU cores, over the GPUs; a worker waiting for the GPU sleeps, it does not spin a core).  Each worker's backend
has its own CUDA context (--gpu-context per-worker, the default; the contexts of several processes
time-slice the GPU); --gpu-context shared gives each GPU one runner whose --gpu-processes N processes
(default 1: the GPU's only context) run the programs the workers compile and check.

A Ray cluster: --ray auto|ADDRESS runs the same workers as Ray actors, one per GPU of the cluster
(--gpus all|N, --workers-per-gpu K: K actors per GPU) or --workers N on the CPU backends; the
actors need no shared file system (this process keeps the corpus, deduplicates and reports), and
an actor whose node goes away is restarted on a free resource.  Needs pip install 'fuzzgpu[ray]';
see docs/ray.md.

Reliability: the backend runs in a worker process under a watchdog (--watchdog SECONDS plus ten times
the expected run time per program).  A program that hangs, crashes the worker or faults the GPU (a
trap or an illegal address loses the CUDA context) is saved to DIR/quarantine/ (.json with the fault,
.litmus, .sass when it compiles), skipped from then on, and the campaign goes on with a fresh worker
and context.  --gpu-fault trap,illegal-address,hang injects such faults (testing).  --in-process runs
the backend in this process, without the worker and its watchdog: a GPU fault there (the CUDA
context is lost, and there is no worker to restart) quarantines the program, saves the state, the
corpus and the report, and stops the campaign with one line and exit status 3 (a hang is not caught
at all); the --sim-fault faults that stop the process (hang, slow, crash, exit, gpu-fault, error)
are refused with --in-process (exit 2).  When the runs of half the workers on one GPU (or of --workers
N on one backend; at least 3) hang at one instant and the campaign then runs almost nothing, the device
stopped answering them: their programs go to DIR/stalled/ (not quarantined: none is shown to hang), and
the campaign writes its report and stops, exit 3 (not looked for across several GPUs, with
--gpu-context shared or with --ray).  See docs/reliability.md.

Report: DIR/report/report.md and report.html (read these first: what to act on, findings per class,
findings and programs judged and run per second over time, the shapes; the HTML has the plots
embedded), the plots findings-over-time.png, programs-per-second.png and weak-rates.png (needs
matplotlib; a plot with nothing to show is not drawn, the report says why), report.txt and
report.json (its "totals": judged, run, judged_per_hour, run_per_hour).

Classes: findings are grouped by root cause (the property, the shape, and what breaks it: the kinds
of the edges of the forbidding cycle, the verdict, the SASS reordering, or a forbidden timeout).  The
corpus keeps one entry per class, with the count and the signatures of the variants seen; a failing
program of a class that has an entry is counted, not shrunk and not saved again.  The display and the
report say "N findings in K classes".  A known-findings list (--known FILE, default DIR/known.json
when present; --known shipped: the list that comes with fuzzgpu, corpus/known.json) names classes already understood and written
up: they are counted and shown, never saved, so a long campaign keeps looking for new ones.  A
finding that cannot be saved as an entry (a bug, a full disk) is kept raw in DIR/raw/, reported, and
the campaign goes on.

Exit status: 0 when no new finding was saved this session, 1 when at least one was (a new corpus
entry, or a finding kept raw in DIR/raw/), 2 on bad usage or input, 3 when the environment failed
(among others: --backend cuda, static or auto without nvcc, or without nvdisasm/cuobjdump, checked
before the campaign starts; a GPU fault with --in-process, which stops the campaign, whatever it
had saved).  The report's last line says which, and why.

examples:
  fuzzgpu campaign --time 600 --corpus fuzz-corpus --known shipped
  fuzzgpu campaign --profile all --property race --backend sim --time 600 --corpus /tmp/disc
  fuzzgpu campaign --profile pdl --backend static --time 120 --corpus /tmp/pdl
  fuzzgpu campaign --profile pdl --backend static --time 120 --max-findings 1 --corpus /tmp/pdl
  fuzzgpu campaign --profile classic --backend sim --sim-fault relacq-as-relaxed --time 60 --corpus /tmp/c
  fuzzgpu campaign --profile classic --backend sim --workers 4 --time 60 --corpus /tmp/c4
  fuzzgpu campaign --profile pdl --gpus all --time 3600 --corpus runs/pdl
  fuzzgpu campaign --profile classic --backend cuda --gpus all --workers-per-gpu 6 --time 3600 --corpus runs/c
  fuzzgpu campaign --profile classic --backend cuda --ray auto --gpus all --time 3600 --corpus runs/ray
  fuzzgpu campaign --profile classic --backend cuda --gpu-fault trap:0.02,hang:0.01 --watchdog 10 --corpus /tmp/r
  fuzzgpu campaign --profile strategies/scopes.toml --property sc --seed 7 --corpus runs/mine
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", default="all", metavar="NAME|PATH", help="profile name or .toml path (default: all)")
    parser.add_argument("--backend", default="auto", choices=("auto", "cuda", "sim", "static"), help="where programs run (default: auto)")
    parser.add_argument("--time", type=_seconds(MAX_TIME), default=60.0, metavar="SECONDS",
                        help=f"this session's deadline (default: 60; at most {MAX_TIME:.0f}, 30 days: a longer campaign resumes); "
                             "the shrink, the fix search and the report finish inside it")
    parser.add_argument("--corpus", default=DEFAULT_CORPUS, metavar="DIR",
                        help=f"corpus folder: findings, state, report (default: ./{DEFAULT_CORPUS}, not the tracked corpus/ of reproducers)")
    parser.add_argument("--property", default="model", choices=("model", "sc", "race"), help="what counts as a failure (default: model)")
    parser.add_argument("--seed", type=non_negative_int, default=None, metavar="N", help="random seed (default: random; kept in the corpus state)")
    parser.add_argument("--sim-fault", default=None, metavar="FAULT",
                        help="with --backend sim: inject faults, comma-separated: relacq-as-relaxed, timeout, unwritten, and for testing the "
                             "worker supervision hang, slow, crash, exit, gpu-fault, error (NAME:RATE hits that fraction of programs)")
    parser.add_argument("--max-findings", type=_at_least_one, default=None, metavar="N",
                        help="stop once N new findings are saved, N >= 1 (default: run for the whole --time)")
    parser.add_argument("--no-live", action="store_true", help="plain status lines instead of the live table")
    parser.add_argument("--json", action="store_true", help="print the final report as JSON, alone on stdout (the progress goes to stderr)")
    parser.add_argument("--gpus", default=None, metavar="all|N|IDS", help="one worker process per GPU (all visible, the first N, or a list)")
    parser.add_argument("--workers", type=_workers, default=None, metavar="N", help="N worker processes on one corpus (CPU backends; default 1)")
    parser.add_argument("--known", default=None, metavar="FILE",
                        help="known-findings list (default: DIR/known.json when present; 'shipped': the list that comes "
                             "with fuzzgpu, the repository's corpus/known.json): classes counted, never saved")
    parser.add_argument("--workers-per-gpu", type=_workers, default=None, metavar="K",
                        help="with --gpus: K worker processes per GPU (default: five for every four CPU cores, over the GPUs, at least 1; "
                             "with --ray 1); several overlap one program's compile on the CPU with another's run on the GPU "
                             "-- the way to more programs per hour")
    parser.add_argument("--gpu-context", default="per-worker", choices=("shared", "per-worker"),
                        help="with --gpus and the cuda backend: per-worker (default) -- each worker's backend has its own CUDA "
                             "context (the contexts time-slice the GPU); shared -- one GPU runner per GPU runs the programs its "
                             "workers compile, in --gpu-processes contexts, the workers open none. A program that hangs or "
                             "faults the GPU is quarantined either way (not with --ray: each actor has its own context)")
    parser.add_argument("--gpu-processes", type=_workers, default=None, metavar="N",
                        help="with --gpu-context shared: the runner's processes that run programs on each GPU, one CUDA "
                             "context each (default 1: the GPU's only context, programs back to back)")
    parser.add_argument("--gpu-runner", default=None, help=argparse.SUPPRESS)  # a worker: the runner's address
    parser.add_argument("--static-pool", action=argparse.BooleanOptionalAction, default=None,
                        help="with --gpus or --workers N (not sim, not --ray): one process checks the static kernels of every "
                             "worker's batches together, each program once (fewer nvcc and nvdisasm start-ups; a worker may wait "
                             "--static-pool-window for the others' batches before its own is checked). Default: on with 4 "
                             "local workers or more on a compiling backend, else off")
    parser.add_argument("--static-pool-window", type=_seconds(10.0), default=None, metavar="SECONDS",
                        help="with the static-check pool: how long it gathers the workers' batches after the first arrived "
                             "before it checks them together (default 0.25; longer: fewer, larger checks, a longer wait)")
    parser.add_argument("--gpu-fault", default=None, metavar="FAULT",
                        help="with --backend cuda: inject GPU faults into some programs to test the campaign's handling "
                             "of them, comma-separated: trap, illegal-address, hang (NAME:RATE hits that fraction of programs)")
    parser.add_argument("--watchdog", type=_seconds(MAX_WATCHDOG), default=None, metavar="SECONDS",
                        help=f"a program's deadline: this plus ten times its expected run time (default 120, at most {MAX_WATCHDOG:.0f})")
    parser.add_argument("--ray", default=None, metavar="auto|ADDRESS",
                        help="run the workers as actors on a Ray cluster (auto: the one this machine belongs to; or host:port); "
                             "one per GPU (--gpus all|N, --workers-per-gpu K) or --workers N; needs pip install 'fuzzgpu[ray]'")
    parser.add_argument("--in-process", action="store_true",
                        help="run the backend in this process (no worker, no watchdog): a GPU fault quarantines its program "
                             "and stops the campaign (exit 3)")
    parser.add_argument("--worker-id", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--same-seed", action="store_true", help=argparse.SUPPRESS)  # tests: every worker the same seed


def _seconds(most: float):
    def parse(text: str) -> float:
        v = number(text, float, "a number of seconds")
        if not math.isfinite(v) or not 0 < v <= most:
            raise argparse.ArgumentTypeError(f"must be a number of seconds above 0 and at most {most:.0f}: {text!r}")
        return v

    parse.__name__ = "seconds"
    return parse


def _at_least_one(text: str) -> int:
    """--max-findings: 0 ran the whole --time and then said it had stopped at 0 findings."""
    v = non_negative_int(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (without --max-findings the campaign runs for the whole --time): {text!r}")
    return v


def _workers(text: str) -> int:
    v = non_negative_int(text)
    if v < 1 or v > 256:
        raise argparse.ArgumentTypeError(f"must be between 1 and 256: {text!r}")
    return v


def _progress(args: argparse.Namespace):
    """Where the banner and the status lines go: stdout, except with --json, whose stdout is the
    report's one JSON document alone (a machine reads it; the progress goes to stderr)."""
    return sys.stderr if args.json else sys.stdout


def run(args: argparse.Namespace) -> int:
    import os
    import re
    import time

    started = time.monotonic()  # --time is a deadline from here: the backend's start-up counts

    from ..campaign import run_campaign
    from ..errors import UserError

    if args.worker_id is not None and not re.fullmatch(r"w[0-9]{1,3}", args.worker_id):
        raise UserError(f"--worker-id {args.worker_id!r}: expected wN")
    if os.path.lexists(args.corpus) and not os.path.isdir(args.corpus):  # bad input, not the environment
        raise UserError(f"--corpus {args.corpus}: not a folder (expected a corpus folder; a missing one is created)")
    from ..campaign.run import refuse_unfailable

    refuse_unfailable(args.property, args.backend)  # before any worker starts (parallel, Ray)
    from ..corpus.known import known_file

    args.known = known_file(args.known)
    refuse_gpu_context(args)
    if args.ray is not None:
        return run_parallel_cli(args)
    if args.workers_per_gpu is not None and args.gpus is None:
        raise UserError("--workers-per-gpu goes with --gpus (it sets how many workers each GPU gets; on the CPU use --workers N)")
    from .tools import require_backend_tools

    require_backend_tools(args.backend)
    if args.gpus is not None or (args.workers or 1) > 1:
        return run_parallel_cli(args)
    refuse_static_pool(args, 1)
    if args.worker_id is not None:
        import os

        print(f"worker {args.worker_id}: pid {os.getpid()}, CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', '(unset)')}",
              flush=True)
    res = run_campaign(args.profile, args.backend, args.time, args.corpus, args.property, args.seed, args.sim_fault,
                       out=_progress(args), live=False if args.no_live else None,
                       max_findings=args.max_findings, watchdog=args.watchdog, worker_id=args.worker_id,
                       isolate=not args.in_process, gpu_fault=args.gpu_fault, known=args.known, started=started,
                       runner=args.gpu_runner)
    text = (res.report_dir / "report.txt").read_text()
    if args.json:
        print((res.report_dir / "report.json").read_text())
    else:
        print()
        print(text, end="")
        print(f"report: {_report_files(res.report_dir)}")
        print(f"session: {res.session_programs} programs judged, {res.session_run} run, {res.session_instances:.3g} instances "
              f"in {res.session_seconds:.1f} s; "
              f"new findings {len(res.new_findings)}" + (f", {len(res.unsaved)} kept raw" if res.unsaved else "") + f"; ended: {res.reason}")
    if res.stopped_by_fault:  # cut short: never read as clean (nor only as a finding), whatever it saved
        from ..errors import EXIT_ENVIRONMENT, clip

        print(clip(f"fuzzgpu campaign: environment error: stopped: {res.stopped_by_fault}; {len(res.new_findings)} new finding(s) "
                   f"saved, state and report in {args.corpus}"), file=sys.stderr, flush=True)
        return EXIT_ENVIRONMENT
    return 1 if res.new_findings or res.unsaved else 0


def refuse_gpu_context(args: argparse.Namespace) -> None:
    """``--gpu-context shared`` goes with ``--gpus`` and the cuda backend, not with ``--ray``;
    ``--gpu-processes`` with ``--gpu-context shared`` (one line, exit 2)."""
    from ..errors import UserError

    if args.gpu_processes is not None and args.gpu_context != "shared":
        raise UserError("--gpu-processes goes with --gpu-context shared (the GPU runner's processes)")
    if args.gpu_context == "shared" and args.worker_id is None:
        if args.gpus is None or args.backend not in ("cuda", "auto"):
            raise UserError("--gpu-context shared goes with --gpus and the cuda backend (one GPU runner per GPU)")
        if args.ray is not None:
            raise UserError("--gpu-context shared is not for --ray (each actor has its own CUDA context)")


def refuse_static_pool(args: argparse.Namespace, workers: int | None = None) -> None:
    """``--static-pool`` (asked for) pools the static checks of a campaign's local workers on a compiling backend:
    refused (one line, exit 2) with ``--backend sim``, ``--ray``, or ``workers`` (when known) fewer than two."""
    from ..errors import UserError

    if args.static_pool_window is not None and (args.static_pool is False or args.backend == "sim" or args.ray is not None):
        raise UserError("--static-pool-window is the static-check pool's: not with --no-static-pool, --backend sim or --ray")
    if args.static_pool_window is not None and workers is not None and not static_pool_on(args, workers):
        raise UserError(f"--static-pool-window is the static-check pool's, which is off with {workers} local worker(s) "
                        "(on by default from 4 on a compiling backend; --static-pool turns it on from 2)")
    if args.static_pool is not True:
        return
    if args.backend == "sim" or args.ray is not None:
        raise UserError("--static-pool is for the compiling backends' local workers: not with --backend sim or --ray")
    if workers is not None and workers < 2:
        raise UserError("--static-pool checks several workers' batches together: give --gpus or --workers N (N >= 2)")


def static_pool_on(args: argparse.Namespace, workers: int) -> bool:
    """Whether a local parallel campaign of ``workers`` starts the static-check pool: as asked
    (``--static-pool``, ``--no-static-pool``), else on a compiling backend with
    :data:`fuzzgpu.workers.static_pool.AUTO_WORKERS` workers or more."""
    from ..workers.static_pool import AUTO_WORKERS

    if args.static_pool is not None:
        return bool(args.static_pool)
    return args.backend != "sim" and workers >= AUTO_WORKERS


def run_parallel_cli(args: argparse.Namespace) -> int:
    from ..errors import UserError
    from ..workers.local import default_workers_per_gpu, gpu_list, run_parallel, usable_cores
    from ..workers.supervised import DEFAULT_WATCHDOG

    if args.worker_id is not None:
        raise UserError("--worker-id is for the workers a parallel campaign starts")
    if args.in_process:
        raise UserError("--in-process runs one campaign: not with --gpus / --workers")
    refuse_static_pool(args)
    gpus = None
    if args.gpus is not None:
        if args.backend in ("sim", "static"):
            raise UserError(f"--gpus is for the GPU backend; with --backend {args.backend} use --workers N")
        if args.workers is not None:
            raise UserError("--gpus and --workers: give one of them (several workers per GPU: --workers-per-gpu K)")
    if args.ray is not None:
        from ..workers.ray_cluster import gpus_arg, run_ray

        if args.workers is not None and args.backend not in ("sim", "static"):
            raise UserError(f"--workers with --ray is for the CPU backends; with --backend {args.backend} the actors go one per GPU "
                            "(--gpus all|N, --workers-per-gpu K)")
        if args.workers_per_gpu is not None and args.gpus is None and args.backend in ("sim", "static"):
            raise UserError("--workers-per-gpu goes with --gpus (it sets how many workers each GPU gets; on the CPU use --workers N)")
        ray_gpus = gpus_arg(args.gpus if args.gpus is not None or args.backend in ("sim", "static") else "all")
        res = run_ray(address=args.ray, profile=args.profile, backend=args.backend if ray_gpus is None or args.backend != "auto" else "cuda",
                      seconds=args.time, corpus_dir=args.corpus, prop=args.property, seed=args.seed, sim_fault=args.sim_fault,
                      workers=args.workers or 1, gpus=ray_gpus, watchdog=args.watchdog or DEFAULT_WATCHDOG,
                      max_findings=args.max_findings, out=_progress(args), same_seed=args.same_seed, per_gpu=args.workers_per_gpu or 1,
                      gpu_fault=args.gpu_fault, known=args.known)
        return _parallel_report(args, res)
    per_gpu = args.workers_per_gpu or 1
    if args.gpus is not None:
        gpus = gpu_list(args.gpus)
        per_gpu = args.workers_per_gpu or default_workers_per_gpu(usable_cores(), len(gpus))
    workers = len(gpus) * per_gpu if gpus else args.workers or 1
    refuse_static_pool(args, workers)
    res = run_parallel(profile=args.profile, backend=args.backend if gpus is None or args.backend != "auto" else "cuda",
                       seconds=args.time, corpus_dir=args.corpus, prop=args.property, seed=args.seed,
                       sim_fault=args.sim_fault, workers=args.workers or 1, gpus=gpus,
                       watchdog=args.watchdog or DEFAULT_WATCHDOG, max_findings=args.max_findings, out=_progress(args),
                       same_seed=args.same_seed, per_gpu=per_gpu, gpu_fault=args.gpu_fault, known=args.known,
                       gpu_context=args.gpu_context, gpu_processes=args.gpu_processes or 1,
                       static_pool=static_pool_on(args, workers), static_pool_window=args.static_pool_window)
    return _parallel_report(args, res)


def _report_files(d: Path) -> str:
    """``DIR/report/report.md`` (read first), then the other files the report wrote."""
    plots = [p for p in ("findings-over-time.png", "programs-per-second.png", "weak-rates.png") if (d / p).exists()]
    return (f"{d}/report.md (read first), report.html, report.txt, report.json"
            + (f", {', '.join(plots)}" if plots else " (no plot: nothing to plot, or matplotlib missing: see report.md)"))


def _parallel_report(args: argparse.Namespace, res: dict) -> int:
    """Print a parallel campaign's combined report (local workers or Ray actors); the exit status."""
    rd = res["report_dir"]
    if args.json:
        print((rd / "report.json").read_text())
    else:
        print()
        print((rd / "report.txt").read_text(), end="")
        print(f"report: {_report_files(rd)}; worker logs: {args.corpus}/.fuzzgpu/workers/*/log.txt")
    new = any(not f.get("saved_by_another") for st in res["states"].values() for f in st.get("findings", []))
    return 1 if (res["combined"]["findings"] and new) or res["combined"]["save_errors"] else 0
