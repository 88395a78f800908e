"""The test modules import the way the ``pytest`` console script can collect them: tests/ has no
``__init__.py``, so pytest puts each test's folder and tests/ (its conftest) on ``sys.path``, never
the repository root -- ``from tests.paths import ...`` worked only under ``python -m pytest`` run
from the root (its working directory on ``sys.path``).  Hostile review 2026-12-05, E."""

from __future__ import annotations

import os
import subprocess
import sys

from paths import ROOT

#: the folders whose modules imported ``tests.*``
FOLDERS = ("tests/bench", "tests/stress", "tests/instr", "tests/model")


def test_the_test_modules_collect_without_the_repository_on_sys_path(tmp_path):
    """Collected from another working directory, as the console script runs (its ``sys.path[0]`` is
    the script's folder): ``pytest --co tests/bench`` failed with ``ModuleNotFoundError: No module
    named 'tests'`` in test_anchor_bench.py and test_compile_phases.py."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                        "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(ROOT), *(str(ROOT / f) for f in FOLDERS)],
                       check=False, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert r.returncode == 0 and "ModuleNotFoundError" not in r.stdout and "error" not in r.stdout.lower().splitlines()[-1], \
        r.stdout[-3000:] + r.stderr[-2000:]
