"""The general generator draws every fence of the semantics table (issues 14/15): a fence whose row
names an IR (``Fence (<sem>)``: fuzzgpu.semantics.FENCE_KEYS) is drawn on both sides of a handoff,
the producer's from the release fences first, the consumer's from the acquire fences first (PTX ISA
9.1, 8.8 "Release and Acquire Patterns": a release pattern is "a release or acquire-release memory
fence followed by a strong write", an acquire pattern "a strong read followed by an acquire memory
fence"), then the wrong-sided one-way fence -- a plausible bug the race property judges.  Every such
draw is valid, covered by the oracle and runnable on the harness (fence.acquire / fence.release:
PTX ISA 8.6+, sm_90)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import find, given, settings

from fuzzgpu import codegen, properties, semantics
from fuzzgpu import strategies as fst
from fuzzgpu.backends.base import RunConfig
from fuzzgpu.backends.sim import SimBackend
from fuzzgpu.codegen import unrunnable_reasons
from fuzzgpu.ir import Fence, Program, Scope, Sem, validate
from fuzzgpu.litmus import format_program
from fuzzgpu.model.race import analyse_races
from fuzzgpu.profiles import load_profile

from draws import examples
from nvcc import compile_cubin, needs_nvcc

FAST, FIND = examples(60), examples(5000)
#: one flag handoff across CTAs: P0 produces, P1 consumes
FLAG = dict(mechanisms=("flag",), placements=("different-ctas",), stages=1, runnable=True)
SIDE_THREAD = {"producer": 0, "consumer": 1}


def _fences(p: Program, tid: int) -> list[Fence]:
    return [i for i in p.threads[tid].code if isinstance(i, Fence)] if tid < len(p.threads) else []


def _right(side: str) -> tuple[Sem, ...]:
    return semantics.RELEASE_FENCE_SEMS if side == "producer" else semantics.ACQUIRE_FENCE_SEMS


def test_the_generator_names_every_fence_of_the_table():
    assert set(fst.FENCE_NAMES) == {s.value for s in semantics.FENCE_KEYS}
    assert set(fst.ONE_WAY_FENCES) == {s.value for s in semantics.FENCE_KEYS} - {s.value for s in semantics.MEMORY_FENCE_SEMS}
    assert {"acquire", "release"} <= set(fst.ONE_WAY_FENCES)


@pytest.mark.parametrize("side", sorted(SIDE_THREAD))
def test_each_side_orders_its_fences_right_sided_first_and_keeps_fence_acq_rel_simplest(side):
    order = fst.side_fences(side)
    assert set(order) == set(semantics.FENCE_KEYS)
    assert order[0] is Sem.ACQ_REL  # the default: shrinking goes there
    right = [k for k, s in enumerate(order) if s in _right(side)]
    wrong = [k for k, s in enumerate(order) if s not in _right(side)]
    assert wrong and max(right) < min(wrong)
    assert fst.side_fences(side, ("none", "sc")) == (Sem.SC,)
    with pytest.raises(ValueError, match="side"):
        fst.side_fences("middle")


@pytest.mark.parametrize("sem", list(semantics.FENCE_KEYS), ids=lambda s: semantics.FENCE_KEYS[s])
@pytest.mark.parametrize("side", sorted(SIDE_THREAD))
def test_every_fence_of_the_table_is_drawn_on_each_side_and_runs_on_the_harness(sem, side):
    tid = SIDE_THREAD[side]
    p = find(fst.producer_consumer(**FLAG), lambda p: any(f.sem is sem for f in _fences(p, tid)), settings=FIND)
    validate(p)
    analyse_races(p)  # covered (model.Unsupported otherwise)
    assert unrunnable_reasons(p) == []
    assert f"fence.{sem.value}." in codegen.generate_harness(p)[0]


@pytest.mark.parametrize("sem", [Sem.ACQUIRE, Sem.RELEASE])
def test_profile_all_draws_the_one_way_fences(sem):
    p = find(fst.programs("all"), lambda p: any(f.sem is sem for t in range(len(p.threads)) for f in _fences(p, t)),
             settings=FIND)
    validate(p)


def test_a_profiles_fence_options_restrict_the_draws(tmp_path: Path):
    assert fst.profile_fences(("none", "acq_rel", "sc")) == ("none", "acq_rel", "sc", "acquire", "release")
    assert fst.profile_fences(("none", "sc")) == ("none", "sc")
    prof = tmp_path / "nofence.toml"
    prof.write_text('[shapes]\nHANDOFF = 1\n[annotations]\nfences = ["none"]\n')

    @FAST
    @given(fst.programs(load_profile(str(prof))))
    def no_memory_fence(p: Program) -> None:
        assert not any(isinstance(i, Fence) for t in p.threads for i in t.code)

    no_memory_fence()


@FAST
@given(fst.programs("classic"))
def test_the_templated_profiles_keep_their_fences(p):
    """The templated shapes draw the profile's fences only (fence.acq_rel, fence.sc): unchanged."""
    assert {i.sem.value for t in p.threads for i in t.code if isinstance(i, Fence)} <= {"acq_rel", "sc"}


def test_an_unknown_fence_is_refused():
    with pytest.raises(ValueError, match="fences: unknown"):
        find(fst.producer_consumer(fences=("none", "consume")), lambda p: True)


