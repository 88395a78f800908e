"""The GPU runner: one process per GPU that runs every campaign worker's programs on that GPU
(``fuzzgpu campaign --gpus ... --gpu-context shared``, the default).

Why: with one CUDA context per worker (``--gpu-context per-worker``) the contexts of the K workers
of a GPU time-slice it, and one harness run that takes ~7 ms of GPU alone takes 21-32 ms with 8-14
of them (bench/results/throughput/h200-runcost/).  Here the workers draw, judge, compile (nvcc) and
check the SASS; the runner only runs, one program after the other, in the GPU's one context.

Layout (``fuzzgpu.backends.remote`` has the two ends)::

    worker w0 .. wK (RemoteCuda) --unix socket--> runner (this module, no CUDA) --pipe--> GPU process (GpuSide)

* the **runner** (:func:`serve`) accepts the workers' connections (authenticated with a key the
  campaign passes in the environment, :data:`~fuzzgpu.backends.remote.KEY_ENV`), queues their
  :class:`~fuzzgpu.backends.remote.RunRequest` s in arrival order and answers each;
* the **GPU process** is a :class:`~fuzzgpu.workers.supervised.SupervisedBackend` child: a run past
  its deadline (a hang) or one that faults the GPU or kills the process is answered to its worker as
  a fault (``("fault", kind, detail)``, which the worker raises as ``ProgramFault``: the campaign
  quarantines the program, exactly as with a worker's own context), and the next request starts a
  fresh GPU process with a fresh context.  The other workers' requests wait in the queue meanwhile
  and run there: one program's fault loses no other program.
* the campaign (:func:`fuzzgpu.workers.local.run_parallel`) starts one runner per GPU before the
  workers (:class:`RunnerHandle`), restarts one that dies (its workers connect again), and stops it
  at the end.

The runner writes its counters to ``STATE`` every two seconds (:class:`RunnerCounters`: runs, faults,
GPU process restarts, the seconds it spent running and idle, the deepest queue).
"""

from __future__ import annotations

import os
import queue
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ..backends.remote import KEY_ENV, RUNNER_SIDE, CubinGone, cubin_dir, sweep_cubins
from ..errors import EnvError
from .service import ServiceCounters, ServiceHandle, receive, write_counters
from .supervised import BackendSpec, ProgramFault, SupervisedBackend, die_with_parent

#: how often the runner writes its counters and sweeps old cubin files (seconds)
STATE_EVERY_S = 2.0
SWEEP_EVERY_S = 60.0


@dataclass
class RunnerCounters(ServiceCounters):
    """What a runner did (written to its ``runner.json``)."""

    schema: ClassVar[str] = "fuzzgpu.gpu_runner"
    version: ClassVar[int] = 3
    #: its GPU processes (``--gpu-processes``)
    processes: int = 1
    #: requests answered; of them faults (a hang, a crash, a GPU fault, a backend bug), cubins gone
    runs: int = 0
    faults: int = 0
    gone: int = 0
    #: seconds, summed over the GPU processes: ``run`` from sending a request to a GPU process to its
    #: answer, of them ``gpu_process`` the process's own time on the run (host work included) and
    #: ``events`` on the GPU (CUDA events around the launches); ``idle`` waiting for a request
    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(("run", "gpu_process", "events", "idle"), 0.0))
    #: GPU processes restarted (after a fault); the deepest queue
    restarts: int = 0
    queue_max: int = 0

    def count(self, reply: tuple[Any, ...], took: float) -> None:
        self.runs += 1
        self.seconds["run"] += took
        self.faults += reply[0] == "fault"
        self.gone += reply[0] == "gone"
        if reply[0] == "ok":
            meta = dict(reply[1].meta)
            self.seconds["gpu_process"] += float(meta.get("runner_s", 0.0))
            self.seconds["events"] += float(meta.get("gpu_s", 0.0))


def reply_for(gpu: Any, payload: Any, config: Any) -> tuple[Any, ...]:
    """Run ``payload`` (a RunRequest; a Program on the sim) with ``config`` on ``gpu`` (a
    SupervisedBackend of a GPU process) and say what a worker is told: ``("ok", histogram)``,
    ``("exc", exception)`` (the program's: bad input, not covered), ``("gone",)`` (its cubin file
    was swept: send the bytes) or ``("fault", kind, detail)``."""
    try:
        return ("ok", gpu.run(payload, config))
    except ProgramFault as f:
        return ("fault", f.kind, f.detail)
    except CubinGone:
        return ("gone",)
    except Exception as e:  # noqa: BLE001 -- the program's exception, raised again in its worker
        return ("exc", e)


