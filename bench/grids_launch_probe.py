"""Which stress configurations the driver refuses for programs of two grids (PDL and stream order).

The H200 campaign of 2026-12-03 (bench/results/throughput/h200-600s-4fc7c0d) counted 46 programs "not
covered: CUDA driver error CUDA_ERROR_INVALID_VALUE", and the stress tuner failed with it on the
``grids`` shape families.  This probe runs litmus tests of two grids under the tuner's sample of
stress configurations, each 2 launches, and writes every refusal with its configuration and the
traceback's last lines.  (It reproduced none: the cause, found later from the programs the next
run kept in ``D/refused/``, was the shared-memory opt-in of ``ctas_per_sm`` -- static + dynamic above
48 KB with the dynamic part alone below it: bench/results/throughput/refused-replay/.)

    python bench/grids_launch_probe.py --out DIR        # grids-probe.json, one line per run on stdout
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import traceback
from pathlib import Path

from fuzzgpu.litmus import parse_file
from fuzzgpu.stress.space import ANCHOR_LIKE, SEEDS, StressConfig, sample

TESTS = ("tests/litmus/pdl/PDL-no-wait-relacq-gpu.litmus", "tests/litmus/pdl/PDL-off-stream-order.litmus",
         "tests/litmus/pdl/PDL-chain-grid-before-primary.litmus")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--configs", type=int, default=12, help="random configurations of the tuner's space besides its seeds")
    a = ap.parse_args()
    from fuzzgpu.backends.cuda import CudaBackend

    configs = [StressConfig(), ANCHOR_LIKE, *SEEDS, *sample(random.Random(29), a.configs)]
    b = CudaBackend()
    rows = []
    try:
        for t in TESTS:
            p = parse_file(t)
            for c in configs:
                cfg = c.run_config(instances=2 * c.test_ctas * 256)
                row = {"test": t, "config": dataclasses.asdict(c)}
                try:
                    h = b.run(p, cfg)
                    row["ok"] = h.instances
                except Exception as e:  # noqa: BLE001 -- the refusal is what this probe records
                    row["error"] = f"{type(e).__name__}: {e}"
                    row["where"] = traceback.format_exc().strip().splitlines()[-8:]
                rows.append(row)
                print(json.dumps({k: row[k] for k in row if k != "where"}), flush=True)
    finally:
        b.close()
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "grids-probe.json").write_text(json.dumps(rows, indent=1) + "\n")
    bad = [r for r in rows if "error" in r]
    print(f"{len(bad)} of {len(rows)} runs refused")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
