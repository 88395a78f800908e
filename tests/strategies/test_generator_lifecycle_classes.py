"""Classes H (mbarrier lifecycle) and I (phase/parity bookkeeping) of issue 32 are drawn by the default
profile ``all``: a wait on parity 1 of a fresh mbarrier (class I, a racy outcome the race property
names) and an mbarrier initialised in one CTA and published to the cluster by nothing (class H: the
racing pair (mbarrier.init, remote arrive) classed 15, its outcome a lost write the race analysis
calls racy: tests/model/test_race_lifecycle.py), each runnable by the GPU harness."""

from __future__ import annotations


from hypothesis import find

from fuzzgpu import strategies as fst
from fuzzgpu.codegen import unrunnable_reasons
from fuzzgpu.ir import ClusterBarrier, FenceMbarrierInit, MbarrierArrive, MbarrierWait, Program, Sem
from fuzzgpu.model.race import analyse_races
from fuzzgpu.bug_classes import finding_class

from draws import examples


def _unpublished_init(p: Program) -> bool:
    code = [i for t in p.threads for i in t.code]
    return (any(isinstance(i, MbarrierArrive) and i.shared_cluster for i in code)
            and not any(isinstance(i, FenceMbarrierInit) for i in code)
            and any(isinstance(i, ClusterBarrier) and i.mode == "arrive" and i.sem is Sem.RELAXED for i in code))


def test_class_i_is_drawn_racy_and_runnable():
    # a search, not a fixed sample: the generator's draw stream changes with every mechanism added
    # (a sample of 300 held two class-I draws, then none after issue 32's async classes were added)
    def class_i(p: Program) -> bool:
        return not unrunnable_reasons(p) and any(finding_class(p, rp.mechanism, rp.other_at) == 16
                                                 for pairs in analyse_races(p).racy.values() for rp in pairs)

    p = find(fst.programs("all"), class_i, settings=examples(3000))
    assert any(isinstance(i, MbarrierWait) and i.parity == 1 for t in p.threads for i in t.code)


def test_class_h_is_drawn_with_its_racing_pair_and_runnable():
    # a search, as for class I: a sample of three seeds x 100 held two such draws, then one after class L
    # became a flag pattern of its own (issue 32), which moved every later choice of a flag draw
    def class_h(p: Program) -> bool:
        return (_unpublished_init(p) and not unrunnable_reasons(p)
                and any(finding_class(p, rp.mechanism, rp.other_at) == 15 for rp in analyse_races(p).races))

    p = find(fst.programs("all"), class_h, settings=examples(3000))
    assert _unpublished_init(p)
