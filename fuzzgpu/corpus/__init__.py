"""The corpus: one JSON file per finding (DESIGN.md, "The corpus").

Layout of a corpus folder ``D``::

    D/<hash>.json         one finding (schema ``fuzzgpu.corpus``), named by the hash of its content
    D/<hash>.litmus       the same program as a .litmus file a person can read and re-check
    D/classes/<id>.json   each class's record (schema ``fuzzgpu.class``): its entry, its count of distinct
                          findings and the first variants' signatures; written with the class's first finding
    D/.fuzzgpu/           campaign state, Hypothesis's example database, the evidence cache
    D/report/             the last campaign's report (text, JSON, plot)

An entry holds: the program (IR JSON) and its ``.litmus`` text, the property and the verdict (the
offending outcomes with the oracle's judgement and cycle), the oracle's allowed outcomes for the
whole program (``oracle``; optional on load), the observed histogram with counts, the
arch / GPU / driver / toolchain, the stress configuration, the SASS lines that matter, and the
reproduction rate with its confidence.  Files are written atomically (temp + fsync + rename).
Loading validates the schema and reports a bad file in one line naming it; it never executes
anything from the file (JSON only; the program goes through :func:`fuzzgpu.ir.program_from_json`
and :func:`fuzzgpu.semantics.checked`, the door of every loader).

Findings are deduplicated by :func:`signature`: the hash of the (shrunk) program, the property and
the set of offending outcomes (or SASS findings), marked when the finding is a timeout the model
forbids (``verdict.timeouts``: instances that timed out although every wait must complete).

An entry's ``expect`` (``reproduces``, ``fixed``, ``new``; absent: ``new``) says what CI expects of
its replay (:mod:`.expect`).

The package, one module per job: :mod:`.entry` (one entry: limits, signature, class, making and
loading it), :mod:`.expect` (an entry's expectation, a replay judged against it), :mod:`.known` (the known-findings list), :mod:`.store` (a corpus folder: entries,
class records, refresh); ``python -m fuzzgpu.corpus refresh DIR`` is :mod:`.__main__`.
"""

from __future__ import annotations

from .entry import (
    MAX_FILE_BYTES, MAX_INSTANCES, MAX_INSTRUCTIONS, MAX_THREADS, SAFE_NAME_RE, SCHEMA, STATE_DIR, VERSION, CorpusError, Entry, class_id,
    condition_for, cycle_kinds, entry_class, entry_signature, environment, finding_class, finding_kinds, litmus_text, load_entry,
    make_entry, oracle_view, parse_entry_text, readable_class_key, readable_kind, reproduction, sass_key, signature, validate_entry, verdict_class, verdict_hits,
    verdict_signature,
)
from .expect import EXPECTATIONS, expectation
from .known import KNOWN_FILE, KNOWN_SCHEMA, Known, load_known, match_known
from .store import CLASS_DIR, CLASS_SCHEMA, MAX_VARIANTS, Corpus, find_entries, refresh, refreshed

__all__ = [
    "CLASS_DIR",
    "CLASS_SCHEMA",
    "KNOWN_FILE",
    "KNOWN_SCHEMA",
    "MAX_FILE_BYTES",
    "MAX_INSTANCES",
    "MAX_INSTRUCTIONS",
    "MAX_THREADS",
    "MAX_VARIANTS",
    "SAFE_NAME_RE",
    "SCHEMA",
    "STATE_DIR",
    "VERSION",
    "Corpus",
    "CorpusError",
    "EXPECTATIONS",
    "Entry",
    "Known",
    "class_id",
    "condition_for",
    "cycle_kinds",
    "entry_class",
    "entry_signature",
    "environment",
    "expectation",
    "find_entries",
    "finding_class",
    "finding_kinds",
    "litmus_text",
    "load_entry",
    "load_known",
    "make_entry",
    "match_known",
    "oracle_view",
    "parse_entry_text",
    "readable_class_key",
    "readable_kind",
    "refresh",
    "refreshed",
    "reproduction",
    "sass_key",
    "signature",
    "validate_entry",
    "verdict_class",
    "verdict_hits",
    "verdict_signature",
]
