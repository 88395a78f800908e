"""JSON schemas of the documents fuzzgpu reads back: a corpus entry (``fuzzgpu.corpus``) and a
campaign's ``state.json`` (``fuzzgpu.campaign-state``).

A document is validated whole, against its schema (JSON Schema 2020-12, checked by ``jsonschema``),
before anything uses it: a wrong type three levels down (``histogram.outcomes[0].count = "x"``) is
refused in one line naming the file, the field and what was expected, never a traceback later.
The schemas are permissive about *extra* keys (a newer fuzzgpu adds fields, e.g. a finding's class,
count and variants) and strict about the keys fuzzgpu reads.  What a schema cannot say (an outcome
key must be a key of the program) is checked by the loaders after it
(:func:`fuzzgpu.corpus.validate_entry`).
"""

from __future__ import annotations

import functools
from typing import Any

from .errors import clip
from .ir import MAX_PLACEMENT, MAX_VALUE

#: limits of a corpus program (stricter than the IR's: a corpus entry is replayed in CI)
CORPUS_MAX_THREADS = 8
CORPUS_MAX_INSTRUCTIONS = 32
CORPUS_MAX_LOCATIONS = 32
MAX_INSTANCES = 1 << 50
MAX_TEXT = 1 << 20  # the .litmus text and other long strings of an entry
_U63 = (1 << 63) - 1

_COUNT = {"type": "integer", "minimum": 0, "maximum": MAX_INSTANCES}
_BIG_COUNT = {"type": "integer", "minimum": 0, "maximum": _U63}
_PROB = {"type": "number", "minimum": 0, "maximum": 1}
_SHORT = {"type": "string", "maxLength": 1000}
_LONG = {"type": "string", "maxLength": MAX_TEXT}
_VALUE = {"type": "integer", "exclusiveMinimum": -MAX_VALUE, "exclusiveMaximum": MAX_VALUE}
_OUTCOME_KEY = {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_]{0,63}(:r[0-9]{1,6})?$"}
#: an observed outcome: key -> value (null: a value outside the program's value table)
_OUTCOME = {
    "type": "object",
    "propertyNames": _OUTCOME_KEY,
    "additionalProperties": {"anyOf": [_VALUE, {"type": "null"}]},
    "maxProperties": 256,
}
_SCALAR = {"type": ["string", "integer", "number", "boolean", "null"]}
_SIGNATURE = {"type": "string", "pattern": r"^[0-9a-f]{8,64}$"}
_PLAIN_NAME = {"type": "string", "pattern": r"^[A-Za-z0-9_.+\-]{1,100}$"}
_FILE_NAME = {"type": "string", "pattern": r"^[A-Za-z0-9_.+\-]{1,200}$"}
_NAME_PATTERNS = frozenset({_PLAIN_NAME["pattern"], _FILE_NAME["pattern"]})

#: the run configuration (fuzzgpu.backends.base.RunConfig): the types replay passes on, and the
#: bounds a profile has (campaign.MAX_PROFILE_INT), so that every entry a campaign saves loads
_KNOB = {"type": "integer", "minimum": 0, "maximum": 10**15}
_STRESS = {
    "type": "object",
    "properties": {
        "instances": {"type": "integer", "minimum": 1, "maximum": MAX_INSTANCES},
        "stride": {"type": "integer", "minimum": 1, "maximum": 10**15},
        "barrier": {"type": "boolean"},
        "spin": _KNOB,
        "stress": _KNOB,
        "stress_lines": _KNOB,
        "seed": {"type": "integer", "minimum": 0, "maximum": (1 << 64) - 1},
        "test_ctas": {"type": "integer", "minimum": 1, "maximum": 10**15},
        "budget": {"type": "integer", "minimum": 1, "maximum": 10**15},
        "host_epoch": {"type": "boolean"},
        "graphs": {"type": "boolean"},
        "inline_check": {"type": "boolean"},
        "pdl_delay_ns": _KNOB,
        "pdl": {"type": "boolean"},
        # the knobs fuzzgpu.stress tunes
        "cta_threads": {"enum": [32, 64, 128, 256]},
        "ctas_per_sm": {"type": "integer", "minimum": 0, "maximum": 32},
        "permute_ctas": {"type": "boolean"},
        "permute_threads": {"type": "boolean"},
        "shuffle_locations": {"type": "boolean"},
        # backends.base.PRE_STRESS_MAX (this module sits below the backends: docs/architecture.md; a test ties the two)
        "pre_stress": {"type": "integer", "minimum": 0, "maximum": (1 << 23) - 1},
        "pre_stress_pattern": {"type": "integer", "minimum": 0, "maximum": 3},
        "stress_pattern": {"type": "integer", "minimum": 0, "maximum": 3},
        "stress_by_cta": {"type": "boolean"},
        "stress_word": {"type": "boolean"},
        "stripe_ctas": {"type": "boolean"},
    },
    "additionalProperties": _SCALAR,
}

