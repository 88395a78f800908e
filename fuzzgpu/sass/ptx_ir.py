"""The PTX side of the SASS checker's data: a statement (:class:`PtxInstr`), the memory operation or
synchronisation point it is (:class:`PtxMemOp`, :class:`PtxSync`), what an asynchronous copy reads
and writes (:class:`AsyncAccess`), the events, loops and functions :func:`fuzzgpu.sass.ptx_parser.parse_ptx`
returns.  Frozen dataclasses, no behaviour beyond their fields."""

from __future__ import annotations

from dataclasses import dataclass

_set_attr = object.__setattr__


@dataclass(frozen=True)
class PtxInstr:
    """One PTX statement: ``index`` in program order within its function, ``line`` in the file."""

    index: int
    line: int
    text: str
    predicate: str
    opcode: str
    mods: tuple[str, ...]
    operands: tuple[str, ...]
    #: the source location of ``nvcc -lineinfo``/``-G`` (the ``.loc`` before it): the innermost
    #: ``(file, line)`` first, then the ``inlined_at`` call site when the ``.loc`` names one
    src: tuple[tuple[str, int], ...] = ()

    def __init__(self, index: int, line: int, text: str, predicate: str, opcode: str, mods: tuple[str, ...],
                 operands: tuple[str, ...], src: tuple[tuple[str, int], ...] = ()) -> None:
        # the fields in one step: a frozen dataclass's own __init__ sets them one object.__setattr__
        # at a time, a fifth of the parse of a large module (one instance per PTX statement)
        # (a new dict as it is, not a copy of one made of keyword arguments)
        _set_attr(self, "__dict__", {"index": index, "line": line, "text": text, "predicate": predicate, "opcode": opcode,
                                     "mods": mods, "operands": operands, "src": src})


@dataclass(frozen=True)
class PtxMemOp:
    instr: PtxInstr
    kind: str  # load | store | atomic | reduction
    space: str  # global | shared | cluster | local | const | generic
    sem: str  # weak | relaxed | acquire | release | acq_rel | volatile | mmio | nc
    scope: str  # cta | cluster | gpu | sys | "" (weak, nc)
    width: int  # bits
    root: str  # root register/symbol of the address
    offset: int  # byte offset from root

    @property
    def address(self) -> tuple[str, int]:
        return (self.root, self.offset)


@dataclass(frozen=True)
class PtxSync:
    instr: PtxInstr
    kind: str  # fence | barrier | arrive | griddep-wait | griddep-launch | mbarrier-* | proxy-fence ...
    release: bool  # earlier operations must not move below it
    acquire: bool  # later operations must not move above it
    space: str = ""  # for proxy fences: the only state space it orders ("" = all)
    #: for the cp.async / bulk async-group waits: the PTX instruction indices of the memory
    #: operations of the function that conflict with a copy the wait completes (see
    #: :func:`~fuzzgpu.sass.ptx_async.async_conflicts`); None: the point orders every later operation (an acquire)
    orders_only: frozenset[int] | None = None
    #: for an mbarrier operation: its mbarrier operand as (root, byte offset), the address followed
    #: through ``mov``/``add``/``cvta`` as a memory operation's is (None: not an mbarrier operation)
    address: tuple[str, int] | None = None


@dataclass(frozen=True)
class AsyncAccess:
    """What an asynchronous copy (cp.async, cp{.reduce}.async.bulk) reads (its source) or writes
    (its destination), as far as the PTX says: the state space, the address (``root`` "" when
    unknown, e.g. a tensor map) and the size in bytes (0 when not an immediate)."""

    space: str
    root: str
    offset: int
    size: int
    write: bool
    #: a tensor copy's read of its tensor map (the tensormap proxy; class D): it conflicts with a
    #: ``tensormap.replace`` of the map only (a bulk async-group "optionally can be used for the
    #: completion of reading of the tensormap object": PTX ISA cp.async.bulk.tensor)
    tensormap: bool = False


@dataclass(frozen=True)
class PtxEvent:
    """A PTX instruction the analysis cares about: a memory operation, a synchronisation point, or
    both (``ld.acquire``), with the SASS token classes ptxas is expected to emit for it."""

    instr: PtxInstr
    mem: PtxMemOp | None
    sync: PtxSync | None
    mem_class: str | None
    sync_classes: tuple[str, ...]
    #: an instruction ptxas expands into any number of SASS memory accesses of several families
    #: (``tensormap.replace``: loads and stores of the map's fields; ``tensormap.cp_fenceproxy``: a
    #: shared load and a global write per lane; an ``atom``/``red`` at a generic address: its global
    #: path and the shared window's emulation): ``(SASS family, the access it stands for)``; ()
    #: for an ordinary memory operation, which is one SASS access of ``mem_class``
    parts: tuple[tuple[str, PtxMemOp], ...] = ()


@dataclass(frozen=True)
class PtxLoop:
    head: int  # instruction index of the first statement after the label
    tail: int  # instruction index of the backward branch
    line: int
    reads_clock: bool
    delay: bool  # no memory operation or synchronisation inside
    #: the instruction indices of the loop: its natural loop on the function's control-flow graph
    #: (:func:`fuzzgpu.sass.loops.back_edges`), not the listing from ``head`` to ``tail`` (a rotated
    #: loop's body lies after its backward branch)
    body: frozenset[int]


@dataclass(frozen=True)
class PtxFunction:
    name: str
    entry: bool
    line: int
    instrs: tuple[PtxInstr, ...]
    events: tuple[PtxEvent, ...]
    loops: tuple[PtxLoop, ...]
    #: ``(label, index of the instruction it labels)`` (the first of a name; :mod:`fuzzgpu.sass.cfg`)
    labels: tuple[tuple[str, int], ...] = ()
    #: ``(index of a bra, index of its target)``: the label visible from the branch, scope by scope
    branches: tuple[tuple[int, int], ...] = ()


__all__ = ["AsyncAccess", "PtxEvent", "PtxFunction", "PtxInstr", "PtxLoop", "PtxMemOp", "PtxSync"]
