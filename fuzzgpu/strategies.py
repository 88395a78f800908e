"""Hypothesis strategies for Programs.

Usable in your own ``@given`` tests::

    from hypothesis import given
    from fuzzgpu.strategies import litmus_programs

    @given(litmus_programs())
    def test_my_property(program): ...

Stores write distinct non-zero values (so an observed outcome fixes reads-from); shrinking goes
toward fewer threads, fewer instructions and the default annotations (weak accesses, ``.cta``
scope, no fences), because each choice lists its simplest option first.
"""

from __future__ import annotations

from typing import Iterator

import hypothesis.strategies as st

from .ir import (
    And,
    Atom,
    Cmp,
    Condition,
    Fence,
    Instruction,
    Load,
    Location,
    Placement,
    Program,
    RegRef,
    RmwOp,
    Scope,
    Sem,
    Store,
    Thread,
    validate,
)

SCOPES = (Scope.CTA, Scope.CLUSTER, Scope.GPU, Scope.SYS)
LOAD_SEMS = (Sem.WEAK, Sem.RELAXED, Sem.ACQUIRE, Sem.VOLATILE)
STORE_SEMS = (Sem.WEAK, Sem.RELAXED, Sem.RELEASE, Sem.VOLATILE)
RMW_SEMS = (Sem.RELAXED, Sem.ACQUIRE, Sem.RELEASE, Sem.ACQ_REL)


@st.composite
def _access(draw, kind: str, loc: str, reg: str, value: int) -> Instruction:
    if kind == "ld":
        sem = draw(st.sampled_from(LOAD_SEMS))
        scope = None if sem in (Sem.WEAK, Sem.VOLATILE) else draw(st.sampled_from(SCOPES))
        return Load(reg, loc, sem, scope)
    if kind == "st":
        sem = draw(st.sampled_from(STORE_SEMS))
        scope = None if sem in (Sem.WEAK, Sem.VOLATILE) else draw(st.sampled_from(SCOPES))
        return Store(loc, value, sem, scope)
    if kind == "fence":
        return Fence(draw(st.sampled_from((Sem.ACQ_REL, Sem.SC))), draw(st.sampled_from(SCOPES)))
    sem = draw(st.sampled_from(RMW_SEMS))
    return Atom(reg, loc, draw(st.sampled_from((RmwOp.EXCH, RmwOp.ADD))), (value,), sem, draw(st.sampled_from(SCOPES)))


@st.composite
def litmus_programs(draw, max_threads: int = 3, max_instructions: int = 3, locations: tuple[str, ...] = ("x", "y")) -> Program:
    """Free-form straight-line programs: loads, stores, fences and atomics over a few locations,
    threads in one or several CTAs of one GPU, with an ``exists`` condition over every register."""
    n_threads = draw(st.integers(2, max_threads))
    value = 0
    threads = []
    regs = []
    for tid in range(n_threads):
        cta = draw(st.integers(0, n_threads - 1)) if tid else 0
        n_ins = draw(st.integers(1, max_instructions))
        code = []
        for i in range(n_ins):
            kind = draw(st.sampled_from(("ld", "st", "fence", "atom")))
            value += 1
            reg = f"r{i}"
            ins = draw(_access(kind, draw(st.sampled_from(locations)), reg, value))
            code.append(ins)
            if isinstance(ins, (Load, Atom)):
                regs.append(RegRef(f"P{tid}", reg))
        threads.append(Thread(f"P{tid}", Placement(cta=cta), tuple(code)))
    condition = None
    if regs:
        cmps = tuple(Cmp("==", r, draw(st.integers(0, value))) for r in regs)
        condition = Condition("exists", And(cmps) if len(cmps) > 1 else cmps[0])
    p = Program("random", tuple(threads), tuple(Location(name) for name in locations), condition)
    return validate(p)


# --------------------------------------------------------------------------------------------
# Strengthening: one annotation made stronger (for monotonicity properties)
# --------------------------------------------------------------------------------------------

_STRONGER_LOAD = {Sem.WEAK: (Sem.RELAXED,), Sem.RELAXED: (Sem.ACQUIRE,)}
_STRONGER_STORE = {Sem.WEAK: (Sem.RELAXED,), Sem.RELAXED: (Sem.RELEASE,)}
_STRONGER_RMW = {Sem.RELAXED: (Sem.ACQUIRE, Sem.RELEASE), Sem.ACQUIRE: (Sem.ACQ_REL,), Sem.RELEASE: (Sem.ACQ_REL,)}


def _larger(scope: Scope) -> Iterator[Scope]:
    for s in SCOPES:
        if s.rank > scope.rank:
            yield s


def strengthenings(p: Program) -> Iterator[tuple[str, Program]]:
    """Every Program that differs from ``p`` by one stronger annotation: weak -> relaxed ->
    acquire/release, a larger scope, fence.acq_rel -> fence.sc, or one added fence.sc.sys."""
    for tid, t in enumerate(p.threads):
        for i, ins in enumerate(t.code):
            for what, new in _stronger(ins):
                yield f"{t.name}[{i}] {what}", _replace_code(p, tid, t.code[:i] + (new,) + t.code[i + 1 :])
        for i in range(len(t.code) + 1):
            yield f"{t.name}[{i}] + fence.sc.sys", _replace_code(p, tid, t.code[:i] + (Fence(Sem.SC, Scope.SYS),) + t.code[i:])


def _stronger(ins: Instruction) -> Iterator[tuple[str, Instruction]]:
    import dataclasses

    if isinstance(ins, Load) and not ins.nc:
        for sem in _STRONGER_LOAD.get(ins.sem, ()):
            yield f"ld .{ins.sem} -> .{sem}", dataclasses.replace(ins, sem=sem, scope=ins.scope or Scope.CTA)
    if isinstance(ins, Store):
        for sem in _STRONGER_STORE.get(ins.sem, ()):
            yield f"st .{ins.sem} -> .{sem}", dataclasses.replace(ins, sem=sem, scope=ins.scope or Scope.CTA)
    if isinstance(ins, Atom):
        for sem in _STRONGER_RMW.get(ins.sem, ()):
            yield f"atom .{ins.sem} -> .{sem}", dataclasses.replace(ins, sem=sem)
    if isinstance(ins, Fence) and ins.sem is Sem.ACQ_REL:
        yield "fence.acq_rel -> fence.sc", dataclasses.replace(ins, sem=Sem.SC)
    scope = getattr(ins, "scope", None)
    if isinstance(ins, (Load, Store, Atom, Fence)) and scope is not None:
        for s in _larger(scope):
            yield f"scope .{scope} -> .{s}", dataclasses.replace(ins, scope=s)


def _replace_code(p: Program, tid: int, code: tuple[Instruction, ...]) -> Program:
    import dataclasses

    threads = list(p.threads)
    threads[tid] = dataclasses.replace(threads[tid], code=code)
    return dataclasses.replace(p, threads=tuple(threads))
