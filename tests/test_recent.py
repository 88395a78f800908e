"""The cache of recent answers (fuzzgpu.recent.Recent): the least recently used go
first, within a count and a total weight; the newest always stays."""

from __future__ import annotations

from fuzzgpu.recent import Recent


def test_the_least_recently_used_go_first() -> None:
    r: Recent[str, int] = Recent(2)
    r.put("a", 1)
    r.put("b", 2)
    assert r.get("a") == 1  # "a" is now the most recently used
    r.put("c", 3)
    assert list(r) == ["a", "c"] and r.get("b") is None


def test_the_weight_bound_keeps_the_newest_and_counts_replacements_once() -> None:
    r: Recent[str, int] = Recent(10, weight=lambda v: v, limit=5)
    r.put("a", 2)
    r.put("b", 3)
    assert list(r) == ["a", "b"]
    r.put("a", 1)  # replaced: its old weight no longer counts (1 + 3 <= 5)
    assert list(r) == ["b", "a"]
    r.put("c", 9)  # heavier than the bound alone: it stays, every other goes
    assert list(r) == ["c"] and len(r) == 1
    r.clear()
    r.put("d", 5)
    assert list(r) == ["d"]  # the cleared weight does not count
