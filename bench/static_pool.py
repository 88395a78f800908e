#!/usr/bin/env python3
"""Benchmark: a parallel campaign with and without ``--static-pool`` (issue 29), the same code.

Runs ``fuzzgpu campaign --profile all --workers N --time T`` (``--backend static``; or the GPU
backend with ``--gpus 1 --workers-per-gpu N`` when ``--backend cuda``) from empty corpora, without
the pool and with it, alternated ``--rounds`` times, and measures for each run: the programs it
judged and ran (its report), the machine's CPU seconds over the run (``/proc/stat``: every process,
the pool's checkers included, on a machine doing nothing else), and the pool's counters.

    python3 bench/static_pool.py [--backend static] [--workers 2] [--time 120] [--rounds 1] [--seed 5]

Writes ``bench/results/throughput/static-pool[-LABEL].json`` and ``.md`` (machine, date, command, table).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from compile_phases import header, write_results  # noqa: E402

OUT = ROOT / "bench" / "results" / "throughput"


def machine_busy_s() -> float:
    """The machine's busy CPU seconds since boot (user, nice, system, irq, softirq of /proc/stat)."""
    with open("/proc/stat") as f:
        parts = f.readline().split()
    return sum(int(parts[i]) for i in (1, 2, 3, 6, 7)) / os.sysconf("SC_CLK_TCK")


def one_run(args: argparse.Namespace, pool: bool, corpus: Path) -> dict[str, Any]:
    where = ["--gpus", "1", "--workers-per-gpu", str(args.workers)] if args.backend == "cuda" else ["--workers", str(args.workers)]
    cmd = [sys.executable, "-m", "fuzzgpu", "campaign", "--backend", args.backend, "--profile", "all", "--property", args.property,
           *where, "--time", str(args.time), "--seed", str(args.seed), "--no-live", "--corpus", str(corpus),
           *(["--static-pool"] if pool else [])]
    b0 = machine_busy_s()
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    cpu = machine_busy_s() - b0
    comb = json.loads((corpus / "report" / "report.json").read_text())["combined"]
    counters = corpus / ".fuzzgpu" / "static-pool.json"
    out = {"pool": pool, "exit": r.returncode, "judged": comb["programs"], "run": comb.get("run", 0),
           "entries": len(comb.get("findings", [])), "machine_cpu_s": round(cpu, 1),
           "cpu_s_per_judged": round(cpu / max(1, comb["programs"]), 4), "cpu_s_per_run": round(cpu / max(1, comb.get("run", 0)), 4)}
    if counters.exists():
        out["pool_counters"] = json.loads(counters.read_text())
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="static", choices=("static", "cuda"))
    ap.add_argument("--property", default="race", choices=("model", "race"))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--time", type=float, default=120.0)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--label", default="", help="the results' name: static-pool-LABEL.json")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    runs = []
    with tempfile.TemporaryDirectory() as d:
        for i in range(args.rounds):
            for pool in (False, True):
                runs.append(one_run(args, pool, Path(d) / f"c{i}-{int(pool)}"))
                print(json.dumps(runs[-1]), flush=True)
    doc = {**header("static_pool.py", argv), "backend": args.backend, "workers": args.workers, "time_s": args.time,
           "seed": args.seed, "property": args.property, "runs": runs}
    md = [f"# A parallel campaign with and without `--static-pool` (`{doc['command']}`)", "",
          f"{doc['machine']}, {doc['date']}: `--backend {args.backend}`, profile `all`, property {args.property}, "
          f"{args.workers} workers, {args.time:g} s from an empty corpus, seed {args.seed}; the machine's CPU seconds over "
          "each run from /proc/stat (every process, the pool's checkers included).", "",
          "| `--static-pool` | programs judged | run | entries | machine CPU s | CPU s per judged | per run | "
          "pool: requests | checks (nvcc + nvdisasm) | programs checked |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        c = r.get("pool_counters", {})
        md.append(f"| {'on' if r['pool'] else 'off'} | {r['judged']} | {r['run']} | {r['entries']} | {r['machine_cpu_s']} | "
                  f"{r['cpu_s_per_judged']} | {r['cpu_s_per_run']} | {c.get('requests', '--')} | {c.get('checks', '--')} | "
                  f"{c.get('checked', '--')} |")
    write_results(args.out, "static-pool" + (f"-{args.label}" if args.label else ""), doc, md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
