"""Shapes a hostile review of Blackwell kernels found (FlashMLA 9241ae3's sm100 kernels, CUTLASS 7107b05's examples
77 and 81, DeepGEMM's sm100 GEMM; 2026-12-05), and what the checker says of them now."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu import sass
from fuzzgpu.sass.cfg import ptx_flows
from fuzzgpu.sass.ptx_parser import parse_ptx

CAPTURED = Path(__file__).resolve().parents[1] / "kernels" / "captured"

needs_toolchain = pytest.mark.skipif(
    sass.find_tool("nvcc") is None or sass.find_tool("nvdisasm") is None,
    reason="needs nvcc and nvdisasm (pip install nvidia-cuda-nvdisasm)")


def test_a_breakpoint_ends_a_path_on_both_graphs():
    """PTX ``brkpt`` "suspends execution" (PTX ISA brkpt); ptxas emits ``BPT.TRAP``, as for ``trap``, and the SASS
    graph takes it for an exit.  The PTX graph let it fall through: the path load -> ``BPT.TRAP`` -> exit ran no
    release in the SASS only, and the load and store before CUTLASS's ``pipeline_check_is_producer`` (``brkpt``
    before the producer's ``mbarrier.arrive``, a build without ``-DNDEBUG``) were "sunk below" the arrive: 2 false
    "forbidden" in ``brkpt_exit.cu`` (captured at sm_100a, nvcc 13.0.88), 1,131 in CUTLASS example 77."""
    ptx = (CAPTURED / "brkpt_exit.sm_100a.ptx").read_text()
    (fn,) = parse_ptx(ptx)
    flows = ptx_flows(fn)
    (at,) = [i.index for i in fn.instrs if i.opcode == "brkpt"]
    assert flows[at].exits and not flows[at].falls_through
    (rep,) = sass.analyse(ptx, (CAPTURED / "brkpt_exit.sm_100a.sass").read_text(), "sm_100a", "brkpt_exit.cu").functions
    assert rep.findings == () and rep.complete, (rep.findings, rep.unchecked)


@needs_toolchain
def test_a_breakpoint_before_a_release_compiled_for_sm_90a():
    (rep,) = sass.check_path(CAPTURED / "brkpt_exit.cu", ("sm_90a",))
    assert all(fn.findings == () for fn in rep.functions), [fn.findings for fn in rep.functions]


def test_a_wait_whose_phase_check_is_not_found_is_said_not_checked():
    """``lone_wait_after_exit.cu`` (captured at sm_100a): a lone ``mbarrier.try_wait`` -- its predicate only stored --
    then an ``ld.shared``: an unguarded access when the wait's phase check is found (``lone_control`` in the review).
    Here ptxas lays the warp roles out in another order than the PTX and no SASS phase check is paired with the wait.
    The check of the accesses after it is not made, and the function says so; it was "fully checked, clean"."""
    ptx = (CAPTURED / "lone_wait_after_exit.sm_100a.ptx").read_text()
    (rep,) = sass.analyse(ptx, (CAPTURED / "lone_wait_after_exit.sm_100a.sass").read_text(), "sm_100a",
                          "lone_wait_after_exit.cu").functions
    assert not rep.complete and rep.findings == ()
    assert any("mbarrier.try_wait" in u and "whether an access after it is unguarded was not checked" in u
               for u in rep.unchecked), rep.unchecked


@needs_toolchain
def test_the_same_lone_wait_without_the_other_role_is_forbidden():
    """The control of ``lone_wait_after_exit.cu``: the same lone ``try_wait`` then ``ld.shared``, without the other warp
    role, so its phase check is paired -- the access after it is unguarded: forbidden (the check the other kernel says
    it could not make is one that fails)."""
    (rep,) = sass.check_path(CAPTURED / "lone_wait_control.cu", ("sm_100a",))
    assert [(f.check, f.verdict) for f in rep.findings] == [(sass.UNGUARDED_WAIT, sass.FORBIDDEN)], rep.findings
