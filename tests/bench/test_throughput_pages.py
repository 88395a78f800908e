"""The figures the throughput page (and its earlier.md), the README and docs/reliability.md quote from the
H200 runs of issue 29 are the runs' own files (bench/results/throughput/h200-300s-7ffb8c1/, h200-600s-a9c15e1/,
h200-300s-30098f2*/, h200-600s-794e65c/, the budget bench of h200-600s-6877ec1/, harness-skeleton.json), computed here: a figure written by hand that drifts from its file fails."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "bench" / "results" / "throughput" / "h200-600s-794e65c"
#: the spin-budget bench ran in the same device session as the 6877ec1 campaign
BUDGET = ROOT / "bench" / "results" / "throughput" / "h200-600s-6877ec1"
#: the rows and changes of earlier code, moved off the present-state page
EARLIER = ROOT / "bench" / "results" / "throughput" / "earlier.md"


def flat(path: Path) -> str:
    return " ".join(path.read_text().split())


def campaign_row(run: Path) -> tuple[dict, float, str]:
    """A campaign run's throughput.json, its CPU seconds (cpu.json) and its table row's cells up to the
    NVML share, as the throughput page writes them."""
    t = json.loads((run / "throughput.json").read_text())
    c = json.loads((run / "cpu.json").read_text())
    cpu = c["user_s"] + c["sys_s"]
    cells = (f"| {t['programs']:,} | {t['programs_per_hour']:,} | **{t['run_per_hour']:,} ({t['gpu_programs_1e7_per_hour']:,})** | "
             f"{t['instances_per_program']:.2e} | **{cpu / t['programs']:.3f} / {cpu / t['run']:.3f}** ({cpu:,.0f} CPU-s) | ")
    return t, cpu, cells.replace("e+06", "e6")


def test_the_600s_campaign_row_is_its_throughput_and_cpu_files() -> None:
    t, cpu, cells = campaign_row(RUN)
    row = cells + f"**{t['gpu_util_nvml_mean']:.3f}** ({t['nvml_samples']} samples) |"
    assert row in flat(EARLIER)


def test_the_cpu_split_quoted_is_the_runs_split_and_tool_log() -> None:
    t = json.loads((RUN / "throughput.json").read_text())
    split = json.loads((RUN / "cpu-split.json").read_text())
    tools = json.loads((RUN / "tools.json").read_text())
    page = flat(EARLIER)
    total = sum(split["cpu_s"].values())
    harness = tools["nvcc harness"]["cpu_s"]
    static = tools["nvcc static"]["cpu_s"] + tools["nvdisasm static"]["cpu_s"]
    assert f"the harness's nvcc alone {100 * harness / total:.0f}% ({harness / t['run']:.3f} CPU-s a program run" in page
    assert f"the static SASS check's nvcc and nvdisasm {100 * static / total:.0f}% ({static / t['run']:.2f} a program run" in page
    assert f"the workers' Python {100 * split['share']['worker']:.0f}%" in page
    tools_share = split["share"]["backend's tools"]
    assert f"the backends' nvcc and nvdisasm {100 * tools_share:.0f}%" in page


def test_the_budget_figures_are_the_budget_benchs_file() -> None:
    doc = json.loads((BUDGET / "may-hang-budget.json").read_text())
    full, short = doc["budgets"]
    rows = {(r["program"], r["budget"]): r for r in doc["rows"]}
    gpu = {b: sum(r["gpu_s"] for r in doc["rows"] if r["budget"] == b) for b in (full, short)}
    text = flat(ROOT / "docs" / "reliability.md")
    assert f"took {gpu[short]:.3f} GPU-s in all instead of {gpu[full]:.3f}" in text
    worst = max(range(len(doc["programs"])), key=lambda i: rows[i, full]["timeouts"])
    nxt = max((i for i in range(len(doc["programs"])) if i != worst), key=lambda i: rows[i, full]["timeouts"])
    assert f"({rows[worst, short]['timeouts']:,} and {rows[worst, full]['timeouts']:,} of the mostly-hanging one" in text
    assert f"{rows[nxt, short]['timeouts']:,} and {rows[nxt, full]['timeouts']:,} of the next" in text
    assert f"showed as many racy outcomes ({rows[worst, short]['offending']:,} and {rows[worst, full]['offending']:,})" in text


POOL, NO_POOL = (ROOT / "bench" / "results" / "throughput" / f"h200-300s-30098f2{s}" for s in ("-pool", ""))


def harness_kernels(run: Path) -> int:
    """The harness kernels the run's nvcc calls compiled (bench/tool_shims.sh's log: kind, module, size, ...)."""
    import gzip

    with gzip.open(run / "tools.log.gz", "rt") as f:
        return sum(int(w[2]) for w in (line.split() for line in f) if w[:2] == ["nvcc", "harness"])


def test_the_300s_rows_are_their_files() -> None:
    page = flat(ROOT / "bench" / "results" / "throughput" / "README.md")
    per_run = {}
    for run, bold in ((POOL, "**"), (NO_POOL, "")):
        t, cpu, cells = campaign_row(run)
        tools = json.loads((run / "tools.json").read_text())
        assert cells + f"{bold}{t['gpu_util_nvml_mean']:.3f}{bold} ({t['nvml_samples']} samples; CUDA events {t['gpu_busy_share']:.3f}) |" in page
        static = tools["nvcc static"]["cpu_s"] + tools["nvdisasm static"]["cpu_s"]
        per_run[run] = (tools["nvcc harness"]["cpu_s"] / t["run"], static / t["run"], harness_kernels(run) / t["run"])
    (h1, s1, k1), (h0, s0, k0) = per_run[POOL], per_run[NO_POOL]
    assert f"the harness's nvcc {h1:.3f} and {h0:.3f} CPU-s" in page and f"{k1:.2f} and {k0:.2f} harness kernels" in page
    assert f"**{s1:.3f} CPU-s with the pool, {s0:.3f} without**" in page
    assert s1 < s0  # what the pool's default rests on (fuzzgpu/workers/static_pool.py AUTO_WORKERS)
    pool = json.loads((POOL / "throughput.json").read_text())["static_pool"]
    assert f"the pool's {pool['checks']} checks served {pool['requests']:,} requests of {pool['programs']:,} programs" in page


def test_the_600s_row_at_a9c15e1_is_its_files_and_the_readme_quotes_it() -> None:
    """Issue 29's 600 s row at today's code: the throughput page's row and the README's figures (per
    program run: the harness's nvcc, the static check, the workers' Python) are its files'."""
    run = ROOT / "bench" / "results" / "throughput" / "h200-600s-a9c15e1"
    t, cpu, cells = campaign_row(run)
    assert cells + f"**{t['gpu_util_nvml_mean']:.3f}** ({t['nvml_samples']} samples; CUDA events {t['gpu_busy_share']:.3f}) |" \
        in flat(ROOT / "bench" / "results" / "throughput" / "README.md")
    readme = flat(ROOT / "README.md")
    assert (f"**{t['run_per_hour']:,} programs run on the GPU per hour, {t['gpu_programs_1e7_per_hour']:,} at >= 1e7 instances**"
            in readme)
    assert f"{cpu / t['run']:.3f} CPU-s per program run" in readme
    assert f"NVML: a kernel resident {100 * t['gpu_util_nvml_mean']:.1f}% of the time" in readme
    tools = json.loads((run / "tools.json").read_text())
    split = json.loads((run / "cpu-split.json").read_text())
    static = tools["nvcc static"]["cpu_s"] + tools["nvdisasm static"]["cpu_s"]
    assert f"the harness's nvcc {tools['nvcc harness']['cpu_s'] / t['run']:.3f} CPU-s ({harness_kernels(run) / t['run']:.1f} kernels" in readme
    assert f"the static SASS check {static / t['run']:.3f}, the workers' oracle, draws and shrinks {split['cpu_s']['worker'] / t['run']:.3f}" in readme


def test_the_harness_skeleton_paragraph_is_its_json() -> None:
    d = json.loads((ROOT / "bench" / "results" / "throughput" / "harness-skeleton.json").read_text())
    b, alone = d["batch"], d["alone"]
    per = [r["ptxas_cpu_s"] for r in alone]
    small = min(alone, key=lambda r: r["instructions"])
    page = flat(ROOT / "bench" / "results" / "throughput" / "README.md")
    assert f"ptxas {1000 * min(per):.0f}-{1000 * max(per):.0f} CPU ms a program, {1000 * small['ptxas_cpu_s']:.0f} for one of " \
           f"{small['instructions']} instructions ({small['ptx_lines']} PTX lines)" in page
    helpers = 1000 * (b["ptxas_cpu_s"] - b["ptxas_cpu_s_without_stress_calls"]) / b["programs"]
    assert f"the stress helpers' copies {helpers:.1f} ms a program of ptxas" in page
    assert f"from {1000 * b['nvcc_cpu_s']:.0f} to {1000 * b['nvcc_cpu_s_ofast_compile']['max']:.0f} CPU ms at `max`" in page
    parts = {r["name"]: r["nvcc_cpu_s"] for r in d["ablations"]}
    base = parts["as generated"]

    def less(name: str) -> str:
        return f"{round(100 * (1 - parts[name] / base))}%"

    helpers_out = less("without the stress helpers' calls")
    assert (f"the stress helpers' calls {helpers_out} of the batch's nvcc CPU, "
            f"the classification {less('without the classification')}, the launch parameters' derivation (copied from memory "
            f"instead) {less('the launch parameters copied from memory')}, all three {less('without all three')}") in page
    static = parts["the programs' static kernels (each thread's code alone)"]
    assert f"would still compile) cost {100 * static / base:.0f}% of it" in page
    assert f"not one per kernel) {100 * (parts['-rdc=true'] / base - 1):+.0f}%" in page
    assert f"`fz_params` `__noinline__` {100 * (parts['fz_params __noinline__'] / base - 1):+.0f}%" in page


def test_the_nvrtc_harness_paragraph_is_its_json() -> None:
    d = json.loads((ROOT / "bench" / "results" / "throughput" / "nvrtc-harness.json").read_text())
    per, rows = d["ms_per_program"], d["rows"]
    both = per["nvrtc"] + per["ptxas"]
    page = flat(ROOT / "bench" / "results" / "throughput" / "README.md")
    assert (f"nvcc {per['nvcc']:.1f} CPU ms a program; NVRTC in process {per['nvrtc']:.1f} + ptxas {per['ptxas']:.1f} = "
            f"{both:.1f} ({100 * (1 - both / per['nvcc']):.0f}% less)") in page
    assert f"the same SASS in {sum(r['same_sass'] for r in rows)} of the {sum(r['kernels'] for r in rows)} harness kernels" in page
    assert f"{sum(r['programs'] for r in rows)} runnable campaign draws in batches of {d['batch']}" in page


def assert_folder_readme(run: Path, page: str) -> None:
    """A campaign row's folder README (``page``, flattened) says its throughput.json, cpu.json and
    cpu-split.json as they are: programs judged and run, the static-check pool's counters, the CPU per
    program run and per judgement, the CPU by process."""
    t = json.loads((run / "throughput.json").read_text())
    c = json.loads((run / "cpu.json").read_text())
    split = json.loads((run / "cpu-split.json").read_text())
    cpu = c["user_s"] + c["sys_s"]
    pool = t["static_pool"]
    assert (f"{t['programs']:,} programs judged ({t['programs_per_hour']:,}/h); **{t['run']:,} run on the GPU: "
            f"{t['run_per_hour']:,}/h ({t['gpu_programs_1e7_per_hour']:,}/h with >= 1e7 instances)**; shrink share "
            f"{t['shrink_share']:.2f}; NVML: a kernel resident {100 * t['gpu_util_nvml_mean']:.1f}% of the time "
            f"({t['nvml_samples']} samples), CUDA events {t['gpu_busy_share']:.2f}") in page
    assert f"`static_pool`: {pool['checks']:,} checks for {pool['requests']:,} requests of {pool['programs']:,} programs)" in page
    assert (f"user {c['user_s']:,.0f} s + sys {c['sys_s']:,.0f} s ({100 * cpu / (16 * t['wall_s']):.1f}% of the "
            f"{16 * t['wall_s']:,.0f} core-s): **{cpu / t['run']:.3f} CPU-s per program run**, {cpu / t['programs']:.3f} per judgement") in page
    sh, tools_share = split["share"], split["share"]["backend's tools"]
    assert (f"the backends' nvcc and nvdisasm {100 * tools_share:.1f}%, the workers' Python "
            f"{100 * sh['worker']:.1f}% ({split['cpu_s']['worker'] / t['run']:.3f} CPU-s a run), the backends' Python "
            f"{100 * sh['backend']:.1f}% ({split['cpu_s']['backend'] / t['run']:.3f})") in page


