"""The report of a campaign: ``report/report.txt`` and ``report/report.json`` (:func:`write_report`)
and their lines; a parallel campaign's one report from its workers' states
(:func:`combine_states`, :func:`write_combined_report`)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from ..files import write_atomic
from .document import campaign_blocks, draw_plots, write_documents
from .state import RAW_DIR, State, _new_shape_stats, throughput
from .timeline import merge


class CampaignView(Protocol):
    """What a report reads of a :class:`fuzzgpu.campaign.Campaign`."""

    state: State
    profile: Any
    prop: Any
    inner: Any
    tuner: Any
    note: str
    root: Path
    report_root: Path
    known_path: Path | None
    known_classes: Any
    new_findings: list[dict[str, Any]]
    unsaved: list[str]
    stopped_by_fault: str | None
    cut_short: list[str]


def report_text(c: CampaignView, reason: str) -> str:
    s = c.state
    lines = [
        f"fuzzgpu campaign report ({time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())})",
        f"profile     {c.profile.name} ({c.profile.path})",
        f"backend     {c.inner.describe()}",
    ]
    if c.note:
        lines.append(f"note        {c.note}")
    lines += [
        f"property    {c.prop.name}: a finding is a program that breaks \"{c.prop.doc}\"",
        f"seed        {s.seed}   sessions {s.sessions}   Hypothesis runs {s.run_index}",
        f"ended       {reason}",
        cut_line(getattr(c, "cut_short", [])),
        f"totals      {totals_phrase(s.programs, s.run, s.instances, s.elapsed)}",
        f"findings    {classes_phrase(s.classes)}; {len(s.findings)} corpus entries (one per class)"
        + (f"; {len(s.save_errors)} finding(s) NOT SAVED, kept raw in {c.root / RAW_DIR}" if s.save_errors else ""),
        f"known list  {c.known_path}: {len(c.known_classes)} known class(es)" if c.known_path else "known list  none (--known FILE, or DIR/known.json)",
        f"quarantined {s.quarantined} program(s) that hung or crashed the backend's worker"
        + (f" ({', '.join(f'{k} {v}' for k, v in sorted(s.faults.items()))}; see {c.root / 'quarantine'})" if s.quarantined else ""),
        timeouts_line(s.timeouts),
        c.tuner.note(),
        "",
        f"{'shape':<10} {'programs':>9} {'instances':>11} {'weak rate':>10} {'failures':>9} {'entries':>9} {'not covered':>12}",
    ]
    for name, st in sorted(s.shapes.items()):
        rate = f"{st['weak'] / st['instances']:.2e}" if st["instances"] else "-"
        lines.append(f"{name:<10} {int(st['programs']):>9} {int(st['instances']):>11.4g} {rate:>10} {int(st['failures']):>9} "
                     f"{int(st['findings']):>9} {int(st['unsupported']):>12}")
    if s.not_covered:
        lines += ["", "not covered (programs that were not judged, and why):"]
        for why, n in sorted(s.not_covered.items(), key=lambda kv: -kv[1])[:10]:
            lines.append(f"  {n:>6}  {why}")
    lines += class_lines(s.classes, s.findings)
    lines += save_error_lines(s.save_errors)
    lines += ["", exit_status_line(c.new_findings, c.unsaved, c.stopped_by_fault)]
    return "\n".join(lines) + "\n"


def totals_phrase(judged: int, run: int, instances: float, elapsed: float) -> str:
    """``N programs judged (J/h), M run (R/h), I instances, E s``: judged counts the evidence
    cache's answers and the draws not covered too; run, what the backend ran (:class:`State`)."""
    t = throughput(judged, run, elapsed)
    ph = {k: f" ({t[k]:,}/h)" if t[k] is not None else "" for k in ("judged_per_hour", "run_per_hour")}
    return (f"{judged} programs judged{ph['judged_per_hour']}, {run} run by the backend{ph['run_per_hour']}, "
            f"{instances:.4g} instances, {elapsed:.1f} s")


def cut_line(cut: Any) -> str:
    """What the session's deadline cut short (a fix search, a shrink), or that nothing was."""
    return f"cut short   {'; '.join(cut)}" if cut else "cut short   nothing: every step finished before the deadline"


