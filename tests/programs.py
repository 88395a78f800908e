"""Programs many tests use, built once: the tests import them (``from programs import MP``) rather
than spelling the same IR again."""

from __future__ import annotations

from fuzzgpu import litmus
from fuzzgpu.ir import Instruction, Load, Location, Placement, Program, Scope, Sem, Store, Thread, validate


def mp(name: str = "MP", x: int = 1, y: int = 2, p1: tuple[Instruction, ...] | None = None) -> Program:
    """Message passing across two CTAs: P0 stores ``x`` to x, then ``y`` to y with a .gpu release;
    P1 (by default) loads y with a .gpu acquire, then x -- or runs ``p1``, its reads of y and x."""
    if p1 is None:
        p1 = (Load("r0", "y", Sem.ACQUIRE, Scope.GPU), Load("r1", "x"))
    return validate(Program(name, (
        Thread("P0", Placement(cta=0), (Store("x", x), Store("y", y, Sem.RELEASE, Scope.GPU))),
        Thread("P1", Placement(cta=1), p1),
    ), (Location("x"), Location("y"))))


#: message passing across two CTAs with a .gpu release store and acquire load: the handoff holds
#: (P1:r0=2 /\ P1:r1=0 is forbidden), so a backend that weakens release/acquire shows it
MP = mp()

#: issue 12's example: two atom.add on one location beside plain loads (one CTA); no condition, so
#: every register is an outcome key.  On an H200 it read values the harness could not decode.
RMW_ISSUE12 = litmus.parse("""PTX issue12-rmw
{ x=0; }
 P0@cta 0,gpu 0      | P1@cta 0,gpu 0                | P2@cta 0,gpu 0 ;
 fence.acq_rel.cta   | fence.acq_rel.cta             | ld.weak r0, x  ;
 ld.weak r1, x       | atom.relaxed.cta.add r1, x, 5 |                ;
 ld.weak r2, x       | atom.relaxed.cta.add r2, x, 6 |                ;
""")

#: a counter a re-entered loop increments: the oracle's domain is cut at the loop bound
#: (``beyond_bound``); its litmus text (``COUNT_TEXT``) for the tests that read a file
COUNT_TEXT = """PTX SPIN-count
{ y=0; }
 P0@cta 0,gpu 0      | P1@cta 1,gpu 0       ;
 st.relaxed.gpu y, 1 | LC00:                ;
                     | add r2, r2, 1        ;
                     | ld.relaxed.gpu r1, y ;
                     | beq r1, 0, LC00      ;
exists (P1:r2 == 3)
"""
COUNT = litmus.parse(COUNT_TEXT)


#: a campaign profile of MP and LB only, a short Hypothesis run: the sim backend's fault
#: relacq-as-relaxed gives it findings (tests/campaign)
SIM_MP_PROFILE = """
description = "MP and LB only, a short Hypothesis run (tests)"
[shapes]
MP = 3
LB = 1
[annotations]
loads = ["weak", "acquire"]
stores = ["weak", "release"]
fences = ["none", "acq_rel"]
scopes = ["cta", "gpu"]
placements = ["same-cta", "different-ctas"]
[sim]
instances = 20_000
[hypothesis]
max_examples = 40
shrink_seconds = 600
"""


#: the shape an H200 campaign quarantined, shrunk (issue 32's class I): one thread initialises its mbarrier, arrives with
# expect_tx, issues the TMA load that completes the phase, and waits on parity 1 -- the phase before
# the current one at the start (returns at once), the current one once phase 0 completed (spins)
WRONG_PARITY = """PTX parity
{
x0=0;
s0 @ shared = 0;
bar0 @ shared mbarrier = 0;
}
 P0@cta 0,gpu 0 ;
 mbarrier.init bar0, 1 ;
 mbarrier.arrive.expect_tx.release.cta bar0, 4 ;
 cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes s0, x0, bar0 ;
 LC00: ;
 mbarrier.test_wait.parity.acquire.cta r0, bar0, PARITY ;
 beq r0, 0, LC00 ;
 ld.weak r1, s0 ;
locations [P0:r1;]
"""




def wrong_parity(parity: int) -> Program:
    """:data:`WRONG_PARITY` waiting on ``parity``: 1 may spin for ever (the model), 0 must complete."""
    return litmus.parse(WRONG_PARITY.replace("PARITY", str(parity)))
