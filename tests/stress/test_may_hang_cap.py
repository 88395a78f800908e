"""A program with a wait on parity 1 that the model says may spin for ever runs at most
MAY_HANG_INSTANCES instances at the full budget (`fuzzgpu necessity`; an H200 `all` race campaign once
quarantined 41 such programs, each after a 122 s watchdog: on the hardware the wait on the other
phase spins to the harness's budget once the phase completed first); the same program waiting on
parity 0 keeps its instances.  A campaign runs a program with a wait loop at a short spin budget
first (SHORT_BUDGET), and again at the profile's when it timed out and the model says every wait
completes."""

from __future__ import annotations

import dataclasses

from fuzzgpu import litmus
from fuzzgpu.backends.base import RunConfig
from fuzzgpu.model import termination
from fuzzgpu.stress.campaign import (MAY_HANG_INSTANCES, SHORT_BUDGET, CampaignTuner, full_budget_again, may_hang_capped,
                                     short_budget)
from programs import WRONG_PARITY, wrong_parity  # noqa: E402 -- tests/programs.py


def test_a_wait_that_may_spin_runs_fewer_instances() -> None:
    p = wrong_parity(1)
    assert termination(p).may_hang  # the model: the wait on phase 1 may spin for ever
    base = dataclasses.replace(RunConfig(), instances=10_000_000)
    assert may_hang_capped(p, base).instances == MAY_HANG_INSTANCES  # what `necessity` runs at 100,000 iterations


def test_the_right_parity_keeps_the_profiles_instances() -> None:
    p = wrong_parity(0)
    assert not termination(p).may_hang
    base = dataclasses.replace(RunConfig(), instances=10_000_000)
    assert may_hang_capped(p, base) == base
    small = dataclasses.replace(RunConfig(), instances=1000)
    assert may_hang_capped(wrong_parity(1), small) == small  # already under the cap


def test_a_wait_loop_runs_first_at_a_short_budget() -> None:
    """A hanging instance holds its launch for the whole budget: a campaign runs a program with a
    wait loop at SHORT_BUDGET iterations first; a program without one keeps the profile's budget."""
    base = dataclasses.replace(RunConfig(), instances=10_000_000)
    for parity in (0, 1):
        assert short_budget(wrong_parity(parity), base).budget == SHORT_BUDGET < base.budget
        assert short_budget(wrong_parity(parity), base).instances == base.instances  # the budget alone
    tuner = CampaignTuner(share=0.0, backend="cuda", state={})
    cfg = tuner.stress_for(wrong_parity(1), base)[0]
    # what a campaign runs: the short budget, the instances asked for (a run that mostly times out
    # stops early: RunConfig.timeout_stop), no question to the model before the run
    assert (cfg.budget, cfg.instances) == (SHORT_BUDGET, base.instances)
    loopless = litmus.parse(WRONG_PARITY.replace("PARITY", "1").replace(" beq r0, 0, LC00 ;\n", ""))
    assert short_budget(loopless, base) == base  # no wait loop: nothing times out


def test_timeouts_at_the_short_budget_are_judged_at_the_full_one_unless_the_wait_may_hang() -> None:
    """A timeout is a finding only where the model says every wait completes, and only at the
    profile's budget: such a program is run again with it; a program whose wait may spin for ever
    keeps its short run (its timeouts are expected); no timeout, no second run."""
    full = RunConfig().budget
    short = short_budget(wrong_parity(0), RunConfig())
    assert not termination(wrong_parity(0)).may_hang and termination(wrong_parity(1)).may_hang
    again = full_budget_again(wrong_parity(0), short, full, timeouts=3)
    assert again is not None and again.budget == full and dataclasses.replace(again, budget=short.budget) == short
    assert full_budget_again(wrong_parity(1), short, full, timeouts=3) is None  # may hang: expected
    assert full_budget_again(wrong_parity(0), short, full, timeouts=0) is None  # nothing timed out
    assert full_budget_again(wrong_parity(0), RunConfig(), full, timeouts=3) is None  # already at the full budget
