"""argparse types shared by the subcommands: each turns text into a value or a one-line error
(the text shown clipped: a value may be megabytes long)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Callable, TypeVar

from ..errors import UserError, clip


def _shown(text: str) -> str:
    return clip(repr(text), 60)


N = TypeVar("N", int, float)


def number(text: str, kind: Callable[[str], N], what: str) -> N:
    """``kind(text)`` (``int`` or ``float``), or the one-line error "not WHAT: TEXT"."""
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not {what}: {_shown(text)}") from None


def non_negative_int(text: str) -> int:
    v = number(text, int, "an integer")
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {_shown(text)}")
    return v


def positive_seconds(text: str) -> float:
    v = number(text, float, "a number of seconds")
    if not v > 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return v


#: the largest count an option takes (as a profile: 1e15 instances are days of an H200)
MAX_COUNT = 10**15


def at_most(kind: Callable[[str], int], limit: int) -> Callable[[str], int]:
    """``kind`` (non_negative_int, whole_count) that also refuses values above ``limit``: the
    harness computes with 32-bit words, so a knob past them would wrap, not stress."""

    def parse(text: str) -> int:
        v = kind(text)
        if v > limit:
            raise argparse.ArgumentTypeError(f"must be at most {limit}: {_shown(text)}")
        return v

    return parse


def whole_count(text: str) -> int:
    """A positive whole number, also written as 1e9, at most :data:`MAX_COUNT`."""
    v = number(text, float, "a number")
    if not math.isfinite(v) or v < 1 or v != int(v):
        raise argparse.ArgumentTypeError(f"must be a positive whole number: {_shown(text)}")
    if v > MAX_COUNT:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_COUNT:.0e}: {_shown(text)}")
    return int(v)


def check_output_file(option: str, path: str, what: str) -> None:
    """``option``'s value ``path`` names a file to write in an existing folder (``what``: the file,
    as the error says it, "a .toml file"); else a :class:`UserError` naming the option and the path
    (exit 2).  Asked before the command's work: a run, a replay, a tuning is not spent to fail on
    its output, and a missing folder is a typo to say, not one to create."""
    p = Path(path)
    if p.is_dir():
        raise UserError(f"{option} {path}: is a folder (expected the path of {what} to write)")
    if not p.parent.is_dir():
        raise UserError(f"{option} {path}: no such folder {str(p.parent)!r} (expected the path of {what} to write)")