_INSTRUCTION = {
    "type": "object",
    "required": ["op"],
    "properties": {"op": {"type": "string", "maxLength": 64}},
    "additionalProperties": {"anyOf": [_SCALAR, {"type": "array", "items": _SCALAR, "maxItems": 16}]},
    "maxProperties": 16,
}

#: the program (fuzzgpu.ir.program_to_json): its structure here, its meaning in fuzzgpu.ir.validate
PROGRAM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["schema", "version", "name", "threads"],
    "properties": {
        "schema": {"const": "fuzzgpu.program"},
        "version": {"type": "integer", "minimum": 1},
        "name": _PLAIN_NAME,
        "arch": _PLAIN_NAME,
        "comments": {"type": "array", "items": {"type": "string", "maxLength": 1 << 16}, "maxItems": 256},
        "locations": {
            "type": "array",
            "maxItems": CORPUS_MAX_LOCATIONS,
            "items": {
                "type": "object",
                "required": ["name"],
                "properties": {
                    "name": {"type": "string"},
                    "init": {"type": "integer"},
                    "space": {"type": "string"},
                    "alias_of": {"type": ["string", "null"]},
                    "proxy": {"type": "string"},
                    "kind": {"type": "string"},
                    "cta": {"type": ["integer", "null"]},
                    "target": {"type": ["string", "null"]},  # a tensor map's (issue 32, class D)
                },
                "additionalProperties": False,
            },
        },
        "threads": {
            "type": "array",
            "minItems": 1,
            "maxItems": CORPUS_MAX_THREADS,
            "items": {
                "type": "object",
                "required": ["name", "code"],
                "properties": {
                    "name": {"type": "string"},
                    "placement": {
                        "type": "object",
                        "additionalProperties": {"anyOf": [
                            {"type": "integer", "minimum": 0, "maximum": MAX_PLACEMENT - 1}, {"type": "null"}]},
                    },
                    "init": {"type": "object", "additionalProperties": _VALUE, "maxProperties": 256},
                    "code": {"type": "array", "items": _INSTRUCTION, "maxItems": CORPUS_MAX_INSTRUCTIONS},
                },
                "additionalProperties": False,
            },
        },
        "condition": {
            "anyOf": [
                {"type": "null"},
                {"type": "object", "required": ["quantifier", "expr"],
                 "properties": {"quantifier": {"type": "string"}, "expr": {"type": "object"}},
                 "additionalProperties": False},
            ]
        },
        "observed": {"type": "array", "items": _OUTCOME_KEY, "maxItems": 256},
        "pdl_grids": {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 64}, "maxItems": 64},
    },
    "additionalProperties": False,
}

_OFFENDING = {
    "type": "object",
    "required": ["outcome", "count", "verdict"],
    "properties": {
        "outcome": _OUTCOME,
        "count": _COUNT,
        "verdict": _SHORT,
        "reason": _LONG,
        "explanation": {"type": "array", "items": _LONG, "maxItems": 256},
    },
}

