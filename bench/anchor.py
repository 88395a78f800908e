#!/usr/bin/env python3
"""fuzzgpu beside the anchor's own harness on the same GPU (issue 31): cuda-litmus (Levine et al.,
PLDI'26 artifact, github.com/reeselevine/cuda-litmus).

The artifact has no licence: nothing of it is in this repository.  Given a copy of it (--src, e.g.
`git --git-dir=<mirror> archive HEAD | tar -x -C DIR`), this script

1. reads its results table (pldi26-output/results.csv: 1,306 variants, the base model's verdict
   and whether A100/H100/GH200 showed the weak outcome) and takes the 559 variants whose weak outcome
   the H100 or the GH200 showed ("seen") and the 98 the base model forbids (base UNSAT);
2. converts each variant into a fuzzgpu litmus test at run time, from the kernel source
   (kernels/<test>.cu): the variant's `#ifdef` block gives the memory orders and fence macros,
   the test body gives each thread's accesses, the check kernel's `weak` line the condition;
   libcu++ atomics map to PTX as libcu++ emits them (relaxed/release/acquire at the atomic's scope,
   SCOPE_DEVICE .gpu, SCOPE_BLOCK .cta, SCOPE_SYSTEM or none .sys; atomic_thread_fence(acq_rel /
   seq_cst, FENCE_SCOPE) fence.acq_rel / fence.sc at the fence scope); the threads' CTAs are the
   variant's TB_ grouping (TB_01_2: P0 and P1 in one CTA, P2 in another);
3. (GPU) runs fuzzgpu on each chosen variant for --gpu-s GPU-seconds: `fuzzgpu run --tune`'s
   search (fuzzgpu.stress.tune.tune_on_gpu, spend=True, aimed at the test's condition); exposed =
   an instance satisfied the condition;
4. (GPU) builds the anchor's own runner for the same variants (nvcc -D<TB> -D<SCOPE> -D<FENCE_SCOPE>
   -D<VARIANT> -rdc=true -arch sm_90 runner.cu kernels/<test>.cu) and runs it for the same time: half
   with its stored params/stress_params.txt, half with one random configuration of its tune.sh space
   (seeded); exposed = its weak counter > 0;
5. writes per family, side by side: variants exposed by each tool, by one only, observations of the
   forbidden variants (must be 0), and each tool's throughput (instances/s).

When not every variant fits in the time given, a seeded random sample per family is run
(--seen-per-family, --forbidden-per-family; the output says which and how many).

  python3 bench/anchor.py --src /tmp/cuda-litmus --dry-run --out /tmp/anchor     # CPU: convert, oracle, compile
  python3 bench/anchor.py --src cuda-litmus --out $OUT/anchor --gpu-s 1 --deadline-s 420
  python3 bench/anchor.py --out DIR --merge RUN_DIR...                        # one table from several runs

The runners can be built before, on a CPU machine with the same nvcc (the GPU machine's time then goes
to the runs alone): ``--dry-run --seen-per-family -1 --forbidden-per-family 0 --build-only -1 --bin DIR``
builds every seen variant's runner into DIR (the 559: 5 MB as a tar.xz); a GPU run given ``--bin DIR``
(default /tmp/anchor-bin) uses the runners it finds there and builds the others.

Exit 0; 1 when an outcome the fuzzgpu oracle forbids, or a forbidden variant's condition, was observed
by fuzzgpu; 3 without a GPU (GPU mode) or when the source cannot be read.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import csv
import json
import os
import random
import re
import subprocess
import sys
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fuzzgpu import litmus, model  # noqa: E402
from fuzzgpu.ir import Program, eval_expr  # noqa: E402

#: results.csv family prefix -> the artifact's kernel file
KERNEL = {"iriw": "iriw", "isa2": "isa2", "rwc": "rwc", "wrc": "wrc", "wwc": "wwc", "three_2w": "3.2w",
          "two_2w": "2+2w", "wrw_2w": "wrw+2w", "z6_3": "z6-3", "paper_example1": "paper-example1",
          "paper_example2": "paper-example2"}
SCOPE = {"SCOPE_DEVICE": "gpu", "SCOPE_BLOCK": "cta", "SCOPE_SYSTEM": "sys"}
FENCE_SCOPE = {"FENCE_SCOPE_DEVICE": "gpu", "FENCE_SCOPE_BLOCK": "cta", "FENCE_SCOPE_SYSTEM": "sys", "NO_FENCE": "sys"}
NAME = re.compile(r"^(?P<fam>.+?)_(?P<tb>TB_[0-9_]+?)_(?P<scope>SCOPE_[A-Z]+)_(?P<fs>FENCE_SCOPE_[A-Z]+|NO_FENCE)_(?P<var>[A-Z0-9_]+)$")  # a macro name: it becomes -D<var> and part of a file name


@dataclass(frozen=True)
class Variant:
    name: str
    family: str
    tb: str
    scope: str
    fence_scope: str
    variant: str
    base: str  # the artifact's base model: INSTANCE (allowed) or UNSAT (forbidden)
    seen: bool  # the H100 or the GH200 showed the weak outcome

    @property
    def forbidden(self) -> bool:
        return self.base == "UNSAT"


def read_variants(src: Path) -> list[Variant]:
    out = []
    with open(src / "pldi26-output" / "results.csv", newline="") as f:
        for row in csv.DictReader(f):
            m = NAME.match(row["test"])
            if m is None or m["fam"] not in KERNEL:
                continue
            out.append(Variant(row["test"], m["fam"], m["tb"], m["scope"], m["fs"], m["var"], row["base"],
                               row["h100"] == "seen" or row["gh200"] == "seen"))
    return out


# --------------------------------------------------------------------------------------------
# Conversion: the kernel source of one variant -> a litmus test
# --------------------------------------------------------------------------------------------

_ORDER = re.compile(r"cuda::memory_order\s+(\w+)\s*=\s*cuda::memory_order_(\w+)\s*;")
_FMACRO = re.compile(r"#define\s+(FENCE_?\d+)\(\)\s*(.*)$")
_STORE = re.compile(r"test_locations\[(\w+)_(\d)\]\.store\((\d+),\s*([\w:]+)\)")
_LOAD = re.compile(r"uint\s+(r\d+)\s*=\s*test_locations\[(\w+)_(\d)\]\.load\(([\w:]+)\)")
_FENCE_USE = re.compile(r"^(FENCE_?(\d+))\(\)")
_FENCE_LIT = re.compile(r"cuda::atomic_thread_fence\(cuda::memory_order_(\w+)(?:,\s*([\w:]+))?\)")
_COND = re.compile(r"\b(\w+)\s*==\s*(\d+)")


def _blocks(src: str, defines: set[str]) -> tuple[dict[str, str], dict[str, str]]:
    """The memory-order variables and fence macros of the test kernel under ``defines``: in each
    `#ifdef` chain before DEFINE_IDS the block of a define given, else the chain's `#else`."""
    head = src.split("DEFINE_IDS();")[0]
    chains: list[dict[str, tuple[dict[str, str], dict[str, str]]]] = []
    cur: str | None = None
    for line in head.splitlines():
        s = line.strip()
        m = re.match(r"#ifdef\s+(\w+)|#elif\s+defined\((\w+)\)", s)
        if m:
            if s.startswith("#ifdef"):
                chains.append({})
            cur = m.group(1) or m.group(2)
            chains[-1][cur] = ({}, {})
            continue
        if s.startswith("#else") and chains:
            cur = "__else__"
            chains[-1][cur] = ({}, {})
            continue
        if s.startswith("#endif"):
            cur = None
            continue
        if cur is None:
            continue
        mo = _ORDER.search(s)
        if mo:
            chains[-1][cur][0][mo.group(1)] = mo.group(2)
        mf = _FMACRO.match(s)
        if mf:
            chains[-1][cur][1][mf.group(1)] = mf.group(2).strip()
    orders: dict[str, str] = {}
    fences: dict[str, str] = {}
    for ch in chains:
        pick = next((ch[d] for d in ch if d in defines), ch.get("__else__"))
        if pick is not None:
            orders.update(pick[0])
            fences.update(pick[1])
    return orders, fences


