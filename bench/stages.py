"""Benchmark: CPU milliseconds per program of each stage of a campaign (issue 29) -- draw, oracle,
codegen, compile, SASS check, run -- over one stream of programs drawn from a profile.

    python bench/stages.py [--profile all] [--programs 32] [--property race] [--batch 16] [--label after]
    python bench/stages.py --run --instances 10000000        # on a GPU: the harness runs too
    python bench/stages.py --campaign 120 --before 9c580b2 --label static-campaign   # before/after, a static campaign
    python bench/stages.py --compare --before 9a0bd98 --label compare-9a0bd98      # before/after, the same stages

CPU time is this process's user+system time plus its children's (nvcc, ptxas, nvdisasm), from
``resource.getrusage``; each stage is timed over the whole stream and divided by the number of
programs it applied to.  Stages:

* ``draw``: Hypothesis draws the programs (the profile's weighted strategy, one seed);
* ``oracle``: what a campaign asks of the model per program: the property's verdict on a histogram
  of the program's allowed outcomes (as a GPU run would show them) and ``model.analyse`` (the weak
  count), each question from a fresh program object (no cache between programs);
* ``codegen``: the static kernels and the harness source;
* ``compile``: the harness, one nvcc per program (``single``) or one per ``--batch`` programs;
* ``sass``: the static SASS check (nvcc of the static kernels, nvdisasm, the analysis), one per
  program (``single``) or one per batch (``batch``, :func:`fuzzgpu.backends.static.check_batch`);
* ``run`` (``--run``, a GPU): the harness at ``--instances`` instances, CPU time and GPU busy share.

Writes ``bench/results/throughput/stages-<label>.json`` and ``.md`` (machine, date, command, table).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # this checkout's fuzzgpu, run as a script


def cpu() -> float:
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    c0, w0 = cpu(), time.perf_counter()
    out = fn()
    return out, cpu() - c0, time.perf_counter() - w0


def draw(profile: str, n: int, seed: int) -> list[Any]:
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as hseed

    from fuzzgpu import strategies
    from fuzzgpu.profiles import load_profile

    prof = load_profile(profile)
    out: list[Any] = []

    class Enough(BaseException):
        pass

    def body(p: Any) -> None:
        out.append(p)
        if len(out) >= n:
            raise Enough()

    test = settings(database=None, max_examples=10 * n, deadline=None, phases=(Phase.generate,), derandomize=False,
                    suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)(
        hseed(seed)(given(strategies.weighted(prof.shapes, prof.options))(body)))
    try:
        test()
    except Enough:
        pass
    return out


def fresh(p: Any) -> Any:
    """An equal program that is not the same object (a cache keyed by identity does not answer)."""
    from fuzzgpu.ir import program_from_json, program_to_json

    return program_from_json(program_to_json(p))


def oracle(programs: list[Any], prop: str) -> int:
    from fuzzgpu import model, properties
    from fuzzgpu.backends.base import Histogram

    done = 0
    for p in programs:
        try:
            a = model.analyse(p)
        except model.Unsupported:
            continue
        hist = Histogram(a.keys, tuple((o, 1000) for o in sorted(a.allowed, key=repr)), 1000 * max(1, len(a.allowed)), 0, 0.0, "bench")
        properties.get(prop).check(p, hist)
        done += 1
    return done


def run_on_gpu(compiled: list[Any], instances: int, row: Callable[..., None]) -> dict[str, Any]:
    """Each compiled harness run on the GPU at ``instances``: the host's CPU time and the GPU's busy
    time (CUDA events around the launches, the histogram's ``gpu_s``)."""
    from fuzzgpu.backends import cuda
    from fuzzgpu.backends.base import RunConfig

    be = cuda.CudaBackend()
    cfg = RunConfig(instances=instances)
    busy = [0.0]
    failed: list[str] = []

    def run_all() -> None:
        for comp in compiled:
            try:
                h = be.run_compiled(comp, cfg)
            except Exception as e:  # noqa: BLE001 -- counted and named, the others still run
                failed.append(f"{comp.program}: {type(e).__name__}: {str(e)[:120]}")
                continue
            busy[0] += float(dict(h.meta)["gpu_s"])

    _, c, w = timed(run_all)
    row("run", "single", c, w, len(compiled), f"{instances:.3g} instances each; GPU busy {busy[0] / max(w, 1e-9):.0%} of "
        f"the wall time of the runs; {len(failed)} failed")
    return {"device": be.describe(), "gpu_busy_s": busy[0], "wall_s": w, "instances": instances, "failed": failed}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="all")
    ap.add_argument("--programs", type=int, default=32)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--property", default="race")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--batch", type=int, default=16, help="programs per batched compile / SASS check (0: single only)")
    ap.add_argument("--label", default="now")
    ap.add_argument("--run", action="store_true", help="run each harness on the GPU")
    ap.add_argument("--instances", type=int, default=10_000_000)
    ap.add_argument("--out", default=str(ROOT / "bench/results/throughput"))
    ap.add_argument("--campaign", type=float, default=0.0,
                    help="seconds: instead, a static --profile campaign on --before's tree, then on this one (bench/campaign_tools.py)")
    ap.add_argument("--before", default="9c580b2", help="the commit of the campaign's 'before' (git archive into a temporary folder)")
    ap.add_argument("--campaign-seed", type=int, default=5)
    ap.add_argument("--compare", action="store_true",
                    help="the same stages first on --before's tree (this script run there), then on this one: both in one table")
    args = ap.parse_args()
    if args.campaign:
        campaign_compare(args)
        return 0
    try:
        before = stages_before(args) if args.compare else None
    except subprocess.CalledProcessError as e:  # git archive of a bad --before, or the before tree's run failed
        print(f"bench/stages.py: --compare on {args.before} failed: {' '.join(map(str, e.cmd[:3]))} exited {e.returncode}", file=sys.stderr)
        return 2

    from fuzzgpu import codegen, sass
    from fuzzgpu.backends import cuda
    from fuzzgpu.backends.static import StaticBackend

    rows: dict[str, dict[str, Any]] = {}

    def row(stage: str, mode: str, cpu_s: float, wall_s: float, n: int, note: str = "") -> None:
        rows[f"{stage} ({mode})"] = {"stage": stage, "mode": mode, "programs": n, "cpu_ms_per_program": round(1e3 * cpu_s / max(1, n), 1),
                                     "wall_ms_per_program": round(1e3 * wall_s / max(1, n), 1), "note": note}
        print(f"{stage:8} {mode:8} {n:4} programs  {1e3 * cpu_s / max(1, n):8.1f} CPU ms/program  {1e3 * wall_s / max(1, n):8.1f} wall ms/program  {note}",
              flush=True)

    programs, c, w = timed(lambda: draw(args.profile, args.programs, args.seed))
    row("draw", "single", c, w, len(programs))
    copies = [fresh(p) for p in programs]
    n_or, c, w = timed(lambda: oracle(copies, args.property))
    row("oracle", "single", c, w, len(programs), f"{n_or} covered by the oracle; property {args.property}")

    static = StaticBackend(args.arch)
    runnable = [p for p in programs if not codegen.unrunnable_reasons(p)]
    statics = []
    for p in programs:
        try:
            codegen.generate_static(p)
            statics.append(p)
        except codegen.Unrunnable:
            pass

    def gen() -> None:
        for p in statics:
            codegen.generate_static(p)
        for p in runnable:
            codegen.generate_module([p])

    _, c, w = timed(gen)
    row("codegen", "single", c, w, len(programs))

    def compile_single() -> list[Any]:
        return [cuda.compile_programs([p], args.arch, batch=1, jobs=1, use_cache=False)[0] for p in runnable]

    compiled, c, w = timed(compile_single)
    row("compile", "single", c, w, len(runnable), "harness, one nvcc per program")

    def sass_single() -> list[Any]:
        # as the static backend checks one program (a tree before codegen.CUDA_DECLS: with cuda_runtime.h)
        lean = {"runtime_header": codegen.CUDA_DECLS} if hasattr(codegen, "CUDA_DECLS") else {}
        return [sass.check_cu_source(codegen.generate_static(p), (static.arch_for(p),), 3, source=f"{p.name}.litmus", name="fuzzgpu_static", **lean)
                for p in statics]

    single_reports, c, w = timed(sass_single)
    row("sass", "single", c, w, len(statics), "static kernels: nvcc + nvdisasm + analysis per program")

    if args.batch > 1:
        k = args.batch

        def compile_batch() -> list[Any]:
            return cuda.compile_programs(runnable, args.arch, batch=k, jobs=1, use_cache=False)

        _, c, w = timed(compile_batch)
        row("compile", f"batch{k}", c, w, len(runnable), f"harness, one nvcc per {k} programs")
        check_batch = getattr(sys.modules["fuzzgpu.backends.static"], "check_batch", None)
        if check_batch is not None:
            res, c, w = timed(lambda: [check_batch(statics[i : i + k], args.arch, 3) for i in range(0, len(statics), k)])
            row("sass", f"batch{k}", c, w, len(statics), f"static kernels: one nvcc + nvdisasm per {k} programs")

    gpu = run_on_gpu(compiled, args.instances, row) if args.run else {}
    from fuzzgpu.hashing import program_hash

    hashes = [program_hash(p) for p in programs]
    if before is not None and before.get("hashes") != hashes:
        print(f"bench/stages.py: {args.before}'s tree drew other programs: no before/after", file=sys.stderr)
        return 2
    write(args, rows, gpu, len(programs), len(runnable), len(statics), before, hashes)
    return 0


