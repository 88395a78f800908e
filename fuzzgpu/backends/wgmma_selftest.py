"""The wgmma harness's mapping self-check on the GPU (:mod:`fuzzgpu.codegen.wgmma`): every thread's
``wgmma.mma_async`` must return the word of its own slot -- descriptor strides, the one-hot B and the
accumulator fragment as the harness assumes them.  Without it no stale/fresh count of an
``async.read`` program means anything (bench/wgmma_h200.py stops on a failure)."""

from __future__ import annotations


def run_selftest(backend: object, n_locations: int = 2) -> tuple[int, int]:
    """Run :func:`selftest_source` on a :class:`fuzzgpu.backends.cuda.CudaBackend` (sm_90);
    returns (slots whose thread got its own word, slots checked).  Needs a GPU."""
    import numpy as np

    from ..codegen.wgmma import selftest_source, selftest_word
    from .cuda import compile_cubin

    drv = getattr(backend, "drv")
    cubin = compile_cubin(selftest_source(n_locations), "sm_90a")
    fn = drv.module_from_buffer(cubin).get_function("fz_wg_selftest")
    out = np.zeros(256 * n_locations, dtype=np.uint32)
    buf = drv.mem_alloc(out.nbytes)
    try:
        fn(buf, block=(256, 1, 1), grid=(1, 1))
        drv.Context.synchronize()
        drv.memcpy_dtoh(out, buf)
    finally:
        buf.free()
    want = [selftest_word(q, j) for j in range(n_locations) for q in range(256)]
    return sum(int(a) == b for a, b in zip(out, want)), len(want)


__all__ = ["run_selftest"]
