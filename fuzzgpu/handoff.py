"""The handoff vocabulary: one table of what the producer/consumer generator draws, what the race
property names when a handoff fails, and the PTX ISA section each rests on.

A *handoff* is the skeleton of every program :func:`fuzzgpu.strategies.producer_consumer` draws: a
producer writes data, signals by some means; a consumer waits by some means and reads the data.
Each :class:`Mechanism` below is one such means.  The race property
(:mod:`fuzzgpu.model.race`) names the mechanism whose failure let a racing read miss the data, and
:mod:`fuzzgpu.fixes` reads ``fixes`` for the changes to try first.  This table is meant to be
folded into the one table of instruction semantics (issue 14): it holds nothing the model computes,
only names, instructions and citations.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mechanism:
    """One means of a handoff.

    ``name`` is the generator's and the race property's name for it; ``instructions`` the PTX it is
    made of; ``orders`` what it orders when used right; ``failure`` what went wrong when a racing
    read missed the data through it; ``fixes`` the single changes (:mod:`fuzzgpu.fixes` kinds) that
    repair it, tried first; ``isa`` the PTX ISA 9.x section(s)."""

    name: str
    instructions: tuple[str, ...]
    orders: str
    failure: str
    fixes: tuple[str, ...]
    isa: str
    drawn: bool = True  # the generator draws it (False: a failure name only)


MECHANISMS: dict[str, Mechanism] = {m.name: m for m in (
    Mechanism("flag", ("st", "ld", "atom", "red"),
              "a release pattern synchronizes with an acquire pattern that reads its write, when the first "
              "and last operations are morally strong",
              "the flag handoff has no release/acquire pattern (a weak or relaxed flag, no fence)",
              ("strengthen", "fence"), "8.8 Release and Acquire Patterns; 8.9.4 Synchronizes-with"),
    Mechanism("bar", ("bar.sync", "bar.arrive"),
              "bar.sync/bar.arrive synchronizes with a bar.sync on the same barrier",
              "the barrier orders the threads' own accesses only", ("wait", "fence.proxy"),
              "8.9.4 Synchronizes-with (bar); barrier"),
    Mechanism("mbarrier", ("mbarrier.init", "mbarrier.arrive", "mbarrier.try_wait", "mbarrier.test_wait"),
              "an arrive with release semantics is observed by a try_wait/test_wait with acquire semantics that "
              "returns True",
              "mbarrier .relaxed arrive or wait with no fence: the phase completion orders nothing",
              ("strengthen", "fence"), "mbarrier.arrive; mbarrier.test_wait/try_wait"),
    Mechanism("pdl", ("griddepcontrol.launch_dependents", "griddepcontrol.wait"),
              "every operation of the prerequisite grid precedes every operation after griddepcontrol.wait",
              "the dependent grid read the primary's data before griddepcontrol.wait (or without one)",
              ("wait",), "griddepcontrol"),
    Mechanism("stream", (),
              "a kernel boundary in one stream orders every operation of the earlier grid before the later one",
              "(never fails)", (), "8.9.4 API synchronization (CUDA stream order)"),
    Mechanism("same-thread", (),
              "program order between the thread's own accesses of one proxy and address",
              "(never fails in one proxy)", (), "8.9.5 Base causality order"),
    Mechanism("cp.async", ("cp.async", "cp.async.commit_group", "cp.async.wait_group", "cp.async.wait_all",
                           "cp.async.mbarrier.arrive"),
              "the copy's write is visible after cp.async.wait_group/wait_all in the issuing thread, or after a "
              "wait on the mbarrier cp.async.mbarrier.arrive tracks it with",
              "the cp.async write was not yet complete: no cp.async.wait_group/wait_all (or "
              "cp.async.mbarrier.arrive) in the issuing thread before the handoff",
              ("wait",), "cp.async; cp.async.wait_group; 9.7.9.25.1 Completion Mechanisms"),
    Mechanism("bulk-load", ("cp.async.bulk.shared::cluster.global", "mbarrier.arrive.expect_tx", "mbarrier.try_wait"),
              "the copy's write (async proxy) is visible to generic reads through the implicit proxy fence once "
              "the reader observes the mbarrier phase its complete_tx completed",
              "the bulk copy's write was read before its completion was observed", ("strengthen", "wait"),
              "cp.async.bulk; 8.6 Proxies (implicit generic-async proxy fence at completion)"),
    Mechanism("bulk-store", ("cp.async.bulk.global.shared::cta", "cp.async.bulk.commit_group",
                             "cp.async.bulk.wait_group", "fence.proxy.async"),
              "a generic write is seen by the async proxy (the bulk copy's read) only through a fence.proxy.async "
              "on the causality path between them",
              "the generic write of shared memory was read by the async proxy without fence.proxy.async on the path",
              ("fence.proxy",), "8.6 Proxies; fence.proxy.async; cp.async.bulk"),
    Mechanism("dsm", ("mapa.shared::cluster", "ld.shared::cluster", "st.shared::cluster", "atom.shared::cluster",
                      "red.shared::cluster"),
              "a thread of another CTA of the cluster reaches the shared memory of the data's CTA through its "
              ".shared::cluster address; the handoff orders the accesses as for any other location",
              "(a placement of the data, not a signal: the signal's failure is named)", ("strengthen", "fence"),
              "mapa; 8.5 Scope (.cluster); State spaces (.shared::cluster)"),
    Mechanism("cluster-barrier", ("barrier.cluster.arrive", "barrier.cluster.wait"),
              "a barrier.cluster.arrive (.release by default) synchronizes with the barrier.cluster.wait "
              "(.acquire) of its phase in the other threads of the cluster",
              "a barrier.cluster.arrive.relaxed orders execution only", ("strengthen", "fence"), "barrier.cluster"),
    Mechanism("remote-arrive", ("mbarrier.init", "fence.mbarrier_init.release.cluster", "barrier.cluster.arrive",
                                "mbarrier.arrive.shared::cluster", "mbarrier.try_wait"),
              "an mbarrier initialised and published to the cluster (a release cluster barrier, or "
              "fence.mbarrier_init.release.cluster before a relaxed one) receives a remote arrive with release "
              "semantics at .cluster scope, observed by an acquiring try_wait/test_wait of .cluster scope",
              "the remote arrive or the wait is relaxed, or its scope (.cta) does not include the other CTA",
              ("strengthen", "fence"), "mbarrier.arrive (.shared::cluster); mbarrier.test_wait/try_wait; membar/fence "
              "(fence.mbarrier_init)"),
    # failure names only (the race property's classification of a racing pair)
    Mechanism("nc", ("ld.global.nc",),
              "a non-coherent load reads data that is read-only for the lifetime of the kernel",
              "ld.global.nc read data written during the reading kernel's lifetime: its read-only contract is broken",
              ("strengthen",), "8.1 Scope and applicability of the model; ld (.nc)", drawn=False),
    Mechanism("scope", (".cta", ".cluster", ".gpu", ".sys"),
              "two strong operations are morally strong when each one's scope includes the other's thread",
              "a release/acquire or fence whose scope does not include the other thread (.cta across CTAs, "
              ".cluster across clusters)", ("strengthen",), "8.5 Scope; 8.7 Morally strong operations", drawn=False),
    Mechanism("proxy", ("fence.proxy.async",),
              "accesses of different proxies are ordered only through a proxy fence on the causality path",
              "accesses in different proxies without the proxy fence on the path", ("fence.proxy",),
              "8.6 Proxies; 8.9.7 Proxy-preserved base causality order", drawn=False),
    Mechanism("bulk-completion", ("cp.async.bulk", "cp.async.bulk.wait_group", "mbarrier.try_wait"),
              "the bulk copy's write (async proxy) is visible to generic accesses through the implicit proxy fence "
              "once its completion is observed (mbarrier phase, cp.async.bulk.wait_group without .read)",
              "the bulk copy's write was accessed before its completion was observed", ("wait", "strengthen"),
              "cp.async.bulk; cp.async.bulk.wait_group; 8.6 Proxies (implicit proxy fence at completion)", drawn=False),
    Mechanism("proxy-fence", ("fence.proxy.async",),
              "a generic write is seen by the async proxy only through a fence.proxy.async on the causality path",
              "the generic write was read by the async proxy without fence.proxy.async on the path", ("fence.proxy",),
              "8.6 Proxies; fence.proxy.async; 8.9.7 Proxy-preserved base causality order", drawn=False),
    Mechanism("unordered", (),
              "conflicting accesses that are not morally strong must be ordered by causality order",
              "nothing orders the write before the read", ("fence", "strengthen", "wait"),
              "8.10.1 Data races (conflict, morally strong, causality order)", drawn=False),
)}

#: the handoff means the generator draws (profile ``all`` draws every one)
DRAWN = tuple(m.name for m in MECHANISMS.values() if m.drawn)

__all__ = ["DRAWN", "MECHANISMS", "Mechanism"]


# --------------------------------------------------------------------------------------------
# The known bug classes (issue 15): which one a race finding belongs to
# --------------------------------------------------------------------------------------------

#: the seven classes of real bugs the general generator must find, by number
CLASSES: dict[int, str] = {
    1: "ld.global.nc after griddepcontrol.wait under PDL (FlashMLA 01a2772: ptxas hoists it above the wait)",
    2: "the PDL dependent reads the primary's data before griddepcontrol.wait, or without one",
    3: "generic shared-memory write consumed by the async proxy (bulk copy shared->global) without fence.proxy.async",
    4: "cp.async data consumed without cp.async.wait_group/wait_all in the issuing thread",
    5: "release/acquire or fence with too small a scope (.cta across CTAs, .cluster across clusters)",
    6: "mbarrier .relaxed arrive or wait with no fence",
    7: "ld.global.nc moved across ld.acquire, a fence or bar.sync (no PDL)",
}

_ORDERING = ("ld.acquire", "fence.", "bar.", "barrier.", "mbarrier.try_wait", "mbarrier.test_wait", "atom.acquire",
             "atom.acq_rel")


def finding_class(program: object, mechanism: str, other_at: tuple[int, int]) -> int | None:
    """The class (a key of :data:`CLASSES`) of a racing pair with this mechanism whose second
    access is instruction ``other_at`` = (thread, index) of ``program``; None for another kind."""
    from .ir import GridDepControl, Program

    assert isinstance(program, Program)
    simple = {"pdl": 2, "proxy-fence": 3, "cp.async": 4, "scope": 5, "mbarrier": 6}
    if mechanism in simple:
        return simple[mechanism]
    if mechanism != "nc":
        return None
    tid, pc = other_at
    code = program.threads[tid].code[:pc]
    if program.threads[tid].placement.grid in program.pdl_grids:
        return 1 if any(isinstance(i, GridDepControl) and i.action == "wait" for i in code) else 2
    from .litmus import format_instruction

    return 7 if any(format_instruction(i).startswith(_ORDERING) for i in code) else None


__all__ += ["CLASSES", "finding_class"]