def classes_phrase(classes: Mapping[str, Mapping[str, Any]]) -> str:
    """``N findings in K classes (M in J known classes)``."""
    n = sum(int(c.get("findings", 0)) for c in classes.values())
    known = [c for c in classes.values() if c.get("known")]
    kn = sum(int(c.get("findings", 0)) for c in known)
    text = f"{n} finding{'s' if n != 1 else ''} in {len(classes)} class{'es' if len(classes) != 1 else ''}"
    if known:
        text += f" ({kn} in {len(known)} known class{'es' if len(known) != 1 else ''}, not saved again)"
    return text


def _kinds_note(kinds: Any) -> str:
    kinds = list(kinds or ())
    if kinds == ["sass"]:
        return " [SASS only: no executed outcome broke the property; the compiled code can]"
    return ""


def class_lines(classes: Mapping[str, Mapping[str, Any]], findings: Any = ()) -> list[str]:
    """One line per class, most findings first: its entry (or its write-up, for a known class),
    how many findings it holds, and the class key; then the entries saved."""
    if not classes and not findings:
        return []
    out = ["", "classes (root causes; each holds the findings that share it, one corpus entry each):"]
    for key, c in sorted(classes.items(), key=lambda kv: (-int(kv[1].get("findings", 0)), kv[0])):
        n = int(c.get("findings", 0))
        where = (f"KNOWN, see {c.get('writeup')} (fuzzgpu's repository)" if c.get("known")
                 else c.get("file") or (f"{c['raw']} (NOT SAVED, kept raw)" if c.get("raw") else "(NOT SAVED)"))
        out.append(f"  {n:>6} finding{'s' if n != 1 else ' '}  {where}  {key}{_kinds_note(c.get('kinds'))}")
        if c.get("known") and c.get("title"):  # what the write-up says, where only a wheel is installed
            out.append(f"{'':16}{c['title']}")
    if findings:
        out += ["", "entries saved (the representative of each class):"]
        for f in findings:
            out.append(_finding_line(f))
    return out


def save_error_lines(errors: Any) -> list[str]:
    if not errors:
        return []
    out = ["", "findings NOT SAVED as corpus entries (kept raw; nothing lost -- look at these first):"]
    for e in errors:
        out.append(f"  {e.get('raw') or '(not even kept raw)'}  {e.get('shape', '?')}: {e.get('summary', '')}  -- {e.get('error', '')}")
    return out


def exit_status_line(new: Any, unsaved: Any, stopped_by_fault: str | None = None) -> str:
    """What the exit status of ``fuzzgpu campaign`` will be, and why."""
    what = f"{len(new)} new corpus entr{'ies' if len(new) != 1 else 'y'}" + (f" and {len(unsaved)} finding(s) kept raw" if unsaved else "")
    if stopped_by_fault:  # the run was cut short: not a clean one, whatever it found before
        return (f"exit status 3: the campaign stopped before its time on a fault it cannot recover from ({stopped_by_fault}); "
                f"{what} this session, saved")
    if new or unsaved:
        return f"exit status 1: {what} this session (1 means findings were saved; 0: none; 2: bad input; 3: environment)"
    return "exit status 0: no new finding this session (1 would mean findings were saved; 2: bad input; 3: environment)"


def timeouts_line(t: Mapping[str, int]) -> str:
    """``timeouts    N instance(s) in P program(s): F must complete (findings), E may hang (expected), U unknown``
    (and how many runs stopped early on their timeouts)."""
    if not t.get("instances"):
        return "timeouts    none"
    return (f"timeouts    {t['instances']} instance(s) timed out in {t.get('programs', 0)} program(s): "
            f"{t.get('must-complete', 0)} whose waits must complete (findings), {t.get('may-hang', 0)} that may hang "
            f"(expected), {t.get('unknown', 0)} unknown"
            + (f"; {t['stopped_early']} run(s) stopped early, most of their first launch timed out" if t.get("stopped_early") else ""))


def _finding_line(f: Mapping[str, Any]) -> str:
    more = "" if f.get("shrunk", True) else ", not fully shrunk"
    if list(f.get("kinds") or ()) == ["sass"]:
        more += ", SASS only"
    if f.get("saved_by_another"):
        more += ", saved first by another worker or campaign"
    if f.get("workers"):
        more += f"; found by {', '.join(f['workers'])}"
    return f"  {f['file']}  {f.get('shape', '?')} ({f.get('threads', '?')} threads{more}): {f.get('summary', '')}"


