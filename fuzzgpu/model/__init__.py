"""fuzzgpu.model: the PTX memory-model oracle.

Exhaustive over candidate executions: each thread's paths (``events``), every reads-from, barrier
arrival order, Fence-SC order and coherence order, judged by the axioms of ``ptx``.

API (all pure functions of a :class:`~fuzzgpu.ir.Program`):

* :func:`analyse` -> :class:`Analysis`: the allowed outcomes and the SC outcomes;
* :func:`allowed_outcomes`, :func:`sc_outcomes`;
* :func:`judge` -> :class:`Judgement` for one outcome (fast path: only the paths whose registers
  match the outcome are enumerated), with the axiom and cycle that forbid it;
* :func:`check_condition` -> herd-style observation of the program's final condition.

An *outcome* is a tuple of ``(key, value)`` pairs over :meth:`Program.outcome_keys` (``"P1:r0"``,
``"x"``); location keys hold the final (coherence-last) value.
"""

from __future__ import annotations

import itertools
import time
from collections import Counter
from dataclasses import dataclass
from typing import Iterator, Mapping

from ..ir import Program, eval_expr
from .candidates import feasible
from .event import ORACLE_BUDGET, Budget, Event, TooLarge, Unsupported, check_cost, first_verdict
from .events import beyond_loop_bound, program_traces
from .coherence import coherence_last
from .ptx import Execution, Violation, check_before_co, check_with_co
from .sc import sc_consistent, sc_forced_co
from .axioms import consistent_before_co, consistent_with_co
from .relations import Rel
from .trace import ProgramTraces, Trace
from .executions import Scopes, Twins, _combos, _executions, _in_model, event_name  # noqa: F401 -- Scopes: public name

Outcome = tuple[tuple[str, int], ...]

__all__ = [
    "Analysis",
    "Judgement",
    "ORACLE_BUDGET",
    "Observation",
    "Outcome",
    "TooLarge",
    "Unsupported",
    "Violation",
    "allowed_outcomes",
    "analyse",
    "candidate_outcomes",
    "check_condition",
    "describe_violation",
    "explain_forbidden",
    "judge",
    "sc_outcomes",
    "termination",
    "Termination",
]


@dataclass(frozen=True)
class Analysis:
    program: Program
    keys: tuple[str, ...]
    allowed: frozenset[Outcome]
    sc: frozenset[Outcome]
    candidates: int
    consistent: int
    seconds: float
    #: outcomes allowed only because an access is outside the model (``ld.global.nc``)
    outside_model: frozenset[Outcome] = frozenset()
    #: why an outcome outside the allowed set is not covered: the loop bound cut a re-entered loop
    #: (``events.beyond_loop_bound``); "" when the enumeration is complete
    beyond_bound: str = ""

    @property
    def weak(self) -> frozenset[Outcome]:
        """Allowed outcomes no interleaving produces."""
        return self.allowed - self.sc

    @property
    def possible(self) -> frozenset[Outcome]:
        """Every outcome a run may show: allowed, or allowed outside the model."""
        return self.allowed | self.outside_model

    def verdict(self, outcome: Outcome) -> str:
        return first_verdict(outcome, (("sc", self.sc), ("allowed", self.allowed), ("allowed-outside-model", self.outside_model)),
                             self.beyond_bound)


@dataclass(frozen=True)
class Judgement:
    outcome: Outcome
    verdict: str  # "sc" | "allowed" | "forbidden"
    reason: str
    violations: tuple[tuple[Violation, int], ...] = ()  # (violation, how many candidates it forbids)


def _final_values(x: Execution, co: Rel) -> dict[str, int]:
    """Each location's coherence-last write."""
    out = {}
    for e in x.ev:
        if e.kind == "W" and not (co.rows[e.eid] & _writes_to(x, e.location)):
            loc, value = e.access
            out[loc] = value
    return out


def _writes_to(x: Execution, loc: str) -> int:
    return sum(1 << e.eid for e in x.ev if e.kind == "W" and e.loc == loc)


def _outcome(p: Program, pt: ProgramTraces, keys: tuple[str, ...], combo: tuple[Trace, ...], finals: Mapping[str, int]) -> Outcome:
    regs = {p.threads[i].name: dict(tr.regs) for i, tr in enumerate(combo)}
    out = []
    for k in keys:
        if ":" in k:
            t, r = k.split(":", 1)
            tid = next(i for i, th in enumerate(p.threads) if th.name == t)
            out.append((k, regs[t].get(r, p.threads[tid].init_value(r))))
        else:
            out.append((k, finals.get(pt.physical[k], pt.init[pt.physical[k]])))
    return tuple(out)


