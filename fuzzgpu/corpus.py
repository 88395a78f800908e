"""The corpus: one JSON file per finding (DESIGN.md, "The corpus").

Layout of a corpus folder ``D``::

    D/<hash>.json         one finding (schema ``fuzzgpu.corpus``), named by the hash of its content
    D/<hash>.litmus       the same program as a .litmus file a person can read and re-check
    D/.fuzzgpu/           campaign state, Hypothesis's example database, the evidence cache
    D/report/             the last campaign's report (text, JSON, plot)

An entry holds: the program (IR JSON) and its ``.litmus`` text, the property and the verdict (the
offending outcomes with the oracle's judgement and cycle), the oracle's allowed outcomes for the
whole program (``oracle``; optional on load), the observed histogram with counts, the
arch / GPU / driver / toolchain, the stress configuration, the SASS lines that matter, and the
reproduction rate with its confidence.  Files are written atomically (temp + fsync + rename).
Loading validates the schema and reports a bad file in one line naming it; it never executes
anything from the file (JSON only; the program goes through :func:`fuzzgpu.ir.program_from_json`).

Findings are deduplicated by :func:`signature`: the hash of the (shrunk) program, the property and
the set of offending outcomes (or SASS findings), marked when the finding is a timeout the model
forbids (``verdict.timeouts``: instances that timed out although every wait must complete).
"""

from __future__ import annotations

import hashlib
import json
import math
import platform
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import __version__
from . import schema as _schema
from .errors import UserError
from .evidence import canonical, program_hash
from .files import UnreadableFile, create_exclusive, is_regular, read_regular, write_atomic
from .ir import (
    And,
    Cmp,
    Condition,
    LocRef,
    Or,
    Program,
    ProgramError,
    RegRef,
    program_from_json,
    program_to_json,
)

SCHEMA = "fuzzgpu.corpus"
VERSION = 1
STATE_DIR = ".fuzzgpu"


#: limits on what a corpus file may hold (a hostile file must not make the oracle or the harness
#: run for ever): programs are small litmus tests
#: (fuzzgpu.schema holds the schema of an entry and these limits)
MAX_THREADS = _schema.CORPUS_MAX_THREADS
MAX_INSTRUCTIONS = _schema.CORPUS_MAX_INSTRUCTIONS
MAX_FILE_BYTES = 16 << 20


class CorpusError(UserError):
    """A corpus file that is not a valid entry (one line naming the file)."""


def signature(program: Program, prop: str, offending: Iterable, sass_keys: Iterable[str] = (), timeout: bool = False) -> str:
    """The identity of a finding: the program, the property, the offending outcomes, the SASS
    findings, and whether timeouts the model forbids are part of it (a timeout finding and an
    outcome finding on one program are two findings)."""
    outs = sorted(canonical(list(map(list, o))) for o in offending)
    parts: list[Any] = [program_hash(program), prop, outs, sorted(sass_keys)]
    if timeout:
        parts.append("timeout")
    return hashlib.sha256(canonical(parts).encode()).hexdigest()[:20]


def verdict_signature(program: Program, verdict: Any) -> str:
    """:func:`signature` of a failing :class:`fuzzgpu.properties.Verdict`."""
    return signature(program, verdict.property, [o.outcome for o in verdict.offending], verdict.sass_keys(),
                     timeout=bool(getattr(verdict, "timeouts", 0)))


def condition_for(program: Program, outcomes: Iterable) -> Condition | None:
    """``exists (a /\\ b) \\/ (...)``: the offending outcomes, so the .litmus says what was seen."""
    terms = []
    for o in outcomes:
        cmps = []
        for k, v in o:
            if v is None:
                break
            lhs = RegRef(*k.split(":", 1)) if ":" in k else LocRef(k)
            cmps.append(Cmp("==", lhs, v))
        else:
            if cmps:
                terms.append(And(tuple(cmps)) if len(cmps) > 1 else cmps[0])
    if not terms:
        return None
    return Condition("exists", Or(tuple(terms)) if len(terms) > 1 else terms[0])


