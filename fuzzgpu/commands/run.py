"""``fuzzgpu run``: run a litmus test on the GPU and print a litmus7-style histogram, each outcome
with its count and the oracle's verdict."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from ..errors import EXIT_CLEAN, EXIT_ENVIRONMENT, EXIT_FINDING, EnvError, UserError
from ..backends.base import RunConfig
from ..stress.space import StressConfig, read_knobs
from . import stress_options
from .argtypes import at_most, non_negative_int, positive_seconds, whole_count

if TYPE_CHECKING:  # the backends and the IR load on use
    from ..backends.base import Histogram, Outcome
    from ..ir import Program
    from ..stress.tune import GpuTuning

_WORD = 2**31 - 1  # the harness's knobs are 32-bit words

#: ``fuzzgpu run``'s stress when no option and no file says otherwise: RunConfig's (no stress)
DEFAULT_STRESS = StressConfig.of(RunConfig())

HELP = "run a .litmus test on the GPU; histogram of outcomes with a verdict per outcome"

DESCRIPTION = """\
Run a litmus test many times in parallel on the GPU and print how often each outcome occurred,
litmus7-style, with the memory-model oracle's verdict on each outcome:

  sc                     an interleaving of the threads produces it
  allowed                weak, but the PTX memory model allows it
  allowed-outside-model  allowed only because an access is outside the model (ld.global.nc)
  forbidden              the model forbids it: a hardware, compiler or model bug
  unwritten              a value no store of the test wrote was read (`?`, or a value outside
                         what the test can hold): a HARNESS OR HARDWARE FAULT, not an ordering
                         verdict; reported apart from the memory-model verdicts
  not covered            the oracle does not cover a mechanism of the test (no guess is made)
  timeout                a spin loop gave up after --budget iterations (not an outcome)

How it runs (docs/harness.md): every launch runs 65,536 instances of the test (256 testing CTAs,
--test-ctas, x 256 threads, --cta-threads; each hardware thread plays every thread of the test, each for a
different instance), threads placed as the test says (P0@cta 0 / P1@cta 1: different CTAs; same cta:
different warps; `warp N`: the same warp; `cluster N`: CTAs of one cluster). CTAs are permuted at
random for each launch, and so are the locations; every launch stores values unique to it, so memory
is never reset (programs with atom/red or values beyond 16 bits: memory is reset to the initial
values before each launch, and values are plain 32-bit words); outcomes are classified and counted
on the GPU. Every access is inline PTX, exactly as written.

Stress (the options below, one per knob of fuzzgpu.stress.space.StressConfig; docs/tuning.md): the
defaults are no stress (stride 1, no barrier, spin 0, no stress CTAs).  --stress-config F.toml
reads the [stress] table of F (the table `fuzzgpu tune --out` writes, or a profile's): its knobs
replace the defaults, the options given replace its knobs; its other keys (instances, seed,
budget, tune_share, ...) are not read.  The output names every knob the run used (and --json
gives them as "stress"), so a run can be repeated.  Facts from an H200: the barrier plus a spin
of 1000-10000 cycles is the cheapest effective stress; a stride of 1 word is needed for
L1-staleness behaviours.

run judges the outcomes it observed.  It reads the SASS only when it saw an outcome the oracle forbids:
then it checks the cubin that ran against the PTX it was assembled from, and says whether the code that
ran kept the test's order (docs/harness.md, "The SASS that ran"; --json: meta.ran_sass).  What ptxas did
to the same test otherwise (an ld.global.nc moved across a fence, a load not held back by an untested
try_wait: findings a campaign files even when no outcome showed them) is `fuzzgpu sass FILE.litmus`.

Provenance: every instance of a forbidden outcome is logged (the first 256 of a run) with its launch,
its instance, and for each thread of the test the SM, hardware CTA, warp and lane that played it;
the output groups them (launches, warps, SMs) and --json lists them under meta.provenance.  Whole
warps of one CTA per launch point at the compiled code, spread lanes and SMs at the memory system
(docs/harness.md, "Provenance"; docs/findings.md, section 3).

Exit status: 1 when a forbidden outcome was observed; 0 when none was and every outcome was judged;
2 on bad input (a file that is not a valid test, a construct the GPU cannot run such as the
abstract surface/texture proxies, values the harness cannot encode); 3 when the environment failed
(no nvcc, checked first; no GPU, no PyCUDA, nvcc failed), some outcome could not be judged (not covered by the oracle), or a
value no store of the program wrote was read (a HARNESS OR HARDWARE FAULT, not a memory-model
verdict: the run cannot be trusted).

--tune SECONDS: tune first, then run, in one command: `fuzzgpu tune`'s search (docs/tuning.md) spends
SECONDS GPU-seconds on short runs -- the stress the options give is its first candidate -- aiming at
the test's own condition (the non-SC outcomes its exists clause names; without a condition, every
non-SC outcome), then --instances run under the best configuration found.  The `Tuned` line names
it with its rate and the first candidate's; a forbidden outcome seen while tuning counts as one
seen in the run (exit 1).  Needs the oracle to cover the test (else exit 3).

