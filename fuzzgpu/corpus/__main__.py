"""``python -m fuzzgpu.corpus refresh DIR``."""

from __future__ import annotations

import sys

from ..errors import UserError
from .store import refresh


def _main(argv: list[str] | None = None) -> int:
    """``python -m fuzzgpu.corpus refresh DIR``: maintenance of a corpus folder."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m fuzzgpu.corpus", description=refresh.__doc__)
    ap.add_argument("command", choices=("refresh",))
    ap.add_argument("dir")
    args = ap.parse_args(argv)
    try:
        for path, changed in refresh(args.dir):
            print(f"{path}: {'signature and class recomputed' if changed else 'up to date'}")
    except UserError as e:
        print(f"python -m fuzzgpu.corpus: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(_main())
