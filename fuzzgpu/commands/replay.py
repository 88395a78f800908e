"""``fuzzgpu replay``: re-run saved reproducers; exit 1 when any still violates its property."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from ..errors import EXIT_CLEAN, EXIT_ENVIRONMENT, EXIT_FINDING, EXIT_USAGE, EnvError, UserError, clip
from .argtypes import check_output_file, whole_count

HELP = "re-run the reproducers of a corpus, each against its expectation (reproduces, fixed, new); exit 1 when any fails it"

DESCRIPTION = """\
Re-run every entry of a corpus folder (or one entry file) on a backend, judge the outcomes with
the entry's property (model, sc or race), and report each entry against what CI expects of it.
Each entry runs with the number of instances its reproduction record asks for: 3 / the measured
failure rate (95% confidence of seeing the failure again if it is still there), and at least as
many as when it was found.  Nothing in an entry is executed as code: entries are JSON, validated on
load, and the program goes through the IR.

An entry "still violates" when its property fails again on this backend (any offending outcome, a
timeout on a program whose waits the model says must complete, or a SASS finding that matters);
"fixed" when it does not, on the kind of backend that found it.  A value no store of the program
wrote (`?`) is reported as a HARNESS OR HARDWARE FAULT, apart from the memory-model verdicts.

Each entry's "expect" field says what CI expects of it: "reproduces" (a known hazard kept on
purpose: PASS while it still violates, FAIL when it stops -- the hardware or toolchain changed, or
fuzzgpu lost it), "fixed" (PASS while the property holds, FAIL when the finding is back) or "new"
(a finding nobody has judged, what a campaign saves, and an entry without the field: FAIL while it
still violates).  An entry this backend cannot check is NOT CHECKED, never a pass: an observed
outcome on the static backend, which executes nothing; a SASS finding on the simulation; a GPU or
compiler finding on the simulation, which samples the model ("not reproducible on sim"); a program
the oracle does not cover; on the static backend, a program whose SASS the oracle could not fully
check and found nothing in.  An entry that expects to reproduce and that this backend cannot run is
checked by the model instead: its recorded outcomes re-judged by this fuzzgpu's oracle (the tool
still sees it; the hardware was not re-run, as the line says).  On a CPU machine the shipped corpus
is checked that way: FlashMLA's entry by its SASS, the H200 entry by the model.  An entry that
cannot be read or validated, or whose kernels do not compile, is an ERROR: each is reported on its
own line and the replay goes on with the other entries.  --junit-xml FILE writes each entry as a
JUnit test case (FAIL a failure; ERROR and NOT CHECKED errors) for CI systems; FILE must be in an
existing folder and not be a folder (checked before any entry is read: exit 2).

--fixed runs each entry's fixed program instead (the weakest change, one or two, the oracle says
removes the finding, else a greedy fix of up to 6 changes, as `fuzzgpu explain` prints it; race findings, other fixable outcomes, and SASS
findings of a moved ld.global.nc) and says how often the entry's offending outcomes appeared in it
(0: the stale value is gone -- unless the fix says an outcome is now the delivered value, as for a
wait on the wrong parity; on the static backend, which runs nothing, whether the fixed program's
SASS still has a finding: "compiled, not run", --json "offending_seen": null); an entry without a fix
is not checked.  Expectations do not apply there: each fixed program passes when its property
holds (PASS, --json "check": "pass"; in the JUnit XML a test case with no failure), fails when it
still violates (exit 1, a JUnit failure), and is NOT CHECKED when it was not run.

Progress (each entry; with --fixed each fix candidate judged) goes to stderr: a rich progress bar
where stderr is a terminal, plain "progress: ..." lines with --progress elsewhere (a CI log), none
with --no-progress; stdout (the entry lines, --json) is the same either way.

Exit status (the first that applies): 1 when any entry FAILS its expectation; 2 when an entry
file is bad (one line naming it), the folder has no entries (a replay that checked nothing is not
clean), or the options are bad (e.g. --instances 0, a --sim-fault that only a supervised campaign
worker can run); 3 when the environment failed (a compile error, no nvcc, an
unreadable corpus) or some entry was NOT CHECKED; 0 only when every entry was checked and passed.