examples:
  fuzzgpu run tests/litmus/gpu/MP-relaxed-gpu.litmus
  fuzzgpu run --tune 2 --instances 1e8 tests/litmus/gpu/SB-relaxed-gpu.litmus
  fuzzgpu run --instances 1e9 --barrier --spin 3000 tests/litmus/gpu/MP-relaxed-gpu.litmus
  fuzzgpu run --stride 32 --stress 256 --json tests/litmus/gpu/LB-relaxed-gpu.litmus
  fuzzgpu run --stress-config strategies/stress/tma-store-tuned.toml tests/litmus/async-proxy/TMA-store-no-fence.litmus
  fuzzgpu run --stress-config strategies/stress/tma-store-tuned.toml --spin 1000 tests/litmus/async-proxy/TMA-store-no-fence.litmus
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="FILE.litmus", help="the litmus test")
    parser.add_argument("--instances", type=whole_count, default=100_000_000, metavar="N",
                        help="test instances to run, e.g. 1e9 (default: 1e8; rounded up to whole launches of 65,536)")
    parser.add_argument("--seed", type=at_most(non_negative_int, 2**32 - 1), default=1, metavar="N", help="random seed (default: 1)")
    parser.add_argument("--budget", type=at_most(whole_count, _WORD), default=100_000, metavar="N",
                        help="iterations a spin loop may take before the instance counts as a timeout")
    parser.add_argument("--pdl-delay-ns", type=at_most(non_negative_int, _WORD), default=30_000, metavar="NS",
                        help="PDL programs: the primary spins NS ns (%%globaltimer) after its launch_dependents "
                             "(default: 30000; stale reads need >= 20 us)")
    parser.add_argument("--no-pdl", action="store_true",
                        help="launch the program's PDL grids as ordinary stream-ordered kernels (a control run; "
                             "the verdicts are then those of the program without PDL)")
    parser.add_argument("--graph", action="store_true",
                        help="replay launches from a CUDA graph, the launch number read on the device (~5%% more "
                             "instances/s; without --barrier the threads start more in step than the probe's harness)")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    parser.add_argument("--tune", type=positive_seconds, metavar="SECONDS",
                        help="tune the stress for SECONDS GPU-seconds first (the options' stress is the first "
                             "candidate), then run under the best configuration")
    parser.add_argument("--stress-config", metavar="F.toml",
                        help="read the stress knobs of F's [stress] table (as `fuzzgpu tune --out` writes it); "
                             "the options below override it")
    stress_options.add_options(parser, DEFAULT_STRESS, "stress (one option per StressConfig knob; docs/tuning.md)",
                               "Precedence: an option given, then --stress-config, then the default shown.")


def stress_config(args: argparse.Namespace) -> StressConfig:
    """The run's stress: the options given over ``--stress-config``'s knobs over
    :data:`DEFAULT_STRESS` (a bad file: UserError naming it)."""
    from_file = read_knobs(args.stress_config) if args.stress_config else {}
    return stress_options.resolve(DEFAULT_STRESS, from_file, stress_options.explicit(args))


