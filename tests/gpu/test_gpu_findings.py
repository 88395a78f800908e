"""CPU: the xfail mark of the known lone-try_wait finding (tests/gpu/gpu_findings.py) takes only the
oracle's forbidden verdict; a failed harness check or a driver error fails (an H200 run of
2026-12-01 counted a CUDA_ERROR_INVALID_VALUE as the finding, and ``raises=AssertionError`` still took a
harness assertion -- instances not accounted for, a value no store wrote -- for it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_lone_try_wait_xfails_only_on_a_forbidden_verdict(tmp_path: Path) -> None:
    (tmp_path / "test_mark.py").write_text(f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
from gpu_findings import LONE_TRY_WAIT, no_forbidden

@LONE_TRY_WAIT
def test_forbidden_seen():
    no_forbidden("forbidden", "P1:r1=1 P1:r2=0")

@LONE_TRY_WAIT
def test_harness_check_fails():
    assert 3 + 1 == 5, "histogram does not account for every instance"

@LONE_TRY_WAIT
def test_driver_error_fails():
    raise RuntimeError("cuTensorMapEncodeTiled: CUDA_ERROR_INVALID_VALUE")

@LONE_TRY_WAIT
def test_allowed_passes():
    no_forbidden("allowed", "P1:r1=1 P1:r2=1")

def test_forbidden_without_the_mark_fails():
    no_forbidden("forbidden", "P1:r1=1 P1:r2=0")
""")
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q", "-rA", "test_mark.py"],
                       check=False, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    out = r.stdout
    assert "3 failed, 1 xfailed, 1 xpassed" in out, out[-3000:] + r.stderr[-2000:]
    for name in ("test_harness_check_fails", "test_driver_error_fails", "test_forbidden_without_the_mark_fails"):
        assert f"FAILED test_mark.py::{name}" in out, out[-3000:]
    assert "XFAIL test_mark.py::test_forbidden_seen" in out, out[-3000:]