examples:
  fuzzgpu replay corpus/                               on the GPU when there is one, else static and the model: CI's replay
  fuzzgpu replay corpus/ --junit-xml replay.xml        the same, with JUnit XML for a CI system
  fuzzgpu replay corpus/ --backend sim                 the CPU simulation: the SASS entry is not checked there (exit 3)
  fuzzgpu replay /tmp/c --backend sim --sim-fault relacq-as-relaxed
  fuzzgpu replay /tmp/t --backend sim --sim-fault timeout:1      a timeout finding, with the fault
  fuzzgpu replay corpus/73416467ed043580.json --backend static --json
  fuzzgpu replay /tmp/disc --backend sim --fixed           the fixed programs of race findings
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="DIR|ENTRY", help="a corpus folder or one entry (.json)")
    parser.add_argument("--backend", default="auto", choices=("auto", "cuda", "sim", "static"), help="default: auto")
    parser.add_argument("--sim-fault", default=None, metavar="FAULT", help="with --backend sim: inject a fault (relacq-as-relaxed, timeout[:RATE], unwritten[:RATE])")
    parser.add_argument("--instances", type=whole_count, default=None, metavar="N",
                        help="instances per entry, a positive whole number such as 1e6 (default: from the entry)")
    parser.add_argument("--max-instances", type=whole_count, default=10**10, metavar="N",
                        help="cap on instances per entry, a positive whole number (default: 1e10)")
    parser.add_argument("--json", action="store_true", help="one JSON object per entry")
    parser.add_argument("--fixed", action="store_true", help="run each entry's fixed program (its fix, as explain shows it)")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="progress on stderr, per entry and per fix candidate (default: when stderr is a terminal)")
    parser.add_argument("--junit-xml", default=None, metavar="FILE",
                        help="also write the result of each entry against its expectation as JUnit XML (for CI systems)")


def replay_entry(entry: Any, backend: Any, instances: int | None = None, max_instances: int = 10**10,
                 fixed: bool = False, watch: Any = None) -> dict[str, Any]:
    """:func:`_replay_entry`; where nothing ran (no ``verdict``), ``instances`` 0 and the count it
    would have run as ``instances_asked`` (the JSON said 1048576 instances of an entry it skipped)."""
    r = _replay_entry(entry, backend, instances, max_instances, fixed, watch)
    return r if "verdict" in r else dict(r, instances=0, instances_asked=r.get("instances", 0))


