"""The event of a candidate execution (shared by :mod:`.events`, :mod:`.mechanisms`, :mod:`.ptx`)."""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass

from ..ir import Proxy, ProxyFenceKind, Scope, Sem


class Unsupported(Exception):
    """The Program uses a mechanism the oracle does not cover (the message says which)."""


def first_verdict(outcome: object, verdicts: Sequence[tuple[str, Container[object]]], beyond_bound: str) -> str:
    """The name of the first of ``verdicts`` whose outcomes hold ``outcome``; else ``forbidden``,
    unless a path longer than the loop bound may produce it (``beyond_bound`` says why):
    :class:`Unsupported` then."""
    for name, outcomes in verdicts:
        if outcome in outcomes:
            return name
    if beyond_bound:
        raise Unsupported(beyond_bound)
    return "forbidden"


#: The most work one question to the oracle (``analyse``, ``judge``, ``termination``...) may take,
#: in units: one per thread path, per combination of paths, per candidate execution and per
#: coherence order examined, candidates and coherence orders weighted by their events (a bigger
#: execution costs more to check).  Past it the oracle raises :class:`TooLarge`: the program is
#: "not covered: too large", never a hang and never "clean".  docs/oracle.md gives the figures.
ORACLE_BUDGET = 4_000_000


def check_cost(n: int) -> int:
    """Budget units of checking one candidate execution (or one coherence order) of ``n`` events:
    its relations are ``n`` rows of ``n``-bit sets, composed and closed (about ``n**2`` bit work)."""
    return n + n * n // 16


class TooLarge(Unsupported):
    """The program needs more work than the oracle's budget (:data:`ORACLE_BUDGET`): not covered."""


class Budget:
    """The work left to one oracle question (a counter, passed down the enumeration; not shared
    between questions)."""

    def __init__(self, limit: int = ORACLE_BUDGET) -> None:
        self.limit = limit
        self.used = 0

    def spend(self, units: int = 1) -> None:
        self.used += units
        if self.used > self.limit:
            raise TooLarge(
                f"too large: the oracle's budget of {self.limit:,} units of work (paths, candidate executions, "
                f"coherence orders; ORACLE_BUDGET) is spent before the enumeration ends"
            )


@dataclass(frozen=True)
class Event:
    """One event of an execution (PTX ISA, "Memory operations": reads, writes, fences...).

    ``kind``: ``R`` read, ``W`` write, ``F`` memory fence (fence.sc / fence.acq_rel), ``PF`` proxy
    fence, ``B`` barrier, ``X`` a control event with no memory effect of its own (``action``:
    ``gdc_wait``, ``gdc_launch``, ``wait`` for cp.async / bulk-group completion, ``tcgen05``).
    ``unit`` is 0 for the thread's own events and k > 0 for the k-th asynchronous operation it
    issued (a cp.async or cp.async.bulk, whose events are ordered after the issue but not before
    the thread's later instructions).  ``sem`` is the effective semantics (volatile is relaxed, see
    :func:`fuzzgpu.ir.effective`).  ``loc`` is the physical location, ``vloc`` the virtual address.
    ``init`` marks the initial write of a location.  ``width``: a read's or write's size in bits,
    at the word's offset 0 (different widths overlap partially: issue 32, class L).  ``action`` also names the writes the
    async-proxy release relates (:func:`.ptx.async_release`): ``complete_tx`` (a bulk copy's
    completion on its mbarrier), ``cp_async`` (a cp.async's write), ``cp_async_arrive`` (the
    arrival of ``cp.async.mbarrier.arrive``); ``implicit`` marks a bulk copy's implicit proxy fence.
    """

    eid: int
    tid: int  # thread index, -1 for initial writes
    pc: int  # instruction index in the thread, -1 for initial writes
    kind: str
    sem: Sem = Sem.WEAK
    scope: Scope | None = None
    proxy: Proxy = Proxy.GENERIC
    loc: str | None = None
    vloc: str | None = None
    value: int | None = None
    fence_kind: ProxyFenceKind | None = None
    fence_space: str | None = None  # fence.proxy.async.{global,shared::cta,shared::cluster}
    barrier: tuple[int | None, int] | None = None  # (instance, id)
    barrier_count: int | None = None
    barrier_mode: str | None = None
    rmw: bool = False
    nc: bool = False
    init: bool = False
    action: str | None = None
    unit: int = 0
    #: the access's size in bits (``ld``/``st`` ``.u8``/``.u16``; 32: the location's word)
    width: int = 32

    def __init__(
        self, eid: int, tid: int, pc: int, kind: str, sem: Sem = Sem.WEAK, scope: Scope | None = None,
        proxy: Proxy = Proxy.GENERIC, loc: str | None = None, vloc: str | None = None, value: int | None = None,
        fence_kind: ProxyFenceKind | None = None, fence_space: str | None = None, barrier: tuple[int | None, int] | None = None,
        barrier_count: int | None = None, barrier_mode: str | None = None, rmw: bool = False, nc: bool = False,
        init: bool = False, action: str | None = None, unit: int = 0, width: int = 32,
    ) -> None:
        """The dataclass's own ``__init__`` (the fields in their order, the same defaults:
        tests/model/test_event_init.py), storing them in one ``__dict__`` update instead of one
        ``object.__setattr__`` a field (a frozen dataclass's): the path enumeration makes an event
        per instruction of every path, and this halves its cost."""
        self.__dict__.update({
            "eid": eid, "tid": tid, "pc": pc, "kind": kind, "sem": sem, "scope": scope, "proxy": proxy, "loc": loc,
            "vloc": vloc, "value": value, "fence_kind": fence_kind, "fence_space": fence_space, "barrier": barrier,
            "barrier_count": barrier_count, "barrier_mode": barrier_mode, "rmw": rmw, "nc": nc, "init": init,
            "action": action, "unit": unit, "width": width,
        })

    @property
    def is_memory(self) -> bool:
        return self.kind in ("R", "W")

    @property
    def location(self) -> str:
        """``loc`` of a read or write, which always has one (``loc`` is None for the other kinds)."""
        if self.loc is None:
            raise TypeError(f"event {self.eid} ({self.kind}) has no location")
        return self.loc

    @property
    def access(self) -> tuple[str, int]:
        """``(loc, value)`` of a read or write of a path: every read returns, and every write
        writes, a value (``value`` is None only for the other kinds, and for an asynchronous copy's
        events before the path gives them the value read)."""
        if self.loc is None or self.value is None:
            raise TypeError(f"event {self.eid} ({self.kind}) is no access with a value")
        return self.loc, self.value
