"""Campaigns on a Ray cluster: ``fuzzgpu campaign ... --ray auto|ADDRESS`` (docs/ray.md).

The same campaign worker as ``--gpus`` / ``--workers`` (:class:`fuzzgpu.campaign.Campaign` over a
:class:`fuzzgpu.workers.SupervisedBackend`), over another transport:

* one Ray **actor** per GPU (``num_gpus=1``, or ``1/K`` with ``--workers-per-gpu K``: Ray pins the
  actor with ``CUDA_VISIBLE_DEVICES``) or per CPU worker (``num_cpus=1``, sim and static).  An actor
  runs the campaign loop in a thread on a *scratch corpus* on its own node, with its own seed (base +
  i); its backend's child process keeps the CUDA context and the compiled-kernel cache warm for the
  whole session.
* the **driver** (the ``fuzzgpu campaign`` process) owns the corpus on its disk.  No file system is
  shared: an actor starts from a snapshot the driver sends (the entries, the class records, the
  quarantine, the known-findings list, the Hypothesis example database, the worker's own state), and
  every poll returns the files its campaign wrote since the last one.  The driver saves each entry
  with :meth:`fuzzgpu.corpus.Corpus.add` (so class deduplication, known-list matching and variant
  counting are the local engine's), merges the class records, keeps the quarantine, the raw findings
  and the Hypothesis database, and sends every new entry and quarantine record to the other actors,
  which skip them from their next Hypothesis run on.  The live status and the combined report are the
  local parallel campaign's, from the workers' states.
* an actor that dies (its node lost, its process killed) is restarted by Ray (``max_restarts``) on any
  free resource and resumes from the driver's copy of its state; the program it had in flight at its
  last poll is quarantined, as a program that crashes a local worker is.

Ray is imported only here, and only when ``--ray`` is given (``pip install 'fuzzgpu[ray]'``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import EnvError, UserError
from .ray_sync import Coordinator, TreeWatch, safe_rel, synced, write_files

INSTALL_HINT = "pip install 'fuzzgpu[ray]' (or pip install ray)"
#: seconds between two polls of one actor (each poll carries the files written since the last)
POLL_EVERY = 1.0
#: an actor that has not answered a poll (a quick call) for this long is taken for lost: Ray may
#: hold a call to an actor on a dead node until it can place the actor again, and that may be never
POLL_TIMEOUT = 30.0
#: the longest line kept from an actor's output
MAX_LOG_LINES = 2000


def import_ray() -> Any:
    """Ray, or one line saying how to install it (exit 3: the environment lacks it)."""
    try:
        import ray
    except ImportError:
        raise EnvError(f"--ray: Ray is not installed; install it with {INSTALL_HINT}") from None
    return ray


# --------------------------------------------------------------------------------------------
# The actor: the campaign worker on a node
# --------------------------------------------------------------------------------------------


class _Lines:
    """A text stream that keeps lines (the campaign's screen output, sent with each poll)."""

    def __init__(self) -> None:
        self.buf = ""
        self.lines: list[str] = []
        self.lock = threading.Lock()

    def write(self, s: str) -> int:
        with self.lock:
            self.buf += s
            *done, self.buf = self.buf.split("\n")
            self.lines += done
            del self.lines[:-MAX_LOG_LINES]
        return len(s)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def drain(self) -> list[str]:
        with self.lock:
            out, self.lines = self.lines, []
        return out


def _in_flight_backend(spec: Any, watchdog: float) -> Any:
    """A :class:`SupervisedBackend` (spawned child: a Ray worker process has threads) that says
    which program it is running, for the driver to quarantine when the whole actor dies."""
    from .supervised import SupervisedBackend

    class InFlightBackend(SupervisedBackend):
        in_flight: tuple[Any, Any, float] | None = None

        def run(self, program: Any, config: Any, advice: Any = None) -> Any:
            self.in_flight = (program, config, time.time())
            try:
                return super().run(program, config, advice)
            finally:
                self.in_flight = None

    return InFlightBackend(spec, watchdog, start_method="spawn")


class CampaignActor:
    """One campaign worker (wrapped by ``ray.remote`` in :func:`run_ray`).  Its methods are quick:
    the campaign runs in a thread, the driver polls."""

    def __init__(self, wid: str) -> None:
        self.wid = wid
        self.thread: threading.Thread | None = None
        self.campaign: Any = None
        self.backend: Any = None
        self.scratch: Path | None = None
        self.root: Path | None = None
        self.watch: TreeWatch | None = None
        self.out = _Lines()
        self.error: tuple[str, bool] | None = None  # (one line, a UserError)
        self.reason: str | None = None

    def start(self, job: dict[str, Any], files: dict[str, bytes]) -> dict[str, Any]:
        """Start (or, after its campaign ended on an error, restart) the campaign from the driver's
        snapshot ``files``; idempotent while one runs."""
        if self.thread is not None and self.thread.is_alive():
            return self._info()
        from ..campaign import Campaign, load_profile
        from .supervised import BackendSpec

        if self.scratch is None:
            self.scratch = Path(tempfile.mkdtemp(prefix=f"fuzzgpu-ray-{self.wid}-"))
        self.root = self.scratch / "corpus"
        self.root.mkdir(exist_ok=True)
        write_files(self.root, files)
        self.watch = TreeWatch(self.root)
        self.watch.changes()  # what the driver sent is not sent back
        prof_path = self.scratch / "profiles" / f"{job['profile_name']}.toml"
        prof_path.parent.mkdir(exist_ok=True)
        prof_path.write_bytes(job["profile_text"])
        self.error, self.reason = None, None
        try:
            prof = load_profile(str(prof_path))
            b = _in_flight_backend(BackendSpec(job["backend"], job["sim_fault"], prof.static_arch, job["gpu_fault"],
                                                         judge_unrunnable=prof.static_unrunnable), job["watchdog"])
        except UserError as e:
            return {"error": str(e), "user_error": True}
        note = b.note + f"; backend in a supervised worker process (watchdog {b.watchdog:g} s + expected run time); Ray actor {self.wid}"
        try:
            c = Campaign(prof, b, self.root, job["property"], job["seed"], note, self.out, False, worker_id=self.wid)
        except BaseException as e:
            b.close()
            if isinstance(e, UserError):
                return {"error": str(e), "user_error": True}
            raise
        c.close_backend = True  # type: ignore[attr-defined]  # (as run_campaign sets it)
        c.max_findings = job["max_findings"]
        self.campaign, self.backend = c, b
        self.thread = threading.Thread(target=self._run, args=(c, float(job["seconds"])), name=f"fuzzgpu-{self.wid}", daemon=True)
        self.thread.start()
        return self._info()

    def _run(self, c: Any, seconds: float) -> None:
        try:
            self.reason = c.run(seconds).reason
        except BaseException as e:  # noqa: BLE001 -- reported to the driver, which decides
            self.error = (f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:400], isinstance(e, UserError))

    def _info(self) -> dict[str, Any]:
        import ray

        ctx = ray.get_runtime_context()
        return {"wid": self.wid, "pid": os.getpid(), "node_id": ctx.get_node_id(), "node_ip": ray.util.get_node_ip_address(),
                "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"), "gpu_ids": [str(g) for g in ray.get_gpu_ids()],
                "backend": self.backend.describe() if self.backend is not None else None, "scratch": str(self.scratch)}

    def poll(self, push: dict[str, bytes]) -> dict[str, Any]:
        """Take the driver's new shared files; return what the campaign wrote since the last poll,
        its screen output, the program in flight and whether it ended."""
        if self.thread is None or self.watch is None or self.root is None:
            return {"lost": True}  # a restarted actor: its campaign must be started again
        write_files(self.root, push, self.watch, keep=True)
        done = not self.thread.is_alive()  # before the scan: the last files are in this answer
        changed, removed = self.watch.changes()
        fl = getattr(self.backend, "in_flight", None)
        in_flight = None
        if fl is not None:
            program, config, since = fl
            in_flight = {"program": program, "config": config, "seconds": time.time() - since,
                         "deadline": self.backend.deadline_for(config), "backend": self.backend.describe()}
        return {"changed": changed, "removed": removed, "lines": self.out.drain(), "in_flight": in_flight, "done": done,
                "reason": self.reason, "error": self.error}

    def stop(self) -> bool:
        if self.campaign is not None:
            self.campaign.stop_requested = True
        return True

    def close(self) -> bool:
        if self.thread is not None and self.thread.is_alive() and self.campaign is not None:
            self.campaign.stop_requested = True
            self.thread.join(30)
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
        return True


