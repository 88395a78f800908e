"""Benchmark: what one harness run costs the host and the GPU (issue 29), with K processes sharing
the GPU as a campaign's K workers do, under each CUDA context scheduling.

    python bench/run_cost.py --programs 16 --out DIR [--cases auto:1:256,blocking:1:256,auto:8:256,...]

The parent draws ``--programs`` programs of ``--profile`` (seeded), compiles their harnesses in one
nvcc call per harness arch (:func:`fuzzgpu.backends.cuda.compile_batch`) and pickles them; each case
``SCHED:K:TEST_CTAS`` then starts K child processes at once, each with its own context (scheduling
SCHED, :func:`fuzzgpu.backends.cuda.ctx_sched_flags`), each running every program once as a campaign
does (``CudaBackend.run``: the profile's stress, ``--instances``, the oracle's watched outcomes),
test_ctas TEST_CTAS per launch.  Per case: the children's CPU ms per run (``time.process_time``
over the runs: every thread of the process, the driver's too), wall ms per run, GPU ms per run (CUDA
events) and the first run apart (the module load).  ``--profile-case N`` writes a cProfile of case N's
first child (``run-cprofile.txt``: where a run's host time goes).

Writes ``DIR/run-cost.json`` and ``DIR/run-cost.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import platform
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # this checkout's fuzzgpu, run as a script
sys.path.insert(0, str(Path(__file__).resolve().parent))

DEFAULT_CASES = "auto:1:256,blocking:1:256,auto:8:256,blocking:8:256,blocking:14:256,blocking:1:1024"


def child(args: argparse.Namespace) -> int:
    import dataclasses

    from fuzzgpu.backends import cuda
    from fuzzgpu.profiles import load_profile

    pairs = pickle.loads(Path(args.pairs).read_bytes())
    cfg = dataclasses.replace(load_profile(args.profile).stress, instances=args.instances, test_ctas=args.test_ctas)
    be = cuda.CudaBackend(sched=args.sched)
    try:
        flags = be.context_flags()
    except Exception:  # noqa: BLE001 -- a figure of the results only
        flags = -1
    prof = None
    if args.cprofile:
        import cProfile

        prof = cProfile.Profile()
    rows = []
    for i, (p, c) in enumerate(pairs):
        c0, w0 = time.process_time(), time.perf_counter()
        if prof is not None:
            prof.enable()
        try:
            h = be.run(p, cfg, compiled=c)
            err = ""
        except Exception as e:  # noqa: BLE001 -- named in the results, the others still run
            h, err = None, f"{type(e).__name__}: {str(e)[:100]}"
        if prof is not None:
            prof.disable()
        rows.append({"i": i, "program": p.name, "cpu_s": time.process_time() - c0, "wall_s": time.perf_counter() - w0,
                     "gpu_s": float(dict(h.meta)["gpu_s"]) if h is not None else 0.0,
                     "instances": h.instances if h is not None else 0, "timeouts": h.timeouts if h is not None else 0,
                     "error": err})
    if prof is not None:
        import io
        import pstats

        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(30)
        s.write("\n\n==== by cumulative time\n")
        pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(30)
        Path(args.cprofile).write_text(s.getvalue())
    Path(args.result).write_text(json.dumps({"ctx_flags": flags, "rows": rows}))
    be.close()
    return 0


def summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    rows = [r for res in results for r in res["rows"]]
    later = [r for res in results for r in res["rows"][1:]]  # the first run of each child loads the module
    ok = [r for r in later if not r["error"]]

    def ms(key: str, rs: list[dict[str, Any]]) -> float:
        return round(1e3 * sum(r[key] for r in rs) / max(1, len(rs)), 2)

    return {"runs": len(rows), "failed": sum(bool(r["error"]) for r in rows),
            "cpu_ms_per_run": ms("cpu_s", ok), "wall_ms_per_run": ms("wall_s", ok), "gpu_ms_per_run": ms("gpu_s", ok),
            "cpu_ms_median": round(1e3 * statistics.median(r["cpu_s"] for r in ok), 2) if ok else None,
            "gpu_ms_median": round(1e3 * statistics.median(r["gpu_s"] for r in ok), 2) if ok else None,
            "first_run_cpu_ms": ms("cpu_s", [res["rows"][0] for res in results if res["rows"]]),
            "instances_per_run": round(sum(r["instances"] for r in ok) / max(1, len(ok))),
            "runs_with_timeouts": sum(bool(r["timeouts"]) for r in ok),
            "ctx_flags": sorted({res["ctx_flags"] for res in results}),
            "errors": sorted({r["error"] for r in rows if r["error"]})[:5]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="all")
    ap.add_argument("--programs", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--instances", type=int, default=10_000_000)
    ap.add_argument("--cases", default=DEFAULT_CASES)
    ap.add_argument("--profile-case", type=int, default=1, help="cProfile the first child of this case (0-based; -1: none)")
    ap.add_argument("--out", default=str(ROOT / "bench/results/throughput"))
    # the child's arguments
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--pairs", help=argparse.SUPPRESS)
    ap.add_argument("--sched", default="blocking", help=argparse.SUPPRESS)
    ap.add_argument("--test-ctas", type=int, default=256, help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    ap.add_argument("--cprofile", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)

    from stages import draw  # bench/stages.py

    from fuzzgpu import codegen
    from fuzzgpu.backends import cuda

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    programs = [p for p in draw(args.profile, args.programs, args.seed) if not codegen.unrunnable_reasons(p)]
    groups: dict[str, list[Any]] = {}
    for p in programs:
        try:
            groups.setdefault(codegen.harness_arch([p], "sm_90"), []).append(p)
        except Exception:  # noqa: BLE001, S112 -- a program the harness cannot run on sm_90: left out
            continue
    pairs: list[tuple[Any, Any]] = []
    for group in groups.values():
        pairs += list(cuda.compile_batch(group, "sm_90").items())
    pk = out / "run-cost-pairs.pkl"
    pk.write_bytes(pickle.dumps(pairs))
    cases: dict[str, Any] = {}
    for n, case in enumerate(args.cases.split(",")):
        sched, k, ctas = case.split(":")
        procs, files = [], []
        t0 = time.perf_counter()
        for j in range(int(k)):
            res = out / f"run-cost-{n}-{j}.json"
            cmd = [sys.executable, __file__, "--child", "--pairs", str(pk), "--profile", args.profile, "--sched", sched,
                   "--test-ctas", ctas, "--instances", str(args.instances), "--result", str(res)]
            if n == args.profile_case and j == 0:
                cmd += ["--cprofile", str(out / "run-cprofile.txt")]
            procs.append(subprocess.Popen(cmd))
            files.append(res)
        codes = [p.wait() for p in procs]
        wall = time.perf_counter() - t0
        results = [json.loads(f.read_text()) for f in files if f.exists()]
        for f in files:
            f.unlink(missing_ok=True)
        s = summary(results) if results else {"runs": 0}
        s.update(sched=sched, processes=int(k), test_ctas=int(ctas), case_wall_s=round(wall, 2), exit_codes=sorted(set(codes)))
        cases[case] = s
        print(case, json.dumps(s), flush=True)
    pk.unlink(missing_ok=True)
    doc = {"machine": f"{platform.node()} ({os.cpu_count()} cores)", "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "command": "python " + " ".join([os.path.relpath(sys.argv[0], ROOT), *sys.argv[1:]]),
           "profile": args.profile, "programs": len(pairs), "instances": args.instances, "cases": cases}
    (out / "run-cost.json").write_text(json.dumps(doc, indent=1) + "\n")
    lines = [f"# Harness run cost ({doc['machine']}, {doc['date']})", "", f"`{doc['command']}`", "",
             "| sched | processes | test_ctas | CPU ms/run | wall ms/run | GPU ms/run (events) | first run CPU ms | runs (failed) |",
             "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {c['sched']} | {c['processes']} | {c['test_ctas']} | {c.get('cpu_ms_per_run')} | {c.get('wall_ms_per_run')} | "
              f"{c.get('gpu_ms_per_run')} | {c.get('first_run_cpu_ms')} | {c.get('runs')} ({c.get('failed')}) |" for c in cases.values()]
    (out / "run-cost.md").write_text("\n".join(lines) + "\n")
    print((out / "run-cost.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
