"""bench/tool_shims.sh logs each nvcc call's harness programs (a kernel per grid, one fzh_<i>_ prefix
per program) and bench/tool_log.py sums them: run here on a real harness module of a two-grid PDL
program and a one-grid one (nvcc -E: the shim reads the source, the compile itself is not needed)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from nvcc import needs_nvcc

from fuzzgpu import codegen, litmus
from paths import LITMUS, bench_script

ROOT = Path(__file__).resolve().parents[2]


@needs_nvcc
def test_the_shim_logs_programs_and_kernels_of_a_harness_call(tmp_path: Path) -> None:
    from fuzzgpu.sass.toolchain import find_tool

    if find_tool("nvdisasm") is None:
        pytest.skip("no nvdisasm (the sass extra): the shims wrap it too")
    shims, log = tmp_path / "shims", tmp_path / "tools.log"
    subprocess.run(["bash", str(ROOT / "bench" / "tool_shims.sh"), str(shims), str(log)], check=True, cwd=ROOT,
                   env={**os.environ, "PYTHON": sys.executable})
    progs = [litmus.parse_file(LITMUS / "async-proxy" / "TMA-load-after-pdl-wait.litmus"),
             litmus.parse_file(LITMUS / "gpu" / "MP-relaxed-gpu.litmus")]
    cu = tmp_path / "batch.cu"
    cu.write_text(codegen.generate_module(progs)[0])
    subprocess.run([str(shims / "nvcc"), "-E", "-arch=sm_90", "-o", str(tmp_path / "batch.ii"), str(cu)], check=True)
    words = log.read_text().split()
    assert words[:3] == ["nvcc", "harness", "3"] and words[6] == "2" and len(words) == 9
    mod = bench_script("tool_log.py")
    s = mod.summary(log.read_text() + "nvcc harness 16 1.0 2.0 0.5\n")  # a line of the older format: no programs
    assert "programs" not in s["nvcc harness"]
    s = mod.summary(log.read_text())["nvcc harness"]
    assert (s["programs"], s["kernels_per_program"]) == (2, 1.5)
