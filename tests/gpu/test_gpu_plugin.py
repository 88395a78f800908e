"""The pytest plugin on the GPU: ``--fuzzgpu-backend cuda`` replays the shipped corpus and runs a user's
``fuzzgpu_run`` test on the hardware (marked ``gpu``: skipped without a GPU, PyCUDA and cuda-bindings).

Each session is a pytest of its own in a subprocess, as a user runs it; it takes the GPU while it runs (the
module-scoped backends of the other GPU test files are closed by then: these tests start none)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from importlib.metadata import entry_points
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]


def _pytest(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    # installed, the plugin loads by its entry point (naming it again is an error); from a tree on PYTHONPATH
    # (the GPU machine's bench/h200.sh), by -p
    installed = any(e.name == "fuzzgpu" for e in entry_points(group="pytest11"))
    plugin = [] if installed else ["-p", "fuzzgpu.pytest_plugin"]
    return subprocess.run([sys.executable, "-m", "pytest", *plugin, "-p", "no:cacheprovider", *args],
                          check=False, capture_output=True, text=True, cwd=cwd, timeout=600, env=env)


def test_corpus_replays_on_the_gpu(tmp_path):
    """Every shipped corpus entry replayed on the GPU with the entry's own instances: it passes only when the
    replay shows what the entry expects, and none may pass as 'checked by the model only' (that is the
    static backend's fallback, not a GPU run)."""
    junit = tmp_path / "junit.xml"
    r = _pytest(["-rA", "--fuzzgpu-corpus", str(ROOT / "corpus"), "--fuzzgpu-backend", "cuda",
                 f"--junitxml={junit}", str(ROOT / "corpus")], tmp_path)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    entries = sorted((ROOT / "corpus").glob("*.json"))
    entries = [e for e in entries if e.name != "known.json"]
    assert f"{len(entries)} passed" in r.stdout, r.stdout[-3000:]
    assert "checked by the model only" not in r.stdout
    xml = junit.read_text()
    assert xml.count('name="fuzzgpu_replay"') == len(entries) and "fuzzgpu_checked_by" not in xml, xml[-3000:]


def test_fixture_runs_on_the_gpu(tmp_path):
    """A user's test with ``fuzzgpu_run`` on ``--fuzzgpu-backend cuda``: the histogram is the GPU's (backend
    ``cuda``, at least the instances asked: the GPU runs whole launches, 1e6 asked are 1,048,576 run at the
    default 256 CTAs of 256 threads), the model's property holds, and no 'not a hardware run' warning."""
    (tmp_path / "test_user.py").write_text(textwrap.dedent('''
        from hypothesis import find, given, settings
        from fuzzgpu import strategies as fst
        from fuzzgpu.properties import check

        def test_mp(fuzzgpu_run):
            p = find(fst.classic("MP"), lambda p: True)
            h = fuzzgpu_run(p, instances=1e6)
            assert h.backend == "cuda" and 1_000_000 <= h.instances < 1_000_000 + 65_536
            assert check("model", p, h).status == "pass"

        @settings(max_examples=5, deadline=None, database=None)
        @given(fst.classic("SB"))
        def test_sb_property(fuzzgpu_run, p):
            h = fuzzgpu_run(p)
            assert h.backend == "cuda" and 200_000 <= h.instances < 200_000 + 65_536
            assert not check("model", p, h).failed
    '''))
    r = _pytest(["-q", "--fuzzgpu-backend", "cuda", "--fuzzgpu-instances", "2e5", "test_user.py"], tmp_path)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "2 passed" in r.stdout and "NotAHardwareRun" not in r.stdout, r.stdout[-3000:]
