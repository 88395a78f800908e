"""``async.read`` as wgmma (fuzzgpu.codegen.wgmma): the tile / selection-matrix / accumulator maps
(a numpy model of the matrix descriptor and of the m64nNk32 D fragment), what runnability refuses,
the fence placement in the generated CUDA, and nvcc + SASS for sm_90a (skipped without nvcc).
The GPU runs are tests/gpu/test_gpu_wgmma.py."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from fuzzgpu import codegen, litmus
from fuzzgpu.codegen import wgmma as wg
from fuzzgpu.ir import AsyncRead, Barrier, Branch, Cond, Label, Load, Location, Placement, Program, Space, Store, Thread, validate

ROOT = Path(__file__).resolve().parents[1]
ASYNC = ROOT / "litmus" / "async-proxy"
WGMMA_FILES = sorted(ASYNC.glob("WGMMA-*.litmus"))
NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH")


# --------------------------------------------------------------------------------------------
# The maps, against a model of what the hardware does with the descriptors
# --------------------------------------------------------------------------------------------


def _matrix(mem: bytes, rows: int) -> np.ndarray:
    """A rows x 32-byte K-major operand read through a descriptor with the module's LBO/SBO."""
    return np.array([[mem[wg.tile_offset(r, k)] for k in range(32)] for r in range(rows)], dtype=np.int64)


def _thread_word(D: np.ndarray, q: int) -> int:
    """What fz_wg_read returns in thread q, from the m64nNk32 D fragment (PTX ISA figure for D)."""
    w, lane = q >> 5, q & 31
    r1, r2 = 16 * w + lane // 4, 16 * w + lane // 4 + 8
    d = [0] * 8
    for i in range(2):
        for b in range(2):
            col = 8 * i + 2 * (lane % 4) + b
            d[4 * i + b] = int(D[r1][col])
            d[4 * i + 2 + b] = int(D[r2][col])
    hi = (q & 2) != 0
    bs = (d[2], d[3], d[6], d[7]) if hi else (d[0], d[1], d[4], d[5])
    return sum((v & 255) << (8 * n) for n, v in enumerate(bs))


def test_slots_partition_the_tile() -> None:
    offs = [wg.slot_offset(q) for q in range(128)]
    assert sorted(offs) == list(range(0, wg.TILE_BYTES, wg.SLOT_BYTES))


def test_every_thread_reads_its_own_slot_word_and_nothing_else() -> None:
    tile = bytearray([0xFF] * wg.TILE_BYTES)  # pads: all-ones bytes, so a wrong B column shows
    for q in range(128):
        o = wg.slot_offset(q)
        tile[o : o + 4] = wg.selftest_word(q, 0).to_bytes(4, "little")
    A = _matrix(bytes(tile), 64)
    B = _matrix(wg.b_bytes(), 16)  # N rows of K bytes
    D = A @ B.T
    assert [_thread_word(D, q) for q in range(128)] == [wg.selftest_word(q, 0) for q in range(128)]
    # B is one-hot per column: D[m][n] is one A byte, never a sum (u8 x {0,1} is exact)
    assert (B.sum(axis=1) == 1).all()


def test_descriptor_fields() -> None:
    d = wg.descriptor(0x1230)
    assert d & 0x3FFF == 0x123 and (d >> 16) & 0x3FFF == wg.LBO >> 4 and (d >> 32) & 0x3FFF == wg.SBO >> 4
    assert d >> 62 == 0  # no swizzle


def test_device_slot_formula_matches_the_python_map() -> None:
    # the C++ fz_wg_word (words) evaluated in Python through its own text
    m = re.search(r"fz_wg_word\(unsigned q\) \{\s*return (.*?);\s*\}", wg.helpers(), re.S)
    assert m is not None
    expr = m.group(1).replace("u", "")
    for q in range(256):
        assert eval(expr, {"q": q}) * 4 == (q >> 7) * wg.TILE_BYTES + wg.slot_offset(q & 127)  # noqa: S307


# --------------------------------------------------------------------------------------------
# Runnability: what runs, what is refused, with reasons
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", WGMMA_FILES, ids=lambda p: p.stem)
def test_oracle_async_read_programs_run(path: Path) -> None:
    assert codegen.unrunnable_reasons(litmus.parse_file(path)) == []


def _prog(threads: tuple[Thread, ...], n_shared: int = 1) -> Program:
    locs = tuple(Location(f"s{i}" if i else "s", space=Space.SHARED) for i in range(n_shared))
    return validate(Program("p", threads, locs))


def _pair() -> Program:
    """Two reading threads of one CTA, each reading the location the other wrote."""
    return _prog((Thread("P0", Placement(cta=0), (Store("s1", 1), AsyncRead("r0", "s"))),
                  Thread("P1", Placement(cta=0), (Store("s", 1), AsyncRead("r1", "s1")))), n_shared=2)


