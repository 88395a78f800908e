"""The pytest plugin: options, the fuzzgpu_run fixture, corpus collection, GPU pinning for xdist."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from pathlib import Path

import pytest
from nvcc import needs_nvcc
from paths import LITMUS, ROOT

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


def _pytest(tmp_path, *args: str, cwd=None, timeout: int = 300) -> subprocess.CompletedProcess:
    """``python -m pytest ARGS`` in ``cwd`` (default ``tmp_path``), without xdist and the cache."""
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", *args], check=False,
                          capture_output=True, text=True, cwd=cwd or tmp_path, timeout=timeout)


@needs_nvcc
def test_a_static_run_whose_sass_was_not_fully_checked_is_not_a_pass(tmp_path):
    """Hostile review (2026-12-05, A): on the static backend (``auto`` without a GPU) nothing runs, and
    a program whose SASS the static oracle could not fully check (``fence.acquire.cta`` has no known
    SASS) passed as ``model: pass (0 instances ran ...)`` -- a campaign counts it not covered,
    ``fuzzgpu replay`` NOT CHECKED.  It fails NOT CHECKED, naming what was not checked; a program
    whose SASS was fully checked still passes; the warning says what static checks, and what not."""
    (tmp_path / "test_user.py").write_text(textwrap.dedent(f'''
        from fuzzgpu.litmus import parse_file
        from fuzzgpu.properties import check

        def test_unchecked(fuzzgpu_run):
            p = parse_file({str(LITMUS / "fence-acquire-release" / "FAR-MP-cta-crosscta.litmus")!r})
            assert not check("model", p, fuzzgpu_run(p)).failed

        def test_checked(fuzzgpu_run):
            p = parse_file({str(LITMUS / "core" / "MP-relacq-gpu.litmus")!r})
            assert not check("model", p, fuzzgpu_run(p)).failed
    '''))
    r = _pytest(tmp_path, "-rA", "--fuzzgpu-backend", "static", "test_user.py")
    assert r.returncode == 1 and "1 failed, 1 passed" in r.stdout, r.stdout[-3000:] + r.stderr[-2000:]
    assert "PASSED test_user.py::test_checked" in r.stdout and "FAILED test_user.py::test_unchecked" in r.stdout, r.stdout[-3000:]
    assert "NOT CHECKED on backend static: FAR-MP-cta-crosscta: nothing ran, and its SASS was not fully checked (1 thing(s), " \
           "e.g. `fence.acquire.cta` (PTX line" in r.stdout, r.stdout[-3000:]
    assert "the program FAR-MP-cta-crosscta, as litmus text:\nPTX FAR-MP-cta-crosscta" in r.stdout, r.stdout[-3000:]
    warning = " ".join(r.stdout.split("warnings summary", 1)[1].split())
    assert "its SASS checked;" not in warning and "fails as NOT CHECKED" in warning, warning


def test_a_program_the_backend_cannot_run_or_the_oracle_does_not_cover_is_not_checked(tmp_path):
    """A program static cannot compile (a register-level wgmma has no static kernel: the docs'
    cp.async example draws them) or the oracle does not cover (sim samples the oracle) was the
    backend's exception with its traceback; it fails NOT CHECKED with the reason and the program, as
    ``fuzzgpu replay`` skips it as not checked."""
    stores = "\n".join(f" st.relaxed.gpu x, {i} | {'ld.relaxed.gpu r0, x' if i == 1 else ''} ;" for i in range(1, 35))
    (tmp_path / "many.litmus").write_text(f"PTX MANY\n{{\nx=0;\n}}\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n{stores}\nexists (P1:r0 == 1)\n")
    (tmp_path / "test_user.py").write_text(textwrap.dedent(f'''
        from fuzzgpu.litmus import parse_file
        from fuzzgpu.properties import check

        def test_it(fuzzgpu_run, request):
            p = parse_file(request.config.getoption("--fuzzgpu-backend") == "static" and
                           {str(LITMUS / "race-wgmma" / "RACE-13-no-wgmma-fence.litmus")!r} or "many.litmus")
            assert not check("model", p, fuzzgpu_run(p)).failed
    '''))
    for backend, want in (("static", "NOT CHECKED on backend static: this backend cannot run it: RACE-13-no-wgmma-fence: has no static kernels "),
                          ("sim", "NOT CHECKED on backend sim: the oracle does not cover it: more than 32 values written to one location")):
        r = _pytest(tmp_path, "--fuzzgpu-backend", backend, "test_user.py")
        assert r.returncode == 1 and "1 failed" in r.stdout and want in r.stdout, r.stdout[-3000:] + r.stderr[-2000:]
        assert "Traceback" not in r.stdout and "Unrunnable" not in r.stdout and "Unsupported" not in r.stdout, r.stdout[-3000:]


def _static_histogram(findings: list, unchecked: list, instances: int = 0):
    from fuzzgpu.backends.base import Histogram

    meta = (("static", True), ("sass_findings", findings), ("sass_notes", []), ("sass_unchecked", unchecked))
    return Histogram(("P1:r0", "P1:r1"), (), instances, 0, 0.0, "static", meta)


def test_not_checked_is_only_a_run_that_checked_nothing():
    """``not_checked``: nothing ran and the SASS was not fully checked -- unless a SASS finding fails
    every property (the test then fails on the finding); a run that executed, or whose SASS was
    fully checked, is judged by the test's property."""
    from fuzzgpu import sass
    from fuzzgpu.pytest_plugin import not_checked
    from fuzzgpu.litmus import parse_file

    p = parse_file(LITMUS / "core" / "MP-relacq-gpu.litmus")
    gap = ["`fence.acquire.cta` (PTX line 62) has no known SASS: not checked"]
    bad = {"check": sass.CROSSING, "verdict": sass.FORBIDDEN, "direction": "hoisted above", "op_ptx": "ld.weak", "sync_ptx": "ld.acquire"}
    allowed = dict(bad, verdict="allowed")
    why = not_checked(p, _static_histogram([], gap))
    assert why is not None and why.startswith(f"{p.name}: nothing ran, and its SASS was not fully checked (1 thing(s)") and gap[0] in why
    assert not_checked(p, _static_histogram([allowed], gap)) is not None  # a note the ISA allows: still nothing that fails
    assert not_checked(p, _static_histogram([bad], gap)) is None  # the property fails on the finding
    assert not_checked(p, _static_histogram([], [])) is None  # fully checked
    assert not_checked(p, _static_histogram([], gap, instances=1000)) is None  # outcomes were run and judged


