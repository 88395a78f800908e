"""The sim backend (a simulation: seeded, deterministic, only allowed outcomes unless a fault is
injected), the evidence cache (deterministic answers, evidence only grows), the properties, and
the static backend's PDL finding."""

from __future__ import annotations

import shutil

import pytest

from fuzzgpu import properties
from fuzzgpu.backends.base import Backend, RunConfig
from fuzzgpu.backends.sim import SimBackend, weaken_relacq
from fuzzgpu.evidence import EvidenceBackend, EvidenceCache
from fuzzgpu.ir import Barrier, Filler, GridDepControl, Load, Location, Placement, Program, Space, Store, Thread, validate
from fuzzgpu.model import analyse

from paths import LITMUS  # noqa: E402 -- tests/paths.py
from programs import MP  # noqa: E402 -- tests/programs.py
BAD = (("P1:r0", 2), ("P1:r1", 0))


def test_sim_is_a_backend_and_says_it_is_a_simulation():
    b = SimBackend()
    assert isinstance(b, Backend)
    assert "SIMULATION" in b.describe()
    h = b.run(MP, RunConfig(instances=10_000))
    assert dict(h.meta)["simulation"] is True


def test_sim_samples_only_allowed_outcomes_and_is_deterministic():
    b = SimBackend()
    h1 = b.run(MP, RunConfig(instances=200_000, seed=3))
    h2 = b.run(MP, RunConfig(instances=200_000, seed=3))
    assert h1.counts == h2.counts
    assert sum(c for _, c in h1.counts) == 200_000
    assert {o for o, _ in h1.counts} <= analyse(MP).allowed
    assert BAD not in dict(h1.counts)
    assert b.run(MP, RunConfig(instances=200_000, seed=4)).counts != h1.counts


def test_fault_relacq_as_relaxed_returns_the_forbidden_mp_outcome():
    assert BAD in analyse(weaken_relacq(MP)).allowed
    h = SimBackend("relacq-as-relaxed").run(MP, RunConfig(instances=100_000))
    assert dict(h.counts).get(BAD, 0) > 0
    v = properties.check("model", MP, h)
    assert v.failed and v.offending[0].outcome == BAD and v.offending[0].verdict == "forbidden"
    assert any("Causality" in l for l in v.offending[0].explanation)


def test_properties_model_sc_and_predicates():
    h = SimBackend().run(MP, RunConfig(instances=100_000))
    assert properties.check("model", MP, h).status == "pass"
    assert properties.check("sc", MP, h).status == "pass"  # release/acquire MP: all SC
    weak = validate(Program("MPw", (
        Thread("P0", Placement(cta=0), (Store("x", 1), Store("y", 2))),
        Thread("P1", Placement(cta=1), (Load("r0", "y"), Load("r1", "x"))),
    ), (Location("x"), Location("y"))))
    hw = SimBackend().run(weak, RunConfig(instances=100_000))
    assert properties.check("model", weak, hw).status == "pass"
    v = properties.check("sc", weak, hw)
    assert v.failed and v.offending[0].verdict == "allowed"
    user = properties.predicate("user:r1-after-r0", lambda o: not (o["P1:r0"] == 2 and o["P1:r1"] == 0))
    vu = user.check(weak, hw)
    assert vu.failed and vu.offending[0].outcome == BAD and vu.offending[0].verdict == "allowed"


def test_unsupported_is_reported_not_guessed(monkeypatch):
    from fuzzgpu import model

    def boom(p, **kw):
        raise model.Unsupported("the oracle does not model this yet")

    h = SimBackend().run(MP, RunConfig(instances=1000))
    monkeypatch.setattr(model, "analyse", boom)
    v = properties.check("model", MP, h)
    assert v.status == "unsupported" and "does not model" in v.reason


def test_evidence_cache_makes_answers_deterministic_and_only_grows(tmp_path):
    cache = EvidenceCache(tmp_path / "ev")
    b = EvidenceBackend(SimBackend("relacq-as-relaxed"), cache)
    h1 = b.run(MP, RunConfig(instances=5_000))
    h2 = b.run(MP, RunConfig(instances=5_000))
    assert h1.counts == h2.counts and b.fresh_runs == 1 and b.cached_runs == 1
    h3 = b.run(MP, RunConfig(instances=50_000))  # more instances: only the missing ones run
    assert h3.instances == 50_000
    assert set(dict(h1.counts)) <= set(dict(h3.counts))
    # a fresh process reads the same evidence from disk
    b2 = EvidenceBackend(SimBackend("relacq-as-relaxed"), EvidenceCache(tmp_path / "ev"))
    assert b2.run(MP, RunConfig(instances=50_000)).counts == h3.counts and b2.fresh_runs == 0
    # the key separates backends (a fault is another backend)
    b3 = EvidenceBackend(SimBackend(), EvidenceCache(tmp_path / "ev"))
    assert BAD not in dict(b3.run(MP, RunConfig(instances=50_000)).counts)
    # what it answers without running: a sample as large as asked for (a shrink's candidate is
    # then judged at once; one it cannot answer waits for its batch: campaign/speculate.py)
    assert b.answers(MP, RunConfig(instances=50_000)) and b.answers(MP, RunConfig(instances=10))
    assert not b.answers(MP, RunConfig(instances=50_001))
    assert not b.answers(MP, RunConfig(instances=10, ctas_per_sm=2))  # other stress: another distribution


needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")


