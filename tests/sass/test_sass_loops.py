"""A loop is its natural loop on the control-flow graph, not the listing between its head and its backward
branch (:mod:`fuzzgpu.sass.loops`).

FlashInfer fb28d72's ``trtllm_fused_moe_dev_kernel.cu`` at sm_100a gave 144 false "loop-deleted" findings
(``activationKernel``, ``permuteKernel``, ``finalizeKernel``): NVVM unswitches their grid-stride loop nests
and rotates each copy, so the outer loop's header and latch lie together in the PTX (``setp; @%p bra BODY;
LATCH: add; setp; @%p bra HEAD``) and its body -- loads, stores, the inner loops -- after the latch, with a
``bra.uni LATCH`` back.  The listing between head and branch held no memory operation: a "register loop",
and, its counter read in the body after it, a "delay" (:func:`fuzzgpu.sass.ptx_text.loop_is_intended`).
ptxas lays the nest out contiguously, so the SASS loop held the loads: busy, no SASS delay loop to count
against it.  At sm_90a NVVM does not unswitch these nests and the listing happened to agree.
``tests/data/sass/rotated_loop_body.cu`` is that shape (``rotated``) and the same nest with an
``asm volatile`` delay loop ptxas deletes (``rotated_delay``, still reported)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu import sass
from fuzzgpu.sass.loops import back_edges, natural_loop, written_and_read_after
from fuzzgpu.sass.ptx_parser import parse_ptx
from fuzzgpu.sass.sass_parser import parse_sass

from sass_cli import own_cache  # noqa: F401 -- the autouse fixture

DATA = Path(__file__).resolve().parents[1] / "data" / "sass"

needs_toolchain = pytest.mark.skipif(
    sass.find_tool("nvcc") is None or sass.find_tool("nvdisasm") is None,
    reason="needs nvcc and nvdisasm (pip install nvidia-cuda-nvdisasm)")


def _ptx(body: str) -> str:
    return (".version 8.5\n.target sm_90\n.address_size 64\n.visible .entry k(\n\t.param .u64 k_param_0,\n"
            "\t.param .u32 k_param_1\n)\n{\n\t.reg .pred %p<4>;\n\t.reg .b32 %r<12>;\n\t.reg .b64 %rd<4>;\n"
            "\tld.param.u64 %rd1, [k_param_0];\n\tld.param.u32 %r1, [k_param_1];\n"
            f"\tmov.u32 %r2, 0;\n{body}$L__BB0_9:\n\tret;\n}}\n")


# LLVM's rotated loop: header and latch together, the body after the latch, a bra.uni back to the latch
_ROTATED = """$L__BB0_1:
\tsetp.lt.s32 %p1, %r2, 8;
\t@%p1 bra $L__BB0_3;
$L__BB0_2:
\tadd.s32 %r2, %r2, 1;
\tsetp.lt.s32 %p2, %r2, %r1;
\t@%p2 bra $L__BB0_1;
\tbra.uni $L__BB0_9;
$L__BB0_3:
{body}\tbra.uni $L__BB0_2;
"""


@pytest.mark.parametrize("body, delay", [
    ("\tmul.wide.s32 %rd2, %r2, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\tst.global.u32 [%rd3], %r2;\n", False),  # FlashInfer's
    ("\tadd.s32 %r3, %r2, 1;\n", False),                            # nothing in it, nothing after it reads it
    ("\t// begin inline asm\n\t// end inline asm\n", True),         # an asm volatile in its out-of-line body
])
def test_a_rotated_loop_is_its_natural_loop(body, delay):
    (fn,) = parse_ptx(_ptx(_ROTATED.format(body=body)))
    (loop,) = fn.loops
    assert loop.delay is delay and not loop.reads_clock


def test_a_copy_shares_a_rotated_loop_with_its_wait():
    """A ``cp.async`` issued after its ``cp.async.wait_group`` in one iteration is completed by the next
    iteration's wait: the wait orders the shared read of the copy's destination (PTX ISA, cp.async.wait_group:
    it waits for the thread's committed cp.async groups; the copy and the read conflict: one writes what
    the other reads).  In a rotated loop both lie after the backward branch that closes it; the loop is
    its natural loop (``PtxLoop.body``), so the copy still shares it with the wait.  Taken as the listing
    from its head to that branch, the loop held neither: the wait ordered nothing and a read moved above
    it was no finding."""
    body = ("\tcp.async.wait_group 0;\n\tld.shared.u32 %r3, [buf];\n\tst.global.u32 [%rd1], %r3;\n"
            "\tcp.async.ca.shared.global [buf], [%rd1], 4;\n\tcp.async.commit_group;\n")
    text = _ptx(_ROTATED.format(body=body)).replace("\t.reg .b64 %rd<4>;\n", "\t.reg .b64 %rd<4>;\n\t.shared .align 4 .b8 buf[16];\n")
    (fn,) = parse_ptx(text)
    (loop,) = fn.loops
    wait = next(e for e in fn.events if e.sync is not None and e.instr.opcode == "cp")
    read = next(e for e in fn.events if e.mem is not None and e.mem.kind == "load" and e.mem.space == "shared")
    assert wait.instr.index in loop.body and not loop.head <= wait.instr.index <= loop.tail
    assert wait.sync is not None and wait.sync.orders_only is not None and read.instr.index in wait.sync.orders_only


def test_natural_loop_and_what_is_read_after_it():
    #   0 -> 1 -> 2 -> 1 (back edge 2 -> 1), 1 -> 3 -> 2 (the body after the latch), 2 -> 4 -> 5 (the exit)
    succs = [[1], [3, 2], [1, 4], [2], [5], []]
    assert natural_loop(succs, 1, 2) == {1, 2, 3}
    assert natural_loop([[1], [2], [], [1]], 1, 3) == frozenset()  # 1 never reaches 3: no cycle
    # 3 -> 2 is backward in the listing too, but 2 does not dominate 3: the same loop, counted once
    assert back_edges(succs, [(2, 1), (3, 2)]) == [(2, 1, frozenset({1, 2, 3}))]
    read_at_5 = {5: ("r",)}
    assert written_and_read_after({1, 2, 3}, succs, {"r"}, lambda i: read_at_5.get(i, ()), lambda i: ())
    assert not written_and_read_after({1, 2, 3}, succs, {"r"}, lambda i: read_at_5.get(i, ()),
                                      lambda i: ("r",) if i == 4 else ())  # written again before the read
    # a read inside the loop is the loop's own, not a use of its result
    assert not written_and_read_after({1, 2, 3}, succs, {"r"}, lambda i: ("r",) if i == 3 else (), lambda i: ())


def _listing(*instrs: str) -> str:
    rows = []
    for i, t in enumerate(instrs):
        if t.startswith(".L_"):
            rows.append(t)
        else:
            rows.append(f"        /*{i * 16:04x}*/                   {t} ;")
    return '\t.section\t.text.k,"ax",@progbits\n.text.k:\n' + "\n".join(rows) + "\n"


def test_a_sass_loop_whose_body_lies_after_its_branch_is_busy():
    """The SASS side alike: a loop whose store ptxas placed after the backward branch (jumped to, then back)
    is no delay loop, so it cannot stand for a deleted PTX delay loop."""
    text = _listing(".L_x_1:", "ISETP.GE.AND P0, PT, R2, 0x8, PT", "@!P0 BRA `(.L_x_3)", ".L_x_2:",
                    "IADD3 R2, PT, PT, R2, 0x1, RZ", "ISETP.GE.AND P1, PT, R2, R5, PT", "@!P1 BRA `(.L_x_1)", "EXIT",
                    ".L_x_3:", "STG.E desc[UR4][R6.64], R2", "BRA `(.L_x_2)")
    # (the listing's offsets count the label rows too: harmless, the labels are read from the text)
    (fn,) = parse_sass(text)
    (loop,) = fn.loops
    assert not loop.delay


def _captured() -> dict[str, sass.FunctionReport]:
    rep = sass.analyse((DATA / "rotated_loop_body.sm_100a.ptx").read_text(),
                       (DATA / "rotated_loop_body.sm_100a.sass").read_text(), "sm_100a", "rotated_loop_body.cu")
    return {fn.short_name: fn for fn in rep.functions}


def test_the_rotated_nest_is_no_deleted_loop_and_a_real_delay_loop_still_is():
    """The captured sm_100a PTX/SASS of ``rotated_loop_body.cu`` (nvcc/ptxas 13.0.88): three false
    "loop-deleted" on ``rotated`` before; the ``asm volatile`` loop of ``rotated_delay``, unrolled by 4 and
    deleted by ptxas, is still one."""
    by = _captured()
    assert by["rotated"].findings == ()
    (f,) = by["rotated_delay"].findings
    assert f.check == sass.LOOP_DELETED and f.verdict == sass.HAZARD


@needs_toolchain
def test_the_rotated_nest_compiled_for_sm_100a():
    (rep,) = sass.check_path(DATA / "rotated_loop_body.cu", ("sm_100a",))
    by = {fn.short_name: fn for fn in rep.functions}
    assert by["rotated"].findings == (), by["rotated"].findings
    assert [f.check for f in by["rotated_delay"].findings] == [sass.LOOP_DELETED]


def test_the_loop_ptxas_deleted_is_the_one_whose_source_lines_no_sass_loop_has():
    """Two register loops in the PTX, one in the SASS (``tests/data/sass/two_loops.sm_90a.ptx``: NCCL's
    ``prims_simple.h:593`` shape, then ``unpack.h:165``'s): the finding names the first, whose lines (10) no
    SASS loop has -- not the last by the listing's order, which the SASS keeps (lines 20; counting alone blamed
    it in NCCL's ``ncclDevFunc_SendRecv``)."""
    rep = sass.analyse((DATA / "two_loops.sm_90a.ptx").read_text(), (DATA / "two_loops_unrolled.sm_90a.sass").read_text(),
                       "sm_90a", "two_loops.ptx")
    (fn,) = rep.functions
    (f,) = fn.findings
    ptx = (DATA / "two_loops.sm_90a.ptx").read_text().splitlines()
    assert f.check == sass.LOOP_DELETED and f.verdict == sass.HAZARD
    assert ptx[f.op_ptx_line - 1].strip() == "@%p3 bra \t$L_peers;" and "if the source meant it as a delay" in f.reason
    # the SASS as ptxas wrote it keeps both loops: nothing deleted
    kept = (DATA / "two_loops_unrolled.sm_90a.sass").read_text().replace(
        "NOP ;", "@P0 BRA P1, `(.L_x_0) ;", 1).replace("        /*0070*/", ".L_x_0:\n        /*0070*/", 1)
    assert sass.analyse((DATA / "two_loops.sm_90a.ptx").read_text(), kept, "sm_90a", "two_loops.ptx").functions[0].findings == ()
