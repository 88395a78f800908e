"""Two loads of a ``__constant__`` variable that ptxas reads once (one ``LDC``): no finding.  The constant
state space is "a read-only memory initialized by the host" (PTX ISA, Constant State Space): no thread
writes it, so both loads read one value and the merge is not observable -- as for two ``ld.global.nc``.
Before, each was a permitted-hazard "merged" finding: 162 in DeepEP's device-linked module (NVSHMEM's
device state read in every inlined call), its only findings."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu import sass
from fuzzgpu.sass.rules import merge_is_finding

from sass_cli import own_cache  # noqa: F401 -- the autouse fixture

DATA = Path(__file__).resolve().parents[1] / "data" / "sass"


def _mem(space: str, sem: str = "weak") -> sass.PtxMemOp:
    return sass.PtxMemOp(sass.PtxInstr(0, 1, "ld", "", "ld", (), ()), "load", space, sem, "gpu", 64, "cst", 8)


def test_a_merge_of_two_constant_loads_is_no_finding():
    assert not merge_is_finding(_mem("const"), _mem("const"))
    assert not merge_is_finding(_mem("global", "nc"), _mem("global", "nc"))
    # every other merge is judged (coherence allows two loads to read one write, so it is a hazard at least)
    assert merge_is_finding(_mem("global"), _mem("global"))
    assert merge_is_finding(_mem("shared"), _mem("shared"))
    assert merge_is_finding(_mem("global", "nc"), _mem("global"))


@pytest.mark.skipif(sass.find_tool("ptxas") is None and sass.find_tool("nvcc") is None or sass.find_tool("nvdisasm") is None,
                    reason="needs ptxas and nvdisasm")
def test_ptxas_reading_a_constant_once_across_an_acquire_is_clean():
    (rep,) = sass.check_path(DATA / "const_merge.ptx", ("sm_90",))
    (fn,) = rep.functions
    assert fn.findings == () and not fn.unchecked, (fn.findings, fn.unchecked)
    assert fn.mapped_mem_ops == fn.ptx_mem_ops == 4
