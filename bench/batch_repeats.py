#!/usr/bin/env python3
"""Benchmark: what a campaign's batches compiled twice (issue 29), and what the harness's nvcc spends on it.

A campaign draws ``BATCH`` (64) programs ahead and has its backend compile them in one call (its
``prepare``; shrinks keep 8 candidates a batch).  Until 4768c89 two things made the GPU backend
compile more than it ran: a program Hypothesis drew twice in one batch was compiled once per copy,
and the evidence cache was asked with the profile's configuration rather than the one each program
runs with (a wait-loop program runs at the short spin budget), so a program the cache answers at its
run could be compiled first.

This script runs a ``--backend static`` campaign in this process (the real engine, draws, oracle
and static check, no GPU needed) for ``--seconds`` and records every batch the engine hands its
backend, with each program's two cache answers (the profile's configuration, and the program's
own).  Then, for each batch of at least ``--min-batch`` programs, it compiles the harness module
(:func:`fuzzgpu.codegen.generate_module` and nvcc, the cuda backend's own call) of the programs the
GPU backend compiled before (every copy the profile's configuration left) and after (each program
once, its own configuration), and times nvcc by its CPU seconds (children's user+system).

    python3 bench/batch_repeats.py [--seconds 120] [--seed 5] [--property race] [--batches 6]

Writes ``bench/results/throughput/batch-repeats.json`` and ``.md`` (machine, date, command, table).
Needs nvcc (no GPU).
"""

from __future__ import annotations

import argparse
import io
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from compile_phases import FLAGS, header, write_results  # noqa: E402

OUT = ROOT / "bench" / "results" / "throughput"


def record_batches(seconds: float, seed: int, prop: str, corpus: Path) -> list[list[tuple[Any, bool, bool]]]:
    """Every batch a static campaign's engine hands its backend: per program (program, answered
    under the profile's configuration, answered under its own)."""
    from fuzzgpu.backends import make_backend
    from fuzzgpu.campaign import Campaign
    from fuzzgpu.evidence import EvidenceBackend
    from fuzzgpu.profiles import load_profile

    batches: list[list[tuple[Any, bool, bool]]] = []
    real = EvidenceBackend.prepare

    def spy(self: EvidenceBackend, programs: Any, config_of: Any) -> None:
        base = campaign.config_for()
        batches.append([(p, self.answers(p, base), self.answers(p, config_of(p))) for p in programs])
        real(self, programs, config_of)

    prof = load_profile("all")
    backend, note = make_backend("static", arch=prof.static_arch, judge_unrunnable=prof.static_unrunnable)
    campaign = Campaign(prof, backend, corpus, prop, seed, note, io.StringIO(), False)
    EvidenceBackend.prepare = spy  # type: ignore[method-assign]
    try:
        campaign.run(seconds)
    finally:
        EvidenceBackend.prepare = real  # type: ignore[method-assign]
    return batches


def children_cpu() -> float:
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return c.ru_utime + c.ru_stime


def nvcc_cpu(programs: list[Any], arch: str, tmp: Path) -> float:
    """CPU seconds of the harness module's nvcc, as the cuda backend's batch compile calls it."""
    from fuzzgpu import codegen
    from fuzzgpu.sass import require_tool

    src, _ = codegen.generate_module(programs)
    cu = tmp / "batch.cu"
    cu.write_text(src)
    before = children_cpu()
    subprocess.run([require_tool("nvcc"), "-cubin", f"-arch={arch}", *FLAGS, "-o", str(tmp / "batch.cubin"), str(cu)],
                   check=True, capture_output=True)
    return children_cpu() - before


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=120.0, help="the static campaign's time (default 120)")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--property", default="race", choices=("model", "race"))
    ap.add_argument("--min-batch", type=int, default=32, help="the batches compiled (default: >= 32 programs, a generation batch)")
    ap.add_argument("--batches", type=int, default=6, help="how many of them are compiled before and after (default 6)")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    from fuzzgpu import codegen

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        batches = record_batches(args.seconds, args.seed, args.property, tmp / "corpus")

        def runnable(p: Any) -> bool:
            try:
                return not codegen.unrunnable_reasons(p) and codegen.harness_arch([p], args.arch) == args.arch
            except Exception:  # noqa: BLE001 -- a program the harness refuses is not compiled by prepare either
                return False

        rows = []
        for b in batches:
            before = [p for p, base, _ in b if not base and runnable(p)]
            after = [p for p in dict.fromkeys(p for p, _, own in b if not own) if runnable(p)]
            rows.append({"size": len(b), "before": len(before), "after": len(after),
                         "repeats": len(b) - len(set(p for p, _, _ in b)),
                         "answered_own_not_base": sum(1 for _, base, own in b if own and not base),
                         "_progs": (before, after)})
        big = [r for r in rows if r["size"] >= args.min_batch]
        timed = big[: args.batches]
        for r in timed:
            before, after = r["_progs"]
            r["nvcc_cpu_before"] = round(nvcc_cpu(before, args.arch, tmp), 2)
            r["nvcc_cpu_after"] = round(nvcc_cpu(after, args.arch, tmp), 2) if after else 0.0
    for r in rows:
        del r["_progs"]

    def total(rs: list[dict[str, Any]], k: str) -> float:
        return round(sum(r.get(k, 0) for r in rs), 2)

    doc = {**header("batch_repeats.py", argv), "seconds": args.seconds, "seed": args.seed, "property": args.property,
           "batches": rows,
           "all_batches": {k: total(rows, k) for k in ("size", "before", "after", "repeats", "answered_own_not_base")},
           "generation_batches": {k: total(big, k) for k in ("size", "before", "after", "repeats", "answered_own_not_base")},
           "timed": {k: total(timed, k) for k in ("before", "after", "nvcc_cpu_before", "nvcc_cpu_after")}}
    g, a, t = doc["generation_batches"], doc["all_batches"], doc["timed"]
    md = [f"# A campaign's batches compiled twice (`{doc['command']}`)", "",
          f"{doc['machine']}, {doc['date']}: a `--backend static` campaign, profile `all`, property {args.property}, "
          f"seed {args.seed}, {args.seconds:g} s, in this process; every batch its engine handed the backend "
          f"({len(rows)}, of them {len(big)} of >= {args.min_batch} programs: generation batches).", "",
          "| batches | programs handed over | drawn twice (repeats) | answered only under their own configuration | "
          "programs whose harness the GPU backend compiled before | after |", "|---|---|---|---|---|---|",
          f"| all ({len(rows)}) | {a['size']:g} | {a['repeats']:g} | {a['answered_own_not_base']:g} | {a['before']:g} | {a['after']:g} |",
          f"| generation ({len(big)}) | {g['size']:g} | {g['repeats']:g} | {g['answered_own_not_base']:g} | {g['before']:g} | {g['after']:g} |",
          "", f"The harness modules of the first {len(timed)} generation batches, nvcc CPU seconds (`-cubin -arch={args.arch} "
          f"{' '.join(FLAGS)}`): before {t['nvcc_cpu_before']:g} s for {t['before']:g} programs, after "
          f"{t['nvcc_cpu_after']:g} s for {t['after']:g}"
          + (f" (-{100 * (1 - t['nvcc_cpu_after'] / t['nvcc_cpu_before']):.0f}%)." if t["nvcc_cpu_before"] else ".")]
    write_results(args.out, "batch-repeats", doc, md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
