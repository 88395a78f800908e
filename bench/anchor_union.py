#!/usr/bin/env python3
"""What each tool showed over several runs of bench/anchor.py (issue 31): the union, variant by
variant, of the runs' anchor.json (and of bench/anchor_mechanisms.py's searches, when given), split
by the GPUs of the artifact's results table that showed the variant (``--src``: a copy of the
cuda-litmus artifact; its H100 and GH200 columns).

    python3 bench/anchor_union.py --runs bench/results/anchor/h200-full/run{A,B,C,D} \\
        bench/results/anchor/h200-full/rerun bench/results/anchor/h200-residue-2s/run{A,B} --src cuda-litmus

Prints a table (markdown) and writes it as JSON with ``--json FILE``.  Exit 0; 2 for a run folder
without anchor.json; 3 when the source cannot be read.
"""

from __future__ import annotations

import argparse
import csv
import json
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
            v = out.setdefault(r["variant"], {"seen": r["seen"] and not r["forbidden"], "fuzzgpu": 0, "anchor": 0})
            v["fuzzgpu"] += r["fuzzgpu"].get("condition", 0)
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
    rows = table(union(args.runs, args.mechanisms), by)
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |\n|" + "---|" * len(keys))
    for r in rows:
        print("| " + " | ".join(str(r[k]) for k in keys) + " |")
    if args.json:
        args.json.write_text(json.dumps({"runs": [str(d) for d in args.runs], "mechanisms": [str(d) for d in args.mechanisms],
                                         "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
