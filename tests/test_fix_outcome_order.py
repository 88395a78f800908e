"""An outcome read back from a corpus entry is the oracle's outcome, whatever the key order of the
JSON file (found on the H200, session 6: the entry below keeps its outcomes as ``{"P0:r0": .., "P0:r1":
..}`` while the program's outcome keys are ``P0:r1, P0:r0``; compared as tuples, no offending outcome
matched any outcome of a changed program, so ``explain`` and ``replay --fixed`` took the first change
tried -- ``try_wait.relaxed`` -> ``.acquire`` with the wait's result still untested -- for a fix, and the
H200 showed the "fixed" program stale in 1e6 of 1e7 instances)."""

import json
from pathlib import Path

from fuzzgpu import corpus, fixes
from fuzzgpu.commands import explain

ENTRY = Path(__file__).parent / "data" / "findings" / "tma-load-relaxed-lone-wait.json"


def test_outcome_of_orders_keys_as_the_program_does():
    e = corpus.load_entry(ENTRY)
    p = e.program
    assert p.outcome_keys() == ("P0:r1", "P0:r0")
    assert p.outcome_of({"P0:r0": 0, "P0:r1": 1}) == (("P0:r1", 1), ("P0:r0", 0))


def test_the_fix_read_back_from_the_entry_is_the_campaigns():
    """The campaign (outcomes in the oracle's order) saved a two-change fix: the wait made acquire
    *and* retried until it returns True -- an untested wait orders nothing on sm_90 and may fail
    (then the load still races), so neither change alone removes both offending outcomes."""
    e = corpus.load_entry(ENTRY)
    stored = json.loads(ENTRY.read_text())["verdict"]["fix"]
    outs = [e.program.outcome_of(o["outcome"]) for o in e.data["verdict"]["offending"]]
    f = fixes.find_fix(e.program, outs)
    assert f is not None and len(f.changes) == 2, f
    assert f.text.split(" (two changes")[0] in stored
    lines = "\n".join(explain.race_lines(e))
    assert "racing pair:" in lines  # the racy outcomes are found in the oracle's analysis again
    assert "until it returns True" in lines


def test_replay_fixed_runs_the_same_fix():
    from fuzzgpu.commands import replay

    e = corpus.load_entry(ENTRY)
    f = fixes.fix_for(e.program, replay._stored_verdict(e))
    assert f is not None and len(f.changes) == 2 and "until it returns True" in f.text
