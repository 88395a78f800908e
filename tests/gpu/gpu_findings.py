"""The known sm_90 finding that GPU tests mark xfail, and the one exception that may fail them.

A lone ``mbarrier.try_wait`` whose predicate is only stored (no branch on it) does not hold back the
next load on an H200 (SASS: TRYWAIT P0; LDS with nothing waiting for P0): the oracle's forbidden
outcome was seen at 0.7% (MBAR-MP-default) and 12.7% (TMA-load-mbarrier-acquire) --
bench/results/harness/extensions-h200.md, docs/findings.md.  The same tests with the wait in a loop: 0.

Only :class:`ForbiddenSeen` -- raised where the oracle judges an observed outcome forbidden -- is the
finding.  Every other failure of such a test (a CUDA driver error, a harness check: instances not
accounted for, a value no store wrote, a copy that never delivers) is a failure, not an xfail: session
7's H200 run counted a driver error (``cuTensorMapEncodeTiled``: CUDA_ERROR_INVALID_VALUE) as the
finding, and ``raises=AssertionError`` still took a harness assertion for it.
"""

from __future__ import annotations

from typing import Any

import pytest


class ForbiddenSeen(AssertionError):
    """An observed outcome the oracle judges forbidden (the only failure LONE_TRY_WAIT expects)."""


def no_forbidden(verdict: str, *what: Any) -> None:
    """Raise :class:`ForbiddenSeen` when the oracle's verdict of an observed outcome is forbidden."""
    if verdict == "forbidden":
        raise ForbiddenSeen(what)


LONE_TRY_WAIT = pytest.mark.xfail(reason="lone try_wait does not order the next load on sm_90 (finding, see "
                                  "bench/results/harness/extensions-h200.md)", strict=False, raises=ForbiddenSeen)
