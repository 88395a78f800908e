"""The pytest plugin: options, the fuzzgpu_run fixture, corpus collection, GPU pinning for xdist."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from fuzzgpu.pytest_plugin import pin_worker_gpu


def test_pin_worker_gpu():
    assert pin_worker_gpu("gw0", ["0", "1"]) == "0"
    assert pin_worker_gpu("gw3", ["0", "1"]) == "1"
    assert pin_worker_gpu("gw2", ["4", "5", "6"]) == "6"
    assert pin_worker_gpu("gw1", ["0"]) is None  # one GPU: nothing to pin
    assert pin_worker_gpu(None, ["0", "1"]) is None  # not under xdist


def test_fixture_runs_programs_on_the_chosen_backend(tmp_path):
    (tmp_path / "test_user.py").write_text(textwrap.dedent('''
        from hypothesis import given, settings
        from fuzzgpu import strategies as fst
        from fuzzgpu.properties import check

        def test_mp(fuzzgpu_run):
            from hypothesis import find
            p = find(fst.classic("MP"), lambda p: True)
            h = fuzzgpu_run(p, instances=1000)
            assert h.instances == 1000 and h.backend == "sim"
            assert check("model", p, h).status == "pass"

        @settings(max_examples=10, deadline=None, database=None)
        @given(fst.classic("SB"))
        def test_sb_property(fuzzgpu_run, p):
            assert not check("model", p, fuzzgpu_run(p)).failed
    '''))
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--fuzzgpu-backend", "sim",
                        "--fuzzgpu-instances", "2000", "test_user.py"], check=False, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "2 passed" in r.stdout
    # a pass on the simulation is the oracle's, and the run says so (pytest's warnings summary)
    assert "NotAHardwareRun" in r.stdout and "a CPU SIMULATION" in r.stdout, r.stdout[-3000:]


def test_a_pass_over_no_run_says_so():
    """The static backend runs nothing: a property's pass over its empty histogram says that no
    instance ran (audit: it read 'model: pass', the same as a GPU run's)."""
    from fuzzgpu.properties import Verdict

    assert Verdict("model", "pass", instances=0).summary() == "model: pass (0 instances ran: no outcome was observed)"
    assert Verdict("model", "pass", instances=10).summary() == "model: pass"


def test_options_in_help(tmp_path):
    r = subprocess.run([sys.executable, "-m", "pytest", "--help"], check=False, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    for opt in ("--fuzzgpu-backend", "--fuzzgpu-instances", "--fuzzgpu-corpus", "--fuzzgpu-sim-fault"):
        assert opt in r.stdout


def test_bad_corpus_entry_is_a_collection_error(tmp_path):
    d = tmp_path / "corpus"
    d.mkdir()
    (d / "broken.json").write_text("{\"schema\": \"fuzzgpu.corpus\"}")
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--fuzzgpu-corpus", str(d),
                        "--fuzzgpu-backend", "sim"], check=False, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert r.returncode != 0 and "broken.json" in r.stdout + r.stderr and "missing field" in r.stdout + r.stderr


def test_pytest_without_xdist_still_runs(tmp_path):
    """Issue 12.4: ``pytest_xdist_auto_num_workers`` is an xdist hook; registered as a required hook it
    made every pytest run abort ("unknown hook") in a project that has fuzzgpu but not pytest-xdist.
    ``-p no:xdist`` stands for a venv without it (the CI script also checks a real such venv)."""
    (tmp_path / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q", "test_one.py"],
                       check=False, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout[-2000:] + r.stderr[-2000:]


def test_a_gpu_finding_replayed_on_the_simulation_is_not_passed(tmp_path):
    """A corpus entry found on a GPU that nobody has judged (``expect`` new), replayed with
    ``--fuzzgpu-backend sim``: the simulation samples the oracle, so the replay checks nothing
    (``fuzzgpu replay`` says "not-reproducible" and counts it as not checked); the plugin passed it
    (an audit), then skipped it -- and a session of skips passed, green having checked
    nothing (issue 28, item 3).  Not checked is a failure that says so."""
    import json
    import os
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    src = root / "corpus" / "73416467ed043580.json"
    data = json.loads(src.read_text())
    assert data["environment"]["backend"] == "cuda"
    data["expect"] = "new"
    d = tmp_path / "corpus"
    d.mkdir()
    (d / src.name).write_text(json.dumps(data))
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs", "--fuzzgpu-corpus", str(d),
                        "--fuzzgpu-backend", "sim"], check=False, capture_output=True, text=True, cwd=tmp_path, timeout=300, env=env)
    assert r.returncode == 1 and "1 failed" in r.stdout and "passed" not in r.stdout, r.stdout[-3000:] + r.stderr[-2000:]
    assert "NOT CHECKED on backend sim" in r.stdout and "found on cuda" in r.stdout, r.stdout[-3000:]


