"""A device that stops answering every worker is told apart from programs that hang (fuzzgpu.workers.stall):
the H100 campaign of 2026-12-06 (bench/results/throughput/h100-600s-7862a65-w20-stalled/), whose 19 workers'
runs all hung at one instant while the campaign ran 46 programs in the next 380 s against 64 a second before,
is a stall; programs that hang while the other workers' runs go on are not; a campaign asks its workers to
stop once, and one that ends before its report is stopped, not failed."""

from __future__ import annotations

import calendar
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fuzzgpu.workers.local import _stall
from fuzzgpu.workers.stall import STALLED, Hang, concurrent, hangs_since, quiet, set_aside, threshold

#: the H100 campaign's quarantine records (name, time, fault kind, seconds waited): 19 hangs and the gpu-fault
#: of the program whose launch began the stall (13:15:19, 35 s before its fault)
H100 = (
    ("04dee566b518a4c5", "2026-12-06T13:17:22Z", "hang", 122.034),
    ("169cb6622c211c28", "2026-12-06T13:17:22Z", "hang", 122.1),
    ("2e392caeadc65623", "2026-12-06T13:17:22Z", "hang", 122.097),
    ("4ef56bb2ce094f17", "2026-12-06T13:17:21Z", "hang", 122.099),
    ("594aa0e113e7b043", "2026-12-06T13:17:23Z", "hang", 122.054),
    ("84470b93b0c58b9b", "2026-12-06T13:17:24Z", "hang", 122.073),
    ("8ca7c72f9221d3a9", "2026-12-06T13:17:21Z", "hang", 122.1),
    ("9194599aa8540426", "2026-12-06T13:17:23Z", "hang", 122.097),
    ("9510668e463a62c7", "2026-12-06T13:15:54Z", "gpu-fault", 35.194),
    ("96976eb2f95c09c8", "2026-12-06T13:17:21Z", "hang", 122.1),
    ("9bc385c734bab29d", "2026-12-06T13:17:42Z", "hang", 122.115),
    ("a2bd33b3b59f211d", "2026-12-06T13:17:21Z", "hang", 122.098),
    ("ab635344e97cd77f", "2026-12-06T13:17:28Z", "hang", 122.1),
    ("b1fa472ce94d58fe", "2026-12-06T13:17:24Z", "hang", 122.1),
    ("c3493f7ef1a9b25d", "2026-12-06T13:17:24Z", "hang", 122.097),
    ("d8dc9660786c8f37", "2026-12-06T13:17:22Z", "hang", 122.1),
    ("dc872d5e05c460de", "2026-12-06T13:17:21Z", "hang", 122.104),
    ("e71956b194def835", "2026-12-06T13:17:21Z", "hang", 122.099),
    ("e81b2daf2b253c93", "2026-12-06T13:17:21Z", "hang", 122.1),
    ("f425db143a5776dd", "2026-12-06T13:17:23Z", "hang", 122.098),
)
#: its start (the parallel campaign's files, 13:11:30) and the programs its 20 workers had run (the status lines)
T0 = calendar.timegm((2026, 12, 6, 13, 11, 30, 0, 0, 0))
RUNS = ((0, 0), (218, 14013), (220, 14026), (262, 14026), (264, 14040), (390, 14072), (392, 14072), (394, 14072), (609, 14072))


def write_records(q: Path, records=H100, worker: bool = False) -> None:
    q.mkdir(parents=True, exist_ok=True)
    for name, when, kind, waited in records:
        rec = {"schema": "fuzzgpu.quarantine", "version": 1, "time": when, "shape": "HANDOFF",
               "fault": {"kind": kind, "detail": "...", "seconds": waited, "deadline": 122.0}}
        if worker:
            rec["worker"] = f"w{name[-1]}"
        (q / f"{name}.json").write_text(json.dumps(rec))
        (q / f"{name}.litmus").write_text("PTX HANDOFF\n")


def test_the_h100s_stall_is_one(tmp_path: Path) -> None:
    write_records(tmp_path / "quarantine")
    hangs = hangs_since(tmp_path / "quarantine", T0)
    assert len(hangs) == 19  # the gpu-fault is not a hang
    assert threshold(20) == 10
    assert max(len(g) for g in concurrent(hangs)) == 19  # every hang waited through 13:15:40-13:17:21
    assert len(next(concurrent(hangs, threshold(20)))) == 10  # the earliest ten at one instant: 13:15:22
    ran = [(T0 + s, n) for s, n in RUNS]
    # 20 s after the last fault (13:17:43): 46 programs since 13:15:40 (250 s in), against ~8,000 at the rate before
    line = _stall(tmp_path, T0, 20, "GPU", [r for r in ran if r[0] <= T0 + 395])
    assert line and line[0][0].startswith("the GPU stopped answering: the runs of 19 workers hung after the campaign last ran "
                                          "a program (13:15:10 UTC), 10 of them waiting at one instant, and it ran 46 programs in "
                                          "the 163 s since, against ~9907 at its rate before; their 19 programs are kept in "), line
    assert not list((tmp_path / "quarantine").glob("*.json"))[1:]  # the gpu-fault alone stays quarantined
    assert (tmp_path / "quarantine" / "9510668e463a62c7.json").exists()
    moved = sorted(p.stem for p in (tmp_path / STALLED).glob("*.json"))
    assert len(moved) == 19 and len(list((tmp_path / STALLED).glob("*.litmus"))) == 19
    assert "not shown to hang" in json.loads((tmp_path / STALLED / f"{moved[0]}.json").read_text())["stall"]


