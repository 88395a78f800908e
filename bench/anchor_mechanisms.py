#!/usr/bin/env python3
"""Which of the anchor runner's parameters expose the variants only it showed (issue 31).

bench/anchor.py's full run left variants that cuda-litmus's runner showed and fuzzgpu never did;
each was shown by the runner's *random* configuration of its ``tune.sh`` space (seeded per variant:
``random.Random(f"{seed}:{name}")``, the same draw as anchor.py's), never by its stored
``params/stress_params.txt``.  For each such variant this script, on one GPU:

1. **the anchor, one parameter at a time**: the runner under the exposing configuration, then
   with each parameter set back to the stored file's value (the parameter's effect), then under a
   sweep of workgroup sizes (cuda-litmus draws any size up to 256; fuzzgpu's ``cta_threads`` are
   powers of two, 32-256);
2. **fuzzgpu**: the variant under fixed configurations (``--configs``: ``all``, its default stress
   and the exposing configuration mirrored in fuzzgpu's knobs (:func:`mirror`) with variations;
   ``short``; ``cta``, the default and the mirror at each CTA size; ``none``), then ``fuzzgpu run
   --tune``'s search for ``--tune-s`` GPU-s (0: none).  Every run counts the condition's instances
   and the outcomes the model forbids or the program never wrote.

Exposed = the variant's condition held in some instance (the runner's weak counter).  Writes
``mechanisms.json`` and ``mechanisms.md`` (machine, date, command, tables) to ``--out``.

  python3 bench/anchor_mechanisms.py --src cuda-litmus --out $OUT/mech --names cuda-litmus/mech.txt

The artifact has no licence: its files are read from --src at run time, nothing of it is committed.
Exit 0; 3 without a GPU or when the source cannot be read.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import random
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import anchor as A  # noqa: E402

#: workgroup sizes tried beside the exposing one (cuda-litmus: any even size up to 256)
WG_SIZES = (32, 64, 128, 192, 256)


#: cuda-litmus's do_stress patterns -> fuzzgpu's (fuzzgpu.stress.space.PATTERNS): its 0 is two
#: stores, 1 store;load, 2 load;store, 3 two loads
PATTERN = {0: 1, 1: 0, 2: 2, 3: 3}


def nearer_power_of_two(x: float) -> int:
    """The power of two nearer to ``x`` (>= 1): below ``1.5 * 2^k`` it is ``2^k``, else ``2^(k+1)``."""
    lo = 1 << max(0, int(x).bit_length() - 1)
    return 2 * lo if x > 1.5 * lo else lo


def mirror(params: dict[str, int]) -> dict[str, Any]:
    """The nearest fuzzgpu StressConfig knobs to one configuration of the runner: its workgroup
    size as CTAs of the nearer power of two of 32-256 threads (``cta_threads``), as many test
    threads in them (a power of two of CTAs); its stress CTAs (maxWorkgroups -
    testingWorkgroups, scaled by memStressPct) -- which hammer only when preStressIterations is a
    pattern code (0-3): its MEM_STRESS passes pre_stress_iterations as do_stress's pattern, and
    do_stress does nothing for another value --; the pre-stress (scaled by preStressPct) with its
    pattern, every CTA's accesses on one scratch word (``stress_word``, as its do_stress), memStride,
    its placement (neighbouring CTAs, same thread index), the shuffle and barrier when its
    percentages are over half, no per-warp spin."""
    ct = min(max(nearer_power_of_two(params["workgroupSize"]), 32), 256)
    ctas = nearer_power_of_two(params["testingWorkgroups"] * params["workgroupSize"] / ct)  # its test threads
    stress_ctas = (params["maxWorkgroups"] - params["testingWorkgroups"]) * params["workgroupSize"] // ct
    stress_ctas = stress_ctas * params["memStressPct"] // 100 if params["preStressIterations"] <= 3 else 0
    lines = 1 << max(0, params["stressTargetLines"].bit_length() - 1)
    return {"test_ctas": min(max(ctas, 2), 16384), "cta_threads": ct, "stress": min(stress_ctas, 1 << 14),
            "stress_pattern": PATTERN[min(params["preStressIterations"], 3)], "stress_lines": lines,
            "stress_by_cta": bool(params["stressAssignmentStrategy"] == 0), "stress_word": True,
            "pre_stress": params["preStressIterations"] * params["preStressPct"] // 100,
            "pre_stress_pattern": PATTERN[params["preStressPattern"]], "stride": max(1, params["memStride"]),
            "stripe_ctas": True, "permute_threads": False, "permute_ctas": params["shufflePct"] > 50,
            "barrier": params["barrierPct"] > 50, "spin": 0}


def anchor_study(v: A.Variant, src: Path, bindir: Path, seed: int, seconds: float, log: Any) -> dict[str, Any]:
    exe, err = A.build_runner(v, src, bindir)
    if exe is None:
        return {"build_error": err}
    tp = A.test_params_file(src, v)
    tmp = bindir / "params"
    tmp.mkdir(parents=True, exist_ok=True)
    stored = A.stored_params(src)
    exposing = A.random_params(random.Random(f"{seed}:{v.name}"))

    def run(params: dict[str, int], secs: float) -> dict[str, Any]:
        p = dict(params)
        p["scratchMemorySize"] = 32 * p["stressLineSize"] * p["stressTargetLines"]
        p["testIterations"] = A.iterations_for(p, secs)
        r = A.run_runner(exe, p, tp, tmp)
        return {"weak": r["weak"], "instances": r["instances"], "seconds": r["seconds"], "valid": r["valid"]}

    out: dict[str, Any] = {"exposing": exposing, "stored": stored}
    out["exposing_run"] = run(exposing, 2 * seconds)
    out["stored_run"] = run(stored, seconds)
    swaps = {}
    for k in A.PARAM_KEYS:
        if k in ("testIterations", "scratchMemorySize", "permuteThread") or stored[k] == exposing[k]:
            continue
        swaps[k] = {"value": stored[k], **run({**exposing, k: stored[k]}, seconds)}
    out["one_back_to_stored"] = swaps
    out["workgroup_sizes"] = {str(wg): run({**exposing, "workgroupSize": wg}, seconds)
                              for wg in WG_SIZES if wg != exposing["workgroupSize"]}
    log(f"anchor {v.name}: exposing {out['exposing_run']['weak']} stored {out['stored_run']['weak']}; back to stored: "
        + ", ".join(f"{k} {x['weak']}" for k, x in swaps.items()) + "; wg: "
        + ", ".join(f"{k} {x['weak']}" for k, x in out["workgroup_sizes"].items()))
    return out


def fz_study(b: Any, v: A.Variant, p: Any, comp: Any, exposing: dict[str, int], instances: int, tune_s: float,
             seed: int, log: Any, configs: str = "all") -> dict[str, Any]:
    from fuzzgpu import model
    from fuzzgpu.properties import unwritten_keys
    from fuzzgpu.stress.space import StressConfig
    from fuzzgpu.stress.tune import condition_target, tune_on_gpu

    w = A.witness(p)
    a = model.analyse(p)

    def cond(counts: Any) -> int:
        return sum(n for o, n in counts if all(x is not None for _, x in o) and w(o))

    def forbidden(counts: Any) -> int:
        """Instances of outcomes the model forbids, or of values the program did not write (as anchor.py counts)."""
        return sum(n for o, n in counts if any(x is None for _, x in o) or o not in a.possible
                   or unwritten_keys(p, dict(o)))

    runner_pre = StressConfig(pre_stress=64, pre_stress_pattern=1, stress_word=True)
    short = {"default": StressConfig(),
             "default with the runner's pre-stress (64 store;store on one word)": runner_pre,
             "same, each lane its own word (no stress_word)": dataclasses.replace(runner_pre, stress_word=False)}
    mirrored = StressConfig(**mirror(exposing))

    if configs == "none":  # the search alone
        cfgs = {}
    elif configs == "cta":  # the CTA size alone, on the default and on the mirror (as many test threads)
        cfgs = {f"{what}, cta_threads {ct}": base.with_cta_threads(ct)
                for what, base in (("default", StressConfig()), ("mirror", mirrored)) for ct in (256, 128, 64, 32)}
    else:
        cfgs = short if configs == "short" else {"default": StressConfig(), "mirror of the exposing configuration": mirrored,
            "mirror, each lane its own word (no stress_word)": dataclasses.replace(mirrored, stress_word=False),
            "mirror, permute_threads": dataclasses.replace(mirrored, permute_threads=True),
            "mirror, random distance": dataclasses.replace(mirrored, stripe_ctas=False),
            "default with the runner's pre-stress (64 store;store on one word)":
                StressConfig(pre_stress=64, pre_stress_pattern=1, stress_word=True),
            "same, the runner's placement": StressConfig(pre_stress=64, pre_stress_pattern=1, stress_word=True,
                                                         stripe_ctas=True, permute_threads=False, spin=0)}
    out: dict[str, Any] = {"configs": {k: c.describe() for k, c in cfgs.items()}, "fixed": {}}
    from fuzzgpu.codegen import Unrunnable

    for k, c in cfgs.items():
        try:
            h = b.run_compiled(comp, StressConfig.run_config(c, instances=instances, seed=seed))
        except Unrunnable as e:  # a CTA too small for the roles one CTA holds
            out["fixed"][k] = {"condition": None, "not_run": "; ".join(e.reasons), "instances": 0, "seconds": 0.0}
            continue
        out["fixed"][k] = {"condition": cond(h.counts), "instances": h.instances, "seconds": round(h.seconds, 4),
                           "forbidden": forbidden(h.counts)}
    if tune_s <= 0:
        log(f"fuzzgpu {v.name}: " + ", ".join(f"{k} {x['condition']}" for k, x in out["fixed"].items()))
        return out
    t = tune_on_gpu(b, p, tune_s, seed=seed, targets=condition_target(p, a.sc, a.possible), compiled=comp, sc=a.sc,
                    spend=True)
    out["tune"] = {"condition": cond(t.outcomes.items()), "forbidden": forbidden(t.outcomes.items()),
                   "instances": t.instances, "gpu_s": round(t.result.spent_s, 3),
                   "best": t.result.best.config.describe()}
    log(f"fuzzgpu {v.name}: " + ", ".join(f"{k} {x['condition']}" for k, x in out["fixed"].items())
        + f"; tune {tune_s} s: {out['tune']['condition']} in {t.instances:.3g}")
    return out


#: the runner's parameters a one-at-a-time row may set back to the stored value, in table order
SWAPPED = ("testingWorkgroups", "maxWorkgroups", "workgroupSize", "shufflePct", "barrierPct", "stressLineSize",
           "stressTargetLines", "memStride", "memStressPct", "memStressIterations", "memStressPattern", "preStressPct",
           "preStressIterations", "preStressPattern", "stressAssignmentStrategy")


def compact_table(doc: dict[str, Any]) -> list[str]:
    """The runner's one-at-a-time figures of every variant in one table, a column per variant (v1,
    v2, ... in the order run): condition instances; ``n/a`` where the runner ran nothing (the stored
    testingWorkgroups over the configuration's maxWorkgroups), ``=`` where the stored value is the
    exposing one."""
    names = [n for n, r in doc["variants"].items() if "exposing_run" in r.get("anchor", {})]
    an = [doc["variants"][n]["anchor"] for n in names]
    lines = ["| runner under | " + " | ".join(f"v{i + 1}" for i in range(len(names))) + " |",
             "|---|" + "---|" * len(names),
             "| its exposing configuration (1 s) | " + " | ".join(str(a["exposing_run"]["weak"]) for a in an) + " |",
             "| its stored params | " + " | ".join(str(a["stored_run"]["weak"]) for a in an) + " |"]
    for k in SWAPPED:
        cells = []
        for a in an:
            x = a["one_back_to_stored"].get(k)
            cells.append("=" if x is None else str(x["weak"]) if x["valid"] else "n/a")
        lines.append(f"| exposing, `{k}` as stored | " + " | ".join(cells) + " |")
    for wg in WG_SIZES:
        lines.append(f"| exposing, workgroupSize {wg} | "
                     + " | ".join(str(a["workgroup_sizes"].get(str(wg), {}).get("weak", "=")) for a in an) + " |")
    return lines + [""] + [f"v{i + 1} `{n}`" for i, n in enumerate(names)]


def table(doc: dict[str, Any]) -> str:
    lines = [f"# The anchor runner's parameters on the variants only it showed ({doc['device']})", "",
             f"{doc['date']}, `{doc['command']}`", ""]
    for name, r in doc["variants"].items():
        an, fz = r.get("anchor", {}), r.get("fuzzgpu", {})
        if "error" in r:  # a name of the --names file that is no variant: said as the file has it, quoted
            lines += [f"Not run: {ascii(name)[:120]}: {r['error']}", ""]
            continue
        lines += [f"## {name}", ""]
        if "build_error" in an:
            lines += [f"runner build failed: {an['build_error'][:200]}", ""]
            continue
        ex = an["exposing"]
        lines += ["The runner's exposing configuration: " + ", ".join(f"{k}={ex[k]}" for k in A.PARAM_KEYS), ""]
        if an.get("not_run"):
            lines += ["(the runner was not run in this call: `--anchor no`)"]
        else:
            lines += ["| runner under | condition | instances |", "|---|---|---|",
                      f"| the exposing configuration | {an['exposing_run']['weak']} | {an['exposing_run']['instances']:.3g} |",
                      f"| its stored params | {an['stored_run']['weak']} | {an['stored_run']['instances']:.3g} |"]
            # a run the runner refused (testingWorkgroups over maxWorkgroups: no instances) says so
            lines += [f"| exposing, {k} = {x['value']} (stored) | {x['weak'] if x['valid'] else 'not run (invalid)'} | "
                      f"{x['instances']:.3g} |" for k, x in an["one_back_to_stored"].items()]
            lines += [f"| exposing, workgroupSize = {k} | {x['weak']} | {x['instances']:.3g} |"
                      for k, x in an["workgroup_sizes"].items()]
        if fz:
            lines += ["", "| fuzzgpu under | condition | instances | GPU-s |", "|---|---|---|---|"]
            lines += [f"| {k}: {fz['configs'][k]} | {'not run: ' + x['not_run'] if 'not_run' in x else x['condition']} | "
                      f"{x['instances']:.3g} | {x['seconds']} |"
                      for k, x in fz["fixed"].items()]
            t = fz.get("tune")
            lines += [] if t is None else [f"| `run --tune` search (best: {t['best']}) | {t['condition']} | {t['instances']:.3g} | {t['gpu_s']} |"]
        lines.append("")
    if any("exposing_run" in r.get("anchor", {}) for r in doc["variants"].values()):
        lines += ["## The runner, every variant", ""] + compact_table(doc) + [""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", required=True, type=Path, help="a copy of the cuda-litmus artifact's files")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--names", required=True, type=Path, help="a file of variant names, one a line")
    ap.add_argument("--seed", type=int, default=31, help="anchor.py's seed of the runs that showed them (default 31)")
    ap.add_argument("--seconds", type=float, default=0.5, help="runner seconds per configuration (default 0.5)")
    ap.add_argument("--instances", type=int, default=1 << 29, help="fuzzgpu instances per fixed configuration")
    ap.add_argument("--tune-s", type=float, default=2.0, help="GPU-s of fuzzgpu's search per variant (default 2)")
    ap.add_argument("--configs", choices=("all", "short", "cta", "none"), default="all",
                    help="fuzzgpu's fixed configurations: all, short (the default, the runner's pre-stress on one word, "
                    "the same without stress_word), cta (the default and the mirror at each CTA size), none (the search alone)")
    ap.add_argument("--anchor", choices=("yes", "no"), default="yes", help="no: fuzzgpu's part alone (the runner's "
                    "exposing configuration is still drawn, for the mirror)")
    args = ap.parse_args(argv)
    log = A.logger(args.out)
    try:
        names = args.names.read_text().split()
        vs = {v.name: v for v in A.read_variants(args.src) if v.name in names}
    except OSError as e:
        print(f"bench/anchor_mechanisms.py: {e}", file=sys.stderr)
        return 3
    progs, _ = A.oracle_check(list(vs.values()), args.src)
    from fuzzgpu.backends import cuda

    comp = dict(zip(progs, cuda.compile_programs(list(progs.values()), "sm_90", batch=8)))
    bindir = Path("/tmp/anchor-bin")
    bindir.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {"command": " ".join(sys.argv), "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                           "host": platform.node(), "variants": {}}
    from fuzzgpu.errors import EnvError

    try:
        b = cuda.CudaBackend()
    except EnvError as e:
        print(f"bench/anchor_mechanisms.py: {e}", file=sys.stderr)
        return 3
    try:
        doc["device"] = b.describe()
        for name in names:
            if name not in vs or name not in progs:
                doc["variants"][name] = {"error": "not a convertible variant of results.csv"}
                continue
            v = vs[name]
            an: dict[str, Any] = anchor_study(v, args.src, bindir, args.seed, args.seconds, log) if args.anchor == "yes" \
                else {"exposing": A.random_params(random.Random(f"{args.seed}:{name}")), "not_run": True}
            fz = fz_study(b, v, progs[name], comp[name], an["exposing"], args.instances, args.tune_s, args.seed, log,
                          args.configs) \
                if "exposing" in an else {}
            doc["variants"][name] = {"anchor": an, "fuzzgpu": fz}
            (args.out / "mechanisms.json").write_text(json.dumps(doc, indent=1) + "\n")
    finally:
        b.close()
    (args.out / "mechanisms.json").write_text(json.dumps(doc, indent=1) + "\n")
    (args.out / "mechanisms.md").write_text(table(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
