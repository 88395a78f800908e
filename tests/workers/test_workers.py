"""The backend's worker process and its watchdog (docs/reliability.md), on the CPU: the sim
backend's injected process faults (hang, slow, crash, exit) stand in for a GPU launch that hangs or
takes the process down.  Also the GPU pinning of parallel campaigns and of pytest-xdist workers,
with a fake device list (no GPU on CI)."""

from __future__ import annotations

import io
import json
import os
import signal
import threading
import time
import types

import pytest

from fuzzgpu import strategies as fst
from fuzzgpu.backends.base import RunConfig
from fuzzgpu.backends.sim import SimBackend, fault_hits, parse_faults
from fuzzgpu.campaign import Campaign, load_profile
from fuzzgpu.errors import EnvError, UserError
from fuzzgpu.ir import Program
from fuzzgpu.workers.supervised import (
    BackendSpec,
    ProgramFault,
    SupervisedBackend,
    quarantined_hashes,
)
from fuzzgpu.workers.local import gpu_list

import programs  # tests/programs.py

CFG = RunConfig(instances=10_000)


def mp(value: int) -> Program:
    """Message passing, different store values give different programs (and hashes)."""
    return programs.mp(f"MP{value}", value, value + 1)


def split(fault: str, rate: float) -> tuple[Program, Program]:
    """(a program the fault hits, one it spares)."""
    hit = spare = None
    for v in range(1, 400):
        p = mp(v)
        if fault_hits(p, fault, rate):
            hit = hit or p
        else:
            spare = spare or p
        if hit and spare:
            return hit, spare
    raise AssertionError("no split")


@pytest.fixture
def sup():
    made = []

    def make(fault: str, watchdog: float = 0.5) -> SupervisedBackend:
        b = SupervisedBackend(BackendSpec("sim", fault), watchdog=watchdog)
        made.append(b)
        return b

    yield make
    for b in made:
        b.close()


def test_parse_faults():
    assert parse_faults("relacq-as-relaxed,hang:0.25") == {"relacq-as-relaxed": 1.0, "hang": 0.25}
    assert parse_faults(None) == {}
    for bad in ("nope", "hang:2", "hang:x", "crash:0"):
        with pytest.raises(UserError):
            parse_faults(bad)


def test_process_faults_refused_in_process():
    b = SimBackend("hang:1")
    with pytest.raises(UserError, match="supervised worker"):
        b.run(mp(1), CFG)


def test_a_hang_is_killed_at_its_deadline_and_the_worker_restarts(sup):
    hit, spare = split("hang", 0.5)
    b = sup("hang:0.5", watchdog=0.5)
    assert b.run(spare, CFG).instances == CFG.instances
    pid = b.pid()
    t0 = time.monotonic()
    with pytest.raises(ProgramFault) as e:
        b.run(hit, CFG)
    took = time.monotonic() - t0
    # at its deadline, not before; the upper bound only guards against never (CI machines are loaded)
    assert e.value.kind == "hang" and 0.5 <= took < 60, took
    assert "deadline" in e.value.detail
    with pytest.raises(ProcessLookupError):  # the hung worker is gone
        os.kill(pid, 0)
    h = b.run(spare, CFG)  # a fresh worker answers
    assert h.instances == CFG.instances and b.restarts == 1 and b.pid() != pid


def test_a_slow_program_times_out(sup):
    hit, _ = split("slow", 0.5)
    b = sup("slow:0.5", watchdog=0.3)
    with pytest.raises(ProgramFault, match="hang: no answer"):
        b.run(hit, CFG)


@pytest.mark.parametrize("fault,want", [("crash", "SIGSEGV"), ("exit", "exit status 3")])
def test_a_crash_is_reported_and_the_worker_restarts(sup, fault, want):
    hit, spare = split(fault, 0.5)
    b = sup(f"{fault}:0.5", watchdog=600)
    with pytest.raises(ProgramFault) as e:
        b.run(hit, CFG)
    # found at once, not at the deadline: with a 600 s watchdog a missed crash would be a "hang"
    assert e.value.kind == "crash" and want in e.value.detail
    assert b.run(spare, CFG).instances == CFG.instances


