"""The known bug classes (issues 15 and 32): which one a race finding belongs to.

A race finding (:mod:`fuzzgpu.model.race`) names the handoff mechanism whose failure let a racing
read miss the data (:data:`fuzzgpu.semantics.MECHANISMS`); :func:`finding_class` maps the racing pair
to one of the classes of real bugs the generator must find (:data:`CLASSES`), by the program's shape
and the rules of :mod:`fuzzgpu.semantics` (:func:`~fuzzgpu.semantics.wrong_parity`,
:func:`~fuzzgpu.semantics.remote_cta_scope`, :func:`~fuzzgpu.semantics.directions`).  No rule of
the memory model lives here: only the naming of findings.
"""

from __future__ import annotations

from .ir import CpAsyncBulk, GridDepControl, Program
from .semantics import MECHANISMS, directions, remote_cta_scope, wrong_parity

#: the classes of real bugs the general generator must find, by number (issue 15's seven, issue 32's)
CLASSES: dict[int, str] = {
    1: "ld.global.nc after griddepcontrol.wait under PDL (FlashMLA 01a2772: ptxas hoists it above the wait)",
    2: "the PDL dependent reads the primary's data before griddepcontrol.wait, or without one",
    3: "generic shared-memory write consumed by the async proxy (bulk copy shared->global) without fence.proxy.async",
    4: "cp.async data consumed without cp.async.wait_group/wait_all in the issuing thread",
    5: "release/acquire or fence with too small a scope (.cta across CTAs, .cluster across clusters)",
    6: "mbarrier .relaxed arrive or wait with no fence",
    7: "ld.global.nc moved across ld.acquire, a fence or bar.sync (no PDL)",
    8: "A. generic access of a shared stage, then async-proxy reuse of it (TMA load into it) without fence.proxy.async",
    9: "B. bulk-group completion covers only the issuing thread: a TMA store's source reused after a wait_group by another "
       "thread, or wait_group N with the copy among the N most recent, or none",
    10: "C. cp.async.bulk.wait_group.read (or no wait) taken for write completion: a TMA store's global write consumed "
        "after a signal before it landed",
    13: "F. a wgmma register operand accessed in flight: the A fragment overwritten (or the accumulator read) before "
        "the wgmma.wait_group covering the wgmma's group, or written with no wgmma.fence before it (DeepGEMM #448/#449)",
    11: "D. a tensor map in global memory rewritten (tensormap.replace) and used by a tensor copy without the fence.proxy."
        "tensormap::generic release/acquire pair, or while an earlier one still reads it (DeepGEMM #343, #430; cutlass #2162)",
    12: "E. tcgen05 completion not awaited (sm_100a): a tcgen05.st published, or a tcgen05.ld's tensor-memory cell reused, "
        "before the issuing thread's tcgen05.wait::st / tcgen05.wait::ld (issue 32: cutlass #3652/#3653, #2835, #3316)",
    14: "G. a tcgen05.alloc result published weakly (sm_100a): the tensor-memory address it wrote to shared memory read by "
        "another thread with no synchronization that orders it after the allocation (a weak or relaxed flag, no barrier)",
    15: "H. mbarrier lifecycle: an mbarrier used by another CTA before its mbarrier.init is visible (fence.mbarrier_init "
        "missing, or issued by a thread that did not initialise it)",
    16: "I. phase/parity bookkeeping: a wait on the wrong parity (the immediately preceding phase) returns at once",
    17: "J. cluster mbarrier handoff with a .cta scope: a remote mbarrier.arrive (.shared::cluster) of release .cta, or "
        "an acquire wait of .cta scope on an mbarrier another CTA arrives on",
    19: "L. mixed-size accesses: a flag (or any word) written and read with accesses of different sizes (a 32-bit st "
        "and a 16-bit ld of its low half): a partial overlap, not morally strong, so no synchronization (vllm #2760)",
}

