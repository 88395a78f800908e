"""Every example in every ``--help`` names files that exist, and the examples of the commands that
need no GPU run as pasted (issue 12.11: ``check``, ``explain`` and ``replay`` named files that did not
exist). Run from the repository root, as a user reading ``--help`` in a checkout would."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

import pytest
from paths import ROOT

COMMANDS = ("check", "sass", "run", "campaign", "replay", "explain", "tune", "necessity")
#: options whose value names a file that the command writes, not one it reads
OUTPUT_OPTIONS = {"--keep", "--out", "-o", "--corpus", "--sarif", "--write-baseline"}
PATHLIKE = re.compile(r"^[\w./-]+\.(litmus|json|cu|ptx|cubin|toml)$|^[\w.-]+/[\w./-]*$")


def help_text(command: str | None) -> str:
    args = [sys.executable, "-m", "fuzzgpu", *([command] if command else []), "--help"]
    return subprocess.run(args, capture_output=True, text=True, check=True, cwd=ROOT, timeout=120).stdout


def examples(text: str) -> list[list[str]]:
    out = []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("fuzzgpu ") and "<command>" not in s:
            cmd = re.split(r"\s{2,}|\s#", s)[0]  # drop the explanation after two spaces
            argv = shlex.split(cmd)
            if ">" in argv:  # a shell redirection: the command is what stands before it
                argv = argv[:argv.index(">")]
            out.append(argv)
    return out


def input_paths(argv: list[str]) -> list[str]:
    paths = []
    for prev, tok in zip([""] + argv, argv):
        if prev in OUTPUT_OPTIONS or tok.startswith("-") or "=" in tok:
            continue
        if PATHLIKE.match(tok) and tok not in COMMANDS:
            paths.append(tok)
    return paths


@pytest.mark.parametrize("command", (None, *COMMANDS))
def test_help_examples_name_files_that_exist(command):
    exs = examples(help_text(command))
    assert exs, f"fuzzgpu {command or ''} --help has no examples"
    missing = [(" ".join(a), p) for a in exs for p in input_paths(a) if not (ROOT / p).exists()]
    assert not missing, missing


@pytest.mark.parametrize("command", ("check", "explain", "necessity"))
def test_examples_of_cpu_commands_run_as_pasted(command):
    for argv in examples(help_text(command)):
        if "--backend" in argv:  # a GPU run: its files are checked above
            continue
        r = subprocess.run([sys.executable, "-m", *argv], capture_output=True, text=True, check=False, cwd=ROOT, timeout=300)
        assert r.returncode in (0, 1), (argv, r.stderr[-1500:])


@pytest.mark.slow
@pytest.mark.parametrize("backend", ("static", "sim"))
def test_the_plugin_examples_in_docs_fuzzing_run_on_a_cpu_machine(tmp_path, backend):
    """docs/fuzzing.md's own-tests examples, each block pasted into a test file as it stands, run
    with no GPU as the doc says, on static (``auto`` without a GPU) and sim: the first failed on
    Hypothesis's deadline with the static backend, and so did the cp.async one (hostile review
    2026-12-05, F: an ExceptionGroup whose ``DeadlineExceeded`` buried the race verdict)."""
    import os

    doc = (ROOT / "docs" / "fuzzing.md").read_text()
    blocks = [b.split("```", 1)[0] for b in doc.split("## Using the strategies in your own tests", 1)[1].split("```python")[1:3]]
    assert "def test_mp_model" in blocks[0] and "def test_my_cp_async_pipeline" in blocks[1]
    for i, block in enumerate(blocks):
        (tmp_path / f"test_doc_example{i}.py").write_text(block)
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-rA", "--fuzzgpu-backend", backend,
                        "test_doc_example0.py", "test_doc_example1.py"], capture_output=True, text=True, check=False, cwd=tmp_path, timeout=600,
                       env=dict(os.environ, COLUMNS="1000"))  # the summary's lines whole
    out = r.stdout
    # the MP test passes; the PDL test passes or finds a stale read in its 20 draws (which it draws
    # is random); the cp.async test fails with its race (on static also NOT CHECKED for a wgmma
    # program static cannot compile); none fails on anything else (Hypothesis's deadline)
    assert r.returncode == 1 and "DeadlineExceeded" not in out and "Error" not in out.replace("AssertionError", ""), out[-3000:] + r.stderr[-2000:]
    assert "PASSED test_doc_example0.py::test_mp_model" in out, out[-3000:]
    assert ("PASSED test_doc_example0.py::test_pdl_never_stale" in out
            or "FAILED test_doc_example0.py::test_pdl_never_stale - AssertionError: user:fresh" in out), out[-3000:]
    assert "FAILED test_doc_example1.py::test_my_cp_async_pipeline" in out and "fuzzgpu: race: FAIL: " in out, out[-3000:]


def stated_exits(text: str) -> list[tuple[list[str], str]]:
    """Each example of ``text`` with its explanation: the words after the command on its line and
    on the more deeply indented lines that follow it."""
    out: list[tuple[list[str], str]] = []
    following = False  # the line before was an example or its explanation
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("fuzzgpu ") and "<command>" not in s:
            parts = re.split(r"\s{2,}|\s#", s, maxsplit=1)
            out.append((shlex.split(parts[0]), parts[1] if len(parts) > 1 else ""))
            following = True
        elif following and s and line.startswith("    "):
            out[-1] = (out[-1][0], f"{out[-1][1]} {s}")
        else:
            following = False
    return out


def test_top_level_examples_state_their_exit_status_and_give_it():
    """``fuzzgpu --help``'s examples each say the exit status they give, and those that need no GPU
    give it, run as pasted from a checkout (its first example exited 3, its help saying nothing of it)."""
    import shutil

    exs = stated_exits(help_text(None))
    assert [a[:2] for a, _ in exs][:2] == [["fuzzgpu", "check"]] * 2
    for argv, why in exs:
        m = re.search(r"\(exit (\d)", why)
        assert m, f"{' '.join(argv)}: its explanation states no exit status: {why!r}"
        if argv[1] == "tune" or (argv[1] == "sass" and shutil.which("nvcc") is None):
            continue  # a GPU (tune); nvcc (sass)
        r = subprocess.run([sys.executable, "-m", *argv], capture_output=True, text=True, check=False, cwd=ROOT, timeout=300)
        assert r.returncode == int(m.group(1)), (argv, r.stderr[-1500:])
        if r.returncode == 3:  # the file the help names as not covered is the one the command says is
            named = re.search(r"-- (\S+\.litmus)", why)
            assert named and r.stderr.count("\n") == 1 and named.group(1) in r.stderr and "not covered" in r.stderr, r.stderr


def test_check_says_a_file_level_error_without_a_line(tmp_path):
    """An error of a whole file (not covered by the oracle, unreadable) is ``file: message``, on
    stderr and in --json's "error" -- not ``file:0:0: message`` (``file:line:col`` is for a place)."""
    import json

    loop = ROOT / "tests" / "litmus" / "termination" / "Loop-with-write.litmus"
    missing = tmp_path / "missing.litmus"
    for args, want in (([str(loop)], f"{loop}: Always only within the loop bound: "),
                       ([str(missing)], f"{missing}: cannot read: ")):
        r = subprocess.run([sys.executable, "-m", "fuzzgpu", "check", *args], capture_output=True, text=True, check=False,
                           cwd=ROOT, timeout=300)
        assert r.stderr.startswith(want) and ":0:0" not in r.stderr, r.stderr
        r = subprocess.run([sys.executable, "-m", "fuzzgpu", "check", "--json", *args], capture_output=True, text=True,
                           check=False, cwd=ROOT, timeout=300)
        assert json.loads(r.stdout)["error"] == r.stderr.strip(), (r.stdout, r.stderr)
