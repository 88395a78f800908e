#!/usr/bin/env python3
"""Benchmark: the SASS that ran (issue 29: "check exactly the SASS that runs").

A campaign's static check reads each program's *static kernels*; the GPU runs the program's
*harness*, compiled in a batch of programs.  When a run shows an outcome the oracle forbids, the
backend now checks the cubin that ran against the PTX it was assembled from
(:mod:`fuzzgpu.backends.ran_sass`).  For programs a campaign draws (a profile, several seeds; those
the harness runs on ``--arch``), compiled in batches as a campaign compiles them, this script
measures:

* **single vs batch**: whether each kernel of a batch's cubin has the SASS the same program's
  harness compiled alone has (kernel names, labels and mangled-name lengths made equal) -- if not,
  a check of a single compile is not a check of what ran;
* **attribution**: per program, the findings of the check of what ran, by :func:`~fuzzgpu.backends.ran_sass.attribute`
  (the program's roles, between two roles, the harness's own code, not placed), and whether the
  program's kernels were fully checked;
* **static vs what ran**: the program's findings there against those of its static kernels (the
  check every program gets), compared by (check, verdict, the moved operation's and the crossed
  point's mnemonics);
* the CPU of one check of what ran (nvdisasm of the batch cubin and the analysis), per batch.

    python3 bench/ran_sass.py [--profile all] [--seeds 1 2 3] [--per-seed 64] [--batch 16]

Writes ``bench/results/sass/ran-sass.json`` and ``.md`` (machine, date, command, table).  Needs nvcc
and nvdisasm, no GPU.
"""

from __future__ import annotations

import re
import resource
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

OUT = ROOT / "bench" / "results" / "sass"


def cpu() -> float:
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def kernel_sass(cubin: bytes) -> dict[str, list[str]]:
    """Each function's SASS instructions (nvdisasm), by its section name."""
    from fuzzgpu import sass

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.cubin"
        path.write_bytes(cubin)
        text = sass.disassemble(path)
    out: dict[str, list[str]] = {}
    cur = None
    for line in text.splitlines():
        m = re.match(r"\s*\.text\.(\S+):", line)
        if m:
            cur = m.group(1)
            out[cur] = []
            continue
        m = re.search(r"/\*[0-9a-f]{4}\*/\s+(.*?);", line)
        if m and cur:
            out[cur].append(m.group(1))
    return out


def canonical(lines: list[str]) -> list[str]:
    """Kernel names, mangled-name lengths and label numbers made equal (a batch names its kernels
    ``fzh_<i>_``; labels are numbered over the module)."""
    seen: dict[str, str] = {}

    def label(m: re.Match[str]) -> str:
        return seen.setdefault(m.group(0), f"L{len(seen)}")

    return [re.sub(r"\.L_x_\d+", label, re.sub(r"_Z(N?)\d+(fzc_|ns_)", r"_Z\1\2", re.sub(r"fzh_\d+_", "fzh_X_", x)))
            for x in lines]


