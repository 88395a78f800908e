"""Worker processes for campaigns (docs/reliability.md).

Two layers:

* :class:`SupervisedBackend` -- the backend (GPU, sim or static) runs in a child process that the
  campaign owns.  Each program gets a deadline from its expected run time (``watchdog`` seconds plus
  ten times ``instances / throughput``).  A run past its deadline is a *hang*: the child is killed
  (SIGKILL) and the program raised as :class:`ProgramFault`; a child that dies while running a
  program (SIGSEGV, an illegal address that takes the CUDA context down, ``os._exit``) is a *crash*,
  handled the same way.  The next program starts a fresh child.  The campaign quarantines the
  program (:func:`quarantine`) and goes on.

* :func:`run_parallel` -- ``fuzzgpu campaign --gpus all|N`` / ``--workers N``: one campaign worker
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
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import UserError

#: instances per second a backend is assumed to manage at worst, for the watchdog's deadline
THROUGHPUT = {"sim": 2e7, "static": 1.0, "cuda": 5e7, "auto": 5e7}
DEFAULT_WATCHDOG = 120.0
#: the longest deadline a program gets (a week): beyond that a wait means nothing, and the pipe's
#: poll() cannot wait longer than about 24 days (a larger timeout overflows it)
MAX_DEADLINE = 7 * 86400.0
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
    from .campaign import make_backend

    try:
        backend, note = make_backend(spec.name, sim_fault=spec.sim_fault, arch=spec.arch, gpu_fault=spec.gpu_fault)
    except Exception as e:  # noqa: BLE001 -- reported to the parent as one line
        conn.send(("fail", f"{type(e).__name__}: {e}" if not isinstance(e, UserError) else str(e)))
        return
    inner = getattr(backend, "inner", backend)
    for b in (backend, inner):
        if hasattr(b, "isolated"):
            b.isolated = True
    ident = backend.identity() if hasattr(backend, "identity") else (backend.name, "unknown", "unknown")
    conn.send(("ready", backend.name, backend.describe(), ident, bool(getattr(backend, "deterministic", False)), note))
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        program, config = msg
        try:
            h = backend.run(program, config)
            conn.send(("ok", h))
        except Exception as e:  # noqa: BLE001 -- every failure goes back to the campaign
            from .backends.cuda import GpuFault  # (no PyCUDA import: the module loads without a GPU)

            if isinstance(e, GpuFault):  # the CUDA context is lost: report, and leave
                conn.send(("fault", "gpu-fault", str(e)))
                conn.close()
                os._exit(0)
            try:
                conn.send(("exc", e))
            except Exception:  # noqa: BLE001 -- an exception that does not pickle
                conn.send(("err", f"{type(e).__name__}: {e}"))


class SupervisedBackend:
    """The Backend protocol, with the real backend in a child process under a watchdog."""

    def __init__(self, spec: BackendSpec, watchdog: float = DEFAULT_WATCHDOG, start_timeout: float = 300.0,
                 start_method: str | None = None) -> None:
        self.spec = spec
        self.watchdog = float(watchdog)
        self.start_timeout = start_timeout
        # CUDA must not be initialised in a forked child of a process that touched it: spawn for the
        # GPU (and wherever the caller says so: a Ray actor's process has threads, fork is unsafe there)
        method = start_method or ("spawn" if spec.name in ("cuda", "auto") else "fork")
        if method not in mp.get_all_start_methods():
            method = "spawn"
        self._ctx = mp.get_context(method)
        self._proc: Any = None
        self._conn: Any = None
        self.restarts = 0
        self.faults = 0
        self._start()

    # -- the child -------------------------------------------------------------------------

    def _start(self) -> None:
        parent, child = self._ctx.Pipe()
        p = self._ctx.Process(target=_worker_main, args=(child, self.spec, os.getpid()), daemon=True, name="fuzzgpu-backend")
        p.start()
        child.close()
        self._proc, self._conn = p, parent
        if not parent.poll(self.start_timeout):
            self._kill()
            raise UserError(f"backend {self.spec.name}: the worker process did not start within {self.start_timeout:.0f} s")
        try:
            msg = parent.recv()
        except EOFError:
            code = p.exitcode
            self._kill()
            raise UserError(f"backend {self.spec.name}: the worker process died while starting (exit {code})") from None
        if msg[0] == "fail":
            self._kill()
            raise UserError(msg[1])
        _, self.name, self._describe, ident, self.deterministic, self.note = msg
        self._identity = tuple(ident)

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
        return self._identity  # type: ignore[return-value]

    def deadline_for(self, config: Any) -> float:
        rate = THROUGHPUT.get(self.spec.name, 5e7)
        return min(MAX_DEADLINE, self.watchdog + 10.0 * getattr(config, "instances", 1) / rate)

    def run(self, program: Any, config: Any) -> Any:
        if self._proc is None or not self._proc.is_alive():
            if self._proc is not None:
                self._kill()
            self.restarts += 1
            self._start()
        deadline = self.deadline_for(config)
        t0 = time.monotonic()
        try:
            self._conn.send((program, config))
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


def quarantine(corpus_root: Path, program: Any, fault: ProgramFault, backend: str, config: Any) -> Path:
    """Record a program that hung or crashed its worker: ``D/quarantine/<hash>.json`` (the fault,
    the program, the run configuration), ``<hash>.litmus`` and, when the static compile can make
    it, ``<hash>.sass``.  Atomic writes; a second fault on the same program keeps the first file."""
    from .corpus import litmus_text
    from .evidence import program_hash
    from .files import write_atomic
    from .ir import program_to_json

    d = Path(corpus_root) / QUARANTINE
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
           "sass": f"{h}.sass" if sass else None, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
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
        from . import sass
        from .backends.static import static_source

        src, _ = static_source(program)
        with tempfile.TemporaryDirectory(prefix="fuzzgpu-quarantine-") as d:
            cu = Path(d) / "program.cu"
            cu.write_text(src)
            _, cubin = sass.compile_cu(cu, "sm_90", Path(d))
            return sass.disassemble(cubin)
    except Exception:  # noqa: BLE001 -- best effort: the .litmus and the fault are the record
        return None


def quarantined_hashes(corpus_root: Path) -> set[str]:
    d = Path(corpus_root) / QUARANTINE
    return {p.stem for p in d.glob("*.json")} if d.is_dir() else set()


# --------------------------------------------------------------------------------------------
# Several campaign workers on one corpus
# --------------------------------------------------------------------------------------------


def gpu_list(spec: str) -> list[str]:
    """``--gpus all`` -> every visible GPU; ``--gpus N`` -> the first N; ``--gpus 0,2`` -> those."""
    from .pytest_plugin import visible_gpus

    gpus = visible_gpus()
    if spec == "all":
        if not gpus:
            raise UserError("--gpus all: no GPU visible (CUDA_VISIBLE_DEVICES / nvidia-smi -L)")
        return gpus
    if "," in spec:
        want = [g.strip() for g in spec.split(",") if g.strip()]
        bad = [g for g in want if gpus and g not in gpus]
        if bad:
            raise UserError(f"--gpus {spec}: GPU {bad[0]} is not visible (visible: {', '.join(gpus) or 'none'})")
        return want
    try:
        n = int(spec)
    except ValueError:
        raise UserError(f"--gpus {spec!r}: expected all, a count or a comma-separated list of GPU ids") from None
    if n < 1:
        raise UserError(f"--gpus {spec}: must be at least 1")
    if len(gpus) < n:
        raise UserError(f"--gpus {n}: only {len(gpus)} GPU(s) visible")
    return gpus[:n]


def worker_dir(corpus: Path, wid: str) -> Path:
    return Path(corpus) / ".fuzzgpu" / "workers" / wid


def worker_command(args: list[str], wid: str, seed: int) -> list[str]:
    return [sys.executable, "-m", "fuzzgpu", "campaign", *args, "--worker-id", wid, "--seed", str(seed), "--no-live"]


def open_parallel_corpus(corpus: Path, profile: str, backend: str, prop: str, seed: int | None,
                         known: str | None) -> tuple[Any, int]:
    """The corpus lock of a parallel campaign's parent and the campaign's base seed (worker i uses
    base + i), checked against and recorded in ``.fuzzgpu/parallel.json`` (a resumed campaign keeps
    its settings and seed).  Shared by the local workers and the Ray driver (fuzzgpu.ray_backend)."""
    from .campaign import lock_corpus

    if known is not None:
        from .corpus import load_known

        load_known(known)  # a bad list is one line here, not one per worker
    corpus.mkdir(parents=True, exist_ok=True)
    lock = lock_corpus(corpus / ".fuzzgpu")
    meta_path = corpus / ".fuzzgpu" / "parallel.json"
    try:
        meta = json.loads(meta_path.read_text()) if meta_path.exists() else None
    except (OSError, ValueError):
        meta = None
    if meta is not None and (meta.get("profile"), meta.get("backend"), meta.get("property")) != (profile, backend, prop):
        lock.close()
        raise UserError(f"{meta_path}: this corpus holds a parallel campaign with profile {meta.get('profile')}, backend "
                        f"{meta.get('backend')}, property {meta.get('property')}; use another --corpus folder")
    base_seed = seed if seed is not None else (meta or {}).get("seed")
    if base_seed is None:
        base_seed = int.from_bytes(os.urandom(4), "big") % (1 << 31)
    if meta is not None and seed is not None and seed != meta.get("seed"):
        lock.close()
        raise UserError(f"{meta_path}: the campaign in this corpus has seed {meta.get('seed')}; resume without --seed or with --seed {meta.get('seed')}")
    from .files import write_atomic

    write_atomic(meta_path, json.dumps({"schema": "fuzzgpu.parallel", "version": 1, "profile": profile, "backend": backend,
                                        "property": prop, "seed": base_seed}))
    return lock, base_seed


def status_line(elapsed: float, alive: int, n: int, st: dict[str, Any]) -> str:
    """The parent's live status line, from the combined state (:func:`fuzzgpu.campaign.combine_states`)."""
    from .campaign import classes_phrase

    return (f"[{elapsed:6.0f} s] workers {alive}/{n}  programs {st['programs']}  instances {st['instances']:.3g}  "
            f"{classes_phrase(st['classes'])} ({len(st['findings'])} entries)  quarantined {st['quarantined']}"
            + (f"  NOT SAVED (kept raw) {len(st['save_errors'])}" if st["save_errors"] else ""))


