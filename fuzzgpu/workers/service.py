"""A process a parallel campaign starts beside its workers and serves them through an authenticated
Unix socket: the GPU runner (:mod:`.gpu_runner`) and the static-check pool (:mod:`.static_pool`).

:class:`ServiceHandle` is what the two share: a fresh folder for the socket, a fresh key, the process
started (``spawn``: it may have threads and children) and its readiness awaited, restarted when it died,
stopped and its folder removed.  A subclass names its process and gives its ``serve`` function's
arguments (the last one is the pipe on which it says ``("ready", ...)`` or ``("fail", why)``)."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ..errors import EnvError


class ServiceHandle:
    """A campaign's service process: its socket ``address`` in a fresh folder, its ``key``."""

    #: the socket's file name, the process's name, and what the one-line error calls it
    socket_name = "service.sock"
    process_name = "fuzzgpu-service"

    def __init__(self, start_timeout: float) -> None:
        self.start_timeout = start_timeout
        self.folder = Path(tempfile.mkdtemp(prefix=f"{self.process_name}-"))
        self.address = str(self.folder / self.socket_name)
        self.key = secrets.token_bytes(32)
        self.restarts = 0
        self._ctx = mp.get_context("spawn")
        self._proc: Any = None

    def _launch(self) -> None:
        """Start it the first time (the folder goes when it cannot start)."""
        try:
            self._start()
        except BaseException:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise

    def what(self) -> str:
        """The service, as its one-line error names it."""
        return "the service"

    def target(self, ready: Any) -> tuple[Callable[..., None], tuple[Any, ...]]:
        """Its ``serve`` function and arguments, ``ready`` the pipe it answers on."""
        raise NotImplementedError

    def started(self, message: tuple[Any, ...]) -> None:
        """Its ``("ready", ...)`` message, for a subclass that keeps what it says."""

    def _start(self) -> None:
        Path(self.address).unlink(missing_ok=True)
        here, there = self._ctx.Pipe()
        serve, args = self.target(there)
        p = self._ctx.Process(target=serve, args=args, daemon=False, name=self.process_name)  # type: ignore[attr-defined]
        p.start()  # not a daemon: it has children (GPU processes, checkers)
        there.close()
        self._proc = p
        try:
            msg = here.recv() if here.poll(self.start_timeout) else ("fail", f"no answer within {self.start_timeout:.0f} s")
        except EOFError:
            msg = ("fail", f"it died while starting (exit {p.exitcode})")
        finally:
            here.close()
        if msg[0] != "ready":
            self.stop(remove=False)
            raise EnvError(f"{self.what()} did not start: {msg[1]}")
        self.started(msg)

    def alive(self) -> bool:
        return self._proc is not None and self._proc.is_alive()

    def ensure(self) -> bool:
        """Restart it if it died; whether it did."""
        if self.alive():
            return False
        self.restarts += 1
        self._start()
        return True

    def stop(self, remove: bool = True) -> None:
        p, self._proc = self._proc, None
        if p is not None and p.is_alive():
            p.terminate()
            p.join(10)
            if p.is_alive():
                p.kill()
                p.join(5)
        if remove:
            shutil.rmtree(self.folder, ignore_errors=True)


@dataclass
class ServiceCounters:
    """What a service did, written to its state file (:func:`write_counters`): a subclass adds its
    counters and names its ``schema`` and ``version``."""

    schema: ClassVar[str] = ""
    version: ClassVar[int] = 1
    #: the clients (workers) that connected; when it started (seconds since the epoch)
    clients: int = 0
    started: float = field(default_factory=time.time)

    def to_json(self) -> dict[str, Any]:
        return {"schema": self.schema, "version": self.version, **self.__dict__, "wall_s": round(time.time() - self.started, 3)}


def receive(conns: list[Any], wake: int, timeout: float, gone: Callable[[Any], None]) -> list[tuple[Any, Any]]:
    """The messages that arrived on the clients' connections ``conns`` (waiting up to ``timeout`` s for
    the first), each with its connection; the wake-up pipe ``wake`` (a new client, an answer sent) is
    drained; a connection whose client went away is handed to ``gone``."""
    from multiprocessing.connection import wait

    out: list[tuple[Any, Any]] = []
    ready: list[Any] = wait([*conns, wake], timeout)
    for c in ready:
        if isinstance(c, int):
            os.read(wake, 4096)
            continue
        try:
            out.append((c, c.recv()))
        except (EOFError, OSError):
            gone(c)
    return out


def write_counters(path: Path, counters: Any) -> None:
    """A service's counters (``counters.to_json()``) to its state file, atomically; a file that cannot
    be written is left as it was (the counters are a report, never a reason to stop)."""
    from ..files import write_atomic

    try:
        write_atomic(path, json.dumps(counters.to_json()))
    except OSError:
        pass


__all__ = ["ServiceCounters", "ServiceHandle", "receive", "write_counters"]
