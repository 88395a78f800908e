"""Draw-ahead campaigns (issue 29): on a compiling backend a Hypothesis run draws a batch, has it
compiled and checked at once, judges it; the batch's first new failure is replayed by the next run
(the same seed draws the same programs: none judged before it) and shrunk there -- the finding is
saved shrunk, as one found while generating is.  Real runs: nvcc and the static SASS oracle; skipped without them."""

from __future__ import annotations

import io

import pytest

from fuzzgpu.backends.static import StaticBackend
from fuzzgpu.campaign import engine
from fuzzgpu.campaign.engine import Campaign
from fuzzgpu.profiles import load_profile
from fuzzgpu.sass import find_tool

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not (find_tool("nvcc") and (find_tool("nvdisasm") or find_tool("cuobjdump"))),
                                                   reason="needs nvcc and nvdisasm/cuobjdump")]


def test_a_batch_failure_is_replayed_and_shrunk(tmp_path, monkeypatch) -> None:
    runs: list[tuple[bool, str]] = []
    one_run = Campaign._one_run

    def spy(self: Campaign, deadline: float, replay: tuple | None = None, resume: object = None) -> str:
        why = one_run(self, deadline, replay, resume)
        runs.append((replay, why))
        return why

    monkeypatch.setattr(Campaign, "_one_run", spy)
    c = Campaign(load_profile("pdl"), StaticBackend("sm_90"), tmp_path / "corpus", "model", seed=1, out=io.StringIO(), live=False)
    assert c.batch == engine.BATCH["static"] > 1
    c.max_findings = 1
    result = c.run(300)
    assert runs[0] == (None, "replay")  # the generating run ended on its batch's failure
    assert runs[1][0] is not None and runs[1][1] in ("finding", "resume")  # the next re-drew that program and shrank it
    assert [why for _, why in runs[1:-1]] == ["resume"] * (len(runs) - 2) and runs[-1][1] == "finding"  # its shrink's batches
    assert len(result.new_findings) == 1 and result.new_findings[0]["shrunk"]  # the same draw (else saved unshrunk)
    assert c.state.programs > c.batch  # a whole batch judged, then the shrink's candidates
    assert 1 <= c.state.shrink_programs <= c.state.programs - c.batch  # counted apart: the replayed draw and the candidates
