"""Writing files so that a kill at any moment leaves the old file or the new one, never a torn one:
a temp file in the same folder, fsync, then rename (or hard link, for create-if-absent), then fsync
the folder so the rename itself survives a power cut."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_temp(folder: Path, data: bytes, durable: bool = True, prefix: str = ".tmp-") -> str:
    """A new temp file in ``folder`` holding ``data`` (fsynced when ``durable``); returns its path."""
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=str(folder))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if durable:
                os.fsync(f.fileno())
    except BaseException:
        _unlink(tmp)
        raise
    return tmp


def fsync_dir(folder: Path) -> None:
    """Make a rename or link in ``folder`` durable (best effort: some file systems refuse)."""
    try:
        dfd = os.open(str(folder), os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def write_atomic(path: Path, text: str, durable: bool = True) -> None:
    """Replace ``path`` with ``text`` atomically.  ``durable=False`` skips the fsyncs: still atomic
    (a reader sees the old or the new file), but a power cut may lose the latest write."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = write_temp(path.parent, text.encode("utf-8"), durable, prefix=f".{path.name}.")
    try:
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise
    if durable:
        fsync_dir(path.parent)


def create_exclusive(path: Path, text: str) -> bool:
    """Create ``path`` with ``text``, atomically and only if it does not exist (temp file, fsync,
    hard link).  False when it existed: of several processes racing, exactly one creates it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8")
    tmp = write_temp(path.parent, data, prefix=f".{path.name}.")
    try:
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        except OSError:  # a file system without hard links: O_EXCL create, then the content
            try:
                xfd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                return False
            with os.fdopen(xfd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        fsync_dir(path.parent)
        return True
    finally:
        _unlink(tmp)


def _unlink(p: str) -> None:
    try:
        os.unlink(p)
    except OSError:
        pass