def test_refusals_name_what_cannot_run() -> None:
    loop = _prog((Thread("P0", Placement(cta=0), (Label("L"), Load("r0", "s"), Branch(Cond.EQ, "r0", 0, "L"))),
                  Thread("P1", Placement(cta=0), (AsyncRead("r1", "s"),))))
    assert any("P0: control flow" in r and "warpgroup" in r for r in codegen.unrunnable_reasons(loop))
    two = _prog((Thread("P0", Placement(cta=0), (AsyncRead("r0", "s"),)),
                 Thread("P1", Placement(cta=0), (AsyncRead("r1", "s"),))))
    assert any("async.read of s in threads P0, P1" in r for r in codegen.unrunnable_reasons(two))
    # two readers of different locations in one CTA: each location's tiles follow its reader
    pair = _pair()
    assert codegen.unrunnable_reasons(pair) == []
    src, _ = codegen.harness_source(pair)
    # s is laid out by P0's role map (warp class 0), s1 by P1's (warp class 1)
    assert "fz_sm + (0u * 1024u + fz_wg_word(fz_rot(((inst1_L) * P.f[0]) & P.cm, 0u," in src
    assert "fz_sm + (1u * 1024u + fz_wg_word(fz_rot(((inst0_L) * P.f[0]) & P.cm, 1u," in src
    many = _prog((Thread("P0", Placement(cta=0), (AsyncRead("r0", "s"),)),), n_shared=wg.MAX_SHARED_LOCATIONS + 1)
    assert any("shared locations with async.read" in r for r in codegen.unrunnable_reasons(many))
    # readers in different CTAs are fine (one per CTA)
    apart = validate(Program("q", (Thread("P0", Placement(cta=0), (Store("s", 1), AsyncRead("r0", "s"))),
                                   Thread("P1", Placement(cta=1), (Store("t", 1), AsyncRead("r1", "t")))),
                             (Location("s", space=Space.SHARED), Location("t", space=Space.SHARED))))
    assert codegen.unrunnable_reasons(apart) == []


def test_arch_sm90_compiles_as_sm90a_and_other_arches_refuse() -> None:
    p = litmus.parse_file(ASYNC / "WGMMA-read-no-fence.litmus")
    plain = litmus.parse_file(ASYNC / "TMA-store-no-fence.litmus")
    assert codegen.harness_arch([p, plain], "sm_90") == "sm_90a"
    assert codegen.harness_arch([plain], "sm_90") == "sm_90"
    assert codegen.harness_arch([plain], "sm_100a") == "sm_100a"
    with pytest.raises(codegen.Unrunnable, match="only sm_90a has"):
        codegen.harness_arch([p], "sm_100a")


# --------------------------------------------------------------------------------------------
# The generated CUDA: a wgmma per async.read, the fence exactly where the IR has it
# --------------------------------------------------------------------------------------------


def _role_sections(src: str) -> dict[str, str]:
    """role name -> its test code (all segments joined), from the harness's role comments."""
    test = src[src.index("// ---- role") : src.index("unsigned* resc")]
    out: dict[str, str] = {}
    for part in test.split("// ---- role ")[1:]:
        name = part.split(":", 1)[1].split()[0]
        out[name] = out.get(name, "") + part
    return out


@pytest.mark.parametrize("path", WGMMA_FILES, ids=lambda p: p.stem)
def test_fence_exactly_where_the_ir_has_it(path: Path) -> None:
    p = litmus.parse_file(path)
    src, _ = codegen.harness_source(p)
    fence = "fence.proxy.async.shared::cta;"
    # the harness's own fence: once, before the test (the initial state and B to the async proxy)
    assert src.count(fence) == 1 + sum(1 for t in p.threads for i in t.code if i.OP == "fence.proxy")
    assert src.index("harness: initial state to the async proxy") < src.index("// ---- role")
    sections = _role_sections(src)
    for t in p.threads:
        code = sections[t.name]
        ir_ops = [i.OP for i in t.code if i.OP in ("fence.proxy", "async.read", "st")]
        emitted = re.findall(r"(fence\.proxy\.async\.shared::cta;|fz_wg_read\(|st\.shared\.u32)", code)
        as_ops = [{"fence.proxy.async.shared::cta;": "fence.proxy", "fz_wg_read(": "async.read",
                   "st.shared.u32": "st"}[e] for e in emitted]
        assert as_ops == ir_ops, (t.name, as_ops, ir_ops)


# --------------------------------------------------------------------------------------------
# nvcc (sm_90a) and the SASS
# --------------------------------------------------------------------------------------------


def _nvdisasm() -> str | None:
    from fuzzgpu import sass  # an import error is an error, not a skip

    return sass.find_tool("nvdisasm")