def main(argv: list[str] | None = None) -> int:
    from compile_phases import header, write_results
    from sass_static_vs_harness import draw_args, harness_programs, mnemonic

    args = draw_args(__doc__ or "", argv, OUT)

    from fuzzgpu.backends.cuda import compile_programs
    from fuzzgpu.backends.ran_sass import check_module, program_check
    from fuzzgpu.backends.static import check_batch
    from fuzzgpu.errors import EnvError, UserError

    programs = harness_programs(args)
    rows: list[dict[str, Any]] = []
    errors: list[str] = []
    check_cpu: list[float] = []
    kernels = Counter()  # single vs batch
    for b in range(0, len(programs), args.batch):
        chunk = programs[b : b + args.batch]
        try:
            batch = compile_programs(chunk, args.arch, batch=len(chunk), jobs=1, use_cache=False)
            t0 = cpu()
            module = check_module(batch[0].cubin, batch[0].ptx)
            ran = [program_check(module, c, p) for c, p in zip(batch, chunk)]
            check_cpu.append(cpu() - t0)
            static = check_batch(chunk, args.arch)
            in_batch = kernel_sass(batch[0].cubin)
            for i, p in enumerate(chunk):
                alone = kernel_sass(compile_programs([p], args.arch, batch=1, jobs=1, use_cache=False)[0].cubin)
                for name, code in alone.items():
                    if not name.startswith("fzh_"):
                        continue
                    kernels["same" if canonical(code) == canonical(in_batch.get(name.replace("fzh_0_", f"fzh_{i}_", 1), []))
                            else "different"] += 1
        except EnvError as e:
            print(f"bench/ran_sass.py: {e}", file=sys.stderr)
            return 3
        except UserError as e:  # a batch nvcc refuses: said, the others go on
            errors.append(f"batch {b // args.batch}: {str(e)[:200]}")
            continue
        for i, (p, r) in enumerate(zip(chunk, ran)):
            st = static[i]
            st_keys = None if st is None else sorted({(f["check"], f["verdict"], mnemonic(f["op_ptx"]), mnemonic(f["sync_ptx"]))
                                                      for f in st["sass_findings"]})
            ran_keys = sorted({(f["check"], f["verdict"], mnemonic(f["op_ptx"]), mnemonic(f["sync_ptx"])) for f in r.program})
            rows.append({"program": b + i, "threads": len(p.threads), "ran": [list(k) for k in ran_keys],
                         "static": None if st_keys is None else [list(k) for k in st_keys],
                         "cross_role": r.cross_role, "harness": r.harness, "unplaced": r.unplaced,
                         "fully_checked": not r.unchecked, "unchecked": list(r.unchecked)[:3]})
    n = len(rows)
    compared = [r for r in rows if r["static"] is not None]
    counts = {
        "programs": n, "batches": len(check_cpu),
        "kernels_same_sass_alone_and_in_batch": kernels["same"], "kernels_different": kernels["different"],
        "fully_checked": sum(r["fully_checked"] for r in rows),
        "with_program_findings": sum(bool(r["ran"]) for r in rows),
        "program_findings": sum(len(r["ran"]) for r in rows),
        "cross_role": sum(r["cross_role"] for r in rows), "harness": sum(r["harness"] for r in rows),
        "unplaced": sum(r["unplaced"] for r in rows),
        "static_compared": len(compared), "static_agrees": sum(r["ran"] == r["static"] for r in compared),
        "check_cpu_s_per_batch_median": round(sorted(check_cpu)[len(check_cpu) // 2], 3) if check_cpu else None,
    }
    only: dict[str, Counter[str]] = {"ran": Counter(), "static": Counter()}
    for r in compared:
        a, s = {tuple(k) for k in r["ran"]}, {tuple(k) for k in r["static"]}
        for k in a - s:
            only["ran"][" / ".join(k)] += 1
        for k in s - a:
            only["static"][" / ".join(k)] += 1
    doc = {**header("ran_sass.py", argv), "profile": args.profile, "seeds": args.seeds, "arch": args.arch,
           "counts": counts, "only_in_ran": dict(only["ran"]), "only_in_static": dict(only["static"]),
           "errors": errors, "rows": rows, "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    c = counts
    md = [f"# The SASS that ran: the harness's own cubin checked (`{doc['command']}`)", "",
          f"{doc['machine']}, {doc['date']}; profile `{args.profile}`, seeds {args.seeds}: {n} distinct programs the "
          f"harness runs on {args.arch}, compiled in batches of {args.batch} as a campaign compiles them.  The verdicts are "
          "the SASS oracle's on generated programs, which a campaign draws with bugs on purpose (an unguarded mbarrier "
          "wait is the program's own): nothing here accuses the compiler or the hardware.", "",
          "| programs | kernels with the same SASS alone and in their batch | fully checked | with findings on the program's operations | findings: program / between roles / harness's own / not placed | program's findings = its static kernels' | CPU of one check of a batch (median) |",
          "|---|---|---|---|---|---|---|",
          f"| {n} | {c['kernels_same_sass_alone_and_in_batch']} of {c['kernels_same_sass_alone_and_in_batch'] + c['kernels_different']} "
          f"| {c['fully_checked']} | {c['with_program_findings']} | {c['program_findings']} / {c['cross_role']} / {c['harness']} / "
          f"{c['unplaced']} | {c['static_agrees']} of {c['static_compared']} | {c['check_cpu_s_per_batch_median']} s |", ""]
    for side, title in (("ran", "in the SASS that ran only"), ("static", "in the static kernels only")):
        md += [f"Findings {title} (check / verdict / moved operation / crossed point: programs):", ""]
        md += [f"- {k}: {v}" for k, v in only[side].most_common(12)] or ["- none"]
        md.append("")
    if errors:
        md += ["Batches not compiled: " + "; ".join(errors), ""]
    write_results(args.out, "ran-sass", doc, md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
