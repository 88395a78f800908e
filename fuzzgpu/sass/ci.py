"""What a CI job needs from ``fuzzgpu sass`` (pure, except reading and writing the files named):
a stable fingerprint per finding, a baseline of known findings, the ``--only`` categories, and SARIF
2.1.0 for GitHub code scanning.

A fingerprint names what a person would call "the same finding" after an unrelated edit: the kernel's
demangled name, the arch, the check, verdict and direction, the operation's kind and text with
registers normalised (``%r567`` -> ``%r``, ``R4`` -> ``R``), the kinds of the synchronisation points it
crossed, and the source file (its last two path components) and line when known.  PTX line numbers
and SASS offsets, which any edit shifts, are not part of it."""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from ..errors import UserError
from ..files import read_json
from .buildline import MAX_JSON_BYTES
from .pdl import PdlNote
from .report import CROSSING, FORBIDDEN, UNGUARDED_WAIT, Finding, Report

CATEGORIES = ("nc", "pdl", "proxy", "mbarrier")
BASELINE_VERSION = 1
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
TOOL_URI = "https://github.com/fuzzgpu/fuzzgpu/blob/main/docs/sass.md"

_PTX_REG = re.compile(r"%([a-z]+)\d+\b")
_SASS_REG = re.compile(r"\b(U?R|U?P)\d+\b")


def normalise(text: str) -> str:
    """An instruction's text without register numbers and with single spaces."""
    return " ".join(_SASS_REG.sub(r"\1", _PTX_REG.sub(r"%\1", text)).split())


def op_kind(f: Finding) -> str:
    """The opcode of the moved operation (``ld.global.nc.v4.s32``, else its SASS ``LDG.E.128.CONSTANT``)."""
    text = (f.op_ptx or f.op_sass).strip()
    text = re.sub(r"^@!?%?\w+\s+", "", text)
    return text.split()[0] if text else ""


def sync_kinds(f: Finding) -> tuple[str, ...]:
    """The opcodes of the synchronisation points the finding crossed (its own and ``crossed``)."""
    texts = [f.sync_ptx or f.sync_sass, *getattr(f, "crossed", ())]
    return tuple(sorted({t.strip().split()[0].rstrip(";") for t in texts if t and t.strip()}))


def source_location(f: Finding) -> tuple[str, int]:
    """The finding's source file (as the line table names it, normalised; relative to the current
    folder when it lies under it, as SARIF and a reader want it) and line; ("", 0) when unknown."""
    file = str(getattr(f, "src_file", "") or "")
    return _readable_path(file), int(getattr(f, "src_line", 0) or 0)


def _readable_path(path: str) -> str:
    if not path:
        return ""
    norm = os.path.normpath(path)
    if os.path.isabs(norm):
        rel = os.path.relpath(norm)
        if not rel.startswith(".."):
            return rel
    return norm


def _short_path(path: str) -> str:
    return "/".join(Path(path).parts[-2:]) if path else ""


def fingerprint(f: Finding, kernel: str) -> str:
    """The finding's stable fingerprint: 16 hex digits (see the module's docstring)."""
    file, line = source_location(f)
    parts = (kernel, f.arch, f.check, f.verdict, f.direction, op_kind(f), normalise(f.op_ptx or f.op_sass),
             ",".join(sync_kinds(f)), _short_path(file), str(line) if file else "")
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


def note_fingerprint(n: PdlNote, kernel: str) -> str:
    parts = ("pdl-review", n.kind, kernel, n.arch, normalise(n.text), _short_path(n.src_file), str(n.src_line))
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


def categories(f: Finding) -> set[str]:
    """The ``--only`` categories a finding belongs to."""
    sync = " ".join([f.sync_ptx, f.sync_sass, *getattr(f, "crossed", ())])
    out = set()
    if ".nc" in f.op_ptx or ".CONSTANT" in f.op_sass:
        out.add("nc")
    if "griddepcontrol" in sync or re.search(r"\b(ACQBULK|PREEXIT)\b", sync):
        out.add("pdl")
    if "fence.proxy" in sync or "FENCE.VIEW.ASYNC" in sync or re.match(r"\s*(cp|cp\.reduce)\.async\.bulk", f.op_ptx):
        out.add("proxy")
    if "mbarrier" in sync or "SYNCS" in sync or f.check == UNGUARDED_WAIT:
        out.add("mbarrier")
    return out


# ------------------------------------------------------------------------------------------------
# baselines
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Known:
    """A baseline: how many findings of each fingerprint were accepted."""

    counts: dict[str, int]
    path: str


def read_baseline(path: str | Path) -> Known:
    try:
        data = read_json(path, MAX_JSON_BYTES, "a fuzzgpu sass baseline")
    except ValueError as e:
        raise UserError(f"{path}: {e}") from None
    if not isinstance(data, dict) or data.get("version") != BASELINE_VERSION or not isinstance(data.get("findings"), list):
        raise UserError(f"{path}: not a fuzzgpu sass baseline: expected {{\"version\": {BASELINE_VERSION}, \"findings\": [...]}} "
                        "(write one with --write-baseline)")
    counts: Counter[str] = Counter()
    for n, ent in enumerate(data["findings"]):
        if not isinstance(ent, dict) or not isinstance(ent.get("fingerprint"), str):
            raise UserError(f"{path}: finding {n}: expected an object with a \"fingerprint\"")
        counts[ent["fingerprint"]] += 1
    return Known(dict(counts), str(path))


