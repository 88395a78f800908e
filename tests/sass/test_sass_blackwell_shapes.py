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


def _captured(name: str, sass_text: str | None = None) -> sass.FunctionReport:
    ptx = (CAPTURED / f"{name}.sm_100a.ptx").read_text()
    text = (CAPTURED / f"{name}.sm_100a.sass").read_text() if sass_text is None else sass_text
    (rep,) = sass.analyse(ptx, text, "sm_100a", f"{name}.cu").functions
    return rep


def test_a_wait_after_another_roles_exit_is_paired_by_its_source_line():
    """``lone_wait_after_exit.cu`` (captured at sm_100a): a lone ``mbarrier.try_wait`` -- its predicate only stored --
    then an ``ld.shared``, in the warp role ptxas lays out after the other role's ``EXIT``.  The token order (the code
    before the first ``EXIT``) pairs no phase check with the wait; its source line does: ``TRYWAIT`` at 0x230, the
    only phase check of ``lone_wait_after_exit.cu:15``.  The ``LDS`` at 0x240 follows it with no branch on ``P0``: the
    rule of the unguarded-wait check (docs/sass.md, "What is checked", 5: a lone wait's access is ordered after a wait
    that returned True, and nothing makes it wait) makes it forbidden, as in its control ``lone_wait_control.cu``.
    Until the pairing by source line it was "not checked" (and before that, skipped: "fully checked, clean")."""
    rep = _captured("lone_wait_after_exit")
    assert [(f.check, f.verdict, f.sync_sass_offset, f.op_sass_offset) for f in rep.findings] == [
        (sass.UNGUARDED_WAIT, sass.FORBIDDEN, 0x230, 0x240)], rep.findings
    assert rep.complete, rep.unchecked


def test_without_line_information_such_a_wait_is_said_not_checked():
    """The same SASS without its line table (nvdisasm without ``-g``): nothing tells the phase check of the wait
    after the other role's ``EXIT``; the wait is not checked, and the function says so and why."""
    text = "\n".join(ln for ln in (CAPTURED / "lone_wait_after_exit.sm_100a.sass").read_text().splitlines()
                     if not ln.lstrip().startswith("//##"))
    rep = _captured("lone_wait_after_exit", text)
    assert not rep.complete and rep.findings == ()
    assert any("mbarrier.try_wait" in u and "no reachable SASS phase check left has its source line" in u
               and "whether an access after it is unguarded was not checked" in u for u in rep.unchecked), rep.unchecked


def test_copies_of_one_wait_are_paired_in_the_order_of_the_graphs():
    """``unrolled_waits_after_exit.cu``: three copies of one inlined lone ``try_wait`` (one source chain for the
    three), each followed by an ``ld.shared``, after the other role's ``EXIT``.  Each copy runs before the next on
    every path, on the PTX graph and on the SASS one: the only pairing that keeps that pairs the i-th PTX wait with
    the i-th check (mbarrier offsets 0, 8, 16 on both sides).  Three forbidden unguarded-wait, one per copy."""
    rep = _captured("unrolled_waits_after_exit")
    got = sorted((f.sync_ptx_line, f.verdict, f.sync_sass_offset, f.op_sass_offset) for f in rep.findings)
    assert [g[1:] for g in got] == [(sass.FORBIDDEN, 0x200, 0x210), (sass.FORBIDDEN, 0x220, 0x230),
                                    (sass.FORBIDDEN, 0x250, 0x260)], rep.findings
    assert rep.complete, rep.unchecked


def test_retry_loops_belong_to_their_first_check():
    """ptxas writes ``W: try_wait p; @!p bra W`` as a first check and an out-of-line retry loop: the loop's checks
    are the first check's (entered only by the branch on its predicate), whatever line the line table gives them."""
    from fuzzgpu.sass.cfg import sass_cfg
    from fuzzgpu.sass.sass_parser import parse_sass
    from fuzzgpu.sass.waits import retry_primary

    (fn,) = parse_sass((CAPTURED / "lone_wait_after_exit.sm_100a.sass").read_text())
    g = sass_cfg(fn)
    at = {i.offset: i for i in fn.instrs}
    firsts = {off: retry_primary(fn, g, at[off]) for off in (0x130, 0x150, 0x230, 0x2b0, 0x2f0)}
    assert {off: (c.offset if c else None) for off, c in firsts.items()} == {
        0x130: None, 0x150: None, 0x230: None, 0x2b0: 0x130, 0x2f0: 0x150}


@needs_toolchain
def test_the_same_lone_wait_without_the_other_role_is_forbidden():
    """The control of ``lone_wait_after_exit.cu``: the same lone ``try_wait`` then ``ld.shared``, without the other warp
    role, so its phase check is paired -- the access after it is unguarded: forbidden (the check the other kernel says
    it could not make is one that fails)."""
    (rep,) = sass.check_path(CAPTURED / "lone_wait_control.cu", ("sm_100a",))
    assert [(f.check, f.verdict) for f in rep.findings] == [(sass.UNGUARDED_WAIT, sass.FORBIDDEN)], rep.findings


