"""The SASS side of the SASS checker's data: an instruction (:class:`SassInstr`), the memory operation or
synchronisation it is (:class:`SassMemOp`, :class:`SassSync`), the loops and functions
:func:`fuzzgpu.sass.sass_parser.parse_sass` returns.  Frozen dataclasses, no behaviour beyond their
fields (as :mod:`fuzzgpu.sass.ptx_ir` for the PTX side)."""

from __future__ import annotations

from dataclasses import dataclass

_set_attr = object.__setattr__


@dataclass(frozen=True)
class SassInstr:
    index: int
    offset: int
    line: int
    text: str
    predicate: str
    opcode: str  # e.g. LDG
    mods: tuple[str, ...]  # e.g. ("E", "128", "CONSTANT")
    operands: str
    mainline: bool  # False: after the first unconditional EXIT, or predicated on !PT
    #: the source location nvdisasm's ``-g``/``-gi`` comments give (``//## File "F", line N
    #: inlined at "G", line M``): the innermost ``(file, line)`` first, then the call sites
    src: tuple[tuple[str, int], ...] = ()

    def __init__(self, index: int, offset: int, line: int, text: str, predicate: str, opcode: str, mods: tuple[str, ...],
                 operands: str, mainline: bool, src: tuple[tuple[str, int], ...] = ()) -> None:
        # the fields in one step: a frozen dataclass's own __init__ sets them one object.__setattr__
        # at a time, a fifth of the parse of a large listing (one instance per SASS instruction)
        # (a new dict as it is, not a copy of one made of keyword arguments)
        _set_attr(self, "__dict__", {"index": index, "offset": offset, "line": line, "text": text, "predicate": predicate,
                                     "opcode": opcode, "mods": mods, "operands": operands, "mainline": mainline, "src": src})

    @property
    def full_opcode(self) -> str:
        return ".".join((self.opcode,) + self.mods)


@dataclass(frozen=True)
class SassMemOp:
    instr: SassInstr
    kind: str  # load | store | atomic | reduction
    space: str  # global | shared | local | constant | generic
    width: int
    constant: bool  # .CONSTANT (the non-coherent path)
    strength: str  # "" | SM | GPU | SYS
    na: bool
    mmio: bool
    base: str
    offset: int
    #: the address's registers besides ``base`` (``[R2+UR4+0x10]``: ``("UR4",)``; the zero registers left out)
    others: tuple[str, ...] = ()


@dataclass(frozen=True)
class SassSync:
    instr: SassInstr
    kind: str  # ACQBULK PREEXIT MEMBAR FENCE.VIEW.ASYNC BAR SYNCS CCTL.IVALL ERRBAR CGAERRBAR BULK DEPBAR ...
    token: str | None  # the class used for matching (None: not matched, e.g. ERRBAR)


@dataclass(frozen=True)
class SassLoop:
    head: int  # index of the branch target
    tail: int  # index of the backward branch
    reads_clock: bool
    delay: bool


@dataclass(frozen=True)
class SassFunction:
    name: str
    instrs: tuple[SassInstr, ...]
    mem_ops: tuple[SassMemOp, ...]
    syncs: tuple[SassSync, ...]
    loops: tuple[SassLoop, ...]
    #: for a device function that nvdisasm lists inside a kernel's text (``$KERNEL$FUNC:``), the kernel
    container: str = ""
    #: ``(label, offset)`` of the ``.L_x_N:`` labels (the branch targets; :mod:`fuzzgpu.sass.cfg`)
    labels: tuple[tuple[str, int], ...] = ()


__all__ = ["SassFunction", "SassInstr", "SassLoop", "SassMemOp", "SassSync"]
