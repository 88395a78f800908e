"""Answers to the questions asked most recently, kept for the next ask of the same question (a
campaign asks each program's traces, value domains and race analysis several times, and runs a
prepared harness more than once): at most ``size`` of them, and -- given ``weight`` -- at most
``limit`` of that weight in all; the least recently used go first, the newest always stays.  One
process's cache, never shared."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Recent(Generic[K, V]):
    def __init__(self, size: int, weight: Callable[[V], int] | None = None, limit: int = 0) -> None:
        self.size = size
        self.weight = weight
        self.limit = limit  # with ``weight``: the most weight kept in all
        self._items: OrderedDict[K, V] = OrderedDict()
        self._total = 0

    def get(self, key: K) -> V | None:
        """The answer kept for ``key`` (now the most recently used), or None."""
        hit = self._items.get(key)
        if hit is not None:
            self._items.move_to_end(key)
        return hit

    def put(self, key: K, value: V) -> V:
        """Keep ``value`` for ``key`` (the most recently used); the least recently used go past the bounds."""
        old = self._items.pop(key, None)
        if old is not None:
            self._total -= self._weigh(old)
        self._items[key] = value
        self._total += self._weigh(value)
        while len(self._items) > 1 and (len(self._items) > self.size or (self.weight is not None and self._total > self.limit)):
            _, gone = self._items.popitem(last=False)
            self._total -= self._weigh(gone)
        return value

    def clear(self) -> None:
        self._items.clear()
        self._total = 0

    def _weigh(self, value: V) -> int:
        return self.weight(value) if self.weight is not None else 0

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[K]:
        return iter(self._items)


__all__ = ["Recent"]
