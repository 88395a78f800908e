"""Code generation: every litmus test compiles (nvcc, sm_90 and sm_100a, many programs per nvcc
call), unrunnable constructs are refused and counted, the harness index math is a bijection that
honours placements, and the generated SASS keeps the test's order and its delay loop."""

from __future__ import annotations

import concurrent.futures
import random
import re
from pathlib import Path

import pytest

from fuzzgpu import codegen, litmus
from fuzzgpu.codegen.runnable import uses_tensormap_rewrites
from fuzzgpu.errors import UserError
from fuzzgpu.ir import TCGEN05_MEMORY_INSTRUCTIONS, Load, Location, Placement, Program, Proxy, Sem, Store, Thread, validate

ROOT = Path(__file__).resolve().parents[2]
from paths import DAT3M, own_litmus
GPU = ROOT / "tests" / "litmus" / "gpu"

from nvcc import compile_cubin as _nvcc, needs_nvcc


def _all_litmus() -> list[Path]:
    return own_litmus() + sorted(DAT3M.rglob("*.litmus"))


def _programs() -> list[tuple[Path, Program]]:
    return [(f, litmus.parse_file(f)) for f in _all_litmus()]


# --------------------------------------------------------------------------------------------
# Everything compiles (one nvcc call per module and arch, in parallel)
# --------------------------------------------------------------------------------------------


@pytest.mark.slow  # ~90 CPU-seconds of nvcc/ptxas (the whole catalogue and Dat3M's suite, two arches)
@needs_nvcc
def _uses_tmem(p: Program) -> bool:
    return any(isinstance(i, TCGEN05_MEMORY_INSTRUCTIONS) for t in p.threads for i in t.code)


def test_every_litmus_test_compiles_sm90_sm100a(tmp_path: Path) -> None:
    progs = _programs()
    assert len(progs) >= 12
    # async.read programs (wgmma) compile for sm_90a only: tests/codegen/test_wgmma.py
    runnable = [p for _, p in progs if not codegen.unrunnable_reasons(p) and not codegen.uses_wgmma(p)]
    # tensor-map rewrites (class D): the arch-specific targets only (codegen.harness_arch: sm_90a on sm_90)
    rewrites = [p for p in runnable if uses_tensormap_rewrites(p)]
    assert len(rewrites) >= 7
    harness, _ = codegen.generate_module([p for p in runnable if p not in rewrites])
    harness_d, _ = codegen.generate_module(rewrites)
    assert codegen.harness_arch(rewrites, "sm_90") == "sm_90a"
    static = [codegen.PRELUDE]
    tmem = [codegen.PRELUDE]  # tensor memory (classes E/G): sm_100a only (sm_90 stops at the kernels' #error)
    static_d = [codegen.PRELUDE]
    n_static = 0
    for i, (_, p) in enumerate(progs):
        try:
            s = codegen.generate_static(p)
        except codegen.Unrunnable:
            continue
        n_static += 1
        # one translation unit: give each program's kernels their own names
        (tmem if _uses_tmem(p) else static_d if uses_tensormap_rewrites(p) else static).append(s.replace("fuzzgpu_", f"fuzzgpu_{i}_"))
    jobs = [("harness", harness, a) for a in ("sm_90", "sm_100a")] + [
        ("static", "\n".join(static), a) for a in ("sm_90", "sm_100a")
    ] + [("static-tmem", "\n".join(tmem), "sm_100a")] + [
        ("harness-d", harness_d, a) for a in ("sm_90a", "sm_100a")] + [("static-d", "\n".join(static_d), a) for a in ("sm_90a", "sm_100a")]
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        results = list(ex.map(lambda j: (j, _nvcc(j[1], j[2], tmp_path, j[0])), jobs))
    for (name, _, arch), r in results:
        assert r.returncode == 0, f"{name} {arch}: " + r.stderr[-3000:]
    assert len(runnable) >= 90 and n_static >= 100


# --------------------------------------------------------------------------------------------
# Refusals
# --------------------------------------------------------------------------------------------


