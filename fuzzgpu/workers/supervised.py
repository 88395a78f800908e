"""Worker processes for campaigns (docs/reliability.md).

Two layers:

* :class:`SupervisedBackend` -- the backend (GPU, sim or static) runs in a child process that the
  campaign owns.  Each program gets a deadline from its expected run time (``watchdog`` seconds plus
  ten times ``instances / throughput``).  A run past its deadline is a *hang*: the child is killed
  (SIGKILL) and the program raised as :class:`ProgramFault`; a child that dies while running a
  program (SIGSEGV, an illegal address that takes the CUDA context down, ``os._exit``) is a *crash*,
  handled the same way.  The next program starts a fresh child.  The campaign quarantines the
  program (:func:`quarantine`) and goes on.

* :func:`fuzzgpu.parallel.run_parallel` -- ``fuzzgpu campaign --gpus all|N`` / ``--workers N``: one campaign worker
  process per GPU (pinned with ``CUDA_VISIBLE_DEVICES``) or N of them on the CPU backends, all on
  one corpus.  Each worker keeps its own state (``.fuzzgpu/workers/wN/state.json``, its own seed);
  the corpus entries (named by signature, created with link-then-unlink, so two workers saving the
  same finding at once leave one entry), the Hypothesis example database and the evidence cache are
  shared.  The parent reads the workers' state files (atomic writes) for one combined live display
  and one combined report, and restarts a worker process that dies.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import time
from dataclasses import dataclass
from multiprocessing.context import ForkContext, SpawnContext
from pathlib import Path
from typing import Any, Literal

from ..codegen.values import harness_domains
from ..errors import EnvError, UserError, clip

#: instances per second a backend is assumed to manage at worst, for the watchdog's deadline
THROUGHPUT = {"sim": 2e7, "static": 1.0, "cuda": 5e7, "auto": 5e7}
DEFAULT_WATCHDOG = 120.0
#: the longest deadline a program gets (a week): beyond that a wait means nothing, and the pipe's
#: poll() cannot wait longer than about 24 days (a larger timeout overflows it)
MAX_DEADLINE = 7 * 86400.0
#: a worker's deadline with a GPU runner, in program deadlines (SupervisedBackend.deadline_for)
RUNNER_WAITS = 4
#: how many times run_parallel restarts one worker that died or exited on an error
MAX_RESTARTS = 20


class ProgramFault(Exception):
    """A program hung or crashed its worker; the worker is gone (a fresh one starts next time)."""

    def __init__(self, kind: str, detail: str, seconds: float, deadline: float) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind  # "hang" | "crash" | "gpu-fault" | "error"
        self.detail = detail
        self.seconds = seconds
        self.deadline = deadline


@dataclass(frozen=True)
class BackendSpec:
    """How to build a backend in a worker process (the backend itself never crosses processes)."""

    name: str
    sim_fault: str | None = None
    arch: str = "sm_90"
    gpu_fault: str | None = None
    #: the GPU runner's address (``--gpu-context shared``): the cuda backend compiles here and runs
    #: there (fuzzgpu.workers.gpu_runner)
    runner: str | None = None
    #: programs the GPU harness cannot run are judged statically (the profile's ``[static] unrunnable``)
    judge_unrunnable: bool = False


@dataclass(frozen=True)
class Prepare:
    """The message that asks the worker to compile and check ``programs`` ahead (its backend's
    ``prepare``); answered ``("ok", None)``, whatever became of it (a program the batch could not
    prepare is compiled when it runs)."""

    programs: tuple[Any, ...]
    #: the oracle's value domains of the programs, where the worker has them (``codegen.values.harness_domains``):
    #: the backend's process adopts them instead of computing the oracle's traces again for the value tables
    domains: tuple[Any, ...] = ()


def die_with_parent() -> None:
    """Linux: this process gets SIGKILL when its parent dies (a campaign killed by SIGKILL leaves
    no worker behind, not even one stuck in a hung launch).  A no-op elsewhere."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _worker_main(conn: Any, spec: BackendSpec, parent_pid: int) -> None:
    die_with_parent()
    if os.getppid() != parent_pid:  # the parent died before the death signal was armed
        os._exit(0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the campaign decides when to stop
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    import faulthandler

    faulthandler.disable()  # a crash is reported by the parent, in one line
    from ..backends.remote import CubinGone, RunnerFault
    from ..model import values
    from ..model.event import Unsupported

    # what the campaign handles itself: bad input (a program the harness cannot run, a compile
    # error), the environment, a program the oracle does not cover (and, in a GPU runner, a cubin
    # file gone); anything else a backend raises is a bug in it or its harness, reported as the
    # program's fault `error`
    comes_back = (UserError, EnvError, Unsupported, CubinGone)
    try:
        backend, note = _make_backend(spec)
    except Exception as e:  # noqa: BLE001 -- reported to the parent as one line
        # bad usage stays bad usage (exit 2); anything else -- no PyCUDA, no device, a driver error --
        # is the environment's (exit 3), as in the parent
        conn.send(("fail", str(e) if isinstance(e, (UserError, EnvError)) else f"{type(e).__name__}: {e}",
                   "usage" if isinstance(e, UserError) else "env"))
        return
    inner = getattr(backend, "inner", backend)
    for b in (backend, inner):
        if hasattr(b, "isolated"):
            b.isolated = True
    ident = backend.identity() if hasattr(backend, "identity") else (backend.name, "unknown", "unknown")
    takes_advice = bool(getattr(backend, "takes_advice", False))
    conn.send(("ready", backend.name, backend.describe(), ident, bool(getattr(backend, "deterministic", False)), note,
               takes_advice))
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        if isinstance(msg, Prepare):
            values.adopt(msg.domains)
            try:
                getattr(backend, "prepare", lambda programs: None)(list(msg.programs))
            except Exception:  # noqa: BLE001, S110 -- ahead of time only: each program's run says what is wrong with it
                pass
            conn.send(("ok", None))
            continue
        program, config, advice = msg
        if advice is not None:  # a properties.RunAdvice
            values.adopt(advice.domains)
        try:
            h = backend.run(program, config, advice=advice) if advice is not None and takes_advice else backend.run(program, config)
            conn.send(("ok", h))
        except Exception as e:  # noqa: BLE001 -- every failure goes back to the campaign
            from ..backends.cuda import GpuFault  # (no PyCUDA import: the module loads without a GPU)

            if isinstance(e, GpuFault):  # the CUDA context is lost: report, and leave
                conn.send(("fault", "gpu-fault", str(e)))
                conn.close()
                os._exit(0)
            if isinstance(e, RunnerFault):  # the GPU runner lost its GPU process to this program; this one goes on
                conn.send(("rfault", e.kind, e.detail))
                continue
            if not isinstance(e, comes_back):  # a backend or harness bug: this program's fault
                conn.send(("err", _one_line(e)))
                continue
            try:
                conn.send(("exc", e))
            except Exception:  # noqa: BLE001 -- an exception that does not pickle
                conn.send(("err", _one_line(e)))


def _make_backend(spec: BackendSpec) -> tuple[Any, str]:
    """The backend ``spec`` names: a GPU runner's GPU process (:data:`RUNNER_SIDE`), a worker's cuda
    backend whose runs go to the runner at ``spec.runner``, or :func:`make_backend`'s."""
    from ..backends import make_backend
    from ..backends.remote import RUNNER_SIDE, GpuSide
    from ..backends.static_pool import attach_pool

    if spec.name == RUNNER_SIDE:
        return GpuSide(), "the GPU runner's CUDA context"
    backend, note = make_backend(spec.name, sim_fault=spec.sim_fault, arch=spec.arch, gpu_fault=spec.gpu_fault,
                                 runner=spec.runner, judge_unrunnable=spec.judge_unrunnable)
    return attach_pool(backend), note


def _one_line(e: BaseException) -> str:
    """``Type: message (at file:line)`` of an exception, where it was raised (the innermost frame),
    as one printable line (the message may hold text from a user's file)."""
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = f" (at {os.path.basename(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno})" if tb is not None else ""
    return clip(f"{type(e).__name__}: {e}{where}")


class SupervisedBackend:
    """The Backend protocol, with the real backend in a child process under a watchdog."""

    def __init__(self, spec: BackendSpec, watchdog: float = DEFAULT_WATCHDOG, start_timeout: float = 300.0,
                 start_method: Literal["spawn", "fork"] | None = None) -> None:
        self.spec = spec
        self.watchdog = float(watchdog)
        self.start_timeout = start_timeout
        # CUDA must not be initialised in a forked child of a process that touched it: spawn for the
        # GPU (and wherever the caller says so: a Ray actor's process has threads, fork is unsafe there)
        method = start_method or ("spawn" if spec.name in ("cuda", "auto") else "fork")
        self._ctx: SpawnContext | ForkContext = (
            mp.get_context("fork") if method == "fork" and "fork" in mp.get_all_start_methods() else mp.get_context("spawn"))
        self._proc: Any = None
        self._conn: Any = None
        self.restarts = 0
        self.faults = 0
        self._start()

    # -- the child -------------------------------------------------------------------------

    def _start(self) -> None:
        parent, child = self._ctx.Pipe()
        # typeshed types get_context(str) as BaseContext, which declares no Process (every start method's context has one)
        p = self._ctx.Process(target=_worker_main, args=(child, self.spec, os.getpid()), daemon=True, name="fuzzgpu-backend")  # type: ignore[attr-defined]
        p.start()
        child.close()
        self._proc, self._conn = p, parent
        if not parent.poll(self.start_timeout):
            self._kill()
            raise EnvError(f"backend {self.spec.name}: the worker process did not start within {self.start_timeout:.0f} s")
        try:
            msg = parent.recv()
        except EOFError:
            code = p.exitcode
            self._kill()
            raise EnvError(f"backend {self.spec.name}: the worker process died while starting (exit {code})") from None
        if msg[0] == "fail":
            self._kill()
            raise (UserError if msg[2:] == ("usage",) else EnvError)(msg[1])
        _, self.name, self._describe, ident, self.deterministic, self.note, self.takes_advice = msg
        backend_id, arch, toolchain = ident  # the child's Backend.identity()
        self._identity: tuple[str, str, str] = (str(backend_id), str(arch), str(toolchain))

    def _kill(self) -> None:
        p, self._proc = self._proc, None
        if self._conn is not None:
            try:
                self._conn.close()
            except OSError:
                pass
            self._conn = None
        if p is not None and p.is_alive():
            try:
                os.kill(p.pid, signal.SIGKILL)
            except OSError:
                pass
        if p is not None:
            p.join(10)

    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    # -- the Backend protocol --------------------------------------------------------------

    def describe(self) -> str:
        return self._describe

    def identity(self) -> tuple[str, str, str]:
        return self._identity

    def deadline_for(self, config: Any) -> float:
        """The program's deadline: the watchdog plus ten times its expected run time; with a GPU
        runner :data:`RUNNER_WAITS` times that, for the run may wait behind the other workers' and
        their deadlines (the runner's own watchdog answers a hang on the GPU)."""
        rate = THROUGHPUT.get(self.spec.name, 5e7)
        one = self.watchdog + 10.0 * getattr(config, "instances", 1) / rate
        return min(MAX_DEADLINE, one * (RUNNER_WAITS if self.spec.runner else 1))

    def prepare(self, programs: Any) -> None:
        """Compile and check ``programs`` ahead in the worker (:class:`Prepare`), under the watchdog
        (its seconds plus a second per program); a worker that hangs or dies meanwhile is replaced
        and nothing is raised: each program is then compiled when it runs, and a fault shows there,
        on its own program."""
        if self._proc is None or not self._proc.is_alive():
            if self._proc is not None:
                self._kill()
            self.restarts += 1
            self._start()
        programs = tuple(programs)
        # a backend that takes what the worker knows (the cuda backend) writes each harness's value
        # tables from the oracle's domains: computed here, beside the oracle's questions, not again there
        known = tuple(d for p in programs for d in harness_domains(p)) if self.takes_advice else ()
        try:
            self._conn.send(Prepare(programs, known))
            if self._conn.poll(self.watchdog + len(programs)):
                self._conn.recv()
                return
        except (EOFError, OSError):
            pass
        self._kill()

    def run(self, program: Any, config: Any, advice: Any = None) -> Any:
        """Run ``program`` in the worker; ``advice``: what the campaign already knows of it
        (``properties.RunAdvice``: picklable, small), for a backend that :attr:`takes_advice`."""
        if self._proc is None or not self._proc.is_alive():
            if self._proc is not None:
                self._kill()
            self.restarts += 1
            self._start()
        deadline = self.deadline_for(config)
        t0 = time.monotonic()
        try:
            self._conn.send((program, config, advice if self.takes_advice else None))
        except (BrokenPipeError, OSError):
            code = self._proc.exitcode if self._proc is not None else None
            self._kill()
            self.faults += 1
            raise ProgramFault("crash", f"the worker process was gone before the program was sent (exit {code})", 0.0, deadline) from None
        ready = self._conn.poll(deadline)
        took = time.monotonic() - t0
        if not ready:
            pid = self.pid()
            self._kill()
            self.faults += 1
            raise ProgramFault("hang", f"no answer within the {deadline:.1f} s deadline; worker {pid} killed", took, deadline)
        try:
            msg = self._conn.recv()
        except (EOFError, OSError):
            p = self._proc
            if p is not None:
                p.join(5)
            code = p.exitcode if p is not None else None
            self._kill()
            self.faults += 1
            what = f"killed by signal {signal.Signals(-code).name}" if isinstance(code, int) and code < 0 else f"exit status {code}"
            raise ProgramFault("crash", f"the worker process died while running the program ({what})", took, deadline) from None
        if msg[0] == "ok":
            return msg[1]
        if msg[0] == "exc":
            raise msg[1]
        if msg[0] == "rfault":  # the GPU runner's process hung or faulted on this program; it was replaced
            self.faults += 1
            raise ProgramFault(msg[1], f"{msg[2]}; the GPU runner's process was restarted with a fresh CUDA context", took, deadline)
        if msg[0] == "fault":  # the GPU faulted; the worker has exited (its context was lost)
            self._kill()
            self.faults += 1
            raise ProgramFault(msg[1], f"{msg[2]}; worker restarted with a fresh CUDA context", took, deadline)
        self.faults += 1
        raise ProgramFault("error", msg[1], took, deadline)

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.send(None)
            except OSError:
                pass
        p = self._proc
        if p is not None:
            p.join(2)
        self._kill()

    def __del__(self) -> None:  # pragma: no cover -- best effort
        try:
            self._kill()
        except Exception:  # noqa: BLE001, S110 -- at interpreter exit anything may be gone
            pass


# --------------------------------------------------------------------------------------------
# Quarantine
# --------------------------------------------------------------------------------------------

QUARANTINE = "quarantine"
#: programs the driver refused to load or launch (a CUDA error that leaves the context usable): kept
#: for a person to diagnose, not skipped later; at most :data:`MAX_REFUSED` records per corpus
REFUSED = "refused"
MAX_REFUSED = 200


def quarantine(corpus_root: Path, program: Any, fault: ProgramFault, backend: str, config: Any,
               folder: str = QUARANTINE, worker: str | None = None) -> Path:
    """Record a program that hung or crashed its worker: ``D/quarantine/<hash>.json`` (the fault,
    the program, the run configuration), ``<hash>.litmus`` and, when the static compile can make
    it, ``<hash>.sass``.  Atomic writes; a second fault on the same program keeps the first file.
    ``folder``: :data:`REFUSED` for a program the driver refused (:func:`keep_refused`); ``worker``: the
    campaign worker whose run it was (a parallel campaign's: :mod:`fuzzgpu.workers.stall` reads it, and
    ``ended``, when the fault was seen in wall-clock seconds -- ``time`` in UTC -- to tell a device that
    stopped answering every worker from a program that hangs)."""
    from ..corpus import litmus_text
    from ..evidence import program_hash
    from ..files import write_atomic
    from ..ir import program_to_json

    ended = round(time.time(), 3)  # before the SASS is compiled below; kept to the millisecond
    d = Path(corpus_root) / folder
    h = program_hash(program)[:16]
    path = d / f"{h}.json"
    if path.exists():
        return path
    write_atomic(d / f"{h}.litmus", litmus_text(program))
    sass = _sass_text(program, backend)
    if sass:
        write_atomic(d / f"{h}.sass", sass)
    rec = {"schema": "fuzzgpu.quarantine", "version": 1, "program_hash": program_hash(program),
           "fault": {"kind": fault.kind, "detail": fault.detail, "seconds": round(fault.seconds, 3), "deadline": round(fault.deadline, 3)},
           "backend": backend, "config": config.to_json() if hasattr(config, "to_json") else {},
           "shape": program.name, "program": program_to_json(program), "litmus": f"{h}.litmus",
           "sass": f"{h}.sass" if sass else None, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ended)),
           "ended": ended, "worker": worker}
    write_atomic(path, json.dumps(rec, indent=1, sort_keys=True) + "\n")
    return path