# --------------------------------------------------------------------------------------------
# The driver's loop
# --------------------------------------------------------------------------------------------


@dataclass
class _Slot:
    wid: str
    index: int
    actor: Any
    ref: Any = None  # the call in flight
    call: str = ""  # "start" | "poll"
    cursor: int = 0  # how many of the coordinator's shared files the actor has
    next_poll: float = 0.0
    restarts: int = 0
    progress: int = 0  # programs in its state when it was (re)started
    started: bool = False
    in_flight: dict[str, Any] | None = None
    info: dict[str, Any] = field(default_factory=dict)
    ended: str | None = None  # why it ended: "done" | "failed: ..." | "given up: ..."
    stopping: bool = False
    since: float = 0.0  # when the call in flight was made
    waiting: bool = False  # said that Ray has not placed it yet
    unreachable: float = 0.0  # since when its polls fail with "actor unavailable" (0: they do not)


def cluster_gpus(ray: Any) -> int:
    return int(ray.cluster_resources().get("GPU", 0))


def connect(ray: Any, address: str) -> None:
    """Connect to the cluster, shipping this fuzzgpu package to it (the nodes run the driver's code;
    they need fuzzgpu's dependencies, not fuzzgpu)."""
    pkg = Path(__file__).resolve().parent
    env = {"py_modules": [str(pkg)], "excludes": ["__pycache__", "*.pyc"]}
    if os.environ.get("FUZZGPU_RAY_SHIP", "1") == "0":  # fuzzgpu installed on every node: use that
        env = {}
    try:
        ray.init(address=address, runtime_env=env, logging_level="ERROR", log_to_driver=False, configure_logging=False)
    except Exception as e:  # noqa: BLE001 -- ConnectionError, a bad address, a version mismatch: all mean 'no cluster'
        why = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise EnvError(f"--ray {address}: cannot connect to a Ray cluster ({why[:200]}); start one with `ray start --head` (docs/ray.md)") from None