def _final_locs(pt: ProgramTraces, keys: tuple[str, ...]) -> frozenset[str]:
    return frozenset(pt.physical[k] for k in keys if ":" not in k)


def _consistent(x: Execution, finals: frozenset[str], budget: Budget | None = None) -> Iterator[Rel]:
    """The coherence orders with which ``x`` satisfies every axiom."""
    if not consistent_before_co(x):
        return
    for co in x.coherence_orders(finals, budget):
        if consistent_with_co(x, co):
            yield co


def analyse(p: Program, *, loop_bound: int = 1, sc: bool = True, budget: int = ORACLE_BUDGET) -> Analysis:
    """Every outcome the PTX model allows, the outcomes allowed only because an access is outside
    the model (``ld.global.nc`` with a broken contract), and (with ``sc``) every outcome of an
    interleaving.  Raises :class:`TooLarge` (an :class:`Unsupported`) past ``budget`` units of
    work."""
    t0 = time.perf_counter()
    work = Budget(budget)
    pt = program_traces(p, loop_bound, work)
    keys = p.outcome_keys()
    allowed: set[Outcome] = set()
    outside: set[Outcome] = set()
    sc_set: set[Outcome] = set()
    n_cand = n_ok = 0
    finals = _final_locs(pt, keys)
    twins = Twins()
    for combo, x in _executions(p, pt, None, work):
        n_cand += 1
        x_in = _in_model(x)
        twin = twins.judged(x)
        if twin is not None:  # judged alike (executions.twin_key): its outcomes are in, its cost charged again
            work.spend(twin[0])
            n_ok += twin[1]
        else:
            units, ok = work.used, n_ok
            for co in _consistent(x_in, finals, work):
                n_ok += 1
                allowed.add(_outcome(p, pt, keys, combo, _final_values(x, co)))
            if x.free:
                for co in _consistent(x, finals, work):
                    outside.add(_outcome(p, pt, keys, combo, _final_values(x, co)))
            twins.judge(work.used - units, n_ok - ok)
        if sc:
            sc_set.update(_interleaving_outcomes(p, pt, keys, combo, x, x_in, work))
    return Analysis(
        p, keys, frozenset(allowed), frozenset(sc_set), n_cand, n_ok, time.perf_counter() - t0,
        frozenset(outside - allowed), beyond_loop_bound(p, pt.cut, loop_bound),
    )


def _interleaving_outcomes(p: Program, pt: ProgramTraces, keys: tuple[str, ...], combo: tuple[Trace, ...], x: Execution,
                           x_in: Execution, work: Budget | None = None) -> Iterator[Outcome]:
    """The outcomes of the interleavings of candidate ``x`` (``x_in``: its in-model form), the SC set's
    share of it: :func:`model.analyse`'s and :func:`model.race.analyse_races`'s (``sc=True``).  The
    candidates of one combination of traces that differ only in their order of ``fence.sc`` events
    have the same interleavings (:func:`.sc.sc_consistent` reads no fence order): only the one with
    the fences in event order is asked."""
    if x.cand.fence_order != tuple(sorted(x.cand.fence_order)):
        return
    for co in _all_coherence_orders(x, work):
        if sc_consistent(x_in, co):
            yield _outcome(p, pt, keys, combo, _final_values(x, co))