def _replay_entry(entry: Any, backend: Any, instances: int | None = None, max_instances: int = 10**10,
                  fixed: bool = False, watch: Any = None) -> dict[str, Any]:
    """Re-run one entry (with ``fixed``: its fixed program); returns {"status": violates|fixed|not-reproducible|skipped|error, "reason": ..., ...}.
    ``not-reproducible``: the sim backend passed an entry found on a GPU or by the compiler.
    ``skipped``: this backend cannot check the entry (``error_kind`` absent); ``error``: the run
    failed, ``error_kind`` ``input`` (exit 2) or ``environment`` (a compile error: exit 3)."""
    from .. import fixes, model, properties
    from ..backends.base import RunConfig
    from ..stress.campaign import SHORT_BUDGET, full_budget_again

    prop = properties.get(entry.prop)
    stress = {k: v for k, v in entry.stress.items() if k in {f.name for f in dataclasses.fields(RunConfig)}}
    cfg = RunConfig(**stress)
    rep = entry.reproduction
    recorded = int(entry.data["histogram"].get("instances") or 0)
    if instances is not None and instances < 1 or max_instances < 1:
        raise UserError("--instances and --max-instances must be positive whole numbers")
    n = int(instances) if instances else max(int(rep.get("replay_instances") or 1), recorded, 1)
    n = max(1, min(n, int(max_instances)))
    out = {"entry": str(entry.path), "signature": entry.signature, "shape": entry.shape, "property": prop.name,
           "backend": backend.describe(), "instances": n}
    program = entry.program
    if fixed:
        from ..deadline import UNWATCHED  # ``watch``: progress per fix candidate (fuzzgpu.deadline.Watch)

        f = fixes.fix_for(entry.program, _stored_verdict(entry), arch=entry.data["environment"].get("arch"), watch=watch or UNWATCHED)
        if f is None and entry.data.get("sass"):  # a moved ld.global.nc: the fix explain prints
            from .explain import sass_nc_fix

            try:
                f = sass_nc_fix(entry)[1]
            except model.Unsupported:
                f = None
        if f is None:
            out.update(status="skipped", reason="no fix: no change (single, pair, or greedy of up to 6) the oracle accepts (or nothing fixable)")
            return out
        program = f.program
        out["fix"] = f.text + f.note
    outcome_finding = bool(entry.data["verdict"].get("offending")) or entry.timeouts > 0  # timeouts: observed too
    if backend.name == "static" and outcome_finding and not entry.data.get("sass"):
        out.update(status="skipped", reason="an observed-outcome finding: the static backend executes nothing")
        return out
    if backend.name != "static" and not outcome_finding and entry.data.get("sass") and getattr(backend, "static", None) is None:
        # (a GPU backend that also checks every program's SASS -- auto and cuda -- checks it)
        out.update(status="skipped", reason="a SASS (compile-time) finding: replay it with --backend static")
        return out
    from ..backends.cuda import CompileError
    from ..codegen import Unrunnable

    try:
        hist = backend.run(program, dataclasses.replace(cfg, instances=n))
        # an entry a campaign judged at its short spin budget (a wait loop runs there first): timeouts
        # where the model says every wait completes are judged on a run at the default budget, as the
        # campaign judges them (stress.campaign.full_budget_again), never at the short one
        again = full_budget_again(program, cfg, RunConfig().budget, hist.timeouts) if cfg.budget == SHORT_BUDGET else None
        if again is not None:
            hist = backend.run(program, dataclasses.replace(again, instances=n))
        verdict = prop.check(program, hist)
    except model.Unsupported as e:
        out.update(status="skipped", reason=f"the oracle does not cover this program: {e}")
        return out
    except Unrunnable as e:
        out.update(status="skipped", reason=f"this backend cannot run the program: {_line(e)}")
        return out
    except (CompileError, EnvError, OSError) as e:
        out.update(status="error", error_kind="environment", reason=f"the run failed: {_line(e)}")
        return out
    except UserError as e:
        out.update(status="error", error_kind="input", reason=_line(e))
        return out
    out["verdict"] = verdict.to_json()
    out["summary"] = verdict.summary()
    out["kinds"] = list(verdict.kinds)  # "fault": a value no store wrote (harness or hardware), apart from "outcome"
    found_on = str(entry.data.get("environment", {}).get("backend", "?"))
    if verdict.status == "unsupported":
        out.update(status="skipped", reason=verdict.reason)
    elif verdict.failed:
        out["status"] = "violates"
    elif dict(hist.meta).get("sass_unchecked"):
        # the static oracle could not account for everything: no finding is not "fixed" (issue 12, item 6)
        left = list(dict(hist.meta)["sass_unchecked"])
        out.update(status="skipped", reason=f"the SASS was not fully checked ({len(left)} thing(s), e.g. {clip(str(left[0]), 200)}): "
                                            "no finding there does not mean fixed")
    elif backend.name == "sim" and found_on != "sim" and not fixed:
        # a simulation samples the model: it cannot fix (or show) what a GPU or a compiler did
        out.update(status="not-reproducible", reason=f"found on {found_on}; a simulation cannot fix a hardware finding")
    else:
        out["status"] = "fixed"
        fault = _missing_fault(entry, backend)
        if fault:  # the entry's outcomes came from a simulated fault: without it nothing was fixed, the fault is gone
            out["note"] = (f"found under the simulated fault --sim-fault {fault}, replayed without it: the property holds "
                           f"because the fault is off, not because anything changed (replay with --sim-fault {fault})")
        elif backend.name == "sim" and found_on != "sim":
            # the fixed program of a GPU (or compiler) finding, on outcomes sampled from the oracle that
            # accepted the fix: a check of the plumbing, not of the hardware
            out["note"] = f"on the simulation only (found on {found_on}): the oracle's outcomes, not a hardware run"
    if not hist.instances:
        out["instances"] = 0  # compiled, not run (the static backend): no outcome was observed
    if fixed:
        seen = {tuple(sorted(o["outcome"].items())) for o in entry.data["verdict"].get("offending", [])}
        # None: nothing ran, so no count of the offending outcomes exists (the SASS decided)
        out["offending_seen"] = sum(c for o, c in hist.counts if tuple(sorted(o)) in seen) if hist.instances else None
    return out