def litmus_text(program: Program, outcomes: Iterable = ()) -> str:
    """The program as .litmus text, with an ``exists`` clause for the offending outcomes."""
    import dataclasses

    from . import litmus

    cond = condition_for(program, list(outcomes))
    shown = dataclasses.replace(program, condition=cond) if cond is not None and program.condition is None else program
    if shown.outcome_keys() != program.outcome_keys():  # keep the program's keys whatever the condition says
        shown = program
    try:
        return litmus.format_program(shown)
    except Exception as e:  # noqa: BLE001 -- the printer refuses what it cannot write: say so, keep the JSON
        return f"// this program has no .litmus form yet ({type(e).__name__}: {e}); see the JSON entry\n"


def environment(backend: Any, hist_meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
    meta = dict(hist_meta or {})
    ident = getattr(backend, "identity", None)
    name, arch, toolchain = ident() if ident else (getattr(backend, "name", "?"), "unknown", "unknown")
    return {
        "backend": getattr(backend, "name", name),
        "backend_id": name,
        "description": backend.describe() if hasattr(backend, "describe") else str(backend),
        "arch": meta.get("arch", arch),
        "gpu": meta.get("device", meta.get("gpu", "none")),
        "driver": meta.get("driver", "none"),
        "toolchain": meta.get("toolchain", toolchain),
        "fuzzgpu": __version__,
        "python": platform.python_version(),
        "host": platform.node(),
    }


def reproduction(failures: int, instances: int, deterministic: bool = False) -> dict[str, Any]:
    """The measured rate, the instances a replay needs to see it with 95% confidence (3/rate), and
    the confidence a replay of that many instances has."""
    if deterministic:
        return {"rate": 1.0, "failures": failures, "instances": instances, "replay_instances": max(1, instances),
                "confidence": 1.0, "note": "a compile-time finding: deterministic for one toolchain"}
    rate = failures / instances if instances else 0.0
    replay = max(instances and 1, math.ceil(3 / rate)) if rate > 0 else instances
    conf = 1 - math.exp(-rate * replay) if rate > 0 else 0.0
    return {"rate": rate, "failures": failures, "instances": instances, "replay_instances": int(replay),
            "confidence": round(conf, 4)}


def oracle_view(program: Program, limit: int = 64) -> dict[str, Any]:
    """What the memory-model oracle says about the program as a whole: every allowed outcome with
    its verdict (``sc`` / ``allowed`` / ``allowed-outside-model``), or why it does not cover it."""
    from . import model

    try:
        a = model.analyse(program)
    except model.Unsupported as e:
        return {"covered": False, "reason": str(e)}
    out = [{"outcome": dict(o), "verdict": a.verdict(o)} for o in sorted(a.possible)[:limit]]
    return {"covered": True, "allowed": out, "truncated": len(a.possible) > limit}


def make_entry(program: Program, verdict: Any, hist: Any, backend: Any, config: Any, *, shape: str = "",
               shrunk: bool = True, campaign: Mapping[str, Any] | None = None) -> dict[str, Any]:
    deterministic = bool(verdict.sass) and not verdict.offending and not getattr(verdict, "timeouts", 0)
    offending = [o.outcome for o in verdict.offending]
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "signature": verdict_signature(program, verdict),
        "shape": shape or program.name,
        "program": program_to_json(program),
        "litmus": litmus_text(program, offending),
        "property": verdict.property,
        "verdict": verdict.to_json(),
        "histogram": hist.to_json(),
        "environment": environment(backend, dict(hist.meta)),
        "stress": config.to_json() if hasattr(config, "to_json") else dict(config),
        "sass": [_sass_lines(f) for f in verdict.sass],
        "reproduction": reproduction(verdict.failures, hist.instances, deterministic),
        "oracle": oracle_view(program),
        "shrunk": shrunk,
        "found": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "campaign": dict(campaign or {}),
    }


def _sass_lines(f: Mapping[str, Any]) -> dict[str, Any]:
    keep = ("check", "verdict", "direction", "arch", "function", "op_ptx", "op_ptx_line", "op_sass", "op_sass_line",
            "op_sass_offset", "sync_ptx", "sync_ptx_line", "sync_sass", "sync_sass_line", "sync_sass_offset", "reason")
    return {k: f.get(k) for k in keep if k in f}


