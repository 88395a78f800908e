"""Files, read and written safely.

Writing: a kill at any moment leaves the old file or the new one, never a torn one: a temp file in
the same folder, fsync, then rename (or hard link, for create-if-absent), then fsync the folder so
the rename itself survives a power cut.  New files get the usual permissions (0666 less the
process's umask), not the 0600 of a temp file.

Reading files other people wrote (:func:`read_regular`): a FIFO, a device or a socket named
``*.json`` is refused without blocking (``O_NONBLOCK``), a symbolic link is refused unless the
caller follows it on purpose (``O_NOFOLLOW``), and a read stops after ``limit`` bytes actually read
(``/proc`` files and growing files report a size of 0 or less than they hold)."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path


class UnreadableFile(OSError):
    """A file :func:`read_regular` refuses: not a regular file, a symbolic link, or too large.
    ``str(e)`` is the reason, without the file name."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    def __str__(self) -> str:
        return self.reason


def read_regular(path: str | Path, limit: int, follow_symlinks: bool = False) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.  Raises
    :class:`UnreadableFile` for a symbolic link (unless ``follow_symlinks``), anything that is not
    a regular file (opened non-blocking, so a FIFO does not hang), or more than ``limit`` bytes
    read; :class:`OSError` as ``open`` and ``read`` raise it."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(str(path), flags)
    except OSError as e:
        if not follow_symlinks and os.path.islink(str(path)):
            raise UnreadableFile("a symbolic link (not followed)") from None
        try:  # a socket (ENXIO), a folder (EISDIR)...: say what it is
            st = os.stat(str(path)) if follow_symlinks else os.lstat(str(path))
        except OSError:
            raise e from None
        if not stat.S_ISREG(st.st_mode):
            raise UnreadableFile(f"not a regular file ({_kind(st.st_mode)})") from None
        raise e
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnreadableFile(f"not a regular file ({_kind(st.st_mode)})")
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise UnreadableFile(f"more than {limit} bytes: too large")
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_json(path: str | Path, limit: int, what: str) -> object:
    """The JSON document in the regular file ``path`` (at most ``limit`` bytes, symlinks followed),
    ``what`` naming what it should be (``a compile_commands.json``).  Every way it can fail is a
    ValueError of one line, ``cannot read WHAT: ...`` or ``not WHAT (JSON): ...``, that the caller
    makes its own input error; a FIFO or a folder is refused without blocking (:func:`read_regular`)."""
    import json

    try:
        return json.loads(read_regular(path, limit, follow_symlinks=True).decode("utf-8"))
    except OSError as e:
        raise ValueError(f"cannot read {what}: {getattr(e, 'strerror', None) or e}") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise ValueError(f"not {what} (JSON): {str(e).splitlines()[0][:120] if str(e) else 'parse error'}") from None


def read_toml(path: str | Path, limit: int, where: str) -> tuple[str, dict]:
    """(the text, the TOML document) of the regular file ``path`` (at most ``limit`` bytes, symlinks followed);
    every way it can fail is a ValueError of one line starting with ``where`` (the caller makes it
    its own input error).  FileNotFoundError is left to the caller, which knows what was expected."""
    try:
        import tomllib  # type: ignore[import-not-found]
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef, import-not-found]

    try:
        text = read_regular(path, limit, follow_symlinks=True).decode("utf-8")
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{where}: not valid TOML: {str(e).splitlines()[0] if str(e) else 'parse error'}") from None
    except UnicodeDecodeError:
        raise ValueError(f"{where}: not UTF-8 text") from None
    except RecursionError:
        raise ValueError(f"{where}: not valid TOML: nested too deeply") from None
    except FileNotFoundError:
        raise
    except OSError as e:
        raise ValueError(f"{where}: cannot read: {e.strerror or e}") from None



#: a bare TOML key (TOML 1.0, Keys)
_BARE_KEY = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
#: where a scalar value (number, boolean, date-time) ends
_SCALAR_END = frozenset(",]}#\r\n")