#: an actor not placed by Ray this long after its start call is said to be waiting for a resource
PLACE_WAIT = 30.0
#: seconds past the end: every actor still running is asked to stop
STOP_AFTER = 30.0
#: seconds past the end: an actor Ray has not placed again is reported as not restarted
UNPLACED_AFTER = 5.0
#: seconds past the end: an actor still running is no longer waited for
FINISH_WITHIN = 300.0
#: an actor lost this close to the end is not restarted
NEAR_END = 2.0
#: seconds the driver waits for the actors to remove their scratch folders
CLOSE_WAIT = 40.0


@dataclass(frozen=True)
class _Job:
    """What every actor's campaign is started with (the campaign's options, the files it reads)."""

    profile_name: str
    profile_text: bytes
    backend: str
    sim_fault: str | None
    gpu_fault: str | None
    watchdog: float
    prop: str
    max_findings: int | None
    base_seed: int
    same_seed: bool
    known_text: bytes | None

    def for_actor(self, index: int, seconds: float) -> dict[str, Any]:
        """The start call's job for actor ``index``: its own seed (base + index, unless the same for all)."""
        return {"profile_name": self.profile_name, "profile_text": self.profile_text, "backend": self.backend,
                "sim_fault": self.sim_fault, "gpu_fault": self.gpu_fault, "watchdog": self.watchdog, "property": self.prop,
                "max_findings": self.max_findings, "seed": self.base_seed + (0 if self.same_seed else index), "seconds": seconds}


