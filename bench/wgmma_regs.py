#!/usr/bin/env python3
"""Class F (issue 32: a wgmma register operand accessed in flight) compiled and, with ``--run``, run.

    PYTHONPATH=. python3 bench/wgmma_regs.py --out bench/results/wgmma-regs             # SASS only (nvcc)
    PYTHONPATH=. python3 bench/wgmma_regs.py --out $OUT --run --seconds 60                # + an sm_90 GPU
    PYTHONPATH=. python3 bench/wgmma_regs.py --rejudge RUN.json --out DIR                  # the counts, today's verdicts

For each program of tests/litmus/race-wgmma: its kernel (fuzzgpu.codegen.wgmma_regs: one warpgroup
runs the thread, the wgmma in its register-A form) compiled by nvcc for sm_90a, ptxas's messages
kept, the SASS disassembled and checked (fuzzgpu.sass.wgmma_regs.in_flight: a write of the MMA's A
fragment or an access of its accumulator before the WARPGROUP.DEPBAR covering it) -- the static
check's finding, never "clean" for what it did not look at.  With ``--run``: the kernel launched over
and over for an equal share of ``--seconds`` (CTAs of 128 threads, every thread one outcome), each
outcome counted next to the oracle's verdict (model.race: racy / race-free / forbidden).

Writes ``wgmma-regs.json`` and ``wgmma-regs.md`` into ``--out``.  ``--rejudge`` reads a run's JSON and
writes it again with the oracle's verdicts of today's model (the counts unchanged; ``verdict_at_run``
keeps the old verdict of each outcome where it differs).  Exit 1 if a forbidden outcome
was seen, 3 when ``--run`` finds no usable GPU, else 0."""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fuzzgpu import litmus  # noqa: E402
from fuzzgpu.codegen.wgmma_regs import THREADS, b_words, kernel_source, keys  # noqa: E402
from fuzzgpu.ir import eval_expr  # noqa: E402
from fuzzgpu.model.race import analyse_races  # noqa: E402
from fuzzgpu.sass.sass_parser import parse_sass  # noqa: E402
from fuzzgpu.sass.toolchain import disassemble, require_tool  # noqa: E402
from fuzzgpu.sass.wgmma_regs import in_flight, mma_windows  # noqa: E402

CATALOGUE = ROOT / "tests" / "litmus" / "race-wgmma"
#: CTAs per launch (132 SMs of an H200, 16 each)
BLOCKS = 132 * 16


