"""A campaign process keeps a large heap alive; Python's collector traverses the whole of it less
often while a campaign runs (``limits.GC_THRESHOLDS``, measured by ``bench/gc_campaign.py``), and
the caller's thresholds are back afterwards, also when the campaign raises."""

from __future__ import annotations

import gc
import io

import pytest

from fuzzgpu.campaign import engine, limits, run_campaign


def test_the_campaign_runs_under_its_thresholds_and_restores_the_callers(tmp_path, monkeypatch):
    seen = []
    real = engine.Campaign.run

    def spy(self, *a, **k):
        seen.append(gc.get_threshold())
        return real(self, *a, **k)

    monkeypatch.setattr(engine.Campaign, "run", spy)
    before = gc.get_threshold()
    assert before != limits.GC_THRESHOLDS
    run_campaign("classic", "sim", 0.001, str(tmp_path / "c"), "model", seed=1, out=io.StringIO(), live=False, isolate=False)
    assert seen == [limits.GC_THRESHOLDS]
    assert gc.get_threshold() == before


def test_the_thresholds_come_back_when_the_block_raises():
    before = gc.get_threshold()
    with pytest.raises(RuntimeError):
        with limits.collector((5000, 7, 9)):
            assert gc.get_threshold() == (5000, 7, 9)
            raise RuntimeError("boom")
    assert gc.get_threshold() == before

