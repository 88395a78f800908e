#!/usr/bin/env python3
"""The weak-behaviour score (issue 16): the project's own mutant suite, in the spirit of MC Mutants.

Mutants.  Every classic shape of 2 to 4 threads (MP, SB, LB, S, R, 2+2W, IRIW, WRC, ISA2, RWC, WWC,
Z6.3, 3.2W) x a weakening x a thread placement is generated as an IR Program (no hand-written
files):

  relaxed      every access .relaxed.gpu, no fence
  cta-scope    stores .release.cta, loads .acquire.cta (the right pattern at a scope too small
               when the threads sit in different CTAs)
  fence-scope  accesses .relaxed.gpu with a fence.sc.cta between a thread's accesses (a fence at
               the wrong scope)

  same-cta (threads in different warps of one CTA), different-ctas (one CTA each), mixed (3- and
  4-thread shapes: the first two threads share CTA 0, each other thread has its own CTA).

Each outcome the oracle allows that no interleaving produces (model.analyse: allowed - sc) is one
mutant; a mutant is *killed* when a run observes it.  A program whose weak outcomes the model
forbids (a .cta pattern inside one CTA) has no mutant -- it still runs, and every outcome of every
run is judged: the run counts model-forbidden outcomes (must be 0).

Runs.  In one process, within --budget-s seconds of wall time (everything included: the oracle,
nvcc, the GPU): every program with the default stress (fuzzgpu.stress.space.StressConfig(): the
campaign profiles' fixed stress), then stress tuned per shape family (shape x placement: successive
halving on the family's program with the fewest default kills, its weak outcomes the target), then
every program again with its family's tuned stress, then a deep pass: each program with a mutant
neither pass saw gets up to --deep-gpu-s GPU-seconds (default 2, the issue's bar) of its family's
tuned stress, as long as the budget lasts.  Reported per mutant and per shape: killed with the
default / the tuned stress / in any pass, and GPU-seconds per kill (the run's GPU-seconds divided by the
mutant's count: the expected time to see it once).

Writes --out DIR/exposure.json and DIR/exposure.md.  Exit 0; 1 when a model-forbidden outcome was
observed; 3 without a GPU, or when a value no store wrote was read (a harness or hardware fault).
--dry-run needs no GPU: lists the mutants and compiles every program's harness with nvcc for sm_90.  Runs with only PYTHONPATH set (or none, from
the checkout), no network.

  python3 bench/exposure.py --dry-run --out /tmp/exposure
  python3 bench/exposure.py --budget-s 240 --out bench/results/exposure-h200
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fuzzgpu import codegen, model  # noqa: E402
from fuzzgpu.properties import unwritten_keys  # noqa: E402
from fuzzgpu.ir import Fence, Instruction, Load, Location, Placement, Program, Scope, Sem, Store, Thread, validate  # noqa: E402
from fuzzgpu.stress.space import StressConfig  # noqa: E402
from fuzzgpu.strategies import CLASSIC_SKELETONS  # noqa: E402

#: (thread ops, observed final locations) per shape; ops are ("st"|"ld", location): the classic
#: shapes of fuzzgpu.strategies (one table), plus the 3-thread shapes issue 16 names that it lacks
SKELETONS: dict[str, tuple[tuple[tuple[tuple[str, str], ...], ...], tuple[str, ...]]] = {
    **{k: v for k, v in CLASSIC_SKELETONS.items() if k not in ("CoRR", "CoWW")},
    "RWC": (((("st", "x"),), (("ld", "x"), ("ld", "y")), (("st", "y"), ("ld", "x"))), ()),
    "WWC": (((("st", "x"),), (("ld", "x"), ("st", "y")), (("ld", "y"), ("st", "x"))), ("x",)),
    "Z6.3": (((("st", "x"), ("st", "y")), (("st", "y"), ("st", "z")), (("ld", "z"), ("ld", "x"))), ("y",)),
    "3.2W": (((("st", "x"), ("st", "y")), (("st", "y"), ("st", "z")), (("st", "z"), ("st", "x"))), ("x", "y", "z")),
}
WEAKENINGS = ("relaxed", "cta-scope", "fence-scope")
PLACEMENTS = ("same-cta", "different-ctas", "mixed")


@dataclass(frozen=True)
class Variant:
    shape: str
    weakening: str
    placement: str
    program: Program

    @property
    def family(self) -> str:
        """The shape family stress is tuned for: shape and placement."""
        return f"{self.shape}|{self.placement}"


def _access(kind: str, loc: str, reg: str, value: int, weakening: str) -> Instruction:
    if weakening == "cta-scope":
        return Store(loc, value, Sem.RELEASE, Scope.CTA) if kind == "st" else Load(reg, loc, Sem.ACQUIRE, Scope.CTA)
    return Store(loc, value, Sem.RELAXED, Scope.GPU) if kind == "st" else Load(reg, loc, Sem.RELAXED, Scope.GPU)


def _placement(placement: str, tid: int) -> Placement:
    if placement == "same-cta":
        return Placement(cta=0)
    if placement == "mixed":
        return Placement(cta=max(0, tid - 1))  # threads 0 and 1 share CTA 0
    return Placement(cta=tid)


def program(shape: str, weakening: str, placement: str) -> Program:
    """The IR program of one (shape, weakening, placement): distinct non-zero store values,
    every load's register and the shape's final locations observed."""
    threads_sk, finals = SKELETONS[shape]
    value = 0
    threads: list[Thread] = []
    keys: list[str] = []
    locs: list[str] = []
    for tid, ops in enumerate(threads_sk):
        code: list[Instruction] = []
        nreg = 0
        for i, (kind, loc) in enumerate(ops):
            if loc not in locs:
                locs.append(loc)
            if i > 0 and weakening == "fence-scope":
                code.append(Fence(Sem.SC, Scope.CTA))
            value += 1
            reg = f"r{nreg}"
            code.append(_access(kind, loc, reg, value, weakening))
            if kind == "ld":
                keys.append(f"P{tid}:{reg}")
                nreg += 1
        threads.append(Thread(f"P{tid}", _placement(placement, tid), tuple(code)))
    keys.extend(finals)
    name = f"{shape}+{weakening}+{placement}"
    return validate(Program(name, tuple(threads), tuple(Location(n) for n in sorted(locs)), observed=tuple(keys)))


def variants() -> list[Variant]:
    out = []
    for shape, (threads_sk, _) in SKELETONS.items():
        for w in WEAKENINGS:
            for pl in PLACEMENTS:
                if pl == "mixed" and len(threads_sk) < 3:
                    continue  # two threads: same or different CTAs only
                out.append(Variant(shape, w, pl, program(shape, w, pl)))
    return out


@dataclass
class Mutant:
    variant: Variant
    outcome: tuple[tuple[str, int], ...]
    default_count: int = 0
    default_seconds: float = 0.0
    tuned_count: int = 0
    tuned_seconds: float = 0.0
    deep_count: int = 0  # the deep pass: a mutant neither pass saw, up to --deep-gpu-s with tuned stress
    deep_seconds: float = 0.0

    @property
    def name(self) -> str:
        return f"{self.variant.program.name}: " + " ".join(f"{k}={v}" for k, v in self.outcome)

    def record(self, label: str, count: int, seconds: float) -> None:
        """One run's count of this mutant in pass ``label``: the default and the tuned pass run a
        program once, the deep pass adds its runs up."""
        if label == "default":
            self.default_count, self.default_seconds = count, seconds
        elif label == "tuned":
            self.tuned_count, self.tuned_seconds = count, seconds
        else:
            self.deep_count, self.deep_seconds = self.deep_count + count, self.deep_seconds + seconds

    def to_json(self) -> dict[str, Any]:
        def per_kill(n: int, s: float) -> float | None:
            return s / n if n else None

        v = self.variant
        return {"program": v.program.name, "shape": v.shape, "weakening": v.weakening, "placement": v.placement,
                "family": v.family, "outcome": dict(self.outcome),
                "default": {"count": self.default_count, "seconds": self.default_seconds,
                            "seconds_per_kill": per_kill(self.default_count, self.default_seconds)},
                "tuned": {"count": self.tuned_count, "seconds": self.tuned_seconds,
                          "seconds_per_kill": per_kill(self.tuned_count, self.tuned_seconds)},
                "deep": {"count": self.deep_count, "seconds": self.deep_seconds,
                         "seconds_per_kill": per_kill(self.deep_count, self.deep_seconds)}}


def analyse(vs: Sequence[Variant]) -> tuple[dict[str, Any], list[Mutant]]:
    """The oracle's analysis of every variant, and the mutants (one per allowed weak outcome)."""
    analyses: dict[str, Any] = {}
    mutants: list[Mutant] = []
    for v in vs:
        a = model.analyse(v.program)
        analyses[v.program.name] = a
        for o in sorted(a.weak):
            mutants.append(Mutant(v, o))
    return analyses, mutants


