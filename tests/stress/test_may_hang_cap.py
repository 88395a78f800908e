"""A program with a wait on parity 1 that the model says may spin for ever runs with at most
MAY_HANG_INSTANCES instances (an H200 `all` race campaign quarantined 41 such programs, each after a
122 s watchdog: on the hardware the wait on the other phase spins to the harness's budget once the
phase completed first); the same program waiting on parity 0 keeps the profile's instances.  A
campaign also gives any program whose wait may spin for ever a small spin budget (MAY_HANG_BUDGET)."""

from __future__ import annotations

import dataclasses

from fuzzgpu import litmus
from fuzzgpu.backends.base import RunConfig
from fuzzgpu.model import termination
from fuzzgpu.stress.campaign import MAY_HANG_BUDGET, MAY_HANG_INSTANCES, CampaignTuner, may_hang_budget, may_hang_capped

# the shape the H200 campaign quarantined, shrunk: one thread initialises its mbarrier, arrives with
# expect_tx, issues the TMA load that completes the phase, and waits on parity 1 -- the phase before
# the current one at the start (returns at once), the current one once phase 0 completed (spins)
WRONG_PARITY = """PTX parity
{
x0=0;
s0 @ shared = 0;
bar0 @ shared mbarrier = 0;
}
 P0@cta 0,gpu 0 ;
 mbarrier.init bar0, 1 ;
 mbarrier.arrive.expect_tx.release.cta bar0, 4 ;
 cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes s0, x0, bar0 ;
 LC00: ;
 mbarrier.test_wait.parity.acquire.cta r0, bar0, PARITY ;
 beq r0, 0, LC00 ;
 ld.weak r1, s0 ;
locations [P0:r1;]
"""


def _program(parity: int):
    return litmus.parse(WRONG_PARITY.replace("PARITY", str(parity)))


def test_a_wait_that_may_spin_runs_fewer_instances() -> None:
    p = _program(1)
    assert termination(p).may_hang  # the model: the wait on phase 1 may spin for ever
    base = dataclasses.replace(RunConfig(), instances=10_000_000)
    assert may_hang_capped(p, base).instances == MAY_HANG_INSTANCES
    tuner = CampaignTuner(share=0.0, backend="cuda", state={})
    assert tuner.stress_for(p, base)[0].instances == MAY_HANG_INSTANCES  # what a campaign runs


def test_the_right_parity_keeps_the_profiles_instances() -> None:
    p = _program(0)
    assert not termination(p).may_hang
    base = dataclasses.replace(RunConfig(), instances=10_000_000)
    assert may_hang_capped(p, base) == base
    small = dataclasses.replace(RunConfig(), instances=1000)
    assert may_hang_capped(_program(1), small) == small  # already under the cap


def test_a_wait_that_may_spin_gets_a_small_budget() -> None:
    """Its timeouts are never a finding (the model says it may spin), and each hanging instance
    holds its launch for the whole budget: a campaign runs it with MAY_HANG_BUDGET iterations."""
    p = _program(1)
    base = dataclasses.replace(RunConfig(), instances=10_000_000)
    assert may_hang_budget(p, base).budget == MAY_HANG_BUDGET < base.budget
    assert may_hang_budget(p, base).instances == base.instances  # the budget alone
    tuner = CampaignTuner(share=0.0, backend="cuda", state={})
    cfg = tuner.stress_for(p, base)[0]
    assert (cfg.budget, cfg.instances) == (MAY_HANG_BUDGET, MAY_HANG_INSTANCES)  # what a campaign runs


def test_a_wait_that_must_complete_keeps_the_budget() -> None:
    """A timeout there is a finding (the model says every wait completes): the budget stays."""
    p = _program(0)
    base = RunConfig()
    assert may_hang_budget(p, base) == base
    tuner = CampaignTuner(share=0.0, backend="cuda", state={})
    assert tuner.stress_for(p, base)[0].budget == base.budget
    loopless = litmus.parse(WRONG_PARITY.replace("PARITY", "1").replace(" beq r0, 0, LC00 ;\n", ""))
    assert may_hang_budget(loopless, base) == base  # no wait loop: nothing to bound
