#!/usr/bin/env python3
"""wgmma operands written by generic stores, on an sm_90 GPU (issue 16): one device call, <= 90 s.

    PYTHONPATH=. python3 bench/wgmma_h200.py --out $OUT [--seconds 60] [--smoke]
    python3 bench/wgmma_h200.py --render bench/results/harness/wgmma-h200.json     # JSON -> markdown

1. The mapping self-check (fuzzgpu.backends.wgmma_selftest.run_selftest): every thread's wgmma returns its
   own slot's word (descriptor strides, B, accumulator fragment) -- without it no count below means
   anything, so the script stops (exit 3) if it fails.
2. Every tests/litmus/async-proxy/WGMMA-*.litmus (and TMA-reduce-*.litmus: a bulk reduction of
   a generically written shared word) under three stress settings, each cell given an
   equal share of ``--seconds`` (a short calibration run sizes it): the stale outcome (the
   program's ``exists`` condition) counted next to the oracle's verdict on it, the written value's
   count (a zero stale count is only a measurement when the written value was read), and outcomes
   holding a value no store wrote (``unwritten``: a harness/hardware fault, e.g. a torn word).

Writes ``wgmma-h200.json`` (as each cell finishes) and ``wgmma-h200.md`` into ``--out``.  Exit 1
if a forbidden outcome or an unwritten value was seen, 3 without a usable GPU, else 0.
Needs PyCUDA and cuda-bindings (the cuda backend), nvcc for sm_90a; no network.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fuzzgpu.backends.wgmma_selftest import run_selftest  # noqa: E402
from fuzzgpu import litmus  # noqa: E402
from fuzzgpu.backends.base import RunConfig  # noqa: E402
from fuzzgpu.errors import UserError  # noqa: E402
from fuzzgpu.ir import eval_expr  # noqa: E402
from fuzzgpu.model import judge  # noqa: E402

ASYNC = ROOT / "tests" / "litmus" / "async-proxy"
#: the stress settings (RunConfig knobs), simplest first
CONFIGS = {
    "plain": dict(),
    "barrier+spin1000": dict(barrier=True, spin=1000),
    "barrier+stress256": dict(barrier=True, stress=256),
}
MAX_INSTANCES = 2_000_000_000


def _witness(p) -> dict[str, int]:
    c = p.condition.expr
    return {str(c.lhs): c.rhs}


def _cell(backend, p, compiled, knobs: dict, seconds: float, verdict: str) -> dict:
    calib = backend.run(p, RunConfig(instances=2_000_000, **knobs), compiled=compiled)
    rate = calib.instances / max(calib.seconds, 1e-6)
    n = int(min(MAX_INSTANCES, max(2_000_000, rate * seconds)))
    h = backend.run(p, RunConfig(instances=n, **knobs), compiled=compiled)
    cond = p.condition.expr
    stale = h.matching(lambda d: eval_expr(cond, d))
    new = h.matching(lambda d: not eval_expr(cond, d))
    unwritten = sum(c for o, c in h.counts if any(v is None for _, v in o))
    if verdict == "forbidden":
        agree = "agrees (0 stale)" if stale == 0 else "FORBIDDEN OUTCOME SEEN"
    else:
        agree = f"weak seen, rate {stale / h.instances:.3g}" if stale else f"measured zero in {h.instances:.3g}"
    return {"instances": h.instances, "timeouts": h.timeouts, "stale": stale, "written_value_read": new,
            "unwritten": unwritten, "seconds": round(h.seconds, 3), "rate": h.instances / max(h.seconds, 1e-6),
            "agreement": agree}


def render(data: dict) -> str:
    lines = [f"# wgmma operand reads on {data.get('device', '?')}", "",
             f"{data.get('date', '')}; `bench/wgmma_h200.py`; stale = the program's `exists` outcome (the operand "
             "read the initial value); verdict = the oracle's on it.", "",
             f"Mapping self-check: {data.get('selftest', '?')}", "",
             "| program | stress | oracle | instances | stale | written value read | unwritten | agreement |",
             "|---|---|---|---:|---:|---:|---:|---|"]
    for r in data.get("cells", []):
        lines.append(f"| {r['program']} | {r['config']} | {r['verdict']} | {r['instances']:.3g} | {r['stale']} | "
                     f"{r['written_value_read']} | {r['unwritten']} | {r['agreement']} |")
    lines += ["", f"Total device-side run time: {data.get('seconds', 0):.1f} s."]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.environ.get("OUT", "out"))
    ap.add_argument("--seconds", type=float, default=60.0, help="GPU seconds shared by the cells (default 60)")
    ap.add_argument("--smoke", action="store_true", help="a few seconds in all")
    ap.add_argument("--render", metavar="JSON", help="print the markdown of a results file and exit")
    a = ap.parse_args()
    if a.render:
        sys.stdout.write(render(json.loads(Path(a.render).read_text())))
        return 0
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    try:
        from fuzzgpu.backends.cuda import CudaBackend, compile_programs

        backend = CudaBackend()
    except UserError as e:
        print(f"wgmma_h200: {e}", file=sys.stderr)
        return 3
    if backend.arch not in ("sm_90", "sm_90a"):
        print(f"wgmma_h200: wgmma needs an sm_90 device, not {backend.arch}", file=sys.stderr)
        return 3
    data: dict = {"device": backend.describe(), "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                  "cells": []}
    ok, n = run_selftest(backend)
    data["selftest"] = f"{ok}/{n} slots read back their own word"
    print("self-check:", data["selftest"], flush=True)
    path = out / "wgmma-h200.json"
    if ok != n:
        path.write_text(json.dumps(data, indent=1))
        print("wgmma_h200: the mapping self-check failed; no count would mean anything", file=sys.stderr)
        return 3
    progs = [litmus.parse_file(f) for f in sorted(ASYNC.glob("WGMMA-*.litmus")) + sorted(ASYNC.glob("TMA-reduce-*.litmus"))]
    compiled = compile_programs(progs, backend.arch)
    seconds = 3.0 if a.smoke else a.seconds
    share = seconds / (len(progs) * len(CONFIGS))
    bad = False
    for p, c in zip(progs, compiled):
        verdict = judge(p, _witness(p)).verdict
        for name, knobs in CONFIGS.items():
            r = {"program": p.name, "config": name, "verdict": verdict, **_cell(backend, p, c, knobs, share, verdict)}
            bad = bad or (verdict == "forbidden" and r["stale"] > 0) or r["unwritten"] > 0
            data["cells"].append(r)
            data["seconds"] = time.monotonic() - t0
            path.write_text(json.dumps(data, indent=1))
            print(f"{p.name:38s} {name:18s} {verdict:9s} stale {r['stale']:>10} / {r['instances']:.3g}  "
                  f"new {r['written_value_read']:.3g}  unwritten {r['unwritten']}  {r['agreement']}", flush=True)
    data["seconds"] = time.monotonic() - t0
    path.write_text(json.dumps(data, indent=1))
    (out / "wgmma-h200.md").write_text(render(data))
    backend.close()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
