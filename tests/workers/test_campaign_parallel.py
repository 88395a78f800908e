"""Several campaign workers on one corpus (``--workers N`` on the sim backend, the CPU stand-in for
``--gpus N``): one shared corpus, one combined report, and no lost or duplicated finding when two
workers find the same violation at the same moment."""

from __future__ import annotations

import json
import os
import multiprocessing as mp
import subprocess
import sys
from pathlib import Path

import pytest

from fuzzgpu.corpus import Corpus

SIM = ["--backend", "sim", "--sim-fault", "relacq-as-relaxed", "--profile", "classic", "--no-live"]


def fuzzgpu(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", *args], check=False, capture_output=True, text=True,
                          timeout=timeout)


def worker_report(corpus: Path, wid: str) -> dict:
    return json.loads((corpus / ".fuzzgpu" / "workers" / wid / "report" / "report.json").read_text())


@pytest.mark.slow  # campaigns of a fixed 10 s (3 workers) and 2 s: ~13 CPU-seconds
def test_workers_share_one_corpus_and_one_report(tmp_path):
    corpus = tmp_path / "c"
    r = fuzzgpu(*SIM, "--workers", "3", "--seed", "3", "--time", "10", "--corpus", str(corpus))
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-3000:]
    assert "3 workers" in r.stdout and "fuzzgpu parallel campaign report" in r.stdout
    entries = Corpus(corpus).entries()  # every entry loads
    assert entries
    sigs = [e.signature for e in entries]
    assert len(sigs) == len(set(sigs))  # no finding saved twice
    report = json.loads((corpus / "report" / "report.json").read_text())
    comb = report["combined"]
    assert {f["file"] for f in comb["findings"]} == {e.path.name for e in entries}  # none lost, none invented
    assert sorted(report["workers_state"]) == ["w0", "w1", "w2"]
    seeds = {st["seed"] for st in report["workers_state"].values()}
    assert seeds == {3, 4, 5}  # worker i: seed + i
    assert comb["programs"] == sum(st["programs"] for st in report["workers_state"].values()) > 0
    for wid in ("w0", "w1", "w2"):
        assert (corpus / ".fuzzgpu" / "workers" / wid / "state.json").exists()
    # resuming the parallel campaign with other settings is refused
    r = fuzzgpu("--backend", "sim", "--profile", "scopes", "--workers", "2", "--time", "2", "--corpus", str(corpus))
    assert r.returncode == 2 and "profile classic" in r.stderr and "Traceback" not in r.stderr


def test_two_workers_find_the_same_violation_at_once_one_entry(tmp_path):
    """Same seed and profile in two worker processes started together: both shrink to the same
    program and save it at about the same moment; the corpus holds ONE entry, and both workers'
    reports reference it (one as new, the other as saved first by another worker)."""
    corpus = tmp_path / "c"
    r = fuzzgpu(*SIM, "--workers", "2", "--same-seed", "--seed", "3", "--max-findings", "1", "--time", "60",
                "--corpus", str(corpus))
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-3000:]
    paths = Corpus(corpus).entry_paths()
    assert len(paths) == 1, [p.name for p in paths]
    name = paths[0].name
    reps = [worker_report(corpus, w) for w in ("w0", "w1")]
    files = [[f["file"] for f in rep["state"]["findings"]] for rep in reps]
    assert files == [[name], [name]]
    flags = sorted(bool(rep["state"]["findings"][0].get("saved_by_another")) for rep in reps)
    assert flags == [False, True]
    comb = json.loads((corpus / "report" / "report.json").read_text())["combined"]
    assert [(f["file"], f["workers"]) for f in comb["findings"]] == [(name, ["w0", "w1"])]
    assert not list(corpus.glob(".*.tmp"))


def _add(root, entry, barrier, results) -> None:
    barrier.wait()
    results.put(Corpus(root).add(entry)[1])


def test_corpus_add_races_leave_one_entry(tmp_path):
    """Eight processes save the same finding at the same instant: one entry, one 'written'."""
    from fuzzgpu import properties
    from fuzzgpu.backends.base import RunConfig
    from fuzzgpu.backends.sim import SimBackend
    from programs import MP as prog

    from fuzzgpu.corpus import make_entry

    b = SimBackend("relacq-as-relaxed")
    cfg = RunConfig(instances=100_000)
    h = b.run(prog, cfg)
    entry = make_entry(prog, properties.check("model", prog, h), h, b, cfg)
    ctx = mp.get_context("fork")
    for round_ in range(5):
        root = tmp_path / f"r{round_}"
        barrier, results = ctx.Barrier(8), ctx.Queue()
        procs = [ctx.Process(target=_add, args=(root, dict(entry, found=f"t{i}"), barrier, results)) for i in range(8)]
        for p in procs:
            p.start()
        written = [results.get(timeout=60) for _ in procs]
        for p in procs:
            p.join(30)
        assert sum(written) == 1, written
        assert len(list(root.glob("*.json"))) == 1 and not list(root.glob(".*"))


