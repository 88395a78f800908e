"""The unguarded-wait check on the SASS control-flow graph (``fuzzgpu.sass.waits``): an access is
unguarded when some path from the phase check reaches it with nothing that tests the wait's
predicate -- through a join, not only down the listing -- and the phase check of a PTX wait is the
one with its mbarrier operand where the address tells them apart."""

from __future__ import annotations

import gzip
from pathlib import Path

from test_sass_cfg import _listing  # a listing of function k from instruction and label lines

from fuzzgpu import sass
from fuzzgpu.sass import sass_parser, waits

DATA = Path(__file__).resolve().parents[1] / "data" / "real-kernels"

#: the lone wait of fuzzgpu's generated kernels: the predicate is only stored (selp), then a load
_PTX = """
.visible .entry k(.param .u64 p)
{
\tmbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], 0;
\tselp.u32 %r2, 1, 0, %p1;
\tld.shared.u32 %r3, [%r4+8];
\tst.global.u32 [%rd1], %r3;
\tret;
}
"""


def _waits(ptx: str, *lines: str) -> list[sass.Finding]:
    (fn,) = sass.analyse(ptx, _listing(*lines), "sm_90", "k").functions
    return [f for f in fn.findings if f.check == sass.UNGUARDED_WAIT]


def test_a_join_after_an_unrelated_branch_does_not_end_the_paths():
    """``@P1 BRA`` on a predicate that is not the wait's, then the join: both paths reach the
    ``LDS`` with nothing testing ``P0``.  The listing scan stopped at the label (a join) and missed
    it."""
    (f,) = _waits(_PTX, "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4], R4", "SEL R5, RZ, 0x1, !P0", "@P1 BRA `(.L_x_1)",
                  "IADD3 R6, R6, 0x1, RZ", ".L_x_1:", "LDS R0, [UR4+0x8]", "STG.E desc[UR4][R2.64], R0", "EXIT")
    assert f.op_sass.startswith("LDS R0") and f.verdict == sass.FORBIDDEN and f.sync_sass.startswith("SYNCS.PHASECHK")


def test_a_branch_target_is_on_the_paths():
    """An unconditional branch to the load: the listing scan stopped at the branch."""
    (f,) = _waits(_PTX, "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4], R4", "SEL R5, RZ, 0x1, !P0", "BRA `(.L_x_2)",
                  "NOP", ".L_x_2:", "LDS R0, [UR4+0x8]", "STG.E desc[UR4][R2.64], R0", "EXIT")
    assert f.op_sass.startswith("LDS R0")


def test_a_branch_on_the_predicate_on_every_path_guards():
    """The retry branch on ``P0`` before the join guards both the fall-through and the join."""
    assert _waits(_PTX, "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4], R4", "@!P0 BRA `(.L_x_0)", "@P1 BRA `(.L_x_1)",
                  "NOP", ".L_x_1:", "LDS R0, [UR4+0x8]", "STG.E desc[UR4][R2.64], R0", "EXIT", ".L_x_0:",
                  "SYNCS.PHASECHK.TRANS64 P0, [UR4], R4", "@!P0 BRA `(.L_x_0)", "BRA `(.L_x_1)") == []


def test_a_dropped_result_guards_nothing_and_orders_nothing_observable():
    """CUTLASS's sm_100 mainloop (7107b05 example 70) issues the next stage's ``try_wait`` ahead
    (``@P0 SYNCS.PHASECHK.TRANS64.TRYWAIT P1``) and tests ``P1`` at the loop head; when the loop ends
    ``P1`` is overwritten unread: nothing can observe whether that wait returned true, so the store
    after it is no unguarded access."""
    assert _waits(_PTX, ".L_x_9:", "@P1 BRA `(.L_x_3)", "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR5], R3",
                  "@!P0 BRA `(.L_x_9)", ".L_x_3:", "@P0 SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR4], R0",
                  "BRA.U UP0, `(.L_x_9)", "ISETP.NE.AND P1, PT, R2, 0x2, PT", "LDS R0, [UR4+0x8]",
                  "STG.E desc[UR4][R2.64], R0", "EXIT") == []


