"""Shares per mechanism, fence and issue-15 class of the draws of profile ``all`` (the table in
docs/fuzzing.md, "The general generator"): ``python3 tests/strategies/generator_shares.py SEEDS N`` from the
repository root draws N programs per Hypothesis seed (``1,2,3,4 500`` for the table) and prints the
share of runnable draws with each feature, and of each class of fuzzgpu.bug_classes.CLASSES (runnable, in the
form the H200 can show; of all draws in any form; of all draws alone, the race key naming that class only, as
tests/campaign/test_race_campaign.py's search asks).  Not a test: tests/strategies/test_producer_consumer_cluster.py
checks the shares with generous bounds."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, seed, settings

sys.path[:0] = [str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parents[1])]  # the repository, tests/ (nvcc)

from fuzzgpu import strategies as fst  # noqa: E402
from fuzzgpu.codegen import unrunnable_reasons  # noqa: E402
from fuzzgpu.ir import Atom, ClusterBarrier, CpAsync, CpAsyncBulk, Fence, Load, Program, Red, Store  # noqa: E402
from fuzzgpu.model.race import analyse_races  # noqa: E402
from fuzzgpu.properties import RACY, Offence, race_class_key  # noqa: E402
from fuzzgpu.semantics import FENCE_KEYS  # noqa: E402
from fuzzgpu.bug_classes import CLASS_NAMES, CLASSES, finding_class  # noqa: E402
from tests.strategies.test_producer_consumer_cluster import FEATURES, _manifest  # noqa: E402


def _code(p: Program) -> list:
    return [i for t in p.threads for i in t.code]


ROWS = {
    "distributed shared memory (.shared::cluster access)": lambda p: any(
        isinstance(i, (Store, Load, Atom, Red)) and i.shared_cluster for i in _code(p)),
    "barrier.cluster (any)": lambda p: any(isinstance(i, ClusterBarrier) for i in _code(p)),
    "barrier.cluster.arrive.relaxed": FEATURES["barrier.cluster.arrive.relaxed"],
    "remote mbarrier.arrive.shared::cluster": FEATURES["remote mbarrier.arrive"],
    "fence.mbarrier_init.release.cluster": FEATURES["fence.mbarrier_init"],
    "atom.shared::cluster": lambda p: any(isinstance(i, Atom) and i.shared_cluster for i in _code(p)),
    "PDL": FEATURES["PDL"],
    "stream order (two grids, no PDL)": lambda p: not p.pdl_grids and len({t.placement.grid for t in p.threads}) > 1,
    "a bulk copy global->shared in a later grid": FEATURES["bulk copy of an earlier grid's data"],
    "bulk copy shared->global (TMA store)": lambda p: any(
        isinstance(i, CpAsyncBulk) and i.completion == "bulk_group" for i in _code(p)),
    "cp.async": lambda p: any(isinstance(i, CpAsync) for i in _code(p)),
    "a tensor copy (cp.async.bulk.tensor)": lambda p: any(isinstance(i, CpAsyncBulk) and i.tensor for i in _code(p)),
} | {f"fence.{s.value}": (lambda sem: lambda p: any(isinstance(i, Fence) and i.sem is sem for i in _code(p)))(s)
     for s in FENCE_KEYS}


def draws(seeds: list[int], n: int) -> list[Program]:
    out: list[Program] = []
    for s in seeds:
        @seed(s)
        @settings(max_examples=n, deadline=None, suppress_health_check=list(HealthCheck), database=None,
                  phases=[Phase.generate])
        @given(fst.programs("all"))
        def collect(p: Program) -> None:
            out.append(p)

        collect()
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python3 tests/strategies/generator_shares.py SEEDS(1,2,3,4) DRAWS-PER-SEED(500)", file=sys.stderr)
        return 2
    ps = draws([int(s) for s in argv[0].split(",")], int(argv[1]))
    run = [not unrunnable_reasons(p) for p in ps]

    def pct(k: int) -> str:
        return f"{100 * k / len(ps):.1f}%"

    for name, pred in ROWS.items():
        print(f"{name}: {pct(sum(bool(pred(p)) and r for p, r in zip(ps, run)))}")
    print(f"runnable on the CUDA harness (all draws): {pct(sum(run))}")
    races = [analyse_races(p) for p in ps]
    classes = [{c for pairs in ra.racy.values() for rp in pairs
                if (c := finding_class(p, rp.mechanism, rp.other_at)) is not None} for p, ra in zip(ps, races)]
    # alone: the race property's class key is this class only (what tests/campaign's search asks for)
    keys = [race_class_key(p, ra, [Offence(o, 1, RACY, "") for o in ra.racy]) if ra.racy else "" for p, ra in zip(ps, races)]
    for c in sorted(CLASSES):
        print(f"class {c}: {pct(sum(c in cs and r and _manifest(p, c) for p, cs, r in zip(ps, classes, run)))}"
              f" (any form, all draws: {pct(sum(c in cs for cs in classes))}; alone: {pct(sum(k == f'race:{CLASS_NAMES[c]}' for k in keys))})")
    print(f"draws: {len(ps)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
