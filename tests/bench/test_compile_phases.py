"""bench/compile_phases.py's reading of nvcc's ``--time`` CSV (the file nvcc 13.0 writes; its rows
below as nvcc wrote them for a batch of 16 harnesses)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CSV = """source file name , phase name , phase input files , phase output file , arch , tool, metric , unit
b16.cu , gcc (preprocessing 1) , b16.cu  , /tmp/nv/k16/b16.cpp1.ii , compute_90 , nvcc , 119.7990 , ms
b16.cu , cicc , /tmp/nv/k16/b16.cpp1.ii  , /tmp/nv/k16/b16.ptx , compute_90 , nvcc , 994.8530 , ms
b16.cu , ptxas , /tmp/nv/k16/b16.ptx  , b16.cubin , sm_90 , nvcc , 858.1710 , ms
 , nvcc (driver) ,  , b16.cubin ,  , nvcc , 0.3340 , ms
"""


def test_the_phases_of_nvccs_time_csv() -> None:
    spec = importlib.util.spec_from_file_location("compile_phases_bench", ROOT / "bench" / "compile_phases.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["compile_phases_bench"] = mod
    spec.loader.exec_module(mod)
    assert mod.parse_time_csv(CSV) == {"gcc": 119.799, "cicc": 994.853, "ptxas": 858.171, "nvcc": 0.334}
    # two rows of one phase (two archs, say) add up; the header is no phase
    two = CSV + "b16.cu , ptxas , b16.ptx , b.cubin , sm_100a , nvcc , 1.8290 , ms\n"
    assert mod.parse_time_csv(two)["ptxas"] == 858.171 + 1.829