def _missing_fault(entry: Any, backend: Any) -> str | None:
    """The simulated fault the entry was found under (:func:`fuzzgpu.commands.explain.replay_fault`)
    when this backend does not inject it; else None."""
    from .explain import replay_fault

    fault = replay_fault(entry.data)
    if fault is None:
        return None
    have = getattr(backend, "faults", None) or {}
    return fault if any(part.split(":")[0] not in have for part in fault.split(",")) else None


def against_expectation(entry: Any, r: dict[str, Any]) -> dict[str, Any]:
    """Replay result ``r`` of ``entry`` judged against the entry's expectation (its ``expect``:
    :mod:`fuzzgpu.corpus.expect`): ``check`` PASS / FAIL / NOT CHECKED / ERROR with ``check_reason``,
    and ``checked_by`` (what checked it).  An entry this backend cannot run that expects to
    reproduce is checked by the model: its recorded outcomes re-judged by this fuzzgpu's oracle
    (:func:`rejudge`) -- the tool still sees the finding; the hardware was not re-run."""
    from ..corpus.expect import NOT_CHECKED, PASS, REPRODUCES, expectation, judge

    expect = expectation(entry.data)
    check, why = judge(expect, r["status"], str(r.get("reason", "")))
    by = r.get("backend", "?")
    if check == NOT_CHECKED and expect == REPRODUCES and entry.data["verdict"].get("offending"):
        seen, detail = rejudge(entry)
        by = f"the model only: the recorded outcomes re-judged by this fuzzgpu's oracle ({detail}); not re-run here ({r.get('reason', '')})"
        check, why = judge(expect, "violates" if seen else "fixed")
        if not seen:
            why += f" (by the model: {detail})"
    out = dict(r, expect=expect, check=check, check_reason=why, checked_by=by if check != NOT_CHECKED else None)
    if check == PASS and r["status"] in ("skipped", "not-reproducible"):
        out["model_only"] = True
    return out


def fixed_program_check(r: dict[str, Any]) -> dict[str, Any]:
    """Replay result ``r`` of an entry's fixed program (``--fixed``) as a check: PASS when the property
    holds, FAIL when the fixed program still violates it, NOT CHECKED / ERROR as for an entry that
    expects to be fixed -- so that the JUnit XML and JSON say of each fixed program what the exit
    status says of them all (an element of its own, never an unnamed ``<error>``)."""
    from ..corpus.expect import FIXED, judge

    check, why = judge(FIXED, r["status"], str(r.get("reason", "")))
    return dict(r, expect="the fixed program holds", check=check, check_reason=why, fixed_program=True)


def rejudge(entry: Any) -> tuple[bool, str]:
    """Whether this fuzzgpu's oracle still finds the entry's finding in the outcomes it recorded
    (its histogram, SASS findings left out): the property fails on them, in the entry's class.
    Returns (seen, what it found)."""
    from .. import model, properties
    from ..backends.base import Histogram
    from ..corpus import entry_class, verdict_class

    h = entry.data["histogram"]
    counts = tuple((entry.program.outcome_of(o["outcome"]), int(o["count"])) for o in h.get("outcomes", []))
    hist = Histogram(tuple(h.get("keys", [])), counts, int(h.get("instances") or 0), int(h.get("timeouts") or 0),
                     0.0, str(h.get("backend", "")))
    try:
        v = properties.get(entry.prop).judge(entry.program, hist)
    except model.Unsupported as e:
        return False, f"the oracle no longer covers the program ({_line(e)})"
    if not v.failed or not v.offending:
        return False, f"the recorded outcomes no longer violate the {entry.prop} property ({v.summary()})"
    key, want = verdict_class(entry.shape, v), entry_class(entry.data)
    if key != want:
        return False, f"the recorded outcomes violate the property as class {key}, not the entry's {want}"
    return True, clip(v.offending[0].reason or v.summary(), 300)


def _stored_verdict(entry: Any) -> Any:
    """The entry's verdict as :func:`fuzzgpu.fixes.fix_for` reads it (offending outcomes and verdicts)."""
    from ..properties import Offence

    class _V:
        offending = tuple(Offence(entry.program.outcome_of(o["outcome"]), int(o.get("count", 0)), str(o.get("verdict", "")), "")
                          for o in entry.data["verdict"].get("offending", []))
    return _V()


def _line(e: BaseException) -> str:
    text = str(e).strip()
    return clip(text.splitlines()[0] if text else type(e).__name__, 300)


