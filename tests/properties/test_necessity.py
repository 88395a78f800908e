"""fuzzgpu.necessity: the changes are the fix search's, walked the other way (each one's inverse is a
change :func:`fuzzgpu.fixes.changes` makes), and the verdicts follow the oracle."""

from __future__ import annotations

import dataclasses

import pytest
from paths import ROOT

from fuzzgpu import fixes
from fuzzgpu.ir import Fence, Load, Scope, Sem
from fuzzgpu.litmus import parse, parse_file
from fuzzgpu.necessity import necessity, weaker, weakenings

EXAMPLES = sorted((ROOT / "examples" / "necessity").glob("*.litmus"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_each_replacement_or_single_drop_is_undone_by_a_change_of_the_fix_search(path):
    p = parse_file(path)
    for w in weakenings(p):
        if w.op == "replace":
            assert w.before in tuple(fixes.stronger(w.after)), w
        if w.op == "replace" or (w.op == "drop" and w.span == 1):
            assert any(c.program == p for c in fixes.changes(w.program)), (w.before, w.after)
        elif w.op == "once":  # the fix search's retry loop puts it back (a fresh label)
            assert any(c.op == "retry" and c.thread == w.thread for c in fixes.changes(w.program))
        else:  # a dropped wait loop: the fix search's wait-loop insertion puts one back
            assert any(c.op == "wait-loop" and c.thread == w.thread and c.index == w.index - 1
                       for c in fixes.changes(w.program))


def test_weaker_gives_the_immediate_steps_only():
    acq = Load("r1", "f", Sem.ACQUIRE, Scope.GPU)
    assert weaker(acq) == [dataclasses.replace(acq, sem=Sem.RELAXED), dataclasses.replace(acq, scope=Scope.CLUSTER)]
    assert weaker(Fence(Sem.SC, Scope.CTA)) == [Fence(Sem.ACQ_REL, Scope.CTA)]
    assert set(weaker(Fence(Sem.ACQ_REL, Scope.GPU))) == {Fence(Sem.RELEASE, Scope.GPU), Fence(Sem.ACQUIRE, Scope.GPU),
                                                          Fence(Sem.ACQ_REL, Scope.CLUSTER)}
    assert weaker(Load("r1", "x")) == [Load("r1", "x", nc=True)]
    assert weaker(Load("r1", "x", nc=True)) == []


MP_NO_CONDITION = """PTX MP-no-condition
{ x=0; f=0; }
 P0@cta 0,gpu 0      | P1@cta 1,gpu 0       ;
 st.weak x, 1        | LC00:                ;
 st.release.gpu f, 1 | ld.acquire.gpu r1, f ;
                     | beq r1, 0, LC00      ;
                     | ld.weak r2, x        ;
"""


def test_without_a_condition_the_witness_is_an_outcome_only_a_race_produces():
    n = necessity(parse(MP_NO_CONDITION))
    assert n.original == () and n.race_free
    got = {(n.program.threads[r.change.thread].name, r.change.after.sem if r.change.after else None): r
           for r in n.results}
    assert got[("P0", Sem.RELAXED)].verdict == "needed"
    assert dict(got[("P0", Sem.RELAXED)].outcomes[0])["P1:r2"] == 0
    assert got[("P1", Sem.RELAXED)].verdict == "needed"


def test_a_change_that_adds_a_race_the_condition_does_not_witness_is_race_only():
    # the condition asks only for the flag: weakening the flag's release adds the data race on x,
    # and no outcome of the condition (r1 == 2: never written) appears
    p = parse(MP_NO_CONDITION.replace("PTX MP-no-condition", "PTX MP-flag-only") + "exists (P1:r1 == 2)\n")
    n = necessity(p)
    relaxed = [r for r in n.results if r.change.thread == 0 and r.change.after is not None
               and r.change.after.sem is Sem.RELAXED]
    assert relaxed and relaxed[0].verdict == "race-only" and "races with" in relaxed[0].why[0]


MP_RELEASE_FENCE_READER = """PTX MP-release-fence-reader
{ x=0; f=0; }
 P0@cta 0,gpu 0      | P1@cta 1,gpu 0       ;
 st.weak x, 1        | ld.relaxed.gpu r1, f ;
 st.release.gpu f, 1 | fence.release.gpu    ;
                     | ld.weak r2, x        ;
exists (P1:r1 == 1 /\\ P1:r2 == 0)
"""


def test_the_rows_the_inverses_needed_are_in_the_fix_table_too():
    # one table: a fence.release the reader needs as an acquire fence is strengthened in place (it was
    # only ever replaced by an inserted fence); a bulk wait_group 1 becomes 0; a relaxed cluster arrive release
    from fuzzgpu.ir import BulkWait, ClusterBarrier

    p = parse(MP_RELEASE_FENCE_READER)
    texts = [c.text for c in fixes.changes(p)]
    assert "make `fence.release.gpu` in P1 `fence.acq_rel.gpu`" in texts
    fix = fixes.find_fix(p, [{"P1:r1": 1, "P1:r2": 0}])
    assert fix is not None and len(fix.changes) == 1
    assert BulkWait(0) in tuple(fixes.stronger(BulkWait(1)))
    assert BulkWait(0, read=True) in tuple(fixes.stronger(BulkWait(1, read=True)))
    arrive = ClusterBarrier("arrive", Sem.RELAXED)
    assert dataclasses.replace(arrive, sem=None) in tuple(fixes.stronger(arrive))
