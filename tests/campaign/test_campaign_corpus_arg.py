"""``campaign --corpus FILE`` (a file, not a folder) is bad input, exit 2 with one line naming it;
hostile review: it was "environment error: FILE/.fuzzgpu/state.json: cannot read the
campaign state: Not a directory", exit 3."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_corpus_that_is_a_file_is_bad_input(tmp_path: Path) -> None:
    f = tmp_path / "not-a-folder"
    f.write_text("x")
    for extra in ([], ["--workers", "2"]):
        r = subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", "--backend", "sim", "--time", "5", "--corpus", str(f), *extra],
                           capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert r.returncode == 2 and r.stdout == "", (extra, r.stdout, r.stderr)
        assert r.stderr.count("\n") == 1 and f"--corpus {f}: not a folder" in r.stderr, r.stderr


def test_without_corpus_a_campaign_writes_fuzz_corpus_not_the_tracked_corpus(tmp_path: Path) -> None:
    """Issue 27, item 4: ``campaign`` without ``--corpus`` wrote into ``./corpus``, the tracked folder of
    reproducers, so a simulated-fault entry landed beside the real ones.  Its default is
    ``./fuzz-corpus`` (ignored by git), and --help says so."""
    (tmp_path / "corpus").mkdir()  # a checkout's tracked corpus/
    r = subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", "--profile", "classic", "--backend", "sim",
                        "--sim-fault", "relacq-as-relaxed", "--seed", "1", "--max-findings", "1", "--time", "60", "--no-live"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})  # this checkout's fuzzgpu, from another folder
    assert r.returncode == 1, r.stdout + r.stderr
    assert list((tmp_path / "corpus").iterdir()) == []
    assert list((tmp_path / "fuzz-corpus").glob("*.json")), r.stdout
    h = subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", "--help"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert "default: ./fuzz-corpus, not the tracked corpus/" in " ".join(h.stdout.split())
