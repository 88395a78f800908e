"""``campaign --corpus FILE`` (a file, not a folder) is bad input, exit 2 with one line naming it;
hostile review: it was "environment error: FILE/.fuzzgpu/state.json: cannot read the
campaign state: Not a directory", exit 3."""

from __future__ import annotations

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
