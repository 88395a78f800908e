"""Where the tests find the project's and shared/'s files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
LITMUS = ROOT / "tests" / "litmus"
#: Dat3M's PTX litmus suite, read in place from ../shared (never copied)
DAT3M = ROOT.parent / "shared" / "peer-suites" / "dat3m-ptx"
#: the focused profile of the kill/restart tests
KILL_PROFILE = ROOT / "tests" / "profiles" / "kill-mp.toml"


def dat3m_cases(cases: list[Any], arity: int = 1) -> list[Any]:
    """The cases of a parametrization read from the Dat3M suite.  Where ../shared is not beside the
    checkout: one case, skipped with the reason.  Where the suite is there, its cases as read -- none
    is a collection error (pyproject.toml: ``empty_parameter_set_mark = "fail_at_collect"``), never
    zero cases that pass."""
    if DAT3M.is_dir():
        return cases
    return [pytest.param(*(None,) * arity, id="no-dat3m", marks=pytest.mark.skip(reason=f"Dat3M PTX suite not found at {DAT3M}"))]
