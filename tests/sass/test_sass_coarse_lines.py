"""Coarse line tables: what they license and what they do not.

ptxas keys a line-table row on the innermost source location alone: an instruction right after one of
the same innermost location carries that one's whole inlining chain (two ``__ldg`` of one type at
neighbouring lines share a row; FlashMLA 9241ae3's combine kernel, lines 36 and 37).  So a SASS
operation whose unpaired count convicts it against the PTX operations of its own line is "not known"
when another PTX operation of its class and width at its innermost location did not cross -- and only
then: an ``__ldg`` of another type (another line of ``sm_32_intrinsics.hpp``) is never it.

``wide_any_line``: the hostile review of 2026-12-05's shape of FlashMLA sm100 decode (``MODEL1``), where
ptxas raised two 8-byte ``.nc`` loads of scales above an mbarrier wait; the checker blamed an ``int2``
``__ldg`` at another line (8 bytes too) and said "not known" instead of the finding.  The captured PTX is
nvcc's own; the SASS is of that PTX with the two loads moved above the wait by hand
(``tests/data/sass/wide_any_line.sh``)."""

from __future__ import annotations

from pathlib import Path

from fuzzgpu import sass

DATA = Path(__file__).parents[1] / "data" / "sass"

_INT2_PTX = ".loc\t2 118 48,"
_INT2_SASS = 'sm_32_intrinsics.hpp", line 118 inlined at'


def _wide_any_line(ptx: str | None = None, listing: str | None = None) -> sass.FunctionReport:
    rep = sass.analyse(ptx or (DATA / "wide_any_line.sm_100a.ptx").read_text(),
                       listing or (DATA / "wide_any_line.hoisted.sm_100a.sass").read_text(), "sm_100a", "wide_any_line.cu")
    (fn,) = rep.functions
    return fn


def test_a_hoist_is_not_blamed_on_a_load_of_another_innermost_line():
    """Both SASS loads of line 25 issued before TRYWAIT: each is a permitted-hazard ``.nc`` hoist above
    the wait, and the function is fully checked -- the ``int2`` load of line 19 (``sm_32_intrinsics.hpp``
    line 118, not 102) cannot be either of them."""
    fn = _wide_any_line()
    assert fn.unchecked == (), fn.unchecked
    assert len(fn.findings) == 2
    for f in fn.findings:
        assert (f.verdict, f.direction, f.src_line) == (sass.HAZARD, sass.HOISTED, 25)
        assert f.op_sass.startswith("LDG.E.64.CONSTANT") and f.sync_ptx.startswith("mbarrier.try_wait")
        assert f.sync_sass.startswith("SYNCS.PHASECHK.TRANS64.TRYWAIT")
    assert {f.op_sass_offset for f in fn.findings} == {0x5A0, 0x5B0}


def test_a_load_that_could_share_the_row_leaves_it_not_known():
    """The same kernel with the line-19 load an 8-byte ``__ldg`` of line 102 too (its ``.loc`` and its
    SASS row rewritten): a row keyed on that line could carry either call site, so the count convicts
    nothing -- not known, no finding."""
    ptx = (DATA / "wide_any_line.sm_100a.ptx").read_text()
    listing = (DATA / "wide_any_line.hoisted.sm_100a.sass").read_text()
    assert ptx.count(_INT2_PTX) == 1 and listing.count(_INT2_SASS) == 1
    fn = _wide_any_line(ptx.replace(_INT2_PTX, ".loc\t2 102 57,"),
                        listing.replace(_INT2_SASS, _INT2_SASS.replace("118", "102")))
    assert fn.findings == ()
    coarse = [u for u in fn.unchecked if "line tables are coarse" in u]
    assert len(coarse) == 2 and all(("@05a0" in u) != ("@05b0" in u) for u in coarse), fn.unchecked


def _coarse_rows(variant: str) -> sass.FunctionReport:
    rep = sass.analyse((DATA / "coarse_rows.sm_100a.ptx").read_text(),
                       (DATA / f"coarse_rows.{variant}.sm_100a.sass").read_text(), "sm_100a", "coarse_rows.cu")
    (fn,) = rep.functions
    return fn


