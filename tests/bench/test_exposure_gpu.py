"""bench/exposure.py on a GPU (marked ``gpu``): a short run keeps its budget and sees no outcome
the model forbids."""

from __future__ import annotations

import json
import sys
import time

import pytest
from paths import ROOT

pytestmark = pytest.mark.gpu
sys.path.insert(0, str(ROOT / "bench"))


def test_short_exposure_run_keeps_its_budget(tmp_path) -> None:
    import exposure

    t0 = time.monotonic()
    rc = exposure.gpu_run(tmp_path, budget_s=90.0, tune_share=0.4, seed=1)
    wall = time.monotonic() - t0
    d = json.loads((tmp_path / "exposure.json").read_text())
    assert rc == 0 and d["forbidden_total"] == 0
    assert wall <= 90.0 and d["elapsed_s"] <= 90.0
    assert d["score"]["total"]["default"] > 0 and d["families_tuned"] > 0