def test_a_worker_killed_mid_run(sup):
    hit, spare = split("slow", 0.5)
    b = sup("slow:0.5", watchdog=30)
    pid = b.pid()
    threading.Timer(0.5, os.kill, (pid, signal.SIGKILL)).start()
    with pytest.raises(ProgramFault) as e:
        b.run(hit, CFG)
    assert e.value.kind == "crash" and "SIGKILL" in e.value.detail  # a crash, not the 30 s watchdog's hang
    assert b.run(spare, CFG).instances == CFG.instances


def test_backend_errors_come_back_as_exceptions(sup):
    b = sup("relacq-as-relaxed", watchdog=60)
    with pytest.raises(UserError):  # sim refuses the hang fault in-process: here it is a plain error
        SupervisedBackend(BackendSpec("sim", "bogus"))
    assert b.run(mp(1), CFG).backend == "sim"
    assert b.describe().startswith("sim:") and b.identity()[0].startswith("sim:relacq")


def test_a_backend_bug_is_the_programs_fault_and_the_worker_goes_on(sup):
    """An exception that is neither bad input, nor the environment, nor a program the oracle does
    not cover is a bug in the backend or its harness: the program's fault ``error`` (quarantined),
    the same worker runs the next program (docs/reliability.md).  It used to come back as itself
    and end the campaign."""
    hit, spare = split("error", 0.5)
    b = sup("error:0.5", watchdog=60)
    pid = b.pid()
    with pytest.raises(ProgramFault) as e:
        b.run(hit, CFG)
    assert e.value.kind == "error" and "RuntimeError: simulated backend bug" in e.value.detail
    assert "(at sim.py:" in e.value.detail  # where it was raised
    assert b.run(spare, CFG).instances == CFG.instances and b.pid() == pid  # no restart needed


def faulty_campaign(tmp_path, fault: str, *, watchdog: float, seed: int, runs: int, out=None):
    """A short classic campaign on the sim backend with ``fault`` injected, in a supervised worker:
    its state and the quarantine records it wrote."""
    prof = load_profile("classic")
    prof = type(prof)(**{**prof.__dict__, "sim_instances": 2000, "max_examples": 40})
    b = SupervisedBackend(BackendSpec("sim", fault), watchdog=watchdog)
    try:
        res = Campaign(prof, b, tmp_path, "model", seed=seed, out=out or io.StringIO(), live=False).run(runs)
    finally:
        b.close()
    return res.state, [json.loads(p.read_text()) for p in (tmp_path / "quarantine").glob("*.json")]


def test_campaign_quarantines_a_backend_bug_and_goes_on(tmp_path):
    st, recs = faulty_campaign(tmp_path, "error:0.2", watchdog=60, seed=11, runs=7)
    assert st.quarantined >= 1 and st.faults == {"error": st.quarantined} and st.programs > st.quarantined
    assert len(recs) == st.quarantined and all(r["fault"]["kind"] == "error" for r in recs)


def test_campaign_quarantines_hangs_and_crashes_and_goes_on(tmp_path):
    out = io.StringIO()
    st, recs = faulty_campaign(tmp_path, "hang:0.15,crash:0.15", watchdog=0.3, seed=11, runs=7, out=out)
    assert st.quarantined >= 2 and set(st.faults) <= {"hang", "crash"} and sum(st.faults.values()) == st.quarantined
    assert st.programs > st.quarantined  # it went on
    q = tmp_path / "quarantine"
    assert len(recs) == st.quarantined
    for r in recs:
        assert r["schema"] == "fuzzgpu.quarantine" and r["fault"]["kind"] in ("hang", "crash")
        assert (q / r["litmus"]).read_text().strip()
        assert r["program"]["threads"]
    assert quarantined_hashes(tmp_path) == {p.stem for p in q.glob("*.json")}
    assert "quarantined" in (tmp_path / "report" / "report.txt").read_text()
    assert "QUARANTINED" in out.getvalue()


# -- GPU pinning with a fake device list ------------------------------------------------------


