#!/usr/bin/env python3
"""Benchmark (issue 29: "NVRTC per worker process; measure and keep what wins"): the harness's compile
by nvcc, as campaigns do it, beside NVRTC in this process then ptxas, on campaign draws in batches.

For each batch of ``--batch`` runnable ``--profile`` draws (``bench/stages.py``'s draw, seeds
``--seeds``): ``codegen.generate_module`` of the batch, compiled (the CPU of the faster of ``--repeat``)

* by nvcc: ``nvcc -cubin -arch=ARCH -O3 -w -lineinfo`` (``backends.cuda.DEFAULT_FLAGS``; ARCH is
  ``codegen.harness_arch``'s choice for the batch, as ``backends.cuda`` makes it), its children's CPU;
* by NVRTC (``bench/nvrtc_static.py``'s ``nvrtc_ptx``, ``-lineinfo -w``: this process's CPU) and then ``ptxas -arch=ARCH -m64 --generate-line-info`` (what nvcc runs after cicc);

and whether the two cubins hold the same SASS, kernel by kernel (``bench/ran_sass.py``'s
``kernel_sass`` and ``canonical``: instruction text, registers kept, labels numbered alike): a
different SASS is a different compile of the code under test.  Writes ``bench/results/throughput/nvrtc-harness.json`` and ``.md``.  Needs nvcc,
ptxas, nvdisasm and libnvrtc (``pip install --target DIR nvidia-cuda-nvrtc==13.0.*``), no GPU.

    python3 bench/nvrtc_harness.py --nvrtc DIR/nvidia/cu13/lib/libnvrtc.so.13 [--seeds 1 2 3] [--per-seed 40]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from compile_phases import FLAGS, children_cpu, header, write_results  # noqa: E402
from nvrtc_static import load_nvrtc, nvrtc_ptx  # noqa: E402
from ran_sass import canonical, kernel_sass  # noqa: E402
from stages import draw  # noqa: E402

OUT = ROOT / "bench" / "results" / "throughput"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nvrtc", required=True, type=Path, help="libnvrtc.so.13")
    ap.add_argument("--profile", default="all")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--per-seed", type=int, default=40, help="draws per seed (the runnable ones are kept)")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    from fuzzgpu import codegen, sass
    from fuzzgpu.errors import EnvError

    try:
        lib = load_nvrtc(args.nvrtc)
        nvcc, ptxas = sass.require_tool("nvcc"), sass.require_tool("ptxas")
    except (OSError, EnvError) as e:
        print(f"bench/nvrtc_harness.py: {e}", file=sys.stderr)
        return 3
    progs: dict[str, Any] = {}
    for s in args.seeds:
        for p in draw(args.profile, args.per_seed, s):
            if not codegen.unrunnable_reasons(p):
                progs.setdefault(str(p), p)
    runnable = list(progs.values())
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for b in range(0, len(runnable) - args.batch + 1, args.batch):
            batch = runnable[b:b + args.batch]
            arch = codegen.harness_arch(batch, "sm_90")
            src = codegen.generate_module(batch)[0]
            cu, ptx = tmp / f"b{b}.cu", tmp / f"b{b}.ptx"
            cu.write_text(src)
            cpu: dict[str, list[float]] = {"nvcc": [], "nvrtc": [], "ptxas": []}
            for _ in range(args.repeat):
                c0 = children_cpu()
                subprocess.run([nvcc, "-cubin", f"-arch={arch}", *FLAGS, "-o", str(tmp / f"b{b}-nvcc.cubin"), str(cu)],
                               check=True, capture_output=True)
                cpu["nvcc"].append(children_cpu() - c0)
                m0 = time.process_time()  # NVRTC runs in this process
                ptx.write_text(nvrtc_ptx(lib, src, arch, ("-lineinfo", "-w")))
                cpu["nvrtc"].append(time.process_time() - m0)
                c0 = children_cpu()
                subprocess.run([ptxas, f"-arch={arch}", "-m64", "--generate-line-info", "-o", str(tmp / f"b{b}-nvrtc.cubin"),
                                str(ptx)], check=True, capture_output=True)
                cpu["ptxas"].append(children_cpu() - c0)
            a = kernel_sass((tmp / f"b{b}-nvcc.cubin").read_bytes())
            n = kernel_sass((tmp / f"b{b}-nvrtc.cubin").read_bytes())
            kernels = sorted(k for k in a if k.startswith("fzh_"))
            rows.append({"programs": len(batch), "arch": arch, "kernels": len(kernels),
                         "same_sass": sum(1 for k in kernels if k in n and canonical(a[k]) == canonical(n[k])),
                         **{f"{k}_cpu_s": round(min(v), 4) for k, v in cpu.items()}})
            print(rows[-1], flush=True)
    n_prog = sum(r["programs"] for r in rows)
    per = {k: 1000 * sum(r[f"{k}_cpu_s"] for r in rows) / max(1, n_prog) for k in ("nvcc", "nvrtc", "ptxas")}
    doc = {**header("nvrtc_harness.py", argv), "profile": args.profile, "seeds": args.seeds, "batch": args.batch,
           "rows": rows, "ms_per_program": {k: round(v, 1) for k, v in per.items()}}
    kern, same = sum(r["kernels"] for r in rows), sum(r["same_sass"] for r in rows)
    md = [f"# The harness's compile: nvcc beside NVRTC + ptxas (`{doc['command']}`)", "",
          f"{doc['machine']}, {doc['date']}; profile `{args.profile}`, seeds {args.seeds}: {n_prog} runnable draws in "
          f"batches of {args.batch}, CPU of the faster of {args.repeat}.", "",
          "| batch | programs | arch | kernels | nvcc CPU s | NVRTC CPU s | ptxas CPU s | NVRTC + ptxas | kernels with the same SASS |",
          "|---|---|---|---|---|---|---|---|---|"]
    md += [f"| {i} | {r['programs']} | {r['arch']} | {r['kernels']} | {r['nvcc_cpu_s']:.3f} | {r['nvrtc_cpu_s']:.3f} | "
           f"{r['ptxas_cpu_s']:.3f} | {r['nvrtc_cpu_s'] + r['ptxas_cpu_s']:.3f} | {r['same_sass']} |" for i, r in enumerate(rows)]
    md += ["", f"Per program: **nvcc {per['nvcc']:.1f} CPU ms; NVRTC {per['nvrtc']:.1f} + ptxas {per['ptxas']:.1f} = "
               f"{per['nvrtc'] + per['ptxas']:.1f}** ({100 * (1 - (per['nvrtc'] + per['ptxas']) / per['nvcc']):.0f}% less); "
               f"the same SASS in {same} of {kern} harness kernels."]
    write_results(args.out, "nvrtc-harness", doc, md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
