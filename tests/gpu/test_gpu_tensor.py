"""GPU: the tensor copies (``cp.async.bulk.tensor.1d``, a 1-D tiled tensor map in ``__constant__``
memory encoded by the host with cuTensorMapEncodeTiled) on hardware, issue 16.

The six litmus tests of tests/litmus/async-proxy/TMA-tensor-*.litmus and a spin-loop load:

* TMA-tensor-store-no-fence: the stale copy is allowed (its count is reported, not required);
* TMA-tensor-store-fence-writer: never stale in at least 1e8 instances, and the copy delivers
  (the fresh value is seen: the tensor map and its coordinates address the right words);
* the tensor load with an acquire wait in a loop: never stale in at least 1e8 instances; the lone
  acquire try_wait of TMA-tensor-load-mbarrier-acquire is the known sm_90 finding of its non-tensor
  twin (a lone try_wait does not hold back the next load: tests/gpu/test_gpu.py, LONE_TRY_WAIT), so it
  is xfail (not strict, and only on the oracle's forbidden verdict, tests/gpu/gpu_findings.py) like the twin;
* TMA-tensor-load-mbarrier-relaxed: allowed, reported;
* TMA-tensor-reduce-add-no-fence: the reduction adding the stale 0 is allowed (reported); with the
  fence (TMA-tensor-reduce-add-fence) never in at least 1e8 instances, and the reduction delivers
  (5 + 2 is read).

Every outcome of every run is judged by the oracle (no value outside the oracle's domain, no
forbidden verdict) and the histogram accounts for every instance.

Run (a few minutes on an H200, one nvcc call)::

    python3 -m pytest -m gpu -n 0 -q -s tests/gpu/test_gpu_tensor.py
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu import litmus
from fuzzgpu.backends.base import Histogram, RunConfig
from fuzzgpu.ir import Program

from gpu_findings import LONE_TRY_WAIT, compiled_runner, judged

LITMUS = Path(__file__).resolve().parents[1] / "litmus" / "async-proxy"
FENCED_INSTANCES = 100_000_000

NAMES = ("TMA-tensor-store-no-fence", "TMA-tensor-store-fence-writer", "TMA-tensor-load-mbarrier-acquire",
         "TMA-tensor-load-mbarrier-relaxed", "TMA-tensor-reduce-add-no-fence", "TMA-tensor-reduce-add-fence")


def _programs() -> dict[str, Program]:
    out = {n: litmus.parse_file(LITMUS / f"{n}.litmus") for n in NAMES}
    loop = litmus.parse_file(LITMUS.parent / "wait-loop" / "TMA-tensor-load-loop.litmus")
    out[loop.name] = loop
    return out


@pytest.fixture(scope="module")
def runner():
    yield from compiled_runner(_programs())


def _count(h: Histogram, **want: int) -> int:
    return sum(c for o, c in h.counts if all(dict(o).get(k.replace("_", ":", 1)) == v for k, v in want.items()))


@pytest.mark.gpu
def test_tensor_store_without_fence_may_be_stale(runner) -> None:
    p, h = runner("TMA-tensor-store-no-fence", RunConfig(instances=20_000_000, barrier=True, spin=1000))
    verdicts = judged(p, h)
    stale, fresh = _count(h, P1_r1=0), _count(h, P1_r1=1)
    print(f"\nTMA-tensor-store-no-fence: stale {stale} / {h.instances} (allowed), fresh {fresh}; verdicts {verdicts}")
    assert fresh > 0  # the tensor copy delivers the written value (map and coordinates are right)


@pytest.mark.gpu
def test_tensor_store_with_writer_fence_is_never_stale(runner) -> None:
    p, h = runner("TMA-tensor-store-fence-writer", RunConfig(instances=FENCED_INSTANCES, barrier=True, spin=1000))
    judged(p, h)
    assert h.instances >= FENCED_INSTANCES and h.timeouts == 0
    assert _count(h, P1_r1=0) == 0
    assert _count(h, P1_r1=1) == h.instances  # every instance read the copied value
    print(f"\nTMA-tensor-store-fence-writer: 0 stale in {h.instances}")


@pytest.mark.gpu
def test_tensor_load_with_acquire_wait_loop_is_never_stale(runner) -> None:
    p, h = runner("TMA-tensor-load-loop", RunConfig(instances=FENCED_INSTANCES))
    judged(p, h)
    assert h.instances >= FENCED_INSTANCES
    assert _count(h, P1_r1=1, P1_r2=0) == 0
    assert _count(h, P1_r1=1, P1_r2=1) > 0  # the phase completed and the copy delivered
    print(f"\nTMA-tensor-load-loop: 0 stale in {h.instances} ({h.timeouts} timeouts)")


@pytest.mark.gpu
@LONE_TRY_WAIT  # the non-tensor twin's finding; a CUDA error or a failed harness check fails (tests/gpu/gpu_findings.py)
def test_tensor_load_with_lone_acquire_wait_is_never_stale(runner) -> None:
    p, h = runner("TMA-tensor-load-mbarrier-acquire", RunConfig(instances=300 * 65536))
    assert _count(h, P1_r1=1, P1_r2=1) > 0, h.counts  # the copy delivered (a map that never does is no finding)
    judged(p, h)


@pytest.mark.gpu
def test_tensor_load_with_relaxed_wait_is_judged(runner) -> None:
    p, h = runner("TMA-tensor-load-mbarrier-relaxed", RunConfig(instances=20_000_000))
    verdicts = judged(p, h)
    print(f"\nTMA-tensor-load-mbarrier-relaxed: stale {_count(h, P1_r1=1, P1_r2=0)} / {h.instances} (allowed); "
          f"verdicts {verdicts}")
    assert _count(h, P1_r1=1, P1_r2=1) > 0


def test_every_program_here_is_runnable() -> None:
    """CPU: the GPU tests' programs are runnable harnesses with a tensor map."""
    from fuzzgpu import codegen

    for name, p in _programs().items():
        assert not codegen.unrunnable_reasons(p), name
        _, spec = codegen.harness_source(p)
        assert spec.tensor_map, name


@pytest.mark.gpu
def test_tensor_reduction_without_fence_is_judged(runner) -> None:
    p, h = runner("TMA-tensor-reduce-add-no-fence", RunConfig(instances=20_000_000, barrier=True, spin=1000))
    verdicts = judged(p, h)
    print(f"\nTMA-tensor-reduce-add-no-fence: stale {_count(h, P0_r1=5)} / {h.instances} (allowed); verdicts {verdicts}")
    assert _count(h, P0_r1=7) > 0  # the reduction delivers 5 + 2 (map, coordinates and the .add are right)


@pytest.mark.gpu
def test_tensor_reduction_with_fence_is_never_stale(runner) -> None:
    p, h = runner("TMA-tensor-reduce-add-fence", RunConfig(instances=FENCED_INSTANCES, barrier=True, spin=1000))
    judged(p, h)
    assert h.instances >= FENCED_INSTANCES and h.timeouts == 0
    assert _count(h, P0_r1=7) == h.instances  # every instance read 5 + 2: never the stale 0 added
    print(f"\nTMA-tensor-reduce-add-fence: 0 stale in {h.instances}")