_SASS_FINDING = {
    "type": "object",
    "properties": {k: _SCALAR for k in ("check", "verdict", "direction", "arch", "function", "op_ptx", "op_sass",
                                         "sync_ptx", "sync_sass", "reason")}
    | {k: {"type": ["integer", "null"], "minimum": -1, "maximum": 1 << 40}
       for k in ("op_ptx_line", "op_sass_line", "op_sass_offset", "sync_ptx_line", "sync_sass_line", "sync_sass_offset")},
}

#: a corpus entry (fuzzgpu.corpus.make_entry)
ENTRY_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["schema", "version", "signature", "shape", "program", "litmus", "property", "verdict", "histogram",
                 "environment", "stress", "sass", "reproduction", "shrunk", "found", "campaign"],
    "properties": {
        "schema": {"const": "fuzzgpu.corpus"},
        "version": {"type": "integer", "minimum": 1, "maximum": 1},
        "signature": _SIGNATURE,
        "shape": {"type": "string", "maxLength": 200},
        "program": PROGRAM_SCHEMA,
        "litmus": _LONG,
        # what CI expects of the entry (fuzzgpu.corpus.expect); absent: "new"
        "expect": {"enum": ["reproduces", "fixed", "new"]},
        "property": {"type": "string", "pattern": r"^(model|sc|race|user:[A-Za-z0-9_.:+\-]{1,100})$"},
        "verdict": {
            "type": "object",
            "properties": {
                "offending": {"type": "array", "items": _OFFENDING, "maxItems": 1 << 20},
                "timeouts": _COUNT,
                "instances": _COUNT,
                "property": _SHORT,
                "status": _SHORT,
                "reason": _LONG,
                "rate": _PROB,
                "waits": _LONG,
                "notes": {"type": "array", "items": _LONG, "maxItems": 256},
                "sass": {"type": "array", "maxItems": 4096},
            },
        },
        "histogram": {
            "type": "object",
            "properties": {
                "keys": {"type": "array", "items": _OUTCOME_KEY, "maxItems": 256},
                "outcomes": {
                    "type": "array",
                    "maxItems": 1 << 20,
                    "items": {"type": "object", "required": ["outcome", "count"],
                              "properties": {"outcome": _OUTCOME, "count": _COUNT}},
                },
                "instances": _COUNT,
                "timeouts": _COUNT,
                "seconds": {"type": "number", "minimum": 0},
                "backend": _SHORT,
                "meta": {"type": "object"},
            },
        },
        "environment": {"type": "object", "additionalProperties": _SCALAR},
        "stress": _STRESS,
        "sass": {"type": "array", "items": _SASS_FINDING, "maxItems": 4096},
        "reproduction": {
            "type": "object",
            "required": ["rate", "instances", "replay_instances", "confidence"],
            "properties": {
                "rate": _PROB,
                "confidence": _PROB,
                "failures": _COUNT,
                "instances": _COUNT,
                "replay_instances": _COUNT,
                "note": _LONG,
            },
        },
        "oracle": {
            "type": "object",
            "properties": {
                "covered": {"type": "boolean"},
                "reason": _LONG,
                "truncated": {"type": "boolean"},
                "allowed": {"type": "array", "maxItems": 4096,
                            "items": {"type": "object", "required": ["outcome", "verdict"],
                                      "properties": {"outcome": _OUTCOME, "verdict": _SHORT}}},
            },
        },
        "shrunk": {"type": "boolean"},
        "found": {"type": "string", "maxLength": 100},
        "campaign": {"type": "object"},
    },
    "additionalProperties": True,  # newer fields (a finding's class, count, variants...)
}

