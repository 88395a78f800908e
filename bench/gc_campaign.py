#!/usr/bin/env python3
"""Benchmark: what Python's cyclic garbage collector costs a campaign process, at Python's own
thresholds and at the campaign's (``fuzzgpu.campaign.limits.GC_THRESHOLDS``).

Each run is one static campaign (``fuzzgpu campaign --backend static --profile all --property race
--in-process``, or with ``--isolated`` the backend in its supervised process as a GPU campaign's
workers run it; an empty corpus) in a fresh interpreter, with
``limits.GC_THRESHOLDS`` set to the thresholds under test before the campaign starts; the settings
alternate seed by seed.  Per run: the process's CPU (its own, and its children's: nvcc, nvdisasm),
the CPU inside the collector by generation (``bench/cprofile_site/gc_clock.py``, the clock
``GCCLOCK=1 bench/h200.sh throughput`` puts in each GPU campaign worker), the collections, the programs judged
and run, the peak memory.  The campaign's count of programs depends on the machine's speed, so the
figure to compare is CPU per program judged.

Writes ``bench/results/throughput/gc/gc-campaign.json`` and ``.md``.  Needs nvcc (the static
check), no GPU.

    python3 bench/gc_campaign.py [--time 90] [--seeds 5 6] [--thresholds 700,10,10 2000,20,100] [--isolated --label NAME]
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from compile_phases import header, write_results  # noqa: E402

OUT = ROOT / "bench" / "results" / "throughput" / "gc"

#: run in the child: the thresholds under test, a clock on the collector, the campaign, the figures as JSON
CHILD = r"""
import json, resource, sys
sys.path.insert(0, sys.argv[3])
from gc_clock import install
from fuzzgpu.campaign import limits
limits.GC_THRESHOLDS = tuple(json.loads(sys.argv[1]))
clock = install()
from fuzzgpu.cli import main
rc = main(sys.argv[4:])
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
json.dump({"exit": rc, "children_cpu_s": kids.ru_utime + kids.ru_stime,
           "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, **clock.figures()}, open(sys.argv[2], "w"))
"""


def one(thresholds: tuple[int, ...], seed: int, seconds: float, tmp: Path, isolated: bool) -> dict[str, Any]:
    corpus, figures = tmp / f"c-{seed}-{'-'.join(map(str, thresholds))}", tmp / "figures.json"
    cmd = [sys.executable, "-c", CHILD, json.dumps(thresholds), str(figures), str(ROOT / "bench" / "cprofile_site"), "campaign", "--backend", "static",
           "--profile", "all", "--property", "race", "--time", str(seconds), "--corpus", str(corpus), "--seed", str(seed),
           "--no-live", *([] if isolated else ["--in-process"])]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    m = re.search(r"session: (\d+) programs judged, (\d+) run", p.stdout)
    if p.returncode not in (0, 1) or not m:
        raise SystemExit(f"bench/gc_campaign.py: the campaign failed (exit {p.returncode}): {p.stderr.strip()[-400:]}")
    r = json.loads(figures.read_text())
    judged = int(m.group(1))
    return {"thresholds": list(thresholds), "seed": seed, "judged": judged, "run": int(m.group(2)),
            "cpu_s": round(r["process_cpu_s"], 2), "children_cpu_s": round(r["children_cpu_s"], 2),
            "gc_s": round(r["gc_cpu_s"], 2), "gc_s_by_generation": [round(x, 2) for x in r["gc_cpu_s_by_generation"]],
            "collections": r["collections"], "maxrss_mb": round(r["maxrss_mb"]),
            "cpu_ms_per_judged": round(1000 * r["process_cpu_s"] / judged, 1),
            "all_cpu_ms_per_judged": round(1000 * (r["process_cpu_s"] + r["children_cpu_s"]) / judged, 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--time", type=float, default=90.0, help="seconds per campaign (default 90)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[5, 6])
    ap.add_argument("--thresholds", nargs="+", default=["700,10,10", "2000,20,100"],
                    help="gc.set_threshold settings, each 'a,b,c' (default: Python's own and the campaign's)")
    ap.add_argument("--isolated", action="store_true",
                    help="the backend in its supervised process, as a GPU campaign's workers run (default: --in-process); "
                         "the process CPU is then the campaign's alone, the children's the backend's and its tools'")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--label", default="gc-campaign")
    args = ap.parse_args(argv)
    try:
        settings = [tuple(int(x) for x in t.split(",")) for t in args.thresholds]
    except ValueError:
        ap.error(f"--thresholds: expected a,b,c integers, got {args.thresholds}")
    if any(len(t) != 3 for t in settings):
        ap.error("--thresholds: each setting has three integers")
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for seed in args.seeds:
            for t in settings:
                r = one(t, seed, args.time, Path(d), args.isolated)
                rows.append(r)
                print(json.dumps(r), flush=True)
    doc = header("gc_campaign.py", argv) | {"python": platform.python_version(), "isolated": args.isolated, "rows": rows}
    md = [f"# Python's garbage collector in a campaign process (`python3 bench/gc_campaign.py {' '.join(argv or sys.argv[1:])}`)", "",
          f"{doc['machine']}, Python {doc['python']}, {doc['date']}; a static campaign, profile `all`, race, {args.time:g} s, "
          + ("the backend in its supervised process (as a GPU campaign's workers run)" if args.isolated else "one process (`--in-process`)")
          + ", an empty corpus per run; the settings alternate seed by seed.  CPU per program judged: the campaign process's own (the "
          "oracle, the draws, Hypothesis, the collector" + ("" if args.isolated else ", the backend's Python") + "), and with its children ("
          + ("the backend's process, " if args.isolated else "") + "nvcc, nvdisasm).", "",
          "| thresholds | seed | judged | run | process CPU s | in the collector s (gen 0/1/2) | collections (gen 0/1/2) | "
          "process CPU ms / judged | with children ms / judged | peak MB |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {','.join(map(str, r['thresholds']))} | {r['seed']} | {r['judged']} | {r['run']} | {r['cpu_s']} | "
                  f"{r['gc_s']} ({'/'.join(map(str, r['gc_s_by_generation']))}) | {'/'.join(map(str, r['collections']))} | "
                  f"{r['cpu_ms_per_judged']} | {r['all_cpu_ms_per_judged']} | {r['maxrss_mb']} |")
    write_results(args.out, args.label, doc, md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
