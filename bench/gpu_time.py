#!/usr/bin/env python3
"""Where a GPU campaign's GPU time goes, run by run (issue 29's moonshot: what stands between a campaign and
GPU-bound at 1e7 instances), from the evidence records its cuda backend wrote: each run's GPU seconds (CUDA
events around its launches), instances, launches and timeouts, split by what the program asks of the
harness -- one grid or two (PDL), a cluster of CTAs or none, a run with a timeout or none.

    python3 bench/gpu_time.py bench/results/throughput/h100-300s-b9ef5a9-w20/corpus.tar.gz
    python3 bench/gpu_time.py CORPUS... --out bench/results/throughput/gpu-time     # gpu-time.json and .md

Each argument is a campaign's corpus folder or a ``corpus.tar.gz`` of ``bench/h200.sh throughput`` (its
``corpus/`` folder inside); with the run's ``throughput.json`` beside it, the page also gives the ceiling its
NVML share implies.  The ceiling "GPU-bound" is the runs per hour one GPU would make if it did nothing but
these runs back to back: 3600 s over the mean GPU seconds a run.  CUDA events time a launch from its start
on the stream to its end, so a launch that waits for another context's kernel counts that wait too: the
figure is an upper bound on the GPU time a run needs, its ceiling a lower bound.

Prints a markdown table per corpus (with the run's ``machine.txt`` line naming its GPU, when it is beside the
corpus); ``--out DIR`` also writes ``DIR/LABEL.json`` (the figures) and ``DIR/LABEL.md`` (the page).  Exit 0; 2
for an argument that cannot be read or is no GPU campaign's corpus (no evidence records of the cuda backend); 3
when the results cannot be written.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tarfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from compile_phases import header, publish, shown  # noqa: E402

from fuzzgpu.evidence import Evidence  # noqa: E402


def records(arg: Path) -> tuple[list[Evidence], dict[str, int]]:
    """The cuda backend's evidence records of a corpus folder (``.fuzzgpu/evidence/*/*.json``) or of a
    ``corpus.tar.gz`` (its ``corpus/.fuzzgpu/evidence/``, read in place, nothing extracted), each one run
    with its GPU seconds; and how many records were left out, by why: a record of several runs (its
    ``meta`` is its first run's, its instances the sum: not one run's figures) or one without GPU seconds."""
    docs: list[dict[str, Any]] = []
    if not arg.exists():
        raise FileNotFoundError("no such file or folder")
    if arg.is_file():
        with tarfile.open(arg) as t:
            for m in t:
                if m.isfile() and m.name.startswith("corpus/.fuzzgpu/evidence/") and m.name.endswith(".json"):
                    f = t.extractfile(m)
                    if f is not None:
                        docs.append(json.loads(f.read()))
    else:
        docs = [json.loads(f.read_text()) for f in sorted((arg / ".fuzzgpu").glob("evidence/*/*.json"))]
    out: list[Evidence] = []
    left = {"several runs": 0, "no GPU seconds": 0}
    for d in docs:
        e = Evidence.from_json(d)
        if e.backend != "cuda" or not e.runs:
            continue
        if e.runs > 1:
            left["several runs"] += 1
        elif not e.meta.get("gpu_s"):
            left["no GPU seconds"] += 1
        else:
            out.append(e)
    return out, left


def summary(runs: list[Evidence]) -> dict[str, Any]:
    """Runs, their GPU seconds in all and a run (mean, median, 90th percentile), the GPU microseconds a
    launch (median), instances per GPU second (median, and over all), and the ceiling runs per hour."""
    gpu = [float(e.meta["gpu_s"]) for e in runs]
    launches = [int(e.meta.get("launches") or 0) for e in runs]
    per_launch = [1e6 * g / n for g, n in zip(gpu, launches) if n and g]
    rate = [e.instances / g for e, g in zip(runs, gpu) if g]
    total = sum(gpu)
    q = sorted(gpu)
    return {
        "runs": len(runs),
        "gpu_s": round(total, 2),
        "gpu_ms_mean": round(1000 * total / len(runs), 2) if runs else None,
        "gpu_ms_median": round(1000 * statistics.median(gpu), 2) if runs else None,
        "gpu_ms_p90": round(1000 * q[int(0.9 * (len(q) - 1))], 2) if runs else None,
        "launches_median": statistics.median(launches) if runs else None,
        "us_per_launch_median": round(statistics.median(per_launch), 1) if per_launch else None,
        "instances_per_gpu_s_median": round(statistics.median(rate)) if rate else None,
        "instances_per_gpu_s": round(sum(e.instances for e in runs) / total) if total else None,
        "instances_mean": round(sum(e.instances for e in runs) / len(runs)) if runs else None,
        "gpu_bound_runs_per_hour": round(3600 * len(runs) / total) if total else None,
    }


def _grids(e: Evidence) -> int:
    return int(e.meta.get("grids") or 1)


#: the splits: a name and what puts a run on its side.  A two-grid program's grids are PDL-launched when one of
#: them waits with ``griddepcontrol`` (``meta["pdl_grids"]``), and then its primary spins ``pdl_delay_ns`` after
#: ``launch_dependents`` (30,000 by default): the two go together, so no split isolates the delay.  One-grid
#: runs are replayed from a CUDA graph (the default), two-grid runs never (docs/harness.md).
SPLITS: tuple[tuple[str, Callable[[Evidence], bool]], ...] = (
    ("two grids", lambda e: _grids(e) > 1),
    ("two grids, PDL (the primary spins pdl_delay_ns)", lambda e: _grids(e) > 1 and bool(e.meta.get("pdl_grids"))),
    ("two grids, no PDL (stream-ordered)", lambda e: _grids(e) > 1 and not e.meta.get("pdl_grids")),
    ("one grid", lambda e: _grids(e) == 1),
    ("a cluster of CTAs", lambda e: int(e.meta.get("cluster") or 1) > 1),
    ("no cluster", lambda e: int(e.meta.get("cluster") or 1) == 1),
    ("a timeout", lambda e: e.timeouts > 0),
    ("no timeout", lambda e: e.timeouts == 0),
    ("one grid, no cluster, no timeout", lambda e: _grids(e) == 1 and int(e.meta.get("cluster") or 1) == 1 and e.timeouts == 0),
)


def analyse(runs: list[Evidence], left_out: dict[str, int] | None = None) -> dict[str, Any]:
    """Every run, then each split, with its share of the runs and of the GPU time (and the records left out)."""
    every = summary(runs)
    out: dict[str, Any] = {"all": every, "left_out": dict(left_out or {}), "splits": {}}
    for name, on in SPLITS:
        part = [e for e in runs if on(e)]
        s = summary(part)
        s["share_of_runs"] = round(len(part) / len(runs), 3) if runs else None
        s["share_of_gpu_s"] = round(s["gpu_s"] / every["gpu_s"], 3) if every["gpu_s"] else None
        out["splits"][name] = s
    return out


def table(name: str, a: dict[str, Any], tput: dict[str, Any] | None) -> str:
    rows = [("every run", a["all"], None, None)] + [(k, v, v["share_of_runs"], v["share_of_gpu_s"]) for k, v in a["splits"].items()]
    out = [f"## {name}", ""]
    if a.get("machine"):
        out += [f"Its machine (`machine.txt`): {a['machine']}.", ""]
    if tput and tput.get("gpu_util_nvml_mean"):
        nvml = tput["gpu_util_nvml_mean"]
        out.append(f"The campaign: {tput['run_per_hour']:,} programs run per hour, NVML: a kernel resident {100 * nvml:.1f}% of "
                   f"the time, so GPU-bound at NVML's share ~{round(tput['run_per_hour'] / nvml, -3):,.0f} runs/h; at the CUDA "
                   f"events' GPU time (which overstates the GPU time a run) {a['all']['gpu_bound_runs_per_hour']:,}.")
        out.append("")
    left = {k: n for k, n in a.get("left_out", {}).items() if n}
    if left:
        out += ["Left out: " + ", ".join(f"{n:,} record(s) of {k}" for k, n in left.items()) + ".", ""]
    out += ["| which runs | share of runs | share of GPU time | runs | GPU-s | GPU ms a run: mean / median / p90 | launches (median) "
            "| GPU us a launch (median) | instances per GPU-s (median; over all) | GPU-bound runs/h |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for label, s, sr, sg in rows:
        if not s["runs"]:
            out.append(f"| {label} | 0 | | 0 | | | | | | |")
            continue
        out.append(f"| {label} | {'' if sr is None else f'{100 * sr:.1f}%'} | {'' if sg is None else f'{100 * sg:.1f}%'} | "
                   f"{s['runs']:,} | {s['gpu_s']:,.1f} | {s['gpu_ms_mean']} / {s['gpu_ms_median']} / {s['gpu_ms_p90']} | "
                   f"{s['launches_median']:g} | {s['us_per_launch_median']} | {s['instances_per_gpu_s_median']:.3g}; "
                   f"{s['instances_per_gpu_s']:.3g} | {s['gpu_bound_runs_per_hour']:,} |")
    return "\n".join(out) + "\n"


#: what the page says of its figures before the tables
INTRO = ("Each run's evidence record: its GPU seconds (CUDA events around its launches), instances, launches, "
         "timeouts.  \"GPU-bound runs/h\": 3600 s over the mean GPU seconds a run -- what one GPU doing nothing but "
         "these runs back to back would make.  CUDA events time a launch from its start on its stream to its end, and "
         "a campaign's workers' contexts take turns on one GPU, so they overstate the GPU time a run: the ceiling by the "
         "events is the lower one, the one by NVML's kernel-resident share (where the run's throughput.json has it) the "
         "higher.  A two-grid program's grids are PDL-launched when one of them waits with `griddepcontrol`, and then "
         "its primary spins `pdl_delay_ns` after `launch_dependents`: the two go together, so no split isolates the "
         "delay's cost.  One-grid runs are replayed from a CUDA graph, two-grid runs never (docs/harness.md).")


def machine(folder: Path) -> str | None:
    """The GPU and the date a run's ``machine.txt`` (bench/h200.sh) names: its second and first lines."""
    f = folder / "machine.txt"
    if not f.is_file():
        return None
    lines = f.read_text(errors="replace").splitlines()
    text = ", ".join(" ".join(x.split()) for x in lines[1:2] + lines[:1] if x.strip())
    return shown(text)


