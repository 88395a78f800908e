"""Hypothesis settings of the generator tests: ``examples(n)`` draws, no deadline, no health check,
no example database (a search with ``find`` or a property over a fixed number of draws); ``sample``:
a fixed sample of a profile's draws."""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, given, seed, settings

from fuzzgpu import strategies as fst
from fuzzgpu.ir import Program


def examples(n: int) -> settings:
    return settings(max_examples=n, deadline=None, suppress_health_check=list(HealthCheck), database=None)


def sample(n: int, at: int, profile: str = "all") -> list[Program]:
    """The first ``n`` programs the generator draws for ``profile`` under the seed ``at`` (generation
    only: the same list on every run)."""
    out: list[Program] = []

    @seed(at)
    @settings(examples(n), phases=[Phase.generate])
    @given(fst.programs(profile))
    def collect(p: Program) -> None:
        out.append(p)

    collect()
    return out