def mark_new(fingerprints: Sequence[str], known: Known | None) -> list[bool]:
    """For each fingerprint in order: is it new?  A baseline that holds a fingerprint N times
    accepts its first N occurrences."""
    left = dict(known.counts) if known else {}
    out = []
    for fp in fingerprints:
        if left.get(fp, 0) > 0:
            left[fp] -= 1
            out.append(False)
        else:
            out.append(True)
    return out


def baseline_document(entries: Iterable[dict]) -> dict:
    return {"version": BASELINE_VERSION, "tool": "fuzzgpu sass", "findings": list(entries)}


# ------------------------------------------------------------------------------------------------
# SARIF 2.1.0
# ------------------------------------------------------------------------------------------------

RULES = {
    "crossing": "A memory operation that ptxas moved across a synchronisation point",
    "merged": "Two PTX loads of one address became one SASS load",
    "deleted": "A PTX memory operation with no SASS",
    "loop-deleted": "A delay loop of the PTX with no loop in the SASS",
    "unguarded-wait": "A memory operation after mbarrier.try_wait that the wait's predicate does not guard",
    "pdl-review/read-before-wait": "A global read before griddepcontrol.wait: is it written by the primary grid?",
    "pdl-review/compiled-out": "The source waits for the primary grid, the PTX has no griddepcontrol.wait",
}


@dataclass(frozen=True)
class Result:
    """One SARIF result: a finding or a PDL note, with where it is."""

    rule: str
    level: str  # error | warning | note
    message: str
    uri: str  # the source file when known, else the input
    line: int  # 0: unknown
    fingerprint: str
    new: bool


def result_of_finding(f: Finding, kernel: str, fp: str, new: bool, input_path: str) -> Result:
    file, line = source_location(f)
    what = f.direction if f.check == CROSSING else f.check
    sync = f" {f.sync_ptx or f.sync_sass}" if f.sync_ptx or f.sync_sass else ""
    msg = (f"{f.verdict}: {op_kind(f) or 'operation'} {what}{sync} in {kernel} ({f.arch}); "
           f"PTX `{f.op_ptx or '-'}`, SASS `{f.op_sass or '-'}`. {f.reason}")
    return Result(f.check, "error" if f.verdict == FORBIDDEN else "warning", msg, file or input_path, line if file else 0, fp, new)


def result_of_note(n: PdlNote, kernel: str, fp: str, new: bool, input_path: str) -> Result:
    return Result(f"pdl-review/{n.kind}", "note", f"{n.message} ({kernel or 'module'}, {n.arch}; PTX `{n.text}`)",
                  n.src_file or input_path, n.src_line if n.src_file else 0, fp, new)


def _uri(path: str) -> str:
    p = Path(path)
    if p.is_absolute():
        try:
            return p.relative_to(Path.cwd()).as_posix()
        except ValueError:
            return p.as_uri()
    return p.as_posix()


@dataclass(frozen=True)
class Notice:
    """What a run did not check (level ``warning``) or could not read (``error``): a SARIF tool
    execution notification, so that a log with no result is never read as "clean" when it is not."""

    level: str  # "warning" | "error"
    message: str
    uri: str  # the input ("": none to name, e.g. an nvcc command line)


def notices_of(reports: Sequence[Report], errors: Sequence[tuple[str, str]] = ()) -> list[Notice]:
    """One warning per module or function not fully checked, one error per input not checked
    (``errors``: (input, the error line))."""
    out = [Notice("warning", f"{r.arch}: not fully checked: {why}", r.source) for r in reports for why in r.unchecked]
    out += [Notice("warning", f"{r.arch} {fn.short_name}: not fully checked: {why}", r.source)
            for r in reports for fn in r.functions for why in fn.unchecked]
    return out + [Notice("error", line, src if Path(src).exists() else "") for src, line in errors]


def sarif_document(results: Sequence[Result], version: str, notices: Sequence[Notice] = ()) -> dict:
    """A SARIF 2.1.0 log with one run of ``fuzzgpu sass``; ``notices`` become the run's invocation's
    tool execution notifications (and an error one makes the execution unsuccessful)."""
    used = sorted({r.rule for r in results} | {"crossing"})
    rules = [{"id": rid, "shortDescription": {"text": RULES.get(rid, rid)}, "helpUri": TOOL_URI} for rid in used]
    out = []
    for r in results:
        loc: dict = {"artifactLocation": {"uri": _uri(r.uri)}}
        if r.line > 0:
            loc["region"] = {"startLine": r.line}
        out.append({
            "ruleId": r.rule,
            "ruleIndex": used.index(r.rule),
            "level": r.level,
            "message": {"text": r.message},
            "locations": [{"physicalLocation": loc}],
            "partialFingerprints": {"fuzzgpuSass/v1": r.fingerprint},
            "baselineState": "new" if r.new else "unchanged",
        })
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "fuzzgpu sass", "version": version, "informationUri": TOOL_URI,
                                      "rules": rules}},
                  "invocations": [{
                      "executionSuccessful": not any(n.level == "error" for n in notices),
                      "toolExecutionNotifications": [
                          {"level": n.level, "message": {"text": n.message},
                           **({"locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(n.uri)}}}]} if n.uri else {})}
                          for n in notices],
                  }],
                  "results": out}],
    }