def assert_gc_clock(t: dict, folder: str) -> None:
    """A campaign row's folder README says its workers' collector clock (throughput.json's ``gc_clock``) as it is."""
    gc = t["gc_clock"]
    assert (f"the workers' collector {gc['gc_cpu_s']} CPU-s of their {gc['process_cpu_s']:,} ({100 * gc['gc_share']:.1f}%)**, "
            f"{gc['collections'][2]} collections of the oldest generation ({gc['gc_cpu_s_by_generation'][2]} CPU-s)") in folder


def unpack_runs(tarball: Path, dest: Path) -> list[str]:
    """The run folders of an A/B's ``runs.tar.gz`` (bench/h200.sh gcab and ab), unpacked into ``dest``, in name order."""
    import tarfile

    with tarfile.open(tarball) as tf:
        tf.extractall(dest, filter="data")
    return sorted(str(d) for d in dest.iterdir() if d.is_dir())


def assert_row_and_folder(run: Path, page: str, not_found: tuple[str, ...]) -> tuple[dict, float, str]:
    """A 300 s H100 row of the defaults: the page's table row is its files', its folder's README says them
    (:func:`assert_folder_readme`), the seven known classes were found, first at the times the README gives,
    and the classes ``not_found`` (as the README says) were not.  Returns its throughput.json, its CPU
    seconds and its README, flattened."""
    t, cpu, cells = campaign_row(run)
    assert cells + f"**{t['gpu_util_nvml_mean']:.3f}** ({t['nvml_samples']} samples; CUDA events {t['gpu_busy_share']:.3f}) |" in page
    folder = flat(run / "README.md")
    assert_folder_readme(run, folder)
    classes = json.loads((run / "classes.json").read_text())
    firsts = [classes[str(k)]["first_s"] for k in range(1, 8)]
    assert all(classes[str(k)]["findings"] > 0 for k in range(1, 8))
    assert not any(classes.get(k, {}).get("findings") for k in not_found)
    assert f"first at {min(firsts):.0f}-{max(firsts):.0f} s" in folder
    return t, cpu, folder


def test_the_600s_a9c15e1_folders_readme_is_its_files() -> None:
    run = ROOT / "bench" / "results" / "throughput" / "h200-600s-a9c15e1"
    t = json.loads((run / "throughput.json").read_text())
    c = json.loads((run / "cpu.json").read_text())
    split = json.loads((run / "cpu-split.json").read_text())
    tools = json.loads((run / "tools.json").read_text())
    page = flat(run / "README.md")
    cpu = c["user_s"] + c["sys_s"]
    assert_folder_readme(run, page)
    h, sn, sd = tools["nvcc harness"], tools["nvcc static"], tools["nvdisasm static"]
    assert (f"the harness's nvcc {h['calls']:,} calls, {h['cpu_s']:,.0f} CPU-s (**{h['cpu_s'] / t['run']:.3f} a run**; "
            f"{h['size_per_call_mean']} kernels a call, mean: {harness_kernels(run) / t['run']:.2f} a run)") in page
    assert (f"the static check's nvcc {sn['calls']:,} calls, {sn['cpu_s']:,.0f} CPU-s, and nvdisasm {sd['calls']:,} calls, "
            f"{sd['cpu_s']:,.0f} CPU-s (**{(sn['cpu_s'] + sd['cpu_s']) / t['run']:.3f} a run**; {sn['size_per_call_mean']} kernels a call") in page
    moon = flat(ROOT / "bench" / "results" / "throughput" / "README.md")
    assert (f"At {cpu / t['run']:.3f} CPU-s per program run ({cpu / t['programs']:.3f} per judgement; the 600 s row of a9c15e1)"
            in moon)
    assert (f"the harness's nvcc {h['cpu_s'] / t['run']:.3f} CPU-s ({harness_kernels(run) / t['run']:.2f} kernels" in moon
            and f"the static SASS check {(sn['cpu_s'] + sd['cpu_s']) / t['run']:.3f}, the workers' Python "
                f"{split['cpu_s']['worker'] / t['run']:.3f}" in moon)


def assert_campaign_run(run: Path, page: str, absent: tuple[str, ...] = ("13", "19")) -> tuple[dict, float, dict, dict, str, list[float]]:
    """A campaign row of the present state and its folder: the page's table row, the folder README's figures
    (:func:`assert_folder_readme`, and the tools' calls and CPU), the seven known classes found -- all its
    files'.  Returns the run's throughput.json, CPU seconds, tools.json, cpu-split.json, the flattened folder
    README and the classes' first times."""
    t, cpu, cells = campaign_row(run)
    assert cells + f"**{t['gpu_util_nvml_mean']:.3f}** ({t['nvml_samples']} samples; CUDA events {t['gpu_busy_share']:.3f}) |" in page
    tools = json.loads((run / "tools.json").read_text())
    split = json.loads((run / "cpu-split.json").read_text())
    folder = flat(run / "README.md")
    assert_folder_readme(run, folder)
    h, sn, sd = tools["nvcc harness"], tools["nvcc static"], tools["nvdisasm static"]
    assert (f"the harness's nvcc {h['calls']:,} calls, {h['cpu_s']:,.0f} CPU-s (**{h['cpu_s'] / t['run']:.3f} a run**; "
            f"{h['size_per_call_mean']} kernels a call, mean: {h['kernels_per_program']:.2f} kernels a compiled program)") in folder
    assert (f"the static check's nvcc {sn['calls']:,} calls, {sn['cpu_s']:,.0f} CPU-s, and nvdisasm {sd['calls']:,} calls, "
            f"{sd['cpu_s']:,.0f} CPU-s (**{(sn['cpu_s'] + sd['cpu_s']) / t['run']:.3f} a run**)") in folder
    # the seven known classes, from the classifier's file of the run's corpus
    classes = json.loads((run / "classes.json").read_text())
    firsts = [classes[str(k)]["first_s"] for k in range(1, 8)]
    assert all(classes[str(k)]["findings"] > 0 for k in range(1, 8))
    assert f"first at {min(firsts):.0f}-{max(firsts):.0f} s" in folder
    assert not set(absent) & set(classes)  # the classes the page says were not found
    return t, cpu, tools, split, folder, firsts


def test_the_300s_row_at_7ffb8c1_and_its_folders_readme_are_its_files() -> None:
    """The H200 row at 7ffb8c1 (no --known): the page's table row, the folder's README and the page's lead
    paragraph are its files', per program run by tool included."""
    page = flat(ROOT / "bench" / "results" / "throughput" / "README.md")
    t, cpu, tools, split, _, firsts = assert_campaign_run(ROOT / "bench" / "results" / "throughput" / "h200-300s-7ffb8c1", page)
    static = tools["nvcc static"]["cpu_s"] + tools["nvdisasm static"]["cpu_s"]
    per_run = (f"**{cpu / t['run']:.3f} CPU-s per program run** -- the harness's nvcc {tools['nvcc harness']['cpu_s'] / t['run']:.3f}, "
               f"the static SASS check {static / t['run']:.3f}, the workers' Python {split['cpu_s']['worker'] / t['run']:.3f}, "
               f"the backends' Python {split['cpu_s']['backend'] / t['run']:.3f}")
    assert f"{t['run_per_hour']:,} ({t['gpu_programs_1e7_per_hour']:,}), " + per_run in page
    assert f"{100 * t['shrink_share']:.0f}% of the judgements are shrink candidates" in page
    assert f"first at {min(firsts):.0f}-{max(firsts):.0f} s" in page


def test_the_h100_row_at_6dc6e2a_and_its_folders_readme_are_its_files() -> None:
    """The H100 row (the launch-parameter table; no H200 was lent): the page's table row, earlier.md's lead, the folder's
    README, per program run by tool and the classes, are its files'."""
    page = flat(ROOT / "bench" / "results" / "throughput" / "README.md")
    t, cpu, tools, split, folder, _ = assert_campaign_run(ROOT / "bench" / "results" / "throughput" / "h100-300s-6dc6e2a", page)
    assert (f"{t['run_per_hour']:,} programs run per hour ({t['gpu_programs_1e7_per_hour']:,} at >= 1e7 instances), "
            f"{cpu / t['run']:.3f} CPU-s per program run, the harness's nvcc {tools['nvcc harness']['cpu_s'] / t['run']:.3f} of it") in flat(EARLIER)
    assert (f"the workers' Python {100 * split['share']['worker']:.1f}% ({split['cpu_s']['worker'] / t['run']:.3f} CPU-s a run), "
            f"the backends' Python {100 * split['share']['backend']:.1f}% ({split['cpu_s']['backend'] / t['run']:.3f})") in folder
    assert f"**{cpu / t['run']:.3f} CPU-s per program run**, {cpu / t['programs']:.3f} per judgement" in folder
    assert "12" not in json.loads((ROOT / "bench" / "results" / "throughput" / "h100-300s-6dc6e2a" / "classes.json").read_text())


def test_the_launch_parameter_ab_paragraph_is_its_file() -> None:
    """The throughput page's figures of the harness before and after the launch-parameter table are the A/B file's."""
    runs: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for line in (ROOT / "bench" / "results" / "throughput" / "h100-harness-params-ab.txt").read_text().splitlines():
        if line.startswith("#"):
            continue
        f = line.split()
        runs.setdefault((f[0], f[2]), []).append((float(f[7]), float(f[8])))
    page = flat(ROOT / "bench" / "results" / "throughput" / "README.md")

    def span(tree: str, cfg: str, k: int) -> tuple[float, float]:
        vals = [r[k] for r in runs[(tree, cfg)]]
        return min(vals), max(vals)

    (nlo, nhi), (olo, ohi) = span("new", "plain_s1", 1), span("old", "plain_s1", 1)
    assert f"the default configuration {nlo / 1e9:.2f}-{nhi / 1e9:.2f}e9 instances/s against {olo / 1e9:.2f}-{ohi / 1e9:.2f}e9 before" in page
    mid = lambda lo, hi: (lo + hi) / 2  # noqa: E731
    assert f"(-{100 * (1 - mid(nlo, nhi) / mid(olo, ohi)):.1f}%)" in page
    (wn, _), (wo, _) = span("new", "plain_s1", 0), span("old", "plain_s1", 0)
    assert f"MP's weak outcomes {wn:.2e} of the instances against {wo:.2e}".replace("e-02", "e-2") in page


def test_the_h100_row_at_05bb5d1_and_its_folders_readme_are_its_files() -> None:
    """The H100 row of nvcc with codegen.CUDA_DECLS: the page's table row, earlier.md's lead, the folder's README, per program
    run by tool and the classes, are its files'; the CPU per program run fell against 6dc6e2a's row (same machine kind)."""
    page = flat(ROOT / "bench" / "results" / "throughput" / "README.md")
    t, cpu, tools, split, folder, _ = assert_campaign_run(ROOT / "bench" / "results" / "throughput" / "h100-300s-05bb5d1", page)
    static = tools["nvcc static"]["cpu_s"] + tools["nvdisasm static"]["cpu_s"]
    assert (f"{t['run_per_hour']:,} programs run per hour ({t['gpu_programs_1e7_per_hour']:,} at >= 1e7 instances), "
            f"{cpu / t['run']:.3f} CPU-s per program run, the harness's nvcc {tools['nvcc harness']['cpu_s'] / t['run']:.3f} of it, "
            f"the static check {static / t['run']:.3f}") in flat(EARLIER)
    before, before_cpu, _ = campaign_row(ROOT / "bench" / "results" / "throughput" / "h100-300s-6dc6e2a")
    assert f"**{cpu / t['run']:.3f} CPU-s ({before_cpu / before['run']:.3f} there" in folder
    assert cpu / t["run"] < before_cpu / before["run"]


def test_the_20_worker_row_and_its_folders_readme_are_its_files() -> None:
    """The same code with 20 workers instead of 16, the call after: its row and README are its files', and
    what the default of --workers-per-gpu rests on holds in them (more runs an hour, the CPU per run alike)."""
    page = flat(ROOT / "bench" / "results" / "throughput" / "README.md")
    run = ROOT / "bench" / "results" / "throughput" / "h100-300s-05bb5d1-w20"
    t, cpu, _, _, folder, _ = assert_campaign_run(run, page, absent=("13",))
    t16, cpu16, _ = campaign_row(ROOT / "bench" / "results" / "throughput" / "h100-300s-05bb5d1")
    assert f"**{t['run_per_hour']:,} programs run per hour against {t16['run_per_hour']:,} ({100 * (t['run_per_hour'] / t16['run_per_hour'] - 1):+.0f}%)**" in folder
    assert f"({cpu / t['run']:.3f} against {cpu16 / t16['run']:.3f})" in folder
    assert t["run_per_hour"] > t16["run_per_hour"] and json.loads((run / "classes.json").read_text())["19"]["findings"] == 1