def _fence_of(text: str, fence_scope: str) -> str | None:
    """The PTX fence of a libcu++ atomic_thread_fence call (None: an empty macro)."""
    m = _FENCE_LIT.search(text)
    if m is None:
        return None
    order, scope = m.group(1), m.group(2) or "FENCE_SCOPE"
    sc = {"device": "gpu", "block": "cta", "system": "sys"}.get(scope.split("thread_scope_")[-1], fence_scope)
    return f"fence.{'sc' if order == 'seq_cst' else 'acq_rel'}.{sc}"


Op = tuple[str, ...]


def _body_ops(name: str, body: str, orders: dict[str, str], fences: dict[str, str],
              fscope: str) -> tuple[dict[int, list[Op]], dict[str, int], list[str]]:
    """Each thread's accesses and fences in the test body, the thread of each register, the locations."""
    ops: dict[int, list[Op]] = defaultdict(list)
    regs: dict[str, int] = {}
    locs: list[str] = []

    def order(tok: str) -> str:
        o = tok.split("cuda::memory_order_")[-1] if tok.startswith("cuda::") else orders.get(tok)
        if o is None:
            raise ValueError(f"{name}: unknown memory order {tok!r}")
        return o

    last_role = 0
    for line in body.splitlines():
        s = line.split("//")[0].strip()
        ms, ml, mf = _STORE.search(s), _LOAD.search(s), _FENCE_USE.match(s)
        if ms:
            last_role = int(ms.group(2))
            ops[last_role].append(("st", ms.group(1), ms.group(3), order(ms.group(4))))
            locs += [ms.group(1)] * (ms.group(1) not in locs)
        elif ml:
            last_role = int(ml.group(3))
            ops[last_role].append(("ld", ml.group(2), ml.group(1), order(ml.group(4))))
            regs[ml.group(1)] = last_role
            locs += [ml.group(2)] * (ml.group(2) not in locs)
        elif mf:
            f = _fence_of(fences.get(mf.group(1), ""), fscope)
            ops[int(mf.group(2))] += [("fence", f)] if f else []
        elif _FENCE_LIT.search(s):
            f = _fence_of(s, fscope)
            ops[last_role] += [("fence", f)] if f else []
    # a fence after a thread's last access orders nothing of the test (the trailing seq_cst fence)
    for r in ops:
        while ops[r] and ops[r][-1][0] == "fence":
            ops[r].pop()
    return ops, regs, locs


def _condition(name: str, check_part: str, regs: dict[str, int], locs: list[str]) -> list[str]:
    """The terms of the check kernel's condition that counts `weak`."""
    lines = check_part.splitlines()
    at = next(i for i, ln in enumerate(lines) if "weak.fetch_add" in ln)
    cond_line = next(lines[i] for i in range(at, -1, -1) if "if (" in lines[i])
    terms = []
    for n, val in _COND.findall(cond_line.split("//")[0]):
        if n not in regs and n not in locs:
            raise ValueError(f"{name}: condition names {n!r}, neither a register nor a location")
        terms.append(f"P{regs[n]}:{n} == {val}" if n in regs else f"{n} == {val}")
    return terms


def _ptx(op: Op, scope: str) -> list[str]:
    """The PTX of one libcu++ access or fence (seq_cst: fence.sc, then relaxed store / acquire load)."""
    if op[0] == "fence":
        return [op[1]]
    kind, loc, x, o = op
    pre = [f"fence.sc.{scope}"] if o == "seq_cst" else []
    if kind == "st":
        return pre + [f"st.{'release' if o == 'release' else 'relaxed'}.{scope} {loc}, {x}"]
    return pre + [f"ld.{'acquire' if o in ('acquire', 'seq_cst') else 'relaxed'}.{scope} {x}, {loc}"]


