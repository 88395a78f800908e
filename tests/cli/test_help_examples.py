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
@pytest.mark.parametrize("backend", ("static",))
def test_the_plugin_example_in_docs_fuzzing_runs_on_a_cpu_machine(tmp_path, backend):
    """docs/fuzzing.md's own-tests example, pasted into a test file, runs with no GPU as the doc says
    (it failed on Hypothesis's deadline with the static backend)."""
    doc = (ROOT / "docs" / "fuzzing.md").read_text()
    block = doc.split("## Using the strategies in your own tests", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    (tmp_path / "test_doc_example.py").write_text(block)
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-p", "no:xdist", "--fuzzgpu-backend", backend,
                        "--fuzzgpu-instances", "2000", "test_doc_example.py"], capture_output=True, text=True, check=False, cwd=tmp_path, timeout=600)
    # the MP test passes; the PDL test passes or finds a stale read in its 20 draws (which it
    # draws is random), and never fails on anything else (it failed on Hypothesis's deadline)
    assert "DeadlineExceeded" not in r.stdout and "Error" not in r.stdout.replace("AssertionError", ""), r.stdout[-3000:]
    if r.returncode == 0:
        assert "2 passed" in r.stdout
    else:
        assert r.returncode == 1 and "1 failed, 1 passed" in r.stdout, r.stdout[-3000:] + r.stderr[-2000:]
        assert "test_doc_example.py::test_pdl_never_stale - AssertionError: user:fresh" in r.stdout, r.stdout[-3000:]