def test_pytest_xdist_workers_pinned_to_gpus(monkeypatch):
    from fuzzgpu import pytest_plugin as pp

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3")
    gpus = pp.visible_gpus()
    assert gpus == ["0", "1", "2", "3"]
    assert [pp.pin_worker_gpu(f"gw{i}", gpus) for i in range(6)] == ["0", "1", "2", "3", "0", "1"]
    assert pp.pin_worker_gpu(None, gpus) is None and pp.pin_worker_gpu("master", gpus) is None
    assert pp.pin_worker_gpu("gw0", ["0"]) is None  # one GPU: nothing to pin
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "5,7")
    assert pp.pin_worker_gpu("gw1", pp.visible_gpus()) == "7"
    # -n auto: one worker per GPU with the cuda backend, xdist's default otherwise
    cfg = types.SimpleNamespace(getoption=lambda name, default=None: "cuda")
    assert pp.pytest_xdist_auto_num_workers(cfg) == 2
    cfg = types.SimpleNamespace(getoption=lambda name, default=None: "sim")
    assert pp.pytest_xdist_auto_num_workers(cfg) is None


def test_pytest_configure_sets_the_worker_gpu(monkeypatch):
    from fuzzgpu import pytest_plugin as pp
    from fuzzgpu.backends import cuda

    asked: list[str | None] = []  # CUDA_VISIBLE_DEVICES when the driver was asked: CUDA reads it once, at init

    def gpu_unavailable() -> None:  # a GPU machine (the controller checks the cuda backend can run)
        asked.append(os.environ.get("CUDA_VISIBLE_DEVICES"))

    monkeypatch.setattr(cuda, "gpu_unavailable", gpu_unavailable)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2")
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    pp.pytest_configure(types.SimpleNamespace(getoption=lambda name, default=None: "cuda" if name == "--fuzzgpu-backend" else default,
                                              addinivalue_line=lambda *a: None))
    assert asked == ["0,1,2"]  # the controller (no worker id): asked once, every GPU visible
    asked.clear()
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw2")
    def options(backend):  # only --fuzzgpu-backend is set (no --fuzzgpu-corpus)
        return lambda name, default=None: backend if name == "--fuzzgpu-backend" else default

    cfg = types.SimpleNamespace(getoption=options("cuda"), addinivalue_line=lambda *a: None, workerinput={"workerid": "gw2"})
    pp.pytest_configure(cfg)
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "2"
    assert asked == []  # a worker (its config has xdist's workerinput) does not initialise the driver
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2")
    cfg = types.SimpleNamespace(getoption=options("sim"), addinivalue_line=lambda *a: None)
    pp.pytest_configure(cfg)  # not a GPU backend: left alone
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "0,1,2"


def test_gpu_list(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3")
    assert gpu_list("all") == ["0", "1", "2", "3"]
    assert gpu_list("2") == ["0", "1"]
    assert gpu_list("1,3") == ["1", "3"]
    # a malformed --gpus is bad input (exit 2); GPUs asked for but not there are the environment (exit 3,
    # docs/reliability.md "Exit codes")
    for bad, msg in (("0", "at least 1"), ("x", "expected all")):
        with pytest.raises(UserError, match=msg):
            gpu_list(bad)
    for bad, msg in (("5", "only 4"), ("1,9", "not visible")):
        with pytest.raises(EnvError, match=msg):
            gpu_list(bad)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    with pytest.raises(EnvError, match="no GPU"):
        gpu_list("all")


def test_strategy_programs_cross_the_process_boundary(sup):
    """Whatever the profiles draw pickles into the worker and back (the IR is plain data)."""
    from hypothesis import HealthCheck, given, settings

    b = sup("relacq-as-relaxed", watchdog=60)

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(fst.weighted({"MP": 1, "SB": 1, "IRIW": 1, "PDL": 1, "random": 1}, fst.Options()))
    def t(p):
        try:
            b.run(p, RunConfig(instances=100))
        except Exception as e:  # noqa: BLE001 -- the model may not cover it; that is not a worker fault
            assert not isinstance(e, ProgramFault), e

    t()


def test_a_backend_bugs_line_is_one_printable_line():
    """The message may carry a user's text (a label, a path): one line, no terminal escapes."""
    from fuzzgpu.workers.supervised import _one_line

    try:
        raise RuntimeError("bad \x1b[31mlabel\nsecond line")
    except RuntimeError as e:
        line = _one_line(e)
    assert "\n" not in line and "\x1b" not in line and line.startswith("RuntimeError: bad ") and "(at test_workers.py:" in line
