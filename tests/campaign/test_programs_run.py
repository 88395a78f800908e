"""Programs judged and programs run (issue 29): a campaign's ``programs`` counts judgements -- the
evidence cache's answers to a program asked again (a shrink's resumed candidate, Hypothesis's replay
of its best example) and the draws the backend cannot run (not covered) included --, ``run`` only
the programs the backend ran afresh.  The state, the status lines, report.txt and report.json say
both (report.json's ``totals``: judged, run, judged_per_hour, run_per_hour).

In-process campaigns on the sim backend stopped after a number of Hypothesis runs (never a
wall-clock time): what they assert is a count, not a speed."""

from __future__ import annotations

import io
import json

from test_campaign_classes import campaign

from fuzzgpu.backends.base import Histogram, RunConfig
from fuzzgpu.backends.sim import SimBackend
from fuzzgpu.campaign import Campaign, State, combine_states, load_profile, write_combined_report
from fuzzgpu.campaign.report import status_text
from fuzzgpu.campaign.timeline import merge, rates, sample
from fuzzgpu.evidence import EvidenceBackend, EvidenceCache
from fuzzgpu.workers.local import status_line

from programs import mp  # tests/programs.py


def test_a_shrinks_cache_answers_are_judged_not_run(tmp_path):
    c, _ = campaign(tmp_path, 2)  # a finding, shrunk: Hypothesis asks for its best example again
    s = c.state
    assert s.shrink_programs > 0 and c.backend.cached_runs > 0
    assert 0 < s.run < s.programs
    assert s.run == c.backend.fresh_runs  # on sim every fresh run is the backend's own
    not_covered = sum(int(st["unsupported"]) for st in s.shapes.values())
    assert s.programs == s.run + c.backend.cached_runs + not_covered
    state = json.loads(c.state_path.read_text())
    assert state["programs"] == s.programs and state["run"] == s.run  # "programs" kept: what it always counted
    assert State.load(c.state_path).run == s.run
    rep = json.loads((c.root / "report" / "report.json").read_text())
    t = rep["totals"]
    assert (t["judged"], t["run"]) == (s.programs, s.run) and rep["state"]["run"] == s.run
    assert set(t) == {"judged", "run", "elapsed_s", "judged_per_hour", "run_per_hour"}
    assert t["run_per_hour"] is None or 0 < t["run_per_hour"] <= t["judged_per_hour"]
    text = (c.root / "report" / "report.txt").read_text()
    assert f"totals      {s.programs} programs judged" in text and f", {s.run} run by the backend" in text
    line = status_text(c, 10.0)  # the status line without the live display
    assert f"programs {s.programs} judged ({s.programs / 10:.1f}/s), {s.run} run ({s.run / 10:.1f}/s)" in line
    assert s.timeline[-1]["run"] == s.run


def test_draws_the_backend_cannot_run_are_judged_not_run(tmp_path):
    """A launch the driver refuses (the sim's ``refused`` fault) is counted not covered: judged, not run."""
    prof = tmp_path / "p.toml"
    prof.write_text('[shapes]\nMP = 1\nSB = 1\n[sim]\ninstances = 2_000\n[hypothesis]\nmax_examples = 20\n')
    c = Campaign(load_profile(str(prof)), SimBackend("refused:0.5"), tmp_path / "corpus", "model", seed=5, out=io.StringIO(), live=False)
    c.max_runs = 2
    res = c.run(3600)
    s = c.state
    refused = sum(n for why, n in s.not_covered.items() if "CUDA_ERROR_INVALID_VALUE" in why)
    assert refused > 0 and s.run > 0
    assert s.programs == s.run + c.backend.cached_runs + refused
    assert res.session_run == s.run and res.session_programs == s.programs


class _Checked:
    """A GPU backend whose harness cannot run ``refuse``: its answer is then a static check's histogram."""

    name = "cuda"
    deterministic = False

    def __init__(self, refuse: str) -> None:
        self.refuse = refuse

    def identity(self) -> tuple[str, str, str]:
        return ("cuda+static", "sm_90", "test")

    def run(self, program, config=None):
        by = "static" if program.name == self.refuse else "cuda"
        return Histogram(program.outcome_keys(), (), 0 if by == "static" else config.instances, 0, 0.0, by, ())


