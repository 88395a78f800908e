"""Fixes of two changes, insertions included (fuzzgpu.fixes): the four race findings of the H200
`all` campaign of 2026-12-01 that got no fix (bench/results/campaigns/h200-all-600s, copied to
tests/data/fixes-h200-all-race), each with the fix argued by hand from the PTX ISA.

* 0ec5a75cd7faf570 (race:bulk-completion): P0 issues ``cp.async.bulk`` with mbarrier completion on
  bar0 and nobody waits on bar0; P1 reads the copy's destination after ``bar.sync 1``.  The ISA
  (cp.async.bulk; mbarrier: the writes of the copy are made visible to a thread that observes the
  phase completion) needs an acquire wait on bar0's phase 0 on the path to the read; the search had
  no mbarrier-wait insertion.  The fix: an acquire wait loop in the reader, just before its read:
  it orders the completion before that read only, the least a fix can order.  P0 could wait too,
  after the copy and before ``bar.sync 1`` (the oracle accepts it, and the search order, thread by
  thread, tries it first), but the GPU harness cannot run a loop before a ``bar.sync`` (it could
  skip or repeat the barrier), so ``replay --fixed`` could not check it: no fix; a wait before the
  copy or the arrive never completes (must-hang, no fix).
* abc8219d19080c78 (race:2+bulk-completion): the PDL dependent's bulk copy reads the primary's
  ``x0`` before ``griddepcontrol.wait`` (griddepcontrol: only operations after the wait are ordered
  after the primary) *and* its ``.relaxed`` try_wait, untested, orders nothing.  Two insertions: a
  ``griddepcontrol.wait`` before the copy and an acquire wait loop before the read (a relaxed wait
  made a loop is not enough: .relaxed gives no acquire, so it is not the fix).
* 1d3a58b4f4e647de (race:4+bulk-completion): 0ec5's missing wait *and* P1's own ``cp.async``
  read without ``cp.async.wait_group`` (cp.async: complete only at the issuing thread's wait):
  two insertions, ``cp.async.wait_group 0`` before that read and the wait loop of 0ec5.
* 0df3fb74d88b5f4f (race:4+flag): two weak flag handoffs (f0: P0 to P1, f1: P1 to P2) and a
  cp.async not waited for: the weakest fix is five changes (``cp.async.wait_group 0``, release and
  acquire on f0, release and acquire on f1; a weak flag never makes a release pattern, ISA 8.8), so
  no single change or pair is a fix, and the hand fix is checked by the oracle; the greedy search
  finds it (test_fixes_greedy).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu import fixes
from fuzzgpu.commands.replay import _stored_verdict
from fuzzgpu.corpus import load_entry
from fuzzgpu.ir import Fence, Sem
from fuzzgpu.litmus import parse_file
from fuzzgpu.model import liveness
from fuzzgpu.model.race import analyse_races

DATA = Path(__file__).resolve().parents[1] / "data" / "fixes-h200-all-race"

EXPECTED = {
    "0ec5a75cd7faf570": "add a wait loop `LF00: mbarrier.try_wait.parity.acquire.cta r1, bar0, 0; beq r1, 0, LF00` in P1 "
                        "before `ld.weak r0, x0`",
    "1d3a58b4f4e647de": ("add `cp.async.wait_group 0` in P1 before `ld.weak r1, x1` and add a wait loop "
                         "`LF00: mbarrier.try_wait.parity.acquire.cta r2, bar0, 0; beq r2, 0, LF00` in P1 before "
                         "`ld.weak r0, x0` (two changes: no single one suffices)"),
    "abc8219d19080c78": ("add `griddepcontrol.wait` in P1 before `mbarrier.init bar0, 1` and add a wait loop "
                         "`LF00: mbarrier.try_wait.parity.acquire.cta r2, bar0, 0; beq r2, 0, LF00` in P1 before "
                         "`mbarrier.try_wait.parity.relaxed.cta r0, bar0, 0` (two changes: no single one suffices)"),
}


def _offending(h: str):
    e = load_entry(DATA / f"{h}.json")
    return e.program, [o.outcome for o in _stored_verdict(e).offending if o.verdict in fixes.FIXABLE]


@pytest.mark.parametrize("h", sorted(EXPECTED))
def test_each_h200_race_finding_gets_the_fix_argued_by_hand(h):
    p, outs = _offending(h)
    assert outs
    f = fixes.find_fix(p, outs)
    assert f is not None and f.text == EXPECTED[h]
    fixed = analyse_races(f.program)  # the oracle checks it: no offending outcome, race-free, completes
    assert not ({tuple(o) for o in outs} & fixed.possible) and fixed.possible
    assert f.why == "race-free" and not fixed.is_racy
    assert liveness.termination(f.program).must_complete


def test_five_changes_are_no_fix_within_two_and_the_hand_fix_is_checked(monkeypatch):
    p, outs = _offending("0df3fb74d88b5f4f")
    want = {tuple(o) for o in outs}
    monkeypatch.setattr(fixes, "greedy_fix", lambda *a, **k: None)  # single changes and pairs only
    assert fixes.find_fix(p, outs) is None
    hand = analyse_races(parse_file(DATA / "0df3fb74d88b5f4f-hand-fix.litmus"))
    assert hand.possible and not (want & hand.possible)
    assert fixes.NO_FIX.startswith(f"no fix within {fixes.MAX_CHANGES} changes")


def test_a_wait_that_never_completes_is_no_fix():
    """0ec5: a wait loop before the arrive (or the copy) it needs spins for ever: the oracle finds no
    execution that completes, which is no fix (and no 'race-free')."""
    p, outs = _offending("0ec5a75cd7faf570")
    early = [c for c in fixes.changes(p) if c.op == "wait-loop" and c.thread == 0 and c.index <= 3]
    assert early
    orig = analyse_races(p)
    for c in early:
        assert not fixes._judge(orig, c, c.program, frozenset(tuple(o) for o in outs), False).why, c.text


def test_a_relaxed_wait_retried_is_not_the_fix_of_abc8219():
    """.relaxed try_wait gives no acquire (mbarrier.test_wait/try_wait): with the griddepcontrol.wait
    inserted, retrying the relaxed wait still lets the read miss the copy."""
    p, outs = _offending("abc8219d19080c78")
    singles = fixes.changes(p)
    gdc = next(c for c in singles if c.text == "add `griddepcontrol.wait` in P1 before `mbarrier.init bar0, 1`")
    retry = next(c for c in singles if c.op == "retry")
    prog = fixes.apply_all(p, (gdc, retry))
    assert {tuple(o) for o in outs} & analyse_races(prog).possible


def test_one_way_fences_are_tried_before_acq_rel_and_sc():
    """The fences come from the semantics table, weakest first (ISA membar/fence, 8.8): fence.acquire
    and fence.release each take part in one kind of pattern, acq_rel in both, sc also in Fence-SC."""
    assert set(fixes.FENCE_SEMS[:2]) == {Sem.ACQUIRE, Sem.RELEASE} and fixes.FENCE_SEMS[2:] == (Sem.ACQ_REL, Sem.SC)
    p, _ = _offending("0df3fb74d88b5f4f")
    fences = [c.new for c in fixes.changes(p) if c.kind == "fence" and c.thread == 1 and c.index == 1]
    assert [f.sem for f in fences if isinstance(f, Fence)][:4] == list(fixes.FENCE_SEMS)
    assert {f.scope for f in fences if isinstance(f, Fence)} == {fences[0].scope}  # one CTA: .cta only


def test_the_budget_bounds_the_search():
    p, outs = _offending("1d3a58b4f4e647de")
    n = len(fixes.changes(p))
    assert fixes.find_fix(p, outs, budget=n) is None  # the singles only: the pair is past the budget


def test_apply_all_keeps_the_order_of_two_insertions_at_one_place():
    p, _ = _offending("0ec5a75cd7faf570")
    cs = [c for c in fixes.changes(p) if c.thread == 1 and c.index == 2 and c.op == "insert"][:2]
    assert len(cs) == 2 and fixes.compatible(cs[0], cs[1])
    code = fixes.apply_all(p, cs).threads[1].code
    assert code[2:4] == (cs[0].new, cs[1].new)


def test_a_fix_the_harness_cannot_run_is_no_fix():
    """0ec5: P0's wait loop before ``bar.sync 1`` satisfies the oracle, but the harness refuses a
    loop before a barrier (codegen.unrunnable_reasons), so the fix is P1's."""
    from fuzzgpu.codegen.runnable import unrunnable_reasons

    p, outs = _offending("0ec5a75cd7faf570")
    c = next(c for c in fixes.changes(p) if c.op == "wait-loop" and c.thread == 0 and c.index == 4)
    orig, want = analyse_races(p), frozenset(tuple(o) for o in outs)
    assert fixes._judge(orig, c, c.program, want, False).why == "race-free"
    assert unrunnable_reasons(c.program) and not fixes._judge(orig, c, c.program, want, True).why


