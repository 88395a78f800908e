"""Content hashes of programs: the key of the evidence cache, the corpus and the injected faults.
Below :mod:`fuzzgpu.backends` and :mod:`fuzzgpu.evidence` (both hash programs)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .ir import Program, program_to_json


def canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def program_hash(p: Program) -> str:
    """SHA-256 of the program's canonical JSON (its name and comments excluded: they do not change
    what runs)."""
    d = program_to_json(p)
    d.pop("name", None)
    d.pop("comments", None)
    return hashlib.sha256(canonical(d).encode()).hexdigest()


__all__ = ["canonical", "program_hash"]
