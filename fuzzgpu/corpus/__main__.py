"""``python -m fuzzgpu.corpus refresh DIR``."""

from __future__ import annotations

import sys

from ..errors import UserError
from .store import refresh


def _main(argv: list[str] | None = None) -> int:
    """``python -m fuzzgpu.corpus refresh DIR``: maintenance of a corpus folder."""
    import argparse

    ap = argparse.ArgumentParser(
        prog="python -m fuzzgpu.corpus",
        description="refresh DIR: recompute the signature and class of every entry of a corpus folder (after a "
                    "change to how fuzzgpu computes signatures or classes: the stored verdicts and explanations "
                    "are kept, the oracle is not re-run) and rewrite the entries that changed, atomically, under "
                    "their file names; each class record (classes/<class id>.json) follows its class, and a class "
                    "without one (an entry saved before every class got one, or copied in by hand) gets it.  One "
                    "line per entry: 'up to date' or 'refreshed (signature, class and class record current)'.  "
                    "Exit status: 0 done (also for a folder without entries, said on stderr); 2 DIR is not a "
                    "corpus folder or an entry is not valid, e.g. a *.json that is not a regular file (one line "
                    "naming it; then nothing is refreshed).")
    ap.add_argument("command", choices=("refresh",))
    ap.add_argument("dir")
    args = ap.parse_args(argv)
    try:
        done = refresh(args.dir)
    except UserError as e:
        print(f"python -m fuzzgpu.corpus: error: {e}", file=sys.stderr)
        return 2
    for path, changed in done:
        print(f"{path}: {'refreshed (signature, class and class record current)' if changed else 'up to date'}")
    if not done:
        print(f"python -m fuzzgpu.corpus: {args.dir}: no corpus entries (*.json) to refresh", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(_main())
