"""The static sm_100a path of classes E/G (tensor memory): the static kernels emit tcgen05.st/ld/wait/
alloc as inline PTX for sm_100a (refused for sm_90, which lacks tcgen05), nvcc compiles them, and the
SASS checker reports every tensor-memory access and its wait as not checked -- never clean, never
judged (its order is the oracle's)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fuzzgpu import codegen
from fuzzgpu.litmus import parse_file
from fuzzgpu.sass.order import _without_sass
from fuzzgpu.sass.ptx_parser import TENSOR_MEMORY_KEYS, _table_key, parse_ptx

from nvcc import NVCC, needs_nvcc

HERE = Path(__file__).resolve().parents[1] / "litmus" / "race-tcgen05"


def test_sm90_is_refused_for_the_arch():
    p = parse_file(HERE / "RACE-12-st-published-before-wait.litmus")
    with pytest.raises(codegen.Unrunnable, match="tcgen05.st needs sm_100a"):
        codegen.generate_static(p, "sm_90")


@needs_nvcc
@pytest.mark.parametrize("name", ["RACE-12-ld-cell-released-before-wait", "NORACE-14-alloc-bar-sync"])
def test_the_static_kernels_compile_for_sm100a_and_tensor_memory_is_not_checked(tmp_path, name):
    src = codegen.generate_static(parse_file(HERE / f"{name}.litmus"), "sm_100a")
    cu = tmp_path / "k.cu"
    cu.write_text(src)
    r = subprocess.run([str(NVCC), "-ptx", "-arch=sm_100a", "-w", "-o", str(tmp_path / "k.ptx"), str(cu)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    functions = parse_ptx((tmp_path / "k.ptx").read_text())
    tm = [i for f in functions for i in f.instrs if _table_key(i) in TENSOR_MEMORY_KEYS]
    unchecked = [u for f in functions for u in _without_sass(f.events)[1]]
    assert len([u for u in unchecked if "tensor memory" in u and "not checked" in u]) == len(tm)
    if name.startswith("RACE-12"):
        assert {_table_key(i) for i in tm} == TENSOR_MEMORY_KEYS  # st, ld and both waits
    else:
        assert any(i.opcode == "tcgen05" and i.mods[:1] == ("alloc",) for f in functions for i in f.instrs)
