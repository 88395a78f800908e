"""argparse types shared by the subcommands: each turns text into a value or a one-line error
(the text shown clipped: a value may be megabytes long)."""

from __future__ import annotations

import argparse
import math

from ..errors import clip


def _shown(text: str) -> str:
    return clip(repr(text), 60)


def non_negative_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {_shown(text)}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {_shown(text)}")
    return v


def positive_seconds(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return v


def whole_count(text: str) -> int:
    """A positive whole number, also written as 1e9."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {_shown(text)}") from None
    if not math.isfinite(v) or v < 1 or v != int(v):
        raise argparse.ArgumentTypeError(f"must be a positive whole number: {_shown(text)}")
    return int(v)