def test_dat3m_refusals_are_counted_and_clear() -> None:
    files = sorted(DAT3M.rglob("*.litmus"))
    refused = {}
    for f in files:
        r = codegen.unrunnable_reasons(litmus.parse_file(f))
        if r:
            refused[f.relative_to(DAT3M).as_posix()] = r
    assert len(files) == 183
    # 81 use the abstract surface/texture/constant proxies, 1 a virtual alias with no abstract proxy,
    # 5 place threads on a second GPU, 12 use barriers the harness cannot run faithfully (a thread
    # count smaller or larger than the CTA's threads, threads of one CTA passing different barriers,
    # register ids, bar.sync in a thread with branches), 2 a spin on a write the harness would play
    # after the spin in every hardware thread (the ticket locks of Manual/: a thread holding the
    # second ticket waits for a role every thread plays later -- timeouts, not outcomes)
    assert len(refused) == 101
    kinds = {"proxy": 0, "alias": 0, "gpu": 0, "barrier": 0, "spin-order": 0}
    for reasons in refused.values():
        text = " ".join(reasons)
        if "abstract" in text:
            kinds["proxy"] += 1
        elif "virtual alias" in text:
            kinds["alias"] += 1
        elif "on gpu" in text:
            kinds["gpu"] += 1
        elif "bar" in text:
            kinds["barrier"] += 1
        elif "spins on" in text:
            kinds["spin-order"] += 1
    assert kinds == {"proxy": 81, "alias": 1, "gpu": 5, "barrier": 12, "spin-order": 2}


def test_unrunnable_is_a_user_error_with_every_reason() -> None:
    p = validate(
        Program(
            "bad",
            (
                Thread("P0", Placement(cta=0, gpu=1), (Store("x", 3_000_000_000),)),
                Thread("P1", Placement(cta=1), (Load("r0", "x", proxy=Proxy.SURFACE),)),
            ),
            (Location("x"),),
        )
    )
    with pytest.raises(codegen.Unrunnable) as e:
        codegen.check_runnable(p)
    assert isinstance(e.value, UserError)
    text = str(e.value)
    assert "gpu 1" in text and "signed 32-bit word" in text and "surface" in text
    assert len(e.value.reasons) == 3
    with pytest.raises(codegen.Unrunnable):
        codegen.generate_static(p)  # the surface load has no PTX form


# --------------------------------------------------------------------------------------------
# Static kernels
# --------------------------------------------------------------------------------------------


def test_generate_static_one_kernel_per_thread_in_order() -> None:
    p = litmus.parse_file(GPU / "MP-relacq-gpu.litmus")
    src = codegen.generate_static(p)
    assert 'extern "C" __global__ void fuzzgpu_P0(unsigned* base)' in src
    assert 'extern "C" __global__ void fuzzgpu_P1(unsigned* base)' in src
    off = codegen.static_offsets(p)
    assert off == {"x": 0, "y": 32}
    p1 = src[src.index("fuzzgpu_P1") :]
    asm = re.findall(r'asm volatile\("([^"]+)"', p1)
    assert asm == ["ld.acquire.gpu.global.u32 %0, [%1];", "ld.global.u32 %0, [%1];"]
    assert "(base + 32)" in p1 and p1.index("(base + 32)") < p1.index("(base + 0)")
    kernels = src[src.index('extern "C"') :]
    for line in kernels.splitlines():
        if "asm volatile" in line:
            assert '"memory"' in line, line


def test_ptx_mnemonics() -> None:
    from fuzzgpu.ir import Atom, Fence, ProxyFence, ProxyFenceKind, Red, RmwOp, Scope

    assert codegen.ptx_of(Load("r0", "x", nc=True)) == "ld.global.nc.u32"
    assert codegen.ptx_of(Load("r0", "x", Sem.VOLATILE)) == "ld.volatile.global.u32"
    assert codegen.ptx_of(Store("x", 1, Sem.RELEASE, Scope.CLUSTER)) == "st.release.cluster.global.u32"
    assert codegen.ptx_of(Fence(Sem.SC, Scope.GPU)) == "fence.sc.gpu"
    assert codegen.ptx_of(ProxyFence(ProxyFenceKind.ASYNC, "global")) == "fence.proxy.async.global"
    assert codegen.ptx_of(Atom("r0", "x", RmwOp.CAS, (0, 1), Sem.ACQ_REL, Scope.CTA)) == "atom.acq_rel.cta.global.cas.b32"
    # red has no .acquire/.acq_rel in PTX: emitted as atom with a discarded result
    assert codegen.ptx_of(Red("x", RmwOp.ADD, 1, Sem.ACQ_REL, Scope.CTA)).startswith("atom.acq_rel.cta")
    assert codegen.ptx_of(Red("x", RmwOp.ADD, 1, Sem.RELEASE)).startswith("red.release.gpu")


