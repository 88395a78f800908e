"""The oracle's ``sc`` set against an independent interleaving interpreter, on programs of several
grids (issue 19).

The interpreter below runs the IR directly -- one instruction at a time, memory a dict, every
interleaving explored -- and shares no code with ``fuzzgpu.model``.  It encodes the execution
order between grids of one stream as the PTX ISA and the CUDA Programming Guide state it:

* a grid launched without PDL starts once every earlier grid of the stream has completed
  (CUDA stream semantics; PTX ISA "API synchronization": "Completion of a task enqueued in a CUDA
  stream synchronizes with the start of the following task in the same stream");
* a PDL dependent grid starts once every CTA of its primary grid has issued
  ``griddepcontrol.launch_dependents`` (the first invocation in the CTA counts) or completed
  (PTX ISA "griddepcontrol"; CUDA Programming Guide, PDL: without a trigger "it implicitly occurs
  after all thread blocks in the primary kernel exit"), and once every grid before the primary has
  completed.  Nothing else gates the start: a release fence before the CTA's first trigger precedes
  that trigger in the interleaving already, and one after it ("Repeated invocations of this
  instruction by threads in the current CTA will have no additional side effects past that of the
  first invocation") comes after the dependent may have started (issue 27: this interpreter used to
  wait for every such fence of every primary thread, the oracle's old rule, and so missed M1);
* ``griddepcontrol.wait`` in a dependent grid blocks until every earlier grid has completed;
* ``bar.sync ID`` (no thread count): the k-th ``bar.sync ID`` of each thread of one CTA is one
  barrier instance, whose participants are the CTA's threads that have a k-th one (Dat3M's reading
  of a count-less barrier, as in the oracle); a thread arrives, then waits until every participant
  has arrived (PTX ISA "bar, barrier": it "causes executing thread to wait for non-exited threads
  of all other warps participating in the barrier to arrive").  Threads that wait for each other
  for ever (named barriers in opposite orders) reach no final state.

Property: for every generated program, the oracle's ``sc`` set is exactly the set of outcomes of
the interleavings, derandomized (the same programs on every run): 300 programs in the test command,
2,000 in the slow set (docs/testing.md).
"""

from __future__ import annotations

from typing import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzgpu.ir import (
    Atom,
    Barrier,
    Fence,
    GridDepControl,
    Instruction,
    Load,
    Location,
    Placement,
    Program,
    RmwOp,
    Scope,
    Sem,
    Store,
    Thread,
    validate,
)
from fuzzgpu.model import analyse

LOCS = ("x", "y")
SCOPES = (Scope.CTA, Scope.GPU, Scope.SYS)

from interleavings import Interleavings  # noqa: E402 -- the interpreter (tests/model/interleavings.py)


# --------------------------------------------------------------------------------------------
# Programs of several grids
# --------------------------------------------------------------------------------------------


@st.composite
def instructions(draw, reg: str, value: int, atom_ok: bool) -> Instruction:
    kinds = ["ld", "st", "fence", "launch", "wait", "bar"] + (["atom"] if atom_ok else [])
    kind = draw(st.sampled_from(kinds))
    loc = draw(st.sampled_from(LOCS))
    if kind == "ld":
        sem = draw(st.sampled_from((Sem.WEAK, Sem.RELAXED, Sem.ACQUIRE, Sem.VOLATILE)))
        return Load(reg, loc, sem, None if sem in (Sem.WEAK, Sem.VOLATILE) else draw(st.sampled_from(SCOPES)))
    if kind == "st":
        sem = draw(st.sampled_from((Sem.WEAK, Sem.RELAXED, Sem.RELEASE, Sem.VOLATILE)))
        return Store(loc, value, sem, None if sem in (Sem.WEAK, Sem.VOLATILE) else draw(st.sampled_from(SCOPES)))
    if kind == "fence":
        return Fence(draw(st.sampled_from((Sem.ACQ_REL, Sem.SC, Sem.ACQUIRE, Sem.RELEASE))), draw(st.sampled_from(SCOPES)))
    if kind == "bar":
        return Barrier(draw(st.integers(0, 1)))
    if kind == "atom":
        op = draw(st.sampled_from((RmwOp.EXCH, RmwOp.ADD)))
        return Atom(reg, loc, op, (value,), Sem.RELAXED, draw(st.sampled_from(SCOPES)))
    return GridDepControl("launch_dependents" if kind == "launch" else "wait")


@st.composite
def grid_programs(draw) -> Program:
    """2-4 threads in 1-3 grids of one stream (each later grid PDL or not), 1-3 instructions each
    (loads, stores, atoms, fences, griddepcontrol, bar.sync 0/1), over two locations; the outcome
    is every register and every location's final value."""
    n_threads = draw(st.integers(2, 4))
    n_grids = draw(st.integers(2, 3))
    grids = sorted(draw(st.integers(0, n_grids - 1)) for _ in range(n_threads))
    pdl = tuple(g for g in range(1, n_grids) if draw(st.booleans()))
    value, threads, observed = 0, [], []
    atoms = 0
    for tid, g in enumerate(grids):
        code = []
        for i in range(draw(st.integers(1, 3))):
            value += 1
            ins = draw(instructions(f"r{i}", value, atom_ok=atoms < 2))
            atoms += isinstance(ins, Atom)
            code.append(ins)
            if isinstance(ins, (Load, Atom)):
                observed.append(f"P{tid}:r{i}")
        cta = draw(st.integers(0, 1))
        threads.append(Thread(f"P{tid}", Placement(cta=cta, grid=g), tuple(code)))
    return validate(Program("grids", tuple(threads), tuple(Location(n) for n in LOCS), None,
                            observed=tuple(observed) + LOCS, pdl_grids=pdl))


