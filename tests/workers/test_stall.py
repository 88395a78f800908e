"""A device that stops answering every worker is told apart from programs that hang (fuzzgpu.workers.stall):
the H100 campaign of 2026-12-06 (bench/results/throughput/h100-600s-7862a65-w20-stalled/), whose 19 workers'
runs all hung at one instant and whose workers ran no program after their faults (against 64 a second before), is
a stall; programs that hang while the other workers' runs go on are not; a campaign asks its workers to
stop once, and one that ends before its report is stopped, not failed."""

from __future__ import annotations

import calendar
import json
import re
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from fuzzgpu.backends.base import RunConfig
from fuzzgpu.litmus import parse_file
from fuzzgpu.workers.stall import STALLED, Hang, concurrent, detect, hangs_since, quiet, set_aside, threshold
from fuzzgpu.workers.supervised import ProgramFault, quarantine

ROOT = Path(__file__).resolve().parents[2]
#: the H100 campaign's files: its quarantine records (19 hangs and a gpu-fault of a run launched at 13:15:19, 35 s
#: before its fault) and its status lines (the programs its 20 workers had run)
RUN = ROOT / "bench" / "results" / "throughput" / "h100-600s-7862a65-w20-stalled"


def _tarball() -> tarfile.TarFile:
    return tarfile.open(RUN / "corpus.tar.gz")


with _tarball() as _tf:  # the campaign's start: its parallel.json, written as the parent starts (13:11:30 UTC)
    T0 = float(_tf.getmember("corpus/.fuzzgpu/parallel.json").mtime)


def status_lines() -> list[tuple[float, int]]:
    with _tarball() as tf:
        text = tf.extractfile("campaign.txt").read().decode()  # type: ignore[union-attr]
    return [(T0 + int(m[1]), int(m[2])) for m in re.finditer(r"^\[\s*(\d+) s\].*?, (\d+) run ", text, re.M)]


def first_stall(corpus: Path, lines: list[tuple[float, int]], workers: int = 20) -> tuple[float, list[tuple[str, float]]] | None:
    """The parent's look at each status line, until one finds a stall: that line's time and what it said."""
    for k in range(len(lines)):
        found = detect(corpus, T0, workers, "GPU", lines[: k + 1])
        if found:
            return lines[k][0], found
    return None


def write_records(q: Path) -> None:
    """The campaign's quarantine folder, as it was."""
    q.mkdir(parents=True, exist_ok=True)
    with _tarball() as tf:
        for m in tf.getmembers():
            if re.fullmatch(r"corpus/quarantine/[0-9a-f]{16}\.(json|litmus|sass)", m.name):
                (q / Path(m.name).name).write_bytes(tf.extractfile(m).read())  # type: ignore[union-attr]


def test_the_h100s_stall_is_one(tmp_path: Path) -> None:
    write_records(tmp_path / "quarantine")
    hangs = hangs_since(tmp_path / "quarantine", T0)
    assert len(hangs) == 19  # the gpu-fault is not a hang
    assert threshold(20) == 10
    assert max(len(g) for g in concurrent(hangs)) == 19  # every hang waited through 13:15:40-13:17:21
    assert len(next(concurrent(hangs, threshold(20)))) == 10  # the earliest ten at one instant: 13:15:22
    # replayed over the campaign's status lines: the parent would have said so 375 s in, not stopped at 630 s
    at, found = first_stall(tmp_path, status_lines()) or (0.0, [])
    assert at == T0 + 375
    assert found[0][0].startswith("the GPU stopped answering: the runs of 19 workers were all waiting at one instant and none "
                                  "returned by its deadline, and in the 16 s after their faults the campaign ran 0 programs, "
                                  "against ~972 at its rate before; the 19 programs of the runs that hung from 13:15:20 UTC "
                                  "on are kept in "), found
    assert [p.name for p in (tmp_path / "quarantine").glob("*.json")] == ["9510668e463a62c7.json"]  # the gpu-fault stays
    moved = sorted(p.stem for p in (tmp_path / STALLED).glob("*.json"))
    assert len(moved) == 19 and len(list((tmp_path / STALLED).glob("*.litmus"))) == 19
    assert "not shown to hang" in json.loads((tmp_path / STALLED / f"{moved[0]}.json").read_text())["stall"]
    # the run's page and docs/reliability.md quote this replay
    m = re.search(r"the runs of (\d+) workers .* in the (\d+) s after their faults the campaign ran (\d+) programs, "
                  r"against ~(\d+) at its rate before", found[0][0])
    assert m is not None
    page = " ".join((RUN / "README.md").read_text().split())
    assert (f"the parent would have said so {at - T0:.0f} s in -- the runs of {m[1]} workers hung, {m[3]} programs run "
            f"in the {m[2]} s after the faults against ~{m[4]} at the rate before -- and moved the {len(moved)}") in page
    assert f"the parent would have said so {at - T0:.0f} s in" in " ".join((ROOT / "docs" / "reliability.md").read_text().split())


def test_hangs_while_the_workers_run_again_or_too_few_are_no_stall(tmp_path: Path) -> None:
    write_records(tmp_path / "quarantine")
    lines = status_lines()
    # the same hangs, and the workers running again after their faults at half the campaign's rate before: no stall
    going = [(t, n if t < T0 + 355 else n + int((t - T0 - 355) * 30)) for t, n in lines]
    assert first_stall(tmp_path, going) is None
    # 19 hangs at one instant of a campaign of 40 workers on one GPU: too few
    assert first_stall(tmp_path, lines, workers=40) is None
    assert len(list((tmp_path / "quarantine").glob("*.json"))) == 20 and not (tmp_path / STALLED).exists()


