"""The general generator draws the cluster mechanisms (issue 18) and the issue-15 classes often
enough: distributed shared memory (ld/st/atom/red on ``.shared::cluster`` of another CTA of the
cluster), cluster barriers (``barrier.cluster.arrive[.release|.relaxed]`` / ``.wait[.acquire]``)
as the signal, remote mbarrier arrives (``mbarrier.arrive.{release,relaxed}.{cta,cluster}
.shared::cluster``) waited by try_wait/test_wait at ``.cta``/``.cluster``, with
``fence.mbarrier_init.release.cluster`` before a relaxed cluster barrier, and bulk copies reading
what an earlier grid wrote (stream order, PDL with ``griddepcontrol.wait``).  Every draw is valid,
covered by the oracle, runnable on the CUDA harness (or refused for a named reason) and compiles
for sm_90.  Shares are counted over a fixed seed, with generous bounds (the measured table is in
docs/fuzzing.md)."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest
from hypothesis import find, given

from fuzzgpu import codegen
from fuzzgpu import strategies as fst
from fuzzgpu.codegen import unrunnable_reasons
from fuzzgpu.bug_classes import finding_class
from fuzzgpu.ir import (
    Atom,
    Barrier,
    ClusterBarrier,
    CpAsyncBulk,
    Fence,
    Filler,
    FenceMbarrierInit,
    GridDepControl,
    Load,
    MbarrierArrive,
    MbarrierInit,
    MbarrierWait,
    Program,
    Scope,
    Sem,
    Store,
    validate,
)
from fuzzgpu.model.race import analyse_races

from draws import examples, sample
from nvcc import compile_cubin, needs_nvcc

FAST, FIND = examples(60), examples(5000)
CLUSTER = dict(mechanisms=("flag", "cluster-barrier", "remote-arrive", "dsm"), placements=("same-cluster",))
KNOWN_REFUSALS = ("async.read (a wgmma/tcgen05 operand read)", "tcgen05.fence::", "control flow in a program with async.read",
                  "async.read in a program with distributed shared memory",
                  # issue 32's classes F, D and E/G, each with its reason (fuzzgpu.codegen.runnable)
                  "runs only as the warpgroup kernel",
                  "(tensor memory, classes E/G")
N = 600


def _code(p: Program) -> list:
    return [i for t in p.threads for i in t.code]


def _first(p: Program, kind: type, tid: int) -> int:
    return next((k for k, i in enumerate(p.threads[tid].code) if isinstance(i, kind)), len(p.threads[tid].code))


#: structural features of a draw (the mechanisms), each a predicate on the Program
FEATURES = {
    "dsm st/red/atom": lambda p: any(isinstance(i, (Store, Atom)) and i.shared_cluster for i in _code(p))
    or any(type(i).__name__ == "Red" and i.shared_cluster for i in _code(p)),
    "dsm ld": lambda p: any(isinstance(i, Load) and i.shared_cluster for i in _code(p)),
    "barrier.cluster (default/.release)": lambda p: any(isinstance(i, ClusterBarrier) and i.mode == "arrive"
                                                        and i.sem is not Sem.RELAXED for i in _code(p)),
    "barrier.cluster.arrive.relaxed": lambda p: any(isinstance(i, ClusterBarrier) and i.sem is Sem.RELAXED for i in _code(p)),
    "remote mbarrier.arrive": lambda p: any(isinstance(i, MbarrierArrive) and i.shared_cluster for i in _code(p)),
    "fence.mbarrier_init": lambda p: any(isinstance(i, FenceMbarrierInit) for i in _code(p)),
    "bulk copy of an earlier grid's data": lambda p: any(
        isinstance(i, CpAsyncBulk) and i.completion == "mbarrier" and t.placement.grid > 0 for t in p.threads for i in t.code),
    "bulk copy under PDL, after griddepcontrol.wait": lambda p: any(
        t.placement.grid in p.pdl_grids and _first(p, GridDepControl, k) < _first(p, CpAsyncBulk, k) < len(t.code)
        for k, t in enumerate(p.threads)),
    "PDL": lambda p: bool(p.pdl_grids),
    # the one-way fences of the semantics table (PTX ISA 8.6+), drawn on either side
    "fence.release": lambda p: any(isinstance(i, Fence) and i.sem is Sem.RELEASE for i in _code(p)),
    "fence.acquire": lambda p: any(isinstance(i, Fence) and i.sem is Sem.ACQUIRE for i in _code(p)),
}


def _manifest(p: Program, c: int) -> bool:
    """The class in a form the hardware can show: class 1 needs work before the dependent's
    griddepcontrol.wait (ptxas hoists the .nc load into it: facts/toolchain-and-ptxas.md section
    4), class 2 a primary that triggers before its data write (the harness then delays it), class 3
    a TMA store (cp.async.bulk shared->global)."""
    if c == 1:
        return any(any(isinstance(i, (Filler, Barrier, Store, MbarrierInit)) for i in t.code[: _first(p, GridDepControl, k)])
                   for k, t in enumerate(p.threads) if t.placement.grid in p.pdl_grids)
    if c == 2:
        return any(t.code and t.code[0] == GridDepControl("launch_dependents") for t in p.threads if t.placement.grid == 0)
    if c == 3:  # a TMA store (the race property also names a PDL dependent's bulk load without the wait 'proxy-fence')
        return any(isinstance(i, CpAsyncBulk) and i.completion == "bulk_group" for i in _code(p))
    return True


@pytest.fixture(scope="module")
def draws() -> list[Program]:
    # three seeds of N/3 draws: Hypothesis's generate phase mutates earlier draws, so the draws of one
    # seed are correlated (one seed of 600 drew no class 7 at all where other seeds draw it in ~2%)
    return [p for at in (20261201, 20261202, 20261203) for p in sample(N // 3, at)]


@pytest.fixture(scope="module")
def classes(draws: list[Program]) -> list[set[int]]:
    """Per draw: the issue-15 classes of its racy outcomes' racing pairs (as a race finding names them)."""
    return [{c for pairs in analyse_races(p).racy.values() for rp in pairs
             if (c := finding_class(p, rp.mechanism, rp.other_at)) is not None} for p in draws]


