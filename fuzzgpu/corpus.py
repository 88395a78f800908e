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
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import __version__
from .errors import UserError
from .evidence import canonical, program_hash
from .files import create_exclusive, write_atomic
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
MAX_THREADS = 8
MAX_INSTRUCTIONS = 32
MAX_PLACEMENT = 1 << 16
MAX_INSTANCES = 1 << 50
MAX_FILE_BYTES = 16 << 20
SAFE_NAME_RE = re.compile(r"[A-Za-z0-9_.+\-]{1,100}")
SIGNATURE_RE = re.compile(r"[0-9a-f]{8,64}")


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

_REQUIRED: dict[str, type | tuple[type, ...]] = {
    "schema": str, "version": int, "signature": str, "shape": str, "program": dict, "litmus": str,
    "property": str, "verdict": dict, "histogram": dict, "environment": dict, "stress": dict, "sass": list,
    "reproduction": dict, "shrunk": bool, "found": str, "campaign": dict,
}


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
    if not isinstance(d, dict):
        raise CorpusError(f"{where}: not a corpus entry (expected a JSON object)")
    if d.get("schema") != SCHEMA:
        raise CorpusError(f"{where}: not a fuzzgpu corpus entry (schema {d.get('schema')!r}, expected {SCHEMA!r})")
    for key, typ in _REQUIRED.items():
        if key not in d:
            raise CorpusError(f"{where}: missing field {key!r}")
        if not isinstance(d[key], typ) or (typ is int and isinstance(d[key], bool)):
            raise CorpusError(f"{where}: field {key!r} has the wrong type ({type(d[key]).__name__})")
    if d["version"] > VERSION or d["version"] < 1:
        raise CorpusError(f"{where}: corpus schema version {d['version']} is not one this fuzzgpu reads (1..{VERSION})")
    if d["property"] not in ("model", "sc", "race") and not d["property"].startswith("user:"):
        raise CorpusError(f"{where}: field 'property': unknown property {d['property']!r}")
    rep = d["reproduction"]
    for k in ("rate", "instances", "replay_instances", "confidence"):
        v = rep.get(k)
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            raise CorpusError(f"{where}: field 'reproduction.{k}' is missing or not a number")
        hi = 1.0 if k in ("rate", "confidence") else MAX_INSTANCES
        if not 0 <= v <= hi:  # exact for any int (no float conversion), False for NaN
            raise CorpusError(f"{where}: field 'reproduction.{k}': {_short(v)} is out of range (0..{hi:g})")
    if not SIGNATURE_RE.fullmatch(d["signature"]):
        raise CorpusError(f"{where}: field 'signature': {_short(d['signature'])} is not a signature (hex digits)")
    if not isinstance(d["verdict"].get("offending", []), list):
        raise CorpusError(f"{where}: field 'verdict.offending' is not a list")
    for o in d["verdict"].get("offending", []):
        if not isinstance(o, dict) or not isinstance(o.get("outcome", {}), dict):
            raise CorpusError(f"{where}: field 'verdict.offending' holds something that is not an outcome")
    t = d["verdict"].get("timeouts", 0)
    if not isinstance(t, int) or isinstance(t, bool) or not 0 <= t <= MAX_INSTANCES:
        raise CorpusError(f"{where}: field 'verdict.timeouts': {_short(t)} is not a count of instances")
    if not isinstance(d["histogram"].get("keys", []), list) or not all(isinstance(k, str) for k in d["histogram"].get("keys", [])):
        raise CorpusError(f"{where}: field 'histogram.keys' is not a list of names")
    prog = d["program"]
    for k in ("name", "arch"):
        v = prog.get(k, "PTX" if k == "arch" else None)
        if not isinstance(v, str) or not SAFE_NAME_RE.fullmatch(v):
            # the code generator writes these into CUDA comments: no newline or odd character gets there
            raise CorpusError(f"{where}: field 'program.{k}': {_short(v)} is not a plain name ({SAFE_NAME_RE.pattern})")
    threads = prog.get("threads")
    if isinstance(threads, list):
        if len(threads) > MAX_THREADS:
            raise CorpusError(f"{where}: field 'program': {len(threads)} threads (a corpus program has at most {MAX_THREADS})")
        for i, t in enumerate(threads):
            code = t.get("code") if isinstance(t, dict) else None
            if isinstance(code, list) and len(code) > MAX_INSTRUCTIONS:
                raise CorpusError(f"{where}: field 'program.threads[{i}]': {len(code)} instructions (at most {MAX_INSTRUCTIONS})")
    try:
        program = program_from_json(prog)
    except ProgramError as e:
        raise CorpusError(f"{where}: field 'program': {str(e).splitlines()[0] if str(e) else 'invalid'}") from None
    except (RecursionError, ValueError, TypeError, KeyError, AttributeError) as e:  # hostile shapes the IR loader did not expect
        raise CorpusError(f"{where}: field 'program': not a valid program ({type(e).__name__})") from None
    for t in program.threads:
        pl = t.placement
        for k in ("gpu", "cluster", "cta", "warp", "grid"):
            v = getattr(pl, k, None)
            if isinstance(v, int) and not 0 <= v < MAX_PLACEMENT:
                raise CorpusError(f"{where}: field 'program': thread {t.name} placement {k} {_short(v)} is out of range (0..{MAX_PLACEMENT - 1})")
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
    p = Path(path)
    try:
        if p.stat().st_size > MAX_FILE_BYTES:
            raise CorpusError(f"{p}: {p.stat().st_size} bytes: too large for a corpus entry (at most {MAX_FILE_BYTES})")
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise CorpusError(f"{p}: cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise CorpusError(f"{p}: not UTF-8 text") from None
    program, d = parse_entry_text(text, str(p))
    return Entry(p, d, program)


class Corpus:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    def entry_paths(self) -> list[Path]:
        if not self.root.is_dir():
            return []
        return sorted(p for p in self.root.glob("*.json") if not p.name.startswith("."))

    def entries(self) -> list[Entry]:
        return [load_entry(p) for p in self.entry_paths()]

    def signatures(self) -> set[str]:
        out = set()
        for p in self.entry_paths():
            try:
                sig = json.loads(p.read_text()).get("signature")
            except (OSError, ValueError, RecursionError, AttributeError):
                continue
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
            try:
                if json.loads(p.read_text()).get("signature") == sig:
                    return p, False
            except (OSError, ValueError, RecursionError, AttributeError):
                continue
        text = json.dumps(entry, indent=1, sort_keys=True, default=str)
        write_atomic(self.root / f"{name}.litmus", entry["litmus"])  # same text from every writer
        return path, create_exclusive(path, text + "\n")  # the JSON last: an entry exists once its JSON does


def find_entries(path: str | Path) -> list[Entry]:
    """A corpus folder's entries, or one entry file."""
    p = Path(path)
    if p.is_file():
        return [load_entry(p)]
    if not p.is_dir():
        raise CorpusError(f"{p}: no such corpus folder or entry file")
    return Corpus(p).entries()


__all__ = ["Corpus", "CorpusError", "Entry", "condition_for", "find_entries", "litmus_text", "load_entry",
           "make_entry", "parse_entry_text", "reproduction", "signature", "validate_entry", "verdict_signature"]
