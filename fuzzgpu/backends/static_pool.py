"""The workers' end of a campaign's static-check pool (:mod:`fuzzgpu.workers.static_pool` has the
pool): a worker's :class:`~fuzzgpu.backends.static.StaticBackend` sends each batch it would check
with :func:`~fuzzgpu.backends.static.check_batch` to the pool, which checks it together with the
other workers' batches, and gets the same results back.  When the pool does not answer, the worker
checks its batches itself from then on."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..ir import Program
from .static import BatchResult, StaticBackend

#: the environment a worker finds its pool in: the socket's path, the key (hex), and how long it
#: waits for an answer (seconds)
ADDRESS_ENV = "FUZZGPU_STATIC_POOL"
KEY_ENV = "FUZZGPU_STATIC_POOL_KEY"
WAIT_ENV = "FUZZGPU_STATIC_POOL_WAIT"
#: a worker's longest wait for the pool's answer before it checks itself: at most this, and a third of
#: the campaign's watchdog (a batch's prepare has the watchdog and a second a program; see
#: :func:`answer_timeout`)
ANSWER_TIMEOUT_S = 45.0


def answer_timeout(watchdog: float) -> float:
    """How long a worker waits for the pool under a campaign watchdog of ``watchdog`` seconds: its
    own check still fits in the supervisor's deadline for the batch after a wait that ran out."""
    return max(1.0, min(ANSWER_TIMEOUT_S, watchdog / 3))


@dataclass(frozen=True)
class CheckRequest:
    """A worker's batch: its programs' static kernels for ``arch`` at ``-O{opt}``."""

    arch: str
    opt: int
    programs: tuple[Program, ...]


class PoolClient:
    """A worker's end: :meth:`check` sends a batch and returns its results, or None when the pool
    did not answer -- then, and from then on, the worker checks its batches itself."""

    def __init__(self, address: str, key: bytes, timeout: float = ANSWER_TIMEOUT_S) -> None:
        self.address, self.key, self.timeout = address, key, timeout
        self._conn: Any = None
        self._lock = threading.Lock()
        self.broken = ""

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> PoolClient | None:
        env = os.environ if environ is None else environ
        address, key = env.get(ADDRESS_ENV), env.get(KEY_ENV)
        if not address or not key:
            return None
        try:
            return cls(address, bytes.fromhex(key), float(env.get(WAIT_ENV) or ANSWER_TIMEOUT_S))
        except ValueError:
            return None

    def check(self, programs: Sequence[Program], arch: str, opt: int) -> list[BatchResult] | None:
        with self._lock:  # one request at a time on the connection
            return self._check(programs, arch, opt)

    def _check(self, programs: Sequence[Program], arch: str, opt: int) -> list[BatchResult] | None:
        if self.broken:
            return None
        try:
            if self._conn is None:
                from multiprocessing.connection import Client

                self._conn = Client(self.address, family="AF_UNIX", authkey=self.key)
            self._conn.send(CheckRequest(arch, opt, tuple(programs)))
            if not self._conn.poll(self.timeout):
                raise TimeoutError(f"no answer within {self.timeout:g} s")
            res = self._conn.recv()
        except BaseException as e:  # noqa: BLE001 -- any failure: this worker checks alone from now on
            self.broken = f"{type(e).__name__}: {e}"
            self.close()  # a reply still on its way never reaches the next request
            if not isinstance(e, Exception):
                raise
            return None
        return list(res) if isinstance(res, list) and len(res) == len(programs) else None

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except OSError:
                pass


def attach_pool(backend: Any, environ: dict[str, str] | None = None) -> Any:
    """``backend``, its static check (its own, or a GPU backend's ``CheckedBackend.static``) handing
    its batches to the campaign's static-check pool when the environment names one."""
    static = backend if isinstance(backend, StaticBackend) else getattr(backend, "static", None)
    client = PoolClient.from_env(environ) if isinstance(static, StaticBackend) else None
    if client is not None:
        static.pool = client.check  # type: ignore[union-attr]
    return backend


__all__ = ["ADDRESS_ENV", "KEY_ENV", "WAIT_ENV", "CheckRequest", "PoolClient", "answer_timeout", "attach_pool"]
