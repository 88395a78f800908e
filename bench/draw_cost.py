"""The CPU cost of a profile's draws (issue 29): CPU ms per drawn program, and a digest of the drawn
programs' hashes -- two trees that draw the same programs under one seed print the same digest.

    python bench/draw_cost.py [--profile all] [--draws 200] [--seed 5]

Prints one JSON object.  Run it from the tree to measure (``python -m``-style: the current folder's
``fuzzgpu`` is imported)."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time


def main() -> int:
    sys.path.insert(0, os.getcwd())
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="all")
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args()
    from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings

    import fuzzgpu
    from fuzzgpu import strategies
    from fuzzgpu.evidence import program_hash
    from fuzzgpu.profiles import load_profile

    prof = load_profile(args.profile)
    hashes: list[str] = []

    @seed(args.seed)
    @settings(max_examples=args.draws, database=None, deadline=None, phases=(Phase.generate,),
              suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)
    @given(strategies.weighted(prof.shapes, prof.options))
    def draw(p: object) -> None:
        hashes.append(program_hash(p)[:16])  # type: ignore[arg-type]

    t0 = time.process_time()
    draw()
    cpu = time.process_time() - t0
    print(json.dumps({"fuzzgpu": os.path.dirname(fuzzgpu.__file__), "profile": args.profile, "seed": args.seed,
                      "draws": len(hashes), "cpu_s": round(cpu, 2), "cpu_ms_per_draw": round(1000 * cpu / len(hashes), 1),
                      "digest": hashlib.sha256(" ".join(hashes).encode()).hexdigest()[:16]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
