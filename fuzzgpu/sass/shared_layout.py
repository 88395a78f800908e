"""Where ptxas put a kernel's ``__shared__`` variables in its shared window, as far as the SASS proves it.

PTX addresses a shared variable by its symbol (``[_ZZ1kE1b+8]``); ptxas lays the variables out in one window
and addresses them from a register holding the window's base (or some other point of it), the variable's own
offset folded into the immediates: ``b+8`` is ``[R11+0xc]`` when ``b`` sits at ``+4``.  One shift per SASS base
register (:func:`fuzzgpu.sass.matching._base_deltas`) cannot map two variables with different offsets; this
module finds each variable's offset relative to the others and to the base registers, from evidence only:

* a *group*: the PTX operations of one class at one source line (innermost frame), every one addressing a
  shared symbol directly, and the SASS operations of that class at that line, every one from one base
  register (and no other register in the address);
* the group proves ``base - symbol = t`` when the bytes the SASS operations touch are exactly the bytes the PTX
  operations touch moved by ``t`` (widened or split accesses included): two sets equal up to a move are equal
  up to one move only;
* groups whose PTX side names several symbols are used once those symbols' relative offsets are known;
* every group must agree with every other (a union-find with offsets); a component (symbols and bases linked
  by groups) where two disagree is dropped whole, with a note, and its operations are matched as without
  this module (so not checked where the addresses do not tell).

Each component is given a window of its own, far from the others (:data:`_WINDOW`): offsets of symbols no
group placed, and of register roots, stay as they were and cannot meet a placed one.  Nothing is guessed:
a symbol no group places keeps its PTX offset, and a base no group places gets no known shift."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from .ptx_ir import PtxEvent
from .sass_parser import SassMemOp

#: the distance between two components' windows (far beyond any shared window, 228 KiB)
_WINDOW = 1 << 40

_Node = tuple[str, str]  # ("sym", PTX symbol) or ("base", SASS register)
_Src = tuple[tuple[str, int], ...]
_ClassOf = Callable[[SassMemOp], str]  # the SASS class of an operation (matching._sass_mem_class)


@dataclass(frozen=True)
class SharedLayout:
    """Offsets in a virtual address space where each placed symbol starts (``symbols``) and the shift
    of each placed base register (``bases``: SASS offset + shift = the same address), with notes."""

    symbols: Mapping[str, int]
    bases: Mapping[str, int]
    notes: tuple[str, ...] = ()


NO_LAYOUT = SharedLayout({}, {})


@dataclass(frozen=True)
class _Group:
    where: str  # "LDS at FILE:LINE", for notes
    ptx: tuple[tuple[str, int, int], ...]  # (symbol, byte offset, bytes)
    base: str
    sass: tuple[tuple[int, int], ...]  # (byte offset, bytes)


class _Offsets:
    """Union-find over nodes, each with its value relative to its component's root."""

    def __init__(self) -> None:
        self.parent: dict[_Node, _Node] = {}
        self.rel: dict[_Node, int] = {}  # value(node) - value(parent)

    def find(self, x: _Node) -> tuple[_Node, int]:
        """The root of ``x`` and value(x) - value(root)."""
        path = []
        while self.parent.get(x, x) != x:
            path.append(x)
            x = self.parent[x]
        total = 0
        for n in reversed(path):  # (path compression, nearest the root first)
            total += self.rel[n]
            self.parent[n], self.rel[n] = x, total
        return x, (self.rel[path[0]] if path else 0)

    def link(self, x: _Node, y: _Node, d: int) -> bool:
        """Record value(x) - value(y) = d; False when the nodes are already linked with another value."""
        for n in (x, y):
            self.parent.setdefault(n, n)
            self.rel.setdefault(n, 0)
        rx, ox = self.find(x)
        ry, oy = self.find(y)
        if rx == ry:
            return ox - oy == d
        self.parent[rx], self.rel[rx] = ry, d + oy - ox
        return True


def shared_symbols(events: Sequence[PtxEvent]) -> set[str]:
    """The symbols a function's shared-memory operations address directly (``[sym+off]``, or a register
    the parser followed back to ``mov``/``cvta`` of it)."""
    return {e.mem.root for e in events if e.mem is not None and e.mem.space in ("shared", "cluster")
            and e.mem.root and not e.mem.root.startswith("%")}


def _one_register(m: SassMemOp) -> bool:
    """Is the address of ``m`` one register plus an immediate (``[R11+0xc]``, ``[UR4]``)?"""
    return bool(m.base) and not m.others


