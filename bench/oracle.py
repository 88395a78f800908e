"""Benchmark: the oracle over Dat3M's PTX suite (183 tests) -- per-test time and total.

    python bench/oracle.py [--suite tests/litmus/dat3m] [--out bench/results/oracle/oracle.json]

Writes the figures as JSON (machine, date, command, per-test seconds) and prints a table.
Target (DESIGN.md): the whole suite in <= 10 s on this 2-core machine; a 2-thread test <= 5 ms.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from rich.console import Console
from rich.table import Table

from fuzzgpu.litmus import parse_file
from fuzzgpu.model import check_condition

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", type=Path, default=ROOT / "tests" / "litmus" / "dat3m")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "oracle" / "oracle.json")
    ap.add_argument("--repeat", type=int, default=3, help="runs of the whole suite; the best total is kept")
    args = ap.parse_args()
    with open(args.suite / "expected.csv") as f:
        rows = [r for r in csv.reader(f) if r and not r[0].startswith("#")]
    programs = [(path, parse_file(args.suite / path), expected) for path, _, expected in rows]
    best_total, best = None, None
    for _ in range(args.repeat):
        per_test = []
        t_all = time.perf_counter()
        for path, p, expected in programs:
            t0 = time.perf_counter()
            obs = check_condition(p)
            dt = time.perf_counter() - t0
            per_test.append(
                {
                    "path": path,
                    "threads": len(p.threads),
                    "seconds": round(dt, 6),
                    "agrees": str(obs.witness_reachable).lower() == expected,
                }
            )
        total = time.perf_counter() - t_all
        if best_total is None or total < best_total:
            best_total, best = total, per_test
    assert best is not None and best_total is not None
    two = [t["seconds"] for t in best if t["threads"] == 2]
    result = {
        "benchmark": "oracle over the Dat3M PTX suite (parse excluded)",
        "machine": f"{platform.node()} {platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}",
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "tests": len(best),
        "agree": sum(t["agrees"] for t in best),
        "total_seconds": round(best_total, 3),
        "two_thread_median_ms": round(statistics.median(two) * 1000, 3) if two else None,
        "two_thread_max_ms": round(max(two) * 1000, 3) if two else None,
        "per_test": best,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    console = Console()
    table = Table(title=f"oracle on {len(best)} Dat3M PTX tests ({result['date']})")
    for col in ("slowest tests", "threads", "ms"):
        table.add_column(col)
    for t in sorted(best, key=lambda t: -t["seconds"])[:8]:
        table.add_row(t["path"], str(t["threads"]), f"{t['seconds'] * 1000:.1f}")
    console.print(table)
    console.print(
        f"total {result['total_seconds']} s (target <= 10 s); 2-thread tests: median "
        f"{result['two_thread_median_ms']} ms, max {result['two_thread_max_ms']} ms (target <= 5 ms); "
        f"verdicts agreeing with Dat3M: {result['agree']}/{result['tests']}"
    )
    console.print(f"written {args.out}")
    return 0 if result["agree"] == result["tests"] else 1


if __name__ == "__main__":
    sys.exit(main())
