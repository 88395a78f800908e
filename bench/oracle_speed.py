"""Benchmark: the oracle (``model.race.analyse_races`` and ``model.analyse``) over a fixed sample of
``--profile all`` draws -- CPU seconds, and a digest of every result to compare two trees.

    python3 bench/oracle_speed.py [--n 200] [--seed 11] [--out bench/results/oracle_speed/NAME.json]

Run it from two checkouts (e.g. the base commit unpacked with ``git archive BASE fuzzgpu bench |
tar -x -C /tmp/base``, then ``cd /tmp/base && python3 bench/oracle_speed.py --out ...``) and compare
with ``--compare A.json B.json``: the per-program digests (races, clean and racy outcomes, the
allowed / SC / outside-model sets, candidate counts) must be equal; the CPU seconds are the speed-up.
The draw uses only the generator, so both trees draw the same programs when the generator is equal.

Campaign draws (issue 29): ``--stages`` draws as a campaign does (``bench/stages.py``'s ``draw``: the
profile's weighted strategy, ``--n`` programs per seed of ``--seeds``) and times each program as a
campaign asks: ``model.analyse`` first (the run advice: the paths enumerated afresh), then
``analyse_races`` (the property: the paths cached).  Per program CPU ms, mean and p90; ``--compare``
then also writes a markdown table next to NEW (``--md``)::

    python3 bench/oracle_speed.py --stages --seeds 1 2 3 --n 200 --out bench/results/oracle_speed/NAME.json

A race campaign's two questions (``--questions``): per campaign draw, ``model.analyse`` then
``analyse_races`` (as a campaign asked them until 2026-12-04) against what it asks now --
``campaign.analyses.Analyses(with_races=True)`` (the race analysis with the model's sets, one
enumeration) then ``analyse_races`` (answered by the same pass) -- the answers checked equal, CPU ms
per program, mean and p90, JSON and a table::

    python3 bench/oracle_speed.py --questions --seeds 1 2 3 --n 200 --out bench/results/oracle_speed/campaign-questions.json

Each ``--questions`` row also carries the digests of both ways' answers (``old``, ``new``), so two
trees' runs compare with ``--compare`` (every program's digests equal).

The value domains a campaign worker computes of each draw (``--values``): per campaign draw, from
cold caches, ``codegen.values.harness_domains`` (the program's domains and its plain-copy form's), CPU
ms per program (mean, p90) and a digest of the domains ("uncovered" where the oracle does not cover
the program) to compare two trees with ``--compare``::

    python3 bench/oracle_speed.py --values --seeds 1 2 3 --n 200 --out /tmp/values-NAME.json

The fix search's question of a candidate (``--bars``): per campaign draw, from cold caches, the race
analysis with the outcomes it can produce asked as delivered (``analyse_races(delivered=...)``), over
every path and as the fix search asks it now, over fewer paths of a program with an mbarrier
(``prune_bars``: :func:`fuzzgpu.model.events.compute_traces`) -- the answers checked equal, CPU ms per
program, mean and p90, for all and for the programs with an mbarrier, JSON and a table::

    python3 bench/oracle_speed.py --bars --seeds 1 2 3 --n 200 --out bench/results/oracle_speed/bars-NAME.json

To time another checkout's ``fuzzgpu`` with this script, copy it into that checkout's ``bench/``
(the script imports the ``fuzzgpu`` beside its own folder).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402

from compile_phases import header, publish  # noqa: E402 -- bench/compile_phases.py, beside this script
from fuzzgpu import strategies as fst  # noqa: E402
from fuzzgpu.ir import Program  # noqa: E402
from fuzzgpu.model import analyse  # noqa: E402
from fuzzgpu.model.race import analyse_races  # noqa: E402


def draw(n: int, at: int, profile: str) -> list[Program]:
    out: list[Program] = []

    @seed(at)
    @settings(max_examples=n, deadline=None, suppress_health_check=list(HealthCheck), database=None,
              phases=[Phase.generate])
    @given(fst.programs(profile))
    def collect(p: Program) -> None:
        out.append(p)

    collect()
    return out


def race_digest(p: Program) -> str:
    try:
        ra = analyse_races(p)
    except Exception as e:  # noqa: BLE001 -- the exception is part of the result
        return f"raise {type(e).__name__}: {e}"
    racy = sorted((repr(o), repr(sorted(map(repr, v)))) for o, v in ra.racy.items())
    return repr((sorted(map(repr, ra.races)), sorted(map(repr, ra.clean)), racy, ra.beyond_bound))


def model_digest(p: Program) -> str:
    try:
        a = analyse(p)
    except Exception as e:  # noqa: BLE001
        return f"raise {type(e).__name__}: {e}"
    return repr((sorted(map(repr, a.allowed)), sorted(map(repr, a.sc)), sorted(map(repr, a.outside_model)),
                 a.candidates, a.consistent, a.beyond_bound))


def stages_rows(profile: str, n: int, seeds: list[int]) -> list[dict[str, Any]]:
    """Campaign draws, each program timed as a campaign asks of it: the model, then the races."""
    sys.path.insert(0, str(ROOT / "bench"))
    from stages import draw as campaign_draw  # noqa: PLC0415 -- bench/stages.py, a script beside this one

    from fuzzgpu.model import events

    rows: list[dict[str, Any]] = []
    for at in seeds:
        for i, p in enumerate(campaign_draw(profile, n, at)):
            events._TRACES.clear()
            events._THREADS.clear()
            forget_races()
            (md, model_s), (rd, race_s) = timed(p, model_digest, race_digest)
            rows.append({"program": f"{profile}:{at}:{i}:{h(repr(p))}", "race": h(rd), "model": h(md),
                         "model_ms": 1000 * model_s, "race_ms": 1000 * race_s})
    return rows


#: the instructions of each mechanism :func:`concentration` splits the oracle's CPU by
MECHANISMS = {"mbarrier": ("MbarrierInit", "MbarrierArrive", "MbarrierExpectTx", "MbarrierCompleteTx", "MbarrierWait"),
              "bulk copy": ("CpAsyncBulk",), "cp.async": ("CpAsync",)}


def features(p: Program) -> dict[str, Any]:
    """A program's size and which of :data:`MECHANISMS` it uses (by instruction class name)."""
    names = {type(ins).__name__ for t in p.threads for ins in t.code}
    return {"instructions": sum(len(t.code) for t in p.threads),
            "uses": sorted(m for m, kinds in MECHANISMS.items() if names & set(kinds))}


