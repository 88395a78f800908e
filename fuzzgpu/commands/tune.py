"""``fuzzgpu tune``: tune the harness's stress for one litmus test on the GPU (successive halving
over short runs, maximising weak outcomes per GPU-second) and write the best configuration as a
profile ``[stress]`` table."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import EXIT_CLEAN, EXIT_ENVIRONMENT, EXIT_FINDING, EnvError, UserError
from ..stress.space import StressConfig
from . import stress_options
from .argtypes import at_most, check_output_file, non_negative_int, whole_count

HELP = "tune the GPU harness's stress for a .litmus test; write the best as a profile [stress] table"

DESCRIPTION = """\
Search the harness's stress knobs (docs/tuning.md) for the configuration that shows the test's
target most often per GPU-second: the outcomes its own condition names (an `exists` clause: its
non-SC witnesses, or every witness when none is SC-free) or, for a test without a condition, its
weak outcomes -- those no interleaving produces (the oracle's non-SC outcomes).  Successive halving:
every candidate (the profiles' fixed stress first, then the configurations the anchors found
effective, then random points of the space) runs a short run; the best third go on with three
times the instances, until one is left, within half the budget.  The budget is spent: while no
candidate has shown the target, the fixed stress, the anchors' configurations and new random points
each get an equal share of the GPU time left, in turn, until one shows it; what is left then runs
the best (its evidence).

The knobs: testing CTAs and CTAs per SM (occupancy), CTA and thread permutation, location stride
and whether an instance's locations share a cache line, pre-test stress, concurrent stress CTAs
(how many, how many scratch lines, which access pattern, lines per CTA or per warp), the loose
barrier and the per-warp spin.

Prints the best configuration with its weak rate and the default's (the fixed stress of the
campaign profiles: stride 1, barrier, spin 1000), measured in the same search; --out writes the
best as a profile [stress] table (the keys `load_profile` reads; paste it into a profile, or give
it to `fuzzgpu run --stress-config`).  The last line is the `fuzzgpu run` command line that runs
the test with the best configuration (its knobs as options; with --out, also through the file).

Exit status: 0 tuned; 1 an outcome the model forbids was observed while tuning (a finding: run
`fuzzgpu run` on the test, even when --out could not be written); 2 bad input (not a valid test,
one the GPU cannot run, an --out path that is a folder or in no existing folder: checked before
tuning); 3 no GPU (or PyCUDA, or nvcc), an outcome the oracle does not cover, or --out could not be
written after tuning (the results are printed all the same).

examples:
  fuzzgpu tune tests/litmus/gpu/MP-relaxed-gpu.litmus
  fuzzgpu tune --budget 60 --out tuned-mp.toml tests/litmus/gpu/MP-relacq-cta-weakdata.litmus
  fuzzgpu tune --budget 20 --json tests/litmus/gpu/LB-relaxed-gpu.litmus
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="FILE.litmus", help="the litmus test")
    parser.add_argument("--budget", type=float, default=30.0, metavar="SECONDS",
                        help="GPU-seconds of test runs to spend (default: 30; compiling and set-up not counted)")
    parser.add_argument("--out", metavar="PROFILE.toml", help="write the best configuration as a [stress] table")
    parser.add_argument("--candidates", type=at_most(whole_count, 1000), default=27, metavar="N",
                        help="configurations in the first round (default: 27)")
    parser.add_argument("--instances", type=whole_count, default=1 << 20, metavar="N",
                        help="instances per configuration in the first round (default: 1048576)")
    parser.add_argument("--seed", type=at_most(non_negative_int, 2**32 - 1), default=1, metavar="N",
                        help="seed of the random candidates and of the runs (default: 1)")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of the text")


def run_command(path: str, best: StressConfig, stress_config: str | None = None) -> str:
    """The ``fuzzgpu run`` command line that runs ``path`` with the knobs of ``best``: the options
    of the knobs that differ from ``fuzzgpu run``'s defaults, or ``--stress-config`` of the file
    that holds them."""
    from .run import DEFAULT_STRESS

    opts = ["--stress-config", stress_config] if stress_config else stress_options.arguments(best, DEFAULT_STRESS)
    return stress_options.command_line(["fuzzgpu", "run", *opts, *(["--"] if path.startswith("-") else []), path])


