"""The PDL review (``fuzzgpu.sass.pdl``) on the shared PTX control-flow graph (``fuzzgpu.sass.cfg``)
and on the functions the analysis parsed: an inline-asm label is visible in its own ``{ }`` block
only, so the code after each inlined ``mbarrier`` wait loop is reached; the review of the parsed
functions is the review of the text."""

from __future__ import annotations

import gc
import gzip
from collections import Counter
from pathlib import Path

import pytest

from fuzzgpu import sass
from fuzzgpu.sass import pdl, toolchain

DATA = Path(__file__).resolve().parents[1] / "data" / "real-kernels"

#: two warp roles: role 0 waits for the primary grid; the other role never waits, and reads global
#: memory after an inlined mbarrier wait loop (CUTLASS's ClusterBarrier::wait) that is inlined twice,
#: so its ``LAB_WAIT:``/``DONE:`` labels occur twice in the function (one per ``{ }`` block)
_TWO_INLINED_WAIT_LOOPS = """
.version 9.0
.target sm_90a
.address_size 64
.file 1 "/src/roles.cu"
.visible .entry roles(
\t.param .u64 p
)
{
\t.reg .pred %p<3>;
\t.reg .b32 %r<9>;
\t.reg .b64 %rd<3>;
\t.loc 1 3 0
\tld.param.u64 %rd1, [p];
\tmov.u32 %r1, %tid.x;
\tsetp.eq.s32 %p1, %r1, 0;
\t@%p1 bra $L__BB0_2;
\t.loc 1 5 0
{WAIT_LOOP}
\t.loc 1 6 0
\tld.global.u32 %r4, [%rd1];
\t.loc 1 7 0
{WAIT_LOOP}
\t.loc 1 8 0
\tld.global.u32 %r5, [%rd1+8];
\tret;
$L__BB0_2:
\t.loc 1 10 0
\tgriddepcontrol.wait;
\t.loc 1 11 0
\tld.global.u32 %r6, [%rd1+4];
\tret;
}
""".replace("{WAIT_LOOP}", """\t// begin inline asm
\t{
\t.reg .pred P1;
\tLAB_WAIT:
\tmbarrier.try_wait.parity.shared::cta.b64 P1, [%r2], %r3;
\t@P1 bra DONE;
\tbra LAB_WAIT;
\tDONE:
\t}
\t// end inline asm""")


def test_review_reaches_the_code_after_each_inlined_wait_loop():
    """The read at line 6 follows the first inlined wait loop in the role that never waits: a path
    from the entry reaches it without the wait.  The review's own CFG took every ``DONE:`` for the
    last one, so that read was on no path at all and went unreported (CUTLASS 7107b05 example 93:
    58 such warnings, example 70: 34; ThunderKittens' B200 GEMM: 22 -- of the last two, 32 and 22 were TMA
    stores, no longer reported: test_every_global_read_before_the_wait_and_no_write).  The read after the wait
    (line 11) is not reported."""
    notes = pdl.review(_TWO_INLINED_WAIT_LOOPS, "sm_90a")
    assert [(n.kind, n.src_line, n.text) for n in notes] == [
        (pdl.READ_BEFORE_WAIT, 6, "ld.global.u32 %r4, [%rd1]"),
        (pdl.READ_BEFORE_WAIT, 8, "ld.global.u32 %r5, [%rd1+8]")]
    assert all(n.src_file == "/src/roles.cu" for n in notes)


def test_review_of_the_parsed_functions_is_the_review_of_the_text():
    """``toolchain.analysed`` parses the PTX once and gives the parsed functions to the review:
    the same warnings as the review of the text.  On flash-attention's combine kernel (one
    instantiation of 108) every warning is a read the source places before
    ``wait_on_dependent_grids()`` (flash_fwd_combine_kernel.h:484): the scheduler's metadata and
    ``SeqlenInfo``'s ``cu_seqlens``/``seqused`` (seqlen.h:21, :25, inlined at two call sites)."""
    ptx = gzip.decompress((DATA / "flash-attention" / "flash_fwd_combine-0251105a.sm_90a.ptx.gz").read_bytes()).decode()
    listing = gzip.decompress((DATA / "flash-attention" / "flash_fwd_combine-0251105a.sm_90a.sass.gz").read_bytes()).decode()
    rep = toolchain.analysed(ptx, listing, "sm_90a", "flash_fwd_combine.cu")
    assert rep.pdl == pdl.review(ptx, "sm_90a", (), sass.parse_ptx(ptx)) == pdl.review(ptx, "sm_90a")
    assert rep.findings == () and rep.complete
    lines = Counter((Path(n.src_file).name, n.src_line) for n in rep.pdl)
    assert set(lines) <= {("flash_fwd_combine_kernel.h", 357), ("flash_fwd_combine_kernel.h", 365),
                          ("flash_fwd_combine_kernel.h", 456), ("flash_fwd_combine_kernel.h", 465),
                          ("seqlen.h", 21), ("seqlen.h", 25)}, lines
    assert all(n.kind == pdl.READ_BEFORE_WAIT for n in rep.pdl) and len(rep.pdl) >= len(lines) > 0


