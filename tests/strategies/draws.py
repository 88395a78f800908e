"""Hypothesis settings of the generator tests: ``examples(n)`` draws, no deadline, no health check,
no example database (a search with ``find`` or a property over a fixed number of draws)."""

from __future__ import annotations

from hypothesis import HealthCheck, settings


def examples(n: int) -> settings:
    return settings(max_examples=n, deadline=None, suppress_health_check=list(HealthCheck), database=None)
