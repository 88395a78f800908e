"""Shapes of production kernels that gave false findings (the hostile test of 2026-12-05), trimmed to
hand-written PTX/SASS text (no toolchain needed): loads widened into one wider SASS load (CUTLASS
example 88), sm_100a's asynchronous stores (STAS, REDAS, UMEMSETS) and its indirect branch through
a uniform register (BRXU, CUTLASS example 75)."""

from __future__ import annotations

from pathlib import Path

from fuzzgpu import sass
from fuzzgpu.sass import parse_sass
from fuzzgpu.sass.cfg import sass_cfg

DATA = Path(__file__).parents[1] / "data" / "sass"


def _widened() -> sass.Report:
    return sass.analyse((DATA / "widened_lds.sm_90a.ptx").read_text(), (DATA / "widened_lds.sm_90a.sass").read_text(),
                        "sm_90a", "widen.cu")


def test_loads_combined_into_a_wider_load_are_not_deleted():
    """Line 10's two adjacent loads, on two paths and through two address registers, are one
    LDS.64 [R11+0x100]; line 20's pair at the same offset is another, LDS.64 [R0+0x100].  Offsets
    alone mixed the two (three false "deleted" before): the source line tells them apart and each
    half is paired with the wider load.  Line 30's unused load is still deleted, with its line."""
    rep = _widened()
    (f,) = rep.findings
    assert f.check == sass.DELETED and f.op_ptx.startswith("ld.shared.f32 %f5")
    assert (f.src_file, f.src_line) == ("/t/widen.cu", 30)
    (fn,) = rep.functions
    assert fn.unchecked == ()
    combined = [n for n in fn.notes if "loads combined" in n]
    assert len(combined) == 4 and all("LDS.64@0020" in n for n in combined)


def test_a_load_of_several_wider_loads_is_not_checked_never_deleted():
    """Three wider loads of line 10 could hold its loads (two PTX, three SASS: not paired one to
    one): accounted for, not deleted; which one is not known: not checked."""
    ptx = (DATA / "widened_lds.sm_90a.ptx").read_text()
    line10 = "        /*0020*/                   LDS.64 R4, [R11+0x100] ;\n"
    listing = (DATA / "widened_lds.sm_90a.sass").read_text().replace(
        line10, line10 + line10.replace("0020", "0024").replace("R11", "R12") + line10.replace("0020", "0028").replace("R11", "R13"))
    rep = sass.analyse(ptx, listing, "sm_90a", "widen.cu")
    assert not [f for f in rep.findings if f.src_line == 10]
    (fn,) = rep.functions
    assert len([u for u in fn.unchecked if "one of several wider SASS loads" in u]) == 4


_ASYNC_PTX = """
.version 9.0
.target sm_100a
.address_size 64

.visible .entry a(
	.param .u32 a_param_0
)
{
	.reg .b32 	%r<8>;
	.shared .align 16 .b8 buf[256];
	.shared .align 8 .b64 bar;

	ld.param.u32 	%r1, [a_param_0];
	mov.u32 	%r2, buf;
	mov.u32 	%r3, bar;
	st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%r2], %r1, [%r3];
	red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r2+64], %r1, [%r3];
	st.bulk.weak.shared::cta [%r2], 256, 0;
	ret;

}
"""

_ASYNC_SASS = """
	.section	.text.a,"ax",@progbits
a:
.text.a:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   STAS [R4.64], R2 ;
        /*0020*/                   REDAS.ADD [R4.64], R3 ;
        /*0030*/                   UMEMSETS.64 [UR8+0x10], URZ, UR4 ;
        /*0040*/                   EXIT ;
"""


def test_async_stores_pair_with_stas_redas_umemsets():
    """st.async, red.async and st.bulk (sm_100a) are STAS, REDAS.ADD and UMEMSETS.64: paired, not
    "deleted"; the two completed through the mbarrier are not fully checked."""
    ops = {m.instr.opcode: (m.kind, m.space) for m in parse_sass(_ASYNC_SASS)[0].mem_ops}
    assert ops == {"STAS": ("store", "cluster"), "REDAS": ("reduction", "cluster"), "UMEMSETS": ("store", "shared")}
    rep = sass.analyse(_ASYNC_PTX, _ASYNC_SASS, "sm_100a", "async.cu")
    assert rep.findings == ()
    (fn,) = rep.functions
    assert fn.ptx_mem_ops == 3 and fn.sass_mem_ops == 3
    assert len([u for u in fn.unchecked if "complete-tx" in u]) == 2


def _listing(*lines: str) -> str:
    body = "\n".join(f"        /*{16 * i:04x}*/                   {s} ;" if not s.endswith(":") else s
                     for i, s in enumerate(lines))
    return '\t.section\t.text.k,"ax",@progbits\nk:\n.text.k:\n' + body + "\n"


def test_uniform_indirect_branch_goes_to_its_listed_targets():
    """sm_100a's BRXU UR8 (CUTLASS 75's warp-role dispatch) is a branch to its BRANCH_TARGETS, with
    no fall-through: the code behind a target is reachable (before: 135 operations unreachable and a
    bar.arrive "not found"), the instruction after it only through a target."""
    for op in ("BRXU UR8", "JMXU UR8", "BRX R6"):
        (fn,) = parse_sass(_listing(
            f'{op} -0x10 (*"BRANCH_TARGETS .L_x_1,.L_x_2"*)', "STS [R0], R1", ".L_x_1:", "EXIT", ".L_x_2:",
            "BAR.ARV 0x1, 0x40", "LDS R1, [UR4]", "EXIT"))
        g = sass_cfg(fn)
        by_op = {i.opcode: i.index for i in fn.instrs}
        assert g.is_reachable(by_op["LDS"]) and g.is_reachable(by_op["BAR"]), op
        assert not g.is_reachable(by_op["STS"]), op


def test_a_branch_back_to_a_ret_block_is_no_loop() -> None:
    """``@%p bra $L__BB0_1`` back to a block that only returns (ptxas's shared exit, CUTLASS example 61)
    closes no cycle: no loop, so no "loop-deleted" finding, and the accesses around it are not "in a
    loop" (which would let one stand for any number of SASS operations); a real backward loop still is."""
    from fuzzgpu import sass

    text = (Path(__file__).resolve().parents[1] / "data" / "sass" / "back_to_ret.ptx").read_text()
    (fn,) = sass.parse_ptx(text)
    assert fn.loops == ()
    looped = text.replace("$L__BB0_1:\n\tret;", "$L__BB0_1:\n\tadd.s32 %r1, %r1, 1;")
    (fn,) = sass.parse_ptx(looped)
    assert len(fn.loops) == 1
