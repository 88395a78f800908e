"""Which programs the harness's repeated-load defect could touch (issue 27), and what ptxas did to
them: every catalogue test (tests/litmus/**) and corpus entry (corpus/*.litmus) with a thread that
loads one location twice or more, the old emission (every repeated load through address +
k * fz_zero) against the current one (only locations read by weak loads alone: emit.spread_locations).

For each such program, the ptxas issue order (nvdisasm -g line info) of every repeated load of the
harness kernel, old and new: "REVERSED" where a later load of the location is issued before an
earlier one.  CPU only (nvcc, nvdisasm).

    python3 bench/repeated_loads.py [--list] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from fuzzgpu import codegen, litmus
from fuzzgpu.codegen import emit
from fuzzgpu.ir import Load
from fuzzgpu.sass import find_tool

ROOT = Path(__file__).resolve().parent.parent


def repeated(p) -> list[tuple[int, str]]:
    """(role, location) pairs loaded twice or more by one thread."""
    out = []
    for k, t in enumerate(p.threads):
        locs = [p.physical(i.loc) for i in t.code if isinstance(i, Load)]
        out += [(k, loc) for loc in sorted(set(locs)) if locs.count(loc) > 1]
    return out


def issue_orders(p, old: bool) -> dict[tuple[int, str], list[int]]:
    """Per repeated (role, location): the program-order index of each of its loads, in SASS issue order."""
    saved = emit.spread_locations
    if old:
        emit.spread_locations = lambda prog, t: frozenset(loc.name for loc in prog.locations)  # the old emission
        codegen.harness.spread_locations = emit.spread_locations
    try:
        src, spec = codegen.harness_source(p)
    finally:
        emit.spread_locations = saved
        codegen.harness.spread_locations = saved
    lines = src.splitlines()
    with tempfile.TemporaryDirectory() as d:
        cu, cub = Path(d) / "k.cu", Path(d) / "k.cubin"
        cu.write_text(src)
        subprocess.run(["nvcc", "-cubin", "-arch=sm_90", "-O3", "-w", "-lineinfo", "-o", str(cub), str(cu)], check=True)
        sass = subprocess.run([find_tool("nvdisasm"), "-c", "-g", str(cub)], capture_output=True, text=True, check=True).stdout
    out = {}
    for k, loc in repeated(p):
        gidx = [n for n in spec.global_locs].index(loc) if loc in spec.global_locs else None
        if gidx is None:
            continue
        addr = f"k{k}_a{gidx}"
        want = [i + 1 for i, line in enumerate(lines) if re.search(r'asm volatile\("ld\.', line) and re.search(rf"\b{addr}\b", line)]
        seq, cur = [], None
        for line in sass.splitlines():
            m = re.search(r"//## File .*line (\d+)", line)
            if m:
                cur = int(m.group(1))
                continue
            if re.search(r"\b(LDG|LD)\.", line) and cur in want:
                seq.append(want.index(cur))
        out[(k, loc)] = seq
    return out


def programs() -> list[Path]:
    files = sorted((ROOT / "tests" / "litmus").rglob("*.litmus")) + sorted((ROOT / "corpus").glob("*.litmus"))
    keep = []
    for f in files:
        try:
            p = litmus.parse_file(f)
            codegen.check_runnable(p)
        except Exception:  # not runnable on the GPU harness, or a deliberately bad test
            continue
        if repeated(p):
            keep.append(f)
    return keep


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--list", action="store_true", help="only list the programs")
    ap.add_argument("--out")
    a = ap.parse_args()
    rows = []
    for f in programs():
        rel = str(f.relative_to(ROOT))
        if a.list:
            print(rel)
            continue
        p = litmus.parse_file(f)
        roles_ctas = len({(t.placement.gpu, t.placement.cluster_id, t.placement.cta) for t in p.threads})
        row = {"file": rel, "roles": len(p.threads), "ctas": roles_ctas}
        for tag, old in (("old", True), ("new", False)):
            orders = issue_orders(p, old)
            row[tag] = {f"P{k}:{loc}": seq for (k, loc), seq in orders.items()}
            row[tag + "_reversed"] = any(seq != sorted(seq) for seq in orders.values())
        rows.append(row)
        print(f"{rel:70s} roles {row['roles']} ctas {row['ctas']}  old {'REVERSED' if row['old_reversed'] else 'in order'}"
              f"  new {'REVERSED' if row['new_reversed'] else 'in order'}  {row['old']} -> {row['new']}", flush=True)
    if a.out:
        Path(a.out).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
