"""GPU runs of the harness (marked ``gpu``: skipped without a GPU, PyCUDA and cuda-bindings)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu import litmus
from fuzzgpu.backends.base import Histogram, RunConfig
from fuzzgpu.ir import Not, eval_expr

from gpu_findings import LONE_TRY_WAIT, no_forbidden

GPU = Path(__file__).resolve().parents[1] / "litmus" / "gpu"
pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def backend():
    from fuzzgpu.backends.cuda import CudaBackend

    b = CudaBackend()
    yield b
    b.close()


def _judged(h: Histogram) -> int:
    """Instances that ended with an outcome of written values (no timeout, no ``?``)."""
    return h.matching(lambda d: True)


def _weak(p, h: Histogram) -> int:
    c = p.condition
    expr = c.expr if c.quantifier != "forall" else Not(c.expr)
    return h.matching(lambda d: eval_expr(expr, d))


def test_mp_relaxed_shows_weak_outcomes(backend) -> None:
    p = litmus.parse_file(GPU / "MP-relaxed-gpu.litmus")
    h = backend.run(p, RunConfig(instances=50_000_000, barrier=True, spin=1000))
    assert h.instances >= 50_000_000 and h.timeouts == 0
    assert sum(c for _, c in h.counts) == h.instances
    assert _weak(p, h) / h.instances > 1e-4  # 1e-2 on an H200


@pytest.mark.parametrize("stem", ["MP-relacq-gpu", "SB-fence-sc-gpu", "CoRR-relaxed-gpu", "MP-relacq-cluster"])
def test_forbidden_outcomes_never_seen(backend, stem) -> None:
    p = litmus.parse_file(GPU / f"{stem}.litmus")
    h = backend.run(p, RunConfig(instances=20_000_000, barrier=True, spin=1000))
    # no wait in these programs: every instance ends with values a store wrote (else nothing was judged)
    assert h.timeouts == 0 and _judged(h) == h.instances, (h.timeouts, _judged(h), h.instances)
    assert _weak(p, h) == 0


def test_rmw_and_spin_loops(backend) -> None:
    p = litmus.parse_file(GPU / "Atom-add-gpu.litmus")
    h = backend.run(p, RunConfig(instances=5_000_000))
    assert _weak(p, h) == 0 and dict(h.counts)  # x == 2 and distinct results, always
    p = litmus.parse_file(GPU / "MP-spin-relacq-gpu.litmus")
    h = backend.run(p, RunConfig(instances=5_000_000, budget=100_000))
    assert _judged(h) > 0, f"every instance timed out or read ? ({h.timeouts} timeouts): nothing was judged"
    assert _weak(p, h) == 0


def test_pdl_launch_attribute_is_accepted(backend) -> None:
    from fuzzgpu.backends import cuda as cudab

    src = r'''extern "C" __global__ void k(unsigned* p) {
      asm volatile("griddepcontrol.wait;" ::: "memory"); p[threadIdx.x] += 1; }'''
    f = backend.function(cudab.compile_cubin(src, backend.arch), "k")
    buf = backend.drv.mem_alloc(4 * 32)
    backend.drv.memset_d32(buf, 0, 32)
    args = cudab.KernelArgs([("p", int(buf))])
    backend.launch(f, 1, 32, args)
    backend.launch(f, 1, 32, args, pdl=True)
    backend.sync()
    import numpy as np

    out = np.zeros(32, dtype=np.uint32)
    backend.drv.memcpy_dtoh(out, buf)
    assert (out == 2).all()


def test_spin_loop_that_never_succeeds_times_out(backend) -> None:
    from fuzzgpu.ir import Branch, Cond, Label, Load, Location, Placement, Program, Sem, Thread, validate

    p = validate(
        Program(
            "spin-forever",
            (
                Thread("P0", Placement(cta=0), (Label("L"), Load("r0", "x", Sem.RELAXED), Branch(Cond.EQ, "r0", 0, "L"))),
                Thread("P1", Placement(cta=1), (Load("r1", "x", Sem.RELAXED),)),
            ),
            (Location("x"),),
        )
    )
    h = backend.run(p, RunConfig(instances=1_000_000, budget=200))
    assert h.timeouts == h.instances and not h.counts


def test_run_command_json(capsys) -> None:
    import json

    from fuzzgpu.cli import main

    rc = main(["run", "--json", "--instances", "2e6", str(GPU / "MP-relacq-gpu.litmus")])
    d = json.loads(capsys.readouterr().out)
    assert rc == 0 and d["forbidden"] == 0 and d["instances"] >= 2_000_000
    assert d["outcomes"] and all(o["verdict"] in ("sc", "allowed") for o in d["outcomes"])


# --------------------------------------------------------------------------------------------
# Extension IR: PDL (several grids), mbarrier, bulk copies, cp.async
# --------------------------------------------------------------------------------------------

EXT = Path(__file__).resolve().parents[1] / "litmus"

PDL_HOIST = GPU.parent / "gpu-pdl" / "PDL-hoist-{name}.litmus"


def _stale(h: Histogram) -> int:
    return h.matching(lambda d: d["P1:r1"] == 0)


def test_pdl_hoisted_nc_load_reads_stale_and_plain_does_not(backend) -> None:
    """facts/h200-litmus-probe.md Table 6 through the harness: the primary triggers, runs 30 us,
    then writes; ptxas hoists the dependent's ld.global.nc above ACQBULK (the harness kernel's
    SASS, see bench/results/harness/extensions-h200.md): stale reads with PDL on, none with PDL off; the
    plain load never reads stale."""
    nc = litmus.parse_file(str(PDL_HOIST).format(name="nc"))
    plain = litmus.parse_file(str(PDL_HOIST).format(name="plain"))
    cfg = RunConfig(instances=200 * 65536, pdl_delay_ns=30_000)
    h = backend.run(nc, cfg)
    assert h.timeouts == 0 and dict(h.meta)["pdl_grids"] == [1]
    assert _stale(h) > h.instances // 10
    import dataclasses

    for h in (backend.run(nc, dataclasses.replace(cfg, pdl=False)), backend.run(plain, cfg)):
        # every instance read the written value (so none stale, none timed out, none read ?)
        assert h.matching(lambda d: d["P1:r1"] == 1) == h.instances, (h.counts, h.timeouts)


# LONE_TRY_WAIT: the known sm_90 finding (tests/gpu/gpu_findings.py); only the oracle's forbidden verdict
# (ForbiddenSeen) is xfail, a driver error or a failed harness check fails.

#: the xfail cases: the outcome of a handoff that happened (the wait returned true and the load read
#: the written value); never seen, the harness is broken (no store or copy lands), not the finding
LONE_WAITS = ("mbarrier/MBAR-MP-default.litmus", "async-proxy/TMA-load-mbarrier-acquire.litmus")


@pytest.mark.parametrize("path", ["pdl/PDL-wait-plain.litmus", "pdl/PDL-off-stream-order.litmus",
                                  "pdl/PDL-chain-grid-before-primary.litmus",
                                  *(pytest.param(w, marks=LONE_TRY_WAIT) for w in LONE_WAITS),
                                  "wait-loop/MBAR-MP-loop.litmus", "wait-loop/TMA-load-loop.litmus",
                                  "async-proxy/TMA-store-fence-writer.litmus", "cp-async/CPASYNC-wait-all.litmus"])
def test_extension_forbidden_outcomes_never_seen(backend, path) -> None:
    from fuzzgpu import model

    p = litmus.parse_file(EXT / path)
    h = backend.run(p, RunConfig(instances=(100 if p.pdl_grids else 300) * 65536))
    assert sum(c for _, c in h.counts) + h.timeouts == h.instances
    assert h.counts, f"{path}: every instance timed out ({h.timeouts}): nothing was judged"
    if path in LONE_WAITS:  # the handoff happened at all (a copy or store that never lands is no finding)
        assert h.matching(lambda d: d["P1:r1"] == 1 and d["P1:r2"] == 1) > 0, (path, h.counts)
    for o, c in h.counts:
        d = dict(o)
        assert None not in d.values(), (path, d)
        no_forbidden(model.judge(p, d).verdict, path, d, c)


def test_mbarrier_wait_that_never_completes_is_bounded(backend) -> None:
    """try_wait on a phase that never completes (expect_tx without a copy) returns false after the
    hardware's time limit: every instance ends, r1 == 1 never."""
    p = litmus.parse_file(EXT / "mbarrier" / "MBAR-expect-tx-pending.litmus")
    h = backend.run(p, RunConfig(instances=20 * 65536))
    assert h.timeouts == 0 and _judged(h) == h.instances, (h.timeouts, h.counts)  # no loop: every instance ends
    assert h.matching(lambda d: d["P1:r1"] == 1) == 0