def unpack(rev: str, dest: Path) -> Path:
    """The tree of commit ``rev`` of this repository in the folder ``dest`` (``git archive``, made
    here), its modules' bytecode compiled -- as this tree has it: else the first stage to import a
    module pays for compiling it."""
    dest.mkdir(parents=True)
    tar = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(dest / "fuzzgpu")], check=True, stdout=subprocess.DEVNULL)
    return dest


def stages_before(args: argparse.Namespace) -> dict[str, Any]:
    """This script's stages run on the tree of ``--before`` (``git archive`` into a temporary folder,
    this script copied into it, so that it imports that tree's fuzzgpu), with the same arguments and
    no GPU runs: its ``stages-before.json``."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="fuzzgpu-stages-") as tmp:
        tree = unpack(args.before, Path(tmp) / "before")
        shutil.copy(Path(__file__), tree / "bench" / "stages.py")
        subprocess.run([sys.executable, str(tree / "bench" / "stages.py"), "--profile", args.profile, "--programs", str(args.programs),
                        "--seed", str(args.seed), "--property", args.property, "--arch", args.arch, "--batch", str(args.batch),
                        "--label", "before", "--out", tmp], cwd=tree, check=True)
        doc: dict[str, Any] = json.loads((Path(tmp) / "stages-before.json").read_text())
    return doc


def campaign_compare(args: argparse.Namespace) -> None:
    """``stages-<label>.json`` and ``.md``: one static campaign of ``--campaign`` seconds on the tree of
    ``--before`` and one on this tree, one after the other on this machine, each measured by
    ``bench/campaign_tools.py`` (this tree's script, importing the tree it runs in): CPU ms per
    program and stage, children included, the programs, the classes, the load averages."""
    import tempfile

    def git(*a: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), *a], check=True, capture_output=True, text=True).stdout.strip()

    head = git("rev-parse", "--short", "HEAD") + (" + uncommitted changes" if git("status", "--porcelain", "--untracked-files=no") else "")
    runs: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="fuzzgpu-stages-") as tmp:
        before = unpack(args.before, Path(tmp) / "before")
        for label, tree in (("before", before), ("after", ROOT)):
            out = Path(tmp) / f"{label}.json"
            subprocess.run([sys.executable, str(ROOT / "bench" / "campaign_tools.py"), str(Path(tmp) / f"corpus-{label}"),
                            "--time", f"{args.campaign:g}", "--seed", str(args.campaign_seed), "--profile", args.profile, "--json", str(out)],
                           cwd=tree, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            runs[label] = json.loads(out.read_text())
            print(f"{label}: {runs[label]['programs']} programs, {runs[label]['cpu_s_per_program']} CPU s/program", flush=True)
    doc = {"machine": f"{platform.node()} ({os.cpu_count()} cores, {platform.processor() or platform.machine()})",
           "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "command": "python " + " ".join([os.path.relpath(sys.argv[0], ROOT), *sys.argv[1:]]),
           "before": args.before, "after": head, "runs": runs}
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"stages-{args.label}.json").write_text(json.dumps(doc, indent=1) + "\n")
    b, a = runs["before"], runs["after"]
    lines = [f"# Static campaign, stage by stage: `{args.label}`", "", f"{doc['machine']}, {doc['date']}", "", f"`{doc['command']}`", "",
             f"A {args.campaign:g} s `--backend static --profile {args.profile} --seed {args.campaign_seed} --in-process` campaign, "
             f"before ({args.before}) and after ({head}), one after the other.", "",
             "| CPU ms per program | before | after |", "|---|---|---|"]
    lines += [f"| {k} | {b['stages_cpu_ms_per_program'].get(k, '--')} | {a['stages_cpu_ms_per_program'].get(k, '--')} |"
              for k in a["stages_cpu_ms_per_program"]]
    lines += [f"| **CPU s per program, children included** | **{b['cpu_s_per_program']}** | **{a['cpu_s_per_program']}** |",
              f"| programs (of them judged while shrinking) | {b['programs']} ({b['shrink_programs']}) | {a['programs']} ({a['shrink_programs']}) |",
              f"| CPU s: process + children | {b['self_cpu_s']} + {b['children_cpu_s']} | {a['self_cpu_s']} + {a['children_cpu_s']} |",
              f"| classes found | {len(b['classes'])} | {len(a['classes'])} |",
              f"| load average (1 min) at start, end | {b['load_average_start'][0]:.2f}, {b['load_average_end'][0]:.2f} | "
              f"{a['load_average_start'][0]:.2f}, {a['load_average_end'][0]:.2f} |"]
    lines += ["", "nvcc and nvdisasm calls (`tools`: calls, CPU s, programs in their inputs):", ""]
    lines += [f"- {label} `{k}`: {v['calls']} calls, {v['cpu_s']} CPU s, {v['programs']} programs" for label, r in runs.items()
              for k, v in r["tools"].items() if k.startswith(("nvcc", "nvdisasm"))]
    (out_dir / f"stages-{args.label}.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out_dir / f'stages-{args.label}.json'}")


def write(args: argparse.Namespace, rows: dict[str, dict[str, Any]], gpu: dict[str, Any], n: int, runnable: int, statics: int,
          before: dict[str, Any] | None = None, hashes: list[str] | None = None) -> None:
    """``stages-<label>.json`` and ``.md`` under ``--out`` (with ``before``: the same stages on the
    ``--before`` tree, in a column of their own)."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    doc = {"machine": f"{platform.node()} ({os.cpu_count()} cores, {platform.processor() or platform.machine()})",
           "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "command": "python " + " ".join([os.path.relpath(sys.argv[0], ROOT), *sys.argv[1:]]),
           "profile": args.profile, "seed": args.seed, "programs": n, "runnable": runnable,
           "static_checkable": statics, "stages": rows, "gpu": gpu, "hashes": hashes or []}
    if before is not None:
        doc["before"] = {"commit": args.before, "programs": before["programs"], "stages": before["stages"]}
    (out / f"stages-{args.label}.json").write_text(json.dumps(doc, indent=1) + "\n")
    lines = [f"# Stage profile `{args.label}`", "", f"{doc['machine']}, {doc['date']}", "", f"`{doc['command']}`", "",
             "| stage | mode | programs | CPU ms/program | wall ms/program | note |", "|---|---|---|---|---|---|"]
    if before is None:
        lines += [f"| {r['stage']} | {r['mode']} | {r['programs']} | {r['cpu_ms_per_program']} | {r['wall_ms_per_program']} | {r['note']} |"
                  for r in rows.values()]
    else:  # the same programs (their hashes checked in main): CPU ms per program, before and after
        lines[-2:] = [f"The same {n} programs (by their hashes) on {args.before}'s tree (this script run there) and on this one, one after the other.", "",
                      f"| stage | mode | programs | CPU ms/program at {args.before} | CPU ms/program now | note |", "|---|---|---|---|---|---|"]
        lines += [f"| {r['stage']} | {r['mode']} | {r['programs']} | {before['stages'].get(k, {}).get('cpu_ms_per_program', '--')} | "
                  f"{r['cpu_ms_per_program']} | {r['note']} |" for k, r in rows.items()]
    (out / f"stages-{args.label}.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out / f'stages-{args.label}.json'}")


if __name__ == "__main__":
    sys.exit(main())
