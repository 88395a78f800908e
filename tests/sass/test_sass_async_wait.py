"""What ``cp.async.wait_group``/``wait_all`` and ``cp.async.bulk.wait_group`` order (fuzzgpu.sass,
``PtxSync.orders_only``; docs/sass.md, "Async-group waits").

The PTX ISA (cp.async.wait_group): "Writes performed by cp.async operations are made visible to the
executing thread only after: The completion of cp.async.wait_all or ... cp.async.wait_group on the
cp.async-group in which the cp.async belongs to ..." and "cp.async.wait_group and cp.async.wait_all
does not provide any ordering and visibility guarantees for any other memory operation apart from
cp.async."  So ptxas may hoist an access that cannot conflict with a copy the wait completes above the
wait (the H200 campaign's class ``sass:crossing:hoisted above:st.global``, an ``STG`` above
``DEPBAR.LE SB0`` that was reported forbidden); an access of a copy's destination, a write of its
source, or a release that publishes the copied data must not move above it.

The tests read synthetic PTX/SASS pairs and one capture of ptxas 13.0 output (the campaign's
program, tests/kernels/captured/bulk_wait_read_sink.*); they need no toolchain."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu import sass

CAPTURED = Path(__file__).parents[1] / "kernels" / "captured"

# one CTA-local copy: cp.async s <- [p], 4 bytes; s is a shared variable, p the kernel's buffer
_CP_ASYNC_PTX = """
.visible .entry k(.param .u64 p)
{{
\t.shared .align 16 .b8 s[16];
\tld.param.u64 \t%rd1, [p];
\tmov.u32 \t%r1, s;
\tcp.async.ca.shared.global [%r1], [%rd1], 4;
\tcp.async.commit_group;
\t{wait};
{after}
\tret;
}}
"""

_BULK_PTX = """
.visible .entry k(.param .u64 p)
{{
\t.shared .align 128 .b8 s[128];
\tld.param.u64 \t%rd1, [p];
\tadd.s64 \t%rd2, %rd1, 128;
\tmov.u32 \t%r2, s;
\tcp.async.bulk.global.shared::cta.bulk_group [%rd2], [%r2], 16;
\tcp.async.bulk.commit_group;
\t{wait};
{after}
\tret;
}}
"""

_LOOP_PTX = """
.visible .entry k(.param .u64 p)
{
\t.shared .align 16 .b8 s[16];
\tld.param.u64 \t%rd1, [p];
\tmov.u32 \t%r1, s;
$L__BB0_1:
\tcp.async.wait_group 0;
\tld.shared.u32 \t%r3, [%r1];
\tst.global.u32 \t[%rd1+64], %r3;
\tcp.async.ca.shared.global [%r1], [%rd1], 4;
\tcp.async.commit_group;
\t@%p1 bra \t$L__BB0_1;
\tret;
}
"""


def _sass_text(*lines: str) -> str:
    body = "\n".join(f"        /*{16 * i:04x}*/                   {ins} ;" for i, ins in enumerate(lines))
    return f".text.k:\n{body}\n"


def _only(rep: sass.Report) -> sass.Finding:
    (fn,) = rep.functions
    assert fn.complete, fn.unchecked
    (f,) = fn.findings
    return f


def _allowed(rep: sass.Report) -> str:
    """The one move of ``rep`` that the ISA allows: since issue 26 ("one finding per real hazard")
    such a move is no finding -- no execution of the moved code is one the model forbids for the
    source, and no other thread can tell -- but a note that names the move and the rule."""
    (fn,) = rep.functions
    assert fn.complete, fn.unchecked
    assert fn.findings == (), fn.findings
    (note,) = [n for n in fn.notes if n.startswith("allowed move")]
    return note


def _cp_async(after: str, hoisted: tuple[str, ...], wait: str = "cp.async.wait_group 0", rest: tuple[str, ...] = ()) -> sass.Report:
    """The copy, then ``hoisted`` (the SASS of ``after``) above the DEPBAR of the wait."""
    ptx = _CP_ASYNC_PTX.format(wait=wait, after=after)
    text = _sass_text("LDGSTS.E [R7], desc[UR4][R2.64]", "LDGDEPBAR", *hoisted, "DEPBAR.LE SB0, 0x0", *rest, "EXIT")
    return sass.analyse(ptx, text, "sm_90", "k")


def _bulk(after: str, hoisted: tuple[str, ...], wait: str, rest: tuple[str, ...] = ()) -> sass.Report:
    ptx = _BULK_PTX.format(wait=wait, after=after)
    text = _sass_text("UBLKCP.G.S [UR4], [UR6], UR7", "UTMACMDFLUSH", *hoisted, "DEPBAR.LE SB0, 0x0", *rest, "EXIT")
    return sass.analyse(ptx, text, "sm_90", "k")


# ------------------------------------------------------------------------------------------------
# cp.async.wait_group / wait_all
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("wait", ["cp.async.wait_group 0", "cp.async.wait_all"])
def test_weak_store_of_another_location_may_rise_above_the_wait(wait):
    """A weak st.global cannot touch the copy's shared destination nor its source (+0x40 vs +0..4):
    allowed (a hazard: the order the source wrote is lost), not forbidden."""
    note = _allowed(_cp_async("\tst.global.u32 \t[%rd1+64], %r5;", ("STG.E desc[UR4][R2.64+0x40], R5",), wait))
    assert sass.HOISTED in note and note.endswith(sass.RULE_ASYNC_WAIT_OTHER.format(sync=wait.split()[0]))
    assert "does not provide any ordering" in note


def test_weak_store_then_bar_sync_may_rise_above_the_wait_but_not_sink_below_the_barrier():
    """``cp.async; wait; st y; bar.sync``: the store may rise above the wait; below the barrier it
    is forbidden (the barrier is a release)."""
    after = "\tst.global.u32 \t[%rd1+64], %r5;\n\tbar.sync \t0;"
    note = _allowed(_cp_async(after, ("STG.E desc[UR4][R2.64+0x40], R5",), rest=("BAR.SYNC.DEFER_BLOCKING 0x0",)))
    assert sass.HOISTED in note
    rep = _cp_async(after, (), rest=("BAR.SYNC.DEFER_BLOCKING 0x0", "STG.E desc[UR4][R2.64+0x40], R5"))
    (fn,) = rep.functions
    (sunk,) = fn.findings
    assert (sunk.verdict, sunk.direction, sunk.sync_sass) == (sass.FORBIDDEN, sass.SUNK, "BAR.SYNC.DEFER_BLOCKING 0x0")


def test_load_of_the_copied_data_must_not_rise_above_the_wait():
    f = _only(_cp_async("\tld.shared.u32 \t%r3, [%r1];\n\tst.global.u32 \t[%rd1+64], %r3;",
                        ("LDS R9, [R7]",), rest=("STG.E desc[UR4][R2.64+0x40], R9",)))
    assert (f.verdict, f.direction) == (sass.FORBIDDEN, sass.HOISTED) and f.op_sass.startswith("LDS")
    assert f.reason == sass.RULE_FORBIDDEN["cp.async.wait"]


def test_generic_load_that_may_alias_the_destination_must_not_rise():
    """A generic-address load of an unknown pointer may read the copy's destination."""
    f = _only(_cp_async("\tld.u32 \t%r3, [%rd7];\n\tst.global.u32 \t[%rd1+64], %r3;",
                        ("LD.E R9, desc[UR4][R4.64]",), rest=("STG.E desc[UR4][R2.64+0x40], R9",)))
    assert (f.verdict, f.direction) == (sass.FORBIDDEN, sass.HOISTED)