@pytest.mark.slow  # a campaign of a fixed 20 s: ~10 CPU-seconds
def test_gpus_pins_one_worker_per_gpu_fake_devices(tmp_path):
    """``--gpus all`` with two (fake) visible GPUs: one worker each, pinned by CUDA_VISIBLE_DEVICES.
    There is no GPU here, so each worker then stops with its one-line 'no PyCUDA / no driver' error
    and the parent says so in one line (exit 3: no usable GPU is the environment) -- the pinning is what
    this checks."""
    import os

    corpus = tmp_path / "c"
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="3,5")
    r = subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", "--gpus", "all", "--workers-per-gpu", "1", "--backend", "cuda",
                        "--gpu-context", "per-worker", "--profile", "pdl", "--time", "20", "--corpus", str(corpus)],
                       check=False, capture_output=True, text=True, timeout=120, env=env)
    assert "2 workers (GPUs 3, 5)" in r.stdout
    logs = {w: (corpus / ".fuzzgpu" / "workers" / w / "log.txt").read_text() for w in ("w0", "w1")}
    assert "CUDA_VISIBLE_DEVICES=3" in logs["w0"] and "CUDA_VISIBLE_DEVICES=5" in logs["w1"]
    if r.returncode != 0 and r.returncode != 1:  # no GPU (CI): the environment, exit 3, one line, no traceback
        assert r.returncode == 3, r.stderr
        assert "every worker failed" in r.stderr and len(r.stderr.strip().splitlines()) == 1
        assert "Traceback" not in logs["w0"] + logs["w1"]
    r = subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", "--gpus", "3", "--backend", "cuda", "--corpus", str(corpus)],
                       check=False, capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 3 and "only 2 GPU(s) visible" in r.stderr  # the environment, as --backend cuda without a GPU
    r = subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", "--gpus", "all", "--backend", "sim", "--corpus", str(corpus)],
                       check=False, capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 2 and "use --workers" in r.stderr


def test_a_shared_gpu_without_a_gpu_is_the_environment_in_one_line(tmp_path):
    """``--gpu-context shared``: the GPU runner starts before the workers; with no usable GPU it
    says so in one line, exit 3, and leaves no runner folder behind."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="3", TMPDIR=str(tmp_path))
    r = subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", "--gpus", "1", "--workers-per-gpu", "1", "--backend", "cuda",
                        "--gpu-context", "shared", "--profile", "pdl", "--time", "20", "--corpus", str(tmp_path / "c")],
                       check=False, capture_output=True, text=True, timeout=120, env=env)
    if r.returncode in (0, 1):
        pytest.skip("a GPU is usable here")
    assert "one GPU runner per GPU runs their programs (1 GPU process(es), one CUDA context each)" in r.stdout
    assert r.returncode == 3 and "the GPU runner of GPU 3 did not start" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert not list(tmp_path.glob("fuzzgpu-runner-*"))


def test_workers_per_gpu_default_is_five_for_four_cores_over_the_gpus():
    from fuzzgpu.workers.local import default_workers_per_gpu

    assert default_workers_per_gpu(16, 1) == 20  # one H200 with 16 cores: 20 workers
    assert default_workers_per_gpu(128, 8) == 20
    assert default_workers_per_gpu(4, 8) == 1  # never fewer than one worker per GPU
    assert default_workers_per_gpu(1, 1) == 1


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity (Linux)")
def test_gpus_without_workers_per_gpu_starts_a_worker_per_core(tmp_path):
    """``--gpus 1`` alone: as many workers as the cores the campaign may use (here 2, by affinity),
    said on the start line.  No GPU here: each worker stops with its one-line error (exit 3)."""
    cores = sorted(os.sched_getaffinity(0))[:2]
    if len(cores) < 2:
        pytest.skip("needs 2 cores")
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="3")
    r = subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", "--gpus", "1", "--backend", "cuda", "--profile", "pdl",
                        "--time", "20", "--corpus", str(tmp_path / "c")], check=False, capture_output=True, text=True,
                       timeout=120, env=env, preexec_fn=lambda: os.sched_setaffinity(0, cores))
    assert "2 workers (GPUs 3, 2 workers each)" in r.stdout, r.stdout + r.stderr


def test_status_line_says_the_busy_share_is_a_bound_with_several_workers_per_gpu():
    """One worker per GPU: its CUDA-event seconds over the wall time.  Several: their spans overlap
    (the GPU time-slices between their contexts), so the sum is an upper bound -- said, and at most 100%."""
    from fuzzgpu.workers.local import status_line

    st = {"programs": 10, "instances": 1e8, "gpu_seconds": 30.0, "classes": {}, "findings": [], "quarantined": 0, "save_errors": []}
    assert "GPU busy 30%" in status_line(100.0, 1, 1, st, gpus=1, per_gpu=1)
    assert "GPU busy ≤30%" in status_line(100.0, 8, 8, st, gpus=1, per_gpu=8)
    assert "GPU busy ≤100%" in status_line(100.0, 8, 8, dict(st, gpu_seconds=250.0), gpus=1, per_gpu=8)
    assert "GPU busy" not in status_line(100.0, 2, 2, st)  # no GPU (--workers N)


def test_a_resumed_campaigns_status_line_gives_this_sessions_rates():
    """The counts are the corpus's, the rates and the GPU's busy share this session's: a resumed campaign's workers
    count earlier sessions too, and the first line of a resumed sim campaign said "2276 judged (9038.7/s)" 0 s in."""
    from fuzzgpu.workers.local import status_line

    st = {"programs": 2276, "run": 2186, "instances": 2.3e8, "gpu_seconds": 80.0, "classes": {}, "findings": [],
          "quarantined": 0, "save_errors": []}
    base = dict(st, programs=2176, run=2136, gpu_seconds=70.0)
    line = status_line(10.0, 3, 3, st, gpus=1, base=base)
    assert "programs 2276 judged (10.0/s), 2186 run (5.0/s)" in line and "GPU busy 100%" in line
    assert "programs 2276 judged (0.0/s), 2186 run (0.0/s)" in status_line(10.0, 3, 3, st, base=st)
