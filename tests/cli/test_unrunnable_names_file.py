"""A test the GPU cannot run is refused with one line that names its file (docs: "one line naming
the file"); hostile review: ``run``, ``tune`` and ``sass`` of a Dat3M surface-proxy test
named only the test (``Proxy-MP-cta-synonym46: cannot run on the GPU: ...``), not the file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fuzzgpu import sass

ROOT = Path(__file__).resolve().parents[2]
SURFACE = """PTX surface-store
{ x=0; s @ surface aliases x; }
 P0@cta 0,gpu 0 ;
 sust.weak s, 1 ;
 ld.weak r0, x ;
exists (P0:r0 == 0)
"""


@pytest.mark.parametrize("command", ["run", "tune", "sass"])
def test_unrunnable_test_is_refused_naming_its_file(tmp_path: Path, command: str) -> None:
    if command == "sass" and sass.find_tool("nvcc") is None:
        pytest.skip("sass checks nvcc first")
    f = tmp_path / "surface-store.litmus"
    f.write_text(SURFACE)
    r = subprocess.run([sys.executable, "-m", "fuzzgpu", command, str(f)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 2, r.stderr
    # sass compiles no harness: what it cannot do is write the static kernels, and it says that
    what = "has no static kernels" if command == "sass" else "cannot run on the GPU"
    assert r.stderr.count("\n") == 1 and r.stderr.startswith(f"fuzzgpu {command}: error: {f}: surface-store: {what}"), r.stderr