def main(argv: Iterable[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpora", nargs="+", type=Path, help="a corpus folder or a bench/h200.sh throughput corpus.tar.gz")
    ap.add_argument("--out", type=Path, help="write LABEL.json and LABEL.md here")
    ap.add_argument("--label", default="gpu-time")
    argv = list(argv) if argv is not None else sys.argv[1:]
    args = ap.parse_args(argv)
    corpora: dict[str, Any] = {}
    tables = []
    for arg in args.corpora:
        try:
            runs, left = records(arg)
            beside = arg.parent / "throughput.json"  # the run folder of a tarball or of a corpus folder
            tput = json.loads(beside.read_text()) if beside.is_file() else None
        except (OSError, EOFError, tarfile.TarError, ValueError, KeyError, TypeError) as exc:
            why = "not a gzip'd tar archive" if isinstance(exc, tarfile.TarError) else " ".join(str(exc).split())
            print(f"gpu_time: {arg}: cannot read: {type(exc).__name__}: {why}", file=sys.stderr)
            return 2
        if not runs:
            print(f"gpu_time: {arg}: no evidence records of the cuda backend with one run's GPU seconds "
                  f"(a GPU campaign's corpus was expected)", file=sys.stderr)
            return 2
        a = analyse(runs, left)
        a["machine"] = machine(arg.parent)
        if tput:
            a["campaign"] = {k: tput.get(k) for k in ("run_per_hour", "gpu_util_nvml_mean", "gpu_busy_share", "gpu_seconds")}
        corpora[str(arg)] = a
        tables.append(table(str(arg), a, tput))
    if args.out is None:
        print("\n".join(tables))
        return 0
    doc = header("gpu_time.py", argv) | {"corpora": corpora}
    md = [f"# Where a GPU campaign's GPU time goes, run by run (`{doc['command']}`)", "",
          f"{doc['machine']}, {doc['date']}: read from the corpora's evidence records, nothing run on a GPU.  {INTRO}", "",
          *tables]
    return publish("gpu_time", args.out, args.label, doc, md)


if __name__ == "__main__":
    sys.exit(main())