_FINDING_RECORD = {
    "type": "object",
    "required": ["signature", "file"],
    "properties": {
        "signature": _SIGNATURE,
        "file": _FILE_NAME,
        "shape": {"type": "string", "maxLength": 200},
        "threads": {"type": "integer", "minimum": 0, "maximum": 1 << 16},
        "summary": _LONG,
        "shrunk": {"type": "boolean"},
        "rate": _PROB,
        "saved_by_another": {"type": "boolean"},
        "workers": {"type": "array", "items": {"type": "string", "maxLength": 100}, "maxItems": 1024},
    },
}

_COUNTS = {"type": "object", "additionalProperties": _BIG_COUNT, "propertyNames": {"maxLength": 2000}}

#: a campaign's state (fuzzgpu.campaign.State.to_json)
STATE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["schema", "version", "profile", "backend", "property", "seed"],
    "properties": {
        "schema": {"const": "fuzzgpu.campaign-state"},
        "version": {"type": "integer", "minimum": 1},
        "profile": {"type": "string", "maxLength": 1000},
        "backend": {"type": "string", "maxLength": 1000},
        "property": {"type": "string", "maxLength": 1000},
        "seed": {"type": "integer", "minimum": 0, "maximum": (1 << 64) - 1},
        "run_index": _BIG_COUNT,
        "sessions": _BIG_COUNT,
        "programs": _BIG_COUNT,
        "shrink_programs": _BIG_COUNT,
        "run": _BIG_COUNT,  # of the programs judged, those the backend ran (a fresh run)
        "instances": _BIG_COUNT,
        "duplicates": _BIG_COUNT,
        "quarantined": _BIG_COUNT,
        "elapsed": {"type": "number", "minimum": 0, "maximum": 1e12},
        "gpu_seconds": {"type": "number", "minimum": 0, "maximum": 1e12},
        "last_finding_elapsed": {"type": ["number", "null"], "minimum": 0, "maximum": 1e12},
        "findings": {"type": "array", "items": _FINDING_RECORD, "maxItems": 1 << 20},
        "shapes": {
            "type": "object",
            "propertyNames": {"maxLength": 200},
            "additionalProperties": {
                "type": "object",
                "required": ["programs", "instances", "weak", "failures", "unsupported", "findings"],
                "additionalProperties": {"type": "number", "minimum": 0},
            },
        },
        "not_covered": _COUNTS,
        "faults": _COUNTS,
        "timeouts": _COUNTS,
        "worker": {"type": ["string", "null"], "pattern": r"^w[0-9]{1,3}$"},
        # finding classes (fuzzgpu.corpus.finding_class): class key -> its count and variants
        "classes": {
            "type": "object",
            "propertyNames": {"maxLength": 4000},
            "additionalProperties": {
                "type": "object",
                "required": ["findings"],
                "properties": {
                    "findings": _BIG_COUNT,
                    "variants": {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": 1 << 16},
                    "known": {"type": "boolean"},
                    "file": {"type": "string", "maxLength": 1000},
                },
            },
        },
        # stress tuned per shape family (fuzzgpu.stress.campaign.CampaignTuner)
        "tuning": {
            "type": "object",
            "properties": {
                "spent_s": {"type": "number", "minimum": 0, "maximum": 1e12},
                "run_s": {"type": "number", "minimum": 0, "maximum": 1e12},
                "families": {
                    "type": "object",
                    "propertyNames": {"maxLength": 400},
                    "maxProperties": 1 << 16,
                    "additionalProperties": {
                        "type": "object",
                        "required": ["stress"],
                        "properties": {"stress": _STRESS, "weak_per_s": {"type": "number", "minimum": 0},
                                       "default_weak_per_s": {"type": "number", "minimum": 0},
                                       "program": {"type": "string", "maxLength": 200},
                                       "spent_s": {"type": "number", "minimum": 0}, "describe": _LONG},
                    },
                },
                "errors": {"type": "object", "additionalProperties": _LONG, "maxProperties": 1 << 16},
            },
        },
        # findings that could not be saved and were kept raw (D/raw/)
        "save_errors": {
            "type": "array",
            "maxItems": 1 << 16,
            "items": {"type": "object", "required": ["signature"], "properties": {"signature": {"type": "string", "maxLength": 200}}},
        },
    },
    "additionalProperties": True,  # newer fields
}