def run_parallel(*, profile: str, backend: str, seconds: float, corpus_dir: str, prop: str, seed: int | None,
                 sim_fault: str | None, workers: int, gpus: list[str] | None, watchdog: float,
                 max_findings: int | None, out: Any = None, status_every: float = 2.0, same_seed: bool = False,
                 per_gpu: int = 1, gpu_fault: str | None = None, known: str | None = None) -> dict[str, Any]:
    """Start ``per_gpu`` campaign workers per GPU (or ``workers`` on the CPU), aggregate, write the
    report.  Worker ``i`` of a GPU run is pinned to ``gpus[i % len(gpus)]``: several workers per
    GPU overlap one program's compile (CPU) with another's run (GPU)."""
    from .campaign import combine_states, write_combined_report

    out = out if out is not None else sys.stdout
    corpus = Path(corpus_dir)
    lock, base_seed = open_parallel_corpus(corpus, profile, backend, prop, seed, known)
    n = len(gpus) * max(1, per_gpu) if gpus else workers
    ids = [f"w{i}" for i in range(n)]
    common = ["--profile", profile, "--backend", backend, "--corpus", str(corpus), "--property", prop,
              "--watchdog", str(watchdog)]
    if sim_fault:
        common += ["--sim-fault", sim_fault]
    if gpu_fault:
        common += ["--gpu-fault", gpu_fault]
    if max_findings is not None:
        common += ["--max-findings", str(max_findings)]
    if known is not None:
        common += ["--known", str(known)]
    procs: dict[str, subprocess.Popen] = {}
    started: dict[str, float] = {}
    restarts = {w: 0 for w in ids}
    failed: dict[str, str] = {}
    t0 = time.monotonic()
    end = t0 + seconds
    stop = {"flag": False}

    progress: dict[str, int] = {}  # programs in the worker's state when it was (re)started

    def launch(i: int, wid: str) -> None:
        left = max(1.0, end - time.monotonic())
        env = dict(os.environ)
        if gpus:
            env["CUDA_VISIBLE_DEVICES"] = gpus[i % len(gpus)]
        d = worker_dir(corpus, wid)
        d.mkdir(parents=True, exist_ok=True)
        log = open(d / "log.txt", "a")  # noqa: SIM115 -- handed to the child
        cmd = worker_command([*common, "--time", f"{left:.1f}"], wid, base_seed + (0 if same_seed else i))
        procs[wid] = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
                                      preexec_fn=die_with_parent if sys.platform.startswith("linux") else None)  # noqa: PLW1509 -- only prctl
        log.close()
        started[wid] = time.time()
        progress[wid] = _programs(corpus, wid)

    def on_signal(signum, frame):
        stop["flag"] = True

    old = {}
    for s in (signal.SIGINT, signal.SIGTERM):
        try:
            old[s] = signal.signal(s, on_signal)
        except ValueError:
            pass
    where = (f"GPUs {', '.join(gpus)}" + (f", {per_gpu} workers each" if per_gpu > 1 else "")) if gpus else f"{n} worker processes"
    print(f"fuzzgpu campaign: profile {profile}, backend {backend}, property {prop}, seed {base_seed}, corpus {corpus}: "
          f"{n} workers ({where})", file=out, flush=True)
    reason = "time"
    last = 0.0
    try:
        for i, wid in enumerate(ids):
            launch(i, wid)
        while True:
            time.sleep(0.2)
            now = time.monotonic()
            if stop["flag"]:
                reason = "interrupted"
                for p in procs.values():
                    if p.poll() is None:
                        p.send_signal(signal.SIGINT)
                break
            alive = 0
            for i, wid in enumerate(ids):
                p = procs[wid]
                rc = p.poll()
                if rc is None:
                    alive += 1
                    continue
                if wid in failed:
                    continue
                what = after_exit(rc, _finished(corpus, wid, started[wid]), _programs(corpus, wid) != progress[wid],
                                  restarts[wid], end - now)
                last_line = _last_line(worker_dir(corpus, wid) / "log.txt")
                if what == "refused":
                    failed[wid] = last_line
                    print(f"worker {wid} failed: {failed[wid]}", file=out, flush=True)
                elif what == "restart":
                    restarts[wid] += 1
                    print(f"worker {wid} exited with status {rc} before its end ({last_line}); "
                          f"restarting it (restart {restarts[wid]} of at most {MAX_RESTARTS})", file=out, flush=True)
                    launch(i, wid)
                    alive += 1
                elif what == "give-up":
                    failed[wid] = f"exited with status {rc} after {MAX_RESTARTS} restarts: {last_line}"
                    print(f"worker {wid} given up: {failed[wid]}", file=out, flush=True)
            if now - last > status_every:
                last = now
                print(status_line(now - t0, alive, n, combine_states(_worker_states(corpus, ids))), file=out, flush=True)
            if alive == 0:
                if max_findings is not None:
                    reason = "found new finding(s) (--max-findings)"
                break
            if now > end + 30:
                for p in procs.values():
                    if p.poll() is None:
                        p.send_signal(signal.SIGINT)
        for p in procs.values():
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()
        lock.close()
    if failed and len(failed) == len(ids):
        first = min(failed)
        raise UserError(f"every worker failed; {first}: {failed[first]}")
    states = _worker_states(corpus, ids)
    report_dir = write_combined_report(corpus, states, reason, {"profile": profile, "backend": backend, "property": prop,
                                                                "seed": base_seed, "workers": ids, "gpus": gpus or [],
                                                                "workers_per_gpu": per_gpu if gpus else None,
                                                                "restarts": restarts, "known": known})
    return {"report_dir": report_dir, "reason": reason, "states": states, "combined": combine_states(states),
            "codes": {w: p.returncode for w, p in procs.items()}}


