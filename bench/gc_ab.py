#!/usr/bin/env python3
"""GPU campaigns of two settings, side by side (issue 29): each campaign folder that ``bench/h200.sh throughput``
wrote with ``GCCLOCK=1`` (its ``throughput.json`` with ``gc_clock``, ``cpu.json``, ``cpu-split.json``), put on the
side of what the run itself recorded -- by default the collector's thresholds most of its workers' collections ran
under (the clock), with ``--by KEY`` the value of ``KEY`` in its ``throughput.json`` (a dotted path:
``static_pool.window_s``, ``workers``) -- never by the folder's name; then each side's runs and their mean.

    python3 bench/gc_ab.py bench/results/throughput/gc/h100-180s-ab-b9ef5a9/{campaign,python-default}
    python3 bench/gc_ab.py DIR/[0-9]*-*/ --out DIR             # the folders bench/h200.sh gcab wrote: DIR/gc-ab.json, .md
    python3 bench/gc_ab.py DIR/[0-9]*-*/ --by static_pool.window_s --label ab --out DIR   # bench/h200.sh ab's

Per run: programs judged and run per hour, the workers' Python CPU ms a judgement (and by the clock: the
collector's and the rest's), the collector's share, all the campaign's CPU-s a program run, the GPU ms a run
(CUDA events) and NVML's kernel-resident share.  Prints a markdown table; ``--out DIR`` writes it as
``DIR/LABEL.md`` beside the figures, ``DIR/LABEL.json``.  Exit 0; 2 for a folder without those files or without
the clock, or when the runs are not on two sides at least; 3 when the results cannot be written.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compile_phases import header, publish, shown  # noqa: E402

TOOLS = "backend's tools"
#: ``--by``'s default: the collector's thresholds most collections of the run's workers ran under
GC = "gc-thresholds"


def recorded(t: dict[str, Any], key: str) -> str:
    """The value at the dotted ``key`` of a run's throughput.json, as text (ValueError when it has none)."""
    value: Any = t
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            raise ValueError(f"no {key} in throughput.json")
        value = value[part]
    if isinstance(value, (dict, list)) or value is None:
        raise ValueError(f"{key} in throughput.json is no single value")
    return shown(f"{value:g}" if isinstance(value, float) else str(value))  # a file's value: it reaches pages and stderr


def run_figures(folder: Path, by: str = GC) -> dict[str, Any]:
    """One campaign's figures, its side ``by`` what it recorded (ValueError when a file, the collector's clock or
    the key is missing)."""
    try:
        t = json.loads((folder / "throughput.json").read_text())
        c = json.loads((folder / "cpu.json").read_text())
        split = json.loads((folder / "cpu-split.json").read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"{folder}: not a throughput folder ({type(exc).__name__}: {exc})") from None
    g = t.get("gc_clock")
    if not g:
        raise ValueError(f"{folder}: no gc_clock in throughput.json (run with GCCLOCK=1)")
    counts = g["collections_by_thresholds"]
    thresholds = shown(max(counts, key=counts.get))
    try:
        side = thresholds if by == GC else recorded(t, by)
    except ValueError as exc:
        raise ValueError(f"{folder}: {exc}") from None
    n, cpu, worker = t["programs"], c["user_s"] + c["sys_s"], split["cpu_s"]["worker"]
    return {
        "folder": str(folder),
        "side": side,
        "thresholds": thresholds,
        "programs": n,
        "run": t["run"],
        "run_per_hour": t["run_per_hour"],
        "run_1e7_per_hour": t["gpu_programs_1e7_per_hour"],
        "shrink_share": t["shrink_share"],
        "worker_ms_per_judgement": round(1000 * worker / n, 1),
        "clock_ms_per_judgement": round(1000 * g["process_cpu_s"] / n, 1),
        "gc_ms_per_judgement": round(1000 * g["gc_cpu_s"] / n, 1),
        "rest_ms_per_judgement": round(1000 * (g["process_cpu_s"] - g["gc_cpu_s"]) / n, 1),
        "gc_share": g["gc_share"],
        "cpu_s": round(cpu, 1),
        "cpu_s_per_run": round(cpu / t["run"], 3),
        "tools_cpu_s": round(split["cpu_s"][TOOLS], 1),
        "gpu_ms_per_run": round(1000 * t["gpu_seconds"] / t["run"], 1),
        "nvml": t["gpu_util_nvml_mean"],
    }


