#!/usr/bin/env python3
"""What ``fuzzgpu sass`` costs on real production kernels, against what nvcc costs for the same
translation unit (issue 26: the analysis must cost at most 10% of the nvcc compile).

The kernels are those compiled once into a realk folder (``manifest.json``: per kernel its PTX, cubin,
arch and nvcc's ``compile_seconds``, measured when it was compiled with the project's own flags).  For
each, this times separately and takes the median of ``--repeat`` runs:

* ``disassemble``: nvdisasm of the cubin (what ``fuzzgpu sass`` runs after nvcc for a ``.cu``);
* ``analyse``: parsing the PTX (once) and the SASS, the analysis and the PDL review
  (``fuzzgpu.sass.toolchain.analysed``) -- everything ``fuzzgpu sass`` does that is not a tool --
  as wall time and as the process's CPU time;

and writes ``bench/results/sass/sass_real.json`` and a table, ``bench/results/sass/sass_real.md``.
With ``--time-nvcc ID ...`` the nvcc compile of those kernels is timed now (the realk folder's
``compile_commands.json`` entry, its object written to a temporary folder; one compile at a time,
wall time as ``time`` gives it, and nvcc's user+sys CPU time), with the load average before and
after; the others keep the manifest's ``compile_seconds``.

    python3 bench/sass_real.py                           # /work/realk, 3 repeats
    python3 bench/sass_real.py --realk DIR --repeat 5 --out bench/results/sass/sass_real.json
    python3 bench/sass_real.py --time-nvcc deepep-567632d-intranode
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fuzzgpu import sass  # noqa: E402
from fuzzgpu.sass import toolchain  # noqa: E402

GOAL = 0.10


def timed(fn, repeat: int) -> tuple[float, list[float], object, float]:
    """Median wall time, every wall time, the value, and the median CPU time of the process."""
    times, cpu, value = [], [], None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        value = fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(times), times, value, statistics.median(cpu)


def time_nvcc(realk: Path, entry_id: str) -> dict:
    """One nvcc compile of the kernel ``entry_id`` (its compile_commands.json entry, ``-o`` into a
    temporary folder): wall seconds, nvcc's user+sys CPU seconds, the load average before and after."""
    commands = json.loads((realk / "compile_commands.json").read_text())
    (cmd,) = [c for c in commands if c.get("output", "").startswith(str(realk / entry_id) + "/")]
    argv = shlex.split(cmd["command"])
    with tempfile.TemporaryDirectory() as tmp:
        argv[argv.index("-o") + 1] = str(Path(tmp) / Path(cmd["output"]).name)
        load_before = os.getloadavg()
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(argv, cwd=cmd["directory"], check=True, capture_output=True)
        wall = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"wall_s": round(wall, 2), "cpu_s": round((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), 2),
            "load_before": [round(x, 1) for x in load_before], "load_after": [round(x, 1) for x in os.getloadavg()]}


def one(realk: Path, entry: dict, repeat: int, nvcc: dict | None = None) -> dict:
    ptx_text = (realk / entry["ptx"]).read_text()
    cubin = realk / entry["cubin"]
    arch = entry.get("arch", "sm_90a")
    dis_med, dis_all, sass_text, _ = timed(lambda: toolchain.disassemble(cubin), repeat)
    assert isinstance(sass_text, str)

    def analysis():
        return toolchain.analysed(ptx_text, sass_text, arch, entry.get("file", entry["id"]))

    ana_med, ana_all, rep, ana_cpu = timed(analysis, repeat)
    notes = rep.pdl  # type: ignore[attr-defined]
    compile_s = float(nvcc["wall_s"] if nvcc else entry["compile_seconds"])
    return {
        "id": entry["id"], "project": entry.get("project", ""), "commit": entry.get("commit", ""),
        "file": entry.get("file", ""), "arch": arch,
        "ptx_bytes": len(ptx_text), "sass_bytes": len(sass_text),
        "functions": len(rep.functions), "findings": len(rep.findings),
        "forbidden": sum(1 for f in rep.findings if f.verdict == sass.FORBIDDEN),
        "complete": rep.complete, "pdl_review": len(notes),
        "nvcc_compile_s": compile_s, "nvcc_timed_now": nvcc,
        "analyse_cpu_s": round(ana_cpu, 3),
        "analyse_cpu_fraction_of_nvcc_cpu": round(ana_cpu / nvcc["cpu_s"], 4) if nvcc else None,
        "disassemble_s": round(dis_med, 3), "disassemble_all_s": [round(t, 3) for t in dis_all],
        "analyse_s": round(ana_med, 3), "analyse_all_s": [round(t, 3) for t in ana_all],
        "analyse_fraction": round(ana_med / compile_s, 4),
        "analyse_and_disassemble_fraction": round((ana_med + dis_med) / compile_s, 4),
        "within_goal": ana_med / compile_s <= GOAL,
    }