class _Driver:
    """One Ray campaign's driver loop (one per campaign): the actors' slots, the calls in flight,
    the corpus on this disk (through the :class:`Coordinator`) and the screen.  Each step of the
    loop is a method; the campaign's state is in the fields and the slots."""

    def __init__(self, ray: Any, coord: Coordinator, slots: list[_Slot], job: _Job, out: Any, t0: float, end: float,
                 poll_every: float, status_every: float) -> None:
        self.ray, self.coord, self.slots, self.job, self.out = ray, coord, slots, job, out
        self.corpus = coord.root
        self.t0, self.end = t0, end
        self.poll_every, self.status_every = poll_every, status_every
        self.stop_flag = False  # SIGINT or SIGTERM
        self.reason = "time"
        self.last_status = 0.0
        self.base: dict[str, Any] | None = None  # the combined state when the actors start: the rates are this session's
        #: the actor is being restarted (or briefly out of reach); a RayActorError, but not a new death
        self.unavailable = getattr(ray.exceptions, "ActorUnavailableError", ())

    def on_signal(self, signum: int, frame: Any) -> None:
        self.stop_flag = True

    def say(self, line: str) -> None:
        print(line, file=self.out, flush=True)

    def worker_dir(self, slot: _Slot) -> Path:
        return self.corpus / ".fuzzgpu" / "workers" / slot.wid

    # ---- the driver's copy of a worker's files ------------------------------------------------

    def log(self, slot: _Slot, lines: list[str]) -> None:
        """The actor's screen output, appended to ``.fuzzgpu/workers/wI/log.txt``."""
        if not lines:
            return
        d = self.worker_dir(slot)
        d.mkdir(parents=True, exist_ok=True)
        with open(d / "log.txt", "a") as f:
            f.write("".join(line + "\n" for line in lines))

    def note_in_flight(self, slot: _Slot, fl: dict[str, Any] | None) -> None:
        """``.fuzzgpu/workers/wI/in_flight.json``: the program the actor runs (as of its last poll)."""
        from ..evidence import program_hash
        from ..files import write_atomic

        old, slot.in_flight = slot.in_flight, fl
        path = self.worker_dir(slot) / "in_flight.json"
        if fl is None:
            if old is not None:
                path.unlink(missing_ok=True)
            return
        if old is None or old["program"] != fl["program"]:
            write_atomic(path, json.dumps({"program_hash": program_hash(fl["program"]), "shape": fl["program"].name,
                                           "backend": fl["backend"], "deadline": fl["deadline"]}, indent=1))

    def state_of(self, slot: _Slot) -> dict[str, Any]:
        from .local import _worker_states

        return _worker_states(self.corpus, [slot.wid]).get(slot.wid, {})

    # ---- an actor's life: started, lost, restarted ----------------------------------------------

    def start(self, slot: _Slot, resend: bool = False) -> None:
        """Start the actor's campaign from the driver's snapshot (``resend``: the start call again,
        to an actor Ray is restarting)."""
        if resend:
            time.sleep(0.2)
        files = self.coord.snapshot(slot.wid)
        if self.job.known_text is not None:
            files["known.json"] = self.job.known_text
        slot.cursor = len(self.coord.shared)
        slot.progress = int(self.state_of(slot).get("programs", 0) or 0)
        job = self.job.for_actor(slot.index, max(1.0, self.end - time.monotonic()))
        slot.ref, slot.call, slot.started, slot.unreachable = slot.actor.start.remote(job, files), "start", False, 0.0
        if not resend:
            slot.since, slot.waiting = time.monotonic(), False

    def restart(self, slot: _Slot, why: str) -> None:
        """A lost actor started again (at most MAX_RESTARTS times; not near the end)."""
        from .supervised import MAX_RESTARTS

        if self.end - time.monotonic() <= NEAR_END:
            slot.ended = f"done (lost near the end: {why})"
            return
        if slot.restarts >= MAX_RESTARTS:
            slot.ended = f"given up after {MAX_RESTARTS} restarts: {why}"
            self.say(f"worker {slot.wid} given up: {slot.ended}")
            return
        slot.restarts += 1
        self.say(f"worker {slot.wid} lost ({why}); restarting it (restart {slot.restarts} of at most {MAX_RESTARTS})")
        self.start(slot)

    def died(self, slot: _Slot, err: BaseException) -> None:
        """The actor died: the program it had in flight is quarantined, the actor restarted."""
        why = f"{type(err).__name__}: {str(err).strip().splitlines()[0] if str(err).strip() else ''}"[:300]
        fl = slot.in_flight
        self.note_in_flight(slot, None)
        if fl is not None:
            self.quarantine_in_flight(slot, fl, why)
        self.restart(slot, why)

    def quarantine_in_flight(self, slot: _Slot, fl: dict[str, Any], why: str) -> None:
        """The program a dead actor was running: quarantined, as a crash of a local worker's backend is."""
        from ..files import write_atomic
        from .supervised import ProgramFault, quarantine

        fault = ProgramFault("crash", f"the Ray actor {slot.wid} died while running it ({why})", float(fl["seconds"]), float(fl["deadline"]))
        q = quarantine(self.corpus, fl["program"], fault, fl["backend"], fl["config"])
        self.coord._share(q.relative_to(self.corpus).as_posix())
        st = self.state_of(slot)
        if st:  # the restarted actor resumes from this state: it counts the quarantine
            st["quarantined"] = int(st.get("quarantined", 0)) + 1
            st.setdefault("faults", {})["crash"] = int(st.get("faults", {}).get("crash", 0)) + 1
            write_atomic(self.worker_dir(slot) / "state.json", json.dumps(st, indent=1))
        self.say(f"worker {slot.wid}: QUARANTINED {q.name}: the program in flight when its actor died")

    # ---- the answers ----------------------------------------------------------------------------

    def answer(self, slot: _Slot, res: dict[str, Any]) -> None:
        if slot.call == "start":
            self.started(slot, res)
        else:
            self.polled(slot, res)

    def started(self, slot: _Slot, res: dict[str, Any]) -> None:
        """The answer to a start call: where the actor runs, or why its campaign did not start."""
        from ..files import write_atomic

        if "error" in res:
            if res.get("user_error") and not slot.progress:
                slot.ended = f"failed: {res['error']}"
                self.say(f"worker {slot.wid} failed: {res['error']}")
            else:
                self.restart(slot, res["error"])
            return
        slot.info, slot.started = res, True
        slot.next_poll = time.monotonic() + self.poll_every
        d = self.worker_dir(slot)
        d.mkdir(parents=True, exist_ok=True)
        write_atomic(d / "actor.json", json.dumps(dict(res, restarts=slot.restarts), indent=1))  # where it runs now

    def polled(self, slot: _Slot, res: dict[str, Any]) -> None:
        """The answer to a poll: the actor's files into the corpus, its output, its program in flight."""
        slot.unreachable = 0.0
        if res.get("lost"):  # Ray restarted the actor between two polls
            self.died(slot, RuntimeError("the actor was restarted by Ray"))
            return
        for line in self.coord.apply(slot.wid, res["changed"], res["removed"]):
            self.say(line)
        self.log(slot, res["lines"])
        self.note_in_flight(slot, res["in_flight"])
        slot.next_poll = time.monotonic() + self.poll_every
        if res["done"]:
            self.campaign_ended(slot, res.get("error"))

    def campaign_ended(self, slot: _Slot, err: tuple[str, bool] | None) -> None:
        """The actor's campaign ended: done, refused (a bad input) or restarted, as a local worker's exit."""
        from .local import after_exit

        finished = err is None
        rc = 2 if err and err[1] else 1
        what = after_exit(rc, finished, int(self.state_of(slot).get("programs", 0) or 0) != slot.progress, slot.restarts,
                          self.end - time.monotonic())
        if what == "done":
            slot.ended = "done"
        elif what == "refused":
            slot.ended = f"failed: {err[0] if err else '?'}"
            self.say(f"worker {slot.wid} failed: {err[0] if err else '?'}")
        else:
            self.restart(slot, f"its campaign ended on {err[0] if err else 'an error'}")

    def take(self, slot: _Slot) -> None:
        """The call of ``slot`` that is ready: its answer, or what its failure means."""
        ref, slot.ref = slot.ref, None
        try:
            res = self.ray.get(ref)
        except self.unavailable:  # restarting, or briefly out of reach: asked again, not a death
            self.unreachable(slot)
            return
        except self.ray.exceptions.RayActorError as e:
            self.died(slot, e)
            return
        except self.ray.exceptions.RayTaskError as e:  # a bug in the actor's method: like a crashed worker
            self.restart(slot, str(e).strip().splitlines()[-1][:300] if str(e).strip() else type(e).__name__)
            return
        self.answer(slot, res)

    def unreachable(self, slot: _Slot) -> None:
        """A call to an actor Ray is restarting: the start call is sent again; a poll is asked again
        (a restarted actor answers the next poll with "lost", then: died), up to POLL_TIMEOUT."""
        if slot.call == "start":
            self.start(slot, resend=True)
            return
        slot.next_poll = time.monotonic() + self.poll_every
        slot.unreachable = slot.unreachable or time.monotonic()
        if time.monotonic() - slot.unreachable > POLL_TIMEOUT:
            self.died(slot, TimeoutError(f"unreachable for {POLL_TIMEOUT:.0f} s"))

    # ---- the loop -----------------------------------------------------------------------------------

    def stop_if_due(self, now: float) -> None:
        """On a signal, or STOP_AFTER seconds past the end: every running actor is asked to stop."""
        if self.stop_flag:
            self.reason = "interrupted"
        if self.stop_flag or now > self.end + STOP_AFTER:
            for slot in self.slots:
                if slot.ended is None and not slot.stopping:
                    slot.stopping = True
                    slot.actor.stop.remote()

    def schedule(self, slot: _Slot, now: float) -> None:
        """An actor Ray cannot place again (no free resource) by the end: not waited for; one that
        is due a poll: polled, with the shared files it lacks."""
        if slot.ended is None and slot.call == "start" and slot.ref is not None and not slot.waiting \
                and now - slot.since > PLACE_WAIT:
            slot.waiting = True
            self.say(f"worker {slot.wid}: waiting for Ray to place its actor (no free resource of its kind yet)")
        if slot.ended is None and slot.call == "start" and now > self.end + UNPLACED_AFTER:
            slot.ended, slot.ref = "not restarted: no free resource in the cluster", None
        if slot.ended is None and now > self.end + FINISH_WITHIN:
            slot.ended, slot.ref = f"did not finish within {FINISH_WITHIN:.0f} s of the end", None
        if slot.ended is None and slot.ref is None and now >= slot.next_poll:
            push = dict(self.coord.shared[slot.cursor:])
            slot.cursor = len(self.coord.shared)
            slot.ref, slot.call, slot.since = slot.actor.poll.remote(push), "poll", now

    def time_out_poll(self, slot: _Slot, now: float) -> None:
        """An actor that has not answered a poll for POLL_TIMEOUT seconds is taken for lost."""
        if slot.ended is None and slot.call == "poll" and slot.ref is not None and now - slot.since > POLL_TIMEOUT:
            slot.ref = None
            self.died(slot, TimeoutError(f"no answer to a poll for {POLL_TIMEOUT:.0f} s"))

    def collect(self, live: list[_Slot]) -> None:
        """The answers ready within 0.2 s."""
        ready, _ = self.ray.wait([s.ref for s in live], num_returns=len(live), timeout=0.2)
        for slot in live:
            if slot.ref in ready:
                self.take(slot)

    def status(self, now: float) -> None:
        """The status line, every ``status_every`` seconds."""
        from ..campaign import combine_states
        from .local import _worker_states, status_line

        if now - self.last_status > self.status_every:
            self.last_status = now
            alive = sum(1 for s in self.slots if s.ended is None and s.started)
            combined = combine_states(_worker_states(self.corpus, [s.wid for s in self.slots]))
            self.say(status_line(now - self.t0, alive, len(self.slots), combined, base=self.base))

    def run(self) -> str:
        """Every actor started, then the loop until every one has ended; returns the campaign's reason."""
        from ..campaign import combine_states
        from .local import _worker_states

        self.base = combine_states(_worker_states(self.corpus, [s.wid for s in self.slots]))  # a resumed campaign's workers count earlier sessions too
        for slot in self.slots:
            self.start(slot)
        while True:
            now = time.monotonic()
            self.stop_if_due(now)
            for slot in self.slots:
                self.schedule(slot, now)
            for slot in self.slots:
                self.time_out_poll(slot, now)
            live = [s for s in self.slots if s.ended is None and s.ref is not None]
            if not [s for s in self.slots if s.ended is None]:
                break
            if live:
                self.collect(live)
            else:
                time.sleep(0.05)
            self.status(now)
        if self.job.max_findings is not None and self.reason == "time" and any(s.ended == "done" for s in self.slots) \
                and time.monotonic() < self.end - NEAR_END:
            self.reason = "found new finding(s) (--max-findings)"
        return self.reason

    def close(self) -> None:
        """Scratch folders removed (not waited for on an actor Ray is still trying to place); every actor killed."""
        closing = [slot.actor.close.remote() for slot in self.slots if slot.started and slot.call != "start"]
        if closing:
            self.ray.wait(closing, num_returns=len(closing), timeout=CLOSE_WAIT)
        for slot in self.slots:
            try:
                self.ray.kill(slot.actor, no_restart=True)
            except Exception:  # noqa: BLE001, S110 -- a dead actor is gone already
                pass


