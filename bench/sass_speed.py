#!/usr/bin/env python3
"""The analysis of ``fuzzgpu sass`` before and after a change, on real production kernels: the CPU
time of parsing the PTX and the SASS, the analysis and the PDL review of each translation unit of a
realk folder (``manifest.json``), for the code of a base revision (``git archive`` of its
``fuzzgpu/``) and for this checkout, each in its own process, alternately, the least of
``--repeat`` runs (CPU time: the machine is shared, and wall time under load says more about the
others).  Each kernel is disassembled once (nvdisasm) and both sides analyse the same text.  Also
says whether the two reports agree (findings, notes, what was not checked; the PDL review apart).

    python3 bench/sass_speed.py --base c3717f4
    python3 bench/sass_speed.py --base c3717f4 --only deepep-567632d-intranode --repeat 5
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: run in a child process with the tree to measure first on sys.path: the CPU seconds of each run,
#: and the report (as JSON, the PDL review apart) of the last
_CHILD = r'''
import json, sys, time
sys.path.insert(0, sys.argv[1])
from fuzzgpu import sass
from fuzzgpu.sass import pdl
ptx, listing = open(sys.argv[2]).read(), open(sys.argv[3]).read()
arch, source, repeat = sys.argv[4], sys.argv[5], int(sys.argv[6])
try:
    from fuzzgpu.sass.toolchain import analysed
    run = lambda: analysed(ptx, listing, arch, source)
except ImportError:  # before toolchain.analysed: the analysis and the review, each parsing the PTX
    run = lambda: (sass.analyse(ptx, listing, arch, source), pdl.review(ptx, arch), pdl.pdl_compiled_in(ptx, listing))[0]
times = []
for _ in range(repeat):
    t0 = time.process_time()
    rep = run()
    times.append(time.process_time() - t0)
d = rep.to_dict()
for k in ("pdl_review", "pdl_compiled_in", "defines"):
    d.pop(k, None)
print(json.dumps({"cpu": times, "report": d}))
'''


def measure(tree: Path, ptx: Path, listing: Path, arch: str, source: str, repeat: int) -> tuple[float, dict]:
    out = subprocess.run([sys.executable, "-c", _CHILD, str(tree), str(ptx), str(listing), arch, source, str(repeat)],
                         capture_output=True, text=True, check=True)
    d = json.loads(out.stdout)
    return min(d["cpu"]), d["report"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="the revision to compare with (git rev of this repository)")
    ap.add_argument("--realk", type=Path, default=Path("/work/realk"), help="folder with manifest.json (default /work/realk)")
    ap.add_argument("--repeat", type=int, default=2, help="runs per side and kernel, the least counts (default 2)")
    ap.add_argument("--only", nargs="*", default=None, help="ids of the manifest to measure (default: all)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "sass" / "sass_speed.json")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from fuzzgpu.sass import toolchain

    manifest = json.loads((args.realk / "manifest.json").read_text())
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        base.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.base, "fuzzgpu"], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        for e in manifest:
            if args.only and e["id"] not in args.only:
                continue
            if not (e.get("ptx") and e.get("cubin")):
                continue
            print(f"{e['id']} ...", file=sys.stderr, flush=True)
            listing = Path(tmp) / f"{e['id']}.sass"
            listing.write_text(toolchain.disassemble(args.realk / e["cubin"]))
            ptx = args.realk / e["ptx"]
            source = e.get("file", e["id"])
            before, rep_before = measure(base, ptx, listing, e["arch"], source, args.repeat)
            after, rep_after = measure(ROOT, ptx, listing, e["arch"], source, args.repeat)
            rows.append({"id": e["id"], "arch": e["arch"], "before_cpu_s": round(before, 3), "after_cpu_s": round(after, 3),
                         "ratio": round(after / before, 3) if before else None, "same_report": rep_before == rep_after,
                         "findings": len(rep_after["findings"])})
    doc = {"what": "CPU seconds of parse + analysis + PDL review per translation unit, base revision vs this checkout",
           "base": args.base, "head": subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                                      capture_output=True, text=True).stdout.strip(),
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "cpus": os.cpu_count(), "loadavg": os.getloadavg(), "repeat": args.repeat, "kernels": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    table = ["| kernel | before (CPU s) | after (CPU s) | after / before | same report |", "|---|---|---|---|---|"]
    table += [f"| {r['id']} ({r['arch']}) | {r['before_cpu_s']:.2f} | {r['after_cpu_s']:.2f} | {r['ratio']:.2f} | "
              f"{'yes' if r['same_report'] else 'NO'} |" for r in rows]
    args.out.with_suffix(".md").write_text(
        f"# fuzzgpu sass: analysis CPU time, {args.base} vs {doc['head']}\n\n{doc['what']}; least of {args.repeat} runs each, "
        f"{doc['date']}, {doc['cpus']} CPUs, load average {', '.join(f'{x:.1f}' for x in doc['loadavg'])}.\n\n"
        + "\n".join(table) + "\n")
    print("\n".join(table))
    return 0 if all(r["same_report"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
