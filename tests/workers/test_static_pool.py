"""The static-check pool (fuzzgpu.workers.static_pool, issue 29): the batches of several workers
checked together give each worker what its own check_batch gives, each program compiled once; a
worker whose pool is gone checks alone; a parallel static campaign's workers use it.  Real nvcc,
real nvdisasm, real processes."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import sys
import threading
from typing import Any

import pytest

from fuzzgpu.backends import static
from fuzzgpu.backends.static import StaticBackend, check_batch
from fuzzgpu.ir import Program
from fuzzgpu.recent import Recent
from fuzzgpu.backends.static_pool import CheckRequest, PoolClient, attach_pool
from fuzzgpu.workers.static_pool import PoolCounters, PoolHandle, answer
from programs import MP  # noqa: E402 -- tests/programs.py

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")


def named(p: Program, name: str) -> Program:
    return dataclasses.replace(p, name=name)


#: where a batched finding may differ from another batch's: the lines of the listing it was read from
POSITIONS = ("op_ptx_line", "op_sass_line", "sync_ptx_line", "sync_sass_line")


def without_listing(res: Any) -> tuple:
    """A result less what depends on the batch it was read from (tests/backends/test_static_batch.py's
    ``without_positions``): its listing's line numbers, the folder nvcc compiled in."""
    def tmp(v: Any) -> Any:
        return re.sub(r"/tmp/fuzzgpu-sass-src-\w+/", "TMP/", v) if isinstance(v, str) else tuple(map(tmp, v)) if isinstance(v, tuple) else v

    return ([{k: tmp(v) for k, v in f.items() if k not in POSITIONS} for f in res["sass_findings"]],
            [re.sub(r"\d+", "N", n) for n in res["sass_notes"]], [re.sub(r"PTX line \d+", "PTX line N", u) for u in res["sass_unchecked"]])


def pdl_nc() -> Program:
    """The motivating bug's shape (tests/backends/test_static_batch.py's ``pdl(True)``): an
    ``ld.global.nc`` after ``griddepcontrol.wait``, which ptxas may hoist above it."""
    from fuzzgpu.ir import Barrier, GridDepControl, Load, Location, Placement, Space, Store, Thread, validate

    return validate(Program("PDLnc", (
        Thread("P0", Placement(grid=0), (Store("x", 1), GridDepControl("launch_dependents"))),
        Thread("P1", Placement(grid=1), (Store("s", 2), Barrier(0), GridDepControl("wait"), Load("r0", "x", nc=True))),
    ), (Location("x"), Location("s", space=Space.SHARED)), observed=("P1:r0",), pdl_grids=(1,)))


def test_requests_answered_together_as_each_alone_each_program_once() -> None:
    a, b, c = named(MP, "PoolA"), pdl_nc(), named(MP, "PoolC")
    calls: list[list[Program]] = []

    def check(programs, arch, opt):
        calls.append(list(programs))
        return check_batch(programs, arch, opt)

    kept: Recent = Recent(100)
    counters = PoolCounters()
    got = answer([CheckRequest("sm_90", 3, (a, b)), CheckRequest("sm_90", 3, (b, c, a))], kept, check, counters)
    assert calls == [[a, b, c]]  # one check, each program once
    alone = {p: check_batch([p], "sm_90", 3)[0] for p in (a, b, c)}
    assert [[without_listing(r) for r in rs] for rs in got] == [[without_listing(alone[p]) for p in ps]
                                                               for ps in ((a, b), (b, c, a))]
    assert got[0][1]["sass_findings"]  # the ld.global.nc the PDL wait does not order: found through the pool too
    assert (counters.requests, counters.programs, counters.shared_answers, counters.checks, counters.checked) == (2, 5, 2, 1, 3)
    # asked again: answered from the kept results, nothing compiled
    again = answer([CheckRequest("sm_90", 3, (c,))], kept, check, counters)
    assert len(calls) == 1 and again == [[got[1][1]]] and counters.kept_answers == 1