def _load_all(path: str) -> tuple[list[Any], list[dict[str, Any]]]:
    """(entries, errors): every entry of a corpus folder (or the one entry file), each loaded on
    its own, so that a bad one is reported and the others replayed."""
    from ..corpus import Corpus, CorpusError, load_entry

    p = Path(path)
    if p.is_dir():
        c = Corpus(p)
        try:
            os.listdir(p)  # glob hides an unreadable folder: it would look like an empty corpus
            paths, rejected = c.entry_paths(), c.rejected_paths()
        except OSError as e:
            raise EnvError(f"{p}: cannot list the corpus: {e.strerror or e}") from None
    elif p.exists() or p.is_symlink():
        paths, rejected = [p], []
    else:
        raise UserError(f"{p}: no such corpus folder or entry file")
    entries, errors = [], []
    for q in rejected:
        errors.append({"entry": str(q), "status": "error", "error_kind": "input",
                       "reason": f"{q}: not a regular file (a FIFO, a device, a folder or a symbolic link): not read"})
    for q in paths:
        try:
            entries.append(load_entry(q))
        except CorpusError as e:
            errors.append({"entry": str(q), "status": "error", "error_kind": "input", "reason": _line(e)})
    return entries, errors


def run(args: argparse.Namespace) -> int:
    from ..backends import make_backend

    if args.junit_xml:
        check_output_file("--junit-xml", args.junit_xml, "a JUnit XML file")  # before the replay, not after
    entries, errors = _load_all(args.path)
    if not entries and not errors:
        # a replay that checked nothing is not clean: most often a wrong path (DESIGN.md, "Exit codes")
        campaign = (Path(args.path) / ".fuzzgpu").is_dir()  # a campaign's folder: it found nothing to save
        raise UserError(f"{args.path}: no corpus entries: expected a corpus folder with at least one entry file (*.json)"
                        + ("; this is a campaign's folder whose campaigns saved no finding" if campaign else ""))
    arch = "sm_90"
    for e in entries:
        a = e.data.get("environment", {}).get("arch")
        if isinstance(a, str) and a.startswith("sm_"):
            arch = a
            break
    from .tools import require_backend_tools

    require_backend_tools(args.backend)
    backend, note = make_backend(args.backend, sim_fault=args.sim_fault, arch=arch)
    from ..backends.sim import PROCESS_FAULTS

    stopping = [f for f in PROCESS_FAULTS if f in (getattr(backend, "faults", None) or {})]
    if stopping:
        raise UserError(f"--sim-fault {','.join(stopping)} stops the process: it runs only in a supervised campaign worker; "
                        "replay takes relacq-as-relaxed and timeout[:RATE]")
    if not args.json:
        print(note)
    results = [dict(r, check="error", check_reason=r["reason"]) for r in errors]
    for r in results:
        _show(r, args.json)
    from ..deadline import Watch
    from ..progress import Progress, wanted

    with Progress(wanted(args.progress), "replay", total=len(entries)) as bar:
        for i, e in enumerate(entries):
            name = clip(e.path.name, 60)
            bar.update(f"{name}: {'fix search' if args.fixed else 'running'}", completed=i)

            def step(n: int, name: str = name, i: int = i) -> None:
                bar.update(f"{name}: fix search, candidate {n}", completed=i)

            t0 = time.monotonic()
            try:
                r = replay_entry(e, backend, args.instances, args.max_instances, args.fixed, watch=Watch(on_step=step))
            except Exception as exc:  # noqa: BLE001 -- one entry's failure does not stop the replay of the others
                r = {"entry": str(e.path), "signature": e.signature, "shape": e.shape, "status": "error",
                     "error_kind": "environment", "reason": f"internal error: {type(exc).__name__}: {_line(exc)}"}
            # the fixed programs answer another question, whatever the entry expects: does the fix remove the finding
            r = fixed_program_check(r) if args.fixed else against_expectation(e, r)
            r["seconds"] = round(time.monotonic() - t0, 3)
            results.append(r)
            _show(r, args.json, e)
        bar.update("replay: every entry done", completed=len(entries))
    counts = {k: sum(1 for r in results if r["status"] == k) for k in ("violates", "fixed", "skipped", "not-reproducible", "error")}
    checks = {k: sum(1 for r in results if r.get("check") == k) for k in ("pass", "fail", "not-checked", "error")}
    bad_input = sum(1 for r in results if r.get("error_kind") == "input")
    if not args.json:
        print(f"{len(results)} entries: {counts['violates']} still violate their property, {counts['fixed']} fixed, "
              f"{counts['skipped']} not run here"
              + (f", {counts['not-reproducible']} run but not reproducible on sim" if counts["not-reproducible"] else "")
              + (f" ({sum(1 for r in results if r.get('model_only'))} of those checked by the model instead)"
                 if any(r.get("model_only") for r in results) else "")
              + f", {counts['error']} error(s) ({backend.describe()})")
        if not args.fixed:
            print(f"against their expectations: {checks['pass']} PASS, {checks['fail']} FAIL, {checks['not-checked']} NOT CHECKED, "
                  f"{checks['error']} ERROR" + (" (a replay that did not check every entry is not green)" if checks["not-checked"] else ""))
    if args.junit_xml:
        from .junit import write_junit

        try:
            write_junit(args.junit_xml, results, suite=f"fuzzgpu replay {args.path}", backend=backend.describe())
        except OSError as e:  # a full disk, a folder made read-only meanwhile: the path asked for, not a temp file's
            raise EnvError(f"--junit-xml {args.junit_xml}: {e.strerror or e} (the JUnit XML was not written)") from None
        if not args.json:
            print(f"JUnit XML: {args.junit_xml}")
    # every result is a check (against the entry's expectation, or with --fixed: does the fixed program hold)
    failed = checks["fail"]
    unchecked = checks["error"] or checks["not-checked"]
    if failed:
        return EXIT_FINDING
    if bad_input:
        return EXIT_USAGE
    if unchecked:
        return EXIT_ENVIRONMENT
    return EXIT_CLEAN


