"""The files a Ray campaign moves between the driver and its actors (docs/ray.md): which files of an
actor's scratch corpus travel (:func:`synced`), the paths an actor may name (:func:`safe_rel`), what
changed under a tree since the last poll (:class:`TreeWatch`), writing what arrives
(:func:`write_files`), and the driver's side of the traffic over the corpus on its disk
(:class:`Coordinator`).  No Ray here: :mod:`fuzzgpu.ray_backend` (actor and driver loop) uses it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePosixPath
from typing import Any


# --------------------------------------------------------------------------------------------
# What travels between the driver and the actors (files, relative to a corpus root, as bytes)
# --------------------------------------------------------------------------------------------


def synced(rel: str) -> bool:
    """Whether an actor's file ``rel`` goes to the driver: not temp files (dot files), not locks,
    not the node-local evidence cache (a cache of the backend's answers; a finding carries its
    evidence in its entry)."""
    parts = rel.split("/")
    if any(p.startswith(".") and p != ".fuzzgpu" for p in parts) or parts[-1] == "lock":
        return False
    return not (parts[0] == ".fuzzgpu" and len(parts) > 1 and parts[1] == "evidence")


def safe_rel(rel: str) -> PurePosixPath:
    """A relative path inside a corpus (what an actor sends is never trusted to stay inside it)."""
    p = PurePosixPath(rel)
    if p.is_absolute() or any(x in ("", ".", "..") for x in rel.split("/")) or "\\" in rel or "\0" in rel:
        raise ValueError(f"a file outside the corpus: {rel!r}")
    return p


class TreeWatch:
    """The files under ``root`` that changed since the last call, and those that were removed."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.seen: dict[str, tuple[int, int]] = {}

    def _stat(self) -> dict[str, tuple[int, int]]:
        now: dict[str, tuple[int, int]] = {}
        for dirpath, dirnames, filenames in os.walk(self.root):
            base = os.path.relpath(dirpath, self.root).replace(os.sep, "/")
            base = "" if base == "." else base + "/"
            dirnames[:] = [d for d in dirnames if synced(f"{base}{d}/x")]
            for name in filenames:
                rel = base + name
                if not synced(rel):
                    continue
                try:
                    st = os.stat(os.path.join(dirpath, name))
                except OSError:
                    continue
                now[rel] = (st.st_size, st.st_mtime_ns)
        return now

    def mark(self, rel: str) -> None:
        """A file written from outside (the driver's): not reported back."""
        try:
            st = (self.root / rel).stat()
            self.seen[rel] = (st.st_size, st.st_mtime_ns)
        except OSError:
            pass

    def changes(self) -> tuple[dict[str, bytes], list[str]]:
        now = self._stat()
        changed: dict[str, bytes] = {}
        for rel, sig in now.items():
            if self.seen.get(rel) == sig:
                continue
            try:
                changed[rel] = (self.root / rel).read_bytes()
            except OSError:  # removed meanwhile: not remembered, so the next call looks again
                continue
        removed = [rel for rel in self.seen if rel not in now]
        self.seen = {rel: sig for rel, sig in now.items() if rel in changed or self.seen.get(rel) == sig}
        return changed, removed


def write_files(root: Path, files: dict[str, bytes], watch: TreeWatch | None = None, keep: bool = False) -> None:
    """Write ``files`` under ``root`` atomically; ``keep``: an existing file stays (entries and
    quarantine records never change once written)."""
    from ..files import write_temp

    for rel, data in files.items():
        p = root / safe_rel(rel)
        if keep and p.exists():
            continue
        p.parent.mkdir(parents=True, exist_ok=True)
        os.replace(write_temp(p.parent, data), p)
        if watch is not None:
            watch.mark(rel)




# --------------------------------------------------------------------------------------------
# The driver: the corpus, deduplication, the shared files
# --------------------------------------------------------------------------------------------