def compiled(p, tmp: Path) -> tuple[bytes, str, str]:
    """(cubin, ptxas's messages, SASS text) of ``p``'s kernel for sm_90a."""
    src, cubin = tmp / f"{p.name}.cu", tmp / f"{p.name}.cubin"
    src.write_text(kernel_source(p))
    r = subprocess.run([require_tool("nvcc"), "-arch=sm_90a", "-cubin", "-O3", "-o", str(cubin), str(src)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr)
    msgs = "\n".join(line for line in (r.stderr + r.stdout).splitlines() if "ptxas" in line)
    return cubin.read_bytes(), msgs, disassemble(cubin)


def sass_finding(sass: str) -> dict:
    fns = parse_sass(sass)
    windows = [(m, w) for fn in fns for m, w in mma_windows(fn)]
    found = [f.describe() for fn in fns for f in in_flight(fn)]
    return {"mmas": [m.text.strip() for m, _ in windows],
            "windows": [[i.text.strip() for i in w] for _, w in windows],
            "in_flight": found,
            "verdict": ("hazard in the SASS: " + "; ".join(found)) if found else
            (f"no register operand of the {len(windows)} register-A MMA(s) accessed before its WARPGROUP.DEPBAR"
             if windows else "no register-A MMA in the SASS: nothing checked")}


def run_gpu(p, cubin: bytes, seconds: float) -> dict:
    import numpy as np
    import pycuda.autoinit  # noqa: F401
    import pycuda.driver as drv

    names, outcome_keys = keys(p), [k.split(":", 1)[1] for k in p.outcome_keys()]
    fn = drv.module_from_buffer(cubin).get_function("fz_wgr")
    out = np.zeros(BLOCKS * len(names) * THREADS, dtype=np.uint32)
    locs = np.array([loc.init for loc in p.locations] or [0], dtype=np.uint32)
    bw = np.array(b_words(), dtype=np.uint32)
    d_out, d_locs, d_bw = drv.mem_alloc(out.nbytes), drv.to_device(locs), drv.to_device(bw)
    counts: dict[tuple, int] = {}
    launches, start = 0, time.time()
    while time.time() - start < seconds:
        fn(d_out, d_locs, d_bw, block=(THREADS, 1, 1), grid=(BLOCKS, 1))
        drv.Context.synchronize()
        drv.memcpy_dtoh(out, d_out)
        per = out.reshape(BLOCKS, len(names), THREADS)
        cols = [per[:, names.index(k), :].ravel() for k in outcome_keys]
        uniq, n = np.unique(np.stack(cols, axis=1), axis=0, return_counts=True)
        for row, c in zip(uniq, n):
            key = tuple(int(v) for v in row)
            counts[key] = counts.get(key, 0) + int(c)
        launches += 1
    ra = analyse_races(p)
    rows = []
    for vals, c in sorted(counts.items()):
        o = tuple(sorted((f"P0:{k}", v) for k, v in zip(outcome_keys, vals)))
        rows.append({"outcome": dict(o), "count": c, "verdict": ra.verdict(o), "witness": eval_expr(p.condition.expr, dict(o))})
    return {"launches": launches, "threads": launches * BLOCKS * THREADS, "seconds": round(time.time() - start, 1),
            "outcomes": rows}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--run", action="store_true", help="run each kernel on the GPU too (sm_90)")
    ap.add_argument("--seconds", type=float, default=60.0, help="GPU time shared by the programs")
    ap.add_argument("--rejudge", type=Path, help="a run's wgmma-regs.json: its outcomes judged by today's model")
    a = ap.parse_args()
    if a.rejudge:
        return rejudge(a.rejudge, a.out)
    progs = [litmus.parse_file(f) for f in sorted(CATALOGUE.glob("*.litmus"))]
    result: dict = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                    "command": " ".join(sys.argv), "nvcc": subprocess.run([require_tool("nvcc"), "--version"], capture_output=True,
                                                                           text=True).stdout.strip().splitlines()[-1],
                    "programs": []}
    if a.run:
        try:
            import pycuda.autoinit  # noqa: F401
            import pycuda.driver as drv
            result["gpu"] = drv.Device(0).name()
        except Exception as e:  # no GPU, no PyCUDA
            print(f"no usable GPU: {e}", file=sys.stderr)
            return 3
    bad = False
    with tempfile.TemporaryDirectory(prefix="wgmma-regs-") as tmp:
        for p in progs:
            cubin, msgs, sass = compiled(p, Path(tmp))
            row = {"program": p.name, "oracle": "racy" if analyse_races(p).is_racy else "race-free",
                   "ptxas": msgs, "sass": sass_finding(sass)}
            if a.run:
                row["gpu"] = run_gpu(p, cubin, a.seconds / len(progs))
                bad |= any(o["verdict"] == "forbidden" for o in row["gpu"]["outcomes"])
            result["programs"].append(row)
            print(p.name, row["oracle"], "|", row["sass"]["verdict"], "|", msgs or "(no ptxas message)", flush=True)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "wgmma-regs.json").write_text(json.dumps(result, indent=1) + "\n")
    (a.out / "wgmma-regs.md").write_text(render(result))
    return 1 if bad else 0


def rejudge(path: Path, out: Path) -> int:
    r = json.loads(path.read_text())
    for row in r["programs"]:
        ra = analyse_races(litmus.parse_file(CATALOGUE / f"{row['program']}.litmus"))
        for o in row.get("gpu", {}).get("outcomes", []):
            now = ra.verdict(tuple(sorted(o["outcome"].items())))
            if now != o["verdict"]:
                o["verdict_at_run"], o["verdict"] = o["verdict"], now
    r["rejudged"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    out.mkdir(parents=True, exist_ok=True)
    (out / path.name).write_text(json.dumps(r, indent=1) + "\n")
    (out / path.with_suffix(".md").name).write_text(render(r))
    return 1 if any(o["verdict"] == "forbidden" for p in r["programs"] for o in p.get("gpu", {}).get("outcomes", [])) else 0


def render(r: dict) -> str:
    lines = [f"# Class F (wgmma register operands in flight): SASS{' and ' + r['gpu'] if 'gpu' in r else ''}", "",
             f"{r['date']}, `{r['command']}`, {r['nvcc']}"
             + (f"; verdicts re-judged {r['rejudged']} by the model of that day (`--rejudge`; the counts are the run's)"
                if "rejudged" in r else ""), "",
             "| program | oracle | SASS check (sm_90a) | ptxas | GPU: witness count / threads (verdict) |",
             "|---|---|---|---|---|"]
    for p in r["programs"]:
        gpu = "not run"
        if "gpu" in p:
            g = p["gpu"]
            wit = [o for o in g["outcomes"] if o["witness"]]
            gpu = (f"{sum(o['count'] for o in wit)} / {g['threads']:,} ("
                   + (", ".join(sorted({o['verdict'] for o in wit})) or "witness not seen") + "); seen: "
                   + "; ".join(f"{o['outcome']} x{o['count']:,} {o['verdict']}"
                               + (f" (at the run: {o['verdict_at_run']})" if "verdict_at_run" in o else "") for o in g["outcomes"]))
        lines.append(f"| {p['program']} | {p['oracle']} | {p['sass']['verdict']} | {p['ptxas'] or '-'} | {gpu} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
