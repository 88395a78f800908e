#!/usr/bin/env python3
"""Benchmark: what the fix search of a campaign's findings costs (issue 29: the CPU a worker spends per
finding, beside the programs it runs).

A campaign worker searches a fix for every race finding it saves (``fixes.attach``, bounded to
``campaign.limits.FIX_SECONDS`` per finding, on the campaign's clock).  This script takes a campaign's
corpus (a folder, or a ``corpus.tar.gz`` of ``bench/results/throughput/*/``), and for each saved finding whose
verdict has a racy offending outcome runs ``fixes.fix_for`` again on this machine: its CPU seconds
(``time.process_time``), the candidates it judged (the search's own ``Watch`` ticks), and what it found --
without a bound, and what the campaign's bound would have cut (the same search bounded at
``--bound`` CPU seconds; default ``FIX_SECONDS``).  Beside it, what the campaign itself wrote in each
entry's ``fix`` (a fix, no fix, or stopped at its bound or deadline).

    python3 bench/fix_search_cost.py bench/results/throughput/h100-300s-a464825-w20/corpus.tar.gz \\
        --out bench/results/throughput/fix-search

Writes ``fix-search.json`` and ``fix-search.md`` into ``--out``.  CPU only, no GPU.  A search past
``--limit`` CPU seconds (default 120) is stopped there and counted as such.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from compile_phases import header, shown, write_results  # noqa: E402


def entries(corpus: Path) -> list[Path]:
    """The saved findings' entries (``*.json`` of the corpus folder, not of its state folders)."""
    return sorted(corpus.glob("*.json"))


BOUNDS = (30.0, 20.0, 15.0, 10.0, 5.0)


