"""Benchmark: what a GPU runner (fuzzgpu.workers.gpu_runner, ``--gpu-context shared``) can run per
hour when its queue never empties -- the GPU side of a campaign, apart from the workers' CPU.

    python bench/runner_cost.py --programs 48 --clients 16 --seconds 10 --processes 1,3 --out DIR

The parent draws ``--programs`` programs of ``--profile`` (seeded), compiles their harnesses (batches of
16, in parallel) and builds each one's run request as a campaign worker does (the profile's stress,
the may-hang cap, the oracle's watched outcomes).  For each count N of ``--processes``: a runner with N
GPU processes, ``--clients`` client processes each asking for runs back to back (its own order of the
programs) for ``--seconds``; then runs/s (as programs/hour), the runner's counters per run (its time,
its GPU process's time, the CUDA-event time), the GPU busy share (CUDA events; NVML's utilisation
sampled every 200 ms beside it) and the CPU seconds of the runner and its GPU processes per run.

Writes ``DIR/runner-cost.json`` and ``DIR/runner-cost.md``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import json
import multiprocessing as mp
import os
import platform
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


def client(address: str, key: str, requests: list[Any], start: int, seconds: float, result: Any) -> None:
    """Ask for runs round the list from ``start`` until ``seconds`` are up; put (runs, faults)."""
    os.environ["FUZZGPU_GPU_RUNNER_KEY"] = key
    from fuzzgpu.backends.remote import RunnerClient

    c = RunnerClient(address)
    end = time.monotonic() + seconds
    runs = faults = 0
    i = start
    while time.monotonic() < end:
        req, cfg = requests[i % len(requests)]
        reply = c.ask(req, cfg, req.program)
        runs += 1
        faults += reply[0] != "ok"
        i += 1
    result.put((runs, faults))


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and its children (from /proc; 0 where unreadable)."""
    tick = os.sysconf("SC_CLK_TCK")
    pids = [pid]
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    pids.append(int(d.name))
            except (OSError, ValueError, IndexError):
                continue
    total = 0.0
    for p in pids:
        try:
            f = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(f[11]) + int(f[12])) / tick
        except (OSError, ValueError, IndexError):
            continue
    return total


def requests_for(profile: str, n: int, seed: int, cubins: Path) -> list[tuple[Any, Any]]:
    """(RunRequest, RunConfig) of ``n`` drawn programs, as a campaign worker sends them."""
    from stages import draw  # bench/stages.py

    from fuzzgpu import codegen, properties
    from fuzzgpu.backends import cuda
    from fuzzgpu.backends.provenance import watch_bitmap
    from fuzzgpu.backends.remote import RunRequest, cubin_key
    from fuzzgpu.profiles import load_profile
    from fuzzgpu.stress.campaign import may_hang_capped

    programs = [p for p in draw(profile, n, seed) if not codegen.unrunnable_reasons(p)]
    programs = [p for p in programs if codegen.harness_arch([p], "sm_90") == "sm_90"]
    chunks = [programs[i:i + 16] for i in range(0, len(programs), 16)]
    compiled: dict[Any, Any] = {}
    with concurrent.futures.ThreadPoolExecutor(len(chunks) or 1) as ex:
        for d in ex.map(lambda ch: cuda.compile_batch(ch, "sm_90"), chunks):
            compiled.update(d)
    stress = load_profile(profile).stress
    cubins.mkdir(parents=True, exist_ok=True)
    out = []
    for p, c in compiled.items():
        key = cubin_key(c.cubin)
        path = cubins / f"{key}.cubin"
        if not path.exists():
            path.write_bytes(c.cubin)
        bits = watch_bitmap(c.spec, properties.forbidden_watch(p))
        out.append((RunRequest(p.name, key, str(path), c.spec, bits.tobytes()), may_hang_capped(p, stress)))
    return out