def test_two_ldg_of_one_type_share_a_row_and_stay_not_known():
    """``coarse_rows.cu``, line 18's ``__ldg`` moved above the wait, before line 16's: ptxas issues the
    two LDGs back to back under one row, line 18's (``sm_32_intrinsics.hpp:112`` inlined at 18): the
    captured proof that a row carries the first instruction's call site.  Each SASS load crossed for
    line 18's load and not for line 16's, which the row may hide: not known, never a finding, never
    clean."""
    lines = (DATA / "coarse_rows.before.sm_100a.sass").read_text().splitlines()
    a, b = (i for i, x in enumerate(lines) if "LDG.E.CONSTANT" in x)
    assert b == a + 1  # no row between them
    assert lines[a - 2].endswith('line 112 inlined at "coarse_rows.cu", line 18') and lines[a - 1].endswith("line 18")
    fn = _coarse_rows("before")
    assert fn.findings == ()
    assert len([u for u in fn.unchecked if "line tables are coarse" in u]) == 2, fn.unchecked


def test_a_hoist_under_a_shared_row_is_never_clean():
    """Line 18's ``__ldg`` moved above the wait, after line 16's: both SASS loads carry line 16's row,
    so both are candidates of line 16's one PTX load, which stands for one of them; the other is line
    18's load -- hoisted above the wait.  It was "fully checked, clean": any PTX load of the class under
    which it crossed nothing excused it, line 16's own included.  A coarse row excuses it only through
    a PTX operation of its innermost location that no SASS operation has as its own and under which it
    crossed nothing; line 18's load crossed: not known.  (FlashMLA's combine kernel, whose line-37
    ``__ldg`` carries line 36's row and crossed nothing, stays fully checked:
    ``test_sass_real_kernels.test_fixed_and_combine_kernels_are_clean``.)"""
    lines = (DATA / "coarse_rows.after.sm_100a.sass").read_text().splitlines()
    a, b = (i for i, x in enumerate(lines) if "LDG.E.CONSTANT" in x)
    assert b == a + 1 and lines[a - 1].endswith("line 16")
    fn = _coarse_rows("after")
    assert fn.findings == ()
    (u,) = fn.unchecked
    assert u.startswith("SASS LDG.E.CONSTANT@0070 may be any of the PTX LDG.CONSTANT") and "not known" in u


def _stack_generic(listing: str | None = None) -> sass.FunctionReport:
    rep = sass.analyse((DATA / "stack_generic.sm_90.ptx").read_text(),
                       listing or (DATA / "stack_generic.sm_90.sass").read_text(), "sm_90", "stack_generic.cu")
    (fn,) = rep.functions
    return fn


_LINE9_MOV = "/*0790*/                   MOV R4, R4 ;"


def test_generic_stack_reads_left_over_by_the_pairing_are_the_stacks():
    """``-G -O0``: line 9's five generic loads are five ``LD.E``, and only the shared window's is a PTX
    operation to check (the four of ``%SP`` are the thread's stack).  The pairing gives that one one
    ``LD.E``; the four left over are the stack's reads: fully checked, clean."""
    listing = (DATA / "stack_generic.sm_90.sass").read_text()
    assert listing.count("LD.E R") == 5 and "LDL" not in listing
    fn = _stack_generic(listing)
    assert fn.findings == () and fn.unchecked == (), fn.unchecked


def test_a_stack_read_an_ldl_may_be_explains_no_generic_load():
    """The same SASS with an ``LDL`` added at line 9: one of the four stack reads may be that ``LDL``,
    so one of the five ``LD.E`` has no PTX operation left to be -- not known (it was "fully checked,
    clean": any PTX load of the class excused it)."""
    listing = (DATA / "stack_generic.sm_90.sass").read_text()
    assert listing.count(_LINE9_MOV) == 1
    fn = _stack_generic(listing.replace(_LINE9_MOV, "/*0790*/                   LDL R9, [R1+0x10] ;"))
    assert fn.findings == ()
    (u,) = fn.unchecked
    assert "may be any of the PTX LD" in u and "not known" in u
