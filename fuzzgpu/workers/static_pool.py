"""The static-check pool: one process a parallel campaign starts beside its workers, which checks
the static kernels of every worker's batches together (issue 29: "pool the programs of a GPU's
workers; one nvcc and one nvdisasm per batch").

Why: a static check (:func:`fuzzgpu.backends.static.check_batch`: one nvcc and one nvdisasm) costs
about a CPU second of start-up on the H200 machine whatever its size, and most of a campaign's
checks are small (a shrink's batch of 8 candidates, a batch whose other programs were checked
before; ``bench/results/throughput/README.md``).

Layout (:mod:`fuzzgpu.backends.static_pool` has the workers' end)::

    worker w0 .. wK  (their backend processes: StaticBackend.pool = PoolClient.check) --unix socket--> pool (serve)

* a worker's :class:`~fuzzgpu.backends.static.StaticBackend` (its own, or a GPU backend's
  ``CheckedBackend.static``) sends each batch it would check (its ``prepare``; a program checked
  alone, at its run, stays in the worker) as a :class:`CheckRequest` and waits;
* the pool gathers the requests that arrive within :data:`WINDOW_S` of the first (or until every
  idle worker has one waiting), checks their programs, each once, in one :func:`check_batch` call per
  arch and ``-O`` level, and answers each request with its
  programs' results, in its order.  Rounds overlap: their checks run side by side in the pool's own
  processes.  Results it gave are kept (:data:`KEPT`): a program another worker asks again after its
  check is not compiled again.
* a result is exactly what the worker's own :func:`check_batch` would give (a batch's, with its
  ``sass_listing`` note): the kernels are compiled one by one by ptxas whatever else is in the module
  (``tests/backends/test_static_batch.py``).  A saved finding is checked again on its own, as before.
* nothing depends on the pool: a worker whose pool does not answer (gone, a refused connection, no
  answer within its wait: a third of the campaign's watchdog, at most 45 s) checks its batches
  itself from then on; a round that fails, or a check process that dies, costs its own requests only.

The GPU backend's static check runs beside its harness compile (``CheckedBackend.prepare``), which
takes longer: the pool's wait adds nothing there.  The pool writes its counters (:class:`PoolCounters`)
to ``STATE`` every two seconds.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ..backends.static import BatchResult as Result
from ..backends.static_pool import ADDRESS_ENV, ANSWER_TIMEOUT_S, KEY_ENV, WAIT_ENV, CheckRequest
from ..errors import clip
from ..ir import Program
from ..recent import Recent
from .service import ServiceCounters, ServiceHandle, receive, write_counters
from .supervised import die_with_parent

#: how long the pool gathers requests after the first one arrived (seconds).  Measured: 0.25 s made 9.9% more
#: GPU runs an hour than 0.5 s at the same CPU a run, four alternating pairs of 100 s campaigns on one H100
#: whose CPU had room (bench/results/throughput/ab/h100-window-0343c89/)
WINDOW_S = 0.25
#: a parallel campaign of at least this many local workers on a compiling backend starts the pool
#: unless told not to (``campaign --no-static-pool``).  Measured: 16 workers on one H200, 300 s each
#: way -- the static check's nvcc and nvdisasm 0.075 CPU-s a program run against 0.129, 114,612
#: programs run an hour against 107,136 (bench/results/throughput/h200-300s-30098f2*); 4 workers on 2
#: cores, a static campaign: +19% and +23% programs judged; 2 workers on 2 cores: 7% fewer (a core
#: idles while its worker waits for the other's batch), hence not below 4
AUTO_WORKERS = 4
#: results kept for programs asked again
KEPT = 20_000
STATE_EVERY_S = 2.0

Checker = Callable[[Sequence[Program], str, int], list[Result]]


@dataclass
class PoolCounters(ServiceCounters):
    """What the pool did (its ``static-pool.json``)."""

    schema: ClassVar[str] = "fuzzgpu.static_pool"
    requests: int = 0
    #: programs asked for, of them answered from the kept results or by another request of the same round
    programs: int = 0
    kept_answers: int = 0
    shared_answers: int = 0
    #: check_batch calls and the programs they checked
    checks: int = 0
    checked: int = 0
    #: how long a round gathers requests (``campaign --static-pool-window``)
    window_s: float = WINDOW_S


def plan(requests: Sequence[CheckRequest], kept: Recent[tuple[str, int, Program], Result],
         counters: PoolCounters) -> dict[tuple[str, int], list[Program]]:
    """The programs of ``requests`` to check, per (arch, opt): those not in ``kept``, each once."""
    todo: dict[tuple[str, int], dict[Program, None]] = {}
    for r in requests:
        counters.requests += 1
        counters.programs += len(r.programs)
        for p in r.programs:
            if (r.arch, r.opt, p) in kept:
                counters.kept_answers += 1
            elif p in todo.setdefault((r.arch, r.opt), {}):
                counters.shared_answers += 1
            else:
                todo[(r.arch, r.opt)][p] = None
    out = {key: list(group) for key, group in todo.items() if group}
    counters.checks += len(out)
    counters.checked += sum(len(g) for g in out.values())
    return out


def fill(requests: Sequence[CheckRequest], kept: Recent[tuple[str, int, Program], Result],
         fresh: dict[tuple[str, int, Program], Result]) -> list[list[Result]]:
    """Each request's results in its programs' order, from ``fresh`` (this round's checks; what they
    answered is kept) and ``kept``.  None: no answer (the worker checks that program itself)."""
    for key, res in fresh.items():
        if res is not None:
            kept.put(key, res)
    return [[fresh[k] if (k := (r.arch, r.opt, p)) in fresh else kept.get(k) for p in r.programs] for r in requests]


def answer(requests: Sequence[CheckRequest], kept: Recent[tuple[str, int, Program], Result], check: Checker,
           counters: PoolCounters | None = None) -> list[list[Result]]:
    """The results of ``requests``, each in its programs' order: the programs not in ``kept``,
    each once, checked in one ``check`` call per (arch, opt); what a call answered is kept."""
    todo = plan(requests, kept, counters if counters is not None else PoolCounters())
    fresh = {(arch, opt, p): res for (arch, opt), programs in todo.items()
             for p, res in zip(programs, check(programs, arch, opt))}
    return fill(requests, kept, fresh)


class Pool:
    """The pool's loops: the accept thread adds clients; the main thread gathers a round of
    requests and hands its checks to ``executor`` (the server's: a process pool, so that several
    rounds' nvcc calls and SASS analyses run side by side); a thread per round waits for them and
    answers its requests.  A client whose request is being answered is not waited for."""

    def __init__(self, listener: Any, counters: PoolCounters, window: float, check: Checker,
                 executor: Callable[[], Any]) -> None:
        self.listener = listener
        self.counters = counters
        self.window = window
        self.check = check
        #: makes the executor the checks run in (again, when one of its processes died: a broken pool)
        self.new_executor = executor
        self.executor = executor()
        self.clients: list[Any] = []
        self.kept: Recent[tuple[str, int, Program], Result] = Recent(KEPT)
        self._busy: set[int] = set()  # the clients whose request is being answered
        self._lock = threading.Lock()
        self._wake_r, self._wake_w = os.pipe()
        self._rounds = concurrent.futures.ThreadPoolExecutor(max_workers=64, thread_name_prefix="fuzzgpu-static-pool-round")

    def accept_forever(self) -> None:
        while True:
            try:
                c = self.listener.accept()
            except Exception:  # noqa: BLE001, S112 -- a client that failed the handshake: that one only
                continue
            with self._lock:
                self.clients.append(c)
                self.counters.clients += 1
            os.write(self._wake_w, b"x")

    def _idle(self, exclude: frozenset[int] = frozenset()) -> list[Any]:
        with self._lock:
            return [c for c in self.clients if id(c) not in self._busy and id(c) not in exclude]

    def _read(self, conns: list[Any], timeout: float, into: list[tuple[Any, CheckRequest]]) -> None:
        into.extend((c, m) for c, m in receive(conns, self._wake_r, timeout, self._gone) if isinstance(m, CheckRequest))

    def _gone(self, c: Any) -> None:  # the worker went away
        with self._lock:
            self.clients.remove(c)

    def round(self, timeout: float = 1.0) -> Any:
        """One round: wait up to ``timeout`` for a request, gather others for :attr:`window` seconds
        (or until every client has one waiting or being answered), start their checks; the future of
        the round's answers (None: no request came)."""
        got: list[tuple[Any, CheckRequest]] = []
        self._read(self._idle(), timeout, got)
        if not got:
            return None
        end = time.monotonic() + self.window
        while True:
            rest = self._idle(frozenset(id(c) for c, _ in got))
            left = end - time.monotonic()
            if not rest or left <= 0:
                break
            self._read(rest, left, got)
        requests = [r for _, r in got]
        with self._lock:
            self._busy |= {id(c) for c, _ in got}
            todo = plan(requests, self.kept, self.counters)
        try:
            checks = {key: self._submit(programs, *key) for key, programs in todo.items()}
        except BaseException:
            self._done(got)
            raise
        return self._rounds.submit(self._answer, got, todo, checks)

    def _submit(self, programs: list[Program], arch: str, opt: int) -> Any:
        """The future of one check; a check process that died (the OOM killer, say) breaks the
        executor for good: a new one takes its place."""
        try:
            return self.executor.submit(self.check, programs, arch, opt)
        except concurrent.futures.BrokenExecutor:
            self.executor = self.new_executor()
            return self.executor.submit(self.check, programs, arch, opt)

    def _done(self, got: list[tuple[Any, CheckRequest]]) -> None:
        """The round's clients may ask again."""
        with self._lock:
            self._busy -= {id(c) for c, _ in got}
        os.write(self._wake_w, b"x")

    def _answer(self, got: list[tuple[Any, CheckRequest]], todo: dict[tuple[str, int], list[Program]], checks: dict[Any, Any]) -> None:
        try:
            fresh: dict[tuple[str, int, Program], Result] = {}
            for (arch, opt), fut in checks.items():
                try:
                    res = fut.result()
                except Exception:  # noqa: BLE001 -- no answer for these programs: their workers check them
                    res = [None] * len(todo[(arch, opt)])
                fresh.update({(arch, opt, p): r for p, r in zip(todo[(arch, opt)], res)})
            with self._lock:
                results = fill([r for _, r in got], self.kept, fresh)
            for (c, _), res in zip(got, results):
                try:
                    c.send(res)
                except Exception:  # noqa: BLE001, S110 -- gone meanwhile (or unpicklable): that worker's wait runs out, it checks alone
                    pass
        finally:
            self._done(got)


def serve(address: str, key: bytes, state: str, ready: Any, window: float = WINDOW_S) -> None:
    """The pool process: its listener at ``address``, the loops; tells ``ready`` ``("ready",)``, or
    ``("fail", message)`` when it cannot listen there."""
    from multiprocessing.connection import Listener

    from ..backends.static import check_batch

    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the campaign stops it (SIGTERM)
    counters = PoolCounters(window_s=window)

    def checkers() -> Any:
        # the checks in processes of their own (the SASS analysis is Python: threads would share one
        # core), started as this process is (spawn: it has threads), each dying with it
        return concurrent.futures.ProcessPoolExecutor(max_workers=os.cpu_count() or 2, mp_context=mp.get_context("spawn"),
                                                      initializer=die_with_parent)

    try:
        listener = Listener(address, family="AF_UNIX", authkey=key)
    except OSError as e:  # a socket path too long for AF_UNIX (a deep TMPDIR), say: one line, not a traceback
        ready.send(("fail", f"its socket {address}: {e.strerror or e}"))
        ready.close()
        return
    pool = Pool(listener, counters, window, check_batch, checkers)
    stopping = threading.Event()

    def stop(*_: Any) -> None:  # only a flag here: the handler may interrupt the main thread inside submit's lock
        stopping.set()
        os.write(pool._wake_w, b"x")

    signal.signal(signal.SIGTERM, stop)
    threading.Thread(target=pool.accept_forever, daemon=True, name="fuzzgpu-static-pool-accept").start()
    ready.send(("ready",))
    ready.close()
    last = 0.0
    while not stopping.is_set():
        try:
            pool.round()
        except Exception as e:  # noqa: BLE001 -- one round's failure: its workers check alone, the pool goes on
            print(clip(f"fuzzgpu static-check pool: a round failed: {type(e).__name__}: {e}"), file=sys.stderr, flush=True)
        if time.monotonic() - last > STATE_EVERY_S:
            last = time.monotonic()
            write_counters(Path(state), counters)
    # the checks under way end first, so that their processes are reaped (their CPU counted); the
    # campaign kills this process if they take more than its ten seconds
    pool.executor.shutdown(wait=True, cancel_futures=True)
    write_counters(Path(state), counters)
    os._exit(0)


class PoolHandle(ServiceHandle):
    """A campaign's pool (:class:`~.service.ServiceHandle`: a fresh folder for its socket, a fresh key,
    restarted when it dies, stopped and its folder removed)."""

    socket_name = "pool.sock"
    process_name = "fuzzgpu-static-pool"

    def __init__(self, state: Path, window: float = WINDOW_S, start_timeout: float = 60.0, wait: float = ANSWER_TIMEOUT_S) -> None:
        super().__init__(start_timeout)
        self.state, self.window, self.wait = state, window, wait
        self._launch()

    def env(self) -> dict[str, str]:
        """What a worker's environment needs to use this pool."""
        return {ADDRESS_ENV: self.address, KEY_ENV: self.key.hex(), WAIT_ENV: f"{self.wait:g}"}

    def what(self) -> str:
        return "the static-check pool"

    def target(self, ready: Any) -> tuple[Any, tuple[Any, ...]]:
        self.state.parent.mkdir(parents=True, exist_ok=True)
        return serve, (self.address, self.key, str(self.state), ready, self.window)


__all__ = ["Pool", "PoolCounters", "PoolHandle", "answer", "fill", "plan", "serve"]
