"""Where a campaign's CPU goes, by process (issue 29): the campaign's parent, its workers' Python,
their backend processes' Python, and the compilers those run (nvcc and its cicc, ptxas, gcc; nvdisasm).

    python bench/cpu_split.py PID OUT.json [--every 1.0] [--names campaign,worker,backend]

Samples ``/proc`` every ``--every`` seconds until PID exits, keeping each process's last reading:
its own user+system seconds (``utime``, ``stime``) and those of the children it waited for
(``cutime``, ``cstime``: a backend's compilers, which it runs as subprocesses and waits for).  A
process is named by its depth below PID (``--names``: PID itself, its children, theirs; by default the
campaign's process, its workers, their supervised backend processes); anything deeper is a ``tool``
(a backend's nvcc and its cicc, ptxas, gcc; nvdisasm), counted again in its backend's ``cutime``, so
tools are reported from the backends' waited-for seconds, not from these samples.  A process that exits between two samples loses at most its last
``--every`` seconds (the parent's rusage, ``cpu.json`` of ``bench/h200.sh throughput``, has the total).

Writes OUT.json: per role the CPU seconds, the processes, and the share of the sum."""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


def stat(pid: int) -> tuple[int, float, float] | None:
    """(parent pid, own CPU s, waited-for children's CPU s) of ``pid``, or None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # after "pid (comm) ": state ppid ...
    ppid = int(fields[1])
    utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
    return ppid, (utime + stime) / TICK, (cutime + cstime) / TICK


def snapshot() -> dict[int, tuple[int, float, float]]:
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            s = stat(int(d))
            if s is not None:
                out[int(d)] = s
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pid", type=int)
    ap.add_argument("out")
    ap.add_argument("--every", type=float, default=1.0)
    ap.add_argument("--names", default="campaign,worker,backend", help="the roles of PID and the levels below it")
    args = ap.parse_args()
    names = args.names.split(",")
    depth: dict[int, int] = {args.pid: 0}
    last: dict[int, tuple[float, float]] = {}
    while stat(args.pid) is not None:
        snap = snapshot()
        for _ in range(len(names) + 3):  # a new process's parent may be new too: settle the depths
            for pid, (ppid, _own, _waited) in snap.items():
                if pid not in depth and ppid in depth:
                    depth[pid] = depth[ppid] + 1
        for pid, (_ppid, own, waited) in snap.items():
            if pid in depth:
                last[pid] = (own, waited)
        time.sleep(args.every)
    roles = {pid: names[d] if d < len(names) else "tool" for pid, d in depth.items()}
    total: dict[str, float] = {}
    count: dict[str, int] = {}
    for pid, (own, waited) in last.items():
        role = roles[pid]
        if role == "tool":
            continue
        total[role] = total.get(role, 0.0) + own
        count[role] = count.get(role, 0) + 1
        if role == names[-1]:
            total[f"{role}'s tools"] = total.get(f"{role}'s tools", 0.0) + waited
    s = sum(total.values()) or 1.0
    out = {"every_s": args.every, "cpu_s": {k: round(v, 1) for k, v in total.items()}, "processes": count,
           "share": {k: round(v / s, 3) for k, v in total.items()}, "sum_cpu_s": round(s, 1)}
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
