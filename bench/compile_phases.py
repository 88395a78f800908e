#!/usr/bin/env python3
"""Benchmark: where the CPU time of a campaign's compiles goes, phase by phase (issue 29's
moonshot question: what stands between a campaign and the GPU).

For the harness module (``codegen.generate_module``) and the static kernels
(``codegen.generate_static``, renamed per program as ``backends.static.check_batch`` does) of 1
and of ``--batch`` programs drawn from a profile, one nvcc each as the campaign runs it (the harness's
``backends.cuda.compile_module``, the static check's ``sass.toolchain.compile_cu``: their flags, the
generated modules' declarations pre-included instead of cuda_runtime.h) with ``--time`` (nvcc's own
per-phase wall times: gcc -E, cicc, ptxas) and the disassembler on the cubin -- ``nvdisasm -c -gi``
(what a user's kernels get) and ``sass.disassemble(..., ndf_first=True)`` (what the static check runs,
its text checked the same) --, each timed by its CPU time (children's user+system).  From the two
sizes, per phase: the fixed cost of one call and the marginal cost of one more program.

    python3 bench/compile_phases.py [--profile all] [--batch 16] [--seed 1] [--repeat 3] [--before REV]

``--before REV``: the same programs' harness module as the commit ``REV`` generates it (``git archive``
into a temporary folder, its own ``codegen``), measured in the same run beside this tree's.

Writes ``bench/results/throughput/compile-phases.json`` and ``.md`` (machine, date, command,
table).  Needs nvcc and nvdisasm, no GPU.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

OUT = ROOT / "bench" / "results" / "throughput"


def header(script: str, argv: list[str] | None) -> dict[str, Any]:
    """What a results file of these benches starts with: the command as typed, the date, the machine."""
    return {"command": " ".join(["python3", f"bench/{script}", *(argv if argv is not None else sys.argv[1:])]),
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "host": platform.node(),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores"}


def write_results(out: Path, stem: str, doc: dict[str, Any], md: list[str]) -> None:
    """``out/stem.json`` (the figures) and ``out/stem.md`` (the table), the table printed too."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(json.dumps(doc, indent=1) + "\n")
    (out / f"{stem}.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


def publish(script: str, out: Path, stem: str, doc: dict[str, Any], md: list[str]) -> int:
    """:func:`write_results`, as a bench's ``main`` ends with it: 0, or 3 with one line on stderr when ``out`` cannot
    be written."""
    try:
        write_results(out, stem, doc, md)
    except OSError as exc:
        print(f"{script}: {out}: cannot write: {exc.strerror or exc}", file=sys.stderr)
        return 3
    return 0


def shown(text: str) -> str:
    """A file's text as a terminal or a page may show it: printable ASCII, anything else ``?`` (no escapes)."""
    return "".join(ch if ch.isprintable() and ch.isascii() else "?" for ch in text)


def children_cpu() -> float:
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return c.ru_utime + c.ru_stime


def nvcc_phases(source: str, kind: str, arch: str, tmp: Path) -> tuple[dict[str, float], float, Path]:
    """One nvcc of ``source`` as the campaign compiles it -- the harness module through
    ``backends.cuda.compile_module`` (its flags, the generated modules' declarations pre-included
    instead of cuda_runtime.h), the static kernels through ``sass.toolchain.compile_cu`` with the
    static check's ``-O3`` and the same declarations --, with nvcc's ``--time`` added: its phases'
    wall ms, the call's CPU s, the cubin."""
    from fuzzgpu import codegen
    from fuzzgpu.backends.cuda import DEFAULT_FLAGS, compile_module
    from fuzzgpu.sass.toolchain import compile_cu, runtime_header_flags

    times = tmp / "time.csv"
    times.unlink(missing_ok=True)
    c0 = children_cpu()
    if kind == "static kernels":
        cu = tmp / "fuzzgpu_static.cu"
        cu.write_text(source)
        out = tmp / "static"
        out.mkdir(exist_ok=True)
        _, cubin = compile_cu(cu, arch, out, 3, [*runtime_header_flags(tmp, codegen.CUDA_DECLS), "--time", str(times)])
    else:
        data, _ = compile_module(source, arch, (*DEFAULT_FLAGS, "--time", str(times)), use_cache=False)
        cubin = tmp / "k.cubin"
        cubin.write_bytes(data)
    cpu = children_cpu() - c0
    return parse_time_csv(times.read_text()), cpu, cubin


def parse_time_csv(text: str) -> dict[str, float]:
    """nvcc ``--time``'s CSV -> wall ms per phase, by the phase name's first word (``gcc
    (preprocessing 1)`` -> ``gcc``; ``nvcc (driver)`` -> ``nvcc``), summed over its rows."""
    phases: dict[str, float] = {}
    for row in csv.reader(text.splitlines()):
        if len(row) >= 8 and row[6].strip().replace(".", "", 1).isdigit():
            name = row[1].strip().split(" ")[0]
            phases[name] = phases.get(name, 0.0) + float(row[6])
    return phases


def disasm_cpu(cubin: Path) -> tuple[float, float, bool]:
    """The CPU of ``nvdisasm -c -gi`` on ``cubin`` (what a user's kernels get), of ``sass.disassemble(...,
    ndf_first=True)`` (fuzzgpu's generated kernels: without the dataflow analysis unless the listing needs
    it), and whether the two texts are the same."""
    from fuzzgpu import sass

    c0 = children_cpu()
    plain = subprocess.run([sass.require_tool("nvdisasm"), "-c", "-gi", str(cubin)], check=True, capture_output=True,
                           text=True).stdout
    c1 = children_cpu()
    quick = sass.disassemble(cubin, ndf_first=True)
    return c1 - c0, children_cpu() - c1, quick == plain


def static_module(programs: list[Any]) -> str:
    from fuzzgpu.backends.static import batch_texts

    return "".join(batch_texts(programs).values())


def measure(kind: str, source: str, arch: str, repeat: int) -> dict[str, Any]:
    """The median of ``repeat`` compiles (by CPU s) and of as many disassemblies."""
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="fuzzgpu-phases-") as d:
        for _ in range(repeat):
            phases, cpu, cubin = nvcc_phases(source, kind, arch, Path(d))
            plain, quick, same = disasm_cpu(cubin)
            runs.append({"phases_ms": phases, "nvcc_cpu_s": cpu, "nvdisasm_cpu_s": plain, "ndf_first_cpu_s": quick,
                         "ndf_first_same_text": same, "cubin_bytes": cubin.stat().st_size})
    runs.sort(key=lambda r: r["nvcc_cpu_s"])
    mid = runs[len(runs) // 2]
    dis = sorted(r["nvdisasm_cpu_s"] for r in runs)[len(runs) // 2]
    ndf = sorted(r["ndf_first_cpu_s"] for r in runs)[len(runs) // 2]
    return {"kind": kind, "source_bytes": len(source), **mid, "nvdisasm_cpu_s": dis, "ndf_first_cpu_s": ndf,
            "ndf_first_same_text": all(r["ndf_first_same_text"] for r in runs)}


#: run in a ``git archive`` of the "before" commit: its draws and harness modules, as JSON
_BEFORE = """
import json, sys
from stages import draw
from fuzzgpu import codegen
from fuzzgpu.hashing import program_hash
profile, n, seed, arch, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
drawn = draw(profile, n, seed)
runnable = [p for p in drawn if not codegen.unrunnable_reasons(p) and codegen.harness_arch([p], arch) == arch]
print(json.dumps({"hashes": [program_hash(p) for p in runnable[:batch]],
                  "one": codegen.generate_module(runnable[:1])[0], "many": codegen.generate_module(runnable[:batch])[0]}))
"""


def before_modules(rev: str, profile: str, n: int, seed: int, arch: str, batch: int) -> dict[str, Any]:
    """The harness modules of the first and the first ``batch`` runnable draws as commit ``rev``
    generates them, with the programs' hashes (to check they are the same programs)."""
    from stages import unpack

    with tempfile.TemporaryDirectory(prefix="fuzzgpu-before-") as tmp:
        d = unpack(rev, Path(tmp) / "before")
        env = {**os.environ, "PYTHONPATH": f"{d}{os.pathsep}{d}/bench"}
        out = subprocess.run([sys.executable, "-c", _BEFORE, profile, str(n), str(seed), arch, str(batch)], cwd=d, env=env,
                             capture_output=True, text=True, check=True).stdout
    doc: dict[str, Any] = json.loads(out)
    return doc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="all")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3, help="compiles per measurement, the median kept (default 3)")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--before", metavar="REV", help="also measure the harness module as commit REV generates it")
    args = ap.parse_args(argv)

    from stages import draw

    from fuzzgpu import codegen
    from fuzzgpu.errors import EnvError

    drawn = draw(args.profile, 4 * args.batch, args.seed)
    # what a cuda campaign compiles: runnable programs of one harness arch (no sm_90a wgmma module)
    runnable = [p for p in drawn if not codegen.unrunnable_reasons(p) and codegen.harness_arch([p], args.arch) == args.arch]
    if len(runnable) < args.batch:
        print(f"bench/compile_phases.py: only {len(runnable)} runnable programs in {len(drawn)} draws", file=sys.stderr)
        return 2
    one, many = runnable[:1], runnable[: args.batch]
    rows = []
    kinds = ["harness", "static kernels"]
    try:
        before = before_modules(args.before, args.profile, 4 * args.batch, args.seed, args.arch, args.batch) if args.before else None
        if before is not None:
            from fuzzgpu.hashing import program_hash

            if before["hashes"] != [program_hash(p) for p in many]:
                print(f"bench/compile_phases.py: {args.before} draws other programs: no before/after", file=sys.stderr)
                return 2
            kinds.insert(0, f"harness at {args.before}")
        for n, progs in ((1, one), (args.batch, many)):
            if before is not None:
                rows.append({"programs": n, **measure(kinds[0], before["one" if n == 1 else "many"], args.arch, args.repeat)})
            rows.append({"programs": n, **measure("harness", codegen.generate_module(progs)[0], args.arch, args.repeat)})
            rows.append({"programs": n, **measure("static kernels", static_module(progs), args.arch, args.repeat)})
    except (EnvError, subprocess.CalledProcessError) as e:
        print(f"bench/compile_phases.py: {e}", file=sys.stderr)
        return 3
    threads = sum(len(p.threads) for p in many) / len(many)
    instructions = sum(len(t.code) for p in many for t in p.threads) / len(many)

    def cost(kind: str, key: str) -> tuple[float, float]:
        """(fixed per call, marginal per program) of ``key``, from the 1- and the batch-program rows."""
        def val(r: dict[str, Any]) -> float:
            return r["phases_ms"].get(key, 0.0) / 1000 if key in ("gcc", "cicc", "ptxas") else float(r[key])
        a, b = (next(r for r in rows if r["kind"] == kind and r["programs"] == n) for n in (1, args.batch))
        marginal = (val(b) - val(a)) / (args.batch - 1)
        return val(a) - marginal, marginal

    table = []
    for kind in kinds:
        for key, label in (("gcc", "gcc -E (wall)"), ("cicc", "cicc (wall)"), ("ptxas", "ptxas (wall)"),
                           ("nvcc_cpu_s", "nvcc, CPU (all phases)"), ("nvdisasm_cpu_s", "nvdisasm -c -gi, CPU"),
                           ("ndf_first_cpu_s", "sass.disassemble ndf_first (-ndf unless needed), CPU")):
            fixed, marginal = cost(kind, key)
            table.append({"kind": kind, "what": label, "fixed_ms": round(1000 * fixed, 1), "per_program_ms": round(1000 * marginal, 1),
                          f"per_program_at_{args.batch}_ms": round(1000 * (fixed / args.batch + marginal), 1)})
    doc = {**header("compile_phases.py", argv), "profile": args.profile, "before": args.before,
           "seed": args.seed, "batch": args.batch, "threads_per_program": threads,
           "instructions_per_program": instructions, "rows": rows, "table": table}
    md = [f"# Where a compile's CPU goes (`{doc['command']}`)", "",
          f"{doc['machine']}, {doc['date']}; profile `{args.profile}`, seed {args.seed}: the first runnable draw, and the "
          f"first {args.batch} ({threads:.1f} threads, {instructions:.1f} instructions a program); the median of "
          f"{args.repeat} compiles each. Fixed and per-program costs are read off the two sizes (a negative per-program "
          "figure is within the noise).", "",
          "| module | phase | fixed per call, ms | per program, ms | per program in a batch of "
          f"{args.batch}, ms |", "|---|---|---|---|---|"]
    md += [f"| {t['kind']} | {t['what']} | {t['fixed_ms']} | {t['per_program_ms']} | {t[f'per_program_at_{args.batch}_ms']} |"
           for t in table]
    same = all(r["ndf_first_same_text"] for r in rows)
    md += ["", f"`sass.disassemble(..., ndf_first=True)`'s text the same as `nvdisasm -c -gi`'s on every cubin: {'yes' if same else 'NO'}."]
    write_results(args.out, "compile-phases", doc, md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
