"""Hypothesis's example database of a campaign (``.fuzzgpu/hypothesis``): a shrink interrupted by a
kill resumes from its best example."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from ..files import write_temp


def _digest(data: bytes) -> str:
    import hashlib

    return hashlib.sha384(data).hexdigest()[:16]


#: the suffix of the key of Hypothesis's secondary corpus (``ConjectureRunner.secondary_key``): examples
#: that were once interesting, replayed when the primary corpus is short, and shrunk from when one
#: still fails -- never taken as already shrunk (the primary corpus's fast path)
SECONDARY = b".secondary"


def example_database(path: Path, namespace: bytes, read_only: bool = False, seed: bytes | None = None) -> Any:
    """Hypothesis's example database for one campaign run, through Hypothesis's public API only
    (an :class:`hypothesis.database.ExampleDatabase` subclass implementing ``save``, ``fetch``,
    ``delete`` and ``move``).

    ``path/<digest of namespace + key>/<digest of value>``: one file per value, written to a temp
    file *in its own key folder*, fsynced and renamed (a kill leaves the old file or the new one,
    never a torn one); a value's file name is its hash, so several processes may share the folder.
    ``namespace`` keeps each run's keys apart (profile, backend, property, seed, run index): a
    resumed run finds its own failing examples and shrink progress, and never another run's.
    ``read_only``: saves, deletes and moves do nothing (a run that draws ahead leaves the database as
    it found it, so that its replay, under the same seed, draws the same programs).

    ``seed``: one choice sequence (Hypothesis's database format) this run starts its shrink from
    (:mod:`fuzzgpu.campaign.speculate`): the only example of the secondary corpus, and the primary
    corpus reads empty (its current best would be taken as shrunk already); what the run saves is
    kept as usual."""
    from hypothesis.database import ExampleDatabase

    class CampaignDatabase(ExampleDatabase):
        def __init__(self, root: Path, ns: bytes) -> None:
            super().__init__()
            self.root = root
            self.ns = ns
            self.read_only = read_only

        def __repr__(self) -> str:
            return f"CampaignDatabase({str(self.root)!r})"

        def _key_dir(self, key: bytes) -> Path:
            return self.root / _digest(self.ns + b"\0" + key)

        def save(self, key: bytes, value: bytes) -> None:
            d = self._key_dir(key)
            target = d / _digest(value)
            try:
                if self.read_only or target.exists():
                    return
                d.mkdir(parents=True, exist_ok=True)
                os.replace(write_temp(d, value), target)
            except OSError:  # a full disk loses a shrink hint, never the campaign
                pass

        def fetch(self, key: bytes) -> Any:
            if seed is not None:
                if key.endswith(SECONDARY):
                    yield seed
                return
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
                if not self.read_only:
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