def test_two_workers_share_the_pool_and_a_worker_without_it_checks_alone(tmp_path) -> None:
    handle = PoolHandle(tmp_path / "pool.json")
    try:
        env = handle.env()
        results: dict[str, Any] = {}

        def worker(k: str, programs: list[Program]) -> None:
            results[k] = PoolClient.from_env(env).check(programs, "sm_90", 3)

        threads = [threading.Thread(target=worker, args=(k, ps)) for k, ps in
                   (("w0", [named(MP, "PoolW0"), pdl_nc()]), ("w1", [pdl_nc()]))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results["w0"] is not None and results["w1"] is not None
        assert without_listing(results["w0"][1]) == without_listing(results["w1"][0])
        # a worker's static backend with the pool: its batch's answers are the pool's
        static._SOURCE_CACHE.clear()
        backend = attach_pool(StaticBackend("sm_90"), env)
        assert backend.pool is not None
        backend.prepare([named(MP, "PoolW2")])
        assert len(static._SOURCE_CACHE) == 1
    finally:
        handle.stop()
    lost = PoolClient.from_env(env)
    assert lost is not None and lost.check([MP], "sm_90", 3) is None and lost.broken  # gone: the worker checks alone
    backend = StaticBackend("sm_90")
    backend.pool = lost.check
    static._SOURCE_CACHE.clear()
    backend.prepare([named(MP, "PoolAlone")])
    assert len(static._SOURCE_CACHE) == 1
    assert attach_pool(StaticBackend("sm_90"), {}).pool is None  # no pool named: none used


@pytest.mark.slow  # a parallel static campaign of 20 s: ~40 CPU-seconds
def test_a_parallel_static_campaign_checks_its_workers_batches_in_the_pool(tmp_path) -> None:
    corpus = tmp_path / "c"
    r = subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", "--backend", "static", "--profile", "all", "--workers", "2",
                        "--static-pool", "--static-pool-window", "0.8", "--time", "20", "--seed", "5", "--no-live",
                        "--corpus", str(corpus)],
                       check=False, capture_output=True, text=True, timeout=240)
    assert r.returncode in (0, 1), r.stdout[-2000:] + r.stderr[-2000:]
    counters = json.loads((corpus / ".fuzzgpu" / "static-pool.json").read_text())
    assert counters["clients"] == 2 and counters["requests"] > 0 and counters["checks"] > 0
    assert counters["window_s"] == 0.8  # --static-pool-window reached the pool
    assert counters["checked"] <= counters["programs"]


@pytest.mark.parametrize("args, said", [
    (["--backend", "static"], "give --gpus or --workers N (N >= 2)"),
    (["--backend", "sim", "--workers", "2"], "not with --backend sim or --ray"),
    (["--backend", "static", "--workers", "4", "--no-static-pool", "--static-pool-window", "1"], "not with --no-static-pool"),
    (["--backend", "static", "--workers", "4", "--static-pool-window", "0"], "above 0"),
    (["--backend", "static", "--workers", "3", "--static-pool-window", "1"], "which is off with 3 local worker(s)"),
    (["--backend", "static", "--static-pool-window", "1"], "which is off with 1 local worker(s)"),
])
def test_static_pool_refused_where_it_cannot_pool(tmp_path, args, said) -> None:
    # the window's cases name no --static-pool (the pool off by default there) or say --no-static-pool
    pool = [] if "--static-pool-window" in args else ["--static-pool"]
    r = subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", *args, *pool, "--time", "1", "--no-live",
                        "--corpus", str(tmp_path / "c")], check=False, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and said in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "c" / ".fuzzgpu" / "static-pool.json").exists()


@pytest.mark.parametrize("asked, backend, workers, on", [
    (None, "static", 4, True),    # the default from 4 local workers on a compiling backend (AUTO_WORKERS)
    (None, "cuda", 16, True),
    (None, "static", 3, False),   # 2 workers on 2 cores judged 7% fewer with it (throughput/static-pool.md)
    (None, "sim", 16, False),     # sim compiles nothing
    (False, "cuda", 16, False),   # --no-static-pool
    (True, "static", 2, True),    # --static-pool
])
def test_the_pool_is_on_by_default_from_four_workers_on_a_compiling_backend(asked, backend, workers, on) -> None:
    import argparse

    from fuzzgpu.commands.campaign import static_pool_on

    assert static_pool_on(argparse.Namespace(static_pool=asked, backend=backend), workers) is on