def test_store_to_another_shared_variable_may_rise_but_not_one_of_the_destination():
    other = _allowed(_cp_async("\tst.shared.u32 \t[%r1+8], %r5;", ("STS [R7+0x8], R5",)))
    assert "does not provide any ordering" in other
    same = _only(_cp_async("\tst.shared.u32 \t[%r1], %r5;", ("STS [R7], R5",)))
    assert same.verdict == sass.FORBIDDEN  # write after the copy's write: coherence


def test_write_of_the_copy_source_must_not_rise_above_the_wait():
    """The wait completes the copy's read of its source: a later store to it must not overtake it."""
    f = _only(_cp_async("\tst.global.u32 \t[%rd1], %r5;", ("STG.E desc[UR4][R2.64], R5",)))
    assert (f.verdict, f.direction) == (sass.FORBIDDEN, sass.HOISTED)


def test_release_store_must_not_rise_above_the_wait():
    """``cp.async; wait_all; st.release flag``: the release publishes the copied data
    (tests/litmus/cp-async/CPASYNC-wait-all-release-flag.litmus), so neither its MEMBAR nor its
    store may be performed before the copy completes -- another location or not."""
    after = "\tst.release.gpu.global.u32 \t[%rd1+64], %r5;"
    (fn,) = sass.parse_ptx(_CP_ASYNC_PTX.format(wait="cp.async.wait_all", after=after))
    (wait,) = [e.sync for e in fn.events if e.sync is not None and e.sync.kind == "cp.async.wait"]
    (store,) = [e.mem for e in fn.events if e.mem is not None]
    assert sass.judge_crossing(store, wait, sass.HOISTED) == (sass.FORBIDDEN, sass.RULE_FORBIDDEN["cp.async.wait"])
    # the store performed before the wait (its MEMBAR left behind): forbidden
    f = _only(_cp_async(after, ("STG.E.STRONG.GPU desc[UR4][R2.64+0x40], R5",), wait="cp.async.wait_all",
                        rest=("MEMBAR.ALL.GPU",)))
    assert (f.verdict, f.direction, f.sync_sass) == (sass.FORBIDDEN, sass.HOISTED, "DEPBAR.LE SB0, 0x0")
    # MEMBAR and store both above the DEPBAR: the swapped points cannot both be matched, so the
    # function is not fully checked -- never clean
    rep = _cp_async(after, ("MEMBAR.ALL.GPU", "STG.E.STRONG.GPU desc[UR4][R2.64+0x40], R5"), wait="cp.async.wait_all")
    assert not rep.to_dict()["clean"] and sass.exit_status([rep]) != sass.EXIT_CLEAN