def _write_out(out: str, path: str, r: Any, device: str) -> str | None:
    """Write the best configuration to ``out``; the error line when that failed (the results, and
    any forbidden outcome, are printed all the same; the exit status says it)."""
    from ..stress.tune import table_text

    comment = (f"fuzzgpu tune {Path(path).name}: {r.best.weak} weak in {r.best.instances} instances, "
               f"{r.best.rate:.3g} weak/GPU-s (default {r.default.rate:.3g}/s); {device}")
    try:
        Path(out).write_text(table_text(r.best.config, {"instances": 10_000_000}, comment))
    except OSError as e:
        return f"fuzzgpu tune: environment error: {out}: {e.strerror or e} (the configuration was not written)"
    return None


def run(args: argparse.Namespace) -> int:
    from .. import model
    from ..stress.tune import condition_target, sc_and_weak, tune_on_gpu

    if not args.budget > 0 or args.budget > 86400:
        raise UserError(f"--budget: expected seconds in (0, 86400], got {args.budget}")
    if args.out:
        check_output_file("--out", args.out, "a .toml file")  # before the GPU-seconds are spent, not after
    from .run import load_runnable

    program = load_runnable(args.path)
    try:
        sc, weak = sc_and_weak(program)
        target = condition_target(program, sc, model.analyse(program).possible)
    except (model.Unsupported, model.TooLarge) as e:
        raise EnvError(f"{args.path}: the oracle does not cover this test ({e}): its weak outcomes are unknown") from None
    from ..backends.cuda import CompileError, CudaBackend

    try:
        backend = CudaBackend()
    except (UserError, EnvError, ImportError, OSError) as e:
        raise EnvError(f"no GPU to run on: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    try:
        t = tune_on_gpu(backend, program, args.budget, args.candidates, args.instances, args.seed, sc=sc,
                        targets=target, spend=True)
        device = backend.describe()
    except CompileError as e:
        raise EnvError(f"{args.path}: the kernels did not compile: {str(e).splitlines()[0] if str(e) else 'nvcc failed'}") from None
    finally:
        backend.close()
    a = model.analyse(program)
    from ..properties import unwritten_keys

    forbidden = {o: n for o, n in t.outcomes.items()
                 if all(v is not None for _, v in o) and o not in a.possible and not unwritten_keys(program, dict(o))}
    r = t.result
    write_error = _write_out(args.out, args.path, r, device) if args.out else None
    status = EXIT_FINDING if forbidden else EXIT_CLEAN
    if write_error:
        print(write_error, file=sys.stderr)
        if not forbidden:
            status = EXIT_ENVIRONMENT
    again = run_command(args.path, r.best.config) if r.best.instances else None
    if args.json:
        d = r.to_json()
        d.update({"program": program.name, "device": device, "weak_outcomes": len(weak),
                  "target": "condition" if target is not None else "non-SC",
                  "forbidden_instances": sum(forbidden.values()), "instances": t.instances, "out": args.out,
                  "run_command": again, "out_error": write_error})
        json.dump(d, sys.stdout)
        print()
        return status
    w = sys.stdout.write
    w(f"Test {program.name}: {len(weak)} weak outcome(s) allowed by the model; tuned for "
      + ("the outcomes its condition names" if target is not None else "any non-SC outcome") + "\n")
    if not weak:
        w("  (none: tuning counted any non-SC outcome, which the model forbids)\n")
    for name, arm in (("best", r.best), ("default", r.default)):
        w(f"{name:8} {arm.rate:.4g} weak/GPU-s ({arm.weak} in {arm.instances} instances, {arm.seconds:.3f} s): "
          f"{arm.config.describe()}\n")
    w(f"Searched {len(r.arms)} configurations in {r.rounds} round(s), {r.spent_s:.2f} GPU-s (stopped: {r.stopped}) on {device}\n")
    if forbidden:
        w(f"FORBIDDEN OBSERVED: {sum(forbidden.values())} instance(s) of {len(forbidden)} outcome(s) the model forbids "
          f"(run `fuzzgpu run {args.path}`)\n")
    if args.out and not write_error:
        w(f"Wrote {args.out}\n")
    if again:
        w(f"Run the best: {again}" + (f"  (or: {run_command(args.path, r.best.config, args.out)})" if args.out else "") + "\n")
    return status if status != EXIT_CLEAN else (EXIT_CLEAN if r.best.instances else EXIT_ENVIRONMENT)
