"""A campaign's throughput from its corpus (issue 29): programs per hour, instances per program and
the GPU's busy share (the workers' GPU seconds -- CUDA events around their harness launches -- over
the wall time of the GPUs), from the state files the campaign's workers wrote, and the GPU runners'
counters (``--gpu-context shared``: runs, faults, restarts, the seconds each spent running requests
and idle, its deepest queue).

    python bench/throughput.py CORPUS [--gpus 1] [--time SECONDS] [--nvml nvidia-smi-samples.txt]

With ``CORPUS/gc-clock/gc-wN.json`` (``GCCLOCK=1 bench/h200.sh throughput``: each worker's clock on
Python's garbage collector, bench/cprofile_site), ``gc_clock`` sums them.

Prints one JSON object.  ``--time``: the campaign's wall time (default: the longest worker's
``elapsed``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from fuzzgpu.evidence import Evidence


def gc_clock(folder: Path) -> dict | None:
    """The workers' clocks on Python's garbage collector, summed (None without any): the CPU inside
    the collector, the workers' own CPU, the collections by generation and by the thresholds in force."""
    clocks = [json.loads(p.read_text()) for p in sorted(folder.glob("gc-w*.json"))]
    if not clocks:
        return None
    gc_s, cpu = sum(c["gc_cpu_s"] for c in clocks), sum(c["process_cpu_s"] for c in clocks)
    by: dict[str, int] = {}
    for c in clocks:
        for k, n in c["collections_by_thresholds"].items():
            by[k] = by.get(k, 0) + n
    return {"workers": len(clocks), "gc_cpu_s": round(gc_s, 1), "process_cpu_s": round(cpu, 1),
            "gc_share": round(gc_s / cpu, 3) if cpu else None,
            "collections": [sum(c["collections"][g] for c in clocks) for g in range(3)],
            "gc_cpu_s_by_generation": [round(sum(c["gc_cpu_s_by_generation"][g] for c in clocks), 1) for g in range(3)],
            "collections_by_thresholds": by}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("--gpus", type=int, default=1)
    ap.add_argument("--time", type=float, default=0.0)
    ap.add_argument("--nvml", help="nvidia-smi's utilization.gpu, one sample a line (the mean is the NVML busy share)")
    args = ap.parse_args()
    root = Path(args.corpus) / ".fuzzgpu"
    paths = sorted(root.glob("workers/*/state.json")) or [root / "state.json"]
    states = [json.loads(p.read_text()) for p in paths if p.is_file()]
    if not states:
        print(f"{args.corpus}: no campaign state", file=sys.stderr)
        return 2
    programs = sum(int(s.get("programs", 0)) for s in states)  # judged
    run = sum(int(s.get("run", 0)) for s in states)  # run by the backend (0 in a state written before it was counted)
    shrinking = sum(int(s.get("shrink_programs", 0)) for s in states)
    instances = sum(int(s.get("instances", 0)) for s in states)
    # shrink candidates answered without a compile or a run (properties.may_fail_as), per shape
    pruned = sum(int(sh.get("pruned", 0)) for s in states for sh in (s.get("shapes") or {}).values())
    gpu_s = sum(float(s.get("gpu_seconds", 0.0)) for s in states)
    wall = args.time or max(float(s.get("elapsed", 0.0)) for s in states)
    util = [float(x) for x in Path(args.nvml).read_text().split() if x.replace(".", "", 1).isdigit()] if args.nvml else []
    # what ran on the GPU: the evidence records the cuda backend wrote (one per program and stress,
    # its fresh runs merged), beside the campaign's own "run"; "programs" above counts judgements, the
    # evidence cache's answers to a program asked again (a shrink's resumes and replays) and the draws
    # not covered included
    runs = fresh = full = 0
    for f in root.glob("evidence/*/*.json"):
        e = Evidence.from_json(json.loads(f.read_text()))
        if e.backend == "cuda":
            runs += e.runs
            fresh += e.instances
            full += e.instances >= 10_000_000
    print(json.dumps({
        "workers": len(states), "programs": programs, "wall_s": round(wall, 1),
        "programs_per_hour": round(3600 * programs / wall) if wall else None,  # judged (see run, gpu_runs)
        "run": run, "run_per_hour": round(3600 * run / wall) if wall else None,  # the campaign's count of programs run
        "gpu_runs": runs, "gpu_runs_per_hour": round(3600 * runs / wall) if wall else None,
        "gpu_programs_1e7_per_hour": round(3600 * full / wall) if wall else None,  # programs run with >= 1e7 instances
        "gpu_instances": fresh,
        "shrink_share": round(shrinking / programs, 3) if programs else None,  # programs judged while shrinking
        "shrink_pruned": pruned,  # shrink candidates not judged: they had no racy outcome
        "instances_per_program": round(instances / programs) if programs else None,
        "runs_with_timeouts": sum(int(s.get("timeouts", {}).get("programs", 0)) for s in states),
        "runs_stopped_early": sum(int(s.get("timeouts", {}).get("stopped_early", 0)) for s in states),
        "gpu_seconds": round(gpu_s, 1), "gpu_busy_share": round(gpu_s / (wall * args.gpus), 3) if wall else None,
        "gpu_util_nvml_mean": round(sum(util) / len(util) / 100, 3) if util else None,  # over the samples taken
        "nvml_samples": len(util),
        "runners": {p.stem: json.loads(p.read_text()) for p in sorted(root.glob("runners/*.json"))},
        "static_pool": json.loads((root / "static-pool.json").read_text()) if (root / "static-pool.json").exists() else None,
        "classes": sorted({k for s in states for k in (s.get("classes") or {})}),
        "gc_clock": gc_clock(Path(args.corpus) / "gc-clock"),
    }, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
