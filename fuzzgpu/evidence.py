"""The evidence cache: what a backend has observed for a program, kept on disk so that Hypothesis
replays are deterministic (DESIGN.md, "Hypothesis and nondeterminism").

A GPU run is a sample, not a function.  The cache is keyed by (program JSON hash, arch, toolchain,
stress configuration, backend); its value is the union of every run of that key: outcome counts add
up, and once an outcome has been observed it stays observed.  :class:`EvidenceBackend` wraps any
backend: a request for ``n`` instances is answered from the cache when the cache already holds at
least ``n``; otherwise only the missing instances are run and merged in.  So Hypothesis, asking the
same question twice, gets the same (or a larger, never a smaller) answer.

Files: ``<root>/<key[:2]>/<key>.json``, written atomically (temp file, fsync, rename).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .backends.base import Histogram, RunConfig, mostly_timed_out, seen_forbidden
from .hashing import canonical, program_hash  # noqa: F401 -- public names of this module
from .ir import Program
from .files import UnreadableFile, read_regular, write_atomic

EVIDENCE_SCHEMA = "fuzzgpu.evidence"
EVIDENCE_VERSION = 1


def stress_key(config: RunConfig) -> dict[str, Any]:
    """The stress configuration of a run: everything in the RunConfig but the instance count and
    the seed, and how long a run goes on on timeouts (runs differing only in those are samples of
    one distribution)."""
    d = config.to_json()
    d.pop("instances", None)
    d.pop("seed", None)
    d.pop("timeout_stop", None)  # how long a run goes on, as instances
    return d


def _outcome_to_json(o) -> list:
    return [v for _, v in o]


#: what a GPU run's meta says about the instances of forbidden outcomes it saw (backends.cuda)
_FORBIDDEN_EVIDENCE = ("provenance", "ran_sass")


@dataclass
class Evidence:
    keys: tuple[str, ...]
    counts: dict[tuple, int] = field(default_factory=dict)  # outcome values (in key order) -> count
    instances: int = 0
    timeouts: int = 0
    seconds: float = 0.0
    runs: int = 0
    backend: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    def merge(self, h: Histogram) -> None:
        if tuple(h.keys) != tuple(self.keys):
            raise ValueError(f"evidence keys {self.keys} != histogram keys {h.keys}")
        for o, c in h.counts:
            vals = tuple(v for _, v in o)
            self.counts[vals] = self.counts.get(vals, 0) + c
        self.instances += h.instances
        self.timeouts += h.timeouts
        self.seconds += h.seconds
        self.runs += 1
        self.backend = self.backend or h.backend
        if not self.meta:
            self.meta = dict(h.meta)
        # the first run's meta describes the evidence; but what a later run logged of an outcome the
        # oracle forbids (where its instances ran, the SASS check of the code that ran) is kept too:
        # once observed, it stays observed
        if not seen_forbidden(self.meta) and seen_forbidden(dict(h.meta)):
            self.meta.update({k: v for k, v in h.meta if k in _FORBIDDEN_EVIDENCE})

    def histogram(self) -> Histogram:
        counts = tuple(
            (tuple(zip(self.keys, vals)), c)
            for vals, c in sorted(self.counts.items(), key=lambda kv: tuple((v is None, v or 0) for v in kv[0]))
        )
        meta = dict(self.meta)
        meta["evidence_runs"] = self.runs
        return Histogram(self.keys, counts, self.instances, self.timeouts, self.seconds, self.backend, tuple(meta.items()))

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": EVIDENCE_SCHEMA,
            "version": EVIDENCE_VERSION,
            "keys": list(self.keys),
            "counts": [[list(vals), c] for vals, c in self.counts.items()],
            "instances": self.instances,
            "timeouts": self.timeouts,
            "seconds": self.seconds,
            "runs": self.runs,
            "backend": self.backend,
            "meta": self.meta,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Evidence:
        if d.get("schema") != EVIDENCE_SCHEMA or d.get("version") != EVIDENCE_VERSION:
            raise ValueError("not a fuzzgpu evidence record")
        ev = cls(tuple(d["keys"]))
        for vals, c in d["counts"]:
            ev.counts[tuple(vals)] = int(c)
        ev.instances = int(d["instances"])
        ev.timeouts = int(d.get("timeouts", 0))
        ev.seconds = float(d.get("seconds", 0.0))
        ev.runs = int(d.get("runs", 0))
        ev.backend = str(d.get("backend", ""))
        ev.meta = dict(d.get("meta") or {})
        return ev


class EvidenceCache:
    """Evidence records under ``root`` (a corpus's ``evidence/`` folder)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self._mem: dict[str, Evidence] = {}
        self._lock = threading.Lock()

    @staticmethod
    def key(program: Program, config: RunConfig, backend: str, arch: str, toolchain: str) -> str:
        return hashlib.sha256(
            canonical({"program": program_hash(program), "arch": arch, "toolchain": toolchain,
                       "stress": stress_key(config), "backend": backend}).encode()
        ).hexdigest()

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> Evidence | None:
        with self._lock:
            if key in self._mem:
                return self._mem[key]
        p = self.path(key)
        try:
            ev = Evidence.from_json(json.loads(read_regular(p, 16 << 20)))
        except FileNotFoundError:
            return None
        # a damaged record, or a FIFO / link / device in its place, is evidence of nothing
        except (UnreadableFile, ValueError, KeyError, TypeError, AttributeError, RecursionError):
            return None
        with self._lock:
            self._mem[key] = ev
        return ev

    def put(self, key: str, ev: Evidence) -> None:
        write_atomic(self.path(key), canonical(ev.to_json()), durable=False)
        with self._lock:
            self._mem[key] = ev

    def __len__(self) -> int:
        return sum(1 for _ in self.root.glob("*/*.json")) if self.root.exists() else 0


class EvidenceBackend:
    """A backend whose answers come from (and go into) an :class:`EvidenceCache`."""

    def __init__(self, inner: Any, cache: EvidenceCache) -> None:
        self.inner = inner
        self.cache = cache
        self.name = inner.name
        self.fresh_instances = 0  # instances actually run (not answered from the cache)
        self.fresh_runs = 0
        #: of the fresh runs, those the backend ran itself: not a stand-in's answer (a GPU backend's
        #: static check of a program its harness cannot run: a histogram of another backend)
        self.own_runs = 0
        self.cached_runs = 0
        self.gpu_seconds = 0.0  # the GPU's busy time of the fresh runs (their histograms' ``gpu_s``)
        #: the inner backend's run takes a campaign worker's ``advice`` (``properties.RunAdvice``)
        self.takes_advice = bool(getattr(inner, "takes_advice", False))

    def describe(self) -> str:
        return self.inner.describe()

    def identity(self) -> tuple[str, str, str]:
        ident = getattr(self.inner, "identity", None)
        return ident() if ident else (self.inner.name, "unknown", "unknown")

    def key(self, program: Program, config: RunConfig) -> str:
        backend, arch, toolchain = self.identity()
        return self.cache.key(program, config, backend, arch, toolchain)

    def answers(self, program: Program, config: RunConfig) -> bool:
        """Whether :meth:`run` answers ``program`` under ``config`` from the cache alone: a
        deterministic backend's answer, or enough instances run before."""
        ev = self.cache.get(self.key(program, config))
        if ev is None:
            return False
        if bool(getattr(self.inner, "deterministic", False)) or ev.instances >= config.instances:
            return True
        # a run that stopped early on its timeouts (RunConfig.timeout_stop; the backend's rule, on its
        # first launch: the histogram's meta says so): more would time out too
        return 0 < config.timeout_stop <= ev.instances and (bool(ev.meta.get("stopped_early")) or mostly_timed_out(ev.timeouts, ev.instances))

    def prepare(self, programs: Sequence[Program], config_of: Callable[[Program], RunConfig]) -> None:
        """The inner backend's ``prepare`` (compile and check ahead, in batches) for the programs the
        cache will not answer, each once; ``config_of``: the configuration each program will run with
        (asked with another -- a wait-loop program runs at a shorter spin budget -- the cache would
        miss an answer the run then finds)."""
        prepare = getattr(self.inner, "prepare", None)
        if prepare is None:
            return
        todo = [p for p in dict.fromkeys(programs) if not self.answers(p, config_of(p))]
        if todo:
            prepare(todo)

    def run(self, program: Program, config: RunConfig, advice: Any = None) -> Histogram:
        """The cache's answer, else the inner backend's run of the missing instances (with
        ``advice``, what the caller knows of the program, when there is some)."""
        key = self.key(program, config)
        ev = self.cache.get(key)
        if ev is not None and self.answers(program, config):
            self.cached_runs += 1
            return ev.histogram()
        have = ev.instances if ev else 0
        need = max(1, config.instances - have)
        config = replace(config, instances=need, seed=config.seed + (ev.runs if ev else 0))
        h = self.inner.run(program, config, advice=advice) if advice is not None else self.inner.run(program, config)
        self.fresh_instances += h.instances
        self.gpu_seconds += float(dict(h.meta).get("gpu_s", 0.0))
        self.fresh_runs += 1
        self.own_runs += h.backend in ("", self.name)
        new = Evidence(tuple(h.keys)) if ev is None else Evidence.from_json(ev.to_json())
        new.merge(h)
        self.cache.put(key, new)
        return new.histogram()


__all__ = ["Evidence", "EvidenceBackend", "EvidenceCache", "canonical", "program_hash", "stress_key"]
