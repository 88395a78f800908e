#!/usr/bin/env python3
"""What ``fuzzgpu sass`` costs on real production kernels, against what nvcc costs for the same
translation unit (issue 26: the analysis must cost at most 10% of the nvcc compile).

The kernels are those compiled once into a realk folder (``manifest.json``: per kernel its PTX, cubin,
arch and nvcc's ``compile_seconds``, measured when it was compiled with the project's own flags).  For
each, this times separately and takes the median of ``--repeat`` runs:

* ``disassemble``: nvdisasm of the cubin (what ``fuzzgpu sass`` runs after nvcc for a ``.cu``);
* ``analyse``: parsing the PTX and the SASS and the analysis (``fuzzgpu.sass.analyse``) plus the PDL
  review (``fuzzgpu.sass.pdl.review``) -- everything ``fuzzgpu sass`` does that is not a tool;

and writes ``bench/results/sass/sass_real.json`` and a table, ``bench/results/sass/sass_real.md``.

    python3 bench/sass_real.py                           # /work/realk, 3 repeats
    python3 bench/sass_real.py --realk DIR --repeat 5 --out bench/results/sass/sass_real.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fuzzgpu import sass  # noqa: E402
from fuzzgpu.sass import pdl, toolchain  # noqa: E402

GOAL = 0.10


def timed(fn, repeat: int) -> tuple[float, list[float], object]:
    times, value = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times, value


def one(realk: Path, entry: dict, repeat: int) -> dict:
    ptx_text = (realk / entry["ptx"]).read_text()
    cubin = realk / entry["cubin"]
    arch = entry.get("arch", "sm_90a")
    dis_med, dis_all, sass_text = timed(lambda: toolchain.disassemble(cubin), repeat)
    assert isinstance(sass_text, str)

    def analysis():
        rep = sass.analyse(ptx_text, sass_text, arch, entry.get("file", entry["id"]))
        return rep, pdl.review(ptx_text, arch)

    ana_med, ana_all, value = timed(analysis, repeat)
    rep, notes = value  # type: ignore[misc]
    compile_s = float(entry["compile_seconds"])
    return {
        "id": entry["id"], "project": entry.get("project", ""), "commit": entry.get("commit", ""),
        "file": entry.get("file", ""), "arch": arch,
        "ptx_bytes": len(ptx_text), "sass_bytes": len(sass_text),
        "functions": len(rep.functions), "findings": len(rep.findings),
        "forbidden": sum(1 for f in rep.findings if f.verdict == sass.FORBIDDEN),
        "complete": rep.complete, "pdl_review": len(notes),
        "nvcc_compile_s": compile_s,
        "disassemble_s": round(dis_med, 3), "disassemble_all_s": [round(t, 3) for t in dis_all],
        "analyse_s": round(ana_med, 3), "analyse_all_s": [round(t, 3) for t in ana_all],
        "analyse_fraction": round(ana_med / compile_s, 4),
        "analyse_and_disassemble_fraction": round((ana_med + dis_med) / compile_s, 4),
        "within_goal": ana_med / compile_s <= GOAL,
    }


def table(rows: list[dict]) -> str:
    out = ["| kernel | PTX / SASS (MB) | functions | nvcc (s) | nvdisasm (s) | analyse (s) | analyse / nvcc | + nvdisasm / nvcc |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['id']} ({r['file']}, {r['arch']}) | {r['ptx_bytes'] / 1e6:.1f} / {r['sass_bytes'] / 1e6:.1f} | "
                   f"{r['functions']} | {r['nvcc_compile_s']:.0f} | {r['disassemble_s']:.2f} | {r['analyse_s']:.2f} | "
                   f"{100 * r['analyse_fraction']:.1f}% | {100 * r['analyse_and_disassemble_fraction']:.1f}% |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--realk", type=Path, default=Path("/work/realk"), help="folder with manifest.json (default /work/realk)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", nargs="*", default=None, help="ids of the manifest to measure (default: all with PTX and cubin)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "sass" / "sass_real.json")
    args = ap.parse_args()
    manifest = json.loads((args.realk / "manifest.json").read_text())
    rows = []
    for e in manifest:
        if args.only and e["id"] not in args.only:
            continue
        if not (e.get("ptx") and e.get("cubin") and e.get("compile_seconds")):
            continue
        if not (args.realk / e["ptx"]).is_file() or not (args.realk / e["cubin"]).is_file():
            continue
        print(f"{e['id']} ...", file=sys.stderr, flush=True)
        rows.append(one(args.realk, e, args.repeat))
    doc = {
        "what": "fuzzgpu sass analysis time (parse + analyse + PDL review, no tool) and nvdisasm time, against nvcc's "
                "compile of the same translation unit (manifest compile_seconds: wall time of the one compile with the "
                "project's flags on the same machine)",
        "goal": f"analyse / nvcc <= {GOAL:.0%}",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
                    "loadavg": os.getloadavg()},
        "toolchain": toolchain.toolchain_id(),
        "repeat": args.repeat,
        "kernels": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    md = args.out.with_suffix(".md")
    md.write_text(f"# fuzzgpu sass on real kernels: analysis time against nvcc\n\n{doc['what']}.\n"
                  f"Goal: {doc['goal']}. {doc['date']}, {doc['machine']['platform']}, {doc['machine']['cpus']} CPUs, "
                  f"load average {', '.join(f'{x:.1f}' for x in doc['machine']['loadavg'])}; median of {args.repeat}.\n\n"
                  f"{table(rows)}\n")
    print(table(rows))
    return 0 if all(r["within_goal"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
