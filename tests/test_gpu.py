"""GPU runs of the harness (marked ``gpu``: skipped without a GPU, PyCUDA and cuda-bindings)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu import codegen, litmus
from fuzzgpu.backends.base import Histogram, RunConfig
from fuzzgpu.ir import Not, eval_expr

GPU = Path(__file__).resolve().parent / "litmus" / "gpu"
pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def backend():
    from fuzzgpu.backends.cuda import CudaBackend

    b = CudaBackend()
    yield b
    b.close()


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
    assert _weak(p, h) == 0


def test_rmw_and_spin_loops(backend) -> None:
    p = litmus.parse_file(GPU / "Atom-add-gpu.litmus")
    h = backend.run(p, RunConfig(instances=5_000_000))
    assert _weak(p, h) == 0 and dict(h.counts)  # x == 2 and distinct results, always
    p = litmus.parse_file(GPU / "MP-spin-relacq-gpu.litmus")
    h = backend.run(p, RunConfig(instances=5_000_000, budget=100_000))
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
    assert all(o["verdict"] in ("sc", "allowed") for o in d["outcomes"])
