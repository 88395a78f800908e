"""The known-findings list (``D/known.json`` or ``--known FILE``): classes already understood and
written up, which a campaign counts and does not save again."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..files import UnreadableFile, read_regular
from .entry import MAX_FILE_BYTES, SAFE_NAME_RE, CorpusError, _short, readable_class_key


KNOWN_SCHEMA = "fuzzgpu.known"
KNOWN_FILE = "known.json"
#: ``--known shipped``: the list that comes with fuzzgpu (``fuzzgpu/corpus/known.json``, a copy of the
#: repository's ``corpus/known.json``), so that a campaign from an installed wheel needs no clone
SHIPPED = "shipped"


def known_file(arg: str | None) -> str | None:
    """The known-findings file ``--known`` names: its path, or for :data:`SHIPPED` the packaged list."""
    if arg != SHIPPED:
        return arg
    return str(Path(__file__).with_name(KNOWN_FILE))


@dataclass(frozen=True)
class Known:
    """A class already understood and written up: a campaign counts it and does not save it."""

    key: str  # a finding_class key
    title: str
    writeup: str  # where it is written up, e.g. docs/findings.md#...
    entry: str = ""  # the corpus entry that shows it


def load_known(path: str | Path) -> dict[str, Known]:
    """A known-findings file: ``{"schema": "fuzzgpu.known", "version": 1, "known": [{"class":
    KEY, "title": ..., "writeup": ..., "entry": ...}]}``; CorpusError (one line naming the file)
    for anything else."""
    p = Path(path)
    try:  # a regular file only (a FIFO would block the read for ever), as entries are read
        d = json.loads(read_regular(p, MAX_FILE_BYTES).decode("utf-8"))
    except UnreadableFile as e:
        raise CorpusError(f"{p}: cannot read: {e} (expected a known-findings file: a JSON file of at most {MAX_FILE_BYTES} bytes)") from None
    except OSError as e:
        raise CorpusError(f"{p}: cannot read: {e.strerror or e}") from None
    except (ValueError, RecursionError) as e:
        raise CorpusError(f"{p}: not valid JSON ({type(e).__name__})") from None
    if not isinstance(d, dict) or d.get("schema") != KNOWN_SCHEMA:
        raise CorpusError(f"{p}: not a known-findings file (expected schema {KNOWN_SCHEMA!r})")
    if type(d.get("version")) is not int or d["version"] != 1:  # the integer 1: not 1.0, not true
        raise CorpusError(f"{p}: known-findings version {_short(d.get('version'))} is not one this fuzzgpu reads (1)")
    items = d.get("known")
    if not isinstance(items, list):
        raise CorpusError(f"{p}: field 'known' must be a list")
    out: dict[str, Known] = {}
    for i, k in enumerate(items):
        where = f"{p}: field 'known[{i}]'"
        if not isinstance(k, dict):
            raise CorpusError(f"{where}: expected an object")
        for f in ("class", "title", "writeup"):
            # printed as they are by the campaign's report: one line, no control character (an escape)
            if not isinstance(k.get(f), str) or not k[f] or len(k[f]) > 1000 or not k[f].isprintable():
                raise CorpusError(f"{where}: field {f!r} must be a one-line string of printable characters")
        if k["class"].count("|") < 2:
            raise CorpusError(f"{where}: field 'class': {_short(k['class'])} is not a class key (PROPERTY|SHAPE|KINDS)")
        entry = k.get("entry", "")
        if not isinstance(entry, str) or (entry and not SAFE_NAME_RE.fullmatch(entry)):
            raise CorpusError(f"{where}: field 'entry' must be an entry name")
        key = readable_class_key(k["class"])  # a key written before race classes had names (race:5) still matches
        out[key] = Known(key, k["title"], k["writeup"], entry)
    return out


def match_known(key: str, known: Mapping[str, Known]) -> Known | None:
    """The known class a finding's class key belongs to: an exact key, else the first pattern
    (``*`` for any text, every other character literal: keys hold ``[``) that matches it, e.g.
    ``*|*|sass:unguarded-wait:*`` for the SASS check of a lone try_wait whatever the property and
    the moved load; a class of several root causes (``A + B``) when each of them is known."""
    found = _match_one(key, known)
    if found is not None:
        return found
    # a program that shows several root causes has the class "A + B" (one per finding of it): it is
    # known when every one of them is -- two known deviations at once teach nothing new
    head, sep, causes = key.rpartition("|")
    parts = causes.split(" + ")
    if not sep or len(parts) < 2:
        return None
    each = [_match_one(f"{head}|{p}", known) for p in parts]
    return each[0] if all(k is not None for k in each) else None


def _match_one(key: str, known: Mapping[str, Known]) -> Known | None:
    if key in known:
        return known[key]
    return next((k for pat, k in known.items() if "*" in pat and _glob(pat).fullmatch(key)), None)


def _glob(pattern: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")), re.S)