def concentration(rows: list[dict[str, Any]], key: str = "new_ms") -> dict[str, Any]:
    """How the CPU ``key`` of the rows is spread: the share the dearest 1%, 5% and 10% of the programs take, and per
    mechanism the programs that use it, their share of the CPU and how many of the dearest 5% use it."""
    ms = sorted(rows, key=lambda r: -r[key])
    total = sum(r[key] for r in rows) or 1.0
    top = {f: sum(r[key] for r in ms[: max(1, int(len(ms) * f))]) / total for f in (0.01, 0.05, 0.1)}
    dear = ms[: max(1, int(len(ms) * 0.05))]
    by = {m: {"programs": sum(m in r["uses"] for r in rows), "cpu_share": round(sum(r[key] for r in rows if m in r["uses"]) / total, 3),
              "of_the_dearest_5pc": sum(m in r["uses"] for r in dear)} for m in MECHANISMS}
    median = sorted(r["instructions"] for r in rows)
    return {"top_share": {f"{int(100 * f)}%": round(v, 3) for f, v in top.items()}, "dearest_5pc": len(dear), "by_mechanism": by,
            "instructions_median": {"dearest 5%": sorted(r["instructions"] for r in dear)[len(dear) // 2], "all": median[len(median) // 2]}}


def questions_rows(profile: str, n: int, seeds: list[int]) -> list[dict[str, Any]]:
    """Campaign draws, each asked a race campaign's two questions the old way and the new, each from
    cold caches; the answers' digests must agree."""
    sys.path.insert(0, str(ROOT / "bench"))
    from stages import draw as campaign_draw  # noqa: PLC0415 -- bench/stages.py, a script beside this one

    from fuzzgpu.campaign.analyses import Analyses
    from fuzzgpu.model import Unsupported, events
    from fuzzgpu.model import race

    def cold() -> None:
        events._TRACES.clear()
        events._THREADS.clear()
        race.clear_cache()

    def sets(a: Any) -> str:
        return repr((sorted(map(repr, a.allowed)), sorted(map(repr, a.sc)), sorted(map(repr, a.outside_model)), a.beyond_bound))

    rows: list[dict[str, Any]] = []
    for at in seeds:
        for i, p in enumerate(campaign_draw(profile, n, at)):
            try:
                cold()
                t0 = time.process_time()
                old = (sets(analyse(p)), race_digest(p))
                old_s = time.process_time() - t0
                cold()
                t0 = time.process_time()
                a = Analyses(with_races=True).get(p)
                new = (sets(a) if not isinstance(a, str) else a, race_digest(p))
                new_s = time.process_time() - t0
            except Unsupported:
                continue
            rows.append({"program": f"{profile}:{at}:{i}:{h(repr(p))}", "same": old == new, "old": h(repr(old)),
                         "new": h(repr(new)), "old_ms": 1000 * old_s, "new_ms": 1000 * new_s, **features(p)})
    return rows


def values_rows(profile: str, n: int, seeds: list[int]) -> list[dict[str, Any]]:
    """Campaign draws, each asked its value domains as a campaign worker asks them
    (``codegen.values.harness_domains``: the program's and its plain-copy form's) from cold caches:
    a digest of the domains ("uncovered" where the oracle does not cover the program: ``()``), and
    the CPU ms."""
    sys.path.insert(0, str(ROOT / "bench"))
    from stages import draw as campaign_draw  # noqa: PLC0415 -- bench/stages.py, a script beside this one

    from fuzzgpu.codegen.values import harness_domains
    from fuzzgpu.model import events, values

    def digest(d: tuple[Any, ...]) -> str:
        return repr([(repr(q), [(k, sorted(v)) for k, v in keys], [(k, sorted(v)) for k, v in locs], cut)
                     for q, (keys, locs, cut) in d]) if d else "uncovered"

    rows: list[dict[str, Any]] = []
    for at in seeds:
        for i, p in enumerate(campaign_draw(profile, n, at)):
            events._TRACES.clear()
            events._THREADS.clear()
            values._DOMAINS.clear()
            t0 = time.process_time()
            d = harness_domains(p)
            ms = 1000 * (time.process_time() - t0)
            rows.append({"program": f"{profile}:{at}:{i}:{h(repr(p))}", "domains": h(digest(d)), "ms": ms,
                         "covered": bool(d)})
    return rows


def bars_rows(profile: str, n: int, seeds: list[int]) -> list[dict[str, Any]]:
    """Campaign draws, each asked the fix search's question of a candidate (its race analysis, the
    outcomes it can produce asked as delivered) over every path and with ``prune_bars``, each from cold
    caches; the answers must be equal."""
    sys.path.insert(0, str(ROOT / "bench"))
    from stages import draw as campaign_draw  # noqa: PLC0415 -- bench/stages.py, a script beside this one

    from fuzzgpu.model import Unsupported, events
    from fuzzgpu.model import race

    def answer(p: Program, prune: bool) -> tuple[str, float]:
        events._TRACES.clear()
        events._THREADS.clear()
        race.clear_cache()
        t0 = time.process_time()
        ra = race.analyse_races(p, prune_bars=prune)
        d = race.analyse_races(p, delivered=ra.possible, prune_bars=prune).delivered
        ms = 1000 * (time.process_time() - t0)
        return h(repr((ra.keys, sorted(map(repr, ra.possible)), sorted(map(repr, ra.clean)), sorted(map(repr, ra.racy.items())),
                       sorted(map(repr, ra.races)), ra.beyond_bound, sorted(map(repr, d))))), ms

    rows: list[dict[str, Any]] = []
    for at in seeds:
        for i, p in enumerate(campaign_draw(profile, n, at)):
            try:
                (full, full_ms), (pruned, pruned_ms) = answer(p, False), answer(p, True)
            except Unsupported:
                continue
            rows.append({"program": f"{profile}:{at}:{i}:{h(repr(p))}", "same": full == pruned, "full": full, "pruned": pruned,
                         "full_ms": full_ms, "pruned_ms": pruned_ms, **features(p)})
    return rows


def forget_races() -> None:
    """Empty the race analyses' cache (``model.race.clear_cache``; an ``lru_cache`` in trees before it)."""
    from fuzzgpu.model import race

    (getattr(race, "clear_cache", None) or analyse_races.cache_clear)()  # type: ignore[attr-defined]


def timed(p: Program, *digests: Callable[[Program], str]) -> list[tuple[str, float]]:
    """Each digest of ``p`` in turn, with the CPU seconds it took (the order matters: the first
    enumerates the program's paths, the later ones find them cached)."""
    out = []
    for digest in digests:
        t0 = time.process_time()
        d = digest(p)
        out.append((d, time.process_time() - t0))
    return out


def summary(rows: list[dict], key: str) -> tuple[float, float]:
    """Mean and p90 of the per-program CPU ms ``key``."""
    ms = sorted(float(r[key]) for r in rows)
    return sum(ms) / len(ms), ms[min(len(ms) - 1, int(0.9 * len(ms)))]


def compare_rows(a: dict[str, Any], b: dict[str, Any], md: Path | None, names: list[Path]) -> int:
    """``--compare`` of two ``--questions`` or ``--values`` runs: every program's digests equal, and
    the CPU ms per program (mean, p90) before and after."""
    keys = [k for k in ("program", "old", "new", "domains") if k in a["rows"][0]]
    ra, rb = a["rows"], b["rows"]
    diff = [i for i, (x, y) in enumerate(zip(ra, rb)) if [x[k] for k in keys] != [y.get(k) for k in keys]]
    same_n = len(ra) == len(rb)
    lines = [f"# oracle speed: {names[0].name} vs {names[1].name}", "",
             f"machine {b['machine']}, {b['date']}; command `{b['command']}`; {len(rb)} programs (profile {b['profile']}); "
             f"digests compared: {', '.join(keys[1:])}; programs differing: {len(diff) + abs(len(ra) - len(rb))} {diff[:10]}", "",
             "| CPU ms per program | before mean | before p90 | after mean | after p90 | mean x |", "|---|---:|---:|---:|---:|---:|"]
    for key in [k for k in ("old_ms", "new_ms", "ms") if k in ra[0]]:
        (ma, pa), (mb, pb) = summary(ra, key), summary(rb, key)
        lines.append(f"| {key} | {ma:.2f} | {pa:.2f} | {mb:.2f} | {pb:.2f} | {ma / max(mb, 1e-9):.2f} |")
    print("\n".join(lines))
    if md:
        md.write_text("\n".join(lines) + "\n")
    return 0 if same_n and not diff else 1


def h(s: str) -> str:
    return hashlib.sha256(s.encode()).hexdigest()[:16]


def run_doc(args: argparse.Namespace, **figures: Any) -> dict[str, Any]:
    """A results file's document: the command, date and machine (``compile_phases.header``), the profile, ``figures``."""
    return {**header("oracle_speed.py", None), "profile": args.profile, **figures}


def emit(out: Path | None, doc: dict[str, Any], md: list[str] | None = None) -> int:
    """The table printed (``md``); with ``out`` (``NAME.json``) the document written there and the table beside it
    (``NAME.md``, ``compile_phases.publish``): 0, or 3 where it cannot be written."""
    if md is not None and out is not None:
        return publish("oracle_speed.py", out.parent, out.stem, doc, md)
    if md is not None:
        print("\n".join(md))
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(doc, indent=1) + "\n")
    return 0


def bars_main(args: argparse.Namespace) -> int:
    """``--bars``: the rows, a table of all, with and without an mbarrier; exit 1 where an answer differs."""
    rows = bars_rows(args.profile, args.n, args.seeds or [args.seed])
    mb = [r for r in rows if "mbarrier" in r["uses"]]
    res = run_doc(args, programs=len(rows), same=sum(r["same"] for r in rows), mbarrier_programs=len(mb), rows=rows)
    md = [f"# The fix search's race analysis over every path and with `prune_bars` (`{res['command']}`)", "",
          f"{res['machine']}, {res['date']}: {len(rows)} campaign draws of profile `{args.profile}` the oracle covers, "
          f"each asked twice from cold caches; the same answers for {res['same']} of {len(rows)}.", "",
          "| programs | count | every path: CPU ms, mean | p90 | sum, s | `prune_bars`: CPU ms, mean | p90 | sum, s |",
          "|---|---|---|---|---|---|---|---|"]
    for name, part in (("all", rows), ("with an mbarrier", mb), ("without", [r for r in rows if "mbarrier" not in r["uses"]])):
        if part:
            (fm, f90), (pm, p90) = summary(part, "full_ms"), summary(part, "pruned_ms")
            res[name] = {"programs": len(part), "full_ms": {"mean": round(fm, 2), "p90": round(f90, 2)},
                         "pruned_ms": {"mean": round(pm, 2), "p90": round(p90, 2)},
                         "full_s": round(sum(r["full_ms"] for r in part) / 1000, 2), "pruned_s": round(sum(r["pruned_ms"] for r in part) / 1000, 2)}
            x = res[name]
            md.append(f"| {name} | {len(part)} | {fm:.2f} | {f90:.2f} | {x['full_s']} | {pm:.2f} | {p90:.2f} | {x['pruned_s']} |")
    return emit(args.out, res, md) or (0 if res["same"] == len(rows) else 1)


def values_main(args: argparse.Namespace) -> int:
    """``--values``: the rows and their mean and p90."""
    rows = values_rows(args.profile, args.n, args.seeds or [args.seed])
    mean, p90 = summary(rows, "ms")
    res = run_doc(args, programs=len(rows), covered=sum(r["covered"] for r in rows),
                  ms={"mean": round(mean, 2), "p90": round(p90, 2)}, rows=rows)
    return emit(args.out, res, [f"{len(rows)} programs ({res['covered']} covered): harness_domains CPU ms mean {mean:.2f}, p90 {p90:.2f}"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--profile", default="all")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("BASE", "NEW"))
    ap.add_argument("--stages", action="store_true", help="campaign draws (bench/stages.py), model first, per-program ms")
    ap.add_argument("--questions", action="store_true", help="campaign draws: a race campaign's two questions, the old way and now")
    ap.add_argument("--values", action="store_true", help="campaign draws: the value domains a worker computes, per-program ms")
    ap.add_argument("--bars", action="store_true", help="campaign draws: the fix search's race analysis over every path and "
                    "with prune_bars, per-program ms")
    ap.add_argument("--seeds", type=int, nargs="+", help="with --stages, --questions, --values, --bars: the seeds (default: --seed)")
    ap.add_argument("--md", type=Path, help="with --compare: write the comparison as a markdown table")
    args = ap.parse_args()
    if args.compare:
        a, b = (json.loads(f.read_text()) for f in args.compare)
        if "rows" in a:  # --questions or --values
            return compare_rows(a, b, args.md, args.compare)
        digest = ("program", "race", "model")  # not the times
        diff = [i for i, (x, y) in enumerate(zip(a["programs"], b["programs"])) if [x[k] for k in digest] != [y[k] for k in digest]]
        same_n = len(a["programs"]) == len(b["programs"])
        print(f"programs {len(a['programs'])} / {len(b['programs'])}; differing digests: {len(diff)} {diff[:10]}")
        for k in ("race_cpu_s", "model_cpu_s"):
            print(f"{k}: {a[k]:.2f} -> {b[k]:.2f} (x{a[k] / max(b[k], 1e-9):.2f})")
        tot_a, tot_b = a["race_cpu_s"] + a["model_cpu_s"], b["race_cpu_s"] + b["model_cpu_s"]
        print(f"total: {tot_a:.2f} -> {tot_b:.2f} (x{tot_a / max(tot_b, 1e-9):.2f})")
        if args.md and "model_ms" in a["programs"][0] and "model_ms" in b["programs"][0]:
            lines = [f"# oracle speed: {args.compare[0].name} vs {args.compare[1].name}", "",
                     f"machine {b['machine']}, {b['date']}; command `{b['command']}`; {len(b['programs'])} programs "
                     f"(profile {b['profile']}, seeds {b.get('seeds')}); digests differing: {len(diff)}", "",
                     "| CPU ms per program | before mean | before p90 | after mean | after p90 | mean x |",
                     "|---|---:|---:|---:|---:|---:|"]
            for key, name in (("model_ms", "model.analyse (paths enumerated)"), ("race_ms", "analyse_races (paths cached)")):
                (ma, pa), (mb, pb) = summary(a["programs"], key), summary(b["programs"], key)
                lines.append(f"| {name} | {ma:.1f} | {pa:.1f} | {mb:.1f} | {pb:.1f} | {ma / max(mb, 1e-9):.2f} |")
            args.md.write_text("\n".join(lines) + "\n")
            print("\n".join(lines))
        return 0 if same_n and not diff else 1
    if args.questions:
        rows = questions_rows(args.profile, args.n, args.seeds or [args.seed])
        (om, o90), (nm, n90) = summary(rows, "old_ms"), summary(rows, "new_ms")
        res = run_doc(args, programs=len(rows), same=sum(r["same"] for r in rows), old_ms={"mean": round(om, 2), "p90": round(o90, 2)},
                      new_ms={"mean": round(nm, 2), "p90": round(n90, 2)}, concentration=concentration(rows), rows=rows)
        con = res["concentration"]
        md = [f"# A race campaign's two questions of each program (`{res['command']}`)", "",
              f"{res['machine']}, {res['date']}: {len(rows)} campaign draws of profile `{args.profile}` the oracle covers, each "
              "from cold caches; the same answers for " f"{res['same']} of {len(rows)}.", "",
              "| questions | CPU ms per program, mean | p90 |", "|---|---|---|",
              f"| `model.analyse`, then `analyse_races` (until 2026-12-04) | {om:.2f} | {o90:.2f} |",
              f"| `Analyses(with_races=True).get` (one enumeration), then `analyse_races` (now) | {nm:.2f} | {n90:.2f} |", "",
              f"Where the CPU of the questions asked now goes: the dearest 1% of the programs take "
              f"{100 * con['top_share']['1%']:.0f}% of it, the dearest 5% ({con['dearest_5pc']}) "
              f"{100 * con['top_share']['5%']:.0f}%, the dearest 10% {100 * con['top_share']['10%']:.0f}%; their size "
              f"(instructions, median) {con['instructions_median']['dearest 5%']} against {con['instructions_median']['all']} "
              "for all.", "", "| programs that use | programs | their share of the CPU | of the dearest 5% |", "|---|---|---|---|",
              *[f"| {m} | {b['programs']} of {len(rows)} | {100 * b['cpu_share']:.0f}% | {b['of_the_dearest_5pc']} of "
                f"{con['dearest_5pc']} |" for m, b in con["by_mechanism"].items()]]
        return emit(args.out, res, md) or (0 if res["same"] == len(rows) else 1)
    if args.bars:
        return bars_main(args)
    if args.values:
        return values_main(args)
    if args.stages:
        seeds = args.seeds or [args.seed]
        rows = stages_rows(args.profile, args.n, seeds)
        res = run_doc(args, python=platform.python_version(), n=len(rows), seeds=seeds,
                      race_cpu_s=sum(float(r["race_ms"]) for r in rows) / 1000,
                      model_cpu_s=sum(float(r["model_ms"]) for r in rows) / 1000, programs=rows)
        return emit(args.out, res, [f"{len(rows)} programs: {key} mean {mean:.1f}, p90 {p90:.1f}"
                                    for key, (mean, p90) in ((k, summary(rows, k)) for k in ("model_ms", "race_ms"))])
    programs = draw(args.n, args.seed, args.profile)
    rows = []
    race_s = model_s = 0.0
    for p in programs:
        forget_races()
        (rd, r_s), (mdig, m_s) = timed(p, race_digest, model_digest)
        race_s += r_s
        model_s += m_s
        rows.append({"program": h(repr(p)), "race": h(rd), "model": h(mdig)})
    res = run_doc(args, n=len(programs), seed=args.seed, race_cpu_s=race_s, model_cpu_s=model_s, programs=rows)
    return emit(args.out, res, [f"{len(programs)} programs: analyse_races {race_s:.2f} CPU s, analyse {model_s:.2f} CPU s"])


if __name__ == "__main__":
    raise SystemExit(main())
