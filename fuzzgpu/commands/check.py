"""``fuzzgpu check``: model-check litmus tests with the PTX memory-model oracle (no GPU)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from typing import TYPE_CHECKING

from ..errors import EXIT_CLEAN, EXIT_ENVIRONMENT, EXIT_USAGE, SourceError, UserError, clip, place
from ..ir import BoolConst, Condition, Program, eval_expr
from .argtypes import non_negative_int

if TYPE_CHECKING:  # the model loads on use (``fuzzgpu check --help`` does not import it)
    from ..model import Observation

HELP = "model-check .litmus files with the PTX memory-model oracle"
DESCRIPTION = """\
Model-check PTX litmus tests with fuzzgpu's axiomatic PTX memory-model oracle (PTX ISA memory
consistency model with the mixed-proxy extension).  For each test: every final state the model
allows, the final condition's verdict, and herd7's closing line

    Observation NAME Never|Sometimes|Always POSITIVE NEGATIVE

where POSITIVE/NEGATIVE count the allowed final states that satisfy / do not satisfy the condition.
"Ok" means the condition holds as its quantifier demands (exists: some state; ~exists: none;
forall: all).  PATH may be a .litmus file or a folder (searched recursively).  A test none of
whose executions completes (threads waiting for each other at named barriers, a barrier expecting
more threads than reach it) has no final state: "States 0" and "No final state is reachable: WHY".
A test whose enumeration exceeds the oracle's budget (docs/oracle.md) is reported "not covered by
the oracle: too large", never checked clean.  A test with no final condition is checked as herd7
checks it, as "forall (true)": its final states are listed, "Condition forall (true)", "Ok",
"Observation NAME Always N 0".

