"""False findings a hostile check of FlashInfer fb28d72 found (its trtllm fused-MoE kernels at the default ``-O3``,
its all-reduce at ``-O1``), and what the checker says of those shapes now:

* a PTX load whose SASS load the pairing by address did not find was "deleted" (permitted-hazard) even
  when its value is read later -- which ptxas does only with code whose result nothing uses (``dead_chain_load.cu``
  below): 48 in ``trtllm_fused_moe_dev_kernel.cu`` (cub's
  BlockReduce: a ``__shared__`` symbol that ptxas addresses from the shared window's base, its offset
  folded into the immediates) and 36 in ``trtllm_fused_moe_routing_deepseek.cu`` (three loads read as one
  ``LDS.128``).  Now "not checked", with the reason (``checks.value_read_later``);
* a loop with no memory operation, no synchronisation, no inline asm, whose registers nothing after it
  reads (LLVM's counted loop left empty after unswitching, ``permuteKernel``) was a "register delay loop"
  and its absence from the SASS "loop-deleted": 18 findings.  Deleting it is not observable: no longer a
  delay loop (``ptx_text.loop_is_intended``); an ``asm volatile`` in a loop still makes it one;
* at ptxas ``-O1`` the cluster barrier's one-CTA fallback tests the cluster size again between the arrive and
  the wait: a false "forbidden" (84 in FlashInfer's ``trtllm_allreduce``) until two ``ISETP``s of one kernel
  constant were known equal; the 9 left were a 32-bit write of a register just below the loaded one, between the
  first ``LDC`` and its ``ISETP``, taken for a possible wide write over it."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu import sass
from fuzzgpu.sass.checks import value_read_later
from fuzzgpu.sass.ptx_parser import parse_ptx

from sass_cli import own_cache  # noqa: F401 -- the autouse fixture

DATA = Path(__file__).resolve().parents[1] / "data" / "sass"

needs_toolchain = pytest.mark.skipif(
    sass.find_tool("nvcc") is None or sass.find_tool("nvdisasm") is None,
    reason="needs nvcc and nvdisasm (pip install nvidia-cuda-nvdisasm)")


def _ptx(body: str, regs: str = ".reg .pred %p<4>;\n\t.reg .b32 %r<12>;\n\t.reg .b64 %rd<4>;") -> str:
    return (".version 8.5\n.target sm_90\n.address_size 64\n.visible .entry k(\n\t.param .u64 k_param_0,\n"
            f"\t.param .u32 k_param_1\n)\n{{\n\t{regs}\n\tld.param.u64 %rd1, [k_param_0];\n"
            f"\tld.param.u32 %r1, [k_param_1];\n{body}\tret;\n}}\n")


_COUNTED = """\tmov.u32 %r2, 0;
$L__BB0_1:
{asm}\tadd.s32 %r2, %r2, 1;
\tsetp.lt.s32 %p1, %r2, %r1;
\t@%p1 bra $L__BB0_1;
\tst.global.u32 [%rd1], {stored};
"""


@pytest.mark.parametrize("asm, stored, delay", [
    ("", "%r1", False),                                           # an empty counted loop: its count is read by nothing after it
    ("\t// begin inline asm\n\t// end inline asm\n", "%r1", True),  # `asm volatile("")` in it: a delay asked for
    ("", "%r2", True),                                           # its count is stored after it: a computation
])
def test_a_register_loop_is_a_delay_loop_when_its_source_asks_for_one(asm, stored, delay):
    (fn,) = parse_ptx(_ptx(_COUNTED.format(asm=asm, stored=stored)))
    (loop,) = fn.loops
    assert loop.delay is delay and not loop.reads_clock


_SASS_NO_LOOP = """
\t.section\t.text.k,"ax",@progbits
.text.k:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   STG.E desc[UR4][R2.64], R5 ;
        /*0020*/                   EXIT ;
"""


@pytest.mark.parametrize("asm, stored, deleted", [("", "%r1", 0), ("\t// begin inline asm\n\t// end inline asm\n", "%r1", 1)])
def test_an_empty_counted_loop_ptxas_removed_is_no_finding(asm, stored, deleted):
    (fn,) = sass.analyse(_ptx(_COUNTED.format(asm=asm, stored=stored)), _SASS_NO_LOOP, "sm_90", "k.cu").functions
    assert sum(f.check == sass.LOOP_DELETED for f in fn.findings) == deleted, fn.findings


def test_a_load_whose_value_is_read_later_is_read_later():
    (fn,) = parse_ptx(_ptx("""\tld.global.u32 %r2, [%rd1];
