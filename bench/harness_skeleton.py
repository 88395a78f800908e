#!/usr/bin/env python3
"""Benchmark: what a harness kernel's compile costs beside the program it runs (issue 29's moonshot
question: the harness's nvcc is the largest CPU cost of a GPU campaign).

1. For each of the first ``--programs`` runnable draws of a profile, its harness module alone
   (``codegen.generate_module([p])``): nvcc to PTX once, then ``ptxas`` on that PTX (the CPU of
   the median of ``--repeat``), beside the PTX's lines and the program's own instructions.  A
   program of 2 instructions and one of 20 cost about the same when the harness around them does.
2. One module of the first ``--batch`` of them, as a campaign compiles a batch: nvcc to a cubin (also with
   nvcc's ``--Ofast-compile`` levels) and ptxas on its PTX, as generated and with the calls of the two stress helpers (``fz_stress``,
   ``fz_pre_stress``: ``__noinline__``, which ptxas copies into every kernel that calls them) taken
   out -- a measurement only (that module stresses nothing): what the helpers cost per program.
3. The skeleton's parts (``ablations``): the same module with one part of every kernel's skeleton taken out
   -- the stress helpers' calls, the classification (``fzc_*``, each program's own), both -- and compiled
   otherwise (``-rdc=true``: ptxas compiles a ``__noinline__`` function once rather than once per kernel);
   beside them
   the same programs' static kernels (each thread's code alone: ``codegen.generate_static``), the floor a
   harness whose skeleton were compiled once would approach.  nvcc CPU to a cubin, ptxas CPU on the PTX,
   PTX lines; measurements only, none of these modules is one a campaign runs (each ablation is checked to
   have found what it takes out).

Writes ``bench/results/throughput/harness-skeleton.json`` and ``.md``.  Needs nvcc and ptxas, no GPU.

    python3 bench/harness_skeleton.py [--profile all] [--seed 1] [--programs 24] [--batch 16] [--repeat 3]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from compile_phases import FLAGS, children_cpu, header, write_results  # noqa: E402

OUT = ROOT / "bench" / "results" / "throughput"
#: the stress helpers' call sites as codegen.harness writes them (checked: each must be found)
PRE_STRESS_CALL = "if ((knobs >> 8) & FZ_PRE_STRESS_MASK) fz_pre_stress(scratch, scratch_lines, knobs);"
STRESS_CALL = re.compile(r"fz_stress\(scratch, scratch_lines, ctlg, [^;]*;")
#: the classification's call in each kernel (codegen.harness: ``fzc_<kernel>(mem, res, hist, ...)``)
CLASSIFY_CALL = re.compile(r"fzc_\w+\(mem, res, hist, [^;]*;")


def cpu_of(cmd: list[str], repeat: int) -> float:
    """The median CPU seconds (children's user + system) of ``repeat`` runs of ``cmd``."""
    times = []
    for _ in range(repeat):
        c0 = children_cpu()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(children_cpu() - c0)
    return statistics.median(times)


def ptx_of(source: str, tmp: Path, name: str) -> Path:
    from fuzzgpu import sass

    cu, ptx = tmp / f"{name}.cu", tmp / f"{name}.ptx"
    cu.write_text(source)
    subprocess.run([sass.require_tool("nvcc"), "-ptx", "-arch=sm_90", *FLAGS, "-o", str(ptx), str(cu)], check=True,
                   capture_output=True)
    return ptx


def ptxas_cpu(ptx: Path, repeat: int) -> float:
    from fuzzgpu import sass

    return cpu_of([sass.require_tool("ptxas"), "-arch=sm_90", "--generate-line-info", "-o", str(ptx.with_suffix(".cubin")),
                   str(ptx)], repeat)


def nvcc_cpu(source: str, tmp: Path, name: str, repeat: int, extra: tuple[str, ...] = ()) -> float:
    from fuzzgpu import sass

    cu = tmp / f"{name}.cu"
    cu.write_text(source)
    return cpu_of([sass.require_tool("nvcc"), "-cubin", "-arch=sm_90", *FLAGS, *extra, "-o", str(tmp / f"{name}.cubin"), str(cu)],
                  repeat)


def without_stress_calls(source: str) -> str:
    n_pre, n_stress = source.count(PRE_STRESS_CALL), len(STRESS_CALL.findall(source))
    if not (n_pre and n_stress):
        raise SystemExit(f"bench/harness_skeleton.py: the stress helpers' calls were not found ({n_pre}, {n_stress}): "
                         "codegen.harness changed; update PRE_STRESS_CALL / STRESS_CALL")
    return STRESS_CALL.sub("", source.replace(PRE_STRESS_CALL, ""))


def without_classification(source: str) -> str:
    n = len(CLASSIFY_CALL.findall(source))
    if not n:
        raise SystemExit("bench/harness_skeleton.py: the classification's calls were not found: codegen.harness changed; "
                         "update CLASSIFY_CALL")
    return CLASSIFY_CALL.sub("", source)


def ablation_row(name: str, source: str, tmp: Path, repeat: int, flags: tuple[str, ...] = ()) -> dict[str, Any]:
    """nvcc CPU to a cubin and ptxas CPU on the PTX (with ``flags``: ``-rdc=true`` reaches ptxas as ``-c``)."""
    from fuzzgpu import sass

    cu, ptx = tmp / f"{name}.cu", tmp / f"{name}.ptx"
    cu.write_text(source)
    subprocess.run([sass.require_tool("nvcc"), "-ptx", "-arch=sm_90", *FLAGS, *flags, "-o", str(ptx), str(cu)], check=True,
                   capture_output=True)
    ptxas_flags = ("-c",) if "-rdc=true" in flags else ()
    ptxas = cpu_of([sass.require_tool("ptxas"), "-arch=sm_90", "--generate-line-info", *ptxas_flags, "-o",
                    str(ptx.with_suffix(".cubin")), str(ptx)], repeat)
    return {"name": name, "flags": list(flags), "nvcc_cpu_s": round(nvcc_cpu(source, tmp, name, repeat, flags), 4),
            "ptxas_cpu_s": round(ptxas, 4), "ptx_lines": ptx.read_text().count("\n")}


def ablations(batch: list[Any], tmp: Path, repeat: int) -> list[dict[str, Any]]:
    from compile_phases import static_module

    from fuzzgpu import codegen

    src = codegen.generate_module(batch)[0]
    rows = [("as generated", src, ()),
            ("without the stress helpers' calls", without_stress_calls(src), ()),
            ("without the classification", without_classification(src), ()),
            ("without both", without_classification(without_stress_calls(src)), ()),
            ("-rdc=true", src, ("-rdc=true",)),
            ("the programs' static kernels (each thread's code alone)", static_module(batch), ())]
    return [ablation_row(f"a{i}", s, tmp, repeat, flags) | {"name": name} for i, (name, s, flags) in enumerate(rows)]


def ablation_md(rows: list[dict[str, Any]], programs: int) -> list[str]:
    base = rows[0]
    md = [f"**The skeleton's parts** (the batch of {programs}, one module; every kernel's part taken out or compiled "
          "otherwise; measurements only):", "",
          "| module | nvcc CPU ms | per program | ptxas CPU ms | per program | PTX lines | nvcc vs as generated |",
          "|---|---|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['name']} | {1000 * r['nvcc_cpu_s']:.0f} | {1000 * r['nvcc_cpu_s'] / programs:.1f} | "
                  f"{1000 * r['ptxas_cpu_s']:.0f} | {1000 * r['ptxas_cpu_s'] / programs:.1f} | {r['ptx_lines']} | "
                  f"{100 * (r['nvcc_cpu_s'] / base['nvcc_cpu_s'] - 1):+.0f}% |")
    return md


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="all")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--programs", type=int, default=24)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)

    from stages import draw

    from fuzzgpu import codegen

    drawn = draw(args.profile, 4 * max(args.programs, args.batch), args.seed)
    runnable = [p for p in dict.fromkeys(drawn)
                if not codegen.unrunnable_reasons(p) and codegen.harness_arch([p], "sm_90") == "sm_90"]
    alone: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="fuzzgpu-skeleton-") as d:
        tmp = Path(d)
        for i, p in enumerate(runnable[:args.programs]):
            ptx = ptx_of(codegen.generate_module([p])[0], tmp, f"p{i}")
            alone.append({"program": p.name, "threads": len(p.threads), "instructions": sum(len(t.code) for t in p.threads),
                          "ptx_lines": ptx.read_text().count("\n"), "ptxas_cpu_s": round(ptxas_cpu(ptx, args.repeat), 4)})
        batch = runnable[:args.batch]
        src = codegen.generate_module(batch)[0]
        bare = without_stress_calls(src)
        b = {"programs": len(batch),
             "nvcc_cpu_s": round(nvcc_cpu(src, tmp, "b", args.repeat), 4),
             "nvcc_cpu_s_without_stress_calls": round(nvcc_cpu(bare, tmp, "bare", args.repeat), 4),
             "ptxas_cpu_s": round(ptxas_cpu(ptx_of(src, tmp, "b"), args.repeat), 4),
             "ptxas_cpu_s_without_stress_calls": round(ptxas_cpu(ptx_of(bare, tmp, "bare"), args.repeat), 4),
             # nvcc's --Ofast-compile (CUDA 12.8+): it reaches ptxas too, which then schedules the program's code
             # differently -- the code under test; measured, not used
             "nvcc_cpu_s_ofast_compile": {lv: round(nvcc_cpu(src, tmp, f"ofc-{lv}", args.repeat, (f"-Ofc={lv}",)), 4)
                                          for lv in ("min", "mid", "max")}}
        parts = ablations(batch, tmp, args.repeat)
    doc = {**header("harness_skeleton.py", argv), "profile": args.profile, "seed": args.seed, "repeat": args.repeat,
           "alone": alone, "batch": b, "ablations": parts}
    small = min(alone, key=lambda r: r["instructions"])
    big = max(alone, key=lambda r: r["instructions"])
    per = [r["ptxas_cpu_s"] for r in alone]
    md = [f"# A harness kernel's compile beside its program (`{doc['command']}`)", "",
          f"{doc['machine']}, {doc['date']}; profile `{args.profile}`, seed {args.seed}; CPU (user + system) of the median of "
          f"{args.repeat} runs.", "",
          f"**Alone** ({len(alone)} programs, each its own module; ptxas on nvcc's PTX): ptxas {1000 * min(per):.0f}-"
          f"{1000 * max(per):.0f} CPU ms a program (median {1000 * statistics.median(per):.0f}); the smallest program "
          f"({small['instructions']} instructions) {1000 * small['ptxas_cpu_s']:.0f} ms and {small['ptx_lines']} PTX lines, the "
          f"largest ({big['instructions']}) {1000 * big['ptxas_cpu_s']:.0f} ms and {big['ptx_lines']}.", "",
          "| program | threads | instructions | PTX lines | ptxas CPU ms |", "|---|---|---|---|---|",
          *[f"| {r['program']} | {r['threads']} | {r['instructions']} | {r['ptx_lines']} | {1000 * r['ptxas_cpu_s']:.0f} |"
            for r in sorted(alone, key=lambda r: r["instructions"])], "",
          f"**A batch of {b['programs']}** (one module): nvcc {1000 * b['nvcc_cpu_s']:.0f} CPU ms, "
          f"{1000 * b['nvcc_cpu_s_without_stress_calls']:.0f} without the stress helpers' calls; ptxas "
          f"{1000 * b['ptxas_cpu_s']:.0f} and {1000 * b['ptxas_cpu_s_without_stress_calls']:.0f} "
          f"({1000 * (b['ptxas_cpu_s'] - b['ptxas_cpu_s_without_stress_calls']) / b['programs']:.1f} ms a program for the helpers' "
          "copies; that module stresses nothing: a measurement only).  With nvcc's `--Ofast-compile` (it reaches ptxas, "
          "which then compiles the program's code otherwise: not used): "
          + ", ".join(f"`{lv}` {1000 * v:.0f}" for lv, v in b["nvcc_cpu_s_ofast_compile"].items()) + " CPU ms.", "",
          *ablation_md(parts, b["programs"])]
    write_results(args.out, "harness-skeleton", doc, md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
