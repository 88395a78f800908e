"""The known sm_90 finding that GPU tests mark xfail, and the one exception that may fail them.

A lone ``mbarrier.try_wait`` whose predicate is only stored (no branch on it) does not hold back the
next load on an H200 (SASS: TRYWAIT P0; LDS with nothing waiting for P0): the oracle's forbidden
outcome was seen at 0.7% (MBAR-MP-default) and 12.7% (TMA-load-mbarrier-acquire) --
bench/results/harness/extensions-h200.md, docs/findings.md.  The same tests with the wait in a loop: 0.

Only :class:`ForbiddenSeen` -- raised where the oracle judges an observed outcome forbidden -- is the
finding.  Every other failure of such a test (a CUDA driver error, a harness check: instances not
accounted for, a value no store wrote, a copy that never delivers) is a failure, not an xfail: session
7's H200 run counted a driver error (``cuTensorMapEncodeTiled``: CUDA_ERROR_INVALID_VALUE) as the
finding, and ``raises=AssertionError`` still took a harness assertion for it.
"""

from __future__ import annotations

from typing import Any

import pytest


class ForbiddenSeen(AssertionError):
    """An observed outcome the oracle judges forbidden (the only failure LONE_TRY_WAIT expects)."""


def no_forbidden(verdict: str, *what: Any) -> None:
    """Raise :class:`ForbiddenSeen` when the oracle's verdict of an observed outcome is forbidden."""
    if verdict == "forbidden":
        raise ForbiddenSeen(what)


LONE_TRY_WAIT = pytest.mark.xfail(reason="lone try_wait does not order the next load on sm_90 (finding, see "
                                  "bench/results/harness/extensions-h200.md)", strict=False, raises=ForbiddenSeen)


def judged(p: Any, h: Any) -> dict[str, int]:
    """Every outcome of GPU histogram ``h`` of program ``p`` judged: the histogram accounts for every
    instance, no value outside the oracle's domain, no forbidden outcome (:class:`ForbiddenSeen`, the
    only failure the xfails here take); returns instances per verdict."""
    from fuzzgpu import model

    assert dict(h.meta)["sum_ok"] and sum(c for _, c in h.counts) + h.timeouts == h.instances, p.name
    assert h.counts, f"{p.name}: every instance timed out ({h.timeouts}): nothing was judged"
    verdicts: dict[str, int] = {}
    for o, c in h.counts:
        d = dict(o)
        assert None not in d.values(), (p.name, "a value no store wrote", d, c)
        v = model.judge(p, d).verdict
        no_forbidden(v, p.name, d, c)
        verdicts[v] = verdicts.get(v, 0) + c
    return verdicts


def compiled_runner(programs: dict[str, Any]) -> Any:
    """A module fixture's body: ``programs`` compiled in one nvcc call on a CudaBackend; yields
    ``run(name, RunConfig) -> (program, histogram)`` and closes the backend after the module."""
    from fuzzgpu.backends.cuda import CudaBackend, compile_programs

    b = CudaBackend()
    cs = compile_programs(list(programs.values()), b.arch, batch=len(programs), jobs=1)
    compiled = dict(zip(programs, cs))

    def run(name: str, cfg: Any) -> tuple[Any, Any]:
        return programs[name], b.run(programs[name], cfg, compiled=compiled[name])

    yield run
    b.close()