A464825 = tuple(ROOT / "bench" / "results" / "throughput" / f"h100-300s-a464825-{s}" for s in ("w20", "w20-repeat", "window0.25", "window1.5"))


def nvdisasm_per_call(run: Path) -> float:
    d = json.loads((run / "tools.json").read_text())["nvdisasm static"]
    return float(d["cpu_s"]) / d["calls"]


def test_the_h100_rows_at_a464825_and_their_folders_readmes_are_their_files() -> None:
    """The four runs of one sitting (nvdisasm without its dataflow analysis; the pool's window 0.5, again, 0.25, 1.5 s):
    the page's rows, each folder's README and what earlier.md says of them are their files'; what the window's
    default then (0.5 s; 0.25 s since b2dea86: ab/h100-window-0343c89) and the nvdisasm change rest on holds in them."""
    page = flat(ROOT / "bench" / "results" / "throughput" / "README.md") + " " + flat(EARLIER)
    first, again, short, long_ = A464825
    t1, cpu1, _, _, folder, _ = assert_campaign_run(first, page, absent=("12", "13"))
    t2, cpu2, _, _, _, _ = assert_campaign_run(again, page, absent=("12", "13"))
    ts, _, cells_s = campaign_row(short)
    tl, _, cells_l = campaign_row(long_)
    for run, t, cells in ((short, ts, cells_s), (long_, tl, cells_l)):
        assert cells + f"**{t['gpu_util_nvml_mean']:.3f}** ({t['nvml_samples']} samples; CUDA events {t['gpu_busy_share']:.3f}) |" in page
        assert_folder_readme(run, flat(run / "README.md"))
        assert json.loads((run / "throughput.json").read_text())["static_pool"]["window_s"] == (0.25 if run is short else 1.5)
    assert (f"**{t1['run_per_hour']:,} and {t2['run_per_hour']:,} programs run per hour ({t1['gpu_programs_1e7_per_hour']:,} and "
            f"{t2['gpu_programs_1e7_per_hour']:,} at >= 1e7 instances), {cpu1 / t1['run']:.3f} and {cpu2 / t2['run']:.3f} CPU-s per "
            f"program run**") in page
    assert f"1.5 s made {tl['run_per_hour']:,} runs/h" in page and f"0.25 s {ts['run_per_hour']:,}" in page
    assert tl["run_per_hour"] < min(t1["run_per_hour"], t2["run_per_hour"])  # the longer window lost runs
    # nvdisasm a call, against the 05bb5d1 row of a machine of the same kind
    calls = sorted(nvdisasm_per_call(r) for r in (first, again))
    before = nvdisasm_per_call(ROOT / "bench" / "results" / "throughput" / "h100-300s-05bb5d1-w20")
    assert f"nvdisasm {calls[0]:.3f}-{calls[1]:.3f} CPU-s a call against {before:.3f}" in page
    assert calls[1] < before
    rows = [(r.name.split("a464825-")[1], campaign_row(r)) for r in A464825]
    for label, (t, cpu, _) in rows:
        assert f"{t['run_per_hour']:,} ({t['gpu_programs_1e7_per_hour']:,}) | {cpu / t['run']:.3f} |" in folder, label
    # the VM's before/after of the same change, twice (bench/stages.py --compare)
    pairs = []
    for label in ("compare-ndf", "compare-ndf-again"):
        doc = json.loads((ROOT / "bench" / "results" / "throughput" / f"stages-{label}.json").read_text())
        now, was = doc["stages"], doc["before"]["stages"]
        for key in ("sass (batch16)", "sass (single)"):
            pairs.append((key, was[key]["cpu_ms_per_program"], now[key]["cpu_ms_per_program"]))
            assert now[key]["cpu_ms_per_program"] < was[key]["cpu_ms_per_program"]
    b = [f"{w} -> {n}" for k, w, n in pairs if k == "sass (batch16)"]
    one = [f"{w} -> {n}" for k, w, n in pairs if k == "sass (single)"]
    assert f"the static check of a batch of 16, {b[0]} and {b[1]} CPU ms a program, one program alone {one[0]} and {one[1]}" in page


def test_the_a464825_readings_and_the_moonshot_figures_are_their_files() -> None:
    """The sentences written around the a464825 rows -- the w20 folder's reading, the page's "where it stands" -- are
    computed from the runs' files and the VM's disassembly figures (ndf/compile-phases.json), not typed."""
    first, again, short, long_ = A464825
    folder = flat(first / "README.md")
    (t1, cpu1, _), (t2, cpu2, _), (ts, _, _), (tl, _, _) = (campaign_row(r) for r in A464825)
    tools = {r: json.loads((r / "tools.json").read_text()) for r in A464825}
    split = {r: json.loads((r / "cpu-split.json").read_text()) for r in A464825}
    pool = {r: json.loads((r / "throughput.json").read_text())["static_pool"] for r in A464825}
    pct = lambda a, b: f"{100 * abs(1 - a / b):.0f}%"  # noqa: E731
    harness = [tools[r]["nvcc harness"]["cpu_s"] / t["run"] for r, t in ((first, t1), (again, t2))]
    assert f"differ by {pct(t2['run_per_hour'], t1['run_per_hour'])} ({t1['run_per_hour']:,} and {t2['run_per_hour']:,} runs/h)" in folder
    assert f"nvcc per run ({harness[0]:.3f} and {harness[1]:.3f})" in folder
    assert f"halves the checks ({pool[long_]['checks']} against {pool[first]['checks']})" in folder
    assert f"{pct(tl['run_per_hour'], t1['run_per_hour'])} fewer runs" in folder
    assert f"with {pct(pool[short]['checks'], pool[first]['checks'])} more checks" in folder
    w20 = ROOT / "bench" / "results" / "throughput" / "h100-300s-05bb5d1-w20"
    b, bcpu, _ = campaign_row(w20)
    bt = json.loads((w20 / "tools.json").read_text())["nvdisasm static"]
    assert f"w20/`: {bt['cpu_s']:.0f} CPU-s in {bt['calls']} calls)" in folder
    more = sorted(100 * (t["run_per_hour"] / b["run_per_hour"] - 1) for t in (t1, t2))
    less = sorted(100 * (1 - (c / t["run"]) / (bcpu / b["run"])) for t, c in ((t1, cpu1), (t2, cpu2)))
    assert f"made {more[0]:.0f}-{more[1]:.0f}% more at {less[0]:.0f}-{less[1]:.0f}% less CPU a run" in folder
    phases = json.loads((ROOT / "bench" / "results" / "throughput" / "ndf" / "compile-phases.json").read_text())
    assert all(r["ndf_first_same_text"] for r in phases["rows"])
    row = {(t["kind"], t["what"].split(",")[0]): t for t in phases["table"]}
    plain, quick = row[("static kernels", "nvdisasm -c -gi")], row[("static kernels", "sass.disassemble ndf_first (-ndf unless needed)")]
    assert (f"a batch of 16 costs {quick['per_program_at_16_ms']} CPU ms a program against {plain['per_program_at_16_ms']}, "
            f"{quick['fixed_ms']:.0f} CPU ms fixed a call against {plain['fixed_ms']:.0f}") in folder
    # the page's "where it stands", per program run over the two runs at the defaults
    page = flat(ROOT / "bench" / "results" / "throughput" / "README.md")

    def span(f: Callable[[Path, dict], float]) -> str:
        lo, hi = sorted(f(r, t) for r, t in ((first, t1), (again, t2)))
        return f"{lo:.3f}-{hi:.3f}"

    static = span(lambda r, t: (tools[r]["nvcc static"]["cpu_s"] + tools[r]["nvdisasm static"]["cpu_s"]) / t["run"])
    assert (f"0.367-0.400 CPU-s per program run -- the harness's nvcc {span(lambda r, t: tools[r]['nvcc harness']['cpu_s'] / t['run'])}, "
            f"the workers' Python {span(lambda r, t: split[r]['cpu_s']['worker'] / t['run'])}") in page
    assert f"{cpu1 / t1['run']:.3f}-{cpu2 / t2['run']:.3f} CPU-s per program run --" in page
    assert f"the static check {static} (nvdisasm {span(lambda r, t: tools[r]['nvdisasm static']['cpu_s'] / t['run'])} of it" in page
    assert f"the backends' Python {span(lambda r, t: split[r]['cpu_s']['backend'] / t['run'])}" in page
    assert (f"a fixed ~{quick['fixed_ms'] / 1000:.2f} CPU-s a call without the dataflow analysis, ~{plain['fixed_ms'] / 1000:.2f} with it"
            in page)


def test_the_static_campaign_figures_are_its_files() -> None:
    """The latest 120 s static campaign (ab9683a): the CPU per judgement and per program checked, on the throughput page and
    in the README, are its /usr/bin/time output and bench/throughput.py's count of its corpus."""
    base = ROOT / "bench" / "results" / "throughput" / "static-120s" / "now-ab9683a"
    t = json.loads(base.with_suffix(".json").read_text())
    times = dict(line.strip().split(": ", 1) for line in base.with_suffix(".time").read_text().splitlines() if ": " in line)
    user, sys_ = float(times["User time (seconds)"]), float(times["System time (seconds)"])
    cpu = user + sys_
    page = flat(ROOT / "bench" / "results" / "throughput" / "README.md")
    assert (f"{t['programs']:,} programs judged ({100 * t['shrink_share']:.1f}% shrink candidates), {t['run']:,} distinct programs "
            f"checked, user {user:.2f} + sys {sys_:.2f} = {cpu:.1f} CPU-s: **{cpu / t['programs']:.3f} CPU-s per judgement, "
            f"{cpu / t['run']:.4f} per program checked**") in page
    assert f"**{cpu / t['programs']:.3f} CPU-s per judged program**" in flat(ROOT / "README.md")
    assert f"**{cpu / t['run']:.4f} per distinct program checked**" in flat(ROOT / "README.md")


def test_the_static_campaigns_second_seed_is_its_files() -> None:
    base = ROOT / "bench" / "results" / "throughput" / "static-120s" / "now-ab9683a-seed6"
    t = json.loads(base.with_suffix(".json").read_text())
    times = dict(line.strip().split(": ", 1) for line in base.with_suffix(".time").read_text().splitlines() if ": " in line)
    cpu = float(times["User time (seconds)"]) + float(times["System time (seconds)"])
    assert (f"{t['programs']:,} programs judged, {t['run']:,} distinct programs checked, {cpu:.1f} CPU-s: "
            f"{cpu / t['programs']:.3f} per judgement, {cpu / t['run']:.4f} per program checked") in flat(ROOT / "bench" / "results" / "throughput" / "README.md")
    assert f"{cpu / t['run']:.4f} with seed 6" in flat(ROOT / "README.md") and cpu / t["run"] <= 0.10


def test_the_runtime_header_figures_are_the_stage_compare_and_the_rows() -> None:
    """What docs/harness.md and the throughput pages quote of nvcc with codegen.CUDA_DECLS: the stage profile's
    before/after (stages-compare-runtime-header.json)."""
    doc = json.loads((ROOT / "bench" / "results" / "throughput" / "stages-compare-runtime-header.json").read_text())
    now, before = doc["stages"], doc["before"]["stages"]

    def ms(stages: dict, key: str) -> str:
        return f"{stages[key]['cpu_ms_per_program']:.0f}"

    assert (f"a one-program harness module {ms(before, 'compile (single)')} → {ms(now, 'compile (single)')} CPU ms"
            in flat(ROOT / "docs" / "harness.md"))
    page = flat(EARLIER)
    b16, n16 = before["compile (batch16)"]["cpu_ms_per_program"], now["compile (batch16)"]["cpu_ms_per_program"]
    assert f"a one-program harness nvcc {ms(before, 'compile (single)')} -> {ms(now, 'compile (single)')} CPU ms, a batch of 16 {b16} -> {n16}" in page


