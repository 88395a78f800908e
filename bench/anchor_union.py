#!/usr/bin/env python3
"""What each tool showed over several runs of bench/anchor.py (issue 31): the union, variant by
variant, of the runs' anchor.json (and of bench/anchor_mechanisms.py's searches, when given), split
by the GPUs of the artifact's results table that showed the variant (``--src``: a copy of the
cuda-litmus artifact; its H100 and GH200 columns).

    python3 bench/anchor_union.py --runs bench/results/anchor/h200-full/run{A,B,C,D} \\
        bench/results/anchor/h200-full/rerun bench/results/anchor/h200-residue-2s/run{A,B} --src cuda-litmus

With ``--src``, a second table: the effort behind each group -- the instances fuzzgpu ran on a variant
over the runs, and what the artifact's GH200 spent on it (its log, ``pldi26-output/gh200.txt``: four
random configurations of ``tune.sh``'s space a variant; the H100's log is not in the artifact's
repository, and its README gives 95 iterations for the H100).

Prints the tables (markdown) and writes them as JSON with ``--json FILE``.  Exit 0; 2 for a run folder
without anchor.json; 3 when the source cannot be read.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import statistics
import sys
from pathlib import Path
from typing import Any


def union(runs: list[Path], mechanisms: list[Path] | None = None) -> dict[str, dict[str, Any]]:
    """Per variant: whether it is a seen (not base-forbidden) variant, and the condition instances
    each tool showed over every run (fuzzgpu's searches and fixed configurations of the mechanism
    calls counted for fuzzgpu, the runner's exposing runs there for the runner)."""
    out: dict[str, dict[str, Any]] = {}
    for d in runs:
        for r in json.loads((d / "anchor.json").read_text())["rows"]:
            v = out.setdefault(r["variant"], {"seen": r["seen"] and not r["forbidden"], "fuzzgpu": 0, "anchor": 0,
                                              "fuzzgpu_instances": 0})
            v["fuzzgpu"] += r["fuzzgpu"].get("condition", 0)
            v["fuzzgpu_instances"] += r["fuzzgpu"].get("instances", 0)
            v["anchor"] += r["anchor"].get("condition", 0)
    for d in mechanisms or []:
        for name, r in json.loads((d / "mechanisms.json").read_text())["variants"].items():
            if name in out and "fuzzgpu" in r:
                fz = r["fuzzgpu"]
                out[name]["fuzzgpu"] += fz.get("tune", {}).get("condition", 0) + sum(
                    x.get("condition") or 0 for x in fz.get("fixed", {}).values())
                out[name]["anchor"] += r.get("anchor", {}).get("exposing_run", {}).get("weak", 0)
    return out


def groups(src: Path | None) -> dict[str, str]:
    """Variant -> which of the artifact's Hopper GPUs showed it (``H100 and GH200``, ``H100 only``,
    ``GH200 only``, ``neither``); empty without ``src``."""
    if src is None:
        return {}
    out = {}
    with open(src / "pldi26-output" / "results.csv", newline="") as f:
        for row in csv.DictReader(f):
            h, g = row["h100"] == "seen", row["gh200"] == "seen"
            out[row["test"]] = "H100 and GH200" if h and g else "H100 only" if h else "GH200 only" if g else "neither"
    return out


#: the artifact's family names in its logs (``3.2w-TB_012-SCOPE_DEVICE-...``) -> its results table's
#: (``three_2w_TB_012_SCOPE_DEVICE_...``); the other families' names differ only by ``-`` for ``_``
LOG_FAMILIES = {"3.2w": "three_2w", "wrw+2w": "wrw_2w", "z6-3": "z6_3", "2+2w": "two_2w",
                "paper-example1": "paper_example1", "paper-example2": "paper_example2"}
_LOG_LINE = re.compile(r"\s+Test (\S+) weak: (\d+), total: (\d+)")


def log_name(name: str) -> str:
    """A variant's name in the artifact's logs as its results table spells it."""
    for log, table_name in LOG_FAMILIES.items():
        if name.startswith(log + "-"):
            name = table_name + name[len(log):]
            break
    return name.replace("-", "_")


def gh200_effort(src: Path) -> dict[str, dict[str, int]]:
    """What the artifact's GH200 run spent on each variant (``pldi26-output/gh200.txt``: one line per
    variant and tuning iteration, each iteration one random configuration of ``tune.sh``'s space):
    configurations, instances and weak instances, summed.  The H100's log is not in the artifact's
    repository; its README says the H100 ran 95 iterations, the GH200 4."""
    out: dict[str, dict[str, int]] = {}
    for line in (src / "pldi26-output" / "gh200.txt").read_text(errors="replace").splitlines():
        m = _LOG_LINE.match(line)
        if m:
            e = out.setdefault(log_name(m[1]), {"configurations": 0, "instances": 0, "weak": 0})
            e["configurations"] += 1
            e["instances"] += int(m[3])
            e["weak"] += int(m[2])
    return out


#: the H100's tuning iterations, as the artifact's pldi26-output/README.md gives them (its log is not in the repository)
H100_ITERATIONS = 95


def gh200_log_summary(gh: dict[str, dict[str, int]]) -> dict[str, Any]:
    """The GH200 log's instances a configuration, over every variant it logs, and what the H100's
    :data:`H100_ITERATIONS` would come to at that mean (an estimate: the H100's own log is missing)."""
    per = sum(e["instances"] for e in gh.values()) / max(1, sum(e["configurations"] for e in gh.values()))
    return {"variants": len(gh), "instances_per_configuration": round(per), "h100_iterations": H100_ITERATIONS,
            "h100_instances_per_variant_estimate": round(per * H100_ITERATIONS)}


def _median(xs: list[int]) -> float:
    return float(statistics.median(xs)) if xs else 0.0


def effort_table(u: dict[str, dict[str, Any]], by: dict[str, str], gh: dict[str, dict[str, int]]) -> list[dict[str, Any]]:
    """Per group of the artifact's GPUs and per fuzzgpu's result (shown or not over every run): the
    instances fuzzgpu ran on a variant over every bench/anchor.py run (median; the mechanism calls'
    not counted), and what the GH200 spent on it in
    the artifact (median over the variants its log names)."""
    rows = []
    for label in sorted({by[v] for v in u if u[v]["seen"] and v in by}):
        vs = [v for v in u if u[v]["seen"] and by.get(v) == label]
        for shown in (True, False):
            sel = [v for v in vs if (u[v]["fuzzgpu"] > 0) == shown]
            if not sel:
                continue
            logged = [gh[v] for v in sel if v in gh]
            rows.append({"shown by (the artifact)": label, "fuzzgpu showed it": "yes" if shown else "no", "variants": len(sel),
                         "fuzzgpu instances / variant (median, the anchor.py runs)": f"{_median([u[v]['fuzzgpu_instances'] for v in sel]):.3g}",
                         "in the GH200's log": len(logged),
                         "GH200 configurations (median)": _median([e["configurations"] for e in logged]),
                         "GH200 instances / variant (median)": f"{_median([e['instances'] for e in logged]):.3g}",
                         "GH200 weak instances (sum)": sum(e["weak"] for e in logged)})
    return rows


def table(u: dict[str, dict[str, Any]], by: dict[str, str]) -> list[dict[str, Any]]:
    rows = []
    names = sorted({by[v] for v in u if u[v]["seen"] and v in by})
    for label in [*names, "all"]:
        vs = [x for v, x in u.items() if x["seen"] and (label == "all" or by.get(v) == label)]
        fz = sum(x["fuzzgpu"] > 0 for x in vs)
        an = sum(x["anchor"] > 0 for x in vs)
        rows.append({"shown by (the artifact)": label, "variants": len(vs), "fuzzgpu": fz,
                     "fuzzgpu share": round(fz / len(vs), 3) if vs else 0.0, "runner": an,
                     "either": sum(x["fuzzgpu"] > 0 or x["anchor"] > 0 for x in vs),
                     "runner only": sum(x["anchor"] > 0 and x["fuzzgpu"] == 0 for x in vs)})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", nargs="+", type=Path, required=True, help="bench/anchor.py output folders")
    ap.add_argument("--mechanisms", nargs="*", type=Path, default=[], help="bench/anchor_mechanisms.py output folders")
    ap.add_argument("--src", type=Path, help="a copy of the cuda-litmus artifact: split by its GPUs")
    ap.add_argument("--json", type=Path, help="write the table here too")
    args = ap.parse_args(argv)
    for d in args.runs:
        if not (d / "anchor.json").is_file():
            print(f"bench/anchor_union.py: {d}: no anchor.json (expected a bench/anchor.py output folder)", file=sys.stderr)
            return 2
    try:
        by = groups(args.src)
    except (OSError, KeyError) as e:
        print(f"bench/anchor_union.py: {args.src}: {e}", file=sys.stderr)
        return 3
    u = union(args.runs, args.mechanisms)
    rows = table(u, by)
    effort: list[dict[str, Any]] = []
    log: dict[str, Any] = {}
    if args.src is not None:
        try:
            gh = gh200_effort(args.src)
            effort = effort_table(u, by, gh)
            log = gh200_log_summary(gh)
        except OSError as e:
            print(f"bench/anchor_union.py: {args.src}: {e}", file=sys.stderr)
            return 3
    for t in (rows, effort):
        if t:
            keys = list(t[0])
            print("| " + " | ".join(keys) + " |\n|" + "---|" * len(keys))
            for r in t:
                print("| " + " | ".join(str(r[k]) for k in keys) + " |")
            print()
    if args.json:
        args.json.write_text(json.dumps({"runs": [str(d) for d in args.runs], "mechanisms": [str(d) for d in args.mechanisms],
                                         "rows": rows, **({"effort": effort, "gh200_log": log} if effort else {})}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