class Runner:
    """The runner's loops: the main thread reads the clients' requests into one queue
    (:meth:`gather`), one thread per GPU process takes the oldest and answers it (:meth:`slot`),
    the accept thread adds clients."""

    def __init__(self, gpus: list[Any], listener: Any, counters: RunnerCounters, hello: tuple[Any, ...]) -> None:
        self.gpus = gpus
        self.listener = listener
        self.counters = counters
        self.hello = hello
        self.clients: list[Any] = []
        self.queue: queue.Queue[tuple[Any, Any]] = queue.Queue()
        self._lock = threading.Lock()
        self._pending: set[Any] = set()  # the clients whose request is queued or being answered
        self._wake_r, self._wake_w = os.pipe()

    def accept_forever(self) -> None:
        """The accept thread: each authenticated client gets the hello and joins the loop."""
        while True:
            try:
                c = self.listener.accept()
            except Exception:  # noqa: BLE001, S112 -- a client that failed the handshake (AuthenticationError, EOF): that one only
                continue
            try:
                c.send(self.hello)
            except OSError:
                continue
            with self._lock:
                self.clients.append(c)
                self.counters.clients += 1
            os.write(self._wake_w, b"x")

    def gather(self, timeout: float) -> None:
        """Read the requests that arrived (waiting up to ``timeout`` s for one) into the queue.  A
        client has one request at a time: one that is being answered is not read meanwhile."""
        with self._lock:
            conns = [c for c in self.clients if c not in self._pending]
        # the wake-up pipe: the accept thread's, or a slot's answer sent
        for c, msg in receive(conns, self._wake_r, timeout, self._gone):
            with self._lock:
                self._pending.add(c)
            self.queue.put((c, msg))
        self.counters.queue_max = max(self.counters.queue_max, self.queue.qsize())

    def _gone(self, c: Any) -> None:  # the worker went away
        with self._lock:
            self.clients.remove(c)

    def slot(self, spec: BackendSpec, watchdog: float, started: queue.Queue[Any]) -> None:
        """A GPU process's thread: start it (``started`` gets it, or the exception), then answer
        the oldest request, for ever."""
        try:
            gpu = SupervisedBackend(spec, watchdog, start_method="spawn")  # this process has threads: no fork
        except Exception as e:  # noqa: BLE001 -- handed to serve, which says it in one line
            started.put(e)
            return
        started.put(gpu)
        while True:
            t0 = time.monotonic()
            c, (payload, config) = self.queue.get()
            t1 = time.monotonic()
            reply = reply_for(gpu, payload, config)
            took = time.monotonic() - t1
            with self._lock:
                self.counters.seconds["idle"] += t1 - t0
                self.counters.count(reply, took)
                self.counters.restarts = sum(g.restarts for g in self.gpus)
            try:
                c.send(reply)
            except (OSError, ValueError):  # gone meanwhile, or an answer that does not pickle
                try:
                    c.send(("exc", EnvError(f"the GPU runner could not send {type(reply[-1]).__name__} back")))
                except (OSError, ValueError):
                    pass
            with self._lock:
                self._pending.discard(c)
            os.write(self._wake_w, b"x")  # its client may ask again


def serve(address: str, key: bytes, gpu_id: str | None, spec: BackendSpec, watchdog: float, state: str, ready: Any,
          processes: int = 1) -> None:
    """The runner process: ``processes`` GPU processes (supervised children running ``spec``'s
    backend: :data:`RUNNER_SIDE`, or the sim when the runner is tested on the CPU), the listener at
    ``address``, the loops.  Tells ``ready`` ``("ready", describe)`` or ``("fail", message)``."""
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the campaign stops it (SIGTERM)
    if gpu_id is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = gpu_id
    from multiprocessing.connection import Listener

    counters = RunnerCounters(processes=processes)
    runner = Runner([], None, counters, ())
    # each GPU process is started (and restarted) by its slot's thread, which lives as long as this
    # process: a child's death signal (die_with_parent) fires when the thread that started it ends
    started: queue.Queue[Any] = queue.Queue()
    for i in range(processes):
        threading.Thread(target=runner.slot, args=(spec, watchdog, started), daemon=True, name=f"fuzzgpu-runner-gpu{i}").start()
    for _ in range(processes):  # side by side: the campaign's time runs
        got = started.get()
        if isinstance(got, Exception):  # no GPU, no PyCUDA: the campaign says so in one line
            ready.send(("fail", f"{type(got).__name__}: {got}"))
            return
        runner.gpus.append(got)
    gpus = runner.gpus
    runner.listener = Listener(address, family="AF_UNIX", authkey=key)
    runner.hello = ("hello", gpus[0].describe(), gpus[0].identity())

    def stop(*_: Any) -> None:  # the campaign's end: the last counters, then out (the GPU processes die with this one)
        write_counters(Path(state), counters)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    threading.Thread(target=runner.accept_forever, daemon=True, name="fuzzgpu-runner-accept").start()
    ready.send(("ready", gpus[0].describe()))
    ready.close()
    cubins = cubin_dir(address)
    last_state = last_sweep = 0.0
    while True:
        runner.gather(1.0)
        now = time.monotonic()
        if now - last_state > STATE_EVERY_S:
            last_state = now
            with runner._lock:
                write_counters(Path(state), counters)
        if now - last_sweep > SWEEP_EVERY_S:
            last_sweep = now
            sweep_cubins(cubins, time.time())


class RunnerHandle(ServiceHandle):
    """A campaign's runner for one GPU (:class:`~.service.ServiceHandle`: a fresh folder for its socket
    and cubin files, a fresh key, restarted when it dies, stopped and its folder removed)."""

    socket_name = "runner.sock"
    process_name = "fuzzgpu-gpu-runner"

    def __init__(self, gpu_id: str | None, watchdog: float, state: Path, start_timeout: float = 300.0,
                 spec: BackendSpec = BackendSpec(RUNNER_SIDE), processes: int = 1) -> None:
        super().__init__(start_timeout)
        self.gpu_id, self.spec, self.processes = gpu_id, spec, processes
        self.watchdog, self.state = watchdog, state
        self.describe = ""
        self._launch()

    def env(self) -> dict[str, str]:
        """What a worker's environment needs to talk to this runner."""
        return {KEY_ENV: self.key.hex()}

    def what(self) -> str:
        return f"the GPU runner of GPU {self.gpu_id}"

    def target(self, ready: Any) -> tuple[Any, tuple[Any, ...]]:
        self.state.parent.mkdir(parents=True, exist_ok=True)
        return serve, (self.address, self.key, self.gpu_id, self.spec, self.watchdog, str(self.state), ready, self.processes)

    def started(self, message: tuple[Any, ...]) -> None:
        self.describe = message[1]


__all__ = ["RunnerCounters", "RunnerHandle", "Runner", "reply_for", "serve"]
