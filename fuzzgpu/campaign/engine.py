"""The engine: :class:`Campaign`, Hypothesis runs over the profile's strategy until the time is
spent; a failing program is shrunk, saved to the corpus (one entry per class) or counted as a
variant of its class."""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import os
import signal
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..backends.base import RunConfig
from ..deadline import NEVER, Deadline, Watch
from ..errors import UserError, clip
from ..evidence import EvidenceBackend, EvidenceCache
from ..files import write_atomic
from ..ir import Program
from ..profiles import Profile
from ..stress.campaign import MAY_HANG_INSTANCES, full_budget_again, short_budget
from .analyses import Analyses
from .database import example_database
from .limits import BATCH, FIX_SECONDS, end_reserve, report_reserve
from .records import keep_raw, reconcile
from .speculate import Resume, ShrinkRestart, Speculation, confirmed
from . import timeline
from .report import _kinds_note, live_table, status_text, write_report
from .state import CampaignResult, State, _new_shape_stats, lock_corpus


class _Stop(BaseException):
    """Raised inside the Hypothesis test to end a run now (time up, Ctrl-C): a BaseException, so
    Hypothesis neither shrinks nor retries it."""


class _Replay(BaseException):
    """A program drawn ahead failed: the next run, under the same seed, re-draws up to it and shrinks
    it (Hypothesis shrinks only the example it runs).  ``args``: its draw's index, its program's
    hash, (program, verdict, histogram, config) saved unshrunk if the draws differ."""


class _ShrinkTimeout(BaseException):
    """The shrink ran past the profile's ``shrink_seconds``: save the best program so far."""


class PropertyFailed(Exception):
    def __init__(self, program: Program, verdict: Any, hist: Any, config: RunConfig) -> None:
        super().__init__(verdict.summary())
        self.program = program
        self.verdict = verdict
        self.hist = hist
        self.config = config


@functools.lru_cache(maxsize=None)
def _failed_as(key: str) -> type[PropertyFailed]:
    """One PropertyFailed subclass per kind of failure (``Verdict.class_key``): Hypothesis tells
    failures apart by exception type, so failures of two kinds are two bugs to it, not one shrunk
    into the other (with ``report_multiple_bugs=False`` it shrinks toward the smallest failing
    example of any kind and reports that one)."""
    return type(f"PropertyFailed_{key}", (PropertyFailed,), {}) if key else PropertyFailed


def size_key(p: Program) -> tuple:
    """Smaller is simpler: threads, memory operations, instructions, then the JSON text."""
    from ..ir import program_to_json

    mem = sum(1 for t in p.threads for i in t.code if hasattr(i, "loc") or hasattr(i, "dst_loc"))
    return (len(p.threads), mem, sum(len(t.code) for t in p.threads), len(json.dumps(program_to_json(p))))



