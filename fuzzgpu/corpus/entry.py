"""One corpus entry: its limits and error, its signature (deduplication) and class (root cause),
making one from a finding (:func:`make_entry`), and loading one, validated (:func:`load_entry`)."""

from __future__ import annotations

import hashlib
import json
import math
import platform
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from .. import __version__
from .. import schema as _schema
from .. import bug_classes, semantics
from ..errors import UserError
from ..evidence import canonical, program_hash
from ..files import UnreadableFile, read_regular
from ..ir import (
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
      ``race:cp-async-without-wait`` -- the bug class or failed mechanism of the racing pairs, named
      (fuzzgpu.bug_classes.CLASS_NAMES, race_name; an old numbered key maps to its name), on any shape:
      a cp.async read before its wait and a dependent reading before griddepcontrol.wait are two
      classes, two missing waits of cp.async one;
    * else a timeout the model forbids: ``timeout`` on this shape;
    * else a value no store of the program wrote (``unwritten``: a harness or hardware fault, not
      an ordering verdict), on any shape;
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
        return f"{prop}|*|{readable_kind(kind)}"
    if timeout:
        return f"{prop}|{shape}|timeout"
    if ranked and ranked[0][0] == "unwritten":  # fuzzgpu.properties.UNWRITTEN: a harness or hardware fault
        return f"{prop}|*|unwritten"
    if ranked:
        return f"{prop}|{shape}|{ranked[0][0]}"
    return f"{prop}|{shape}|none"


def readable_kind(kind: str) -> str:
    """A property's kind of failure with every part named: ``race:4+flag`` (a key saved before
    classes had names) -> ``race:cp-async-without-wait+flag-without-release-acquire``
    (:func:`fuzzgpu.bug_classes.race_name`); a kind already named is unchanged."""
    if not kind.startswith("race:"):
        return kind
    return "race:" + "+".join(sorted({bug_classes.race_name(part) for part in kind[len("race:"):].split("+")}))


def readable_class_key(key: str) -> str:
    """A class key (``PROPERTY|SHAPE|KIND``, or a pattern of the known-findings list) with its kind
    named (:func:`readable_kind`): ``race|*|race:5`` -> ``race|*|race:scope-too-small``.  Old keys
    in entries, campaign states and known lists load through it."""
    parts = key.split("|", 2)
    return key if len(parts) < 3 else f"{parts[0]}|{parts[1]}|{readable_kind(parts[2])}"


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

    from .. import litmus

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
    from .. import model

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
        # the stress the finding ran under; not a campaign's run-length bound (timeout_stop): a
        # replay runs every instance it asks for
        "stress": {k: v for k, v in (config.to_json() if hasattr(config, "to_json") else dict(config)).items() if k != "timeout_stop"},
        "sass": [_sass_lines(f) for f in verdict.sass],
        "reproduction": reproduction(verdict_hits(verdict), hist.instances, deterministic),
        "oracle": oracle_view(program),
        "shrunk": shrunk,
        "found": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "campaign": dict(campaign or {}),
        "expect": "new",  # nobody has judged it yet (fuzzgpu.corpus.expect): replay fails while it still violates
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
    (:func:`fuzzgpu.ir.program_from_json`, then :func:`fuzzgpu.semantics.checked`, the door of
    every loader: ``ir.validate`` and the semantics table's instructions), every stored outcome names
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
        program = semantics.checked(program_from_json(d["program"]))  # the loaders' door: ir.validate, then the table
    except ProgramError as e:
        raise CorpusError(f"{where}: field 'program': {str(e).splitlines()[0] if str(e) else 'invalid'}") from None
    except (RecursionError, ValueError, TypeError, KeyError, AttributeError) as e:  # hostile shapes the IR loader did not expect
        raise CorpusError(f"{where}: field 'program': not a valid program ({type(e).__name__})") from None
    _check_litmus(d, program, where)
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


def _check_litmus(d: Mapping[str, Any], program: Program, where: str) -> None:
    """The entry's ``litmus`` text says what its ``program`` says (a person reads the one, fuzzgpu runs
    the other): the text :func:`litmus_text` prints for it, or one that parses to the same program
    (another printer's layout); CorpusError naming the field otherwise (an escape sequence, an edited
    instruction)."""
    from .. import litmus

    keys = d["histogram"].get("keys", [])
    offending = [tuple((k, o["outcome"].get(k)) for k in keys) for o in d["verdict"].get("offending", [])]
    expected = litmus_text(program, offending)
    text = d["litmus"]
    if text == expected:
        return
    try:
        same = litmus.parse(text) == litmus.parse(expected)
    except (UserError, RecursionError, ValueError):
        same = False
    if not same:
        raise CorpusError(f"{where}: field 'litmus' does not match field 'program' (expected the program's .litmus text, "
                          "as fuzzgpu prints it; the entry was edited or corrupted)")


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