def convert(v: Variant, src: Path) -> str:
    """The fuzzgpu litmus text of variant ``v`` (raises ValueError when the kernel is not understood)."""
    text = (src / "kernels" / f"{KERNEL[v.family]}.cu").read_text()
    orders, fences = _blocks(text, {v.variant, v.tb, v.scope, v.fence_scope})
    scope = SCOPE[v.scope]
    test_part, check_part = text.split("__global__ void check_results", 1)
    body = test_part.split("DEFINE_IDS();", 1)[1]
    start = re.search(r"if \(id_0 != id_1[^\n]*\{", body)
    if start is None:
        raise ValueError(f"{v.name}: no test body")
    ops, regs, locs = _body_ops(v.name, body[start.end():].split("read_results[")[0], orders, fences,
                                FENCE_SCOPE[v.fence_scope])
    terms = _condition(v.name, check_part, regs, locs)
    nroles = max(ops) + 1
    # CTAs: TB_01_2 -> threads 0 and 1 in CTA 0, thread 2 in CTA 1
    cta = {int(ch): i for i, grp in enumerate(v.tb[3:].split("_")) for ch in grp}
    cols = [[x for op in ops.get(r, []) for x in _ptx(op, scope)] for r in range(nroles)]
    heads = [f"P{r}@cta {cta[r]},gpu 0" for r in range(nroles)]
    width = [max([len(heads[r])] + [len(c) for c in cols[r]]) for r in range(nroles)]
    rows = [" " + " | ".join(heads[r].ljust(width[r]) for r in range(nroles)) + " ;"]
    for i in range(max(len(c) for c in cols)):
        rows.append(" " + " | ".join((cols[r][i] if i < len(cols[r]) else "").ljust(width[r]) for r in range(nroles)) + " ;")
    init = [f"{loc}=0" for loc in sorted(locs)] + [f"P{regs[r]}:{r}=0" for r in sorted(regs)]
    return "\n".join([f"PTX anchor-{v.name}", f'"cuda-litmus {v.name}, converted by bench/anchor.py at run time"',
                      "{ " + " ".join(f"{x};" for x in init) + " }", *rows,
                      "exists (" + " /\\ ".join(terms) + ")"]) + "\n"


def _parse(text: str) -> Program:
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".litmus", delete=False) as f:
        f.write(text)
    try:
        return litmus.parse_file(f.name)
    finally:
        os.unlink(f.name)


def witness(p: Program) -> Callable[[Any], bool]:
    cond = p.condition
    assert cond is not None

    def w(o: Any) -> bool:
        try:
            return bool(eval_expr(cond.expr, dict(o)))
        except KeyError:
            return False

    return w


# --------------------------------------------------------------------------------------------
# Sampling
# --------------------------------------------------------------------------------------------


def choose(vs: list[Variant], seen_per_family: int, forbidden_per_family: int, seed: int) -> list[Variant]:
    """A seeded random sample per family (all when the family has no more), interleaved across
    families (round robin) so that a run cut short by its deadline keeps every family."""
    rng = random.Random(seed)
    groups: dict[tuple[str, bool], list[Variant]] = defaultdict(list)
    for v in vs:
        if v.seen and not v.forbidden:
            groups[(v.family, True)].append(v)
        elif v.forbidden:
            groups[(v.family, False)].append(v)
    picked: list[list[Variant]] = []
    for (fam, seen), g in sorted(groups.items()):
        k = seen_per_family if seen else forbidden_per_family
        picked.append(sorted(rng.sample(g, min(k, len(g))), key=lambda v: v.name) if k >= 0 else g)
    out = []
    for i in range(max((len(g) for g in picked), default=0)):
        for g in picked:
            if i < len(g):
                out.append(g[i])
    return out


# --------------------------------------------------------------------------------------------
# The anchor's runner
# --------------------------------------------------------------------------------------------

PARAM_KEYS = ("testIterations", "testingWorkgroups", "maxWorkgroups", "workgroupSize", "shufflePct", "barrierPct",
              "stressLineSize", "stressTargetLines", "scratchMemorySize", "memStride", "memStressPct",
              "memStressIterations", "memStressPattern", "preStressPct", "preStressIterations", "preStressPattern",
              "stressAssignmentStrategy", "permuteThread")


def stored_params(src: Path) -> dict[str, int]:
    out = {}
    for line in (src / "params" / "stress_params.txt").read_text().splitlines():
        k, _, val = line.partition("=")
        if k.strip() in PARAM_KEYS:
            out[k.strip()] = int(val)
    return out


def random_params(rng: random.Random) -> dict[str, int]:
    """One point of the artifact's tune.sh space (random_config 1024 256), drawn with ``rng``."""
    def between(a: int, b: int) -> int:
        return rng.randint(a, b)

    tw = between(4, 1024)
    line = between(2, 10) ** 2
    lines = between(1, 16)
    wg = between(1, 256)
    return {"testIterations": 1000, "testingWorkgroups": tw, "maxWorkgroups": between(tw, 1024),
            "workgroupSize": wg + (wg % 2), "shufflePct": between(0, 100), "barrierPct": between(0, 100),
            "stressLineSize": line, "stressTargetLines": lines, "scratchMemorySize": 32 * line * lines,
            "memStride": between(1, 7), "memStressPct": between(0, 100), "memStressIterations": between(0, 1024),
            "memStressPattern": between(0, 3), "preStressPct": between(0, 100), "preStressIterations": between(0, 128),
            "preStressPattern": between(0, 3), "stressAssignmentStrategy": between(0, 1), "permuteThread": 419}


def iterations_for(params: dict[str, int], seconds: float) -> int:
    """Iterations expected to take ``seconds`` by the runner's own clock: on an H200, ~124 us of copies and
    memsets per iteration plus 3.26e8 instances/s -- the least-squares fit of its 1,118 runs in
    bench/results/anchor/h200-one-run (seconds per iteration against instances per iteration); the
    estimate before it (250 us + 4e8/s) ran the runner a median 19% short of its time."""
    per = 1.24e-4 + params["testingWorkgroups"] * params["workgroupSize"] / 3.26e8
    return max(1, int(seconds / per))


