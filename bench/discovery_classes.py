"""The known classes in a race campaign's corpus (issue 15's seven and issue 32's, every number of
fuzzgpu.bug_classes.CLASSES: A-C = 8-10, D = 11, F = 13, H = 15, I = 16, J = 17, L = 19 among them; K is class 2): for each, how
many findings, the time to the first (from the campaign's start), whether it was shrunk, its rate and its fix; where
the first was not fully shrunk, the first that was (or none).

    python3 bench/discovery_classes.py CORPUS START_EPOCH [--json OUT.json]

Each finding's class is the oracle's, re-computed from the entry's program and offending outcomes
(fuzzgpu.bug_classes.finding_class of its racing pairs); findings of no class are counted as 'other',
by mechanism.  Prints a table; with --json also writes it."""

from __future__ import annotations

import calendar  # noqa: I001
import collections
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's fuzzgpu

from fuzzgpu.corpus import find_entries
from fuzzgpu.bug_classes import CLASSES, finding_class
from fuzzgpu.model.race import analyse_races


def classify(entry) -> set:
    ra = analyse_races(entry.program)
    out = set()
    for o in entry.data["verdict"].get("offending", []):
        for p in ra.racy.get(tuple(o["outcome"].items()), ()):
            c = finding_class(entry.program, p.mechanism, p.other_at)
            out.add(c if c is not None else f"other:{p.mechanism}")
    return out


def _summary(verdict: dict) -> str:
    """The first offending outcome's reason; the verdict's own reason for a finding with no offending
    outcome (a SASS finding: a memory operation moved across a synchronisation point)."""
    offending = verdict.get("offending") or []
    return offending[0].get("reason", "") if offending else verdict.get("reason", "")


def main(argv: list[str]) -> int:
    corpus, start = Path(argv[0]), float(argv[1])
    rows: dict = collections.defaultdict(lambda: {"findings": 0, "first_s": None, "example": None,
                                                  "first_shrunk_s": None, "shrunk_example": None})
    for e in find_entries(str(corpus)):
        found = calendar.timegm(time.strptime(e.data["found"], "%Y-%m-%dT%H:%M:%SZ")) - start
        ex = {"file": e.path.name, "shrunk": e.data.get("shrunk"), "threads": len(e.program.threads),
              "instructions": sum(len(t.code) for t in e.program.threads),
              "rate": e.data["reproduction"].get("rate"), "fix": e.data["verdict"].get("fix", ""),
              "summary": _summary(e.data["verdict"])[:160]}
        for c in classify(e):
            r = rows[c]
            r["findings"] += 1
            if r["first_s"] is None or found < r["first_s"]:
                r["first_s"], r["example"] = found, ex
            # the first entry whose shrink ran to its end (a later finding of the class may be shrunk
            # where the first was cut at the campaign's bound)
            if ex["shrunk"] and (r["first_shrunk_s"] is None or found < r["first_shrunk_s"]):
                r["first_shrunk_s"], r["shrunk_example"] = found, ex
    lines = [f"{'class':<6} {'findings':>8} {'first at':>9}  example (shrunk, threads/instructions, rate) and fix"]
    for c in list(sorted(CLASSES)) + sorted(k for k in rows if isinstance(k, str)):
        r = rows.get(c)
        name = str(c)
        if not r:
            lines.append(f"{name:<6} {0:>8} {'never':>9}  NOT FOUND: {CLASSES.get(c, '')}")
            continue
        ex = r["example"]
        lines.append(f"{name:<6} {r['findings']:>8} {r['first_s']:>8.0f}s  {ex['file']} ({'shrunk' if ex['shrunk'] else 'NOT fully shrunk'}, "
                     f"{ex['threads']}/{ex['instructions']}, rate {ex['rate']:.3g})")
        lines.append(f"{'':<26}fix: {ex['fix']}")
        sx = r["shrunk_example"]
        if not ex["shrunk"]:
            lines.append(f"{'':<26}first fully shrunk: " + (
                f"{sx['file']} at {r['first_shrunk_s']:.0f}s ({sx['threads']}/{sx['instructions']}, rate {sx['rate']:.3g}); "
                f"fix: {sx['fix']}" if sx else "none"))
    print("\n".join(lines))
    if "--json" in argv:
        out = Path(argv[argv.index("--json") + 1])
        out.write_text(json.dumps({str(k): v for k, v in rows.items()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