def test_the_fix_search_figures_are_its_json() -> None:
    """The throughput page's paragraph on the fix search quotes bench/fix_search_cost.py's results file: the totals,
    the bound's, and that the fixes found within 15 CPU-s are the campaign's own, entry for entry."""
    doc = json.loads((ROOT / "bench" / "results" / "throughput" / "fix-search" / "fix-search.json").read_text())
    s, rows = doc["summary"], [r for r in doc["rows"] if "cpu_s" in r]
    page = flat(ROOT / "bench" / "results" / "throughput" / "README.md")
    at = {b: round(sum(min(r["cpu_s"], b) for r in rows), 1) for b in (10, 15)}
    assert (f"**{s['cpu_s_total']} CPU-s in all, {s['cpu_s_total_at_bound']} with each stopped at 30 CPU-s, {at[15]} at 15**"
            in page)
    assert f"saved {s['entries']} findings, {s['searched']} with a racy offending outcome" in page
    assert f"the median search {s['cpu_s_median']} CPU-s, {s['past_bound']} past 30 CPU-s" in page
    within = {r["entry"] for r in rows if r["found"] == "fix" and r["cpu_s"] <= 15}
    assert within == {r["entry"] for r in rows if r["campaign"] == "fix"} and f"the same {len(within)} fixes found within 15" in page
    lost = len(within) - sum(1 for r in rows if r["found"] == "fix" and r["cpu_s"] <= 10)
    assert f"a 10 s bound would lose {lost} of the {len(within)} fixes" in page
    limits = " ".join((ROOT / "fuzzgpu" / "campaign" / "limits.py").read_text().replace("#:", "").split())
    assert f"{s['cpu_s_total_at_bound']:.0f} VM CPU-s at this bound, {at[15]:.0f} at 15 s" in limits


def test_the_oracles_concentration_is_its_json(tmp_path: Path) -> None:
    """The page's paragraph on where the oracle's CPU goes quotes bench/oracle_speed.py --questions' file, and its
    concentration figures are what the rows give (recomputed)."""
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    import oracle_speed

    doc = json.loads((ROOT / "bench" / "results" / "oracle_speed" / "campaign-questions-78a10a2.json").read_text())
    con = oracle_speed.concentration(doc["rows"])
    assert con == doc["concentration"] and doc["same"] == doc["programs"] == len(doc["rows"])
    mb, bulk = con["by_mechanism"]["mbarrier"], con["by_mechanism"]["bulk copy"]
    page = flat(ROOT / "bench" / "results" / "throughput" / "README.md")
    assert (f"a race campaign's questions of {doc['programs']} campaign draws of profile `all`, each from cold caches): "
            f"{doc['new_ms']['mean']} CPU ms a program (mean), but **the dearest 1% of the programs take "
            f"{100 * con['top_share']['1%']:.0f}% of it and the dearest 5% ({con['dearest_5pc']}) {100 * con['top_share']['5%']:.0f}%; "
            f"all {mb['of_the_dearest_5pc']} use an mbarrier and {bulk['of_the_dearest_5pc']} a bulk copy, and the {mb['programs']} "
            f"programs with an mbarrier take {100 * mb['cpu_share']:.0f}% of the oracle's CPU**") in page
    assert mb["of_the_dearest_5pc"] == con["dearest_5pc"]  # "all 30"
    fx = json.loads((ROOT / "bench" / "results" / "throughput" / "fix-search" / "h100-600s-2665391" / "fix-search.json").read_text())
    one = next(r for r in fx["rows"] if r["entry"] == "27d72a0860c81f70.json")
    assert one["found"] == "past the limit" and (f"`27d72a0860c81f70`, one of the dearest fix searches of the 600 s row: "
                                                  f"{one['candidates']} candidates in {one['cpu_s']:.0f} CPU-s") in page
    import tarfile

    from fuzzgpu.corpus.entry import load_entry
    from fuzzgpu.model import events, values

    with tarfile.open(ROOT / "bench" / "results" / "throughput" / "h100-600s-2665391-w20" / "corpus.tar.gz") as tf:
        tf.extract("corpus/27d72a0860c81f70.json", tmp_path, filter="data")
    p = load_entry(tmp_path / "corpus" / "27d72a0860c81f70.json").program
    counts = [len(ts) for ts in events.program_traces(p).traces]
    big = p.threads[counts.index(max(counts))]
    bars = [loc.name for loc in p.locations if loc.kind == "mbarrier"]
    domain = dict(values.domains(p)[1])[bars[0]]
    reads = [ins for ins in big.code if bars[0] in (getattr(ins, "bar", None),) and type(ins).__name__ != "MbarrierInit"]
    assert len(bars) == 1 and (max(counts), len(domain), len(reads)) == (32_928, 13, 3)
    assert (f"one thread has {max(counts):,} traces: its path enumeration forks at each read over the values the read may "
            f"return, and the mbarrier's domain holds {len(domain)}, read three times") in page
    md = flat((ROOT / "bench" / "results" / "oracle_speed" / "campaign-questions-78a10a2.md"))
    assert f"| mbarrier | {mb['programs']} of {doc['programs']} | {100 * mb['cpu_share']:.0f}% |" in md


def test_the_fix_search_of_the_600s_row_is_its_json() -> None:
    """The page's sentences on the 600 s row's fix searches quote bench/fix_search_cost.py's results file: the totals,
    the split by the entries' shrink at the campaign's bound, and what a bound of 20 or 15 s would have kept."""
    doc = json.loads((ROOT / "bench" / "results" / "throughput" / "fix-search" / "h100-600s-2665391" / "fix-search.json").read_text())
    s = doc["summary"]
    at = {b["bound_s"]: b for b in s["by_bound"]}
    page = flat(ROOT / "bench" / "results" / "throughput" / "README.md")
    assert f"{s['entries']} saved findings, {s['searched']} searched, **{s['cpu_s_total_at_bound']} CPU-s with each search stopped at 30 CPU-s** ({s['cpu_s_total']} with each stopped at the script's {s['limit_s']:g} s limit)" in page
    un, sh = at[30.0]["unshrunk"], at[30.0]["shrunk"]
    assert abs(un["cpu_s"] + sh["cpu_s"] - s["cpu_s_total_at_bound"]) < 0.15  # each rounded to 0.1 apart
    assert f"**{un['cpu_s']} of it on the {un['searches']} entries saved not fully shrunk**" in page
    assert f"and {sh['cpu_s']} on the {sh['searches']} shrunk ones" in page
    unfixed = sum(1 for r in doc["rows"] if "cpu_s" in r and not r["shrunk"] and r["found"] == "past the limit")
    assert f"{unfixed} of them found no fix within {s['limit_s']:g} CPU-s" in page
    run = ROOT / "bench" / "results" / "throughput" / "h100-600s-2665391-w20"
    c = json.loads((run / "cpu.json").read_text())
    assert f"Against the run's {c['user_s'] + c['sys_s']:,.0f} CPU-s" in page

    def kept(b: float) -> tuple[float, int]:
        return round(at[b]["shrunk"]["cpu_s"] + at[b]["unshrunk"]["cpu_s"], 1), at[b]["shrunk"]["fixes_within"] + at[b]["unshrunk"]["fixes_within"]

    (c20, f20), (c15, f15), (c30, f30) = kept(20.0), kept(15.0), kept(30.0)
    assert f"the saving, about {100 * (c30 - c20) / (c['user_s'] + c['sys_s']):.0f}% of a run's CPU" in page
    assert (f"A bound of 20 s would have cost {c20} CPU-s and found {f20} of the {f30} fixes found within 30, one of 15 s "
            f"{c15} and {f15}") in page


def test_the_h100_row_at_bf3981c_and_its_folders_readme_are_its_files() -> None:
    """The row of code bf3981c (one H100; its tools.json did not come back): the page's table row, what earlier.md
    says of it, the folder's README (programs, the pool, the CPU by process, the seven known classes) are its files';
    its reading's comparison with the a464825 row is computed from both folders."""
    page = flat(ROOT / "bench" / "results" / "throughput" / "README.md") + " " + flat(EARLIER)
    run = ROOT / "bench" / "results" / "throughput" / "h100-300s-bf3981c-w20"
    t, cpu, folder = assert_row_and_folder(run, page, ("12", "13"))
    split = json.loads((run / "cpu-split.json").read_text())["cpu_s"]
    assert (f"**{t['run_per_hour']:,} programs run per hour ({t['gpu_programs_1e7_per_hour']:,} at >= 1e7 instances), "
            f"{cpu / t['run']:.3f} CPU-s per program run**; the workers' Python {split['worker'] / t['run']:.3f}, the backends' "
            f"nvcc and nvdisasm {split[chr(98) + 'ackend' + chr(39) + 's tools'] / t['run']:.3f}") in page
    b, bcpu, _ = campaign_row(A464825[0])
    assert f"({cpu:,.0f} CPU-s against {bcpu:,.0f})" in page and f"({cpu:,.0f} CPU-s against {bcpu:,.0f})" in folder
    assert (f"this run made {100 * (t['run_per_hour'] / b['run_per_hour'] - 1):.0f}% more runs at "
            f"{100 * (1 - (cpu / t['run']) / (bcpu / b['run'])):.0f}% less CPU a run") in folder


def test_the_gc_paragraph_quotes_the_gc_bench() -> None:
    rows = json.loads((ROOT / "bench" / "results" / "throughput" / "gc" / "gc-campaign.json").read_text())["rows"]
    page = flat(ROOT / "bench" / "results" / "throughput" / "README.md")
    default = [r for r in rows if r["thresholds"] == [700, 10, 10]]
    ours = [r for r in rows if r["thresholds"] == [2000, 20, 100]]
    assert len(default) == len(ours) == 3
    full = sorted(r["collections"][2] for r in default)
    assert f"{full[0]}-{full[-1]} of them" in page
    assert f"{min(r['gc_s'] for r in default)}-{max(r['gc_s'] for r in default)} s" in page
    for a, b in zip(default, ours):
        assert f"{a['cpu_ms_per_judged']} -> {b['cpu_ms_per_judged']}" in page
        assert f"{a['all_cpu_ms_per_judged']} -> {b['all_cpu_ms_per_judged']}" in page


def test_the_h100_row_at_dee376c_and_its_folders_readme_are_its_files() -> None:
    """The newest row (code dee376c, one H100): the page's table row and lead, the folder's README (programs, the pool,
    the CPU by process and by tool, the seven known classes, the comparison with bf3981c's row) and the README's
    figures are its files'."""
    page = flat(ROOT / "bench" / "results" / "throughput" / "README.md")
    run = ROOT / "bench" / "results" / "throughput" / "h100-300s-dee376c-w20"
    t, cpu, folder = assert_row_and_folder(run, page, ("12", "13", "19"))
    split = json.loads((run / "cpu-split.json").read_text())["cpu_s"]
    tools = json.loads((run / "tools.json").read_text())
    static = tools["nvcc static"]["cpu_s"] + tools["nvdisasm static"]["cpu_s"]
    assert (f"**{t['run_per_hour']:,} programs run per hour ({t['gpu_programs_1e7_per_hour']:,} at >= 1e7 instances), "
            f"{cpu / t['run']:.3f} CPU-s per program run**; the workers' Python {split['worker'] / t['run']:.3f}, the harness's "
            f"nvcc {tools['nvcc harness']['cpu_s'] / t['run']:.3f}, the static check {static / t['run']:.3f}, the backends' Python "
            f"{split['backend'] / t['run']:.3f}") in page
    b, bcpu, _ = campaign_row(ROOT / "bench" / "results" / "throughput" / "h100-300s-bf3981c-w20")
    bsplit = json.loads((ROOT / "bench" / "results" / "throughput" / "h100-300s-bf3981c-w20" / "cpu-split.json").read_text())["cpu_s"]
    assert (f"this run made {100 * (1 - t['run_per_hour'] / b['run_per_hour']):.0f}% fewer runs at "
            f"{100 * ((cpu / t['run']) / (bcpu / b['run']) - 1):.0f}% more CPU a run") in folder
    assert (f"({split['worker'] / t['programs']:.4f} a judgement against {bsplit['worker'] / b['programs']:.4f})" in folder
            and f"{split['worker'] / t['programs']:.4f} CPU-s of the workers' Python a judgement against bf3981c's "
            f"{bsplit['worker'] / b['programs']:.4f}" in page)
    assert f"{t['run_per_hour']:,} runs/h ({t['gpu_programs_1e7_per_hour']:,} at >= 1e7 instances), {cpu / t['run']:.3f} CPU-s a run" in flat(ROOT / "README.md")


