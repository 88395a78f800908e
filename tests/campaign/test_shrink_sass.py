"""A race shrink leaves its candidates' SASS check out (issue 29: the static check's nvcc and nvdisasm
cost ~1 CPU s a shrink batch, nearly all their start-up, a quarter of an H200 campaign's CPU went to
small batches): while every failure the shrink met is a race class the backend showed, a
candidate's SASS findings cannot change whether it fails as they did (``properties.sass_decides``);
the finding saved is checked.  Real runs: the sim stands in for the GPU (it takes a worker's advice
as the cuda backend does), nvcc and the static SASS oracle check; skipped without them."""

from __future__ import annotations

import dataclasses
import io
import json

import pytest

from fuzzgpu import properties
from fuzzgpu.backends.base import RunConfig
from fuzzgpu.backends.sim import SimBackend
from fuzzgpu.backends.static import SASS_LEFT_OUT, CheckedBackend, StaticBackend
from fuzzgpu.campaign.analyses import Analyses
from fuzzgpu.campaign.speculate import confirmed
from fuzzgpu.corpus import verdict_class
from fuzzgpu.evidence import EvidenceBackend, EvidenceCache
from fuzzgpu.ir import Filler, GridDepControl, Load, Location, Placement, Program, Store, Thread, validate
from fuzzgpu.sass import find_tool

needs_nvcc = pytest.mark.skipif(not (find_tool("nvcc") and (find_tool("nvdisasm") or find_tool("cuobjdump"))),
                                reason="needs nvcc and nvdisasm/cuobjdump")


class _AdvisedSim(SimBackend):
    """The sim as a campaign's GPU backend: its run takes the worker's advice (and has no use for it)."""

    takes_advice = True

    def run(self, program, config=None, advice=None):  # type: ignore[no-untyped-def,override]
        return super().run(program, config)


def _pdl_nc() -> Program:
    # FlashMLA 01a2772's shape: ptxas hoists the ld.global.nc above griddepcontrol.wait (a SASS finding),
    # and the read races with the primary grid's store (the race class nc-load-after-pdl-wait)
    return validate(Program("PDL", (
        Thread("P0", Placement(grid=0), (Store("x", 1), GridDepControl("launch_dependents"))),
        Thread("P1", Placement(grid=1), (Filler("smem", 8), GridDepControl("wait"), Load("r0", "x", nc=True))),
    ), (Location("x"),), observed=("P1:r0",), pdl_grids=(1,)))


def test_sass_decides_only_outside_named_race_classes() -> None:
    assert properties.sass_decides([])  # no failure met yet
    assert not properties.sass_decides(["race:nc-load-after-pdl-wait"])
    assert not properties.sass_decides(["race:cp-async-without-wait+flag-without-release-acquire", "race:nc-load-after-pdl-wait"])
    # race:other is what a SASS finding alone fails as (and a forbidden outcome, a timeout); other properties' keys
    assert properties.sass_decides(["race:nc-load-after-pdl-wait", "race:other"])
    assert properties.sass_decides([""])


@needs_nvcc
def test_a_race_class_key_is_the_same_with_and_without_the_sass_check() -> None:
    """What ``sass_decides`` rests on: the SASS finding changes the finding's corpus class (it
    dominates, corpus.finding_class) but not the race verdict's class key, which the shrink
    follows; the run without the check says so in its meta and is kept apart by its identity."""
    p = _pdl_nc()
    b = CheckedBackend(_AdvisedSim(), StaticBackend("sm_90"))
    advice = Analyses(with_races=True).advice(p)
    assert advice is not None and advice.sass
    checked = b.run(p, RunConfig(instances=100_000), advice)
    unchecked = b.run(p, RunConfig(instances=100_000), dataclasses.replace(advice, sass=False))
    assert dict(checked.meta)["sass_findings"] and "sass_not_checked" not in dict(checked.meta)
    assert "sass_findings" not in dict(unchecked.meta) and dict(unchecked.meta)["sass_not_checked"] == SASS_LEFT_OUT
    v1, v2 = properties.RACE.check(p, checked), properties.RACE.check(p, unchecked)
    assert v1.failed and v2.failed and v1.sass and not v2.sass
    assert v1.class_key == v2.class_key == "race:nc-load-after-pdl-wait"
    assert not properties.sass_decides([v2.class_key])
    assert verdict_class(p.name, v1) != verdict_class(p.name, v2)  # the saved finding needs the check
    assert b.identity() != b.identity(sass=False) == b.inner.identity()


