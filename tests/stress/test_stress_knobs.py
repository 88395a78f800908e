"""fuzzgpu.stress: every knob of the search space really changes the harness kernel or its launch
(CPU only: generated CUDA, the launch geometry, the kernel's knobs word; nvcc where installed)."""

from __future__ import annotations

import dataclasses
import shutil

import pytest

from fuzzgpu import codegen, litmus
from fuzzgpu.backends import cuda, geometry
from fuzzgpu.backends.base import PRE_STRESS_MAX, RunConfig
from fuzzgpu.stress.space import BOUNDS, SPACE, StressConfig, sample
from paths import LITMUS

MP = LITMUS / "gpu" / "MP-relaxed-gpu.litmus"


def _geometry(sc: StressConfig) -> geometry.LaunchGeometry:
    _, spec = codegen.harness_source(litmus.parse_file(MP))
    return geometry.launch_geometry(spec, sc.run_config(), smem_per_sm=228 * 1024, static_smem=2048)


@pytest.mark.parametrize("knob", sorted(SPACE))
def test_every_knob_changes_the_launch(knob: str) -> None:
    base = StressConfig()
    g0 = _geometry(base)
    p0 = geometry.cta_permutations(g0.grid, 4, 7, base.permute_ctas)
    for v in SPACE[knob]:
        if v == getattr(base, knob):
            continue
        sc = dataclasses.replace(base, **{knob: v})
        g = _geometry(sc)
        perms = geometry.cta_permutations(g.grid, 4, 7, sc.permute_ctas)
        assert g != g0 or perms.shape != p0.shape or (perms != p0).any(), (knob, v)


def test_default_is_in_the_space_and_every_value_in_bounds() -> None:
    d = StressConfig().to_table()
    for k, vals in SPACE.items():
        assert d[k] in vals
        lo, hi = BOUNDS.get(k, (None, None))
        if lo is not None:
            assert all(lo <= v <= hi for v in vals), k


def test_knobs_word_fields_are_distinct() -> None:
    words = {dataclasses.replace(RunConfig(), **{k: v}).knobs_word() for k, v in
             [("permute_threads", False), ("shuffle_locations", False), ("stress_pattern", 3),
              ("pre_stress_pattern", 3), ("stress_by_cta", True), ("pre_stress", 5), ("stripe_ctas", True),
              ("stress_word", True)]}
    assert len(words) == 8 and 0 not in words
    # the most pre-test stress iterations stay clear of stress_word's bit (and the reverse)
    most = dataclasses.replace(RunConfig(), pre_stress=PRE_STRESS_MAX).knobs_word()
    word = dataclasses.replace(RunConfig(), stress_word=True).knobs_word()
    assert most & word == 0 and most >> 8 == PRE_STRESS_MAX and word == 1 << 31
    assert RunConfig().knobs_word() == 0  # the defaults run the harness as before


def test_the_device_reads_the_pre_stress_bits_the_host_writes() -> None:
    """The harness's mask of the pre-test stress's iterations is the host's largest value, and the
    JSON schema's bound is the same: one constant, three readers."""
    import re

    from fuzzgpu.codegen.resources import HARNESS_HELPERS
    from fuzzgpu.schema import _STRESS

    m = re.search(r"#define FZ_PRE_STRESS_MASK (0x[0-9a-f]+)u", HARNESS_HELPERS)
    assert m is not None and int(m.group(1), 16) == PRE_STRESS_MAX
    assert _STRESS["properties"]["pre_stress"]["maximum"] == PRE_STRESS_MAX == BOUNDS["pre_stress"][1]


def test_occupancy_cap_fits_k_and_not_k_plus_1() -> None:
    smem, static = 228 * 1024, 3000
    for k in (1, 2, 3, 4, 7):
        s = geometry.occupancy_shared_bytes(k, smem, static)
        per = s + static + geometry.RESERVED_SMEM_PER_CTA
        assert k * per <= smem < (k + 1) * per
    assert geometry.occupancy_shared_bytes(0, smem, static) == 0
    assert geometry.occupancy_shared_bytes(8, smem, static) == 0


