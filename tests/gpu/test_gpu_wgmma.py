"""GPU runs of ``async.read`` as wgmma (issue 16; marked ``gpu``: skipped without a GPU; sm_90 only).

* The mapping self-check: a stand-alone kernel puts a distinct word in every slot of two locations'
  tiles and checks that the wgmma of each warpgroup returns to each thread exactly its own slot's
  word (descriptor strides, B, the accumulator fragment: fuzzgpu.codegen.wgmma).
* tests/litmus/async-proxy/WGMMA-*.litmus with the oracle's verdict on the stale outcome: where it
  is forbidden (a proxy fence on the path) the test expects 0 stale operands, and the written value
  to have been read (so the 0 is not vacuous); where it is allowed the stale count is printed (``-s``),
  not asserted -- a measured zero is a result, with its instance count.  No outcome may hold a
  value no store wrote (``?``: a harness or hardware fault, e.g. a torn operand word).
* tests/litmus/async-proxy/TMA-reduce-add-*.litmus likewise: a bulk reduction (``cp.reduce.async.bulk
  ... .add``) of a shared word written by a generic store, with and without the proxy fence.

Run on an H200 (well under a minute):
``python3 -m pytest -q -s -p no:xdist tests/gpu/test_gpu_wgmma.py``
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu.backends.wgmma_selftest import run_selftest
from fuzzgpu import litmus
from fuzzgpu.backends.base import RunConfig
from fuzzgpu.ir import eval_expr
from fuzzgpu.model import judge

ASYNC = Path(__file__).resolve().parents[1] / "litmus" / "async-proxy"
pytestmark = pytest.mark.gpu

INSTANCES = 100_000_000


@pytest.fixture(scope="module")
def backend():
    from fuzzgpu.backends.cuda import CudaBackend

    b = CudaBackend()
    if b.arch not in ("sm_90", "sm_90a"):
        b.close()
        pytest.skip(f"wgmma needs an sm_90 device (this is {b.arch})")
    yield b
    b.close()


def _witness(p) -> dict[str, int]:
    c = p.condition.expr
    return {str(c.lhs): c.rhs}


def test_mapping_selfcheck_every_thread_reads_its_own_slot(backend) -> None:
    ok, n = run_selftest(backend)
    print(f"wgmma mapping self-check: {ok}/{n} slots")
    assert ok == n


@pytest.mark.parametrize("path", sorted(ASYNC.glob("WGMMA-*.litmus")) + sorted(ASYNC.glob("TMA-reduce-*.litmus")), ids=lambda p: p.stem)
def test_async_proxy_reads_against_the_oracle(backend, path: Path) -> None:
    p = litmus.parse_file(path)
    verdict = judge(p, _witness(p)).verdict
    h = backend.run(p, RunConfig(instances=INSTANCES, barrier=True, spin=1000))
    assert h.instances >= INSTANCES and h.timeouts == 0
    assert sum(c for _, c in h.counts) == h.instances
    unwritten = sum(c for o, c in h.counts if any(v is None for _, v in o))
    stale = h.matching(lambda d: eval_expr(p.condition.expr, d))
    read_new = h.matching(lambda d: not eval_expr(p.condition.expr, d))
    print(f"{p.name}: oracle {verdict}; stale {stale} / {h.instances}; written value read {read_new}; unwritten {unwritten}")
    assert unwritten == 0
    assert read_new > 0, "the wgmma never returned the written value"
    if verdict == "forbidden":
        assert stale == 0