def case(requests: list[tuple[Any, Any]], processes: int, clients: int, seconds: float, out: Path) -> dict[str, Any]:
    from fuzzgpu.backends.remote import cubin_dir
    from fuzzgpu.workers.gpu_runner import RunnerHandle

    state = out / f"runner-{processes}.json"
    h = RunnerHandle(None, 60.0, state, processes=processes)
    # the requests name their cubin files in the runner's folder: copy them there
    cubin_dir(h.address).mkdir(parents=True, exist_ok=True)
    moved = []
    for req, cfg in requests:
        dst = cubin_dir(h.address) / Path(req.cubin_path).name
        if not dst.exists():
            dst.write_bytes(Path(req.cubin_path).read_bytes())
        moved.append((dataclasses.replace(req, cubin_path=str(dst)), cfg))
    ctx = mp.get_context("spawn")
    result = ctx.Queue()
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits", "-i", "0", "-lms", "200"],
                           stdout=subprocess.PIPE, text=True)
    cpu0 = cpu_seconds(h._proc.pid)
    t0 = time.monotonic()
    procs = [ctx.Process(target=client, args=(h.address, h.key.hex(), moved, i * 7, seconds, result)) for i in range(clients)]
    for p in procs:
        p.start()
    got = [result.get(timeout=seconds + 300) for _ in procs]
    wall = time.monotonic() - t0
    for p in procs:
        p.join(30)
    cpu = cpu_seconds(h._proc.pid) - cpu0
    time.sleep(2.5)  # the counters' next write
    smi.terminate()
    util = [float(x) for x in smi.communicate()[0].split() if x.replace(".", "", 1).isdigit()]
    c = json.loads(state.read_text())
    h.stop()
    runs = sum(r for r, _ in got)
    return {
        "processes": processes, "clients": clients, "seconds": round(wall, 2), "runs": runs,
        "faults": sum(f for _, f in got), "runs_per_s": round(runs / wall, 2), "programs_per_hour": round(3600 * runs / wall),
        "runner_ms_per_run": round(1e3 * c["seconds"]["run"] / max(1, c["runs"]), 2),
        "gpu_process_ms_per_run": round(1e3 * c["seconds"]["gpu_process"] / max(1, c["runs"]), 2),
        "events_ms_per_run": round(1e3 * c["seconds"]["events"] / max(1, c["runs"]), 2),
        "gpu_busy_events": round(c["seconds"]["events"] / wall, 3), "gpu_util_nvml_mean": round(sum(util) / len(util) / 100, 3) if util else None,
        "runner_cpu_s_per_run": round(cpu / max(1, runs), 4), "queue_max": c["queue_max"], "counters": c,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="all", help="the profile the programs and the stress come from")
    ap.add_argument("--programs", type=int, default=48, help="programs drawn (the runnable sm_90 ones are kept)")
    ap.add_argument("--seed", type=int, default=1, help="the draw's seed")
    ap.add_argument("--clients", type=int, default=16, help="client processes asking for runs, as a GPU's workers")
    ap.add_argument("--seconds", type=float, default=10.0, help="how long each case asks")
    ap.add_argument("--processes", default="1,3", help="the runner's GPU process counts, one case each")
    ap.add_argument("--out", default=str(ROOT / "bench/results/throughput/h200-runner/runner"), help="where the results go")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t = time.monotonic()
    requests = requests_for(args.profile, args.programs, args.seed, out / "cubins")
    print(f"{len(requests)} requests built in {time.monotonic() - t:.1f} s", flush=True)
    cases = []
    for n in (int(x) for x in args.processes.split(",")):
        r = case(requests, n, args.clients, args.seconds, out)
        print(json.dumps({k: v for k, v in r.items() if k != "counters"}), flush=True)
        cases.append(r)
    for f in (out / "cubins").glob("*.cubin"):
        f.unlink()
    (out / "cubins").rmdir()
    doc = {"machine": f"{platform.node()} ({os.cpu_count()} cores)", "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "command": " ".join(sys.argv), "requests": len(requests), "cases": cases}
    (out / "runner-cost.json").write_text(json.dumps(doc, indent=1))
    rows = ["| GPU processes | clients | runs/s | programs/h (runner ceiling) | runner ms/run | GPU-process ms/run | "
            "CUDA-event ms/run | GPU busy (events) | NVML | runner CPU-s/run | deepest queue |", "|" + "---|" * 11]
    for r in cases:
        rows.append(f"| {r['processes']} | {r['clients']} | {r['runs_per_s']} | {r['programs_per_hour']:,} | {r['runner_ms_per_run']} | "
                    f"{r['gpu_process_ms_per_run']} | {r['events_ms_per_run']} | {r['gpu_busy_events']} | {r['gpu_util_nvml_mean']} | "
                    f"{r['runner_cpu_s_per_run']} | {r['queue_max']} |")
    (out / "runner-cost.md").write_text(f"# GPU runner cost ({doc['machine']}, {doc['date']})\n\n`{doc['command']}`, "
                                        f"{len(requests)} programs of profile {args.profile}\n\n" + "\n".join(rows) + "\n")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
