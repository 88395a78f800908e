"""The README's test command and the tests marked ``slow`` (docs/testing.md): the command leaves the
slow set out, unless a run asks for it, and CI (.ci/run) runs the README's command first, exactly,
then the slow set in a step of its own."""

from __future__ import annotations

import re
import subprocess
import sys

from paths import ROOT

README_COMMAND = "python3 -m pip install -e '.[test,sass,plot,ray]' && python3 -m pytest -n auto"


def test_ci_runs_the_readme_command_then_the_slow_set() -> None:
    assert README_COMMAND in (ROOT / "README.md").read_text()
    steps = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if "pytest -n auto" in line]
    assert [s.replace(" -q", "") for s in steps] == [README_COMMAND, "python3 -m pytest -n auto -m slow"], steps


def _collected(*args: str) -> tuple[int, int]:
    """(collected, deselected) of ``pytest --collect-only`` in the repository."""
    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
                       cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    m = re.search(r"(\d+)(?:/(\d+))? tests? collected(?: \((\d+) deselected\))?", r.stdout)
    assert m, r.stdout[-2000:]
    return int(m.group(1)), int(m.group(3) or 0)


def test_the_slow_set_is_deselected_unless_asked_for() -> None:
    files = ("tests/campaign/test_campaign_kill.py", "tests/model/test_termination.py")  # all slow; none slow
    n, deselected = _collected(*files)
    assert deselected > 0 and n > 0
    assert _collected("--slow", *files) == (n + deselected, 0)
    # a slow test named by its node id runs
    assert _collected("tests/campaign/test_campaign_kill.py::test_one_campaign_per_corpus") == (1, 0)
