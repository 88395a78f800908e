"""A shrink on the static backend checks its candidates in batches (fuzzgpu/campaign/speculate.py):
a candidate the evidence cache cannot answer is answered "passes" for now and kept; every 8 kept
are checked as one batch and judged in order; the first that fails is where the next Hypothesis run
shrinks on (handed over through the example database's secondary corpus); the saved finding is
judged again on its program's own check."""

from __future__ import annotations

import dataclasses
from pathlib import Path
import io
import json
import re

import pytest

from fuzzgpu import properties
from fuzzgpu.backends.sim import SimBackend
from fuzzgpu.backends.static import StaticBackend
from fuzzgpu.campaign import engine
from fuzzgpu.campaign.database import example_database
from fuzzgpu.campaign.engine import Campaign
from fuzzgpu.campaign.speculate import AHEAD, current_choices
from fuzzgpu.corpus import verdict_signature
from fuzzgpu.ir import program_from_json
from fuzzgpu.profiles import load_profile
from fuzzgpu.sass import find_tool

from programs import SIM_MP_PROFILE  # tests/programs.py

needs_tools = pytest.mark.skipif(not (find_tool("nvcc") and (find_tool("nvdisasm") or find_tool("cuobjdump"))),
                                 reason="needs nvcc and nvdisasm/cuobjdump")


class Big(Exception):
    pass


def _why_runs_end(monkeypatch) -> list[str]:
    """Why each Hypothesis run of a campaign ended (``Campaign._one_run``'s answers, in order)."""
    whys: list[str] = []
    one_run = Campaign._one_run

    def runs(self: Campaign, deadline: float, replay: tuple | None = None, resume: object = None) -> str:
        whys.append(one_run(self, deadline, replay, resume))
        return whys[-1]

    monkeypatch.setattr(Campaign, "_one_run", runs)
    return whys


def test_hypothesis_shrinks_from_the_seeded_example(tmp_path) -> None:
    """The hand-over the speculative shrink relies on: a database seeded with one choice sequence
    makes Hypothesis try that example first and shrink from it (it is not taken as shrunk already:
    the primary corpus's fast path), without generating anything else first."""
    from hypothesis import Phase, given, settings
    from hypothesis import seed as hseed
    from hypothesis import strategies as st

    drawn: list[tuple[list[int], bytes]] = []

    @settings(database=None, max_examples=60, phases=(Phase.generate,), derandomize=True)
    @given(st.lists(st.integers(0, 1000), min_size=3, max_size=3))
    def draw(xs: list[int]) -> None:
        drawn.append((xs, current_choices()))

    draw()
    seed_xs, seed = next((xs, c) for xs, c in drawn if sum(xs) >= 300 and min(xs) > 0)
    tried: list[list[int]] = []

    @settings(database=example_database(tmp_path, b"ns", seed=seed), max_examples=60, derandomize=False,
              phases=(Phase.reuse, Phase.generate, Phase.shrink))  # outside @seed, which sets no database (as the engine does)
    @hseed(1)
    @given(st.lists(st.integers(0, 1000), min_size=3, max_size=3))
    def prop(xs: list[int]) -> None:
        tried.append(xs)
        if sum(xs) >= 100:
            raise Big(xs)

    with pytest.raises(Big) as e:
        prop()
    assert tried[0] == seed_xs  # the seed first
    assert e.value.args[0] == [0, 0, 100]  # and shrunk from it to the minimal example
    assert all(sum(xs) <= sum(seed_xs) for xs in tried)  # nothing generated: every example a shrink of the seed


def test_a_seeded_database_reads_only_the_seed(tmp_path) -> None:
    db = example_database(tmp_path, b"ns")
    db.save(b"k", b"old best")
    seeded = example_database(tmp_path, b"ns", seed=b"candidate")
    assert list(seeded.fetch(b"k")) == []  # the primary corpus reads empty (its best would be taken as shrunk)
    assert list(seeded.fetch(b"k.secondary")) == [b"candidate"]
    assert list(db.fetch(b"k")) == [b"old best"]  # nothing was deleted


@needs_tools
def test_own_check_ignores_the_batch(tmp_path) -> None:
    from programs import MP  # tests/programs.py

    from fuzzgpu.campaign.speculate import own_check

    # names no other test uses: the static source names its program, and the backend's cache is the process's
    mp1, mp2 = (dataclasses.replace(MP, name=f"MP-own-check-{i}") for i in (1, 2))
    be = StaticBackend("sm_90")
    be.prepare([mp1, mp2])
    batched = dict(be.run(mp1).meta)
    own = dict(own_check(be, be.identity(), mp1).meta)
    assert "sass_listing" in batched and "sass_listing" not in own
    assert [f["check"] for f in batched["sass_findings"]] == [f["check"] for f in own["sass_findings"]]


