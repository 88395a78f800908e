"""The oracle's SC labels under PDL against the independent interleaving interpreter
(tests/model/interleavings.py), on many random two-grid programs (issue 27): the longer run of
tests/model/test_pdl_interleavings.py and tests/model/test_model_grids.py.

Draws programs from the project's strategy ``fuzzgpu.strategies.programs("pdl")`` and from
tests/model/test_model_grids.py's ``grid_programs`` (2-4 threads in 2-3 grids), keeps those the interpreter
runs, and counts the programs whose oracle sc set equals the interleavings' outcomes.  Prints the
counts and the first disagreements (the program, both sets).

    python3 bench/pdl_interleavings.py --programs 3000 [--seed 0] [--strategies pdl,all,grids]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings, seed
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "model")]  # this checkout's fuzzgpu and test helpers, not an installed one

from fuzzgpu import strategies as fst  # noqa: E402
from fuzzgpu.litmus import format_program  # noqa: E402
from fuzzgpu.model import analyse  # noqa: E402
from interleavings import Interleavings, supported  # noqa: E402
from test_model_grids import grid_programs  # noqa: E402
from test_pdl_interleavings import trigger_programs  # noqa: E402


def run(name: str, strategy: st.SearchStrategy, n: int, s: int) -> dict:
    tally = {"drawn": 0, "checked": 0, "agree": 0, "disagree": []}

    @seed(s)
    @settings(max_examples=n * 4, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def check(p) -> None:
        tally["drawn"] += 1
        if tally["checked"] >= n or not supported(p):
            return
        tally["checked"] += 1
        got, want = set(analyse(p).sc), Interleavings(p).outcomes()
        if got == want:
            tally["agree"] += 1
        elif len(tally["disagree"]) < 5:
            tally["disagree"].append((format_program(p), sorted(got - want), sorted(want - got)))

    check()
    return tally


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--programs", type=int, default=3000, help="programs checked per strategy")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--strategies", default="pdl,all,grids,triggers", help="comma-separated: pdl, all, grids, triggers")
    a = ap.parse_args()
    bad = 0
    strategies = {
        "pdl": ("fuzzgpu.strategies.programs('pdl')", fst.programs("pdl")),
        "all": ("fuzzgpu.strategies.programs('all'), programs of several grids", fst.programs("all").filter(lambda p: len({t.placement.grid for t in p.threads}) > 1)),
        "grids": ("tests/model/test_model_grids.py grid_programs", grid_programs()),
        "triggers": ("tests/model/test_pdl_interleavings.py trigger_programs", trigger_programs()),
    }
    for key in a.strategies.split(","):
        name, strat = strategies[key]
        t0 = time.perf_counter()
        t = run(name, strat, a.programs, a.seed)
        print(f"{name}: drawn {t['drawn']}, checked {t['checked']}, agree {t['agree']}, "
              f"disagree {t['checked'] - t['agree']} ({time.perf_counter() - t0:.0f} s)", flush=True)
        for prog, only_oracle, only_inter in t["disagree"]:
            print(prog, "only in the oracle's sc set:", only_oracle, "only in the interleavings:", only_inter, sep="\n")
        bad += t["checked"] - t["agree"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
