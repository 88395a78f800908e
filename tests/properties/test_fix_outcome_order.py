"""An outcome read back from a corpus entry is the oracle's outcome, whatever the key order of the
JSON file (found on the H200, 2026-12-01: the entry below keeps its outcomes as ``{"P0:r0": .., "P0:r1":
..}`` while the program's outcome keys are ``P0:r1, P0:r0``; compared as tuples, no offending outcome
matched any outcome of a changed program, so ``explain`` and ``replay --fixed`` took the first change
tried -- ``try_wait.relaxed`` -> ``.acquire`` with the wait's result still untested -- for a fix, and the
H200 showed the "fixed" program stale in 1e6 of 1e7 instances)."""

from pathlib import Path

from fuzzgpu import corpus, fixes
from fuzzgpu.commands import explain

ENTRY = Path(__file__).parents[1] / "data" / "findings" / "tma-load-relaxed-lone-wait.json"


def test_outcome_of_orders_keys_as_the_program_does():
    e = corpus.load_entry(ENTRY)
    p = e.program
    assert p.outcome_keys() == ("P0:r1", "P0:r0")
    assert p.outcome_of({"P0:r0": 0, "P0:r1": 1}) == (("P0:r1", 1), ("P0:r0", 0))


def _loops(text: str) -> bool:
    return "wait loop" in text or "until it returns True" in text


def test_the_fix_read_back_from_the_entry_waits_in_a_loop():
    """The offending outcomes are a stale read with the wait failed (``r1 = 0``) and with it
    succeeded (``r1 = 1``, the relaxed wait orders nothing).  A fix must make the load wait for the
    copy's completion with acquire semantics *and* until it has happened -- an acquire wait whose
    result nothing tests may fail and leave the read racing (and on sm_90 orders nothing,
    docs/findings.md) -- so every fix has a retry loop; the campaign's saved one (acquire, and the
    wait retried) is one such."""
    e = corpus.load_entry(ENTRY)
    outs = [e.program.outcome_of(o["outcome"]) for o in e.data["verdict"]["offending"]]
    f = fixes.find_fix(e.program, outs)
    assert f is not None and _loops(f.text), f.text
    assert f.why == "race-free"
    lines = "\n".join(explain.race_lines(e))
    assert lines.count("racing pair:") == 1  # found in the oracle's analysis again; both outcomes share it, said once
    assert _loops(lines.split("fix:", 1)[1])


def test_replay_fixed_runs_the_same_fix():
    from fuzzgpu.commands import replay

    e = corpus.load_entry(ENTRY)
    f = fixes.fix_for(e.program, replay._stored_verdict(e))
    assert f is not None and _loops(f.text)


def test_find_fix_takes_outcomes_in_any_key_order():
    e = corpus.load_entry(ENTRY)
    sorted_keys = [tuple(sorted(o["outcome"].items())) for o in e.data["verdict"]["offending"]]
    as_dicts = [o["outcome"] for o in e.data["verdict"]["offending"]]
    a, b = fixes.find_fix(e.program, sorted_keys), fixes.find_fix(e.program, as_dicts)
    assert a is not None and b is not None and a.text == b.text and _loops(a.text)


def test_an_outcome_the_program_cannot_produce_is_fixed_by_nothing():
    """An offending outcome the original cannot produce (a key missing from a hand-edited or older
    entry, a value no store writes) is absent from every changed program too: before, the first
    change tried (``try_wait.relaxed`` -> ``.acquire``, still racy, stale on the H200) was printed
    as its fix.  Such an outcome is ignored; with nothing left, there is no fix."""
    e = corpus.load_entry(ENTRY)
    real = [o["outcome"] for o in e.data["verdict"]["offending"]]
    missing = [{"P0:r0": 0}]
    impossible = [{"P0:r1": 1, "P0:r0": 7}]
    assert fixes.find_fix(e.program, missing) is None
    assert fixes.find_fix(e.program, impossible) is None
    a, b = fixes.find_fix(e.program, real), fixes.find_fix(e.program, real + impossible)
    assert a is not None and b is not None and a.text == b.text and _loops(b.text)


def test_replay_fixed_on_sim_of_a_gpu_finding_says_it_is_the_oracles_word(tmp_path, capsys):
    """The sim samples the oracle that accepted the fix, so its "fixed" for an entry found on the
    H200 is a plumbing check; the line says so."""
    import shutil

    from fuzzgpu import cli

    shutil.copy(ENTRY, tmp_path / ENTRY.name)
    rc = cli.main(["replay", str(tmp_path / ENTRY.name), "--backend", "sim", "--fixed", "--instances", "1000"])
    out = capsys.readouterr().out
    assert rc == 0 and "fixed (property holds) [on the simulation only (found on cuda)" in out, out
