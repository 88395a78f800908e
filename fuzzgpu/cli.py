"""The ``fuzzgpu`` command line.  Each subcommand lives in ``fuzzgpu/commands/<name>.py`` and
provides ``HELP`` (one line), ``DESCRIPTION`` (the --help text), ``configure(parser)`` and
``run(args) -> int``.  Errors meant for the user are :class:`fuzzgpu.errors.UserError`: printed as
one line on stderr, exit status 2, no traceback."""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from . import __version__
from .errors import SourceError, UserError

#: subcommand name -> module under fuzzgpu.commands
COMMANDS: dict[str, str] = {
    "check": "check",
    "sass": "sass",
    "run": "run",
    "campaign": "campaign",
    "replay": "replay",
    "explain": "explain",
}

EPILOG = """\
examples:
  fuzzgpu check tests/litmus                 model-check every .litmus file under a folder
  fuzzgpu check --json tests/litmus/core/MP-relacq-gpu.litmus   one JSON object per test
  fuzzgpu sass tests/kernels/D_flashmla_shape.cu   memory operations ptxas moved across a sync
  fuzzgpu <command> --help                   the options of one command
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fuzzgpu",
        description="A property-based stress fuzzer for the NVIDIA GPU (PTX) memory model: litmus "
        "programs are judged by an axiomatic PTX memory-model oracle, checked in their SASS, and "
        "run on the GPU.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"fuzzgpu {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, modname in COMMANDS.items():
        try:
            mod = importlib.import_module(f"fuzzgpu.commands.{modname}")
        except ModuleNotFoundError as e:
            if e.name == f"fuzzgpu.commands.{modname}":
                continue  # not built yet
            raise
        p = sub.add_parser(
            name,
            help=mod.HELP,
            description=getattr(mod, "DESCRIPTION", mod.HELP),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        mod.configure(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    try:
        return int(args._run(args) or 0)
    except UserError as e:
        line = str(e) if isinstance(e, SourceError) else f"fuzzgpu {args.command}: error: {e}"
        print(line.splitlines()[0] if line else "fuzzgpu: error", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("fuzzgpu: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
