"""Several campaign workers on one corpus (``fuzzgpu campaign --gpus all|N`` / ``--workers N``;
docs/reliability.md): one campaign worker process per GPU (pinned with ``CUDA_VISIBLE_DEVICES``) or
N of them on the CPU backends, their states combined into one live display and one report, a worker
that dies restarted.  Above :mod:`fuzzgpu.campaign` (it runs campaigns); the supervised backend
each campaign runs its programs on is :mod:`fuzzgpu.workers`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ..errors import EXIT_ENVIRONMENT, EXIT_USAGE, EnvError, UserError
from .stall import STALLED, detect, hangs_since, set_aside, threshold
from .supervised import MAX_RESTARTS, RUNNER_WAITS, die_with_parent

# --------------------------------------------------------------------------------------------
# Several campaign workers on one corpus
# --------------------------------------------------------------------------------------------


def gpu_count(spec: str, expected: str) -> int:
    """``--gpus N``: N, at least 1; else a UserError saying what the option takes (``expected``)."""
    try:
        n = int(spec)
    except ValueError:
        raise UserError(f"--gpus {spec!r}: expected {expected}") from None
    if n < 1:
        raise UserError(f"--gpus {spec}: must be at least 1")
    return n


def gpu_list(spec: str) -> list[str]:
    """``--gpus all`` -> every visible GPU; ``--gpus N`` -> the first N; ``--gpus 0,2`` -> those."""
    from ..backends.gpus import visible_gpus

    gpus = visible_gpus()
    if spec == "all":
        if not gpus:
            raise EnvError("--gpus all: no GPU visible (CUDA_VISIBLE_DEVICES / nvidia-smi -L)")
        return gpus
    if "," in spec:
        want = [g.strip() for g in spec.split(",") if g.strip()]
        bad = [g for g in want if gpus and g not in gpus]
        if bad:
            raise EnvError(f"--gpus {spec}: GPU {bad[0]} is not visible (visible: {', '.join(gpus) or 'none'})")
        return want
    n = gpu_count(spec, "all, a count or a comma-separated list of GPU ids")
    if len(gpus) < n:
        raise EnvError(f"--gpus {n}: only {len(gpus)} GPU(s) visible")
    return gpus[:n]


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity where the OS says, else ``os.cpu_count``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def default_workers_per_gpu(cores: int, gpus: int) -> int:
    """``--workers-per-gpu``'s default: five workers for every four cores, shared out over the GPUs,
    at least one worker per GPU.  A worker is a campaign process (the draw, the oracle) and its
    backend's process (compile, SASS check, run), which take turns and wait (for the GPU, whose
    contexts time-slice; for the static-check pool): on one H100 host with 16 cores, 16 workers kept
    the cores 80% busy and 20 workers 90%, for 13% more programs run an hour at the same CPU per
    program (bench/results/throughput/h100-300s-05bb5d1-w20/).  A worker waiting for the GPU sleeps
    (CU_CTX_SCHED_BLOCKING_SYNC) instead of spinning a core."""
    return max(1, cores * 5 // 4 // max(1, gpus))


#: how much lower the workers' CPU priority is than the GPU runner's (``--gpu-context shared``): the
#: runner is the one process every program waits for, the workers (16 on 16 cores) keep the CPU busy
WORKER_NICE = 5


def worker_start(nice: int) -> Any:
    """What a worker process runs before the campaign: it dies with the parent, at ``nice``."""

    def start() -> None:
        die_with_parent()
        if nice:
            os.nice(nice)

    return start


def worker_dir(corpus: Path, wid: str) -> Path:
    return Path(corpus) / ".fuzzgpu" / "workers" / wid


def worker_command(args: list[str], wid: str, seed: int) -> list[str]:
    return [sys.executable, "-m", "fuzzgpu", "campaign", *args, "--worker-id", wid, "--seed", str(seed), "--no-live"]


def open_parallel_corpus(corpus: Path, profile: str, backend: str, prop: str, seed: int | None,
                         known: str | None) -> tuple[Any, int]:
    """The corpus lock of a parallel campaign's parent and the campaign's base seed (worker i uses
    base + i), checked against and recorded in ``.fuzzgpu/parallel.json`` (a resumed campaign keeps
    its settings and seed).  Shared by the local workers and the Ray driver (fuzzgpu.ray_backend)."""
    from ..campaign import lock_corpus

    if known is not None:
        from ..corpus import load_known

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
    from ..files import write_atomic

    write_atomic(meta_path, json.dumps({"schema": "fuzzgpu.parallel", "version": 1, "profile": profile, "backend": backend,
                                        "property": prop, "seed": base_seed}))
    return lock, base_seed


def status_line(elapsed: float, alive: int, n: int, st: dict[str, Any], gpus: int = 0, per_gpu: int = 1,
                base: dict[str, Any] | None = None) -> str:
    """The parent's live status line, from the combined state (:func:`fuzzgpu.campaign.combine_states`):
    the counts are the corpus's, the rates and the busy share this session's (``base``: the combined
    state when the session began -- a resumed campaign's workers count earlier sessions too).  With
    ``gpus``, the GPUs' busy share (the workers' GPU seconds -- CUDA events around their harness
    launches -- over the wall time of that many GPUs).  With ``per_gpu`` > 1 workers on a GPU the
    GPU time-slices between their contexts, and one worker's span of launches also holds the other
    workers' kernels: the sum is then an upper bound, shown ``GPU busy ≤N%`` (at most 100%).  With
    a GPU runner ``per_gpu`` is its GPU processes (contexts): one runs the programs back to back, and
    the share is exact."""
    from ..campaign import classes_phrase

    b = base or {}
    busy = ""
    if gpus and elapsed > 0:
        share = (st.get("gpu_seconds", 0.0) - b.get("gpu_seconds", 0.0)) / (elapsed * gpus)
        busy = f"GPU busy {share:.0%}  " if per_gpu <= 1 else f"GPU busy ≤{min(1.0, share):.0%}  "
    el = max(elapsed, 1e-9)
    judged, run = st["programs"] - b.get("programs", 0), st.get("run", 0) - b.get("run", 0)
    return (f"[{elapsed:6.0f} s] workers {alive}/{n}  programs {st['programs']} judged ({judged / el:.1f}/s), "
            f"{st.get('run', 0)} run ({run / el:.1f}/s)  "
            f"instances {st['instances']:.3g}  {busy}"
            f"{classes_phrase(st['classes'])} ({len(st['findings'])} entries)  quarantined {st['quarantined']}"
            + (f"  NOT SAVED (kept raw) {len(st['save_errors'])}" if st["save_errors"] else ""))


def run_parallel(*, profile: str, backend: str, seconds: float, corpus_dir: str, prop: str, seed: int | None,
                 sim_fault: str | None, workers: int, gpus: list[str] | None, watchdog: float,
                 max_findings: int | None, out: Any = None, status_every: float = 2.0, same_seed: bool = False,
                 per_gpu: int = 1, gpu_fault: str | None = None, known: str | None = None,
                 gpu_context: str = "per-worker", gpu_processes: int = 1, static_pool: bool = False,
                 static_pool_window: float | None = None) -> dict[str, Any]:
    """Start ``per_gpu`` campaign workers per GPU (or ``workers`` on the CPU), aggregate, write the
    report.  Worker ``i`` of a GPU run is pinned to ``gpus[i % len(gpus)]``: several workers per
    GPU overlap one program's compile (CPU) with another's run (GPU).  ``gpu_context`` ``shared``
    (the cuda backend): one GPU runner process per GPU owns its only CUDA context and runs the
    programs its workers compile (fuzzgpu.workers.gpu_runner); ``per-worker``: each worker's backend
    process has its own context; ``gpu_processes``: the runner's GPU processes (each a context);
    ``static_pool``: the workers' static checks go to one pool process (fuzzgpu.workers.static_pool), which
    gathers their batches for ``static_pool_window`` seconds (default its ``WINDOW_S``).
    ``shared`` with the sim backend: one runner process runs every
    worker's sim runs (the runner tested on the CPU; the command line never asks for it)."""
    from ..campaign import combine_states, write_combined_report

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
    shared = gpu_context == "shared" and (backend == "cuda" and bool(gpus) or backend == "sim")
    runners: list[Any] = []  # started after the banner (fuzzgpu.workers.gpu_runner)
    pool: Any = None  # --static-pool: the pool of the workers' static checks (fuzzgpu.workers.static_pool)
    procs: dict[str, subprocess.Popen] = {}
    started: dict[str, float] = {}
    restarts = {w: 0 for w in ids}
    failed: dict[str, str] = {}
    failed_rc: dict[str, int] = {}  # the exit status of each failed worker: 2 bad input, else the environment
    t0, t0_wall = time.monotonic(), time.time()
    end = t0 + seconds
    stop = {"flag": False}
    # the workers are asked to stop once (SIGINT: each ends its run and writes its report); one still there when a
    # run of 1.5e9 instances would have passed its deadline is killed.  (Asked again every 0.2 s, a worker waiting for
    # a run that had not returned was interrupted in the wait: every worker "failed: KeyboardInterrupt", exit 3, no
    # report -- 2026-12-06.)
    asked: list[float] = []
    grace = (watchdog + 300.0) * (RUNNER_WAITS if gpu_context == "shared" else 1)
    stalled: list[tuple[str, float]] = []  # the device stopped answering: the line, and since when (fuzzgpu.workers.stall)
    stopped: dict[str, str] = {}  # workers that ended, asked to, before writing their report
    ran: list[tuple[float, int]] = []  # (wall-clock time, programs run by every worker this session) at each status line
    # a stall is looked for where the workers' runs share one device and each run is a worker's (not with several GPUs,
    # whose hangs and runs the states do not tell apart, nor with a GPU runner, which runs one program at a time)
    look_for_stall = (not gpus or len(gpus) == 1) and not shared

    def ask_stop(when: float) -> None:
        if not asked:
            asked.append(when)
            for p in procs.values():
                if p.poll() is None:
                    p.send_signal(signal.SIGINT)

    progress: dict[str, int] = {}  # programs in the worker's state when it was (re)started

    def launch(i: int, wid: str) -> None:
        left = max(1.0, end - time.monotonic())
        env = dict(os.environ)
        if gpus:
            env["CUDA_VISIBLE_DEVICES"] = gpus[i % len(gpus)]
        extra = []
        if pool is not None:
            env.update(pool.env())
        if runners:
            runner = runners[i % len(runners)]
            env.update(runner.env())
            extra = ["--gpu-runner", runner.address]
        d = worker_dir(corpus, wid)
        d.mkdir(parents=True, exist_ok=True)
        log = open(d / "log.txt", "a")  # noqa: SIM115 -- handed to the child
        cmd = worker_command([*common, *extra, "--time", f"{left:.1f}"], wid, base_seed + (0 if same_seed else i))
        procs[wid] = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
                                      preexec_fn=(worker_start(WORKER_NICE if runners else 0)  # noqa: PLW1509 -- prctl, nice
                                                  if sys.platform.startswith("linux") else None))
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
    pooled = static_pool and backend != "sim" and n > 1  # every compiling backend checks static kernels
    where = (f"GPUs {', '.join(gpus)}" + (f", {per_gpu} workers each" if per_gpu > 1 else "")) if gpus else f"{n} worker processes"
    print(f"fuzzgpu campaign: profile {profile}, backend {backend}, property {prop}, seed {base_seed}, corpus {corpus}: "
          f"{n} workers ({where})" + (f"; one GPU runner per GPU runs their programs ({gpu_processes} GPU process(es), "
                                      "one CUDA context each)" if shared else "")
          + ("; one static-check pool checks their static kernels (--no-static-pool: each its own)" if pooled else ""),
          file=out, flush=True)
    reason = "time"
    last = 0.0
    try:
        if shared:
            runners.extend(start_runners(gpus, backend, sim_fault, watchdog, corpus, gpu_processes))
        if pooled:
            from ..backends.static_pool import answer_timeout
            from .static_pool import WINDOW_S, PoolHandle

            try:
                pool = PoolHandle(corpus / ".fuzzgpu" / "static-pool.json", wait=answer_timeout(watchdog),
                                  window=WINDOW_S if static_pool_window is None else static_pool_window)
            except EnvError as e:  # nothing depends on it (as when it cannot be restarted, below)
                print(f"{e}; the workers check their batches alone", file=out, flush=True)
        base = combine_states(_worker_states(corpus, ids))  # a resumed campaign's workers count earlier sessions too
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
            for r in runners:
                if r.ensure():
                    print(f"the GPU runner of GPU {r.gpu_id} died; restarted it (restart {r.restarts})", file=out, flush=True)
            try:
                if pool is not None and pool.ensure():  # the workers that lost it check alone; the others use the new one
                    print(f"the static-check pool died; restarted it (restart {pool.restarts})", file=out, flush=True)
            except EnvError as e:  # nothing depends on it: the workers check alone from now on
                pool = None
                print(f"{e}; the workers check their batches alone", file=out, flush=True)
            alive = 0
            for i, wid in enumerate(ids):
                p = procs[wid]
                rc = p.poll()
                if rc is None:
                    alive += 1
                    continue
                if wid in failed or wid in stopped:
                    continue
                finished = _finished(corpus, wid, started[wid])
                last_line = _last_line(worker_dir(corpus, wid) / "log.txt")
                if asked and not finished:  # asked to stop, it ended before its report: never restarted now
                    if rc in (0, 1, 130) or -rc in (signal.SIGKILL, signal.SIGINT, signal.SIGTERM):
                        stopped[wid] = f"exit status {rc}" if rc >= 0 else f"killed by {signal.Signals(-rc).name}"
                        print(f"worker {wid} stopped ({stopped[wid]}) before its report: its state is kept", file=out, flush=True)
                    else:
                        failed[wid], failed_rc[wid] = f"exit status {rc} as it stopped: {last_line}", rc
                        print(f"worker {wid} failed: {failed[wid]}", file=out, flush=True)
                    continue
                what = after_exit(rc, finished, _programs(corpus, wid) != progress[wid], restarts[wid], end - now)
                if what == "done" and not finished and rc not in (0, 1):
                    what = "refused"  # the time ran out while it failed: it ended on its error, not its session
                if what in ("refused", "give-up"):
                    failed_rc[wid] = rc
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
                combined = combine_states(_worker_states(corpus, ids))
                print(status_line(now - t0, alive, n, combined, len(gpus or ()), gpu_processes if runners else per_gpu, base),
                      file=out, flush=True)
                ran.append((time.time(), int(combined.get("run", 0)) - int(base.get("run", 0))))
                if (look_for_stall and not stalled and not asked
                        and combined["quarantined"] - base["quarantined"] >= threshold(n)):
                    stalled.extend(detect(corpus, t0_wall, n, "GPU" if gpus else "backend", ran))
                    if stalled:
                        print(stalled[0][0], file=out, flush=True)
                        reason = f"the {'GPU' if gpus else 'backend'} stopped answering (stalled/)"
                        ask_stop(now)
            if alive == 0:
                if max_findings is not None and not stalled:
                    reason = "found new finding(s) (--max-findings)"
                break
            if now > end + 30:
                ask_stop(now)
            if asked and now > asked[0] + grace:
                for p in procs.values():
                    if p.poll() is None:
                        p.kill()
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
        for r in runners:
            r.stop()
        if pool is not None:
            pool.stop()
        lock.close()
    if stalled:  # the runs that hung since, as the workers stopped, are not shown to hang either
        later = [h for h in hangs_since(corpus / "quarantine", t0_wall) if h.end >= stalled[0][1]]
        set_aside(later, "a run that hung while the device had stopped answering this campaign's workers; this program is "
                  "not shown to hang", corpus / STALLED)
    if failed and len(failed) == len(ids) and not stalled:
        first = min(failed)
        # every worker refused bad input (2): the input; anything else (no usable GPU, a missing tool, a
        # crash: 3, a signal) is the environment, as the same failure of a one-process campaign is
        bad_input = all(rc == EXIT_USAGE for rc in failed_rc.values())
        raise (UserError if bad_input else EnvError)(f"every worker failed; {first}: {failed[first]}")
    states = _worker_states(corpus, ids)
    report_dir = write_combined_report(corpus, states, reason, {"profile": profile, "backend": backend, "property": prop,
                                                                "seed": base_seed, "workers": ids, "gpus": gpus or [],
                                                                "workers_per_gpu": per_gpu if gpus else None,
                                                                "restarts": restarts, "known": known, "stopped": stopped,
                                                                "stalled": stalled[0][0] if stalled else None,
                                                                "gpu_context": gpu_context if gpus else None,
                                                                "gpu_processes": gpu_processes if runners else None,
                                                                "runner_restarts": {r.gpu_id: r.restarts for r in runners}})
    if stalled:
        raise EnvError(f"{stalled[0][0]} (report: {report_dir}/report.md)")
    return {"report_dir": report_dir, "reason": reason, "states": states, "combined": combine_states(states),
            "codes": {w: p.returncode for w, p in procs.items()}}


