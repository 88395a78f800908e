"""Benchmark (issue 29): what the cuda backend's worker process spends per run, before any launch,
on the outcomes it logs with provenance -- ``properties.forbidden_watch`` (a ``model.analyse`` of the
program, in the backend's process, beside the campaign process's own oracle) and the device's watch
bitmap (:func:`fuzzgpu.backends.cuda.watch_bitmap`) -- and, for scale, the race property's verdict.
In a campaign the worker sends its own analysis's outcomes with the run (``properties.RunAdvice``):
the backend then spends what ``forbidden_watch with advice`` shows.  No GPU needed.

    python bench/watch_cost.py [--programs 32] [--seed 1]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--programs", type=int, default=32)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    from stages import draw, fresh  # bench/stages.py

    from fuzzgpu import codegen, properties
    from fuzzgpu.backends.base import Histogram
    from fuzzgpu.backends.cuda import watch_bitmap

    ps = [p for p in draw("all", args.programs, args.seed) if not codegen.unrunnable_reasons(p)]
    from fuzzgpu.campaign.analyses import Analyses

    watch_s = bitmap_s = check_s = advised_s = 0.0
    for p in ps:
        q = fresh(p)  # a fresh object: no cache answers (the backend's process receives a pickled copy)
        t = time.process_time()
        w = properties.forbidden_watch(q)
        watch_s += time.process_time() - t
        advice = Analyses().advice(fresh(p))  # the campaign worker's (its weak count's analysis)
        q3 = fresh(p)
        t = time.process_time()
        properties.forbidden_watch(q3, advice)
        advised_s += time.process_time() - t
        _, specs = codegen.generate_module([q])
        t = time.process_time()
        watch_bitmap(specs[0], w)
        bitmap_s += time.process_time() - t
        q2 = fresh(p)
        t = time.process_time()
        try:
            properties.get("race").check(q2, Histogram((), (), 0, 0, 0.0, "bench"))
        except Exception:  # noqa: BLE001, S110 -- a program the oracle does not cover: its time still counts
            pass
        check_s += time.process_time() - t
    n = max(1, len(ps))
    print(f"{len(ps)} runnable programs of {args.programs} drawn (profile all, seed {args.seed}); CPU ms per program: "
          f"forbidden_watch {1e3 * watch_s / n:.1f} (with the worker's advice {1e3 * advised_s / n:.2f}), watch_bitmap {1e3 * bitmap_s / n:.1f}, race verdict (empty histogram) {1e3 * check_s / n:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
