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
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
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
MAX_INSTANCES = _schema.MAX_INSTANCES
#: a plain name (an entry named in the known-findings list), the schema's program-name grammar
SAFE_NAME_RE = re.compile(r"[A-Za-z0-9_.+\-]{1,100}")


class CorpusError(UserError):
    """A corpus file that is not a valid entry (one line naming the file)."""


def sass_key(f: Mapping[str, Any]) -> str:
    """What identifies a SASS finding apart from line numbers, offsets and register names: the
    check, the direction, the kernel, and the mnemonics of the moved operation and of the
    synchronisation point (``ld.global.nc``, ``barrier.sync``; operands and type suffixes dropped,
    so that a change in the code generator's register numbering is not a new finding)."""
    return "|".join(str(x) for x in (f.get("check"), f.get("direction"), f.get("function"),
                                      _mnemonic(f.get("op_ptx")), _mnemonic(f.get("sync_ptx"))))


_TYPE_SUFFIX_RE = re.compile(r"(?:[busf](?:8|16|32|64|128)|v[248]|pred)")


def _mnemonic(text: Any) -> str:
    """``ld.global.nc.u32 %r3, [%rd1]`` -> ``ld.global.nc``."""
    head = str(text or "").split()
    if not head:
        return ""
    parts = head[0].split(".")
    while len(parts) > 1 and _TYPE_SUFFIX_RE.fullmatch(parts[-1]):
        parts.pop()
    return ".".join(parts)


def signature(program: Program, prop: str, offending: Iterable, sass_keys: Iterable[str] = (), timeout: bool = False) -> str:
    """The identity of a finding: the program, the property, the offending outcomes, the SASS
    findings (:func:`sass_key`), and whether timeouts the model forbids are part of it (a timeout
    finding and an outcome finding on one program are two findings)."""
    outs = sorted(canonical(list(map(list, o))) for o in offending)
    parts: list[Any] = [program_hash(program), prop, outs, sorted(sass_keys)]
    if timeout:
        parts.append("timeout")
    return hashlib.sha256(canonical(parts).encode()).hexdigest()[:20]


def verdict_signature(program: Program, verdict: Any) -> str:
    """:func:`signature` of a failing :class:`fuzzgpu.properties.Verdict`."""
    return signature(program, verdict.property, [o.outcome for o in verdict.offending], [sass_key(f) for f in verdict.sass],
                     timeout=bool(getattr(verdict, "timeouts", 0)))


def entry_signature(data: Mapping[str, Any], program: Program) -> str:
    """:func:`signature` recomputed from a stored entry (its program, property, offending outcomes
    in the histogram's key order, SASS findings and timeouts): what a campaign finding the same
    thing again computes."""
    keys = data["histogram"].get("keys", [])
    offending = [tuple((k, o["outcome"].get(k)) for k in keys) for o in data["verdict"].get("offending", [])]
    return signature(program, data["property"], offending, [sass_key(f) for f in data.get("sass", [])],
                     timeout=bool(data["verdict"].get("timeouts", 0)))


# -- classes: one root cause, one entry ---------------------------------------------------------

_CYCLE_EDGE_RE = re.compile(r"(?:^|\s)-(\S+?)-> ")
#: edges of a cycle that say what happened (program order, communication); the others (``sync``,
#: ``fence-sc``, ``bar``, ``grid``, ``dep``) are the ordering that should have forbidden it
_HAPPENED = frozenset({"po", "po-loc", "rf", "fr", "co", "obs"})


def _mechanism(event: str) -> str:
    """The synchronisation mechanism an event of a cycle belongs to, from its name
    (``P0:st.release.cta y, 2``): ``memory`` for the memory model's loads, stores, RMWs and fences
    (their release/acquire patterns are one mechanism whatever the scope); the instruction
    (``mbarrier.try_wait``, ``bar.sync``...) for the others."""
    text = event.split(":", 1)[1] if ":" in event.split(" ", 1)[0] else event
    op = _mnemonic(text)
    family = op.split(".")[0]
    if family in ("ld", "st", "atom", "red", "fence", "membar") and not op.startswith("fence.proxy"):
        return "memory"
    if family == "init":
        return "init"
    return ".".join(op.split(".")[:2]) if family in ("mbarrier", "cp", "griddepcontrol", "tcgen05") else family


