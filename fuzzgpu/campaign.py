"""Campaigns: long fuzzing runs with a profile, a backend, a time budget and a corpus.

The engine is Hypothesis, for generation *and* shrinking: the property is a Hypothesis test over
the profile's strategy (:func:`fuzzgpu.strategies.weighted`); a failing program is shrunk by
Hypothesis and saved to the corpus (deduplicated by signature); then a new Hypothesis run starts
with the next seed, until the time budget is spent.  Backends are wrapped in the evidence cache
(:mod:`fuzzgpu.evidence`), so Hypothesis sees a deterministic function: a program asked about twice
gets the same evidence.  Once a failure is seen at rate ``r``, every shrink candidate is run with at
least ``3/r`` instances (95% chance to see the failure again if it is still there).

Everything lives in the corpus folder: findings (``*.json`` + ``*.litmus``), ``.fuzzgpu/state.json``
(totals, the run index, per-shape statistics), ``.fuzzgpu/hypothesis`` (Hypothesis's example database:
a shrink interrupted by a kill resumes from its best example) and ``.fuzzgpu/evidence``.  All files
are written atomically, so a kill at any moment loses nothing saved, and a restart continues.

Profiles (``strategies/*.toml``, also shipped as ``fuzzgpu/profiles/*.toml``) select and weight the
shapes and annotations and set the stress settings: see :func:`load_profile`.
"""

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .backends.base import RunConfig
from .errors import UserError
from .evidence import EvidenceBackend, EvidenceCache
from .files import read_regular, write_atomic, write_temp
from .ir import Program
from .backends import make_backend  # noqa: F401 -- public name of this module
from .profiles import (  # noqa: F401 -- public names of this module
    MAX_PROFILE_INT, MAX_SIM_INSTANCES, PROFILE_NAMES, Profile, ProfileError, load_profile, profile_path,
)

RAW_DIR = "raw"  # findings that could not be saved as corpus entries (D/raw/<signature>.json)
STATE_VERSION = 1

# --------------------------------------------------------------------------------------------
# The engine
# --------------------------------------------------------------------------------------------