def dry_run(out: Path, arch: str) -> int:
    from fuzzgpu.backends import cuda

    t0 = time.monotonic()
    vs = variants()
    analyses, mutants = analyse(vs)
    unrunnable = {v.program.name: codegen.unrunnable_reasons(v.program) for v in vs}
    unrunnable = {k: r for k, r in unrunnable.items() if r}
    compiled = cuda.compile_programs([v.program for v in vs if v.program.name not in unrunnable], arch, batch=16)
    doc: dict[str, Any] = {"dry_run": True, "arch": arch, "programs": len(vs), "mutants": len(mutants), "compiled": len(compiled),
           "unrunnable": unrunnable, "seconds": round(time.monotonic() - t0, 2),
           "mutant_list": [m.to_json() for m in mutants],
           "no_mutant": sorted(v.program.name for v in vs if not analyses[v.program.name].weak)}
    out.mkdir(parents=True, exist_ok=True)
    (out / "exposure.json").write_text(json.dumps(doc, indent=1) + "\n")
    lines = [f"# Exposure mutants (dry run, {arch})", "",
             f"{len(vs)} programs, {len(mutants)} mutants; {len(compiled)} harnesses compiled with nvcc for {arch}; "
             f"{len(unrunnable)} unrunnable; {len(doc['no_mutant'])} programs with no allowed weak outcome.", "",
             "| program | weak outcomes (mutants) |", "|---|---|"]
    for v in vs:
        w = sorted(analyses[v.program.name].weak)
        lines.append(f"| {v.program.name} | {len(w)} |")
    (out / "exposure.md").write_text("\n".join(lines) + "\n")
    print(f"{len(vs)} programs, {len(mutants)} mutants, {len(compiled)} compiled for {arch}, "
          f"{len(unrunnable)} unrunnable, in {doc['seconds']} s; wrote {out}/exposure.json and exposure.md")
    for m in mutants:
        print(f"  {m.name}")
    return 0 if not unrunnable else 3