def build_runner(v: Variant, src: Path, outdir: Path) -> tuple[Path | None, str]:
    """The artifact's build, ``nvcc -D<TB> -D<SCOPE> -D<FENCE_SCOPE> -D<VARIANT> -rdc=true -arch sm_90
    runner.cu kernels/<test>.cu``, in its separate-compilation steps (what that command does): the
    kernel's object per variant, runner.cu's object once per scope macro (the only macro of
    litmus.cuh that runner.cu's code reads: its ``d_atomic_uint``), then the device and host link."""
    exe = outdir / v.name
    if exe.exists():
        return exe, ""
    # TB_1_02 (results.csv) is not defined in litmus.cuh at the artifact's HEAD; TB_02_1 places the
    # threads the same way (P0 and P2 in one CTA, P1 in the next)
    tb = "TB_02_1" if v.tb == "TB_1_02" else v.tb
    flags = ["-I.", "-rdc=true", "-arch", "sm_90"]
    runner = outdir / f"runner-{v.scope}.o"
    with _RUNNER_LOCK:
        if not runner.exists():
            r = subprocess.run(["nvcc", f"-D{v.scope}", *flags, "-c", "runner.cu", "-o", str(runner)], cwd=src,
                               capture_output=True, text=True, timeout=300)
            if r.returncode:
                return None, r.stderr[-400:]
    obj = outdir / f"{v.name}.o"
    steps = [["nvcc", f"-D{tb}", f"-D{v.scope}", f"-D{v.fence_scope}", f"-D{v.variant}", *flags, "-c",
              f"kernels/{KERNEL[v.family]}.cu", "-o", str(obj)],
             ["nvcc", *flags, str(runner), str(obj), "-o", str(exe)]]
    for cmd in steps:
        r = subprocess.run(cmd, cwd=src, capture_output=True, text=True, timeout=300)
        if r.returncode:
            return None, r.stderr[-400:]
    obj.unlink()
    return exe, ""


_RUNNER_LOCK = threading.Lock()


def run_runner(exe: Path, params: dict[str, int], test_params: Path, tmp: Path) -> dict[str, Any]:
    pf = tmp / f"{exe.name}.params"
    pf.write_text("".join(f"{k}={params[k]}\n" for k in PARAM_KEYS))
    t0 = time.monotonic()
    r = subprocess.run([str(exe), "-s", str(pf), "-t", str(test_params)], capture_output=True, text=True, timeout=120)
    wall = time.monotonic() - t0
    out = r.stdout

    def num(pat: str) -> float:
        m = re.search(pat, out)
        return float(m.group(1)) if m else 0.0

    inst, weak = int(num(r"Total behaviors: (-?\d+)")), int(num(r"Number of weak behaviors: (-?\d+)"))
    # the runner checks no CUDA call: counts outside [0, what ran] mean it did not run (no device)
    most = params["testIterations"] * params["testingWorkgroups"] * params["workgroupSize"]
    valid = r.returncode == 0 and 0 <= weak <= inst <= most and inst > 0
    return {"rc": r.returncode, "seconds": num(r"Time taken: ([\d.e+-]+) seconds"), "wall": round(wall, 3),
            "valid": valid, "instances": inst if valid else 0, "weak": weak if valid else 0,
            "iterations": params["testIterations"], "params": params, "stderr": r.stderr[-300:]}


def test_params_file(src: Path, v: Variant) -> Path:
    first = (src / "tuning-files" / f"{KERNEL[v.family]}.txt").read_text().split("\n", 1)[0].split()
    return src / "params" / first[1]


# --------------------------------------------------------------------------------------------
# Passes
# --------------------------------------------------------------------------------------------


@dataclass
class Row:
    v: Variant
    fz: dict[str, Any] = field(default_factory=dict)
    anchor: dict[str, Any] = field(default_factory=dict)


def oracle_check(vs: list[Variant], src: Path) -> tuple[dict[str, Program], dict[str, Any]]:
    """Convert every variant; the fuzzgpu oracle's verdict on its condition beside the artifact's."""
    progs: dict[str, Program] = {}
    agree: dict[str, int] = defaultdict(int)
    disagree: list[dict[str, str]] = []
    errors: dict[str, str] = {}
    for v in vs:
        try:
            p = _parse(convert(v, src))
            obs = model.check_condition(p)
        except Exception as e:  # noqa: BLE001 - reported per variant
            errors[v.name] = f"{type(e).__name__}: {str(e)[:200]}"
            continue
        progs[v.name] = p
        ours = "allowed" if obs.witness_reachable else "forbidden"
        theirs = "forbidden" if v.forbidden else "allowed"
        if ours == theirs:
            agree[theirs] += 1
        else:
            disagree.append({"variant": v.name, "fuzzgpu": ours, "artifact_base": theirs, "seen": str(v.seen)})
    return progs, {"converted": len(progs), "errors": errors, "agree": dict(agree), "disagree": disagree}