def test_shared_opt_in_counts_static_and_dynamic_together() -> None:
    """CUDA Programming Guide, "Shared Memory": a block's shared memory above 48 KB needs the opt-in
    (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), whose default is 48 KB less the kernel's static
    size.  The H200 refused a harness with 8,816 static bytes launched with the 48,528 dynamic bytes
    of ``ctas_per_sm = 4`` (57,344 in all) when only the dynamic part was compared with 48 KB."""
    smem = 233_472  # the H200's shared memory per SM (cudaDevAttrMaxSharedMemoryPerMultiprocessor)
    for static in (0, 8_816, 32_784):
        dynamic = geometry.occupancy_shared_bytes(4, smem, static)
        assert static + dynamic == 57_344 and geometry.needs_shared_opt_in(static, dynamic)
    assert not geometry.needs_shared_opt_in(8_816, 0)  # no dynamic shared memory: nothing to raise
    assert not geometry.needs_shared_opt_in(8_816, 48 * 1024 - 8_816)  # exactly 48 KB: the default holds
    assert geometry.needs_shared_opt_in(8_816, 48 * 1024 - 8_816 + 1)


def test_identity_cta_permutation() -> None:
    p = geometry.cta_permutations(10, 3, 1, permute=False)
    assert (p == list(range(10))).all()
    assert not (geometry.cta_permutations(10, 3, 1, permute=True) == list(range(10))).all()


def test_harness_source_consumes_the_knobs() -> None:
    src, _ = codegen.harness_source(litmus.parse_file(MP))
    assert "unsigned long long epoch_arg, unsigned knobs," in src
    assert "fz_pre_stress(scratch, scratch_lines, knobs)" in src
    assert "fz_stress(scratch, scratch_lines, ctlg, ntest * (blockDim.x >> 5), knobs)" in src
    # the knobs that shape the placement (bits 0-1) reach the launch parameters through the host's table
    assert "const FzParams* ptab, unsigned pmask)" in src and "fz_params(P, ptab, pmask, epoch);" in src


def test_table_round_trip_and_bad_values() -> None:
    for sc in sample(__import__("random").Random(3), 20):
        assert StressConfig.from_table(sc.to_table()) == sc
        assert StressConfig.of(sc.run_config()) == sc
    with pytest.raises(ValueError, match="stress.spin: expected int"):
        StressConfig.from_table({"spin": "many"})
    with pytest.raises(ValueError, match="stress.stress_pattern: expected 0..3"):
        StressConfig.from_table({"stress_pattern": 9})


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_harness_with_knobs_compiles_for_sm_90() -> None:
    cuda.compile_programs([litmus.parse_file(MP)], "sm_90", use_cache=False)


def _spec(path):
    return codegen.harness_source(litmus.parse_file(path))[1]


def test_cta_threads_sets_the_block_and_the_instances_per_launch() -> None:
    """RunConfig.cta_threads: every launch's block size; a launch's instances are test CTAs x threads."""
    spec = _spec(MP)  # two roles in different CTAs: one warp a CTA is enough
    assert spec.min_cta_threads == 32
    for ct in geometry.CTA_THREAD_CHOICES:
        g = geometry.launch_geometry(spec, RunConfig(cta_threads=ct, test_ctas=512, stride=2))
        assert (g.cta_threads, g.instances_per_launch) == (ct, 512 * ct)
        assert g.mem_words == 512 * ct * spec.n_global_locs * 2


@pytest.mark.parametrize("ct", [0, 16, 48, 96, 512])
def test_cta_threads_other_than_32_to_256_powers_of_two_are_refused(ct: int) -> None:
    from fuzzgpu.errors import UserError

    with pytest.raises(UserError, match="cta_threads must be one of 32, 64, 128, 256"):
        geometry.launch_geometry(_spec(MP), RunConfig(cta_threads=ct))


def test_a_cta_too_small_for_its_roles_warps_is_unrunnable_and_says_why() -> None:
    """Roles of one CTA run in distinct warps (codegen.layout): two roles of one CTA need 64 threads;
    a wgmma reads its tiles with two warpgroups: 256 (codegen.wgmma)."""
    same_cta = _spec(LITMUS / "gpu" / "MP-relaxed-gpu-same-cta.litmus")
    assert same_cta.min_cta_threads == 64
    geometry.launch_geometry(same_cta, RunConfig(cta_threads=64))
    with pytest.raises(codegen.Unrunnable, match="cta_threads 32: its harness needs at least 64 threads a CTA"):
        geometry.launch_geometry(same_cta, RunConfig(cta_threads=32))
    # the same warp (P0 and P1 in warp 0, lanes apart): one warp is enough
    assert _spec(LITMUS / "gpu" / "MP-relaxed-gpu-same-warp.litmus").min_cta_threads == 32


