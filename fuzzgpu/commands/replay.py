"""``fuzzgpu replay``: re-run saved reproducers; exit 1 when any still violates its property."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Any

from ..errors import UserError

HELP = "re-run the reproducers of a corpus; exit 1 when any still violates its property"

DESCRIPTION = """\
Re-run every entry of a corpus folder (or one entry file) on a backend and judge the outcomes with
the entry's property (model, sc or race).  Each entry runs with the number of instances its reproduction
record asks for: 3 / the measured failure rate (95% confidence of seeing the failure again if it is
still there), and at least as many as when it was found.  Nothing in an entry is executed as code:
entries are JSON, validated on load, and the program goes through the IR.

An entry "still violates" when its property fails again on this backend (any offending outcome, a
timeout on a program whose waits the model says must complete, or for the static backend a SASS
finding that matters); "fixed" when it does not.  A value no store of the program wrote (`?`) is
reported as a HARNESS OR HARDWARE FAULT, apart from the memory-model verdicts.  Entries whose
finding a backend cannot check (an observed-outcome or timeout finding on the static backend, which
executes nothing) are reported as skipped and do not change the exit status.

--fixed runs each entry's fixed program instead (the weakest single change the oracle says removes
the finding, as `fuzzgpu explain` prints it; race findings and other fixable outcomes) and says how
often the entry's offending outcomes appeared in it (0: the stale value is gone); an entry without
a fix is skipped.

Exit status: 1 when any entry still violates its property, 0 otherwise, 2 on an error (a bad entry
file, an unavailable backend).

examples:
  fuzzgpu replay corpus/                               on the GPU when there is one, else static
  fuzzgpu replay corpus/ --backend sim                 the CPU simulation (no fault: should pass)
  fuzzgpu replay /tmp/c --backend sim --sim-fault relacq-as-relaxed
  fuzzgpu replay /tmp/t --backend sim --sim-fault timeout:1      a timeout finding, with the fault
  fuzzgpu replay corpus/73416467ed043580.json --backend static --json
  fuzzgpu replay /tmp/disc --backend sim --fixed           the fixed programs of race findings
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="DIR|ENTRY", help="a corpus folder or one entry (.json)")
    parser.add_argument("--backend", default="auto", choices=("auto", "cuda", "sim", "static"), help="default: auto")
    parser.add_argument("--sim-fault", default=None, metavar="FAULT", help="with --backend sim: inject a fault (relacq-as-relaxed, timeout[:RATE], unwritten[:RATE])")
    parser.add_argument("--instances", type=float, default=None, metavar="N", help="instances per entry (default: from the entry)")
    parser.add_argument("--max-instances", type=float, default=1e10, metavar="N", help="cap on instances per entry (default: 1e10)")
    parser.add_argument("--json", action="store_true", help="one JSON object per entry")
    parser.add_argument("--fixed", action="store_true", help="run each entry's fixed program (its fix, as explain shows it)")


def replay_entry(entry: Any, backend: Any, instances: int | None = None, max_instances: int = 10**10,
                 fixed: bool = False) -> dict[str, Any]:
    """Re-run one entry (with ``fixed``: its fixed program); returns {"status": violates|fixed|skipped, ...}."""
    from .. import fixes, model, properties
    from ..backends.base import RunConfig

    prop = properties.get(entry.prop)
    stress = {k: v for k, v in entry.stress.items() if k in {f.name for f in dataclasses.fields(RunConfig)}}
    cfg = RunConfig(**stress)
    rep = entry.reproduction
    recorded = int(entry.data["histogram"].get("instances") or 0)
    n = int(instances) if instances else max(int(rep.get("replay_instances") or 1), recorded, 1)
    n = max(1, min(n, int(max_instances)))
    out = {"entry": str(entry.path), "signature": entry.signature, "shape": entry.shape, "property": prop.name,
           "backend": backend.describe(), "instances": n}
    program = entry.program
    if fixed:
        f = fixes.fix_for(entry.program, _stored_verdict(entry))
        if f is None:
            out.update(status="skipped", reason="no fix: no single change the oracle accepts (or nothing fixable)")
            return out
        program = f.program
        out["fix"] = f.text
    outcome_finding = bool(entry.data["verdict"].get("offending")) or entry.timeouts > 0  # timeouts: observed too
    if backend.name == "static" and outcome_finding and not entry.data.get("sass"):
        out.update(status="skipped", reason="an observed-outcome finding: the static backend executes nothing")
        return out
    if backend.name != "static" and not outcome_finding and entry.data.get("sass"):
        out.update(status="skipped", reason="a SASS (compile-time) finding: replay it with --backend static")
        return out
    try:
        hist = backend.run(program, dataclasses.replace(cfg, instances=n))
        verdict = prop.check(program, hist)
    except model.Unsupported as e:
        out.update(status="skipped", reason=f"the oracle does not cover this program: {e}")
        return out
    except UserError as e:
        out.update(status="skipped", reason=str(e).splitlines()[0])
        return out
    out["verdict"] = verdict.to_json()
    out["summary"] = verdict.summary()
    out["kinds"] = list(verdict.kinds)  # "fault": a value no store wrote (harness or hardware), apart from "outcome"
    if verdict.status == "unsupported":
        out.update(status="skipped", reason=verdict.reason)
    else:
        out["status"] = "violates" if verdict.failed else "fixed"
    if fixed:
        seen = {tuple(sorted(o["outcome"].items())) for o in entry.data["verdict"].get("offending", [])}
        out["offending_seen"] = sum(c for o, c in hist.counts if tuple(sorted(o)) in seen)
    return out


def _stored_verdict(entry: Any) -> Any:
    """The entry's verdict as :func:`fuzzgpu.fixes.fix_for` reads it (offending outcomes and verdicts)."""
    from ..properties import Offence

    class _V:
        offending = tuple(Offence(tuple(o["outcome"].items()), int(o.get("count", 0)), str(o.get("verdict", "")), "")
                          for o in entry.data["verdict"].get("offending", []))
    return _V()


def run(args: argparse.Namespace) -> int:
    from ..campaign import make_backend
    from ..corpus import find_entries

    entries = find_entries(args.path)
    if not entries:
        print(f"{args.path}: no corpus entries", file=sys.stderr)
        return 0
    arch = "sm_90"
    for e in entries:
        a = e.data.get("environment", {}).get("arch")
        if isinstance(a, str) and a.startswith("sm_"):
            arch = a
            break
    backend, note = make_backend(args.backend, sim_fault=args.sim_fault, arch=arch)
    if not args.json:
        print(note)
    violating = 0
    for e in entries:
        r = replay_entry(e, backend, int(args.instances) if args.instances else None, int(args.max_instances), args.fixed)
        if r["status"] == "violates":
            violating += 1
        if args.json:
            print(json.dumps(r))
        else:
            what = {"violates": "STILL VIOLATES", "fixed": "fixed (property holds)", "skipped": "skipped"}[r["status"]]
            if r["status"] == "violates" and r.get("kinds") == ["fault"]:
                what = "HARNESS OR HARDWARE FAULT again (not a memory-model violation)"
            extra = r.get("summary") if r["status"] != "skipped" else r.get("reason")
            if "fix" in r:
                extra = (f"fixed program ({r['fix']}): the offending outcomes seen {r.get('offending_seen', 0)} times"
                         + (f"; {extra}" if extra else ""))
            print(f"{e.path.name}  {e.shape}  {r['property']}  {r['instances']:.3g} instances: {what}" + (f": {extra}" if extra else ""))
    if not args.json:
        print(f"{len(entries)} entries, {violating} still violate their property ({backend.describe()})")
    return 1 if violating else 0
