"""Fixes (fuzzgpu.fixes): the weakest single change the oracle accepts, for each of the seven
classes; explain shows the racing pair and the fix; replay --fixed runs the fixed program."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fuzzgpu import fixes, properties
from fuzzgpu.backends.base import RunConfig
from fuzzgpu.backends.sim import SimBackend
from fuzzgpu.corpus import Corpus, make_entry
from fuzzgpu.litmus import parse_file
from fuzzgpu.model.race import analyse_races

ROOT = Path(__file__).resolve().parents[2]
RACE = ROOT / "tests" / "litmus" / "race"

#: the expected fix of each class's litmus test (the weakest change; tried cheapest first)
EXPECTED = {
    "RACE-1-pdl-nc-after-wait.litmus": "make `ld.global.nc r1, x` in P1 `ld.weak r1, x`",
    "RACE-2-pdl-read-before-wait.litmus": "add `griddepcontrol.wait` in P1 before `ld.weak r1, x`",
    "RACE-3-tma-store-no-fence.litmus": "add `fence.proxy.async.shared::cta` in P0 before `bar.cta.sync 0`",
    "RACE-4-cp-async-no-wait.litmus": "add `cp.async.wait_group 0` in P0 before `bar.cta.sync 0`",
    "RACE-5-relacq-cta-across-ctas.litmus": ("make `st.release.cta f, 1` in P0 `st.release.gpu f, 1` and make "
                                             "`ld.acquire.cta r1, f` in P1 `ld.acquire.gpu r1, f` (two changes: no single one suffices)"),
    "RACE-6-mbarrier-relaxed.litmus": "make `mbarrier.arrive.relaxed.cta bar` in P0 `mbarrier.arrive.release.cta bar`",
    "RACE-7-nc-after-acquire.litmus": "make `ld.global.nc r2, x` in P1 `ld.weak r2, x`",
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_fix_of_each_class(name):
    p = parse_file(RACE / name)
    racy = list(analyse_races(p).racy)
    f = fixes.find_fix(p, racy)
    assert f is not None and f.text == EXPECTED[name]
    fixed = analyse_races(f.program)
    assert not (set(racy) & fixed.possible)  # the oracle forbids the stale outcome in the fixed program


def test_the_fix_is_the_weakest_change():
    """cp.async: wait_group 0 (a wait) before any fence; no annotation change fixes it."""
    p = parse_file(RACE / "RACE-4-cp-async-no-wait.litmus")
    racy = frozenset(analyse_races(p).racy)
    for c in fixes.changes(p):
        if c.kind == "strengthen":
            assert racy & analyse_races(c.program).possible, c.text
    ranks = [fixes.COST[c.kind] for c in fixes.changes(p)]
    assert ranks == sorted(ranks)


def test_no_fix_is_said_so():
    """Data read by the async proxy behind a weak flag: it needs a proxy fence and a release/acquire pair."""
    from fuzzgpu.litmus import parse

    p = parse("""PTX NOFIX
{
x @ shared = 0;
f=0;
out=0;
}
 P0@cta 0,gpu 0 | P1@cta 0,gpu 0                     ;
 st.weak x, 1   | ld.weak r0, f                      ;
 st.weak f, 2   | cp.async.bulk.global.shared out, x ;
                | cp.async.bulk.commit_group         ;
                | cp.async.bulk.wait_group 0         ;
locations [P1:r0; out;]
""")
    racy = list(analyse_races(p).racy)
    assert racy and fixes.find_fix(p, racy, budget=300) is None


def _entry(tmp_path: Path, name: str) -> Path:
    p = parse_file(RACE / name)
    backend = SimBackend()
    cfg = RunConfig(instances=100_000, seed=1)
    h = backend.run(p, cfg)
    v = fixes.attach(p, properties.RACE.check(p, h))
    assert v.fix == EXPECTED[name]
    assert f"fix: {EXPECTED[name]}" in v.summary()
    path, _ = Corpus(tmp_path).add(make_entry(p, v, h, backend, cfg))
    return path


def test_explain_shows_the_racing_pair_and_the_fix(tmp_path):
    path = _entry(tmp_path, "RACE-4-cp-async-no-wait.litmus")
    out = subprocess.run([sys.executable, "-m", "fuzzgpu", "explain", str(path)], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "racing pair: P0:cp.async s, g races with P1:ld.weak r1, s on s" in out.stdout
    assert f"fix: {EXPECTED['RACE-4-cp-async-no-wait.litmus']}" in out.stdout
    assert "--fixed" in out.stdout


def test_replay_fixed_runs_the_fixed_program_and_the_stale_value_is_gone(tmp_path):
    """Plumbing: ``replay`` without ``--fixed`` still violates, with ``--fixed`` it runs the fixed
    program and reports it.  On the sim, "the stale value is gone" holds by construction (the sim
    samples the oracle that accepted the fix): no hardware claim (tests/model/test_race.py's GPU test is)."""
    path = _entry(tmp_path, "RACE-3-tma-store-no-fence.litmus")
    base = [sys.executable, "-m", "fuzzgpu", "replay", str(path), "--backend", "sim", "--json"]
    still = subprocess.run(base, capture_output=True, text=True, cwd=ROOT)
    assert still.returncode == 1 and json.loads(still.stdout)["status"] == "violates"
    fixed = subprocess.run(base + ["--fixed"], capture_output=True, text=True, cwd=ROOT)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    r = json.loads(fixed.stdout)
    assert r["status"] == "fixed" and r["offending_seen"] == 0 and r["fix"] == EXPECTED["RACE-3-tma-store-no-fence.litmus"]


def test_a_new_hang_is_not_asked_of_a_candidate_where_the_original_may_hang():
    """``_new_hang``: where the original may hang already no change adds a hang, so the candidate's
    termination (seconds of oracle work on a large program) is not computed."""
    from fuzzgpu.fixes import _new_hang
    from fuzzgpu.litmus import parse
    from fuzzgpu.model import liveness
    from fuzzgpu.model.race import analyse_races

    hang = """PTX HANG{n}
{{ y=0; }}
 P0@cta 0,gpu 0      | P1@cta 1,gpu 0       ;
 st.relaxed.gpu y, 1 | LC00:                ;
 st.relaxed.gpu y, {n} | ld.relaxed.gpu r1, y ;
                     | bne r1, 1, LC00      ;
"""
    orig, cand = parse(hang.format(n=2)), parse(hang.format(n=3))
    assert liveness.termination(orig).may_hang
    assert not _new_hang(analyse_races(orig), cand)
    before = liveness.termination.cache_info().misses
    liveness.termination(cand)
    assert liveness.termination.cache_info().misses == before + 1  # computed now, not by _new_hang
