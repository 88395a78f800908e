"""One thread's path through its code: the :class:`Trace` the path enumeration yields (its events,
final registers, dependencies and the cost of each write), the state a path
is built in (:class:`_State`, forked at every read that may return several values) and what the
enumeration of one thread's paths reads besides it (:class:`_Ctx`); the traces of the whole
program (:class:`ProgramTraces`).  The enumeration itself, one step per instruction, is
:func:`.events.thread_traces`; candidate executions over one trace per thread are
:mod:`.candidates`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from functools import cached_property
from operator import attrgetter
from typing import Iterable, Iterator, Mapping

from .. import ir
from .event import Event


def closure(edges: Iterable[tuple[int, int]]) -> set[tuple[int, int]]:
    """The transitive closure of ``edges`` (pairs of event indices)."""
    succ: dict[int, set[int]] = {}
    for a, b in edges:
        succ.setdefault(a, set()).add(b)
    out: set[tuple[int, int]] = set()
    for start in list(succ):
        stack, seen = list(succ[start]), set()
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            stack.extend(succ.get(n, ()))
        out.update((start, n) for n in seen)
    return out


#: an event's fields but ``eid`` and ``value`` (:attr:`Trace.shape`)
_SHAPE_OF = attrgetter(*(f.name for f in fields(Event) if f.name not in ("eid", "value")))


@dataclass(frozen=True, eq=False)
class Trace:
    """One path through one thread: its events (thread-local numbering), final registers, and the
    dependencies needed by the no-thin-air axiom."""

    events: tuple[Event, ...]
    regs: tuple[tuple[str, int], ...]
    data: tuple[tuple[int, int], ...]  # (read index, write index): the write's value depends on the read
    ctrl: tuple[tuple[int, int], ...]  # (read index, event index): a branch on the read precedes it
    rmw: tuple[tuple[int, int], ...]  # (read index, write index) of one atom/red
    po: tuple[tuple[int, int], ...] = ()  # program order, as edges (transitively closed later)
    costs: tuple[tuple[int, tuple[int, ...]], ...] = ()  # (write index, writes its value needs, per location)
    #: a wgmma's register operand accessed in flight (:data:`.wgmma.Hazard`; class F)
    wgmma_hazards: tuple[tuple[int, int, str, bool], ...] = ()

    @cached_property
    def reads(self) -> frozenset[tuple[str, int]]:
        return frozenset(e.access for e in self.events if e.kind == "R")

    @cached_property
    def po_closed(self) -> frozenset[tuple[int, int]]:
        """Program order between the trace's own events (indices into ``events``), transitively closed."""
        return frozenset(closure(self.po))

    @cached_property
    def writes(self) -> frozenset[tuple[str, int]]:
        return frozenset(e.access for e in self.events if e.kind == "W")

    @cached_property
    def shape(self) -> tuple[object, ...]:
        """The path's events but their values (every field but ``eid`` and ``value``), and its program
        order: what :func:`.candidates.combo_shape` reads of it."""
        return tuple(map(_SHAPE_OF, self.events)), self.po

