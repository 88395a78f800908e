"""A loop whose body computes in registers is re-entered up to the loop bound (it is no spin loop).

``model.events._back_limits`` never re-entered a loop whose body writes no memory, on the argument
that a failed iteration only adds reads; a body with ``add r2, r2, 1`` carries r2 from one iteration
to the next, so the outcome ``r2 == 3`` (three reads of the flag: 0, 0, 1) was judged unreachable at
every ``--loop-bound`` and observing it would have been reported as forbidden (hostile review,
session 7)."""

from __future__ import annotations

from fuzzgpu import model
from fuzzgpu.litmus import parse

COUNT = """PTX SPIN-count
{ y=0; }
 P0@cta 0,gpu 0      | P1@cta 1,gpu 0       ;
 st.relaxed.gpu y, 1 | LC00:                ;
                     | add r2, r2, 1        ;
                     | ld.relaxed.gpu r1, y ;
                     | beq r1, 0, LC00      ;
exists (P1:r2 == 3)
"""

# the same wait without the counter: a spin loop, never re-entered, the same final states
SPIN = """PTX SPIN
{ x=0; y=0; }
 P0@cta 0,gpu 0      | P1@cta 1,gpu 0       ;
 st.weak x, 1        | LC00:                ;
 st.release.gpu y, 1 | ld.acquire.gpu r1, y ;
                     | beq r1, 0, LC00      ;
                     | ld.weak r2, x        ;
exists (P1:r2 == 0)
"""


def test_an_iteration_count_is_reachable_within_the_loop_bound() -> None:
    p = parse(COUNT)
    assert {dict(o)["P1:r2"] for o in model.analyse(p, loop_bound=1).allowed} == {1, 2}
    assert {dict(o)["P1:r2"] for o in model.analyse(p, loop_bound=3).allowed} == {1, 2, 3, 4}
    assert model.judge(p, {"P1:r2": 3}, loop_bound=3).verdict == "sc"


def test_a_spin_loop_without_register_computation_is_still_not_re_entered() -> None:
    p = parse(SPIN)
    assert model.analyse(p, loop_bound=1).allowed == model.analyse(p, loop_bound=4).allowed == frozenset({(("P1:r2", 1),)})
