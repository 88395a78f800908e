"""The GPU runner (fuzzgpu.workers.gpu_runner): one process per GPU runs every worker's programs.

On the CPU the runner's process runs the sim backend (with its injected process faults standing in
for a launch that hangs or takes the GPU process down): the queue protocol, the answers, a fault
that is one program's and no other's, a runner that dies and comes back, the key.  On a GPU (marked
``gpu``): the cuda backend's requests, and a real trap."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from multiprocessing import AuthenticationError
from multiprocessing.connection import Client

import pytest

from fuzzgpu.backends.base import RunConfig
from fuzzgpu.backends.remote import KEY_ENV, RUNNER_SIDE, RunnerClient, RunnerFault, answer
from fuzzgpu.workers.gpu_runner import RunnerHandle
from fuzzgpu.workers.supervised import BackendSpec, ProgramFault, SupervisedBackend

from test_workers import CFG, mp, split


@pytest.fixture
def runner(tmp_path, monkeypatch):
    """``runner(fault, watchdog)``: a runner whose process runs the sim with ``fault``; the key in
    this process's environment, as a campaign gives it to its workers."""
    made: list[RunnerHandle] = []

    def make(fault: str | None = None, watchdog: float = 60.0, processes: int = 1) -> RunnerHandle:
        h = RunnerHandle(None, watchdog, tmp_path / f"runner{len(made)}.json", spec=BackendSpec("sim", fault), processes=processes)
        made.append(h)
        for k, v in h.env().items():
            monkeypatch.setenv(k, v)
        return h

    yield make
    for h in made:
        h.stop()


def counters(h: RunnerHandle, runs: int) -> dict:
    """The runner's counters once they count ``runs`` runs (written every two seconds)."""
    end = time.monotonic() + 60
    while time.monotonic() < end:
        try:
            c = json.loads(h.state.read_text())
            if c["runs"] >= runs:
                return c
        except (OSError, ValueError):
            pass
        time.sleep(0.2)
    raise AssertionError(f"the runner's counters never reached {runs} runs")


def test_two_clients_get_their_own_histograms(runner):
    h = runner()
    a, b = RunnerClient(h.address), RunnerClient(h.address)
    assert a.identity[0].startswith("sim:") and a.describe.startswith("sim:")
    out: dict[str, object] = {}

    def ask(c: RunnerClient, p, key: str) -> None:
        out[key] = answer(c.ask(p, CFG, p.name))

    ts = [threading.Thread(target=ask, args=(a, mp(1), "a")), threading.Thread(target=ask, args=(b, mp(2), "b"))]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    for key, p in (("a", mp(1)), ("b", mp(2))):
        hist = out[key]
        assert hist.instances == CFG.instances and hist.backend == "sim"  # type: ignore[attr-defined]
        assert hist.keys == p.outcome_keys()  # type: ignore[attr-defined]  # each got its own program's
    c = counters(h, 2)
    assert c["clients"] == 2 and c["faults"] == 0 and c["restarts"] == 0


@pytest.mark.parametrize("fault,kind,processes", [("crash", "crash", 1), ("gpu-fault", "gpu-fault", 1), ("error", "error", 1),
                                                  ("crash", "crash", 2)])
def test_a_fault_is_that_programs_and_the_runner_goes_on(runner, fault, kind, processes):
    """The program that takes a GPU process of the runner down (or is a backend bug) is answered as
    a fault of its kind; the other client's program, asked at the same time, runs; so do the later
    ones, in a fresh process (none for ``error``: the process lives)."""
    hit, spare = split(fault, 0.5)
    h = runner(f"{fault}:0.5", processes=processes)
    a, b = RunnerClient(h.address), RunnerClient(h.address)
    replies: dict[str, tuple] = {}
    ts = [threading.Thread(target=lambda: replies.__setitem__("hit", a.ask(hit, CFG, hit.name))),
          threading.Thread(target=lambda: replies.__setitem__("spare", b.ask(spare, CFG, spare.name)))]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    assert replies["hit"][:2] == ("fault", kind), replies["hit"]
    with pytest.raises(RunnerFault) as e:
        answer(replies["hit"])
    assert e.value.kind == kind
    assert answer(replies["spare"]).instances == CFG.instances
    assert answer(a.ask(spare, CFG, spare.name)).instances == CFG.instances  # the faulting client goes on too
    c = counters(h, 3)
    assert c["faults"] == 1 and c["restarts"] == (0 if kind == "error" else 1) and c["processes"] == processes


def test_a_hang_is_answered_at_the_runners_deadline(runner):
    hit, spare = split("hang", 0.5)
    h = runner("hang:0.5", watchdog=0.5)
    a = RunnerClient(h.address)
    t0 = time.monotonic()
    reply = a.ask(hit, CFG, hit.name)
    assert reply[:2] == ("fault", "hang") and "deadline" in reply[2] and time.monotonic() - t0 >= 0.5
    assert answer(a.ask(spare, CFG, spare.name)).instances == CFG.instances


def test_a_runner_that_dies_is_restarted_and_its_clients_connect_again(runner):
    h = runner()
    a = RunnerClient(h.address)
    assert answer(a.ask(mp(1), CFG, "MP1")).instances == CFG.instances
    os.kill(h._proc.pid, signal.SIGKILL)
    h._proc.join(30)
    assert h.ensure() and h.restarts == 1 and not h.ensure()
    assert answer(a.ask(mp(2), CFG, "MP2")).instances == CFG.instances