def cycle_kinds(explanations: Iterable[str]) -> str:
    """What the forbidding cycles say went wrong, from the oracle's lines ``Causality (ISA...):
    P1:ld ... -fr-> P0:st ... -po-> ... -sync-> ...`` (one per distinct cycle that forbids the
    outcome): the ordering edges on the cycles, each with the mechanism of its two ends (``cycle
    through sync[memory]``, ``cycle through sync[mbarrier.arrive>mbarrier.try_wait]``), all the
    cycles together (which one the oracle lists first, and which axiom -- Causality, Fence-SC --
    closes it, do not matter: the ordering that failed is the same).  A cycle of program order and
    communication only (a coherence violation) adds its axiom and edge labels."""
    mechanisms, plain = set(), set()
    for explanation in explanations:
        axiom = explanation.split(" (", 1)[0].split(":", 1)[0].strip() or "?"
        tail = explanation.split("): ", 1)[1] if "): " in explanation else ""
        pieces = _CYCLE_EDGE_RE.split(" " + tail)  # [ev0, label1, ev1, label2, ev2, ...]
        events = [p.strip() for p in pieces[0::2]]
        labels = pieces[1::2]
        found = False
        for i, label in enumerate(labels):
            if label in _HAPPENED or i + 1 >= len(events):
                continue
            a, b = _mechanism(events[i]), _mechanism(events[i + 1])
            mechanisms.add(f"{label}[{a if a == b else a + '>' + b}]")
            found = True
        if not found:
            plain.add(f"{axiom} [{' '.join(sorted(set(labels)))}]")
    parts = []
    if mechanisms:
        parts.append(f"cycle through {' + '.join(sorted(mechanisms))}")
    parts += sorted(plain)
    return "; ".join(parts)


def finding_class(prop: str, shape: str, offences: Iterable[tuple[str, str, Iterable[str], int]],
                  sass: Iterable[Mapping[str, Any]] = (), timeout: bool = False, kind: str = "") -> str:
    """The root-cause class of a finding, a readable key ``PROPERTY|SHAPE|KIND`` such as
    ``model|*|forbidden:cycle through sync[memory]`` or ``sc|MP|allowed``.

    Two findings are one class when they break the same property for the same reason:

    * a SASS finding (ptxas moved a memory operation across a synchronisation point): the check,
      the direction and the mnemonic of the moved operation (``sass:crossing:hoisted
      above:ld.global.nc``), on any shape and whichever synchronisation points it crossed (an
      ``ld.global.nc`` hoisted above ``bar.sync`` and ``griddepcontrol.wait`` is one root cause:
      ptxas treats ``.nc`` loads as outside the memory model); several kinds in one program make
      one class of all of them;
    * else an offending outcome the oracle forbids -- the one seen most often when there are
      several: with cycles, the axioms and the *ordering* edges of the cycles the oracle reports,
      each with the mechanism of its ends (:func:`cycle_kinds`), on any shape: an MP and an LB
      whose release/acquire synchronisation failed to order are one root cause, whatever the
      scopes, load types, values and instructions off the cycle; without a cycle, the oracle's
      reason (a value no store wrote: a harness or hardware fault);
    * else the property's own kind of failure when it names one (``kind``: the race property's
      ``race:4`` -- the bug class or mechanism of the racing pairs, fuzzgpu.semantics), on any shape:
      a cp.async read before its wait and a dependent reading before griddepcontrol.wait are two
      classes, two missing waits of cp.async one;
    * else a timeout the model forbids: ``timeout`` on this shape;
    * else (the ``sc`` property) the verdict of the most frequent offending outcome
      (``allowed``, ``allowed-outside-model``) on this shape: an under-synchronised pattern.

    ``offences``: (verdict, reason, explanation lines, count) of each offending outcome.  SHAPE is
    ``*`` when the kind does not depend on it.  Everything else (values, scopes, placements, the
    instructions that are not on the cycle) makes variants of one class."""
    kinds = sorted({f"sass:{f.get('check')}:{f.get('direction')}:{_mnemonic(f.get('op_ptx'))}" for f in sass})
    if kinds:
        return f"{prop}|*|{' + '.join(kinds)}"
    ranked = sorted(offences, key=lambda o: (-int(o[3]), o[0], o[1]))
    forbidden = [o for o in ranked if o[0] == "forbidden"]
    if forbidden:
        verdict, reason, explanation, _ = forbidden[0]
        lines = [ln for ln in explanation if "): " in ln]
        return f"{prop}|*|forbidden:{cycle_kinds(lines) if lines else reason}"
    if kind:
        return f"{prop}|*|{kind}"
    if timeout:
        return f"{prop}|{shape}|timeout"
    if ranked:
        return f"{prop}|{shape}|{ranked[0][0]}"
    return f"{prop}|{shape}|none"


def class_id(key: str) -> str:
    """A class key's file name (hex digits)."""
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def verdict_class(shape: str, verdict: Any) -> str:
    """:func:`finding_class` of a failing :class:`fuzzgpu.properties.Verdict`."""
    return finding_class(verdict.property, shape, [(o.verdict, o.reason, o.explanation, o.count) for o in verdict.offending],
                         verdict.sass, bool(getattr(verdict, "timeouts", 0)), str(getattr(verdict, "class_key", "") or ""))


