"""Two records of a campaign's findings kept apart from the engine: the entries an earlier session
saved but did not count (:func:`reconcile`), and a finding the corpus could not take, kept raw
(:func:`keep_raw`)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from ..backends.base import RunConfig
from ..files import write_atomic
from ..ir import Program
from .state import RAW_DIR


def reconcile(c: Any) -> None:
    """Entries saved by an earlier session that died before it updated its state (a kill
    between the two atomic writes) are added to the state's list of findings."""
    known = {f["signature"] for f in c.state.findings}
    for e in c.corpus.entry_paths():
        try:
            d = json.loads(e.read_text())
        except (OSError, ValueError, RecursionError):
            continue
        if not isinstance(d, dict) or not isinstance(d.get("campaign"), dict) or not isinstance(d.get("program", {}), dict) \
                or not isinstance(d.get("verdict", {}), dict) or not isinstance(d.get("reproduction", {}), dict):
            continue
        sig = d.get("signature")
        if isinstance(sig, str) and sig not in known and d.get("campaign", {}).get("seed") == c.state.seed:
            known.add(sig)
            v = d.get("verdict", {})
            c.state.findings.append({"signature": sig, "file": e.name, "shape": d.get("shape", "?"),
                                     "threads": len(d.get("program", {}).get("threads", [])),
                                     "summary": f"{v.get('property', '?')}: FAIL ({v.get('reason', '')})",
                                     "shrunk": bool(d.get("shrunk")), "rate": d.get("reproduction", {}).get("rate", 0)})
            try:
                from ..corpus import entry_class, finding_kinds

                kinds = finding_kinds(d)
                c.state.findings[-1]["kinds"] = kinds
                c._note_class(entry_class(d), sig, e.name, kinds)
            except (KeyError, TypeError, AttributeError):
                pass


def keep_raw(c: Any, program: Program, verdict: Any, hist: Any, config: RunConfig, entry: Mapping[str, Any] | None,
             sig: str, key: str, error: BaseException) -> None:
    """``D/raw/<signature>.json``: the finding as it was (the entry when it was made, else the
    program, the verdict, the histogram and the configuration) and the error that kept it out
    of the corpus; a line on screen and in the report.  When even that cannot be written, the
    state and the report still name the finding and the error."""
    from ..ir import program_to_json

    why = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"[:300]
    rec: dict[str, Any] = {"schema": "fuzzgpu.raw-finding", "version": 1, "error": why, "signature": sig, "class": key,
                           "found": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if entry is not None:
        rec["entry"] = entry
    else:
        for k, make in (("program", lambda: program_to_json(program)), ("verdict", verdict.to_json),
                        ("histogram", hist.to_json), ("stress", lambda: config.to_json() if hasattr(config, "to_json") else {})):
            try:
                rec[k] = make()
            except Exception as e2:  # noqa: BLE001 -- keep what can be kept
                rec[k] = f"(not serialisable: {type(e2).__name__})"
    raw: str | None = f"{RAW_DIR}/{sig[:16]}.json"
    try:
        write_atomic(c.root / RAW_DIR / f"{sig[:16]}.json", json.dumps(rec, indent=1, sort_keys=True, default=repr) + "\n")
    except Exception as e2:  # noqa: BLE001 -- a full disk: the state keeps the record of it
        raw = None
        why += f"; keeping it raw failed too ({type(e2).__name__}: {e2})"
    c.known.add(sig)  # not again this session (shrinks avoid it)
    c._raw_classes.add(key)  # nor its class: one raw record per class, the others counted
    c._note_class(key, sig, "", list(verdict.kinds))
    c.state.classes[key]["raw"] = raw
    c.state.save_errors.append({"signature": sig, "class": key, "raw": raw, "error": why[:400],
                                "shape": program.name, "summary": verdict.summary()[:300]})
    c.unsaved.append(sig)
    c._print(f"FINDING NOT SAVED to the corpus ({why}); " + (f"kept raw in {c.root / raw}" if raw else "not even kept raw")
             + f": {program.name}: {verdict.summary()}  (the campaign goes on)")