def sides(runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per side: the runs (in the order given) and the mean of each figure."""
    out: dict[str, dict[str, Any]] = {}
    for r in runs:
        out.setdefault(r["side"], {"runs": []})["runs"].append(r)
    for side in out.values():
        keys = [k for k, v in side["runs"][0].items() if isinstance(v, (int, float))]
        side["mean"] = {k: round(statistics.fmean(r[k] for r in side["runs"]), 3) for k in keys}
    return out


COLUMNS = (("programs judged", "programs", "{:,.0f}"), ("runs/h", "run_per_hour", "{:,.0f}"),
           ("workers' Python ms a judgement", "worker_ms_per_judgement", "{:.1f}"),
           ("the collector, ms a judgement (share)", None, ""), ("the rest, ms a judgement", "rest_ms_per_judgement", "{:.1f}"),
           ("CPU-s a run", "cpu_s_per_run", "{:.3f}"), ("GPU ms a run (events)", "gpu_ms_per_run", "{:.1f}"),
           ("NVML", "nvml", "{:.2f}"))


def _cells(r: dict[str, Any]) -> str:
    out = []
    for _, key, fmt in COLUMNS:
        out.append(f"{r['gc_ms_per_judgement']:.1f} ({100 * r['gc_share']:.1f}%)" if key is None else fmt.format(r[key]))
    return " | ".join(out)


def table(by: dict[str, dict[str, Any]], name: str = "thresholds") -> str:
    lines = [f"| {name} | run | " + " | ".join(c for c, _, _ in COLUMNS) + " |", "|---|---|" + "---|" * len(COLUMNS)]
    for th, side in sorted(by.items()):
        for r in side["runs"]:
            lines.append(f"| {th} | `{Path(r['folder']).name}` | {_cells(r)} |")
        if len(side["runs"]) > 1:
            lines.append(f"| {th} | **mean of {len(side['runs'])}** | {_cells(side['mean'])} |")
    return "\n".join(lines) + "\n"


def main(argv: Iterable[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, help="write LABEL.json and LABEL.md here")
    ap.add_argument("--label", default="gc-ab")
    ap.add_argument("--by", default=GC, help=f"side the runs by this key of throughput.json (dotted; default {GC}: the clock's)")
    argv = list(argv) if argv is not None else sys.argv[1:]
    args = ap.parse_args(argv)
    try:
        runs = [run_figures(f, args.by) for f in args.folders]
    except (ValueError, KeyError, TypeError, ZeroDivisionError) as exc:
        print(f"gc_ab: {shown(' '.join(str(exc).split()))}", file=sys.stderr)
        return 2
    by = sides(runs)
    if len(by) < 2:  # an A/B whose runs all recorded one value: the setting did not reach them, or A and B were alike
        print(f"gc_ab: all {len(runs)} runs on one side ({args.by} = {next(iter(by))}): no A/B", file=sys.stderr)
        return 2
    name = "thresholds" if args.by == GC else f"`{args.by}`"
    if args.out is None:
        print(table(by, name))
        return 0
    doc = header("gc_ab.py", argv) | {"by": args.by, "runs": runs, "sides": {k: v["mean"] for k, v in by.items()}}
    what = ("the thresholds most of its workers' collections ran under" if args.by == GC else
            f"its throughput.json's `{args.by}`")
    title = "The collector's thresholds in GPU campaigns" if args.by == GC else f"GPU campaigns side by side by `{args.by}`"
    md = [f"# {title} (`{doc['command']}`)", "", f"{doc['machine']}, {doc['date']}: each run sided by {what}.", "",
          table(by, name)]
    return publish("gc_ab", args.out, args.label, doc, md)


if __name__ == "__main__":
    sys.exit(main())