# --------------------------------------------------------------------------------------------
# The GPU run
# --------------------------------------------------------------------------------------------


class Clock:
    """The wall-clock budget of the whole run (the bench never exceeds it)."""

    def __init__(self, budget_s: float) -> None:
        self.t0 = time.monotonic()
        self.budget = budget_s

    def left(self) -> float:
        return self.budget - (time.monotonic() - self.t0)


def _forbidden(analyses: dict[str, Any], name: str, hist: Any) -> int:
    """Instances whose outcome the model forbids (a value no store wrote is a fault, not counted
    here: it is in ``faults``)."""
    a = analyses[name]
    return sum(c for o, c in hist.counts if all(v is not None for _, v in o) and o not in a.possible
               and not unwritten_keys(a.program, dict(o)))


def _faults(analyses: dict[str, Any], name: str, hist: Any) -> int:
    """Instances that read a value no store of the program wrote (a harness or hardware fault)."""
    a = analyses[name]
    return sum(c for o, c in hist.counts if any(v is None for _, v in o) or unwritten_keys(a.program, dict(o)))


class Passes:
    """The bookkeeping the passes share: the backend and the compiled programs, the mutants of each
    program, and per pass its GPU-seconds, model-forbidden outcomes, faults, runs skipped for the
    budget and the slowest wall seconds of one run (the budget check), plus every run's record."""

    def __init__(self, backend: Any, comp: dict[str, Any], analyses: dict[str, Any], by_prog: dict[str, list[Mutant]],
                 clock: Clock, margin: float, seed: int) -> None:
        self.backend, self.comp, self.analyses, self.by_prog = backend, comp, analyses, by_prog
        self.clock, self.margin, self.seed = clock, margin, seed
        self.forbidden = {"default": 0, "tuning": 0, "tuned": 0, "deep": 0}
        self.skipped = {"default": 0, "tuned": 0, "deep": 0}
        self.faults = {"default": 0, "tuning": 0, "tuned": 0, "deep": 0}
        self.runs: list[dict[str, Any]] = []
        self.gpu_s = {"default": 0.0, "tuning": 0.0, "tuned": 0.0, "deep": 0.0}
        self.wall_of_run: dict[str, float] = {}  # pass -> slowest wall seconds of one run so far

    def run_pass(self, label: str, cfg_of: Callable[[Variant], StressConfig], n_of: Callable[[Variant], int],
                 which: Sequence[Variant]) -> None:
        """Each program of ``which`` once, while the budget lasts (a run that would not fit is skipped)."""
        for v in which:
            if self.clock.left() < self.margin + 2 * self.wall_of_run.get(label, 0.0):
                print(f"exposure: {label} pass stopped early: the budget is nearly spent", file=sys.stderr)
                self.skipped[label] += 1
                continue
            self._run(label, v, cfg_of(v), n_of(v))

    def _run(self, label: str, v: Variant, cfg: StressConfig, n: int) -> None:
        name = v.program.name
        t_run = time.monotonic()
        hist = self.backend.run_compiled(self.comp[name], cfg.run_config(instances=n, seed=self.seed))
        self.wall_of_run[label] = max(self.wall_of_run.get(label, 0.0), time.monotonic() - t_run)
        self.gpu_s[label] += hist.seconds
        self.forbidden[label] += _forbidden(self.analyses, name, hist)
        self.faults[label] += _faults(self.analyses, name, hist)
        counts = dict(hist.counts)
        for m in self.by_prog.get(name, []):
            m.record(label, counts.get(m.outcome, 0), hist.seconds)
        self.runs.append({"pass": label, "program": name, "instances": hist.instances, "seconds": hist.seconds,
                          "stress": cfg.describe(), "forbidden": _forbidden(self.analyses, name, hist)})

    def record_tuning(self, name: str, _c: StressConfig, hh: Any) -> None:
        """A tuning run's histogram (``gpu_measure``'s ``record``): judged and timed like a pass's."""
        self.forbidden["tuning"] += _forbidden(self.analyses, name, hh)
        self.faults["tuning"] += _faults(self.analyses, name, hh)
        self.gpu_s["tuning"] += hh.seconds