class Campaign:
    def __init__(self, profile: Profile, backend: Any, corpus_dir: str | Path, prop: str = "model", seed: int | None = None,
                 note: str = "", out: Any = None, live: bool | None = None, status_every: float = 5.0,
                 worker_id: str | None = None, known: str | Path | None = None) -> None:
        from .. import properties
        from ..corpus import KNOWN_FILE, Corpus, load_known

        self.profile = profile
        self.prop = properties.get(prop)
        self.corpus = Corpus(corpus_dir)
        self.root = Path(corpus_dir)
        self.state_dir = self.corpus.state_dir  # shared: the Hypothesis database, the evidence cache
        self.worker_id = worker_id
        # this campaign's own files: the state, the lock, the report (one set per parallel worker)
        self.own_dir = self.state_dir / "workers" / worker_id if worker_id else self.state_dir
        self.report_root = self.own_dir if worker_id else self.root
        self.state_path = self.own_dir / "state.json"
        self.inner = backend
        self.backend = EvidenceBackend(backend, EvidenceCache(self.state_dir / "evidence"))
        self.note = note
        self.out = out if out is not None else sys.stdout
        self.live = live
        self.status_every = status_every
        bid = self.backend.identity()[0]
        old = State.load(self.state_path)
        if old is not None and (old.profile, old.backend, old.property) != (profile.name, bid, prop):
            raise UserError(
                f"{self.state_path}: this corpus holds a campaign with profile {old.profile}, backend {old.backend}, "
                f"property {old.property}; use another --corpus folder (or the same settings) to resume"
            )
        if old is not None and seed is not None and seed != old.seed:
            raise UserError(f"{self.state_path}: the campaign in this corpus has seed {old.seed}; resume without --seed or with --seed {old.seed}")
        self.resumed = old is not None
        self.state = old or State(profile.name, bid, prop, seed if seed is not None else int.from_bytes(os.urandom(4), "big"))
        self.state.worker = worker_id
        self.state.sessions += 1
        self._reconcile()
        self.known: set[str] = self.corpus.signatures()
        #: the known-findings list (--known, else D/known.json when present): class key -> Known
        # (a D/known.json that is not a regular file, a FIFO, is read -- and refused -- not skipped silently)
        self.known_path = Path(known) if known is not None else (self.root / KNOWN_FILE if os.path.lexists(self.root / KNOWN_FILE) else None)
        self.known_classes = load_known(self.known_path) if self.known_path is not None else {}
        self.classes: dict[str, Path] = self.corpus.classes()  # class key -> its entry
        self._seen: set[tuple[str, str]] = set()  # (class, signature) counted this session
        self._pending_variants: dict[tuple[str, Path], list[str]] = {}  # variants not yet counted in the corpus
        self.stop_requested = False
        #: why the campaign stopped on a fault it cannot recover from (in-process: a GpuFault), else None
        self.stopped_by_fault: str | None = None
        self.max_findings: int | None = None
        self.max_runs: int | None = None  # stop after this many Hypothesis runs this session (None: the whole time)
        self.close_backend = False  # run() closes the backend when it ends (run_campaign: the one it made)
        self.new_findings: list[dict[str, Any]] = []
        self.unsaved: list[str] = []  # signatures of findings kept raw this session (not saved as entries)
        self._raw_classes: set[str] = set()  # classes whose finding could only be kept raw (its variants: counted)
        self.session_findings: list[dict[str, Any]] = []  # new ones and ones another worker saved first
        #: the session's deadline (``--time`` from the start of :meth:`run`; none before it starts)
        self.end: Deadline = NEVER
        self.seconds = math.inf  # the session's --time
        self._t0, self._elapsed_base = time.monotonic(), self.state.elapsed  # (run() sets them again when it starts)
        #: the steps the deadline cut short this session, one line each (the output and the report say them)
        self.cut_short: list[str] = []
        from ..workers.supervised import quarantined_hashes

        self.quarantined: set[str] = quarantined_hashes(self.root)
        self._last_save = 0.0
        # the model's analysis of each program, once (a race campaign's from its race analysis's enumeration)
        self.analyses = Analyses(with_races=self.prop is properties.RACE)
        #: programs drawn ahead per batch (1: each judged as it is drawn)
        self.batch = BATCH.get(getattr(backend, "name", ""), 1)
        self._replay: tuple | None = None  # _Replay's args: the next run re-draws to that failure
        self._resume: Resume | None = None  # the next run shrinks from a batch's failing candidate
        #: shrink candidates compiled, checked and run in batches (campaign/speculate.py): every backend
        #: that compiles in batches (a GPU's shrink candidate alone cost ~1.6 CPU s of nvcc and SASS check)
        self.speculate = self.batch > 1
        from ..stress.campaign import CampaignTuner

        self.tuner = CampaignTuner(profile.tune_share, getattr(backend, "name", ""), self.state.tuning,
                                   budget_s=profile.tune_budget_s)

    # -- helpers ---------------------------------------------------------------------------

    def _reconcile(self) -> None:
        reconcile(self)

    def _run_namespace(self) -> bytes:
        """What keeps this Hypothesis run's examples apart from every other run's in the shared
        example database."""
        return f"{self.profile.name}|{self.state.backend}|{self.prop.name}|{self.state.seed}|{self.state.run_index}".encode()

    def config_for(self, instances: int | None = None) -> RunConfig:
        base = self.profile.stress
        if self.inner.name == "sim":
            n = self.profile.sim_instances
        elif self.inner.name == "static":
            n = 1
        else:
            n = base.instances
        # a run whose waits mostly time out stops early, as a program whose wait may hang is capped
        # (a profile's [stress] timeout_stop: its own bound; negative: off)
        stop = max(0, base.timeout_stop or MAY_HANG_INSTANCES)
        return dataclasses.replace(base, instances=max(n, instances or 0), seed=self.state.seed, timeout_stop=stop)

    def save_state(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._last_save > 1.0:
            self.state.elapsed = self._elapsed_base + (time.monotonic() - self._t0)
            timeline.sample(self.state.timeline, self.state.elapsed, self.state.programs, self.state.instances, self.state.classes,
                            force=force, run=self.state.run)
            write_atomic(self.state_path, json.dumps(self.state.to_json(), indent=1))
            self._last_save = now

    def _tune(self, program: Program) -> None:
        """Tune the stress of ``program``'s shape family (a share of the GPU time: stress.campaign)."""
        a = self.analyses.cached(program)
        if not a or not a.weak:
            return  # no weak outcome to expose (or the oracle does not cover it): nothing to tune for
        from ..stress.campaign import shape_family

        from ..backends.cuda import GpuFault  # (no PyCUDA import: the module loads without a GPU)

        run = self.inner.run  # with the program's advice, as its campaign run (no model.analyse in the backend)
        if getattr(self.inner, "takes_advice", False):
            run = functools.partial(self.inner.run, advice=self.analyses.advice(program))
        try:
            # a wait loop at the short budget, as the program's runs: tuning counts weak outcomes, never timeouts
            rec = self.tuner.tune(program, a.sc, short_budget(program, self.config_for()), run, seed=self.state.seed)
        except GpuFault as e:  # in-process: the context is lost, every later run would fail too
            self._stop_on_gpu_fault(program, e, self.config_for())
        except Exception as e:  # noqa: BLE001 -- a failed tuning run costs the family its tuning, not the campaign
            self.tuner.failed(program, self.config_for(), f"{type(e).__name__}: {e}")
            self._print(f"TUNING FAILED for {shape_family(program)} ({type(e).__name__}: {e}); it keeps the profile's stress")
            return
        self._print(f"TUNED {shape_family(program)}: {rec['weak_per_s']:.3g} weak/GPU-s with {rec['describe']} "
                    f"(profile stress {rec['default_weak_per_s']:.3g}/s; {rec['spent_s']:.2f} GPU-s)")
        self.save_state(force=True)

    def _stop_on_gpu_fault(self, program: Program, error: BaseException, config: RunConfig) -> None:
        """A :class:`~fuzzgpu.backends.cuda.GpuFault` in this process (``--in-process``: no worker to
        restart, and the CUDA context is lost): quarantine the program as a supervised worker's
        fault ``gpu-fault`` would, save the state, say so in one line, and end the campaign
        (:class:`_Stop`; its exit status is 3).  The corpus and the findings so far are kept."""
        from ..evidence import program_hash
        from ..workers.supervised import ProgramFault, quarantine

        # one printable line: the terminal, the quarantine record and the report show it
        fault = ProgramFault("gpu-fault", clip(str(error).strip().splitlines()[0]) if str(error).strip() else type(error).__name__, 0.0, 0.0)
        self.quarantined.add(program_hash(program)[:16])
        self.state.quarantined += 1
        self.state.faults["gpu-fault"] = self.state.faults.get("gpu-fault", 0) + 1
        self._note_not_covered(program.name, "quarantined: gpu-fault")
        try:
            qpath: Path | None = quarantine(self.root, program, fault, self.inner.describe(), config)
        except OSError:
            qpath = None  # the state still counts it; the stop line says it was not written
        self.stopped_by_fault = (f"gpu-fault in process: {fault.detail} (the CUDA context is lost and --in-process has no worker to "
                                 f"restart); the program is quarantined in {qpath}" if qpath is not None else
                                 f"gpu-fault in process: {fault.detail} (the CUDA context is lost and --in-process has no worker to "
                                 f"restart); the program could not be written to {self.root / 'quarantine'}")
        self.save_state(force=True)
        self._print(f"QUARANTINED {qpath.name if qpath is not None else '(not written)'}: {program.name}: gpu-fault: {fault.detail} "
                    "(in-process: no worker to restart; the campaign stops, exit 3)")
        raise _Stop()

    def _note_class(self, key: str, sig: str, file: str, kinds: list[str], known: Any = None) -> bool:
        """Count finding ``sig`` in class ``key`` (once per signature); True when it was not counted
        before."""
        from ..corpus import MAX_VARIANTS, class_id

        c = self.state.classes.get(key)
        if c is None:
            c = self.state.classes[key] = {"id": class_id(key), "file": file, "findings": 0, "known": known is not None,
                                           "writeup": getattr(known, "writeup", None), "title": getattr(known, "title", None),
                                           "kinds": list(kinds), "variants": []}
        if file and not c.get("file"):
            c["file"] = file
        variants = c.setdefault("variants", [])
        if sig in variants or (key, sig) in getattr(self, "_seen", set()):
            return False
        if hasattr(self, "_seen"):
            self._seen.add((key, sig))
        if len(variants) < MAX_VARIANTS:
            variants.append(sig)
        c["findings"] = int(c.get("findings", 0)) + 1
        return True

    def _variant(self, key: str, sig: str, verdict: Any) -> None:
        """A failing program of a class that is known or already has an entry: counted, not shrunk,
        not saved (its signature is added to the class's variants in the corpus at the end of the run)."""
        from ..corpus import match_known

        known = match_known(key, self.known_classes)
        path = self.classes.get(key)
        if self._note_class(key, sig, path.name if path is not None else "", list(verdict.kinds), known) and path is not None:
            self._pending_variants.setdefault((key, path), []).append(sig)

    def _flush_variants(self) -> None:
        pending, self._pending_variants = self._pending_variants, {}
        for (key, path), sigs in pending.items():
            try:
                self.corpus.add_variants(key, path, sigs)
            except OSError as e:  # a count in an entry is bookkeeping: say so, go on
                self._print(f"could not record {len(sigs)} variant(s) in {path.name}: {e.strerror or e}")

    def _record(self, program: Program, verdict: Any, hist: Any, config: RunConfig, shrunk: bool) -> None:
        """Save a finding.  Whatever goes wrong while saving it (a bad field, a full disk) never
        stops the campaign and never loses the finding: it is kept raw (:meth:`_keep_raw`),
        reported, and the campaign goes on."""
        from .. import corpus, fixes

        # a static finding checked in a batch: judged again on its own check (its own listing's line numbers)
        verdict, hist = confirmed(self.prop, self.inner, self.backend.identity(), program, verdict, hist)
        try:  # the weakest change that removes the finding, searched until the fix deadline (then said so)
            verdict = fixes.attach(program, verdict, self._fix_watch(program.name))
        except Exception:  # noqa: BLE001 -- a finding is saved without its fix rather than lost
            pass
        if str(getattr(verdict, "fix", "") or "").startswith("fix search stopped at the deadline"):
            self._cut(f"{program.name}: {verdict.fix}")
        sig = corpus.verdict_signature(program, verdict)
        key = corpus.verdict_class(program.name, verdict)
        entry: dict[str, Any] | None = None
        try:
            entry = corpus.make_entry(program, verdict, hist, self.inner, config, shape=program.name, shrunk=shrunk,
                                      campaign={"profile": self.profile.name, "seed": self.state.seed, "run": self.state.run_index,
                                                "property": self.prop.name, "stress_source": self.tuner.source_of(program, config)})
            path, new = self.corpus.add(entry)
        except Exception as e:  # noqa: BLE001 -- a finding must outlive any bug or fault in saving it
            self._keep_raw(program, verdict, hist, config, entry, sig, key, e)
            self.save_state(force=True)
            return
        self.known.add(sig)
        self.classes.setdefault(key, path)
        st = self.state.shapes.setdefault(program.name, _new_shape_stats())
        info = {"signature": sig, "file": path.name, "shape": program.name, "class": key,
                "threads": len(program.threads), "summary": verdict.summary(), "shrunk": shrunk,
                "kinds": list(verdict.kinds), "rate": entry["reproduction"]["rate"]}
        self._note_class(key, sig, path.name, list(verdict.kinds))
        if new:
            self.state.findings.append(info)
            self.new_findings.append(info)
            self.session_findings.append(info)
            st["findings"] += 1
            self.state.last_finding_elapsed = self._elapsed_base + (time.monotonic() - self._t0)
            self._print(f"NEW FINDING {path.name}: {program.name}, {len(program.threads)} threads: {verdict.summary()}  [class {key}]"
                        + _kinds_note(verdict.kinds))
        else:
            self.state.duplicates += 1
            if path.name not in {f["file"] for f in self.state.findings}:
                # found here too, but saved first by another worker (or an earlier campaign): listed, not new
                info["saved_by_another"] = True
                self.state.findings.append(info)
                self.session_findings.append(info)
                self._print(f"FINDING {path.name} (its class has this entry already, saved by another worker or campaign; "
                            f"counted as a variant): {program.name}: {verdict.summary()}")
        self.save_state(force=True)

    def _fix_watch(self, shape: str) -> Watch:
        """The fix search's deadline -- the session's, less the report's reserve, and at most the
        profile's ``shrink_seconds`` from now --, its bound (:data:`FIX_SECONDS` from now) and its
        progress: a status line every ``status_every`` seconds while it runs."""
        keep = report_reserve(self.seconds) if math.isfinite(self.seconds) else 0.0
        deadline = self.end.earlier(keep).sooner(self.profile.shrink_seconds)
        t0 = deadline.clock()
        last = [t0]

        def on_step(n: int) -> None:
            now = deadline.clock()
            if now - last[0] >= self.status_every:
                last[0] = now
                self._print(f"[finishing] fix search for {shape}: {n - 1} candidate(s) judged in {now - t0:.0f} s; "
                            f"deadline in {max(0.0, deadline.at - now):.0f} s")

        return Watch(deadline, "fix search", on_step, bound=Deadline.after(FIX_SECONDS, deadline.clock),
                     bound_text=f"its bound ({FIX_SECONDS:g} s per finding in a campaign; `fuzzgpu explain` searches on)")

    def _cut(self, what: str) -> None:
        """A step the deadline cut short: said now, and in the report."""
        self.cut_short.append(what)
        self._print(f"CUT SHORT by the deadline: {what}")

    def _keep_raw(self, program: Program, verdict: Any, hist: Any, config: RunConfig, entry: Mapping[str, Any] | None,
                  sig: str, key: str, error: BaseException) -> None:
        keep_raw(self, program, verdict, hist, config, entry, sig, key, error)

    def _note_not_covered(self, shape: str, why: Any) -> None:
        self.state.note_not_covered(shape, why)

    def _print(self, line: str) -> None:
        if self._live_obj is not None:
            self._live_obj.console.print(line)
        else:
            print(line, file=self.out, flush=True)

    # -- the Hypothesis run ----------------------------------------------------------------

    def _one_run(self, deadline: float, replay: tuple | None = None, resume: Resume | None = None) -> str:
        """One Hypothesis run (generation until a failure, then shrinking); returns why it ended.
        With :attr:`batch` > 1 the run draws ahead: it keeps each drawn program (and its draw) until
        :attr:`batch` are drawn, has the backend compile and check them together (its
        ``prepare``), then judges them in order; at the first new failure the run ends (``"replay"``);
        the next run (``replay``: :class:`_Replay`'s args), under the same seed, re-draws the same
        programs up to that one and shrinks it as a failure found while generating is.  A shrink on
        such a backend compiles, checks and runs its candidates in batches (:mod:`~fuzzgpu.campaign.speculate`):
        ``resume``, where the last run's shrink goes on."""
        from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
        from hypothesis.errors import Flaky

        from .. import model, properties, strategies
        from ..model.liveness import waits
        from ..backends.cuda import GpuFault  # (no PyCUDA import: the module loads without a GPU)

        target_rate: list[float] = [resume.target_rate] if resume else []
        best: list[tuple] = [resume.best] if resume else []
        prop = self.prop
        from ..evidence import program_hash
        from ..backends.cuda import DRIVER_ERROR
        from ..workers.supervised import REFUSED, ProgramFault, keep_refused, quarantine

        self.known |= self.corpus.signatures()  # findings other workers saved since the last run
        for key, path in self.corpus.classes().items():  # and their classes
            self.classes.setdefault(key, path)

        first_failure: list[float] = [resume.started] if resume else []
        keys: set[str] = set(resume.keys) if resume else set()  # the class keys of the failures this shrink met
        spec = Speculation() if self.speculate else None

        def check_kept(restart: bool) -> None:
            """The kept shrink candidates checked and judged; the first that fails is where the
            next run's shrink starts (``restart``), else only counted (and kept in ``best``).  At the
            shrink's end (not ``restart``) a sampling backend's kept candidates are dropped unrun: up
            to 8 GPU runs of up to the profile's ``max_instances`` each would outlast the deadline."""
            if spec and not restart and not getattr(self.inner, "deterministic", False):
                spec.drop()
                return
            found = spec.check(lambda ps: self.backend.prepare(ps, config_of), lambda p: judge(p, timed=False),
                               PropertyFailed) if spec else None
            if found and restart:
                raise ShrinkRestart(Resume(found[1], program_hash(found[0])[:16], first_failure[0], target_rate[0], best[0],
                                           frozenset(keys)))

        def config_of(program: Program) -> RunConfig:
            """The run configuration ``program`` is judged with: while shrinking, enough instances to
            see the failure's rate 3 times; the program's family's tuned stress knobs."""
            n = None
            if target_rate and target_rate[0] > 0:
                n = min(self.profile.max_instances, math.ceil(3 / target_rate[0]))
            cfg = self.tuner.stress_for(program, self.config_for(n))[0]
            # only a spin loop times out: a program without one is not stopped to look (timeout_stop)
            return cfg if not cfg.timeout_stop or waits(program) else dataclasses.replace(cfg, timeout_stop=0)

        def pruned(program: Program) -> bool:
            """A shrink candidate that cannot fail the way any failure this shrink met failed (their
            classes, :func:`fuzzgpu.properties.may_fail_as`; Hypothesis shrinks toward the smallest
            failure of any kind): it passes, neither compiled nor run (counted per shape as
            ``pruned``, not as a program).  Never one the evidence cache answers (a resumed
            candidate, Hypothesis's replay of its best)."""
            if not (first_failure and keys) or prop is not properties.RACE:
                return False
            if self.backend.answers(program, config_of(program)) or any(properties.may_fail_as(program, k) for k in keys):
                return False
            st = self.state.shapes.setdefault(program.name, _new_shape_stats())
            st["pruned"] = st.get("pruned", 0) + 1
            return True

        def judge(program: Program, timed: bool = True) -> None:
            if timed and (self.stop_requested or time.monotonic() > deadline):
                if not self.stop_requested:
                    check_kept(False)
                raise _Stop()
            if timed and first_failure and time.monotonic() - first_failure[0] > self.profile.shrink_seconds:
                check_kept(False)
                raise _ShrinkTimeout()
            if timed and pruned(program):
                return
            cfg = config_of(program)
            st = self.state.shapes.setdefault(program.name, _new_shape_stats())
            st["programs"] += 1
            self.state.programs += 1
            self.state.shrink_programs += bool(replay) or bool(first_failure)  # a candidate of a shrink (or the replayed draw)
            ph = program_hash(program)[:16]
            if ph in self.quarantined:  # hung or crashed a worker before: skipped
                st["unsupported"] += 1
                self._note_not_covered(program.name, "quarantined (hung or crashed the backend before)")
                return
            try:
                gpu0, fresh0, own0 = self.backend.gpu_seconds, self.backend.fresh_runs, self.backend.own_runs
                # the model's analysis, once here: its possible outcomes go with the run (the backend's
                # harness watches the others), its SC set counts the weak outcomes
                advice = self.analyses.advice(program) if self.backend.takes_advice else None
                hist = self.backend.run(program, cfg, advice)
                # a wait loop runs first at a short budget: with timeouts, again at the profile's
                # unless the model says the wait may hang (stress.campaign.full_budget_again)
                again = full_budget_again(program, cfg, self.config_for().budget, hist.timeouts)
                if again is not None:
                    cfg = again
                    hist = self.backend.run(program, cfg, advice)
                self.state.run += self.backend.own_runs > own0  # run, not the cache's answer nor a stand-in's
                self.state.gpu_seconds += self.backend.gpu_seconds - gpu0
                verdict = prop.check(program, hist)
            except ProgramFault as e:
                self.quarantined.add(ph)
                self.state.quarantined += 1
                self.state.faults[e.kind] = self.state.faults.get(e.kind, 0) + 1
                qpath = quarantine(self.root, program, e, self.inner.describe(), cfg, worker=self.worker_id)
                st["unsupported"] += 1
                self._note_not_covered(program.name, f"quarantined: {e.kind}")
                self.save_state(force=True)  # the count in the state never lags the quarantine folder
                self._print(f"QUARANTINED {qpath.name}: {program.name}: {e} (worker restarted, campaign goes on)")
                self._refresh()
                return
            except GpuFault as e:  # in-process only (a supervised worker's comes back as ProgramFault "gpu-fault")
                st["unsupported"] += 1
                self._stop_on_gpu_fault(program, e, cfg)
            except (model.Unsupported, UserError) as e:
                st["unsupported"] += 1
                if str(e).startswith(DRIVER_ERROR):  # the driver refused it: kept for a person to diagnose
                    if keep_refused(self.root, program, str(e), self.inner.describe(), cfg):
                        e = UserError(f"{e} (the program kept in {self.root / REFUSED})")
                self._note_not_covered(program.name, e)
                self._refresh()
                return
            st["instances"] += hist.instances
            self.state.instances += hist.instances
            st["weak"] += self.analyses.weak_count(program, hist)
            self.tuner.ran(hist)
            if not first_failure and self.tuner.due(program):
                self._tune(program)
            if hist.timeouts:
                # a run stopped early counted once: not again when the evidence cache answers it
                self.state.count_timeouts(hist.timeouts, verdict.waits,
                                          self.backend.fresh_runs > fresh0 and bool(dict(hist.meta).get("stopped_early")))
            if verdict.status == "unsupported":
                st["unsupported"] += 1
                self._note_not_covered(program.name, verdict.reason)
            elif not verdict.failed and properties.checked_nothing(hist):  # counted and listed like the oracle's gaps
                st["unsupported"] += 1
                self._note_not_covered(program.name, "SASS not fully checked (the static oracle could not map every "
                                                     "memory operation or synchronisation)")
            self._refresh()
            if verdict.failed:
                st["failures"] += 1
                from ..corpus import match_known, reproduction, verdict_class, verdict_hits, verdict_signature

                sig = verdict_signature(program, verdict)
                key = verdict_class(program.name, verdict)
                known = match_known(key, self.known_classes)
                if sig in self.known or key in self.classes or known or key in self._raw_classes:
                    # its class has an entry or is known: a variant, counted (while generating, not
                    # while shrinking another finding); look elsewhere (shrinks avoid it too).  Per
                    # shape: "known" a class of the known list, "repeats" one with an entry already
                    # (saved this session or before) -- "known" counted both
                    st["known" if known else "repeats"] = st.get("known" if known else "repeats", 0) + 1
                    if not first_failure:
                        self._variant(key, sig, verdict)
                    return
                if not target_rate:
                    target_rate.append(reproduction(verdict_hits(verdict), hist.instances)["rate"] or 1.0)
                    first_failure.append(time.monotonic())
                keys.add(getattr(verdict, "class_key", ""))
                k = size_key(program)
                if not best or k < best[0][0]:
                    best[:] = [(k, program, verdict, hist, cfg)]
                raise _failed_as(getattr(verdict, "class_key", ""))(program, verdict, hist, cfg)

        db = example_database(self.state_dir / "hypothesis", self._run_namespace(), read_only=self.batch > 1 and not (replay or resume),
                              seed=resume.choices if resume else None)
        ahead: list[tuple[Program, int]] = []  # drawn, not judged yet: (program, its draw's index)
        drawn = [0]  # the programs drawn in this run

        def judge_ahead() -> None:
            """Judge the programs drawn ahead, compiled and checked as one batch.  The first new
            failure is replayed by the next run; the batch's other programs are judged still
            (their compiles are done: variants counted, programs counted), a second new failure
            among them is counted as a failure and left for a later draw to find."""
            batch = list(ahead)
            ahead.clear()
            if batch:
                self.backend.prepare([p for p, _ in batch], config_of)
            failed: tuple | None = None
            for p, index in batch:
                try:
                    judge(p)
                except PropertyFailed as e:
                    failed = failed or (index, program_hash(p)[:16], (p, e.verdict, e.hist, e.config))
                    first_failure.clear()  # judged as found while generating: the replay shrinks it
                    target_rate.clear()
                    best.clear()
                    keys.clear()
            if failed:
                raise _Replay(*failed)

        def speculate(program: Program) -> None:
            """A shrink candidate: judged when the evidence cache answers it, else kept for a batch."""
            now = time.monotonic()
            over = self.stop_requested or now > deadline or now - first_failure[0] > self.profile.shrink_seconds
            if not over and pruned(program):
                return
            if spec is not None and not over and not self.backend.answers(program, config_of(program)):
                if spec.keep(program):
                    check_kept(True)
                return
            try:
                judge(program)
            except PropertyFailed:  # the shrink's end (Hypothesis runs its best example again) or a step
                check_kept(True)
                raise

        def body(program: Program) -> None:
            drawn[0] += 1
            if resume and drawn[0] == 1:
                if program_hash(program)[:16] == resume.program_hash:
                    judge(program)  # it fails (the evidence cache answers): Hypothesis shrinks on from it
                # Hypothesis did not start from the batch's candidate, or its class got an entry meanwhile
                # (another worker's): the best so far is saved
                raise _ShrinkTimeout()
            if replay and drawn[0] < replay[0]:
                return  # judged by the run that drew ahead (it passed, or failed in a class known then)
            if replay and not first_failure and (drawn[0] > replay[0] or program_hash(program)[:16] != replay[1]):
                best[:] = [(0, *replay[2])]  # not the same draw, or it passed now: the batch's failure saved as it was
                raise _ShrinkTimeout()
            if spec is not None and first_failure:
                speculate(program)
                return
            if replay or resume or self.batch <= 1:
                judge(program)
                return
            if self.stop_requested or time.monotonic() > deadline:
                raise _Stop()
            ahead.append((program, drawn[0]))
            if len(ahead) >= self.batch:
                judge_ahead()

        strategy = strategies.weighted(self.profile.shapes, self.profile.options)
        test = settings(
            database=db,
            max_examples=self.profile.max_examples,
            deadline=None,
            derandomize=False,  # explicit: a loaded settings profile (the test suite's is derandomized) must not fix the draws
            suppress_health_check=list(HealthCheck),
            phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink),
            verbosity=Verbosity.quiet,
            report_multiple_bugs=False,
            print_blob=False,
        )(seed(self.state.seed * 1_000_003 + self.state.run_index)(given(strategy)(body)))
        try:
            test()
            judge_ahead()  # the run's last draws (max_examples reached)
        except _Replay as e:
            self._replay = e.args
            return "replay"
        except ShrinkRestart as e:
            self._resume = e.args[0]
            return "resume"
        except PropertyFailed as e:
            self._record(e.program, e.verdict, e.hist, e.config, shrunk=True)
            return "finding"
        except _ShrinkTimeout:
            _, p, v, h, c = best[0]
            self._record(p, v, h, c, shrunk=False)
            return "finding"
        except _Stop:
            if best:  # interrupted while shrinking: keep the smallest failing program seen so far
                _, p, v, h, c = best[0]
                if not self.stop_requested and not self.stopped_by_fault:  # the deadline, not Ctrl-C or a GPU fault
                    self._cut(f"{p.name}: the shrink stopped at the deadline: the smallest failing program so far is saved "
                              "(not fully shrunk)")
                self._record(p, v, h, c, shrunk=False)
            return "stopped"
        except Flaky:
            if best:
                _, p, v, h, c = best[0]
                self._record(p, v, h, c, shrunk=False)
            return "flaky"
        except BaseException as e:  # Hypothesis wraps a _Stop raised inside its engine sometimes
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            cause: BaseException | None = e
            while cause is not None and not isinstance(cause, (_Stop, _ShrinkTimeout, PropertyFailed, _Replay, ShrinkRestart)):
                cause = cause.__cause__ or cause.__context__
            if isinstance(cause, _Replay):
                self._replay = cause.args
                return "replay"
            if isinstance(cause, ShrinkRestart):
                self._resume = cause.args[0]
                return "resume"
            if isinstance(cause, PropertyFailed):
                self._record(cause.program, cause.verdict, cause.hist, cause.config, shrunk=True)
                return "finding"
            if isinstance(cause, _ShrinkTimeout) and best:
                _, p, v, h, c = best[0]
                self._record(p, v, h, c, shrunk=False)
                return "finding"
            if isinstance(cause, _Stop):
                return "stopped"
            raise
        return "exhausted"

    # -- display ---------------------------------------------------------------------------

    _live_obj: Any = None
    _last_status = 0.0

    def _table(self) -> Any:
        return live_table(self)

    def _busy(self, sess: float) -> str:
        """``GPU busy 37%,  ``: this session's GPU time (CUDA events around the harness launches)
        over its wall time; empty on a backend that runs nothing on a GPU."""
        gpu = self.state.gpu_seconds - self._g0
        return f"GPU busy {gpu / sess:.0%}  " if gpu > 0 else ""

    def _refresh(self) -> None:
        self.save_state()
        now = time.monotonic()
        if self._live_obj is not None:
            if now - self._last_status > 0.25:
                self._live_obj.update(self._table())
                self._last_status = now
        elif now - self._last_status > self.status_every:
            self._last_status = now
            print(status_text(self, max(1e-9, now - self._t0)), file=self.out, flush=True)

    # -- main loop -------------------------------------------------------------------------

    def _lock(self) -> Any:
        """One campaign per corpus at a time (a parallel campaign's parent holds the corpus lock,
        each worker its own)."""
        return lock_corpus(self.own_dir, what="another campaign is running on this corpus" if not self.worker_id
                           else f"worker {self.worker_id} is already running on this corpus")

    def run(self, seconds: float, started: float | None = None) -> CampaignResult:
        """Run for ``seconds`` from ``started`` (a ``time.monotonic()`` reading: when the command
        started, so that the backend's start-up counts; default: now)."""
        lock = self._lock()
        try:
            return self._run(seconds, started)
        finally:
            lock.close()
            close = getattr(self.inner, "close", None)
            if close is not None and getattr(self, "close_backend", False):
                close()

    def _run(self, seconds: float, started: float | None = None) -> CampaignResult:
        self._t0 = time.monotonic()
        self._elapsed_base = self.state.elapsed
        self._p0, self._i0, self._g0, self._r0 = self.state.programs, self.state.instances, self.state.gpu_seconds, self.state.run
        # the deadline counts from the command's start (the backend's worker process started before this)
        self.end, self.seconds = Deadline(min(self._t0, started if started is not None else self._t0) + seconds), seconds
        deadline = self.end.at - end_reserve(seconds)  # generating and shrinking stop here; the rest ends the session
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.save_state(force=True)  # this session counts from now on, even if it is killed next
        old_handlers = {}

        def on_signal(signum, frame):
            if self.stop_requested:
                raise KeyboardInterrupt
            self.stop_requested = True

        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                old_handlers[sig] = signal.signal(sig, on_signal)
            except ValueError:  # not the main thread
                pass
        head = (f"fuzzgpu campaign: profile {self.profile.name} ({self.profile.path}), property {self.prop.name}, "
                f"seed {self.state.seed}, corpus {self.root}" + (f" (resumed: session {self.state.sessions})" if self.resumed else ""))
        print(head, file=self.out, flush=True)
        if self.note:
            print(self.note, file=self.out, flush=True)
        use_live = self.live if self.live is not None else (hasattr(self.out, "isatty") and self.out.isatty())
        reason = "time"
        live_cm = None
        runs = 0
        try:
            if use_live:
                from rich.console import Console
                from rich.live import Live

                live_cm = Live(self._table(), console=Console(file=self.out), refresh_per_second=4, transient=False)
                self._live_obj = live_cm.__enter__()
            while True:
                if self.stopped_by_fault:
                    reason = self.stopped_by_fault
                    break
                if self.stop_requested:
                    reason = "interrupted"
                    break
                if time.monotonic() >= deadline:
                    reason = "time"
                    break
                try:
                    why = self._one_run(deadline, replay=self._replay, resume=self._resume)
                finally:
                    self._flush_variants()
                self._replay = self._replay if why == "replay" else None
                self._resume = self._resume if why == "resume" else None
                if why in ("finding", "exhausted", "flaky"):
                    self.state.run_index += 1
                self.save_state(force=True)
                if self.max_findings is not None and len(self.session_findings) >= self.max_findings:
                    reason = f"found {len(self.session_findings)} finding(s) (--max-findings)"
                    break
                runs += why not in ("replay", "resume")  # a batch's failure, its replay and its shrink's batches: one run
                if self.max_runs is not None and runs >= self.max_runs:
                    reason = f"{runs} Hypothesis run(s) done"
                    break
        finally:
            if live_cm is not None:
                live_cm.__exit__(None, None, None)
                self._live_obj = None
            for sig, h in old_handlers.items():
                signal.signal(sig, h)
            self.save_state(force=True)
        if self.stop_requested and not self.stopped_by_fault:
            reason = "interrupted"
        print(f"[finishing] ended: {reason}; writing the report", file=self.out, flush=True)
        report_dir = write_report(self, reason)
        return CampaignResult(self.state, self.new_findings, reason, report_dir, self.inner.describe(), self.note,
                              time.monotonic() - self._t0, self.state.programs - self._p0, self.state.instances - self._i0,
                              list(self.unsaved), self.stopped_by_fault, self.state.run - self._r0)