def test_a_stand_in_check_and_a_cache_answer_are_not_runs(tmp_path):
    runs, refused = mp("MP"), mp("PDL", x=3)  # (another program: the name is not in its hash)
    b = EvidenceBackend(_Checked(refuse="PDL"), EvidenceCache(tmp_path / "evidence"))
    cfg = RunConfig(instances=100)
    b.run(runs, cfg)
    b.run(runs, cfg)  # answered from the cache
    b.run(refused, cfg)  # the static check standing in for a run the harness cannot do
    assert (b.fresh_runs, b.own_runs, b.cached_runs) == (2, 1, 1)


def test_the_workers_states_merge_judged_and_run(tmp_path):
    w0 = {"programs": 100, "run": 60, "instances": 10, "elapsed": 36.0, "findings": [], "classes": {},
          "timeline": [{"t": 0, "programs": 0, "run": 0, "instances": 0, "findings": {}},
                       {"t": 10, "programs": 50, "run": 30, "instances": 5, "findings": {}}]}
    w1 = {"programs": 40, "run": 25, "instances": 4, "elapsed": 18.0, "findings": [], "classes": {}}
    old = {"programs": 7, "instances": 1, "elapsed": 3.0}  # a state written before "run" was counted
    comb = combine_states({"w0": w0, "w1": w1, "w2": old})
    assert (comb["programs"], comb["run"], comb["elapsed"]) == (147, 85, 36.0)
    line = status_line(36.0, 3, 3, comb)
    assert "programs 147 judged (4.1/s), 85 run (2.4/s)" in line
    d = write_combined_report(tmp_path, {"w0": w0, "w1": w1}, "time", {"workers": ["w0", "w1"]})
    rep = json.loads((d / "report.json").read_text())
    assert rep["combined"]["programs"] == 140 and rep["combined"]["run"] == 85
    assert rep["totals"] == {"judged": 140, "run": 85, "elapsed_s": 36.0, "judged_per_hour": 14000, "run_per_hour": 8500}
    text = (d / "report.txt").read_text()
    assert "totals      140 programs judged (14,000/h), 85 run by the backend (8,500/h)" in text
    assert any(row.split()[:3] == ["w1", "40", "25"] for row in text.splitlines())


def test_the_timeline_keeps_run_beside_judged():
    tl: list[dict] = []
    for i in range(5):
        sample(tl, 2.0 * i, 10 * i, 0, {}, run=4 * i)
    assert [r for _, r in rates(tl)] == [5.0] * 4 and [r for _, r in rates(tl, key="run")] == [2.0] * 4
    old = [{"t": 0, "programs": 0, "instances": 0, "findings": {}}, {"t": 4, "programs": 8, "instances": 0, "findings": {}}]
    m = merge([tl, old])
    assert m[-1]["programs"] == 48 and "run" not in m[-1]  # not a sum that leaves a worker out
    assert merge([tl])[-1]["run"] == 16


def test_the_status_says_when_every_draw_of_the_session_repeats_a_judged_program(tmp_path):
    """A second session of a small profile whose programs the corpus has all judged ran none for
    105 s and said nothing (a hostile review, 2026-12-05): after ``REPEATS_SAID`` judgements with
    none run, the status line says the draws repeat."""
    from fuzzgpu.campaign.report import REPEATS_SAID

    c, _ = campaign(tmp_path, 2)
    s = c.state
    assert "judged before" not in status_text(c, 10.0)
    c._p0, c._r0 = s.programs - REPEATS_SAID, s.run  # this session: REPEATS_SAID judged, none run
    assert f"every one of this session's {REPEATS_SAID} draws was judged before" in status_text(c, 10.0)
    c._r0 = s.run - 1  # one run: a draw was new
    assert "judged before" not in status_text(c, 10.0)
    c._p0, c._r0 = s.programs - REPEATS_SAID + 1, s.run  # fewer than REPEATS_SAID judged
    assert "judged before" not in status_text(c, 10.0)