def test_a_client_without_the_key_is_refused_and_the_others_served(runner):
    h = runner()
    with pytest.raises(AuthenticationError):
        Client(h.address, family="AF_UNIX", authkey=b"not the key")
    assert answer(RunnerClient(h.address).ask(mp(1), CFG, "MP1")).instances == CFG.instances


def test_a_worker_sees_the_runners_fault_as_its_programs_fault(runner):
    """A campaign worker's backend process (supervised) whose runs go to the runner: the runner's
    fault is the worker's ProgramFault of the same kind (quarantined by the campaign), and the
    worker's own process is not restarted for it."""
    hit, spare = split("crash", 0.5)
    h = runner("crash:0.5")
    w = SupervisedBackend(BackendSpec("sim", runner=h.address), watchdog=60)
    try:
        pid = w.pid()
        with pytest.raises(ProgramFault) as e:
            w.run(hit, CFG)
        assert e.value.kind == "crash" and "SIGSEGV" in e.value.detail and "runner" in e.value.detail
        assert w.run(spare, CFG).instances == CFG.instances and w.pid() == pid and w.restarts == 0
        assert w.deadline_for(CFG) == 4 * SupervisedBackend(BackendSpec("sim"), watchdog=60).deadline_for(CFG)
    finally:
        w.close()


def test_a_runner_that_cannot_start_says_why_in_one_line(tmp_path):
    from fuzzgpu.errors import EnvError

    with pytest.raises(EnvError, match="did not start: .*bogus"):
        RunnerHandle(None, 5.0, tmp_path / "r.json", spec=BackendSpec("sim", "bogus"))


@pytest.mark.slow  # a campaign until its first finding (~15 s), two workers and a runner: ~20 CPU-seconds
def test_a_parallel_campaign_through_the_runner_finds_and_quarantines(tmp_path):
    """``--workers 2`` on the sim with ``gpu_context="shared"``: every run goes through one runner;
    the injected relacq bug is found, the crashing programs are quarantined, and the runner's counters
    agree with the workers' states."""
    import io

    from fuzzgpu.workers.local import run_parallel

    out = io.StringIO()
    res = run_parallel(profile="classic", backend="sim", seconds=120, corpus_dir=str(tmp_path / "c"), prop="model", seed=3,
                       sim_fault="relacq-as-relaxed,crash:0.15", workers=2, gpus=None, watchdog=30, max_findings=1,
                       out=out, gpu_context="shared")
    comb = res["combined"]
    assert comb["classes"] and comb["quarantined"] >= 1, out.getvalue()[-3000:]
    c = json.loads((tmp_path / "c" / ".fuzzgpu" / "runners" / "gpusim.json").read_text())
    assert c["clients"] >= 2 and c["faults"] == comb["quarantined"] == c["restarts"]
    # the workers have no other way to run (some programs are answered from the evidence cache: no run)
    assert comb["quarantined"] < c["runs"] <= comb["programs"]


@pytest.mark.gpu
def test_the_cuda_runner_runs_a_program_and_survives_a_trap(tmp_path, monkeypatch):
    """On the GPU: a worker's RemoteCuda compiles, the runner runs (instances, the histogram's
    check, the CUDA-event seconds, the driver); a trapping program is the runner's ``gpu-fault``
    and the next program runs in a fresh context."""
    from fuzzgpu.backends.remote import RemoteCuda

    h = RunnerHandle(None, 30.0, tmp_path / "r.json", spec=BackendSpec(RUNNER_SIDE))
    try:
        monkeypatch.setenv(KEY_ENV, h.key.hex())
        hit, spare = split("trap", 0.5)
        b = RemoteCuda(h.address, fault="trap:0.5")
        hist = b.run(spare, RunConfig(instances=1_000_000))
        meta = dict(hist.meta)
        assert hist.instances >= 1_000_000 and meta["sum_ok"] and meta["gpu_s"] > 0 and meta["driver"]
        assert hist.keys == spare.outcome_keys()
        with pytest.raises(RunnerFault) as e:
            b.run(hit, RunConfig(instances=1_000_000))
        assert e.value.kind == "gpu-fault"
        assert b.run(spare, RunConfig(instances=1_000_000)).instances >= 1_000_000
        c = counters(h, 3)
        assert c["faults"] == 1 and c["restarts"] == 1
    finally:
        h.stop()


@pytest.mark.parametrize("args,says", [
    (["--gpu-context", "shared", "--backend", "sim"], "goes with --gpus and the cuda backend"),
    (["--gpu-context", "shared", "--backend", "cuda"], "goes with --gpus and the cuda backend"),
    (["--gpu-processes", "2", "--gpus", "1", "--backend", "cuda"], "goes with --gpu-context shared"),
    (["--gpu-context", "shared", "--gpus", "1", "--backend", "cuda", "--ray", "auto"], "not for --ray"),
])
def test_the_gpu_context_flags_are_refused_where_they_mean_nothing(tmp_path, args, says):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", *args, "--time", "5", "--corpus", str(tmp_path / "c")],
                       check=False, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
