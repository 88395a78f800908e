"""Exit status that tells the truth (issue 13.2, 13.6): 0 clean, 1 a finding, 2 bad usage or
input, 3 the environment failed or something was not checked -- never 1 for a crash, never 0 for
something that was not checked.  A few cases run as real subprocesses, for the real status."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from fuzzgpu import cli

from command import fuzzgpu

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"
ENTRIES = {json.loads(p.read_text())["sass"] != []: p for p in sorted(CORPUS.glob("*.json")) if p.name != "known.json"}
OUTCOME_ENTRY = ENTRIES[False]  # an observed-outcome finding (the sim backend replays it)
SASS_ENTRY = ENTRIES[True]  # a SASS finding (only the static backend checks it)


def run_main(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = cli.main(argv)
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 2
    return rc, out.getvalue(), err.getvalue()


def test_replay_instances_must_be_positive():
    for bad in (["--instances", "-5"], ["--max-instances", "0"], ["--instances", "0.5"], ["--instances", "inf"]):
        rc, _, err = run_main(["replay", str(OUTCOME_ENTRY), "--backend", "sim", *bad])
        assert rc == 2 and bad[0] in err and len(err.strip().splitlines()) == 1


def test_replay_refuses_process_faults_instead_of_skipping_everything():
    rc, out, err = run_main(["replay", str(CORPUS), "--backend", "sim", "--sim-fault", "hang"])
    assert rc == 2 and "--sim-fault hang" in err and "supervised" in err


def test_a_corpus_that_could_not_be_checked_is_not_clean(tmp_path):
    """Every entry 'not checked' (a SASS finding on the sim backend) is exit 3, not 0."""
    (tmp_path / SASS_ENTRY.name).write_text(SASS_ENTRY.read_text())
    rc, out, err = run_main(["replay", str(tmp_path), "--backend", "sim"])
    assert rc == 3 and "NOT CHECKED" in out and "1 not run here" in out


def test_a_compile_failure_is_an_error_not_a_skip(tmp_path, monkeypatch):
    from fuzzgpu.backends import static
    from fuzzgpu.backends.cuda import CompileError

    def fail(self, program, config=None):
        raise CompileError("nvcc failed: error: identifier \"x\" is undefined")

    monkeypatch.setattr(static.StaticBackend, "run", fail)
    (tmp_path / SASS_ENTRY.name).write_text(SASS_ENTRY.read_text())
    rc, out, err = run_main(["replay", str(tmp_path), "--backend", "static"])
    assert rc == 3, (rc, out, err)
    assert "ERROR" in err and "nvcc failed" in err and "skipped" not in out.lower()


def test_a_gpu_entry_on_the_sim_is_not_checked(tmp_path):
    """The shipped outcome entry was found on an H200: the simulation samples the model, so its
    passing is "not reproducible on sim", not "fixed", and the replay is not clean (exit 3) -- for an
    entry nobody has judged (``expect`` new; the shipped one expects to reproduce and is checked by
    the model: tests/corpus/test_replay_expect.py)."""
    data = json.loads(OUTCOME_ENTRY.read_text())
    data["expect"] = "new"
    (tmp_path / OUTCOME_ENTRY.name).write_text(json.dumps(data))
    rc, out, err = run_main(["replay", str(tmp_path), "--backend", "sim", "--max-instances", "100000"])
    assert rc == 3, (out, err)
    assert "not reproducible on sim" in out and "0 fixed" in out and "0 not run here, 1 run but not reproducible on sim" in out


def test_an_internal_error_is_never_exit_1(monkeypatch):
    from fuzzgpu.commands import check

    def boom(args):
        raise RuntimeError("a bug")

    monkeypatch.setattr(check, "run", boom)
    rc, out, err = run_main(["check", "x.litmus"])
    assert rc == 3 and "internal error: RuntimeError: a bug" in err and "Traceback" not in err


def test_check_loop_bound_must_be_small_and_non_negative(tmp_path):
    f = tmp_path / "t.litmus"
    f.write_text("PTX t\n{ x=0; }\n P0 ;\n st.weak x, 1 ;\nexists (x == 1)\n")
    assert run_main(["check", "--loop-bound", "0", str(f)])[0] == 0
    for bad in ("-1", "65", "x"):
        rc, _, err = run_main(["check", "--loop-bound", bad, str(f)])
        assert rc == 2 and "--loop-bound" in err


def test_check_goes_on_after_a_bad_file(tmp_path):
    good = tmp_path / "a.litmus"
    good.write_text("PTX t\n{ x=0; }\n P0 ;\n st.weak x, 1 ;\nexists (x == 1)\n")
    bad = tmp_path / "b.litmus"
    bad.write_text("PTX t\n{ x=0; }\n P0 ;\n st.bogus x, 1 ;\nexists (x == 1)\n")
    good2 = tmp_path / "c.litmus"
    good2.write_text(good.read_text())
    rc, out, err = run_main(["check", str(tmp_path)])
    assert rc == 2 and out.count("Observation t") == 2 and str(bad) in err


def test_an_error_never_echoes_a_10MB_line(tmp_path):
    f = tmp_path / "t.litmus"
    f.write_text("PTX t\n{ x=0; }\n P0 ;\n " + "q" * (10 << 20) + " x, 1 ;\nexists (x == 1)\n")
    rc, _, err = run_main(["check", str(f)])
    assert rc == 2 and len(err) < 1000 and err.count("\n") == 1


def test_explain_does_not_print_terminal_escapes(tmp_path):
    d = json.loads(OUTCOME_ENTRY.read_text())
    d["environment"]["gpu"] = "\x1b[5mblink\x1b]0;pwned\x07\x1b[2J\x1b[31mred\r\x08\u202e"
    f = tmp_path / "e.json"
    f.write_text(json.dumps(d))
    rc, out, err = run_main(["explain", str(f)])
    assert rc == 0, err
    assert not any(c in out for c in "\x1b\x07\r\x08\u202e")
    assert "\\x1b[2J" in out and "red" in out
    # escapes in the litmus text: the text no longer says what the program says -- the entry is
    # refused (issue 27, item 8), in one line that echoes none of them
    d["litmus"] = "PTX x\x1b]0;pwned\x07\n\x1b[2J\x1b[31mred\r\x08" + d["litmus"]
    f.write_text(json.dumps(d))
    rc, out, err = run_main(["explain", str(f)])
    assert rc == 2 and "field 'litmus' does not match field 'program'" in err and err.count("\n") == 1
    assert not any(c in out + err for c in "\x1b\x07\r\x08\u202e")


# -- real processes: the status a CI job reads ---------------------------------------------


def test_subprocess_statuses(tmp_path):
    bad = tmp_path / "c"
    bad.mkdir()
    (bad / "x.json").write_text('{"schema": "fuzzgpu.corpus", "histogram": "x"}')
    (bad / OUTCOME_ENTRY.name).write_text(OUTCOME_ENTRY.read_text())
    r = fuzzgpu("replay", str(bad), "--backend", "sim", "--max-instances", "10000")
    assert r.returncode == 2 and str(bad / "x.json") in r.stderr and "fixed" in r.stdout, (r.stdout, r.stderr)
    r = fuzzgpu("replay", str(CORPUS), "--backend", "sim", "--instances", "-5")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    r = fuzzgpu("campaign", "--profile", "classic", "--backend", "sim", "--time", "5", "--in-process", "--no-live",
                "--corpus", "/proc/1/fdinfo")
    assert r.returncode == 3 and "environment error" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.gpu
def test_run_without_gpu_is_an_environment_error():
    """Only meaningful where PyCUDA imports: on a GPU machine this runs the test for real (exit 0/1)."""
    r = fuzzgpu("run", "--instances", "65536", str(ROOT / "tests" / "litmus" / "core" / "MP-relacq-gpu.litmus"))
    assert r.returncode in (0, 1, 3) and "Traceback" not in r.stderr


def test_an_unreadable_corpus_folder_is_an_environment_error(tmp_path, monkeypatch):
    """glob hides an EACCES; replay must not call an unreadable corpus empty and exit 0."""
    import errno
    import os

    real = os.listdir

    def denied(path="."):
        if str(path) == str(tmp_path):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "listdir", denied)
    rc, out, err = run_main(["replay", str(tmp_path), "--backend", "sim"])
    assert rc == 3 and "environment error" in err and str(tmp_path) in err and "Permission denied" in err


@pytest.mark.parametrize("extra", [[], ["--fixed"], ["--json"], ["--json", "--fixed"]])
def test_a_replay_of_an_empty_folder_is_bad_input_not_clean(tmp_path, extra):
    """Hostile review: ``fuzzgpu replay EMPTY/`` said "no corpus entries" and exited 0, so a
    CI job pointed at the wrong folder (or a corpus never checked out) read as clean having replayed
    nothing.  A folder without entries is bad input: exit 2, one line naming it (and with ``--json``
    the error as a JSON object on stdout, as every command's); a state folder or a known list alone
    is no entry either."""
    (tmp_path / ".fuzzgpu").mkdir()
    (tmp_path / "known.json").write_text('{"schema": "fuzzgpu.known", "version": 1, "known": []}')
    rc, out, err = run_main(["replay", str(tmp_path), "--backend", "sim", *extra])
    assert rc == 2, (rc, out, err)
    assert err.count("\n") == 1 and f"{tmp_path}: no corpus entries" in err and "*.json" in err, err
    if "--json" in extra:
        doc = json.loads(out)
        assert doc["exit"] == 2 and doc["kind"] == "usage" and f"{tmp_path}: no corpus entries" in doc["error"]
    else:
        assert out == ""


def test_replay_of_a_clean_campaigns_folder_says_so(tmp_path):
    """A campaign that found nothing leaves its state (.fuzzgpu/) and no entry: replaying that folder
    checks nothing (exit 2, as any folder without entries) and the line says why there is none."""
    (tmp_path / ".fuzzgpu").mkdir()
    rc, out, err = run_main(["replay", str(tmp_path), "--backend", "sim"])
    assert rc == 2 and out == "", (rc, out, err)
    assert err.count("\n") == 1 and "no corpus entries" in err and "saved no finding" in err, err



def test_a_reader_that_goes_away_is_no_clean_exit():
    """``fuzzgpu ... | head -1``: standard output closed before the command wrote its result.  It exited 0
    ("nothing found") -- a hostile review saw ``sass`` of a kernel with a finding exit 0 one time in three.
    Now the shell's SIGPIPE status, 141, and no traceback."""
    import os
    import subprocess
    import sys

    r, w = os.pipe()
    os.close(r)
    try:
        p = subprocess.run([sys.executable, "-m", "fuzzgpu", "check", str(ROOT / "tests" / "litmus" / "core" / "CoWW.litmus")],
                           stdout=w, stderr=subprocess.PIPE, text=True, timeout=300)
    finally:
        os.close(w)
    assert p.returncode == 141 and "Traceback" not in p.stderr, (p.returncode, p.stderr)
