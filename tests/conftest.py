"""Shared test setup: tests marked ``gpu`` skip, with the reason, when there is no usable GPU."""

from __future__ import annotations

import functools

import pytest


@functools.lru_cache(maxsize=1)
def gpu_unavailable() -> str | None:
    """None when a CUDA GPU, PyCUDA and cuda-bindings are usable; else why not."""
    try:
        import pycuda.driver as drv
    except Exception as e:  # ImportError, or libcuda missing
        return f"PyCUDA not importable ({type(e).__name__}: {e})"
    try:
        from cuda.bindings import driver  # noqa: F401
    except Exception as e:
        return f"cuda-bindings not importable ({e})"
    try:
        drv.init()
        if drv.Device.count() == 0:
            return "no CUDA device"
    except Exception as e:
        return f"no usable CUDA driver/device ({e})"
    return None


def pytest_collection_modifyitems(config, items):
    reason = None
    for item in items:
        if "gpu" in item.keywords:
            reason = reason or gpu_unavailable()
            if reason:
                item.add_marker(pytest.mark.skip(reason=f"needs a GPU: {reason}"))