def test_xdist_worker_is_pinned_to_its_own_gpu() -> None:
    """``pytest -n N`` with several GPUs: worker gwK sees only GPU K mod N (CUDA_VISIBLE_DEVICES set
    by the plugin), and the device it opens is that GPU (same PCI bus id as nvidia-smi's GPU K)."""
    import os
    import subprocess

    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        pytest.skip("checks pytest-xdist pinning: run with pytest -n N")
    smi = subprocess.run(["nvidia-smi", "--query-gpu=index,pci.bus_id", "--format=csv,noheader"],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    bus = {i.strip(): b.strip() for i, b in (ln.split(",") for ln in smi.strip().splitlines())}
    if len(bus) < 2:
        pytest.skip(f"one GPU on this machine ({len(bus)}): nothing to pin")
    want = str(int(worker[2:]) % len(bus))
    assert os.environ.get("CUDA_VISIBLE_DEVICES") == want
    import pycuda.driver as drv

    drv.init()
    assert drv.Device.count() == 1
    got = drv.Device(0).pci_bus_id().lower().split(":", 1)[1]
    assert bus[want].lower().endswith(got), (bus[want], got)
    print(f"{worker}: CUDA_VISIBLE_DEVICES={want}, device 0 = {drv.Device(0).name()} at {got} (nvidia-smi GPU {want}: {bus[want]})")


def test_context_waits_block(backend) -> None:
    """The backend's context is made with CU_CTX_SCHED_BLOCKING_SYNC: a worker waiting for the
    GPU (its kernels or other workers' kernels on the same GPU) sleeps instead of spinning a core
    (issue 29: with the driver's default, K workers on one GPU spun K cores)."""
    from fuzzgpu.backends.cuda import CTX_SCHED, CTX_SCHED_MASK

    assert backend.context_flags() & CTX_SCHED_MASK == CTX_SCHED["blocking"]


def test_static_and_dynamic_shared_memory_together_are_opted_in(backend) -> None:
    """The occupancy cap (``ctas_per_sm``) gives each CTA dynamic shared memory; with the harness's
    static shared memory the sum passes 48 KB while the dynamic part alone does not.  The driver
    refused such launches (CUDA_ERROR_INVALID_VALUE from cuLaunchKernel: 53 programs of the H200
    600 s campaign of 2026-12-03) until the opt-in counted both (``geometry.needs_shared_opt_in``)."""
    from fuzzgpu.backends.geometry import launch_geometry

    p = litmus.parse_file(GPU / "HANDOFF-shared-opt-in.litmus")
    cfg = RunConfig(instances=200_000, ctas_per_sm=4)
    c = backend.harness(p)
    static = backend.static_smem(backend.function(c.cubin, c.spec.kernel))
    dynamic = launch_geometry(c.spec, cfg, backend.smem_per_sm, static).shared_bytes
    assert static + dynamic > 48 * 1024 >= dynamic  # the case the old check missed
    h = backend.run(p, cfg, compiled=c)
    assert h.instances >= 200_000 and sum(n for _, n in h.counts) + h.timeouts == h.instances


def test_a_run_whose_waits_time_out_stops_early(backend) -> None:
    """``RunConfig.timeout_stop``: the harness judges its first launch, reads the histogram, and a
    run with more than half of those instances timed out stops after ``timeout_stop`` instances
    (whole launches); the histogram still adds up and says so."""
    p = litmus.parse_file(Path(__file__).resolve().parents[1] / "litmus" / "termination" / "MP-spin-flag-never-set.litmus")
    h = backend.run(p, RunConfig(instances=5_000_000, budget=1_000, timeout_stop=100_000))
    meta = dict(h.meta)
    per = meta["instances_per_launch"]
    assert h.instances == h.timeouts == max(2, -(-100_000 // per)) * per < 5_000_000
    assert "stopped_early" in meta and meta["sum_ok"]
    ok = backend.run(litmus.parse_file(GPU / "MP-spin-relacq-gpu.litmus"), RunConfig(instances=2_000_000, timeout_stop=100_000))
    assert ok.instances >= 2_000_000 and "stopped_early" not in dict(ok.meta)  # its waits end: every instance runs