def _sass_text(program: Any, backend: str) -> str | None:
    """The program's SASS when the backend compiles (static, cuda) and nvcc is here, else None."""
    import shutil
    import tempfile

    if not backend.startswith(("static", "cuda", "auto")) or os.environ.get("FUZZGPU_QUARANTINE_SASS", "1") == "0":
        return None
    if not shutil.which("nvcc"):
        return None
    try:
        from .. import sass
        from ..backends.static import static_source

        src, _ = static_source(program)
        with tempfile.TemporaryDirectory(prefix="fuzzgpu-quarantine-") as d:
            cu = Path(d) / "program.cu"
            cu.write_text(src)
            _, cubin = sass.compile_cu(cu, "sm_90", Path(d))
            return sass.disassemble(cubin, ndf_first=True)
    except Exception:  # noqa: BLE001 -- best effort: the .litmus and the fault are the record
        return None


def keep_refused(corpus_root: Path, program: Any, error: str, backend: str, config: Any) -> Path | None:
    """Record a program whose run the driver refused (``CUDA driver error ... from cuLaunchKernelEx``:
    the context lives on, the program is counted not covered) in ``D/refused/``, as a quarantined
    one is (fault kind ``driver-refused``), so that the refusal can be reproduced and diagnosed;
    None when :data:`MAX_REFUSED` are kept already or the folder cannot be written."""
    d = Path(corpus_root) / REFUSED
    if d.is_dir() and sum(1 for _ in d.glob("*.json")) >= MAX_REFUSED:
        return None
    try:
        return quarantine(corpus_root, program, ProgramFault("driver-refused", error, 0.0, 0.0), backend, config, folder=REFUSED)
    except OSError:
        return None


def quarantined_hashes(corpus_root: Path) -> set[str]:
    d = Path(corpus_root) / QUARANTINE
    return {p.stem for p in d.glob("*.json")} if d.is_dir() else set()


__all__ = ["DEFAULT_WATCHDOG", "MAX_DEADLINE", "MAX_REFUSED", "MAX_RESTARTS", "REFUSED", "BackendSpec", "Prepare", "ProgramFault",
           "SupervisedBackend", "keep_refused", "quarantine", "quarantined_hashes"]
