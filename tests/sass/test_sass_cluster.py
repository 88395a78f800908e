"""fuzzgpu.sass and barrier.cluster: the SASS ptxas 13.0 emits for sm_90 (captured in
tests/kernels/captured/cluster_barrier.*; the source is cluster_barrier.cu there):

=================================  ======================================================
PTX                                SASS
=================================  ======================================================
barrier.cluster.arrive[.release]   MEMBAR.ALL.GPU; ERRBAR; CGAERRBAR; UCGABAR_ARV
barrier.cluster.arrive.relaxed     UCGABAR_ARV
barrier.cluster.wait[.acquire]     UCGABAR_WAIT; CCTL.IVALL
=================================  ======================================================

(``.aligned`` or not.)  The arrive is a release (unless ``.relaxed``) and the wait an acquire (PTX
ISA, "barrier.cluster"), so a memory operation sunk below a release arrive or hoisted above a
wait is a crossing the checker now sees; before, a kernel with a cluster barrier was "not fully
checked" (exit 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu import sass

CAPTURED = Path(__file__).resolve().parents[1] / "kernels" / "captured"
needs_toolchain = pytest.mark.skipif(sass.find_tool("nvcc") is None or sass.find_tool("nvdisasm") is None,
                                     reason="needs nvcc and nvdisasm")


def _texts() -> tuple[str, str]:
    return ((CAPTURED / "cluster_barrier.sm_90.ptx").read_text(), (CAPTURED / "cluster_barrier.sm_90.sass").read_text())


def _move(text: str, line: str, before: str) -> str:
    """The SASS with the instruction ``line`` moved to just before the first ``before``."""
    rows = text.splitlines()
    (k,) = [i for i, r in enumerate(rows) if line in r]
    row = rows.pop(k)
    j = next(i for i, r in enumerate(rows) if before in r)
    rows.insert(j, row)
    return "\n".join(rows) + "\n"


def test_cluster_barriers_are_mapped_and_the_kernel_fully_checked() -> None:
    ptx, sass_text = _texts()
    rep = sass.analyse(ptx, sass_text, "sm_90", "cluster_barrier")
    (fn,) = rep.functions
    assert fn.complete and not fn.unchecked, fn.unchecked
    assert fn.mapped_mem_ops == fn.ptx_mem_ops == 9
    assert fn.findings == ()
    assert sass.exit_status([rep]) == sass.EXIT_CLEAN


def test_a_load_hoisted_above_the_wait_is_forbidden() -> None:
    ptx, sass_text = _texts()
    moved = _move(sass_text, "LDG.E R7, desc[UR4][R2.64+0x4]", "UCGABAR_WAIT")
    (fn,) = sass.analyse(ptx, moved, "sm_90", "cluster_barrier").functions
    found = [f for f in fn.findings if f.check == sass.CROSSING and f.direction == sass.HOISTED]
    assert found and all(f.verdict == sass.FORBIDDEN for f in found)
    assert any("barrier.cluster.wait" in f.sync_ptx for f in found), [(f.sync_ptx, f.sync_sass) for f in found]


def test_a_store_sunk_below_a_release_arrive_is_forbidden() -> None:
    ptx, sass_text = _texts()
    rows = sass_text.splitlines()
    first_arrive = next(i for i, r in enumerate(rows) if "UCGABAR_ARV" in r)
    (k,) = [i for i, r in enumerate(rows) if "STG.E desc[UR4][R2.64], R11" in r]
    row = rows.pop(k)
    rows.insert(first_arrive, row)  # after the arrive (the pop shifted it up by one)
    (fn,) = sass.analyse(ptx, "\n".join(rows) + "\n", "sm_90", "cluster_barrier").functions
    sunk = [f for f in fn.findings if f.check == sass.CROSSING and f.direction == sass.SUNK]
    assert any(f.verdict == sass.FORBIDDEN and "barrier.cluster.arrive" in f.sync_ptx for f in sunk), \
        [(f.sync_ptx, f.verdict) for f in fn.findings]


def test_a_store_sunk_below_a_relaxed_arrive_is_not_forbidden() -> None:
    """``.relaxed``: 'no memory ordering and visibility guarantees provided for the memory accesses
    performed prior to barrier.cluster.arrive' (PTX ISA, barrier.cluster)."""
    ptx, sass_text = _texts()
    rows = sass_text.splitlines()
    (k,) = [i for i, r in enumerate(rows) if "STG.E desc[UR4][R4.64+0x8], R9" in r]
    assert "UCGABAR_ARV" in rows[k + 1]
    rows[k], rows[k + 1] = rows[k + 1], rows[k]
    (fn,) = sass.analyse(ptx, "\n".join(rows) + "\n", "sm_90", "cluster_barrier").functions
    assert not [f for f in fn.findings if f.verdict == sass.FORBIDDEN], [(f.sync_ptx, f.verdict) for f in fn.findings]


@needs_toolchain
def test_ptxas_still_emits_this_sass() -> None:
    """The captured SASS is what the installed ptxas emits (a new toolchain that changes it fails here)."""
    rep = sass.check_cu_source((CAPTURED / "cluster_barrier.cu").read_text(), ("sm_90",), source="cluster_barrier.cu")
    (r,) = rep
    (fn,) = r.functions
    assert fn.complete and fn.findings == (), (fn.unchecked, fn.findings)
