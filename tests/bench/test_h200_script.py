"""bench/h200.sh refuses an X folder that holds files already: on the device a folder of an earlier
session's run outlived it, and its classes.txt sat beside a new run's results (2026-12-05)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_folder_with_an_earlier_runs_files_is_refused(tmp_path: Path) -> None:
    old = tmp_path / "t600"
    old.mkdir()
    (old / "classes.txt").write_text("an earlier run's\n")
    r = subprocess.run(["bash", str(ROOT / "bench" / "h200.sh"), "throughput"], cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, "X": str(old), "OUT": str(tmp_path / "out")}, timeout=60)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines() == [f"bench/h200.sh: X={old} is not empty (an earlier run's files would mix "
                                             "with this one's): name a new folder"]
    assert sorted(p.name for p in old.iterdir()) == ["classes.txt"] and not (tmp_path / "out").exists()
