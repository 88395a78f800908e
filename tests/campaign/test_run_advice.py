"""The model's analysis, once per campaign worker (fuzzgpu.campaign.analyses): the advice sent with a
run request (properties.RunAdvice) gives the backend's harness the same watched outcomes as its own
``model.analyse`` -- so provenance logs, corpus entries and verdicts are unchanged -- and it crosses
the worker's process boundary.  Real oracle, real sim backend, real worker process."""

from __future__ import annotations

import itertools
import pickle

from fuzzgpu import model, properties
from fuzzgpu.backends.base import RunConfig
from fuzzgpu.backends.sim import SimBackend
from fuzzgpu.campaign.analyses import Analyses
from fuzzgpu.evidence import EvidenceBackend, EvidenceCache
from fuzzgpu.ir import Program
from fuzzgpu.litmus import parse
from fuzzgpu.model import values
from fuzzgpu.workers.supervised import BackendSpec, SupervisedBackend

import programs  # tests/programs.py

COUNT = programs.COUNT

#: store buffering with relaxed accesses (weak outcome allowed) and MP with release/acquire (forbidden one)
SB = parse("""PTX SB
{ x=0; y=0; }
 P0@cta 0,gpu 0       | P1@cta 1,gpu 0       ;
 st.relaxed.gpu x, 1  | st.relaxed.gpu y, 1  ;
 ld.relaxed.gpu r0, y | ld.relaxed.gpu r0, x ;
exists (P0:r0 == 0 /\\ P1:r0 == 0)
""")


def _outcomes(p: Program) -> list[dict[str, int | None]]:
    """Every outcome of the keys' domains, one value more, and a value the harness cannot name."""
    keys = values.key_values(p)
    doms = [sorted(vs | {max(vs, default=0) + 7}) + [None] for vs in keys.values()]
    return [dict(zip(keys, vals)) for vals in itertools.product(*doms)]


def test_the_advice_watches_what_the_backend_would_watch():
    for p in (programs.MP, SB, COUNT, programs.RMW_ISSUE12):
        advice = Analyses().advice(p)
        assert advice is not None
        assert pickle.loads(pickle.dumps(advice)) == advice  # it crosses the process boundary
        own, given = properties.forbidden_watch(p), properties.forbidden_watch(p, advice)
        assert (own is None) == (given is None), p.name
        if own is None or given is None:
            assert p is COUNT  # cut at the loop bound: nothing is watched, either way
            continue
        decisions = [(own(d), given(d)) for d in _outcomes(p)]
        assert all(a == b for a, b in decisions), p.name
        if p is programs.MP:
            assert any(a for a, _ in decisions)  # MP's forbidden outcome is among them


def test_past_the_budget_no_advice_and_the_backend_computes_its_own():
    """The worker's analysis (with the SC set) past the oracle's budget: no advice -- the backend's
    own (without the SC set: less work) may still fit, and then it watches what it covers."""
    tight = Analyses(budget=3)
    assert tight.get(programs.MP) == "too large" and tight.advice(programs.MP) is None
    assert tight.weak_count(programs.MP, SimBackend().run(programs.MP, RunConfig(instances=1000))) == 0


def test_the_analysis_is_computed_once_and_counts_the_weak_outcomes():
    a = Analyses()
    h = SimBackend().run(SB, RunConfig(instances=200_000))
    first = a.get(SB)
    assert a.advice(SB) is not None and a.get(SB) is first and a.cached(SB) is first
    sc = model.analyse(SB).sc
    assert a.weak_count(SB, h) == sum(c for o, c in h.counts if o not in sc) > 0


class _Advised(SimBackend):
    """The sim backend, taking a run's advice as the cuda backend does, keeping what it got."""

    takes_advice = True

    def __init__(self) -> None:
        super().__init__()
        self.got: list = []

    def run(self, program, config=None, advice=None):
        self.got.append(advice)
        return super().run(program, config)


def test_the_evidence_backend_passes_the_advice_on(tmp_path):
    inner = _Advised()
    b = EvidenceBackend(inner, EvidenceCache(tmp_path))
    assert b.takes_advice
    advice = Analyses().advice(programs.MP)
    b.run(programs.MP, RunConfig(instances=1000), advice)
    b.run(SB, RunConfig(instances=1000))
    assert inner.got == [advice, None]
    assert not EvidenceBackend(SimBackend(), EvidenceCache(tmp_path / "2")).takes_advice


def test_a_supervised_backend_says_whether_its_backend_takes_advice():
    """The sim backend does not: the advice is not sent, and the run is the same."""
    b = SupervisedBackend(BackendSpec("sim"), watchdog=60)
    try:
        assert b.takes_advice is False
        cfg = RunConfig(instances=10_000)
        assert b.run(programs.MP, cfg, Analyses().advice(programs.MP)).counts == b.run(programs.MP, cfg).counts
    finally:
        b.close()