@dataclass(frozen=True)
class Plan:
    """How much each pass runs: the default pass's instances per program, and per family its tuned
    stress and the GPU-seconds per instance of its best run (the default pass's where untuned)."""

    default: StressConfig
    n_default: int
    tuned: dict[str, dict[str, Any]]
    sec_inst: dict[str, float]
    d_sec_inst: float
    deep_gpu_s: float

    def cfg_tuned(self, v: Variant) -> StressConfig:
        return self.tuned[v.family]["config"] if v.family in self.tuned else self.default

    def n_tuned(self, v: Variant) -> int:
        """The tuned pass: the default pass's GPU time per program at most."""
        s = self.sec_inst.get(v.family, self.d_sec_inst)
        n = int(min(self.n_default, self.n_default * self.d_sec_inst / s if s > 0 else self.n_default))
        return max(1 << 16, n >> 16 << 16)

    def n_deep(self, v: Variant) -> int:
        """The deep pass: runs of about a tenth of ``deep_gpu_s``."""
        s = self.sec_inst.get(v.family, self.d_sec_inst) or self.d_sec_inst
        return max(1 << 16, int(self.deep_gpu_s / 10 / max(s, 1e-12)) >> 16 << 16)


def _n_default(backend: Any, probe: Any, default: StressConfig, seed: int, pass_s: float, programs: int) -> int:
    """The default pass's instances per program: calibrated on the first program (wall seconds
    per instance of the default stress)."""
    backend.run_compiled(probe, default.run_config(instances=1 << 20, seed=seed))
    t_probe0 = time.monotonic()
    hp = backend.run_compiled(probe, default.run_config(instances=1 << 22, seed=seed + 1))
    # the larger of wall and GPU time per instance; programs with more threads or locations run
    # slower than the probe, hence half the share
    wall_per_inst = max(time.monotonic() - t_probe0, hp.seconds) / hp.instances * 2
    per_prog_s = pass_s / max(1, programs)
    return max(1 << 16, int(per_prog_s / max(wall_per_inst, 1e-12)) >> 16 << 16)