def _describe(p: Program) -> str:
    from fuzzgpu.litmus import format_program

    return format_program(p)


def _sc_set_is_the_set_of_interleavings(p: Program) -> None:
    want = Interleavings(p).outcomes()
    got = set(analyse(p).sc)
    assert got == want, (
        f"oracle sc set differs from the interleavings\n{_describe(p)}\n"
        f"only in the oracle's sc set: {sorted(got - want)}\nonly in the interleavings: {sorted(want - got)}"
    )


_GRID_SETTINGS = dict(derandomize=True, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@settings(max_examples=300, **_GRID_SETTINGS)
@given(grid_programs())
def test_sc_set_is_the_set_of_interleavings(p):
    """The oracle's sc set against the independent interleaving interpreter: 300 derandomized
    multi-grid programs in the test command (~4 CPU-seconds), 2,000 in the slow set (below)."""
    _sc_set_is_the_set_of_interleavings(p)


@pytest.mark.slow  # ~25 CPU-seconds
@settings(max_examples=2000, **_GRID_SETTINGS)
@given(grid_programs())
def test_sc_set_is_the_set_of_interleavings_2000_programs(p):
    _sc_set_is_the_set_of_interleavings(p)


def _program(threads: list[tuple[int, int, tuple[Instruction, ...]]], pdl: tuple[int, ...]) -> Program:
    ts = tuple(Thread(f"P{i}", Placement(cta=cta, grid=g), code) for i, (g, cta, code) in enumerate(threads))
    observed = tuple(f"P{i}:{ins.dst}" for i, (_, _, code) in enumerate(threads) for ins in code if isinstance(ins, Load))
    return validate(Program("t", ts, tuple(Location(n) for n in LOCS), None, observed=observed, pdl_grids=pdl))


def _cases() -> Iterator[tuple[str, Program, set]]:
    launch = GridDepControl("launch_dependents")
    # issue 19's minimal case: no trigger, no wait: the dependent starts after the primary exits
    yield "implicit trigger", _program([(0, 0, (Store("x", 1), Store("x", 2, Sem.VOLATILE))),
                                        (1, 0, (Load("r1", "x", Sem.VOLATILE),))], (1,)), {(("P1:r1", 2),)}
    # the first trigger in a CTA counts, whichever thread of the CTA issues it
    yield "first trigger of the CTA", _program([(0, 0, (launch,)), (0, 0, (Store("x", 1),)),
                                                (1, 0, (Load("r1", "x"),))], (1,)), {(("P2:r1", 0),), (("P2:r1", 1),)}
    # issue 27, M1: a fence after the thread's first trigger synchronises with nothing
    yield "fence after the first trigger", _program([(0, 0, (launch, Load("r0", "x"), Fence(Sem.ACQ_REL, Scope.GPU), launch)),
                                                     (1, 0, (Store("x", 1),))], (1,)), {(("P0:r0", 0),), (("P0:r0", 1),)}
    # issue 27, M2: nor one before a trigger of a thread that was not the CTA's first
    yield "fence before a later trigger of the CTA", _program(
        [(0, 0, (Load("r0", "x"), Fence(Sem.ACQ_REL, Scope.GPU), launch)), (0, 0, (launch,)), (1, 0, (Store("x", 1),))],
        (1,)), {(("P0:r0", 0),), (("P0:r0", 1),)}
    # every CTA of the primary must trigger or complete
    yield "every CTA", _program([(0, 0, (launch,)), (0, 1, (Store("x", 1),)),
                                 (1, 0, (Load("r1", "x"),))], (1,)), {(("P2:r1", 1),)}


def test_examples_of_execution_order():
    deadlock = _program([(0, 0, (Store("x", 1), Barrier(0), Barrier(1))), (0, 0, (Barrier(1), Barrier(0), Load("r0", "x")))], ())
    assert Interleavings(deadlock).outcomes() == set() == set(analyse(deadlock).sc) == set(analyse(deadlock).allowed)
    for what, p, want in _cases():
        assert Interleavings(p).outcomes() == want, what
        assert set(analyse(p).sc) == want, what


@st.composite
def barrier_programs(draw) -> Program:
    """2-3 threads of one CTA: loads, stores and bar.sync 0/1 (deadlocks included)."""
    threads, observed, value = [], [], 0
    for tid in range(draw(st.integers(2, 3))):
        code = []
        for i in range(draw(st.integers(1, 4))):
            value += 1
            kind = draw(st.sampled_from(("bar", "bar", "ld", "st")))
            if kind == "bar":
                code.append(Barrier(draw(st.integers(0, 1))))
            elif kind == "ld":
                code.append(Load(f"r{i}", draw(st.sampled_from(LOCS))))
                observed.append(f"P{tid}:r{i}")
            else:
                code.append(Store(draw(st.sampled_from(LOCS)), value))
        threads.append(Thread(f"P{tid}", Placement(cta=0), tuple(code)))
    return validate(Program("bars", tuple(threads), tuple(Location(n) for n in LOCS), None, observed=tuple(observed) + LOCS))


@settings(max_examples=400, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(barrier_programs())
def test_barrier_interleavings(p):
    """Named barriers: the oracle's sc set is the interleavings' outcomes, and a program whose
    threads wait for each other for ever has no outcome at all, in the sc set or the allowed set."""
    want = Interleavings(p).outcomes()
    a = analyse(p)
    assert set(a.sc) == want, f"{_describe(p)}\noracle sc {sorted(a.sc)}\ninterleavings {sorted(want)}"
    if not want:
        assert not a.allowed, f"{_describe(p)}\na deadlocked program with allowed outcomes {sorted(a.allowed)}"