def test_the_gc_paragraph_quotes_the_isolated_runs() -> None:
    """The campaign's configuration (the backend in its own process) and Python 3.12: the page's per-judgement figures
    are the runs' files'."""
    page = flat(ROOT / "bench" / "results" / "throughput" / "README.md")
    for name, py in (("gc-campaign-isolated", "3.11"), ("gc-campaign-isolated-py312", "3.12")):
        doc = json.loads((ROOT / "bench" / "results" / "throughput" / "gc" / f"{name}.json").read_text())
        assert doc["isolated"] and doc["python"].startswith(py)
        default = [r for r in doc["rows"] if r["thresholds"] == [700, 10, 10]]
        ours = [r for r in doc["rows"] if r["thresholds"] == [2000, 20, 100]]
        assert default and len(default) == len(ours)
        for a, b in zip(default, ours):
            assert f"{a['cpu_ms_per_judged']} -> {b['cpu_ms_per_judged']}" in page


def test_the_collectors_share_in_docs_is_the_gc_benchs() -> None:
    """docs/fuzzing.md's "29-35% ... now 11-16%": the collector's share of the campaign process's CPU at Python's
    thresholds in the one-process runs, and at the campaign's in every run of the gc bench."""
    gc_dir = ROOT / "bench" / "results" / "throughput" / "gc"
    rows = {name: json.loads((gc_dir / f"{name}.json").read_text())["rows"]
            for name in ("gc-campaign", "gc-campaign-isolated", "gc-campaign-isolated-py312")}

    def span(rs: list[dict]) -> str:
        shares = [100 * r["gc_s"] / r["cpu_s"] for r in rs]
        return f"{min(shares):.0f}-{max(shares):.0f}%"

    before = span([r for r in rows["gc-campaign"] if r["thresholds"] == [700, 10, 10]])
    now = span([r for rs in rows.values() for r in rs if r["thresholds"] == [2000, 20, 100]])
    assert f"{before} of a static campaign process's CPU on a 2-core machine, now {now}" in flat(ROOT / "docs" / "fuzzing.md")


def test_the_h100_row_at_b9ef5a9_and_its_folders_readme_are_its_files() -> None:
    """The newest row (code b9ef5a9, dee376c's campaign code, one H100): the page's table row and lead, the folder's
    README (the CPU by process and tool, the workers' collector, the seven known classes, the comparison with
    dee376c's row of the same code on another machine) and the README's figures are its files'."""
    page = flat(ROOT / "bench" / "results" / "throughput" / "README.md")
    run = ROOT / "bench" / "results" / "throughput" / "h100-300s-b9ef5a9-w20"
    t, cpu, folder = assert_row_and_folder(run, page, ("12", "13", "17"))
    split = json.loads((run / "cpu-split.json").read_text())["cpu_s"]
    tools = json.loads((run / "tools.json").read_text())
    harness, nvdisasm = tools["nvcc harness"], tools["nvdisasm static"]
    static = tools["nvcc static"]["cpu_s"] + nvdisasm["cpu_s"]
    assert (f"**{t['run_per_hour']:,} programs run per hour ({t['gpu_programs_1e7_per_hour']:,} at >= 1e7 instances), "
            f"{cpu / t['run']:.3f} CPU-s per program run**; the workers' Python {split['worker'] / t['run']:.3f}, the harness's "
            f"nvcc {harness['cpu_s'] / t['run']:.3f}, the static check {static / t['run']:.3f}, the backends' Python "
            f"{split['backend'] / t['run']:.3f}; the workers' collector {100 * t['gc_clock']['gc_share']:.1f}% of their CPU") in page
    assert_gc_clock(t, folder)
    before = ROOT / "bench" / "results" / "throughput" / "h100-300s-dee376c-w20"
    b, bcpu, _ = campaign_row(before)
    btools = json.loads((before / "tools.json").read_text())
    bsplit = json.loads((before / "cpu-split.json").read_text())["cpu_s"]
    assert (f"this run made {100 * (1 - t['run_per_hour'] / b['run_per_hour']):.0f}% fewer runs at "
            f"{100 * ((cpu / t['run']) / (bcpu / b['run']) - 1):.0f}% more CPU a run") in folder
    assert (f"the harness's nvcc {harness['cpu_s'] / t['run']:.3f} CPU-s a run against {btools['nvcc harness']['cpu_s'] / b['run']:.3f}, "
            f"nvdisasm {nvdisasm['cpu_s'] / nvdisasm['calls']:.2f} CPU-s a call against "
            f"{btools['nvdisasm static']['cpu_s'] / btools['nvdisasm static']['calls']:.2f}") in folder
    assert (f"the workers' Python a judgement was {split['worker'] / t['programs']:.4f} CPU-s against "
            f"{bsplit['worker'] / b['programs']:.4f}") in folder
    readme = flat(ROOT / "README.md")
    assert f"{t['run_per_hour']:,} runs/h ({t['gpu_programs_1e7_per_hour']:,} at >= 1e7 instances), {cpu / t['run']:.3f} CPU-s a run" in readme
    assert (f"at b9ef5a9 on the H100 {harness['cpu_s'] / t['run']:.3f}, {static / t['run']:.3f} and "
            f"{split['worker'] / t['run']:.3f}") in readme


def test_the_collectors_ab_on_one_gpu_machine_is_its_files() -> None:
    """gc/h100-180s-ab-b9ef5a9 (the first pair, repeated since: gc/h100-90s-ab-2665391): each side ran at the thresholds it
    is named for (the collector's clock says under which thresholds each collection ran), and the folder's table and
    earlier.md (where the throughput page's paragraph on it moved) quote its files."""
    ab = ROOT / "bench" / "results" / "throughput" / "gc" / "h100-180s-ab-b9ef5a9"
    folder, page = flat(ab / "README.md"), flat(ROOT / "bench" / "results" / "throughput" / "earlier.md")
    sides = {}
    for name in ("campaign", "python-default"):
        t = json.loads((ab / name / "throughput.json").read_text())
        c = json.loads((ab / name / "cpu.json").read_text())
        split = json.loads((ab / name / "cpu-split.json").read_text())
        sides[name] = (t, c["user_s"] + c["sys_s"], split["cpu_s"])
    ours, default = sides["campaign"], sides["python-default"]
    by = ours[0]["gc_clock"]["collections_by_thresholds"]
    assert set(default[0]["gc_clock"]["collections_by_thresholds"]) == {"700,10,10"}
    assert by["2000,20,100"] > 50 * by["700,10,10"]  # Python's only before the campaign starts

    def cells(f: Callable[[tuple[dict, float, dict]], str]) -> str:
        return f"| {f(ours)} | {f(default)} |"

    def ms(s: tuple[dict, float, dict]) -> str:
        return f"{1000 * s[2]['worker'] / s[0]['programs']:.1f}"

    def share(s: tuple[dict, float, dict]) -> str:
        return f"{100 * s[0]['gc_clock']['gc_share']:.1f}%"

    def gpu_ms(s: tuple[dict, float, dict]) -> str:
        return f"{1000 * s[0]['gpu_seconds'] / s[0]['run']:.1f}"

    assert cells(lambda s: f"**{s[0]['run_per_hour']:,} ({s[0]['gpu_programs_1e7_per_hour']:,})**") in folder
    assert cells(lambda s: f"{s[2]['worker']:,.0f} (**{ms(s)}**)") in folder
    assert cells(lambda s: f"{s[0]['gc_clock']['gc_cpu_s']} (**{share(s)}**)") in folder
    assert cells(lambda s: f"{s[1]:,.0f} ({100 * s[1] / (16 * s[0]['wall_s']):.1f}%; {s[1] / s[0]['run']:.3f})") in folder
    assert cells(lambda s: f"{s[0]['gpu_busy_share']:.2f} ({s[0]['gpu_util_nvml_mean']:.2f}); {gpu_ms(s)}") in folder
    cut = f"{ms(default)} -> {ms(ours)} ms"
    assert f"workers' Python a judgement {cut}." in folder and f"the workers' Python a judgement {cut}, the collector's share of it {share(default)} -> {share(ours)}" in page
    runs = f"{default[0]['run_per_hour']:,} -> {ours[0]['run_per_hour']:,}"
    assert f"not different in this pair, {runs}**" in page
    def clock(s: tuple[dict, float, dict], part: str) -> str:
        g, n = s[0]["gc_clock"], s[0]["programs"]
        cpu = {"all": g["process_cpu_s"], "gc": g["gc_cpu_s"], "rest": g["process_cpu_s"] - g["gc_cpu_s"]}[part]
        return f"{1000 * cpu / n:.1f}"

    assert (f"their CPU a judgement {clock(default, 'all')} -> {clock(ours, 'all')} ms), the collector's part fell "
            f"{clock(default, 'gc')} -> {clock(ours, 'gc')} ms a judgement") in folder
    assert f"and the rest {clock(default, 'rest')} -> {clock(ours, 'rest')} ms, which is not attributed" in folder
    assert f"(its own CPU {clock(default, 'gc')} -> {clock(ours, 'gc')} ms a judgement)" in page
    backends = [json.loads((ab / name / "cpu-split.json").read_text())["processes"]["backend"] for name in ("campaign", "python-default")]
    assert (f"(shrink share {ours[0]['shrink_share']:.2f} against {default[0]['shrink_share']:.2f}, "
            f"{backends[0]} backend processes against {backends[1]})") in folder
    assert cells(lambda s: f"{s[0]['programs']:,}") in folder and cells(lambda s: str(s[0]["runs_with_timeouts"])) in folder
    assert cells(lambda s: f"{s[0]['gc_clock']['collections'][2]:,} ({s[0]['gc_clock']['gc_cpu_s_by_generation'][2]})") in folder
    assert cells(lambda s: f"{s[2][chr(98) + 'ackend' + chr(39) + 's tools']:,.0f}") in folder
    assert (f"the campaign used less CPU in all ({default[1]:,.0f} -> {ours[1]:,.0f} CPU-s), and its runs took "
            f"{(ours[0]['gpu_seconds'] / ours[0]['run']) / (default[0]['gpu_seconds'] / default[0]['run']):.1f} times the GPU time each") in page


def test_the_gpu_time_page_is_the_scripts_reading_of_the_corpora() -> None:
    """bench/gpu_time.py reads the b9ef5a9 row's corpus as gpu-time.json says, and the throughput page's paragraph on
    the GPU's side of the moonshot quotes gpu-time.json (and the harness bench's MP launch time) as they are."""
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    import gpu_time

    doc = json.loads((ROOT / "bench" / "results" / "throughput" / "gpu-time" / "gpu-time.json").read_text())["corpora"]
    tarball = "bench/results/throughput/h100-300s-b9ef5a9-w20/corpus.tar.gz"
    again = gpu_time.analyse(*gpu_time.records(ROOT / tarball))
    assert again["all"] == doc[tarball]["all"] and again["splits"] == doc[tarball]["splits"]
    md = (ROOT / "bench" / "results" / "throughput" / "gpu-time" / "gpu-time.md").read_text()
    for name, a in doc.items():  # the page's tables are the JSON's, and its campaign figures each row's throughput.json
        tput = json.loads((ROOT / name).parent.joinpath("throughput.json").read_text())
        assert a["campaign"] == {k: tput[k] for k in a["campaign"]}
        assert gpu_time.table(name, a, tput) in md
    assert again["all"]["runs"] == json.loads((ROOT / tarball).parent.joinpath("throughput.json").read_text())["gpu_runs"]
    page = flat(ROOT / "bench" / "results" / "throughput" / "README.md")
    rows = list(doc.values())

    def span(f: Callable[[dict], float], fmt: str = "{}") -> str:
        vals = sorted(f(a) for a in rows)
        return f"{fmt.format(vals[0])}-{fmt.format(vals[-1])}"

    def split(name: str, key: str) -> Callable[[dict], float]:
        return lambda a: a["splits"][name][key]

    def pct(name: str, key: str) -> str:
        return span(lambda a: 100 * a["splits"][name][key], "{:.1f}")

    assert f"**{span(lambda a: a['all']['gpu_ms_mean'])} GPU ms a run (mean, CUDA events)" in page
    assert f"GPU-bound at {span(lambda a: a['all']['gpu_bound_runs_per_hour'], '{:,}')} runs/h by the events" in page
    nvml = span(lambda a: round(a["campaign"]["run_per_hour"] / a["campaign"]["gpu_util_nvml_mean"], -3), "{:,.0f}")
    assert f"~{nvml} by NVML's share**" in page
    assert (f"the two-grid programs, {pct('two grids', 'share_of_runs')}% of the runs, take "
            f"{pct('two grids', 'share_of_gpu_s')}% of the GPU time ({span(split('two grids', 'us_per_launch_median'))} us "
            f"a launch, median, against {span(split('one grid', 'us_per_launch_median'))} for one grid") in page
    on, off = "two grids, PDL (the primary spins pdl_delay_ns)", "two grids, no PDL (stream-ordered)"
    assert (f"{pct(on, 'share_of_runs')}% of the runs, take {pct(on, 'share_of_gpu_s')}% of it at "
            f"{span(split(on, 'us_per_launch_median'))} us a launch, the stream-ordered two-grid ones "
            f"{span(split(off, 'us_per_launch_median'))};") in page
    for a in rows:  # the split by PDL covers the two-grid runs, and no record was left out
        two = a["splits"]["two grids"]
        assert two["runs"] == a["splits"][on]["runs"] + a["splits"][off]["runs"] and not any(a["left_out"].values())
    assert (f"the runs with a timeout, {pct('a timeout', 'share_of_runs')}% of them, take {pct('a timeout', 'share_of_gpu_s')}%"
            in page)
    plain = "one grid, no cluster, no timeout"
    assert f"spend {span(split(plain, 'us_per_launch_median'))} us a launch of 65,536" in page
    tput = json.loads((ROOT / "bench" / "results" / "gpu-tests" / "h100-2026-12-06-b9ef5a9-harness-tput.json").read_text())["tput"]
    mp = next(r for r in tput if r["config"] == "plain_s1")
    meta = mp["histogram"]["meta"]
    wide = next(r for r in tput if r["config"] == "plain_s1_tc512")
    assert (f"spends {1e6 * meta['gpu_s'] / meta['launches']:.1f} on the H100 ({meta['launches']:,} launches of "
            f"{meta['instances_per_launch']:,} in {meta['gpu_s']:.3f} GPU-s") in page
    assert f"ran {wide['inst_per_s'] / 1e9:.2f}e9 instances/s against {mp['inst_per_s'] / 1e9:.2f}e9" in page