def _families(runnable: Sequence[Variant], by_prog: dict[str, list[Mutant]]) -> dict[str, list[Variant]]:
    """The shape families to tune, each with its programs that have a mutant."""
    fams: dict[str, list[Variant]] = {}
    for v in runnable:
        if by_prog.get(v.program.name):
            fams.setdefault(v.family, []).append(v)
    return fams


def _tune(ps: Passes, fams: dict[str, list[Variant]], tune_s: float, default_wall: float) -> dict[str, dict[str, Any]]:
    """Stress tuned per family, on the family's program with the most weak outcomes not seen
    (ties: most mutants), while the budget leaves time for it."""
    from fuzzgpu.stress.tune import candidates, gpu_measure, successive_halving

    tuned: dict[str, dict[str, Any]] = {}
    for i, (fam, members) in enumerate(fams.items()):
        # what is left for tuning: the tuned pass needs about the default pass's time; tuning's
        # per-run overhead (allocation, copies) is not GPU time, hence the factor 0.5
        per_fam_s = min(tune_s / len(fams), 0.5 * (ps.clock.left() - default_wall - ps.margin) / (len(fams) - i))
        if per_fam_s <= 0.01:
            break
        rep = max(members, key=lambda v: (sum(1 for m in ps.by_prog[v.program.name] if not m.default_count),
                                          len(ps.by_prog[v.program.name])))
        name = rep.program.name
        targets = frozenset(m.outcome for m in ps.by_prog[name])
        meas = gpu_measure(ps.backend, ps.comp[name], ps.analyses[name].sc, targets, seed=ps.seed,
                           record=functools.partial(ps.record_tuning, name))
        r = successive_halving(candidates(27, ps.seed, codegen.min_cta_threads(rep.program)), meas, per_fam_s,
                               instances=1 << 18)
        tuned[fam] = {"program": name, **r.to_json()}
        tuned[fam]["config"] = r.best.config
    return tuned


def _deep_pass(ps: Passes, plan: Plan, runnable: Sequence[Variant]) -> None:
    """A program with a mutant neither pass saw gets up to ``deep_gpu_s`` GPU-seconds of its
    family's tuned stress, in runs of about a tenth of that (the issue's bar: every mutant seen
    within 2 s of GPU time); what the budget leaves decides how many programs get it."""
    unseen = [v for v in runnable if any(not m.default_count and not m.tuned_count for m in ps.by_prog.get(v.program.name, []))]
    for v in unseen:
        spent = 0.0
        while spent < plan.deep_gpu_s and any(not m.deep_count for m in ps.by_prog[v.program.name]):
            before = ps.gpu_s["deep"]
            n_runs = len(ps.runs)
            ps.run_pass("deep", plan.cfg_tuned, plan.n_deep, [v])
            if len(ps.runs) == n_runs:
                break  # the budget is spent
            spent += ps.gpu_s["deep"] - before


