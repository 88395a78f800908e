"""Campaigns tune stress as they go (fuzzgpu.stress.campaign and its hooks in fuzzgpu.campaign):
shape families, the GPU-time share, the state and the corpus records, the profile keys, and the
no-op on backends without stress knobs.  The "cuda" backend below is a FAKE (made-up histograms
whose weak count grows with the spin knob): these tests check the bookkeeping only."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from fuzzgpu import campaign as C
from fuzzgpu import litmus, model
from fuzzgpu.backends.base import Histogram, RunConfig
from fuzzgpu.stress.space import StressConfig
from fuzzgpu.stress.campaign import CampaignTuner, shape_family
from paths import LITMUS

MP = LITMUS / "gpu" / "MP-relaxed-gpu.litmus"


class FakeCuda:
    name = "cuda"

    def __init__(self) -> None:
        self.configs: list[RunConfig] = []
        self._an: dict = {}

    def describe(self) -> str:
        return "FAKE cuda backend"

    def identity(self) -> tuple[str, str, str]:
        return ("cuda:fake", "sm_90", "fake")

    def run(self, program, config: RunConfig) -> Histogram:
        self.configs.append(config)
        a = self._an.get(program) or self._an.setdefault(program, model.analyse(program))
        sc = sorted(a.sc)
        weak = sorted(a.weak)
        k = config.spin // 1000 * max(1, config.instances >> 18)
        counts = [(sc[0], config.instances - k * len(weak))] + [(o, k) for o in weak if k]
        return Histogram(keys=tuple(x for x, _ in sc[0]), counts=tuple(counts), instances=config.instances,
                         seconds=config.instances / 3e9, backend="fake")


def test_shape_families() -> None:
    p = litmus.parse_file(MP)
    assert shape_family(p) == f"{p.name}|memory|different-ctas"
    same = litmus.parse_file(LITMUS / "gpu" / "MP-relaxed-gpu-same-cta.litmus")
    assert shape_family(same).endswith("|same-cta")


def test_tuner_share_state_and_sources() -> None:
    p = litmus.parse_file(MP)
    state: dict = {}
    t = CampaignTuner(0.1, "cuda", state, budget_s=0.5)
    base = RunConfig(instances=10_000_000, barrier=True, spin=1000)
    assert t.due(p) and t.stress_for(p, base) == (base, "profile")
    fake = FakeCuda()
    a = model.analyse(p)
    rec = t.tune(p, a.sc, base, fake.run)
    assert rec["stress"]["spin"] == 10000 and rec["weak_per_s"] > rec["default_weak_per_s"]
    assert state["spent_s"] <= 0.5 + 1e-9 and not t.due(p)  # tuned once per family
    cfg, src = t.stress_for(p, base)
    assert cfg.spin == 10000 and cfg.instances == base.instances and src == f"tuned:{shape_family(p)}"
    assert t.source_of(p, cfg) == src and t.source_of(p, base) == "profile"
    other = litmus.parse_file(LITMUS / "gpu" / "SB-relaxed-gpu.litmus")
    state["spent_s"] = 1.0  # 1 GPU-s of tuning, no runs: over the 10% share (with one family's 0.5 s ahead)
    assert not t.due(other)
    t.ran(Histogram(keys=(), counts=(), instances=1, seconds=100.0))  # the runs catch up
    assert t.due(other)
    json.dumps(state)  # the state is JSON


@pytest.mark.parametrize("backend", ["sim", "static"])
def test_no_op_without_stress_knobs(backend) -> None:
    t = CampaignTuner(0.5, backend, {})
    p = litmus.parse_file(MP)
    base = RunConfig()
    assert not t.due(p) and t.stress_for(p, base) == (base, "profile")
    assert "no-op" in t.note() and backend in t.note()


def test_profiles_tune_share() -> None:
    assert C.load_profile("all").tune_share > 0 and C.load_profile("proxy").tune_share > 0
    for name in ("classic", "scopes", "pdl", "mbarrier", "random", "reliability"):
        assert C.load_profile(name).tune_share == 0


@pytest.mark.parametrize("bad", ["tune_share = 1.5", "tune_share = true", "stress_pattern = 7", "ctas_per_sm = 33", "cta_threads = 96"])
def test_bad_tuning_keys_are_one_line_profile_errors(tmp_path: Path, bad: str) -> None:
    f = tmp_path / "p.toml"
    f.write_text(f"[shapes]\nMP = 1\n[stress]\n{bad}\n")
    with pytest.raises(C.ProfileError, match=r"p\.toml:4: key 'stress\."):
        C.load_profile(str(f))


def test_a_campaign_on_a_fake_gpu_tunes_keeps_state_and_records_the_source(tmp_path: Path) -> None:
    prof = tmp_path / "tuned-mp.toml"
    prof.write_text('[shapes]\nMP = 1\n[annotations]\nloads = ["relaxed"]\nstores = ["relaxed"]\nfences = ["none"]\n'
                    'scopes = ["gpu"]\nplacements = ["different-ctas"]\n'
                    "[stress]\ninstances = 1_000_000\nspin = 1000\nbarrier = true\ntune_share = 0.5\ntune_budget_s = 0.2\n"
                    "[hypothesis]\nmax_examples = 3\n")
    fake = FakeCuda()
    c = C.Campaign(C.load_profile(str(prof)), fake, tmp_path / "corpus", prop="sc", seed=3, out=io.StringIO(), live=False)
    c.max_runs = 1
    c.run(60)
    st = json.loads((tmp_path / "corpus" / ".fuzzgpu" / "state.json").read_text()) if (tmp_path / "corpus" / ".fuzzgpu" / "state.json").exists() \
        else json.loads(next((tmp_path / "corpus").rglob("state.json")).read_text())
    fams = st["tuning"]["families"]
    assert len(fams) == 1 and next(iter(fams.values()))["stress"]["spin"] == 10000
    assert any(cfg.spin == 10000 and cfg.instances >= 1_000_000 for cfg in fake.configs)  # later runs use it
    entries = [json.loads(e.read_text()) for e in c.corpus.entry_paths()]
    assert entries, "property sc: the weak outcome is a finding"
    assert all(e["campaign"]["stress_source"] in ("profile", f"tuned:{next(iter(fams))}") for e in entries)
    assert any(e["campaign"]["stress_source"].startswith("tuned:") and e["stress"]["spin"] == 10000 for e in entries)


def test_state_schema_checks_the_tuned_knobs() -> None:
    from fuzzgpu import schema

    st = C.State("all", "cuda", "model", 1)
    st.tuning = {"spent_s": 1.0, "run_s": 2.0, "families": {"MP|memory|different-ctas": {"stress": StressConfig(spin=3000).to_table()}}}
    schema.check("state", st.to_json())
    st.tuning["families"]["MP|memory|different-ctas"]["stress"]["stress_pattern"] = 9
    with pytest.raises(schema.SchemaError, match="stress_pattern"):
        schema.check("state", st.to_json())
