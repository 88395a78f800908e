"""Programs a campaign's GPU run refused (``D/refused/*.json``: a CUDA driver error that left the
context usable), run again under the run configuration each was refused with, by today's backend.

    python bench/refused_replay.py CORPUS/refused --instances 1e6 --out DIR     # refused-replay.json and .md

Each row: the program's harness's static shared memory and the dynamic shared memory its
``ctas_per_sm`` gives (their sum against the 48 KB a launch may use without the opt-in:
``fuzzgpu.backends.geometry.needs_shared_opt_in``), and whether it runs now.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

from fuzzgpu.backends.base import RunConfig
from fuzzgpu.ir import program_from_json


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", type=Path)
    ap.add_argument("--instances", type=float, default=1e6)
    ap.add_argument("--deadline-s", type=float, default=240.0, help="stop starting programs after this many seconds")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    from fuzzgpu.backends.cuda import CudaBackend
    from fuzzgpu.backends.geometry import launch_geometry, needs_shared_opt_in

    recs = [json.loads(f.read_text()) for f in sorted(a.folder.glob("*.json"))]
    b = CudaBackend()
    rows = []
    t0 = time.monotonic()
    try:
        progs = [program_from_json(r["program"]) for r in recs]
        b.prepare(progs)
        for r, p in zip(recs, progs):
            row = {"program": r["program_hash"][:16], "shape": r["shape"], "refused_with": r["fault"]["detail"][:160]}
            if time.monotonic() - t0 > a.deadline_s:
                rows.append({**row, "status": "not run (deadline)"})
                continue
            cfg = dataclasses.replace(RunConfig(**r["config"]), instances=int(a.instances))
            try:
                c = b.harness(p)
                static = max(b.static_smem(b.function(c.cubin, k)) for k in (c.spec.kernels or (c.spec.kernel,)))
                dynamic = launch_geometry(c.spec, cfg, b.smem_per_sm, static).shared_bytes
                row.update(static_smem=static, dynamic_smem=dynamic, opt_in=needs_shared_opt_in(static, dynamic),
                           ctas_per_sm=cfg.ctas_per_sm)
                h = b.run(p, cfg, compiled=c)
                row.update(status="runs", instances=h.instances, timeouts=h.timeouts)
            except Exception as e:  # noqa: BLE001 -- reported per program
                row.update(status=f"error: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
            rows.append(row)
            print(f"{row['program']}: {row['status']}", file=sys.stderr, flush=True)
    finally:
        b.close()
    out = {"instances": a.instances, "programs": len(rows), "runs": sum(r["status"] == "runs" for r in rows), "rows": rows}
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "refused-replay.json").write_text(json.dumps(out, indent=1) + "\n")
    lines = [f"# Refused programs run again ({a.instances:.0e} instances each, the configuration each was refused with)", "",
             f"{out['runs']} of {len(rows)} run now.", "",
             "| program | shape | ctas/SM | static smem | dynamic smem | sum > 48 KB | now |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['program']} | {r['shape']} | {r.get('ctas_per_sm', '')} | {r.get('static_smem', '')} | "
                     f"{r.get('dynamic_smem', '')} | {r.get('opt_in', '')} | {r['status']} |")
    (a.out / "refused-replay.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:3]))
    return 0 if out["runs"] == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
