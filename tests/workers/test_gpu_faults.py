"""GPU faults in a campaign: a launch that traps, touches an illegal address or never ends.

On the CPU: the injected code is generated and compiles, ``--gpu-fault`` is parsed, and the worker
supervision handles a lost CUDA context (``--sim-fault gpu-fault`` raises the cuda backend's
``GpuFault`` in the worker, as a faulting launch does).  On a GPU (marked ``gpu``): the real thing."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from fuzzgpu import codegen
from fuzzgpu.backends.base import RunConfig
from fuzzgpu.backends.cuda import is_sticky, parse_gpu_faults
from fuzzgpu.errors import UserError
from fuzzgpu.workers.supervised import BackendSpec, ProgramFault, SupervisedBackend

from test_workers import CFG, faulty_campaign, mp, split


def test_parse_gpu_faults() -> None:
    assert parse_gpu_faults("trap:0.02,hang:0.5") == {"trap": 0.02, "hang": 0.5}
    assert parse_gpu_faults("illegal-address") == {"illegal-address": 1 / 16}
    assert parse_gpu_faults(None) == {}
    for bad in ("nope", "trap:2", "trap:x", "hang:0"):
        with pytest.raises(UserError):
            parse_gpu_faults(bad)


def test_sticky_errors() -> None:
    assert is_sticky("<CUresult.CUDA_ERROR_ILLEGAL_ADDRESS: 700>")
    assert is_sticky("cuStreamSynchronize failed: unspecified launch failure")
    assert not is_sticky("<CUresult.CUDA_ERROR_OUT_OF_MEMORY: 2>")


@pytest.mark.parametrize("fault", sorted(codegen.INJECTED_FAULTS))
def test_injected_fault_is_emitted_once_in_grid_0(fault: str) -> None:
    src, _ = codegen.harness_source(mp(1), inject=fault)
    assert src.count(f"INJECTED FAULT: {fault}") == 1
    clean, _ = codegen.harness_source(mp(1))
    assert "INJECTED FAULT" not in clean
    with pytest.raises(ValueError):
        codegen.harness_source(mp(1), inject="bogus")


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
@pytest.mark.parametrize("fault", sorted(codegen.INJECTED_FAULTS))
def test_injected_fault_compiles(fault: str) -> None:
    from fuzzgpu.backends.cuda import compile_cubin

    src, spec = codegen.harness_source(mp(1), inject=fault)
    assert compile_cubin(src, use_cache=False)[:4] == b"\x7fELF"


def test_a_lost_context_is_a_fault_and_the_worker_restarts() -> None:
    hit, spare = split("gpu-fault", 0.5)
    b = SupervisedBackend(BackendSpec("sim", "gpu-fault:0.5"), watchdog=30)
    try:
        pid = b.pid()
        with pytest.raises(ProgramFault) as e:
            b.run(hit, CFG)
        assert e.value.kind == "gpu-fault" and "ILLEGAL_ADDRESS" in e.value.detail
        assert b.run(spare, CFG).instances == CFG.instances
        assert b.pid() != pid and b.restarts == 1  # the faulted worker left; a fresh one answered
    finally:
        b.close()


def test_campaign_quarantines_gpu_faults_and_goes_on(tmp_path) -> None:
    st, recs = faulty_campaign(tmp_path, "gpu-fault:0.2", watchdog=30, seed=5, runs=6)
    assert st.faults.get("gpu-fault", 0) >= 1 and st.programs > st.quarantined
    assert recs and all(r["fault"]["kind"] == "gpu-fault" for r in recs)


# -- on a GPU ---------------------------------------------------------------------------------


_IN_PROCESS = """
import sys
from fuzzgpu.backends.base import RunConfig
from fuzzgpu.backends.cuda import CudaBackend, GpuFault
from fuzzgpu.litmus import parse
p = parse(sys.argv[2])
b = CudaBackend(fault=sys.argv[1] + ":1")
try:
    b.run(p, RunConfig(instances=1_000_000))
except GpuFault as e:
    print("GpuFault:", e)
    sys.exit(0)
finally:
    b.close()
sys.exit("no GpuFault")
"""


@pytest.mark.gpu
@pytest.mark.parametrize("fault", ["trap", "illegal-address"])
def test_gpu_fault_in_process(fault: str) -> None:
    """A faulting launch raises GpuFault (the context is lost: nothing else runs in it).  Run in a
    child process of its own: the lost context is the process's, and a pytest worker that ran this
    in-process could open no context for the tests after it (seen on the H200)."""
    from fuzzgpu.litmus import format_program

    r = subprocess.run([sys.executable, "-c", _IN_PROCESS, fault, format_program(mp(1))], capture_output=True, text=True,
                       check=False, timeout=300)
    assert r.returncode == 0 and "GpuFault" in r.stdout, r.stdout[-2000:] + r.stderr[-2000:]


@pytest.mark.gpu
@pytest.mark.parametrize("fault,kind", [("trap", "gpu-fault"), ("illegal-address", "gpu-fault"), ("hang", "hang")])
def test_gpu_fault_in_a_worker(fault: str, kind: str) -> None:
    """Supervised: the faulting (or hung) program is a ProgramFault, and the next program runs on a
    fresh worker and context."""
    hit, spare = split(fault, 0.5)
    b = SupervisedBackend(BackendSpec("cuda", gpu_fault=f"{fault}:0.5"), watchdog=20)
    try:
        with pytest.raises(ProgramFault) as e:
            b.run(hit, RunConfig(instances=1_000_000))
        assert e.value.kind == kind
        h = b.run(spare, RunConfig(instances=1_000_000))
        assert h.instances >= 1_000_000 and b.restarts == 1
    finally:
        b.close()