def write_report(c: CampaignView, reason: str) -> Path:
    """``report/``: report.txt (the terminal's), report.json (the machines'), and the report a person
    reads first, report.md and report.html with the plots (:mod:`.document`) -- not for a parallel
    campaign's worker, whose parent writes the combined one."""
    d = c.report_root / "report"
    d.mkdir(parents=True, exist_ok=True)
    text = report_text(c, reason)
    write_atomic(d / "report.txt", text)
    rep = {"schema": "fuzzgpu.campaign-report", "version": 1, "ended": reason, "profile": c.profile.name,
           "backend": c.inner.describe(), "note": c.note, "property": c.prop.name, "state": c.state.to_json(),
           "stopped_by_fault": c.stopped_by_fault, "cut_short": list(getattr(c, "cut_short", [])),
           "totals": throughput(c.state.programs, c.state.run, c.state.elapsed)}
    if getattr(c, "worker_id", None) is None:
        s = c.state
        plots = draw_plots(d, s.timeline, s.classes, s.shapes, c.inner.describe(), f"profile {c.profile.name}, {c.inner.name}")
        head = [("ended", reason), ("profile", f"{c.profile.name} ({c.profile.path})"), ("backend", c.inner.describe()),
                ("property", f"{c.prop.name}: a finding is a program that breaks \"{c.prop.doc}\""),
                ("seed", f"{s.seed} (sessions {s.sessions}, Hypothesis runs {s.run_index})"),
                ("totals", totals_phrase(s.programs, s.run, s.instances, s.elapsed)),
                ("findings", classes_phrase(s.classes)),
                ("known list", f"{c.known_path}: {len(c.known_classes)} known class(es)" if c.known_path else "none"),
                ("quarantined", str(s.quarantined)), ("timeouts", timeouts_line(s.timeouts).split(None, 1)[1])]
        if c.note:
            head.insert(3, ("note", c.note))
        if getattr(c, "cut_short", None):
            head.append(("cut short by the deadline", "; ".join(c.cut_short)))
        write_documents(d, campaign_blocks(
            title=f"fuzzgpu campaign report: profile {c.profile.name}, {c.inner.name} backend, property {c.prop.name}",
            exit_line=exit_status_line(c.new_findings, c.unsaved, c.stopped_by_fault), head=head, classes=s.classes,
            findings=s.findings, shapes=s.shapes, not_covered=s.not_covered, timeline=s.timeline, corpus=c.root, plots=plots))
        rep["plots"] = {k: {"file": f, "note": n} for k, (f, n) in plots.items()}
        rep["plot"] = plots["weak-rates"][0] or plots["weak-rates"][1]
    write_atomic(d / "report.json", json.dumps(rep, indent=1))
    return d