def test_every_draw_validates_is_covered_and_runnable_or_refused_for_a_named_reason(draws, classes):
    assert len(draws) == len(classes) == N  # classes: analyse_races covered each (Unsupported otherwise)
    for p in draws:
        validate(p)
        for why in unrunnable_reasons(p):
            assert any(k in why for k in KNOWN_REFUSALS), why
    # the draws of classes the harness cannot run by design (F: register-level wgmma; E/G: tcgen05, sm_100a;
    # D: tensormap.replace) are about 14% of profile all's draws since they joined (2026-12-03, 1,600 draws: this
    # sample's 600 and 1,000 of seeds 11-15: 234 refused before the stage count was drawn first, 219 after;
    # 11-17% per sample): the bound leaves room for that mix, not for a harness that refuses more
    assert sum(not unrunnable_reasons(p) for p in draws) >= 0.80 * N


@pytest.mark.parametrize("feature", sorted(FEATURES))
def test_each_cluster_mechanism_appears_in_the_draws(draws, feature):
    n = sum(bool(FEATURES[feature](p)) and not unrunnable_reasons(p) for p in draws)
    assert n >= 0.01 * N, f"{feature}: {n} runnable draws of {N}"


@pytest.mark.parametrize("cls", range(1, 8))
def test_each_issue15_class_is_drawn_runnable_in_a_form_the_hardware_can_show(draws, classes, cls):
    """Every class is drawn, runnable, more than once in the sample.  The rarest, class 1 (``.nc``
    under PDL), is about 0.6% of draws (docs/fuzzing.md, 2000 draws); this sample of N draws is
    derandomized, but which programs it holds depends on the Hypothesis version and on every
    weight of the generator: at 0.6% of 600, a bound of 0.5% (3 draws) failed at 6.100 (2 draws),
    and a trial of a heavier ``.nc`` weight gave 2 draws at 6.155.  The bound is two draws, a
    presence check, not a measurement of the share.  Under two draws (class 7 at 1 of 600 after issue
    32's classes D and F joined the draws), a search of up to 3,000 draws of profile ``all`` must meet
    the class, as the searches of classes H and I do (test_generator_lifecycle_classes.py)."""
    n = sum(cls in c and not unrunnable_reasons(p) and _manifest(p, cls) for p, c in zip(draws, classes))
    if n >= 2:
        return

    def drawn(p: Program) -> bool:
        return not unrunnable_reasons(p) and _manifest(p, cls) and any(
            finding_class(p, rp.mechanism, rp.other_at) == cls for pairs in analyse_races(p).racy.values() for rp in pairs)

    find(fst.programs("all"), drawn, settings=examples(3000))  # NoSuchExample: the class is not drawn


