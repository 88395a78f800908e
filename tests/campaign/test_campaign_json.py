"""``fuzzgpu campaign --json``: stdout is the report's one JSON document, nothing else.

Hostile review: the banner ("fuzzgpu campaign: profile ...") and the status lines
("[ 1 s] programs ...") went to stdout before the report, so ``fuzzgpu campaign --json | jq``
failed on the first line; they go to stderr with --json now (one worker and several)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_campaign_json_stdout_is_one_json_document(tmp_path: Path, workers: str) -> None:
    r = subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", "--profile", "classic", "--backend", "sim", "--time", "2",
                        "--corpus", str(tmp_path / "c"), "--seed", "1", "--workers", workers, "--json"],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    report = json.loads(r.stdout)  # the whole of stdout
    assert report["schema"] == "fuzzgpu.campaign-report" and report["ended"] == "time"
    # programs judged and programs run, both (issue 29); "programs" is the judged count, as it always was
    t = report["totals"]
    assert {"judged", "run", "judged_per_hour", "run_per_hour"} <= set(t) and t["run"] <= t["judged"]
    assert t["judged"] == (report["combined"] if workers == "2" else report["state"])["programs"]
    assert "fuzzgpu campaign: profile classic" in r.stderr
