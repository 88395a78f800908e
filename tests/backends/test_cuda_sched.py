"""The CUDA context's scheduling flag (no GPU needed: the flag is chosen before the context exists)."""

from __future__ import annotations

import pytest

from fuzzgpu.backends.cuda import CTX_SCHED_MASK, CudaBackend, ctx_sched_flags
from fuzzgpu.errors import UserError


def test_the_default_context_blocks_on_waits() -> None:
    # CUDA driver API, CUctx_flags: CU_CTX_SCHED_BLOCKING_SYNC = 0x04 (SPIN 0x01, YIELD 0x02, AUTO 0)
    import inspect

    assert inspect.signature(CudaBackend).parameters["sched"].default == "blocking"
    assert ctx_sched_flags("blocking") == 0x04
    assert ctx_sched_flags("auto") == 0x00 and ctx_sched_flags("spin") == 0x01 and ctx_sched_flags("yield") == 0x02
    assert all(ctx_sched_flags(s) & ~CTX_SCHED_MASK == 0 for s in ("auto", "spin", "yield", "blocking"))


def test_an_unknown_scheduling_is_refused_before_any_gpu_call() -> None:
    with pytest.raises(UserError, match="unknown CUDA context scheduling 'busy'"):
        CudaBackend(sched="busy")