def test_a_spill_to_local_memory_before_the_guard_is_not_unguarded():
    """flash-attention 0251105a's hopper hdim64 kernels (FA3's default build, 2026-12-05 recheck): ptxas
    spills a register (``STL``, and refills it with ``LDL``) between ``consumer_try_wait``'s phase check
    and the branch on its token.  Local memory is the thread's own (RULE_LOCAL): nothing the barrier
    publishes is read or written there, so it is no unguarded access; a shared load in the same place
    still is."""
    spill = ["SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR4], R5", "STL [R1+0x28], R0", "@P1 BRA `(.L_x_1)",
             "SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR4], R5", "@!P1 BRA `(.L_x_0)", ".L_x_1:", "LDL R0, [R1+0x28]",
             "LDS R0, [UR4+0x8]", "STG.E desc[UR4][R2.64], R0", "EXIT", ".L_x_0:", "EXIT"]
    assert _waits(_PTX, *spill) == []
    (f,) = _waits(_PTX, *spill[:1], "LDS R6, [UR4+0x10]", *spill[1:])
    assert f.op_sass.startswith("LDS R6") and "STL" not in f.evidence


_TWO_WAITS = """
.shared .align 8 .b8 bars[16];
.visible .entry k(.param .u64 p)
{
\tmbarrier.try_wait.parity.relaxed.cta.shared::cta.b64 %p2, [bars], 0;
\tmbarrier.try_wait.parity.shared::cta.b64 %p1, [bars+8], 0;
\tselp.u32 %r2, 1, 0, %p1;
\tld.shared.u32 %r3, [%r4+8];
\tst.global.u32 [%rd1], %r3;
\tret;
}
"""


def test_the_phase_check_is_paired_with_its_wait_by_the_mbarrier_operand():
    """Two waits on two mbarriers of one variable, laid out the other way round in SASS (as ptxas
    lays out branches): by the order of the synchronisation tokens the acquiring wait on
    ``bars+8`` is the second phase check and the relaxed one the first, so the unguarded ``LDS``
    after the first check was no finding.  By the operand (``[UR4+0x8]``) the first check is the
    acquiring wait's."""
    (f,) = _waits(_TWO_WAITS, "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4+0x8], R4", "SEL R5, RZ, 0x1, !P0",
                  "LDS R0, [UR4+0x8]", "SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR4], R4", "STG.E desc[UR4][R2.64], R0", "EXIT")
    assert f.sync_ptx.startswith("mbarrier.try_wait.parity.shared::cta.b64 %p1, [bars+8]")
    assert f.sync_sass.startswith("SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4+0x8]") and f.op_sass.startswith("LDS R0")


def test_operand_pairing_on_flashmla():
    """FlashMLA 70b9468 (splitkv_mla.cu, sm_90a): the waits whose mbarrier is a shared variable
    plus an offset, alone on it on both sides, are paired with the phase check of that offset --
    and the kernel has no unguarded wait."""
    ptx = gzip.decompress((DATA / "flashmla" / "splitkv_mla-70b9468.sm_90a.ptx.gz").read_bytes()).decode()
    listing = gzip.decompress((DATA / "flashmla" / "splitkv_mla-70b9468.sm_90a.sass.gz").read_bytes()).decode()
    (pf,) = sass.parse_ptx(ptx)
    (sf,) = sass.parse_sass(listing)
    paired = waits.checks_by_operand(pf.events, sf)
    for k, check in paired.items():
        root, off = pf.events[k].sync.address  # type: ignore[union-attr,misc]
        assert not root.startswith("%") and sass_parser._sass_address(check.operands, check.opcode)[1] == off
    (fn,) = sass.analyse(ptx, listing, "sm_90a", "splitkv_mla").functions
    assert [f for f in fn.findings if f.check == sass.UNGUARDED_WAIT] == []
