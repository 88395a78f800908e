#!/usr/bin/env python3
"""How long the static SASS oracle takes: one kernel (compile + disassemble + analyse, per stage), and
batches of N kernels compiled as one translation unit (one nvcc and one nvdisasm call per arch).

    python3 bench/sass.py                       # writes bench/results/sass/sass.json, prints a table
    python3 bench/sass.py --sizes 1 8 32 --repeat 3 --archs sm_90 sm_100a

The goal (issue 4): at most 1 s per kernel on the development machine (2 cores, no GPU).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fuzzgpu import sass  # noqa: E402

FLASHMLA = ROOT / "tests" / "kernels" / "D_flashmla_shape.cu"

SEMS_LD = ("", ".relaxed.gpu", ".acquire.gpu", ".volatile", ".relaxed.cta")
SEMS_ST = ("", ".relaxed.gpu", ".release.gpu", ".volatile")
SYNCS = ("fence.sc.gpu", "fence.acq_rel.gpu", "bar.sync 0", "griddepcontrol.wait", "fence.acq_rel.cta")


def random_kernel(name: str, rng: random.Random, n_ops: int = 8) -> str:
    """A straight-line kernel of inline-PTX accesses and synchronisation, like fuzzgpu's own."""
    lines = [f'extern "C" __global__ void {name}(int* p, int* out) {{', "    int acc = 0, r;"]
    for i in range(n_ops):
        k = rng.random()
        off = 4 * rng.randrange(8)
        if k < 0.4:
            lines.append(f'    asm volatile("ld{rng.choice(SEMS_LD)}.global.u32 %0, [%1+{off}];" : "=r"(r) : "l"(p) : "memory"); acc = acc * 3 + r;')
        elif k < 0.75:
            lines.append(f'    asm volatile("st{rng.choice(SEMS_ST)}.global.u32 [%0+{off}], %1;" :: "l"(p), "r"({i + 1}) : "memory");')
        else:
            lines.append(f'    asm volatile("{rng.choice(SYNCS)};" ::: "memory");')
    lines += ["    out[threadIdx.x] = acc;", "}"]
    return "\n".join(lines)


def batch(n: int, seed: int) -> str:
    rng = random.Random(seed)
    return "\n\n".join(random_kernel(f"bench_k{i}", rng) for i in range(n)) + "\n"


def stages_one_kernel(arch: str) -> dict:
    """compile / disassemble / analyse of the FlashMLA kernel, timed separately."""
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        ptx, cubin = sass.compile_cu(FLASHMLA, arch, Path(tmp))
        t1 = time.perf_counter()
        text = sass.disassemble(cubin)
        t2 = time.perf_counter()
        rep = sass.analyse(ptx, text, arch, str(FLASHMLA))
        t3 = time.perf_counter()
    assert rep.findings, "the FlashMLA shape must be flagged"
    return {"compile_s": t1 - t0, "disassemble_s": t2 - t1, "analyse_s": t3 - t2, "total_s": t3 - t0}


def timed(fn, repeat: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times


def tool_version(tool: str) -> str:
    p = sass.find_tool(tool)
    if not p:
        return "missing"
    out = subprocess.run([p, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    return out[-1] if out else "?"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 8, 32, 64], help="kernels per translation unit")
    ap.add_argument("--archs", nargs="+", default=["sm_90"], help="archs for the batch rows")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "sass/sass.json")
    args = ap.parse_args(argv)

    results: dict = {
        "what": "fuzzgpu.sass: compile (nvcc -cubin -keep) + disassemble (nvdisasm) + analyse",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "machine": {"platform": platform.platform(), "cpu": cpu_model(), "cores": os.cpu_count(),
                    "python": platform.python_version()},
        "toolchain": {"nvcc": tool_version("nvcc"), "nvdisasm": tool_version("nvdisasm")},
        "goal_s_per_kernel": 1.0,
        "one_kernel_stages": {},
        "one_kernel_default_archs": {},
        "batches": [],
    }
    # warm the file cache / the first-run cost of nvcc
    stages_one_kernel("sm_90")
    for arch in ("sm_90", "sm_100a"):
        runs = [stages_one_kernel(arch) for _ in range(args.repeat)]
        results["one_kernel_stages"][arch] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    med, times = timed(lambda: sass.check_path(FLASHMLA), args.repeat)
    results["one_kernel_default_archs"] = {"archs": list(sass.DEFAULT_ARCHS), "median_s": med, "times_s": times,
                                           "note": "the three archs are compiled and disassembled in parallel threads"}
    for arch in args.archs:
        for n in args.sizes:
            src = batch(n, seed=n)
            reps_holder: list = []
            med, times = timed(lambda: reps_holder.append(sass.check_cu_source(src, (arch,), source="bench", name="bench")), args.repeat)
            fns = [fn for r in reps_holder[-1] for fn in r.functions]
            assert len(fns) == n
            results["batches"].append({"arch": arch, "kernels": n, "median_s": med, "per_kernel_s": med / n, "times_s": times,
                                       "findings": sum(len(fn.findings) for fn in fns)})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print_table(results)
    print(f"\nwritten to {args.out}")
    return 0


def print_table(results: dict) -> None:
    print(f"fuzzgpu.sass timings on {results['machine']['cpu']} ({results['machine']['cores']} cores), {results['date']}")
    print(f"toolchain: {results['toolchain']['nvcc']} / {results['toolchain']['nvdisasm']}\n")
    print("one kernel (FlashMLA shape), median seconds per stage")
    print(f"  {'arch':<8} {'compile':>8} {'disasm':>8} {'analyse':>8} {'total':>8}")
    for arch, r in results["one_kernel_stages"].items():
        print(f"  {arch:<8} {r['compile_s']:8.3f} {r['disassemble_s']:8.3f} {r['analyse_s']:8.4f} {r['total_s']:8.3f}")
    d = results["one_kernel_default_archs"]
    print(f"  {'+'.join(d['archs'])}: {d['median_s']:.3f} s for all three (parallel)\n")
    print("batches: N kernels in one .cu, one nvcc + one nvdisasm call")
    print(f"  {'arch':<8} {'kernels':>7} {'total s':>8} {'s/kernel':>9}")
    for b in results["batches"]:
        ok = "ok" if b["per_kernel_s"] <= results["goal_s_per_kernel"] else "over goal"
        print(f"  {b['arch']:<8} {b['kernels']:>7} {b['median_s']:8.3f} {b['per_kernel_s']:9.4f}  {ok}")


if __name__ == "__main__":
    sys.exit(main())