@needs_tools
def test_own_check_of_a_gpu_backends_static_judgement() -> None:
    """A cuda campaign's worker judges a program its harness cannot run (tcgen05: sm_100a) by the SASS
    check alone; the finding's own check is built from the worker's identity, ``cuda:...+static``
    (the H200 campaign of 2026-12-03 lost a worker to ``int('cuda:values-v2+static')`` here)."""
    from fuzzgpu.campaign.speculate import own_check
    from fuzzgpu.litmus import parse_file

    p = parse_file(Path(__file__).resolve().parents[1] / "litmus" / "race-tcgen05" / "RACE-14-alloc-weak-flag.litmus")
    h = own_check(object(), ("cuda:values-v2+static", "sm_90", "cuda: NVIDIA H200|nvcc"), p)
    assert h.backend == "static" and dict(h.meta)["arch"] == "sm_100a" and "sass_listing" not in dict(h.meta)


@pytest.mark.slow
@needs_tools
def test_a_static_shrink_checks_its_candidates_in_batches(tmp_path, monkeypatch) -> None:
    from fuzzgpu import sass

    sizes: list[int] = []  # programs in each static check's nvcc call
    real = sass.check_cu_source

    def spy(text: str, *a: object, **k: object) -> object:
        sizes.append(len(set(re.findall(r"\bfuzzgpu_b(\d+)_", text))) or 1)
        return real(text, *a, **k)

    monkeypatch.setattr(sass, "check_cu_source", spy)
    whys = _why_runs_end(monkeypatch)
    c = Campaign(load_profile("pdl"), StaticBackend("sm_90"), tmp_path / "corpus", "model", seed=1, out=io.StringIO(), live=False)
    assert c.speculate
    c.max_findings = 1
    result = c.run(300)
    assert whys[0] == "replay" and whys[-1] == "finding" and "resume" in whys  # a batch's failing candidate: shrunk on
    assert len(result.new_findings) == 1
    checks_while_shrinking = sum(1 for n in sizes if n <= AHEAD)  # the shrink's batches and the saved finding's own check
    assert checks_while_shrinking < c.state.shrink_programs / 2  # far fewer compiles than candidates judged
    entry = json.loads((tmp_path / "corpus" / result.new_findings[0]["file"]).read_text())
    assert "sass_listing" not in entry["histogram"]["meta"]  # the saved finding is its program's own check
    program = program_from_json(entry["program"])
    verdict = properties.MODEL.check(program, StaticBackend("sm_90").run(program, own=True))
    assert verdict.failed and verdict_signature(program, verdict) == entry["signature"]


class BatchedSim(SimBackend):
    """The sim backend (a sample of the oracle's outcomes, not a function of the program) with the
    ``prepare`` a compiling GPU backend has: what a batch was asked to compile is recorded."""

    def __init__(self, fault: str) -> None:
        super().__init__(fault)
        self.batches: list[int] = []

    def prepare(self, programs: list) -> None:
        self.batches.append(len(programs))




def test_a_sampled_backends_shrink_runs_its_candidates_in_batches(tmp_path, monkeypatch) -> None:
    """A GPU campaign's shrink (a sample per candidate, not a function of the program) keeps its
    candidates and judges them a batch at a time, as the static one does: the cuda backend's
    batching (``BATCH["cuda"]``) on the sim backend, counted in runs, never in seconds."""
    whys = _why_runs_end(monkeypatch)
    monkeypatch.setitem(engine.BATCH, "sim", engine.BATCH["cuda"])
    prof = tmp_path / "mp.toml"
    prof.write_text(SIM_MP_PROFILE)
    be = BatchedSim("relacq-as-relaxed")
    c = Campaign(load_profile(str(prof)), be, tmp_path / "corpus", "model", seed=3, out=io.StringIO(), live=False)
    assert c.speculate and not be.deterministic
    c.max_findings = 1
    result = c.run(3600)
    assert whys[0] == "replay" and whys[-1] == "finding"
    assert len(result.new_findings) == 1 and result.new_findings[0]["shrunk"]
    shrink_batches = [n for n in be.batches if n <= AHEAD]
    assert shrink_batches and max(shrink_batches) > 1  # candidates judged together
    assert len(shrink_batches) < c.state.shrink_programs / 2  # far fewer compiles than candidates judged
    entry = json.loads((tmp_path / "corpus" / result.new_findings[0]["file"]).read_text())
    program = program_from_json(entry["program"])
    assert program.name in ("MP", "LB") and len(program.threads) == 2
    # the saved program fails when run alone (its own sample)
    from fuzzgpu.backends.base import RunConfig

    assert properties.MODEL.check(program, SimBackend("relacq-as-relaxed").run(program, RunConfig(instances=20_000))).failed