def test_a_corpus_entry_passed_by_the_model_says_so_in_the_terminal(tmp_path):
    """Hostile review (B): docs/fuzzing.md said ``-rA`` shows that an entry passed only by the
    model's re-judgement of its recorded outcomes; only a JUnit property said it.  ``-v`` and ``-rA``
    read ``PASSED (checked by the model only)``, and ``-rA`` prints what checked it."""
    d = tmp_path / "corpus"
    d.mkdir()
    src = ROOT / "corpus" / "73416467ed043580.json"  # a GPU finding expected to reproduce: the simulation cannot run it
    (d / src.name).write_text(src.read_text())
    r = _pytest(tmp_path, "-rA", "-v", "--fuzzgpu-corpus", str(d), "--fuzzgpu-backend", "sim", str(d))
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout[-3000:] + r.stderr[-2000:]
    assert f"PASSED (checked by the model only) corpus/{src.name}::MBAR[model]" in r.stdout, r.stdout[-3000:]
    assert "checked by the model only: the recorded outcomes re-judged by this fuzzgpu's oracle" in r.stdout, r.stdout[-3000:]


@pytest.mark.parametrize("value", ["-5", "0.4", "0", "nan", "1e30", "abc"])
def test_a_bad_instance_count_is_one_usage_error(tmp_path, value):
    """Hostile review (C): ``--fuzzgpu-instances`` was any float: -5 ran and passed, 0.4 ran 0
    instances and passed, 0 ran the default 1e8, nan and 1e30 were a traceback in every test.  It is
    what the CLI's ``--instances`` takes, refused once at parsing (pytest exit 4) naming the option."""
    (tmp_path / "test_one.py").write_text("def test_one(fuzzgpu_run):\n    pass\n\ndef test_two():\n    pass\n")
    r = _pytest(tmp_path, "--fuzzgpu-backend", "sim", f"--fuzzgpu-instances={value}", "test_one.py")
    assert r.returncode == 4 and "passed" not in r.stdout and "Traceback" not in r.stdout + r.stderr, r.stdout[-2000:] + r.stderr[-2000:]
    assert r.stderr.count("argument --fuzzgpu-instances: ") == 1 and repr(value) in r.stderr, r.stderr[-2000:]