def gpu_run(out: Path, budget_s: float, tune_share: float, seed: int, deep_gpu_s: float = 2.0) -> int:
    from fuzzgpu.backends import cuda

    clock = Clock(budget_s)
    try:
        backend = cuda.CudaBackend()
    except Exception as e:  # noqa: BLE001 -- no GPU, PyCUDA or driver: the environment
        print(f"exposure: environment error: no GPU to run on: {str(e).splitlines()[0] if str(e) else type(e).__name__}",
              file=sys.stderr)
        return 3
    vs = variants()
    analyses, mutants = analyse(vs)
    runnable = [v for v in vs if not codegen.unrunnable_reasons(v.program)]
    comp = {c.program: c for c in cuda.compile_programs([v.program for v in runnable], backend.arch, batch=16)}
    setup_s = budget_s - clock.left()
    by_prog: dict[str, list[Mutant]] = {}
    for m in mutants:
        by_prog.setdefault(m.variant.program.name, []).append(m)
    ps = Passes(backend, comp, analyses, by_prog, clock, max(2.0, 0.03 * budget_s), seed)
    # time plan: what is left after set-up, less a 10% margin, split default / tuning / tuned
    avail = max(0.0, clock.left() * 0.9)
    pass_s = avail * (1 - tune_share) / 2
    tune_s = avail * tune_share
    default = StressConfig()
    n_default = _n_default(backend, comp[runnable[0].program.name], default, seed, pass_s, len(runnable))
    ps.run_pass("default", lambda v: default, lambda v: n_default, runnable)
    fams = _families(runnable, by_prog)
    tuned = _tune(ps, fams, tune_s, budget_s - clock.left() - setup_s)  # less the calibration and the default pass
    plan = Plan(default, n_default, tuned, {fam: t["best"]["seconds"] / max(1, t["best"]["instances"]) for fam, t in tuned.items()},
                ps.gpu_s["default"] / max(1, n_default * len(runnable)), deep_gpu_s)
    ps.run_pass("tuned", plan.cfg_tuned, plan.n_tuned, runnable)
    _deep_pass(ps, plan, runnable)
    device = backend.describe()
    backend.close()
    elapsed = budget_s - clock.left()
    score = _score(mutants)
    doc = {"device": device, "budget_s": budget_s, "deep_gpu_s": deep_gpu_s, "skipped_runs": ps.skipped, "families_tuned": len(tuned),
           "families": len(fams),
           "elapsed_s": round(elapsed, 2), "setup_s": round(setup_s, 2), "gpu_seconds": ps.gpu_s,
           "instances_default": n_default, "programs": len(vs), "runnable": len(runnable), "mutants": len(mutants),
           "score": score, "forbidden": ps.forbidden, "forbidden_total": sum(ps.forbidden.values()),
           "faults": ps.faults, "faults_total": sum(ps.faults.values()),
           "tuned": {f: {k: v for k, v in t.items() if k != "config"} for f, t in tuned.items()},
           "mutant_list": [m.to_json() for m in mutants], "runs": ps.runs}
    out.mkdir(parents=True, exist_ok=True)
    (out / "exposure.json").write_text(json.dumps(doc, indent=1, default=str) + "\n")
    (out / "exposure.md").write_text(markdown(doc, mutants))
    s = score["total"]
    print(f"score: default {s['default']}/{s['mutants']}, tuned {s['tuned']}/{s['mutants']}, "
          f"any pass (deep included: {deep_gpu_s:g} GPU-s each for the unseen) {s['any_pass']}/{s['mutants']}; "
          f"forbidden {doc['forbidden_total']}; {elapsed:.1f} s of {budget_s:.0f}; wrote {out}/exposure.json and exposure.md")
    return 1 if doc["forbidden_total"] else (3 if doc["faults_total"] else 0)


def _score(mutants: Sequence[Mutant]) -> dict[str, Any]:
    def agg(ms: Sequence[Mutant]) -> dict[str, Any]:
        kd = [m for m in ms if m.default_count]
        kt = [m for m in ms if m.tuned_count]
        kx = [m for m in ms if m.default_count or m.tuned_count or m.deep_count]

        def mean_per_kill(xs: list[Mutant], tuned: bool) -> float | None:
            vals = [(m.tuned_seconds / m.tuned_count) if tuned else (m.default_seconds / m.default_count) for m in xs]
            return sum(vals) / len(vals) if vals else None

        return {"mutants": len(ms), "default": len(kd), "tuned": len(kt), "either": len({id(m) for m in kd + kt}),
                "any_pass": len(kx),
                "default_s_per_kill": mean_per_kill(kd, False), "tuned_s_per_kill": mean_per_kill(kt, True)}

    out: dict[str, Any] = {"total": agg(mutants)}
    for key in ("shape", "weakening", "placement", "family"):
        groups: dict[str, list[Mutant]] = {}
        for m in mutants:
            groups.setdefault(getattr(m.variant, key), []).append(m)
        out[key] = {g: agg(ms) for g, ms in groups.items()}
    return out


