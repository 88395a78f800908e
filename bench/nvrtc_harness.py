#!/usr/bin/env python3
"""Benchmark (issue 29: "NVRTC per worker process; measure and keep what wins"): the harness's compile
by nvcc, as campaigns do it, beside NVRTC in this process then ptxas, on campaign draws in batches.

For each batch of ``--batch`` runnable ``--profile`` draws (``bench/stages.py``'s draw, seeds
``--seeds``): ``codegen.generate_module`` of the batch, compiled (the CPU of the faster of ``--repeat``)

* by nvcc: ``nvcc -cubin -arch=ARCH -O3 -w -lineinfo`` (``backends.cuda.DEFAULT_FLAGS``; ARCH is
  ``codegen.harness_arch``'s choice for the batch, as ``backends.cuda`` makes it), its children's CPU;
* by NVRTC (``nvrtcCompileProgram``, ``--gpu-architecture=compute_XX -lineinfo -w``: this process's
  CPU) and then ``ptxas -arch=ARCH -m64 --generate-line-info`` (what nvcc runs after cicc);

and whether the two cubins hold the same SASS, kernel by kernel (``nvdisasm -c``, instruction text
without addresses and with register numbers kept): a different SASS is a different compile of the
code under test.  Writes ``bench/results/throughput/nvrtc-harness.json`` and ``.md``.  Needs nvcc,
ptxas, nvdisasm and libnvrtc (``pip install --target DIR nvidia-cuda-nvrtc==13.0.*``), no GPU.

    python3 bench/nvrtc_harness.py --nvrtc DIR/nvidia/cu13/lib/libnvrtc.so.13 [--seeds 1 2 3] [--per-seed 40]
"""

from __future__ import annotations

import argparse
import ctypes
import re
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from compile_phases import FLAGS, children_cpu, header, write_results  # noqa: E402
from nvrtc_static import load_nvrtc  # noqa: E402
from stages import draw  # noqa: E402

OUT = ROOT / "bench" / "results" / "throughput"


def self_cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def nvrtc_ptx(lib: Any, source: str, arch: str) -> str:
    """PTX of ``source`` for ``arch`` by NVRTC, or RuntimeError with its log."""
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"harness.cu", 0, None, None):
        raise RuntimeError("nvrtcCreateProgram failed")
    try:
        opts = [f"--gpu-architecture=compute_{arch[3:]}".encode(), b"-lineinfo", b"-w"]
        if lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts)):
            n = ctypes.c_size_t()
            lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
            log = ctypes.create_string_buffer(n.value)
            lib.nvrtcGetProgramLog(prog, log)
            raise RuntimeError(log.value.decode(errors="replace")[:300])
        n = ctypes.c_size_t()
        lib.nvrtcGetPTXSize(prog, ctypes.byref(n))
        buf = ctypes.create_string_buffer(n.value)
        lib.nvrtcGetPTX(prog, buf)
        return buf.value.decode()
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


_FUNC = re.compile(r"^\s*\.text\.(\S+):")
_INSN = re.compile(r"/\*[0-9a-f]{4,}\*/\s*(.*?)\s*;")


def sass_by_kernel(cubin: Path) -> dict[str, list[str]]:
    """Each function's instructions (text, no addresses) of ``cubin`` (``nvdisasm -c``)."""
    from fuzzgpu import sass

    text = subprocess.run([sass.require_tool("nvdisasm"), "-c", str(cubin)], check=True, capture_output=True,
                          text=True).stdout
    out: dict[str, list[str]] = {}
    cur: list[str] | None = None
    for line in text.splitlines():
        m = _FUNC.match(line)
        if m:
            cur = out.setdefault(m.group(1), [])
            continue
        i = _INSN.search(line)
        if i and cur is not None:
            cur.append(i.group(1))
    return out


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

    try:
        lib = load_nvrtc(args.nvrtc)
        nvcc, ptxas = sass.require_tool("nvcc"), sass.require_tool("ptxas")
    except OSError as e:
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
                m0 = self_cpu()
                ptx.write_text(nvrtc_ptx(lib, src, arch))
                cpu["nvrtc"].append(self_cpu() - m0)
                c0 = children_cpu()
                subprocess.run([ptxas, f"-arch={arch}", "-m64", "--generate-line-info", "-o", str(tmp / f"b{b}-nvrtc.cubin"),
                                str(ptx)], check=True, capture_output=True)
                cpu["ptxas"].append(children_cpu() - c0)
            a, n = sass_by_kernel(tmp / f"b{b}-nvcc.cubin"), sass_by_kernel(tmp / f"b{b}-nvrtc.cubin")
            kernels = sorted(k for k in a if k.startswith("fzh_"))
            rows.append({"programs": len(batch), "arch": arch, "kernels": len(kernels),
                         "same_sass": sum(1 for k in kernels if a.get(k) == n.get(k)),
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
