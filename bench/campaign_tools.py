"""Where a static campaign's CPU goes (issue 29): one ``--in-process`` campaign, the CPU seconds of
this process and of its children, and the children's split by tool -- nvcc and nvdisasm, each of a
batch of drawn programs, of a shrink's batch of candidates (at most 8 programs:
``fuzzgpu.campaign.speculate``), or of a single program (a saved finding's own check, or a program a
batch did not answer) -- told apart by the kernel names in the tool's input.

    python bench/campaign_tools.py CORPUS [--time 120] [--seed 5] [--profile all]

Prints one JSON object on stderr (the campaign prints its own lines on stdout).  Run it from the tree
to measure (the current folder's ``fuzzgpu``)."""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections import defaultdict
from typing import Any


#: a batch of at most this many programs is a shrink's (``fuzzgpu.campaign.speculate.AHEAD``); larger
#: ones are the drawn programs' (``fuzzgpu.campaign.engine.BATCH``)
SHRINK_BATCH = 8


def programs_in(files: list[str]) -> int:
    """How many programs' kernels a tool's input holds: a batch names program ``i``'s kernels
    ``fuzzgpu_b<i>_<thread>`` (:func:`fuzzgpu.backends.static.batch_kernel_name`); a single check's
    are ``fuzzgpu_<thread>`` (one program)."""
    import re

    found: set[bytes] = set()
    for f in files:
        with open(f, "rb") as fh:
            found |= set(re.findall(rb"fuzzgpu_b(\d+)_", fh.read()))
    return len(found) or 1


def main() -> int:
    sys.path.insert(0, os.getcwd())
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("--time", default="120")
    ap.add_argument("--seed", default="5")
    ap.add_argument("--profile", default="all")
    args = ap.parse_args()
    tools: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0])
    real_run = subprocess.run

    def children() -> float:
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    def run(cmd: Any, *a: Any, **k: Any) -> Any:
        c0 = children()
        try:
            return real_run(cmd, *a, **k)
        finally:
            tool = os.path.basename(cmd[0]) if isinstance(cmd, (list, tuple)) else str(cmd)[:20]
            n = 0
            if tool in ("nvcc", "nvdisasm"):
                n = programs_in([c for c in cmd if isinstance(c, str) and c.endswith((".cubin", ".cu")) and os.path.isfile(c)])
                tool += "-single" if n <= 1 else "-batch" if n > SHRINK_BATCH else "-shrink-batch"
            tools[tool][0] += 1
            tools[tool][1] += children() - c0
            tools[tool][2] += n

    subprocess.run = run  # type: ignore[assignment]
    from fuzzgpu.cli import main as cli

    t0 = time.process_time()
    try:
        cli(["campaign", "--backend", "static", "--profile", args.profile, "--time", args.time, "--corpus", args.corpus,
             "--seed", args.seed, "--in-process"])
    except SystemExit:
        pass
    own = time.process_time() - t0
    state = json.loads(open(os.path.join(args.corpus, ".fuzzgpu", "state.json")).read())
    total = own + children()
    print(json.dumps({"self_cpu_s": round(own, 2), "children_cpu_s": round(children(), 2), "programs": state["programs"],
                      "shrink_programs": state.get("shrink_programs"),
                      "cpu_s_per_program": round(total / max(1, state["programs"]), 3),
                      "load_average": os.getloadavg(),
                      "tools": {k: {"calls": int(n), "cpu_s": round(s, 2), "programs": int(p)} for k, (n, s, p) in sorted(tools.items())}},
                     indent=1),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