def _actor_count(ray: Any, address: str, gpus: int | str | None, per_gpu: int, workers: int, opts: dict[str, Any]) -> int:
    """How many actors: ``per_gpu`` for each GPU asked for (``opts`` gets their ``num_gpus``), else
    ``workers``; each takes one CPU of the cluster."""
    if gpus is not None:
        have = cluster_gpus(ray)
        count = have if gpus == "all" else int(gpus)
        if count < 1 or count > have:
            raise EnvError(f"--gpus {gpus}: the Ray cluster at {address} has {have} GPU(s)")  # no usable GPU: the environment
        n = count * max(1, per_gpu)
        opts["num_gpus"] = 1.0 / max(1, per_gpu)
    else:
        n = workers
    cpus = int(ray.cluster_resources().get("CPU", 0))
    if n > cpus:  # each actor takes one CPU: the others would wait for ever
        raise UserError(f"{n} workers: the Ray cluster at {address} has {cpus} CPU(s), and each actor takes one "
                        f"(add nodes, or ask for fewer workers)")
    return n


def _catch_signals(handler: Any) -> dict[signal.Signals, Any]:
    """SIGINT and SIGTERM to ``handler`` (where this thread may set them); returns the old handlers."""
    old: dict[signal.Signals, Any] = {}
    for s in (signal.SIGINT, signal.SIGTERM):
        try:
            old[s] = signal.signal(s, handler)
        except ValueError:
            pass
    return old