def by_bound(searched: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per bound of :data:`BOUNDS`, for the searches of shrunk entries and of the others apart: how many, their CPU
    seconds each stopped at the bound, the fixes found here and how many of them within the bound."""
    out = []
    for bound in BOUNDS:
        row: dict[str, Any] = {"bound_s": bound}
        for name, shrunk in (("shrunk", True), ("unshrunk", False)):
            rs = [r for r in searched if r.get("shrunk") == shrunk]
            fixes = [r for r in rs if r["found"] == "fix"]
            row[name] = {"searches": len(rs), "cpu_s": round(sum(min(r["cpu_s"], bound) for r in rs), 1),
                         "fixes": len(fixes), "fixes_within": sum(1 for r in fixes if r["cpu_s"] <= bound)}
        out.append(row)
    return out


def campaign_outcome(fix: str) -> str:
    """What the campaign wrote in an entry's ``fix``: ``fix``, ``no fix``, ``bound``, ``deadline`` or ``none``."""
    if not fix:
        return "none"
    if "stopped at its bound" in fix:
        return "bound"
    if "stopped at the deadline" in fix:
        return "deadline"
    return "no fix" if fix.startswith("no ") else "fix"


def search(program: Any, outcomes: list[dict[str, int]], limit: float, prune_bars: bool = True) -> dict[str, Any]:
    """``fixes.find_fix`` of one finding's fixable offending ``outcomes`` (what ``fixes.fix_for`` asks) on the CPU
    clock: its CPU s, candidates, result and the fix's text; past ``limit`` stopped.  ``prune_bars`` False: each
    candidate's race analysis over every path (``--every-path``)."""
    from fuzzgpu import fixes
    from fuzzgpu.deadline import Deadline, DeadlinePassed, Watch
    from fuzzgpu.model import events, race, values

    # each search from cold caches (the race analyses, programs' traces, threads' paths, value domains): the
    # searches before it in this process must not answer its candidates (a worker's caches hold its shrink's programs)
    race.clear_cache()
    for cache in (events._THREADS, events._TRACES, values._DOMAINS):
        cache.clear()
    ticks: list[int] = [0]

    def step(n: int) -> None:
        ticks[0] = n

    watch = Watch(Deadline.after(limit, time.process_time), "fix search", step)
    t0 = time.process_time()
    try:
        f = fixes.find_fix(program, outcomes, watch=watch, prune_bars=prune_bars)
        found, text = ("fix", f.text) if f is not None else ("no fix", "")
    except DeadlinePassed:
        found, text = "past the limit", ""
    return {"cpu_s": round(time.process_time() - t0, 3), "candidates": ticks[0], "found": found, "fix_text": text}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path, help="a campaign's corpus folder, or a corpus.tar.gz holding corpus/")
    ap.add_argument("--bound", type=float, default=None, help="the campaign's bound per finding, CPU s (default FIX_SECONDS)")
    ap.add_argument("--limit", type=float, default=120.0, help="stop a search past this many CPU s (default 120)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "throughput" / "fix-search")
    ap.add_argument("--every-path", action="store_true",
                    help="each candidate's race analysis over every path (the fix search prunes an mbarrier's paths: the same fixes)")
    ap.add_argument("--only", nargs="+", metavar="ENTRY", help="search these entries' findings only (their file names)")
    args = ap.parse_args(argv)

    from fuzzgpu import fixes
    from fuzzgpu.campaign.limits import FIX_SECONDS
    from fuzzgpu.corpus.entry import load_entry

    bound = FIX_SECONDS if args.bound is None else args.bound
    with tempfile.TemporaryDirectory(prefix="fuzzgpu-fixcost-") as tmp:
        folder = args.corpus
        if args.corpus.is_file():
            with tarfile.open(args.corpus) as t:
                t.extractall(tmp, filter="data")
            folder = Path(tmp) / "corpus"
        rows = []
        for path in entries(folder):
            if args.only and path.name not in args.only:
                continue
            entry = load_entry(path)
            doc, program = entry.data, entry.program
            offending = doc["verdict"].get("offending", [])
            row: dict[str, Any] = {"entry": path.name, "class": doc.get("class", {}).get("key", ""),
                                   "campaign": campaign_outcome(doc["verdict"].get("fix") or ""), "shrunk": bool(doc.get("shrunk")),
                                   "threads": len(program.threads), "instructions": sum(len(t.code) for t in program.threads)}
            outs = [o["outcome"] for o in offending if o["verdict"] in fixes.FIXABLE]
            if outs and any(o["verdict"] == "racy" for o in offending):  # what fixes.attach searches for
                row.update(search(program, outs, args.limit, prune_bars=not args.every_path))
            rows.append(row)
            print(f"{shown(path.name)}: {row.get('cpu_s', '-')} CPU-s, {row.get('candidates', '-')} candidates, "
                  f"{row.get('found', 'no search')} (the campaign: {row['campaign']})", file=sys.stderr, flush=True)
    searched = [r for r in rows if "cpu_s" in r]
    cpu = [r["cpu_s"] for r in searched]
    capped = [min(c, bound) for c in cpu]
    summary = {
        "entries": len(rows), "searched": len(searched), "bound_s": bound, "limit_s": args.limit,
        "cpu_s_total": round(sum(cpu), 1), "cpu_s_total_at_bound": round(sum(capped), 1),
        "cpu_s_median": round(statistics.median(cpu), 2) if cpu else 0.0,
        "past_bound": sum(1 for c in cpu if c > bound), "past_limit": sum(1 for r in searched if r["found"] == "past the limit"),
        "fix": sum(1 for r in searched if r["found"] == "fix"), "no_fix": sum(1 for r in searched if r["found"] == "no fix"),
        "campaign": {k: sum(1 for r in rows if r["campaign"] == k) for k in ("fix", "no fix", "bound", "deadline", "none")},
        "candidates_total": sum(r["candidates"] for r in searched),
    }
    summary["by_bound"] = by_bound(searched)
    doc = {**header("fix_search_cost.py", argv), "corpus": str(args.corpus), "summary": summary, "rows": rows}
    s = summary
    md = [f"# What a campaign's fix searches cost (`{doc['command']}`)", "",
          f"{doc['machine']}, {doc['date']}.  {s['entries']} saved findings, {s['searched']} with a racy offending "
          f"outcome (a fix search each, from cold model caches, on the CPU clock).", "",
          f"- **{s['cpu_s_total']} CPU-s in all** ({s['candidates_total']} candidates judged; median "
          f"{s['cpu_s_median']} CPU-s a search); **{s['cpu_s_total_at_bound']} CPU-s** with each search stopped at "
          f"{bound:g} CPU-s (the campaign's bound per finding, `FIX_SECONDS`, is on its clock).",
          f"- {s['past_bound']} searches past {bound:g} CPU-s ({s['past_limit']} past the {args.limit:g} s limit); "
          f"found here: {s['fix']} fixes, {s['no_fix']} no fix.",
          f"- What the campaign wrote: {s['campaign']['fix']} fixes, {s['campaign']['no fix']} no fix, "
          f"{s['campaign']['bound']} stopped at its bound, {s['campaign']['deadline']} at the deadline, "
          f"{s['campaign']['none']} without a search (no racy outcome).", "",
          "By bound and by the entry's shrink (a campaign saves a finding not fully shrunk when its shrink is cut: the "
          "profile's `shrink_seconds`, the deadline): the CPU the searches would take stopped there, and the fixes "
          "found here within it.", "",
          "| bound, CPU s | shrunk: searches, CPU s, fixes within | not fully shrunk: searches, CPU s, fixes within |",
          "|---|---|---|",
          *[f"| {b['bound_s']:g} | {b['shrunk']['searches']}, {b['shrunk']['cpu_s']}, {b['shrunk']['fixes_within']} of "
            f"{b['shrunk']['fixes']} | {b['unshrunk']['searches']}, {b['unshrunk']['cpu_s']}, {b['unshrunk']['fixes_within']} of "
            f"{b['unshrunk']['fixes']} |" for b in s["by_bound"]], "",
          "| entry | class | threads | instructions | CPU s | candidates | found here | the campaign |", "|---|---|---|---|---|---|---|---|"]
    md += [f"| {shown(r['entry'])} | {shown(r['class']).replace('|', chr(92) + '|')} | {r['threads']} | {r['instructions']} | {r.get('cpu_s', '-')} | "
           f"{r.get('candidates', '-')} | {r.get('found', 'no search')} | {r['campaign']} |"
           for r in sorted(rows, key=lambda r: -r.get("cpu_s", -1))]
    write_results(args.out, "fix-search", doc, md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
