#!/usr/bin/env python3
"""What the disassembly ``fuzzgpu sass`` runs after nvcc costs, and what its variants would save:
``nvdisasm -c -gi`` (what ``toolchain.disassemble`` runs) against the same without line information
(``-g``, none), without nvdisasm's dataflow analysis (``-ndf``), ``cuobjdump -sass``, and only the
functions whose PTX has a synchronisation point (``-fun``, their ELF symbol indices from
``readelf -s``).  For each variant and kernel of a realk folder (``manifest.json``): the CPU time of
the tool (user+sys, median of ``--repeat``), whether its listing is the same text, and whether
``fuzzgpu sass``'s report on it is the same (``toolchain.analysed``, ``Report.to_dict``).  Writes
``bench/results/sass/sass_disasm.json`` and a table beside it (``.md``).

    python3 bench/sass_disasm.py --only deepep-567632d-intranode fa3-0251105a-fwd-hdim64-bf16
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fuzzgpu.sass import parse_ptx, toolchain  # noqa: E402


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _run(argv: list[str]) -> tuple[float, str]:
    c0 = _cpu()
    out = subprocess.run(argv, capture_output=True, text=True).stdout
    return _cpu() - c0, out


def _sync_function_indices(cubin: Path, ptx_text: str) -> str:
    """The ELF symbol indices (``readelf -s``) of the functions whose PTX has a synchronisation point."""
    with_syncs = {f.name for f in parse_ptx(ptx_text) if any(e.sync is not None for e in f.events)}
    out = subprocess.run(["readelf", "-sW", str(cubin)], capture_output=True, text=True, check=True).stdout
    idx = [line.split()[0].rstrip(":") for line in out.splitlines()
           if " FUNC " in line and line.split()[-1] in with_syncs and " UND " not in line]
    return ",".join(idx)


def variants(cubin: Path, ptx_text: str) -> dict[str, list[str]]:
    nvd, cuo = toolchain.require_tool("nvdisasm"), toolchain.require_tool("cuobjdump")
    arg = str(cubin)
    out = {
        "nvdisasm -c -gi (used)": [nvd, "-c", "-gi", arg],
        "nvdisasm -c -g": [nvd, "-c", "-g", arg],
        "nvdisasm -c": [nvd, "-c", arg],
        "nvdisasm -c -gi -ndf": [nvd, "-c", "-gi", "-ndf", arg],
        "cuobjdump -sass": [cuo, "-sass", arg],
    }
    fun = _sync_function_indices(cubin, ptx_text)
    if fun:
        out["nvdisasm -c -gi -fun (functions with a sync point)"] = [nvd, "-c", "-gi", "-fun", fun, arg]
    return out


def one(realk: Path, e: dict, repeat: int) -> dict:
    ptx_text = (realk / e["ptx"]).read_text()
    cubin = realk / e["cubin"]
    rows = {}
    base_text, base_report = "", None
    for name, argv in variants(cubin, ptx_text).items():
        cpus, text = [], ""
        for _ in range(repeat):
            c, text = _run(argv)
            cpus.append(c)
        rep = toolchain.analysed(ptx_text, text, e["arch"], e.get("file", e["id"])).to_dict()
        if base_report is None:
            base_text, base_report = text, rep
        rows[name] = {"cpu_s": round(statistics.median(cpus), 3), "all_cpu_s": [round(c, 3) for c in cpus],
                      "same_listing": text == base_text, "same_report": rep == base_report}
    return {"id": e["id"], "arch": e["arch"], "cubin_bytes": cubin.stat().st_size, "variants": rows}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--realk", type=Path, default=Path("/work/realk"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "sass" / "sass_disasm.json")
    args = ap.parse_args()
    load = os.getloadavg()
    rows = []
    for e in json.loads((args.realk / "manifest.json").read_text()):
        if (args.only and e["id"] not in args.only) or not (e.get("ptx") and e.get("cubin")):
            continue
        print(f"{e['id']} ...", file=sys.stderr, flush=True)
        rows.append(one(args.realk, e, args.repeat))
    doc = {"what": "CPU seconds (user+sys, median) of the disassembler variants; same listing / same fuzzgpu sass "
                   "report as nvdisasm -c -gi", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "loadavg_start": load, "loadavg_end": os.getloadavg(), "repeat": args.repeat,
           "toolchain": toolchain.toolchain_id(), "kernels": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    lines = ["| kernel (cubin KB) | variant | CPU s | same listing | same report |", "|---|---|---|---|---|"]
    for r in rows:
        for name, v in r["variants"].items():
            lines.append(f"| {r['id']} ({r['cubin_bytes'] // 1024}) | {name} | {v['cpu_s']:.2f} | "
                         f"{'yes' if v['same_listing'] else 'no'} | {'yes' if v['same_report'] else 'NO'} |")
    args.out.with_suffix(".md").write_text(
        f"# The disassembly's variants\n\n{doc['what']}; {doc['date']}, load average {load[0]:.1f} at the start, "
        f"{doc['loadavg_end'][0]:.1f} at the end; {args.repeat} runs each.\n\n" + "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
