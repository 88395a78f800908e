#!/usr/bin/env python3
"""Why do fuzzgpu's UNSTRESSED Table-1 cells read 2.5-8x (MPcta s32: ~235x) higher than the probe's?

One script for the GPU machine, one device call (about 100-150 s on an H200):

    python3 bench/table1_probe.py --out $OUT            # build, SASS-check, run everything
    python3 bench/table1_probe.py --dry-run --out DIR   # no GPU: build the replica, SASS-check it,
                                                        # generate and compile our harness sources
    python3 bench/table1_probe.py --render DIR/table1-probe.json   # JSON -> table again

It
  1. builds bench/probe_replica.cu (a stand-alone replica of the probe's harness method, from
     facts/h200-litmus-probe.md "Method") with nvcc and checks in its SASS that the test accesses
     stay in program order;
  2. runs the replica for MP / SB / LB relaxed.gpu and MP rel/acq.cta with weak data ("MPcta") on
     the cells plain s1, plain s32 and barrier s1, probe-faithful; then on the plain cells with each
     toggle that moves the replica toward fuzzgpu's harness ALONE (--graph, --devparams,
     --inline-check, --samekernel, --twobuf, --tail) and with ALL of them;
  3. runs fuzzgpu's harness (CudaBackend + tests/litmus/h200/T1-*.litmus) on the same plain cells with
     the toggles RunConfig offers without code changes: default, graphs=False, inline_check=False,
     both; and barrier s1 as a reference (run after the probe-faithful replica cells and before
     the replica's toggles, which a --budget-s wall-time budget may cut short);
  4. writes $OUT/table1-probe.json (after every run, so a time-out keeps what finished) and prints a
     table with the probe's figure and the ratio.

A failing variant is recorded with its error and the rest go on.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import TABLE1  # noqa: E402 -- bench/harness.py, beside this script

REPLICA_SRC = ROOT / "bench" / "probe_replica.cu"
T1_DIR = ROOT / "tests" / "litmus" / "h200"
TESTS = {  # short name -> litmus file stem (ours)
    "MP": "T1-mp_relaxed_gpu",
    "SB": "T1-sb_relaxed_gpu",
    "LB": "T1-lb_relaxed_gpu",
    "MPcta": "T1-mp_relacq_cta",
}
CELLS = {
    "plain_s1": dict(stride=1, barrier=False),
    "plain_s32": dict(stride=32, barrier=False),
    "barrier_s1": dict(stride=1, barrier=True),
}
# facts/h200-litmus-probe.md Table 1, the probe's cells (bench/harness.py holds the table)
PROBE = {cell: TABLE1[cell] for cell in CELLS}
TOGGLES = ["graph", "devparams", "inline-check", "samekernel", "twobuf", "tail", "tight", "stl"]
# the test body's memory operations in SASS order, per test (replica kernels)
EXPECT_SASS = {
    "MP": ["STG.E.STRONG.GPU", "STG.E.STRONG.GPU", "LDG.E.STRONG.GPU", "LDG.E.STRONG.GPU"],
    "SB": ["STG.E.STRONG.GPU", "LDG.E.STRONG.GPU", "STG.E.STRONG.GPU", "LDG.E.STRONG.GPU"],
    "LB": ["LDG.E.STRONG.GPU", "STG.E.STRONG.GPU", "LDG.E.STRONG.GPU", "STG.E.STRONG.GPU"],
    "MPcta": ["STG.E", "MEMBAR.ALL.CTA", "STG.E.STRONG.SM", "LDG.E.STRONG.SM", "LDG.E"],
}
TEST_INDEX = {"MP": 0, "SB": 1, "LB": 2, "MPcta": 3}


def log(*a) -> None:
    print(*a, flush=True)


class Bench:
    def __init__(self, out: Path, instances: float, dry: bool, smoke: bool, budget_s: float = 0) -> None:
        self.out = out
        self.budget_s = budget_s
        self.instances = instances
        self.dry = dry
        self.smoke = smoke
        import tempfile

        self.build_dir = Path(tempfile.mkdtemp(prefix="probe-replica-"))  # binaries stay out of $OUT
        self.exe = self.build_dir / "probe_replica"
        self.res: dict = {
            "command": " ".join(sys.argv),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "host": platform.node(),
            "instances_per_run": instances,
            "probe": PROBE,
            "replica": [],
            "ours": [],
            "errors": [],
        }
        self.t_start = time.perf_counter()

    def save(self) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        self.res["wall_seconds"] = round(time.perf_counter() - self.t_start, 2)
        tmp = self.out / "table1-probe.json.tmp"
        tmp.write_text(json.dumps(self.res, indent=1, default=str))
        os.replace(tmp, self.out / "table1-probe.json")

    def error(self, where: str, e: BaseException | str) -> None:
        msg = e if isinstance(e, str) else f"{type(e).__name__}: {e}"
        log(f"!! {where}: {msg}")
        self.res["errors"].append({"where": where, "error": msg})
        self.save()

    # ---- 1. build + SASS ---------------------------------------------------------------
    def build(self) -> bool:
        from fuzzgpu.backends import cuda as cudab

        self.out.mkdir(parents=True, exist_ok=True)
        try:
            nvcc = cudab.nvcc_path()
            self.res["nvcc"] = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
            t0 = time.perf_counter()
            cmd = [nvcc, "-O3", "-arch=sm_90", "-o", str(self.exe), str(REPLICA_SRC)]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            if r.returncode != 0:
                self.error("build", (r.stderr or r.stdout)[-2000:])
                return False
            self.res["build_seconds"] = round(time.perf_counter() - t0, 2)
            log(f"built {self.exe} in {self.res['build_seconds']} s")
            self.res["replica_sass"] = self.sass_check(self.exe)  # cuobjdump reads the executable
        except Exception as e:
            self.error("build", e)
            return False
        self.save()
        return True

    def sass_check(self, binary: Path) -> dict:
        """For every replica test-kernel variant: the test body's memory operations in SASS order
        must contain the expected sequence contiguously (among LDG/STG/MEMBAR of the test)."""
        from fuzzgpu.sass import find_tool

        tool = find_tool("cuobjdump")
        if not tool:
            return {"error": "cuobjdump not found"}
        text = subprocess.run([tool, "-sass", str(binary)], capture_output=True, text=True, timeout=120).stdout
        out: dict = {"cuobjdump": tool, "kernels": {}}
        funcs = re.split(r"\n\s*Function : ", text)
        ok_all = True
        for f in funcs[1:]:
            name = f.split("\n", 1)[0].strip()
            m = re.match(r"_Z13litmus_kernelILi(\d)ELb(\d)ELb(\d)ELb(\d)ELb(\d)ELb(\d)EEv4Args", name)
            if not m:
                continue
            test = [k for k, v in TEST_INDEX.items() if v == int(m.group(1))][0]
            ops = []
            for line in f.splitlines():
                mm = re.match(r"\s*/\*([0-9a-f]{4})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", line)
                if mm and re.match(r"(LDG|STG|MEMBAR|ATOMG|REDG)", mm.group(3)):
                    ops.append((mm.group(1), mm.group(3)))
            names = [o[1] for o in ops]
            exp = EXPECT_SASS[test]
            hit = None
            for i in range(len(names) - len(exp) + 1):
                if names[i : i + len(exp)] == exp:
                    hit = i
                    break
            key = f"{test} dev={m.group(2)} tail={m.group(3)} comb={m.group(4)} tight={m.group(5)} stl={m.group(6)}"
            out["kernels"][key] = {
                "in_order": hit is not None,
                "test_ops": [f"{o[1]}@{o[0]}" for o in ops[hit : hit + len(exp)]] if hit is not None else None,
                "all_mem_ops": [f"{o[1]}@{o[0]}" for o in ops][:40],
            }
            ok_all &= hit is not None
        out["all_in_order"] = ok_all and bool(out["kernels"])
        log(f"replica SASS: {len(out['kernels'])} test kernels, accesses in program order: {out['all_in_order']}")
        for k, v in out["kernels"].items():
            if "dev=0 tail=0 comb=0" in k:
                log(f"  {k}: {v['test_ops']}")
        return out

    # ---- 2. replica runs -------------------------------------------------------------------
    def replica(self, test: str, cell: str, toggles: list[str], n: float, label: str = "") -> None:
        knobs = CELLS[cell]
        cmd = [str(self.exe), "--test", test, "--stride", str(knobs["stride"]), "--instances", f"{n:.0f}"]
        if knobs["barrier"]:
            cmd.append("--barrier")
        cmd += [f"--{t}" for t in toggles]
        variant = "+".join(toggles) if toggles else "probe"
        if label:
            cmd += ["--label", label]
        row = {"source": "replica", "test": test, "cell": cell, "variant": variant, "cmd": " ".join(cmd[1:])}
        if self.over_budget():
            row["error"] = "skipped: over the --budget-s wall-time budget"
            self.add("replica", row)
            return
        t0 = time.perf_counter()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            row["process_wall_s"] = round(time.perf_counter() - t0, 3)
            lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
            if not lines:
                raise RuntimeError(f"rc={r.returncode}: {(r.stderr or r.stdout)[-800:]}")
            d = json.loads(lines[-1])
            if "error" in d:
                raise RuntimeError(f"rc={r.returncode}: {d['error']} {r.stderr[-400:]}")
            row.update(d)
            row["rc"] = r.returncode
            if r.returncode != 0:
                row["warning"] = f"rc={r.returncode} (sum_ok={d.get('sum_ok')}, epoch_ok={d.get('epoch_ok')})"
        except Exception as e:
            row["error"] = f"{type(e).__name__}: {e}"
            self.res["errors"].append({"where": f"replica {test} {cell} {variant}", "error": row["error"]})
        self.add("replica", row)

    def add(self, key: str, row: dict) -> None:
        ref = PROBE.get(row["cell"], {}).get(row["test"])
        row["probe_rate"] = ref
        if "rate" in row and ref:
            row["ratio_to_probe"] = row["rate"] / ref
        self.res[key].append(row)
        self.save()
        log(fmt_row(row))

    def over_budget(self) -> bool:
        return self.budget_s > 0 and time.perf_counter() - self.t_start > self.budget_s

    def run_replica_base(self) -> None:
        # probe-faithful on all three cells
        for cell in CELLS:
            for test in TESTS:
                self.replica(test, cell, [], self.instances)

    def run_replica_toggles(self) -> None:
        n = self.instances
        # all toggles together first (the most important comparison), then each alone
        for toggles in [TOGGLES] + [[t] for t in TOGGLES]:
            for cell in ("plain_s1", "plain_s32"):
                for test in TESTS:
                    self.replica(test, cell, toggles, n)
        # drift control: the probe-faithful MP/LB plain s1 again at the end
        for test in ("MP", "LB"):
            self.replica(test, "plain_s1", [], n, label="repeat")

    # ---- 3. our harness --------------------------------------------------------------------
    def programs(self):
        from fuzzgpu import litmus

        return {short: litmus.parse_file(T1_DIR / f"{stem}.litmus") for short, stem in TESTS.items()}

    def compile_ours(self):
        from fuzzgpu import codegen
        from fuzzgpu.backends import cuda as cudab

        progs = self.programs()
        t0 = time.perf_counter()
        src, _ = codegen.generate_module(list(progs.values()))
        (self.out / "ours_harness.cu").write_text(src)
        comp = cudab.compile_programs(list(progs.values()), "sm_90", batch=len(progs), jobs=1)
        self.res["ours_compile_seconds"] = round(time.perf_counter() - t0, 2)
        log(f"our harness: {len(comp)} programs compiled in {self.res['ours_compile_seconds']} s "
            f"(source in {self.out / 'ours_harness.cu'})")
        return progs, {c.program: c for c in comp}

    def run_ours(self) -> None:
        from fuzzgpu.backends.base import RunConfig
        from fuzzgpu.backends.cuda import CudaBackend
        from fuzzgpu.ir import Not, eval_expr

        progs, comp = self.compile_ours()
        be = CudaBackend()
        self.res["device"] = be.describe()
        log(self.res["device"])
        variants = {
            "default": {},
            "graphs=False": dict(graphs=False),
            "inline_check=False": dict(inline_check=False),
            "graphs=False+inline_check=False": dict(graphs=False, inline_check=False),
            # the launch number as a kernel argument: no control-word load before the test
            "host_epoch": dict(host_epoch=True),
            "host_epoch+inline_check=False": dict(host_epoch=True, inline_check=False),
        }
        plan = [(cell, v) for cell in ("plain_s1", "plain_s32") for v in variants] + [("barrier_s1", "default")]
        try:
            for cell, vname in plan:
                for test, p in progs.items():
                    knobs = dict(stride=CELLS[cell]["stride"], barrier=CELLS[cell]["barrier"], **variants[vname])
                    row = {"source": "ours", "test": test, "cell": cell, "variant": vname, "knobs": knobs}
                    try:
                        cfg = RunConfig(instances=int(self.instances), seed=12345, **knobs)
                        h = be.run_compiled(comp[p.name], cfg)
                        c = p.condition
                        expr = Not(c.expr) if c.quantifier == "forall" else c.expr
                        w = h.matching(lambda d, e=expr: eval_expr(e, d))
                        row.update({
                            "instances": h.instances, "weak": w, "rate": w / h.instances,
                            "seconds": round(h.seconds, 4), "inst_per_s": h.instances / h.seconds,
                            "timeouts": h.timeouts, "meta": dict(h.meta),
                        })
                    except Exception as e:
                        row["error"] = f"{type(e).__name__}: {e}"
                        self.res["errors"].append({"where": f"ours {test} {cell} {vname}", "error": row["error"]})
                    self.add("ours", row)
        finally:
            be.close()

    # ---- driver ----------------------------------------------------------------------------
    def main(self, sections: set[str]) -> None:
        try:
            self.res["nvidia_smi"] = subprocess.run(
                ["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu", "--format=csv,noheader"],
                capture_output=True, text=True, timeout=30).stdout.strip()
        except Exception as e:
            self.res["nvidia_smi"] = f"unavailable: {type(e).__name__}"
        ok = self.build()
        if self.dry:
            try:
                self.compile_ours()
            except Exception as e:
                self.error("compile ours", e)
            self.save()
            return
        # order: probe-faithful replica, our harness, then the replica's toggles (which the
        # --budget-s wall-time budget may cut short: skipped runs are recorded as such)
        for part, key, run, wanted in (("replica", "replica_base", self.run_replica_base, ok and "replica" in sections),
                                       ("ours", "ours", self.run_ours, "ours" in sections),
                                       ("replica toggles", "replica_toggles", self.run_replica_toggles, ok and "replica" in sections)):
            if wanted:
                t0 = time.perf_counter()
                try:
                    run()
                except Exception as e:
                    self.error(part, e)
                self.res[f"{key}_seconds"] = round(time.perf_counter() - t0, 2)
        self.save()
        render(self.res)


def fmt_row(r: dict) -> str:
    if "error" in r:
        return f"{r['source']:7s} {r['test']:5s} {r['cell']:10s} {r['variant']:34s} ERROR {r['error'][:160]}"
    ratio = r.get("ratio_to_probe")
    return (f"{r['source']:7s} {r['test']:5s} {r['cell']:10s} {r['variant']:34s} "
            f"{r['rate']:.3e} ({r['weak']}/{r['instances']:.2g})  probe {r['probe_rate']:.2e}  "
            f"x{ratio:.2f}  {r.get('inst_per_s', 0):.3g} inst/s" + (f"  {r['warning']}" if r.get("warning") else ""))


def render(res: dict) -> None:
    """A table per cell: rows = variant (replica ... ours ...), columns = tests (rate and ratio)."""
    rows = res.get("replica", []) + res.get("ours", [])
    for cell in CELLS:
        cr = [r for r in rows if r["cell"] == cell]
        if not cr:
            continue
        print(f"\n### {cell}  (probe: " + ", ".join(f"{t} {PROBE[cell][t]:.2e}" for t in TESTS) + ")")
        print("| source | variant | " + " | ".join(TESTS) + " | inst/s (MP) |")
        print("|---|---|" + "---|" * len(TESTS) + "---|")
        seen = []
        for r in cr:
            k = (r["source"], r["variant"], r.get("label", ""))
            if k not in seen:
                seen.append(k)
        for src, var, label in seen:
            cells = []
            tput = ""
            for t in TESTS:
                m = [r for r in cr if (r["source"], r["variant"], r.get("label", "")) == (src, var, label) and r["test"] == t]
                if not m:
                    cells.append("-")
                    continue
                r = m[-1]
                if "error" in r:
                    cells.append("error")
                    continue
                cells.append(f"{r['rate']:.2e} (x{r.get('ratio_to_probe', float('nan')):.2f})")
                if t == "MP":
                    tput = f"{r.get('inst_per_s', 0):.3g}"
            print(f"| {src} | {var}{' ' + label if label else ''} | " + " | ".join(cells) + f" | {tput} |")
    if res.get("errors"):
        print(f"\n{len(res['errors'])} error(s):")
        for e in res["errors"]:
            print(f"  {e['where']}: {e['error'][:300]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.environ.get("OUT", "table1-probe-out"), help="output folder (default $OUT)")
    ap.add_argument("--instances", type=float, default=2e8, help="instances per run (default 2e8)")
    ap.add_argument("--sections", default="replica,ours", help="comma list of: replica, ours")
    ap.add_argument("--dry-run", action="store_true",
                    help="no GPU: build the replica (+ SASS check) and generate/compile our harness sources")
    ap.add_argument("--smoke", action="store_true", help="1/100 of the instances (a quick functional check)")
    ap.add_argument("--budget-s", type=float, default=130,
                    help="wall-time budget: replica toggle runs after this many seconds are skipped "
                         "(recorded as skipped; 0 = no budget; default 130)")
    ap.add_argument("--render", metavar="JSON", help="print the tables of an existing table1-probe.json")
    a = ap.parse_args()
    if a.render:
        render(json.loads(Path(a.render).read_text()))
        return
    n = a.instances / 100 if a.smoke else a.instances
    b = Bench(Path(a.out), n, a.dry_run, a.smoke, a.budget_s)
    b.main(set(s.strip() for s in a.sections.split(",")))
    log(f"wall {time.perf_counter() - b.t_start:.1f} s; results in {Path(a.out) / 'table1-probe.json'}")


if __name__ == "__main__":
    main()