def combine_states(states: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The workers' states (``worker id -> state JSON``) as one: totals summed, per-shape
    statistics added, findings listed once per corpus file with the workers that found them."""
    out: dict[str, Any] = {"programs": 0, "shrink_programs": 0, "run": 0, "instances": 0, "duplicates": 0, "quarantined": 0, "gpu_seconds": 0.0, "faults": {}, "timeouts": {}, "shapes": {},
                           "not_covered": {}, "findings": [], "elapsed": 0.0, "workers": sorted(states), "classes": {},
                           "save_errors": []}
    by_file: dict[str, dict[str, Any]] = {}
    for wid, st in sorted(states.items()):
        for k in ("programs", "shrink_programs", "run", "instances", "duplicates", "quarantined", "gpu_seconds"):
            v = st.get(k, 0)
            out[k] += v if isinstance(v, (int, float)) and not isinstance(v, bool) else 0
        out["elapsed"] = max(out["elapsed"], float(st.get("elapsed", 0) or 0))
        for k, v in (st.get("faults") or {}).items():
            out["faults"][k] = out["faults"].get(k, 0) + v
        for k, v in (st.get("timeouts") or {}).items():
            out["timeouts"][k] = out["timeouts"].get(k, 0) + v
        for name, sh in (st.get("shapes") or {}).items():
            acc = out["shapes"].setdefault(name, _new_shape_stats())
            for k, v in sh.items():
                acc[k] = acc.get(k, 0) + v
        for why, n in (st.get("not_covered") or {}).items():
            out["not_covered"][why] = out["not_covered"].get(why, 0) + n
        for key, c in (st.get("classes") or {}).items():
            acc = out["classes"].get(key)
            if acc is None:
                out["classes"][key] = {k: v for k, v in c.items() if k != "variants"}
            else:
                acc["findings"] = int(acc.get("findings", 0)) + int(c.get("findings", 0))
                acc["file"] = acc.get("file") or c.get("file")
        out["save_errors"] += [dict(e, worker=wid) for e in st.get("save_errors") or []]
        for f in st.get("findings") or []:
            rec = by_file.get(f["file"])
            if rec is None:
                rec = by_file[f["file"]] = {k: v for k, v in f.items() if k != "saved_by_another"}
                rec["workers"] = []
                out["findings"].append(rec)
            rec["workers"].append(wid)
    return out


def write_combined_report(corpus: Path, states: Mapping[str, Mapping[str, Any]], reason: str, info: Mapping[str, Any]) -> Path:
    comb = combine_states(states)
    d = Path(corpus) / "report"
    d.mkdir(parents=True, exist_ok=True)
    gpus = info.get("gpus") or []
    lines = [
        f"fuzzgpu parallel campaign report ({time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())})",
        f"profile     {info.get('profile')}",
        f"backend     {info.get('backend')}" + (f" on GPUs {', '.join(gpus)} ({info.get('workers_per_gpu') or 1} worker(s) each)" if gpus else ""),
        f"property    {info.get('property')}",
        f"seed        {info.get('seed')} (worker i uses seed + i)",
        f"workers     {len(info.get('workers', []))}: {', '.join(info.get('workers', []))}"
        + (f"  (worker processes restarted: {sum(info.get('restarts', {}).values())})" if info.get("restarts") else ""),
        f"ended       {reason}",
        f"totals      {totals_phrase(comb['programs'], comb['run'], comb['instances'], comb['elapsed'])}",
        f"findings    {classes_phrase(comb['classes'])}; {len(comb['findings'])} corpus entries (one per class)"
        + (f"; {len(comb['save_errors'])} finding(s) NOT SAVED, kept raw in {Path(corpus) / RAW_DIR}" if comb["save_errors"] else ""),
        f"known list  {info['known']}" if info.get("known") else "known list  none given (a worker reads DIR/known.json when present)",
        f"quarantined {comb['quarantined']}" + (f" ({', '.join(f'{k} {v}' for k, v in sorted(comb['faults'].items()))})" if comb["faults"] else ""),
        timeouts_line(comb["timeouts"]),
        "",
        f"{'worker':<8} {'judged':>9} {'run':>9} {'instances':>11} {'entries':>9} {'quarantined':>12}",
    ]
    for wid, st in sorted(states.items()):
        lines.append(f"{wid:<8} {int(st.get('programs', 0)):>9} {int(st.get('run', 0)):>9} {float(st.get('instances', 0)):>11.4g} "
                     f"{len(st.get('findings', [])):>9} {int(st.get('quarantined', 0)):>12}")
    lines += ["", f"{'shape':<10} {'programs':>9} {'instances':>11} {'weak rate':>10} {'failures':>9} {'entries':>9} {'not covered':>12}"]
    for name, st in sorted(comb["shapes"].items()):
        rate = f"{st['weak'] / st['instances']:.2e}" if st["instances"] else "-"
        lines.append(f"{name:<10} {int(st['programs']):>9} {int(st['instances']):>11.4g} {rate:>10} {int(st['failures']):>9} "
                     f"{int(st['findings']):>9} {int(st['unsupported']):>12}")
    lines += class_lines(comb["classes"], comb["findings"])
    lines += save_error_lines(comb["save_errors"])
    new = [f for st in states.values() for f in st.get("findings", []) if not f.get("saved_by_another")]
    lines += ["", exit_status_line(new, comb["save_errors"], info.get("stalled"))]
    text = "\n".join(lines) + "\n"
    write_atomic(d / "report.txt", text)
    tl = merge([st.get("timeline") or [] for st in states.values()])
    what = f"profile {info.get('profile')}, {len(states)} workers"
    plots = draw_plots(d, tl, comb["classes"], comb["shapes"], str(info.get("backend")), what)
    head = [("ended", reason), ("profile", str(info.get("profile"))), ("backend", lines[2].split(None, 1)[1]),
            ("property", str(info.get("property"))), ("seed", f"{info.get('seed')} (worker i uses seed + i)"),
            ("workers", lines[5].split(None, 1)[1]), ("totals", lines[7].split(None, 1)[1]),
            ("findings", classes_phrase(comb["classes"])), ("known list", str(info.get("known") or "none given")),
            ("quarantined", str(comb["quarantined"])), ("timeouts", timeouts_line(comb["timeouts"]).split(None, 1)[1])]
    write_documents(d, campaign_blocks(
        title=f"fuzzgpu parallel campaign report: profile {info.get('profile')}, {len(states)} workers, property {info.get('property')}",
        exit_line=exit_status_line(new, comb["save_errors"], info.get("stalled")), head=head,
        classes=comb["classes"], findings=comb["findings"], shapes=comb["shapes"], not_covered=comb["not_covered"],
        timeline=tl, corpus=Path(corpus), plots=plots))
    rep = {"schema": "fuzzgpu.campaign-report", "version": 1, "parallel": True, "ended": reason, **dict(info),
           "combined": comb, "totals": throughput(comb["programs"], comb["run"], comb["elapsed"]), "workers_state": dict(states), "timeline": tl,
           "plots": {k: {"file": f, "note": n} for k, (f, n) in plots.items()}}
    write_atomic(d / "report.json", json.dumps(rep, indent=1, default=str))
    return d


def live_table(c: Any) -> Any:
    """The live display of campaign ``c`` (a :class:`~fuzzgpu.campaign.engine.Campaign`): a rich table."""
    from rich.table import Table

    el = c._elapsed_base + (time.monotonic() - c._t0)
    sess = max(1e-9, time.monotonic() - c._t0)
    t = Table(title=f"fuzzgpu campaign  profile={c.profile.name}  property={c.prop.name}  {c.inner.describe()}",
              title_justify="left")
    for col in ("shape", "programs", "instances", "weak rate", "failures", "entries", "not covered"):
        t.add_column(col, justify="right" if col != "shape" else "left")
    for name, s in sorted(c.state.shapes.items()):
        rate = f"{s['weak'] / s['instances']:.2e}" if s["instances"] else "-"
        t.add_row(name, str(int(s["programs"])), f"{int(s['instances']):.3g}", rate, str(int(s["failures"])),
                  str(int(s["findings"])), str(int(s["unsupported"])))
    since = "never" if c.state.last_finding_elapsed is None else f"{el - c.state.last_finding_elapsed:.0f} s ago"
    t.caption = (f"{(c.state.programs - c._p0) / sess:.1f} programs judged/s  {(c.state.run - c._r0) / sess:.1f} run/s  "
                 f"{(c.state.instances - c._i0) / sess:.3g} instances/s  "
                 + c._busy(sess)
                 + f"{classes_phrase(c.state.classes)}, {len(c.state.findings)} entr{'y' if len(c.state.findings) == 1 else 'ies'}"
                 + (f", {len(c.state.save_errors)} NOT SAVED (kept raw)" if c.state.save_errors else "")
                 + f"  last finding {since}  elapsed {el:.0f} s (this session {sess:.0f} s)" + repeats_phrase(c))
    return t


#: judgements of a session with no program run (every one the evidence cache's answer) after which
#: the status says the draws repeat
REPEATS_SAID = 1000


def repeats_phrase(c: Any) -> str:
    """``, every draw of this session judged before ...`` when this session has judged at least
    :data:`REPEATS_SAID` programs and run none: its draws all repeat programs the corpus's evidence
    cache has answers for (a small profile at its size), and the time finds nothing new."""
    judged, ran = c.state.programs - c._p0, c.state.run - c._r0
    if judged < REPEATS_SAID or ran:
        return ""
    return (f", every one of this session's {judged} draws was judged before (the evidence cache): the profile's "
            "programs look used up (a larger profile, or another property, draws others)")


def status_text(c: Any, sess: float) -> str:
    """The plain status line of campaign ``c`` (without the live display), ``sess`` seconds into
    the session: programs judged and run, and each per second of this session."""
    s = c.state
    return (f"[{sess:6.0f} s] programs {s.programs} judged ({(s.programs - c._p0) / sess:.1f}/s), {s.run} run "
            f"({(s.run - c._r0) / sess:.1f}/s), instances {s.instances:.3g}, {c._busy(sess)}{classes_phrase(s.classes)}"
            + (f", {len(s.save_errors)} not saved (kept raw)" if s.save_errors else "") + repeats_phrase(c))