def entry_class(data: Mapping[str, Any]) -> str:
    """:func:`finding_class` recomputed from a stored entry."""
    offending = data["verdict"].get("offending", [])
    return finding_class(data["property"], data["shape"],
                         [(str(o.get("verdict", "")), str(o.get("reason", "")), [str(x) for x in o.get("explanation", [])],
                           o["count"] if isinstance(o.get("count"), int) else 0)
                          for o in offending if isinstance(o, dict)],
                         [f for f in data.get("sass", []) if isinstance(f, dict)], bool(data["verdict"].get("timeouts", 0)),
                         str(data["verdict"].get("class_key", "") or ""))


def finding_kinds(data_or_verdict: Any) -> list[str]:
    """``outcome`` / ``sass`` / ``timeout``: what a finding is made of (a SASS-only finding is one
    where no executed outcome broke the property)."""
    if isinstance(data_or_verdict, Mapping):
        v = data_or_verdict["verdict"]
        return [k for k, on in (("outcome", v.get("offending")), ("sass", data_or_verdict.get("sass")), ("timeout", v.get("timeouts"))) if on]
    return list(data_or_verdict.kinds)


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
    the confidence a replay of that many instances has.

    The rate is computed from integer counts, as the exact fraction ``failures / instances`` with
    ``failures`` clamped to ``0..instances`` (a SASS finding on top of an all-failing histogram must
    not make it 1.0000001), then rounded once to a float: never outside 0..1."""
    failures, instances = max(0, int(failures)), max(0, int(instances))
    if deterministic:
        return {"rate": 1.0, "failures": max(1, failures), "instances": instances, "replay_instances": max(1, instances),
                "confidence": 1.0, "note": "a compile-time finding: deterministic for one toolchain"}
    hits = min(failures, instances)
    rate = Fraction(hits, instances) if instances else Fraction(0)
    replay = max(1, math.ceil(3 / rate)) if rate > 0 else instances
    replay = min(replay, MAX_INSTANCES)
    conf = 1 - math.exp(-float(rate) * replay) if rate > 0 else 0.0
    return {"rate": float(rate), "failures": hits, "instances": instances, "replay_instances": int(replay),
            "confidence": min(1.0, max(0.0, round(conf, 4)))}


def verdict_hits(verdict: Any) -> int:
    """Instances that showed the finding: the offending outcomes' counts and the forbidden
    timeouts (integers; a SASS finding is a property of the compiled code, not of instances)."""
    return sum(int(o.count) for o in verdict.offending) + int(getattr(verdict, "timeouts", 0) or 0)


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
    key = verdict_class(shape or program.name, verdict)
    sig = verdict_signature(program, verdict)
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "signature": sig,
        "class": {"key": key, "id": class_id(key)},
        "shape": shape or program.name,
        "program": program_to_json(program),
        "litmus": litmus_text(program, offending),
        "property": verdict.property,
        "verdict": verdict.to_json(),
        "histogram": hist.to_json(),
        "environment": environment(backend, dict(hist.meta)),
        "stress": config.to_json() if hasattr(config, "to_json") else dict(config),
        "sass": [_sass_lines(f) for f in verdict.sass],
        "reproduction": reproduction(verdict_hits(verdict), hist.instances, deterministic),
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
        # known.json is the known-findings list (load_known), not an entry
        return sorted(p for p in self.root.glob("*.json") if not p.name.startswith(".") and p.name != KNOWN_FILE)

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
            return path, True
        self.add_variants(key, path, [sig])
        return path, False

    def class_path(self, key: str) -> Path:
        return self.root / CLASS_DIR / f"{class_id(key)}.json"

    def class_record(self, key: str, entry: Path | None = None) -> dict[str, Any]:
        """``{"key", "entry", "findings", "variants"}`` of a class: its count of distinct findings
        and the signatures of the first :data:`MAX_VARIANTS`; an entry without a record (saved
        before classes were counted, or shipped) holds one finding, itself."""
        try:
            d = json.loads(read_regular(self.class_path(key), MAX_FILE_BYTES))
            if isinstance(d, dict) and d.get("key") == key and isinstance(d.get("variants"), list) \
                    and isinstance(d.get("findings"), int) and not isinstance(d.get("findings"), bool):
                return d
        except (OSError, ValueError, RecursionError):
            pass
        sig = None
        if entry is not None:
            try:
                sig = json.loads(read_regular(entry, MAX_FILE_BYTES)).get("signature")
            except (OSError, ValueError, AttributeError):
                sig = None
        return {"schema": CLASS_SCHEMA, "version": 1, "key": key, "entry": entry.name if entry is not None else None,
                "findings": 1 if sig else 0, "variants": [sig] if sig else []}

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


# -- known findings ------------------------------------------------------------------------------

KNOWN_SCHEMA = "fuzzgpu.known"
KNOWN_FILE = "known.json"


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
    try:
        if p.stat().st_size > MAX_FILE_BYTES:
            raise CorpusError(f"{p}: too large for a known-findings file (at most {MAX_FILE_BYTES} bytes)")
        d = json.loads(p.read_text(encoding="utf-8"))
    except OSError as e:
        raise CorpusError(f"{p}: cannot read: {e.strerror or e}") from None
    except (ValueError, RecursionError) as e:
        raise CorpusError(f"{p}: not valid JSON ({type(e).__name__})") from None
    if not isinstance(d, dict) or d.get("schema") != KNOWN_SCHEMA:
        raise CorpusError(f"{p}: not a known-findings file (expected schema {KNOWN_SCHEMA!r})")
    if d.get("version") != 1:
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
            if not isinstance(k.get(f), str) or not k[f] or len(k[f]) > 1000 or "\n" in k[f]:
                raise CorpusError(f"{where}: field {f!r} must be a one-line string")
        if k["class"].count("|") < 2:
            raise CorpusError(f"{where}: field 'class': {_short(k['class'])} is not a class key (PROPERTY|SHAPE|KINDS)")
        entry = k.get("entry", "")
        if not isinstance(entry, str) or (entry and not SAFE_NAME_RE.fullmatch(entry)):
            raise CorpusError(f"{where}: field 'entry' must be an entry name")
        out[k["class"]] = Known(k["class"], k["title"], k["writeup"], entry)
    return out


def match_known(key: str, known: Mapping[str, Known]) -> Known | None:
    """The known class a finding's class key belongs to: an exact key, else the first pattern
    (``*`` for any text, every other character literal: keys hold ``[``) that matches it, e.g.
    ``*|*|sass:unguarded-wait:*`` for the SASS check of a lone try_wait whatever the property and
    the moved load."""
    if key in known:
        return known[key]
    return next((k for pat, k in known.items() if "*" in pat and _glob(pat).fullmatch(key)), None)


def _glob(pattern: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")), re.S)


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
    keeping their file names, which documents and known lists point to).  Returns (path,
    changed) for each entry."""
    out = []
    c = Corpus(root)
    for e in c.entries():
        new = refreshed(e.data, e.program)
        changed = new != dict(e.data)
        if changed:
            old: Mapping[str, Any] = e.data["class"] if isinstance(e.data.get("class"), dict) else {}
            old_key = old.get("key") if isinstance(old.get("key"), str) else None
            if old_key and old_key != new["class"]["key"] and c.class_path(old_key).is_file():
                rec = c.class_record(old_key, e.path)  # the count follows the class to its new name
                rec = {**rec, "key": new["class"]["key"], "entry": e.path.name,
                       "variants": [new["signature"] if v == e.data.get("signature") else v for v in rec["variants"]]}
                write_atomic(c.class_path(new["class"]["key"]), json.dumps(rec, indent=1) + "\n")
                c.class_path(old_key).unlink()
            write_atomic(e.path, json.dumps(new, indent=1, sort_keys=True, default=str) + "\n")
        out.append((e.path, changed))
    return out


def _main(argv: list[str] | None = None) -> int:
    """``python -m fuzzgpu.corpus refresh DIR``: maintenance of a corpus folder."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m fuzzgpu.corpus", description=refresh.__doc__)
    ap.add_argument("command", choices=("refresh",))
    ap.add_argument("dir")
    args = ap.parse_args(argv)
    try:
        for path, changed in refresh(args.dir):
            print(f"{path}: {'signature and class recomputed' if changed else 'up to date'}")
    except UserError as e:
        print(f"python -m fuzzgpu.corpus: error: {e}", file=sys.stderr)
        return 2
    return 0


def find_entries(path: str | Path) -> list[Entry]:
    """A corpus folder's entries, or one entry file."""
    p = Path(path)
    if p.is_dir():
        return Corpus(p).entries()
    if not p.exists() and not p.is_symlink():
        raise CorpusError(f"{p}: no such corpus folder or entry file")
    return [load_entry(p)]


__all__ = ["KNOWN_FILE", "Corpus", "CorpusError", "Entry", "Known", "class_id", "condition_for", "cycle_kinds", "entry_class",
           "entry_signature", "find_entries", "match_known", "finding_class", "finding_kinds", "litmus_text", "load_entry", "load_known",
           "make_entry", "parse_entry_text", "refresh", "refreshed", "reproduction", "sass_key", "signature", "validate_entry", "verdict_class",
           "verdict_hits", "verdict_signature"]


if __name__ == "__main__":
    sys.exit(_main())
