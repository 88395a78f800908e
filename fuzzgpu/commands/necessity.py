"""``fuzzgpu necessity``: is this fence needed?  Each annotation of a litmus test dropped or weakened
alone, judged by the oracle, and with ``--backend cuda`` run on the GPU."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from ..errors import EXIT_CLEAN, EnvError, UserError
from . import stress_options
from .argtypes import at_most, non_negative_int, whole_count

if TYPE_CHECKING:
    from ..ir import Program
    from ..necessity import Judged, Necessity

HELP = "is this fence needed? each annotation dropped or weakened alone: does the handoff still hold?"

DESCRIPTION = """\
For every fence, wait, scope and semantics annotation of a litmus test, drop or weaken it alone and
say whether the handoff still holds in the PTX memory model: whether an outcome of the test's
condition (the handoff failing: `exists (P1:r1 == 1 /\\ P1:r2 == 0)`; the negation for `forall`;
without a condition, an outcome only a racy execution produces) becomes possible, which one, and why
(the racing pair that explains it, and the axiom and cycle that forbid it in the original).

The changes are the inverses of the fix search's (the `fix` line of a finding): a fence,
fence.proxy.async, cp.async.wait_group/wait_all, cp.async.bulk.wait_group or griddepcontrol.wait
dropped ("-"); an mbarrier wait loop dropped ("-") or its wait tried once ("once"); an annotation
weakened one step (`ld.acquire.gpu` -> `ld.relaxed.gpu` and -> `ld.acquire.cluster`; `fence.sc` ->
`fence.acq_rel` -> `fence.release` / `fence.acquire`; `mbarrier.arrive` -> `.relaxed`;
`cp.async.bulk.wait_group 0` -> `.read 0` and -> `1`; `ld.weak` -> `ld.global.nc`; an mbarrier
wait's parity flipped).  Barriers
(bar.sync) are not changed.  Verdicts:

  needed      an outcome of the condition becomes possible (shown, with why)
  race-only   none does, but the change adds a data race (the condition does not witness it)
  not-needed  neither: the oracle says the handoff holds without it
  not-judged  the oracle cannot say (a construct it does not model, a loop bound), with why

Each change is judged alone: two annotations that back each other up are each "not-needed".

--backend cuda runs the original and every changed program on the GPU (each --instances times, under
the stress options) and reports, per change, how many instances showed an outcome of the condition
and how many showed the very outcome the model says appears -- the evidence maintainers ask for.  An
outcome not seen is not proof that it cannot occur (the output says so); one seen for a change the
model calls not needed, or for the original, is flagged.  --backend sim does the same with a CPU
SIMULATION of the memory model (no GPU; for trying the command).

exit status: 0 when the report was given (whatever it says: this is a question, not a test); 2 on
bad input (a file that is not a valid test; with --backend cuda, one the GPU harness cannot run);
3 when the environment failed (no GPU, no nvcc) or the oracle does not cover the test.

examples:
  fuzzgpu necessity examples/necessity/NEC-06-mp-release-fence.litmus
  fuzzgpu necessity --json examples/necessity/NEC-08-cp-async-pipeline.litmus
  fuzzgpu necessity examples/necessity/NEC-10-tma-load-expect-tx.litmus
  fuzzgpu necessity --backend cuda --instances 1e8 --barrier --spin 3000 examples/necessity/NEC-03-tma-store-signal.litmus
"""

_WORD = 2**31 - 1


def configure(parser: argparse.ArgumentParser) -> None:
    from .run import DEFAULT_STRESS

    parser.add_argument("path", metavar="FILE.litmus", help="the litmus test")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    parser.add_argument("--backend", choices=("model", "cuda", "sim"), default="model",
                        help="model: the oracle only (default); cuda: also run each changed program on the GPU; "
                             "sim: a CPU simulation of the memory model instead of the GPU")
    parser.add_argument("--loop-bound", type=at_most(non_negative_int, 64), default=1, metavar="K",
                        help="backward jumps taken at most K times by the oracle (default 1)")
    parser.add_argument("--instances", type=whole_count, default=10_000_000, metavar="N",
                        help="with a backend: instances per program, e.g. 1e8 (default: 1e7)")
    parser.add_argument("--seed", type=at_most(non_negative_int, 2**32 - 1), default=1, metavar="N",
                        help="random seed (default: 1)")
    parser.add_argument("--budget", type=at_most(whole_count, _WORD), default=100_000, metavar="N",
                        help="iterations a spin loop may take before the instance counts as a timeout")
    parser.add_argument("--pdl-delay-ns", type=at_most(non_negative_int, _WORD), default=30_000, metavar="NS",
                        help="PDL programs: the primary spins NS ns after its launch_dependents (default: 30000)")
    parser.add_argument("--stress-config", metavar="F.toml", help="read the stress knobs of F's [stress] table")
    parser.set_defaults(no_pdl=False, graph=False)
    stress_options.add_options(parser, DEFAULT_STRESS, "stress (with a backend; one option per StressConfig knob)",
                               "Precedence: an option given, then --stress-config, then the default shown.")


def _load(path: str) -> Program:
    from .. import litmus

    try:
        return litmus.parse_file(path)
    except OSError as e:
        raise UserError(f"{path}: {e.strerror or e}") from None


def _fmt(o: Any) -> str:
    return " ".join(f"{k}={v};" for k, v in o)


def run(args: argparse.Namespace) -> int:
    from .. import model
    from ..necessity import necessity

    program = _load(args.path)
    stress = cfg = None
    if args.backend != "model":
        from .run import run_config, stress_config

        stress = stress_config(args)  # a bad --stress-config is bad input, before anything runs
        cfg = run_config(args, stress)
    try:
        report = necessity(program, loop_bound=args.loop_bound)
    except model.Unsupported as e:
        raise EnvError(f"{args.path}: not covered by the oracle: {e}") from None
    gpu: dict[int, dict[str, Any]] = {}
    device = ""
    if cfg is not None:
        gpu, device = _run_all(args, report, cfg)
    if args.json:
        json.dump(to_json(report, args.path, gpu, device, stress.to_table() if stress else None), sys.stdout)
        print()
    else:
        sys.stdout.write(format_table(report, args.path, gpu, device))
    return EXIT_CLEAN


def _runnable(p: Program) -> str:
    from ..codegen.runnable import unrunnable_reasons

    why = unrunnable_reasons(p)
    return "; ".join(why)


def _run_all(args: argparse.Namespace, report: Necessity, cfg: Any) -> tuple[dict[int, dict[str, Any]], str]:
    """Run the original (key -1) and each changed program; per program the instances, the ones
    showing an outcome of the condition, and the ones showing the outcomes the model says appear."""
    from ..backends import make_backend
    from ..stress.campaign import may_hang_capped

    why = _runnable(report.program)
    if why:
        raise UserError(f"{args.path}: the GPU harness cannot run this test: {why}")
    if args.backend == "cuda":
        from ..backends.cuda import nvcc_path

        nvcc_path()  # none: MissingTool (exit 3), before the GPU
    try:
        backend, _note = make_backend(args.backend)
    except (EnvError, ImportError, OSError) as e:
        raise EnvError(f"no GPU to run on: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    out: dict[int, dict[str, Any]] = {}
    try:
        device = backend.describe()
        progs = [(-1, report.program, ())] + [(i, r.change.program, r.outcomes) for i, r in enumerate(report.results)]
        for key, prog, shown in progs:
            why = _runnable(prog)
            if why:
                out[key] = {"ran": False, "why": f"the GPU harness cannot run it: {why}"}
                continue
            try:
                hist = backend.run(prog, may_hang_capped(prog, cfg))  # a wait that may spin: fewer instances
            except Exception as e:  # noqa: BLE001 -- one program's compile or run failure is said, the others run
                if isinstance(e, (EnvError,)) and key == -1:
                    raise
                out[key] = {"ran": False, "why": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
                continue
            out[key] = _counts(prog, hist, shown)
    finally:
        backend.close()
    return out, device


def _counts(p: Program, hist: Any, shown: tuple[Any, ...]) -> dict[str, Any]:
    from ..ir import Not, eval_expr

    cond = p.condition
    witness = 0
    if cond is not None:
        expr = cond.expr if cond.quantifier != "forall" else Not(cond.expr)
        witness = hist.matching(lambda d: eval_expr(expr, d))
    want = {tuple(sorted(o)) for o in shown}
    same = sum(c for o, c in hist.counts if tuple(sorted(o)) in want)
    sass = dict(hist.meta).get("sass_findings") or ()
    return {"ran": True, "instances": hist.instances, "timeouts": hist.timeouts, "witness": witness,
            "model_outcomes": same, "seconds": round(hist.seconds, 3), "sass_findings": len(sass)}


def _gpu_cell(g: dict[str, Any] | None, verdict: str) -> str:
    if g is None:
        return ""
    if not g["ran"]:
        return f"not run: {g['why']}"
    n, w = g["instances"], g["witness"]
    if w == 0:
        return f"not seen in {n:.3g}" + (f"; ptxas moved {g['sass_findings']} access(es)" if g.get("sass_findings") else "")
    flag = "  UNEXPECTED (the model forbids it)" if verdict in ("not-needed", "original") else ""
    sass = f"; ptxas moved {g['sass_findings']} access(es) (fuzzgpu sass)" if g.get("sass_findings") else ""
    return f"seen {w} of {n:.3g} ({w / n:.2g}){flag}{sass}"


def format_table(n: Necessity, path: str, gpu: dict[int, dict[str, Any]], device: str) -> str:
    from ..litmus import format_instruction
    from ..necessity import changed_text, summary

    p = n.program
    lines = [f"necessity {p.name} ({path})"]
    cond = p.condition
    lines.append(f"handoff fails when: {n.witness}" + (f": {_cond_text(p)}" if cond is not None else ""))
    if n.original:
        lines.append(f"the ORIGINAL already fails: {', '.join(_fmt(o) for o in n.original[:3])} is possible "
                     "-- each change is judged by the outcomes it adds")
    else:
        lines.append("the original holds: the oracle forbids every such outcome" +
                     ("" if n.race_free else " (the program still has a data race the condition does not witness)"))
    if gpu:
        lines.append(f"runs on {device}; the original: {_gpu_cell(gpu.get(-1), 'original') or '-'}")
    lines.append("")
    rows = [("#", "thread", "annotation", "changed to", "verdict", "outcome that appears" + (" | runs" if gpu else ""))]
    for i, r in enumerate(n.results):
        w = r.change
        out = _fmt(r.outcomes[0]) + (f" (+{len(r.outcomes) - 1})" if len(r.outcomes) > 1 else "") if r.outcomes else "-"
        if gpu:
            out += " | " + _gpu_cell(gpu.get(i), r.verdict)
        rows.append((str(i + 1), p.threads[w.thread].name, format_instruction(w.before), changed_text(w), r.verdict, out))
    widths = [max(len(row[c]) for row in rows) for c in range(5)]
    for row in rows:
        lines.append("  ".join(row[c].ljust(widths[c]) for c in range(5)) + "  " + row[5])
    why = [(i, r) for i, r in enumerate(n.results) if r.why]
    if why:
        lines += ["", "why:"]
        for i, r in why:
            for k, line in enumerate(r.why):
                lines.append(f"  {i + 1 if k == 0 else '':>3}  {line}")
    s = summary(n)
    lines += ["", f"summary: {s['needed']} needed, {s['not-needed']} not needed, {s['race-only']} race only, "
              f"{s['not-judged']} not judged, of {len(n.results)} changes (each made alone)"]
    if gpu:
        lines.append("runs: an outcome not seen in N instances is not proof that it cannot occur")
    return "\n".join(lines) + "\n"


def _cond_text(p: Program) -> str:
    from .check import _condition_text

    return _condition_text(p)


def to_json(n: Necessity, path: str, gpu: dict[int, dict[str, Any]], device: str,
            stress: dict[str, Any] | None) -> dict[str, Any]:
    from ..litmus import format_instruction
    from ..necessity import changed_text, summary

    p = n.program

    def one(i: int, r: Judged) -> dict[str, Any]:
        w = r.change
        return {"thread": p.threads[w.thread].name, "index": w.index, "from": format_instruction(w.before),
                "to": changed_text(w), "op": w.op, "inverse_of": w.inverse_of, "verdict": r.verdict,
                "outcomes": [dict(o) for o in r.outcomes], "why": list(r.why), "gpu": gpu.get(i)}

    return {"name": p.name, "path": path, "condition": _cond_text(p) if p.condition is not None else None,
            "witness": n.witness, "original": {"fails": [dict(o) for o in n.original], "race_free": n.race_free,
                                               "gpu": gpu.get(-1)},
            "changes": [one(i, r) for i, r in enumerate(n.results)], "summary": summary(n),
            "device": device or None, "stress": stress}