def test_fuzzgpu_run_takes_a_positive_whole_instance_count(tmp_path):
    """``fuzzgpu_run(p, instances=0)`` ran the option's default (``instances or default``), -5 ran nothing
    and passed: the argument is checked as the option is; 1e3 is 1000 instances."""
    (tmp_path / "test_user.py").write_text(textwrap.dedent(f'''
        import pytest
        from fuzzgpu.litmus import parse_file

        P = parse_file({str(LITMUS / "core" / "MP-relacq-gpu.litmus")!r})

        @pytest.mark.parametrize("n", [0, -5, 0.4, float("nan"), True, "7"])
        def test_bad(fuzzgpu_run, n):
            with pytest.raises(ValueError, match="fuzzgpu_run.instances=.*must be a positive whole number"):
                fuzzgpu_run(P, instances=n)

        def test_good(fuzzgpu_run):
            assert fuzzgpu_run(P, instances=1e3).instances == 1000
            assert fuzzgpu_run(P).instances == 2000
    '''))
    r = _pytest(tmp_path, "-q", "--fuzzgpu-backend", "sim", "--fuzzgpu-instances", "2e3", "test_user.py")
    assert r.returncode == 0 and "7 passed" in r.stdout, r.stdout[-3000:] + r.stderr[-2000:]


@pytest.mark.parametrize("args, error", [
    (["--fuzzgpu-backend", "sim", "--fuzzgpu-sim-fault", "bogus"], "unknown --fuzzgpu-sim-fault 'bogus' (known: relacq-as-relaxed"),
    (["--fuzzgpu-backend", "sim", "--fuzzgpu-sim-fault", "timeout:2"], "--fuzzgpu-sim-fault 'timeout:2': the rate must be"),
    (["--fuzzgpu-backend", "sim", "--fuzzgpu-sim-fault", "hang"], "--fuzzgpu-sim-fault hang stops the process"),
    (["--fuzzgpu-backend", "static", "--fuzzgpu-sim-fault", "relacq-as-relaxed"],
     "--fuzzgpu-sim-fault relacq-as-relaxed: only with --fuzzgpu-backend sim (backend static injects no fault)"),
    (["--fuzzgpu-sim-fault", "relacq-as-relaxed"], "only with --fuzzgpu-backend sim (backend auto injects no fault)"),
])
def test_a_bad_fault_option_is_one_usage_error(tmp_path, args, error):
    """Hostile review (D): a bad ``--fuzzgpu-sim-fault`` (unknown, a bad rate, one that stops the
    process, on a backend without faults) was a traceback in every test that used the backend, and
    a session with no such test passed.  One usage error at configuration (pytest exit 4), also under
    pytest-xdist's controller."""
    (tmp_path / "test_one.py").write_text("def test_one(fuzzgpu_run):\n    pass\n\ndef test_two(fuzzgpu_run):\n    pass\n")
    r = _pytest(tmp_path, *args, "test_one.py")
    out = r.stdout + r.stderr
    assert r.returncode == 4 and "passed" not in out and "Traceback" not in out, out[-2000:]
    assert out.count(error) == 1 and out.count("ERROR") == 1, out[-2000:]


def test_the_cuda_backend_without_a_gpu_is_one_environment_error(tmp_path):
    """Hostile review (D): ``--fuzzgpu-backend cuda`` with no GPU was the EnvError's traceback in
    every test.  One line saying why, exit 3 (docs/reliability.md: no usable GPU is the environment)."""
    from fuzzgpu.backends.cuda import gpu_unavailable

    why = gpu_unavailable()
    if why is None:
        pytest.skip("a GPU is usable here")
    (tmp_path / "test_one.py").write_text("def test_one(fuzzgpu_run):\n    pass\n\ndef test_two(fuzzgpu_run):\n    pass\n")
    r = _pytest(tmp_path, "--fuzzgpu-backend", "cuda", "test_one.py")
    assert r.returncode == 3 and "passed" not in r.stdout and "Traceback" not in r.stdout + r.stderr, r.stdout[-2000:] + r.stderr[-2000:]
    assert r.stderr.strip() == f"Exit: --fuzzgpu-backend cuda: no usable GPU: {why} (on a machine without a GPU: " \
                               "--fuzzgpu-backend auto, static or sim)", r.stderr


