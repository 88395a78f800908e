"""nvcc for the tests that compile generated CUDA: where it is, the skip mark without it, and one
compile of a source to a cubin (the flags code generation's modules are built with)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH")


def compile_cubin(src: str, arch: str, folder: Path, name: str) -> subprocess.CompletedProcess:
    """``nvcc -cubin -arch=ARCH -O3 -w`` of ``src``, written to ``folder/NAME-ARCH.cu``."""
    cu = folder / f"{name}-{arch}.cu"
    cu.write_text(src)
    return subprocess.run([str(NVCC), "-cubin", f"-arch={arch}", "-O3", "-w", "-o", str(cu.with_suffix(".cubin")), str(cu)],
                          capture_output=True, text=True)