def after_exit(rc: int, finished: bool, progressed: bool, restarts: int, time_left: float) -> str:
    """What the parent does about a campaign worker that exited with status ``rc``:

    * ``done``: it finished its session (``finished``: it wrote its report), whatever its status
      (0 nothing new, 1 findings saved), or the time is up;
    * ``refused``: exit 2 before its first program (a bad profile or option, in one line in its
      log): a bad input does not get better by restarting;
    * ``restart``: it died (a signal, a crash) or exited on an error after it had started (a
      traceback, an error while saving, a full disk): resumed like a crashed one ...
    * ``give-up``: ... at most :data:`MAX_RESTARTS` times."""
    if finished or time_left <= 2:
        return "done"
    if rc == 2 and not progressed:
        return "refused"
    return "restart" if restarts < MAX_RESTARTS else "give-up"


def _programs(corpus: Path, wid: str) -> int:
    """Programs the worker's state counts (0 when it has none yet)."""
    try:
        v = json.loads((worker_dir(corpus, wid) / "state.json").read_text()).get("programs", 0)
    except (OSError, ValueError, AttributeError):
        return 0
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _finished(corpus: Path, wid: str, since: float) -> bool:
    """The worker ended its session normally: it wrote its report after it was (re)started."""
    try:
        return (worker_dir(corpus, wid) / "report" / "report.json").stat().st_mtime >= since - 1
    except OSError:
        return False


def _last_line(path: Path) -> str:
    try:
        lines = [ln for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "(no log)"
    return lines[-1][:300] if lines else "(empty log)"


def _worker_states(corpus: Path, ids: list[str]) -> dict[str, dict[str, Any]]:
    out = {}
    for wid in ids:
        p = worker_dir(corpus, wid) / "state.json"
        try:
            out[wid] = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
    return out


__all__ = ["MAX_RESTARTS", "BackendSpec", "ProgramFault", "after_exit", "SupervisedBackend", "gpu_list", "quarantine", "quarantined_hashes", "run_parallel"]
