"""Benchmark: campaigns from an empty corpus -- time to the first (shrunk) finding, programs/s and
instances/s -- per backend.

    python bench/campaign.py [--backends sim,static] [--time 120] [--seeds 1,2,3] [--out bench/results/campaigns/campaign.json]
    python bench/campaign.py --backends cuda --gpus all --time 600        # several GPUs: one worker each
    python bench/campaign.py --backends sim --workers 4 --dry-run         # the same code path on the CPU

* ``--gpus all|N|IDS`` (cuda) / ``--workers N`` (sim, static): one parallel campaign per seed
  (``fuzzgpu campaign --gpus/--workers``: one worker process per GPU, one shared corpus), timed to
  the first finding any worker saves; programs/s and instances/s summed over the workers, and per
  worker.  ``--dry-run`` runs the parallel path with the sim backend for a few seconds and writes
  to ``bench/results/campaigns/dry-run.json`` (nothing about a GPU is measured).

* ``sim``: profile classic with the injected fault relacq-as-relaxed (what the fuzzer finds when
  release/acquire is broken; a test of the fuzzer, not of a GPU);
* ``static``: profile pdl, no GPU: ptxas hoisting ld.global.nc above griddepcontrol.wait;
* ``cuda`` (on a GPU machine): profile pdl -- DESIGN.md's target is <= 60 s to rediscover FlashMLA's
  PDL + .nc race from an empty corpus on an H200.

Throughput (programs per hour, issue #7): ``--scaling 1x6,2x6,1x12`` runs one parallel campaign per
``GPUSxWORKERS_PER_GPU`` setting (profile classic, property model, the whole ``--time``, no stop at a
finding) and reports programs/hour, instances/s and the speed-up over the first setting::

    python bench/campaign.py --backends cuda --scaling 1x6,2x6,1x12 --time 120 --out bench/results/campaign-scaling.json

Through Ray (docs/ray.md): ``--ray auto|ADDRESS`` runs the parallel campaigns as Ray actors
(``fuzzgpu campaign --ray``); in ``--scaling`` a setting ``ray:GxK`` goes through Ray and ``GxK``
stays local, so one invocation compares them on the same machine::

    python bench/campaign.py --backends cuda --scaling 1x3,ray:1x3 --ray auto --time 120 --out bench/results/campaign-ray.json

Writes the figures as JSON (machine, date, command, per-run numbers) and prints a table.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from rich.console import Console
from rich.table import Table

from fuzzgpu.campaign import run_campaign

ROOT = Path(__file__).resolve().parents[1]
SETUPS = {
    "sim": {"profile": "classic", "backend": "sim", "sim_fault": "relacq-as-relaxed"},
    "static": {"profile": "pdl", "backend": "static", "sim_fault": None},
    "cuda": {"profile": "pdl", "backend": "cuda", "sim_fault": None},
}


def one(name: str, seconds: float, seed: int) -> dict:
    setup = SETUPS[name]
    with tempfile.TemporaryDirectory(prefix=f"fuzzgpu-bench-{name}-") as d:
        t0 = time.monotonic()
        res = run_campaign(setup["profile"], setup["backend"], seconds, d, "model", seed, setup["sim_fault"],
                           out=io.StringIO(), live=False, max_findings=1)
        wall = time.monotonic() - t0
        first = res.new_findings[0] if res.new_findings else None
        return {
            "backend": name, "profile": setup["profile"], "seed": seed, "seconds": wall,
            "found": bool(first), "time_to_first_finding_s": wall if first else None,
            "finding": first, "programs": res.session_programs, "instances": res.session_instances,  # programs: judged
            "programs_per_s": res.session_programs / max(wall, 1e-9), "instances_per_s": res.session_instances / max(wall, 1e-9),
            "run": res.session_run, "run_per_s": res.session_run / max(wall, 1e-9),  # run by the backend
            "backend_description": res.backend_description,
        }


def _parallel_campaign(args: list[str], seconds: float, corpus: str) -> tuple[dict, float, list[str]]:
    """Run ``fuzzgpu campaign ARGS --corpus CORPUS`` (a parallel campaign) in a subprocess; return
    its combined report.json, the wall time and the command."""
    import subprocess

    cmd = [sys.executable, "-m", "fuzzgpu", "campaign", *args, "--time", str(seconds), "--corpus", corpus, "--no-live"]
    t0 = time.monotonic()
    r = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=seconds + 300)
    wall = time.monotonic() - t0
    if r.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)}: exit {r.returncode}: {(r.stdout + r.stderr).strip().splitlines()[-3:]}")
    return json.loads((Path(corpus) / "report" / "report.json").read_text()), wall, cmd


def parallel(name: str, seconds: float, seed: int, gpus: str | None, workers: int | None, ray: str | None = None) -> dict:
    """One parallel campaign (``fuzzgpu campaign --gpus/--workers``) in a subprocess, stopped at the
    first finding; the combined report gives the numbers."""
    setup = SETUPS[name]
    with tempfile.TemporaryDirectory(prefix=f"fuzzgpu-bench-par-{name}-") as d:
        args = ["--profile", setup["profile"], "--backend", setup["backend"], "--seed", str(seed), "--max-findings", "1", "--json"]
        if setup["sim_fault"]:
            args += ["--sim-fault", setup["sim_fault"]]
        args += ["--gpus", gpus] if gpus else ["--workers", str(workers or 2)]
        args += ["--ray", ray] if ray else []
        rep, wall, _ = _parallel_campaign(args, seconds, d)
        comb = rep["combined"]
        firsts = [st.get("last_finding_elapsed") for st in rep["workers_state"].values() if st.get("findings")]
        first = min((f for f in firsts if f is not None), default=None)
        return {
            "backend": name, "profile": setup["profile"], "seed": seed, "seconds": wall, "gpus": rep.get("gpus"),
            "workers": rep.get("workers"), "found": bool(comb["findings"]),
            "time_to_first_finding_s": first, "finding": comb["findings"][0] if comb["findings"] else None,
            "programs": comb["programs"], "instances": comb["instances"],
            "programs_per_s": comb["programs"] / max(wall, 1e-9), "instances_per_s": comb["instances"] / max(wall, 1e-9),
            "run": comb.get("run", 0), "run_per_s": comb.get("run", 0) / max(wall, 1e-9),
            "per_worker": {w: {"programs": st.get("programs"), "instances": st.get("instances"), "findings": len(st.get("findings", []))}
                           for w, st in rep["workers_state"].items()},
            "backend_description": f"parallel campaign ({len(rep.get('workers', []))} workers)",
        }


def scaling(setting: str, seconds: float, seed: int, profile: str = "classic", ray: str | None = None) -> dict:
    """One fixed-time parallel cuda campaign with ``GPUSxK`` (K workers per GPU), not stopped at a
    finding: programs per hour from the combined report (over the workers' campaign time, and over
    the wall time of the whole command, start-up included).  ``ray:GPUSxK``: through Ray at ``ray``."""
    via_ray = setting.startswith("ray:")
    if via_ray and not ray:
        raise SystemExit(f"--scaling {setting}: a ray: setting needs --ray auto|ADDRESS")
    gpus, _, k = setting.removeprefix("ray:").partition("x")
    with tempfile.TemporaryDirectory(prefix="fuzzgpu-bench-scaling-") as d:
        args = ["--profile", profile, "--backend", "cuda", "--property", "model", "--seed", str(seed),
                "--gpus", gpus, "--workers-per-gpu", k or "1"] + (["--ray", ray] if via_ray and ray else [])
        rep, wall, cmd = _parallel_campaign(args, seconds, d)
        comb = rep["combined"]
        el = max(1e-9, float(comb.get("elapsed") or wall))
        return {
            "setting": setting, "gpus": rep.get("gpus"), "workers": len(rep.get("workers", [])), "profile": profile,
            "seconds": wall, "campaign_elapsed_s": el, "programs": comb["programs"], "instances": comb["instances"],
            "programs_per_hour": comb["programs"] / el * 3600, "programs_per_hour_wall": comb["programs"] / max(wall, 1e-9) * 3600,
            "run": comb.get("run", 0), "run_per_hour": comb.get("run", 0) / el * 3600,
            "instances_per_s": comb["instances"] / el, "ray": rep.get("ray"),
            "findings": len(comb["findings"]), "quarantined": comb.get("quarantined", 0), "command": " ".join(cmd[1:]),
        }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backends", default="sim,static")
    ap.add_argument("--time", type=float, default=120.0, help="budget per run (it stops at the first finding)")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--out", type=Path, default=None, help="default bench/results/campaigns/campaign.json (campaigns/dry-run.json with --dry-run)")
    ap.add_argument("--gpus", default=None, metavar="all|N|IDS", help="a parallel campaign, one worker per GPU (cuda)")
    ap.add_argument("--workers", type=int, default=None, metavar="N", help="a parallel campaign with N workers (sim, static)")
    ap.add_argument("--dry-run", action="store_true", help="the parallel code path with the sim backend, a few seconds per run")
    ap.add_argument("--scaling", default=None, metavar="GxK,...", help="throughput runs: G GPUs x K workers per GPU (cuda); ray:GxK through Ray")
    ap.add_argument("--ray", default=None, metavar="auto|ADDRESS", help="the parallel campaigns as Ray actors (docs/ray.md)")
    args = ap.parse_args()
    if args.scaling:
        return main_scaling(args)
    if args.dry_run:
        args.backends, args.gpus, args.workers = "sim", None, args.workers or 2
        args.time, args.seeds = min(args.time, 30.0), "1"
    if args.out is None:
        args.out = ROOT / "bench" / "results" / ("campaigns/dry-run.json" if args.dry_run else "campaigns/campaign.json")
    runs = []
    for name in args.backends.split(","):
        for seed in (int(s) for s in args.seeds.split(",")):
            if args.gpus or args.workers or args.ray:
                r = parallel(name.strip(), args.time, seed, args.gpus, args.workers, args.ray)
            else:
                r = one(name.strip(), args.time, seed)
            runs.append(r)
            what = f"found in {r['seconds']:.1f} s" if r["found"] else f"nothing in {r['seconds']:.0f} s"
            print(f"{name} seed {seed}: {what}, "
                  f"{r['programs']} programs ({r['programs_per_s']:.1f}/s)", file=sys.stderr)
    t = Table(title="fuzzgpu campaigns from an empty corpus (stop at the first shrunk finding)")
    for c in ("backend", "profile", "runs", "found", "median time to finding (s)", "programs/s", "instances/s"):
        t.add_column(c)
    for name in dict.fromkeys(r["backend"] for r in runs):
        rs = [r for r in runs if r["backend"] == name]
        found = [r["time_to_first_finding_s"] for r in rs if r["found"]]
        t.add_row(name, rs[0]["profile"], str(len(rs)), f"{len(found)}/{len(rs)}",
                  f"{statistics.median(found):.1f}" if found else "-",
                  f"{statistics.median(r['programs_per_s'] for r in rs):.1f}",
                  f"{statistics.median(r['instances_per_s'] for r in rs):.3g}")
    Console().print(t)
    out = {"machine": {"host": platform.node(), "cpus": os.cpu_count(), "python": platform.python_version()},
           "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "command": " ".join(sys.argv),
           "dry_run": args.dry_run, "runs": runs}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1, default=str))
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def main_scaling(args) -> int:
    out = args.out or ROOT / "bench" / "results" / "campaign-scaling.json"
    seed = int(args.seeds.split(",")[0])
    runs = []
    for setting in args.scaling.split(","):
        r = scaling(setting.strip(), args.time, seed, ray=args.ray)
        runs.append(r)
        print(f"{setting}: {r['programs']} programs in {r['campaign_elapsed_s']:.0f} s = {r['programs_per_hour']:.0f}/hour", file=sys.stderr)
    t = Table(title="fuzzgpu campaign throughput (profile classic, property model, cuda)")
    for c in ("GPUs x workers/GPU", "workers", "programs", "seconds", "programs/hour", "programs/hour (wall)", "instances/s", "speed-up"):
        t.add_column(c)
    base = runs[0]["programs_per_hour"] or 1
    for r in runs:
        t.add_row(r["setting"], str(r["workers"]), str(r["programs"]), f"{r['campaign_elapsed_s']:.0f}",
                  f"{r['programs_per_hour']:.0f}", f"{r['programs_per_hour_wall']:.0f}", f"{r['instances_per_s']:.3g}",
                  f"{r['programs_per_hour'] / base:.2f}x")
    Console().print(t)
    doc = {"machine": {"host": platform.node(), "cpus": os.cpu_count(), "python": platform.python_version()},
           "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "command": " ".join(sys.argv), "runs": runs}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1, default=str))
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