def test_too_soon_or_with_the_campaign_running_on_it_is_no_stall(tmp_path: Path) -> None:
    write_records(tmp_path / "quarantine")
    ran = [(T0 + s, n) for s, n in RUNS]
    # at 13:17:50, 7 s after the last fault: too soon to say
    assert _stall(tmp_path, T0, 20, "GPU", [r for r in ran if r[0] <= T0 + 380]) == []
    # the same hangs while the campaign ran on at half its rate: programs that hang, not the device
    going = [(T0 + s, n) for s, n in ((0, 0), (250, 14026), (395, 14026 + 64 * 145 // 2))]
    assert _stall(tmp_path, T0, 20, "GPU", going) == []
    # too few workers: 19 hangs of a campaign of 40 workers on one GPU
    assert _stall(tmp_path, T0, 40, "GPU", [r for r in ran if r[0] <= T0 + 395]) == []
    assert len(list((tmp_path / "quarantine").glob("*.json"))) == 20 and not (tmp_path / STALLED).exists()


def test_waits_share_an_instant_by_worker() -> None:
    a, b, c, d = (Hang(Path(f"{w}.json"), s, e, w) for s, e, w in ((0, 10, "w0"), (5, 15, "w1"), (12, 20, "w2"), (6, 9, "w3")))
    assert list(concurrent([a, b, c], 2)) == [[a, b], [b, c]]  # no instant is in all three waits
    assert list(concurrent([a, b, c, d], 3)) == [[a, b, d]]
    # one worker's hangs back to back count once
    assert list(concurrent([a, Hang(Path("y.json"), 9.5, 19, "w0")], 2)) == []
    assert threshold(1) == 3 and threshold(8) == 4 and threshold(20) == 10
    assert quiet(6400, 100, 0, 6400 + 64 * 10, 200) and not quiet(6400, 100, 0, 6400 + 64 * 10 + 1, 200)
    assert quiet(0, 10, 0, 0, 30)  # nothing ran before nor since


def test_records_of_this_fuzzgpu_give_their_worker_and_end(tmp_path: Path) -> None:
    q = tmp_path / "quarantine"
    write_records(q, H100[:3], worker=True)
    rec = json.loads((q / "04dee566b518a4c5.json").read_text())
    rec["ended"] = T0 + 100.5
    (q / "04dee566b518a4c5.json").write_text(json.dumps(rec))
    (q / "broken.json").write_text("{")
    hs = {h.record.stem: h for h in hangs_since(q, T0)}
    assert sorted(hs) == ["04dee566b518a4c5", "169cb6622c211c28", "2e392caeadc65623"]
    assert hs["04dee566b518a4c5"].end == T0 + 100.5 and hs["04dee566b518a4c5"].worker == "w5"
    assert hangs_since(q, T0 + 400) == [] and hangs_since(tmp_path / "none", 0) == []
    moved = set_aside([hs["169cb6622c211c28"]], "a note", tmp_path / STALLED)
    assert [p.name for p in moved] == ["169cb6622c211c28.json"] and not (q / "169cb6622c211c28.litmus").exists()


def campaign(corpus: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", "--backend", "sim", "--profile", "classic", "--no-live",
                           "--corpus", str(corpus), *args], capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow  # ~25 s: three workers whose every run hangs (2 s each), then QUIET_S
def test_a_backend_that_answers_no_worker_stops_the_campaign(tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    t0 = time.time()
    r = campaign(corpus, "--sim-fault", "hang:1.0", "--workers", "3", "--watchdog", "2", "--time", "120")
    assert r.returncode == 3, r.stdout[-2000:] + r.stderr[-2000:]
    assert time.time() - t0 < 100  # stopped, not run to its end
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and "the backend stopped answering: the runs of 3 workers hung after the campaign last ran a program" \
        in err[0], r.stderr
    assert not list((corpus / "quarantine").glob("*.json")) and len(list((corpus / STALLED).glob("*.json"))) >= 3
    assert "stopped answering" in (corpus / "report" / "report.txt").read_text()


@pytest.mark.slow  # ~45 s: two workers in a 40 s hang when their 3 s are up
def test_a_worker_asked_to_stop_ends_its_run_and_writes_its_report(tmp_path: Path) -> None:
    """At the end the parent asks each worker to stop once (SIGINT): a worker waiting for a run ends it (here at
    the run's deadline) and writes its report.  Asked every 0.2 s (before), such a worker was interrupted within
    its wait: every worker "failed: KeyboardInterrupt", exit 3, no report (the H100 campaign of 2026-12-06)."""
    corpus = tmp_path / "c"
    r = campaign(corpus, "--sim-fault", "hang:1.0", "--workers", "2", "--watchdog", "40", "--time", "3")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "failed" not in r.stdout and "KeyboardInterrupt" not in r.stdout + r.stderr
    for wid in ("w0", "w1"):
        assert (corpus / ".fuzzgpu" / "workers" / wid / "report" / "report.json").exists()
    assert (corpus / "report" / "report.json").exists()