# -- loading ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    path: Path
    data: Mapping[str, Any]
    program: Program

    @property
    def signature(self) -> str:
        return self.data["signature"]

    @property
    def prop(self) -> str:
        """The property name (``model``, ``sc``)."""
        return self.data["property"]

    @property
    def shape(self) -> str:
        return self.data["shape"]

    @property
    def reproduction(self) -> Mapping[str, Any]:
        return self.data["reproduction"]

    @property
    def stress(self) -> Mapping[str, Any]:
        return self.data["stress"]

    @property
    def timeouts(self) -> int:
        """Timed-out instances that were the finding (0 for an outcome or SASS finding)."""
        v = self.data["verdict"].get("timeouts", 0)
        return v if isinstance(v, int) and not isinstance(v, bool) else 0

    def offending(self) -> list[tuple[tuple[str, Any], ...]]:
        keys = self.data["histogram"].get("keys", [])
        return [tuple((k, o["outcome"].get(k)) for k in keys) for o in self.data["verdict"].get("offending", [])]


def validate_entry(d: Any, where: str) -> Program:
    """The program of corpus entry ``d`` (parsed JSON), the whole document checked first against
    :data:`fuzzgpu.schema.ENTRY_SCHEMA`, then what a schema cannot say: the program is valid IR
    (:func:`fuzzgpu.ir.program_from_json`, ending in ``ir.validate``), every stored outcome names
    keys of the program only, placements are in range.  CorpusError: one line naming ``where``."""
    schema = _schema
    if not isinstance(d, dict):
        raise CorpusError(f"{where}: not a corpus entry (expected a JSON object)")
    if d.get("schema") != SCHEMA:
        raise CorpusError(f"{where}: not a fuzzgpu corpus entry (schema {_short(d.get('schema'))}, expected {SCHEMA!r})")
    v = d.get("version")
    if isinstance(v, int) and not isinstance(v, bool) and not 1 <= v <= VERSION:
        raise CorpusError(f"{where}: corpus schema version {_short(v)} is not one this fuzzgpu reads (1..{VERSION})")
    try:
        schema.check("entry", d)
    except schema.SchemaError as e:
        raise CorpusError(f"{where}: {e}") from None
    try:
        program = program_from_json(d["program"])
    except ProgramError as e:
        raise CorpusError(f"{where}: field 'program': {str(e).splitlines()[0] if str(e) else 'invalid'}") from None
    except (RecursionError, ValueError, TypeError, KeyError, AttributeError) as e:  # hostile shapes the IR loader did not expect
        raise CorpusError(f"{where}: field 'program': not a valid program ({type(e).__name__})") from None
    keys = set(program.outcome_keys())
    hist = d["histogram"]
    for k in hist.get("keys", []):
        if k not in keys:
            raise CorpusError(f"{where}: field 'histogram.keys': {_short(k)} is not an outcome key of the program "
                              f"(expected some of {sorted(keys)})")
    stored = [(f"histogram.outcomes[{i}]", o["outcome"]) for i, o in enumerate(hist.get("outcomes", []))]
    stored += [(f"verdict.offending[{i}]", o["outcome"]) for i, o in enumerate(d["verdict"].get("offending", []))]
    stored += [(f"oracle.allowed[{i}]", o["outcome"]) for i, o in enumerate((d.get("oracle") or {}).get("allowed", []))
               if isinstance(o.get("outcome"), dict)]
    for field_name, outcome in stored:
        unknown = set(outcome) - keys
        if unknown:
            raise CorpusError(f"{where}: field '{field_name}.outcome': key {_short(sorted(unknown)[0])} is not an outcome "
                              f"key of the program (expected some of {sorted(keys)})")
    return program


def _short(v: Any, n: int = 60) -> str:
    text = repr(v)
    return text if len(text) <= n else text[: n - 3] + "..."