def test_a_bad_corpus_file_fails_alone_and_the_entries_still_run(tmp_path):
    """Hostile review: a ``.json`` in the corpus folder that is not an entry (a campaign's
    report.json copied there) was a pytest INTERNALERROR with a traceback, and no entry ran."""
    import os
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    d = tmp_path / "corpus"
    d.mkdir()
    (d / "report.json").write_text('{"schema": "fuzzgpu.campaign-report", "version": 1}')
    good = root / "corpus" / "73416467ed043580.json"
    (d / good.name).write_text(good.read_text())
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q", "--fuzzgpu-corpus", str(d),
                        "--fuzzgpu-backend", "sim"], check=False, capture_output=True, text=True, cwd=tmp_path, timeout=300, env=env)
    out = r.stdout + r.stderr
    assert "INTERNALERROR" not in out, out[-3000:]
    assert r.returncode == 1 and "report.json::invalid" in out and "not a fuzzgpu corpus entry (schema 'fuzzgpu.campaign-report'" in out, out[-3000:]
    assert "1 failed" in r.stdout and ("1 passed" in r.stdout or "1 skipped" in r.stdout), r.stdout[-2000:]


def test_an_empty_corpus_folder_fails_loudly_not_passes(tmp_path):
    """Hostile review: ``pytest --fuzzgpu-corpus EMPTY/`` collected no replay test and the
    session passed (or, alone, said only "no tests ran"): a corpus that checked nothing read as
    clean.  It is a usage error naming the folder (as an empty parametrisation is a collection error
    in this project: ``empty_parameter_set_mark = "fail_at_collect"``); a ``*.json`` that is not a
    regular file (a FIFO) fails as a test of its own, never silently dropped."""
    import os
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    (tmp_path / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    d = tmp_path / "corpus"
    d.mkdir()
    (d / ".fuzzgpu").mkdir()  # campaign state, no entry
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q", "--fuzzgpu-corpus", str(d),
           "--fuzzgpu-backend", "sim", "test_one.py"]
    r = subprocess.run(cmd, check=False, capture_output=True, text=True, cwd=tmp_path, timeout=300, env=env)
    assert r.returncode == 4 and "passed" not in r.stdout, r.stdout[-2000:] + r.stderr[-2000:]
    assert f"--fuzzgpu-corpus {d}: no corpus entries" in r.stderr, r.stderr[-2000:]
    os.mkfifo(d / "pipe.json")
    r = subprocess.run(cmd, check=False, capture_output=True, text=True, cwd=tmp_path, timeout=300, env=env)
    assert r.returncode == 1 and "pipe.json::invalid" in r.stdout and "not a regular file" in r.stdout, r.stdout[-2000:]
    assert "1 failed, 1 passed" in r.stdout, r.stdout[-2000:]


@pytest.mark.parametrize("folder", ["empty", "missing"])
def test_a_bad_corpus_folder_is_a_usage_error_under_xdist(tmp_path, folder):
    """Hostile review: with pytest-xdist (``-n 2``) the checks of ``--fuzzgpu-corpus`` ran
    at collection in the workers: an empty or missing folder ended in an INTERNALERROR (exit 3, no
    line naming the folder) instead of the usage error (exit 4).  They run at configuration, in the
    controller, before a worker starts."""
    pytest.importorskip("xdist")
    import os
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    (tmp_path / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    d = tmp_path / "corpus"
    if folder == "empty":
        d.mkdir()
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "-q", "--fuzzgpu-corpus", str(d),
           "--fuzzgpu-backend", "sim", "test_one.py"]
    r = subprocess.run(cmd, check=False, capture_output=True, text=True, cwd=tmp_path, timeout=300, env=env)
    assert r.returncode == 4 and "INTERNALERROR" not in r.stdout + r.stderr, r.stdout[-2000:] + r.stderr[-2000:]
    assert f"--fuzzgpu-corpus {d}: " in r.stderr, r.stderr[-2000:]