#: each class's name in a race finding's class key (``race:missing-proxy-fence``): what failed, in
#: words.  Keys saved before the names existed hold the number (``race:3``): :func:`race_name` maps it.
CLASS_NAMES: dict[int, str] = {
    1: "nc-load-after-pdl-wait",
    2: "pdl-read-before-wait",
    3: "missing-proxy-fence",
    4: "cp-async-without-wait",
    5: "scope-too-small",
    6: "relaxed-mbarrier",
    7: "nc-load-across-sync",
    8: "generic-then-async-reuse",
    9: "bulk-source-reused-before-read",
    10: "bulk-read-wait-taken-for-write",
    13: "wgmma-register-in-flight",
    11: "tensormap-update-in-flight",
    12: "tcgen05-not-awaited",
    14: "tmem-alloc-published-weakly",
    15: "mbarrier-lifecycle",
    16: "mbarrier-wrong-parity",
    17: "remote-mbarrier-cta-scope",
    19: "mixed-size-access",
}


def race_name(part: str) -> str:
    """The readable name of one part of a race finding's class key: a known class (:data:`CLASS_NAMES`;
    its number, as keys saved before the names had it, maps to its name), else the failure of a
    mechanism (:attr:`Mechanism.race_name`, else the mechanism's name); a name passes through."""
    if part.isdigit() and int(part) in CLASS_NAMES:
        return CLASS_NAMES[int(part)]
    m = MECHANISMS.get(part)
    return (m.race_name or m.name) if m is not None else part



def finding_class(program: object, mechanism: str, other_at: tuple[int, int]) -> int | None:
    """The class (a key of :data:`CLASSES`) of a racing pair with this mechanism whose second
    access is instruction ``other_at`` = (thread, index) of ``program``; None for another kind."""
    assert isinstance(program, Program)
    if mechanism in ("mbarrier", "flag", "unordered") and wrong_parity(program, other_at):
        return 16  # the handoff's wait tested the wrong phase (not an .nc, proxy or async-copy failure)
    if mechanism == "mbarrier" and remote_cta_scope(program):
        return 17
    simple = {"pdl": 2, "proxy-fence": 3, "cp.async": 4, "scope": 5, "mbarrier": 6, "mbarrier-init": 15, "mixed-size": 19, "wgmma-register": 13,
              "tcgen05-wait": 12, "tcgen05-alloc": 14,
              "tensormap-fence": 11, "tensormap-overwrite": 11}
    if mechanism in simple:
        return simple[mechanism]
    if mechanism in ASYNC_CLASS_MECHANISMS:
        return async_class(program, mechanism, other_at)
    if mechanism != "nc":
        return None
    tid, pc = other_at
    code = program.threads[tid].code[:pc]
    if program.threads[tid].placement.grid in program.pdl_grids:
        return 1 if any(isinstance(i, GridDepControl) and i.action == "wait" for i in code) else 2
    # an earlier instruction that orders a later weak load after it (an acquire, a fence, bar.sync,
    # a completed wait): the instruction-semantics table's acquire direction
    return 7 if any(directions(i)[1] for i in code) else None


#: the mechanisms of a racing pair that may be one of issue 32's async-proxy classes (:func:`async_class`)
ASYNC_CLASS_MECHANISMS = ("async-overwrite", "bulk-source-overwrite", "bulk-completion")


def async_class(program: Program, mechanism: str, other_at: tuple[int, int]) -> int | None:
    """Issue 32's async-proxy classes: a read that saw a later async-proxy write of its buffer (8, the
    race property's ``async-overwrite``); a bulk copy's source read that saw a later generic write (9,
    ``bulk-source-overwrite``); a generic read of a location a bulk_group copy (a TMA store) writes,
    before that write's completion reached it (10: ``bulk-completion`` of a TMA store -- completion on
    an mbarrier is another mechanism's)."""
    if mechanism == "async-overwrite":
        return 8
    if mechanism == "bulk-source-overwrite":
        return 9
    tid, pc = other_at
    ins = program.threads[tid].code[pc] if 0 <= tid < len(program.threads) and pc >= 0 else None
    locs = set(ins.locations()) if ins is not None else set()
    stores = any(isinstance(i, CpAsyncBulk) and i.completion == "bulk_group" and i.dst_loc in locs
                 for t in program.threads for i in t.code)
    return 10 if mechanism == "bulk-completion" and stores else None


__all__ = ["ASYNC_CLASS_MECHANISMS", "CLASSES", "CLASS_NAMES", "async_class", "finding_class", "race_name"]
