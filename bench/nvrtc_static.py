#!/usr/bin/env python3
"""Benchmark: the static SASS check with NVRTC in place of nvcc (issue 29: "consider NVRTC per
worker process; measure and keep what wins").

For programs a campaign draws (a profile, several seeds; those whose static kernels compile for
``--arch``), in batches as ``backends.static.check_batch`` forms them: the check as it is (nvcc
-O3 -lineinfo, nvdisasm, ``fuzzgpu.sass``: :func:`fuzzgpu.sass.check_cu_source`) and the same
kernels compiled to PTX by NVRTC in this process (``nvrtcCompileProgram``, ``-lineinfo``; its C API
through ctypes), then ptxas, nvdisasm and the same analysis (:func:`fuzzgpu.sass.check_ptx`).
Compared per program: the findings (check, verdict, the moved operation's and the crossed
synchronisation's mnemonics), then the same with their SASS text (the moved and the crossing
instructions as the disassembler prints them: registers, addresses and offsets), and the CPU
seconds of each path, this process and its children.

    python3 bench/nvrtc_static.py --nvrtc DIR/libnvrtc.so.13 [--seeds 1 2 3 4 5 6] [--per-seed 64]

(``pip install --target DIR nvidia-cuda-nvrtc==13.0.*`` gives ``DIR/nvidia/cu13/lib/libnvrtc.so.13``;
its builtins library, beside it, is loaded first.)  Writes
``bench/results/throughput/nvrtc-static.json`` and ``.md``.  Needs nvcc, ptxas, nvdisasm, no GPU.
"""

from __future__ import annotations

import argparse
import ctypes
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

OUT = ROOT / "bench" / "results" / "throughput"


def load_nvrtc(path: Path) -> Any:
    """libnvrtc, its builtins library (``libnvrtc-builtins.so.*`` beside it) loaded first so that
    NVRTC's own dlopen of it finds it without LD_LIBRARY_PATH."""
    for b in sorted(path.parent.glob("libnvrtc-builtins.so.*")):
        if ".alt." not in b.name:
            ctypes.CDLL(str(b), mode=ctypes.RTLD_GLOBAL)
    return ctypes.CDLL(str(path))


def nvrtc_ptx(lib: Any, source: str, arch: str, options: tuple[str, ...] = ("-lineinfo",)) -> str:
    """PTX of ``source`` for ``arch`` (``options``: ``-lineinfo``, as the static check's nvcc), or
    RuntimeError with NVRTC's log."""
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"module.cu", 0, None, None):
        raise RuntimeError("nvrtcCreateProgram failed")
    try:
        opts = [f"--gpu-architecture=compute_{arch[3:]}".encode(), *(o.encode() for o in options)]
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


def texts(reports: list[Any]) -> dict[int, list[tuple[str, ...]]]:
    """Per program of a batch: its findings with their SASS text (sorted)."""
    from sass_static_vs_harness import _STATIC, key

    out: dict[int, list[tuple[str, ...]]] = {}
    for r in reports:
        for f in r.findings:
            m = _STATIC.match(f.function.split("$")[-1])
            if m:
                out.setdefault(int(m.group(1)), []).append((*key(f), f.op_sass, f.sync_sass))
    return {i: sorted(v) for i, v in out.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nvrtc", required=True, type=Path, help="libnvrtc.so.13 (from the nvidia-cuda-nvrtc wheel)")
    ap.add_argument("--profile", default="all")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5, 6])
    ap.add_argument("--per-seed", type=int, default=64)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)

    from compile_phases import header, static_module, write_results
    from sass_static_vs_harness import _STATIC, distinct_programs, findings_by_program
    from stages import cpu

    from fuzzgpu import codegen, sass
    from fuzzgpu.backends.static import StaticBackend
    from fuzzgpu.errors import EnvError, UserError

    try:
        lib = load_nvrtc(args.nvrtc)
    except OSError as e:
        print(f"bench/nvrtc_static.py: {args.nvrtc}: {e}", file=sys.stderr)
        return 3
    static = StaticBackend(args.arch)

    def compiles(p: Any) -> bool:  # its static kernels exist (class F's register wgmma: none) for --arch
        try:
            codegen.generate_static(p)
        except UserError:
            return False
        return static.arch_for(p) == args.arch

    programs = distinct_programs(args.profile, args.seeds, args.per_seed, compiles)
    same = same_text = 0
    differ: list[dict[str, Any]] = []
    cpu_nvcc = cpu_nvrtc = 0.0
    compared = 0
    errors: list[str] = []
    for b in range(0, len(programs), args.batch):
        chunk = programs[b : b + args.batch]
        src = static_module(chunk)
        c0 = cpu()
        try:
            reps_a = sass.check_cu_source(src, [args.arch], source="static")
            a = findings_by_program(reps_a, _STATIC)
        except EnvError as e:
            print(f"bench/nvrtc_static.py: {e}", file=sys.stderr)
            return 3
        except UserError as e:
            errors.append(f"batch {b // args.batch} (nvcc): {str(e)[:160]}")
            continue
        c1 = cpu()
        try:
            ptx = nvrtc_ptx(lib, src, args.arch)
            with tempfile.TemporaryDirectory(prefix="fuzzgpu-nvrtc-") as d:
                path = Path(d) / "static.ptx"
                path.write_text(ptx)
                reps_n = sass.check_ptx(path, [args.arch])
                n = findings_by_program(reps_n, _STATIC)
        except (RuntimeError, UserError) as e:
            errors.append(f"batch {b // args.batch} (nvrtc): {str(e)[:160]}")
            continue
        c2 = cpu()
        cpu_nvcc += c1 - c0
        cpu_nvrtc += c2 - c1
        text_a, text_n = texts(reps_a), texts(reps_n)
        for i in range(len(chunk)):
            compared += 1
            same_text += text_a.get(i, []) == text_n.get(i, [])
            x, y = a.get(i), n.get(i)
            if (x or {}) == (y or {}):
                same += 1
            else:
                differ.append({"program": b + i, "nvcc": sorted(x.elements()) if x else [],
                               "nvrtc": sorted(y.elements()) if y else []})
    batches = max(1, -(-compared // args.batch))
    doc = {**header("nvrtc_static.py", argv), "profile": args.profile, "seeds": args.seeds, "arch": args.arch, "programs": compared, "same_findings": same,
           "same_sass_text": same_text,
           "differ": differ, "cpu_s": {"nvcc": round(cpu_nvcc, 2), "nvrtc": round(cpu_nvrtc, 2)}, "batches": batches,
           "errors": errors}
    md = [f"# The static SASS check, nvcc beside NVRTC (`{doc['command']}`)", "",
          f"{doc['machine']}, {doc['date']}; profile `{args.profile}`, seeds {args.seeds}, {args.arch}: {compared} distinct "
          f"programs in batches of {args.batch}.", "",
          "| programs | the same findings | ... and the same SASS text of them | CPU s, nvcc + nvdisasm + analysis | CPU s, NVRTC + ptxas + nvdisasm + analysis | per batch, nvcc / NVRTC |",
          "|---|---|---|---|---|---|",
          f"| {compared} | {same} | {same_text} | {cpu_nvcc:.2f} | {cpu_nvrtc:.2f} | {cpu_nvcc / batches:.3f} / {cpu_nvrtc / batches:.3f} |", ""]
    md += [f"- differ: program {d['program']}: nvcc {d['nvcc']}, NVRTC {d['nvrtc']}" for d in differ[:20]]
    md += ["Batches not compared: " + "; ".join(errors)] if errors else []
    write_results(args.out, "nvrtc-static", doc, md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
