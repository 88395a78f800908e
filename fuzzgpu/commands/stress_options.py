"""The stress knobs as command-line options, one per :class:`~fuzzgpu.stress.space.StressConfig` field
(the one place: adding a knob to StressConfig adds its option), and back: the options that
reproduce a configuration (``fuzzgpu tune`` prints them as a ``fuzzgpu run`` command line).

A knob ``name`` is the option ``--name`` with the underscores as dashes: an integer knob takes a
value within :data:`~fuzzgpu.stress.space.BOUNDS` (``--stride 32``); a true/false knob is a pair of
flags (``--barrier`` / ``--no-barrier``).  Every option defaults to "not given" (None), so a
command can tell an option given on its command line from a value it fills in:
:func:`resolve` puts the explicit options over a ``[stress]`` file over the command's defaults."""

from __future__ import annotations

import argparse
import dataclasses
import shlex
from typing import Any, Callable, Mapping, Sequence

from ..stress.space import BOUNDS, StressConfig, knob_error, knob_type
from .argtypes import number

#: the argparse ``dest`` of knob ``name`` is ``DEST_PREFIX + name``
DEST_PREFIX = "stress_knob_"


def knob_names() -> tuple[str, ...]:
    """The StressConfig knobs, in field order."""
    return tuple(f.name for f in dataclasses.fields(StressConfig))


def option(name: str) -> str:
    """The option of knob ``name``: ``--`` and the name with dashes (``--test-ctas``)."""
    return "--" + name.replace("_", "-")


def _int_of(name: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        v = number(text, int, "an integer")
        why = knob_error(name, v)
        if why is not None:
            raise argparse.ArgumentTypeError(why)
        return v

    parse.__name__ = name  # argparse names the type in some messages
    return parse


def add_options(parser: argparse.ArgumentParser, defaults: StressConfig, title: str, description: str) -> None:
    """One option per knob in a group ``title``; ``defaults`` are shown in the help (the command
    applies them through :func:`resolve`)."""
    group = parser.add_argument_group(title, description)
    for f in dataclasses.fields(StressConfig):
        text = str(f.metadata.get("help", f.name)).replace("%", "%%")
        default = getattr(defaults, f.name)
        dest = DEST_PREFIX + f.name
        if knob_type(f.name) is bool:
            group.add_argument(option(f.name), dest=dest, action=argparse.BooleanOptionalAction, default=None,
                               help=f"{text} (default: {'on' if default else 'off'})")
        else:
            lo, hi = BOUNDS.get(f.name, (0, 2**31 - 1))
            group.add_argument(option(f.name), dest=dest, type=_int_of(f.name), default=None,
                               metavar="N", help=f"{text}; {lo}..{hi} (default: {default})")


def explicit(args: argparse.Namespace) -> dict[str, Any]:
    """The knobs given on the command line."""
    return {n: v for n in knob_names() if (v := getattr(args, DEST_PREFIX + n, None)) is not None}


def resolve(defaults: StressConfig, from_file: Mapping[str, Any], given: Mapping[str, Any]) -> StressConfig:
    """``given`` (options) over ``from_file`` (a ``[stress]`` table's knobs) over ``defaults``."""
    return dataclasses.replace(defaults, **{**from_file, **given})


def arguments(config: StressConfig, defaults: StressConfig) -> list[str]:
    """The options that turn ``defaults`` into ``config`` (only the knobs that differ)."""
    out: list[str] = []
    for n in knob_names():
        v = getattr(config, n)
        if v == getattr(defaults, n):
            continue
        if isinstance(v, bool):
            out.append(option(n) if v else "--no-" + n.replace("_", "-"))
        else:
            out += [option(n), str(v)]
    return out


def command_line(words: Sequence[str]) -> str:
    """``words`` as one shell command line."""
    return " ".join(shlex.quote(w) for w in words)


__all__ = ["DEST_PREFIX", "knob_names", "option", "add_options", "explicit", "resolve", "arguments", "command_line"]
