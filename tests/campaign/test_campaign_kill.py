"""Acceptance (3): SIGKILL a campaign at random moments, restart it each time: no saved finding is
lost, and the campaign resumes (sessions, totals and the Hypothesis run index carry on).  Also:
Ctrl-C (SIGINT) finishes the current program and writes the report."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fuzzgpu.corpus import Corpus

pytestmark = pytest.mark.slow

from paths import KILL_PROFILE as PROFILE_PATH

ARGS = ["--backend", "sim", "--sim-fault", "relacq-as-relaxed", "--profile", str(PROFILE_PATH), "--seed", "5", "--no-live"]


def start(corpus: Path, seconds: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "fuzzgpu", "campaign", *ARGS, "--time", str(seconds), "--corpus", str(corpus)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def snapshot(corpus: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in corpus.glob("*.json")} if corpus.exists() else {}


def test_sigkill_then_restart_loses_nothing_and_resumes(tmp_path):
    corpus = tmp_path / "c"
    rng = random.Random(int(os.environ.get("FUZZGPU_KILL_SEED", "7")))
    saved: dict[str, bytes] = {}
    programs = []
    for round_ in range(4):
        p = start(corpus, 120)
        time.sleep(rng.uniform(3.0, 9.0))
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
        now = snapshot(corpus)
        for name, data in saved.items():  # every finding saved before is still there, byte for byte
            assert now.get(name) == data, f"lost or changed {name} after kill {round_}"
        entries = Corpus(corpus).entries()  # and every entry file loads (no torn writes)
        assert len(entries) == len(now)
        saved = now
        state = json.loads((corpus / ".fuzzgpu" / "state.json").read_text())
        assert state["sessions"] == round_ + 1
        programs.append(state["programs"])
    assert programs == sorted(programs) and programs[-1] > 0
    assert saved, "four sessions of 3-9 s found nothing"
    # a last, clean session: resumes the same campaign and ends with a report listing every finding
    r = subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", *ARGS, "--time", "5", "--corpus", str(corpus)],
                       check=False, capture_output=True, text=True, timeout=120)
    assert r.returncode in (0, 1), r.stderr
    assert "resumed: session 5" in r.stdout
    state = json.loads((corpus / ".fuzzgpu" / "state.json").read_text())
    assert state["sessions"] == 5 and state["programs"] >= programs[-1]
    listed = {f["file"] for f in state["findings"]}
    assert set(saved) <= listed
    report = json.loads((corpus / "report" / "report.json").read_text())
    assert {f["file"] for f in report["state"]["findings"]} >= set(saved)


def test_ctrl_c_finishes_and_writes_the_report(tmp_path):
    corpus = tmp_path / "c"
    p = start(corpus, 120)
    time.sleep(6)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode in (0, 1), err
    assert "ended       interrupted" in out
    assert (corpus / "report" / "report.txt").exists() and (corpus / "report" / "report.json").exists()
    assert json.loads((corpus / "report" / "report.json").read_text())["ended"] == "interrupted"


def test_resuming_with_other_settings_is_refused(tmp_path):
    corpus = tmp_path / "c"
    r = subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", *ARGS, "--time", "2", "--corpus", str(corpus)],
                       check=False, capture_output=True, text=True, timeout=120)
    assert r.returncode in (0, 1)
    r = subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", "--backend", "sim", "--profile", "scopes", "--time", "2",
                        "--corpus", str(corpus)], check=False, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "profile kill-mp" in r.stderr


def test_one_campaign_per_corpus(tmp_path):
    corpus = tmp_path / "c"
    p = start(corpus, 60)
    try:
        deadline = time.time() + 30
        while not (corpus / ".fuzzgpu" / "state.json").exists() and time.time() < deadline:
            time.sleep(0.2)
        r = subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", *ARGS, "--time", "2", "--corpus", str(corpus)],
                           check=False, capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and "another campaign is running" in r.stderr
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
