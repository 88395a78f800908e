"""Campaigns tune stress as they go (docs/tuning.md, "In campaigns").

A profile's ``[stress] tune_share`` (0 = off) is the share of GPU time a campaign may spend tuning.
Tuning is per *shape family* (:func:`shape_family`: the program's shape name, its handoff
mechanism, its thread placement): the first program of a family that has weak (non-SC) outcomes
is tuned for (successive halving, :mod:`fuzzgpu.stress_tune`, within ``tune_budget_s``
GPU-seconds), when tuning so far is within the share; later programs of that family run with the
tuned knobs (the profile's ``[stress]`` table for everything else: instances, budget, seed).

The tuned knobs live in the campaign state (``state.json``, key ``tuning``): they survive a
restart.  Every finding's corpus entry records the stress it ran with (``stress``, as always) and
where that came from (``campaign.stress_source``: ``profile`` or ``tuned:<family>``).

Backends without stress knobs (``sim``, ``static``) never tune: :meth:`CampaignTuner.note` says
so, and the campaign's report prints it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Collection, MutableMapping

from .. import codegen
from ..backends.base import Histogram, RunConfig
from ..ir import MbarrierWait, Program
from .space import StressConfig
from .tune import candidates, successive_halving, weak_count

#: GPU-seconds one family's tuning may take (a campaign's default; profiles can set tune_budget_s)
TUNE_BUDGET_S = 5.0
#: the backends whose runs have stress knobs
TUNABLE_BACKENDS = ("cuda",)

_MECHANISMS = (("CpAsyncBulk", "bulk-copy"), ("MbarrierWait", "mbarrier"), ("MbarrierArrive", "mbarrier"),
               ("GridDepControl", "pdl"), ("CpAsync", "cp.async"), ("ClusterBarrier", "cluster-barrier"),
               ("Barrier", "bar"), ("Atom", "atom"))


def mechanism(p: Program) -> str:
    """The program's handoff mechanism, by the instructions it uses (first of a fixed list), or
    ``memory`` (plain loads, stores and fences)."""
    ops = {type(i).__name__ for t in p.threads for i in t.code}
    return next((m for op, m in _MECHANISMS if op in ops), "memory")


def placement(p: Program) -> str:
    """How the program's threads are placed: same-warp, same-cta, cluster (CTAs of one
    cluster), different-ctas (one CTA each), mixed (some share a CTA), grids (several grids)."""
    pls = [t.placement for t in p.threads]
    if len({(pl.gpu, pl.grid) for pl in pls}) > 1:
        return "grids"
    ctas = {(pl.cluster_id, pl.cta) for pl in pls}
    if len(ctas) == 1:
        warps = {pl.warp for pl in pls}
        return "same-warp" if len(warps) == 1 and None not in warps and len(pls) > 1 else "same-cta"
    if len({pl.cluster_id for pl in pls}) == 1:
        return "cluster"
    return "different-ctas" if len(ctas) == len(pls) else "mixed"


def shape_family(p: Program) -> str:
    """The family stress is tuned for: ``shape|mechanism|placement`` (``MP|memory|different-ctas``)."""
    return f"{p.name.split('+')[0]}|{mechanism(p)}|{placement(p)}"


#: the instances of a run whose waits mostly time out (a campaign's ``RunConfig.timeout_stop``), and of
#: one run of a program with a wait on parity 1 that the model says may spin for ever at a budget of
#: 100,000 iterations (:func:`may_hang_capped`, ``fuzzgpu necessity``).  Issue 32's class I draws such
#: waits: on the hardware the wait on the other phase returns at once before the phase completes, and
#: spins to the budget after -- at 1e7 instances and 100,000 iterations such a run outlasted a worker's
#: watchdog (an H200 `all` race campaign quarantined 41, each after 122 s)
MAY_HANG_INSTANCES = 100_000


def may_hang_capped(program: Program, config: RunConfig) -> RunConfig:
    """``config`` with at most :data:`MAY_HANG_INSTANCES` instances when ``program`` waits on parity 1
    and :func:`fuzzgpu.model.termination` says a wait of it may spin for ever; else ``config``.  The
    oracle is asked only for programs with such a wait (it costs about 0.1 s).  A campaign does not
    need it: it runs a wait loop at :data:`SHORT_BUDGET` iterations and stops a run that mostly times
    out (``RunConfig.timeout_stop``)."""
    if config.instances <= MAY_HANG_INSTANCES or not any(
            isinstance(i, MbarrierWait) and i.parity == 1 for t in program.threads for i in t.code):
        return config
    from ..model import Unsupported, termination

    try:
        hangs = termination(program).may_hang
    except Unsupported:
        hangs = False
    return dataclasses.replace(config, instances=MAY_HANG_INSTANCES) if hangs else config


#: the spin budget (``RunConfig.budget``: the iterations a wait loop may take before its instance is
#: a timeout) a campaign first runs a program with a wait loop at.  A hanging instance holds its
#: launch for the whole budget: in a 600 s `all` race campaign on an H200 at 100,000 iterations
#: (bench/results/throughput/h200-600s-final/), 648 runs of programs that may hang, ~92% of their
#: instances timed out, took 740 of the 1,382 GPU-seconds of all runs.  A wait that completes does
#: so within a few iterations of the write it awaits: on the H200 the may-hang programs of a
#: campaign's draws timed out as often and showed as much at 2,000 as at 100,000
#: (bench/results/throughput/h200-600s-6877ec1/may-hang-budget.md).  When a run at this budget has a
#: timeout and the model does not say the program's wait may spin for ever, the campaign runs it
#: again at the profile's budget and judges that run (:func:`full_budget_again`): a timeout is a
#: finding only at the profile's budget.
SHORT_BUDGET = 2_000


def short_budget(program: Program, config: RunConfig) -> RunConfig:
    """``config`` with a spin budget of at most :data:`SHORT_BUDGET` when ``program`` has a wait
    loop (a backward jump: :func:`fuzzgpu.model.liveness.waits`); else ``config``."""
    if config.budget <= SHORT_BUDGET:
        return config
    from ..model.liveness import waits

    return dataclasses.replace(config, budget=SHORT_BUDGET) if waits(program) else config


def full_budget_again(program: Program, config: RunConfig, full: int, timeouts: int) -> RunConfig | None:
    """The configuration to run ``program`` again with when its run under ``config`` (a budget
    :func:`short_budget` lowered below ``full``) had ``timeouts``: the same at budget ``full``,
    unless the model says a wait of the program may (or must) spin for ever -- then its timeouts
    are expected, never a finding, and the run stands (None).  The model is asked only here, of a
    run with timeouts, as judging its timeouts asks it (:func:`fuzzgpu.model.termination`, cached)."""
    if not timeouts or config.budget >= full:
        return None
    from ..model import Unsupported, termination

    try:
        if termination(program).may_hang:
            return None
    except Unsupported:
        pass
    return dataclasses.replace(config, budget=full)


@dataclass
class CampaignTuner:
    """The tuning share of one campaign.  ``state`` is the campaign state's ``tuning`` dict
    (mutated in place): ``{"spent_s", "run_s", "families": {family: {"stress", "weak_per_s",
    "default_weak_per_s", "program", "spent_s"}}}``."""

    share: float
    backend: str
    state: MutableMapping[str, Any]
    budget_s: float = TUNE_BUDGET_S
    n_candidates: int = 27
    instances: int = 1 << 20

    def __post_init__(self) -> None:
        self.state.setdefault("spent_s", 0.0)
        self.state.setdefault("run_s", 0.0)
        self.state.setdefault("families", {})

    @property
    def active(self) -> bool:
        return self.share > 0 and self.backend in TUNABLE_BACKENDS

    def note(self) -> str:
        """The report's line on tuning."""
        if self.share <= 0:
            return "stress tuning off (profile [stress] tune_share = 0)"
        if self.backend not in TUNABLE_BACKENDS:
            return f"stress tuning: a no-op on the {self.backend} backend (it has no stress knobs; tune_share {self.share:g} unused)"
        fams = self.state["families"]
        return (f"stress tuning: share {self.share:g}, {len(fams)} famil{'y' if len(fams) == 1 else 'ies'} tuned, "
                f"{self.state['spent_s']:.1f} GPU-s tuning / {self.state['run_s']:.1f} GPU-s runs")

    def stress_for(self, program: Program, base: RunConfig) -> tuple[RunConfig, str]:
        """``base`` with the program's family's tuned knobs, and where the knobs came from; a spin
        budget of :data:`SHORT_BUDGET` for a program with a wait loop (a hanging instance then holds
        its launch for 2,000 iterations; a run that mostly times out stops after
        :data:`MAY_HANG_INSTANCES` instances: ``RunConfig.timeout_stop``)."""
        base = short_budget(program, base)
        if not self.active:
            return base, "profile"
        fam = shape_family(program)
        t = self.state["families"].get(fam)
        if t is None:
            return base, "profile"
        return StressConfig.from_table(t["stress"]).run_config(base), f"tuned:{fam}"

    def due(self, program: Program) -> bool:
        """Whether to tune ``program``'s family now: active, not tuned yet, and tuning so far
        (plus one family's budget) within the share of the GPU time."""
        if not self.active or shape_family(program) in self.state["families"]:
            return False
        spent, runs = self.state["spent_s"], self.state["run_s"]
        return spent <= self.share * (spent + runs + self.budget_s)

    def ran(self, hist: Histogram) -> None:
        self.state["run_s"] += max(0.0, float(hist.seconds))

    def source_of(self, program: Program, config: RunConfig) -> str:
        """Where ``config``'s stress knobs came from: ``tuned:<family>`` when they are the
        program's family's tuned knobs, else ``profile``."""
        fam = shape_family(program)
        t = self.state["families"].get(fam)
        if self.active and t is not None and StressConfig.of(config) == StressConfig.from_table(t["stress"]):
            return f"tuned:{fam}"
        return "profile"

    def failed(self, program: Program, base: RunConfig, error: str) -> None:
        """Tuning ``program``'s family failed: the family keeps ``base``'s knobs (no retry)."""
        fam = shape_family(program)
        self.state.setdefault("errors", {})[fam] = error[:300]
        self.state["families"][fam] = {"stress": StressConfig.of(base).to_table(), "weak_per_s": 0.0,
                                       "default_weak_per_s": 0.0, "program": program.name, "spent_s": 0.0,
                                       "describe": "the profile's stress (tuning failed)"}

    def tune(self, program: Program, sc: Collection[Any], base: RunConfig,
             run: Callable[[Program, RunConfig], Histogram], seed: int = 1) -> dict[str, Any]:
        """Tune ``program``'s family with ``run(program, config)`` (the campaign's backend):
        maximise non-SC outcomes per GPU-second; store and return the family's record."""
        calls = [0]

        def measure(config: StressConfig, n: int) -> tuple[int, float]:
            calls[0] += 1
            h = run(program, config.run_config(base, instances=n, seed=(seed * 7919 + calls[0]) & 0xFFFFFFFF))
            return weak_count(h, sc), h.seconds

        r = successive_halving(candidates(self.n_candidates, seed, codegen.min_cta_threads(program)), measure,
                               self.budget_s, self.instances,
                               default=StressConfig.of(base))
        fam = shape_family(program)
        rec = {"stress": r.best.config.to_table(), "weak_per_s": r.best.rate, "default_weak_per_s": r.default.rate,
               "program": program.name, "spent_s": r.spent_s, "describe": r.best.config.describe()}
        self.state["families"][fam] = rec
        self.state["spent_s"] += r.spent_s
        return rec


__all__ = ["CampaignTuner", "shape_family", "mechanism", "placement", "TUNE_BUDGET_S", "TUNABLE_BACKENDS"]