def test_the_cta_sizes_are_one_list_wherever_they_are_written() -> None:
    """The JSON schema (below the backends' layer: it keeps literals), the table bounds and the
    tuner's space name the sizes launch_geometry takes; the occupancy cap's bound is the most CTAs
    an SM holds at the smallest size."""
    from fuzzgpu.schema import _STRESS

    choices = geometry.CTA_THREAD_CHOICES
    assert _STRESS["properties"]["cta_threads"]["enum"] == list(choices)
    assert BOUNDS["cta_threads"] == (min(choices), max(choices)) == (32, codegen.CTA_THREADS)
    assert sorted(SPACE["cta_threads"]) == list(choices)
    cap = max(geometry.max_ctas_per_sm(ct) for ct in choices)
    assert BOUNDS["ctas_per_sm"] == (0, cap) and _STRESS["properties"]["ctas_per_sm"]["maximum"] == cap


def test_a_cta_size_keeps_the_test_and_stress_threads() -> None:
    sc = StressConfig(test_ctas=512, stress=64)
    assert sc.with_cta_threads(64) == dataclasses.replace(sc, cta_threads=64, test_ctas=2048, stress=256)
    assert sc.with_cta_threads(64).with_cta_threads(256) == sc
    # within the bounds a table may hold; a launch needs two test CTAs
    big = StressConfig(test_ctas=16384, stress=1 << 14).with_cta_threads(32)
    assert (big.test_ctas, big.stress) == (BOUNDS["test_ctas"][1], BOUNDS["stress"][1])
    assert StressConfig(test_ctas=2, cta_threads=32).with_cta_threads(256).test_ctas == 2


def test_occupancy_cap_counts_the_ctas_an_sm_holds_at_each_cta_size() -> None:
    """sm_90: 2048 threads and 32 CTAs an SM; a cap at or over what fits anyway is no cap."""
    assert [geometry.max_ctas_per_sm(ct) for ct in (32, 64, 128, 256)] == [32, 32, 16, 8]
    smem, static = 228 * 1024, 3000
    for ct, k in ((64, 16), (32, 31), (128, 12)):
        s = geometry.occupancy_shared_bytes(k, smem, static, ct)
        per = s + static + geometry.RESERVED_SMEM_PER_CTA
        assert k * per <= smem < (k + 1) * per, (ct, k)
    assert geometry.occupancy_shared_bytes(8, smem, static, 64) > 0  # 8 of 64 threads: a real cap
    assert geometry.occupancy_shared_bytes(16, smem, static, 128) == 0


def test_the_harness_reads_its_cta_size_at_run_time() -> None:
    """One compiled module serves every cta_threads: the kernels take the block size from blockDim.x
    (the instance's lane bits, lane mask and warps in FzParams), no 256 left in a lane computation."""
    src, _ = codegen.harness_source(litmus.parse_file(MP))
    assert "P.lb = 31u - __clz(blockDim.x); P.cm = blockDim.x - 1u; P.wm = (blockDim.x >> 5) - 1u;" in src
    assert "const unsigned ninst = ntest * blockDim.x;" in src
    assert "<< 8) |" not in src and "& 255u;" not in src.split("ns_fzh")[-1]


def test_the_tuner_keeps_every_candidate_within_the_cta_size_a_program_needs() -> None:
    """A configuration with CTAs smaller than the program's roles need (two roles in one CTA: 64
    threads) is raised to that size, as many test threads as before; one that fits is kept."""
    from fuzzgpu.stress.space import fit_cta
    from fuzzgpu.stress.tune import candidates

    small = StressConfig(cta_threads=32, test_ctas=2048)
    assert fit_cta(small, 64) == dataclasses.replace(small, cta_threads=64, test_ctas=1024)
    assert fit_cta(small, 32) is small
    same_cta = litmus.parse_file(LITMUS / "gpu" / "MP-relaxed-gpu-same-cta.litmus")
    assert codegen.min_cta_threads(same_cta) == 64 and codegen.min_cta_threads(litmus.parse_file(MP)) == 32
    # three roles in one CTA: three warps, a CTA of 128 threads (a power of two: test_ctas stays one)
    three = litmus.parse("""PTX three
{ x=0; }
 P0@cta 0,gpu 0 | P1@cta 0,gpu 0 | P2@cta 0,gpu 0 ;
 st.relaxed.gpu x, 1 | ld.relaxed.gpu r0, x | ld.relaxed.gpu r1, x ;
exists (P1:r0 == 1 /\\ P2:r1 == 0)
""")
    assert codegen.min_cta_threads(three) == 128
    assert [fit_cta(StressConfig(cta_threads=ct, test_ctas=2048), 128).test_ctas for ct in (32, 64)] == [512, 1024]
    cs = candidates(60, seed=3, min_cta_threads=64)
    assert cs and all(c.cta_threads >= 64 for c in cs) and len(set(cs)) == len(cs)
    assert {c.cta_threads for c in candidates(60, seed=3)} == set(SPACE["cta_threads"])
