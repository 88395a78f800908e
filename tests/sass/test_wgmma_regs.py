"""Class F (issue 32) in SASS (fuzzgpu.sass.wgmma_regs) and its kernel (fuzzgpu.codegen.wgmma_regs):
the check flags an access of a register-A MMA's operands before the WARPGROUP.DEPBAR covering it
(a listing written so), finds the window's end by the DEPBAR's count, and -- with nvcc -- the
catalogue's racy programs compile to SASS where ptxas 13.0 left no such access (the measured fact,
bench/results/wgmma-regs/: the overwrite goes to another physical register, the early accumulator
read after the wait)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from fuzzgpu.codegen.wgmma_regs import b_words, kernel_source, keys, reasons
from fuzzgpu.litmus import parse_file
from fuzzgpu.sass.sass_parser import parse_sass
from fuzzgpu.sass.toolchain import disassemble
from fuzzgpu.sass.wgmma_regs import in_flight, mma_windows

CATALOGUE = Path(__file__).resolve().parents[1] / "litmus" / "race-wgmma"
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")

LISTING = """
        .text.k:
k:
        /*0000*/                   WARPGROUP.ARRIVE ;
        /*0010*/                   IGMMA.64x16x32.U8.U8 R24, R32, gdesc[UR8], RZ, !UPT, gsb0 ;
        /*0020*/                   IGMMA.64x16x32.U8.U8 R40, R36, gdesc[UR8], RZ, !UPT, gsb0 ;
        /*0030*/                   MOV R32, 0x2 ;
        /*0040*/                   IADD3 R9, R24, 0x1, RZ ;
        /*0050*/                   WARPGROUP.DEPBAR.LE gsb0, 0x1 ;
        /*0060*/                   MOV R36, 0x2 ;
        /*0070*/                   MOV R33, 0x2 ;
        /*0080*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0090*/                   MOV R37, 0x2 ;
        /*00a0*/                   EXIT ;
"""


def test_the_check_flags_an_access_before_the_covering_depbar():
    (fn,) = parse_sass(LISTING)
    found = {(f.mma.offset, f.access.offset, f.register, f.what) for f in in_flight(fn)}
    # the first MMA's window ends at DEPBAR.LE 1 (one later MMA may stay pending); the second's at DEPBAR.LE 0
    assert found == {(0x10, 0x30, "R32", "A fragment written"), (0x10, 0x40, "R24", "accumulator read"),
                     (0x20, 0x60, "R36", "A fragment written")}
    assert [len(w) for _, w in mma_windows(fn)] == [3, 5]


def test_the_kernel_reasons_and_b():
    p = parse_file(CATALOGUE / "RACE-13-a-overwritten-before-wait.litmus")
    assert reasons(p) == [] and keys(p) == ["r2", "r1"]
    assert sum(bin(w).count("1") for w in b_words()) == 16  # one byte of 1 per column of B


@needs_nvcc
@pytest.mark.parametrize("name", ["RACE-13-a-overwritten-before-wait", "RACE-13-accumulator-read-before-wait",
                                  "RACE-13-wait-group-1-does-not-cover"])
def test_ptxas_leaves_no_access_in_flight(name, tmp_path):
    p = parse_file(CATALOGUE / f"{name}.litmus")
    src, cubin = tmp_path / "k.cu", tmp_path / "k.cubin"
    src.write_text(kernel_source(p))
    subprocess.run(["nvcc", "-arch=sm_90a", "-cubin", "-O3", "-o", str(cubin), str(src)], check=True, capture_output=True)
    (fn,) = [f for f in parse_sass(disassemble(cubin)) if f.name == "fz_wgr"]
    assert len(mma_windows(fn)) == 1  # the register-A IGMMA is there (not dropped as dead code)
    assert in_flight(fn) == [], [f.describe() for f in in_flight(fn)]
