"""issue 27: corr3 by hand, outside the harness (bench/corr3_hand.cu), on the GPU with CuPy.

Two kernels: ``corr3_same`` (P0's two loads of y through one address) and ``corr3_offset`` (the
second through y + a run-time 0, as the harness emitted it before the fix).  y is reset to 0 before
each launch; the outcome (r1, r2) of every instance is counted on the device, and so are the
(6, 0) instances that fill a whole warp.  Prints, per kernel, the ptxas issue order of P0's loads
(cuobjdump -sass with line info is not needed: nvdisasm -g when present) and the counts.

    python3 bench/corr3_hand.py --instances 1e9 --spins 3000,30000 [--out F.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--instances", type=float, default=1e8)
    ap.add_argument("--spins", default="3000", help="comma-separated per-warp delays (cycles), one run of each")
    ap.add_argument("--blocks", type=int, default=2048)
    ap.add_argument("--out")
    a = ap.parse_args()
    import cupy as cp

    d = Path(tempfile.mkdtemp())
    cub = d / "corr3_hand.cubin"
    subprocess.run(["nvcc", "-cubin", "-arch=sm_90", "-O3", "-lineinfo", "-o", str(cub), str(HERE / "corr3_hand.cu")], check=True)
    sass = ""
    for tool in (["nvdisasm", "-c", "-g"], ["cuobjdump", "-sass"]):
        try:
            sass = subprocess.run([*tool, str(cub)], capture_output=True, text=True, check=True).stdout
            break
        except (OSError, subprocess.CalledProcessError):
            continue
    mod = cp.RawModule(path=str(cub))
    B, T = a.blocks, 256
    n = B * T
    launches = max(1, int(-(-a.instances // n)))
    y = cp.zeros(n, dtype=cp.uint32)
    x = cp.zeros(n, dtype=cp.uint32)
    out = cp.zeros(3 * n, dtype=cp.uint32)
    result: dict = {"instances_per_launch": n, "launches": launches, "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode()}
    for spin, name in [(int(s), k) for s in a.spins.split(",") for k in ("corr3_same", "corr3_offset")]:
        k = mod.get_function(name)
        counts = cp.zeros(4, dtype=cp.uint64)
        whole = cp.zeros(1, dtype=cp.uint64)
        sms = cp.zeros(256, dtype=cp.uint64)
        t0 = time.perf_counter()
        for i in range(launches):
            y.fill(0)
            k((B,), (T,), (y, x, out, cp.uint32(spin), cp.uint32(i * 2654435761 & 0xFFFFFFFF)))
            o = out.reshape(n, 3)
            code = (o[:, 0] == 6).astype(cp.int32) * 2 + (o[:, 1] == 6).astype(cp.int32)
            counts += cp.bincount(code, minlength=4).astype(cp.uint64)
            bad = (code == 2).reshape(-1, 32)
            whole += cp.count_nonzero(bad.all(axis=1)).astype(cp.uint64)
            sm = (o[:, 2] >> 24)[code == 2].astype(cp.int32)
            if sm.size:
                sms += cp.bincount(sm, minlength=256).astype(cp.uint64)[:256]
        cp.cuda.runtime.deviceSynchronize()
        c = [int(v) for v in counts.get()]
        r = {"(0,0)": c[0], "(0,6)": c[1], "(6,0)": c[2], "(6,6)": c[3], "whole_warps_(6,0)": int(whole.get()[0]),
             "sms_with_(6,0)": int(cp.count_nonzero(sms).get()), "seconds": round(time.perf_counter() - t0, 2)}
        result[f"{name} spin {spin}"] = r
        print(name, "spin", spin, json.dumps(r), flush=True)
    # the issue order of P0's loads (source lines 17: ld.volatile r1, 18: ld.relaxed.sys r2, 19: x)
    orders = {}
    cur_fn, cur_line = None, None
    import re
    for line in sass.splitlines():
        m = re.match(r"^(corr3_\w+):", line.strip())
        if m:
            cur_fn = m.group(1)
        m = re.search(r"//## File .*line (\d+)", line)
        if m:
            cur_line = int(m.group(1))
        if "LDG" in line and cur_fn:
            orders.setdefault(cur_fn, []).append(f"line {cur_line}: {line.strip()}")
    result["sass_loads"] = orders
    for fn, ls in orders.items():
        print(fn, *ls, sep="\n  ")
    if a.out:
        Path(a.out).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
