"""argparse types shared by the subcommands: each turns text into a value or a one-line error."""

from __future__ import annotations

import argparse


def non_negative_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {text!r}")
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
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if v < 1 or v != int(v):
        raise argparse.ArgumentTypeError(f"must be a positive whole number: {text!r}")
    return int(v)