def test_no_draw_spins_before_the_write_it_waits_for(draws):
    """The harness plays every role barrier segment by barrier segment (docs/harness.md, "Barriers"):
    a spin on a flag another CTA writes after a barrier would time out in every instance
    (codegen._spin_order_reasons); the generator waits once there instead (two PDL draws of this
    seed spun so before)."""
    assert [r for p in draws for r in unrunnable_reasons(p) if "in code the harness plays after that spin" in r] == []


def test_pdl_draws_are_all_runnable(draws):
    pdl = [p for p in draws if p.pdl_grids]
    assert len(pdl) >= 0.1 * N
    assert [unrunnable_reasons(p) for p in pdl if unrunnable_reasons(p)] == []


@FAST
@given(fst.producer_consumer(**CLUSTER, runnable=True))
def test_cluster_draws_are_valid_covered_and_runnable(p):
    validate(p)
    analyse_races(p)
    assert unrunnable_reasons(p) == []
    assert len({t.placement.cluster_id for t in p.threads}) == 1 < len({t.placement.cta for t in p.threads})


def _has(kind: type, **attrs: object):
    return lambda p: any(isinstance(i, kind) and all(getattr(i, k) == v for k, v in attrs.items()) for i in _code(p))


@pytest.mark.parametrize("what,pred", [
    ("st.shared::cluster", _has(Store, shared_cluster=True)),
    ("atom.shared::cluster", _has(Atom, shared_cluster=True)),
    ("ld.shared::cluster", _has(Load, shared_cluster=True)),
    ("barrier.cluster.arrive.relaxed", _has(ClusterBarrier, sem=Sem.RELAXED)),
    ("barrier.cluster.wait.acquire", _has(ClusterBarrier, mode="wait", sem=Sem.ACQUIRE)),
    ("mbarrier.arrive.release.cluster.shared::cluster", _has(MbarrierArrive, sem=Sem.RELEASE, scope=Scope.CLUSTER, shared_cluster=True)),
    ("mbarrier.arrive.relaxed.cta.shared::cluster", _has(MbarrierArrive, sem=Sem.RELAXED, scope=Scope.CTA, shared_cluster=True)),
    ("try_wait.cluster", lambda p: _has(MbarrierArrive, shared_cluster=True)(p) and _has(MbarrierWait, scope=Scope.CLUSTER)(p)),
    ("fence.mbarrier_init", _has(FenceMbarrierInit)),
])
def test_hypothesis_finds_each_cluster_form(what, pred):
    p = find(fst.producer_consumer(**CLUSTER), pred, settings=FIND)
    validate(p)
    assert unrunnable_reasons(p) == []


def test_a_cluster_barrier_handoff_shrinks_to_the_default_annotations():
    p = find(fst.producer_consumer(**CLUSTER), _has(ClusterBarrier), settings=FIND)
    assert len(p.threads) == 2
    assert {i.sem for i in _code(p) if isinstance(i, ClusterBarrier)} == {None}  # .release / .acquire by default
    assert [type(i).__name__ for i in p.threads[0].code] == ["Store", "ClusterBarrier", "ClusterBarrier"]
    assert p.threads[0].code[0] == Store("x0", 1)  # a weak store of global data


def test_bulk_copies_read_an_earlier_grids_data_in_stream_order_and_under_pdl():
    stream = find(fst.producer_consumer(mechanisms=("stream", "bulk-load"), runnable=True), FEATURES["bulk copy of an earlier grid's data"],
                  settings=FIND)
    assert not stream.pdl_grids and unrunnable_reasons(stream) == []
    pdl = find(fst.producer_consumer(mechanisms=("pdl", "bulk-load")), FEATURES["bulk copy under PDL, after griddepcontrol.wait"],
               settings=FIND)
    assert pdl.pdl_grids and unrunnable_reasons(pdl) == []
    # stream order orders the earlier grid's write before the copy (issue 18): the write races with
    # nothing (the copy's own completion may still be missed, by a lone try_wait)
    for rp in analyse_races(stream).races:
        assert stream.threads[rp.write_at[0]].placement.grid == 1, rp.describe()


