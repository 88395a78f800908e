"""``sass.disassemble(..., ndf_first=True)`` (fuzzgpu's generated kernels) runs nvdisasm without its dataflow
analysis (``-ndf``: issue 29, a fifth of each static check's disassembly) and again with it only when the
listing has an instruction the analysis annotates.  That is only allowed if the text is the one plain ``nvdisasm -c -gi`` prints: checked here
on the static kernels and the harness modules of every ``.litmus`` file of the repository, on an
indirect branch (whose targets the control-flow graph reads from the analysis's annotation) and on a
register spill (annotated too)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from fuzzgpu import codegen, sass
from fuzzgpu.backends.cuda import compile_module

from test_runtime_header import harness_modules, litmus_programs, static_modules

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None or sass.find_tool("nvdisasm") is None,
                                reason="needs nvcc and nvdisasm")

#: a switch over a kernel parameter: ptxas makes it a jump table, ``BRX`` (seen with 13.0)
SWITCH = codegen.PRELUDE + r"""
__device__ float g[64];
__global__ void jump_table(float* p, int k) {
    float v = p[threadIdx.x];
    switch (k) {
#define C(i) case i: v = v * i + g[i]; for (int j = 0; j < i; ++j) v = v * v + 1.0f / (i + j); break;
    C(0) C(1) C(2) C(3) C(4) C(5) C(6) C(7) C(8) C(9) C(10) C(11) C(12) C(13) C(14) C(15)
    }
    p[threadIdx.x] = v;
}
"""

#: more live values than ``-maxrregcount=16`` leaves registers for: ptxas spills (``STL``/``LDL``)
SPILL = codegen.PRELUDE + r"""
__global__ void spills(float* p) {
    float v[24];
    for (int i = 0; i < 24; ++i) v[i] = p[threadIdx.x * 24 + i] * 3.0f;
    float s = 0.0f;
    for (int i = 0; i < 24; ++i) for (int j = 0; j < 24; ++j) s += v[i] * v[(i * 7 + j) % 24];
    p[threadIdx.x] = s;
}
"""


def plain(cubin: Path) -> str:
    """What ``nvdisasm -c -gi`` prints, the dataflow analysis on."""
    return subprocess.run([sass.require_tool("nvdisasm"), "-c", "-gi", str(cubin)], check=True, capture_output=True,
                          text=True).stdout


def both(source: str, arch: str, flags: tuple[str, ...] = ()) -> tuple[str, str]:
    """(``sass.disassemble``'s text, plain nvdisasm's) of one compile of ``source``."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.cubin"
        if flags:
            src = Path(tmp) / "m.cu"
            src.write_text(source)
            subprocess.run(["nvcc", "-cubin", f"-arch={arch}", "-O3", "-lineinfo", *flags, "-o", str(path), str(src)],
                           check=True, capture_output=True)
        else:
            path.write_bytes(compile_module(source, arch, use_cache=False)[0])
        return sass.disassemble(path, ndf_first=True), plain(path)


@pytest.mark.parametrize("kind", ["static", pytest.param("harness", marks=pytest.mark.slow)])
def test_every_litmus_files_kernels_disassemble_as_plain_nvdisasm_does(kind: str) -> None:
    modules = list((static_modules if kind == "static" else harness_modules)(litmus_programs()))
    assert modules
    for arch, source in modules:
        quick, full = both(source, arch)
        assert quick == full, f"{kind} {arch}: the listing differs"


def test_an_indirect_branchs_targets_are_listed() -> None:
    quick, full = both(SWITCH, "sm_90")
    assert "BRX" in full and "BRANCH_TARGETS" in full  # the case this test is about
    assert quick == full


def test_a_spills_annotation_is_kept() -> None:
    quick, full = both(SPILL, "sm_90", ("-maxrregcount=16",))
    assert "STL" in full and "SpillRefill" in full
    assert quick == full


def test_a_users_kernels_are_disassembled_once_with_the_analysis(monkeypatch, tmp_path) -> None:
    # a user's kernels (fuzzgpu sass FILE.cu, .ptx, binaries) often spill or jump through tables: one
    # nvdisasm call with the analysis, never a -ndf pass first; fuzzgpu's generated kernels (compiled with its
    # own declarations, codegen.CUDA_DECLS, in place of cuda_runtime.h): -ndf first
    from fuzzgpu.sass import toolchain

    calls: list[list[str]] = []
    real = toolchain._run

    def spy(cmd, *a, **k):  # type: ignore[no-untyped-def]
        calls.append(cmd)
        return real(cmd, *a, **k)

    monkeypatch.setattr(toolchain, "_run", spy)
    monkeypatch.delenv("FUZZGPU_SASS_CACHE", raising=False)  # no cached listing: the disassembler runs

    def disassembler_calls() -> list[list[str]]:
        return [c for c in calls if Path(c[0]).name.startswith("nvdisasm")]

    src = tmp_path / "k.cu"
    src.write_text("__global__ void k(int* p) { p[threadIdx.x] = 1; }\n")
    sass.check_cu(src, ("sm_90",))
    (user,) = disassembler_calls()
    assert "-ndf" not in user
    calls.clear()
    sass.check_cu_source(codegen.PRELUDE + "__global__ void k(int* p) { p[threadIdx.x] = 2; }\n", ("sm_90",),
                         runtime_header=codegen.CUDA_DECLS)
    (generated,) = disassembler_calls()  # no annotated instruction in it: one call
    assert "-ndf" in generated
