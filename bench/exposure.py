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
nvcc, the GPU): every program with the default stress (fuzzgpu.stress.StressConfig(): the
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
from fuzzgpu.stress import StressConfig  # noqa: E402
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


def gpu_run(out: Path, budget_s: float, tune_share: float, seed: int, deep_gpu_s: float = 2.0) -> int:
    from fuzzgpu.backends import cuda
    from fuzzgpu.stress_tune import gpu_measure, successive_halving, candidates

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
    forbidden = {"default": 0, "tuning": 0, "tuned": 0, "deep": 0}
    skipped = {"default": 0, "tuned": 0, "deep": 0}
    faults = {"default": 0, "tuning": 0, "tuned": 0, "deep": 0}
    runs: list[dict[str, Any]] = []
    gpu_s = {"default": 0.0, "tuning": 0.0, "tuned": 0.0, "deep": 0.0}
    # time plan: what is left after set-up, less a 10% margin, split default / tuning / tuned
    avail = max(0.0, clock.left() * 0.9)
    pass_s = avail * (1 - tune_share) / 2
    tune_s = avail * tune_share
    default = StressConfig()
    # calibrate: wall seconds per instance of the default stress, on the first program
    probe = comp[runnable[0].program.name]
    backend.run_compiled(probe, default.run_config(instances=1 << 20, seed=seed))
    t_probe0 = time.monotonic()
    hp = backend.run_compiled(probe, default.run_config(instances=1 << 22, seed=seed + 1))
    # the larger of wall and GPU time per instance; programs with more threads or locations run
    # slower than the probe, hence half the share
    wall_per_inst = max(time.monotonic() - t_probe0, hp.seconds) / hp.instances * 2
    per_prog_s = pass_s / max(1, len(runnable))
    n_default = max(1 << 16, int(per_prog_s / max(wall_per_inst, 1e-12)) >> 16 << 16)

    margin = max(2.0, 0.03 * budget_s)
    wall_of_run: dict[str, float] = {}  # pass -> slowest wall seconds of one run so far

    def run_pass(label: str, cfg_of: Callable[[Variant], StressConfig], n_of: Callable[[Variant], int],
                 which: Sequence[Variant] | None = None) -> None:
        for v in runnable if which is None else which:
            if clock.left() < margin + 2 * wall_of_run.get(label, 0.0):
                print(f"exposure: {label} pass stopped early: the budget is nearly spent", file=sys.stderr)
                skipped[label] += 1
                continue
            name = v.program.name
            t_run = time.monotonic()
            hist = backend.run_compiled(comp[name], cfg_of(v).run_config(instances=n_of(v), seed=seed))
            wall_of_run[label] = max(wall_of_run.get(label, 0.0), time.monotonic() - t_run)
            gpu_s[label] += hist.seconds
            forbidden[label] += _forbidden(analyses, name, hist)
            faults[label] += _faults(analyses, name, hist)
            counts = dict(hist.counts)
            for m in by_prog.get(name, []):
                c = counts.get(m.outcome, 0)
                if label == "default":
                    m.default_count, m.default_seconds = c, hist.seconds
                elif label == "tuned":
                    m.tuned_count, m.tuned_seconds = c, hist.seconds
                else:
                    m.deep_count, m.deep_seconds = m.deep_count + c, m.deep_seconds + hist.seconds
            runs.append({"pass": label, "program": name, "instances": hist.instances, "seconds": hist.seconds,
                         "stress": cfg_of(v).describe(), "forbidden": _forbidden(analyses, name, hist)})

    run_pass("default", lambda v: default, lambda v: n_default)
    # tune per family, on the family's program with the most weak outcomes not seen (ties: most mutants)
    fams: dict[str, list[Variant]] = {}
    for v in runnable:
        if by_prog.get(v.program.name):
            fams.setdefault(v.family, []).append(v)
    tuned: dict[str, dict[str, Any]] = {}
    default_wall = budget_s - clock.left() - setup_s  # the calibration and the default pass
    for i, (fam, members) in enumerate(fams.items()):
        # what is left for tuning: the tuned pass needs about the default pass's time; tuning's
        # per-run overhead (allocation, copies) is not GPU time, hence the factor 0.5
        per_fam_s = min(tune_s / len(fams), 0.5 * (clock.left() - default_wall - margin) / (len(fams) - i))
        if per_fam_s <= 0.01:
            break
        rep = max(members, key=lambda v: (sum(1 for m in by_prog[v.program.name] if not m.default_count),
                                          len(by_prog[v.program.name])))
        name = rep.program.name
        targets = frozenset(m.outcome for m in by_prog[name])

        def record(_c: StressConfig, hh: Any, name: str = name) -> None:
            forbidden["tuning"] += _forbidden(analyses, name, hh)
            faults["tuning"] += _faults(analyses, name, hh)
            gpu_s["tuning"] += hh.seconds

        meas = gpu_measure(backend, comp[name], analyses[name].sc, targets, seed=seed, record=record)
        r = successive_halving(candidates(27, seed), meas, per_fam_s, instances=1 << 18)
        tuned[fam] = {"program": name, **r.to_json()}
        tuned[fam]["config"] = r.best.config
    # the tuned pass: the default pass's GPU time per program at most
    sec_inst: dict[str, float] = {}
    for fam, t in tuned.items():
        b = t["best"]
        sec_inst[fam] = b["seconds"] / max(1, b["instances"])
    d_sec_inst = gpu_s["default"] / max(1, n_default * len(runnable))

    def n_tuned(v: Variant) -> int:
        s = sec_inst.get(v.family, d_sec_inst)
        n = int(min(n_default, n_default * d_sec_inst / s if s > 0 else n_default))
        return max(1 << 16, n >> 16 << 16)

    def cfg_tuned(v: Variant) -> StressConfig:
        return tuned[v.family]["config"] if v.family in tuned else default

    run_pass("tuned", cfg_tuned, n_tuned)
    # the deep pass: a program with a mutant neither pass saw gets up to deep_gpu_s GPU-seconds of
    # its family's tuned stress, in runs of about a tenth of that (the bar: every mutant
    # seen within 2 s of GPU time); what the budget leaves decides how many programs get it
    unseen = [v for v in runnable if any(not m.default_count and not m.tuned_count for m in by_prog.get(v.program.name, []))]

    def n_deep(v: Variant) -> int:
        s = sec_inst.get(v.family, d_sec_inst) or d_sec_inst
        return max(1 << 16, int(deep_gpu_s / 10 / max(s, 1e-12)) >> 16 << 16)

    for v in unseen:
        spent = 0.0
        while spent < deep_gpu_s and any(not m.deep_count for m in by_prog[v.program.name]):
            before = gpu_s["deep"]
            n_runs = len(runs)
            run_pass("deep", cfg_tuned, n_deep, [v])
            if len(runs) == n_runs:
                break  # the budget is spent
            spent += gpu_s["deep"] - before
    device = backend.describe()
    backend.close()
    elapsed = budget_s - clock.left()
    score = _score(mutants)
    doc = {"device": device, "budget_s": budget_s, "deep_gpu_s": deep_gpu_s, "skipped_runs": skipped, "families_tuned": len(tuned),
           "families": len(fams),
           "elapsed_s": round(elapsed, 2), "setup_s": round(setup_s, 2), "gpu_seconds": gpu_s,
           "instances_default": n_default, "programs": len(vs), "runnable": len(runnable), "mutants": len(mutants),
           "score": score, "forbidden": forbidden, "forbidden_total": sum(forbidden.values()),
           "faults": faults, "faults_total": sum(faults.values()),
           "tuned": {f: {k: v for k, v in t.items() if k != "config"} for f, t in tuned.items()},
           "mutant_list": [m.to_json() for m in mutants], "runs": runs}
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
