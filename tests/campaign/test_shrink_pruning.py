"""A race campaign's shrink answers a candidate with no racy outcome at all "passes" without
compiling or running it (``properties.may_fail_as``): the finding being shrunk failed in a race class,
named by the racy outcomes the backend showed, and such a candidate has none to show.  On the GPU
each such candidate cost a harness compile, a static check and a run; in the sim campaigns below
about half of the shrinks' candidates are such."""

from __future__ import annotations

import io
import json
from pathlib import Path

from fuzzgpu import properties
from fuzzgpu.backends.base import RunConfig
from fuzzgpu.backends.sim import SimBackend
from fuzzgpu.campaign import Campaign, load_profile
from fuzzgpu.ir import program_from_json
from fuzzgpu.litmus import parse_file

RACE = Path(__file__).resolve().parents[1] / "litmus" / "race"


def test_a_program_with_no_racy_outcome_cannot_fail_in_a_race_class() -> None:
    racy = parse_file(RACE / "RACE-6-mbarrier-relaxed.litmus")
    clean = parse_file(RACE / "NORACE-relacq-gpu-spin.litmus")
    key = "race:relaxed-mbarrier"
    assert properties.may_fail_as(racy, key)
    assert not properties.may_fail_as(clean, key)
    # a forbidden outcome, a timeout or a SASS finding (race:other), or another property's key: it may
    assert properties.may_fail_as(clean, "race:other") and properties.may_fail_as(clean, "model|forbidden")


def test_a_race_campaigns_shrink_prunes_candidates_that_cannot_fail(tmp_path) -> None:
    c = Campaign(load_profile("all"), SimBackend(), tmp_path / "c", "race", seed=1, out=io.StringIO(), live=False)
    c.max_findings = 2
    result = c.run(3600)
    pruned = sum(int(v.get("pruned", 0)) for v in c.state.shapes.values())
    assert pruned > 0 and c.state.shrink_programs > 0  # pruned ones are not counted as programs
    for f in result.new_findings:  # every saved finding failed on the backend's own run
        e = json.loads((tmp_path / "c" / f["file"]).read_text())
        assert "timeout_stop" not in e["stress"]  # a replay runs every instance it asks for
        p = program_from_json(e["program"])
        assert properties.RACE.check(p, SimBackend().run(p, RunConfig(instances=200_000))).failed