@needs_nvcc
def test_a_sample_of_draws_compiles_for_sm_90(draws, tmp_path: Path):
    cluster, other = [], []
    for p in draws:
        if unrunnable_reasons(p) or codegen.uses_wgmma(p):
            continue  # async.read programs (wgmma) compile for sm_90a only (tests/codegen/test_wgmma.py)
        (cluster if codegen.uses_dsm(p) or any(isinstance(i, ClusterBarrier) for i in _code(p)) else other).append(p)
    sample = cluster[:40] + [p for p in other if p.pdl_grids][:20] + other[:20]
    assert len(cluster) >= 20
    src, specs = codegen.generate_module(sample)
    assert len(specs) == len(sample)
    r = compile_cubin(src, "sm_90", tmp_path, "draws")
    assert r.returncode == 0, r.stderr[-3000:]


@pytest.mark.gpu
def test_cluster_and_pdl_draws_run_on_the_gpu(draws):
    """On a GPU (marked ``gpu``): a sample of the runnable cluster and PDL draws runs on the CUDA
    harness (clusters launched with the cluster attribute, PDL through cuLaunchKernelEx) and the
    race property judges every histogram; the findings per class are printed (``-s``), not
    asserted (whether a racy outcome shows is the hardware's business)."""
    from fuzzgpu import properties
    from fuzzgpu.backends.base import RunConfig
    from fuzzgpu.backends.cuda import CudaBackend

    runnable = [p for p in draws if not unrunnable_reasons(p)]
    cluster = [p for p in runnable if any(isinstance(i, ClusterBarrier) for i in _code(p)) or codegen.uses_dsm(p)][:15]
    pdl = [p for p in runnable if p.pdl_grids][:15]
    assert cluster and pdl, (len(cluster), len(pdl))  # an empty sample ran nothing
    sample = cluster + pdl
    b = CudaBackend()
    found: collections.Counter[str] = collections.Counter()
    try:
        for p in sample:
            h = b.run(p, RunConfig(instances=2_000_000, barrier=True, spin=1000))
            assert h.instances >= 2_000_000
            v = properties.RACE.check(p, h)
            found[v.class_key if v.failed else "no finding"] += 1
    finally:
        b.close()
    print(dict(found))


PDL_BULK_NO_WAIT = """PTX PDL-bulk-no-wait
{
x0=0;
bar0 @ shared mbarrier = 0;
s0 @ shared = 0;
}
 P0@cta 0,gpu 0                   | P1@cta 0,gpu 0,grid 1                            ;
 griddepcontrol.launch_dependents | mbarrier.init bar0, 1                            ;
 st.weak x0, 1                    | bar.cta.sync 0                                   ;
                                  | mbarrier.arrive.expect_tx.release.cta bar0, 4    ;
                                  | cp.async.bulk.mbarrier s0, x0, 4, bar0           ;
                                  | LC00:                                            ;
                                  | mbarrier.try_wait.parity.acquire.cta r0, bar0, 0 ;
                                  | beq r0, 0, LC00                                  ;
                                  | ld.weak r1, s0                                   ;
                                  | griddepcontrol.wait                              ;
exists (P1:r1 == 0)
"""


def test_a_pdl_dependents_bulk_copy_before_the_wait_is_a_pdl_race():
    """A TMA load of the primary's output issued before griddepcontrol.wait races because the wait
    comes too late (issue 15 class 2, CUTLASS's TMA kernels under PDL), not for want of a proxy
    fence: with the wait before the copy the grids are ordered across proxies (issue 18).  The race
    property named it 'proxy-fence' (class 3), whose fix cannot repair it."""
    from fuzzgpu.litmus import parse

    p = dataclasses_replace_pdl(parse(PDL_BULK_NO_WAIT))
    pairs = {rp.mechanism for v in analyse_races(p).racy.values() for rp in v}
    assert pairs == {"pdl"}, pairs
    assert {finding_class(p, rp.mechanism, rp.other_at) for v in analyse_races(p).racy.values() for rp in v} == {2}


def dataclasses_replace_pdl(p: Program) -> Program:
    """The litmus dialect's grid 1 launched as a PDL dependent of grid 0."""
    import dataclasses

    return dataclasses.replace(p, pdl_grids=(1,)) if not p.pdl_grids else p