class _Stop(BaseException):
    """Raised inside the Hypothesis test to end a run now (time up, Ctrl-C): a BaseException, so
    Hypothesis neither shrinks nor retries it."""


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
    failures apart by exception type, so a shrink keeps to the kind it started from (a race of one
    class does not shrink into another)."""
    return type(f"PropertyFailed_{key}", (PropertyFailed,), {}) if key else PropertyFailed


def size_key(p: Program) -> tuple:
    """Smaller is simpler: threads, memory operations, instructions, then the JSON text."""
    from .ir import program_to_json

    mem = sum(1 for t in p.threads for i in t.code if hasattr(i, "loc") or hasattr(i, "dst_loc"))
    return (len(p.threads), mem, sum(len(t.code) for t in p.threads), len(json.dumps(program_to_json(p))))


def _new_shape_stats() -> dict[str, float]:
    return {"programs": 0, "instances": 0, "weak": 0, "failures": 0, "unsupported": 0, "findings": 0}


@dataclass
class State:
    profile: str
    backend: str
    property: str
    seed: int
    run_index: int = 0
    sessions: int = 0
    programs: int = 0
    instances: int = 0
    elapsed: float = 0.0
    last_finding_elapsed: float | None = None
    findings: list[dict[str, Any]] = field(default_factory=list)
    duplicates: int = 0
    shapes: dict[str, dict[str, float]] = field(default_factory=dict)
    not_covered: dict[str, int] = field(default_factory=dict)  # why programs were not judged: reason -> count
    quarantined: int = 0  # programs that hung or crashed the backend's worker (corpus/quarantine/)
    faults: dict[str, int] = field(default_factory=dict)  # hang / crash / error -> count
    #: timeouts: instances, programs, and programs by the model's verdict on their waits
    #: (must-complete: findings; may-hang: expected; unknown)
    timeouts: dict[str, int] = field(default_factory=dict)
    worker: str | None = None  # the worker id in a parallel campaign
    #: findings by root cause (corpus.finding_class): class key -> {"id", "file" (the entry that
    #: represents it, "" for a known class), "findings" (distinct findings of this campaign in the
    #: class), "known" (a class of the known-findings list: counted, not saved), "writeup", "kinds"}
    classes: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: findings that could not be saved as corpus entries: {"signature", "class", "raw" (the file
    #: under D/raw/ that keeps them, or null when even that failed), "error"}
    save_errors: list[dict[str, Any]] = field(default_factory=list)
    #: stress tuned per shape family (fuzzgpu.stress_campaign.CampaignTuner): GPU-seconds spent
    #: tuning and running, and per family the tuned [stress] knobs and their weak rates
    tuning: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["schema"] = "fuzzgpu.campaign-state"
        d["version"] = STATE_VERSION
        return d

    @classmethod
    def load(cls, path: Path) -> State | None:
        """The state saved in ``path`` (None when there is none), the whole document validated
        against :data:`fuzzgpu.schema.STATE_SCHEMA` first: a damaged, foreign or future-version
        state, or one with a wrong field anywhere, is refused in one line."""
        from . import schema
        from .errors import EnvError, clip
        from .files import UnreadableFile

        try:
            d = json.loads(read_regular(path, 64 << 20))
        except FileNotFoundError:
            return None
        except UnreadableFile as e:
            raise UserError(f"{path}: cannot read the campaign state: {e}") from None
        except OSError as e:  # permissions, /proc, a failing disk: the environment (exit 3)
            raise EnvError(f"{path}: cannot read the campaign state: {e.strerror or e}") from None
        except (ValueError, RecursionError) as e:
            raise UserError(f"{path}: damaged campaign state ({type(e).__name__}); move it away to start afresh") from None
        if not isinstance(d, dict) or d.get("schema") != "fuzzgpu.campaign-state":
            raise UserError(f"{path}: not a fuzzgpu campaign state")
        v = d.get("version")
        if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= STATE_VERSION:
            raise UserError(f"{path}: campaign state version {clip(repr(v), 60)} is not one this fuzzgpu reads (1..{STATE_VERSION})")
        try:
            schema.check("state", d)
        except schema.SchemaError as e:
            raise UserError(f"{path}: damaged campaign state: {e}; move it away to start afresh") from None
        d.pop("schema", None)
        d.pop("version", None)
        names = {f.name: f for f in dataclasses.fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        return cls(**kw)


@dataclass
class CampaignResult:
    state: State
    new_findings: list[dict[str, Any]]
    reason: str
    report_dir: Path
    backend_description: str
    note: str
    session_seconds: float
    session_programs: int
    session_instances: int
    unsaved: list[str] = field(default_factory=list)  # findings kept raw (not saved as entries) this session


def lock_corpus(state_dir: Path, name: str = "lock", what: str = "another campaign is running on this corpus") -> Any:
    """An exclusive lock on ``state_dir/name`` (released by the OS when the process ends, even by
    SIGKILL); a UserError when another process holds it."""
    state_dir.mkdir(parents=True, exist_ok=True)
    f = open(state_dir / name, "a+")  # noqa: SIM115 -- held open for the whole campaign
    try:
        import fcntl

        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except ImportError:  # not POSIX: no lock
        pass
    except OSError:
        f.close()
        raise UserError(f"{state_dir.parent}: {what} (lock {state_dir / name})") from None
    return f


def _digest(data: bytes) -> str:
    import hashlib

    return hashlib.sha384(data).hexdigest()[:16]


def example_database(path: Path, namespace: bytes) -> Any:
    """Hypothesis's example database for one campaign run, through Hypothesis's public API only
    (an :class:`hypothesis.database.ExampleDatabase` subclass implementing ``save``, ``fetch``,
    ``delete`` and ``move``).

    ``path/<digest of namespace + key>/<digest of value>``: one file per value, written to a temp
    file *in its own key folder*, fsynced and renamed (a kill leaves the old file or the new one,
    never a torn one); a value's file name is its hash, so several processes may share the folder.
    ``namespace`` keeps each run's keys apart (profile, backend, property, seed, run index): a
    resumed run finds its own failing examples and shrink progress, and never another run's."""
    from hypothesis.database import ExampleDatabase

    class CampaignDatabase(ExampleDatabase):
        def __init__(self, root: Path, ns: bytes) -> None:
            super().__init__()
            self.root = root
            self.ns = ns

        def __repr__(self) -> str:
            return f"CampaignDatabase({str(self.root)!r})"

        def _key_dir(self, key: bytes) -> Path:
            return self.root / _digest(self.ns + b"\0" + key)

        def save(self, key: bytes, value: bytes) -> None:
            d = self._key_dir(key)
            target = d / _digest(value)
            try:
                if target.exists():
                    return
                d.mkdir(parents=True, exist_ok=True)
                os.replace(write_temp(d, value), target)
            except OSError:  # a full disk loses a shrink hint, never the campaign
                pass

        def fetch(self, key: bytes) -> Any:
            d = self._key_dir(key)
            try:
                names = sorted(p for p in os.listdir(d) if not p.startswith("."))
            except OSError:
                return
            for name in names:
                try:
                    yield (d / name).read_bytes()
                except OSError:  # deleted by another process meanwhile
                    continue

        def delete(self, key: bytes, value: bytes) -> None:
            try:
                (self._key_dir(key) / _digest(value)).unlink()
            except OSError:
                pass

        def move(self, src: bytes, dest: bytes, value: bytes) -> None:
            if src == dest:
                self.save(src, value)
                return
            self.save(dest, value)  # saved before deleted: a kill in between loses nothing
            self.delete(src, value)

    db = CampaignDatabase(path, namespace)
    # temp files of a writer killed between mkstemp and rename are named .tmp-* (never fetched:
    # fetch skips dot files); clear old ones
    try:
        for t in path.glob("*/.tmp-*"):
            if time.time() - t.stat().st_mtime > 60:
                t.unlink()
    except OSError:
        pass
    return db


