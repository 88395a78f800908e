"""Fixed programs on the GPU: each .litmus of a folder (``bench/refix.py`` writes them) run on the
cuda backend and judged by the race property, as a campaign judges a program.

    python bench/fixed_on_gpu.py DIR/fixed --instances 1e7 --out DIR     # fixed-on-gpu.json and .md

A fixed program fails when the GPU shows an outcome only a racy execution produces (or one the model
forbids); an offending outcome the fix search calls the delivered value now (a wrong-parity wait
fixed) may appear and is race-free.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from fuzzgpu import properties
from fuzzgpu.backends.base import RunConfig
from fuzzgpu.litmus import parse_file


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", type=Path)
    ap.add_argument("--instances", type=float, default=1e7)
    ap.add_argument("--deadline-s", type=float, default=400.0, help="stop starting programs after this many seconds")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    from fuzzgpu.backends.cuda import CudaBackend

    b = CudaBackend()
    rows = []
    t0 = time.monotonic()
    try:
        for f in sorted(a.folder.glob("*.litmus")):
            if time.monotonic() - t0 > a.deadline_s:
                rows.append({"program": f.name, "status": "not run (deadline)"})
                continue
            p = parse_file(f)
            try:
                h = b.run(p, RunConfig(instances=int(a.instances), barrier=True, spin=1000))
            except Exception as e:  # noqa: BLE001 -- reported per program
                rows.append({"program": f.name, "status": f"error: {type(e).__name__}: {str(e).splitlines()[0][:200]}"})
                continue
            v = properties.RACE.check(p, h)
            racy = sum(o.count for o in v.offending)
            rows.append({"program": f.name, "instances": h.instances, "timeouts": h.timeouts,
                         "status": "FAIL" if v.failed else "pass", "offending": racy, "summary": v.summary()[:300]})
            print(f"{f.name}: {rows[-1]['status']} ({racy} offending in {h.instances})", file=sys.stderr, flush=True)
    finally:
        b.close()
    ran = [r for r in rows if r["status"] in ("pass", "FAIL")]
    out = {"instances": a.instances, "programs": len(rows), "ran": len(ran),
           "failed": sum(r["status"] == "FAIL" for r in ran), "rows": rows}
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "fixed-on-gpu.json").write_text(json.dumps(out, indent=1) + "\n")
    lines = [f"# Fixed programs on the GPU ({a.instances:.0e} instances each, barrier, spin 1000; the race property)", "",
             f"{len(ran)} of {len(rows)} run, {out['failed']} failed.", "",
             "| program | status | offending seen | instances | timeouts |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['program']} | {r['status']} | {r.get('offending', '')} | {r.get('instances', '')} | {r.get('timeouts', '')} |")
    (a.out / "fixed-on-gpu.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:3]))
    return 1 if out["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
