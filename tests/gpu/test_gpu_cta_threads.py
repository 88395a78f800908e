"""The harness at every CTA size (RunConfig.cta_threads, cuda-litmus's workgroup size): each instance
played once per role (every instance judged, only values the program wrote, no outcome the model
forbids), and the weak outcomes still shown.  Marked ``gpu``."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu import litmus, model
from fuzzgpu.backends.base import RunConfig
from fuzzgpu.ir import Not, eval_expr

from gpu_findings import no_forbidden

LITMUS = Path(__file__).resolve().parents[1] / "litmus"
pytestmark = pytest.mark.gpu

#: layouts the lane bijection must hold for: roles in other CTAs (a random distance and striped),
#: two roles in one CTA (two warps), in one warp, a cluster, an RMW (exact values, primed), a
#: spin loop, an mbarrier wait loop, a TMA store, cp.async, a PDL pair
PROGRAMS = ["gpu/MP-relacq-gpu.litmus", "gpu/SB-fence-sc-gpu.litmus", "gpu/CoRR-relaxed-gpu.litmus",
            "gpu/MP-relaxed-gpu-same-cta.litmus", "gpu/MP-relaxed-gpu-same-warp.litmus", "gpu/MP-relacq-cluster.litmus",
            "gpu/Atom-add-gpu.litmus", "gpu/MP-spin-relacq-gpu.litmus", "wait-loop/MBAR-MP-loop.litmus",
            "async-proxy/TMA-store-fence-writer.litmus", "cp-async/CPASYNC-wait-all.litmus",
            "pdl/PDL-wait-plain.litmus"]


@pytest.fixture(scope="module")
def backend():
    from fuzzgpu.backends.cuda import CudaBackend

    b = CudaBackend()
    yield b
    b.close()


@pytest.mark.parametrize("ct", [32, 64, 128])
@pytest.mark.parametrize("path", PROGRAMS)
def test_every_instance_is_played_once_per_role_at_each_cta_size(backend, path: str, ct: int) -> None:
    p = litmus.parse_file(LITMUS / path)
    c = backend.compile(p)
    if ct < c.spec.min_cta_threads:
        pytest.skip(f"{path}: needs {c.spec.min_cta_threads} threads a CTA")
    for stripe in (False, True):
        cfg = RunConfig(instances=1 << 21, cta_threads=ct, test_ctas=65536 // ct, barrier=True, spin=1000,
                        stripe_ctas=stripe)
        h = backend.run_compiled(c, cfg)
        meta = dict(h.meta)
        assert meta["cta_threads"] == ct and meta["instances_per_launch"] == 65536 and meta["sum_ok"], meta
        assert sum(n for _, n in h.counts) + h.timeouts == h.instances >= 1 << 21
        assert h.counts, f"{path}: every instance timed out"
        for o, n in h.counts:
            d = dict(o)
            assert None not in d.values(), (path, ct, d)  # a value no store of this launch wrote
            no_forbidden(model.judge(p, d).verdict, f"{path} cta_threads={ct}", d, n)


@pytest.mark.parametrize("ct", [32, 64])
def test_small_ctas_still_show_weak_outcomes(backend, ct: int) -> None:
    p = litmus.parse_file(LITMUS / "gpu" / "MP-relaxed-gpu.litmus")
    h = backend.run(p, RunConfig(instances=1 << 25, cta_threads=ct, test_ctas=65536 // ct, barrier=True, spin=1000))
    c = p.condition
    expr = c.expr if c.quantifier != "forall" else Not(c.expr)
    assert h.matching(lambda d: eval_expr(expr, d)) > 0