def _groups(events: Sequence[PtxEvent], sass: Sequence[SassMemOp], symbols: set[str], skip: frozenset[int],
            sass_class: _ClassOf) -> list[_Group]:
    """The groups (see the module's text) of a function: one per class and innermost source line that
    both sides have, and whose operations qualify."""
    ptx: dict[tuple[str, _Src], list[tuple[str, int, int]]] = {}
    mixed: set[tuple[str, _Src]] = set()
    for k, e in enumerate(events):
        if e.mem is None or not e.mem_class or e.parts or k in skip or not e.instr.src:
            continue
        key = (e.mem_class, e.instr.src[:1])
        if e.mem.root in symbols and e.mem.width > 0:
            ptx.setdefault(key, []).append((e.mem.root, e.mem.offset, e.mem.width // 8))
        else:
            mixed.add(key)
    ss: dict[tuple[str, _Src], list[SassMemOp]] = {}
    for m in sass:
        if m.instr.src:
            ss.setdefault((sass_class(m), m.instr.src[:1]), []).append(m)
    out = []
    for key, ops in ptx.items():
        there = ss.get(key, [])
        if key in mixed or not there or len({m.base for m in there}) != 1 or not all(_one_register(m) and m.width > 0 for m in there):
            continue
        (f, n), = key[1]
        out.append(_Group(f"{key[0]} at {f.rsplit('/', 1)[-1]}:{n}", tuple(ops), there[0].base,
                          tuple((m.offset, m.width // 8) for m in there)))
    return out


def _bytes(ranges: Sequence[tuple[int, int]]) -> set[int]:
    return {b for off, n in ranges for b in range(off, off + n)}


def _move(g: _Group, offsets: _Offsets) -> tuple[_Node, int] | None:
    """The component root of the group's symbols and value(base) - value(root) that the group proves, or
    None: its symbols are not (yet) of one component, or no move maps its SASS bytes onto its PTX bytes."""
    placed = [(offsets.find(("sym", s)), off, n) for s, off, n in g.ptx]
    roots = {r for (r, _), _, _ in placed}
    if len(roots) != 1:
        return None
    want = _bytes([(rel + off, n) for (_, rel), off, n in placed])
    have = _bytes(g.sass)
    t = min(want) - min(have)
    if {b + t for b in have} != want:
        return None
    return roots.pop(), t


def _solve(groups: Sequence[_Group]) -> tuple[_Offsets, set[_Node], list[str]]:
    """Link every group's base to its symbols (until no waiting group can be used); the nodes where two
    groups disagreed, and a note for each disagreement."""
    offsets = _Offsets()
    bad: set[_Node] = set()
    notes: list[str] = []
    proved: dict[_Node, str] = {}  # (for a note) the first group that placed each base
    waiting = list(groups)
    while waiting:
        left = []
        for g in waiting:
            if len({offsets.find(("sym", s))[0] for s, _, _ in g.ptx}) != 1:
                left.append(g)
                continue
            got = _move(g, offsets)
            if got is None:
                continue
            root, t = got
            node = ("base", g.base)
            if not offsets.link(node, root, t):
                bad.add(node)
                notes.append(f"shared-window layout: {g.where} and {proved.get(node, '?')} disagree on where {g.base} "
                             "points: the offsets of the shared variables they address are not known")
            proved.setdefault(node, g.where)
        if len(left) == len(waiting):
            break
        waiting = left
    return offsets, bad, notes


def shared_layout(events: Sequence[PtxEvent], sass: Sequence[SassMemOp], skip: frozenset[int],
                  sass_class: _ClassOf) -> SharedLayout:
    """The layout the SASS proves (see the module's text), for a function whose operations address two or more
    shared symbols directly (one symbol: the shift per base register already maps it); else none."""
    symbols = shared_symbols(events)
    if len(symbols) < 2:
        return NO_LAYOUT
    offsets, bad, notes = _solve(_groups(events, sass, symbols, skip, sass_class))
    bad_roots = {offsets.find(n)[0] for n in bad}
    comps: dict[_Node, list[tuple[_Node, int]]] = {}
    for node in offsets.parent:
        root, rel = offsets.find(node)
        if root not in bad_roots:
            comps.setdefault(root, []).append((node, rel))
    syms: dict[str, int] = {}
    bases: dict[str, int] = {}
    shown = []
    for k, members in enumerate(comps.values(), 1):
        lo = min(rel for (kind, _), rel in members if kind == "sym")  # (every link is a base's to a symbol's)
        for (kind, name), rel in members:
            (syms if kind == "sym" else bases)[name] = k * _WINDOW + rel - lo
        shown.append("{" + ", ".join(f"{_short(name)} {rel - lo:+#x}" for (kind, name), rel in sorted(members, key=lambda x: x[1])
                                     if kind == "sym") + "}")
    if shown:
        notes.append("shared-window layout from the SASS (by source line; offsets relative within each {}): " + " ".join(shown))
    return SharedLayout(syms, bases, tuple(notes))


def _short(symbol: str) -> str:
    """A function's ``__shared__`` variable by its own name (``_ZZ1kPfPKfE1b``: ``b``), else the symbol.  Read
    off the mangled name's last component, not by :func:`fuzzgpu.sass.names.demangle`: that may run a
    demangler program (``toolchain``), which the analysis modules must not import (an import cycle)."""
    m = _LOCAL_NAME.search(symbol)
    return m.group(2) if m and len(m.group(2)) == int(m.group(1)) else symbol


_LOCAL_NAME = re.compile(r"E(\d+)([A-Za-z_]\w*)$")


def rebased(events: Sequence[PtxEvent], layout: SharedLayout) -> list[PtxEvent]:
    """The events with each placed symbol's offset moved to its place in the layout (for the matching only)."""
    if not layout.symbols:
        return list(events)
    out = []
    for e in events:
        mem = e.mem
        at = layout.symbols.get(mem.root) if mem is not None else None
        out.append(e if mem is None or at is None else dataclasses.replace(e, mem=dataclasses.replace(mem, offset=at + mem.offset)))
    return out
