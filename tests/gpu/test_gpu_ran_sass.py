"""On a GPU: a run that logs an outcome the oracle forbids carries the SASS check of the cubin that ran
(fuzzgpu.backends.ran_sass).  The lone try_wait of MBAR-MP-default (tests/gpu/gpu_findings.py,
LONE_TRY_WAIT: an H200 shows the forbidden outcome in up to 12.6% of instances) is the program whose
forbidden outcome an H200 shows: its run must say where, and that the SASS that ran has the wait
unguarded in the consumer's role."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu import litmus
from fuzzgpu.backends.base import RunConfig

pytestmark = pytest.mark.gpu

EXT = Path(__file__).resolve().parents[1] / "litmus"


@pytest.fixture(scope="module")
def backend():
    from fuzzgpu.backends.cuda import CudaBackend

    b = CudaBackend()
    yield b
    b.close()


def test_a_forbidden_outcome_carries_the_sass_that_ran(backend) -> None:
    p = litmus.parse_file(EXT / "mbarrier" / "MBAR-MP-default.litmus")
    h = backend.run(p, RunConfig(instances=300 * 65536))
    meta = dict(h.meta)
    prov = meta.get("provenance") or {}
    if not prov.get("seen"):
        assert "ran_sass" not in meta  # no forbidden instance: nothing checked
        pytest.skip("this run showed no forbidden outcome (the H200 shows it in some runs only)")
    rs = meta["ran_sass"]
    assert "error" not in rs, rs
    assert any(f["check"] == "unguarded-wait" and f["role"] == 1 for f in rs["program"]), rs["summary"]
