"""`fuzzgpu explain` says where a corpus entry's forbidden instances ran (the harness's provenance
log, docs/harness.md "Provenance"), or that the entry has none (issue 27)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENTRY = ROOT / "corpus" / "73416467ed043580.json"  # the lone try_wait, found on an H200 (forbidden)


def _explain(path: Path) -> str:
    r = subprocess.run([sys.executable, "-m", "fuzzgpu", "explain", str(path)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode in (0, 1), r.stderr
    return r.stdout


def test_explain_says_an_entry_without_provenance_has_none() -> None:
    assert "provenance: none recorded" in _explain(ENTRY)


def test_explain_shows_the_logged_instances(tmp_path: Path) -> None:
    d = json.loads(ENTRY.read_text())
    keys = d["histogram"]["keys"]
    bad = d["verdict"]["offending"][0]["outcome"]
    where = [{"sm": 17, "cta": 300 + k, "warp": 5, "lane": 9} for k in range(2)]
    d["histogram"]["meta"]["provenance"] = {"seen": 64, "logged": 2, "entries": [
        {"launch": 7, "instance": (42 << 8) | i, "logical_cta": 42, "outcome": {k: bad[k] for k in keys}, "roles": where}
        for i in (9, 10)]}
    dst = tmp_path / ENTRY.name
    dst.write_text(json.dumps(d))
    shutil.copy(ENTRY.with_suffix(".litmus"), dst.with_suffix(".litmus"))
    out = _explain(dst)
    assert "Provenance of the forbidden instances: 2 logged of 64" in out, out
    assert "1 launch(es); 1 group(s)" in out and "P0 sm 17 cta 300 warp 5 lane 9" in out, out
