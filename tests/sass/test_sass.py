"""The static SASS oracle against the toolchain: FlashMLA's PDL + __ldg shape, the table of
toolchain-and-ptxas.md section 4, and the command line.

Needs nvcc/ptxas and nvdisasm (or cuobjdump); skipped with the reason when they are missing.  All kernels
of tests/kernels/ are compiled as one translation unit, once per arch (three nvcc calls in all)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fuzzgpu import sass
from fuzzgpu.cli import main as cli_main

KERNELS = Path(__file__).parents[1] / "kernels"
ARCHS = ("sm_90", "sm_90a", "sm_100a")
#: the kernels' shared headers (splitkv_common.cuh, section4.cuh) for a batch compiled from a copy
INCLUDE = (f"-I{KERNELS}",)

needs_toolchain = pytest.mark.skipif(
    sass.find_tool("nvcc") is None or sass.find_tool("ptxas") is None,
    reason="nvcc/ptxas not found (install the CUDA toolkit)",
)
needs_disasm = pytest.mark.skipif(
    sass.find_tool("nvdisasm") is None and sass.find_tool("cuobjdump") is None,
    reason="nvdisasm/cuobjdump not found: pip install nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump",
)
pytestmark = [needs_toolchain, needs_disasm]

#: toolchain-and-ptxas.md section 4, at -O3, identical on sm_90, sm_90a and sm_100a.  "hoisted": the
#: .nc load is hoisted above ACQBULK (and above the other synchronisation points listed); "after": the
#: load stays after ACQBULK and the oracle reports nothing at all.
SECTION4: dict[str, tuple[str, frozenset[str]]] = {
    "A_nothing_before_ldg": ("after", frozenset()),
    "A0_nothing_before_ldg_noclobber": ("after", frozenset()),
    "C_nothing_before_ldg_cgds": ("after", frozenset()),
    "B_nothing_before_plain": ("after", frozenset()),
    "E_nothing_before_volatile": ("after", frozenset()),
    "F_nothing_before_relaxed": ("after", frozenset()),
    "T1_alu_before_ldg": ("after", frozenset()),
    "T2_syncthreads_before_ldg": ("after", frozenset()),
    "T3_sts_syncthreads_before_ldg": ("hoisted", frozenset({"griddepcontrol.wait", "bar.sync"})),
    "T4_regloop_before_ldg": ("hoisted", frozenset({"griddepcontrol.wait"})),
    "D2_regloop_before_ldg_restrict": ("hoisted", frozenset({"griddepcontrol.wait"})),
    # mbarrier.init orders no access of the thread (semantics table), so the load above its SYNCS.EXCH
    # crossed nothing there: since issue 26 only the points that order a move are listed
    "D_flashmla_shape": ("hoisted", frozenset({"griddepcontrol.wait", "bar.sync"})),
    "D_flashmla_fixed_01a2772": ("after", frozenset()),
    "L_plain_restrict": ("hoisted", frozenset({"griddepcontrol.wait", "bar.sync"})),
    "L_nc_asm_volatile": ("hoisted", frozenset({"griddepcontrol.wait", "bar.sync"})),
    "L_plain_mut": ("after", frozenset()),
    "L_plain_const": ("after", frozenset()),
    "L_ldcg": ("after", frozenset()),
    "L_ldca": ("after", frozenset()),
    "L_ldcv": ("after", frozenset()),
    "L_ldlu": ("after", frozenset()),
    "L_asm_relaxed_gpu": ("after", frozenset()),
    "L_asm_acquire_gpu": ("after", frozenset()),
    "L_asm_weak": ("after", frozenset()),
    "X_syncthreads": ("hoisted", frozenset({"griddepcontrol.wait", "bar.sync"})),
    # fence.proxy.async orders a generic *read* after it with nothing (an async write is made visible
    # to it by its completion, not by the fence: sass.rules._proxy_orders), so it is not listed
    "X_fence_proxy_async": ("hoisted", frozenset({"griddepcontrol.wait", "bar.sync"})),
    "X_threadfence": ("after", frozenset()),
    "X_fence_acqrel_gpu": ("after", frozenset()),
}


#: split-KV decode kernels of FlashMLA's shape before 01a2772 (mbarrier init, __syncthreads, wait,
#: an int4 __ldg of the tile metadata, then loops of __ldg) and their fixes (plain loads after the
#: wait): "hoisted" -- an LDG.*.CONSTANT above ACQBULK is reported whether or not the mapping pairs it
#: with its PTX load; "fixed" -- clean and fully checked.  Checked in tests/sass/test_sass_complete.py.
DECODE: dict[str, str] = {
    "S1_splitkv_ldg_loop": "hoisted",
    "S1_splitkv_fixed": "fixed",
    "S2_splitkv_ldg_unroll": "hoisted",
    "S2_splitkv_unroll_fixed": "fixed",
    "S3_splitkv_ldg_several": "hoisted",
    "S3_splitkv_several_fixed": "fixed",
    "S4_splitkv_restrict": "hoisted",
    "S4_splitkv_restrict_fixed": "fixed",
}


def _kernel_name(path: Path) -> str:
    m = re.search(r"__global__\s+void\s+(\w+)", path.read_text())
    assert m, path
    return m.group(1)


def _batch_source() -> str:
    """Every kernel file as one translation unit (includes hoisted to the top; the families' shared
    headers, ``tests/kernels/*.cuh``, found through ``-I``: :data:`INCLUDE`)."""
    includes, bodies = set(), []
    for p in sorted(KERNELS.glob("*.cu")):
        lines = p.read_text().splitlines()
        includes.update(l for l in lines if l.startswith("#include"))
        bodies.append(f"// ---- {p.name}\n" + "\n".join(l for l in lines if not l.startswith("#include")))
    return "\n".join(sorted(includes)) + "\n" + "\n".join(bodies) + "\n"


@pytest.fixture(scope="module")
def section4() -> dict[tuple[str, str], sass.FunctionReport]:
    out = {}
    for rep in sass.check_cu_source(_batch_source(), ARCHS, nvcc_flags=INCLUDE, source="tests/kernels/*.cu", name="section4"):
        for fn in rep.functions:
            out[(rep.arch, fn.short_name)] = fn
    return out


def test_every_kernel_file_is_in_the_table():
    names = {_kernel_name(p) for p in KERNELS.glob("*.cu")}
    assert names == set(SECTION4) | set(DECODE)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("kernel", sorted(SECTION4))
def test_section4_verdict(section4, kernel, arch):
    expected, above = SECTION4[kernel]
    fn = section4[(arch, kernel)]
    assert fn.mapped_mem_ops == fn.ptx_mem_ops, fn.notes
    assert fn.complete, fn.unchecked
    assert not [f for f in fn.findings if f.verdict == sass.FORBIDDEN]
    if expected == "after":
        assert fn.findings == (), [(f.op_ptx, f.direction, f.sync_ptx) for f in fn.findings]
        return
    crossings = [f for f in fn.findings if f.check == sass.CROSSING]
    assert crossings, "expected the .nc load hoisted above griddepcontrol.wait"
    for f in crossings:
        assert f.verdict == sass.HAZARD
        assert f.direction == sass.HOISTED
        assert ".nc" in f.op_ptx and "CONSTANT" in f.op_sass
        assert f.arch == arch and sass.short_name(f.function) == kernel
        assert f.op_sass_offset < f.sync_sass_offset
        assert "outside the memory model" in f.reason
    # one finding per moved load (issue 26), listing every point it crossed, nearest first
    syncs = {c.split()[0] for f in crossings for c in f.crossed}
    assert above <= syncs, syncs
    assert all(f.sync_ptx == f.crossed[0].split(" (")[0] for f in crossings)
    assert len({f.op_sass_offset for f in crossings}) == len(crossings)
    assert any(c.startswith("griddepcontrol.wait") for f in crossings for c in f.crossed)


@pytest.mark.parametrize("arch", ["sm_90", "sm_100a"])
def test_flashmla_pre_fix_flagged_and_fix_clean(section4, arch):
    shape = section4[(arch, "D_flashmla_shape")]
    fixed = section4[(arch, "D_flashmla_fixed_01a2772")]
    wait = [f for f in shape.findings if f.sync_sass == "ACQBULK"]
    assert len(wait) == 1
    (f,) = wait
    assert f.op_sass.startswith("LDG.E.128.CONSTANT")
    assert f.op_ptx.startswith("ld.global.nc.v4")
    assert f.direction == sass.HOISTED and f.verdict == sass.HAZARD
    assert f.op_sass_line > 0 and f.sync_sass_line > f.op_sass_line
    assert fixed.findings == ()
    assert fixed.mapped_mem_ops == fixed.ptx_mem_ops == 4


def _cli(*args: str, capsys) -> tuple[int, str, str]:
    rc = cli_main(["sass", *args])
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_exit_codes_and_json(capsys):
    rc, out, _ = _cli("--arch", "sm_90", "--json", str(KERNELS / "D_flashmla_shape.cu"), capsys=capsys)
    assert rc == 1
    objs = [json.loads(l) for l in out.splitlines()]
    assert len(objs) == 1 and objs[0]["arch"] == "sm_90" and not objs[0]["clean"]
    assert {f["sync_sass"] for f in objs[0]["findings"]} >= {"ACQBULK"}
    rc, out, _ = _cli("--arch", "sm_90", str(KERNELS / "D_flashmla_fixed_01a2772.cu"), capsys=capsys)
    assert rc == 0 and "clean" in out


def test_cli_errors_are_one_line(capsys, tmp_path):
    rc, _, err = _cli(str(tmp_path / "missing.cu"), capsys=capsys)
    assert rc == 2 and err.count("\n") == 1 and "no such file" in err
    rc, _, err = _cli("--arch", "sm_42", str(KERNELS / "A_nothing_before_ldg.cu"), capsys=capsys)
    assert rc == 2 and "unknown arch" in err
    bad = tmp_path / "bad.cu"
    bad.write_text("__global__ void k() { this is not C++; }\n")
    rc, _, err = _cli("--arch", "sm_90", str(bad), capsys=capsys)
    assert rc == 2 and err.count("\n") == 1 and "error" in err and "Traceback" not in err
    other = tmp_path / "x.txt"
    other.write_text("")
    rc, _, err = _cli(str(other), capsys=capsys)
    assert rc == 2 and "unknown input type" in err


def test_ptx_and_cubin_inputs(tmp_path, capsys):
    """A .ptx is assembled with ptxas; a .cubin is read with the PTX beside it."""
    src = KERNELS / "T3_sts_syncthreads_before_ldg.cu"
    ptx = tmp_path / "t3.ptx"
    subprocess.run(["nvcc", "-arch=sm_90", "-ptx", "-o", str(ptx), str(src)], check=True)
    reps = sass.check_path(ptx, ("sm_90", "sm_100a"))
    assert [r.arch for r in reps] == ["sm_90", "sm_100a"]
    assert all(any(f.sync_sass == "ACQBULK" for f in r.findings) for r in reps)
    cubin = tmp_path / "t3.cubin"
    subprocess.run(["ptxas", "-arch=sm_90", "-O3", "-o", str(cubin), str(ptx)], check=True)
    (rep,) = sass.check_path(cubin)
    assert rep.arch == "sm_90" and any(f.sync_sass == "ACQBULK" for f in rep.findings)
    lonely = tmp_path / "lonely.cubin"
    lonely.write_bytes(cubin.read_bytes())
    rc, _, err = _cli(str(lonely), capsys=capsys)
    assert rc == 2 and "PTX" in err


def test_section4_opt_levels():
    """toolchain-and-ptxas.md section 4: -O0 hoists nothing; -O1 only the STS + __syncthreads family
    (not the register-loop kernels T4/D2); -O2 the same as -O3."""
    hoisted_o3 = {k for k, (v, _) in SECTION4.items() if v == "hoisted"}
    loops = {"T4_regloop_before_ldg", "D2_regloop_before_ldg_restrict"}
    for opt, expected in ((0, set()), (1, hoisted_o3 - loops), (2, hoisted_o3)):
        reps = sass.check_cu_source(_batch_source(), ("sm_90",), opt=opt, nvcc_flags=INCLUDE, name=f"o{opt}")
        got = {fn.short_name for r in reps for fn in r.functions
               if fn.short_name in SECTION4 and any(c.startswith("griddepcontrol.wait") for f in fn.findings for c in f.crossed)}
        assert got == expected, (opt, got ^ expected)
        assert not [f for r in reps for f in r.findings if f.verdict == sass.FORBIDDEN]


def test_opt_level_and_flags_pass_through():
    """-O0 keeps the PTX order (toolchain-and-ptxas.md section 4: the hoist needs -O1 or more)."""
    (rep,) = sass.check_path(KERNELS / "T3_sts_syncthreads_before_ldg.cu", ("sm_90",), opt=0)
    assert not [f for f in rep.findings if f.sync_sass == "ACQBULK"]
    with pytest.raises(sass.UserError):
        sass.check_path(KERNELS / "T3_sts_syncthreads_before_ldg.cu", ("sm_90",), nvcc_flags=("--no-such-flag",))


def test_merge_and_loop_checks(tmp_path):
    """Same-address loads merged (weak: permitted; volatile: forbidden) and an empty loop deleted."""
    src = tmp_path / "merge.cu"
    src.write_text(
        r"""
__global__ void merge_weak(int* p, int* out) {
    int a, b;
    asm volatile("ld.global.u32 %0, [%1+4];" : "=r"(a) : "l"(p) : "memory");
    asm volatile("ld.global.u32 %0, [%1+4];" : "=r"(b) : "l"(p) : "memory");
    out[threadIdx.x] = a * 3 + b;
}
__global__ void empty_loop(int* out, int n) {
    for (int i = 0; i < n; ++i) asm volatile("");
    out[threadIdx.x] = 1;
}
__global__ void clock_loop(int* out, int n) {
    long long t0 = clock64();
    while (clock64() - t0 < n) { }
    out[threadIdx.x] = 1;
}
"""
    )
    (rep,) = sass.check_path(src, ("sm_90",))
    by = {fn.short_name: fn for fn in rep.functions}
    merged = [f for f in by["merge_weak"].findings if f.check == sass.MERGED]
    assert len(merged) == 1 and merged[0].verdict == sass.HAZARD
    loops = [f for f in by["empty_loop"].findings if f.check == sass.LOOP_DELETED]
    assert loops and all(f.verdict == sass.HAZARD for f in loops)  # NVVM unrolls it: two PTX loops
    assert by["clock_loop"].findings == ()


def test_ptxas_hoists_shared_load_above_acquire(tmp_path):
    """A forbidden move ptxas 13.0 makes, found by tests/sass/test_sass_fuzz.py: a weak ld.shared after an
    ld.acquire.global is issued before it when an earlier ld.shared can be paired with it.  The model
    orders every access after an acquire (of any state space); the oracle flags it forbidden."""
    src = tmp_path / "acq.cu"
    src.write_text(
        r"""
#define PRE __shared__ int sm[64]; unsigned s = (unsigned)__cvta_generic_to_shared(sm); int acc = 0, r;
#define LDS(off) asm volatile("ld.shared.u32 %0, [%1+" #off "];" : "=r"(r) : "r"(s) : "memory"); acc = acc * 3 + r;
#define ACQ(sc) asm volatile("ld.acquire." #sc ".global.u32 %0, [%1];" : "=r"(r) : "l"(p) : "memory"); acc = acc * 3 + r;
__global__ void acq_cta(int* p, int* out) { PRE LDS(4) ACQ(cta) LDS(8) out[threadIdx.x] = acc; }
__global__ void acq_gpu(int* p, int* out) { PRE LDS(4) ACQ(gpu) LDS(8) out[threadIdx.x] = acc; }
__global__ void acq_alone(int* p, int* out) { PRE ACQ(cta) LDS(8) out[threadIdx.x] = acc; }
"""
    )
    for rep in sass.check_path(src, ("sm_90", "sm_100a")):
        by = {fn.short_name: fn for fn in rep.functions}
        for name in ("acq_cta", "acq_gpu"):
            (f,) = by[name].findings
            assert (f.check, f.verdict, f.direction) == (sass.CROSSING, sass.FORBIDDEN, sass.HOISTED)
            assert f.op_ptx.startswith("ld.shared.u32") and f.op_sass.startswith("LDS") and "+0x8" in f.op_sass
            assert f.sync_ptx.startswith("ld.acquire.") and "acquire" in f.reason
        assert by["acq_alone"].findings == ()


def test_keep_and_cache(tmp_path, monkeypatch):
    """--keep writes the PTX/SASS the line numbers refer to; the content-hash cache skips the
    toolchain on a repeat."""
    src = (KERNELS / "T3_sts_syncthreads_before_ldg.cu").read_text()
    keep, cache = tmp_path / "keep", tmp_path / "cache"
    (rep,) = sass.check_cu_source(src, ("sm_90",), name="t3", nvcc_flags=INCLUDE, keep_dir=keep, cache_dir=cache)
    ptx = (keep / "t3.sm_90.ptx").read_text()
    (f, *_) = rep.findings
    assert f.op_ptx in " ".join(ptx.splitlines()[f.op_ptx_line - 1].split())
    assert (keep / "t3.sm_90.sass").read_text().splitlines()[f.op_sass_line - 1].strip().startswith(f"/*{f.op_sass_offset:04x}*/")

    def boom(*a, **k):
        raise AssertionError("the toolchain ran although the result was cached")

    monkeypatch.setattr(sass.toolchain, "compile_cu", boom)
    (again,) = sass.check_cu_source(src, ("sm_90",), name="t3", nvcc_flags=INCLUDE, cache_dir=cache)
    assert again.findings == rep.findings


def test_cuobjdump_fallback(monkeypatch):
    """Without nvdisasm the oracle reads ``cuobjdump -sass`` and finds the same thing."""
    if sass.find_tool("cuobjdump") is None:
        pytest.skip("cuobjdump not found")
    real = sass.find_tool
    monkeypatch.setattr(sass.toolchain, "find_tool", lambda name: None if name == "nvdisasm" else real(name))
    (rep,) = sass.check_path(KERNELS / "D_flashmla_shape.cu", ("sm_90",))
    assert any(f.sync_sass == "ACQBULK" and "CONSTANT" in f.op_sass for f in rep.findings)


LITMUS = Path(__file__).parents[1] / "litmus" / "gpu"


def test_litmus_input():
    """A .litmus file goes through fuzzgpu.litmus and fuzzgpu.codegen.generate_static: one kernel per
    thread; the oracle finds no move across synchronisation in them (it may report loads ptxas
    deleted because the static kernels leave their values unused)."""
    path = LITMUS / "MP-relacq-gpu.litmus"
    reps = sass.check_path(path, ("sm_90",))
    (rep,) = reps
    assert rep.source == str(path)
    assert {fn.short_name for fn in rep.functions} == {"fuzzgpu_P0", "fuzzgpu_P1"}
    assert all(f.check == sass.DELETED for f in rep.findings)
    p0 = next(fn for fn in rep.functions if fn.short_name == "fuzzgpu_P0")
    assert p0.findings == () and p0.mapped_mem_ops == p0.ptx_mem_ops == 2 and p0.mapped_syncs == 1


def test_litmus_without_codegen(monkeypatch, tmp_path):
    import fuzzgpu.codegen as codegen

    monkeypatch.delattr(codegen, "generate_static", raising=False)
    f = tmp_path / "x.litmus"
    f.write_text("PTX x\n")
    with pytest.raises(sass.UserError, match="codegen not available yet"):
        sass.check_path(f, ("sm_90",))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
