"""Progress of the long steps on stderr (issue 28, item 6): rich's bar where stderr is a terminal, plain
lines where it is not and progress was asked for (``--progress``), nothing otherwise; stdout (the
report, ``--json``) is the same with or without it.  ``replay --fixed`` shows each entry and each fix
candidate (it was silent up to 25 s per entry)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

from fuzzgpu import properties
from fuzzgpu.backends.base import RunConfig
from fuzzgpu.backends.sim import SimBackend
from fuzzgpu.corpus import Corpus, make_entry
from fuzzgpu.litmus import parse_file
from fuzzgpu.progress import Progress, wanted

ROOT = Path(__file__).resolve().parents[2]
RACE = ROOT / "tests" / "litmus" / "race"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_wanted_on_a_terminal_or_when_asked():
    assert wanted(None, Terminal()) and not wanted(None, io.StringIO())
    assert wanted(True, io.StringIO()) and not wanted(False, Terminal())


def test_a_terminal_gets_rich_progress_a_log_plain_lines_and_off_nothing():
    tty, log, off = Terminal(), io.StringIO(), io.StringIO()
    for stream, on in ((tty, True), (log, True), (off, False)):
        with Progress(on, "replay", total=3, stream=stream) as p:
            p.update("e1.json: fix search, candidate 4", completed=0)
            p.update("e2.json: running", completed=1)
    assert "e2.json: running" in tty.getvalue() and "\x1b[" in tty.getvalue() and "1/3" in tty.getvalue()
    assert log.getvalue().splitlines() == ["progress: e1.json: fix search, candidate 4 (0/3 done)",
                                           "progress: e2.json: running (1/3 done)"]
    assert off.getvalue() == ""


def _corpus(tmp_path: Path) -> Path:
    d = tmp_path / "c"
    for name in ("RACE-5-relacq-cta-across-ctas.litmus", "RACE-1-pdl-nc-after-wait.litmus"):
        p = parse_file(RACE / name)
        cfg = RunConfig(instances=100_000, seed=1)
        h = SimBackend().run(p, cfg)
        Corpus(d).add(make_entry(p, properties.RACE.check(p, h), h, SimBackend(), cfg))
    return d


def test_replay_fixed_shows_each_entry_and_candidate_on_stderr_and_leaves_stdout_alone(tmp_path):
    d = _corpus(tmp_path)

    def replay(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "fuzzgpu", "replay", str(d), "--backend", "sim", "--fixed", "--json", *extra],
                              capture_output=True, text=True, cwd=ROOT, timeout=600)

    asked, quiet = replay("--progress"), replay()
    assert asked.returncode == quiet.returncode == 0, asked.stdout + asked.stderr
    assert [json.loads(l)["status"] for l in asked.stdout.splitlines()] == ["fixed", "fixed"]
    timed = ("verdict", "seconds")  # (how long an entry took differs from run to run)
    strip = [{k: v for k, v in json.loads(l).items() if k not in timed} for l in asked.stdout.splitlines()]
    assert strip == [{k: v for k, v in json.loads(l).items() if k not in timed} for l in quiet.stdout.splitlines()]
    lines = asked.stderr.splitlines()
    assert any(l.startswith("progress: ") and ": fix search" in l and "(0/2 done)" in l for l in lines), asked.stderr
    assert lines[-1] == "progress: replay: every entry done (2/2 done)"
    assert "progress:" not in quiet.stderr  # stderr is not a terminal here, and nobody asked