def run_config(args: argparse.Namespace, stress: StressConfig) -> RunConfig:
    """The RunConfig the backend gets: ``stress`` and the run's other options."""
    return stress.run_config(RunConfig(
        instances=args.instances, seed=args.seed, budget=args.budget,
        pdl_delay_ns=args.pdl_delay_ns, pdl=not args.no_pdl, host_epoch=not args.graph,
    ))


def stress_line(stress: StressConfig) -> str:
    """Every knob as ``name=value``, in field order."""
    return " ".join(f"{k}={v}" for k, v in stress.to_table().items())


def _verdicts(program: Program, hist: Histogram) -> dict[Outcome, tuple[str, str]]:
    try:
        from .. import model
    except ImportError:
        return {o: ("not covered", "no oracle installed") for o, _ in hist.counts}
    from .. import properties

    out: dict[Outcome, tuple[str, str]] = {}
    for o, _ in hist.counts:
        d = dict(o)
        keys = properties.unwritten_keys(program, d)
        if keys:  # a harness or hardware fault, never an ordering verdict
            out[o] = (properties.UNWRITTEN, properties.unwritten_reason(program, d, keys))
            continue
        complete = properties.complete_outcome(o)
        if complete is None:
            out[o] = ("not covered", "a value outside the program's value table was read")
            continue
        try:
            j = model.judge(program, dict(complete))
            out[o] = (j.verdict, j.reason)
        except model.Unsupported as e:
            out[o] = ("not covered", f"not covered by the oracle: {e}")
    return out


def forbidden_lines(program: Program, meta: dict) -> list[str]:
    """What a GPU run says of the instances of forbidden outcomes it saw: where they ran
    (:func:`provenance_lines`) and the SASS check of the code that ran (:mod:`fuzzgpu.backends.ran_sass`)."""
    from ..backends.ran_sass import ran_sass_lines

    return provenance_lines(program, meta["provenance"]) + ran_sass_lines(meta)


def provenance_lines(program: Program, prov: dict) -> list[str]:
    """The text form of a run's provenance (the harness's log of forbidden instances): how many,
    how they group (launches, whole warps, SMs), and the first entries with every role's place."""
    from collections import Counter

    names = [t.name for t in program.threads]
    ents = prov.get("entries", [])
    out = [f"Provenance of the forbidden instances: {prov.get('logged', 0)} logged of {prov.get('seen', 0)} "
           "(launch, instance, and for each role the SM, hardware CTA, warp and lane that played it)"]
    if not ents:
        return out
    warps = Counter((e["launch"], tuple((r["sm"], r["cta"], r["warp"]) for r in e["roles"])) for e in ents)
    launches = Counter(e["launch"] for e in ents)
    sms = Counter(r["sm"] for e in ents for r in e["roles"][:1])
    out.append(f"  {len(launches)} launch(es); {len(warps)} group(s) of (launch, each role's SM/CTA/warp), "
               f"largest {max(warps.values())} instance(s); {names[0]} on {len(sms)} SM(s)")
    for e in ents[:8]:
        where = "; ".join(f"{n} sm {r['sm']} cta {r['cta']} warp {r['warp']} lane {r['lane']}"
                          for n, r in zip(names, e["roles"]))
        vals = " ".join(f"{k}={v}" for k, v in e["outcome"].items())
        out.append(f"  launch {e['launch']} instance {e['instance']} ({vals}): {where}")
    if len(ents) > 8:
        out.append(f"  ... {len(ents) - 8} more in --json (meta.provenance)")
    return out


def load_runnable(path: str) -> Program:
    """The test of ``path``, one the GPU harness can run (``run`` and ``tune``); else a UserError
    naming the file, not only the test."""
    from .. import codegen, litmus

    try:
        program = litmus.parse_file(path)
    except OSError as e:
        raise UserError(f"{path}: {e.strerror or e}") from None
    try:
        codegen.check_runnable(program)
    except codegen.Unrunnable as e:
        raise UserError(f"{path}: {e}") from None
    return program