class _TomlKeys:
    """The scanner of :func:`toml_key_lines` over one valid TOML text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.line = 1
        self.lines: dict[tuple[str, ...], int] = {}

    def _advance(self, j: int) -> None:
        self.line += self.text.count("\n", self.i, j)
        self.i = j

    def _peek(self, k: int = 1) -> str:
        return self.text[self.i:self.i + k]

    def _blank(self, newlines: bool) -> None:
        """Skip spaces and tabs; with ``newlines`` also newlines and comments."""
        t = self.text
        j = self.i
        while j < len(t):
            c = t[j]
            if c in " \t" or newlines and c in "\r\n":
                j += 1
            elif newlines and c == "#":
                nl = t.find("\n", j)
                j = len(t) if nl < 0 else nl
            else:
                break
        self._advance(j)

    def _string(self) -> str:
        """Skip the string at ``i`` (basic, literal, multi-line); its source text."""
        t, start = self.text, self.i
        q = t[start]
        if t.startswith(q * 3, start):
            j = start + 3
            while not t.startswith(q * 3, j):
                j += 2 if q == '"' and t[j] == "\\" else 1
            j += 3
            for _ in range(2):  # up to two more quotes are the content's last characters
                if j < len(t) and t[j] == q:
                    j += 1
        else:
            j = start + 1
            while t[j] != q:
                j += 2 if q == '"' and t[j] == "\\" else 1
            j += 1
        self._advance(j)
        return t[start:j]

    def _key(self) -> tuple[tuple[str, ...], int]:
        """The dotted key at ``i``: its parts (quoted ones decoded as TOML decodes them) and the line
        it starts on."""
        line, parts = self.line, []
        while True:
            self._blank(False)
            c = self._peek()
            if c in ('"', "'"):
                raw = self._string()
                parts.append(raw[1:-1] if c == "'" else next(iter(_toml_loads(raw + " = 0"))))
            else:
                j = self.i
                while j < len(self.text) and self.text[j] in _BARE_KEY:
                    j += 1
                if j == self.i:
                    raise ValueError(f"no key at line {self.line}")
                parts.append(self.text[self.i:j])
                self._advance(j)
            self._blank(False)
            if self._peek() != ".":
                return tuple(parts), line
            self._advance(self.i + 1)

    def _define(self, path: tuple[str, ...], line: int) -> None:
        for n in range(1, len(path) + 1):  # a dotted key or a header also defines its parents
            self.lines.setdefault(path[:n], line)

    def _value(self, path: tuple[str, ...]) -> None:
        c = self._peek()
        if c in ('"', "'"):
            self._string()
        elif c == "[":
            self._items("]", lambda: self._value(()))  # keys inside an array of inline tables have no path
        elif c == "{":
            def pair() -> None:
                key, line = self._key()
                if path:
                    self._define(path + key, line)
                self._expect("=")
                self._blank(False)
                self._value(path + key if path else ())

            self._items("}", pair)
        else:
            j = self.i
            while j < len(self.text) and self.text[j] not in _SCALAR_END:
                j += 1
            if j == self.i:
                raise ValueError(f"no value at line {self.line}")
            self._advance(j)

    def _items(self, close: str, item: Callable[[], None]) -> None:
        """An array (``close`` ``]``) or an inline table (``}``) from its opening bracket: ``item``
        for each element, separated by commas, up to the closing bracket."""
        self._advance(self.i + 1)
        while True:
            self._blank(True)
            if self._peek() == close:
                break
            item()
            self._blank(True)
            if self._peek() == ",":
                self._advance(self.i + 1)
        self._advance(self.i + 1)

    def _expect(self, token: str) -> None:
        self._blank(False)
        if not self.text.startswith(token, self.i):
            raise ValueError(f"expected {token!r} at line {self.line}")
        self._advance(self.i + len(token))

    def scan(self) -> dict[tuple[str, ...], int]:
        table: tuple[str, ...] = ()
        while True:
            self._blank(True)
            if self.i >= len(self.text):
                return self.lines
            if self._peek() == "[":
                array = self._peek(2) == "[["
                self._advance(self.i + (2 if array else 1))
                table, line = self._key()
                self._expect("]]" if array else "]")
                self._define(table, line)
            else:
                key, line = self._key()
                self._define(table + key, line)
                self._expect("=")
                self._blank(False)
                self._value(table + key)


def _toml_loads(text: str) -> dict:
    try:
        import tomllib  # type: ignore[import-not-found]
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef, import-not-found]
    return tomllib.loads(text)


def toml_key_lines(text: str) -> dict[tuple[str, ...], int]:
    """The line (from 1) on which each key of the TOML document ``text`` is defined, by its path:
    ``[stress]`` then ``spin = 3``, ``stress.spin = 3``, ``"stress".'spin' = 3`` and
    ``stress = { spin = 3 }`` all give ``("stress", "spin")``; a table's own path is the line of
    its header (or of the first key that defines it).  For an array of tables (``[[a]]``) the
    first element's keys are given; keys inside arrays have no path.  ``text`` is TOML that
    ``tomllib`` has read; on text it has not, the keys before the first unexpected token."""
    scanner = _TomlKeys(text)
    try:
        return scanner.scan()
    except (ValueError, IndexError, StopIteration, RecursionError):  # not valid TOML: what was found before it
        return scanner.lines


def toml_where(where: str, lines: dict[tuple[str, ...], int], *path: str) -> str:
    """``where:LINE`` for the key ``path`` of a file whose :func:`toml_key_lines` are ``lines``;
    ``where`` alone when the key is not in the text (a default, not written)."""
    line = lines.get(tuple(path), 0)
    return f"{where}:{line}" if line else where

def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "not a file"


def is_regular(path: str | Path) -> bool:
    """``path`` is a regular file and not a symbolic link (``lstat``; no open, no blocking)."""
    try:
        return stat.S_ISREG(os.lstat(str(path)).st_mode)
    except OSError:
        return False


def umask() -> int:
    """The process's umask, read without changing it where Linux tells it (``/proc/self/status``)."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def new_file_mode() -> int:
    """The mode ``open(..., "w")`` would give a new file: 0666 less the umask."""
    return 0o666 & ~umask()


def write_temp(folder: Path, data: bytes, durable: bool = True, prefix: str = ".tmp-") -> str:
    """A new temp file in ``folder`` holding ``data`` (fsynced when ``durable``); returns its path."""
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=str(folder))
    try:
        os.fchmod(fd, new_file_mode())  # mkstemp makes it 0600; the file is renamed into place
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
                xfd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
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