def table(rows: list[dict]) -> str:
    out = ["| kernel | PTX / SASS (MB) | functions | nvcc (s) | nvdisasm (s) | analyse (s) | analyse / nvcc | + nvdisasm / nvcc |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        now = r.get("nvcc_timed_now")
        nvcc = (f"{r['nvcc_compile_s']:.1f} (timed now, load {now['load_before'][0]:.1f}; CPU {now['cpu_s']:.1f})" if now
                else f"{r['nvcc_compile_s']:.0f}")
        out.append(f"| {r['id']} ({r['file']}, {r['arch']}) | {r['ptx_bytes'] / 1e6:.1f} / {r['sass_bytes'] / 1e6:.1f} | "
                   f"{r['functions']} | {nvcc} | {r['disassemble_s']:.2f} | {r['analyse_s']:.2f} (CPU {r['analyse_cpu_s']:.2f}) | "
                   f"{100 * r['analyse_fraction']:.1f}% | {100 * r['analyse_and_disassemble_fraction']:.1f}% |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--realk", type=Path, default=Path("/work/realk"), help="folder with manifest.json (default /work/realk)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", nargs="*", default=None, help="ids of the manifest to measure (default: all with PTX and cubin)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "sass" / "sass_real.json")
    ap.add_argument("--time-nvcc", nargs="*", default=[], metavar="ID",
                    help="ids whose nvcc compile is timed now (compile_commands.json of the realk folder), one at a time")
    args = ap.parse_args()
    manifest = json.loads((args.realk / "manifest.json").read_text())
    nvcc = {}
    for entry_id in args.time_nvcc:  # first, one compile at a time, before the analyses load the machine
        print(f"nvcc {entry_id} ...", file=sys.stderr, flush=True)
        nvcc[entry_id] = time_nvcc(args.realk, entry_id)
    rows = []
    for e in manifest:
        if args.only and e["id"] not in args.only:
            continue
        if not (e.get("ptx") and e.get("cubin") and e.get("compile_seconds")):
            continue
        if not (args.realk / e["ptx"]).is_file() or not (args.realk / e["cubin"]).is_file():
            continue
        print(f"{e['id']} ...", file=sys.stderr, flush=True)
        rows.append(one(args.realk, e, args.repeat, nvcc.get(e["id"])))
    doc = {
        "what": "fuzzgpu sass analysis time (parse + analyse + PDL review, no tool: toolchain.analysed) and nvdisasm time, "
                "against nvcc's compile of the same translation unit (manifest compile_seconds: wall time of the one "
                "compile with the project's flags on the same machine; or timed now with --time-nvcc)",
        "goal": f"analyse / nvcc <= {GOAL:.0%}",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
                    "loadavg": os.getloadavg()},
        "toolchain": toolchain.toolchain_id(),
        "repeat": args.repeat,
        "kernels": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    md = args.out.with_suffix(".md")
    md.write_text(f"# fuzzgpu sass on real kernels: analysis time against nvcc\n\n{doc['what']}.\n"
                  f"Goal: {doc['goal']}. {doc['date']}, {doc['machine']['platform']}, {doc['machine']['cpus']} CPUs, "
                  f"load average {', '.join(f'{x:.1f}' for x in doc['machine']['loadavg'])}; median of {args.repeat}.\n\n"
                  f"{table(rows)}\n")
    print(table(rows))
    return 0 if all(r["within_goal"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