@needs_nvcc
def test_the_evidence_cache_keeps_runs_without_the_check_apart(tmp_path) -> None:
    p = _pdl_nc()
    ev = EvidenceBackend(CheckedBackend(_AdvisedSim(), StaticBackend("sm_90")), EvidenceCache(tmp_path))
    assert ev.sass_optional
    cfg = RunConfig(instances=10_000)
    advice = Analyses(with_races=True).advice(p)
    assert advice is not None
    h = ev.run(p, cfg, dataclasses.replace(advice, sass=False))
    assert "sass_not_checked" in dict(h.meta) and ev.fresh_runs == 1
    assert ev.answers(p, cfg, sass=False) and not ev.answers(p, cfg)  # no answer to a run that checks
    h = ev.run(p, cfg, advice)
    assert dict(h.meta)["sass_findings"] and ev.fresh_runs == 2
    q = _pdl_nc()
    q = dataclasses.replace(q, threads=(q.threads[0], dataclasses.replace(q.threads[1], code=q.threads[1].code[1:])))
    advice_q = Analyses(with_races=True).advice(q)
    assert advice_q is not None
    h = ev.run(q, cfg, advice_q)  # checked first ...
    assert ev.fresh_runs == 3
    h = ev.run(q, cfg, dataclasses.replace(advice_q, sass=False))  # ... answers one without
    assert ev.fresh_runs == 3 and ev.cached_runs == 1 and "sass_findings" in dict(h.meta)


@needs_nvcc
def test_a_finding_saved_from_a_run_without_the_check_is_checked() -> None:
    p = _pdl_nc()
    inner = CheckedBackend(_AdvisedSim(), StaticBackend("sm_90"))
    advice = Analyses(with_races=True).advice(p)
    assert advice is not None
    hist = inner.run(p, RunConfig(instances=100_000), dataclasses.replace(advice, sass=False))
    verdict = properties.RACE.check(p, hist)
    assert verdict.failed and not verdict.sass
    v, h = confirmed(properties.RACE, inner, inner.identity(), p, verdict, hist)
    assert "sass_not_checked" not in dict(h.meta) and dict(h.meta)["sass_findings"]
    assert v.failed and v.sass and v.class_key == verdict.class_key
    assert verdict_class(p.name, v).startswith("race|*|sass:crossing:hoisted above:ld.global.nc")


@pytest.mark.slow
@needs_nvcc
def test_a_race_shrink_runs_its_candidates_without_the_check_and_saves_a_checked_finding(tmp_path) -> None:
    from fuzzgpu.campaign.engine import Campaign
    from fuzzgpu.profiles import load_profile

    c = Campaign(load_profile("pdl"), CheckedBackend(_AdvisedSim(), StaticBackend("sm_90")), tmp_path / "corpus", "race",
                 seed=1, out=io.StringIO(), live=False)
    c.max_findings = 1
    result = c.run(120)
    assert len(result.new_findings) == 1 and result.new_findings[0]["shrunk"]
    metas = [json.loads(f.read_text()).get("meta", {}) for f in (tmp_path / "corpus" / ".fuzzgpu" / "evidence").glob("*/*.json")]
    assert any("sass_not_checked" in m for m in metas)  # the shrink's candidates
    assert any("sass_findings" in m for m in metas)  # the draws before the finding
    entry = json.loads((tmp_path / "corpus" / result.new_findings[0]["file"]).read_text())
    assert "sass_findings" in entry["histogram"]["meta"] and "sass_not_checked" not in entry["histogram"]["meta"]
