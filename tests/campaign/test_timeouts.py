"""Timeouts (issue #8, "Reliability"): an instance whose bounded wait runs out of its budget is a
``timeout``.  On a program whose waits the model says must complete it is a finding of its own kind
(both properties); where a wait may or must hang it is expected; where the model cannot say, noted.
The whole path on the CPU: the sim fault ``timeout``, a campaign that finds, shrinks and saves a
timeout finding, replay (exit 1 with the fault, 0 without), explain and the report."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from fuzzgpu import model
from fuzzgpu import strategies as fst
from fuzzgpu.backends.base import Histogram, RunConfig
from fuzzgpu.backends.sim import TIMEOUT_FRACTION, SimBackend, parse_faults
from fuzzgpu.campaign import ProfileError, load_profile, timeouts_line
from fuzzgpu.corpus import Corpus, signature, verdict_signature
from fuzzgpu.litmus import parse_file
from fuzzgpu.properties import check

TERM = Path(__file__).resolve().parents[1] / "litmus" / "termination"


def _p(name: str):
    return parse_file(TERM / f"{name}.litmus")


def _hist(p, timeouts: int, instances: int = 1000) -> Histogram:
    return Histogram(p.outcome_keys(), (), instances, timeouts)


# -- properties ---------------------------------------------------------------------------------


@pytest.mark.parametrize("prop", ["model", "sc"])
def test_timeouts_where_every_wait_must_complete_fail_with_their_own_kind(prop):
    p = _p("Spin-MP-relacq-gpu")
    v = check(prop, p, _hist(p, 7))
    assert v.failed and v.kinds == ("timeout",) and v.timeouts == 7 and v.failures == 7
    assert v.waits == "must-complete" and v.rate == 7 / 1000
    assert v.reason.startswith("timeout: the model says every wait completes (P1's wait at LC00")
    assert "yet 7 instance(s) timed out" in v.reason and "timeout" in v.summary()
    assert v.to_json()["timeouts"] == 7


@pytest.mark.parametrize("prop", ["model", "sc"])
@pytest.mark.parametrize("name,status", [("MP-spin-weak-flag", "may-hang"), ("MP-spin-flag-never-set", "must-hang"),
                                         ("MBAR-spin-count2-one-arrive", "must-hang")])
def test_timeouts_where_a_wait_may_hang_pass_with_a_note(prop, name, status):
    p = _p(name)
    v = check(prop, p, _hist(p, 1000))
    assert not v.failed and v.timeouts == 0 and v.waits == status
    assert any(n.startswith("1000 instance(s) timed out, as the model allows") for n in v.notes)


def test_timeouts_the_model_cannot_judge_are_noted_not_failed():
    p = _p("Loop-with-write")
    v = check("model", p, _hist(p, 3))
    assert not v.failed and v.waits == "unknown"
    assert any("cannot say whether the waits must complete" in n for n in v.notes)


def test_no_timeouts_no_termination_verdict():
    p = _p("Spin-MP-relacq-gpu")
    v = check("model", p, _hist(p, 0))
    assert v.status == "pass" and v.waits == "" and not v.notes


def test_timeout_finding_and_outcome_finding_have_different_signatures():
    p = _p("Spin-MP-relacq-gpu")
    outcome = (("P1:r0", 1), ("P1:r1", 0))
    assert signature(p, "model", [], (), timeout=True) != signature(p, "model", [], ())
    assert signature(p, "model", [outcome], (), timeout=True) != signature(p, "model", [outcome])
    v = check("model", p, _hist(p, 5))
    assert verdict_signature(p, v) == signature(p, "model", [], (), timeout=True)


# -- the sim backend ----------------------------------------------------------------------------


def test_sim_timeout_fault_hits_only_programs_with_a_wait():
    assert parse_faults("timeout:0.5") == {"timeout": 0.5}
    cfg = RunConfig(instances=10_000)
    spin = SimBackend("timeout:1").run(_p("Spin-MP-relacq-gpu"), cfg)  # in-process: not a process fault
    assert spin.timeouts == round(10_000 * TIMEOUT_FRACTION)
    assert spin.timeouts + sum(c for _, c in spin.counts) == 10_000
    assert SimBackend("timeout:1").run(_p("MP-no-loop"), cfg).timeouts == 0
    assert SimBackend().run(_p("Spin-MP-relacq-gpu"), cfg).timeouts == 0


def test_sim_program_that_never_completes_times_out_in_every_instance():
    h = SimBackend().run(_p("MBAR-spin-count2-one-arrive"), RunConfig(instances=5000))
    assert h.timeouts == 5000 and not h.counts


# -- strategies and the profile -----------------------------------------------------------------


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(fst.weighted({"SPIN": 1, "MBAR-SPIN": 1}))
def test_wait_shapes_without_hangs_option_always_store_what_they_wait_for(p):
    assert model.termination(p).status in ("must-complete", "may-hang")  # never must-hang


def test_hangs_option_draws_waits_that_never_complete():
    seen: Counter = Counter()
    opts = fst.Options(hangs=fst.HANG_TYPES)

    @settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
    @given(fst.shape("SPIN", opts) | fst.shape("MBAR-SPIN", opts))
    def draw(p):
        seen[(p.name, model.termination(p).status)] += 1

    draw()
    assert seen[("SPIN", "must-hang")] and seen[("SPIN", "must-complete")]
    assert seen[("MBAR-SPIN", "must-hang")] and seen[("MBAR-SPIN", "must-complete")]


def test_reliability_profile_and_bad_hangs():
    prof = load_profile("reliability")
    assert set(prof.options.hangs) == set(fst.HANG_TYPES)
    assert prof.shapes["SPIN"] > 0 and prof.shapes["MBAR-SPIN"] > 0 and prof.shapes["MP"] > 0
    with pytest.raises(ValueError):
        fst.Options(hangs=("sometimes",))


def test_bad_hangs_in_a_profile_is_one_line(tmp_path):
    f = tmp_path / "bad.toml"
    f.write_text('[shapes]\nSPIN = 1\n[annotations]\nhangs = ["sometimes"]\n')
    with pytest.raises(ProfileError, match="annotations.hangs"):
        load_profile(str(f))


def test_report_line_counts_findings_and_expected():
    assert timeouts_line({}) == "timeouts    none"
    line = timeouts_line({"instances": 1200, "programs": 3, "must-complete": 1, "may-hang": 2})
    assert "1200 instance(s) timed out in 3 program(s): 1 whose waits must complete (findings), 2 that may hang (expected), 0 unknown" in line


# -- the whole path: campaign, shrink, save, replay, explain ------------------------------------


def fuzzgpu(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fuzzgpu", *args], check=False, capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
def test_sim_campaign_finds_shrinks_and_replays_a_timeout_finding(tmp_path):
    corpus = tmp_path / "c"
    r = fuzzgpu("campaign", "--backend", "sim", "--sim-fault", "timeout:1", "--profile", "reliability", "--time", "60",
                "--corpus", str(corpus), "--seed", "2", "--max-findings", "1", "--no-live")
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-3000:]
    entries = Corpus(corpus).entries()
    assert len(entries) == 1
    e = entries[0]
    v = e.data["verdict"]
    assert e.timeouts > 0 and not v["offending"] and v["waits"] == "must-complete" and v["reason"].startswith("timeout:")
    assert model.termination(e.program).must_complete and model.liveness.waits(e.program)
    assert e.shape in ("SPIN", "MBAR-SPIN") and len(e.program.threads) == 2 and e.data["shrunk"]
    assert e.signature == signature(e.program, "model", [], (), timeout=True)
    # a wait loop runs at stress.campaign.SHORT_BUDGET first; timed out where every wait must
    # complete, it is judged on a run at the profile's budget: the finding's stress says so
    assert e.stress["budget"] == load_profile("reliability").stress.budget
    report = (corpus / "report" / "report.txt").read_text()
    assert "whose waits must complete (findings)" in report
    state = json.loads((corpus / "report" / "report.json").read_text())["state"]
    assert state["timeouts"]["must-complete"] >= 1 and state["timeouts"]["instances"] >= e.timeouts

    with_fault = fuzzgpu("replay", str(corpus), "--backend", "sim", "--sim-fault", "timeout:1")
    assert with_fault.returncode == 1 and "STILL VIOLATES" in with_fault.stdout and "timeout" in with_fault.stdout
    without = fuzzgpu("replay", str(corpus), "--backend", "sim")
    assert without.returncode == 0 and "fixed" in without.stdout
    from fuzzgpu.commands.replay import replay_entry

    class Static:  # the static backend executes nothing: a timeout finding is skipped, never run
        name = "static"

        def describe(self) -> str:
            return "static"

    assert replay_entry(e, Static())["status"] == "skipped"

    text = fuzzgpu("explain", str(e.path)).stdout
    assert "ran out of their wait budget (a finding: the model says every wait completes)" in text
    assert "termination verdict: must-complete" in text


# -- runs that stop on their timeouts (RunConfig.timeout_stop) -------------------------------------


def test_a_run_whose_waits_time_out_stops_early_when_asked():
    """A wait that never ends times every instance out; with ``timeout_stop`` the run stops after
    that many instances and says so (the H200 600 s campaign of 2026-12-03 spent ~3/4 of its
    CUDA-event GPU time in 664 runs with timeouts, up to 104 s for one program's 1e7 instances)."""
    p = _p("MP-spin-flag-never-set")
    full = SimBackend().run(p, RunConfig(instances=50_000))
    assert full.instances == full.timeouts == 50_000 and "stopped_early" not in dict(full.meta)
    h = SimBackend().run(p, RunConfig(instances=50_000, timeout_stop=2_000))
    assert h.instances == h.timeouts == 2_000
    assert dict(h.meta)["stopped_early"].startswith("2000 of 50000 instances run")
    done = SimBackend().run(_p("Spin-MP-relacq-gpu"), RunConfig(instances=50_000, timeout_stop=2_000))
    assert done.instances == 50_000 and done.timeouts == 0  # its waits end: every instance runs


def test_evidence_of_a_run_stopped_on_timeouts_answers_the_same_question(tmp_path):
    from fuzzgpu.evidence import EvidenceBackend, EvidenceCache, stress_key

    p = _p("MP-spin-flag-never-set")
    b = EvidenceBackend(SimBackend(), EvidenceCache(tmp_path))
    cfg = RunConfig(instances=50_000, timeout_stop=2_000)
    assert b.run(p, cfg).instances == 2_000 and b.fresh_runs == 1
    assert b.answers(p, cfg) and b.run(p, cfg).instances == 2_000 and b.fresh_runs == 1  # not run again
    assert not b.answers(p, RunConfig(instances=50_000))  # asked for every instance: the rest would run
    assert stress_key(cfg) == stress_key(RunConfig())  # the run's length is not its stress: same evidence key
    # the backend's rule is on the first launch: a stopped run whose later instances timed out less
    # (the meta says it stopped) answers the same question too
    from fuzzgpu.evidence import Evidence

    q = _p("Spin-MP-relacq-gpu")
    ev = Evidence(q.outcome_keys())
    ev.merge(Histogram(q.outcome_keys(), (), 2_000, 900, 0.1, "sim", (("stopped_early", "2000 of 50000 instances run"),)))
    b.cache.put(b.key(q, cfg), ev)
    assert b.answers(q, cfg) and not b.answers(q, RunConfig(instances=50_000))


def test_a_campaigns_runs_stop_on_timeouts(tmp_path):
    import io

    from fuzzgpu.campaign import Campaign
    from fuzzgpu.stress.campaign import MAY_HANG_INSTANCES

    c = Campaign(load_profile("all"), SimBackend(), tmp_path / "c", "race", seed=1, out=io.StringIO(), live=False)
    assert c.config_for().timeout_stop == MAY_HANG_INSTANCES
    assert "2 run(s) stopped early" in timeouts_line({"instances": 5, "programs": 2, "stopped_early": 2})


def test_the_stop_rule_is_more_than_half():
    from fuzzgpu.backends.base import mostly_timed_out

    assert mostly_timed_out(51, 100) and not mostly_timed_out(50, 100) and not mostly_timed_out(0, 0)


# -- the campaign's short spin budget (stress.campaign.SHORT_BUDGET) in a replay -----------------


@pytest.mark.parametrize("parity, budgets", [(0, [2_000, 100_000]), (1, [2_000])])
def test_replay_judges_timeouts_of_a_short_budget_entry_at_the_default_budget(tmp_path, parity, budgets):
    """An entry a campaign judged at its short spin budget (a wait loop runs there first): when the
    replay's run times out and the model says every wait completes, the replay judges a run at the
    default budget (a timeout at 2,000 iterations is never a finding); a wait that may spin for ever
    keeps the short run (its timeouts are expected).  The simulation with its timeout fault times
    out every run; the backend records the budget of each run it is asked for."""
    import dataclasses as dc

    from fuzzgpu.commands.replay import replay_entry
    from fuzzgpu.corpus import load_entry, make_entry
    from fuzzgpu.stress.campaign import SHORT_BUDGET

    from fuzzgpu import properties
    from programs import wrong_parity  # noqa: E402 -- tests/programs.py

    class Recording(SimBackend):
        def __init__(self) -> None:
            super().__init__("timeout:1")
            self.budgets: list[int] = []

        def run(self, program, config, advice=None):  # type: ignore[override]
            self.budgets.append(config.budget)
            return super().run(program, config)

    p = wrong_parity(parity)
    assert model.termination(p).may_hang == (parity == 1)
    cfg = dc.replace(RunConfig(), instances=2000, budget=SHORT_BUDGET)
    b = Recording()
    hist = b.run(p, cfg)
    verdict = properties.get("model").check(p, hist)
    path = tmp_path / "e.json"
    path.write_text(json.dumps(make_entry(p, verdict, hist, b, cfg, shape="parity"), indent=1))
    b.budgets.clear()
    replay_entry(load_entry(path), b, instances=2000)
    assert b.budgets == budgets


def test_prepare_asks_the_cache_with_the_config_each_program_runs_with(tmp_path):
    """A campaign runs a wait-loop program at the short spin budget (stress.campaign.short_budget):
    its batch asks the evidence cache with that configuration -- asked with the profile's, the cache
    missed the answer the run then found, and the program was compiled again for nothing -- and a
    program drawn twice in a batch is prepared once."""
    from fuzzgpu.evidence import EvidenceBackend, EvidenceCache
    from fuzzgpu.stress.campaign import short_budget

    class Preparing(SimBackend):
        def __init__(self) -> None:
            super().__init__()
            self.prepared: list[list] = []

        def prepare(self, programs) -> None:
            self.prepared.append(list(programs))

    from programs import MP as plain  # tests/programs.py

    spin = _p("Spin-MP-relacq-gpu")
    base = RunConfig(instances=2_000)
    b = EvidenceBackend(Preparing(), EvidenceCache(tmp_path))
    b.run(spin, short_budget(spin, base))
    b.prepare([spin, plain, plain], lambda p: short_budget(p, base))
    assert b.inner.prepared == [[plain]]  # the run answers the spin program from the cache
    b.prepare([spin], lambda p: base)  # asked with the profile's configuration: the cache has no answer
    assert b.inner.prepared[-1] == [spin]
    assert short_budget(spin, base) != base and short_budget(plain, base) == base
