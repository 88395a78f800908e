#!/usr/bin/env python3
"""Benchmark: does the static SASS check read what runs?  (issue 29: "check exactly the SASS that
runs").  A campaign checks each program's *static kernels* (``codegen.generate_static``: one kernel
per litmus thread), while the GPU runs its *harness* (``codegen.generate_module``: every role of the
program in one kernel, with the stress and the classification around it).  Both are compiled by
nvcc -O3 for the same arch and read by the same SASS oracle (``fuzzgpu.sass.check_cu_source``);
this script compares, program by program, what the oracle finds in each.

For programs a campaign draws (a profile, several seeds; those the harness runs on ``--arch``), in
batches as a campaign compiles them: the findings of each program's static kernels
(``fuzzgpu_b<i>_<thread>``) and of its harness kernels (``fzh_<i>_...``), by (check, verdict, the
moved operation's and the crossed synchronisation's mnemonics).  A program agrees when both sets
are equal.  The harness's kernels hold more than the program: every role (each hardware thread
plays every role, for different instances), the stress calls, the classification and the
harness's own counters, so a finding there may name an operation of another role or of the
harness (docs/harness.md, "Cross-role moves"); the lists below show the operations named.

    python3 bench/sass_static_vs_harness.py [--profile all] [--seeds 1 2 3] [--per-seed 64] [--batch 16]

Writes ``bench/results/sass/static-vs-harness.json`` and ``.md`` (machine, date, command, table).
Needs nvcc and nvdisasm, no GPU.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

OUT = ROOT / "bench" / "results" / "sass"
_STATIC = re.compile(r"^fuzzgpu_b(\d+)_")
_HARNESS = re.compile(r"^fzh_(\d+)_")


def mnemonic(ptx: str) -> str:
    """The instruction of a PTX line, without operands (``ld.global.nc.u32 %r1, [%rd2];`` ->
    ``ld.global.nc.u32``); an empty line stays empty."""
    s = ptx.strip()
    if s.startswith("@"):
        s = s.split(None, 1)[1] if " " in s else ""
    return s.split(None, 1)[0].rstrip(";") if s else ""


def key(f: Any) -> tuple[str, str, str, str]:
    return (f.check, f.verdict, mnemonic(f.op_ptx), mnemonic(f.sync_ptx))


def findings_by_program(reports: list[Any], pattern: re.Pattern[str]) -> dict[int, Counter[tuple[str, str, str, str]]]:
    out: dict[int, Counter[tuple[str, str, str, str]]] = {}
    for r in reports:
        for f in r.findings:
            m = pattern.match(f.function.split("$")[-1]) or pattern.match(f.function)
            if m:
                out.setdefault(int(m.group(1)), Counter())[key(f)] += 1
    return out


def distinct_programs(profile: str, seeds: list[int], per_seed: int, keep: Any) -> list[Any]:
    """The distinct programs of ``per_seed`` draws of ``profile`` per seed for which ``keep(p)``."""
    from stages import draw

    from fuzzgpu.ir import program_to_json

    out: list[Any] = []
    seen: set[str] = set()
    for seed in seeds:
        for p in draw(profile, per_seed, seed):
            text = json.dumps(program_to_json(p), sort_keys=True)
            if text not in seen and keep(p):
                seen.add(text)
                out.append(p)
    return out


def draw_args(doc: str, argv: list[str] | None, out: Path = OUT) -> argparse.Namespace:
    """The options of a bench over the programs a campaign draws that the harness runs (this one's and
    bench/ran_sass.py's)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="all")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--per-seed", type=int, default=64, help="programs drawn per seed")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--out", type=Path, default=out)
    return ap.parse_args(argv)


def harness_programs(args: argparse.Namespace) -> list[Any]:
    """The distinct programs of :func:`draw_args`' draws that the harness runs on ``--arch``."""
    from fuzzgpu import codegen

    return distinct_programs(args.profile, args.seeds, args.per_seed, lambda p: not codegen.unrunnable_reasons(p)
                             and codegen.harness_arch([p], args.arch) == args.arch)


def main(argv: list[str] | None = None) -> int:
    args = draw_args(__doc__ or "", argv)

    from compile_phases import header, static_module, write_results

    from fuzzgpu import codegen, sass
    from fuzzgpu.errors import EnvError, UserError

    programs = harness_programs(args)
    rows: list[dict[str, Any]] = []
    errors: list[str] = []
    for b in range(0, len(programs), args.batch):
        chunk = programs[b : b + args.batch]
        try:
            st = findings_by_program(sass.check_cu_source(static_module(chunk), [args.arch], source="static"), _STATIC)
            hs = findings_by_program(sass.check_cu_source(codegen.generate_module(chunk)[0], [args.arch], source="harness"),
                                     _HARNESS)
        except EnvError as e:
            print(f"bench/sass_static_vs_harness.py: {e}", file=sys.stderr)
            return 3
        except UserError as e:  # a batch nvcc refuses: said, the others go on
            errors.append(f"batch {b // args.batch}: {str(e)[:200]}")
            continue
        for i, p in enumerate(chunk):
            s, h = st.get(i, Counter()), hs.get(i, Counter())
            rows.append({"program": b + i, "threads": len(p.threads), "static": sorted(s.elements()),
                         "harness": sorted(h.elements()), "agree": set(s) == set(h)})
    n = len(rows)
    agree = sum(r["agree"] for r in rows)

    def forbidden(ks: list[Any]) -> bool:
        return any(k[1] == "forbidden" for k in ks)

    def only(side: str, other: str) -> Counter[tuple[str, ...]]:
        c: Counter[tuple[str, ...]] = Counter()
        for r in rows:
            rest = set(map(tuple, r[other]))
            for k in r[side]:
                if tuple(k) not in rest:
                    c[tuple(k)] += 1
        return c

    counts = {"programs": n, "agree": agree,
              "static_findings": sum(bool(r["static"]) for r in rows), "harness_findings": sum(bool(r["harness"]) for r in rows),
              "static_forbidden": sum(forbidden(r["static"]) for r in rows),
              "harness_forbidden": sum(forbidden(r["harness"]) for r in rows),
              "forbidden_static_only": sum(forbidden(r["static"]) and not forbidden(r["harness"]) for r in rows),
              "forbidden_harness_only": sum(forbidden(r["harness"]) and not forbidden(r["static"]) for r in rows)}
    doc = {**header("sass_static_vs_harness.py", argv), "profile": args.profile, "seeds": args.seeds, "arch": args.arch, "counts": counts, "errors": errors,
           "static_only": [[list(k), v] for k, v in only("static", "harness").most_common()],
           "harness_only": [[list(k), v] for k, v in only("harness", "static").most_common()], "rows": rows}
    md = [f"# The static kernels' SASS beside the harness's (`{doc['command']}`)", "",
          f"{doc['machine']}, {doc['date']}; profile `{args.profile}`, seeds {args.seeds}: {n} distinct programs the harness "
          f"runs on {args.arch}; nvcc -O3, `fuzzgpu.sass`.  The verdicts are the oracle's on generated programs, which a "
          "campaign draws with bugs on purpose (an unguarded mbarrier wait is the program's own): this compares where the "
          "oracle finds them in two compiles of one program; it accuses neither the compiler nor the hardware.", "",
          "| programs | same findings | with a finding: static / harness | with a forbidden one: static / harness | forbidden in the static kernels only | forbidden in the harness only |",
          "|---|---|---|---|---|---|",
          f"| {n} | {agree} | {counts['static_findings']} / {counts['harness_findings']} | {counts['static_forbidden']} / "
          f"{counts['harness_forbidden']} | {counts['forbidden_static_only']} | {counts['forbidden_harness_only']} |", ""]
    for side in ("static_only", "harness_only"):
        md += [f"Findings ({side.replace('_', ' ')}): check, verdict, moved operation, crossed synchronisation -- programs", ""]
        md += [f"- {' / '.join(k) or '-'}: {v}" for k, v in doc[side][:20]] or ["- none"]
        md.append("")
    if errors:
        md += ["Batches not compiled: " + "; ".join(errors), ""]
    write_results(args.out, "static-vs-harness", doc, md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