class Coordinator:
    """The driver's side of the file traffic: the corpus on its disk and what the actors send."""

    def __init__(self, root: Path) -> None:
        from ..corpus import Corpus

        self.root = root
        self.corpus = Corpus(root)
        #: files every actor gets (new entries with their .litmus, quarantine records), in order
        self.shared: list[tuple[str, bytes]] = []
        self.owner: dict[str, str] = {}  # entry file -> the worker whose copy was saved
        #: worker -> {its entry file: the entry that holds its class} for findings another worker saved first
        self.alias: dict[str, dict[str, str]] = {}

    def snapshot(self, wid: str) -> dict[str, bytes]:
        """What actor ``wid`` starts from: the entries and known list (top-level files), the class
        records, the quarantine records, the Hypothesis database and its own state."""
        from ..corpus import CLASS_DIR
        from .supervised import QUARANTINE

        out: dict[str, bytes] = {}

        def add(p: Path) -> None:
            rel = p.relative_to(self.root).as_posix()
            if synced(rel) and p.is_file() and not p.is_symlink():
                try:
                    out[rel] = p.read_bytes()
                except OSError:
                    pass

        if not self.root.is_dir():
            return out
        for p in self.root.iterdir():
            if p.suffix in (".json", ".litmus"):
                add(p)
        for sub, pattern in ((CLASS_DIR, "*.json"), (QUARANTINE, "*.json"), (".fuzzgpu/hypothesis", "*/*")):
            for p in sorted((self.root / sub).glob(pattern)):
                add(p)
        add(self.root / ".fuzzgpu" / "workers" / wid / "state.json")
        return out

    def _share(self, rel: str) -> None:
        try:
            self.shared.append((rel, (self.root / rel).read_bytes()))
        except OSError:
            pass

    def apply(self, wid: str, changed: dict[str, bytes], removed: list[str]) -> list[str]:
        """Take actor ``wid``'s files into the corpus; returns lines for the screen."""

        def rank(rel: str) -> int:  # entries before the class records and the state that name them
            return 0 if "/" not in rel else 2 if rel.endswith("/state.json") else 1

        msgs: list[str] = []
        for rel in sorted(changed, key=rank):
            msgs += self._take(wid, rel, changed[rel])
        for rel in removed:
            self._removed(rel)
        return msgs

    def _take(self, wid: str, rel: str, data: bytes) -> list[str]:
        """One file actor ``wid`` wrote, by where it lies; returns lines for the screen."""
        from ..corpus import CLASS_DIR, KNOWN_FILE
        from .supervised import QUARANTINE

        try:
            parts = safe_rel(rel).parts
        except ValueError as e:  # never written: an actor's bug must not write outside the corpus
            return [f"worker {wid}: ignored {e}"]
        if len(parts) == 1:
            if rel.endswith(".json") and rel != KNOWN_FILE:
                return self._entry(wid, rel, data)
            # a .litmus is written with its entry; known.json is the driver's
        elif parts[0] == CLASS_DIR and rel.endswith(".json"):
            self._class(data)
        elif parts[0] == QUARANTINE:
            return self._quarantined(wid, rel, data, parts[-1])
        elif parts[0] == "raw" or parts[:2] == (".fuzzgpu", "hypothesis"):
            write_files(self.root, {rel: data})
        elif parts[:3] == (".fuzzgpu", "workers", wid):
            self._worker_file(wid, rel, data, parts[-1])
        return []

    def _quarantined(self, wid: str, rel: str, data: bytes, name: str) -> list[str]:
        """A quarantine file: kept (the first copy: records never change), a record shared."""
        if (self.root / rel).exists():
            return []
        write_files(self.root, {rel: data})
        if not rel.endswith(".json"):
            return []
        self._share(rel)
        return [f"worker {wid}: QUARANTINED {name}"]

    def _worker_file(self, wid: str, rel: str, data: bytes, name: str) -> None:
        """A file of the worker's own folder: its state as the driver's corpus sees it (see
        :meth:`fix_state`), the others as they are; its log is the driver's (from the poll's lines)."""
        from ..files import write_atomic

        if name == "state.json":
            try:
                st = json.loads(data)
            except ValueError:
                return
            write_atomic(self.root / rel, json.dumps(self.fix_state(wid, st), indent=1))
        elif name != "log.txt":
            write_files(self.root, {rel: data})

    def _removed(self, rel: str) -> None:
        """A file the actor removed: only the Hypothesis database follows (a shrink moved on)."""
        try:
            parts = safe_rel(rel).parts
        except ValueError:
            return
        if parts[:2] == (".fuzzgpu", "hypothesis"):  # Hypothesis deleted an example (a shrink moved on)
            try:
                (self.root / rel).unlink()
            except OSError:
                pass

    def _entry(self, wid: str, rel: str, data: bytes) -> list[str]:
        from ..files import write_atomic

        try:
            entry = json.loads(data)
            path, new = self.corpus.add(entry)
        except Exception as e:  # noqa: BLE001 -- a finding must outlive any fault in saving it
            raw = f"raw/{wid}-{rel}"
            write_atomic(self.root / raw, data.decode("utf-8", "replace"))
            return [f"worker {wid}: FINDING NOT SAVED to the corpus ({type(e).__name__}: {e}); kept raw in {self.root / raw}"]
        if new:
            self.owner[path.name] = wid
            self._share(path.name)
            self._share(path.with_suffix(".litmus").name)
            v = entry.get("verdict", {}) if isinstance(entry, dict) else {}
            return [f"worker {wid}: NEW FINDING {path.name}: {entry.get('shape', '?')}: {v.get('property', '?')}: FAIL ({v.get('reason', '')})"[:400]]
        if self.owner.get(path.name) != wid:
            self.alias.setdefault(wid, {})[rel] = path.name
        return []

    def _class(self, data: bytes) -> None:
        try:
            rec = json.loads(data)
            key, entry, variants = rec["key"], rec.get("entry"), list(rec["variants"])
        except (ValueError, KeyError, TypeError):
            return
        path = self.root / entry if isinstance(entry, str) and "/" not in entry else None
        if path is None or not path.exists():
            path = self.corpus.classes().get(key)
        if path is not None:
            self.corpus.add_variants(key, path, variants)

    def fix_state(self, wid: str, st: dict[str, Any]) -> dict[str, Any]:
        """A worker's state as the corpus on the driver sees it: a finding the worker saved as new
        on its node, whose class another worker had saved first, is listed as saved by another."""
        alias = self.alias.get(wid, {})
        for f in st.get("findings") or []:
            if isinstance(f, dict) and f.get("file") in alias:
                f["file"] = alias[f["file"]]
                f["saved_by_another"] = True
        return st


__all__ = ["Coordinator", "TreeWatch", "safe_rel", "synced", "write_files"]
