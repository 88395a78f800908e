"""``fuzzgpu sass A B C`` with a bad B: A and C are still checked and reported, and A's finding
decides the exit status (hostile review: the compile error of B was the only output,
exit 2, and A's finding -- already found -- was never shown)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fuzzgpu import sass

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "tests" / "kernels"

pytestmark = pytest.mark.skipif(sass.find_tool("nvcc") is None or (sass.find_tool("nvdisasm") is None and sass.find_tool("cuobjdump") is None),
                                reason="needs nvcc and nvdisasm or cuobjdump")


def _sass(*paths: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fuzzgpu", "sass", "--arch", "sm_90", *map(str, paths)],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)


def test_a_bad_input_does_not_hide_the_others(tmp_path: Path) -> None:
    broken = tmp_path / "broken.cu"
    broken.write_text("garbage {\n")
    found, clean = KERNELS / "D_flashmla_shape.cu", KERNELS / "D_flashmla_fixed_01a2772.cu"
    r = _sass(found, broken, clean)
    assert r.returncode == 1, r.stdout + r.stderr  # the finding first
    # one finding per moved operation (issue 26): the int4 __ldg, listing the points it crossed
    assert f"{found} sm_90 D_flashmla_shape: 1 finding(s)" in r.stdout
    assert f"{clean} sm_90 " in r.stdout
    assert f"fuzzgpu sass: error: nvcc: {broken}(1): error:" in r.stderr
    assert r.stderr.strip().endswith("1 input(s) not checked (the error lines above)")
    # without a finding the bad input decides: exit 2; alone, its one error line is all
    r = _sass(broken, clean)
    assert r.returncode == 2 and f"{clean} sm_90 " in r.stdout, r.stdout + r.stderr
    r = _sass(broken)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
