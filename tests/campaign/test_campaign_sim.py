"""Acceptance (1): a sim campaign with an injected fault finds the release/acquire violation and
shrinks it to a 2-thread message-passing program; replay and the pytest plugin agree.

Real runs: the real oracle, the real Hypothesis engine, the CLI in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fuzzgpu.corpus import Corpus
from fuzzgpu.ir import Fence, Load, Sem, Store

pytestmark = pytest.mark.slow


def fuzzgpu(*args: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fuzzgpu", *args], check=False, capture_output=True, text=True, cwd=cwd, timeout=timeout)


def run_campaign(d: Path) -> Path:
    r = fuzzgpu("campaign", "--backend", "sim", "--sim-fault", "relacq-as-relaxed", "--profile", "classic", "--time", "60",
                "--corpus", str(d), "--seed", "1", "--no-live")
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-3000:]  # 1: new findings
    assert "SIMULATION" in r.stdout
    return d


def _mem(code) -> int:
    return sum(1 for i in code if isinstance(i, (Load, Store)))


def test_sim_campaign_replay_plugin_explain(tmp_path):
    """One campaign (60 s), then every check on its corpus (one test, so xdist runs it once)."""
    corpus = run_campaign(tmp_path / "corpus")
    check_finds_and_shrinks_release_acquire_mp(corpus)
    check_replay_with_and_without_the_fault(corpus)
    check_pytest_plugin_collects_and_replays_the_entries(corpus, tmp_path)
    check_explain_an_entry(corpus)


def check_finds_and_shrinks_release_acquire_mp(corpus):
    """The injected fault (release/acquire treated as relaxed) is one root cause: one class, one
    entry -- a shrunk 2-thread program whose release (a .release store or a fence before the
    store) and acquire (an .acquire load or a fence after the load) failed to synchronise -- that
    counts every other finding of the kind."""
    from fuzzgpu.corpus import entry_class

    entries = Corpus(corpus).entries()
    assert entries
    classes = [entry_class(e.data) for e in entries]
    assert len(classes) == len(set(classes)), classes  # one entry per class
    mp = [e for e, k in zip(entries, classes) if k == "model|*|forbidden:cycle through sync[memory]"]
    assert mp, "no release/acquire class among: " + ", ".join(f"{e.shape}:{e.path.name}" for e in entries)
    e = mp[0]
    p = e.program
    assert e.shape in ("MP", "LB") and len(p.threads) == 2 and _mem(p.threads[0].code) + _mem(p.threads[1].code) <= 4
    rel = any((isinstance(i, Store) and i.sem is Sem.RELEASE) or isinstance(i, Fence) for i in p.threads[0].code + p.threads[1].code)
    acq = any((isinstance(i, Load) and i.sem is Sem.ACQUIRE) or isinstance(i, Fence) for i in p.threads[0].code + p.threads[1].code)
    assert rel and acq
    assert e.offending() and all(o["verdict"] == "forbidden" for o in e.data["verdict"]["offending"])
    assert "exists" in e.data["litmus"] and "-sync->" in " ".join(e.data["verdict"]["offending"][0]["explanation"])
    assert e.reproduction["rate"] > 0 and e.reproduction["confidence"] >= 0.95
    assert "SIMULATION" in e.data["environment"]["description"]
    rec = Corpus(corpus).class_record(classes[entries.index(e)], e.path)
    assert rec["findings"] >= 2 and e.data["signature"] in rec["variants"]
    report = json.loads((corpus / "report" / "report.json").read_text())
    state = report["state"]
    assert state["findings"] and report["ended"] == "time"
    n = sum(c["findings"] for c in state["classes"].values())
    text = (corpus / "report" / "report.txt").read_text()
    k = len(state["classes"])
    assert f"{n} findings in {k} class{'es' if k != 1 else ''}" in text
    assert f"{state['classes'][classes[entries.index(e)]]['findings']:>6} findings  {e.path.name}" in text


def check_replay_with_and_without_the_fault(corpus):
    r = fuzzgpu("replay", str(corpus), "--backend", "sim", "--sim-fault", "relacq-as-relaxed")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "STILL VIOLATES" in r.stdout
    r = fuzzgpu("replay", str(corpus), "--backend", "sim")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "STILL VIOLATES" not in r.stdout


def check_pytest_plugin_collects_and_replays_the_entries(corpus, tmp_path):
    n = len(Corpus(corpus).entry_paths())
    base = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--fuzzgpu-corpus", str(corpus), "--fuzzgpu-backend", "sim"]
    r = subprocess.run(base, check=False, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert f"{n} passed" in r.stdout
    r = subprocess.run(base + ["--fuzzgpu-sim-fault", "relacq-as-relaxed"], check=False, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 1 and f"{n} failed" in r.stdout
    assert "still violates its property" in r.stdout and "Causality" in r.stdout


def check_explain_an_entry(corpus):
    path = Corpus(corpus).entry_paths()[0]
    r = fuzzgpu("explain", str(path))
    assert r.returncode == 0
    for want in ("program (.litmus):", "observed outcomes", "forbidden", "reproduction: rate"):
        assert want in r.stdout
