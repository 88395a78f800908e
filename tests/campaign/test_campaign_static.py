"""Acceptance (2): a static campaign (no GPU) over the PDL profile finds ptxas hoisting an
ld.global.nc above griddepcontrol.wait, and saves a reproducer a person can read.

Real runs: nvcc/ptxas, nvdisasm and the static SASS oracle; skipped without nvcc."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fuzzgpu import litmus
from fuzzgpu.corpus import Corpus
from fuzzgpu.ir import program_to_json
from fuzzgpu.sass import find_tool

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not (find_tool("nvcc") and (find_tool("nvdisasm") or find_tool("cuobjdump"))),
                                                   reason="needs nvcc and nvdisasm/cuobjdump")]


def fuzzgpu(*args: str, timeout: float = 400) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fuzzgpu", *args], check=False, capture_output=True, text=True, timeout=timeout)


def run_campaign(d: Path) -> Path:
    r = fuzzgpu("campaign", "--backend", "static", "--profile", "pdl", "--time", "120", "--max-findings", "1",
                "--corpus", str(d), "--seed", "1", "--no-live")
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-3000:]
    return d


def test_static_pdl_campaign_replay_explain(tmp_path):
    """One campaign (at most 120 s, stops at the first finding), then every check on its corpus."""
    corpus = run_campaign(tmp_path / "corpus")
    check_finds_nc_load_hoisted_above_griddepcontrol_wait(corpus)
    check_reproducer_litmus_is_readable_and_round_trips(corpus)
    check_replay_static_still_finds_it_and_explain_shows_sass(corpus)


def check_finds_nc_load_hoisted_above_griddepcontrol_wait(corpus):
    entries = Corpus(corpus).entries()
    assert entries
    e = entries[0]
    hoists = [f for f in e.data["sass"] if "CONSTANT" in f["op_sass"] and f["sync_sass"] == "ACQBULK" and f["direction"] == "hoisted above"]
    assert hoists, e.data["sass"]
    assert "ld.global.nc" in hoists[0]["op_ptx"] and "griddepcontrol.wait" in hoists[0]["sync_ptx"]
    assert e.reproduction["confidence"] == 1.0


def check_reproducer_litmus_is_readable_and_round_trips(corpus):
    e = Corpus(corpus).entries()[0]
    text = e.data["litmus"]
    assert text == e.path.with_suffix(".litmus").read_text()
    for want in ("griddepcontrol.launch_dependents", "griddepcontrol.wait", "ld.global.nc", "grid 1"):
        assert want in text, text
    assert "{\"op\"" not in text  # no JSON cells: every instruction has its mnemonic
    back = litmus.parse(text)
    def strip(p):
        return {k: v for k, v in program_to_json(p).items() if k not in ("name", "comments", "condition")}

    assert strip(back) == strip(e.program)
    # the dependent grid is small: the hoist needs only a prologue before the wait
    assert len(e.program.threads) == 2 and len(e.program.threads[1].code) <= 5


def check_replay_static_still_finds_it_and_explain_shows_sass(corpus):
    r = fuzzgpu("replay", str(corpus), "--backend", "static")
    assert r.returncode == 1, r.stdout + r.stderr
    path = Corpus(corpus).entry_paths()[0]
    r = fuzzgpu("explain", str(path))
    assert r.returncode == 0 and "ACQBULK" in r.stdout and "LDG.E" in r.stdout and "hoisted above" in r.stdout


def test_auto_without_gpu_says_it_runs_static(tmp_path):
    from fuzzgpu.campaign import make_backend

    b, note = make_backend("auto")
    if b.name == "cuda":
        pytest.skip("a GPU is present")
    assert b.name == "static" and "no GPU" in note and "static SASS oracle" in note
    r = fuzzgpu("campaign", "--backend", "auto", "--profile", "pdl", "--time", "3", "--corpus", str(tmp_path / "c"), "--no-live")
    assert r.returncode in (0, 1) and "no GPU" in r.stdout