def test_analysed_leaves_the_garbage_collector_as_it_was():
    """``toolchain.analysed`` pauses Python's cyclic collector while it works (a seventh of the
    analysis of a large module) and resumes it after, also when the analysis raises; a collector
    the caller had disabled stays disabled."""
    assert gc.isenabled()
    toolchain.analysed(_TWO_INLINED_WAIT_LOOPS, "", "sm_90a", "roles")
    assert gc.isenabled()
    with pytest.raises(TypeError):
        toolchain.analysed(None, "", "sm_90a", "x")  # type: ignore[arg-type]
    assert gc.isenabled()
    gc.disable()
    try:
        toolchain.analysed(_TWO_INLINED_WAIT_LOOPS, "", "sm_90a", "roles")
        assert not gc.isenabled()
    finally:
        gc.enable()


_HELPER_READS = """
.version 9.0
.target sm_90a
.address_size 64
.file 1 "/src/kernel.cu"
.file 2 "/src/include/vec.cuh"
.visible .entry k(
\t.param .u64 p
)
{
\t.reg .b32 %r<4>;
\t.reg .b64 %rd<3>;
\t.loc 1 3 0
\tld.param.u64 %rd1, [p];
\t.loc 2 7 5, function_name $L__info_string0, inlined_at 1 10 3
\tld.global.u32 %r1, [%rd1];
\t.loc 2 7 5, function_name $L__info_string0, inlined_at 1 12 3
\tld.global.u32 %r2, [%rd1+4];
\t.loc 1 14 0
\tgriddepcontrol.wait;
\tadd.s32 %r3, %r1, %r2;
\tst.global.u32 [%rd1], %r3;
\tret;
}
"""


def test_a_helpers_reads_name_their_call_sites():
    """A project's own load helper read from several places (flashinfer's vec_t::load at
    vec_dtypes.cuh:1607, called for the residual, the bias and the weight: a hostile review): each
    read before the wait says where it was called from, so the warnings are told apart."""
    notes = [n for n in pdl.review(_HELPER_READS, "sm_90a") if n.kind == pdl.READ_BEFORE_WAIT]
    assert len(notes) == 2
    assert ["vec.cuh:7 (inlined at kernel.cu:10)" in notes[0].message, "vec.cuh:7 (inlined at kernel.cu:12)" in notes[1].message] == [True, True]


_READS_AND_WRITES = """
.version 9.0
.target sm_90a
.address_size 64
.file 1 "/src/reads.cu"
.visible .entry k(
\t.param .u64 p
)
{
\t.reg .b32 %r<9>;
\t.reg .b64 %rd<3>;
\t.loc 1 2 0
\tld.param.u64 %rd1, [p];
\t.loc 1 3 0
\tld.global.nc.u32 %r1, [%rd1];
\t.loc 1 4 0
\tld.volatile.global.u32 %r2, [%rd1+4];
\t.loc 1 5 0
\tld.relaxed.gpu.global.b32 %r3, [%rd1+8];
\t.loc 1 6 0
\tld.acquire.gpu.global.b32 %r4, [%rd1+12];
\t.loc 1 7 0
\tatom.relaxed.gpu.global.add.u32 %r5, [%rd1+16], 1;
\t.loc 1 8 0
\tcp.async.ca.shared.global [%r1], [%rd1+32], 4;
\t.loc 1 9 0
\t{
\t.reg .pred p;
\tsetp.ne.b32 p, %r1, 0;
\t@p ld.global.L2::128B.u32 %r7, [%rd1+40];
\t}
\t.loc 1 20 0
\tcp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r1], 1024;
\t.loc 1 21 0
\tcp.async.bulk.prefetch.L2.global [%rd1], 1024;
\t.loc 1 22 0
\tld.u32 %r6, [%rd1];
\t.loc 1 30 0
\tgriddepcontrol.wait;
\tret;
}
"""


def test_every_global_read_before_the_wait_and_no_write():
    """A hostile review (ThunderKittens' B200 GEMM, a standalone driver): the review's text pattern wanted
    ``.global`` right after ``ld``/``atom``, so ``ld.volatile.global``, ``ld.relaxed.gpu.global``,
    ``ld.acquire.gpu.global`` and ``atom.relaxed.gpu.global`` before the wait went unreported, and it took any
    ``cp.async*`` naming ``.global`` for a read, so a TMA store's ``cp.async.bulk.global.shared::cta`` (shared ->
    global: PTX ISA cp.async.bulk, ``.dst.src``) was a "global read"; and a load under a predicate named in an
    inline-asm block (``@p ld.global.L2::128B``: CUTLASS's guarded ``global_load``, 64 of them before the wait in
    example 48 with GDC) did not match its ``@%p`` either.  Lines 3-9 read global memory into the
    program; line 20 writes it; line 21 prefetches into L2 (no data returned: L2 is the point of coherence for
    global memory, a later write of the primary grid is seen there); line 22 is a generic load (not reported)."""
    notes = [n for n in pdl.review(_READS_AND_WRITES, "sm_90a") if n.kind == pdl.READ_BEFORE_WAIT]
    assert sorted(n.src_line for n in notes) == [3, 4, 5, 6, 7, 8, 9]
