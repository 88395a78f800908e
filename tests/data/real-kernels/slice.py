"""Cut the smallest slice that still shows a case out of a real build: the PTX module header (the
declarations an entry needs), one ``.entry`` and the ``.file`` table (its line information), and the
nvdisasm listing of that entry; gzip both.  Usage (from the repository root):

    python3 tests/data/real-kernels/slice.py MODULE.ptx LISTING.sass ENTRY_SUBSTRING OUT_STEM

``LISTING.sass`` is ``nvdisasm -c -gi`` of the cubin built from ``MODULE.ptx``; ``ENTRY_SUBSTRING`` picks
the first entry whose (mangled) name contains it."""

from __future__ import annotations

import gzip
import re
import sys
from pathlib import Path

_ENTRY = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+)*\.entry\s+([\w$]+)")


def ptx_slice(text: str, want: str) -> tuple[str, str]:
    lines = text.split("\n")
    starts = [i for i, ln in enumerate(lines) if _ENTRY.match(ln)]
    name = ""
    for i in starts:
        n = _ENTRY.match(lines[i]).group(1)  # type: ignore[union-attr]
        if want in n:
            name, begin = n, i
            break
    else:
        raise SystemExit(f"no entry containing {want!r}")
    # the function runs to the next function (or to the .file table at the end of the module)
    later = [i for i, ln in enumerate(lines) if i > begin and (_ENTRY.match(ln) or re.match(r"^\s*(\.visible\s+)?\.func\b", ln)
                                                             or ln.lstrip().startswith(".file"))]
    end = (later[0] if later else len(lines)) - 1
    header = lines[:starts[0]]
    files = [ln for ln in lines if ln.lstrip().startswith(".file")]
    return name, "\n".join(header + lines[begin:end + 1] + [""] + files) + "\n"


def sass_slice(text: str, name: str) -> str:
    lines = text.split("\n")
    begin = next(i for i, ln in enumerate(lines) if ln.startswith("//") and f".text.{name} " in ln)
    end = next((j for j in range(begin + 1, len(lines)) if lines[j].startswith("//----")), len(lines))
    return "\n".join(lines[begin:end]) + "\n"


def main(argv: list[str]) -> None:
    ptx, sass, want, out = argv
    name, p = ptx_slice(Path(ptx).read_text(), want)
    s = sass_slice(Path(sass).read_text(), name)
    Path(out + ".ptx.gz").write_bytes(gzip.compress(p.encode(), 9, mtime=0))
    Path(out + ".sass.gz").write_bytes(gzip.compress(s.encode(), 9, mtime=0))
    print(name, len(p), len(s))


if __name__ == "__main__":
    main(sys.argv[1:])