def test_a_fenced_handoff_shrinks_to_fence_acq_rel_cta():
    p = find(fst.producer_consumer(**FLAG), lambda p: bool(_fences(p, 0)), settings=settings(FIND, derandomize=False))
    assert _fences(p, 0) == [Fence(Sem.ACQ_REL, Scope.CTA)]


def _flipped(p: Program, tid: int) -> Program:
    """``p`` with thread ``tid``'s one-way fences turned to the other direction."""
    other = {Sem.ACQUIRE: Sem.RELEASE, Sem.RELEASE: Sem.ACQUIRE}
    t = p.threads[tid]
    code = tuple(dataclasses.replace(i, sem=other[i.sem]) if isinstance(i, Fence) and i.sem in other else i for i in t.code)
    threads = list(p.threads)
    threads[tid] = dataclasses.replace(t, code=code)
    return dataclasses.replace(p, threads=tuple(threads))


def _unfenced(p: Program, tid: int) -> Program:
    """``p`` without thread ``tid``'s fences."""
    threads = list(p.threads)
    threads[tid] = dataclasses.replace(p.threads[tid], code=tuple(i for i in p.threads[tid].code if not isinstance(i, Fence)))
    return dataclasses.replace(p, threads=tuple(threads))


@pytest.mark.parametrize("side", sorted(SIDE_THREAD))
def test_a_wrong_sided_one_way_fence_gives_a_racy_program(side):
    """A draw whose only fence on one side is the other side's one-way fence, where that fence
    matters -- with no fence there the handoff races, with the right-sided one it does not: the
    race property finds it racy (the sim backend shows the racy outcome) and names the flag."""
    tid = SIDE_THREAD[side]
    wrong = Sem.ACQUIRE if side == "producer" else Sem.RELEASE

    def pred(p: Program) -> bool:
        fs = _fences(p, tid)
        return (len(fs) == 1 and fs[0].sem is wrong and bool(analyse_races(_unfenced(p, tid)).racy)
                and not analyse_races(_flipped(p, tid)).racy)

    p = find(fst.producer_consumer(**FLAG), pred, settings=FIND)
    ra = analyse_races(p)
    assert ra.racy, format_program(p)
    assert {rp.mechanism for pairs in ra.racy.values() for rp in pairs} == {"flag"}
    v = properties.RACE.check(p, SimBackend().run(p, RunConfig(instances=100_000, seed=1)))
    assert v.failed and v.class_key == "race:flag-without-release-acquire", v.summary()
    assert unrunnable_reasons(p) == []


@needs_nvcc
def test_every_fence_at_every_scope_compiles_for_sm_90(tmp_path: Path):
    """A drawn fenced handoff with its producer's and consumer's fence set to each fence of the
    table at each scope: one module, compiled for sm_90 (fence.acquire/release need PTX ISA 8.6)."""
    base = find(fst.producer_consumer(**FLAG), lambda p: bool(_fences(p, 0)) and bool(_fences(p, 1)), settings=FIND)

    def with_fence(sem: Sem, scope: Scope) -> Program:
        threads = tuple(dataclasses.replace(t, code=tuple(Fence(sem, scope) if isinstance(i, Fence) else i for i in t.code))
                        for t in base.threads)
        return validate(dataclasses.replace(base, name=f"F-{sem.value}-{scope.value}", threads=threads))

    sample = [with_fence(sem, scope) for sem in semantics.FENCE_KEYS for scope in Scope]
    assert all(unrunnable_reasons(p) == [] for p in sample)
    src, specs = codegen.generate_module(sample)
    assert len(specs) == len(sample)
    r = compile_cubin(src, "sm_90", tmp_path, "fences")
    assert r.returncode == 0, r.stderr[-3000:]


@pytest.mark.gpu
def test_one_way_fenced_handoffs_on_the_gpu():
    """On a GPU (marked ``gpu``): the drawn flag handoff with fence.release.gpu in the producer and
    fence.acquire.gpu in the consumer shows no outcome the model forbids; its wrong-sided twin is
    judged by the race property (whether its racy outcome shows is the hardware's business: printed)."""
    from fuzzgpu.backends.cuda import CudaBackend

    base = find(fst.producer_consumer(**FLAG, scopes=("gpu",)), lambda p: bool(_fences(p, 0)) and bool(_fences(p, 1)),
                settings=FIND)

    def fenced(p_sem: Sem, c_sem: Sem) -> Program:
        threads = tuple(dataclasses.replace(t, code=tuple(Fence(p_sem if k == 0 else c_sem, Scope.GPU)
                                                          if isinstance(i, Fence) else i for i in t.code))
                        for k, t in enumerate(base.threads))
        return validate(dataclasses.replace(base, threads=threads))

    right, wrong = fenced(Sem.RELEASE, Sem.ACQUIRE), fenced(Sem.ACQUIRE, Sem.RELEASE)
    b = CudaBackend()
    try:
        h = b.run(right, RunConfig(instances=10_000_000, barrier=True, spin=1000))
        assert not properties.MODEL.check(right, h).failed, format_program(right)
        hw = b.run(wrong, RunConfig(instances=10_000_000, barrier=True, spin=1000))
        print(properties.RACE.check(wrong, hw).summary())
    finally:
        b.close()