class SchemaError(ValueError):
    """A document that does not fit its schema: ``str(e)`` is ``field 'a.b[0]': what was expected``."""


@functools.lru_cache(maxsize=None)
def _validator(name: str) -> Any:
    import jsonschema

    schema = {"entry": ENTRY_SCHEMA, "state": STATE_SCHEMA, "program": PROGRAM_SCHEMA}[name]
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    # "integer" is a JSON integer as Python reads it: JSON Schema calls 1.0 an integer, so `"version":
    # 1.0` was accepted; every integer fuzzgpu writes is written without a fraction
    strict = cls.TYPE_CHECKER.redefine("integer", lambda checker, v: isinstance(v, int) and not isinstance(v, bool))
    return jsonschema.validators.extend(cls, type_checker=strict)(schema)


def _field(path: Any) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(the document)"


def check(name: str, document: Any) -> None:
    """Validate ``document`` against schema ``name`` (``entry``, ``state``, ``program``); raise
    :class:`SchemaError` naming the field at fault and what was expected."""
    import jsonschema

    v = _validator(name)
    try:
        error = jsonschema.exceptions.best_match(v.iter_errors(document))
    except RecursionError:
        raise SchemaError("nested too deeply") from None
    if error is None:
        return
    field = _field(error.absolute_path)
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = [k for k in error.validator_value if k not in error.instance][0]
        raise SchemaError(f"missing field '{missing if not error.absolute_path else field + '.' + missing}'")
    if error.validator == "type":
        raise SchemaError(f"field '{field}' has the wrong type: {_describe(error)}")
    what = _describe(error) if error.validator in _DESCRIBED else error.message
    raise SchemaError(f"field '{field}': {clip(what, 200)}")


# validators whose own messages echo the whole value (a 10 MB string): described briefly instead
_DESCRIBED = frozenset({"type", "enum", "const", "pattern", "maxLength", "minimum", "maximum", "exclusiveMinimum",
                        "exclusiveMaximum", "maxItems", "minItems", "maxProperties", "additionalProperties", "anyOf",
                        "propertyNames"})


def _describe(error: Any) -> str:
    inst = error.instance
    shown = clip(repr(inst), 60)
    rule, arg = error.validator, error.validator_value
    if rule == "type":
        return f"{shown} is not of type {arg if isinstance(arg, str) else ' or '.join(arg)}"
    if rule in ("enum", "const"):
        return f"{shown} is not {arg!r}" if rule == "const" else f"{shown} is not one of {arg!r}"
    if rule == "pattern":
        return f"{shown} is not a plain name ({arg})" if arg in _NAME_PATTERNS else f"{shown} does not match {arg}"
    if rule in ("maxLength", "maxItems", "maxProperties", "minItems"):
        n = len(inst) if hasattr(inst, "__len__") else "?"
        last = error.absolute_path[-1] if error.absolute_path else ""
        noun = "characters" if rule == "maxLength" else {"code": "instructions"}.get(last, last if isinstance(last, str) else "items")
        return f"{n} {noun}: expected {'at most' if rule != 'minItems' else 'at least'} {arg}"
    if rule in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        return f"{shown} is out of range ({rule} {arg})"
    if rule == "additionalProperties":
        return f"unexpected field(s) in {clip(repr(sorted(inst)), 80) if isinstance(inst, dict) else shown}"
    if rule == "propertyNames":
        return f"a key of {clip(repr(sorted(inst)), 80) if isinstance(inst, dict) else shown} is not a valid name"
    return f"{shown} is not valid here ({rule})"


__all__ = ["ENTRY_SCHEMA", "PROGRAM_SCHEMA", "STATE_SCHEMA", "SchemaError", "check"]
