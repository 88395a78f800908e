"""What a RunConfig makes of one harness launch, computed without a GPU: the grid and the CTAs'
roles (:func:`launch_geometry`), the shared memory that caps the occupancy and when a launch must opt
in to it (:func:`occupancy_shared_bytes`, :func:`needs_shared_opt_in`), the CTA permutations, and
the tensor map's size limit.  :mod:`fuzzgpu.backends.cuda` launches what this computes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import codegen
from ..errors import UserError
from .base import RunConfig

#: the largest buffer, in 32-bit elements, a harness tensor map covers: every coordinate of a
#: tensor copy is a signed 32-bit integer (PTX ISA cp.async.bulk.tensor: ``tensorCoords``, .s32)
TENSOR_MAP_MAX_WORDS = 2**31 - 1


def check_tensor_map_words(program: str, words: int) -> None:
    """Refuse (:class:`codegen.Unrunnable`) a tensor map over a buffer of more than
    :data:`TENSOR_MAP_MAX_WORDS` 32-bit words: its last coordinates would not fit the signed
    32-bit ``tensorCoords`` of a tensor copy (PTX ISA cp.async.bulk.tensor)."""
    if words > TENSOR_MAP_MAX_WORDS:
        raise codegen.Unrunnable(program, [
            f"cp.async.bulk.tensor: the location buffer has {words} words, past the signed 32-bit coordinates of "
            f"a tensor copy ({TENSOR_MAP_MAX_WORDS}); run fewer instances per launch or a smaller stride"])


#: the CTA sizes a harness launch takes (RunConfig.cta_threads), the largest (codegen.CTA_THREADS) the
#: default; an SM holds at most 2048 threads and 32 CTAs (sm_90): 8 CTAs of 256 threads
CTA_THREADS = codegen.CTA_THREADS
CTA_THREAD_CHOICES = (32, 64, 128, 256)


def max_ctas_per_sm(cta_threads: int) -> int:
    """The CTAs of ``cta_threads`` threads an SM holds at most (sm_90: 2048 threads, 32 CTAs)."""
    return min(32, 2048 // cta_threads)


#: shared memory the driver reserves per CTA (sm_80 and later: 1 KB)
RESERVED_SMEM_PER_CTA = 1024


#: shared memory a CTA may use with no opt-in, static and dynamic together (CUDA Programming Guide,
#: "Shared Memory": allocations above 48 KB per block need dynamic shared memory and an explicit
#: opt-in; a kernel's default maximum of dynamic shared memory is 48 KB less its static size)
SHARED_NO_OPT_IN = 48 * 1024


def needs_shared_opt_in(static_smem: int, dynamic: int) -> bool:
    """Whether a launch with ``dynamic`` bytes of dynamic shared memory of a kernel with
    ``static_smem`` static bytes needs ``CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`` raised
    first: the sum is what counts (a launch past it fails with CUDA_ERROR_INVALID_VALUE;
    bench/results/throughput/refused-replay/)."""
    return dynamic > 0 and static_smem + dynamic > SHARED_NO_OPT_IN


def occupancy_shared_bytes(ctas_per_sm: int, smem_per_sm: int, static_smem: int, cta_threads: int = CTA_THREADS) -> int:
    """Dynamic shared memory per CTA that caps the occupancy at ``ctas_per_sm`` CTAs per SM
    (RunConfig.ctas_per_sm; 0 or as many as the SM holds anyway, :func:`max_ctas_per_sm`: no cap, 0
    bytes).  With ``s`` bytes a CTA holds ``s + static + 1 KB``: k of them fit in ``smem_per_sm``
    and k + 1 do not."""
    if ctas_per_sm <= 0 or ctas_per_sm >= max_ctas_per_sm(cta_threads):
        return 0
    return max(0, smem_per_sm // ctas_per_sm - RESERVED_SMEM_PER_CTA - static_smem)


def cta_permutations(grid_units: int, n: int, seed: int, permute: bool) -> Any:
    """The ``n`` CTA (cluster) permutations the harness picks one of per launch: random
    (RunConfig.permute_ctas, default) or the identity."""
    import numpy as np

    if not permute:
        return np.stack([np.arange(grid_units) for _ in range(n)]).astype(np.uint16)
    rng = np.random.default_rng(seed)
    return np.stack([rng.permutation(grid_units) for _ in range(n)]).astype(np.uint16)


@dataclass(frozen=True)
class LaunchGeometry:
    """What a RunConfig's stress knobs make of one launch: the grid, the CTAs' roles, the
    shared memory per CTA and the scalar stress arguments of the harness kernels."""

    test_ctas: int
    cta_threads: int  # the block size of every launch
    stress_ctas: int
    grid: int
    cluster: int
    instances_per_launch: int
    stride: int  # words, after rounding to whole slots
    mem_words: int  # words of one half of the location buffer (instances x global locations x stride)
    shared_bytes: int  # dynamic shared memory per CTA (the occupancy cap)
    spin: int
    barrier: int
    stress_lines: int
    knobs: int  # RunConfig.knobs_word()
    permute_ctas: bool


def launch_geometry(spec: codegen.HarnessSpec, config: RunConfig, smem_per_sm: int = 228 * 1024,
                    static_smem: int = 0) -> LaunchGeometry:
    """The launch ``config`` asks for (pure; UserError for a test_ctas the harness cannot run,
    :class:`codegen.Unrunnable` for a tensor-copy program whose location buffer, both halves, is
    past a tensor map's 32-bit coordinates: refused here, before any buffer is allocated)."""
    tc = config.test_ctas
    if tc < 2 or tc & (tc - 1) or tc > 32768:
        raise UserError(f"test_ctas must be a power of two in 2..32768 (got {tc})")
    ct = config.cta_threads
    if ct not in CTA_THREAD_CHOICES:
        raise UserError(f"cta_threads must be one of {', '.join(map(str, CTA_THREAD_CHOICES))} (got {ct})")
    if ct < spec.min_cta_threads:  # HarnessSpec.min_cta_threads
        raise codegen.Unrunnable(spec.program, [
            f"cta_threads {ct}: its harness needs at least {spec.min_cta_threads} threads a CTA (a warp per distinct "
            "warp its roles name in one CTA; two warpgroups for a wgmma)"])
    C = spec.cluster
    if tc % C:
        raise UserError(f"test_ctas {tc} is not a multiple of the cluster size {C}")
    nstress = -(-config.stress // C) * C
    stride = max(1, config.stride)
    sw = max(1, spec.slot_words)
    if sw > 1:  # 16-byte slots (bulk copies, mbarriers): a stride of whole slots
        stride = -(-max(stride, sw) // sw) * sw
    mem_words = tc * ct * spec.n_global_locs * stride
    if spec.tensor_map:  # the map covers both halves of the buffer (CudaBackend.run_compiled)
        check_tensor_map_words(spec.program, 2 * mem_words)
    return LaunchGeometry(
        test_ctas=tc, cta_threads=ct, stress_ctas=nstress, grid=tc + nstress, cluster=C, instances_per_launch=config.instances_per_launch,
        stride=stride, mem_words=mem_words, shared_bytes=occupancy_shared_bytes(config.ctas_per_sm, smem_per_sm, static_smem, ct),
        spin=config.spin, barrier=1 if config.barrier else 0, stress_lines=max(1, config.stress_lines),
        knobs=config.knobs_word(), permute_ctas=config.permute_ctas,
    )


__all__ = ["CTA_THREADS", "CTA_THREAD_CHOICES", "max_ctas_per_sm", "RESERVED_SMEM_PER_CTA", "SHARED_NO_OPT_IN", "TENSOR_MAP_MAX_WORDS", "LaunchGeometry",
           "check_tensor_map_words", "cta_permutations", "launch_geometry", "needs_shared_opt_in", "occupancy_shared_bytes"]