def start_runners(gpus: list[str] | None, backend: str, sim_fault: str | None, watchdog: float, corpus: Path,
                  processes: int = 1) -> list[Any]:
    """One GPU runner per GPU (fuzzgpu.workers.gpu_runner) for the cuda backend, its counters in the
    corpus's ``.fuzzgpu/runners/gpuN.json``; for the sim backend (testing the runner on the CPU)
    one runner whose process runs the sim with ``sim_fault``.  The ones started are stopped if a
    later one fails."""
    from ..backends.remote import RUNNER_SIDE
    from .gpu_runner import RunnerHandle
    from .supervised import BackendSpec

    todo, spec = (list(gpus or ()), BackendSpec(RUNNER_SIDE)) if backend == "cuda" else (["sim"], BackendSpec("sim", sim_fault))
    runners: list[Any] = []
    try:
        for g in todo:
            runners.append(RunnerHandle(None if g == "sim" else g, watchdog, corpus / ".fuzzgpu" / "runners" / f"gpu{g}.json",
                                        spec=spec, processes=processes))
    except BaseException:
        for r in runners:
            r.stop()
        raise
    return runners


def after_exit(rc: int, finished: bool, progressed: bool, restarts: int, time_left: float) -> str:
    """What the parent does about a campaign worker that exited with status ``rc``:

    * ``done``: it finished its session (``finished``: it wrote its report), whatever its status
      (0 nothing new, 1 findings saved), or the time is up;
    * ``refused``: exit 2 or 3 before its first program (a bad profile or option; no usable GPU, a
      missing tool: one line in its log): neither gets better by restarting (restarted until the
      time was up, a campaign whose every worker found no GPU ended "no new finding", exit 0);
    * ``restart``: it died (a signal, a crash) or exited on an error after it had started (a
      traceback, an error while saving, a full disk): resumed like a crashed one ...
    * ``give-up``: ... at most :data:`MAX_RESTARTS` times."""
    if finished or time_left <= 2:
        return "done"
    if rc in (EXIT_USAGE, EXIT_ENVIRONMENT) and not progressed:
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


__all__ = ["after_exit", "gpu_list", "run_parallel", "worker_command", "worker_dir"]
