#!/usr/bin/env python3
"""One script that builds, SASS-checks and runs the GPU harness measurements in one device call.

    python3 bench/harness.py --out $OUT [--smoke]            # on the GPU machine
    python3 bench/harness.py --render bench/results/harness/h200.json   # JSON -> markdown table

Sections (each written to the JSON as soon as it is done, so a time-out keeps what finished):
  compile   all tests/litmus/gpu programs in one batch; compile throughput with batching
  sass      fuzzgpu.sass over the static kernels and the harness module; the %clock delay loop kept
  table1    MP/SB/LB relaxed.gpu across CTAs under the knobs of facts/h200-litmus-probe.md Table 1
  zero      MP rel/acq.gpu, SB fence.sc.gpu, CoRR: 0 weak in >= 1e9 each
  scope     MP rel/acq.cta with weak data loads at stride 1: the weak outcome observed
  place     same CTA, same warp, same cluster, spin loop, RMW programs (harness coverage)
  pdl       a dependent grid with an ld.global.nc hoisted above griddepcontrol.wait reads stale
  tput      MP relaxed across CTAs, no stress, measured from Python end to end
  suite     every runnable Dat3M PTX test, 1e7 instances each (histograms judged later on the CPU)
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fuzzgpu import codegen, litmus  # noqa: E402
from fuzzgpu.backends import cuda as cudab  # noqa: E402
from fuzzgpu.backends.base import RunConfig  # noqa: E402
from fuzzgpu.ir import eval_expr  # noqa: E402

GPU_DIR = ROOT / "tests" / "litmus" / "gpu"
DAT3M = ROOT / "tests" / "litmus" / "dat3m"  # Dat3M's PTX suite and verdicts, in the repository

# facts/h200-litmus-probe.md Table 1 (rate of the weak outcome)
TABLE1 = {
    "plain_s1_sepcheck": {"MP": 7.77e-3, "SB": 1.04e-2, "LB": 1.58e-3, "MPcta": 2.17e-3},
    "plain_s32_sepcheck": {"MP": 5.23e-3, "SB": 6.99e-3, "LB": 1.66e-3, "MPcta": 1.97e-7},
    "plain_s1": {"MP": 7.77e-3, "SB": 1.04e-2, "LB": 1.58e-3, "MPcta": 2.17e-3},
    "barrier_s1": {"MP": 1.76e-2, "SB": 2.40e-2, "LB": 8.22e-3, "MPcta": 3.08e-3},
    "barrier_spin3000_s1": {"MP": 2.49e-2, "SB": 2.97e-2, "LB": 1.41e-2, "MPcta": 3.71e-3},
    "barrier_stress256_s1": {"MP": 1.48e-2, "SB": 1.88e-2, "LB": 5.71e-3, "MPcta": 2.58e-3},
    "barrier_spin3000_stress512_s1": {"MP": 2.84e-2, "SB": 3.10e-2, "LB": 1.54e-2, "MPcta": 3.05e-3},
    "plain_s32": {"MP": 5.23e-3, "SB": 6.99e-3, "LB": 1.66e-3, "MPcta": 1.97e-7},
}
KNOBS = {
    "plain_s1_sepcheck": dict(stride=1, inline_check=False),
    "plain_s32_sepcheck": dict(stride=32, inline_check=False),
    "plain_s1": dict(stride=1),
    "barrier_s1": dict(stride=1, barrier=True),
    "barrier_spin3000_s1": dict(stride=1, barrier=True, spin=3000),
    "barrier_stress256_s1": dict(stride=1, barrier=True, stress=256),
    "barrier_spin3000_stress512_s1": dict(stride=1, barrier=True, spin=3000, stress=512),
    "plain_s32": dict(stride=32),
}


def log(*a) -> None:
    print(*a, flush=True)


def witness_count(program, hist) -> int:
    c = program.condition
    if c is None:
        return 0
    expr = c.expr
    if c.quantifier == "forall":
        from fuzzgpu.ir import Not

        expr = Not(expr)
    return hist.matching(lambda d: eval_expr(expr, d))


def hist_json(h) -> dict:
    d = h.to_json()
    d["outcomes"] = [{"outcome": {k: v for k, v in o["outcome"].items()}, "count": o["count"]} for o in d["outcomes"]]
    return d


class Bench:
    def __init__(self, out: Path, smoke: bool, name: str = "harness.json") -> None:
        self.out = out
        self.name = name
        self.smoke = smoke
        self.res: dict = {
            "command": " ".join(sys.argv),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "host": platform.node(),
            "cpus": os.cpu_count(),
            "smoke": smoke,
        }
        self.programs = {p.stem: litmus.parse_file(p) for p in sorted(GPU_DIR.glob("*.litmus"))}
        self.compiled: dict = {}
        self.backend = None

    def n(self, x: float) -> int:
        return int(x / 100) if self.smoke else int(x)

    def save(self) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        tmp = self.out / f"{self.name}.tmp"
        tmp.write_text(json.dumps(self.res, indent=1, default=str))
        os.replace(tmp, self.out / self.name)

    def section(self, name, fn) -> None:
        log(f"== {name}")
        t0 = time.perf_counter()
        try:
            fn()
        except Exception as e:  # keep going: the other sections still count
            import traceback

            traceback.print_exc()
            self.res.setdefault("errors", {})[name] = f"{type(e).__name__}: {e}"
        self.res.setdefault("section_seconds", {})[name] = round(time.perf_counter() - t0, 2)
        self.save()

    # ------------------------------------------------------------------------------------
    def do_compile(self) -> None:
        arch = self.arch
        progs = list(self.programs.values())
        t0 = time.perf_counter()
        comp = cudab.compile_programs(progs, arch, batch=len(progs), jobs=1, use_cache=False)
        t1 = time.perf_counter()
        self.compiled = {c.program: c for c in comp}
        self.res["compile"] = {
            "arch": arch,
            "programs": len(progs),
            "one_nvcc_call_seconds": round(t1 - t0, 2),
        }
        log(f"compiled {len(progs)} programs in one nvcc call: {t1 - t0:.2f}s")

    def do_compile_tput(self) -> None:
        # distinct programs: MP/SB/LB with every combination of semantics and scopes
        progs = variants(self.programs, 256 if not self.smoke else 48)
        jobs = os.cpu_count() or 1
        out = {"programs": len(progs), "jobs": jobs}
        for batch in (1, 8, 16):
            t0 = time.perf_counter()
            cudab.compile_programs(progs, self.arch, batch=batch, jobs=jobs, use_cache=False)
            dt = time.perf_counter() - t0
            out[f"batch{batch}"] = {"seconds": round(dt, 2), "kernels_per_s": round(len(progs) / dt, 1)}
            log(f"compile: {len(progs)} kernels, batch {batch}, {jobs} jobs: {dt:.2f}s = {len(progs) / dt:.1f}/s")
        t0 = time.perf_counter()
        cudab.compile_programs(progs, self.arch, batch=16, jobs=jobs, use_cache=True)
        cudab.compile_programs(progs, self.arch, batch=16, jobs=jobs, use_cache=True)
        out["cached_seconds"] = round(time.perf_counter() - t0, 2)
        self.res["compile_tput"] = out

    def do_sass(self) -> None:
        out: dict = {}
        try:
            from fuzzgpu import sass
        except Exception as e:
            out["fuzzgpu.sass"] = f"unavailable: {e}"
            sass = None
        progs = list(self.programs.values())
        if sass is not None:
            static = []
            for i, p in enumerate(progs):
                s = codegen.generate_static(p)
                static.append(s.replace("fuzzgpu_", f"fuzzgpu_{i}_"))
            try:
                reps = sass.check_cu_source("\n".join(static).replace("#ifndef FUZZGPU_PRELUDE", "#ifndef FUZZGPU_PRELUDE"), ["sm_90"], source="static")
                out["static"] = [f.to_dict() for r in reps for f in r.findings]
                out["static_functions"] = sum(len(r.functions) for r in reps)
            except Exception as e:
                out["static_error"] = f"{type(e).__name__}: {e}"
            try:
                src, _ = codegen.generate_module(progs)
                reps = sass.check_cu_source(src, ["sm_90"], source="harness")
                out["harness"] = [f.to_dict() for r in reps for f in r.findings]
                out["harness_functions"] = [fn.short_name for r in reps for fn in r.functions]
            except Exception as e:
                out["harness_error"] = f"{type(e).__name__}: {e}"
        out["simple"] = simple_sass_check(self.compiled, self.programs)
        self.res["sass"] = out
        log("sass:", json.dumps({k: (len(v) if isinstance(v, list) else v) for k, v in out.items() if k != "simple"}))
        log("simple sass check:", json.dumps(out["simple"])[:2000])

    def run(self, key, stem, knobs, n, **extra) -> dict:
        p = self.programs[stem]
        cfg = RunConfig(instances=n, seed=extra.pop("seed", 12345), **knobs, **extra)
        h = self.backend.run_compiled(self.compiled[p.name], cfg)
        w = witness_count(p, h)
        row = {
            "test": stem,
            "config": key,
            "knobs": cfg.to_json(),
            "instances": h.instances,
            "witness": w,
            "rate": w / h.instances,
            "timeouts": h.timeouts,
            "seconds": round(h.seconds, 4),
            "inst_per_s": h.instances / h.seconds,
            "histogram": hist_json(h),
        }
        log(f"{stem:28s} {key:30s} {w:>12d} / {h.instances:.3g} = {w / h.instances:.3e}  {h.instances / h.seconds:.3g} inst/s  tmo={h.timeouts}")
        return row

    #: launch modes Table 1 can be run in (``--table1-variants``): RunConfig's default (the launch
    #: number as a kernel argument, launches one by one) and graph (the launch number read from the
    #: control word, launches replayed from a CUDA graph: fuzzgpu run --graph)
    TABLE1_VARIANTS = {"default": {}, "graph": {"host_epoch": False}}
    table1_variants = ("default",)

    def do_table1(self) -> None:
        rows = []
        tests = (("MP", "MP-relaxed-gpu"), ("SB", "SB-relaxed-gpu"), ("LB", "LB-relaxed-gpu"), ("MPcta", "MP-relacq-cta-weakdata"))
        for variant in self.table1_variants:
            for key, knobs in KNOBS.items():
                for short, stem in tests:
                    n = self.n(2e8 if "stress" not in key else 1e8)
                    r = self.run(key, stem, {**knobs, **self.TABLE1_VARIANTS[variant]}, n)
                    r["variant"] = variant
                    ref = TABLE1[key][short]
                    r["probe_rate"] = ref
                    r["ratio_to_probe"] = r["rate"] / ref if ref else None
                    r["within_3x"] = bool(ref and r["rate"] > 0 and 1 / 3 <= r["rate"] / ref <= 3)
                    rows.append(r)
                    self.res["table1"] = rows
                    self.save()

    def do_zero(self) -> None:
        rows = []
        for stem in ("MP-relacq-gpu", "SB-fence-sc-gpu", "CoRR-relaxed-gpu", "MP-relacq-cluster", "MP-spin-relacq-gpu"):
            for key in ("plain_s1", "barrier_spin3000_s1"):
                big = stem in ("MP-relacq-gpu", "SB-fence-sc-gpu", "CoRR-relaxed-gpu")
                rows.append(self.run(key, stem, KNOBS[key], self.n((2e9 if key == "plain_s1" else 1e9) if big else 2e8)))
                self.res["zero"] = rows
                self.save()

    def do_scope(self) -> None:
        rows = []
        for key in ("plain_s1", "barrier_spin3000_s1", "plain_s32"):
            rows.append(self.run(key, "MP-relacq-cta-weakdata", KNOBS[key], self.n(1e9 if key != "plain_s32" else 5e8)))
            self.res["scope"] = rows
            self.save()

    def do_place(self) -> None:
        rows = []
        for stem in (
            "MP-relaxed-gpu-same-cta",
            "MP-relaxed-gpu-same-warp",
            "MP-relacq-cluster",
            "MP-spin-relacq-gpu",
            "Atom-add-gpu",
        ):
            for key in ("plain_s1", "barrier_spin3000_s1"):
                rows.append(self.run(key, stem, KNOBS[key], self.n(1e8)))
                self.res["place"] = rows
                self.save()

    def do_tput(self) -> None:
        rows = []
        for key, knobs, tc in (
            ("plain_s1", dict(stride=1), 256),
            ("plain_s1", dict(stride=1), 256),
            ("plain_s32", dict(stride=32), 256),
            ("plain_s1_tc512", dict(stride=1), 512),
            ("plain_s1_graph", dict(stride=1, host_epoch=False), 256),
            ("plain_s1_graph_nographs", dict(stride=1, host_epoch=False, graphs=False), 256),
            ("barrier_spin3000_s1", dict(stride=1, barrier=True, spin=3000), 256),
            ("plain_s1_sepcheck", dict(stride=1, inline_check=False), 256),
        ):
            rows.append(self.run(key, "MP-relaxed-gpu", knobs, self.n(4e9), test_ctas=tc))
            self.res["tput"] = rows
            self.save()

    def do_pdl(self) -> None:
        self.res["pdl"] = run_pdl(self.backend, self.arch, 200 if self.smoke else 2000)

    def do_suite(self) -> None:
        files = sorted(DAT3M.rglob("*.litmus"))
        progs, refused = [], {}
        for f in files:
            p = litmus.parse_file(f)
            r = codegen.unrunnable_reasons(p)
            if r:
                refused[str(f.relative_to(DAT3M))] = r
            else:
                progs.append((str(f.relative_to(DAT3M)), p))
        t0 = time.perf_counter()
        comp = cudab.compile_programs([p for _, p in progs], self.arch, batch=8, jobs=os.cpu_count() or 1)
        tc = time.perf_counter() - t0
        log(f"suite: {len(progs)} runnable, {len(refused)} refused, compiled in {tc:.1f}s")
        rows = []
        for (path, p), c in zip(progs, comp):
            try:
                h = self.backend.run_compiled(c, RunConfig(instances=self.n(1e7), barrier=True, spin=1000, budget=20000))
                rows.append({"path": path, "instances": h.instances, "timeouts": h.timeouts, "seconds": round(h.seconds, 4),
                             "witness": witness_count(p, h), "histogram": hist_json(h)})
            except Exception as e:
                rows.append({"path": path, "error": f"{type(e).__name__}: {e}"})
        self.res["suite"] = {"runnable": len(progs), "refused": refused, "compile_seconds": round(tc, 2), "runs": rows}

    def main(self, sections) -> None:

        self.arch = "sm_90"
        self.res["nvcc"] = subprocess.run([cudab.nvcc_path(), "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
        from fuzzgpu.sass import find_tool

        self.res["cuobjdump"] = find_tool("cuobjdump")
        self.section("compile", self.do_compile)
        if "sass" in sections:
            self.section("sass", self.do_sass)
        if not sections & {"table1", "zero", "scope", "place", "tput", "pdl", "suite"}:
            if "compile_tput" in sections:
                self.section("compile_tput", self.do_compile_tput)
            return
        from fuzzgpu.backends.cuda import CudaBackend

        self.backend = CudaBackend()
        self.arch = self.backend.arch
        self.res["device"] = self.backend.describe()
        try:
            self.res["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu", "--format=csv,noheader"], capture_output=True, text=True, timeout=30).stdout.strip()
        except Exception as e:
            self.res["nvidia_smi"] = str(e)
        log(self.res["device"], self.res["nvidia_smi"])
        for name in ("tput", "table1", "zero", "scope", "place", "pdl", "suite", "compile_tput"):
            if name in sections:
                self.section(name, getattr(self, f"do_{name}"))
        self.save()
        self.backend.close()


# ----------------------------------------------------------------------------------------
# SASS: a simple structural check of the harness kernels (independent of fuzzgpu.sass)
# ----------------------------------------------------------------------------------------


def simple_sass_check(compiled, programs) -> dict:
    """For each harness kernel: the %clock delay loop survived (SR_CLOCKLO read inside a backward
    branch); for each program, the number of global loads/stores of the test body in SASS."""
    import re
    import tempfile

    from fuzzgpu.sass import find_tool

    tool = find_tool("cuobjdump")
    if not tool:
        return {"error": "cuobjdump not found"}
    out = {}
    for name, c in compiled.items():
        with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
            f.write(c.cubin)
            f.flush()
            text = subprocess.run([tool, "-sass", "-fun", c.spec.kernel, f.name], capture_output=True, text=True).stdout
        lines = [ln for ln in text.splitlines() if re.search(r"/\*[0-9a-f]{4}\*/", ln)]
        clock_at = [i for i, ln in enumerate(lines) if "SR_CLOCKLO" in ln]
        loop_ok = False
        for i in clock_at:
            for ln in lines[i : i + 6]:
                m = re.search(r"BRA\s+0x([0-9a-f]+)", ln)
                mo = re.search(r"/\*([0-9a-f]{4})\*/", ln)
                if m and mo and int(m.group(1), 16) <= int(mo.group(1), 16):
                    loop_ok = True
        # test body: from the end of the delay loop to the first result store (STG.E without STRONG)
        body = []
        if clock_at:
            for ln in lines[clock_at[-1] :]:
                op = re.search(r"\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)", ln)
                if not op:
                    continue
                o = op.group(2)
                if o.startswith(("LDG", "STG", "ATOMG", "RED", "MEMBAR", "CCTL", "LDS", "STS", "ATOMS", "BAR", "FENCE")):
                    body.append(o)
                if o == "STG.E" and len(body) > 1:
                    break
        out[name] = {"delay_loop_kept": loop_ok, "body_ops": body[:24]}
    return out


# ----------------------------------------------------------------------------------------
# Compile-throughput programs
# ----------------------------------------------------------------------------------------


def variants(programs, n):
    from dataclasses import replace
    import itertools

    from fuzzgpu.ir import Fence, Load, Scope, Sem, Store

    base = [programs["MP-relaxed-gpu"], programs["SB-relaxed-gpu"], programs["LB-relaxed-gpu"]]
    sems_ld = [(Sem.WEAK, None), (Sem.RELAXED, Scope.GPU), (Sem.ACQUIRE, Scope.GPU), (Sem.RELAXED, Scope.CTA), (Sem.ACQUIRE, Scope.CTA), (Sem.VOLATILE, None), (Sem.RELAXED, Scope.SYS)]
    sems_st = [(Sem.WEAK, None), (Sem.RELAXED, Scope.GPU), (Sem.RELEASE, Scope.GPU), (Sem.RELAXED, Scope.CTA), (Sem.RELEASE, Scope.CTA), (Sem.VOLATILE, None), (Sem.RELAXED, Scope.SYS)]
    fences = [None, Fence(Sem.ACQ_REL, Scope.GPU), Fence(Sem.SC, Scope.GPU), Fence(Sem.ACQ_REL, Scope.CTA)]
    out = []
    for i, (b, ls, ss, f) in enumerate(itertools.product(base, sems_ld, sems_st, fences)):
        threads = []
        for t in b.threads:
            code = []
            for ins in t.code:
                if isinstance(ins, Load):
                    ins = replace(ins, sem=ls[0], scope=ls[1])
                elif isinstance(ins, Store):
                    ins = replace(ins, sem=ss[0], scope=ss[1])
                code.append(ins)
            if f is not None:
                code.insert(1, f)
            threads.append(replace(t, code=tuple(code)))
        out.append(replace(b, name=f"{b.name}-v{i}", threads=tuple(threads)))
        if len(out) >= n:
            break
    return out


# ----------------------------------------------------------------------------------------
# PDL
# ----------------------------------------------------------------------------------------

#: a dependent that loads its element after griddepcontrol.wait, with a shared-memory prologue
#: before the wait (@NAME@: the kernel's suffix, @LD@: the load instruction)
_PDL_DEP_AFTER = r"""extern "C" __global__ void pdl_dep_@NAME@(const unsigned* data, const unsigned* meta, unsigned* stale, unsigned val) {
  __shared__ unsigned sm[256];
  sm[threadIdx.x] = meta[threadIdx.x];
  __syncthreads();
  asm volatile("griddepcontrol.wait;" ::: "memory");
  unsigned v;
  asm volatile("@LD@ %0, [%1];" : "=r"(v) : "l"(data + blockIdx.x * blockDim.x + threadIdx.x) : "memory");
  count_stale(stale, v != val);
  if (sm[threadIdx.x ^ 1u] == 0xdeadbeefu) stale[1] = 1u;
}"""

PDL_SRC = r"""
__device__ __forceinline__ unsigned long long gtime() {
  unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) :: "memory"); return t;
}
// The primary: triggers its dependents at entry (early) or after its store (late), runs sleep_ns,
// then writes val to every element.
extern "C" __global__ void pdl_primary(unsigned* data, unsigned val, unsigned sleep_ns, unsigned early) {
  if (early) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  unsigned long long t0 = gtime();
  while (gtime() - t0 < sleep_ns) { }
  data[blockIdx.x * blockDim.x + threadIdx.x] = val;
  if (!early) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}