@needs_nvcc
def test_async_read_programs_compile_for_sm90a_with_one_igmma_per_read(tmp_path: Path) -> None:
    progs = [litmus.parse_file(f) for f in WGMMA_FILES] + [_pair()]
    src, specs = codegen.generate_module(progs)
    cu = tmp_path / "wg.cu"
    cu.write_text(src)
    cubin = tmp_path / "wg.cubin"
    r = subprocess.run([NVCC, "-cubin", "-arch=sm_90a", "-O3", "-w", "-o", str(cubin), str(cu)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    # sm_90 (no "a") has no wgmma: the module says so instead of failing in ptxas
    r90 = subprocess.run([NVCC, "-cubin", "-arch=sm_90", "-O3", "-w", "-o", str(tmp_path / "x.cubin"), str(cu)],
                         capture_output=True, text=True)
    assert r90.returncode != 0 and "only sm_90a has" in r90.stderr
    nd = _nvdisasm()
    if nd is None:
        pytest.skip("no nvdisasm (pip install nvidia-cuda-nvdisasm) for the SASS half")
    text = subprocess.run([nd, "-c", str(cubin)], capture_output=True, text=True, check=True).stdout
    funcs = re.split(r"\.text\.(fzh_\w+):", text)
    bodies = {funcs[i]: funcs[i + 1] for i in range(1, len(funcs) - 1, 2)}
    for p, s in zip(progs, specs):
        body = bodies[s.kernel]
        reads = sum(1 for t in p.threads for i in t.code if isinstance(i, AsyncRead))
        fences = sum(1 for t in p.threads for i in t.code if i.OP == "fence.proxy")
        assert body.count("IGMMA.64x16x32.U8.U8") == reads, p.name
        assert body.count("FENCE.VIEW.ASYNC.S") == 1 + fences, p.name  # the harness's, then the IR's


@needs_nvcc
def test_harness_sass_check_is_clean_for_async_read_programs() -> None:
    if _nvdisasm() is None:
        pytest.skip("no nvdisasm")
    from fuzzgpu import sass

    progs = [litmus.parse_file(f) for f in WGMMA_FILES]
    src, _ = codegen.generate_module(progs)
    reps = sass.check_cu_source(src, ["sm_90a"], source="harness")
    assert [f for r in reps for f in r.findings] == []


@needs_nvcc
def test_selftest_kernel_compiles(tmp_path: Path) -> None:
    cu = tmp_path / "st.cu"
    cu.write_text(wg.selftest_source())
    r = subprocess.run([NVCC, "-cubin", "-arch=sm_90a", "-O3", "-w", "-o", str(tmp_path / "st.cubin"), str(cu)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]


def test_barrier_program_keeps_its_barrier() -> None:
    p = litmus.parse_file(ASYNC / "WGMMA-read-fence-writer.litmus")
    assert any(isinstance(i, Barrier) for t in p.threads for i in t.code)
    src, _ = codegen.harness_source(p)
    sections = _role_sections(src)
    # the writer's fence comes before the litmus barrier, the read after it
    test = src[src.index("// ---- role") :]
    assert test.index("fence.proxy.async.shared::cta;") < test.index("the litmus barrier") < test.index("fz_wg_read(")
    assert "fz_wg_read(" in sections["P1"] and "fz_wg_read(" not in sections["P0"]


# --------------------------------------------------------------------------------------------
# Bulk reductions (cp.reduce.async.bulk): .add/.and/.or/.xor run, with exact values
# --------------------------------------------------------------------------------------------

REDUCE_FILES = sorted(ASYNC.glob("TMA-reduce-*.litmus"))


@pytest.mark.parametrize("path", REDUCE_FILES, ids=lambda p: p.stem)
def test_bulk_add_runs_with_exact_primed_values(path: Path) -> None:
    p = litmus.parse_file(path)
    assert codegen.unrunnable_reasons(p) == []
    src, spec = codegen.harness_source(p)
    assert spec.needs_prime and spec.values == "exact" and spec.slot_words == 4
    assert src.count("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32") == 1


def test_bulk_min_is_refused_with_its_reason() -> None:
    text = (ASYNC / "TMA-reduce-add-fence.litmus").read_text().replace("shared.add g, s", "shared.min g, s")
    reasons = codegen.unrunnable_reasons(litmus.parse(text))
    assert any("cp.reduce.async.bulk .min" in r and "signed" in r for r in reasons), reasons


@needs_nvcc
def test_bulk_reductions_compile_for_sm90(tmp_path: Path) -> None:
    src, _ = codegen.generate_module([litmus.parse_file(f) for f in REDUCE_FILES])
    cu = tmp_path / "red.cu"
    cu.write_text(src)
    r = subprocess.run([NVCC, "-cubin", "-arch=sm_90", "-O3", "-w", "-o", str(tmp_path / "red.cubin"), str(cu)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
