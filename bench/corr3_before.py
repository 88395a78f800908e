"""issue 27: corr3 under the harness as it was before the fix (every repeated load of a location
through address + k * fz_zero), with the provenance log, on the GPU -- the "before" half of
bench/coherence_corr3.sh.  The old emission is restored for this process only (emit.spread_locations
replaced), the harness otherwise the current one.

    python3 bench/corr3_before.py FILE.litmus --instances 1e9 --spin 3000 [--barrier] [--out F.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from fuzzgpu import codegen, litmus
from fuzzgpu.backends.base import RunConfig
from fuzzgpu.codegen import emit
from fuzzgpu.commands.run import forbidden_watch, provenance_lines


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--instances", type=float, default=1e8)
    ap.add_argument("--spin", type=int, default=3000)
    ap.add_argument("--barrier", action="store_true")
    ap.add_argument("--out")
    a = ap.parse_args()
    old = lambda p, t: frozenset(loc.name for loc in p.locations)  # noqa: E731 -- the old emission
    emit.spread_locations = old
    codegen.harness.spread_locations = old
    from fuzzgpu.backends.cuda import CudaBackend

    p = litmus.parse_file(a.path)
    src, _ = codegen.harness_source(p)
    assert "1u * fz_zero" in src, "the old emission was not restored"
    b = CudaBackend()
    try:
        h = b.run(p, RunConfig(instances=int(a.instances), barrier=a.barrier, spin=a.spin), watch=forbidden_watch(p))
    finally:
        b.close()
    d = h.to_json()
    print(json.dumps({"program": p.name, "counts": d["outcomes"], "instances": h.instances, "seconds": round(h.seconds, 2)}))
    for line in provenance_lines(p, dict(h.meta).get("provenance", {})):
        print(line)
    if a.out:
        Path(a.out).write_text(json.dumps(d, indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