def parse_entry_text(text: str, where: str) -> tuple[Program, Any]:
    """(program, data) of a corpus entry's JSON text; CorpusError (one line naming ``where``) for
    anything else: bad JSON, nesting too deep, numbers too long, constants (NaN, Infinity)."""

    def no_constants(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")

    try:
        d = json.loads(text, parse_constant=no_constants)
    except json.JSONDecodeError as e:
        raise CorpusError(f"{where}: not valid JSON (line {e.lineno}, column {e.colno}: {e.msg})") from None
    except RecursionError:
        raise CorpusError(f"{where}: not a corpus entry (JSON nested too deeply)") from None
    except ValueError as e:  # an integer of more than 4300 digits, NaN / Infinity
        raise CorpusError(f"{where}: not valid JSON ({str(e).split(';')[0]})") from None
    try:
        return validate_entry(d, where), d
    except RecursionError:
        raise CorpusError(f"{where}: not a corpus entry (nested too deeply)") from None


def load_entry(path: str | Path) -> Entry:
    """Read and validate one entry.  The file must be a regular file (a FIFO, a device or a
    symbolic link is refused, without blocking) of at most :data:`MAX_FILE_BYTES` bytes."""
    p = Path(path)
    try:
        data = read_regular(p, MAX_FILE_BYTES)
    except UnreadableFile as e:
        raise CorpusError(f"{p}: cannot read: {e} (expected a corpus entry: a JSON file of at most {MAX_FILE_BYTES} bytes)") from None
    except OSError as e:
        raise CorpusError(f"{p}: cannot read: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise CorpusError(f"{p}: not UTF-8 text") from None
    program, d = parse_entry_text(text, str(p))
    return Entry(p, d, program)


def _signature_of(p: Path) -> Any:
    """The signature field of the entry file ``p`` (None when it cannot be read)."""
    try:
        return json.loads(read_regular(p, MAX_FILE_BYTES)).get("signature")
    except (OSError, ValueError, RecursionError, AttributeError):
        return None


class Corpus:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    def entry_paths(self) -> list[Path]:
        """The corpus's entry files: regular files named ``*.json`` (not symbolic links, FIFOs...:
        :meth:`rejected_paths` lists those)."""
        return [p for p in self._json_paths() if is_regular(p)]

    def rejected_paths(self) -> list[Path]:
        """Names ``*.json`` in the corpus that are not regular files (a FIFO, a symbolic link, a
        folder): never opened, reported by replay."""
        return [p for p in self._json_paths() if not is_regular(p)]

    def _json_paths(self) -> list[Path]:
        if not self.root.is_dir():
            return []
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

    def add(self, entry: Mapping[str, Any]) -> tuple[Path, bool]:
        """Write an entry (and its .litmus) unless one with its signature exists.  Returns (path,
        written).

        Safe for several processes at once: the file is named by the signature (the hash of the
        shrunk program, the property and the offending outcomes), written to a temp file, fsynced,
        and *linked* to its name -- ``link`` fails when the name exists, so of two workers saving
        the same finding at the same moment exactly one creates the entry and the other is told it
        is a duplicate.  Entries saved under older names (the hash of the whole text) are found by
        reading their signatures."""
        validate_entry(dict(entry), "<new entry>")
        sig = entry["signature"]
        name = sig[:16]
        path = self.root / f"{name}.json"
        if path.exists():
            return path, False
        for p in self.entry_paths():
            if _signature_of(p) == sig:
                return p, False
        text = json.dumps(entry, indent=1, sort_keys=True, default=str)
        write_atomic(self.root / f"{name}.litmus", entry["litmus"])  # same text from every writer
        return path, create_exclusive(path, text + "\n")  # the JSON last: an entry exists once its JSON does


def find_entries(path: str | Path) -> list[Entry]:
    """A corpus folder's entries, or one entry file."""
    p = Path(path)
    if p.is_dir():
        return Corpus(p).entries()
    if not p.exists() and not p.is_symlink():
        raise CorpusError(f"{p}: no such corpus folder or entry file")
    return [load_entry(p)]


__all__ = ["Corpus", "CorpusError", "Entry", "condition_for", "find_entries", "litmus_text", "load_entry",
           "make_entry", "parse_entry_text", "reproduction", "signature", "validate_entry", "verdict_signature"]
