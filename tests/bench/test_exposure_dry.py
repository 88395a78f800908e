"""bench/exposure.py without a GPU: the mutant suite (generated IR programs, the oracle's weak
outcomes), --dry-run (every harness compiles with nvcc for sm_90), and the GPU run's plumbing on a
fake backend (its histograms are made up: this checks the bookkeeping, not any hardware)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from paths import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import exposure  # noqa: E402

from fuzzgpu.backends.base import Histogram  # noqa: E402


def test_suite_covers_every_shape_weakening_and_placement() -> None:
    vs = exposure.variants()
    assert {v.shape for v in vs} == set(exposure.SKELETONS) and len(exposure.SKELETONS) == 13
    assert {v.weakening for v in vs} == set(exposure.WEAKENINGS)
    assert {v.placement for v in vs if len(v.program.threads) >= 3} == set(exposure.PLACEMENTS)
    assert all(v.placement != "mixed" for v in vs if len(v.program.threads) == 2)
    mixed = exposure.program("IRIW", "relaxed", "mixed")
    ctas = [t.placement.cta for t in mixed.threads]
    assert ctas[0] == ctas[1] and len(set(ctas)) == 3


def test_mutants_are_the_oracles_weak_outcomes() -> None:
    vs = [exposure.program("MP", w, pl) for w in exposure.WEAKENINGS for pl in ("same-cta", "different-ctas")]
    an, ms = exposure.analyse([exposure.Variant("MP", p.name.split("+")[1], p.name.split("+")[2], p) for p in vs])
    names = {m.variant.program.name for m in ms}
    # a .cta pattern inside one CTA is not weakened: no mutant; across CTAs it is
    assert "MP+cta-scope+same-cta" not in names and "MP+cta-scope+different-ctas" in names
    assert "MP+relaxed+same-cta" in names
    for m in ms:
        assert m.outcome == (("P1:r0", 2), ("P1:r1", 0))


@pytest.mark.slow  # 99 harness compiles: ~20 CPU-seconds of nvcc where the cubin cache (~/.cache/fuzzgpu) is cold
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_dry_run_compiles_every_mutant_with_only_pythonpath(tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "FUZZGPU_CACHE", "XDG_CACHE_HOME", "NVCC")}
    env["PYTHONPATH"] = str(ROOT)
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "exposure.py"), "--dry-run", "--out", str(tmp_path)],
                       capture_output=True, text=True, cwd=tmp_path, env=env, timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    d = json.loads((tmp_path / "exposure.json").read_text())
    assert d["programs"] == 99 and d["compiled"] == 99 and not d["unrunnable"] and d["mutants"] == len(d["mutant_list"]) > 0


class FakeBackend:
    """Made-up histograms: the SC outcome always; each program's weak outcomes with a count that
    grows with the spin knob (so that tuning has something to find)."""

    arch = "sm_90"

    def __init__(self) -> None:
        self.analyses: dict = {}
        self.calls = 0

    def describe(self) -> str:
        return "fake backend"

    def close(self) -> None:
        pass

    def run_compiled(self, c, cfg) -> Histogram:
        self.calls += 1
        a = self.analyses[c.program]
        sc = sorted(a.sc)[0]
        weak = sorted(a.weak)
        k = cfg.spin // 1000 * max(1, cfg.instances >> 18)
        counts = [(sc, cfg.instances - k * len(weak))] + [(o, k) for o in weak]
        return Histogram(keys=tuple(x for x, _ in sc), counts=tuple(x for x in counts if x[1]), instances=cfg.instances,
                         seconds=cfg.instances / 3e9, backend="fake")


def test_gpu_run_bookkeeping_on_a_fake_backend(tmp_path, monkeypatch) -> None:
    from types import SimpleNamespace

    from fuzzgpu.backends import cuda

    fake = FakeBackend()
    an, _ = exposure.analyse(exposure.variants())
    fake.analyses = an
    monkeypatch.setattr(cuda, "CudaBackend", lambda: fake)
    monkeypatch.setattr(cuda, "compile_programs", lambda ps, arch, batch=8: [SimpleNamespace(program=p.name) for p in ps])
    rc = exposure.gpu_run(tmp_path, budget_s=60.0, tune_share=0.4, seed=1)
    assert rc == 0
    d = json.loads((tmp_path / "exposure.json").read_text())
    assert d["forbidden_total"] == 0 and d["mutants"] == 94
    assert sum(d["gpu_seconds"].values()) <= 60.0  # the fake's made-up GPU-seconds fit the budget
    tot = d["score"]["total"]
    assert tot["default"] == 94  # spin 1000: every weak outcome shows in the fake
    assert d["families_tuned"] == d["families"] > 0
    assert all(t["best"]["stress"]["spin"] == 10000 for t in d["tuned"].values())
    assert "| IRIW |" in (tmp_path / "exposure.md").read_text()


def test_the_deep_pass_gives_an_unseen_mutant_more_gpu_time(tmp_path, monkeypatch) -> None:
    """A mutant neither the default nor the tuned pass saw gets the deep pass (up to --deep-gpu-s
    GPU-seconds of tuned stress).  The fake shows one program's weak outcomes only in runs of more
    than 2e9 instances -- more than either pass runs -- so only the deep pass can see them (this
    checks the bookkeeping, not any hardware)."""
    from types import SimpleNamespace

    from fuzzgpu.backends import cuda

    hidden = "MP+relaxed+different-ctas"

    class Rare(FakeBackend):
        def run_compiled(self, c, cfg) -> Histogram:
            h = super().run_compiled(c, cfg)
            if c.program != hidden or cfg.instances > 2_000_000_000:
                return h
            sc = sorted(self.analyses[c.program].sc)[0]
            return Histogram(keys=h.keys, counts=((sc, cfg.instances),), instances=cfg.instances, seconds=h.seconds, backend="fake")

    fake = Rare()
    an, _ = exposure.analyse(exposure.variants())
    fake.analyses = an
    monkeypatch.setattr(cuda, "CudaBackend", lambda: fake)
    monkeypatch.setattr(cuda, "compile_programs", lambda ps, arch, batch=8: [SimpleNamespace(program=p.name) for p in ps])
    assert exposure.gpu_run(tmp_path, budget_s=60.0, tune_share=0.4, seed=1, deep_gpu_s=10.0) == 0
    d = json.loads((tmp_path / "exposure.json").read_text())
    mine = [m for m in d["mutant_list"] if m["program"] == hidden]
    assert mine and all(not m["default"]["count"] and not m["tuned"]["count"] for m in mine)
    assert all(m["deep"]["count"] > 0 and 0 < m["deep"]["seconds"] <= 10.0 + 1.0 for m in mine)
    assert d["score"]["total"]["any_pass"] == d["mutants"] and d["score"]["total"]["tuned"] == d["mutants"] - len(mine)
    others = [m for m in d["mutant_list"] if m["program"] != hidden]
    assert all(not m["deep"]["seconds"] for m in others)  # the deep pass is only for the unseen