@dataclass
class _State:
    pc: int
    regs: dict[str, int]
    taint: dict[str, frozenset[int]]  # register -> reads its value depends on
    ctrl: frozenset[int]  # reads the path so far depends on
    events: list[Event]
    data: list[tuple[int, int]]
    ctrls: list[tuple[int, int]]
    rmws: list[tuple[int, int]]
    back: dict[int, int]
    steps: int = 0
    cost: dict[int, tuple[int, ...]] = field(default_factory=dict)  # event index -> cost vector
    po: list[tuple[int, int]] = field(default_factory=list)
    last: int | None = None  # the thread's latest own event
    units: int = 0
    cp_open: list[int] = field(default_factory=list)  # last events of uncommitted cp.async
    cp_groups: list[list[int]] = field(default_factory=list)
    cp_all: list[int] = field(default_factory=list)  # every cp.async not yet waited for
    bulk_open: list[tuple[int, int]] = field(default_factory=list)  # (source read, completion) events
    bulk_groups: list[list[tuple[int, int]]] = field(default_factory=list)
    wg: object = None  # the wgmmas in flight (a .wgmma.WgState: immutable, shared by forks)
    tc_pending: tuple[tuple[str, int], ...] = ()  # tcgen05.st/ld not yet waited for: ("st"|"ld", event) (.tensor_memory)

    def fork(self) -> "_State":
        return _State(
            self.pc,
            dict(self.regs),
            dict(self.taint),
            self.ctrl,
            list(self.events),
            list(self.data),
            list(self.ctrls),
            list(self.rmws),
            dict(self.back),
            self.steps,
            dict(self.cost),
            list(self.po),
            self.last,
            self.units,
            list(self.cp_open),
            [list(g) for g in self.cp_groups],
            list(self.cp_all),
            list(self.bulk_open),
            [list(g) for g in self.bulk_groups],
            self.wg,
            self.tc_pending,
        )

    def split(self, n: int) -> list["_State"]:
        """``n`` states to continue with instead of this one (a read forks on its ``n`` values):
        ``n - 1`` forks, then this state itself, which its step no longer reads once it has them."""
        return [self.fork() for _ in range(n - 1)] + [self] if n else []

    def add(self, ev: Event) -> int:
        """Append one of the thread's own events, after the previous one in program order."""
        idx = self._append(ev)
        if self.last is not None:
            self.po.append((self.last, idx))
        self.last = idx
        return idx

    def add_unit(self, events: list[Event]) -> list[int]:
        """Append the events of one asynchronous operation issued here: in order among
        themselves, after everything the thread did before the issue, and before nothing."""
        self.units += 1
        ids = []
        prev = self.last
        for ev in events:
            idx = self._append(copy_with(ev, unit=self.units))
            if prev is not None:
                self.po.append((prev, idx))
            prev = idx
            ids.append(idx)
        return ids

    def complete(self, done: list[int], ev: Event) -> int:
        """A thread event that waits for the asynchronous events ``done``."""
        idx = self.add(ev)
        self.po.extend((d, idx) for d in done)
        return idx

    def _append(self, ev: Event) -> int:
        idx = len(self.events)
        self.events.append(ev)
        for r in self.ctrl:
            self.ctrls.append((r, idx))
        return idx

    def write_cost(self, idx: int, deps: frozenset[int] | set[int], loc_index: int, width: int, site: int | None = None) -> None:
        """A write's cost: the writes its value needs (the costs of the reads it depends on,
        componentwise max -- they may share writes), plus itself -- one more write to its
        location and, for a read-modify-write, one more execution of its instruction ``site``."""
        costs = [self.cost[r] for r in deps]  # each ``width`` long, nonnegative
        vec = list(map(max, *costs)) if len(costs) > 1 else list(costs[0]) if costs else [0] * width
        vec[loc_index] += 1
        if site is not None:
            vec[site] += 1
        self.cost[idx] = tuple(vec)


def copy_with(ev: Event, **changes) -> Event:
    out = object.__new__(type(ev))  # what copy.copy does for a frozen dataclass, without its dispatch
    out.__dict__.update(ev.__dict__)
    out.__dict__.update(changes)
    return out


Values = Mapping[str, Mapping[int, tuple[int, ...]]]  # physical location -> value -> cost vector


class _Reading(Mapping[str, Mapping[int, tuple[int, ...]]]):
    """``values``, adding each location whose values are asked for to ``read`` (every location
    when they are iterated): what one thread's enumeration depends on."""

    def __init__(self, values: Values, read: set[str]) -> None:
        self._values = values
        self.read = read

    def __getitem__(self, loc: str) -> Mapping[int, tuple[int, ...]]:
        self.read.add(loc)
        return self._values[loc]

    def __iter__(self) -> Iterator[str]:
        self.read.update(self._values)
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


#: one location's values and their costs, in order (the hashable form of ``Values[loc]``; an mbarrier's also
#: with the threads that write each value: :attr:`_Round.writers`)
_Frozen = tuple[object, ...]


@dataclass(frozen=True)
class _Paths:
    """One thread's paths in one fixpoint round (:func:`.events._thread_paths`)."""

    traces: tuple[Trace, ...]
    dropped: tuple[tuple[str, int, tuple[int, ...]], ...]  # the writes of paths dropped at the loop bound
    cut: frozenset[tuple[int, int]]  # the loops the bound cut
    work: int  # the budget units the enumeration spent
    #: the values the enumeration read, per physical location: the paths depend on no other location's
    read: tuple[tuple[str, _Frozen], ...]

    @cached_property
    def writes(self) -> frozenset[tuple[str, int, tuple[int, ...]]]:
        """(location, value, cost) of each write of the paths, and of the paths dropped at the loop
        bound: what the thread adds to the values of the next fixpoint round (once for paths that
        several rounds share)."""
        shared = {(id(tr.events[i]), id(cost)): (tr.events[i], cost) for tr in self.traces for i, cost in tr.costs}  # paths share events
        return frozenset([(*e.access, cost) for e, cost in shared.values()] + list(self.dropped))


