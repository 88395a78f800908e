"""The summary of bench/tool_shims.sh's log: per tool and kind of module, the calls, the kernels per
call (nvdisasm: the cubin's bytes), and the CPU seconds (user + system, the tool's children included)
in all, per call and per kernel.

    python3 bench/tool_log.py LOG [--json OUT]"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any


def summary(log: str) -> dict[str, dict[str, Any]]:
    """Per "tool kind": calls, CPU, sizes; for a log that records them (9 fields a line), the
    harness's programs per call and kernels per program (a kernel per grid)."""
    rows: dict[str, list[tuple[int, float, int]]] = {}
    for line in log.splitlines():
        parts = line.split()
        if len(parts) not in (6, 9) or parts[0] not in ("nvcc", "nvdisasm"):
            continue
        tool, kind, n, _wall, user, sys_ = parts[:6]
        progs = int(parts[6]) if len(parts) == 9 else -1
        rows.setdefault(f"{tool} {kind}", []).append((int(n), float(user) + float(sys_), progs))
    out: dict[str, dict[str, Any]] = {}
    for key, rs in sorted(rows.items()):
        ns, cpu = [r[0] for r in rs], [r[1] for r in rs]
        out[key] = {"calls": len(rs), "cpu_s": round(sum(cpu), 1), "cpu_s_per_call_median": round(statistics.median(cpu), 3),
                    "size_per_call_median": statistics.median(ns), "size_per_call_mean": round(sum(ns) / len(ns), 1),
                    "calls_of_size_1": sum(1 for n in ns if n == 1),
                    "cpu_s_per_size_unit": round(sum(cpu) / max(1, sum(ns)), 4)}
        progs = [r[2] for r in rs]
        if key == "nvcc harness" and all(p >= 0 for p in progs):
            out[key]["programs"] = sum(progs)
            out[key]["programs_per_call_mean"] = round(sum(progs) / len(progs), 1)
            out[key]["kernels_per_program"] = round(sum(ns) / max(1, sum(progs)), 3)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log")
    ap.add_argument("--json")
    args = ap.parse_args()
    out = summary(Path(args.log).read_text())
    text = json.dumps(out, indent=1)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
