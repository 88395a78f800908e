#!/usr/bin/env python3
"""Benchmark: the SASS checker again on PTX/SASS pairs that ``fuzzgpu sass --keep DIR`` kept -- to see
what a change of the checker does to real kernels without compiling them again.

Each ``NAME.ARCH.ptx`` beside its ``NAME.ARCH.sass`` under the given folders (searched recursively)
is analysed as ``fuzzgpu sass`` analyses a compile (:func:`fuzzgpu.sass.toolchain.analysed`): the
findings by check and verdict, the functions and whether all are fully checked, the CPU of the
analysis.  The kept files are the projects' own compiler output (not committed: build them with the
commands the results page lists).

    python3 bench/sass_kept.py DIR [DIR ...] [--out bench/results/sass] [--label NAME]

Writes ``OUT/kept-LABEL.json`` and ``.md`` (machine, date, command, table).  Needs no toolchain.
"""

from __future__ import annotations

import argparse
import re
import resource
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

OUT = ROOT / "bench" / "results" / "sass"
_KEPT = re.compile(r"^(?P<name>.+)\.(?P<arch>sm_\w+)\.ptx$")


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def pairs(folders: list[Path]) -> list[tuple[str, str, Path, Path]]:
    """(name, arch, PTX, SASS) of every kept pair under ``folders``."""
    out = []
    for d in folders:
        for ptx in sorted(d.rglob("*.ptx")):
            m = _KEPT.match(ptx.name)
            sass_path = ptx.with_suffix(".sass")
            if m and sass_path.is_file():
                out.append((m["name"], m["arch"], ptx, sass_path))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folders", type=Path, nargs="+")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--label", default="latest")
    args = ap.parse_args(argv)

    from compile_phases import header, write_results

    from fuzzgpu import sass

    rows: list[dict[str, Any]] = []
    for name, arch, ptx, sass_path in pairs(args.folders):
        t0 = cpu()
        rep = sass.analysed(ptx.read_text(), sass_path.read_text(), arch, name)
        verdicts = Counter(f.verdict for f in rep.findings)
        rows.append({"kernel": name, "arch": arch, "folder": ptx.parent.parent.name, "functions": len(rep.functions),
                     "forbidden": verdicts.get(sass.FORBIDDEN, 0), "permitted_hazard": verdicts.get(sass.HAZARD, 0),
                     "by_check": dict(Counter(f"{f.check} {f.verdict}" for f in rep.findings)),
                     "fully_checked": rep.complete, "analyse_cpu_s": round(cpu() - t0, 2)})
    doc = {**header("sass_kept.py", argv), "rows": rows}
    md = [f"# `fuzzgpu sass` again on kept PTX/SASS (`{doc['command']}`)", "",
          f"{doc['machine']}, {doc['date']}: each kept pair analysed as `fuzzgpu sass` analyses its compile.", "",
          "| folder | kernel | arch | functions | forbidden | permitted-hazard | findings by check | fully checked | analysis CPU s |",
          "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        checks = ", ".join(f"{k}: {v}" for k, v in sorted(r["by_check"].items())) or "-"
        md.append(f"| {r['folder']} | {r['kernel']} | {r['arch']} | {r['functions']} | {r['forbidden']} | {r['permitted_hazard']} | "
                  f"{checks} | {'yes' if r['fully_checked'] else 'no'} | {r['analyse_cpu_s']} |")
    md.append("")
    write_results(args.out, f"kept-{args.label}", doc, md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
