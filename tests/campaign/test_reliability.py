"""Reliability (docs/reliability.md): SIGKILL a campaign at random moments, 20 times in a row, and
restart it each time -- no saved finding is lost or changed, every file it wrote still loads, and
the campaign resumes (sessions, totals, the Hypothesis run index carry on).  The campaign runs with
an injected crash fault too, so quarantine records are being written when the kills land.  Then the
same for a parallel campaign (the parent killed: its workers die with it, and a restart resumes)."""

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

from fuzzgpu.campaign import State
from fuzzgpu.corpus import Corpus

from paths import KILL_PROFILE as PROFILE_PATH

ARGS = ["--backend", "sim", "--sim-fault", "relacq-as-relaxed,crash:0.05", "--profile", str(PROFILE_PATH), "--seed", "5",
        "--no-live", "--watchdog", "5"]
KILLS = int(os.environ.get("FUZZGPU_KILLS", "20"))


def start(corpus: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "fuzzgpu", "campaign", *ARGS, *extra, "--time", "120", "--corpus", str(corpus)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def snapshot(corpus: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in corpus.glob("*.json")} if corpus.exists() else {}


def check_files(corpus: Path, saved: dict[str, bytes], round_: int) -> dict[str, bytes]:
    now = snapshot(corpus)
    for name, data in saved.items():  # every finding saved before is still there, byte for byte
        assert now.get(name) == data, f"lost or changed {name} after kill {round_}"
    assert len(Corpus(corpus).entries()) == len(now)  # every entry loads: no torn write
    for q in (corpus / "quarantine").glob("*.json"):
        rec = json.loads(q.read_text())
        assert rec["schema"] == "fuzzgpu.quarantine" and (corpus / "quarantine" / rec["litmus"]).exists()
    ev = corpus / ".fuzzgpu" / "evidence"
    for f in ev.glob("*/*.json"):
        json.loads(f.read_text())
    return now


@pytest.mark.slow  # 20 campaigns killed after 0.5-3.5 s each, then an 8-s one: ~1 min of wall time, mostly waiting
def test_sigkill_20_times_loses_nothing_and_resumes(tmp_path):
    corpus = tmp_path / "c"
    rng = random.Random(int(os.environ.get("FUZZGPU_KILL_SEED", "11")))
    saved: dict[str, bytes] = {}
    programs: list[int] = []
    sessions: list[int] = []
    counts = []
    t0 = time.monotonic()
    for round_ in range(KILLS):
        p = start(corpus)
        time.sleep(rng.uniform(0.5, 3.5))
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
        saved = check_files(corpus, saved, round_)
        state = State.load(corpus / ".fuzzgpu" / "state.json")
        if state is None:  # killed before its first save (while importing): nothing to resume yet
            counts.append((len(saved), 0))
            continue
        programs.append(state.programs)
        sessions.append(state.sessions)
        counts.append((len(saved), len(state.findings)))
    took = time.monotonic() - t0
    assert programs == sorted(programs) and programs[-1] > 0, programs
    assert sessions == sorted(sessions) and sessions[-1] >= KILLS // 2, sessions  # each started session resumed the last
    # a last, clean session resumes the same campaign; its state and report list every saved finding
    r = subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", *ARGS, "--time", "8", "--corpus", str(corpus)],
                       check=False, capture_output=True, text=True, timeout=120)
    assert r.returncode in (0, 1), r.stderr
    assert "resumed: session" in r.stdout and "Traceback" not in r.stdout + r.stderr
    after = check_files(corpus, saved, KILLS)
    state = State.load(corpus / ".fuzzgpu" / "state.json")
    assert state is not None and state.programs >= programs[-1]
    assert state.sessions == sessions[-1] + 1
    listed = {f["file"] for f in state.findings}
    assert set(after) <= listed, (set(after) - listed)
    report = json.loads((corpus / "report" / "report.json").read_text())
    assert {f["file"] for f in report["state"]["findings"]} >= set(after)
    assert after, f"{KILLS} killed sessions and a clean one found nothing"
    print(f"\n{KILLS} kills in {took:.0f} s; corpus entries after each kill: {[c for c, _ in counts]}; "
          f"findings before the last session {len(saved)}, after {len(after)}; quarantined {state.quarantined}; "
          f"programs {state.programs} over {state.sessions} sessions")


@pytest.mark.slow  # 4 parallel campaigns killed after 1.5-4 s, then a 4-s one
def test_sigkill_of_a_parallel_campaign(tmp_path):
    corpus = tmp_path / "c"
    rng = random.Random(3)
    saved: dict[str, bytes] = {}
    for round_ in range(4):
        p = start(corpus, "--workers", "2")
        time.sleep(rng.uniform(1.5, 4.0))
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
        # the workers die with the parent (PR_SET_PDEATHSIG): their locks are free again at once
        deadline = time.monotonic() + 10
        for wid in ("w0", "w1"):
            lock = corpus / ".fuzzgpu" / "workers" / wid / "lock"
            while lock.exists() and time.monotonic() < deadline:
                import fcntl

                with open(lock, "a+") as f:
                    try:
                        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except OSError:
                        time.sleep(0.1)
            else:
                pass
            assert time.monotonic() < deadline, f"worker {wid} outlived its killed parent"
        saved = check_files(corpus, saved, round_)
    r = subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", *ARGS, "--workers", "2", "--time", "4", "--corpus", str(corpus)],
                       check=False, capture_output=True, text=True, timeout=120)
    assert r.returncode in (0, 1), r.stdout[-2000:] + r.stderr[-2000:]
    after = check_files(corpus, saved, 99)
    comb = json.loads((corpus / "report" / "report.json").read_text())["combined"]
    assert {f["file"] for f in comb["findings"]} >= set(after)
    for wid in ("w0", "w1"):
        st = State.load(corpus / ".fuzzgpu" / "workers" / wid / "state.json")
        assert st is not None and st.sessions >= 2 and st.seed == 5 + int(wid[1:])


def test_a_quarantine_is_in_the_state_before_anything_else_happens(tmp_path):
    """Issue 13: after kills, the state's quarantine count lagged the quarantine folder (the state
    was saved at most once a second).  Now a quarantine forces a state save: whenever the campaign
    says QUARANTINED, the state on disk already counts every record in the folder."""
    import io

    from fuzzgpu.campaign import Campaign, load_profile
    from fuzzgpu.workers.supervised import BackendSpec, SupervisedBackend

    prof = load_profile(str(PROFILE_PATH))
    prof = type(prof)(**{**prof.__dict__, "sim_instances": 2000, "max_examples": 30})
    b = SupervisedBackend(BackendSpec("sim", "crash:0.3"), watchdog=5)
    seen: list[tuple[int, int]] = []
    try:
        c = Campaign(prof, b, tmp_path, "model", seed=2, out=io.StringIO(), live=False)
        printed = c._print

        def check(line: str) -> None:
            if line.startswith("QUARANTINED"):
                st = json.loads((tmp_path / ".fuzzgpu" / "state.json").read_text())
                seen.append((st["quarantined"], len(list((tmp_path / "quarantine").glob("*.json")))))
            printed(line)

        c._print = check  # type: ignore[method-assign]
        c.max_runs = 2
        c.run(600)
    finally:
        b.close()
    assert len(seen) >= 2 and all(a == b for a, b in seen), seen
