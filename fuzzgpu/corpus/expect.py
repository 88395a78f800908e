"""What CI expects of a corpus entry (its ``expect`` field), and a replay judged against it.

A corpus entry is a finding somebody decided to keep, for one of three reasons:

* ``reproduces`` -- a known hazard kept on purpose (the lone ``try_wait`` on an H200, FlashMLA's
  hoisted ``ld.global.nc``): a replay passes while the finding still shows, and fails when it
  silently stops -- the hardware or toolchain changed, or fuzzgpu lost the ability to see it;
* ``fixed`` -- a bug that was fixed (in the program, the toolchain or fuzzgpu): a replay passes while
  the property holds, and fails when the finding comes back;
* ``new`` -- a finding nobody has judged yet (what a campaign saves): a replay fails while it still
  violates its property, and passes once it no longer does.  An entry without the field (saved
  before expectations existed) is ``new``: replay judges it as it always did.

:func:`judge` turns what a replay saw (``violates``, ``fixed``, not checked, an error) into PASS,
FAIL, NOT CHECKED or ERROR with the reason; an entry this machine cannot check is never a pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

REPRODUCES = "reproduces"
FIXED = "fixed"
NEW = "new"
#: the values of an entry's ``expect`` field
EXPECTATIONS = (REPRODUCES, FIXED, NEW)

PASS = "pass"
FAIL = "fail"
NOT_CHECKED = "not-checked"
ERROR = "error"


def expectation(data: Mapping[str, Any]) -> str:
    """The entry's expectation; ``new`` when it has none (an entry saved before the field existed)."""
    e = data.get("expect")
    return e if isinstance(e, str) and e in EXPECTATIONS else NEW


def judge(expect: str, status: str, reason: str = "") -> tuple[str, str]:
    """(check, why) of a replay whose outcome was ``status`` (replay_entry's: ``violates``,
    ``fixed``, ``skipped``, ``not-reproducible``, ``error``) for an entry that expects ``expect``."""
    if status == "error":
        return ERROR, reason or "the replay failed"
    if status in ("skipped", "not-reproducible"):
        return NOT_CHECKED, f"not checked here ({reason})" if reason else "not checked here"
    if status == "violates":
        if expect == REPRODUCES:
            return PASS, "still reproduces, as expected"
        if expect == FIXED:
            return FAIL, "the finding is back: expected fixed, the entry violates its property again"
        return FAIL, ("still violates its property: a finding nobody has judged yet (expect new); set its expect to "
                      "'reproduces' to keep it as a known hazard, or fix it")
    if status == "fixed":
        if expect == REPRODUCES:
            return FAIL, ("no longer reproduces: expected to reproduce (a known hazard kept on purpose); the hardware or "
                          "toolchain changed, or fuzzgpu lost the ability to see it -- if it is really fixed, set expect to 'fixed'")
        return PASS, "the property holds" + (", as expected" if expect == FIXED else "")
    return ERROR, f"unknown replay status {status!r}"


__all__ = ["ERROR", "EXPECTATIONS", "FAIL", "FIXED", "NEW", "NOT_CHECKED", "PASS", "REPRODUCES", "expectation", "judge"]
