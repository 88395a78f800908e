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
  after all thread blocks in the primary kernel exit"), once every grid before the primary has
  completed, and once every release fence of ``.gpu``/``.sys`` scope that precedes a
  ``launch_dependents`` in a primary thread has executed (PTX ISA "griddepcontrol": "A release
  fence preceding a griddepcontrol.launch_dependents in program-order synchronizes with the start
  of a dependent grid");
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

# --------------------------------------------------------------------------------------------
# The interleaving interpreter
# --------------------------------------------------------------------------------------------


def _is_launch(ins: Instruction) -> bool:
    return isinstance(ins, GridDepControl) and ins.action == "launch_dependents"


def _is_wait(ins: Instruction) -> bool:
    return isinstance(ins, GridDepControl) and ins.action == "wait"


class Interleavings:
    """Every interleaving of a straight-line program (loads, stores, atoms, fences,
    griddepcontrol), with the execution order between grids of the module docstring."""

    def __init__(self, p: Program) -> None:
        self.p = p
        self.codes = [t.code for t in p.threads]
        self.grid = [t.placement.grid for t in p.threads]
        self.cta = [(t.placement.grid, t.placement.gpu, t.placement.cluster_id, t.placement.cta) for t in p.threads]
        self.pdl = set(p.pdl_grids)
        # release fences (.gpu/.sys) that precede a launch_dependents in their thread
        self.gating_fences = []
        for tid, code in enumerate(self.codes):
            for i, ins in enumerate(code):
                if isinstance(ins, Fence) and ins.scope in (Scope.GPU, Scope.SYS) and any(_is_launch(c) for c in code[i + 1 :]):
                    self.gating_fences.append((tid, i))
        self.first_launch = [next((i for i, ins in enumerate(code) if _is_launch(ins)), None) for code in self.codes]
        # barrier instances: (thread, pc) of a bar.sync -> the (thread, pc) of every participant
        uses: dict[tuple, list[tuple[int, int]]] = {}
        for tid, code in enumerate(self.codes):
            count: dict[object, int] = {}
            for i, ins in enumerate(code):
                if isinstance(ins, Barrier):
                    k = count.get(ins.id, 0)
                    count[ins.id] = k + 1
                    uses.setdefault((self.cta[tid], ins.id, k), []).append((tid, i))
        self.instance = {member: members for members in uses.values() for member in members}

    def _done(self, pcs: tuple[int, ...], tid: int) -> bool:
        return pcs[tid] >= len(self.codes[tid])

    def _grids_done(self, pcs: tuple[int, ...], below: int) -> bool:
        return all(self._done(pcs, t) for t in range(len(pcs)) if self.grid[t] < below)

    def _triggered(self, pcs: tuple[int, ...], tid: int) -> bool:
        """Has the CTA of ``tid`` triggered its dependents (first launch executed) or completed?"""
        mates = [t for t in range(len(pcs)) if self.cta[t] == self.cta[tid]]
        launched = any(self.first_launch[t] is not None and pcs[t] > self.first_launch[t] for t in mates)
        return launched or all(self._done(pcs, t) for t in mates)

    def _started(self, pcs: tuple[int, ...], g: int) -> bool:
        if g not in self.pdl:
            return self._grids_done(pcs, g)
        if not self._grids_done(pcs, g - 1):
            return False
        primary = [t for t in range(len(pcs)) if self.grid[t] == g - 1]
        if not all(self._triggered(pcs, t) for t in primary):
            return False
        return all(pcs[t] > i for t, i in self.gating_fences if self.grid[t] == g - 1)

    def _enabled(self, pcs: tuple[int, ...], arrived: tuple[bool, ...], tid: int) -> bool:
        if self._done(pcs, tid):
            return False
        g = self.grid[tid]
        if pcs[tid] == 0 and not arrived[tid] and not self._started(pcs, g):
            return False
        ins = self.codes[tid][pcs[tid]]
        if _is_wait(ins) and g in self.pdl:
            return self._grids_done(pcs, g)
        if isinstance(ins, Barrier) and arrived[tid]:  # released once every participant has arrived
            return all(pcs[t] > i or (pcs[t] == i and arrived[t]) for t, i in self.instance[(tid, pcs[tid])])
        return True

    def _step(self, ins: Instruction, regs: dict[str, int], mem: dict[str, int]) -> None:
        if isinstance(ins, Load):
            regs[ins.dst] = mem[ins.loc]
        elif isinstance(ins, Store):
            mem[ins.loc] = ins.src if isinstance(ins.src, int) else regs.get(ins.src, 0)
        elif isinstance(ins, Atom):
            old = mem[ins.loc]
            b = ins.operands[0]
            assert isinstance(b, int)
            mem[ins.loc] = {RmwOp.EXCH: b, RmwOp.ADD: old + b}[ins.operation]
            regs[ins.dst] = old
        # fences and griddepcontrol change no value

    def outcomes(self) -> set[tuple[tuple[str, int], ...]]:
        keys = self.p.outcome_keys()
        n = len(self.codes)
        start = (tuple([0] * n), tuple(() for _ in range(n)), tuple(sorted((loc.name, loc.init) for loc in self.p.locations)),
                 tuple([False] * n))
        seen = set()
        stack = [start]
        out = set()
        while stack:
            state = stack.pop()
            if state in seen:
                continue
            seen.add(state)
            pcs, regs, mem, arrived = state
            moved = False
            for tid in range(n):
                if not self._enabled(pcs, arrived, tid):
                    continue
                moved = True
                ins = self.codes[tid][pcs[tid]]
                if isinstance(ins, Barrier) and not arrived[tid]:  # arrive, then wait
                    stack.append((pcs, regs, mem, arrived[:tid] + (True,) + arrived[tid + 1 :]))
                    continue
                r, m = dict(regs[tid]), dict(mem)
                self._step(ins, r, m)
                new_pcs = pcs[:tid] + (pcs[tid] + 1,) + pcs[tid + 1 :]
                new_regs = regs[:tid] + (tuple(sorted(r.items())),) + regs[tid + 1 :]
                stack.append((new_pcs, new_regs, tuple(sorted(m.items())), arrived[:tid] + (False,) + arrived[tid + 1 :]))
            if not moved and all(self._done(pcs, t) for t in range(n)):
                out.add(self._outcome(keys, regs, dict(mem)))  # else: threads wait for ever, no final state
        return out

    def _outcome(self, keys, regs, mem) -> tuple[tuple[str, int], ...]:
        names = [t.name for t in self.p.threads]
        vals = []
        for k in keys:
            if ":" in k:
                t, r = k.split(":", 1)
                vals.append((k, dict(regs[names.index(t)]).get(r, 0)))
            else:
                vals.append((k, mem[k]))
        return tuple(vals)


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
        return Fence(draw(st.sampled_from((Sem.ACQ_REL, Sem.SC))), draw(st.sampled_from(SCOPES)))
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