def run(args: argparse.Namespace) -> int:
    from ..backends.base import format_outcome

    stress = stress_config(args)  # a bad --stress-config is bad input, before anything runs
    program = load_runnable(args.path)
    from ..backends.cuda import CompileError, CudaBackend, nvcc_path

    nvcc_path()  # before the GPU: the harness is compiled first; none is MissingTool (exit 3)

    try:
        backend = CudaBackend()
    except (UserError, EnvError, ImportError, OSError) as e:  # no GPU, no PyCUDA, no driver: the environment
        raise EnvError(f"no GPU to run on: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    from .. import properties

    tuned = _maybe_tune(args, program, backend, stress)
    if tuned is not None:
        stress = tuned.result.best.config
    cfg = run_config(args, stress)
    judged = program
    if args.no_pdl and program.pdl_grids:
        import dataclasses

        judged = dataclasses.replace(program, pdl_grids=())  # what actually ran: stream order
    try:
        # the backend logs the instances of the oracle's forbidden outcomes (provenance); those of
        # the program that actually ran when --no-pdl dropped its PDL grids
        hist = backend.run(program, cfg) if judged is program else backend.run(program, cfg, watch=properties.forbidden_watch(judged))
    except CompileError as e:
        raise EnvError(f"{args.path}: the kernels did not compile: {str(e).splitlines()[0] if str(e) else 'nvcc failed'}") from None
    finally:
        backend.close()
    verdicts = _verdicts(judged, hist)
    forbidden = sum(c for o, c in hist.counts if verdicts[o][0] == "forbidden")
    tune_forbidden = _forbidden_while_tuning(judged, tuned)
    forbidden += tune_forbidden
    faults = sum(c for o, c in hist.counts if verdicts[o][0] == "unwritten")
    unjudged = sum(c for o, c in hist.counts if verdicts[o][0] == "not covered")
    status = EXIT_FINDING if forbidden else (EXIT_ENVIRONMENT if unjudged or faults else EXIT_CLEAN)
    if args.json:
        d = hist.to_json()
        d["program"] = program.name
        d["config"] = cfg.to_json()
        d["stress"] = stress.to_table()
        d["stress_config"] = args.stress_config
        d["device"] = dict(hist.meta).get("device")
        for row, (o, _) in zip(d["outcomes"], hist.counts):
            row["verdict"], row["reason"] = verdicts[o]
        d["forbidden"] = forbidden
        d["unwritten"] = faults
        d["not_judged"] = unjudged
        d["tune"] = _tune_json(args, tuned, tune_forbidden)
        json.dump(d, sys.stdout)
        print()
        return status
    w = sys.stdout.write
    w(f"Test {program.name} {'FORBIDDEN OBSERVED' if forbidden else ('FAULT' if faults else 'Allowed')}\n")
    if faults:
        w(f"HARNESS OR HARDWARE FAULT: {faults} instance(s) read a value no store of the test wrote "
          "(not a memory-model verdict; see docs/harness.md, Values)\n")
    w(f"Histogram ({len(hist.counts)} states)\n")
    width = max((len(f"{c}") for _, c in hist.counts), default=1)
    for o, c in hist.counts:
        verdict, reason = verdicts[o]
        mark = "*>" if verdict not in ("sc",) else ":>"
        w(f"{c:<{width}} {mark}{format_outcome(o)}  {verdict}" + (f" ({reason})" if verdict != "sc" else "") + "\n")
    if hist.timeouts:
        w(f"{hist.timeouts:<{width}} timeout (a spin loop gave up after {cfg.budget} iterations; not an outcome)\n")
    cond = program.condition
    if cond is not None:
        from ..ir import Not, eval_expr

        expr = cond.expr if cond.quantifier != "forall" else Not(cond.expr)
        pos = hist.matching(lambda d: eval_expr(expr, d))
        obs = "Never" if pos == 0 else ("Always" if pos == hist.instances - hist.timeouts else "Sometimes")
        w(f"Observation {program.name} {obs} {pos} {hist.instances - hist.timeouts - pos}\n")
    w(f"Instances {hist.instances} in {hist.seconds:.3f} s ({hist.rate:.3g}/s) on {backend.describe()}\n")
    w("".join(line + "\n" for line in _tune_lines(args, tuned, tune_forbidden)))
    src = (f"; knobs from {args.stress_config}" if args.stress_config else "") + ("; tuned" * (tuned is not None))
    w(f"Stress {stress_line(stress)} (seed={cfg.seed}{src})\n")
    meta = dict(hist.meta)
    if meta.get("grids"):
        w(f"Grids {meta['grids']} PDL grids {meta['pdl_grids']} launched {'with' if meta['pdl_launch'] else 'WITHOUT'} "
          f"the PDL attribute; primary delay {meta['pdl_delay_ns']} ns after launch_dependents; "
          f"{meta['us_per_launch']} us per launch\n")
    if meta.get("provenance") and forbidden:
        for line in forbidden_lines(program, meta):
            w(line + "\n")
    if unjudged and not forbidden:
        w(f"Not judged {unjudged} instance(s): their outcomes are not covered by the oracle (not a clean result)\n")
    return status


def _maybe_tune(args: argparse.Namespace, program: "Program", backend: Any, stress: StressConfig) -> "GpuTuning | None":
    """``--tune``'s search, or None without it; the backend is closed when it fails."""
    if args.tune is None:
        return None
    from ..backends.cuda import CompileError

    try:
        return _tune(args, program, backend, stress)
    except CompileError as e:
        backend.close()
        raise EnvError(f"{args.path}: the kernels did not compile: {str(e).splitlines()[0] if str(e) else 'nvcc failed'}") from None
    except BaseException:
        backend.close()
        raise


def _tune(args: argparse.Namespace, program: "Program", backend: object, stress: StressConfig) -> "GpuTuning":
    """``--tune``: the stress search of ``fuzzgpu tune`` on ``backend`` (spending ``args.tune``
    GPU-seconds, ``stress`` its first candidate), aimed at the test's condition."""
    from .. import model
    from ..stress import tune

    try:
        a = model.analyse(program)
    except (model.Unsupported, model.TooLarge) as e:
        raise EnvError(f"{args.path}: --tune: the oracle does not cover this test ({e}): its weak outcomes are unknown") from None
    target = tune.condition_target(program, a.sc, a.possible)
    base = run_config(args, stress)
    return tune.tune_on_gpu(backend, program, args.tune, seed=args.seed, targets=target, base=base, sc=a.sc,
                            spend=True, default=stress)


def _tune_json(args: argparse.Namespace, tuned: "GpuTuning | None", forbidden: int) -> dict | None:
    if tuned is None:
        return None
    return {**tuned.result.to_json(), "budget_s": args.tune, "instances": tuned.instances, "forbidden_instances": forbidden}


def _tune_lines(args: argparse.Namespace, tuned: "GpuTuning | None", forbidden: int) -> list[str]:
    """The ``Tuned`` line of ``--tune`` (none without it)."""
    if tuned is None:
        return []
    r = tuned.result
    return [f"Tuned {len(r.arms)} configuration(s) in {r.spent_s:.2f} of {args.tune:g} GPU-s ({tuned.instances} instances, "
            f"stopped: {r.stopped}): best {r.best.rate:.4g} target/GPU-s ({r.best.weak} in {r.best.instances}), "
            f"first candidate {r.default.rate:.4g}/GPU-s ({r.default.weak} in {r.default.instances})"
            + (f"; FORBIDDEN OBSERVED while tuning: {forbidden} instance(s)" if forbidden else "")]


def _forbidden_while_tuning(program: "Program", tuned: "GpuTuning | None") -> int:
    """Instances of the tuning runs whose outcome the model forbids (outcomes that read a value no
    store wrote are faults, not counted here)."""
    if tuned is None:
        return 0
    from .. import model
    from ..properties import unwritten_keys

    possible = model.analyse(program).possible
    return sum(n for o, n in tuned.outcomes.items()
               if all(v is not None for _, v in o) and o not in possible and not unwritten_keys(program, dict(o)))