def fz_pass(rows: list[Row], progs: dict[str, Program], gpu_s: float, seed: int, deadline: float, log: Callable[[str], None],
            ablation_s: float = 0.0) -> dict[str, Any]:
    from fuzzgpu.backends import cuda
    from fuzzgpu.backends.base import RunConfig
    from fuzzgpu.properties import unwritten_keys
    from fuzzgpu.stress.tune import condition_target, tune_on_gpu

    t0 = time.monotonic()
    comp_list = cuda.compile_programs([progs[r.v.name] for r in rows], "sm_90", batch=4, jobs=os.cpu_count())
    comp = {r.v.name: c for r, c in zip(rows, comp_list)}
    log(f"fuzzgpu: compiled {len(comp)} harnesses in {time.monotonic() - t0:.1f} s")
    b = cuda.CudaBackend()
    tput: dict[str, Any] = {}
    try:
        device = b.describe()
        # harness throughput, MP across CTAs, no stress (the issue's >= 4e9 bar), and with stripe_ctas
        mp = litmus.parse_file(ROOT / "tests" / "litmus" / "gpu" / "MP-relaxed-gpu.litmus")
        cmp_ = b.compile(mp)
        for label, cfg in (("default", RunConfig(instances=1 << 30)),
                           ("stripe_ctas", RunConfig(instances=1 << 30, stripe_ctas=True, permute_threads=False)),
                           ("test_ctas=512", RunConfig(instances=1 << 30, test_ctas=512))):
            h = b.run_compiled(cmp_, cfg)
            tput[label] = {"instances": h.instances, "seconds": round(h.seconds, 4), "rate": h.instances / h.seconds}
        log(f"fuzzgpu throughput: {json.dumps(tput)}")
        for i, r in enumerate(rows):
            if time.monotonic() > deadline:
                r.fz = {"skipped": "deadline"}
                continue
            p = progs[r.v.name]
            a = model.analyse(p)
            pred = condition_target(p, a.sc, a.possible)
            t = tune_on_gpu(b, p, gpu_s, seed=seed + i, targets=pred, compiled=comp[r.v.name], sc=a.sc, spend=True)
            w = witness(p)
            hits = sum(n for o, n in t.outcomes.items() if all(x is not None for _, x in o) and w(o))
            forb = sum(n for o, n in t.outcomes.items() if all(x is not None for _, x in o) and o not in a.possible
                       and not unwritten_keys(p, dict(o)))
            faults = sum(n for o, n in t.outcomes.items() if any(x is None for _, x in o) or unwritten_keys(p, dict(o)))
            res = t.result
            r.fz = {"condition": hits, "instances": t.instances, "gpu_s": round(res.spent_s, 4),
                    "rate": t.instances / res.spent_s if res.spent_s else 0.0, "model_forbidden": forb, "faults": faults,
                    "configurations": len(res.arms), "stopped": res.stopped, "best": res.best.config.describe(),
                    "best_stripe": res.best.config.stripe_ctas, "best_weak": res.best.weak,
                    "default_weak": res.default.weak, "default_instances": res.default.instances,
                    "arms": [{"config": a.config.describe(), "condition": a.weak, "instances": a.instances,
                              "gpu_s": round(a.seconds, 4)} for a in res.arms]}
            log(f"fz {i + 1}/{len(rows)} {r.v.name}: {hits} in {t.instances:.3g} ({res.spent_s:.2f} GPU-s) best {r.fz['best']}")
        ablation = ablate(b, rows, progs, comp, deadline + ablation_s, log) if ablation_s > 0 else {}
    finally:
        b.close()
    return {"device": device, "throughput": tput, "ablation": ablation}


#: the ablation's configurations: which of the anchor's mechanisms matter (issue 31)
ABLATION_S = 25.0
HARD = ("three_2w", "isa2", "z6_3", "iriw", "wrw_2w")


def ablation_configs() -> dict[str, Any]:
    import dataclasses

    from fuzzgpu.stress.space import ANCHOR_LIKE, StressConfig

    return {"campaign default": StressConfig(),
            "no stress": StressConfig(barrier=False, spin=0),
            "stripe_ctas, same lane, no spin": StressConfig(stripe_ctas=True, permute_threads=False, spin=0),
            "same lane, no spin (random distance)": StressConfig(permute_threads=False, spin=0),
            "anchor-like": ANCHOR_LIKE,
            "anchor-like, random distance": dataclasses.replace(ANCHOR_LIKE, stripe_ctas=False),
            "anchor-like, CTAs permuted": dataclasses.replace(ANCHOR_LIKE, permute_ctas=True),
            "anchor-like, no pre-stress": dataclasses.replace(ANCHOR_LIKE, pre_stress=0)}


def ablate(b: Any, rows: list[Row], progs: dict[str, Program], comp: dict[str, Any], deadline: float,
           log: Callable[[str], None], instances: int = 1 << 27) -> dict[str, Any]:
    """The sampled seen variants of the hard families whose threads span 2+ CTAs with a .cta scope:
    each under every configuration of :func:`ablation_configs`, ``instances`` each; the condition's
    count per configuration."""
    from fuzzgpu.stress.space import StressConfig

    cfgs = ablation_configs()
    out: dict[str, Any] = {"instances": instances, "configs": {k: c.describe() for k, c in cfgs.items()}, "variants": {}}
    for r in rows:
        v = r.v
        if v.family not in HARD or not v.seen or v.forbidden or "BLOCK" not in v.scope + v.fence_scope or v.tb.count("_") < 2:
            continue
        if time.monotonic() > deadline:
            out["cut"] = "deadline"
            break
        p = progs[v.name]
        w = witness(p)
        res = {}
        for k, c in cfgs.items():
            h = b.run_compiled(comp[v.name], StressConfig.run_config(c, instances=instances, seed=7))
            res[k] = {"condition": sum(n for o, n in h.counts if all(x is not None for _, x in o) and w(o)),
                      "seconds": round(h.seconds, 4)}
        out["variants"][v.name] = res
        log(f"ablation {v.name}: " + ", ".join(f"{k} {x['condition']}" for k, x in res.items()))
    return out


