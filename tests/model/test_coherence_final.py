"""A final value that the ISA's Coherence axiom forbids is explained by that axiom and its cycle,
and is one class with the other failures of the same ordering.

PTX ISA, memory consistency model, Axioms, "Coherence": "If a write W precedes an overlapping write
W' in causality order, then W must precede W' in coherence order."  W is then not coherence-last,
so its value cannot be the location's final value.  The oracle builds the axiom into the coherence
orders it enumerates (``Execution.required_co``); before this test the outcome matched no
coherence order and was explained as "no candidate execution produces these values" -- as if the
values were impossible, not a failed release/acquire -- and a campaign filed it as a class of its
own (hostile review: the sim campaign with relacq-as-relaxed saved an S entry in the
class ``forbidden:no execution of the program produces these values`` beside the MP entry of
``cycle through sync[memory]``, one root cause in two entries)."""

from __future__ import annotations

from fuzzgpu import model
from fuzzgpu.corpus.entry import finding_class
from fuzzgpu.litmus import parse

# S with release / (relaxed load; fence.acq_rel): the release sequence synchronizes with the fence,
# so P0's x=1 precedes P1's x=3 in causality order and x=1 cannot be final.
S_FENCE = """PTX S
{ x=0; y=0; }
 P0@cta 0,gpu 0      | P1@cta 0,gpu 0       ;
 st.weak x, 1        | ld.relaxed.cta r0, y ;
 st.release.cta y, 2 | fence.acq_rel.cta    ;
                     | st.weak x, 3         ;
locations [P1:r0; x;]
exists (P1:r0 == 2 /\\ x == 1)
"""

MP = """PTX MP
{ x=0; y=0; }
 P0@cta 0,gpu 0      | P1@cta 0,gpu 0       ;
 st.weak x, 1        | ld.acquire.cta r0, y ;
 st.release.cta y, 2 | ld.weak r1, x        ;
exists (P1:r0 == 2 /\\ P1:r1 == 0)
"""

# 2+2W with fence.sc: whichever fence is first in Fence-SC order synchronizes with the other.
W22_SC = """PTX 2+2W-fence-sc
{ x=0; y=0; }
 P0@cta 0,gpu 0      | P1@cta 1,gpu 0      ;
 st.relaxed.gpu x, 1 | st.relaxed.gpu y, 1 ;
 fence.sc.gpu        | fence.sc.gpu        ;
 st.relaxed.gpu y, 2 | st.relaxed.gpu x, 2 ;
exists (x == 1 /\\ y == 1)
"""

# The same S without the fence: no synchronization, the outcome is allowed (the control).
S_NO_FENCE = S_FENCE.replace("fence.acq_rel.cta   ", "                   ")


def _witness(text: str) -> tuple[model.Judgement, list[str]]:
    p = parse(text)
    want = {"P1:r0": 2, "x": 1} if "S" == p.name else None
    if want is None:
        want = {"P1:r0": 2, "P1:r1": 0} if p.name == "MP" else {"x": 1, "y": 1}
    return model.explain_forbidden(p, want)


def test_s_with_fence_is_forbidden_by_coherence_with_its_cycle() -> None:
    j, lines = _witness(S_FENCE)
    assert j.verdict == "forbidden"
    assert j.reason == "forbidden by the Coherence axiom"
    assert lines == [
        "Coherence (Axioms: Coherence): P1:st.weak x, 3 -co-> P0:st.weak x, 1 -po-> P0:st.release.cta y, 2 "
        "-sync-> P1:fence.acq_rel.cta -po-> P1:st.weak x, 3"
    ]


def test_s_with_fence_is_one_class_with_mp() -> None:
    def cls(text: str) -> str:
        j, lines = _witness(text)
        return finding_class("model", parse(text).name, [(j.verdict, j.reason, lines, 10)])

    assert cls(S_FENCE) == cls(MP) == "model|*|forbidden:cycle through sync[memory]"


def test_2_2w_fence_sc_names_the_fence_sc_order() -> None:
    j, lines = _witness(W22_SC)
    assert j.verdict == "forbidden" and j.reason == "forbidden by the Coherence axiom"
    assert lines and all(ln.startswith("Coherence (Axioms: Coherence): ") and "-fence-sc->" in ln for ln in lines)


def test_without_the_fence_the_outcome_stays_allowed() -> None:
    p = parse(S_NO_FENCE)
    assert model.judge(p, {"P1:r0": 2, "x": 1}).verdict == "allowed"