def _all_coherence_orders(x: Execution, budget: Budget | None = None) -> Iterator[Rel]:
    """The total coherence orders an interleaving of ``x`` may have (for the ``sc`` set), lazily:
    per location, the orders of its writes that extend the edges every interleaving has
    (:func:`.sc.sc_forced_co`; the others fail :func:`.sc.sc_consistent` anyway), the initial
    write first."""
    forced = sc_forced_co(x)
    if forced is None:
        return
    by_loc: dict[str, list[int]] = {}
    init: dict[str, int] = {}
    for e in x.ev:
        if e.kind == "W" and e.loc is not None:
            if e.init:
                init[e.loc] = e.eid
            else:
                by_loc.setdefault(e.loc, []).append(e.eid)
    locs = sorted(init)

    def extensions(todo: list[int], placed: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
        if not todo:
            yield placed
            return
        for w in todo:
            if any((v, w) in forced for v in todo if v != w):
                continue  # a write forced before w is not placed yet
            yield from extensions([v for v in todo if v != w], placed + (w,))

    def orders(i: int) -> Iterator[list[tuple[int, int]]]:
        if i == len(locs):
            yield []
            return
        for perm in extensions(by_loc.get(locs[i], []), ()):
            order = (init[locs[i]],) + perm
            pairs = [(order[a], order[b]) for a in range(len(order)) for b in range(a + 1, len(order))]
            for rest in orders(i + 1):
                yield pairs + rest

    for pairs in orders(0):
        if budget is not None:
            budget.spend(4 * check_cost(x.n))  # sc_consistent closes a graph of 2n nodes
        yield Rel.from_pairs(x.n, pairs)


def allowed_outcomes(p: Program, *, loop_bound: int = 1) -> frozenset[Outcome]:
    return analyse(p, loop_bound=loop_bound, sc=False).allowed


def sc_outcomes(p: Program, *, loop_bound: int = 1) -> frozenset[Outcome]:
    return analyse(p, loop_bound=loop_bound).sc


def unknown_keys(p: Program, outcome: Mapping[str, object]) -> list[str]:
    """The keys of ``outcome`` that are none of the program's outcome keys, data locations (an mbarrier,
    a tensor map or tensor memory has no value an outcome names), or registers its threads write or
    initialise (``T:reg``)."""
    known = set(p.outcome_keys()) | {loc.name for loc in p.locations if loc.kind == "data"}
    known |= {f"{t.name}:{r}" for t in p.threads for r in t.registers_set()}
    return [k for k in outcome if k not in known]


def judge(p: Program, outcome: Mapping[str, int] | Outcome, *, loop_bound: int = 1, budget: int = ORACLE_BUDGET) -> Judgement:
    """The verdict on one outcome: ``sc``, ``allowed`` (weak but allowed), ``allowed-outside-model``
    (only an access outside the model, ``ld.global.nc``, makes it possible) or ``forbidden`` with
    the axioms and cycles that forbid it in the candidate executions that produce its values.
    Raises :class:`TooLarge` past ``budget`` units of work, and ``UserError`` for a key the program
    has no value for (:func:`unknown_keys`: a typo such as ``P1:r9`` read as 0 gave a verdict on
    another outcome than the one meant)."""
    want = dict(outcome)
    bad = unknown_keys(p, want)
    if bad:
        from ..errors import UserError, clip

        raise UserError(clip(f"{p.name}: outcome key(s) {', '.join(map(repr, bad))} name no data location of the program and "
                             f"no register of its thread that an instruction writes or the init sets (its keys: "
                             f"{', '.join(p.outcome_keys())})"))
    work = Budget(budget)
    pt = program_traces(p, loop_bound, work)
    keys = tuple(want)
    finals = _final_locs(pt, keys)
    violations: Counter[Violation] = Counter()
    allowed = outside = None
    for combo, x in _executions(p, pt, want, work):
        x_in = _in_model(x)
        for co in _matching(p, pt, keys, combo, x, finals, want, work):
            v = check_before_co(x_in) or check_with_co(x_in, co)
            if v is None:
                allowed = True
                if any(
                    sc_consistent(x_in, co2) and dict(_outcome(p, pt, keys, combo, _final_values(x, co2))) == want
                    for co2 in _all_coherence_orders(x, work)
                ):
                    return Judgement(tuple(want.items()), "sc", "an interleaving of the threads produces it")
                continue
            violations[v] += 1
            if x.free and outside is None and (check_before_co(x) or check_with_co(x, co)) is None:
                outside = _nc_reason(p, x)
        if not any(True for _ in _matching(p, pt, keys, combo, x, finals, want, work)):
            v = check_before_co(x_in) or coherence_last(x_in, _wanted_finals(pt, want))
            if v is not None:
                violations[v] += 1
    out = tuple(want.items())
    if allowed:
        return Judgement(out, "allowed", "no interleaving produces it, but a consistent PTX execution does")
    if outside is not None:
        return Judgement(out, "allowed-outside-model", outside, tuple(violations.most_common()))
    if pt.cut:  # not produced within the loop bound: a longer execution may produce it
        raise Unsupported(beyond_loop_bound(p, pt.cut, loop_bound))
    if not violations:
        return Judgement(out, "forbidden", "no execution of the program produces these values")
    ranked = tuple(violations.most_common())
    return Judgement(out, "forbidden", f"forbidden by the {ranked[0][0].axiom} axiom", ranked)


def _wanted_finals(pt: ProgramTraces, want: Mapping[str, int]) -> dict[str, int]:
    """The final values ``want`` asks for, by physical location."""
    return {pt.physical[k]: v for k, v in want.items() if ":" not in k}


def _matching(p, pt, keys, combo, x, finals, want, budget: Budget | None = None) -> Iterator[Rel]:
    """The coherence orders (allowed to differ) of ``x`` whose final values match ``want``."""
    for co in x.coherence_orders(finals, budget):
        if dict(_outcome(p, pt, keys, combo, _final_values(x, co))) == want:
            yield co


def _nc_reason(p: Program, x: Execution) -> str:
    reads = [e for e in x.ev if x.free >> e.eid & 1]
    names = ", ".join(f"{p.threads[e.tid].name}'s ld.global.nc of {e.vloc}" for e in reads)
    return (
        f"{names} may return any write of its location: ld.global.nc is outside the memory model when "
        "a write may happen during the reading kernel (PTX ISA: scope and applicability of the model; ld .nc)"
    )


@dataclass(frozen=True)
class Observation:
    """herd's verdict on a test's final condition."""

    name: str
    quantifier: str
    observation: str  # "Never" | "Sometimes" | "Always"
    positive: int  # allowed outcomes satisfying the condition
    negative: int
    witness_reachable: bool
    analysis: Analysis


def check_condition(p: Program, *, loop_bound: int = 1) -> Observation:
    """herd7-style: how many allowed final states satisfy the condition (``Positive``), how many
    do not (``Negative``), and the observation ``Never``/``Sometimes``/``Always``.  The witness is
    the condition for ``exists``/``~exists``/``final`` and its negation for ``forall``."""
    a = analyse(p, loop_bound=loop_bound, sc=False)
    cond = p.condition
    if cond is None:
        raise ValueError(f"{p.name}: the program has no final condition")
    pos = sum(1 for o in a.possible if eval_expr(cond.expr, dict(o)))
    neg = len(a.possible) - pos
    obs = "Never" if pos == 0 else ("Always" if neg == 0 else "Sometimes")
    if cond.quantifier == "forall":
        reachable = neg > 0
    else:
        reachable = pos > 0
    return Observation(p.name, cond.quantifier, obs, pos, neg, reachable, a)


# --------------------------------------------------------------------------------------------
# Explanations
# --------------------------------------------------------------------------------------------


def describe_violation(p: Program, events: tuple[Event, ...], v: Violation) -> str:
    """One line: the axiom, its ISA section, and the cycle with instruction names."""
    if not v.cycle:
        return f"{v.axiom} ({v.isa})"
    steps = [event_name(p, None, events[v.cycle[0][0]])]
    for _, label, b in v.cycle:
        steps.append(f"-{label}-> {event_name(p, None, events[b])}")
    return f"{v.axiom} ({v.isa}): " + " ".join(steps)


def candidate_outcomes(p: Program, *, loop_bound: int = 1, budget: int = ORACLE_BUDGET) -> frozenset[Outcome]:
    """Outcomes of the candidate executions before any axiom: what the threads could compute if
    every read could return any written value of its location.  Allowed outcomes are a subset."""
    work = Budget(budget)
    pt = program_traces(p, loop_bound, work)
    keys = p.outcome_keys()
    writes: dict[str, set[int]] = {}
    for traces in pt.traces:
        for tr in traces:
            for e in tr.events:
                if e.kind == "W":
                    loc, value = e.access
                    writes.setdefault(loc, set()).add(value)
    out = set()
    for combo in _combos(pt, p, None, work):
        if not feasible(pt, combo):
            continue
        locs = [k for k in keys if ":" not in k]
        for vals in itertools.product(*[sorted(writes.get(pt.physical[k], set()) | {pt.init[pt.physical[k]]}) for k in locs]):
            out.add(_outcome(p, pt, keys, combo, {pt.physical[k]: v for k, v in zip(locs, vals)}))
    return frozenset(out)


def explain_forbidden(p: Program, outcome: Mapping[str, int], *, loop_bound: int = 1) -> tuple[Judgement, list[str]]:
    """The verdict on an outcome, with one line per distinct reason that forbids it."""
    j = judge(p, dict(outcome), loop_bound=loop_bound)
    work = Budget()
    pt = program_traces(p, loop_bound, work)
    want = dict(outcome)
    lines = []
    if j.verdict == "forbidden":
        seen = set()
        for combo, x in _executions(p, pt, want, work):
            v = check_before_co(x)
            if v is None:
                matched = False
                for co in x.coherence_orders(_final_locs(pt, tuple(want)), work):
                    if dict(_outcome(p, pt, tuple(want), combo, _final_values(x, co))) == want:
                        matched = True
                        v = check_with_co(x, co)
                        if v is not None:
                            break
                if not matched:
                    v = coherence_last(x, _wanted_finals(pt, want))
            if v is not None:
                line = describe_violation(p, x.ev, v)
                if line not in seen:
                    seen.add(line)
                    lines.append(line)
            if len(lines) >= 3:
                break
        if not lines:
            lines.append("no candidate execution produces these values")
    return j, lines


from .liveness import Termination, termination  # noqa: E402 -- uses the enumeration above
