"""Shared test setup: the Hypothesis profile of the test suite, and tests marked ``gpu`` skip, with
the reason, when there is no usable GPU -- only then: PyCUDA or cuda-bindings not importable, or the
driver finds no device; an error of the harness or the backend on a GPU fails its test.  With
``FUZZGPU_REQUIRE_GPU=1`` (``tox -e gpu``) no usable GPU is a usage error (exit 4), not a run of
skipped GPU tests that exits 0.

The suite's property tests are derandomized and keep no example database: the test command gives
the same result on every run and every machine, and a failure cannot stick in ``.hypothesis/`` and
fail every later run (issue 12.7). ``FUZZGPU_HYPOTHESIS=explore`` runs them with fresh random draws
and a database instead, to look for new counterexamples (``tox -e explore``)."""

from __future__ import annotations

import functools
import os

import pytest
from hypothesis import settings

settings.register_profile("fuzzgpu-tests", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None, print_blob=True)
settings.load_profile("explore" if os.environ.get("FUZZGPU_HYPOTHESIS") == "explore" else "fuzzgpu-tests")


@functools.lru_cache(maxsize=1)
def gpu_unavailable() -> str | None:
    """None when a CUDA GPU, PyCUDA and cuda-bindings are usable; else why not."""
    try:
        import pycuda.driver as drv
    except (ImportError, OSError) as e:  # not installed, or libcuda missing
        return f"PyCUDA not importable ({type(e).__name__}: {e})"
    try:
        from cuda.bindings import driver  # noqa: F401
    except (ImportError, OSError) as e:
        return f"cuda-bindings not importable ({e})"
    try:
        drv.init()
        if drv.Device.count() == 0:
            return "no CUDA device"
    except drv.Error as e:  # cuInit failed: no driver or no device it can use
        return f"no usable CUDA driver/device ({e})"
    return None


def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true", default=False,
                     help="also run the tests marked slow (deselected without this option, -m or a test named by its node id)")


def _deselect_slow(config, items) -> None:
    """The tests marked ``slow`` (README, "Tests") are left out of a run unless it asks for them:
    ``--slow``, a ``-m`` expression (``-m slow`` runs only them, ``-m gpu`` every GPU test) or a test
    named by its node id.  CI runs them in a step of their own (.ci/run)."""
    if config.getoption("--slow") or config.getoption("markexpr") or any("::" in a for a in config.args):
        return
    slow = [i for i in items if i.get_closest_marker("slow") is not None]
    if slow:
        items[:] = [i for i in items if i.get_closest_marker("slow") is None]
        config.hook.pytest_deselected(items=slow)


def pytest_collection_modifyitems(config, items):
    _deselect_slow(config, items)
    reason = None
    for item in items:
        if "gpu" in item.keywords:
            reason = reason or gpu_unavailable()
            if reason and os.environ.get("FUZZGPU_REQUIRE_GPU") == "1":
                raise pytest.UsageError(f"FUZZGPU_REQUIRE_GPU=1 and {item.nodeid} needs a GPU: {reason}")
            if reason:
                item.add_marker(pytest.mark.skip(reason=f"needs a GPU: {reason}"))