def test_no_one_way_fence_for_a_target_without_it():
    """fence.acquire/fence.release are PTX ISA 8.6, sm_90+: a fix for sm_80 does not ask for one."""
    assert fixes.fence_sems("sm_90") == fixes.fence_sems(None) == fixes.FENCE_SEMS
    assert fixes.fence_sems("sm_100a") == fixes.FENCE_SEMS
    assert fixes.fence_sems("sm_80") == (Sem.ACQ_REL, Sem.SC)
    p, _ = _offending("0df3fb74d88b5f4f")
    sems = {c.new.sem for c in fixes.changes(p, "sm_80") if isinstance(c.new, Fence)}
    assert sems == {Sem.ACQ_REL, Sem.SC}
    assert {Sem.ACQUIRE, Sem.RELEASE} <= {c.new.sem for c in fixes.changes(p, "sm_90") if isinstance(c.new, Fence)}


def test_a_pair_text_names_the_labels_and_registers_of_the_fixed_program():
    """Two changes of one thread that each take a fresh label (a retry loop and a wait loop) are
    drawn on the original, where both take ``LF00``; made together, the second takes ``LF01`` (and
    a second wait loop the next register).  The fix's text is that of the program ``replay --fixed``
    runs."""
    from fuzzgpu import corpus
    from fuzzgpu.ir import Branch, Label, MbarrierWait

    p = corpus.load_entry(Path(__file__).parents[1] / "data" / "findings" / "tma-load-relaxed-lone-wait.json").program
    cs = fixes.changes(p)
    retry = next(c for c in cs if c.op == "retry")
    loops = [c for c in cs if c.op == "wait-loop"]
    for pair in ((retry, loops[-1]), (loops[0], loops[-1])):
        assert all("LF00" in c.text for c in pair)  # each alone
        q, made = fixes.described(p, pair)
        assert q == fixes.apply_all(p, pair)
        code = q.threads[0].code
        labels = [i.name for i in code if isinstance(i, Label)]
        assert sorted(labels) == ["LF00", "LF01"]
        for lab in labels:
            k = next(n for n, i in enumerate(code) if isinstance(i, Label) and i.name == lab)
            w, br = code[k + 1], code[k + 2]
            assert isinstance(w, MbarrierWait) and isinstance(br, Branch) and br.target == lab
            mine = [c for c in made if f"`{lab}:" in c.text or f", {lab}`" in c.text]
            assert len(mine) == 1 and f"beq {w.dst}, 0, {lab}" in mine[0].text, (lab, [c.text for c in made])
