"""CPU: the gate of the tests marked ``gpu`` (tests/conftest.py) -- without a usable GPU they skip
with the reason, and with ``FUZZGPU_REQUIRE_GPU=1`` (``tox -e gpu``) that is a usage error, so a
"GPU run" on a machine where PyCUDA or the driver is missing cannot pass with every GPU test
skipped."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import gpu_unavailable
from paths import ROOT

GPU_TEST = "tests/gpu/test_gpu.py::test_mbarrier_wait_that_never_completes_is_bounded"


def _pytest(**env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q", "-rs", GPU_TEST],
                          check=False, capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env={k: v for k, v in os.environ.items() if k != "FUZZGPU_REQUIRE_GPU"} | env)


@pytest.mark.skipif(gpu_unavailable() is None, reason="a GPU is usable here: the gate lets the test run")
def test_without_a_gpu_a_gpu_test_skips_with_the_reason_or_fails_when_a_gpu_is_required() -> None:
    reason = gpu_unavailable()
    r = _pytest()
    assert r.returncode == 0 and "1 skipped" in r.stdout and f"needs a GPU: {reason}" in r.stdout, r.stdout[-2000:] + r.stderr[-2000:]
    r = _pytest(FUZZGPU_REQUIRE_GPU="1")
    assert r.returncode == 4, r.stdout[-2000:] + r.stderr[-2000:]
    assert f"FUZZGPU_REQUIRE_GPU=1 and {GPU_TEST} needs a GPU: {reason}" in r.stderr + r.stdout, r.stdout[-2000:] + r.stderr[-2000:]