def anchor_pass(rows: list[Row], src: Path, bindir: Path, gpu_s: float, seed: int, deadline: float,
                builds: dict[str, cf.Future], log: Callable[[str], None]) -> None:
    tmp = bindir / "params"
    tmp.mkdir(parents=True, exist_ok=True)
    stored = stored_params(src)
    for i, r in enumerate(rows):
        if time.monotonic() > deadline:
            r.anchor = {"skipped": "deadline"}
            continue
        if r.v.name not in builds:
            r.anchor = {"not_run": "base-forbidden variant: fuzzgpu alone (--anchor-forbidden no)"}
            continue
        exe, err = builds[r.v.name].result()
        if exe is None:
            r.anchor = {"build_error": err}
            continue
        tp = test_params_file(src, r.v)
        rng = random.Random(f"{seed}:{r.v.name}")
        runs = []
        for params in (stored, random_params(rng)):
            params = dict(params)
            # the runner counts behaviours and weak ones in 32-bit words per run; its clock is its own
            params["testIterations"] = iterations_for(params, gpu_s / 2)
            runs.append(run_runner(exe, params, tp, tmp))
        weak = sum(x["weak"] for x in runs)
        inst = sum(x["instances"] for x in runs)
        secs = sum(x["seconds"] for x in runs)
        r.anchor = {"condition": weak, "instances": inst, "seconds": round(secs, 4), "rate": inst / secs if secs else 0.0,
                    "runs": [{k: x[k] for k in ("rc", "valid", "seconds", "wall", "instances", "weak", "iterations")} for x in runs],
                    "random_params": runs[1]["params"]}
        log(f"anchor {i + 1}/{len(rows)} {r.v.name}: {weak} in {inst:.3g} ({secs:.2f} s)")


def table(rows: list[Row]) -> tuple[list[dict[str, Any]], str]:
    """Per family and kind: the variants each tool ran and exposed (a tool's columns count the
    variants it ran; "both", "only" count the variants both ran), GPU time and instances/s."""
    fams: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for r in rows:
        fams[(r.v.family, "forbidden" if r.v.forbidden else "seen")].append(r)
    out = []
    md = ["| family | kind | variants | fuzzgpu ran | fuzzgpu exposed | anchor ran | anchor exposed | both ran | both exposed "
          "| fuzzgpu only | anchor only | fuzzgpu GPU-s / variant | anchor s / variant | fuzzgpu instances/s | anchor instances/s "
          "| fuzzgpu's best config had stripe_ctas |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    keys = ("variants", "fz_run", "fuzzgpu", "an_run", "anchor", "both_run", "both", "fuzzgpu_only", "anchor_only",
            "fuzzgpu_gpu_s", "anchor_s", "fuzzgpu_instances", "anchor_instances", "fuzzgpu_exposed_best_stripe")
    tot: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))

    def line(fam: str, kind: str, d: dict[str, float], bold: bool = False) -> str:
        b = "**" if bold else ""
        fzn, ann = max(1.0, d["fz_run"]), max(1.0, d["an_run"])
        return (f"| {b}{fam}{b} | {kind} | {int(d['variants'])} | {int(d['fz_run'])} | {b}{int(d['fuzzgpu'])}{b} | "
                f"{int(d['an_run'])} | {b}{int(d['anchor'])}{b} | {int(d['both_run'])} | {int(d['both'])} | "
                f"{int(d['fuzzgpu_only'])} | {int(d['anchor_only'])} | {d['fuzzgpu_gpu_s'] / fzn:.2f} | {d['anchor_s'] / ann:.2f} | "
                f"{d['fuzzgpu_instances'] / d['fuzzgpu_gpu_s'] if d['fuzzgpu_gpu_s'] else 0:.3g} | "
                f"{d['anchor_instances'] / d['anchor_s'] if d['anchor_s'] else 0:.3g} | "
                f"{int(d['fuzzgpu_exposed_best_stripe'])} of {int(d['fuzzgpu'])} |")

    for (fam, kind), rs in sorted(fams.items()):
        fz = [r for r in rs if "condition" in r.fz]
        an = [r for r in rs if "condition" in r.anchor]
        both = [r for r in fz if "condition" in r.anchor]
        d: dict[str, Any] = {
            "family": fam, "kind": kind, "variants": len(rs), "fz_run": len(fz), "an_run": len(an), "both_run": len(both),
            "fuzzgpu": sum(1 for r in fz if r.fz["condition"] > 0), "anchor": sum(1 for r in an if r.anchor["condition"] > 0),
            "both": sum(1 for r in both if r.fz["condition"] > 0 and r.anchor["condition"] > 0),
            "fuzzgpu_only": sum(1 for r in both if r.fz["condition"] > 0 and not r.anchor["condition"]),
            "anchor_only": sum(1 for r in both if r.anchor["condition"] > 0 and not r.fz["condition"]),
            "fuzzgpu_gpu_s": sum(r.fz["gpu_s"] for r in fz), "anchor_s": sum(r.anchor["seconds"] for r in an),
            "fuzzgpu_instances": sum(r.fz["instances"] for r in fz), "anchor_instances": sum(r.anchor["instances"] for r in an),
            "fuzzgpu_exposed_best_stripe": sum(1 for r in fz if r.fz["condition"] > 0 and r.fz.get("best_stripe")),
            "fuzzgpu_condition_instances": sum(r.fz["condition"] for r in fz),
            "anchor_condition_instances": sum(r.anchor["condition"] for r in an)}
        out.append(d)
        for k in keys:
            tot[kind][k] += d[k]
        md.append(line(fam, kind, d))
    for kind, t in sorted(tot.items()):
        md.append(line("all", kind, t, bold=True))
    return out, "\n".join(md) + "\n"


def row_variant(r: dict[str, Any]) -> Variant:
    """The variant of an anchor.json row (its name, and whether it is seen or base-forbidden)."""
    m = NAME.match(r["variant"])
    if m is None or m["fam"] not in KERNEL:
        raise ValueError(f"not a variant name: {r['variant'][:80]!r}")
    return Variant(r["variant"], m["fam"], m["tb"], m["scope"], m["fs"], m["var"], "UNSAT" if r["forbidden"] else "INSTANCE",
                   bool(r["seen"]))


def anchor_on_forbidden(rows: list[Row]) -> str:
    """What the runner showed of the base-forbidden variants, as a page says it: its observations
    and on how many it ran, or that it ran on none (``--anchor-forbidden no``: not a zero)."""
    ran = [r for r in rows if r.v.forbidden and "condition" in r.anchor]
    if not ran:
        return "anchor not run on them"
    return f"anchor {sum(r.anchor['condition'] for r in ran)} (on {len(ran)} of them)"


