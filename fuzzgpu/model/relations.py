"""Binary relations over the events of one candidate execution, as rows of bitmasks.

``Rel.rows[i]`` has bit ``j`` set when ``(i, j)`` is in the relation.  Events are numbered
``0..n-1``; executions are small (tens of events), so Python ints make fast bitsets.  The operators
mirror the ``.cat`` language: ``|`` union, ``&`` intersection, ``-`` difference, ``@`` sequence
(``;``), ``~r`` inverse, ``r.plus()`` transitive closure, ``r.opt()`` reflexive closure on the
domain ``?``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from operator import and_, or_
from typing import Callable, Iterable, Iterator


@dataclass(frozen=True)
class Rel:
    n: int
    rows: tuple[int, ...]

    def __init__(self, n: int, rows: tuple[int, ...]) -> None:
        """The dataclass's own ``__init__``, storing the fields directly instead of through
        ``object.__setattr__`` (a frozen dataclass's): every relation operation makes one."""
        d = self.__dict__
        d["n"] = n
        d["rows"] = rows

    # -- construction ------------------------------------------------------------------------
    @staticmethod
    def empty(n: int) -> "Rel":
        return Rel(n, (0,) * n)

    @staticmethod
    def identity(n: int, members: int | None = None) -> "Rel":
        """``[S]``: the identity on the set ``members`` (a bitmask; all events when None)."""
        if members is None:
            return Rel(n, tuple(1 << i for i in range(n)))
        return Rel(n, tuple((1 << i) & members for i in range(n)))

    @staticmethod
    def from_pairs(n: int, pairs: Iterable[tuple[int, int]]) -> "Rel":
        rows = [0] * n
        for a, b in pairs:
            rows[a] |= 1 << b
        return Rel(n, tuple(rows))

    @staticmethod
    def where(n: int, pred: Callable[[int, int], bool], domain: int | None = None) -> "Rel":
        rows = []
        for i in range(n):
            row = 0
            if domain is None or domain >> i & 1:
                for j in range(n):
                    if pred(i, j):
                        row |= 1 << j
            rows.append(row)
        return Rel(n, tuple(rows))

    # -- algebra -----------------------------------------------------------------------------
    def __or__(self, other: "Rel") -> "Rel":
        return Rel(self.n, tuple(map(or_, self.rows, other.rows)))

    def __and__(self, other: "Rel") -> "Rel":
        return Rel(self.n, tuple(map(and_, self.rows, other.rows)))

    def __sub__(self, other: "Rel") -> "Rel":
        return Rel(self.n, tuple(a & ~b for a, b in zip(self.rows, other.rows)))

    def __matmul__(self, other: "Rel") -> "Rel":
        """Sequential composition ``self ; other``."""
        out = []
        orows = other.rows
        nonzero = 0  # only the rows of ``other`` with an edge contribute
        for k, r in enumerate(orows):
            if r:
                nonzero |= 1 << k
        for row in self.rows:
            row &= nonzero
            acc = 0
            while row:
                low = row & -row
                acc |= orows[low.bit_length() - 1]
                row ^= low
            out.append(acc)
        return Rel(self.n, tuple(out))

    def then_restrict(self, rng: int) -> "Rel":
        """``self ; [rng]`` (a composition with an identity: :meth:`restrict` on the range)."""
        return Rel(self.n, tuple(row & rng for row in self.rows))

    def __invert__(self) -> "Rel":
        rows = [0] * self.n
        for i, row in enumerate(self.rows):
            while row:
                low = row & -row
                rows[low.bit_length() - 1] |= 1 << i
                row ^= low
        return Rel(self.n, tuple(rows))

    def plus(self) -> "Rel":
        """Transitive closure (Warshall over bitset rows)."""
        rows = list(self.rows)
        targets = 0  # only an event some edge reaches can be an intermediate node
        for r in rows:
            targets |= r
        sources = [i for i, r in enumerate(rows) if r]
        while targets:
            low = targets & -targets
            targets ^= low
            k = low.bit_length() - 1
            rk = rows[k]
            if not rk:
                continue
            for i in sources:
                if rows[i] & low:
                    rows[i] |= rk
        return Rel(self.n, tuple(rows))

    def closed_with(self, other: "Rel") -> "Rel":
        """``(self | other)+`` where ``self`` is transitive: ``self | self?; (other; self?)+`` (a
        closure over ``other``'s few edges instead of all of ``self``'s)."""
        if not any(other.rows):
            return self
        so = self.opt()
        return self | (so @ (other @ so).plus())

    def star(self) -> "Rel":
        return self.opt().plus()

    def opt(self) -> "Rel":
        return Rel(self.n, tuple(r | (1 << i) for i, r in enumerate(self.rows)))

    def restrict(self, dom: int | None = None, rng: int | None = None) -> "Rel":
        """``[dom]; self; [rng]``."""
        full = (1 << self.n) - 1
        d = full if dom is None else dom
        r = full if rng is None else rng
        return Rel(self.n, tuple((row & r) if d >> i & 1 else 0 for i, row in enumerate(self.rows)))

    # -- queries -----------------------------------------------------------------------------
    def has(self, a: int, b: int) -> bool:
        return bool(self.rows[a] >> b & 1)

    def pairs(self) -> Iterator[tuple[int, int]]:
        for i, row in enumerate(self.rows):
            while row:
                low = row & -row
                yield i, low.bit_length() - 1
                row ^= low

    def is_empty(self) -> bool:
        return not any(self.rows)

    def reflexive_points(self) -> list[int]:
        return [i for i, row in enumerate(self.rows) if row >> i & 1]

    def is_irreflexive(self) -> bool:
        return not any(row >> i & 1 for i, row in enumerate(self.rows))

    def is_acyclic(self) -> bool:
        """No cycle: peel off the events with no successor left until none remain (Kahn's
        algorithm, from the sinks)."""
        left = (1 << self.n) - 1
        rows = self.rows
        live = [i for i in range(self.n) if rows[i]]
        for i in range(self.n):
            if not rows[i]:
                left &= ~(1 << i)
        while live:
            keep = []
            for i in live:
                if rows[i] & left:
                    keep.append(i)
                else:
                    left &= ~(1 << i)
            if len(keep) == len(live):
                return False
            live = keep
        return True

    def __len__(self) -> int:
        return sum(bin(r).count("1") for r in self.rows)


def shortest_path(edges: dict[str, Rel], src: int, dst: int) -> list[tuple[int, str, int]] | None:
    """A shortest path from ``src`` to ``dst`` (at least one edge) through the labelled relations
    ``edges``; returns ``[(a, label, b), ...]`` or None."""
    prev: dict[int, tuple[int, str]] = {}
    queue: deque[int] = deque()
    for label, rel in edges.items():
        for j in _bits(rel.rows[src]):
            if j not in prev:
                prev[j] = (src, label)
                queue.append(j)
    while queue:
        node = queue.popleft()
        if node == dst:
            path = []
            cur = dst
            while True:
                p, label = prev[cur]
                path.append((p, label, cur))
                if p == src:
                    break
                cur = p
            return list(reversed(path))
        for label, rel in edges.items():
            for j in _bits(rel.rows[node]):
                if j not in prev:
                    prev[j] = (node, label)
                    queue.append(j)
    return None


def find_cycle(edges: dict[str, Rel], through: int | None = None) -> list[tuple[int, str, int]] | None:
    """A cycle in the union of ``edges`` (through event ``through`` when given)."""
    starts = [through] if through is not None else range(next(iter(edges.values())).n)
    best = None
    for s in starts:
        path = shortest_path(edges, s, s)
        if path is not None and (best is None or len(path) < len(best)):
            best = path
    return best


def _bits(x: int) -> Iterator[int]:
    while x:
        low = x & -x
        yield low.bit_length() - 1
        x ^= low