def test_relaxed_store_of_another_location_may_rise():
    """A relaxed store is not a release: it publishes nothing (a fence before it would be the
    synchronisation point it may not cross)."""
    note = _allowed(_cp_async("\tst.relaxed.gpu.global.u32 \t[%rd1+64], %r5;", ("STG.E.STRONG.GPU desc[UR4][R2.64+0x40], R5",)))
    assert "does not provide any ordering" in note


def test_copy_issued_later_in_a_loop_is_awaited_by_the_wait_at_its_head():
    """Software pipelining: the wait at the loop head completes the copy of the previous iteration,
    written textually after it; the load of its destination must not rise above the wait."""
    text = _sass_text("LDS R9, [R7]", "DEPBAR.LE SB0, 0x0", "STG.E desc[UR4][R2.64+0x40], R9",
                      "LDGSTS.E [R7], desc[UR4][R2.64]", "LDGDEPBAR", "@P1 BRA 0x0", "EXIT")
    rep = sass.analyse(_LOOP_PTX, text, "sm_90", "k")
    (fn,) = rep.functions
    hoisted = [f for f in fn.findings if f.direction == sass.HOISTED and f.sync_sass.startswith("DEPBAR")]
    assert hoisted and all(f.verdict == sass.FORBIDDEN for f in hoisted), fn.findings


# ------------------------------------------------------------------------------------------------
# cp.async.bulk.wait_group{.read}
# ------------------------------------------------------------------------------------------------


def test_bulk_read_wait_orders_only_writes_of_the_source():
    """``.read`` completes the source reads only: a store to another global location or a load of
    the destination may rise above it (the destination's writes are not awaited at all), a store to
    the shared source may not."""
    other = _allowed(_bulk("\tst.global.u32 \t[%rd1+256], %r5;", ("STG.E desc[UR8][R2.64+0x100], R5",), "cp.async.bulk.wait_group.read 0"))
    assert "does not provide any ordering" in other
    dst = _allowed(_bulk("\tld.global.u32 \t%r6, [%rd2];\n\tst.global.u32 \t[%rd1+256], %r6;", ("LDG.E R6, desc[UR8][R2.64+0x80]",),
                      "cp.async.bulk.wait_group.read 0", rest=("STG.E desc[UR8][R2.64+0x100], R6",)))
    assert "ld.global.u32" in dst and "does not provide any ordering" in dst
    src = _only(_bulk("\tst.shared.u32 \t[%r2+4], %r5;", ("STS [UR6+0x4], R5",), "cp.async.bulk.wait_group.read 0"))
    assert src.verdict == sass.FORBIDDEN


def test_bulk_full_wait_orders_accesses_of_the_destination():
    """Without ``.read`` the wait completes the destination writes (global +128..+144): a load of
    +0x88 must not rise above it, a store to +0x100 may."""
    dst = _only(_bulk("\tld.global.u32 \t%r6, [%rd1+136];\n\tst.global.u32 \t[%rd1+256], %r6;",
                      ("LDG.E R6, desc[UR8][R2.64+0x88]",), "cp.async.bulk.wait_group 0",
                      rest=("STG.E desc[UR8][R2.64+0x100], R6",)))
    assert dst.verdict == sass.FORBIDDEN
    other = _allowed(_bulk("\tst.global.u32 \t[%rd1+256], %r5;", ("STG.E desc[UR8][R2.64+0x100], R5",), "cp.async.bulk.wait_group 0"))
    assert "does not provide any ordering" in other


def test_h200_campaign_class_is_allowed():
    """The campaign's program (bench/results/campaigns/h200-all-150s.md, class
    ``sass:crossing:hoisted above:st.global``), as ptxas 13.0 compiled it for sm_90: the harness's
    sink store of ``ld.weak r0, f0`` (``STG.E ...+0x100``) above the ``DEPBAR`` of
    ``cp.async.bulk.wait_group.read 0`` whose copy reads shared x0: allowed, not forbidden."""
    rep = sass.analyse((CAPTURED / "bulk_wait_read_sink.sm_90.ptx").read_text(),
                       (CAPTURED / "bulk_wait_read_sink.sm_90.sass").read_text(), "sm_90", "bulk_wait_read_sink")
    (fn,) = [f for f in rep.functions if f.short_name == "fuzzgpu_P1"]
    assert fn.complete, fn.unchecked
    assert fn.findings == ()  # allowed: a note, not a finding (issue 26)
    (note,) = [n for n in fn.notes if n.startswith("allowed move")]
    assert sass.HOISTED in note and "`cp.async.bulk.wait_group.read 0`" in note and "does not provide any ordering" in note


def test_orders_only_is_set_for_async_waits_only():
    (fn,) = sass.parse_ptx(_CP_ASYNC_PTX.format(wait="cp.async.wait_group 0", after="\tst.global.u32 \t[%rd1+64], %r5;\n\tbar.sync \t0;"))
    by_kind = {e.sync.kind: e.sync for e in fn.events if e.sync is not None}
    assert by_kind["cp.async.wait"].orders_only == frozenset()
    assert by_kind["bar.sync"].orders_only is None