def test_gpu_unavailable_says_why_in_one_line(monkeypatch):
    """What ``--fuzzgpu-backend cuda`` says without a GPU: PyCUDA missing, no device, a driver error."""
    from fuzzgpu.backends import cuda
    from fuzzgpu.errors import EnvError

    class Drv:
        class Error(Exception):
            pass

        count = 0

        @staticmethod
        def init() -> None:
            if Drv.count < 0:
                raise Drv.Error("cuInit failed: no CUDA-capable device is detected")

        class Device:
            @staticmethod
            def count() -> int:
                return max(Drv.count, 0)

    def missing():
        raise EnvError("the cuda backend needs PyCUDA")

    monkeypatch.setattr(cuda, "_import_gpu", missing)
    assert cuda.gpu_unavailable() == "the cuda backend needs PyCUDA"
    monkeypatch.setattr(cuda, "_import_gpu", lambda: (Drv, None))
    assert cuda.gpu_unavailable() == "no CUDA device"
    Drv.count = -1
    assert cuda.gpu_unavailable() == "no usable CUDA driver or device: cuInit failed: no CUDA-capable device is detected"
    Drv.count = 2
    assert cuda.gpu_unavailable() is None


def test_one_corpus_entry_file_is_replayed(tmp_path):
    """Hostile review (G): ``--fuzzgpu-corpus FILE.json`` said "no such folder" of a file that exists.
    One entry file is replayed, as ``fuzzgpu replay FILE`` does; a path that does not exist says so."""
    src = ROOT / "corpus" / "73416467ed043580.json"
    entry = tmp_path / "one.json"
    entry.write_text(src.read_text())
    r = _pytest(tmp_path, "-rA", "--fuzzgpu-corpus", str(entry), "--fuzzgpu-backend", "sim")
    assert r.returncode == 0 and "1 passed" in r.stdout and "one.json::MBAR[model]" in r.stdout, r.stdout[-3000:] + r.stderr[-2000:]
    r = _pytest(tmp_path, "--fuzzgpu-corpus", str(tmp_path / "missing.json"), "--fuzzgpu-backend", "sim")
    assert r.returncode == 4 and f"--fuzzgpu-corpus {tmp_path / 'missing.json'}: no such corpus folder or entry file" in r.stderr, r.stderr


def _documented_corpus_commands() -> list[list[str]]:
    """docs/fuzzing.md's corpus replay through the plugin and tox.ini's ``[testenv:corpus]`` one."""
    import shlex

    doc = (ROOT / "docs" / "fuzzing.md").read_text()
    docs = [shlex.split(line[2:].split("#", 1)[0]) for line in doc.splitlines() if line.startswith("$ pytest --fuzzgpu-corpus")]
    tox = (ROOT / "tox.ini").read_text().split("[testenv:corpus]", 1)[1].split("\n[", 1)[0]
    toxs = [shlex.split(line.replace("{posargs}", "")) for line in tox.splitlines() if line.strip().startswith("pytest ")]
    assert len(docs) == 1 and len(toxs) == 1, (docs, toxs)
    return docs + toxs


@needs_nvcc
def test_the_documented_corpus_replay_replays_only_the_corpus(tmp_path):
    """Hostile review (E): ``pytest --fuzzgpu-corpus corpus/ --fuzzgpu-backend auto`` from the
    repository root (docs/fuzzing.md, tox -e corpus) also collected the project's ~5,800 tests
    (pyproject's ``testpaths``).  The commands name the corpus as the path to collect, so pytest
    collects nothing else: run as documented, with the console script, they replay the two entries."""
    script = Path(sys.executable).with_name("pytest")
    for argv in _documented_corpus_commands():
        assert argv[0] == "pytest" and "--fuzzgpu-corpus" in argv
        corpus = argv[argv.index("--fuzzgpu-corpus") + 1]
        assert argv[-1].rstrip("/") == corpus.rstrip("/"), argv  # the corpus is the path pytest collects
        cmd = [str(script), *argv[1:]] if script.exists() else [sys.executable, "-m", *argv]
        r = subprocess.run(cmd + ["-p", "no:cacheprovider", "-p", "no:xdist", "-rA"], check=False, capture_output=True, text=True,
                           cwd=ROOT, timeout=300)
        assert r.returncode == 0, (argv, r.stdout[-3000:], r.stderr[-2000:])
        assert r.stdout.count("\nPASSED ") == 2 and "tests/" not in r.stdout and "deselected" not in r.stdout, r.stdout[-3000:]