def merge(dirs: list[Path], out: Path) -> int:
    """One table from several runs' anchor.json (each run a group of families): a variant run by
    more than one of them keeps the figures of the first run in which both tools ran it (a variant's
    two tools always side by side in one run)."""
    rows: dict[str, Row] = {}
    runs = []
    for d in dirs:
        doc = json.loads((d / "anchor.json").read_text())
        runs.append({"dir": str(d), "command": doc["command"], "families": doc.get("families_run", "all"),
                     "device": doc.get("device"), "throughput": doc.get("throughput"), "seconds": doc.get("seconds"),
                     "forbidden_observed": doc.get("forbidden_observed"), "gpu_s_per_variant": doc["gpu_s_per_variant"]})
        for r in doc["rows"]:
            kept = rows.get(r["variant"])
            if kept is None or not ("condition" in kept.fz and "condition" in kept.anchor):
                rows[r["variant"]] = Row(row_variant(r), r["fuzzgpu"], r["anchor"])
    fams, md = table(list(rows.values()))
    fz_forb = sum(r["forbidden_observed"]["fuzzgpu"] for r in runs if r["forbidden_observed"])
    out.mkdir(parents=True, exist_ok=True)
    merged = {"runs": runs, "families": fams, "forbidden_observed": {"fuzzgpu": fz_forb},
              "rows": [{"variant": r.v.name, "family": r.v.family, "seen": r.v.seen, "forbidden": r.v.forbidden,
                        "fuzzgpu": r.fz, "anchor": r.anchor} for r in rows.values()]}
    (out / "anchor-merged.json").write_text(json.dumps(merged, indent=1) + "\n")
    head = [f"# cuda-litmus variants: fuzzgpu beside the anchor's runner, {len(runs)} runs merged", "",
            f"Observations of a forbidden variant's condition (or any model-forbidden outcome): fuzzgpu {fz_forb}, "
            f"{anchor_on_forbidden(list(rows.values()))}.", ""]
    (out / "anchor-merged.md").write_text("\n".join(head) + md)
    print("\n".join(head) + md)
    return 1 if fz_forb else 0