def test_a_retry_loops_recheck_is_no_token_of_its_own():
    """``hinted_waits_after_exit.cu``: CUTLASS's ``ClusterBarrier::wait`` (a ``try_wait`` with a suspend-time hint) in
    both warp roles; ptxas writes each as a first check and ``@!P0 NANOSLEEP; @!P0 SYNCS.PHASECHK`` (the check again,
    in its block).  Counted as a synchronisation token, the other role's re-check (0x170) paired the first of the
    unrolled waits (PTX line 81) by token order, and the two others were not checked.  A re-check is its first
    check's: each wait is paired with its own check (the unrolled three by the order of the graphs), and all the
    accesses after them are guarded: fully checked, clean."""
    from fuzzgpu.sass.cfg import ptx_cfg, sass_cfg
    from fuzzgpu.sass.checks import _wait_intervals
    from fuzzgpu.sass.sass_parser import parse_sass
    from fuzzgpu.sass.waits import retry_primary, wait_checks

    rep = _captured("hinted_waits_after_exit")
    assert rep.findings == () and rep.complete, (rep.findings, rep.unchecked)
    (pf,) = parse_ptx((CAPTURED / "hinted_waits_after_exit.sm_100a.ptx").read_text())
    (sf,) = parse_sass((CAPTURED / "hinted_waits_after_exit.sm_100a.sass").read_text())
    g = sass_cfg(sf)
    at = {i.offset: i for i in sf.instrs}
    assert [retry_primary(sf, g, at[o]).offset for o in (0x170, 0x260, 0x2c0, 0x330)] == [0x150, 0x240, 0x2a0, 0x310]  # type: ignore[union-attr]
    checks, _ = wait_checks(pf.events, sf, g, ptx_cfg(pf), _wait_intervals(pf.events, sf, g, {}))
    firsts = {pf.events[k].instr.line: cs[0].offset for k, cs in checks.items()}
    assert firsts == {56: 0x150, 81: 0x240, 93: 0x2a0, 106: 0x310}, firsts


def test_a_predicated_check_does_not_wait_where_it_did_not_run():
    """``predicated_wait.cu`` (CUTLASS's sm100 epilogue: ``if (need) token = try_wait()``, then ``if (need) { if
    (!token) wait(); read }`` and a store): ptxas writes ``@P1 SYNCS.PHASECHK`` and skips the ``consumer_wait`` where
    ``need`` is false -- where the check did not run.  In CUTLASS 7107b05's example 81 it skips it with a branch on
    the check's own guard (``@!P5 BRA``): that edge is no path from the check, and the store it reaches is no access
    after a wait (the walk took it for one: 2 false permitted-hazards).  Here ptxas tests a copy of the guard
    (``BRA.U !UP1``, ``UP1`` computed again from the same parameter), which the walk does not know for one: the
    store at 0x240 it reports is a false permitted-hazard (docs/sass.md, Limits).  With the branch on ``P1`` itself
    the store is no access after the wait; the ``STG`` at 0x290 still is (``n < 1``: the loop, and the test of the
    token in it, skipped where the check ran)."""
    from fuzzgpu.sass.cfg import sass_cfg
    from fuzzgpu.sass.sass_parser import parse_sass
    from fuzzgpu.sass.waits import unguarded_accesses

    def unguarded(text: str) -> list[int]:
        (fn,) = parse_sass(text)
        check = next(i for i in fn.instrs if i.offset == 0xE0)
        return [m.instr.offset for m in unguarded_accesses(fn, sass_cfg(fn), check, "P0", True)]

    text = (CAPTURED / "predicated_wait.sm_100a.sass").read_text()
    assert [(f.check, f.verdict, f.op_sass_offset) for f in _captured("predicated_wait").findings] == [
        (sass.UNGUARDED_WAIT, sass.HAZARD, 0x240)]
    assert unguarded(text) == [0x240, 0x290]
    same_guard = text.replace("BRA.U !UP1, `(.L_x_1)", "@!P1 BRA `(.L_x_1)")
    assert same_guard != text and unguarded(same_guard) == [0x290]


def test_warp_roles_in_another_order_than_the_ptx():
    """``roles_swapped.cu`` (mechanism (b) of the Blackwell review, FlashMLA 9241ae3's sm100 decode): four warp roles
    in a ``switch``, which ptxas lays out in another order than the PTX.  The token order paired case 2's loop wait
    (PTX line 98) with case 0's lone wait's check: the forbidden access after it was blamed on a wait its retry loop
    guards, and both lone waits were "not checked".  The check's source line is case 0's wait's, which the token
    order paired with nothing: that pairing is refuted, and each wait gets its own check."""
    from fuzzgpu.sass.cfg import ptx_cfg, sass_cfg
    from fuzzgpu.sass.checks import _wait_intervals
    from fuzzgpu.sass.sass_parser import parse_sass
    from fuzzgpu.sass.waits import wait_checks

    rep = _captured("roles_swapped")
    assert sorted((f.sync_ptx_line, f.verdict, f.sync_sass_offset, f.op_sass_offset) for f in rep.findings) == [
        (119, sass.FORBIDDEN, 0x4A0, 0x4B0), (143, sass.FORBIDDEN, 0x270, 0x280)], rep.findings
    assert rep.complete, rep.unchecked
    (pf,) = parse_ptx((CAPTURED / "roles_swapped.sm_100a.ptx").read_text())
    (sf,) = parse_sass((CAPTURED / "roles_swapped.sm_100a.sass").read_text())
    g = sass_cfg(sf)
    checks, _ = wait_checks(pf.events, sf, g, ptx_cfg(pf), _wait_intervals(pf.events, sf, g, {}))
    assert {pf.events[k].instr.line: cs[0].offset for k, cs in checks.items()} == {
        62: 0x1A0, 98: 0x3D0, 119: 0x4A0, 143: 0x270}
