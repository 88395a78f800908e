"""Tuning stress: successive halving over short runs, maximising the rate of a program's weak
(non-SC) outcomes per GPU-second (docs/tuning.md).

The search logic (:func:`successive_halving`) is pure: it takes a ``measure(config, instances) ->
(weak, seconds)`` callable and never touches a GPU, so it is unit-tested on the CPU with a
synthetic response surface.  :func:`gpu_measure` is that callable for a program on a
:class:`~fuzzgpu.backends.cuda.CudaBackend`: the program compiles once (every stress knob is a
launch argument or a launch parameter) and each call is one ``run_compiled``.
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass, field
from typing import Any, Callable, Collection, Mapping, Sequence

from .. import codegen
from ..backends.base import Histogram, RunConfig
from .space import SEEDS, StressConfig, fit_cta, sample

#: ``measure(config, instances) -> (weak outcomes observed, GPU seconds spent)``
Measure = Callable[[StressConfig, int], "tuple[int, float]"]


def launch_instances(config: StressConfig) -> int:
    """The instances of one launch under ``config`` (``RunConfig.instances_per_launch``): the backend
    runs whole launches, so a run of fewer runs one."""
    return config.run_config().instances_per_launch


@dataclass(frozen=True)
class Trial:
    config: StressConfig
    round: int
    instances: int
    weak: int
    seconds: float


@dataclass
class _Arm:
    config: StressConfig
    weak: int = 0
    seconds: float = 0.0
    instances: int = 0

    @property
    def rate(self) -> float:
        return self.weak / self.seconds if self.seconds > 0 else 0.0


@dataclass(frozen=True)
class ArmResult:
    """One configuration's evidence summed over every round it ran."""

    config: StressConfig
    weak: int
    instances: int
    seconds: float

    @property
    def rate(self) -> float:
        """Weak outcomes per GPU-second."""
        return self.weak / self.seconds if self.seconds > 0 else 0.0

    @property
    def per_instance(self) -> float:
        return self.weak / self.instances if self.instances else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"stress": self.config.to_table(), "describe": self.config.describe(), "weak": self.weak,
                "instances": self.instances, "seconds": round(self.seconds, 6), "weak_per_s": self.rate,
                "weak_per_instance": self.per_instance}