@dataclass(frozen=True)
class _Round:
    """What a thread's enumeration reads besides the thread itself (:class:`_Ctx`): one fixpoint
    round's values per location, the address maps, the loop bound; ``layout``, the hashable form of
    what it reads of the program (address maps, tensor maps, loop bound, the number of atom/red sites:
    the cost vectors' layout), and ``sites``, the program's atom/red sites in order (:func:`.events._thread_paths`)."""

    values: Values
    physical: Mapping[str, str]
    virtual: Mapping[str, str]
    loop_bound: int
    layout: tuple[object, ...]
    sites: tuple[tuple[int, int], ...]
    frozen: Mapping[str, _Frozen]  # ``values`` per location in hashable form
    #: per mbarrier (physical), per value, the threads whose paths write it (-1: its initial value): an
    #: mbarrier's read forks only on the values another thread, its initial value or its own earlier
    #: operations give it (:func:`.events.thread_traces`)
    writers: Mapping[str, Mapping[int, frozenset[int]]] = field(default_factory=dict)

    def layout_of(self, p: ir.Program, tid: int) -> tuple[object, ...]:
        """What thread ``tid``'s enumeration reads of the program but its values (:func:`.events.thread_traces`):
        the thread, the layout, and the cost components of the thread's own atom/red sites."""
        return (p.threads[tid], tid, self.layout, tuple((pc, j) for j, (t, pc) in enumerate(self.sites) if t == tid))

    def reads_as(self, paths: _Paths) -> bool:
        """Do the locations ``paths``' enumeration read hold the same values (and costs) in this round?"""
        return all(self.frozen.get(loc) == vs for loc, vs in paths.read)


@dataclass(frozen=True)
class _Ctx:
    """What a thread's path enumeration needs besides its own state."""

    tid: int
    labels: Mapping[str, int]
    values: Values
    physical: Mapping[str, str]
    virtual: Mapping[str, str]
    loc_index: Mapping[str, int]
    back_limits: Mapping[int, int]  # pc of a backward jump -> how often it may be taken
    sites: Mapping[tuple[int, int], int]  # (thread, pc) of an atom/red -> its cost component
    width: int  # cost vector components: locations, then atom/red instructions
    maps: frozenset[str] = frozenset()  # the tensor maps (physical names): model.tensormap
    #: the read events made so far, by (pc, value): every path through the read at ``pc`` that returns
    #: that value reads with one event (a function of the instruction and the value; events are immutable)
    reads: dict[tuple[int, int], Event] = field(default_factory=dict)
    #: what the mbarrier wait at ``pc`` tells its thread when it reads that value (``mechanisms.mbarrier_wait_result``)
    waits: dict[tuple[int, int], int] = field(default_factory=dict)
    #: per mbarrier (physical) whose every access by this thread is one generic-proxy virtual address, the
    #: values its initial value or another thread's paths give it: a read of it returns one of these or a
    #: value the thread's own earlier operations wrote, never one only its later ones write
    #: (:func:`.bar_reads.later_writes_unreadable`; :func:`.bar_reads.bar_options`)
    readable: Mapping[str, frozenset[int]] = field(default_factory=dict)

@dataclass(frozen=True)
class ProgramTraces:
    physical: Mapping[str, str]
    virtual: Mapping[str, str]
    init: Mapping[str, int]  # physical location -> initial value
    traces: tuple[tuple[Trace, ...], ...]  # per thread
    #: (thread, pc) of each re-entered loop's backward jump at which a path was cut by the loop
    #: bound: an outcome outside the allowed set may need more iterations (not covered)
    cut: frozenset[tuple[int, int]] = frozenset()

    @cached_property
    def access_masks(self) -> tuple[int, dict[int, tuple[int, int]]]:
        """The initial values and, per trace (by ``id``: the traces are this object's), the values it
        reads and writes, as bitmasks over the (location, value) pairs of the program: what
        :func:`.candidates.feasible` asks of every combination of traces."""
        bit: dict[tuple[str, int], int] = {}
        init = 0
        for a in self.init.items():
            init |= 1 << bit.setdefault(a, len(bit))
        of_event: dict[int, int] = {}  # by ``id``: the traces of one thread share their paths' common events
        masks: dict[int, tuple[int, int]] = {}
        for per in self.traces:
            for tr in per:
                reads = writes = 0
                for e in tr.events:
                    if e.kind == "R" or e.kind == "W":
                        m = of_event.get(id(e))
                        if m is None:
                            m = of_event[id(e)] = 1 << bit.setdefault(e.access, len(bit))
                        if e.kind == "R":
                            reads |= m
                        else:
                            writes |= m
                masks[id(tr)] = (reads, writes)
        return init, masks