def run_ray(*, address: str, profile: str, backend: str, seconds: float, corpus_dir: str, prop: str, seed: int | None,
            sim_fault: str | None, workers: int, gpus: int | str | None, watchdog: float, max_findings: int | None,
            out: Any = None, status_every: float = 2.0, same_seed: bool = False, per_gpu: int = 1,
            gpu_fault: str | None = None, known: str | None = None, poll_every: float = POLL_EVERY) -> dict[str, Any]:
    """A parallel campaign whose workers are Ray actors.  ``gpus``: ``"all"`` (every GPU of the
    cluster) or a count -- ``per_gpu`` actors each, ``num_gpus=1/per_gpu``; None: ``workers`` CPU
    actors.  Returns what :func:`fuzzgpu.parallel.run_parallel` returns, plus ``actors``."""
    from ..campaign import profile_path
    from ..files import read_regular
    from .local import open_parallel_corpus
    from .supervised import MAX_RESTARTS

    ray = import_ray()
    out = out if out is not None else sys.stdout
    _check_faults(backend, sim_fault, gpu_fault)
    ppath = profile_path(profile)
    profile_text = read_regular(ppath, 1 << 20, follow_symlinks=True)
    from ..campaign import load_profile

    load_profile(str(ppath))  # a bad profile is one line here, not one per actor
    known_text = read_regular(Path(known), 1 << 24, follow_symlinks=True) if known is not None else None
    corpus = Path(corpus_dir)
    lock, base_seed = open_parallel_corpus(corpus, profile, backend, prop, seed, known)
    try:
        connect(ray, address)
    except BaseException:
        lock.close()
        raise
    coord = Coordinator(corpus)
    opts: dict[str, Any] = {"max_restarts": MAX_RESTARTS, "max_task_retries": 0, "num_cpus": 1, "scheduling_strategy": "SPREAD"}
    try:
        n = _actor_count(ray, address, gpus, per_gpu, workers, opts)
    except BaseException:
        lock.close()
        ray.shutdown()
        raise
    Actor = ray.remote(CampaignActor)
    slots = [_Slot(f"w{i}", i, Actor.options(**opts).remote(f"w{i}")) for i in range(n)]
    t0 = time.monotonic()
    job = _Job(ppath.stem, profile_text, backend, sim_fault, gpu_fault, watchdog, prop, max_findings, base_seed, same_seed, known_text)
    driver = _Driver(ray, coord, slots, job, out, t0, t0 + seconds, poll_every, status_every)
    old = _catch_signals(driver.on_signal)
    where = f"{n} Ray actors at {address}" + (f" ({per_gpu} per GPU, num_gpus={opts['num_gpus']:.3g} each)" if gpus is not None else " (one CPU each)")
    driver.say(f"fuzzgpu campaign: profile {profile}, backend {backend}, property {prop}, seed {base_seed}, corpus {corpus}: {where}")
    try:
        reason = driver.run()
    finally:
        for s_, h in old.items():
            signal.signal(s_, h)
        driver.close()
        ray.shutdown()
        lock.close()
    return _result(corpus, slots, reason, {"profile": profile, "backend": backend, "property": prop, "seed": base_seed},
                   gpus is not None, per_gpu, known, address)