def test_a_campaign_sends_each_program_its_analysis(tmp_path):
    """Each run of a backend that takes advice gets the worker's advice for its program -- what the
    backend would compute itself -- and the weak count comes from the same analysis."""
    import io

    from fuzzgpu.campaign import Campaign, load_profile

    prof = load_profile("classic")
    prof = type(prof)(**{**prof.__dict__, "sim_instances": 2000, "max_examples": 12})
    inner = _Advised()
    seen: list[Program] = []
    run = inner.run

    def keep(program, config=None, advice=None):
        seen.append(program)
        return run(program, config, advice)

    inner.run = keep  # type: ignore[method-assign]
    c = Campaign(prof, inner, tmp_path / "corpus", "model", seed=4, out=io.StringIO(), live=False)
    c.max_runs = 1
    c.run(120)
    assert seen and len(inner.got) == len(seen)
    for p, advice in zip(seen, inner.got):
        assert advice == Analyses().advice(p) and advice is not None
        assert c.analyses.cached(p) is not None  # the analysis the weak count used: computed once, before the run


def test_the_stress_tuner_runs_with_the_programs_advice_too(tmp_path):
    """Tuning runs (a backend named cuda: the tuner tunes only there) carry the advice as well, so
    the backend's process computes no analysis for them either."""
    import io

    from fuzzgpu.backends.base import RunConfig as RC
    from fuzzgpu.campaign import Campaign, load_profile

    class AdvisedCuda(_Advised):
        name = "cuda"

    prof = load_profile("classic")
    prof = type(prof)(**{**prof.__dict__, "stress": RC(instances=20_000), "tune_share": 0.5, "tune_budget_s": 0.001})
    inner = AdvisedCuda()
    c = Campaign(prof, inner, tmp_path / "corpus", "model", seed=4, out=io.StringIO(), live=False)
    assert c.tuner.active
    c.analyses.get(SB)
    c._tune(SB)
    assert inner.got and all(advice == Analyses().advice(SB) and advice is not None for advice in inner.got)


def _forget_values() -> None:
    """A fresh backend process's caches: no traces, no domains, no value plans."""
    from fuzzgpu.codegen import values as cvalues
    from fuzzgpu.model import events

    events._TRACES.clear()
    values._DOMAINS.clear()
    cvalues._value_plan.cache_clear()


def test_the_advice_carries_the_harness_domains_and_the_backend_writes_the_harness_from_them(monkeypatch):
    """The backend's process adopts the domains that come with the advice (``model.values.adopt``) and
    writes the harness's value plan and forbidden watch from them, the oracle's traces never computed
    there -- the same plan and watch as computed from the traces (a tensor copy's plan is its plain
    form's: both domains travel)."""
    from fuzzgpu import codegen
    from fuzzgpu.model import events

    for p in (programs.MP, SB, programs.RMW_ISSUE12, programs.wrong_parity(0)):
        advice = Analyses().advice(p)
        assert advice is not None and advice.domains
        plan, watch = codegen.value_plan(p), properties.forbidden_watch(p, advice)
        sent = pickle.loads(pickle.dumps(advice))  # across the process boundary
        _forget_values()

        def no_traces(*args, **kwargs):
            raise AssertionError("the oracle's traces computed in the backend's process")

        with monkeypatch.context() as m:
            m.setattr(values, "program_traces", no_traces)
            m.setattr(events, "program_traces", no_traces)
            values.adopt(sent.domains)
            assert codegen.value_plan(p) == plan, p.name
            adopted = properties.forbidden_watch(p, sent)
            assert watch is not None and adopted is not None
            assert [watch(d) for d in _outcomes(p)] == [adopted(d) for d in _outcomes(p)], p.name
        _forget_values()
        with monkeypatch.context() as m:  # and without them the backend computes its own: the test can fail
            m.setattr(values, "program_traces", no_traces)
            try:
                codegen.value_plan(p)
            except AssertionError:
                pass
            else:
                raise AssertionError(f"{p.name}: a value plan without the traces")


def test_a_supervised_backend_sends_the_domains_with_a_batch_to_a_backend_that_takes_advice():
    """``prepare``'s message carries the domains of every program of the batch (computed in the worker,
    beside the oracle) when the backend takes advice, and none to one that does not."""
    from fuzzgpu.codegen.values import harness_domains
    from fuzzgpu.workers.supervised import Prepare

    class Pipe:  # the pipe's end the worker writes to; the answer "ok"
        def __init__(self) -> None:
            self.sent: list = []

        def send(self, msg) -> None:
            self.sent.append(msg)

        def poll(self, timeout) -> bool:
            return True

        def recv(self):
            return ("ok", None)

    batch = [programs.MP, SB, programs.wrong_parity(0)]
    for takes in (True, False):
        b = SupervisedBackend.__new__(SupervisedBackend)
        b._proc, b._conn, b.watchdog, b.takes_advice = type("Alive", (), {"is_alive": lambda self: True})(), Pipe(), 60.0, takes
        b.prepare(batch)
        (msg,) = b._conn.sent
        assert isinstance(msg, Prepare) and msg.programs == tuple(batch)
        assert msg.domains == (tuple(d for p in batch for d in harness_domains(p)) if takes else ())
    assert len(harness_domains(programs.wrong_parity(0))) == 2  # the tensor copy and its plain form
