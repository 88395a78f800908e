"""Issue 32's async-proxy and cluster classes (8, 9, 10, 17): the fix of each catalogue test
(tests/litmus/race/RACE-<class>-*.litmus, verdicts argued from the ISA in each file) is the weakest
change the issue names, and the general generator draws each class runnable on the GPU harness."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, find, settings

from fuzzgpu import fixes
from fuzzgpu import strategies as fst
from fuzzgpu.codegen import unrunnable_reasons
from fuzzgpu.litmus import parse_file
from fuzzgpu.model.race import analyse_races
from fuzzgpu.bug_classes import CLASSES, finding_class

RACE = Path(__file__).resolve().parents[2] / "tests" / "litmus" / "race"

#: the expected fix of each class's litmus tests (the weakest change; tried cheapest first)
EXPECTED = {
    # class 8: a proxy fence between the generic read and the async reuse
    "RACE-8-generic-read-then-tma-load.litmus":
        "add `fence.proxy.async.shared::cta` in P0 before `mbarrier.arrive.expect_tx.release.cta bar, 4`",
    "RACE-8-flag-poll-bar-then-tma-load.litmus": "add `fence.proxy.async.shared::cta` in P0 before `bar.cta.sync 1`",
    # class 9: the issuing thread waits for its copies' source reads (.read suffices) before the reuse
    "RACE-9-tma-store-source-reused-no-wait.litmus": "add `cp.async.bulk.wait_group.read 0` in P0 before `bar.cta.sync 0`",
    "RACE-9-tma-store-wait-by-other-thread.litmus": "add `cp.async.bulk.wait_group.read 0` in P0 before `bar.cta.sync 0`",
    "RACE-9-tma-store-wait-group-n-minus-1.litmus":
        "make `cp.async.bulk.wait_group.read 1` in P0 `cp.async.bulk.wait_group.read 0`",
    # class 10: a wait for the write, not only the source reads, before the signal
    "RACE-10-tma-store-wait-read-then-flag.litmus":
        "make `cp.async.bulk.wait_group.read 0` in P0 `cp.async.bulk.wait_group 0`",
    # class 17: the cluster scope on the side that had .cta
    "RACE-17-remote-arrive-cta-scope.litmus":
        "make `mbarrier.arrive.release.cta.shared::cluster bar` in P1 `mbarrier.arrive.release.cluster.shared::cluster bar`",
    "RACE-17-remote-arrive-wait-cta-scope.litmus":
        "make `mbarrier.try_wait.parity.acquire.cta r1, bar, 0` in P0 `mbarrier.try_wait.parity.acquire.cluster r1, bar, 0`",
}


def test_every_new_class_test_has_its_fix():
    assert {f.name for f in RACE.glob("RACE-*.litmus") if f.name.split("-")[1] in ("8", "9", "10", "17")} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_fix_of_each_class(name):
    p = parse_file(RACE / name)
    racy = list(analyse_races(p).racy)
    assert racy  # the original shows an outcome only a race produces
    f = fixes.find_fix(p, racy)
    assert f is not None and f.text == EXPECTED[name]
    fixed = analyse_races(f.program)
    assert not (set(racy) & fixed.possible)  # the oracle forbids the offending outcome in the fixed program
    assert not fixed.is_racy


FIND = settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck), database=None)


def _classes(p) -> set:
    ra = analyse_races(p)
    return {finding_class(p, pr.mechanism, pr.other_at) for prs in ra.racy.values() for pr in prs}


@pytest.mark.parametrize("cls", [8, 9, 10])
def test_the_general_generator_draws_the_class_runnable(cls):
    """Each class comes up among the draws of the general generator (profile ``all``'s HANDOFF) in a
    program the GPU harness can run (tests/campaign/test_race_campaign.py finds and shrinks it)."""
    assert cls in CLASSES
    p = find(fst.producer_consumer(runnable=True), lambda p: cls in _classes(p), settings=FIND)
    assert unrunnable_reasons(p) == []