def logger(out: Path) -> Callable[[str], None]:
    """A log function: each line printed and appended to ``out``/log.txt."""
    out.mkdir(parents=True, exist_ok=True)
    logf = open(out / "log.txt", "a")

    def log(s: str) -> None:
        print(s, flush=True)
        logf.write(s + "\n")
        logf.flush()

    return log


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", type=Path, help="a copy of the cuda-litmus artifact's files (every mode but --merge)")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--dry-run", action="store_true", help="CPU only: convert, check with the oracle, compile")
    ap.add_argument("--gpu-s", type=float, default=1.0, help="GPU-seconds per variant for each tool (default 1)")
    ap.add_argument("--seen-per-family", type=int, default=8, help="seen variants per family (-1: all)")
    ap.add_argument("--forbidden-per-family", type=int, default=8, help="base-forbidden variants per family (-1: all)")
    ap.add_argument("--seed", type=int, default=31)
    ap.add_argument("--deadline-s", type=float, default=420.0, help="wall-clock limit of the whole run")
    ap.add_argument("--build-only", type=int, default=0,
                    help="dry run: build the anchor runner of the first N variants of the sample (-1: all), in parallel")
    ap.add_argument("--bin", type=Path, help="where the anchor's runners are built, and found when built before "
                    "(default: /tmp/anchor-bin; a dry run: anchor-bin beside --out)")
    ap.add_argument("--include", type=Path, help="a file of variant names (one a line) run first, besides the sample")
    ap.add_argument("--families", help="comma-separated families to run (default: every family)")
    ap.add_argument("--anchor-forbidden", choices=("yes", "no"), default="yes",
                    help="run the anchor's runner on the base-forbidden variants too (no: fuzzgpu alone, said in the table)")
    ap.add_argument("--ablation-s", type=float, default=ABLATION_S, help="seconds of the mechanism ablation (0: none)")
    ap.add_argument("--fz-share", type=float, default=0.5, help="share of the time left after the builds for fuzzgpu's pass")
    ap.add_argument("--merge", nargs="+", type=Path, help="no run: one table from the anchor.json of several runs (DIRs)")
    ap.add_argument("--anchor-from", type=Path, help="the runner's column from an earlier run's anchor.json, row by "
                    "row (the runner is neither built nor run; the page says so): fuzzgpu's pass alone, beside it")
    args = ap.parse_args(argv)
    if args.merge:
        try:
            return merge(args.merge, args.out)
        except (OSError, ValueError, KeyError) as e:
            print(f"bench/anchor.py: {e}", file=sys.stderr)
            return 3
    if args.src is None:
        ap.error("--src is required (but with --merge)")
    earlier: dict[str, Any] = {}
    if args.anchor_from:  # read before any GPU time is spent: a bad file is said at once
        try:
            earlier = {r["variant"]: r["anchor"] for r in json.loads(args.anchor_from.read_text())["rows"]}
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"bench/anchor.py: --anchor-from {args.anchor_from}: not an anchor.json of bench/anchor.py "
                  f"({type(e).__name__}: {e})", file=sys.stderr)
            return 2
    t_start = time.monotonic()
    deadline = t_start + args.deadline_s
    log = logger(args.out)
    try:
        vs = read_variants(args.src)
    except OSError as e:
        print(f"bench/anchor.py: {args.src}: {e}", file=sys.stderr)
        return 3
    if args.families:
        wanted = set(args.families.split(","))
        unknown = wanted - {v.family for v in vs}
        if unknown:
            print(f"bench/anchor.py: --families: no family {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        vs = [v for v in vs if v.family in wanted]
    seen = [v for v in vs if v.seen]
    forb = [v for v in vs if v.forbidden]
    log(f"{len(vs)} variants; seen by H100/GH200: {len(seen)}; base model forbids: {len(forb)}")
    progs, oracle = oracle_check(seen + forb, args.src)
    log(f"converted {oracle['converted']}; oracle agrees {oracle['agree']}; disagrees {len(oracle['disagree'])}; "
        f"errors {len(oracle['errors'])}")
    pick = [v for v in choose(seen + forb, args.seen_per_family, args.forbidden_per_family, args.seed) if v.name in progs]
    if args.include:
        named = set(args.include.read_text().split())
        first = [v for v in seen + forb if v.name in named and v.name in progs]
        pick = first + [v for v in pick if v.name not in named]
        log(f"included first: {len(first)} named variants")
    log(f"sample (seed {args.seed}): {len(pick)} variants ({sum(v.seen for v in pick)} seen, {sum(v.forbidden for v in pick)} forbidden)")
    doc: dict[str, Any] = {"command": " ".join(sys.argv), "seed": args.seed, "gpu_s_per_variant": args.gpu_s,
                           "seen_per_family": args.seen_per_family, "forbidden_per_family": args.forbidden_per_family,
                           "variants": len(vs), "seen": len(seen), "forbidden": len(forb), "oracle": oracle,
                           "sample": [v.name for v in pick], "included": str(args.include or ""),
                           "families_run": args.families or "all", "anchor_forbidden": args.anchor_forbidden}
    bindir = args.bin or (args.out.parent / "anchor-bin" if args.dry_run else Path("/tmp/anchor-bin"))
    bindir.mkdir(parents=True, exist_ok=True)
    if args.dry_run:
        from fuzzgpu.backends import cuda

        t0 = time.monotonic()
        comp = cuda.compile_programs([progs[v.name] for v in pick], "sm_90", batch=16, jobs=1)
        doc["compiled"] = len(comp)
        doc["compile_s"] = round(time.monotonic() - t0, 1)
        chosen = [v for v in pick if args.anchor_forbidden == "yes" or not v.forbidden]
        chosen = chosen if args.build_only < 0 else chosen[: args.build_only]
        with cf.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
            built = {v.name: err or "ok" for v, (_, err) in zip(chosen, pool.map(lambda v: build_runner(v, args.src.resolve(), bindir), chosen))}
        doc["anchor_built"] = built
        bad = {k: e for k, e in built.items() if e != "ok"}
        log(f"dry run: {len(comp)} harnesses compiled in {doc['compile_s']} s; anchor runners in {bindir}: "
            f"{len(built) - len(bad)} of {len(built)} built" + (f"; failed: {bad}" if bad else ""))
        (args.out / "anchor-dry.json").write_text(json.dumps(doc, indent=1) + "\n")
        return 0 if not oracle["errors"] else 3
    rows = [Row(v) for v in pick]
    # every build before the GPU passes: nvcc processes beside them would slow the host side of
    # either harness (both launch from the host)
    t0 = time.monotonic()
    prebuilt = sum(1 for r in rows if (bindir / r.v.name).exists())
    pool = cf.ThreadPoolExecutor(os.cpu_count() or 2)
    builds = {r.v.name: pool.submit(build_runner, r.v, args.src, bindir) for r in rows
              if (args.anchor_forbidden == "yes" or not r.v.forbidden) and not args.anchor_from}
    cf.wait(builds.values(), timeout=max(1.0, deadline - time.monotonic() - 60))
    log(f"anchor: built {sum(1 for f in builds.values() if f.done() and f.result()[0])} of {len(builds)} runners "
        f"in {time.monotonic() - t0:.1f} s ({prebuilt} of them found in {bindir}, built before)")
    doc["anchor_prebuilt"] = prebuilt
    left = deadline - time.monotonic()
    fz_deadline = time.monotonic() + left * args.fz_share
    info = fz_pass(rows, progs, args.gpu_s, args.seed, fz_deadline, log, args.ablation_s)
    doc.update(info)
    if args.anchor_from:
        for r in rows:
            r.anchor = earlier.get(r.v.name, {"skipped": f"not in {args.anchor_from}"})
        doc["anchor_from"] = str(args.anchor_from)
    else:
        anchor_pass(rows, args.src, bindir, args.gpu_s, args.seed, deadline, builds, log)
    pool.shutdown(wait=False, cancel_futures=True)
    fams, md = table(rows)
    doc["families"] = fams
    doc["rows"] = [{"variant": r.v.name, "family": r.v.family, "seen": r.v.seen, "forbidden": r.v.forbidden,
                    "fuzzgpu": r.fz, "anchor": r.anchor} for r in rows]
    doc["seconds"] = round(time.monotonic() - t_start, 1)
    forbidden_seen = sum(r.fz.get("condition", 0) for r in rows if r.v.forbidden) + sum(r.fz.get("model_forbidden", 0) for r in rows)
    ran = [r.anchor["condition"] for r in rows if r.v.forbidden and "condition" in r.anchor]
    doc["forbidden_observed"] = {"fuzzgpu": forbidden_seen, "anchor": sum(ran) if ran else None}  # None: not run on them
    (args.out / "anchor.json").write_text(json.dumps(doc, indent=1) + "\n")
    head = [f"# cuda-litmus variants: fuzzgpu beside the anchor's runner ({info.get('device')})", "",
            f"Sample: seed {args.seed}, {args.seen_per_family} seen and {args.forbidden_per_family} base-forbidden variants "
            f"per family (of {len(seen)} seen, {len(forb)} forbidden); {args.gpu_s} GPU-s per variant per tool.",
            f"Observations of a forbidden variant's condition (or any model-forbidden outcome): fuzzgpu {forbidden_seen}, "
            f"{anchor_on_forbidden(rows)}."]
    if args.anchor_from:
        head += [f"**The runner's column is not of this run**: it is copied, row by row, from {args.anchor_from} "
                 "(the runner ran there, on its own call); only fuzzgpu ran here."]
    head += ["fuzzgpu harness throughput (MP relaxed across CTAs, 2^30 instances): "
            + ", ".join(f"{k} {v['rate']:.3g}/s" for k, v in info.get("throughput", {}).items()), ""]
    (args.out / "anchor.md").write_text("\n".join(head) + md)
    log("\n".join(head) + md)
    return 1 if forbidden_seen else 0


if __name__ == "__main__":
    sys.exit(main())