def markdown(doc: dict[str, Any], mutants: Sequence[Mutant]) -> str:
    def f(x: float | None) -> str:
        return "-" if x is None else f"{x:.2e}"

    s = doc["score"]
    L = [f"# Weak-behaviour score ({doc['device']})", "",
         f"{doc['mutants']} mutants in {doc['programs']} programs; budget {doc['budget_s']} s, used {doc['elapsed_s']} s "
         f"(set-up {doc['setup_s']} s); default stress: {doc['instances_default']} instances per program.", "",
         f"**Score: default {s['total']['default']}/{s['total']['mutants']}, tuned {s['total']['tuned']}/{s['total']['mutants']}, "
         f"any pass {s['total']['any_pass']}/{s['total']['mutants']}** (the deep pass: up to {doc.get('deep_gpu_s')} GPU-s of "
         f"tuned stress for each program with a mutant neither pass saw); "
         f"model-forbidden outcomes: {doc['forbidden_total']} ({doc['forbidden']}); unwritten values (harness or "
         f"hardware faults): {doc['faults_total']}.", "",
         "GPU-s per kill: the run's GPU-seconds over the mutant's count (expected time to see it once), mean over killed mutants.", ""]
    for key in ("shape", "weakening", "placement", "family"):
        L += [f"| {key} | mutants | default | tuned | any pass | default GPU-s/kill | tuned GPU-s/kill |", "|---|---|---|---|---|---|---|"]
        for g, a in s[key].items():
            L.append(f"| {g} | {a['mutants']} | {a['default']} | {a['tuned']} | {a['any_pass']} | {f(a['default_s_per_kill'])} "
                     f"| {f(a['tuned_s_per_kill'])} |")
        L.append("")
    L += ["## Tuned stress per family", "", "| family | program | best | weak/s best | weak/s default |", "|---|---|---|---|---|"]
    for fam, t in doc["tuned"].items():
        L.append(f"| {fam} | {t['program']} | {t['best']['describe']} | {t['best']['weak_per_s']:.3g} | {t['default']['weak_per_s']:.3g} |")
    L += ["", "## Mutants", "", "| mutant | default count | tuned count | deep count (GPU-s) |", "|---|---|---|---|"]
    for m in mutants:
        deep = f"{m.deep_count} ({m.deep_seconds:.2f})" if m.deep_seconds else "-"
        L.append(f"| {m.name} | {m.default_count} | {m.tuned_count} | {deep} |")
    return "\n".join(L) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, metavar="DIR", help="where exposure.json and exposure.md go")
    ap.add_argument("--budget-s", type=float, default=240.0, metavar="S",
                    help="wall-clock seconds for the whole run, set-up included (default: 240)")
    ap.add_argument("--tune-share", type=float, default=0.4, metavar="F",
                    help="share of the GPU time left after set-up spent tuning (default: 0.4)")
    ap.add_argument("--deep-gpu-s", type=float, default=2.0, metavar="S",
                    help="GPU-seconds of tuned stress for each program with a mutant neither pass saw (default: 2)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--arch", default="sm_90", help="--dry-run: the arch to compile for (default: sm_90)")
    ap.add_argument("--dry-run", action="store_true", help="no GPU: list the mutants, compile every harness with nvcc")
    a = ap.parse_args(argv)
    if not 0 <= a.tune_share < 1 or not a.budget_s > 0:
        ap.error("--tune-share must be in [0, 1) and --budget-s > 0")
    if a.dry_run:
        return dry_run(Path(a.out), a.arch)
    return gpu_run(Path(a.out), a.budget_s, a.tune_share, a.seed, a.deep_gpu_s)


if __name__ == "__main__":
    sys.exit(main())