__device__ __forceinline__ void count_stale(unsigned* stale, bool bad) {
  unsigned b = __ballot_sync(0xffffffffu, bad);
  if ((threadIdx.x & 31u) == 0u && b) { atomicAdd(stale, __popc(b)); }
}
// ld.global.nc written AFTER griddepcontrol.wait, with a shared-memory prologue before the wait:
// ptxas hoists the LDG.CONSTANT above ACQBULK (facts/toolchain-and-ptxas.md, T3 / pdl_hoist_asmnc)
""" + _PDL_DEP_AFTER.replace("@NAME@", "nc").replace("@LD@", "ld.global.nc.u32") + r"""
// the same with a plain (weak) load: it stays after ACQBULK
""" + _PDL_DEP_AFTER.replace("@NAME@", "plain").replace("@LD@", "ld.global.u32") + r"""
// a plain load BEFORE the wait: stale with PDL on (the control)
extern "C" __global__ void pdl_dep_before(const unsigned* data, const unsigned* meta, unsigned* stale, unsigned val) {
  unsigned v;
  asm volatile("ld.global.u32 %0, [%1];" : "=r"(v) : "l"(data + blockIdx.x * blockDim.x + threadIdx.x) : "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
  count_stale(stale, v != val);
}
"""


def run_pdl(backend, arch, iters) -> dict:
    import numpy as np

    drv = backend.drv
    cubin = cudab.compile_cubin(PDL_SRC, arch)
    out: dict = {"iterations": iters, "sleep_ns": 30000, "ctas": 264, "threads": 256}
    # SASS: where is the data load relative to ACQBULK?
    out["sass"] = pdl_sass(cubin)
    prim = backend.function(cubin, "pdl_primary")
    n = 264 * 256
    data = drv.mem_alloc(n * 4)
    meta = drv.mem_alloc(256 * 4)
    drv.memset_d32(data, 0, n)
    drv.memset_d32(meta, 0, 256)
    rows = []
    for dep in ("pdl_dep_nc", "pdl_dep_plain", "pdl_dep_before"):
        f = backend.function(cubin, dep)
        for pdl in (True, False):
            stale = drv.mem_alloc(16)
            drv.memset_d32(stale, 0, 4)
            backend.sync()
            t0 = time.perf_counter()
            for i in range(iters):
                val = (hash((dep, pdl)) & 0xFFFF) * 65536 + i + 1
                a1 = cudab.KernelArgs([("p", int(data)), ("u32", val), ("u32", 30000), ("u32", 1)])
                a2 = cudab.KernelArgs([("p", int(data)), ("p", int(meta)), ("p", int(stale)), ("u32", val)])
                backend.launch(prim, 264, 256, a1)
                backend.launch(f, 264, 256, a2, pdl=pdl)
            backend.sync()
            dt = time.perf_counter() - t0
            h = np.zeros(4, dtype=np.uint32)
            drv.memcpy_dtoh(h, stale)
            stale.free()
            row = {"dependent": dep, "pdl": pdl, "stale_reads": int(h[0]), "reads": iters * n, "us_per_pair": round(dt / iters * 1e6, 2)}
            rows.append(row)
            log(f"pdl {dep:16s} pdl={'on ' if pdl else 'off'} stale {int(h[0])} / {iters * n}  {dt / iters * 1e6:.1f} us/pair")
    data.free()
    meta.free()
    out["runs"] = rows
    return out


def pdl_sass(cubin: bytes) -> dict:
    import re
    import tempfile

    from fuzzgpu.sass import find_tool

    tool = find_tool("cuobjdump")
    if not tool:
        return {"error": "cuobjdump not found"}
    res = {}
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        for k in ("pdl_dep_nc", "pdl_dep_plain", "pdl_dep_before"):
            text = subprocess.run([tool, "-sass", "-fun", k, f.name], capture_output=True, text=True).stdout
            seq = []
            for ln in text.splitlines():
                m = re.search(r"/\*([0-9a-f]{4})\*/\s+(?:@!?P\w+\s+)?([A-Z][A-Z0-9_.]+)", ln)
                if m and m.group(2).startswith(("LDG", "ACQBULK", "BAR", "STS", "LDS")):
                    seq.append(f"{m.group(2)}@{m.group(1)}")
            acq = next((i for i, s in enumerate(seq) if s.startswith("ACQBULK")), None)
            res[k] = {"sequence": seq, "data_load_before_ACQBULK": any(
                s.startswith("LDG") and (i < acq if acq is not None else False) and ("CONSTANT" in s or k == "pdl_dep_before")
                for i, s in enumerate(seq))}
    return res


# ----------------------------------------------------------------------------------------
# Extensions: `fuzzgpu run` on the PDL / mbarrier / async-proxy / cp.async catalogues
# ----------------------------------------------------------------------------------------

EXT_DIRS = ("pdl", "mbarrier", "async-proxy", "cp-async")

# FlashMLA's shape (facts/toolchain-and-ptxas.md §4, T3): a shared-memory prologue and bar.sync
# before griddepcontrol.wait.  In the harness kernel (whose own prologue computes the instance's
# addresses) ptxas hoists the ld.global.nc above ACQBULK with filler.smem 256 (not with 4 or 32:
# the address is then ready only after ACQBULK); the plain load stays after ACQBULK.
#: the two hoist tests (tests/litmus/gpu-pdl/PDL-hoist-{nc,plain}.litmus)
EXT_HOIST = tuple(ROOT / "tests" / "litmus" / "gpu-pdl" / f"PDL-hoist-{n}.litmus" for n in ("nc", "plain"))

# a lone try_wait (MBAR-MP-default, TMA-load-mbarrier-acquire) compiles to TRYWAIT followed at
# once by the LDS, with nothing that waits for the predicate; the same tests with the wait in a
# loop (the load after a branch on the predicate), as CUDA code writes it (tests/litmus/wait-loop/)
EXT_LOOPS = tuple(ROOT / "tests" / "litmus" / "wait-loop" / f"{n}.litmus" for n in ("MBAR-MP-loop", "TMA-load-loop"))

#: extra runs of one test: the primary's delay after its trigger (facts Table 7: 2 us -> rare)
EXT_VARIANTS = {"PDL-hoist-nc": [["--pdl-delay-ns", "2000"], ["--pdl-delay-ns", "0"]]}

#: runs with PDL off too (the dependent launched as an ordinary stream-ordered kernel)
EXT_PDL_OFF = ("PDL-hoist-nc", "PDL-hoist-plain", "PDL-wait-nc", "PDL-wait-plain", "PDL-read-before-wait")


def ext_files() -> list[Path]:
    """The two hoist tests first (the headline), then the catalogues."""
    files = list(EXT_HOIST)
    for d in EXT_DIRS:
        files += sorted((ROOT / "tests" / "litmus" / d).glob("*.litmus"))
    return files + list(EXT_LOOPS)


def run_extensions(out: Path, smoke: bool, only: str = "", name: str = "extensions-h200.json") -> dict:
    """`fuzzgpu run --json` (in process: one CUDA context per test, as the CLI makes) on every
    extension litmus test the harness can run; the refused ones with their reasons."""
    import contextlib
    import io

    from fuzzgpu.commands import run as runcmd

    out.mkdir(parents=True, exist_ok=True)
    res: dict = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                 "command": " ".join([sys.executable] + sys.argv), "host": platform.node()}
    try:
        res["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                                           capture_output=True, text=True, timeout=30).stdout.strip()
        res["nvcc"] = subprocess.run([cudab.nvcc_path(), "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    except Exception as e:  # noqa: BLE001
        res["nvidia_smi"] = f"? ({e})"
    files = ext_files()
    if only:
        files = [f for f in files if any(k in f.stem for k in only.split(","))]
    runnable, refused = [], {}
    for f in files:
        p = litmus.parse_file(f)
        r = codegen.unrunnable_reasons(p)
        if r:
            refused[f.name] = r
        else:
            runnable.append((f, p))
    res["refused"] = refused
    t0 = time.time()
    cudab.compile_programs([p for _, p in runnable], "sm_90", batch=1, jobs=os.cpu_count() or 8)
    res["compile_seconds"] = round(time.time() - t0, 1)
    log(f"compiled {len(runnable)} programs in {res['compile_seconds']} s; refused {len(refused)}")
    pdl_n = 2000 * 65536 // (100 if smoke else 1)
    other_n = 10_000_000 // (100 if smoke else 1)
    slow = ("MBAR-expect-tx-pending", "MBAR-MP-wait-not-complete")
    rows = []
    res["runs"] = rows
    jpath = out / name
    parser = argparse.ArgumentParser()
    runcmd.configure(parser)
    for f, p in runnable:
        variants = [[]]
        if p.name in EXT_PDL_OFF:
            variants.append(["--no-pdl"])
        variants += EXT_VARIANTS.get(p.name, [])
        for extra in variants:
            n = pdl_n if p.pdl_grids else (other_n // 2 if p.name in slow else other_n)
            argv = ["--instances", str(n), "--json", *extra, str(f)]
            a = parser.parse_args(argv)
            buf = io.StringIO()
            t1 = time.time()
            try:
                with contextlib.redirect_stdout(buf):
                    rc = runcmd.run(a)
                d = json.loads(buf.getvalue())
            except Exception as e:  # noqa: BLE001
                rc, d = 2, {"error": f"{type(e).__name__}: {e}"}
            row = {"test": p.name, "file": str(f.relative_to(ROOT)) if f.is_relative_to(ROOT) else f"bench/harness.py ({f.name})",
                   "argv": ["fuzzgpu", "run", *argv[:-1], f.name], "rc": rc, "wall_s": round(time.time() - t1, 2), **d}
            rows.append(row)
            short = {json.dumps(o["outcome"]): (o["count"], o.get("verdict")) for o in d.get("outcomes", [])}
            log(f"{p.name:45s} {' '.join(extra):9s} rc={rc} timeouts={d.get('timeouts')} {short if short else d.get('error')}")
            jpath.write_text(json.dumps(res, indent=1, default=str))
    res["seconds"] = round(time.time() - t0, 1)
    jpath.write_text(json.dumps(res, indent=1, default=str))
    return res


def render_extensions(path: Path) -> str:
    r = json.loads(Path(path).read_text())
    L = [f"# Extension IR on the GPU: PDL, mbarrier, async proxy, cp.async ({r.get('nvidia_smi', '?')})", ""]
    L.append(f"- date: {r.get('date')}; nvcc: {r.get('nvcc')}; host: {r.get('host')}")
    L.append(f"- command: `{r.get('command')}` (each row is `fuzzgpu run --json`, in process; argv below)")
    L.append(f"- compile: {r.get('compile_seconds')} s; total {r.get('seconds')} s")
    if r.get("summary"):
        L += ["", "## Summary", ""] + [f"- {x}" for x in r["summary"]] + [""]
    if r.get("second_call"):
        sc = r["second_call"]
        L.append(f"- second device call ({sc.get('date')}): `{sc.get('command')}` -- rows marked (2); then {sc.get('pytest')}")
    if r.get("device_seconds_used"):
        L.append(f"- device time used by both calls (machine start included): {r['device_seconds_used']} s")
    L.append("- PDL rows: 2000 launches x 65,536 instances, the primary spins 30 us (%globaltimer) after "
             "griddepcontrol.launch_dependents; `--no-pdl`: the dependent launched as an ordinary kernel "
             "(verdicts then judged without PDL)")
    L += ["", "| test | argv extra | instances | outcome: count (verdict) | timeouts | forbidden | us/launch |",
          "|---|---|---|---|---|---|---|"]
    for row in r.get("runs", []):
        argv = row["argv"][2:-1]
        extra = " ".join(a for i, a in enumerate(argv) if a.startswith(("--no", "--pdl")) or (i and argv[i - 1] == "--pdl-delay-ns"))
        if "error" in row:
            L.append(f"| {row['test']} | {extra} | - | ERROR {row['error']} | | | |")
            continue
        oc = "; ".join(
            ", ".join(f"{k}={v}" for k, v in o["outcome"].items()) + f": {o['count']} ({o['verdict']})"
            for o in row.get("outcomes", []))
        L.append(f"| {row['test']}{' (2)' if row.get('call') == 2 else ''} | {extra} | {row.get('instances')} | {oc} | {row.get('timeouts')} | "
                 f"{row.get('forbidden')} | {row.get('meta', {}).get('us_per_launch', '')} |")
    if r.get("sass"):
        L += ["", "## SASS of the harness kernels (fuzzgpu.sass, sm_90, compiled on the CPU machine)", ""]
        for k, v in r["sass"].items():
            L.append(f"- {k}: {v}")
    if r.get("refused"):
        L += ["", "## Refused (`Unrunnable`)", ""]
        for k, v in r["refused"].items():
            L.append(f"- {k}: {'; '.join(v)}")
    return "\n".join(L) + "\n"


def ext_sass(path: Path) -> dict:
    """fuzzgpu.sass over the harness module of the PDL programs (CPU machine): which dependent
    loads ptxas put above ACQBULK."""

    from fuzzgpu import sass

    progs = [litmus.parse_file(f) for f in ext_files() if "pdl" in str(f) or "PDL-hoist" in f.name]
    progs = [p for p in progs if not codegen.unrunnable_reasons(p)]
    src, specs = codegen.generate_module(progs)
    out = {}
    for rep in sass.check_cu_source(src, ("sm_90",), 3, name="ext_harness"):
        for fn in rep.functions:
            spec = next((s for s in specs if fn.name in s.kernels), None)
            if spec is None or not spec.kernels or fn.name == spec.kernels[0] and len(spec.kernels) > 1 and not any(
                    "ACQBULK" in f.sync_sass for f in fn.findings):
                continue
            acq = [f"{f.op_ptx.split()[0]} {f.direction} {f.sync_sass.split()[0]} ({f.verdict})"
                   for f in fn.findings if "ACQBULK" in f.sync_sass]
            out[f"{spec.program} grid {spec.kernels.index(fn.name)}"] = "; ".join(acq) or "no load moved across ACQBULK"
    r = json.loads(Path(path).read_text())
    r["sass"] = out
    Path(path).write_text(json.dumps(r, indent=1, default=str))
    return out


# ----------------------------------------------------------------------------------------
# Markdown
# ----------------------------------------------------------------------------------------


def render(path: Path) -> str:
    r = json.loads(Path(path).read_text())
    L = [f"# GPU harness on {r.get('device', '?')}", ""]
    L.append(f"- date: {r.get('date')}; command: `{r.get('command')}`; nvcc: {r.get('nvcc')}; nvidia-smi: {r.get('nvidia_smi')}")
    L.append(f"- host CPUs: {r.get('cpus')}; section seconds: {r.get('section_seconds')}")
    if r.get("errors"):
        L.append(f"- errors: {r['errors']}")
    L.append("")

    def fmt(row):
        return f"{row['rate']:.2e} ({row['witness']} / {row['instances']:.2g})"

    if r.get("table1"):
        for variant in dict.fromkeys(row.get("variant", "default") for row in r["table1"]):
            rows = [row for row in r["table1"] if row.get("variant", "default") == variant]
            ok = sum(row["within_3x"] for row in rows)
            L += [f"## Weak rates vs facts/h200-litmus-probe.md Table 1 (launch mode: {variant}; {ok} of {len(rows)} within 3x)", "",
                  "| test | config | rate (weak / instances) | probe | ratio | within 3x |", "|---|---|---|---|---|---|"]
            for row in rows:
                L.append(f"| {row['test']} | {row['config']} | {fmt(row)} | {row['probe_rate']:.2e} | {row['ratio_to_probe']:.2f} | {row['within_3x']} |")
            L.append("")
    for sec, title in (("zero", "Forbidden outcomes (0 expected)"), ("scope", "Scope too small: MP rel/acq.cta, weak data"), ("place", "Placements, spin loops, RMW")):
        if r.get(sec):
            L += [f"## {title}", "", "| test | config | weak / witness rate | timeouts | inst/s |", "|---|---|---|---|---|"]
            for row in r[sec]:
                L.append(f"| {row['test']} | {row['config']} | {fmt(row)} | {row['timeouts']} | {row['inst_per_s']:.2e} |")
            L.append("")
    if r.get("tput"):
        L += ["## Throughput, MP relaxed.gpu across CTAs (from Python, end to end)", "",
              "| config | test CTAs | instances | seconds | instances/s |", "|---|---|---|---|---|"]
        for row in r["tput"]:
            L.append(f"| {row['config']} | {row['knobs']['test_ctas']} | {row['instances']:.3g} | {row['seconds']:.3f} | {row['inst_per_s']:.3e} |")
        L.append("")
    if r.get("pdl"):
        p = r["pdl"]
        L += ["## PDL (primary triggers at entry, runs 30 us, then writes)", "",
              "| dependent | PDL | stale reads | us/pair |", "|---|---|---|---|"]
        for row in p.get("runs", []):
            L.append(f"| {row['dependent']} | {'on' if row['pdl'] else 'off'} | {row['stale_reads']} / {row['reads']} | {row['us_per_pair']} |")
        L.append("")
        for k, v in p.get("sass", {}).items():
            if isinstance(v, dict):
                L.append(f"- SASS {k}: {' '.join(v.get('sequence', []))}; data load before ACQBULK: {v.get('data_load_before_ACQBULK')}")
        L.append("")
    if r.get("compile") or r.get("compile_tput"):
        L += ["## Compilation", ""] + [f"- {line}" for line in (r.get("compile"),
               None if r.get("compile_tput") is None else f"throughput: {r['compile_tput']}") if line is not None] + [""]
    if r.get("sass"):
        s = r["sass"]
        L += ["## SASS checks", "",
              f"- fuzzgpu.sass static kernels: {len(s.get('static', [])) if isinstance(s.get('static'), list) else s.get('static_error', s.get('fuzzgpu.sass'))} findings over {s.get('static_functions')} functions",
              f"- fuzzgpu.sass harness module: {len(s.get('harness', [])) if isinstance(s.get('harness'), list) else s.get('harness_error')} findings",
              f"- delay loop kept in every harness kernel: {all(v.get('delay_loop_kept') for v in s.get('simple', {}).values() if isinstance(v, dict))}",
              ""]
    if r.get("suite"):
        s = r["suite"]
        L += ["## Dat3M PTX suite on the GPU", "", f"- runnable {s['runnable']}, refused {len(s['refused'])} (abstract proxies, aliases, second GPU, barrier shapes the harness cannot run faithfully); compile {s['compile_seconds']} s; {sum(x.get('instances', 0) for x in s['runs']):.3g} instances in all (barrier + spin1000)"]
        j = r.get("suite_judged")
        if j:
            sm = j["summary"]
            tot: dict = {}
            for row in j["rows"]:
                for k, v in row["verdicts"].items():
                    tot[k] = tot.get(k, 0) + v
            L += [f"- oracle verdicts over all observed instances: {tot}",
                  f"- programs with a forbidden outcome observed: {sm['forbidden_observed_programs'] or 'none'}",
                  f"- witness observed although Dat3M says unreachable: {sm['witness_seen_but_dat3m_unreachable'] or 'none'}",
                  f"- witness reachable per Dat3M but not observed in 1e7: {len(sm['witness_not_seen_but_reachable'])} programs: {', '.join(sm['witness_not_seen_but_reachable'])}",
                  f"- oracle time-outs (20 s): {sm['oracle_timeouts'] or 'none'}"]
        L.append("")
    return "\n".join(L) + "\n"


def judge_suite(path: Path, per_program_s: int = 20) -> dict:
    """Judge every outcome the GPU observed in the Dat3M suite runs with fuzzgpu.model (on the CPU,
    after the device run); compare with Dat3M's published verdicts (expected.csv)."""
    import signal

    from fuzzgpu import model

    r = json.loads(Path(path).read_text())
    expected = {}
    exp_file = DAT3M / "expected.csv"
    if exp_file.exists():
        for line in exp_file.read_text().splitlines():
            if line and not line.startswith("#"):
                pth, q, reach = line.split(",")
                expected[pth] = reach == "true"

    def alarm(*_):
        raise TimeoutError

    signal.signal(signal.SIGALRM, alarm)
    rows = []
    for run in r["suite"]["runs"]:
        p = litmus.parse_file(DAT3M / run["path"])
        row = {"path": run["path"], "instances": run["instances"], "witness": run["witness"],
               "dat3m_witness_reachable": expected.get(run["path"]), "verdicts": {}}
        signal.alarm(per_program_s)
        try:
            for o in run["histogram"]["outcomes"]:
                d = o["outcome"]
                if any(v is None for v in d.values()):
                    v = "not covered (value outside table)"
                else:
                    try:
                        v = model.judge(p, d).verdict
                    except model.Unsupported as e:
                        v = f"not covered by the oracle: {e}"
                row["verdicts"][v] = row["verdicts"].get(v, 0) + o["count"]
        except TimeoutError:
            row["verdicts"]["oracle timed out"] = -1
        finally:
            signal.alarm(0)
        row["forbidden_observed"] = row["verdicts"].get("forbidden", 0)
        rows.append(row)
        log(f"{run['path']:60s} {json.dumps(row['verdicts'])}")
    summary = {
        "programs": len(rows),
        "forbidden_observed_programs": [x["path"] for x in rows if x["forbidden_observed"] > 0],
        "witness_seen_but_dat3m_unreachable": [x["path"] for x in rows if x["witness"] > 0 and x["dat3m_witness_reachable"] is False],
        "witness_not_seen_but_reachable": [x["path"] for x in rows if x["witness"] == 0 and x["dat3m_witness_reachable"] is True],
        "oracle_timeouts": [x["path"] for x in rows if "oracle timed out" in x["verdicts"]],
    }
    r["suite_judged"] = {"summary": summary, "rows": rows}
    Path(path).write_text(json.dumps(r, indent=1, default=str))
    return summary


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.environ.get("OUT", "out"))
    ap.add_argument("--smoke", action="store_true", help="1/100 of the instances")
    ap.add_argument("--sections", default="sass,tput,table1,zero,scope,place,pdl,suite,compile_tput")
    ap.add_argument("--render", metavar="JSON")
    ap.add_argument("--table1-variants", default="default", metavar="A,B",
                    help="launch modes for the table1 section: default, graph (see Bench.TABLE1_VARIANTS)")
    ap.add_argument("--name", default="harness.json", help="results file name under --out")
    ap.add_argument("--judge-suite", metavar="JSON", help="judge the suite histograms with fuzzgpu.model (CPU)")
    ap.add_argument("--extensions", action="store_true",
                    help="run the PDL/mbarrier/async-proxy/cp.async catalogues (fuzzgpu run) into OUT/extensions-h200.json")
    ap.add_argument("--ext-only", default="", metavar="A,B", help="with --extensions: only the tests whose name contains one of these")
    ap.add_argument("--render-extensions", metavar="JSON", help="extensions JSON -> markdown")
    ap.add_argument("--ext-sass", metavar="JSON", help="add the harness SASS of the PDL programs to an extensions JSON (CPU)")
    a = ap.parse_args()
    if a.extensions:
        name = "extensions-h200.json" if not a.ext_only else "extensions-h200-extra.json"
        run_extensions(Path(a.out), a.smoke, a.ext_only, name)
        print(render_extensions(Path(a.out) / name), end="")
        return 0
    if a.render_extensions:
        print(render_extensions(Path(a.render_extensions)), end="")
        return 0
    if a.ext_sass:
        print(json.dumps(ext_sass(Path(a.ext_sass)), indent=1))
        return 0
    if a.judge_suite:
        print(json.dumps(judge_suite(Path(a.judge_suite)), indent=1))
        return 0
    if a.render:
        print(render(Path(a.render)), end="")
        return 0
    b = Bench(Path(a.out), a.smoke, a.name)
    b.table1_variants = tuple(v for v in a.table1_variants.split(",") if v)
    bad = [v for v in b.table1_variants if v not in Bench.TABLE1_VARIANTS]
    if bad:
        ap.error(f"--table1-variants: unknown {bad[0]!r} (known: {', '.join(Bench.TABLE1_VARIANTS)})")
    b.main(set(a.sections.split(",")))
    print(render(Path(a.out) / a.name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