class Campaign:
    def __init__(self, profile: Profile, backend: Any, corpus_dir: str | Path, prop: str = "model", seed: int | None = None,
                 note: str = "", out: Any = None, live: bool | None = None, status_every: float = 5.0,
                 worker_id: str | None = None, known: str | Path | None = None) -> None:
        from . import properties
        from .corpus import KNOWN_FILE, Corpus, load_known

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
        self.known_path = Path(known) if known is not None else (self.root / KNOWN_FILE if (self.root / KNOWN_FILE).is_file() else None)
        self.known_classes = load_known(self.known_path) if self.known_path is not None else {}
        self.classes: dict[str, Path] = self.corpus.classes()  # class key -> its entry
        self._seen: set[tuple[str, str]] = set()  # (class, signature) counted this session
        self._pending_variants: dict[tuple[str, Path], list[str]] = {}  # variants not yet counted in the corpus
        self.stop_requested = False
        self.max_findings: int | None = None
        self.max_runs: int | None = None  # stop after this many Hypothesis runs this session (None: the whole time)
        self.new_findings: list[dict[str, Any]] = []
        self.unsaved: list[str] = []  # signatures of findings kept raw this session (not saved as entries)
        self._raw_classes: set[str] = set()  # classes whose finding could only be kept raw (its variants: counted)
        self.session_findings: list[dict[str, Any]] = []  # new ones and ones another worker saved first
        from .workers import quarantined_hashes

        self.quarantined: set[str] = quarantined_hashes(self.root)
        self._last_save = 0.0
        self._analysis_cache: dict[Program, Any] = {}
        from .stress_campaign import CampaignTuner

        self.tuner = CampaignTuner(profile.tune_share, getattr(backend, "name", ""), self.state.tuning,
                                   budget_s=profile.tune_budget_s)

    # -- helpers ---------------------------------------------------------------------------

    def _reconcile(self) -> None:
        """Entries saved by an earlier session that died before it updated its state (a kill
        between the two atomic writes) are added to the state's list of findings."""
        known = {f["signature"] for f in self.state.findings}
        for e in self.corpus.entry_paths():
            try:
                d = json.loads(e.read_text())
            except (OSError, ValueError, RecursionError):
                continue
            if not isinstance(d, dict) or not isinstance(d.get("campaign"), dict) or not isinstance(d.get("program", {}), dict) \
                    or not isinstance(d.get("verdict", {}), dict) or not isinstance(d.get("reproduction", {}), dict):
                continue
            sig = d.get("signature")
            if isinstance(sig, str) and sig not in known and d.get("campaign", {}).get("seed") == self.state.seed:
                known.add(sig)
                v = d.get("verdict", {})
                self.state.findings.append({"signature": sig, "file": e.name, "shape": d.get("shape", "?"),
                                            "threads": len(d.get("program", {}).get("threads", [])),
                                            "summary": f"{v.get('property', '?')}: FAIL ({v.get('reason', '')})",
                                            "shrunk": bool(d.get("shrunk")), "rate": d.get("reproduction", {}).get("rate", 0)})
                try:
                    from .corpus import entry_class, finding_kinds

                    kinds = finding_kinds(d)
                    self.state.findings[-1]["kinds"] = kinds
                    self._note_class(entry_class(d), sig, e.name, kinds)
                except (KeyError, TypeError, AttributeError):
                    pass

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
        return dataclasses.replace(base, instances=max(n, instances or 0), seed=self.state.seed)

    def save_state(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._last_save > 1.0:
            self.state.elapsed = self._elapsed_base + (time.monotonic() - self._t0)
            write_atomic(self.state_path, json.dumps(self.state.to_json(), indent=1))
            self._last_save = now

    def _weak_count(self, program: Program, hist: Any) -> int:
        if not hist.counts:
            return 0
        from . import model

        a = self._analysis_cache.get(program)
        if a is None:
            try:
                a = model.analyse(program)
            except model.Unsupported:
                a = False
            if len(self._analysis_cache) > 2000:
                self._analysis_cache.clear()
            self._analysis_cache[program] = a
        if a is False:
            return 0
        from .properties import unwritten_keys  # a value no store wrote is a fault, not a weak outcome

        return sum(c for o, c in hist.counts if o not in a.sc and not unwritten_keys(program, dict(o)))

    def _tune(self, program: Program) -> None:
        """Tune the stress of ``program``'s shape family (a share of the GPU time: stress_campaign)."""
        a = self._analysis_cache.get(program)
        if not a or not a.weak:
            return  # no weak outcome to expose (or the oracle does not cover it): nothing to tune for
        from .stress_campaign import shape_family

        try:
            rec = self.tuner.tune(program, a.sc, self.config_for(), self.inner.run, seed=self.state.seed)
        except Exception as e:  # noqa: BLE001 -- a failed tuning run costs the family its tuning, not the campaign
            self.tuner.failed(program, self.config_for(), f"{type(e).__name__}: {e}")
            self._print(f"TUNING FAILED for {shape_family(program)} ({type(e).__name__}: {e}); it keeps the profile's stress")
            return
        self._print(f"TUNED {shape_family(program)}: {rec['weak_per_s']:.3g} weak/GPU-s with {rec['describe']} "
                    f"(profile stress {rec['default_weak_per_s']:.3g}/s; {rec['spent_s']:.2f} GPU-s)")
        self.save_state(force=True)

    def _note_class(self, key: str, sig: str, file: str, kinds: list[str], known: Any = None) -> bool:
        """Count finding ``sig`` in class ``key`` (once per signature); True when it was not counted
        before."""
        from .corpus import MAX_VARIANTS, class_id

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
        from .corpus import match_known

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
        from . import corpus, fixes

        try:
            verdict = fixes.attach(program, verdict)  # the weakest single change that removes the finding
        except Exception:  # noqa: BLE001 -- a finding is saved without its fix rather than lost
            pass
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

    def _keep_raw(self, program: Program, verdict: Any, hist: Any, config: RunConfig, entry: Mapping[str, Any] | None,
                  sig: str, key: str, error: BaseException) -> None:
        """``D/raw/<signature>.json``: the finding as it was (the entry when it was made, else the
        program, the verdict, the histogram and the configuration) and the error that kept it out
        of the corpus; a line on screen and in the report.  When even that cannot be written, the
        state and the report still name the finding and the error."""
        from .ir import program_to_json

        why = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"[:300]
        rec: dict[str, Any] = {"schema": "fuzzgpu.raw-finding", "version": 1, "error": why, "signature": sig, "class": key,
                               "found": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        if entry is not None:
            rec["entry"] = entry
        else:
            for k, make in (("program", lambda: program_to_json(program)), ("verdict", verdict.to_json),
                            ("histogram", hist.to_json), ("stress", lambda: config.to_json() if hasattr(config, "to_json") else {})):
                try:
                    rec[k] = make()
                except Exception as e2:  # noqa: BLE001 -- keep what can be kept
                    rec[k] = f"(not serialisable: {type(e2).__name__})"
        raw: str | None = f"{RAW_DIR}/{sig[:16]}.json"
        try:
            write_atomic(self.root / RAW_DIR / f"{sig[:16]}.json", json.dumps(rec, indent=1, sort_keys=True, default=repr) + "\n")
        except Exception as e2:  # noqa: BLE001 -- a full disk: the state keeps the record of it
            raw = None
            why += f"; keeping it raw failed too ({type(e2).__name__}: {e2})"
        self.known.add(sig)  # not again this session (shrinks avoid it)
        self._raw_classes.add(key)  # nor its class: one raw record per class, the others counted
        self._note_class(key, sig, "", list(verdict.kinds))
        self.state.classes[key]["raw"] = raw
        self.state.save_errors.append({"signature": sig, "class": key, "raw": raw, "error": why[:400],
                                       "shape": program.name, "summary": verdict.summary()[:300]})
        self.unsaved.append(sig)
        self._print(f"FINDING NOT SAVED to the corpus ({why}); " + (f"kept raw in {self.root / raw}" if raw else "not even kept raw")
                    + f": {program.name}: {verdict.summary()}  (the campaign goes on)")

    def _count_timeouts(self, n: int, verdict: Any) -> None:
        """Timed-out instances and programs, by the model's verdict on the program's waits:
        ``must-complete`` (a finding), ``may-hang`` (expected, also must-hang), ``unknown``."""
        t = self.state.timeouts
        t["instances"] = t.get("instances", 0) + n
        t["programs"] = t.get("programs", 0) + 1
        kind = {"must-complete": "must-complete", "may-hang": "may-hang", "must-hang": "may-hang"}.get(verdict.waits, "unknown")
        t[kind] = t.get(kind, 0) + 1

    def _note_not_covered(self, shape: str, why: Any) -> None:
        text = f"{shape}: {type(why).__name__ + ': ' if isinstance(why, BaseException) else ''}{str(why).splitlines()[0] if str(why) else ''}"[:240]
        nc = self.state.not_covered
        if text in nc or len(nc) < 30:
            nc[text] = nc.get(text, 0) + 1

    def _print(self, line: str) -> None:
        if self._live_obj is not None:
            self._live_obj.console.print(line)
        else:
            print(line, file=self.out, flush=True)

    # -- the Hypothesis run ----------------------------------------------------------------

    def _one_run(self, deadline: float) -> str:
        """One Hypothesis run (generation until a failure, then shrinking); returns why it ended."""
        from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
        from hypothesis.errors import Flaky

        from . import model, strategies

        target_rate: list[float] = []
        best: list[tuple] = []
        prop = self.prop
        from .evidence import program_hash
        from .workers import ProgramFault, quarantine

        self.known |= self.corpus.signatures()  # findings other workers saved since the last run
        for key, path in self.corpus.classes().items():  # and their classes
            self.classes.setdefault(key, path)

        first_failure: list[float] = []

        def body(program: Program) -> None:
            if self.stop_requested or time.monotonic() > deadline:
                raise _Stop()
            if first_failure and time.monotonic() - first_failure[0] > self.profile.shrink_seconds:
                raise _ShrinkTimeout()
            n = None
            if target_rate and target_rate[0] > 0:
                n = min(self.profile.max_instances, math.ceil(3 / target_rate[0]))
            cfg, _ = self.tuner.stress_for(program, self.config_for(n))
            st = self.state.shapes.setdefault(program.name, _new_shape_stats())
            st["programs"] += 1
            self.state.programs += 1
            ph = program_hash(program)[:16]
            if ph in self.quarantined:  # hung or crashed a worker before: skipped
                st["unsupported"] += 1
                self._note_not_covered(program.name, "quarantined (hung or crashed the backend before)")
                return
            try:
                hist = self.backend.run(program, cfg)
                verdict = prop.check(program, hist)
            except ProgramFault as e:
                self.quarantined.add(ph)
                self.state.quarantined += 1
                self.state.faults[e.kind] = self.state.faults.get(e.kind, 0) + 1
                qpath = quarantine(self.root, program, e, self.inner.describe(), cfg)
                st["unsupported"] += 1
                self._note_not_covered(program.name, f"quarantined: {e.kind}")
                self.save_state(force=True)  # the count in the state never lags the quarantine folder
                self._print(f"QUARANTINED {qpath.name}: {program.name}: {e} (worker restarted, campaign goes on)")
                self._refresh()
                return
            except (model.Unsupported, UserError) as e:
                st["unsupported"] += 1
                self._note_not_covered(program.name, e)
                self._refresh()
                return
            st["instances"] += hist.instances
            self.state.instances += hist.instances
            st["weak"] += self._weak_count(program, hist)
            self.tuner.ran(hist)
            if not first_failure and self.tuner.due(program):
                self._tune(program)
            if hist.timeouts:
                self._count_timeouts(hist.timeouts, verdict)
            if verdict.status == "unsupported":
                st["unsupported"] += 1
                self._note_not_covered(program.name, verdict.reason)
            elif not verdict.failed and not hist.instances and dict(hist.meta).get("sass_unchecked"):
                # static (nothing executed) and its SASS oracle could not account for everything: nothing found
                # there is not "passed" (issue 12, item 6); counted and listed like the oracle's gaps
                st["unsupported"] += 1
                self._note_not_covered(program.name, "SASS not fully checked (the static oracle could not map every "
                                                     "memory operation or synchronisation)")
            self._refresh()
            if verdict.failed:
                st["failures"] += 1
                from .corpus import match_known, reproduction, verdict_class, verdict_hits, verdict_signature

                sig = verdict_signature(program, verdict)
                key = verdict_class(program.name, verdict)
                if sig in self.known or key in self.classes or match_known(key, self.known_classes) or key in self._raw_classes:
                    # its class has an entry or is known: a variant, counted (while generating, not
                    # while shrinking another finding); look elsewhere (shrinks avoid it too)
                    st["known"] = st.get("known", 0) + 1
                    if not first_failure:
                        self._variant(key, sig, verdict)
                    return
                if not target_rate:
                    target_rate.append(reproduction(verdict_hits(verdict), hist.instances)["rate"] or 1.0)
                    first_failure.append(time.monotonic())
                k = size_key(program)
                if not best or k < best[0][0]:
                    best[:] = [(k, program, verdict, hist, cfg)]
                raise _failed_as(getattr(verdict, "class_key", ""))(program, verdict, hist, cfg)

        strategy = strategies.weighted(self.profile.shapes, self.profile.options)
        test = settings(
            database=example_database(self.state_dir / "hypothesis", self._run_namespace()),
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
            cause = e
            while cause is not None and not isinstance(cause, (_Stop, _ShrinkTimeout, PropertyFailed)):
                cause = cause.__cause__ or cause.__context__
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

    def _table(self):
        from rich.table import Table

        el = self._elapsed_base + (time.monotonic() - self._t0)
        sess = max(1e-9, time.monotonic() - self._t0)
        t = Table(title=f"fuzzgpu campaign  profile={self.profile.name}  property={self.prop.name}  {self.inner.describe()}",
                  title_justify="left")
        for col in ("shape", "programs", "instances", "weak rate", "failures", "entries", "not covered"):
            t.add_column(col, justify="right" if col != "shape" else "left")
        for name, s in sorted(self.state.shapes.items()):
            rate = f"{s['weak'] / s['instances']:.2e}" if s["instances"] else "-"
            t.add_row(name, str(int(s["programs"])), f"{int(s['instances']):.3g}", rate, str(int(s["failures"])),
                      str(int(s["findings"])), str(int(s["unsupported"])))
        since = "never" if self.state.last_finding_elapsed is None else f"{el - self.state.last_finding_elapsed:.0f} s ago"
        t.caption = (f"{(self.state.programs - self._p0) / sess:.1f} programs/s  {(self.state.instances - self._i0) / sess:.3g} instances/s  "
                     f"{classes_phrase(self.state.classes)}, {len(self.state.findings)} entr{'y' if len(self.state.findings) == 1 else 'ies'}"
                     + (f", {len(self.state.save_errors)} NOT SAVED (kept raw)" if self.state.save_errors else "")
                     + f"  last finding {since}  elapsed {el:.0f} s (this session {sess:.0f} s)")
        return t

    def _refresh(self) -> None:
        self.save_state()
        now = time.monotonic()
        if self._live_obj is not None:
            if now - self._last_status > 0.25:
                self._live_obj.update(self._table())
                self._last_status = now
        elif now - self._last_status > self.status_every:
            self._last_status = now
            sess = max(1e-9, now - self._t0)
            print(f"[{sess:6.0f} s] programs {self.state.programs} ({(self.state.programs - self._p0) / sess:.1f}/s), "
                  f"instances {self.state.instances:.3g}, {classes_phrase(self.state.classes)}"
                  + (f", {len(self.state.save_errors)} not saved (kept raw)" if self.state.save_errors else ""), file=self.out, flush=True)

    # -- main loop -------------------------------------------------------------------------

    def _lock(self) -> Any:
        """One campaign per corpus at a time (a parallel campaign's parent holds the corpus lock,
        each worker its own)."""
        return lock_corpus(self.own_dir, what="another campaign is running on this corpus" if not self.worker_id
                           else f"worker {self.worker_id} is already running on this corpus")

    def run(self, seconds: float) -> CampaignResult:
        lock = self._lock()
        try:
            return self._run(seconds)
        finally:
            lock.close()
            close = getattr(self.inner, "close", None)
            if close is not None and getattr(self, "close_backend", False):
                close()

    def _run(self, seconds: float) -> CampaignResult:
        self._t0 = time.monotonic()
        self._elapsed_base = self.state.elapsed
        self._p0, self._i0 = self.state.programs, self.state.instances
        deadline = self._t0 + seconds
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
                if self.stop_requested:
                    reason = "interrupted"
                    break
                if time.monotonic() >= deadline:
                    reason = "time"
                    break
                try:
                    why = self._one_run(deadline)
                finally:
                    self._flush_variants()
                if why in ("finding", "exhausted", "flaky"):
                    self.state.run_index += 1
                self.save_state(force=True)
                if self.max_findings is not None and len(self.session_findings) >= self.max_findings:
                    reason = f"found {len(self.session_findings)} finding(s) (--max-findings)"
                    break
                runs += 1
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
        if self.stop_requested:
            reason = "interrupted"
        report_dir = write_report(self, reason)
        return CampaignResult(self.state, self.new_findings, reason, report_dir, self.inner.describe(), self.note,
                              time.monotonic() - self._t0, self.state.programs - self._p0, self.state.instances - self._i0,
                              list(self.unsaved))


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------


def report_text(c: Campaign, reason: str) -> str:
    s = c.state
    lines = [
        f"fuzzgpu campaign report ({time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())})",
        f"profile     {c.profile.name} ({c.profile.path})",
        f"backend     {c.inner.describe()}",
    ]
    if c.note:
        lines.append(f"note        {c.note}")
    lines += [
        f"property    {c.prop.name}: a finding is a program that breaks \"{c.prop.doc}\"",
        f"seed        {s.seed}   sessions {s.sessions}   Hypothesis runs {s.run_index}",
        f"ended       {reason}",
        f"totals      {s.programs} programs, {s.instances:.4g} instances, {s.elapsed:.1f} s",
        f"findings    {classes_phrase(s.classes)}; {len(s.findings)} corpus entries (one per class)"
        + (f"; {len(s.save_errors)} finding(s) NOT SAVED, kept raw in {c.root / RAW_DIR}" if s.save_errors else ""),
        f"known list  {c.known_path}: {len(c.known_classes)} known class(es)" if c.known_path else "known list  none (--known FILE, or DIR/known.json)",
        f"quarantined {s.quarantined} program(s) that hung or crashed the backend's worker"
        + (f" ({', '.join(f'{k} {v}' for k, v in sorted(s.faults.items()))}; see {c.root / 'quarantine'})" if s.quarantined else ""),
        timeouts_line(s.timeouts),
        c.tuner.note(),
        "",
        f"{'shape':<10} {'programs':>9} {'instances':>11} {'weak rate':>10} {'failures':>9} {'entries':>9} {'not covered':>12}",
    ]
    for name, st in sorted(s.shapes.items()):
        rate = f"{st['weak'] / st['instances']:.2e}" if st["instances"] else "-"
        lines.append(f"{name:<10} {int(st['programs']):>9} {int(st['instances']):>11.4g} {rate:>10} {int(st['failures']):>9} "
                     f"{int(st['findings']):>9} {int(st['unsupported']):>12}")
    if s.not_covered:
        lines += ["", "not covered (programs that were not judged, and why):"]
        for why, n in sorted(s.not_covered.items(), key=lambda kv: -kv[1])[:10]:
            lines.append(f"  {n:>6}  {why}")
    lines += class_lines(s.classes, s.findings)
    lines += save_error_lines(s.save_errors)
    lines += ["", exit_status_line(c.new_findings, c.unsaved)]
    return "\n".join(lines) + "\n"


def classes_phrase(classes: Mapping[str, Mapping[str, Any]]) -> str:
    """``N findings in K classes (M in J known classes)``."""
    n = sum(int(c.get("findings", 0)) for c in classes.values())
    known = [c for c in classes.values() if c.get("known")]
    kn = sum(int(c.get("findings", 0)) for c in known)
    text = f"{n} finding{'s' if n != 1 else ''} in {len(classes)} class{'es' if len(classes) != 1 else ''}"
    if known:
        text += f" ({kn} in {len(known)} known class{'es' if len(known) != 1 else ''}, not saved again)"
    return text


def _kinds_note(kinds: Any) -> str:
    kinds = list(kinds or ())
    if kinds == ["sass"]:
        return " [SASS only: no executed outcome broke the property; the compiled code can]"
    return ""


def class_lines(classes: Mapping[str, Mapping[str, Any]], findings: Any = ()) -> list[str]:
    """One line per class, most findings first: its entry (or its write-up, for a known class),
    how many findings it holds, and the class key; then the entries saved."""
    if not classes and not findings:
        return []
    out = ["", "classes (root causes; each holds the findings that share it, one corpus entry each):"]
    for key, c in sorted(classes.items(), key=lambda kv: (-int(kv[1].get("findings", 0)), kv[0])):
        n = int(c.get("findings", 0))
        where = (f"KNOWN, see {c.get('writeup')}" if c.get("known")
                 else c.get("file") or (f"{c['raw']} (NOT SAVED, kept raw)" if c.get("raw") else "(NOT SAVED)"))
        out.append(f"  {n:>6} finding{'s' if n != 1 else ' '}  {where}  {key}{_kinds_note(c.get('kinds'))}")
    if findings:
        out += ["", "entries saved (the representative of each class):"]
        for f in findings:
            out.append(_finding_line(f))
    return out


def save_error_lines(errors: Any) -> list[str]:
    if not errors:
        return []
    out = ["", "findings NOT SAVED as corpus entries (kept raw; nothing lost -- look at these first):"]
    for e in errors:
        out.append(f"  {e.get('raw') or '(not even kept raw)'}  {e.get('shape', '?')}: {e.get('summary', '')}  -- {e.get('error', '')}")
    return out


def exit_status_line(new: Any, unsaved: Any) -> str:
    """What the exit status of ``fuzzgpu campaign`` will be, and why."""
    if new or unsaved:
        what = f"{len(new)} new corpus entr{'ies' if len(new) != 1 else 'y'}" + (f" and {len(unsaved)} finding(s) kept raw" if unsaved else "")
        return f"exit status 1: {what} this session (1 means findings were saved; 0: none; 2: bad input; 3: environment)"
    return "exit status 0: no new finding this session (1 would mean findings were saved; 2: bad input; 3: environment)"


def timeouts_line(t: Mapping[str, int]) -> str:
    """``timeouts    N instance(s) in P program(s): F must complete (findings), E may hang (expected), U unknown``."""
    if not t.get("instances"):
        return "timeouts    none"
    return (f"timeouts    {t['instances']} instance(s) timed out in {t.get('programs', 0)} program(s): "
            f"{t.get('must-complete', 0)} whose waits must complete (findings), {t.get('may-hang', 0)} that may hang "
            f"(expected), {t.get('unknown', 0)} unknown")


def _finding_line(f: Mapping[str, Any]) -> str:
    more = "" if f.get("shrunk", True) else ", not fully shrunk"
    if list(f.get("kinds") or ()) == ["sass"]:
        more += ", SASS only"
    if f.get("saved_by_another"):
        more += ", saved first by another worker or campaign"
    if f.get("workers"):
        more += f"; found by {', '.join(f['workers'])}"
    return f"  {f['file']}  {f.get('shape', '?')} ({f.get('threads', '?')} threads{more}): {f.get('summary', '')}"


def write_report(c: Campaign, reason: str) -> Path:
    d = c.report_root / "report"
    d.mkdir(parents=True, exist_ok=True)
    text = report_text(c, reason)
    write_atomic(d / "report.txt", text)
    rep = {"schema": "fuzzgpu.campaign-report", "version": 1, "ended": reason, "profile": c.profile.name,
           "backend": c.inner.describe(), "note": c.note, "property": c.prop.name, "state": c.state.to_json()}
    plot_note = plot_weak_rates(c.state, d / "weak-rates.png", c.inner.describe())
    rep["plot"] = plot_note
    write_atomic(d / "report.json", json.dumps(rep, indent=1))
    return d


def plot_weak_rates(state: State, path: Path, backend: str) -> str:
    """A bar chart of weak (non-SC) rate per shape (findings per shape when nothing executed)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no plot (pip install matplotlib, or fuzzgpu[plot])"
    names = sorted(state.shapes)
    if not names:
        return "no programs ran: no plot"
    executed = any(state.shapes[n]["instances"] for n in names)
    fig, ax = plt.subplots(figsize=(max(5, 0.7 * len(names) + 2), 3.5))
    if executed:
        vals = [state.shapes[n]["weak"] / state.shapes[n]["instances"] if state.shapes[n]["instances"] else 0 for n in names]
        ax.bar(names, [v if v > 0 else float("nan") for v in vals], color="tab:blue")
        if any(v > 0 for v in vals):
            ax.set_yscale("log")
            floor = min(v for v in vals if v > 0)
            for i, v in enumerate(vals):
                if v == 0:
                    ax.annotate("0", (i, floor), ha="center", va="bottom", fontsize=8)
        ax.set_ylabel("weak (non-SC) outcomes / instance")
    else:
        ax.bar(names, [state.shapes[n]["failures"] for n in names], color="tab:red")
        ax.set_ylabel("programs with a SASS finding")
    ax.set_title(f"fuzzgpu weak rates per shape ({backend.split(':')[0]})", fontsize=9)
    plt.setp(ax.get_xticklabels(), rotation=30, ha="right", fontsize=8)
    fig.tight_layout()
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    os.replace(tmp, path)
    return str(path.name)


def run_campaign(profile: str, backend: str = "auto", seconds: float = 60, corpus_dir: str = "corpus", prop: str = "model",
                 seed: int | None = None, sim_fault: str | None = None, out: Any = None, live: bool | None = None,
                 max_findings: int | None = None, watchdog: float | None = None, worker_id: str | None = None,
                 isolate: bool = True, gpu_fault: str | None = None, known: str | None = None) -> CampaignResult:
    """One campaign.  ``isolate`` (the default): the backend runs in a supervised worker process
    (:class:`fuzzgpu.workers.SupervisedBackend`): a program that hangs or crashes it is quarantined
    and the campaign goes on."""
    prof = load_profile(profile)
    if isolate:
        from .backends.sim import parse_faults
        from .workers import DEFAULT_WATCHDOG, BackendSpec, SupervisedBackend

        if sim_fault and backend != "sim":
            raise UserError("--sim-fault is only for --backend sim")
        parse_faults(sim_fault)  # a bad --sim-fault is one line here, not in the worker
        if gpu_fault:
            from .backends.cuda import parse_gpu_faults

            if backend != "cuda":
                raise UserError("--gpu-fault is only for --backend cuda")
            parse_gpu_faults(gpu_fault)
        b = SupervisedBackend(BackendSpec(backend, sim_fault, prof.static_arch, gpu_fault), watchdog or DEFAULT_WATCHDOG)
        note = b.note + f"; backend in a supervised worker process (watchdog {b.watchdog:g} s + expected run time)"
    else:
        b, note = make_backend(backend, sim_fault=sim_fault, arch=prof.static_arch, gpu_fault=gpu_fault)
    try:
        c = Campaign(prof, b, corpus_dir, prop, seed, note, out, live, worker_id=worker_id, known=known)
    except BaseException:
        getattr(b, "close", lambda: None)()
        raise
    c.close_backend = isolate
    c.max_findings = max_findings
    return c.run(seconds)


# --------------------------------------------------------------------------------------------
# Parallel campaigns: one report from the workers' states
# --------------------------------------------------------------------------------------------


def combine_states(states: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The workers' states (``worker id -> state JSON``) as one: totals summed, per-shape
    statistics added, findings listed once per corpus file with the workers that found them."""
    out: dict[str, Any] = {"programs": 0, "instances": 0, "duplicates": 0, "quarantined": 0, "faults": {}, "timeouts": {}, "shapes": {},
                           "not_covered": {}, "findings": [], "elapsed": 0.0, "workers": sorted(states), "classes": {},
                           "save_errors": []}
    by_file: dict[str, dict[str, Any]] = {}
    for wid, st in sorted(states.items()):
        for k in ("programs", "instances", "duplicates", "quarantined"):
            v = st.get(k, 0)
            out[k] += v if isinstance(v, (int, float)) and not isinstance(v, bool) else 0
        out["elapsed"] = max(out["elapsed"], float(st.get("elapsed", 0) or 0))
        for k, v in (st.get("faults") or {}).items():
            out["faults"][k] = out["faults"].get(k, 0) + v
        for k, v in (st.get("timeouts") or {}).items():
            out["timeouts"][k] = out["timeouts"].get(k, 0) + v
        for name, sh in (st.get("shapes") or {}).items():
            acc = out["shapes"].setdefault(name, _new_shape_stats())
            for k, v in sh.items():
                acc[k] = acc.get(k, 0) + v
        for why, n in (st.get("not_covered") or {}).items():
            out["not_covered"][why] = out["not_covered"].get(why, 0) + n
        for key, c in (st.get("classes") or {}).items():
            acc = out["classes"].get(key)
            if acc is None:
                out["classes"][key] = {k: v for k, v in c.items() if k != "variants"}
            else:
                acc["findings"] = int(acc.get("findings", 0)) + int(c.get("findings", 0))
                acc["file"] = acc.get("file") or c.get("file")
        out["save_errors"] += [dict(e, worker=wid) for e in st.get("save_errors") or []]
        for f in st.get("findings") or []:
            rec = by_file.get(f["file"])
            if rec is None:
                rec = by_file[f["file"]] = {k: v for k, v in f.items() if k != "saved_by_another"}
                rec["workers"] = []
                out["findings"].append(rec)
            rec["workers"].append(wid)
    return out


def write_combined_report(corpus: Path, states: Mapping[str, Mapping[str, Any]], reason: str, info: Mapping[str, Any]) -> Path:
    comb = combine_states(states)
    d = Path(corpus) / "report"
    d.mkdir(parents=True, exist_ok=True)
    gpus = info.get("gpus") or []
    lines = [
        f"fuzzgpu parallel campaign report ({time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())})",
        f"profile     {info.get('profile')}",
        f"backend     {info.get('backend')}" + (f" on GPUs {', '.join(gpus)} ({info.get('workers_per_gpu') or 1} worker(s) each)" if gpus else ""),
        f"property    {info.get('property')}",
        f"seed        {info.get('seed')} (worker i uses seed + i)",
        f"workers     {len(info.get('workers', []))}: {', '.join(info.get('workers', []))}"
        + (f"  (worker processes restarted: {sum(info.get('restarts', {}).values())})" if info.get("restarts") else ""),
        f"ended       {reason}",
        f"totals      {comb['programs']} programs, {comb['instances']:.4g} instances",
        f"findings    {classes_phrase(comb['classes'])}; {len(comb['findings'])} corpus entries (one per class)"
        + (f"; {len(comb['save_errors'])} finding(s) NOT SAVED, kept raw in {Path(corpus) / RAW_DIR}" if comb["save_errors"] else ""),
        f"known list  {info['known']}" if info.get("known") else "known list  none given (a worker reads DIR/known.json when present)",
        f"quarantined {comb['quarantined']}" + (f" ({', '.join(f'{k} {v}' for k, v in sorted(comb['faults'].items()))})" if comb["faults"] else ""),
        timeouts_line(comb["timeouts"]),
        "",
        f"{'worker':<8} {'programs':>9} {'instances':>11} {'entries':>9} {'quarantined':>12}",
    ]
    for wid, st in sorted(states.items()):
        lines.append(f"{wid:<8} {int(st.get('programs', 0)):>9} {float(st.get('instances', 0)):>11.4g} {len(st.get('findings', [])):>9} "
                     f"{int(st.get('quarantined', 0)):>12}")
    lines += ["", f"{'shape':<10} {'programs':>9} {'instances':>11} {'weak rate':>10} {'failures':>9} {'entries':>9} {'not covered':>12}"]
    for name, st in sorted(comb["shapes"].items()):
        rate = f"{st['weak'] / st['instances']:.2e}" if st["instances"] else "-"
        lines.append(f"{name:<10} {int(st['programs']):>9} {int(st['instances']):>11.4g} {rate:>10} {int(st['failures']):>9} "
                     f"{int(st['findings']):>9} {int(st['unsupported']):>12}")
    lines += class_lines(comb["classes"], comb["findings"])
    lines += save_error_lines(comb["save_errors"])
    new = [f for st in states.values() for f in st.get("findings", []) if not f.get("saved_by_another")]
    lines += ["", exit_status_line(new, comb["save_errors"])]
    text = "\n".join(lines) + "\n"
    write_atomic(d / "report.txt", text)
    rep = {"schema": "fuzzgpu.campaign-report", "version": 1, "parallel": True, "ended": reason, **dict(info),
           "combined": comb, "workers_state": dict(states)}
    write_atomic(d / "report.json", json.dumps(rep, indent=1, default=str))
    return d


__all__ = [
    "Campaign",
    "CampaignResult",
    "Profile",
    "ProfileError",
    "PropertyFailed",
    "State",
    "combine_states",
    "load_profile",
    "lock_corpus",
    "make_backend",
    "plot_weak_rates",
    "profile_path",
    "run_campaign",
    "size_key",
    "write_combined_report",
]
