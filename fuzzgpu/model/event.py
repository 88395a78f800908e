"""The event of a candidate execution (shared by :mod:`.events`, :mod:`.mechanisms`, :mod:`.ptx`)."""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import Proxy, ProxyFenceKind, Scope, Sem


class Unsupported(Exception):
    """The Program uses a mechanism the oracle does not cover (the message says which)."""


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
    ``init`` marks the initial write of a location.
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

    @property
    def is_memory(self) -> bool:
        return self.kind in ("R", "W")
