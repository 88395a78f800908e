"""Source file names as the line tables spell them, decoded to the names on disk (pure).

A file name outside ASCII reaches the PTX as octal escapes of its UTF-8 bytes (``.file 1
"/src/\\303\\251.cu"`` for ``/src/é.cu``: PTX ISA, "Debugging Directives: .file", a string of C escapes),
and ptxas keeps those escapes in the cubin's line table.  nvdisasm (13.0-13.5) prints that name with its
last backslash turned into a path separator when no ``/`` follows it -- it splits the name into a folder
and a file at the last ``/`` or ``\\`` -- so ``/src/\\303\\251.cu`` comes out as ``/src/\\303/251.cu``.  The
two spellings of one file must meet (a PTX instruction and its SASS are paired by source line), and a
finding names the file a person opens: both decode to ``/src/é.cu`` here.
"""

from __future__ import annotations

import functools
import re

_ESCAPE = re.compile(r"\\([0-7]{1,3}|.)", re.S)
#: nvdisasm's folder split inside an escaped name: an escape, the ``/`` it printed for the backslash, three
#: octal digits, and no ``/`` after them
_SPLIT_ESCAPE = re.compile(r"(\\[0-7]{3})/([0-7]{3}[^/]*)$")
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


def _bytes_of(escaped: str) -> bytes:
    out = bytearray()
    pos = 0
    for m in _ESCAPE.finditer(escaped):
        out += escaped[pos:m.start()].encode("utf-8", "surrogateescape")
        code = m.group(1)
        if code[0] in "01234567":
            out.append(int(code, 8) & 0xFF)
        else:
            out += _SIMPLE.get(code, code).encode("utf-8", "surrogateescape")
        pos = m.end()
    out += escaped[pos:].encode("utf-8", "surrogateescape")
    return bytes(out)


def _utf8(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


@functools.lru_cache(maxsize=1024)
def ptx_file_name(escaped: str) -> str:
    """A ``.file`` string of the PTX (without its quotes) as the name on disk: C escapes decoded, the bytes
    read as UTF-8 (bytes that are not stay escaped, as ``\\351``)."""
    if "\\" not in escaped:
        return escaped
    data = _bytes_of(escaped)
    text = _utf8(data)
    return text if text is not None else data.decode("utf-8", "backslashreplace")


@functools.lru_cache(maxsize=1024)
def nvdisasm_file_name(printed: str) -> str:
    """A ``//## File "..."`` name of nvdisasm as the name on disk: its folder split undone where the name
    is UTF-8 only with it undone (``\\303/251.cu``: a lone UTF-8 lead byte before a ``/`` is no name a
    file system gave), then decoded as :func:`ptx_file_name`."""
    if "\\" not in printed:
        return printed
    m = _SPLIT_ESCAPE.search(printed)
    if m is not None and _utf8(_bytes_of(printed)) is None:
        joined = printed[:m.start()] + m.group(1) + "\\" + m.group(2)
        if _utf8(_bytes_of(joined)) is not None:
            printed = joined
    return ptx_file_name(printed)
