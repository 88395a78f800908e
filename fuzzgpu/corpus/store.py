"""A corpus folder (:class:`Corpus`): its entries, their ``.litmus`` files and the class records
(``D/classes/``); recomputing signatures and classes after a change (:func:`refresh`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..files import create_exclusive, is_regular, read_regular, write_atomic
from ..ir import Program
from .entry import MAX_FILE_BYTES, STATE_DIR, CorpusError, Entry, class_id, entry_class, entry_signature, load_entry, validate_entry
from .known import KNOWN_FILE


def _signature_of(p: Path) -> Any:
    """The signature field of the entry file ``p`` (None when it cannot be read)."""
    try:
        return json.loads(read_regular(p, MAX_FILE_BYTES)).get("signature")
    except (OSError, ValueError, RecursionError, AttributeError):
        return None


def _stored_key(p: Path) -> str | None:
    """The class key stored in the entry file ``p`` (None when it cannot be read)."""
    try:
        k = json.loads(read_regular(p, MAX_FILE_BYTES)).get("class", {}).get("key")
    except (OSError, ValueError, RecursionError, AttributeError):
        return None
    return k if isinstance(k, str) else None


class Corpus:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    def entry_paths(self) -> list[Path]:
        """The corpus's entry files: regular files named ``*.json`` (not symbolic links, FIFOs...:
        :meth:`rejected_paths` lists those)."""
        return [p for p in self._json_paths() if p.name != KNOWN_FILE and is_regular(p)]

    def rejected_paths(self) -> list[Path]:
        """Names ``*.json`` in the corpus that are not regular files (a FIFO, a symbolic link, a
        folder): never opened, reported by replay."""
        return [p for p in self._json_paths() if not is_regular(p)]

    def _json_paths(self) -> list[Path]:
        if not self.root.is_dir():
            return []
        # known.json is the known-findings list (load_known), not an entry: entry_paths leaves it out, but
        # rejected_paths lists it too when it is not a regular file (a FIFO named known.json was ignored silently)
        return sorted(p for p in self.root.glob("*.json") if not p.name.startswith("."))

    def entries(self) -> list[Entry]:
        return [load_entry(p) for p in self.entry_paths()]

    def signatures(self) -> set[str]:
        out = set()
        for p in self.entry_paths():
            sig = _signature_of(p)
            if isinstance(sig, str):
                out.add(sig)
        return out

    def classes(self) -> dict[str, Path]:
        """Class key (:func:`finding_class`) -> the entry that represents it.  The key is
        recomputed from each entry (an entry saved before classes existed has none stored)."""
        out: dict[str, Path] = {}
        for p in self.entry_paths():
            try:
                d = json.loads(read_regular(p, MAX_FILE_BYTES))
                key = entry_class(d)
            except (OSError, ValueError, RecursionError, AttributeError, KeyError, TypeError):
                continue
            out.setdefault(key, p)
        return out

    def add(self, entry: Mapping[str, Any]) -> tuple[Path, bool]:
        """Write an entry (and its .litmus) unless its finding is already represented.  Returns
        (path, written): ``written`` is False when an entry with the same signature, or of the same
        class (:func:`finding_class`), exists -- then the finding is counted in that class as a
        variant (:meth:`add_variants`) and ``path`` is that entry.

        Safe for several processes at once: a new entry is named by its class id, written to a
        temp file, fsynced, and *linked* to its name -- ``link`` fails when the name exists, so of
        two workers saving the same class at the same moment exactly one creates the entry and the
        other records a variant.  Entries saved under older names (a signature's hash) are found by
        reading their classes and signatures.  An entry never changes once written; its class's
        count and variants live in ``classes/<class id>.json``."""
        validate_entry(dict(entry), "<new entry>")
        sig = entry["signature"]
        key = entry_class(entry)
        name = class_id(key)
        path = self.root / f"{name}.json"
        if not path.exists():
            for p in self.entry_paths():
                try:
                    d = json.loads(read_regular(p, MAX_FILE_BYTES))
                    if d.get("signature") == sig or entry_class(d) == key:
                        path = p
                        break
                except (OSError, ValueError, RecursionError, AttributeError, KeyError, TypeError):
                    continue
        if path.exists():
            self.add_variants(key, path, [sig])
            return path, False
        text = json.dumps(entry, indent=1, sort_keys=True, default=str)
        write_atomic(self.root / f"{name}.litmus", entry["litmus"])  # same text from every writer
        if create_exclusive(path, text + "\n"):  # the JSON last: an entry exists once its JSON does
            try:
                self.ensure_record(key, path)  # every class with a finding has its record, from its first
            except OSError:
                # the entry (the finding) is saved; its record holds nothing the entry does not
                # (one finding, itself: class_record's default) and the class's next variant writes it
                pass
            return path, True
        self.add_variants(key, path, [sig])
        return path, False

    def class_path(self, key: str) -> Path:
        return self.root / CLASS_DIR / f"{class_id(key)}.json"

    def stored_record(self, key: str) -> dict[str, Any] | None:
        """The valid record ``classes/<class id>.json`` of class ``key``; None when there is none
        (or it cannot be read, or is not a record of ``key``)."""
        try:
            d = json.loads(read_regular(self.class_path(key), MAX_FILE_BYTES))
        except (OSError, ValueError, RecursionError):
            return None
        if isinstance(d, dict) and d.get("key") == key and isinstance(d.get("variants"), list) \
                and isinstance(d.get("findings"), int) and not isinstance(d.get("findings"), bool):
            return d
        return None

    def class_record(self, key: str, entry: Path | None = None) -> dict[str, Any]:
        """``{"key", "entry", "findings", "variants"}`` of a class: its count of distinct findings
        and the signatures of the first :data:`MAX_VARIANTS`; an entry without a record (saved
        before every class got one, or copied in by hand) holds one finding, itself."""
        d = self.stored_record(key)
        if d is not None:
            return d
        old = _stored_key(entry) if entry is not None else None
        if old is not None and old != key:  # the record of an entry saved under an older key (race:5)
            d = self.stored_record(old)
            if d is not None:
                return {**d, "key": key}
        sig = None
        if entry is not None:
            try:
                sig = json.loads(read_regular(entry, MAX_FILE_BYTES)).get("signature")
            except (OSError, ValueError, AttributeError):
                sig = None
        return {"schema": CLASS_SCHEMA, "version": 1, "key": key, "entry": entry.name if entry is not None else None,
                "findings": 1 if sig else 0, "variants": [sig] if sig else []}

    def ensure_record(self, key: str, entry: Path) -> bool:
        """Write the record of class ``key`` (represented by ``entry``) when it has none: one
        finding, the entry itself.  Under the lock of :meth:`add_variants`, so a variant counted by
        another process at the same moment is never overwritten.  True when it wrote the record."""
        if self.stored_record(key) is not None:
            return False
        lock = _lock(self.root / CLASS_DIR / ".lock")
        try:
            if self.stored_record(key) is not None:
                return False
            rec = self.class_record(key, entry)
            if not rec["variants"]:  # the entry's signature cannot be read: nothing to count
                return False
            write_atomic(self.class_path(key), json.dumps(rec, indent=1) + "\n")
            return True
        finally:
            lock.close()

    def add_variants(self, key: str, entry: Path, signatures: Iterable[str]) -> int:
        """Count findings in class ``key`` (represented by ``entry``): their signatures are listed
        in ``classes/<class id>.json`` (the first :data:`MAX_VARIANTS`) and counted in its
        ``findings`` (distinct signatures).  Read-modify-write under an exclusive lock
        (``classes/.lock``), the record replaced atomically; nothing locked or written when every
        signature is listed already.  Returns how many were new."""
        sigs = [s for s in dict.fromkeys(signatures) if isinstance(s, str)]
        rec = self.class_record(key, entry)
        if all(s in rec["variants"] for s in sigs):
            return 0
        lock = _lock(self.root / CLASS_DIR / ".lock")
        try:
            rec = self.class_record(key, entry)
            new = [s for s in sigs if s not in rec["variants"]]
            if not new:
                return 0
            variants = [v for v in rec["variants"] if isinstance(v, str)]
            rec = {"schema": CLASS_SCHEMA, "version": 1, "key": key, "entry": entry.name,
                   "findings": max(int(rec["findings"]), len(variants)) + len(new), "variants": (variants + new)[:MAX_VARIANTS]}
            write_atomic(self.class_path(key), json.dumps(rec, indent=1) + "\n")
            return len(new)
        finally:
            lock.close()


#: a class record lists at most this many variant signatures (its ``findings`` counts them all)
MAX_VARIANTS = 100
CLASS_DIR = "classes"  # D/classes/<class id>.json: each class's count and variants
CLASS_SCHEMA = "fuzzgpu.class"


def _lock(path: Path) -> Any:
    """An exclusive lock (blocking) on ``path``, released when the returned file is closed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    f = open(path, "a+")  # noqa: SIM115 -- the caller closes it
    try:
        import fcntl

        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
    except ImportError:  # not POSIX: no lock
        pass
    return f


def refreshed(data: Mapping[str, Any], program: Program) -> dict[str, Any]:
    """An entry with its signature and class recomputed by this fuzzgpu (:func:`entry_signature`,
    :func:`entry_class`).  What ``python -m fuzzgpu.corpus refresh DIR`` writes."""
    d = dict(data)
    d["signature"] = entry_signature(d, program)
    key = entry_class(d)
    d["class"] = {"key": key, "id": class_id(key)}
    return d


def refresh(root: str | Path) -> list[tuple[Path, bool]]:
    """Recompute the signature and class of every entry of a corpus folder (after a change to
    :func:`signature` or :func:`finding_class`); rewrite the entries that changed (atomically,
    keeping their file names, which documents and known lists point to), move each class record
    to its class's new name (its variants listing the entry's new signature), and write the record
    of a class that has none (an entry saved before every class got one, or copied in by hand).
    Returns (path, changed) for each entry: changed when its entry or its record was written.
    Raises :class:`CorpusError` when ``root`` is not a folder (a missing path, an entry file:
    nothing would be refreshed, and saying nothing read as "up to date"), and, before anything is
    written, when a ``*.json`` of it is not a regular file (a folder, a FIFO, a symbolic link:
    replay and the pytest plugin report it as an invalid entry; skipping it read as refreshed)."""
    out = []
    if not Path(root).is_dir():
        raise CorpusError(f"{root}: not a corpus folder ({'no such file or folder' if not Path(root).exists() else 'not a folder'})")
    c = Corpus(root)
    rejected = c.rejected_paths()
    if rejected:
        raise CorpusError(f"{rejected[0]}: not a regular file (a FIFO, a device, a folder or a symbolic link): not a corpus "
                          f"entry; nothing refreshed" + (f" ({len(rejected)} such names)" if len(rejected) > 1 else ""))
    for e in c.entries():
        new = refreshed(e.data, e.program)
        changed = new != dict(e.data)
        new_key = new["class"]["key"]
        if changed:
            old: Mapping[str, Any] = e.data["class"] if isinstance(e.data.get("class"), dict) else {}
            old_key = old.get("key") if isinstance(old.get("key"), str) else None
            moved = old_key is not None and old_key != new_key and c.stored_record(old_key) is not None
            src = old_key if moved and old_key is not None else new_key
            rec = c.stored_record(src)
            if rec is not None and (moved or new["signature"] != e.data.get("signature")):
                # the count follows the class to its new name, its variants the entry's new signature
                rec = {**rec, "key": new_key, "entry": e.path.name,
                       "variants": [new["signature"] if v == e.data.get("signature") else v for v in rec["variants"]]}
                write_atomic(c.class_path(new_key), json.dumps(rec, indent=1) + "\n")
                if moved:
                    c.class_path(src).unlink()
            write_atomic(e.path, json.dumps(new, indent=1, sort_keys=True, default=str) + "\n")
        if c.ensure_record(new_key, e.path):
            changed = True
        out.append((e.path, changed))
    return out


def find_entries(path: str | Path) -> list[Entry]:
    """A corpus folder's entries, or one entry file."""
    p = Path(path)
    if p.is_dir():
        return Corpus(p).entries()
    if not p.exists() and not p.is_symlink():
        raise CorpusError(f"{p}: no such corpus folder or entry file")
    return [load_entry(p)]
