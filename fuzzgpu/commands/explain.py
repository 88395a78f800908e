"""``fuzzgpu explain``: a person-readable account of one corpus entry."""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

HELP = "explain a corpus entry: the program, the outcomes, the oracle's verdict and cycle, the SASS"

DESCRIPTION = """\
Print a corpus entry for people: the program as a .litmus file, how and where it was found
(backend, arch, GPU, driver, toolchain, stress settings), every observed outcome with its count and
the memory-model oracle's verdict, the axiom and the cycle of instructions that forbid each
offending outcome, the instances that timed out with the model's verdict on the program's waits
(must complete: a finding; may hang: expected), the SASS lines ptxas moved (static findings), and the reproduction rate with the
number of instances a replay needs.  A race finding (--property race) also shows each racing pair
(the two accesses, the location, the mechanism that failed) and its fix: the weakest change (a
single one, else a pair) the oracle says removes the offending outcomes, else one of up to 6 changes
found greedily, change by change, none of which can be dropped ("N changes: no fewer found"; a
smaller fix is not ruled out), or "no fix within 2 changes ..., nor a greedy one of up to 6".  A SASS finding of an ld.global.nc that ptxas moved
across a synchronisation point shows the weakest change after which the oracle forbids what the
moved load may read (e.g. ld.global.nc -> ld.weak; `replay --fixed` runs it); a forbidden outcome
or a forbidden move has no fix in the program (a deviation), and a wait whose result nothing tests
shows the retry loop the ISA gives.

An entry found under a simulated fault (campaign --sim-fault) says so first -- a test of the fuzzer,
not a finding about a GPU -- and every replay command it suggests carries the fault.  The fix search
shows its progress on stderr (--progress; by default when stderr is a terminal).

Nothing in the entry is executed; the oracle is re-run on the program to explain the verdicts (the
explanation stored in the entry is shown when the oracle no longer covers the program).  Text from
the entry is shown with anything a terminal would act on (escape sequences) written as escapes.

Exit status: 0 when the entry was explained, 2 when it is not a valid entry (one line naming the
file and the field), 3 when the environment failed.

examples:
  fuzzgpu explain corpus/73416467ed043580.json
  fuzzgpu explain corpus/73416467ed043580.json > finding.txt
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("entry", metavar="ENTRY", help="a corpus entry file (.json)")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="progress of the fix search on stderr (default: when stderr is a terminal)")


def _fmt_outcome(d: dict) -> str:
    return "; ".join(f"{k}={'?' if v is None else v}" for k, v in d.items()) + ";"


def explain_text(entry: Any, watch: Any = None) -> str:
    """The account of ``entry`` (``watch``: a :class:`fuzzgpu.deadline.Watch` the fix search ticks
    per candidate, for progress)."""
    from .. import model

    d = entry.data
    env = d["environment"]
    rep = d["reproduction"]
    lines = [
        f"corpus entry {entry.path.name}  (signature {entry.signature})",
        f"shape {d['shape']}, property {d['property']}, found {d['found']}" + ("" if d.get("shrunk") else " (not fully shrunk: the campaign was interrupted)"),
        f"backend {env.get('description', env.get('backend'))}",
        f"arch {env.get('arch')}   GPU {env.get('gpu')}   driver {env.get('driver')}   toolchain {env.get('toolchain')}",
        "stress " + ", ".join(f"{k}={v}" for k, v in sorted(d["stress"].items())),
    ]
    lines += _fault_lines(entry)
    lines += ["", "program (.litmus):", ""]
    lines += ["    " + l for l in d["litmus"].rstrip("\n").splitlines()]
    hist = d["histogram"]
    offending = {tuple(sorted(o["outcome"].items())): o for o in d["verdict"].get("offending", [])}
    uncovered = ""  # why the oracle does not cover the program: asked once, not once per outcome
    if hist.get("outcomes"):
        lines += ["", f"observed outcomes ({hist.get('instances', 0):.4g} instances, backend {hist.get('backend')}):"]
        width = max(len(str(o["count"])) for o in hist["outcomes"])
        for o in hist["outcomes"]:
            out = o["outcome"]
            key = tuple(sorted(out.items()))
            if key in offending:
                verdict = offending[key]["verdict"]
            elif uncovered:
                verdict = "not covered"
            else:
                try:
                    verdict = "?" if any(v is None for v in out.values()) else model.judge(entry.program, out).verdict
                except model.Unsupported as e:
                    verdict, uncovered = "not covered", str(e)
            mark = "*>" if key in offending else ":>"
            lines.append(f"  {o['count']:>{width}} {mark} {_fmt_outcome(out)}  {verdict}")
    lines += _provenance(entry, hist, offending)
    if offending:
        lines += ["", f"why the oracle says so ({d['property']} property):"]
        for o in offending.values():
            expl = list(o.get("explanation") or [])
            verdict, reason = o["verdict"], o.get("reason", "")
            try:
                from ..properties import UNWRITTEN, unwritten_keys, unwritten_reason

                bad = unwritten_keys(entry.program, o["outcome"])
                if bad:  # a harness or hardware fault: no ordering explains a value no store wrote
                    verdict, reason, expl = UNWRITTEN, unwritten_reason(entry.program, o["outcome"], bad), []
                elif uncovered:
                    raise model.Unsupported(uncovered)
                elif verdict == "racy":  # the race property's: its racing pairs come below
                    reason += f" (the model alone: {model.judge(entry.program, o['outcome']).verdict})"
                elif all(v is not None for v in o["outcome"].values()):
                    j, fresh = model.explain_forbidden(entry.program, o["outcome"])
                    verdict, reason, expl = j.verdict, j.reason, fresh or expl
            except model.Unsupported as e:
                uncovered = str(e)
                reason = f"{reason} (the oracle no longer covers this program: {e}; stored explanation shown)"
            lines.append(f"  {_fmt_outcome(o['outcome'])} seen {o['count']} times: {verdict}: {reason}")
            for l in expl:
                lines.append(f"      {l}")
    if uncovered:
        lines += ["", f"the oracle does not cover this program now: {uncovered}"]
    lines += _timeout_lines(entry)
    lines += race_lines(entry, watch)
    lines += deviation_fix_lines(entry)
    oracle = d.get("oracle")
    if isinstance(oracle, dict):
        if oracle.get("covered"):
            allowed = oracle.get("allowed") or []
            lines += ["", f"the oracle allows {len(allowed)} outcome(s) of this program" + (" (list truncated)" if oracle.get("truncated") else "") + ":"]
            lines += [f"  {_fmt_outcome(o['outcome'])}  {o['verdict']}" for o in allowed if isinstance(o, dict)]
        else:
            lines += ["", f"the oracle does not cover this program: {oracle.get('reason')}"]
    if d.get("sass"):
        lines += ["", "SASS: memory operations ptxas moved across a synchronisation point:"]
        for f in d["sass"]:
            lines.append(f"  [{f.get('arch')}] {f.get('function')}: {f.get('check')} ({f.get('verdict')})")
            lines.append(f"      PTX  line {f.get('op_ptx_line')}: {f.get('op_ptx')}")
            lines.append(f"      SASS line {f.get('op_sass_line')} (/*{_hex(f.get('op_sass_offset'))}*/): {f.get('op_sass')}")
            lines.append(f"      {f.get('direction')}")
            lines.append(f"      PTX  line {f.get('sync_ptx_line')}: {f.get('sync_ptx')}")
            lines.append(f"      SASS line {f.get('sync_sass_line')} (/*{_hex(f.get('sync_sass_offset'))}*/): {f.get('sync_sass')}")
            lines.append(f"      why: {f.get('reason')}")
        lines += sass_fix_lines(entry)
    if rep.get("note"):
        lines += ["", f"reproduction: {rep['note']}"]
    else:
        lines += ["", (f"reproduction: rate {rep['rate']:.3g} ({rep.get('failures', '?')} of {rep['instances']:.4g} instances); a replay of "
                       f"{rep['replay_instances']:.4g} instances sees it with probability {rep['confidence']:.2f}")]
    lines.append(f"replay: {replay_command(entry)}")
    return terminal_safe("\n".join(lines) + "\n")


def injected_fault(data: Any) -> str | None:
    """The simulated fault (``--sim-fault``) an entry was found under, from its histogram's
    ``meta.fault`` (else the sim backend's id ``sim:FAULT:RATE``); None when it was found without
    one.  The text comes from a file: a value that is not a valid --sim-fault (:func:`parse_faults`)
    is shown as ``(unrecognised)`` and never put into a suggested command."""
    from ..backends.sim import parse_faults
    from ..errors import UserError

    env = data.get("environment") if isinstance(data.get("environment"), dict) else {}
    meta = (data.get("histogram") or {}).get("meta")
    fault = meta.get("fault") if isinstance(meta, dict) else None
    if fault is None and env.get("backend") == "sim" and isinstance(env.get("backend_id"), str):
        parts = env["backend_id"].split(":")
        fault = ":".join(parts[1:-1]) if len(parts) >= 3 and parts[1] != "none" else None
    if not fault:
        return None
    if not isinstance(fault, str) or not re.fullmatch(r"[a-z0-9.,:-]{1,200}", fault):
        return "(unrecognised)"
    try:
        parse_faults(fault)
    except UserError:
        return "(unrecognised)"
    return fault


def replay_fault(data: Any) -> str | None:
    """The part of an entry's :func:`injected_fault` a replay takes (not the faults that stop the
    process, which only a supervised campaign worker runs); None when there is none."""
    from ..backends.sim import PROCESS_FAULTS

    fault = injected_fault(data)
    if fault is None or fault == "(unrecognised)":
        return None
    kept = [part for part in fault.split(",") if part.split(":")[0] not in PROCESS_FAULTS]
    return ",".join(kept) or None


def replay_command(entry: Any, fixed: bool = False) -> str:
    """The replay command for ``entry`` (its backend, and the simulated fault it was found under)."""
    backend = entry.data["environment"].get("backend", "auto")
    backend = backend if backend in ("sim", "static", "cuda") else "auto"
    fault = replay_fault(entry.data) if backend == "sim" else None
    return (f"fuzzgpu replay {entry.path} --backend {backend}" + (f" --sim-fault {fault}" if fault else "")
            + (" --fixed" if fixed else ""))


def _fault_lines(entry: Any) -> list[str]:
    """An entry found under a simulated fault says so first: it is a test of the fuzzer."""
    fault = injected_fault(entry.data)
    if fault is None:
        return []
    return ["", f"FOUND UNDER A SIMULATED FAULT (--sim-fault {fault}): the CPU simulation was told to break the memory model; "
                "this entry tests the fuzzer and says nothing about a GPU or a compiler (a replay without the fault passes)"]


def terminal_safe(text: str) -> str:
    """``text`` with every character a terminal would act on (escape sequences, carriage return,
    backspace, bidirectional overrides: anything not printable) shown as its Python escape; line
    breaks kept.  The entry's text fields (the .litmus, reasons, the environment) come from a file
    someone else wrote."""
    if all(c.isprintable() or c == "\n" for c in text):
        return text
    return "".join(c if c.isprintable() or c == "\n" else repr(c)[1:-1] for c in text)


def _hex(offset: Any) -> str:
    """A SASS offset as ``/*0a30*/`` shows it; ``----`` when the finding has none."""
    return f"{offset:04x}" if isinstance(offset, int) and not isinstance(offset, bool) and offset >= 0 else "----"


def race_lines(entry: Any, watch: Any = None) -> list[str]:
    """A race finding: its racing pairs (re-computed by the oracle) and the fix."""
    from .. import fixes, model
    from ..model import race

    offending = [o for o in entry.data["verdict"].get("offending", []) if o.get("verdict") == "racy"]
    if not offending:
        return []
    lines = ["", "data race (PTX ISA 8.10.1: conflicting accesses, not morally strong, not ordered by causality order; "
                 "an ld.global.nc whose read-only contract is broken races with each write of its location during its "
                 "kernel, whatever orders them, docs/fuzzing.md#the-race-property):"]
    try:
        ra = race.analyse_races(entry.program)
        outs = [entry.program.outcome_of(o["outcome"]) for o in offending]
        pairs = [pair.describe() for o in outs for pair in ra.racy.get(o, ())]
        lines += [f"  racing pair: {d}" for d in dict.fromkeys(pairs)]  # each pair once, in the order found
        from ..deadline import UNWATCHED

        f = fixes.find_fix(entry.program, outs, arch=entry.data["environment"].get("arch"), watch=watch or UNWATCHED)
    except model.Unsupported as e:
        return lines + [f"  the oracle no longer covers this program: {e}"]
    if f is None:
        lines.append(f"fix: {fixes.NO_FIX}")
    else:
        lines.append(f"fix: {f.describe()}")
        lines.append(f"  replay the fixed program: {replay_command(entry, fixed=True)}")
    return lines


def _moved_nc(found: list[dict[str, Any]]) -> bool:
    from .. import sass

    return any(f.get("check") == sass.CROSSING and f.get("reason") == sass.RULE_NC for f in found)


def sass_nc_fix(entry: Any) -> tuple[list[Any], Any]:
    """(the outcomes a moved ``ld.global.nc`` may read that the oracle calls allowed-outside-model,
    the weakest fix that forbids them or None); ``([], None)`` for an entry with no such SASS
    finding.  Raises ``model.Unsupported`` where the oracle does not cover the program."""
    from .. import fixes, model

    if not _moved_nc([f for f in entry.data.get("sass") or () if isinstance(f, dict)]):
        return [], None
    p = entry.program
    stale = sorted(o for o in model.candidate_outcomes(p) if model.judge(p, o).verdict == "allowed-outside-model")
    return stale, (fixes.find_fix(p, stale) if stale else None)


def sass_fix_lines(entry: Any) -> list[str]:
    """The fix for a SASS finding (issue 15: a fix for each finding).

    An ``ld.global.nc`` that ptxas moved across a synchronisation point may read what the oracle
    calls ``allowed-outside-model`` (the read-only contract is broken: a PDL primary still running,
    another thread writing); the fix is the weakest change (one, else two) after which the oracle forbids
    those outcomes (:func:`fuzzgpu.fixes.find_fix`, e.g. ``ld.global.nc`` -> ``ld.weak``, which
    ptxas keeps in place).  A move the ISA forbids has no fix in the program: the compiler deviates;
    for an ``unguarded-wait`` the retry loop the ISA gives for waiting is shown, not checked (the
    oracle already forbids the stale value)."""
    from .. import fixes, model, sass

    found = [f for f in entry.data.get("sass") or () if isinstance(f, dict)]
    forbidden = [f for f in found if f.get("verdict") == sass.FORBIDDEN]
    lines: list[str] = []
    p = entry.program
    if _moved_nc(found):
        try:
            stale, fix = sass_nc_fix(entry)
        except model.Unsupported as e:
            lines.append(f"fix: not searched: the oracle does not cover this program ({e})")
        else:
            shown = "; ".join(_fmt_outcome(dict(o)).rstrip("; ") for o in stale[:3]) + (" ..." if len(stale) > 3 else "")
            if not stale:
                lines.append("fix: none needed by the model: no outcome of this program depends on the ld.global.nc's "
                             "read-only contract (the move loses the source's order only)")
            elif fix is None:
                lines.append(f"fix: {fixes.NO_FIX} that forbids the stale outcome(s) {shown}")
            else:
                lines.append(f"fix: {fix.describe()}; the stale outcome(s) the moved ld.global.nc may read ({shown}, "
                             "allowed-outside-model) are then forbidden")
    if forbidden:
        lines.append(f"fix: none in the program for the {len(forbidden)} forbidden move(s): the PTX ISA orders the "
                     "access where the source put it, so ptxas (or the hardware) deviates (docs/findings.md)")
        if any(f.get("check") == sass.UNGUARDED_WAIT for f in forbidden):
            lines += _retry_lines(p)
    return lines


def deviation_fix_lines(entry: Any) -> list[str]:
    """An observed outcome the model forbids (a hardware, compiler or model deviation) has no fix in
    the program -- every change keeps it forbidden, so the oracle cannot choose one; said so, with
    the retry loop the ISA gives for a wait whose result nothing tests (docs/findings.md)."""
    if not any(o.get("verdict") == "forbidden" for o in entry.data["verdict"].get("offending", [])):
        return []
    fault = injected_fault(entry.data)
    if fault is not None:
        return ["", f"fix: none needed: the PTX ISA forbids the offending outcome(s), and the simulation produced them only "
                    f"because of the injected fault --sim-fault {fault} (no hardware or compiler deviates here)"]
    from ..backends.ran_sass import order_kept

    kept = order_kept(entry.data["histogram"].get("meta") or {})
    who = {True: "the hardware deviates (or the model is wrong): the SASS that ran kept the program's order",
           False: "the SASS that ran does not keep the program's order (its finding above: the compiled code) -- look "
                  "there first -- or the hardware deviates (or the model is wrong)",
           None: "the hardware or the compiler deviates (or the model is wrong)"}[kept]
    return (["", f"fix: none in the program: the PTX ISA forbids the offending outcome(s), so {who}; report it, "
             "see docs/findings.md"] + _retry_lines(entry.program))


def _retry_lines(p: Any) -> list[str]:
    from .. import fixes

    return [f"  the form the ISA gives for waiting (not checked: the oracle already forbids the stale value): {c.text}"
            for c in fixes.changes(p) if c.op == "retry"]


def _timeout_lines(entry: Any) -> list[str]:
    """The instances whose bounded wait ran out, and what the model says about the waits."""
    from .. import model

    hist = entry.data["histogram"]
    n = hist.get("timeouts", 0)
    if not isinstance(n, int) or not n:
        return []
    t = model.termination(entry.program)
    if entry.timeouts:
        what = "a finding: the model says every wait completes"
    elif t.may_hang:
        what = "expected: the model allows a wait to spin for ever"
    else:
        what = "not judged: the model cannot say whether the waits complete"
    return ["", f"timeouts: {n} of {hist.get('instances', 0):.4g} instances ran out of their wait budget ({what})",
            f"  the model's termination verdict: {t.status}: {t.reason}"]


def run(args: argparse.Namespace) -> int:
    from ..corpus import load_entry

    from ..deadline import Watch
    from ..progress import Progress, wanted

    entry = load_entry(args.entry)
    with Progress(wanted(args.progress), f"explain {entry.path.name}") as bar:
        text = explain_text(entry, Watch(on_step=lambda n: bar.update(f"explain {entry.path.name}: fix search, candidate {n}")))
    sys.stdout.write(text)
    return 0


def _provenance(entry, hist: dict, offending: dict) -> list[str]:
    """Where the forbidden instances ran (the harness's provenance log, docs/harness.md
    "Provenance"), or why the entry has none: a GPU entry saved before the harness kept it."""
    from .run import forbidden_lines

    prov = (hist.get("meta") or {}).get("provenance")
    forbidden = [o for o in offending.values() if o.get("verdict") == "forbidden"]
    if prov:
        return [""] + forbidden_lines(entry.program, hist.get("meta") or {})
    if forbidden and str(hist.get("backend", "")).startswith("cuda"):
        return ["", "provenance: none recorded (the entry predates the harness's provenance log): which launch, "
                "CTA, warp and SM each forbidden instance came from is unknown; `fuzzgpu run` of its .litmus records it"]
    return []