def _show(r: dict[str, Any], as_json: bool, e: Any = None) -> None:
    if as_json:
        print(json.dumps(r), flush=True)
        return
    status = r["status"]
    if status == "error":
        print(f"ERROR {clip(r['reason'])}", file=sys.stderr, flush=True)
        if e is None or "check" not in r or r.get("fixed_program"):
            return
    what = {"violates": "STILL VIOLATES", "fixed": "fixed (property holds)", "skipped": "NOT CHECKED",
            "not-reproducible": "not reproducible on sim"}[status]
    if status == "violates" and r.get("kinds") == ["fault"]:
        what = "HARNESS OR HARDWARE FAULT again (not a memory-model violation)"
    extra = r.get("summary") if status not in ("skipped", "not-reproducible") else r.get("reason")
    if r.get("note"):
        what += f" [{r['note']}]"
    if "fix" in r and status != "skipped":
        seen = r.get("offending_seen", 0)
        how = ("its SASS has no finding that matters (nothing ran: no outcome was observed)" if seen is None
               else f"the offending outcomes seen {seen} times")
        if seen is None and status == "fixed":
            extra = ""  # the verdict's "pass (0 instances ran ...)" says again what `how` said
        extra = f"fixed program ({r['fix']}): {how}" + (f"; {extra}" if extra else "")
    # what ran: nothing when the entry was skipped before its run (no "verdict"), only a compile on static
    ran = "not run" if "verdict" not in r else f"{r['instances']:.3g} instances" if r["instances"] else "compiled, not run"
    head = f"{e.path.name}  {e.shape}  {r.get('property', e.prop)}  {ran}: "
    if "check" in r and not r.get("fixed_program"):  # judged against the entry's expectation: the mark, why, then what the replay saw
        mark = {"pass": "PASS", "fail": "FAIL", "not-checked": "NOT CHECKED", "error": "ERROR"}[r["check"]]
        line = f"{head}{mark} [expect {r['expect']}]: {r['check_reason']}"
        if r["check"] == "not-checked":
            line = f"{head}{mark} [expect {r['expect']}]: " + ("not reproducible on sim: " if status == "not-reproducible" else "") \
                + str(r.get("reason", ""))
        elif r.get("model_only"):
            line += f"; checked by {r['checked_by']}"
        elif status in ("violates", "fixed"):
            line += f" -- {what}" + (f": {extra}" if extra else "")
        print(clip(line, 2000), flush=True)
        return
    print(clip(head + what + (f": {extra}" if extra else ""), 2000), flush=True)
