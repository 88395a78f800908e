"""Where a static campaign's CPU goes (issue 29): one ``--in-process`` campaign, the CPU seconds of
this process and of its children, and the children's split by tool -- nvcc and nvdisasm, each of a
batch of drawn programs, of at most 8 programs (a shrink's batch of candidates,
``fuzzgpu.campaign.speculate``, or a drawn batch's sm_100a group), or of a single program (a saved finding's own check, or a program a
batch did not answer) -- told apart by the kernel names in the tool's input.

    python bench/campaign_tools.py CORPUS [--time 120] [--seed 5] [--profile all] [--json FILE]

Prints one JSON object on stderr (the campaign prints its own lines on stdout): the CPU seconds, the
programs, the classes found, the load average at the start and the end, the CPU ms per program of
each stage (the process's own time in the oracle, the code generation and the SASS analysis; the
children's nvcc and nvdisasm; the rest of the process: Hypothesis's draws and shrinker, start-up,
fix searches, report) and the tools' calls.  ``bench/stages.py --campaign`` runs it on two trees.  Run it from the tree
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


#: a batch of at most this many programs is a shrink's (``fuzzgpu.campaign.speculate.AHEAD``), or a
#: batch of drawn programs' small group (its tcgen05 programs, checked for sm_100a); larger ones are
#: the drawn programs' (``fuzzgpu.campaign.engine.BATCH``)
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
    ap.add_argument("--json", help="also write the JSON object to this file")
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
                tool += "-single" if n <= 1 else "-batch" if n > SHRINK_BATCH else f"-batch<={SHRINK_BATCH}"
            tools[tool][0] += 1
            tools[tool][1] += children() - c0
            tools[tool][2] += n

    subprocess.run = run  # type: ignore[assignment]
    stages = timed_stages()
    from fuzzgpu.cli import main as cli

    load0 = os.getloadavg()
    t0 = time.process_time()
    try:
        cli(["campaign", "--backend", "static", "--profile", args.profile, "--time", args.time, "--corpus", args.corpus,
             "--seed", args.seed, "--in-process"])
    except SystemExit:
        pass
    own = time.process_time() - t0
    state = json.loads(open(os.path.join(args.corpus, ".fuzzgpu", "state.json")).read())
    total = own + children()
    n = max(1, state["programs"])
    by_tool = {k: sum(v[1] for t, v in tools.items() if t.startswith(k)) for k in ("nvcc", "nvdisasm")}
    ms = {"Hypothesis (draws, shrinker), start-up, fix searches, report": own - sum(stages.values()),
          "oracle (the property's verdict)": stages["oracle"], "codegen (static kernels)": stages["codegen"],
          "compile (nvcc: cicc, ptxas)": by_tool["nvcc"], "SASS check (nvdisasm)": by_tool["nvdisasm"],
          "SASS check (the analysis)": stages["analysis"], "run": 0.0}
    out = {"self_cpu_s": round(own, 2), "children_cpu_s": round(children(), 2), "programs": state["programs"],
           "shrink_programs": state.get("shrink_programs"), "cpu_s_per_program": round(total / n, 3),
           "classes": sorted(state.get("classes") or {}), "load_average_start": load0, "load_average_end": os.getloadavg(),
           "stages_cpu_ms_per_program": {k: round(1e3 * v / n, 1) for k, v in ms.items()},
           "tools": {k: {"calls": int(c), "cpu_s": round(t, 2), "programs": int(p)} for k, (c, t, p) in sorted(tools.items())}}
    print(json.dumps(out, indent=1), file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


def timed_stages() -> dict[str, float]:
    """This process's CPU seconds in the oracle's verdicts (``Property.check``), the static kernels'
    code generation (``codegen.generate_static``) and the SASS analysis (``sass.toolchain.analysed``),
    each function wrapped (the campaign calls them through their modules)."""
    from fuzzgpu import codegen, properties
    from fuzzgpu.sass import toolchain

    spent = {"oracle": 0.0, "codegen": 0.0, "analysis": 0.0}

    def wrap(owner: Any, name: str, stage: str) -> None:
        real = getattr(owner, name)

        def timed(*a: Any, **k: Any) -> Any:
            t0 = time.process_time()
            try:
                return real(*a, **k)
            finally:
                spent[stage] += time.process_time() - t0

        setattr(owner, name, timed)

    wrap(properties.Property, "check", "oracle")
    wrap(codegen, "generate_static", "codegen")
    wrap(toolchain, "analysed", "analysis")
    return spent


if __name__ == "__main__":
    sys.exit(main())
