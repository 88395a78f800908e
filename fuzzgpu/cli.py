"""The ``fuzzgpu`` command line.  Each subcommand lives in ``fuzzgpu/commands/<name>.py`` and
provides ``HELP`` (one line), ``DESCRIPTION`` (the --help text), ``configure(parser)`` and
``run(args) -> int``.

Exit codes (DESIGN.md, "Exit codes"; docs/reliability.md): 0 nothing found, 1 a finding, 2 bad usage
or bad input (:class:`fuzzgpu.errors.UserError`), 3 the environment failed
(:class:`fuzzgpu.errors.EnvError`, and any ``OSError`` that reaches the top: a full or read-only
disk, permissions, ``/proc``) or fuzzgpu itself did (an internal error).  Every error is one line
on stderr, clipped (:func:`fuzzgpu.errors.clip`); no traceback unless ``FUZZGPU_TRACEBACK=1``.
Status 1 never means a crash."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings
from typing import NoReturn, Sequence, TextIO

from . import __version__
from .errors import EXIT_BROKEN_PIPE, EXIT_ENVIRONMENT, EXIT_USAGE, EnvError, SourceError, SourceWarning, UserError, clip

#: subcommand name -> module under fuzzgpu.commands
COMMANDS: dict[str, str] = {
    "check": "check",
    "sass": "sass",
    "run": "run",
    "campaign": "campaign",
    "replay": "replay",
    "explain": "explain",
    "tune": "tune",
    "necessity": "necessity",
}

EPILOG = """\
examples (run from a checkout; each with the exit status it gives):
  fuzzgpu check tests/litmus/dat3m           model-check every .litmus file under a folder: Dat3M's
                                             suite, every test covered (exit 0)
  fuzzgpu check tests/litmus                 every test of the repository (exit 3: one is not
                                             covered -- termination/Loop-with-write.litmus, a loop
                                             that writes, past the loop bound -- and says so on
                                             stderr; the others are checked)
  fuzzgpu check --json tests/litmus/core/MP-relacq-gpu.litmus   one JSON object per test (exit 0)
  fuzzgpu sass tests/kernels/D_flashmla_shape.cu   memory operations ptxas moved across a sync
                                             (exit 1: it finds the .nc load hoisted; 3 without nvcc)
  fuzzgpu tune tests/litmus/gpu/MP-relaxed-gpu.litmus   tune the GPU stress for a test (exit 0;
                                             3 without a GPU)
  fuzzgpu necessity examples/necessity/NEC-06-mp-release-fence.litmus   is each fence needed?
                                             (exit 0)
  fuzzgpu <command> --help                   the options of one command
"""


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are one clipped line (an option's value may be 10 MB long)."""

    def error(self, message: str) -> "NoReturn":
        self.exit(EXIT_USAGE, f"{clip(f'{self.prog}: error: {message} (see {self.prog} --help)')}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
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
        return EXIT_USAGE
    with warnings.catch_warnings():  # a SourceWarning (a litmus test's condition...): one line on stderr
        warnings.simplefilter("default", SourceWarning)
        shown = warnings.showwarning

        def show(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: TextIO | None = None,
                 line: str | None = None) -> None:
            if issubclass(category, SourceWarning):
                _say(str(message))
            else:
                shown(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        return _dispatch(args)


def _dispatch(args: argparse.Namespace) -> int:
    """Run the command; an error is one line on stderr (and a JSON object with --json), its exit status returned."""
    prefix = f"fuzzgpu {args.command}"
    as_json = bool(getattr(args, "json", False))
    try:
        return int(args._run(args) or 0)
    except UserError as e:
        line = str(e) if isinstance(e, SourceError) else f"{prefix}: error: {e}"
        return _fail(line.splitlines()[0] if line.strip() else f"{prefix}: error", "usage", EXIT_USAGE, as_json)
    except UnicodeDecodeError as e:  # an input file that is no text (a .ptx of binary bytes): bad input, not a bug
        return _fail(f"{prefix}: error: an input is not UTF-8 text ({e.reason} at byte {e.start})", "usage", EXIT_USAGE, as_json)
    except KeyboardInterrupt:
        print("fuzzgpu: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (``| head``): what was decided is unknown to it -- never 0 (clean) nor 1
        # (a finding): the shell's status for a process a SIGPIPE ends, output silenced for the exit's flush
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except EnvError as e:
        return _fail(f"{prefix}: environment error: {e}", "environment", EXIT_ENVIRONMENT, as_json)
    except OSError as e:  # a full or read-only disk, permissions, /proc: the environment, not a finding
        where = f"{e.filename}: " if getattr(e, "filename", None) else ""
        return _fail(f"{prefix}: environment error: {where}{e.strerror or e}", "environment", EXIT_ENVIRONMENT, as_json)
    except MemoryError:
        return _fail(f"{prefix}: environment error: out of memory", "environment", EXIT_ENVIRONMENT, as_json)
    except Exception as e:  # noqa: BLE001 -- a bug in fuzzgpu: never exit 1, which means a finding
        if os.environ.get("FUZZGPU_TRACEBACK") == "1":
            import traceback

            traceback.print_exc()
        return _fail(f"{prefix}: internal error: {type(e).__name__}: {e} (a bug in fuzzgpu; FUZZGPU_TRACEBACK=1 shows where)",
                     "internal", EXIT_ENVIRONMENT, as_json)


def _fail(line: str, kind: str, code: int, as_json: bool) -> int:
    """Say ``line`` on stderr; with ``--json`` also one JSON object on stdout, so that a program
    reading stdout gets a document, not nothing: ``{"error": LINE, "kind": "usage" | "environment"
    | "internal", "exit": CODE}``."""
    _say(line)
    if as_json:
        import json

        try:
            print(json.dumps({"error": clip(line.splitlines()[0] if line else "error"), "kind": kind, "exit": code}))
        except (OSError, ValueError):
            pass
    return code


def _say(line: str) -> None:
    try:
        print(clip(line.splitlines()[0] if line else "fuzzgpu: error"), file=sys.stderr)
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