@dataclass(frozen=True)
class TuneResult:
    best: ArmResult
    default: ArmResult
    trials: tuple[Trial, ...]
    spent_s: float
    rounds: int
    #: why the search stopped: "one left", "budget", "max instances"
    stopped: str = ""
    arms: tuple[ArmResult, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {"best": self.best.to_json(), "default": self.default.to_json(), "spent_s": round(self.spent_s, 6),
                "rounds": self.rounds, "stopped": self.stopped, "trials": len(self.trials),
                "configurations": len(self.arms)}


def successive_halving(
    candidates: Sequence[StressConfig],
    measure: Measure,
    budget_s: float,
    instances: int,
    eta: int = 3,
    max_instances: int = 1 << 34,
    default: StressConfig | None = None,
    blind_factor: float = 16.0,
    prior_per_instance: float = 0.0,
) -> TuneResult:
    """Successive halving (Jamieson & Talwalkar 2016) over ``candidates``: every live
    configuration runs ``instances`` instances, the best ``1/eta`` by weak outcomes per GPU-second
    (evidence summed over the rounds) go on with ``eta`` times as many, until one is left, the
    next run would pass ``budget_s`` GPU-seconds, or a run would pass ``max_instances``.

    ``default`` (StressConfig() unless given) is measured first in round 0 and reported as the
    baseline.  A run is made only when its estimated cost fits in what is left of the budget: from
    the configuration's own earlier runs, else ``blind_factor`` times the slowest seconds per
    instance seen so far (stress CTAs and occupancy caps cost up to ~10x throughput on an H200);
    only the very first run is made blind.  So the budget holds whenever no configuration is more
    than ``blind_factor`` times slower per instance than the slowest one measured before it; where
    what is left is not ample, a configuration never measured runs ``n/blind_factor**2`` instances first
    (then ``n/blind_factor``, then the rest, each estimated from the runs before), so one far slower
    still passes the budget by that first run alone (the space holds configurations ~10^4 times
    slower per instance than the default on an H200: bench/results/anchor/h200-full).  Ties
    keep the earlier candidate (the default first).  ``prior_per_instance`` (seconds per instance
    of the slowest configuration measured before this call) makes even the first run an estimated
    one: a call that starts with too little budget runs nothing."""
    if eta < 2:
        raise ValueError("eta must be >= 2")
    default = default if default is not None else StressConfig()
    order = [default] + [c for c in dict.fromkeys(candidates) if c != default]
    arms = {c: _Arm(c) for c in order}
    rank = {c: i for i, c in enumerate(order)}
    live = list(order)
    trials: list[Trial] = []
    spent = 0.0
    n = max(1, int(instances))
    rnd = 0
    stopped = "one left"

    def estimate(a: _Arm, n_: int) -> float:
        if a.instances:
            return a.seconds / a.instances * n_
        slowest = max((x.seconds / x.instances for x in arms.values() if x.instances), default=prior_per_instance)
        return blind_factor * max(slowest, prior_per_instance) * n_

    def runs(a: _Arm, n_: int) -> list[int]:
        """The runs that make up ``a``'s ``n_`` instances of a round: one, or -- for a configuration
        never measured whose blind estimate, were it ``blind_factor**3`` times more again, would pass
        what is left -- first ``n_/blind_factor**2`` and then ``n_/blind_factor`` instances, each
        rounded up to whole launches and estimated from the runs before: a configuration far slower
        than every one before it overshoots by its smallest run, not by a whole round's."""
        if a.instances or not (trials or prior_per_instance > 0) or spent + blind_factor ** 3 * estimate(a, n_) <= budget_s:
            return [n_]
        f, g = max(2, int(blind_factor)), launch_instances(a.config)
        # whole launches (what the backend runs): a piece's seconds are then its instances' seconds
        marks = sorted({w for w in (-(-m // g) * g for m in (n_ // (f * f), n_ // f) if m > 0) if w < n_}) + [n_]
        return [m - k for k, m in zip([0, *marks], marks)]

    while True:
        ran: list[_Arm] = []
        for c in live:
            a = arms[c]
            before = a.instances
            for m in runs(a, n):
                if (trials or prior_per_instance > 0) and spent + estimate(a, m) > budget_s:
                    stopped = "budget"  # a cheaper configuration later in the round may still fit
                    break
                weak, secs = measure(c, m)
                secs = max(0.0, float(secs))
                trials.append(Trial(c, rnd, m, int(weak), secs))
                a.weak += int(weak)
                a.seconds += secs
                a.instances += m
                spent += secs
            if a.instances > before:
                ran.append(a)
        if stopped == "budget":
            # rank only the configurations that ran this round (the others have less evidence)
            live = [a.config for a in ran] or live[:1]
            break
        rnd += 1
        live.sort(key=lambda c: (-arms[c].rate, rank[c]))
        if len(live) <= 1:
            break
        live = live[: max(1, math.ceil(len(live) / eta))]
        if n * eta > max_instances:
            stopped = "max instances"
            break
        n *= eta
    scored = sorted((arms[c] for c in live), key=lambda a: (-a.rate, rank[a.config]))
    best = scored[0]

    def res(a: _Arm) -> ArmResult:
        return ArmResult(a.config, a.weak, a.instances, a.seconds)

    return TuneResult(res(best), res(arms[default]), tuple(trials), spent, rnd, stopped,
                      tuple(res(arms[c]) for c in order if arms[c].instances))


def candidates(n: int, seed: int = 1, min_cta_threads: int = 32) -> list[StressConfig]:
    """``n`` configurations to tune over: the known-effective seeds, then random points, each with
    CTAs of at least ``min_cta_threads`` threads (the program's: codegen.min_cta_threads; a
    configuration raised to it may repeat another, which is then tried once)."""
    return list(dict.fromkeys(fit_cta(c, min_cta_threads) for c in sample(random.Random(seed), n)))


def explore(
    candidates: Sequence[StressConfig],
    measure: Measure,
    budget_s: float,
    known: Mapping[StressConfig, float] | None = None,
    grow: int = 16,
    max_instances: int = 1 << 34,
    max_runs: int = 64,
) -> tuple[Trial, ...]:
    """Each of ``candidates`` in turn gets an equal share of what is left of ``budget_s`` GPU-seconds
    -- of time, not of instances: a configuration 10^3 times slower per instance runs 10^3 times
    fewer -- until one shows a weak outcome or the budget is spent.  For a rare target nothing ranks
    the configurations; successive halving's equal instances let the slowest take the budget while
    the default kept the rest (bench/results/anchor/h200-one-run: 126 of the 151 variants fuzzgpu
    did not show there).

    A configuration's runs are whole launches (:func:`launch_instances`): one launch first unless
    ``known`` gives its seconds per instance, then runs of up to ``grow`` times what it ran before
    (at most ``max_instances``, at most ``max_runs`` runs), each sized from its runs before to fit
    its share.  A launch never measured is estimated at the median known seconds per instance (the
    median, not the slowest: a few configurations 10^3 times slower than the rest must not make
    every new one look unaffordable) and made when that fits in its share.  A run takes what its
    estimate said give or take the GPU's own variation, so the budget may be passed by that error
    and by a never-measured first launch far slower than its estimate; a run that takes more than
    its share leaves less to the configurations after it."""
    known = dict(known or {})
    cands = list(dict.fromkeys(candidates))
    trials: list[Trial] = []
    spent = 0.0
    for j, c in enumerate(cands):
        g = launch_instances(c)
        share = (budget_s - spent) / (len(cands) - j)
        used, n_done, secs_done = 0.0, 0, 0.0
        for _ in range(max_runs):
            per = secs_done / n_done if n_done else known.get(c)
            if per is None:
                per_blind = statistics.median(known.values()) if known else 0.0
                n, est = g, per_blind * g
            elif per <= 0:
                break  # a measure that takes no time cannot spend a share
            else:
                fit = min((share - used) / per, float(max_instances))
                n = int(fit) // g * g
                if n_done:
                    n = min(n, n_done * grow)
                est = per * n
            if n < g or est > share - used:
                break
            weak, secs = measure(c, n)
            secs = max(0.0, float(secs))
            trials.append(Trial(c, 0, n, int(weak), secs))
            used += secs
            spent += secs
            n_done += n
            secs_done += secs
            if weak > 0:
                return tuple(trials)
            if secs <= 0:
                break  # no time taken: nothing to size the next run by
        if n_done:
            known[c] = secs_done / n_done
        if spent >= budget_s:
            break
    return tuple(trials)


def bracket_candidates(n: int, seed: int, min_cta_threads: int = 32,
                       default: StressConfig | None = None) -> Callable[[int], list[StressConfig]]:
    """The candidates of :func:`spend_budget`'s bracket i: bracket 0 halves over :func:`candidates`
    (the seeds, then random points up to ``n``); a later bracket (a rare target: nothing weak yet)
    explores ``default`` (when given: ``run --tune``'s profile stress), the seeds again and new
    random points (``n`` in all, at least one random point)."""
    def batch(i: int) -> list[StressConfig]:
        if i == 0:
            return candidates(n, seed, min_cta_threads)
        later = candidates(max(n, len(SEEDS) + 1), seed * 1_000_003 + i, min_cta_threads)
        return list(dict.fromkeys(([fit_cta(default, min_cta_threads)] if default is not None else []) + later))

    return batch


def spend_budget(
    batch: Callable[[int], Sequence[StressConfig]],
    measure: Measure,
    budget_s: float,
    instances: int,
    eta: int = 3,
    max_instances: int = 1 << 34,
    default: StressConfig | None = None,
    max_brackets: int = 16,
    first_share: float = 0.5,
) -> TuneResult:
    """Successive halving that spends ``budget_s``: bracket 0 halves over ``batch(0)`` within
    ``first_share`` of the budget; while budget is left and no configuration has shown a weak
    outcome (a rare target), bracket i explores ``batch(i)`` (:func:`explore`: an equal share of
    what is left to each configuration, in turn, until one shows it); what is left then goes to
    the best configuration, in runs of whole launches of up to ``eta`` times its last size.  The
    evidence of a configuration is summed over every bracket and run.  The budget holds as in
    :func:`successive_halving` and :func:`explore`; the result's ``stopped`` is "budget" once what
    is left is less than one launch of the best, or "max brackets"."""
    default = default if default is not None else StressConfig()
    arms: dict[StressConfig, ArmResult] = {}
    trials: list[Trial] = []
    spent = 0.0
    rounds = 0

    def fold(found: Sequence[Trial], took_rounds: int) -> None:
        nonlocal spent, rounds
        for t in found:
            o = arms.get(t.config, ArmResult(t.config, 0, 0, 0.0))
            arms[t.config] = ArmResult(t.config, o.weak + t.weak, o.instances + t.instances, o.seconds + t.seconds)
        trials.extend(Trial(t.config, rounds + t.round, t.instances, t.weak, t.seconds) for t in found)
        spent += sum(t.seconds for t in found)
        rounds += took_rounds

    def best() -> ArmResult:
        order = list(arms)
        return max(arms.values(), key=lambda a: (a.rate, -order.index(a.config)))

    stopped = "max brackets"
    first = successive_halving(list(dict.fromkeys(batch(0))), measure, budget_s * first_share, instances, eta,
                               max_instances, default=default)
    fold(first.trials, 1 + max((t.round for t in first.trials), default=-1))  # a round the budget cut counts
    for i in range(1, max_brackets):
        left = budget_s - spent
        if left <= 0 or best().weak > 0:
            break
        # a rare target: bracket i gives each of its candidates an equal share of what is left
        cands = list(dict.fromkeys(batch(i)))
        if not cands:
            break
        per = {c: a.seconds / a.instances for c, a in arms.items() if a.instances}
        found = explore(cands, measure, left, known=per)
        if not found:
            break
        fold(found, 1)
    # exploit: what is left runs the best configuration, in whole launches
    exploited = 0
    b = best()
    g = launch_instances(b.config)
    n = max(instances, max((t.instances for t in trials if t.config == b.config), default=instances))
    n = -(-n // g) * g
    while b.instances:
        per_i = b.seconds / b.instances
        if per_i <= 0:  # a measure that takes no time cannot spend a budget
            break
        fit = int(min((budget_s - spent) / per_i, float(max_instances))) // g * g
        if fit < g:
            stopped = "budget"
            break
        n = min(fit, n * eta, max_instances)
        weak, secs = measure(b.config, n)
        secs = max(0.0, float(secs))
        trials.append(Trial(b.config, rounds, n, int(weak), secs))
        exploited = 1
        spent += secs
        b = ArmResult(b.config, b.weak + int(weak), b.instances + n, b.seconds + secs)
        arms[b.config] = b
        if secs <= 0:
            break  # no time taken: the rest of the budget cannot be sized by it
    final = best()
    return TuneResult(final, arms.get(default, ArmResult(default, 0, 0, 0.0)), tuple(trials), spent, rounds + exploited, stopped,
                      tuple(arms.values()))


# --------------------------------------------------------------------------------------------
# Weak outcomes and the GPU runner
# --------------------------------------------------------------------------------------------


def weak_count(hist: Histogram, sc: Collection[Any], targets: Collection[Any] | Callable[[Any], bool] | None = None) -> int:
    """Instances of ``hist`` whose outcome is not in ``sc`` (or, with ``targets``, is one of
    them, or satisfies it when it is a predicate).  Outcomes with a value outside the program's
    value table (``?``) never count."""
    n = 0
    for o, c in hist.counts:
        if any(v is None for _, v in o):
            continue
        if callable(targets):
            hit = bool(targets(o))
        else:
            hit = (o in targets) if targets is not None else (o not in sc)
        if hit:
            n += c
    return n


def condition_target(program: Any, sc: Collection[Any], possible: Collection[Any]) -> Callable[[Any], bool] | None:
    """The outcomes a test's own final condition looks for, as a predicate on an outcome, or
    None when the test has no condition.  The witness is the condition (``exists``, ``~exists``,
    ``final``) or its negation (``forall``); when some outcome the model allows satisfies it and
    is not SC, only such non-SC witnesses count (a condition that also matches interleavings
    would tune for them); otherwise every witness counts (a witness the model forbids is what
    the run looks for)."""
    from ..ir.program import eval_expr

    cond = getattr(program, "condition", None)
    if cond is None:
        return None
    neg = cond.quantifier == "forall"

    def witness(o: Any) -> bool:
        try:
            return eval_expr(cond.expr, dict(o)) != neg
        except KeyError:
            return False

    scs = frozenset(sc)
    weak_witness = any(witness(o) and o not in scs for o in possible)
    if weak_witness:
        return lambda o: o not in scs and witness(o)
    return witness


def gpu_measure(backend: Any, compiled: Any, sc: Collection[Any],
                targets: Collection[Any] | Callable[[Any], bool] | None = None,
                base: RunConfig | None = None, seed: int = 1,
                record: Callable[[StressConfig, Histogram], None] | None = None) -> Measure:
    """The ``measure`` of :func:`successive_halving` for one compiled program on ``backend``
    (a CudaBackend): each call runs ``instances`` instances with the configuration's knobs (a
    new seed per call) and counts the weak outcomes (not in ``sc``, or in ``targets``).
    ``record`` sees every histogram (model-forbidden counting, say)."""
    calls = [0]

    def measure(config: StressConfig, instances: int) -> tuple[int, float]:
        calls[0] += 1
        cfg = config.run_config(base, instances=instances, seed=(seed * 1_000_003 + calls[0]) & 0xFFFFFFFF)
        h = backend.run_compiled(compiled, cfg)
        if record is not None:
            record(config, h)
        return weak_count(h, sc, targets), h.seconds

    return measure


def sc_and_weak(program: Any) -> tuple[frozenset[Any], frozenset[Any]]:
    """The oracle's SC outcomes and its allowed weak (non-SC) outcomes of ``program``."""
    from .. import model

    a = model.analyse(program)
    return a.sc, a.weak | (a.outside_model - a.sc)


@dataclass
class GpuTuning:
    """What :func:`tune_on_gpu` found: the search result and the outcomes seen on the way."""

    result: TuneResult
    #: instances per outcome over every run (for the oracle's verdicts)
    outcomes: dict[Any, int]
    instances: int


def tune_on_gpu(backend: Any, program: Any, budget_s: float, n_candidates: int = 27, instances: int = 1 << 20,
                seed: int = 1, targets: Collection[Any] | Callable[[Any], bool] | None = None,
                base: RunConfig | None = None, compiled: Any = None, sc: Collection[Any] | None = None,
                spend: bool = False, default: StressConfig | None = None) -> GpuTuning:
    """Tune ``program``'s stress on ``backend`` (a CudaBackend) within ``budget_s`` GPU-seconds:
    successive halving over ``n_candidates`` configurations, first runs of ``instances``
    instances, maximising the non-SC outcomes per GPU-second (or the ``targets``).  With
    ``spend``, :func:`spend_budget`: further brackets that explore new random candidates while nothing
    weak was seen (:func:`bracket_candidates`: the default, the seeds and new random points, an
    equal share of time each), then the rest of the budget on the best (its runs count as its evidence)."""
    if sc is None:
        sc, _ = sc_and_weak(program)
    c = compiled if compiled is not None else backend.compile(program)
    seen: dict[Any, int] = {}
    total = [0]

    def record(_: StressConfig, h: Histogram) -> None:
        total[0] += h.instances
        for o, n in h.counts:
            seen[o] = seen.get(o, 0) + n

    m = gpu_measure(backend, c, sc, targets, base=base, seed=seed, record=record)
    ct = codegen.min_cta_threads(program)  # the CTA sizes the program's roles fit in
    if spend:
        batch = bracket_candidates(n_candidates, seed, ct, default=default)
        r = spend_budget(batch, m, budget_s, instances, default=default)
    else:
        r = successive_halving(candidates(n_candidates, seed, ct), m, budget_s, instances, default=default)
    return GpuTuning(r, seen, total[0])


def table_text(config: StressConfig, extra: Mapping[str, Any] | None = None, comment: str = "") -> str:
    """A profile ``[stress]`` table (TOML) with ``config``'s knobs and ``extra`` keys."""
    lines = [f"# {ln}" for ln in comment.splitlines()] if comment else []
    lines.append("[stress]")
    for k, v in {**config.to_table(), **(extra or {})}.items():
        if isinstance(v, bool):
            lines.append(f"{k} = {'true' if v else 'false'}")
        elif isinstance(v, (int, float)):
            lines.append(f"{k} = {v}")
        else:
            lines.append(f"{k} = {str(v)!r}".replace("'", '"'))
    return "\n".join(lines) + "\n"


__all__ = ["Measure", "Trial", "ArmResult", "TuneResult", "launch_instances", "successive_halving", "explore", "bracket_candidates", "spend_budget", "candidates", "weak_count",
           "condition_target",
           "gpu_measure", "sc_and_weak", "table_text", "tune_on_gpu", "GpuTuning"]