\tld.global.u32 %r3, [%rd1+4];
\tmov.u32 %r3, 7;
\tld.global.u32 %r4, [%rd1+8];
\tadd.s32 %r5, %r2, %r3;
\t@%p1 st.global.u32 [%rd1], %r5;
"""))
    by = {i.text.split(",")[0].split()[-1]: i for i in fn.instrs if i.opcode == "ld" and "param" not in i.mods}
    assert value_read_later(by["%r2"], fn.instrs)        # read by the add
    assert not value_read_later(by["%r3"], fn.instrs)    # written again (mov) before the add reads %r3
    assert not value_read_later(by["%r4"], fn.instrs)    # never read


@needs_toolchain
def test_a_shared_symbol_addressed_from_the_windows_base_is_not_deleted(tmp_path):
    """Two ``__shared__`` variables (``a``, then ``b``): ptxas addresses ``b[2..4]`` from the window's base,
    ``b``'s offset folded in (``[R11+0xc]``, ``[R11+0x10]``).  Without the SASS's line information the layout
    of the window is not known (:mod:`fuzzgpu.sass.shared_layout`; with it the module is fully checked,
    ``test_sass_shared_layout.py``): the pairing by address takes ``[R11+0xc]`` for ``b+12`` and finds no load
    of ``b+8`` -- whose value the fma reads: not checked (the message does not claim ptxas kept it: a load feeding
    code whose result nothing uses may be deleted with it)."""
    ptx, cubin = sass.toolchain.compile_cu(DATA / "shared_symbol_offset.cu", "sm_90a", tmp_path)
    bare = "\n".join(x for x in sass.toolchain.disassemble(cubin).splitlines() if "//##" not in x)
    (fn,) = sass.analyse(ptx, bare, "sm_90a", "shared_symbol_offset.cu").functions
    assert fn.findings == (), fn.findings
    assert any("an instruction reads its value: the addresses did not tell which SASS load it is, or ptxas deleted it"
               in u for u in fn.unchecked), fn.unchecked


@needs_toolchain
def test_the_cluster_barrier_fallback_at_O1_is_no_finding():
    """At ptxas -O1 the cluster barrier's one-CTA fallback tests the cluster size twice, each time with its
    own ``LDC R, c[0x0][0x140]; ISETP.EQ.U32.AND P1, PT, R, 0x1, PT``: two writes of P1 with one value, so
    the path that skips the arrive and runs the wait never runs (``cfg.Flow.value``).  It was a false
    "forbidden": the store before the arrive "sunk below" its MEMBAR (84 in FlashInfer's ``tar_driver``)."""
    (rep,) = sass.check_path(DATA / "cluster_fallback.cu", ("sm_90a",), opt=1)
    assert rep.findings == () and rep.complete, (rep.findings, [fn.unchecked for fn in rep.functions])



@needs_toolchain
def test_a_32_bit_write_of_a_lower_register_leaves_the_cluster_size_known():
    """The first test of the cluster size at -O1 is ``LDC R6, c[0x0][0x140]; @!P0 S2R R5, SR_CgaCtaId;
    @!P0 MOV R4, 0x400; ...; ISETP.EQ.U32.AND P0, PT, R6, 0x1, PT``: a write of R4 or R5 was taken for a
    possible 64- or 128-bit write over R6, the first ISETP's value was lost, and the path that skips the arrive
    and runs the wait gave the load and the store before the barrier a false "forbidden" (FlashInfer's
    ``trtllm_allreduce`` at -O1: 9, ``LDS R0`` between ``LDC R2`` and its ISETP).  A 32-bit result writes its own
    register only (``cfg._writes_register``)."""
    (rep,) = sass.check_path(DATA / "cluster_fallback_clobber.cu", ("sm_90a",), opt=1)
    assert rep.findings == () and rep.complete, (rep.findings, [fn.unchecked for fn in rep.functions])

def _listing(*instrs: str) -> str:
    body = "\n".join(f"        /*{i * 16:04x}*/                   {t} ;" for i, t in enumerate(instrs))
    return f'\t.section\t.text.k,"ax",@progbits\n.text.k:\n{body}\n'


def test_two_tests_of_one_kernel_constant_write_one_value():
    """What :func:`fuzzgpu.sass.cfg.sass_flows` knows of an ``ISETP``: the comparison of a kernel constant
    (an ``LDC c[0x0][imm]`` of its block, no write of the register since) with an immediate -- equal for the
    two tests of the cluster size; nothing when the register was written again (an ``ATOM`` with a
    predicate writes its second operand) or when a label starts a block between the load and the test."""
    from fuzzgpu.sass.cfg import sass_flows
    from fuzzgpu.sass.sass_parser import parse_sass

    def values(*instrs: str) -> list[str]:
        (fn,) = parse_sass(_listing(*instrs))
        return [f.value for f in sass_flows(fn)]

    v = values("LDC R2, c[0x0][0x140]", "ISETP.EQ.U32.AND P1, PT, R2, 0x1, PT", "LDC R0, c[0x0][0x140]",
               "ISETP.EQ.U32.AND P2, PT, R0, 0x1, PT", "EXIT")
    assert v[1] == v[3] == "ISETP.EQ.U32.AND c[0x0][0x140] 0x1"
    assert values("LDC R4, c[0x0][0x140]", "ATOM.E.ADD.STRONG.GPU P0, R4, [R2], R5",
                  "ISETP.EQ.U32.AND P1, PT, R4, 0x1, PT", "EXIT")[2] == ""
    assert values("LDC.64 R4, c[0x0][0x140]", "ISETP.EQ.U32.AND P1, PT, R4, 0x1, PT", "EXIT")[1] == ""  # (only 32-bit loads)
    assert values("LDC R4, c[0x0][0x140]", "ISETP.EQ.U32.AND P1, PT, R4, R7, PT", "EXIT")[1] == ""  # R7: not a constant
    # what lies between the load and the test: a 32-bit result writes its own register only; a wider one (.64,
    # .WIDE, .128) the next ones too; a result of unknown width (HMMA's) or a call any register
    assert values("LDC R2, c[0x0][0x140]", "LDS R0, [UR4+0x4]", "@!P0 S2R R1, SR_CgaCtaId",
                  "ISETP.EQ.U32.AND P0, PT, R2, 0x1, PT", "EXIT")[3] == "ISETP.EQ.U32.AND c[0x0][0x140] 0x1"
    for between in ("LDS.128 R0, [UR4]", "IMAD.WIDE R1, R3, 0x2, R12", "LDC.64 R2, c[0x0][0x3c8]", "@!P0 FADD R2, RZ, R8",
                    "HMMA.16816.F32 R0, R4, R8, R0", "CALL.REL.NOINC `($f)", "SHFL.BFLY PT, R2, R13, 0x8, 0x1f"):
        assert values("LDC R2, c[0x0][0x140]", between, "ISETP.EQ.U32.AND P0, PT, R2, 0x1, PT", "EXIT")[2] == "", between
    assert values("LDC R40, c[0x0][0x140]", "HGMMA.64x128x16.F32 R24, gdesc[UR4], RZ",  # R24..R87
                  "ISETP.EQ.U32.AND P0, PT, R40, 0x1, PT", "EXIT")[2] == ""
    assert values("LDC R6, c[0x0][0x140]", "LDG.E.ENL2.256.CONSTANT R8, R4, desc[UR4][R2.64]",  # R8..R11, R4..R7
                  "ISETP.EQ.U32.AND P0, PT, R6, 0x1, PT", "EXIT")[2] == ""
    assert values("LDC R2, c[0x0][0x140]", "BAR.SYNC.DEFER_BLOCKING R2", "IMAD.WIDE R0, R3, 0x2, R12",
                  "ISETP.EQ.U32.AND P0, PT, R2, 0x1, PT", "EXIT")[3] != ""  # R0:R1 -- R2 is read, not written


@needs_toolchain
def test_loads_feeding_dead_code_are_not_said_to_be_kept(tmp_path):
    """``tests/data/sass/dead_chain_load.cu``: two shared loads feed a ``__shfl_xor_sync`` whose result nothing
    reads; ptxas deletes the chain, loads and shuffle (no LDS, no SHFL in the SASS).  The loads' value is read (by
    the ``max``), one step deep: not checked, and the message says either may be -- the pairing missed them, or
    ptxas deleted them with code whose result nothing uses -- never that ptxas kept them."""
    (rep,) = sass.check_path(DATA / "dead_chain_load.cu", ("sm_90a",), keep_dir=tmp_path)
    (fn,) = rep.functions
    assert fn.findings == (), fn.findings
    loads = [u for u in fn.unchecked if "ld.shared.f32" in u]
    assert len(loads) == 2 and all("or ptxas deleted it with code whose result nothing uses" in u for u in loads), fn.unchecked
    assert not any("did not delete" in u for u in fn.unchecked)