@needs_nvcc
def test_static_backend_finds_nc_load_hoisted_above_griddepcontrol_wait():
    from fuzzgpu.backends.static import StaticBackend

    def pdl(nc: bool) -> Program:
        return validate(Program("PDL", (
            Thread("P0", Placement(grid=0), (Store("x", 1), GridDepControl("launch_dependents"))),
            Thread("P1", Placement(grid=1), (Store("s", 2), Barrier(0), GridDepControl("wait"), Load("r0", "x", nc=nc))),
        ), (Location("x"), Location("s", space=Space.SHARED)), observed=("P1:r0",), pdl_grids=(1,)))

    b = StaticBackend("sm_90")
    v = properties.check("model", pdl(True), b.run(pdl(True)))
    assert v.failed
    assert any("CONSTANT" in f["op_sass"] and f["sync_sass"] == "ACQBULK" and f["direction"] == "hoisted above" for f in v.sass)
    assert properties.check("model", pdl(False), b.run(pdl(False))).status == "pass"


def test_nc_crossings_that_matter():
    from fuzzgpu.properties import _would_order

    assert _would_order("griddepcontrol.wait", "hoisted above")
    assert _would_order("barrier.sync 0", "hoisted above")
    assert _would_order("ld.acquire.gpu.global.u32 %r1, [%rd2]", "hoisted above")
    assert not _would_order("st.release.cta.global.u32 [%rd1+128], %r1", "hoisted above")  # roach motel
    assert not _would_order("mbarrier.try_wait.parity.relaxed.cta.shared::cta.b64 p, [%r1], 0", "hoisted above")
    assert _would_order("fence.acq_rel.gpu", "sunk below")


@needs_nvcc
def test_checked_backend_adds_static_findings_to_a_run():
    """What `--backend cuda/auto` does on a GPU machine, with the sim standing in for the GPU."""
    from fuzzgpu.backends.static import CheckedBackend, StaticBackend

    p = validate(Program("PDL", (
        Thread("P0", Placement(grid=0), (Store("x", 1), GridDepControl("launch_dependents"))),
        Thread("P1", Placement(grid=1), (Filler("smem", 8), GridDepControl("wait"), Load("r0", "x", nc=True))),
    ), (Location("x"),), observed=("P1:r0",), pdl_grids=(1,)))
    b = CheckedBackend(SimBackend(), StaticBackend("sm_90"))
    h = b.run(p, RunConfig(instances=1000))
    assert dict(h.meta)["sass_findings"] and "static SASS" in b.describe()
    v = properties.check("model", p, h)
    assert v.failed and v.sass


class _HarnessRefusals(SimBackend):
    """The sim, refusing what the GPU harness refuses (:func:`fuzzgpu.codegen.check_runnable`, the
    cuda backend's own first step): the cuda backend's answer to a program it cannot run, on a CPU."""

    def run(self, program, config=None):
        from fuzzgpu import codegen

        codegen.check_runnable(program)
        return super().run(program, config)


@needs_nvcc
@pytest.mark.parametrize("judge_unrunnable", [False, True])
@pytest.mark.parametrize("name, key, sass_checked", [
    # class E: tcgen05.st published before tcgen05.wait::st -- no tensor memory on sm_90; the static
    # kernels compile it for sm_100a
    ("race-tcgen05/RACE-12-st-published-before-wait.litmus", "race:tcgen05-not-awaited", True),
    # class F: a wgmma's A fragment overwritten before wgmma.wait_group -- neither the harness nor the
    # static kernels express a register-level wgmma: the oracle alone, "no SASS checked"
    ("race-wgmma/RACE-13-a-overwritten-before-wait.litmus", "race:wgmma-register-in-flight", False)])
def test_a_campaigns_checked_backend_judges_a_program_the_harness_cannot_run(judge_unrunnable, name, key, sass_checked):
    """A program the GPU harness cannot run: ``fuzzgpu run`` refuses it (Unrunnable, when its static
    check finds nothing); a campaign's backend (``judge_unrunnable``) answers with the static check
    (or, where the static kernels cannot express it, the oracle alone) and the race property reports
    the oracle's racy outcome, as ``--backend static`` does, instead of the draw going uncovered (the
    600 s H200 campaign of 2026-12-03 judged ~500 class-F draws "cannot run on the GPU" and never
    found F; its E and G entries were judged only because their static check had a finding)."""
    from fuzzgpu import codegen
    from fuzzgpu.backends.static import CheckedBackend, StaticBackend
    from fuzzgpu.litmus import parse_file

    p = parse_file(LITMUS / name)
    assert codegen.unrunnable_reasons(p)
    b = CheckedBackend(_HarnessRefusals(), StaticBackend("sm_90"), judge_unrunnable)
    if not judge_unrunnable:
        with pytest.raises(codegen.Unrunnable):
            b.run(p, RunConfig(instances=1000))
        return
    h = b.run(p, RunConfig(instances=1000))
    assert h.backend == "static" and not h.counts and not h.instances
    unchecked = dict(h.meta)["sass_unchecked"]
    if sass_checked:  # compiled and checked for sm_100a (what the checker cannot follow is listed, as ever)
        assert dict(h.meta)["arch"] == "sm_100a" and not any(u.startswith("no SASS checked") for u in unchecked), unchecked
    else:
        assert unchecked[0].startswith("no SASS checked: ") and "has no static kernels" in unchecked[0], unchecked
    v = properties.RACE.check(p, h)
    assert v.failed and v.oracle_only and v.class_key == key, v.summary()
    assert all(o.count == 0 and "the oracle's finding" in o.reason for o in v.offending)