def test_harness_decodes_lazily_in_straight_line_code() -> None:
    p = litmus.parse_file(GPU / "LB-relaxed-gpu.litmus")
    src, spec = codegen.harness_source(p)
    body = src[src.index("---- role 0") : src.index("unsigned* resc")]
    assert "fz_dec" not in body  # no decode between the test's accesses (it would wait for the load)
    assert spec.nbins == 9 and [k.key for k in spec.keys] == ["P0:r0", "P1:r1"]
    assert spec.decode_bin(1 * 1 + 1 * 3) == {"P0:r0": 1, "P1:r1": 1}
    assert spec.decode_bin(2) == {"P0:r0": None, "P1:r1": 0}


# --------------------------------------------------------------------------------------------
# The harness layout: a Python mirror of the device's index math
# --------------------------------------------------------------------------------------------


def _mix(x: int) -> int:
    x &= 0xFFFFFFFF
    x ^= x >> 16
    x = (x * 0x7FEB352D) & 0xFFFFFFFF
    x ^= x >> 15
    x = (x * 0x846CA68B) & 0xFFFFFFFF
    x ^= x >> 16
    return x


@pytest.mark.parametrize(
    "path",
    sorted(GPU.glob("*.litmus"))
    + [DAT3M / "Manual" / "Co-Total-4-threads.litmus", DAT3M / "Barrier" / "quorum1-pass.litmus"],
    ids=lambda p: p.stem,
)
def test_layout_is_a_bijection_that_honours_placement(path: Path) -> None:
    p = litmus.parse_file(path)
    lay = codegen._layout(p)
    ntest = 16
    C = lay.cluster
    nQ = ntest // C
    rng = random.Random(path.stem)
    # knob stripe_ctas: neighbouring CTAs, or a random distance; RunConfig.cta_threads: the CTA's
    # threads (P.lb, P.cm, P.wm of harness_helpers.cuh), as many as the roles' warps allow
    for stripe, ct in [(s, ct) for s in (False, True) for ct in (256, 128, 64, 32) if ct >= 32 * lay.warps]:
        lb, cm, wm = ct.bit_length() - 1, ct - 1, ct // 32 - 1
        h0 = rng.getrandbits(32)
        seed, h = h0, _mix(h0 + 1)
        mw, ml = (h & 7) | 1, ((h >> 3) & 31) | 1
        f = [1] + [(_mix(h0 ^ (0x5100 + g)) & 255) | 1 for g in range(1, 8)]
        where: dict[tuple[int, int], tuple[int, int]] = {}
        for lcta in range(ntest):
            lq, rank = divmod(lcta, C)
            for t in range(ct):
                for r in lay.roles:
                    hi = ((t >> 5) - r.warp_class * mw) & wm
                    lo = ((t & 31) - r.lane_class * ml) & 31
                    # fz_inv8: the inverse mod 256, so mod the CTA's threads too
                    L = ((hi << 5 | lo) * pow(f[r.cta_group], -1, 256)) & cm
                    dq = 0
                    if lay.n_cluster_groups > 1 and r.cluster_group > 0:
                        m = (nQ - 1) // (lay.n_cluster_groups - 1)
                        dq = r.cluster_group * (1 if stripe else 1 + ((L + seed) % m))
                    rk = (rank + C - r.rank) % C if C > 1 else 0
                    inst = ((((lq + nQ - dq) % nQ) * C + rk) << lb) | L
                    assert (inst, r.index) not in where
                    where[(inst, r.index)] = (lcta, t)
        assert len(where) == ntest * ct * len(lay.roles)
        for inst in range(ntest * ct):
            for a in lay.roles:
                for b in lay.roles:
                    (ca, ta), (cb, tb) = where[(inst, a.index)], where[(inst, b.index)]
                    pa, pb = p.threads[a.index].placement, p.threads[b.index].placement
                    assert (ca == cb) == pa.same_cta(pb)
                    if stripe:  # cluster group g sits g clusters on from group 0's
                        assert (cb // C - ca // C) % nQ == (b.cluster_group - a.cluster_group) % nQ
                    if C > 1:
                        assert (ca // C == cb // C) == pa.same_cluster(pb)
                    if ca == cb and a.index != b.index:
                        assert ta != tb
                        assert ((ta >> 5) == (tb >> 5)) == (pa.warp is not None and pa.warp == pb.warp)


# --------------------------------------------------------------------------------------------
# SASS of the harness: order kept, delay loop kept (fuzzgpu.sass)
# --------------------------------------------------------------------------------------------


def _have_disassembler() -> bool:
    from fuzzgpu import sass  # an import error is an error, not a skip

    return sass.find_tool("nvdisasm") is not None or sass.find_tool("cuobjdump") is not None


@needs_nvcc
@pytest.mark.skipif(not _have_disassembler(), reason="no nvdisasm/cuobjdump (pip install nvidia-cuda-nvdisasm)")
def test_harness_sass_has_no_findings() -> None:
    from fuzzgpu import sass

    progs = [litmus.parse_file(f) for f in sorted(GPU.glob("*.litmus"))]
    assert len(progs) >= 10, f"{GPU}: {len(progs)} litmus files (an empty folder checks nothing)"
    src, specs = codegen.generate_module(progs)
    # the class-D programs (tensormap.replace) make it an sm_90a module, as the cuda backend compiles it
    reps = sass.check_cu_source(src, [codegen.harness_arch(progs, "sm_90")], source="harness")
    findings = [f for r in reps for f in r.findings]
    assert findings == [], findings[:3]
    names = {fn.short_name for r in reps for fn in r.functions}
    assert {s.kernel for s in specs} <= names


def test_barrier_programs_run_in_segments() -> None:
    """The j-th litmus barrier of every role is one hardware barrier episode: P1's store before the
    barrier is emitted before it, P0's load after it after it (whatever role runs first)."""
    from fuzzgpu.ir import Barrier

    p = validate(
        Program(
            "SB-bar",
            (
                Thread("P0", Placement(cta=0), (Store("x", 1), Barrier(1), Load("r0", "y"))),
                Thread("P1", Placement(cta=0), (Store("y", 1), Barrier(1), Load("r1", "x"))),
            ),
            (Location("x"), Location("y")),
        )
    )
    assert codegen.unrunnable_reasons(p) == []
    src, _ = codegen.harness_source(p)
    body = src[src.index("---- role 0") : src.index("unsigned* resc")]
    stores = [m.start() for m in re.finditer(r"st\.global\.u32", body)]
    loads = [m.start() for m in re.finditer(r"ld\.global\.u32", body)]
    bars = [m.start() for m in re.finditer(r"barrier\.sync 1;", body)]
    assert len(bars) == 1 and max(stores) < bars[0] < min(loads)
    # a count that is not the CTA's thread count, and different barriers in one CTA: refused
    q = validate(Program("q", (Thread("P0", Placement(), (Barrier(1, 1),)), Thread("P1", Placement(), (Barrier(1, 1),))), ()))
    assert any("thread count" in r for r in codegen.unrunnable_reasons(q))
    d = validate(Program("d", (Thread("P0", Placement(), (Barrier(1),)), Thread("P1", Placement(), (Barrier(2),))), ()))
    assert any("different barriers" in r for r in codegen.unrunnable_reasons(d))


@needs_nvcc
@pytest.mark.skipif(not _have_disassembler(), reason="no nvdisasm/cuobjdump (pip install nvidia-cuda-nvdisasm)")
def test_fillers_survive_in_sass() -> None:
    """A %clock delay, a register loop and shared-memory traffic are emitted and not deleted."""
    from fuzzgpu import sass
    from fuzzgpu.ir import Filler

    p = validate(
        Program(
            "fill",
            (
                Thread("P0", Placement(cta=0), (Store("x", 1), Filler("delay", 1000), Filler("regloop", 64), Store("y", 1, Sem.RELEASE))),
                Thread("P1", Placement(cta=1), (Filler("smem", 8), Load("r0", "y", Sem.ACQUIRE), Filler("delay", 500), Load("r1", "x"))),
            ),
            (Location("x"), Location("y")),
        )
    )
    src = codegen.generate_static(p)
    assert src.count("fz_delay(") >= 2 and "1664525u" in src and "fz_scratch_smem" in src
    reps = sass.check_cu_source(src, ["sm_90"], source="fill")
    assert [f for r in reps for f in r.findings] == []
    harness, _ = codegen.harness_source(p)
    reps = sass.check_cu_source(harness, ["sm_90"], source="fill-harness")
    assert [f for r in reps for f in r.findings] == []


# --------------------------------------------------------------------------------------------
# Extension IR in the static kernels: PDL, mbarrier, bulk copies, cp.async, tcgen05
# --------------------------------------------------------------------------------------------

PDL_DIR = ROOT / "tests" / "litmus" / "pdl"

# FlashMLA's shape (facts/toolchain-and-ptxas.md §4, T3): a shared-memory prologue and a bar.sync
# before griddepcontrol.wait give ptxas room to hoist the ld.global.nc above ACQBULK
PDL_HOIST = """PTX PDL-hoist-{name}
"a shared-memory prologue and bar.sync before griddepcontrol.wait, then a {load} of x"
{{
x=0;
grid 1 @ pdl;
}}
 P0@cta 0,gpu 0,grid 0            | P1@cta 0,gpu 0,grid 1 ;
 griddepcontrol.launch_dependents | filler.smem 4         ;
 st.weak x, 1                     | bar.sync 0            ;
                                  | griddepcontrol.wait   ;
                                  | {load} r1, x    ;
exists (P1:r1 == 0)
"""


def _static_text(progs: list[Program], arch: str | None = None) -> str:
    parts = [codegen.PRELUDE]
    for i, p in enumerate(progs):
        parts.append(codegen.generate_static(p, arch).replace("fuzzgpu_", f"fuzzgpu_{i}_"))
    return "\n".join(parts)


def test_static_emits_extension_instructions_as_inline_ptx() -> None:
    src = {f.stem: codegen.generate_static(litmus.parse_file(f)) for f in own_litmus()
           if f.parent.name not in ("race-wgmma", "race-tensormap")}  # refused: test_every_litmus_file_generates_static...
    want = {
        "PDL-wait-nc": ["griddepcontrol.launch_dependents;", "griddepcontrol.wait;", "ld.global.nc.u32"],
        "MBAR-MP-default": ["mbarrier.init.shared::cta.b64 [%0], 1;", "mbarrier.arrive.release.cta.shared::cta.b64",
                            "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p_, [%1], 0;", "selp.u32"],
        "TMA-load-mbarrier-acquire": ["mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 st_, [%0], 16;",
                                      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 16, [%2];"],
        "TMA-store-fence-writer": ["fence.proxy.async.shared::cta;", "cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], 16;",
                                   "cp.async.bulk.commit_group;", "cp.async.bulk.wait_group 0;"],
        "TMA-store-wait-read": ["cp.async.bulk.wait_group.read 0;"],
        "CPASYNC-mbarrier-arrive": ["cp.async.ca.shared.global [%0], [%1], 4;", "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];"],
        "CPASYNC-wait-all": ["cp.async.wait_all;"],
        "CPASYNC-commit-wait-group-0": ["cp.async.commit_group;", "cp.async.wait_group 0;"],
        "WGMMA-read-no-fence": ["async.read: stands for a wgmma/tcgen05 operand read", "ld.shared.u32"],
    }
    for name, frags in want.items():
        for frag in frags:
            assert frag in src[name], (name, frag)
    # every extension asm statement has the memory clobber
    for name, text in src.items():
        for line in text.splitlines():
            if "asm volatile(" in line and any(k in line for k in ("mbarrier", "griddepcontrol", "cp.async", "fence.proxy")):
                assert '"memory")' in line, (name, line)


def test_tcgen05_fence_is_refused_off_sm100a() -> None:
    from fuzzgpu.ir import Tcgen05Fence

    p = validate(Program("tc", (Thread("P0", Placement(), (Tcgen05Fence("before_thread_sync"),)),)))
    with pytest.raises(codegen.Unrunnable, match="tcgen05.fence::before_thread_sync needs sm_100a"):
        codegen.generate_static(p, "sm_90")
    assert "tcgen05.fence::before_thread_sync;" in codegen.generate_static(p, "sm_100a")
    # without an arch the device pass of another arch stops with a clear #error
    assert '#error "fuzzgpu: tcgen05.fence::before_thread_sync exists only on sm_100a' in codegen.generate_static(p)
    # and the H200 harness never runs it
    assert any("tcgen05" in r for r in codegen.unrunnable_reasons(p))


@needs_nvcc
def test_tcgen05_fence_compiles_for_sm100a_and_stops_sm90_clearly(tmp_path: Path) -> None:
    from fuzzgpu.ir import Tcgen05Fence

    p = validate(Program("tc", (Thread("P0", Placement(), (Tcgen05Fence("after_thread_sync"),)),)))
    src = codegen.generate_static(p)
    assert _nvcc(src, "sm_100a", tmp_path, "tc").returncode == 0
    r = _nvcc(src, "sm_90", tmp_path, "tc")
    assert r.returncode != 0 and "exists only on sm_100a" in r.stderr


@needs_nvcc
@pytest.mark.skipif(not _have_disassembler(), reason="no nvdisasm/cuobjdump (pip install nvidia-cuda-nvdisasm)")
def test_static_pdl_nc_load_is_hoisted_above_acqbulk_and_plain_is_clean() -> None:
    """The SASS oracle on the static PDL kernels: the catalogue compiles and has no forbidden
    move; with a prologue before the wait, ptxas hoists ld.global.nc above ACQBULK on sm_90 and
    sm_100a (a permitted hazard: FlashMLA's race), and never a plain load."""
    from fuzzgpu import sass

    nc = litmus.parse(PDL_HOIST.format(name="nc", load="ld.global.nc"))
    plain = litmus.parse(PDL_HOIST.format(name="plain", load="ld.weak     "))
    cat = [litmus.parse_file(f) for f in sorted(PDL_DIR.glob("*.litmus"))]
    assert len(cat) >= 9
    progs = [nc, plain] + cat
    reports = sass.check_cu_source(_static_text(progs), ("sm_90", "sm_100a"), 3, name="pdl_static")
    assert {r.arch for r in reports} == {"sm_90", "sm_100a"}
    for rep in reports:
        by_fn: dict[str, list] = {}
        for fn in rep.functions:
            by_fn[fn.name] = list(fn.findings)
        assert not [f for f in rep.findings if f.verdict == sass.FORBIDDEN], rep.arch
        hoisted = [f for f in by_fn["fuzzgpu_0_P1"] if f.direction == sass.HOISTED and "ACQBULK" in f.sync_sass]
        assert hoisted and all(f.verdict == sass.HAZARD and "ld.global.nc" in f.op_ptx for f in hoisted), rep.arch
        assert by_fn["fuzzgpu_1_P1"] == [], (rep.arch, by_fn["fuzzgpu_1_P1"])
        # the catalogue: nothing before the wait, so the nc load stays after ACQBULK
        for name, fs in by_fn.items():
            if not name.startswith(("fuzzgpu_0_", "fuzzgpu_1_")):
                assert not [f for f in fs if "ACQBULK" in f.sync_sass], (rep.arch, name, fs)


def test_every_litmus_file_generates_static_or_is_refused_with_a_counted_reason() -> None:
    """Static kernels (sm_90 and sm_100a): every file under tests/ generates (compiled by
    test_every_litmus_test_compiles_sm90_sm100a), but issue 32's register-level wgmma (class F: its own
    warpgroup kernel, fuzzgpu.codegen.wgmma_regs) catalogue, refused with that reason, the tensor-memory
    catalogue (classes E/G) for sm_90, which lacks tcgen05 (it generates for sm_100a), and the tensor-map
    rewrite catalogue (class D, and its GPU forms tests/litmus/gpu/D-*) for sm_90: tensormap.replace needs the arch-specific sm_90a (the static
    backend compiles it for sm_90a; it generates for sm_100a); the Dat3M files refused are exactly those
    with an abstract proxy (no PTX instruction) -- 81 of 183."""
    refused: dict[tuple[str, str], list[str]] = {}
    n = 0
    for f, p in _programs():
        for arch in ("sm_90", "sm_100a"):
            n += 1
            try:
                codegen.generate_static(p, arch)
            except codegen.Unrunnable as e:
                refused[(str(f), arch)] = e.reasons
    ours = {k: v for k, v in refused.items() if DAT3M not in Path(k[0]).parents}
    not_emitted = {k: v for k, v in ours.items() if Path(k[0]).parent.name == "race-wgmma"}
    sm100 = {k: v for k, v in ours.items() if Path(k[0]).parent.name == "race-tcgen05"}
    sm90a = {k: v for k, v in ours.items() if Path(k[0]).parent.name == "race-tensormap" or Path(k[0]).name.startswith("D-")}
    assert ours == {**not_emitted, **sm100, **sm90a}, ours
    assert all(any("runs only as the warpgroup kernel" in r for r in rs) for rs in not_emitted.values()), not_emitted
    catalogue = list((ROOT / "tests" / "litmus" / "race-wgmma").glob("*.litmus"))
    assert len(not_emitted) == 2 * len(catalogue)
    # tensor memory (classes E/G): generated for sm_100a, refused for sm_90 for the arch alone
    tcgen05 = list((ROOT / "tests" / "litmus" / "race-tcgen05").glob("*.litmus"))
    assert {k[1] for k in sm100} == {"sm_90"} and len(sm100) == len(tcgen05), sm100
    assert all("needs sm_100a" in r for rs in sm100.values() for r in rs), sm100
    # tensor-map rewrites (class D): generated for sm_100a, refused for sm_90 for the arch alone
    tensormap = [*(ROOT / "tests" / "litmus" / "race-tensormap").glob("*.litmus"), *(ROOT / "tests" / "litmus" / "gpu").glob("D-*.litmus")]
    assert {k[1] for k in sm90a} == {"sm_90"} and len(sm90a) == len(tensormap), sm90a
    assert all("needs an arch-specific target (sm_90a" in r for rs in sm90a.values() for r in rs), sm90a
    refused = {k: v for k, v in refused.items() if k not in not_emitted and k not in sm100 and k not in sm90a}
    assert all(any("abstract" in r for r in rs) for rs in refused.values()), refused
    assert len(refused) == 2 * 81


def test_unrunnable_survives_pickling():
    """A supervised campaign worker sends the exception to its parent pickled; with the default
    reduction the parent died unpickling it (TypeError: missing 'reasons'), and every worker of an
    H200 campaign on profile `all` was given up after 20 restarts."""
    import pickle

    from fuzzgpu.codegen import Unrunnable

    e = pickle.loads(pickle.dumps(Unrunnable("P", ["async.read on the GPU", "tcgen05"])))
    assert isinstance(e, Unrunnable) and e.reasons == ["async.read on the GPU", "tcgen05"] and "cannot run on the GPU" in str(e)
    e = pickle.loads(pickle.dumps(Unrunnable("P", ["wgmma"], "has no static kernels")))
    assert str(e) == "P: has no static kernels: wgmma" and e.what == "has no static kernels"


# a program of an H200 campaign (profile all, property model, 2026-12-01): every instance timed out,
# because each hardware thread plays P2's spin (segment 0: P2 passes no barrier) before P1's `red`
# (segment 1: after the litmus bar.sync) -- in every thread, so no write ever came; the model says
# the wait must complete, and the campaign reported a timeout finding that was the harness's
_SPIN_BEFORE_WRITER = """PTX spin-before-writer
{ x0 @ shared = 0; bar0 @ shared mbarrier = 0; out0=0; x1=0; f0=0; }
 P0@cta 0,gpu 0                       | P1@cta 0,gpu 0                                   | P2@cta 1,gpu 0           ;
 mbarrier.init bar0, 1                | bar.cta.sync 0                                   | LC00:                    ;
 bar.cta.sync 0                       | mbarrier.try_wait.parity.acquire.cta r0, bar0, 0 | ld.acquire.sys r0, f0    ;
 st.relaxed.gpu x0, 1                 | cp.async.bulk.bulk_group out0, x0, 4             | bne r0, 3, LC00          ;
 fence.sc.cluster                     | cp.async.bulk.commit_group                       | fence.proxy.async.global ;
 mbarrier.arrive.relaxed.cluster bar0 | st.release.sys x1, 2                             | ld.volatile r1, x1       ;
                                      | fence.acq_rel.sys                                |                          ;
                                      | red.release.gpu.add f0, 3                        |                          ;
exists (P2:r0 == 3)
"""


def test_a_spin_on_a_write_the_harness_plays_after_it_is_refused():
    p = litmus.parse(_SPIN_BEFORE_WRITER)
    reasons = [r for r in codegen.unrunnable_reasons(p) if "spins on" in r]
    assert reasons == ["P2:2 spins on f0, which P1:6 writes in code the harness plays after that spin in every "
                       "hardware thread (every instance would time out)"], reasons
    # the writer before the spin (in the harness's order) is runnable: P0 stores the flag, P1 spins
    ok = litmus.parse("PTX mp-spin\n{ x=0; f=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak x, 1 | LC00: ;\n"
                      " st.release.gpu f, 1 | ld.acquire.gpu r0, f ;\n | beq r0, 0, LC00 ;\n | ld.weak r1, x ;\n"
                      "exists (P1:r1 == 0)\n")
    assert not [r for r in codegen.unrunnable_reasons(ok) if "spins on" in r]
