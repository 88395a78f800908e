#!/usr/bin/env python3
"""What ``fuzzgpu sass`` costs on real production kernels, against what nvcc costs for the same
translation unit (issue 26: the analysis must cost at most 10% of the nvcc compile).

The kernels are those compiled once into a realk folder (``manifest.json``: per kernel its PTX, cubin,
arch and nvcc's ``compile_seconds``, measured when it was compiled with the project's own flags).
Every figure is CPU time (user + sys, of the process and the children it waited for), not wall
time: the machine is shared, and wall time under load says more about the others.  Each kernel is
measured in ``--repeat`` rounds; a round runs, one after the other:

* ``nvcc`` (only for the ids of ``--time-nvcc``): the realk folder's ``compile_commands.json``
  entry, its object written to a temporary folder -- the project's own compile of the TU;
* ``nvdisasm``: the disassembly ``fuzzgpu sass`` runs after nvcc for a ``.cu``
  (``fuzzgpu.sass.toolchain.disassemble``);
* ``analyse``: a fresh Python process that parses the PTX and the SASS, runs the checks and the
  PDL review (``fuzzgpu.sass.toolchain.analysed``, its first call: the regular expressions and
  caches start cold, as in ``fuzzgpu sass``) -- everything ``fuzzgpu sass`` does that is not a
  tool; its CPU time inside the process, and the whole process's (interpreter start, imports and
  reading the files too) as ``process``.

The fractions of a timed kernel are per round (the analysis against the nvcc of the same round,
a minute apart at most), then their median and largest; the other kernels are set against the
manifest's ``compile_seconds`` (wall time of one compile, when the TUs were built).  Writes
``bench/results/sass/sass_real.json`` and a table, ``bench/results/sass/sass_real.md``.

    python3 bench/sass_real.py                           # /work/realk, 3 rounds
    python3 bench/sass_real.py --time-nvcc deepep-567632d-intranode --only deepep-567632d-intranode --repeat 5
    python3 bench/sass_real.py --only deepep-567632d-intranode --phases  # and where the analysis's time goes
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

from fuzzgpu.sass import toolchain  # noqa: E402

GOAL = 0.10

#: the analysis in a fresh process (the tree to measure first on sys.path): the CPU seconds of
#: toolchain.analysed (its first call) and the facts of the report, as JSON
_CHILD = r'''
import json, sys, time
sys.path.insert(0, sys.argv[1])
from fuzzgpu import sass
from fuzzgpu.sass import toolchain
ptx, listing = open(sys.argv[2]).read(), open(sys.argv[3]).read()
t0, c0 = time.perf_counter(), time.process_time()
rep = toolchain.analysed(ptx, listing, sys.argv[4], sys.argv[5])
cpu, wall = time.process_time() - c0, time.perf_counter() - t0
print(json.dumps({"cpu": cpu, "wall": wall, "functions": len(rep.functions), "findings": len(rep.findings),
                  "forbidden": sum(1 for f in rep.findings if f.verdict == sass.FORBIDDEN),
                  "complete": rep.complete, "pdl_review": len(rep.pdl)}))
'''


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def time_nvcc(realk: Path, entry_id: str) -> dict:
    """One nvcc compile of the kernel ``entry_id`` (its compile_commands.json entry, ``-o`` into a
    temporary folder): wall seconds, the user+sys CPU seconds of nvcc and every program it runs
    (cicc, ptxas, the host compiler, ...), the load average before."""
    commands = json.loads((realk / "compile_commands.json").read_text())
    (cmd,) = [c for c in commands if c.get("output", "").startswith(str(realk / entry_id) + "/")]
    argv = shlex.split(cmd["command"])
    with tempfile.TemporaryDirectory() as tmp:
        argv[argv.index("-o") + 1] = str(Path(tmp) / Path(cmd["output"]).name)
        load = os.getloadavg()[0]
        c0, t0 = children_cpu(), time.perf_counter()
        subprocess.run(argv, cwd=cmd["directory"], check=True, capture_output=True)
        wall, cpu = time.perf_counter() - t0, children_cpu() - c0
    return {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "load": round(load, 2)}


def time_disassemble(cubin: Path) -> tuple[dict, str]:
    c0, t0 = children_cpu(), time.perf_counter()
    text = toolchain.disassemble(cubin)
    return {"wall_s": round(time.perf_counter() - t0, 3), "cpu_s": round(children_cpu() - c0, 3)}, text


def time_analysis(tree: Path, ptx: Path, listing: Path, arch: str, source: str) -> dict:
    c0 = children_cpu()
    out = subprocess.run([sys.executable, "-c", _CHILD, str(tree), str(ptx), str(listing), arch, source],
                         capture_output=True, text=True, check=True)
    d = json.loads(out.stdout)
    d["process_cpu"] = children_cpu() - c0
    return d


#: (module, function, phase) of the per-phase timers of ``--phases``: the top-level calls of the
#: analysis, by the name the caller looks them up under
_PHASES = (
    ("toolchain", "parse_ptx", "PTX parse"), ("checks", "parse_sass", "SASS parse"),
    ("checks", "sass_cfg", "CFG (SASS)"), ("checks", "ptx_cfg", "CFG (PTX)"),
    ("checks", "_map_memory", "memory mapping"), ("checks", "local_registers", "local registers"),
    ("checks", "_deleted", "deleted loads"), ("order", "_credible_pairs", "pairing"),
    ("order", "ptx_sides", "counts on the PTX CFG (dominance)"), ("order", "sass_sides", "counts on the SASS CFG"),
    ("order", "_check_unpaired", "unpaired SASS operations"), ("order", "_explain_groups", "pairing groups"),
    ("checks", "cfg_findings", "crossings (all of the order.* above)"),
    ("checks", "_wait_intervals", "waits"), ("checks", "_unguarded_waits", "waits"), ("pdl", "review", "PDL review"),
)


def phases(ptx: Path, listing: str, arch: str, source: str, repeat: int) -> dict:
    """The CPU seconds of each phase of the analysis (:data:`_PHASES`, timers around the calls, in
    this process, mean of ``repeat`` runs after one to warm up) and of the whole."""
    import importlib

    acc: dict[str, float] = {}
    saved = []
    for mod_name, fname, label in _PHASES:
        mod = importlib.import_module(f"fuzzgpu.sass.{mod_name}")
        fn = getattr(mod, fname)
        saved.append((mod, fname, fn))

        def timed_call(*a, _fn=fn, _label=label, **k):
            c0 = time.process_time()
            try:
                return _fn(*a, **k)
            finally:
                acc[_label] = acc.get(_label, 0.0) + time.process_time() - c0
        setattr(mod, fname, timed_call)
    try:
        text = ptx.read_text()
        toolchain.analysed(text, listing, arch, source)
        acc.clear()
        c0 = time.process_time()
        for _ in range(repeat):
            toolchain.analysed(text, listing, arch, source)
        total = time.process_time() - c0
    finally:
        for mod, fname, fn in saved:
            setattr(mod, fname, fn)
    return {"total": round(total / repeat, 4), **{k: round(v / repeat, 4) for k, v in acc.items()}}


def spread(xs: list[float]) -> dict:
    return {"median": round(statistics.median(xs), 4), "min": round(min(xs), 4), "max": round(max(xs), 4),
            "all": [round(x, 4) for x in xs]}


def one(realk: Path, entry: dict, repeat: int, timed_nvcc: bool, with_phases: bool = False) -> dict:
    ptx = realk / entry["ptx"]
    cubin = realk / entry["cubin"]
    arch = entry.get("arch", "sm_90a")
    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        listing = Path(tmp) / "listing.sass"
        for _ in range(repeat):
            r: dict = {"load": round(os.getloadavg()[0], 2)}
            if timed_nvcc:
                r["nvcc"] = time_nvcc(realk, entry["id"])
            r["nvdisasm"], text = time_disassemble(cubin)
            listing.write_text(text)
            r["analyse"] = time_analysis(ROOT, ptx, listing, arch, entry.get("file", entry["id"]))
            rounds.append(r)
    facts = {k: rounds[-1]["analyse"][k] for k in ("functions", "findings", "forbidden", "complete", "pdl_review")}
    ana = [r["analyse"]["cpu"] for r in rounds]
    dis = [r["nvdisasm"]["cpu_s"] for r in rounds]
    row = {
        "id": entry["id"], "project": entry.get("project", ""), "commit": entry.get("commit", ""),
        "file": entry.get("file", ""), "arch": arch,
        "ptx_bytes": ptx.stat().st_size, "sass_bytes": len(text), **facts,
        "rounds": rounds, "load": spread([r["load"] for r in rounds]),
        "analyse_cpu_s": spread(ana), "analyse_process_cpu_s": spread([r["analyse"]["process_cpu"] for r in rounds]),
        "nvdisasm_cpu_s": spread(dis),
    }
    if timed_nvcc:
        nv = [r["nvcc"]["cpu_s"] for r in rounds]
        row["nvcc_cpu_s"] = spread(nv)
        row["nvcc_wall_s"] = spread([r["nvcc"]["wall_s"] for r in rounds])
        row["analyse_fraction"] = spread([a / n for a, n in zip(ana, nv)])
        row["analyse_and_nvdisasm_fraction"] = spread([(a + d) / n for a, d, n in zip(ana, dis, nv)])
    else:
        compile_s = float(entry["compile_seconds"])
        row["nvcc_manifest_wall_s"] = compile_s
        row["analyse_fraction"] = spread([a / compile_s for a in ana])
        row["analyse_and_nvdisasm_fraction"] = spread([(a + d) / compile_s for a, d in zip(ana, dis)])
    row["within_goal"] = row["analyse_fraction"]["max"] <= GOAL
    if with_phases:
        row["phases_cpu_s"] = phases(ptx, text, arch, entry.get("file", entry["id"]), repeat)
    return row


def _s(d: dict, digits: int = 2) -> str:
    return f"{d['median']:.{digits}f} ({d['min']:.{digits}f}-{d['max']:.{digits}f})"


def _pct(d: dict) -> str:
    return f"{100 * d['median']:.1f}% (max {100 * d['max']:.1f}%)"


def table(rows: list[dict]) -> str:
    out = ["| kernel | PTX / SASS (MB) | functions | nvcc CPU s | nvdisasm CPU s | analyse CPU s | analyse / nvcc | "
           "analyse + nvdisasm / nvcc |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        nvcc = (_s(r["nvcc_cpu_s"]) + " (timed now)" if "nvcc_cpu_s" in r
                else f"{r['nvcc_manifest_wall_s']:.0f} (manifest, wall)")
        out.append(f"| {r['id']} ({r['file']}, {r['arch']}) | {r['ptx_bytes'] / 1e6:.1f} / {r['sass_bytes'] / 1e6:.1f} | "
                   f"{r['functions']} | {nvcc} | {_s(r['nvdisasm_cpu_s'])} | {_s(r['analyse_cpu_s'])} | "
                   f"{_pct(r['analyse_fraction'])} | {_pct(r['analyse_and_nvdisasm_fraction'])} |")
    return "\n".join(out)


def phase_table(rows: list[dict]) -> str:
    rows = [r for r in rows if "phases_cpu_s" in r]
    if not rows:
        return ""
    labels = list(dict.fromkeys(k for r in rows for k in r["phases_cpu_s"]))
    out = ["", "Phases (CPU ms per analysis, in one process, warm; `--phases`):", "",
           "| phase | " + " | ".join(r["id"] for r in rows) + " |", "|---|" + "---|" * len(rows)]
    out += [f"| {k} | " + " | ".join(f"{1000 * r['phases_cpu_s'].get(k, 0):.0f}" for r in rows) + " |" for k in labels]
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--realk", type=Path, default=Path("/work/realk"), help="folder with manifest.json (default /work/realk)")
    ap.add_argument("--repeat", type=int, default=3, help="rounds per kernel (default 3)")
    ap.add_argument("--only", nargs="*", default=None, help="ids of the manifest to measure (default: all with PTX and cubin)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "sass" / "sass_real.json")
    ap.add_argument("--phases", action="store_true",
                    help="also time each phase of the analysis (in this process, timers around its top-level calls)")
    ap.add_argument("--time-nvcc", nargs="*", default=[], metavar="ID",
                    help="ids whose nvcc compile is timed in each round (compile_commands.json of the realk folder)")
    args = ap.parse_args()
    manifest = json.loads((args.realk / "manifest.json").read_text())
    load_start = os.getloadavg()
    rows = []
    for e in manifest:
        if args.only and e["id"] not in args.only:
            continue
        if not (e.get("ptx") and e.get("cubin") and e.get("compile_seconds")):
            continue
        if not (args.realk / e["ptx"]).is_file() or not (args.realk / e["cubin"]).is_file():
            continue
        print(f"{e['id']} ...", file=sys.stderr, flush=True)
        rows.append(one(args.realk, e, args.repeat, e["id"] in args.time_nvcc, args.phases))
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    doc = {
        "what": "CPU seconds (user+sys) of fuzzgpu sass's analysis (parse + checks + PDL review: toolchain.analysed, "
                "first call in a fresh process) and of nvdisasm, against nvcc's compile of the same translation unit "
                "(timed in the same rounds with --time-nvcc: CPU of nvcc and its children; else the manifest's "
                "compile_seconds, wall)",
        "goal": f"analyse / nvcc <= {GOAL:.0%}",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "head": head,
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
                    "loadavg_start": load_start, "loadavg_end": os.getloadavg()},
        "toolchain": toolchain.toolchain_id(),
        "repeat": args.repeat,
        "kernels": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    md = args.out.with_suffix(".md")
    m = doc["machine"]
    md.write_text(f"# fuzzgpu sass on real kernels: analysis time against nvcc\n\n{doc['what']}.\n"
                  f"Goal: {doc['goal']}. {doc['date']}, {head}, {m['platform']}, {m['cpus']} CPUs, load average "
                  f"{load_start[0]:.1f} at the start, {m['loadavg_end'][0]:.1f} at the end; {args.repeat} rounds per kernel: "
                  "median (least-largest).\n\n"
                  f"{table(rows)}\n" + phase_table(rows))
    print(table(rows) + phase_table(rows))
    return 0 if all(r["within_goal"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