def test_gpu_time_refuses_what_is_no_gpu_campaigns_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An empty folder (no evidence of the cuda backend) and a file that is no tarball: exit 2, one line naming it."""
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    import gpu_time

    assert gpu_time.main([str(tmp_path)]) == 2
    bad = tmp_path / "corpus.tar.gz"
    bad.write_text("not a tarball")
    assert gpu_time.main([str(bad)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and err[0].startswith(f"gpu_time: {tmp_path}: no evidence records") and err[1].startswith(f"gpu_time: {bad}: cannot read")


def test_the_readmes_gpu_ceiling_is_gpu_time_json() -> None:
    doc = json.loads((ROOT / "bench" / "results" / "throughput" / "gpu-time" / "gpu-time.json").read_text())["corpora"]
    ms = sorted(a["all"]["gpu_ms_mean"] for a in doc.values())
    runs = sorted(a["all"]["gpu_bound_runs_per_hour"] for a in doc.values())
    assert (f"dee376c's campaign code: {ms[0]}-{ms[-1]} ms, CUDA events): {runs[0]:,}-{runs[-1]:,} runs/h"
            in flat(ROOT / "README.md"))


def test_the_readmes_gpu_test_row_quotes_the_harness_rates_of_its_newest_run() -> None:
    tput = json.loads((ROOT / "bench" / "results" / "gpu-tests" / "h100-2026-12-06-b9ef5a9-harness-tput.json").read_text())["tput"]
    rates = sorted(r["inst_per_s"] for r in tput if r["config"] == "plain_s1")
    assert f"harness {rates[0] / 1e9:.2f}-{rates[-1] / 1e9:.2f}e9 instances/s (MP, default configuration, on this H100" in flat(ROOT / "README.md")
    log = (ROOT / "bench" / "results" / "gpu-tests" / "h100-2026-12-06-b9ef5a9.txt").read_text().splitlines()[-1]
    assert "126 passed, 6 skipped" in log and "4 xfailed" in log and "failed," not in log.replace("xfailed", "")


def test_gc_ab_sides_the_runs_by_the_thresholds_their_clock_saw(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """bench/gc_ab.py (bench/h200.sh gcab's summary) on the committed one-pair A/B, named in the other order: each folder
    goes to the side of the thresholds its workers' collections ran under, with the figures its README's table gives;
    a folder without the clock is refused."""
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    import gc_ab

    ab = ROOT / "bench" / "results" / "throughput" / "gc" / "h100-180s-ab-b9ef5a9"
    assert gc_ab.main([str(ab / "python-default"), str(ab / "campaign"), "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "gc-ab.json").read_text())
    assert gc_ab.table(gc_ab.sides(doc["runs"])) in (tmp_path / "gc-ab.md").read_text()
    side = {Path(r["folder"]).name: r["thresholds"] for r in doc["runs"]}
    assert side == {"campaign": "2000,20,100", "python-default": "700,10,10"}
    folder = flat(ab / "README.md")
    ours, default = (doc["sides"][k] for k in ("2000,20,100", "700,10,10"))
    assert f"(**{ours['worker_ms_per_judgement']}**) |" in folder and f"(**{default['worker_ms_per_judgement']}**) |" in folder
    assert f"the collector's part fell {default['gc_ms_per_judgement']} -> {ours['gc_ms_per_judgement']} ms" in folder
    assert gc_ab.main([str(ROOT / "bench" / "results" / "throughput" / "h100-300s-a464825-w20")]) == 2  # no gc_clock
    assert capsys.readouterr().err.strip().endswith("no gc_clock in throughput.json (run with GCCLOCK=1)")


def test_the_repeated_gc_ab_is_its_runs(tmp_path: Path) -> None:
    """gc/h100-90s-ab-2665391 (two pairs in alternating order, bench/h200.sh gcab): bench/gc_ab.py on its runs, unpacked
    from runs.tar.gz, gives the committed table (each run sided by the thresholds its clock saw, as its name says);
    its README, the throughput page, docs/fuzzing.md and the README quote the sides' means as they are."""
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    import gc_ab

    ab = ROOT / "bench" / "results" / "throughput" / "gc" / "h100-90s-ab-2665391"
    runs = unpack_runs(ab / "runs.tar.gz", tmp_path / "runs")
    assert [Path(r).name for r in runs] == ["1-campaign", "1-python-default", "2-campaign", "2-python-default"]
    assert gc_ab.main([*runs, "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "gc-ab.json").read_text())
    committed = json.loads((ab / "gc-ab.json").read_text())
    assert doc["sides"] == committed["sides"]
    assert gc_ab.table(gc_ab.sides(doc["runs"])) in (ab / "gc-ab.md").read_text()
    assert {Path(r["folder"]).name: r["thresholds"] for r in doc["runs"]} == {
        "1-campaign": "2000,20,100", "2-campaign": "2000,20,100", "1-python-default": "700,10,10", "2-python-default": "700,10,10"}
    ours, default = (doc["sides"][k] for k in ("2000,20,100", "700,10,10"))
    mine = [r for r in doc["runs"] if r["thresholds"] == "2000,20,100"]
    theirs = [r for r in doc["runs"] if r["thresholds"] == "700,10,10"]
    assert min(r["run_per_hour"] for r in mine) > max(r["run_per_hour"] for r in theirs)  # "no run of one side overlaps"
    assert max(r["cpu_s_per_run"] for r in mine) < min(r["cpu_s_per_run"] for r in theirs)
    folder = flat(ab / "README.md")
    assert (f"the workers' Python cost {ours['worker_ms_per_judgement']:.1f} ms a judgement against "
            f"{default['worker_ms_per_judgement']:.1f}") in folder
    assert (f"{ours['gc_ms_per_judgement']:.1f} ms against {default['gc_ms_per_judgement']:.1f} ({100 * ours['gc_share']:.1f}% of their CPU "
            f"against {100 * default['gc_share']:.1f}%)") in folder
    gain = f"{100 * (ours['run_per_hour'] / default['run_per_hour'] - 1):.1f}%"
    assert f"(means {ours['run_per_hour']:,.0f} and {default['run_per_hour']:,.0f}, +{gain}; pair by pair" in folder
    page = flat(ROOT / "bench" / "results" / "throughput" / "README.md")
    assert (f"**the workers' Python a judgement {default['worker_ms_per_judgement']:.1f} -> {ours['worker_ms_per_judgement']:.1f} ms "
            f"(means of two), the collector's part {default['gc_ms_per_judgement']:.1f} -> {ours['gc_ms_per_judgement']:.1f} ms "
            f"({100 * default['gc_share']:.1f}% -> {100 * ours['gc_share']:.1f}% of it)") in page
    assert (f"the programs run per hour {default['run_per_hour']:,.0f} -> {ours['run_per_hour']:,.0f} (+{gain}), "
            f"{default['cpu_s_per_run']} -> {ours['cpu_s_per_run']} CPU-s a run**") in page
    cut = f"{100 * (1 - ours['worker_ms_per_judgement'] / default['worker_ms_per_judgement']):.0f}%"
    assert f"they cut it by {cut}, two pairs in alternating order" in page
    by_name = {Path(r["folder"]).name: r["run_per_hour"] for r in doc["runs"]}
    pairs = [100 * (by_name[f"{i}-campaign"] / by_name[f"{i}-python-default"] - 1) for i in (1, 2)]
    assert f"(pair by pair +{pairs[0]:.1f}% and +{pairs[1]:.1f}%: two pairs,\nnot tested beyond that)".replace("\n", " ") in page
    assert f"pair by pair +{pairs[0]:.1f}% and +{pairs[1]:.1f}%)" in folder
    docs = flat(ROOT / "docs" / "fuzzing.md")
    assert (f"{100 * default['gc_share']:.0f}% of their CPU at Python's thresholds and {100 * ours['gc_share']:.0f}% at these, "
            f"their CPU a judgement {cut} lower and the programs run per hour {pairs[0]:.0f}% and {pairs[1]:.0f}% higher, in two pairs") in docs
    assert (f"the workers' Python a judgement {default['worker_ms_per_judgement']:.1f} -> {ours['worker_ms_per_judgement']:.1f} ms "
            f"(the collector {100 * default['gc_share']:.1f}% -> {100 * ours['gc_share']:.1f}% of it), the programs run per "
            f"hour {default['run_per_hour']:,.0f} -> {ours['run_per_hour']:,.0f}") in flat(ROOT / "README.md")


def test_gc_ab_sides_runs_by_a_key_they_recorded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """bench/gc_ab.py --by KEY (bench/h200.sh ab's summary): the runs of the repeated A/B sided by a key of their
    throughput.json -- the shrink share, different in each, on four sides --; the static-check pool's window, the same
    in all four, would put them on one side: no A/B, refused; a key a run lacks is refused with one line naming the
    folder."""
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    import gc_ab

    runs = unpack_runs(ROOT / "bench" / "results" / "throughput" / "gc" / "h100-90s-ab-2665391" / "runs.tar.gz", tmp_path / "runs")
    assert gc_ab.main([*runs, "--by", "static_pool.window_s", "--label", "ab", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == "gc_ab: all 4 runs on one side (static_pool.window_s = 0.5): no A/B"
    assert not (tmp_path / "ab.json").exists()
    assert gc_ab.main([*runs, "--by", "shrink_share", "--label", "ab", "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "ab.json").read_text())
    assert doc["by"] == "shrink_share" and len(doc["sides"]) == 4
    assert "| `shrink_share` | run |" in (tmp_path / "ab.md").read_text()
    assert gc_ab.main([*runs, "--by", "shrink_share"]) == 0
    printed = capsys.readouterr().out
    assert all(f"| {json.loads(Path(r, 'throughput.json').read_text())['shrink_share']:g} | `{Path(r).name}` |" in printed
               for r in runs)
    assert gc_ab.main([runs[0], "--by", "static_pool.nothing"]) == 2
    assert capsys.readouterr().err.strip() == f"gc_ab: {runs[0]}: no static_pool.nothing in throughput.json"
    for i, r in enumerate(runs[:2]):  # a value from a file reaches the page and stderr without its control characters
        t = json.loads(Path(r, "throughput.json").read_text())
        Path(r, "throughput.json").write_text(json.dumps({**t, "label": f"run\x1b[31m{i}\x07"}))
    assert gc_ab.main([*runs[:2], "--by", "label"]) == 0
    assert "| run?[31m0? | `1-campaign` |" in capsys.readouterr().out
    assert gc_ab.main([runs[0], "--by", "static_pool"]) == 2
    assert capsys.readouterr().err.strip() == f"gc_ab: {runs[0]}: static_pool in throughput.json is no single value"


@pytest.mark.parametrize("name", ["h100-55s-w20-w24-468a2bc", "h100-240s-w20-w24-d4e9b23"])
def test_an_ab_of_workers_is_its_files(tmp_path: Path, name: str) -> None:
    """throughput/ab/<name> (20 workers against 24, one pair): each run recorded the workers its side set, the committed
    table is bench/gc_ab.py's reading of the runs in runs.tar.gz, both end marks say exit 0, and the README quotes them."""
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    import gc_ab

    ab = ROOT / "bench" / "results" / "throughput" / "ab" / name
    runs = unpack_runs(ab / "runs.tar.gz", tmp_path)
    assert [Path(r).name for r in runs] == ["1-a", "1-b"]
    assert [(tmp_path / f"1-{s}.done").read_text().split()[:2] for s in "ab"] == [["exit", "0"], ["exit", "0"]]
    assert [json.loads(Path(r, "throughput.json").read_text())["workers"] for r in runs] == [20, 24]
    assert gc_ab.main([*runs, "--by", "workers", "--label", "ab", "--out", str(tmp_path / "out")]) == 0
    doc = json.loads((tmp_path / "out" / "ab.json").read_text())
    assert doc["sides"] == json.loads((ab / "ab.json").read_text())["sides"]
    assert gc_ab.table(gc_ab.sides(doc["runs"]), "`workers`") in (ab / "ab.md").read_text()
    r20, r24 = doc["sides"]["20"], doc["sides"]["24"]
    busy = [100 * (lambda c: c["user_s"] + c["sys_s"])(json.loads(Path(r, "cpu.json").read_text())) /
            (16 * json.loads(Path(r, "throughput.json").read_text())["wall_s"]) for r in runs]
    folder = flat(ab / "README.md")
    assert (f"24 workers made {r24['run_per_hour']:,.0f} runs/h against {r20['run_per_hour']:,.0f} ({r24['cpu_s_per_run']:.3f} "
            f"against {r20['cpu_s_per_run']:.3f} CPU-s a run), with the CPU {busy[1]:.0f}% and {busy[0]:.0f}% busy") in folder
    if name.endswith("d4e9b23"):  # the host against the 600 s row's, the same code: the workers' Python and the tools
        row = ROOT / "bench" / "results" / "throughput" / "h100-600s-2665391-w20"
        here = [json.loads(Path(r, "cpu-split.json").read_text())["cpu_s"] for r in runs][0]
        there = json.loads((row / "cpu-split.json").read_text())["cpu_s"]
        n20, n600 = json.loads(Path(runs[0], "throughput.json").read_text())["run"], json.loads((row / "throughput.json").read_text())["run"]
        tools = "backend's tools"
        assert (f"the workers' Python {here['worker'] / n20:.3f} and the backends' tools {here[tools] / n20:.3f} a run here against "
                f"{there['worker'] / n600:.3f} and {there[tools] / n600:.3f} there") in folder


def test_the_600s_h100_row_at_2665391_is_its_files() -> None:
    """The newest row (600 s, one H100 on a fast host): the page's table row and lead, its folder's README (the CPU by
    process and tool, the collector, the seven known classes, the comparison with b9ef5a9's row of the same campaign
    code on a slower host), the gpu-time page's reading of its corpus, and the README's figures are its files'."""
    page = flat(ROOT / "bench" / "results" / "throughput" / "README.md")
    run = ROOT / "bench" / "results" / "throughput" / "h100-600s-2665391-w20"
    t, cpu, folder = assert_row_and_folder(run, page, ("12", "13"))
    split = json.loads((run / "cpu-split.json").read_text())
    tools = json.loads((run / "tools.json").read_text())
    harness, sn, sd = tools["nvcc harness"], tools["nvcc static"], tools["nvdisasm static"]
    static = sn["cpu_s"] + sd["cpu_s"]
    w = split["cpu_s"]
    assert (f"**{t['run_per_hour']:,} programs run per hour ({t['gpu_programs_1e7_per_hour']:,} at >= 1e7 instances), "
            f"{cpu / t['run']:.3f} CPU-s per program run**; the workers' Python {w['worker'] / t['run']:.3f}, the harness's nvcc "
            f"{harness['cpu_s'] / t['run']:.3f}, the static check {static / t['run']:.3f}, the backends' Python "
            f"{w['backend'] / t['run']:.3f}; the workers' collector {100 * t['gc_clock']['gc_share']:.1f}% of their CPU; the CPU "
            f"{100 * cpu / (16 * t['wall_s']):.1f}% busy, a kernel resident {100 * t['gpu_util_nvml_mean']:.1f}% of the time "
            f"(NVML; CUDA events {t['gpu_busy_share']:.2f})") in page
    assert (f"**Now** (the 600 s row of 2665391, on the fastest H100 host so far): {cpu / t['run']:.3f} CPU-s per program run -- "
            f"the harness's nvcc {harness['cpu_s'] / t['run']:.3f}, the workers' Python {w['worker'] / t['run']:.3f}, the static check "
            f"{static / t['run']:.3f}, the backends' Python {w['backend'] / t['run']:.3f} -- so a million runs an hour (~0.06 CPU-s a "
            f"run on 16 cores) needs {cpu / t['run'] / 0.06:.0f} times less CPU a run") in page.replace("four times", "4 times")
    goal = (f"{100 * t['gpu_programs_1e7_per_hour'] / 225_000:.0f}% of the goal's figure at >= 1e7 instances "
            f"({100 * t['run_per_hour'] / 225_000:.0f}% counting every run)")  # the goal counts runs of >= 1e7 instances
    assert goal in page
    assert f"{100 * t['gpu_programs_1e7_per_hour'] / 225_000:.0f}% of it at >= 1e7 instances on the fastest H100 host" in flat(ROOT / "README.md")
    assert_gc_clock(t, folder)
    assert (f"the harness's nvcc {harness['calls']:,} calls, {harness['cpu_s']:,.0f} CPU-s (**{harness['cpu_s'] / t['run']:.3f} a run**; "
            f"{harness['programs_per_call_mean']} programs a call, mean, {harness['kernels_per_program']} kernels a program)") in folder
    assert (f"nvdisasm {sd['calls']:,} calls, {sd['cpu_s']:,.0f} CPU-s (**{static / t['run']:.3f} a run**; nvdisasm "
            f"{sd['cpu_s'] / sd['calls']:.2f} CPU-s a call)") in folder
    before = ROOT / "bench" / "results" / "throughput" / "h100-300s-b9ef5a9-w20"
    b, bcpu, _ = campaign_row(before)
    bt = json.loads((before / "tools.json").read_text())
    bw = json.loads((before / "cpu-split.json").read_text())["cpu_s"]
    assert (f"this run made {100 * (t['run_per_hour'] / b['run_per_hour'] - 1):.0f}% more runs an hour at "
            f"{100 * (1 - (cpu / t['run']) / (bcpu / b['run'])):.0f}% less CPU a run") in folder
    unit = (harness["cpu_s_per_size_unit"], bt["nvcc harness"]["cpu_s_per_size_unit"])
    call = (sd["cpu_s"] / sd["calls"], bt["nvdisasm static"]["cpu_s"] / bt["nvdisasm static"]["calls"])
    med = (sn["cpu_s_per_call_median"], bt["nvcc static"]["cpu_s_per_call_median"])
    assert (f"the harness's nvcc {unit[0]:.3f} CPU-s a unit of size against {unit[1]:.3f} ({100 * (unit[0] / unit[1] - 1):.0f}%), "
            f"nvdisasm {call[0]:.2f} CPU-s a call (mean) against {call[1]:.2f} ({100 * (call[0] / call[1] - 1):.0f}%), the static check's "
            f"nvcc {med[0]:.3f} CPU-s a call (median) against {med[1]:.3f}") in folder
    faster = sorted([unit[1] / unit[0], call[1] / call[0], med[1] / med[0]])
    other = ROOT / "bench" / "results" / "throughput" / "h100-300s-dee376c-w20"
    dt = json.loads((other / "tools.json").read_text())
    vs_dee = sorted([dt["nvcc harness"]["cpu_s_per_size_unit"] / unit[0],
                     dt["nvdisasm static"]["cpu_s"] / dt["nvdisasm static"]["calls"] / call[0],
                     dt["nvcc static"]["cpu_s_per_call_median"] / med[0]])
    said = f"{faster[0]:.1f}-{faster[-1]:.1f} times faster than b9ef5a9's host"
    assert said in page and f"{said} (1.3-1.4 times dee376c's)" in folder
    assert f"and {vs_dee[0]:.1f}-{vs_dee[-1]:.1f} times faster than dee376c's" in page
    assert f"nvcc and nvdisasm {vs_dee[0]:.1f}-{faster[-1]:.1f} times faster than the H100 hosts" in flat(ROOT / "README.md")
    assert (f"the workers' Python a judgement was {w['worker'] / t['programs']:.4f} CPU-s against {bw['worker'] / b['programs']:.4f} "
            f"({100 * ((w['worker'] / t['programs']) / (bw['worker'] / b['programs']) - 1):.0f}%)") in folder
    ab = json.loads((ROOT / "bench" / "results" / "throughput" / "gc" / "h100-90s-ab-2665391" / "gc-ab.json").read_text())["runs"]
    ours = sorted(r["run_per_hour"] for r in ab if r["thresholds"] == "2000,20,100")
    pythons = sorted(r["run_per_hour"] for r in ab if r["thresholds"] == "700,10,10")
    prof = json.loads((ROOT / "bench" / "results" / "throughput" / "h100-150s-profiled-2665391" / "throughput.json").read_text())
    assert (f"90 s campaigns made {ours[0]:,} and {ours[1]:,} runs/h at the campaign's thresholds ({pythons[0]:,} and "
            f"{pythons[1]:,} at Python's), and a 150 s one (its worker w0 profiled) {prof['run_per_hour']:,}") in folder
    assert (f"90 s and 150 s campaigns at the defaults made {ours[0]:,}-{max(ours + [prof['run_per_hour']]):,} runs/h" in page)
    doc = json.loads((ROOT / "bench" / "results" / "throughput" / "gpu-time" / "gpu-time.json").read_text())["corpora"]
    g = doc["bench/results/throughput/h100-600s-2665391-w20/corpus.tar.gz"]
    pdl = g["splits"]["two grids, PDL (the primary spins pdl_delay_ns)"]["us_per_launch_median"]
    assert (f"{g['all']['gpu_ms_mean']:.2f} GPU ms a run by CUDA events, so one GPU doing nothing else would make "
            f"{g['all']['gpu_bound_runs_per_hour']:,} runs/h by the events, "
            f"~{round(t['run_per_hour'] / t['gpu_util_nvml_mean'], -3):,.0f} by NVML's share") in folder
    assert f"two-grid runs took {pdl} us a launch, median" in folder
    assert (f"the runs' CUDA-event GPU time summed to {t['gpu_busy_share']:.2f} of the wall time (they overstate it), and NVML had "
            f"a kernel resident {100 * t['gpu_util_nvml_mean']:.0f}% of it") in page
    readme = flat(ROOT / "README.md")
    assert (f"**{t['run_per_hour']:,} runs/h ({t['gpu_programs_1e7_per_hour']:,} at >= 1e7 instances), {cpu / t['run']:.3f} CPU-s "
            f"a run**, the CPU {100 * cpu / (16 * t['wall_s']):.0f}% busy") in readme
    assert (f"at 2665391 on the faster host {harness['cpu_s'] / t['run']:.3f}, {static / t['run']:.3f} and "
            f"{w['worker'] / t['run']:.3f}") in readme


def test_the_profiled_150s_run_is_its_files(tmp_path: Path) -> None:
    """h100-150s-profiled-2665391: the README's campaign line and the worker's and backend's tables are its
    throughput.json, cpu.json and worker-split.json."""
    run = ROOT / "bench" / "results" / "throughput" / "h100-150s-profiled-2665391"
    t = json.loads((run / "throughput.json").read_text())
    c = json.loads((run / "cpu.json").read_text())
    w = json.loads((run / "worker-split.json").read_text())
    cpu = c["user_s"] + c["sys_s"]
    folder = flat(run / "README.md")
    assert (f"{t['programs']:,} programs judged, {t['run']:,} run on the GPU ({t['run_per_hour']:,}/h; "
            f"{t['gpu_programs_1e7_per_hour']:,}/h at >= 1e7 instances; shrink share {t['shrink_share']:.2f}), {cpu:,.0f} CPU-s of "
            f"the {16 * t['wall_s']:,.0f} core-s ({100 * cpu / (16 * t['wall_s']):.0f}%): {cpu / t['run']:.3f} CPU-s per program run; "
            f"CUDA events {t['gpu_busy_share']:.2f}, NVML {t['gpu_util_nvml_mean']:.2f}") in folder
    cw, bw = w["campaign"], w["backend0"]
    assert f"| worker 0, wall s of {cw['total_s']:.1f} (cProfile's clock; the rows do not overlap) | |" in folder
    assert f"a batch's `prepare` ({cw['wait_prepare']['calls']} batches: " in folder and f"| {cw['wait_prepare']['s']:.1f} |" in folder
    import io
    import pstats
    import tarfile

    with tarfile.open(run / "corpus.tar.gz") as outer:
        inner = outer.extractfile("prof.tar.gz")
        assert inner is not None
        with tarfile.open(fileobj=io.BytesIO(inner.read())) as prof:
            member = next(m for m in prof.getmembers() if m.name.endswith("cprofile-w0.pstats"))
            raw = prof.extractfile(member)
            assert raw is not None
            (tmp_path / "w0.pstats").write_bytes(raw.read())
    stats = pstats.Stats(str(tmp_path / "w0.pstats")).stats  # type: ignore[attr-defined]
    tuning_runs = sum(n for (f, _, fn), v in stats.items() if fn == "run" and f.endswith("workers/supervised.py")
                      for (cf, _, cfn), (n, *_rest) in v[4].items() if cf.endswith("stress/campaign.py") and cfn == "measure")
    assert (f"runs ({cw['wait_run']['calls']}; {tuning_runs} of them the tuning of {cw['tune']['calls']} families, {cw['tune']['s']:.1f} s) | "
            f"{cw['wait_run']['s']:.1f} |") in folder
    assert (f"its {cw['record_finding']['calls']} findings' entries, {cw['fix_search']['s']:.1f} s of it their fix searches | "
            f"{cw['record_finding']['s']:.1f} |") in folder
    rest = cw["total_s"] - cw["wait_prepare"]["s"] - cw["wait_run"]["s"] - cw["record_finding"]["s"]
    assert f"the oracle's verdicts, the start | {rest:.1f} |" in folder
    assert f"| its backend process, wall s of {bw['total_s']:.1f} | |" in folder
    n = bw["cuda_prepare"]["calls"]
    assert f"| of it, the harness's nvcc (`cuda.prepare`) | {bw['cuda_prepare']['s']:.1f} ({bw['cuda_prepare']['s'] / n:.2f} a batch) |" in folder
    assert f"`cuda.run`: {bw['cuda_run']['calls']} runs, their launches and syncs | {bw['cuda_run']['s']:.1f} |" in folder


def test_gpu_time_shows_a_machine_txt_without_its_control_characters(tmp_path: Path) -> None:
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    import gpu_time

    (tmp_path / "machine.txt").write_text("Sun Dec  6\x1b[31m\nNVIDIA H100\x07 80GB\n16\n")
    assert gpu_time.machine(tmp_path) == "NVIDIA H100? 80GB, Sun Dec 6?[31m"
    assert gpu_time.machine(tmp_path / "none") is None


def test_the_pool_window_ab_is_its_files_and_the_default(tmp_path: Path) -> None:
    """throughput/ab/h100-window-0343c89: three calls on one machine.  Each call's table is bench/gc_ab.py's reading of
    its runs (sided by the window each run recorded); the first two calls' eight runs read together are the committed
    four-pair table; every pair and both means the README and the throughput page quote are the runs'; and the default
    window is the one the A/B chose, with the measurement named beside it."""
    import shutil
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    import gc_ab

    from fuzzgpu.workers import static_pool

    ab = ROOT / "bench" / "results" / "throughput" / "ab" / "h100-window-0343c89"
    calls = ["1-window-0.5-0.25", "2-window-0.25-0.5", "3-window-0.25-0.125"]
    boots = {next(line for line in (ab / c / "machine.txt").read_text().splitlines() if line.startswith("host ")) for c in calls}
    assert len(boots) == 1  # one machine
    runs: dict[str, list[str]] = {}
    for c in calls:
        runs[c] = unpack_runs(ab / c / "runs.tar.gz", tmp_path / c)
        assert [Path(r).name for r in runs[c]] == ["1-a", "1-b", "2-a", "2-b"]
        assert all((tmp_path / c / f"{Path(r).name}.done").read_text().split()[:2] == ["exit", "0"] for r in runs[c])
        assert gc_ab.main([*runs[c], "--by", "static_pool.window_s", "--label", "ab", "--out", str(tmp_path / c / "out")]) == 0
        assert json.loads((tmp_path / c / "out" / "ab.json").read_text())["sides"] == json.loads((ab / c / "ab.json").read_text())["sides"]
    both = tmp_path / "all"
    both.mkdir()
    for c, tag in zip(calls[:2], ("c1", "c2")):
        for r in runs[c]:
            shutil.copytree(r, both / f"{tag}-{Path(r).name}")
    assert gc_ab.main([*sorted(str(d) for d in both.iterdir()), "--by", "static_pool.window_s", "--label", "w", "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "w.json").read_text())
    assert doc["sides"] == json.loads((ab / "window-4-pairs.json").read_text())["sides"]
    assert gc_ab.table(gc_ab.sides(doc["runs"]), "`static_pool.window_s`") in (ab / "window-4-pairs.md").read_text()

    def per_hour(r: Path) -> int:
        return int(json.loads((r / "throughput.json").read_text())["run_per_hour"])

    pairs = [(per_hour(both / f"{tag}-{i}-{short}"), per_hour(both / f"{tag}-{i}-{long}"))
             for tag, short, long in (("c1", "b", "a"), ("c2", "a", "b")) for i in (1, 2)]  # (0.25 s, 0.5 s)
    folder, page = flat(ab / "README.md"), flat(ROOT / "bench" / "results" / "throughput" / "README.md")
    assert "In each of the four pairs the 0.25 s window made more runs an hour: " + ", ".join(
        f"{a:,} against {b:,}" for a, b in pairs) in folder
    gains = [100 * (a / b - 1) for a, b in pairs]
    assert "(" + ", ".join(f"+{g:.1f}%" for g in gains) + ", in" in folder and min(gains) > 0
    s25, s50 = doc["sides"]["0.25"], doc["sides"]["0.5"]
    means = (f"{s25['run_per_hour']:,.0f} against {s50['run_per_hour']:,.0f} runs/h "
             f"(+{100 * (s25['run_per_hour'] / s50['run_per_hour'] - 1):.1f}%), at the same {s25['cpu_s_per_run']:.3f} CPU-s a run")
    assert f"the means {means}" in folder and s25["cpu_s_per_run"] == s50["cpu_s_per_run"]
    assert (f"0.25 s made {s25['run_per_hour']:,.0f} runs/h against 0.5 s's {s50['run_per_hour']:,.0f} (means of 4; "
            f"+{100 * (s25['run_per_hour'] / s50['run_per_hour'] - 1):.1f}%, every pair +{min(gains):.1f} to +{max(gains):.1f}%)") in page

    def busy(r: Path) -> float:
        c, t = json.loads((r / "cpu.json").read_text()), json.loads((r / "throughput.json").read_text())
        return 100 * (c["user_s"] + c["sys_s"]) / (16 * t["wall_s"])

    side = {w: [r for r in both.iterdir() if json.loads((r / "throughput.json").read_text())["static_pool"]["window_s"] == w]
            for w in (0.25, 0.5)}
    b25, b50 = [sorted(busy(r) for r in side[w]) for w in (0.25, 0.5)]
    assert f"was {b25[0]:.0f}-{b25[-1]:.0f}% busy with 0.25 s and {b50[0]:.0f}-{b50[-1]:.0f}% with 0.5 s" in folder
    k25, k50 = [sorted(json.loads((r / "throughput.json").read_text())["static_pool"]["checks"] for r in side[w]) for w in (0.25, 0.5)]
    assert f"({k25[0]}-{k25[-1]} checks a run against {k50[0]}-{k50[-1]})" in folder
    third = {Path(r).name: per_hour(Path(r)) for r in runs[calls[2]]}  # a = 0.25 s, b = 0.125 s; pair 2 ran b first
    assert (f"{third['1-b']:,} against {third['1-a']:,} and {third['2-b']:,} against {third['2-a']:,} runs/h") in folder
    assert static_pool.WINDOW_S == 0.25
    assert "bench/results/throughput/ab/h100-window-0343c89/" in (ROOT / "fuzzgpu" / "workers" / "static_pool.py").read_text()


def test_fix_search_cost_shows_a_files_names_without_their_control_characters(tmp_path: Path, capsys) -> None:
    """bench/fix_search_cost.py prints each entry's file name and writes its class key into the table: both come from
    the corpus it is given, and reach the terminal and the page through compile_phases.shown."""
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    import fix_search_cost

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    doc = json.loads((ROOT / "corpus" / "73416467ed043580.json").read_text())  # a forbidden finding: no search
    doc["class"]["key"] = "model|*|\x1b[31mred\x07"
    (corpus / "e\x1b[2J.json").write_text(json.dumps(doc))
    assert fix_search_cost.main([str(corpus), "--out", str(tmp_path / "out")]) == 0
    err, md = capsys.readouterr().err, (tmp_path / "out" / "fix-search.md").read_text()
    assert "e?[2J.json: - CPU-s" in err and "\x1b" not in err
    assert "| e?[2J.json | model\\|*\\|?[31mred? |" in md and "\x1b" not in md and "\x07" not in md


def test_the_stalled_600s_call_is_its_files() -> None:
    """The H100 call whose GPU stopped answering at 218 s: its README's and the page's figures (the programs run an hour up
    to then, the quarantine records, the programs run after it, the seven known classes' first times) are its files'."""
    import re
    import tarfile

    run = ROOT / "bench" / "results" / "throughput" / "h100-600s-7862a65-w20-stalled"
    with tarfile.open(run / "corpus.tar.gz") as tf:
        status = tf.extractfile("campaign.txt").read().decode()  # type: ignore[union-attr]
        records = [json.loads(tf.extractfile(m).read())  # type: ignore[union-attr]
                   for m in tf.getmembers() if re.fullmatch(r"corpus/quarantine/[0-9a-f]{16}\.json", m.name)]
    faults = [r["fault"]["kind"] for r in records]
    ticks = {int(m[1]): (int(m[2]), int(m[3])) for m in re.finditer(r"^\[\s*(\d+) s\].*? programs (\d+) judged.*?, (\d+) run ",
                                                                  status, re.M)}
    judged, ran = ticks[218]
    readme, page = flat(run / "README.md"), flat(ROOT / "bench" / "results" / "throughput" / "README.md")
    assert f"| 0-218 s | 0 -> {ran:,} | **{ran * 3600 // 218:,} programs run an hour** ({judged * 3600 // 218:,} judged an hour) |" in readme
    assert f"ran {ran * 3600 // 218:,} programs an hour for 218 s, then its GPU stopped answering every worker" in page
    assert sorted(faults) == ["gpu-fault"] + ["hang"] * 19
    [gf] = [r for r in records if r["fault"]["kind"] == "gpu-fault"]
    hangs = sorted(r["time"][11:19] for r in records if r["fault"]["kind"] == "hang")
    assert f"that run fails: `{gf['fault']['detail'].split(';')[0]}` after {gf['fault']['seconds']:.1f} s" in readme
    assert f"| {hangs[0]}-{hangs[-1]} UTC |" in readme and {r["fault"]["deadline"] for r in records} == {122.0}
    assert ticks[220][1] == ticks[262][1] and f"| 220 s | {ticks[220][1]:,} |" in readme
    assert f"| 13:15:54 UTC (264 s) | {ticks[262][1]:,} -> {ticks[264][1]:,} |" in readme
    assert f"| 13:17:21-13:17:42 UTC | {ticks[264][1]:,} -> {max(ticks.items())[1][1]:,} |" in readme
    assert ticks[353][1] - ticks[351][1] == 30 and ticks[355][1] == max(ticks.items())[1][1]  # the saves at the faults
    classes = json.loads((run / "classes.json").read_text())
    first = [classes[str(k)]["first_s"] for k in range(1, 8)]
    assert f"the seven known classes, first at {min(first):.0f}-{max(first):.0f} s" in readme
    t = json.loads((run / "throughput.json").read_text())
    assert f"({t['run_per_hour']:,} runs/h, GPU busy {t['gpu_busy_share']})" in readme