exit status: 0 when every file was checked; 2 when a file could not be read or parsed; else 3 when a file is not covered by the oracle (a construct it does not model, or "too
large": its work budget ran out) or the environment failed. One line on stderr for each such file
(file:line:col: message at the place to blame; file: message for the file as a whole: it cannot be
read, or the oracle does not cover it); with --json also its object on stdout, with that line as
"error"; the other files are still checked.

examples:
  fuzzgpu check tests/litmus/dat3m              Dat3M's PTX suite (183 tests, in the repository)
  fuzzgpu check --json tests/litmus/pdl/PDL-wait-nc.litmus
  fuzzgpu check --explain tests/litmus/core/MP-relacq-gpu.litmus   why the witness is forbidden (axiom and cycle)
"""


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH", help=".litmus files or folders")
    p.add_argument("--json", action="store_true", help="one JSON object per test on stdout (a test not checked: {path, error, kind})")
    p.add_argument("--explain", action="store_true", help="say why the condition's witness is forbidden or allowed")
    p.add_argument("--loop-bound", type=_loop_bound, default=1, metavar="K",
                   help=f"backward jumps taken at most K times, 0..{MAX_LOOP_BOUND} (default 1)")


#: the largest --loop-bound (each unrolling multiplies the oracle's work)
MAX_LOOP_BOUND = 64


#: the condition of a test that has none: herd7's, ``forall (true)`` (its parser's empty constraint is
#: ``ForallStates (And [])``): every final state is listed, the test is "Ok" and "Always"
NO_CONDITION = Condition("forall", BoolConst(True))


def _loop_bound(text: str) -> int:
    v = non_negative_int(text)
    if v > MAX_LOOP_BOUND:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_LOOP_BOUND}: {text!r}")
    return v


def run(args: argparse.Namespace) -> int:
    from ..litmus import parse_file, parse_path_tree

    try:
        files = parse_path_tree(args.paths)
    except (OSError, ValueError) as e:
        raise UserError(str(e)) from None
    if not files:
        raise UserError(f"no .litmus files under {' '.join(args.paths)}")
    bad_input = not_checked = False

    def skipped(path: object, line: str, kind: str) -> None:
        """A file not checked: its line on stderr; with --json also its object on stdout."""
        print(line, file=sys.stderr)
        if args.json:
            print(json.dumps({"path": str(path), "error": line, "kind": kind}), flush=True)

    for path in files:
        try:
            program = parse_file(path)
        except SourceError as e:
            skipped(path, str(e), "usage")
            bad_input = True
            continue
        except OSError as e:
            skipped(path, f"{place(path)}: cannot read: {e.strerror or e}", "usage")
            bad_input = True
            continue
        if program.condition is None:  # as herd7 reads a test without one (docs/litmus-format.md)
            program = dataclasses.replace(program, condition=NO_CONDITION)
        try:
            result = check_one(program, str(path), args.loop_bound, args.explain)
        except NotCovered as e:  # not covered by the oracle: said, and the other files are checked
            skipped(path, clip(str(e).splitlines()[0] if str(e) else f"{path}: not checked"), "not-covered")
            not_checked = True
            continue
        if args.json:
            print(json.dumps(result), flush=True)
        else:
            print(format_herd(result), flush=True)
    return EXIT_USAGE if bad_input else EXIT_ENVIRONMENT if not_checked else EXIT_CLEAN


class NotCovered(UserError):
    """A test the oracle does not cover (a construct it does not model, or its work budget ran
    out): not checked, so never reported clean (exit 3)."""


def check_one(program: Program, path: str, loop_bound: int, explain: bool) -> dict:
    from ..model import Unsupported, check_condition

    t0 = time.perf_counter()
    try:
        obs = check_condition(program, loop_bound=loop_bound)
    except Unsupported as e:
        raise NotCovered(f"{place(path)}: not covered by the oracle: {e}") from None
    cond = program.condition
    assert cond is not None
    if obs.analysis.beyond_bound and (obs.positive == 0 or obs.negative == 0):
        # 'Never' or 'Always' claims that no final state of the other kind exists; the loop bound
        # cut paths that may reach one ('Sometimes' is sound: both kinds were reached)
        raise NotCovered(f"{place(path)}: {obs.observation} only within the loop bound: {obs.analysis.beyond_bound}")
    allowed = sorted(obs.analysis.allowed)
    outside = sorted(obs.analysis.outside_model)
    ok = {"exists": obs.positive > 0, "~exists": obs.positive == 0, "forall": obs.negative == 0, "final": obs.positive > 0}[
        cond.quantifier
    ]
    result = {
        "name": program.name,
        "path": path,
        "quantifier": cond.quantifier,
        "witness_reachable": obs.witness_reachable,
        "observation": obs.observation,
        "ok": ok,
        "positive": obs.positive,
        "negative": obs.negative,
        "allowed": [dict(o) for o in allowed],
        "allowed_outside_model": [dict(o) for o in outside],
        "condition": _condition_text(program),
        "seconds": round(time.perf_counter() - t0, 6),
    }
    if not obs.analysis.possible:  # a program that must hang has no final state
        from ..model import termination

        t = termination(program, loop_bound)
        result["no_final_state"] = t.reason if t.status == "must-hang" else "no execution of the program completes"
    if explain:
        try:
            result["explanation"] = _explain(program, cond, obs, loop_bound)
        except Unsupported as e:
            raise NotCovered(f"{place(path)}: not covered by the oracle: {e}") from None
    return result


def _explain(program: Program, cond: Condition, obs: Observation, loop_bound: int) -> list[str]:
    """Why the witness (``cond``, the program's condition, or its negation for forall) is reachable
    or not."""
    from ..model import candidate_outcomes, explain_forbidden, judge

    want_true = cond.quantifier != "forall"
    witnesses = [o for o in obs.analysis.possible if eval_expr(cond.expr, dict(o)) == want_true]
    lines = []
    if witnesses:
        for o in sorted(witnesses)[:3]:
            j = judge(program, dict(o), loop_bound=loop_bound)
            lines.append(f"{_fmt(o)}: {j.verdict}: {j.reason}")
        return lines
    candidates = [
        o for o in candidate_outcomes(program, loop_bound=loop_bound) if eval_expr(cond.expr, dict(o)) == want_true
    ]
    if not candidates:
        return ["no execution of the threads computes the witness, whatever the reads return"]
    for o in sorted(candidates)[:3]:
        _, why = explain_forbidden(program, dict(o), loop_bound=loop_bound)
        for w in why:
            lines.append(f"{_fmt(o)}: forbidden: {w}")
    return lines


def _fmt(o) -> str:
    return " ".join(f"{k}={v};" for k, v in o)


def _condition_text(program: Program) -> str:
    from ..litmus import format_program

    text = format_program(program).rstrip().splitlines()
    # the condition is printed last: quantifier line (and possibly the expression on the next)
    for i in range(len(text) - 1, -1, -1):
        if text[i].split(" ", 1)[0] in ("exists", "~exists", "forall", "final"):
            return " ".join(t.strip() for t in text[i:])
    return ""


def format_herd(r: dict) -> str:
    kind = {"exists": "Allowed", "~exists": "Forbidden", "forall": "Required", "final": "Allowed"}[r["quantifier"]]
    n_states = len(r["allowed"]) + len(r.get("allowed_outside_model", []))
    lines = [f"Test {r['name']} {kind}", f"States {n_states}"]
    if "no_final_state" in r:
        lines.append(f"No final state is reachable: {r['no_final_state']}")
    for o in r["allowed"]:
        lines.append(" ".join(f"{k}={v};" for k, v in o.items()))
    for o in r.get("allowed_outside_model", []):
        lines.append(" ".join(f"{k}={v};" for k, v in o.items()) + " (allowed-outside-model)")
    lines.append("Ok" if r["ok"] else "No")
    lines.append("Witnesses")
    lines.append(f"Positive: {r['positive']} Negative: {r['negative']}")
    lines.append(f"Condition {r['condition']}")
    for e in r.get("explanation", []):
        lines.append(f"Explain {e}")
    lines.append(f"Observation {r['name']} {r['observation']} {r['positive']} {r['negative']}")
    lines.append(f"Time {r['name']} {r['seconds']:.3f}")
    lines.append("")
    return "\n".join(lines)
