"""Tensor maps the kernel writes (issue 32, class D): which locations are ``tensormap`` locations,
who may use them, and how the model names the location a map points at.

A ``tensormap`` location is a 128-byte tensor map (a 1-D tiled ``CUtensorMap``) in global memory:
encoded by the host before the launch to name its ``target``'s buffer, rewritten by
``tensormap.replace`` (:class:`.instructions.TensormapReplace`) to name another global data
location's, read by a tensor copy (``cp.async.bulk.tensor`` whose global operand is the map) in the
tensormap proxy, and named by the acquire form of ``fence.proxy.tensormap::generic``.  Nothing else
may touch it: it is no data word (PTX ISA "Tensor-map": an opaque object).
"""

from __future__ import annotations

from collections.abc import Mapping

from .enums import ProgramError, Proxy, Sem, Scope, Space
from .instructions import CpAsyncBulk, Instruction, TensormapFence, TensormapReplace
from .program import Location

TENSORMAP = "tensormap"


def is_tensormap(locs: Mapping[str, Location], name: str | None) -> bool:
    """Is ``name`` a declared ``tensormap`` location?"""
    return name is not None and name in locs and locs[name].kind == TENSORMAP


def check_tensormap_location(loc: Location, locs: Mapping[str, Location]) -> None:
    """A tensor map lives in global memory, is no alias and names a global data location at the
    launch (``target``); only a tensor map has a target."""
    if loc.proxy is Proxy.TENSORMAP:
        raise ProgramError(f"location {loc.name!r}: no location is declared in the tensormap proxy (a tensor map is a kind)")
    if loc.kind != TENSORMAP:
        if loc.target is not None:
            raise ProgramError(f"location {loc.name!r}: only a tensormap location names a target")
        return
    if loc.space is not Space.GLOBAL or loc.alias_of is not None or loc.init != 0:
        raise ProgramError(f"tensor map {loc.name!r} must be a global location, not an alias, with no initial value "
                           "of its own (it names its target)")
    _check_address(loc.target, locs, f"tensor map {loc.name!r}")


def _check_address(name: str | None, locs: Mapping[str, Location], what: str) -> None:
    target = locs.get(name) if name is not None else None
    if target is None or target.kind != "data" or target.space is not Space.GLOBAL:
        raise ProgramError(f"{what} must name a declared global data location, not {name!r}")


def check_tensormap_uses(ins: Instruction, locs: Mapping[str, Location]) -> None:
    """Only a tensor copy global -> shared (its global operand), ``tensormap.replace`` and the
    acquire ``fence.proxy.tensormap::generic`` name a tensor map; each names one where it must."""
    if isinstance(ins, TensormapReplace):
        if not is_tensormap(locs, ins.map):
            raise ProgramError(f"tensormap.replace writes a tensor map: {ins.map!r} is not a tensormap location")
        _check_address(ins.address, locs, "tensormap.replace's new global address")
        return
    if isinstance(ins, TensormapFence):
        if ins.sem not in (Sem.RELEASE, Sem.ACQUIRE) or ins.scope not in tuple(Scope):
            raise ProgramError("fence.proxy.tensormap::generic is .release or .acquire, at a scope")
        if (ins.sem is Sem.ACQUIRE) != (ins.map is not None) or (ins.map is not None and not is_tensormap(locs, ins.map)):
            raise ProgramError("fence.proxy.tensormap::generic.acquire names its tensor map ([map], 128); .release names none")
        return
    if getattr(ins, "proxy", None) is Proxy.TENSORMAP:
        raise ProgramError("only a tensor copy reads in the tensormap proxy (its tensor map)")
    maps = [n for n in ins.locations() if is_tensormap(locs, n)]
    if not maps:
        return
    if not (isinstance(ins, CpAsyncBulk) and ins.tensor and ins.reduce is None and maps == [ins.src_loc]
            and locs[ins.dst_loc].space is Space.SHARED):
        raise ProgramError(f"{maps[0]!r} is a tensor map: only a tensor copy global -> shared (its global operand), "
                           "tensormap.replace and fence.proxy.tensormap::generic.acquire name it")


__all__ = ["TENSORMAP", "check_tensormap_location", "check_tensormap_uses", "is_tensormap"]