@pytest.mark.slow  # two parallel static campaigns of 4 workers, ~1 s each: ~30 CPU-seconds of start-up
def test_four_workers_pool_their_checks_unless_told_not_to(tmp_path) -> None:
    for flag, pooled in (([], True), (["--no-static-pool"], False)):
        corpus = tmp_path / f"c{len(flag)}"
        r = subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", "--backend", "static", "--profile", "classic",
                            "--workers", "4", *flag, "--time", "1", "--seed", "5", "--no-live", "--corpus", str(corpus)],
                           check=False, capture_output=True, text=True, timeout=240)
        assert r.returncode in (0, 1), r.stdout[-2000:] + r.stderr[-2000:]
        assert ("one static-check pool checks their static kernels" in r.stdout + r.stderr) is pooled
        assert (corpus / ".fuzzgpu" / "static-pool.json").exists() is pooled


def test_a_pool_that_cannot_listen_says_why_in_one_line(tmp_path, monkeypatch) -> None:
    """A socket path longer than AF_UNIX takes (a deep TMPDIR): the pool answers its start with one line,
    no traceback, and a parallel campaign goes on without it (local.run_parallel)."""
    import tempfile

    from fuzzgpu.errors import EnvError

    deep = tmp_path / ("d" * 110)
    deep.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    with pytest.raises(EnvError) as e:
        PoolHandle(tmp_path / "static-pool.json", start_timeout=60)
    assert str(e.value).startswith("the static-check pool did not start: its socket ") and "too long" in str(e.value)
    assert "\n" not in str(e.value)


@pytest.mark.slow  # a parallel static campaign of 4 workers, ~1 s: ~15 CPU-seconds of start-up
def test_a_campaign_goes_on_when_its_pool_cannot_start(tmp_path) -> None:
    import os

    deep = tmp_path / ("d" * 110)
    deep.mkdir()
    r = subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", "--backend", "static", "--profile", "classic", "--workers", "4",
                        "--time", "1", "--seed", "5", "--no-live", "--corpus", str(tmp_path / "c")],
                       check=False, capture_output=True, text=True, timeout=240, env={**os.environ, "TMPDIR": str(deep)})
    out = r.stdout + r.stderr
    assert r.returncode in (0, 1), out[-2000:]
    assert "the static-check pool did not start" in out and "the workers check their batches alone" in out
    assert "Traceback" not in out


def test_a_wait_fits_in_the_campaigns_watchdog() -> None:
    from fuzzgpu.backends.static_pool import ANSWER_TIMEOUT_S, answer_timeout

    assert answer_timeout(300) == ANSWER_TIMEOUT_S == 45.0
    assert answer_timeout(120) == 40.0  # the default watchdog: a third of it
    assert answer_timeout(10) == pytest.approx(10 / 3) and answer_timeout(1) == 1.0


def test_a_round_whose_check_fails_answers_none_and_its_workers_may_ask_again(tmp_path) -> None:
    """A check that raises (nvcc gone, a check process killed) answers None for its programs -- the
    worker checks them itself -- and its clients are served again in the next round."""
    import concurrent.futures
    from multiprocessing.connection import Listener

    from fuzzgpu.workers.static_pool import Pool

    calls: list[int] = []

    def check(programs, arch, opt):
        calls.append(len(programs))
        if len(calls) == 1:
            raise RuntimeError("nvcc: gone")
        return check_batch(programs, arch, opt)

    key = b"k" * 32
    listener = Listener(str(tmp_path / "p.sock"), family="AF_UNIX", authkey=key)
    pool = Pool(listener, PoolCounters(), 0.1, check, lambda: concurrent.futures.ThreadPoolExecutor(2))
    threading.Thread(target=pool.accept_forever, daemon=True).start()

    def serve_rounds() -> None:
        while True:
            fut = pool.round(0.2)
            if fut is not None:
                fut.result()

    threading.Thread(target=serve_rounds, daemon=True).start()
    client = PoolClient(str(tmp_path / "p.sock"), key, timeout=60)
    assert client.check([named(MP, "PoolFail")], "sm_90", 3) == [None]
    again = client.check([named(MP, "PoolFail")], "sm_90", 3)
    assert again is not None and again[0] is not None and not client.broken and calls == [1, 1]
    backend = StaticBackend("sm_90")
    backend.pool = lambda programs, arch, opt: [None] * len(programs)  # the pool had no answer: checked alone at the run
    static._SOURCE_CACHE.clear()
    backend.prepare([named(MP, "PoolNone")])
    assert not static._SOURCE_CACHE and "sass_findings" in dict(backend.run(named(MP, "PoolNone")).meta)