def _result(corpus: Path, slots: list[_Slot], reason: str, head: dict[str, Any], on_gpus: bool, per_gpu: int,
            known: str | None, address: str) -> dict[str, Any]:
    """The combined report (``head``: profile, backend, property, seed) and what :func:`run_ray`
    returns; a UserError when every worker failed."""
    from ..campaign import combine_states, write_combined_report
    from .local import _worker_states

    failed = {s.wid: s.ended for s in slots if s.ended and s.ended.startswith("failed")}
    if failed and len(failed) == len(slots):
        first = min(failed)
        raise UserError(f"every worker failed; {first}: {failed[first][len('failed: '):]}")
    ids = [s.wid for s in slots]
    states = _worker_states(corpus, ids)
    actors = {s.wid: dict(s.info, restarts=s.restarts, ended=s.ended) for s in slots}
    devices = sorted({f"{a.get('node_ip')}:{a.get('cuda_visible_devices')}" for a in actors.values() if a.get("cuda_visible_devices")}) \
        if on_gpus else []
    report_dir = write_combined_report(corpus, states, reason, {**head, "workers": ids, "gpus": devices,
                                                                "workers_per_gpu": per_gpu if on_gpus else None,
                                                                "restarts": {s.wid: s.restarts for s in slots}, "known": known,
                                                                "ray": {"address": address, "actors": actors}})
    return {"report_dir": report_dir, "reason": reason, "states": states, "combined": combine_states(states), "actors": actors}


def _check_faults(backend: str, sim_fault: str | None, gpu_fault: str | None) -> None:
    """The fault options checked once, here (as :func:`fuzzgpu.campaign.run_campaign` does)."""
    from ..backends.sim import parse_faults

    if sim_fault and backend != "sim":
        raise UserError("--sim-fault is only for --backend sim")
    parse_faults(sim_fault)
    if gpu_fault:
        from ..backends.cuda import parse_gpu_faults

        if backend != "cuda":
            raise UserError("--gpu-fault is only for --backend cuda")
        parse_gpu_faults(gpu_fault)


def gpus_arg(spec: str | None) -> int | str | None:
    """``--gpus`` on a cluster: ``all`` or a count (GPU ids name one host's devices: not here)."""
    from .local import gpu_count

    if spec is None or spec == "all":
        return spec
    return gpu_count(spec, "all or a count with --ray (Ray places the actors; GPU ids are per host)")


__all__ = ["CampaignActor", "Coordinator", "INSTALL_HINT", "TreeWatch", "gpus_arg", "import_ray", "run_ray", "safe_rel", "synced",
           "write_files"]
