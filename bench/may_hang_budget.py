#!/usr/bin/env python3
"""Benchmark (GPU): what the spin budget of a program that may hang costs and shows (issue 29).

A campaign runs a program with a wait loop at a spin budget of ``stress.campaign.SHORT_BUDGET``
iterations first (``RunConfig.budget``: 100,000), and again at the full budget only when it timed
out and the model says every wait completes: a hanging instance holds its launch for the whole
budget, and the timeouts of a program that may hang are never a finding.  This script runs the may-hang programs of a campaign's draws (profile ``--profile``, seed ``--seed``, the
first ``--programs`` the H200 harness can run) at both budgets, ``--instances`` each, as a campaign
runs them (the race property's verdict), and reports per program and budget: the GPU seconds (CUDA
events), the instances that timed out, those that completed, and the offending outcomes (what a race
produces) among them -- what the smaller budget saves and whether it loses what the larger showed.

    python3 bench/may_hang_budget.py --out DIR [--programs 8] [--instances 131072]

Writes ``DIR/may-hang-budget.json`` and ``.md``.  Needs a GPU (PyCUDA).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def may_hang_draws(profile: str, seed: int, n: int, arch: str = "sm_90") -> list[Any]:
    """The first ``n`` drawn programs that have a wait the model says may spin for ever and that the
    harness can run on ``arch`` (distinct programs, in draw order)."""
    from stages import draw

    from fuzzgpu import codegen
    from fuzzgpu.model import Unsupported, termination
    from fuzzgpu.model.liveness import waits

    out: list[Any] = []
    for p in draw(profile, 40 * n, seed):
        if len(out) >= n or p in out or not waits(p) or codegen.unrunnable_reasons(p) or codegen.harness_arch([p], arch) != arch:
            continue
        try:
            if termination(p).may_hang:
                out.append(p)
        except Unsupported:
            pass
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="all")
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--programs", type=int, default=8)
    ap.add_argument("--instances", type=int, default=131_072)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)

    from fuzzgpu import properties
    from fuzzgpu.backends.base import RunConfig
    from fuzzgpu.backends.cuda import CudaBackend
    from fuzzgpu.litmus import format_program
    from fuzzgpu.stress.campaign import SHORT_BUDGET

    programs = may_hang_draws(args.profile, args.seed, args.programs)
    base = dataclasses.replace(RunConfig(), instances=args.instances)
    budgets = (base.budget, SHORT_BUDGET)
    rows: list[dict[str, Any]] = []
    b = CudaBackend()
    try:
        for i, p in enumerate(programs):
            for budget in budgets:
                t0 = time.monotonic()
                h = b.run(p, dataclasses.replace(base, budget=budget))
                v = properties.RACE.check(p, h)
                rows.append({"program": i, "name": p.name, "budget": budget, "instances": h.instances, "timeouts": h.timeouts,
                             "completed": h.instances - h.timeouts, "offending": sum(o.count for o in v.offending),
                             "failed": v.failed, "gpu_s": round(float(dict(h.meta).get("gpu_s", 0.0)), 4),
                             "wall_s": round(time.monotonic() - t0, 3)})
                print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    finally:
        b.close()
    doc = {"command": " ".join(["python3", "bench/may_hang_budget.py", *(argv if argv is not None else sys.argv[1:])]),
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "budgets": list(budgets),
           "programs": [format_program(p) for p in programs], "rows": rows}
    tot = {bud: sum(r["gpu_s"] for r in rows if r["budget"] == bud) for bud in budgets}
    doc["gpu_s"] = {str(k): round(v, 3) for k, v in tot.items()}
    md = [f"# The spin budget of programs that may hang (`{doc['command']}`)", "",
          f"{doc['date']}; the first {len(programs)} may-hang programs of profile `{args.profile}`'s draws (seed {args.seed}), "
          f"{args.instances} instances each at each budget; GPU seconds from CUDA events.", "",
          f"GPU seconds in all: {tot[budgets[0]]:.3f} at {budgets[0]:,} iterations, {tot[budgets[1]]:.3f} at {budgets[1]:,}.", "",
          "| program | budget | GPU s | timed out | completed | offending (race) | verdict |", "|---|---|---|---|---|---|---|"]
    md += [f"| {r['program']} `{r['name']}` | {r['budget']:,} | {r['gpu_s']} | {r['timeouts']} | {r['completed']} | {r['offending']} | "
           f"{'fail' if r['failed'] else 'pass'} |" for r in rows]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "may-hang-budget.json").write_text(json.dumps(doc, indent=1) + "\n")
    (args.out / "may-hang-budget.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
