"""Issue 32, class D (a tensor map updated in flight) in the general generator: one tensor copy of a
draw in :data:`SHARE` (a TMA load, ``cp.async.bulk.tensor`` global -> shared completing on an
mbarrier) goes through a tensor map in global memory that its thread rewrites with
``tensormap.replace``:

* ``before``: the map names a stale buffer (:data:`STALE`) at the launch and is pointed at the
  copy's data just before the copy -- with the ``fence.proxy.tensormap::generic`` pair (``.release``
  after the rewrite, ``.acquire`` on the map before the copy; DeepGEMM #343, cutlass #2162), one of
  them, or none (the simplest draw: the shrink keeps the bug);
* ``in-flight``: the map names the copy's data and is pointed at the stale buffer right after the
  copy, before anything waits for it (the next tile's rewrite; DeepGEMM #430/#431, cutlass #2912).

The stale buffer holds :data:`STALE`, a value no draw writes, so the consumer's read of the copy
shows which map the copy used.  Drawn for ``runnable`` programs too (not in a PDL draw): the GPU harness gives each
instance its own map in global memory, written before each launch (docs/harness.md, "Tensor maps").
"""

from __future__ import annotations

import dataclasses

import hypothesis.strategies as st

from ..ir import CpAsyncBulk, Instruction, Location, Program, Scope, Sem, Space, TensormapFence, TensormapReplace, validate

#: one draw with a tensor copy global -> shared in this many sends it through a rewritten tensor map
SHARE = 4
#: the value of the buffer a stale (or prematurely rewritten) map names
STALE = 0x7E57
FENCES = ("none", "both", "release", "acquire")


def _fresh(p: Program, base: str) -> str:
    used = {loc.name for loc in p.locations}
    return next(f"{base}{k}" for k in range(len(used) + 1) if f"{base}{k}" not in used)


def rewritten_map(draw: st.DrawFn, p: Program) -> Program:
    """``p`` with one tensor copy global -> shared through a tensor map its thread rewrites (in one
    draw of :data:`SHARE`; module text), else ``p`` unchanged (nothing drawn)."""
    locs = {loc.name: loc for loc in p.locations}
    sites = [(t, n, ins) for t, th in enumerate(p.threads) for n, ins in enumerate(th.code)
             if isinstance(ins, CpAsyncBulk) and ins.tensor and ins.completion == "mbarrier"
             and locs[ins.src_loc].kind == "data" and locs[ins.src_loc].space is Space.GLOBAL]
    if not sites or not draw(st.sampled_from((False,) * (SHARE - 1) + (True,))):
        return p
    t, n, copy = sites[0]
    stale, m = _fresh(p, "stale"), _fresh(p, "tmap")
    where = draw(st.sampled_from(("before", "in-flight")))
    code = list(p.threads[t].code)
    through = dataclasses.replace(copy, src_loc=m)
    added: list[Instruction]
    if where == "before":
        fences = draw(st.sampled_from(FENCES))
        added = [TensormapReplace(m, copy.src_loc)]
        added += [TensormapFence(Sem.RELEASE, Scope.CTA)] if fences in ("both", "release") else []
        added += [TensormapFence(Sem.ACQUIRE, Scope.CTA, m)] if fences in ("both", "acquire") else []
        code[n:n + 1] = [*added, through]
        target = stale
    else:
        code[n:n + 1] = [through, TensormapReplace(m, stale)]
        target = copy.src_loc
    threads = p.threads[:t] + (dataclasses.replace(p.threads[t], code=tuple(code)),) + p.threads[t + 1:]
    new_locs = p.locations + (Location(stale, STALE), Location(m, kind="tensormap", target=target))
    return validate(dataclasses.replace(p, threads=threads, locations=new_locs))


__all__ = ["FENCES", "SHARE", "STALE", "rewritten_map"]
