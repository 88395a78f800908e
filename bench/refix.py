"""The fix of every entry of a campaign's corpus, searched again with this code (CPU only).

A campaign bounds each finding's fix search (``FIX_SECONDS``, 10 s) and saves what it found; this
script asks this checkout's fix search again, each entry bounded at ``--seconds``, and writes the
saved fix beside the new one: ``refix.json`` and ``refix.md`` in ``--out``, and each fixed program as
``fixed/<entry>.litmus`` (for ``fuzzgpu run`` on a GPU: ``bench/h200.sh fixed``).

    python bench/refix.py CORPUS_DIR --seconds 120 --out bench/results/throughput/h200-600s
    python bench/refix.py corpus.tar.gz --seconds 120 --out DIR      # a tar of a corpus/ folder
    python bench/refix.py CORPUS_DIR --seconds 30 --jobs 16 --out DIR  # one process per entry, 16 at once
"""

from __future__ import annotations

import argparse
import functools
import json
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from fuzzgpu import fixes, litmus
from fuzzgpu.commands.replay import _stored_verdict
from fuzzgpu.corpus import load_entry
from fuzzgpu.deadline import Deadline, DeadlinePassed, Watch


def _entries(src: Path, tmp: Path) -> list[Path]:
    if src.is_file():
        with tarfile.open(src) as t:
            t.extractall(tmp, filter="data")
        src = next(p.parent for p in tmp.rglob("*.json") if p.name not in ("known.json", "state.json"))
    return sorted(p for p in src.glob("*.json") if p.name not in ("known.json", "state.json"))


def refix(path: Path, seconds: float, fixed_dir: Path) -> dict:
    e = load_entry(path)
    v = _stored_verdict(e)
    row = {"entry": path.name, "class": e.data["class"]["key"], "shrunk": bool(e.data.get("shrunk")),
           "saved": str(e.data["verdict"].get("fix") or ""), "now": "", "seconds": 0.0}
    if not any(o.verdict == "racy" for o in v.offending):
        row["now"] = "(no racy outcome: nothing to fix)"
        return row
    t0 = time.monotonic()
    watch = Watch(bound=Deadline.after(seconds), bound_text=f"its bound here ({seconds:g} s)")
    try:
        f = fixes.fix_for(e.program, v, arch=e.data["environment"].get("arch"), watch=watch)
        row["now"] = f.describe() if f is not None else fixes.NO_FIX
        if f is not None:
            fixed_dir.mkdir(parents=True, exist_ok=True)
            (fixed_dir / f"{path.stem}.litmus").write_text(litmus.format_program(f.program))
    except DeadlinePassed as x:
        row["now"] = f"{x}: no fix claimed"
    row["seconds"] = round(time.monotonic() - t0, 1)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path, help="a corpus folder, or a .tar.gz holding one")
    ap.add_argument("--seconds", type=float, default=120.0, help="bound of each entry's fix search")
    ap.add_argument("--jobs", type=int, default=1, help="entries searched at once (processes)")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, ProcessPoolExecutor(max(1, a.jobs)) as pool:
        paths = _entries(a.corpus, Path(tmp))
        rows = []
        for p, row in zip(paths, pool.map(functools.partial(refix, seconds=a.seconds, fixed_dir=a.out / "fixed"), paths)):
            rows.append(row)
            print(f"{p.name}: {row['now'][:110]}", file=sys.stderr, flush=True)
    commit = subprocess.run(["git", "log", "-1", "--format=%h"], capture_output=True, text=True).stdout.strip()
    fixed = sum(1 for r in rows if r["now"] and not r["now"].startswith(("no fix", "fix search", "(no racy")))
    saved = sum(1 for r in rows if r["saved"] and not r["saved"].startswith(("no fix", "fix search")))
    out = {"corpus": str(a.corpus), "seconds": a.seconds, "code": commit, "entries": len(rows),
           "fixed_saved": saved, "fixed_now": fixed, "rows": rows}
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "refix.json").write_text(json.dumps(out, indent=1) + "\n")
    lines = [f"# The fixes of {a.corpus.name}, searched again (code {commit}, {a.seconds:g} s per entry)", "",
             f"{len(rows)} entries: a fix in {saved} as the campaign saved them, in {fixed} now.", "",
             "| entry | class | shrunk | saved by the campaign | now | s |", "|---|---|---|---|---|---|"]
    for r in rows:
        cell = [r["entry"], f"`{r['class']}`", "yes" if r["shrunk"] else "no", r["saved"].replace("|", "\\|"),
                r["now"].replace("|", "\\|"), f"{r['seconds']:g}"]
        lines.append("| " + " | ".join(cell) + " |")
    (a.out / "refix.md").write_text("\n".join(lines) + "\n")
    print(f"{len(rows)} entries: fixed {saved} as saved, {fixed} now; wrote {a.out / 'refix.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