def test_waits_share_an_instant_by_worker() -> None:
    a, b, c, d = (Hang(Path(f"{w}.json"), s, e, w) for s, e, w in ((0, 10, "w0"), (5, 15, "w1"), (12, 20, "w2"), (6, 9, "w3")))
    assert list(concurrent([a, b, c], 2)) == [[a, b], [b, c]]  # no instant is in all three waits
    assert list(concurrent([a, b, c, d], 3)) == [[a, b, d]]
    # one worker's hangs back to back count once
    assert list(concurrent([a, Hang(Path("y.json"), 9.5, 19, "w0")], 2)) == []
    assert threshold(1) == 3 and threshold(8) == 4 and threshold(20) == 10
    assert quiet(6400, 100, 64, 10) and not quiet(6400, 100, 65, 10)  # a tenth of 64 a second for 10 s
    assert quiet(0, 10, 0, 30) and not quiet(0, 10, 1, 30)  # nothing ran before: nothing may run since


def test_a_quarantine_record_gives_its_worker_and_when_its_fault_was_seen(tmp_path: Path) -> None:
    """What the stall's reader takes of a record is what ``quarantine`` writes: the worker, and ``ended`` (taken
    before the record's SASS, the ``time`` its UTC second); a record of an older fuzzgpu, without them, is read
    by its ``time``; a broken one is left out."""
    q = tmp_path / "quarantine"
    program = parse_file(ROOT / "tests" / "litmus" / "core" / "CoWW.litmus")
    t0 = time.time()
    quarantine(tmp_path, program, ProgramFault("hang", "no answer", 122.5, 122.0), "sim", RunConfig(), worker="w7")
    (q / "broken.json").write_text("{")
    older = json.loads(next(q.glob("[0-9a-f]*.json")).read_text())
    [h] = hangs_since(q, t0 - 1)
    rec = json.loads(h.record.read_text())
    assert h.worker == "w7" and t0 - 0.0005 <= h.end <= time.time() + 0.0005  # kept to the millisecond
    assert h.start == h.end - 122.5
    assert rec["time"] == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(rec["ended"]))
    del older["ended"], older["worker"]
    h.record.write_text(json.dumps(older))
    [old] = hangs_since(q, t0 - 1)
    assert old.worker == h.record.stem and old.end == calendar.timegm(time.strptime(older["time"], "%Y-%m-%dT%H:%M:%SZ")) + 1
    assert hangs_since(q, time.time() + 5) == [] and hangs_since(tmp_path / "none", 0) == []
    moved = set_aside([old], "a note", tmp_path / STALLED)
    assert [p.name for p in moved] == [h.record.name] and not h.record.with_suffix(".litmus").exists()
    assert json.loads(moved[0].read_text())["stall"] == "a note" and moved[0].with_suffix(".litmus").exists()


def campaign(corpus: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", "--backend", "sim", "--profile", "classic", "--no-live",
                           "--corpus", str(corpus), *args], capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow  # ~25 s: three workers whose every run hangs (2 s each), then QUIET_S
def test_a_backend_that_answers_no_worker_stops_the_campaign(tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    r = campaign(corpus, "--sim-fault", "hang:1.0", "--workers", "3", "--watchdog", "2", "--time", "120")
    assert r.returncode == 3, r.stdout[-2000:] + r.stderr[-2000:]
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and "the backend stopped answering: the runs of 3 workers were all waiting at one instant and none " \
        "returned by its deadline, and in the " in err[0] and " the campaign ran 0 programs, against ~0 at its rate before" in err[0]
    stalled, left = hangs_since(corpus / STALLED, 0), hangs_since(corpus / "quarantine", 0)
    assert len({h.worker for h in stalled}) == 3  # every worker's runs from the stall on ...
    assert all(h.end < min(g.end for g in stalled) for h in left)  # ... and quarantined only what ended before it began
    report = (corpus / "report" / "report.txt").read_text()
    assert "ended       the backend stopped answering (stalled/)" in report and "exit status 3: " in report


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


@pytest.mark.slow  # ~100 s: sessions of 60 s and 40 s (the stall is judged 20 s after the faults), three workers whose runs hang at a rate of 0.3 (2 s each)
def test_a_resumed_campaign_counts_its_own_session_for_a_stall(tmp_path: Path) -> None:
    """The counts of a resumed campaign's workers hold their earlier sessions: the stall's rate before the faults, and
    the status line's rates, are this session's.  Here every session's workers hang on a third of their runs, all three
    waiting at one instant again and again, and run again after each fault: no stall in either session.  Counted with the
    first session's runs, the rate before the second's first hangs (a few seconds in) would be the first session's 60 s
    of runs over those seconds, over ten times what ran after them (a mutation that drops the baseline fails here)."""
    corpus = tmp_path / "c"
    args = ("--sim-fault", "hang:0.3", "--workers", "3", "--watchdog", "2", "--time")
    first = campaign(corpus, *args, "60")
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    t1 = time.time()
    second = campaign(corpus, *args, "40")
    assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-2000:]
    assert "stopped answering" not in second.stdout + second.stderr and not (corpus / STALLED).exists()
    hangs = hangs_since(corpus / "quarantine", t1)
    assert any(concurrent(hangs, threshold(3))), "no three runs hung at one instant: the stall was never looked for"
    rates = [float(m) for m in re.findall(r" run \(([0-9.]+)/s\)", second.stdout)]
    assert rates and max(rates) < 30, rates  # a third of the runs hang for 2 s: a few a second, not the corpus's count
