"""The two ends of a shared GPU (``fuzzgpu campaign --gpus ... --gpu-context shared``, the default;
fuzzgpu.workers.gpu_runner runs the middle):

* :class:`RemoteCuda` -- a campaign worker's cuda backend without a CUDA context: it compiles the
  harness (nvcc, batches ahead: :class:`~fuzzgpu.backends.cuda.HarnessBuilder`), computes the watched
  outcomes' bitmap, and sends a :class:`RunRequest` to the GPU runner of its GPU; the answer is the
  histogram, the program's exception, or a fault (:class:`RunnerFault`: the program hung or faulted
  the runner's GPU process, which the runner replaced).
* :class:`RemoteSim` -- the same for the sim backend (the runner tested on the CPU);
* :class:`GpuSide` -- the backend of the runner's GPU process: the GPU's only CUDA context, which
  runs the requests one after the other (:meth:`CudaBackend.run_watched`).

One context per GPU instead of one per worker: the contexts of several processes time-slice the GPU
(bench/results/throughput/), a single context runs the programs back to back.

The cubin travels as a file (one per compiled batch: its harnesses share it) in the runner's folder;
the GPU process loads each module once.  A request whose file is gone (swept, :data:`CUBIN_TTL_S`)
is answered ``gone`` and sent again with the bytes.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .. import properties
from ..errors import EnvError
from ..ir import Program
from .base import Histogram, RunConfig
from .cuda import Compiled, HarnessBuilder
from .provenance import watch_bitmap

#: the environment variable that carries the runner's authentication key (hex) to the workers
KEY_ENV = "FUZZGPU_GPU_RUNNER_KEY"
#: the name a runner's GPU process gives fuzzgpu.workers.supervised for its backend
RUNNER_SIDE = "cuda-runner"
#: cubin files older than this are swept from the runner's folder (a request for one is answered
#: ``gone`` and sent again with the bytes)
CUBIN_TTL_S = 900.0
#: how long a worker waits for a runner that is gone to come back (the campaign restarts it)
RECONNECT_S = 60.0


@dataclass(frozen=True)
class RunRequest:
    """One program's run, as a worker sends it: the harness (its cubin by key and file, or the
    bytes themselves), the run configuration and the watched bins (``watch_bitmap``'s 64 words)."""

    program: str
    cubin_key: str
    cubin_path: str
    spec: Any  # codegen.HarnessSpec
    watched: bytes
    cubin: bytes | None = None


class RunnerFault(Exception):
    """The program hung or faulted the runner's GPU process (a ``hang``, ``crash``, ``gpu-fault`` or
    ``error``, as fuzzgpu.workers.supervised.ProgramFault); the runner has replaced it."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


class CubinGone(Exception):
    """The request's cubin file is gone and it carried no bytes."""


def cubin_key(cubin: bytes) -> str:
    return hashlib.sha256(cubin).hexdigest()[:32]


def cubin_dir(address: str) -> Path:
    """The folder of the cubin files of the runner listening at ``address`` (beside its socket)."""
    return Path(address).parent / "cubins"


def sweep_cubins(folder: Path, now: float, ttl: float = CUBIN_TTL_S) -> int:
    """Remove the cubin files older than ``ttl`` seconds; how many went."""
    gone = 0
    for f in folder.glob("*.cubin"):
        try:
            if now - f.stat().st_mtime > ttl:
                f.unlink()
                gone += 1
        except OSError:
            continue
    return gone


def _write_once(path: Path, data: bytes) -> None:
    if path.exists():
        os.utime(path)  # in use again: not swept yet
        return
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def connect(address: str, wait_s: float = RECONNECT_S) -> tuple[Any, tuple[Any, ...]]:
    """A connection to the runner at ``address`` (retried for ``wait_s`` seconds: a runner being
    restarted) and its hello, ``("hello", describe, identity)``."""
    from multiprocessing.connection import Client

    key = bytes.fromhex(os.environ.get(KEY_ENV, ""))
    end = time.monotonic() + wait_s
    while True:
        try:
            conn = Client(address, family="AF_UNIX", authkey=key)
            hello = conn.recv()
            break
        except (OSError, EOFError) as e:
            if time.monotonic() > end:
                raise EnvError(f"the GPU runner at {address} does not answer: {e}") from None
            time.sleep(0.5)
    if hello[0] != "hello":
        raise EnvError(f"the GPU runner at {address} answered {hello[0]!r}, not hello")
    return conn, hello


class RunnerClient:
    """A worker's connection to its runner: one request at a time, answered in order."""

    def __init__(self, address: str) -> None:
        self.address = address
        self._conn, hello = connect(address)
        self.describe: str = hello[1]
        self.identity: tuple[str, str, str] = tuple(hello[2])  # type: ignore[assignment]

    def ask(self, payload: Any, config: RunConfig, what: str) -> tuple[Any, ...]:
        """Send ``(payload, config)``, wait for the answer; a runner that went away (restarted by
        the campaign) is connected to again and asked once more."""
        for attempt in (0, 1):
            try:
                self._conn.send((payload, config))
                reply: tuple[Any, ...] = self._conn.recv()
                return reply
            except (EOFError, OSError):
                if attempt:
                    raise EnvError(f"the GPU runner at {self.address} went away twice while running {what}") from None
                self._conn, _ = connect(self.address)
        raise AssertionError("unreachable")

    def close(self) -> None:
        try:
            self._conn.close()
        except OSError:
            pass


class RemoteCuda(HarnessBuilder):
    """The cuda backend of a campaign worker whose GPU is run by a GPU runner process."""

    def __init__(self, address: str, fault: str | None = None) -> None:
        self.client = RunnerClient(address)
        self._describe = self.client.describe
        super().__init__(self.client.identity[1], fault)
        self._dir = cubin_dir(address)

    def describe(self) -> str:
        inj = f"; INJECTED FAULTS {','.join(f'{k}:{v:g}' for k, v in self.faults.items())}" if self.faults else ""
        return f"{self._describe}{inj}; run by the GPU's runner process (one CUDA context for the GPU's workers)"

    def request(self, program: Program, advice: properties.RunAdvice | None) -> tuple[RunRequest, Compiled]:
        """The request for ``program``'s run (its harness compiled or prepared here), its cubin's file written."""
        c = self.harness(program)
        key = cubin_key(c.cubin)
        path = self._dir / f"{key}.cubin"
        self._dir.mkdir(parents=True, exist_ok=True)
        _write_once(path, c.cubin)
        bits = watch_bitmap(c.spec, properties.forbidden_watch(program, advice))
        return RunRequest(program.name, key, str(path), c.spec, bits.tobytes()), c

    def run(self, program: Program, config: RunConfig | None = None, advice: properties.RunAdvice | None = None) -> Histogram:
        config = config or RunConfig()
        req, c = self.request(program, advice)
        reply = self.client.ask(req, config, program.name)
        if reply[0] == "gone":
            reply = self.client.ask(replace(req, cubin=c.cubin), config, program.name)
        return self.with_ran_sass(program, c, answer(reply))

    def close(self) -> None:
        self.client.close()


class RemoteSim:
    """The sim backend of a campaign worker whose runs go to a runner (testing the runner on the
    CPU: the runner's process runs :class:`~fuzzgpu.backends.sim.SimBackend`, with its faults)."""

    name = "sim"
    deterministic = False

    def __init__(self, address: str) -> None:
        self.client = RunnerClient(address)

    def describe(self) -> str:
        return f"{self.client.describe}; run by a runner process"

    def identity(self) -> tuple[str, str, str]:
        return self.client.identity

    def run(self, program: Program, config: RunConfig | None = None) -> Histogram:
        return answer(self.client.ask(program, config or RunConfig(), program.name))

    def close(self) -> None:
        self.client.close()


def answer(reply: tuple[Any, ...]) -> Histogram:
    """The histogram of a runner's reply, or what it raises: the program's exception (``exc``), a
    :class:`RunnerFault` (``fault``: kind, detail)."""
    if reply[0] == "ok":
        h: Histogram = reply[1]
        return h
    if reply[0] == "exc":
        raise reply[1]
    if reply[0] == "fault":
        raise RunnerFault(reply[1], reply[2])
    raise EnvError(f"the GPU runner answered {reply[0]!r}")


class GpuSide:
    """The backend of the runner's GPU process: runs :class:`RunRequest` s (as the ``program`` of the
    supervised worker protocol) in the GPU's one CUDA context."""

    name = RUNNER_SIDE

    def __init__(self) -> None:
        from .cuda import CudaBackend

        self.cuda = CudaBackend()
        self.arch = self.cuda.arch
        self._cubins: dict[str, bytes] = {}  # key -> bytes, the modules the context has seen (LRU)

    def describe(self) -> str:
        return self.cuda.describe()

    def identity(self) -> tuple[str, str, str]:
        return self.cuda.identity()

    def cubin(self, req: RunRequest) -> bytes:
        from .cuda import MAX_MODULES

        data = self._cubins.pop(req.cubin_key, None) or req.cubin
        if data is None:
            try:
                data = Path(req.cubin_path).read_bytes()
            except OSError:
                raise CubinGone(req.cubin_key) from None
        while len(self._cubins) >= MAX_MODULES:
            del self._cubins[next(iter(self._cubins))]
        self._cubins[req.cubin_key] = data
        return data

    def run(self, req: RunRequest, config: RunConfig | None = None) -> Histogram:
        import dataclasses

        import numpy as np

        t0 = time.perf_counter()
        c = Compiled(req.program, self.cubin(req), req.spec)
        h = self.cuda.run_watched(c, config or RunConfig(), np.frombuffer(req.watched, dtype=np.uint64))
        # runner_s: this process's time on the request (the runner's counters: where its time goes)
        return dataclasses.replace(h, meta=(*h.meta, ("driver", str(self.cuda.drv.get_driver_version())),
                                            ("runner_s", time.perf_counter() - t0)))


__all__ = ["CUBIN_TTL_S", "KEY_ENV", "RUNNER_SIDE", "CubinGone", "GpuSide", "RemoteCuda", "RemoteSim", "RunRequest", "RunnerClient", "RunnerFault",
           "answer", "connect", "cubin_dir", "cubin_key", "sweep_cubins"]
