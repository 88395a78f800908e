"""Issue 32, class D in the general generator (fuzzgpu/strategies/tensormaps.py): the default
profile's generator draws a tensor copy through a tensor map its thread rewrites, both before the
copy and while it is in flight, in runnable draws too (the harness gives each instance its map in global
memory, sm_90a)."""

from __future__ import annotations

from hypothesis import HealthCheck, find, settings

from fuzzgpu import codegen
from fuzzgpu import strategies as fst
from fuzzgpu.codegen.runnable import unrunnable_reasons
from fuzzgpu.ir import CpAsyncBulk, TensormapReplace
from fuzzgpu.strategies.producer_consumer import producer_consumer

SEARCH = settings(max_examples=4000, deadline=None, suppress_health_check=list(HealthCheck), database=None)


def _replace_at(p) -> tuple[int, int] | None:
    """(index of the rewrite, index of the copy through the map) in the thread that has both."""
    for t in p.threads:
        code = t.code
        r = next((k for k, i in enumerate(code) if isinstance(i, TensormapReplace)), None)
        c = next((k for k, i in enumerate(code) if isinstance(i, CpAsyncBulk) and p.location(i.src_loc).kind == "tensormap"), None)
        if r is not None and c is not None:
            return r, c
    return None


def test_the_profile_draws_a_rewrite_before_the_copy_and_one_in_flight():
    before = find(fst.handoff(), lambda p: (at := _replace_at(p)) is not None and at[0] < at[1], settings=SEARCH)
    after = find(fst.handoff(), lambda p: (at := _replace_at(p)) is not None and at[0] > at[1], settings=SEARCH)
    for p in (before, after):
        assert not any("tensormap" in r for r in unrunnable_reasons(p)), unrunnable_reasons(p)


def test_runnable_draws_rewrite_maps_and_the_harness_runs_them():
    p = find(producer_consumer(runnable=True), lambda p: _replace_at(p) is not None, settings=SEARCH)
    assert unrunnable_reasons(p) == []
    assert codegen.harness_arch([p], "sm_90") == "sm_90a"
    src, spec = codegen.harness_source(p)
    assert spec.tensormaps == 1 and spec.needs_prime and "tensormap.replace.tile.global_address" in src
