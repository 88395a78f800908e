"""``fuzzgpu explain`` shows, for each kind of finding, what failed and the fix (issue 15, Must show):
the racing pair and the oracle's fix for each race class; for a SASS finding of a moved
``ld.global.nc`` (class 1, FlashMLA's hoist above ``griddepcontrol.wait``, ``corpus/7be901686d91609a``)
the weakest change after which the oracle forbids what the moved load may read, which
``replay --fixed`` then runs; for a forbidden outcome (a deviation, ``corpus/73416467ed043580``) that
no change of the program is a fix, with the retry loop the ISA gives."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fuzzgpu import fixes, properties, sass
from fuzzgpu.backends.base import RunConfig
from fuzzgpu.backends.sim import SimBackend
from fuzzgpu.commands.explain import explain_text
from fuzzgpu.corpus import Corpus, load_entry, make_entry
from fuzzgpu.litmus import parse_file

ROOT = Path(__file__).resolve().parents[2]
RACE = ROOT / "tests" / "litmus" / "race"

#: the racing pair explain names, and the fix, per class (the classes of issue 15)
CLASSES = {
    "RACE-1-pdl-nc-after-wait.litmus": ("racing pair: P0:st.weak x, 1 races with P1:ld.global.nc r1, x on x",
                                        "make `ld.global.nc r1, x` in P1 `ld.weak r1, x`"),
    "RACE-2-pdl-read-before-wait.litmus": ("racing pair: P0:st.weak x, 1 races with P1:ld.weak r1, x on x: the dependent grid read",
                                           "add `griddepcontrol.wait` in P1 before `ld.weak r1, x`"),
    "RACE-3-tma-store-no-fence.litmus": ("racing pair: P0:st.weak s, 1 races with P1:cp.async.bulk.bulk_group g, s, 4 on s: the generic write",
                                         "add `fence.proxy.async.shared::cta` in P0 before `bar.cta.sync 0`"),
    "RACE-4-cp-async-no-wait.litmus": ("racing pair: P0:cp.async s, g races with P1:ld.weak r1, s on s: the cp.async write",
                                       "add `cp.async.wait_group 0` in P0 before `bar.cta.sync 0`"),
    "RACE-5-relacq-cta-across-ctas.litmus": ("racing pair: P0:st.weak x, 1 races with P1:ld.weak r2, x on x: a release/acquire or fence",
                                             "make `st.release.cta f, 1` in P0 `st.release.gpu f, 1` and make `ld.acquire.cta r1, f`"),
    "RACE-6-mbarrier-relaxed.litmus": ("racing pair: P0:st.weak x, 1 races with P1:ld.weak r2, x on x: mbarrier .relaxed",
                                       "make `mbarrier.arrive.relaxed.cta bar` in P0 `mbarrier.arrive.release.cta bar`"),
    "RACE-7-nc-after-acquire.litmus": ("racing pair: P0:st.weak x, 1 races with P1:ld.global.nc r2, x on x",
                                       "make `ld.global.nc r2, x` in P1 `ld.weak r2, x`"),
}


def _race_entry(tmp_path: Path, name: str):
    p = parse_file(RACE / name)
    backend = SimBackend()
    cfg = RunConfig(instances=100_000, seed=1)
    h = backend.run(p, cfg)
    v = fixes.attach(p, properties.RACE.check(p, h))
    assert v.failed, v.summary()
    path, _ = Corpus(tmp_path).add(make_entry(p, v, h, backend, cfg))
    return load_entry(path)


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_explain_shows_the_racing_pair_and_the_fix_of_each_race_class(tmp_path, name):
    pair, fix = CLASSES[name]
    text = explain_text(_race_entry(tmp_path, name))
    lines = text.splitlines()
    assert any(l.startswith(f"  {pair}") for l in lines), text
    assert any(l.startswith(f"fix: {fix}") for l in lines), text
    assert "--fixed" in text


def test_the_race_heading_covers_a_broken_nc_contract(tmp_path):
    """Hostile review: the heading quoted only 8.10.1 ("not ordered by causality order")
    over a racing pair that causality orders -- an ld.global.nc whose read-only contract is broken,
    after the wait (RACE-1) or after an acquire (RACE-7)."""
    text = explain_text(_race_entry(tmp_path, "RACE-7-nc-after-acquire.litmus"))
    heading = next(l for l in text.splitlines() if l.startswith("data race (PTX ISA 8.10.1"))
    assert "an ld.global.nc whose read-only contract is broken races with each write of its location" in heading


def test_explain_shows_the_fix_of_a_moved_nc_load():
    """The shipped SASS entry of class 1 had no fix in explain (its verdict has no offending
    outcome): the oracle's fix is the plain load, and it names the stale outcome it forbids."""
    entry = load_entry(ROOT / "corpus" / "7be901686d91609a.json")
    assert entry.data["sass"] and all(f["reason"] == sass.RULE_NC for f in entry.data["sass"])
    text = explain_text(entry)
    (line,) = [l for l in text.splitlines() if l.startswith("fix:")]
    assert line.startswith("fix: make `ld.global.nc r0, x` in P1 `ld.weak r0, x`: the oracle says the fixed program is race-free")
    assert "P1:r0=0" in line and "allowed-outside-model" in line


def test_explain_says_a_forbidden_outcome_has_no_fix_in_the_program():
    text = explain_text(load_entry(ROOT / "corpus" / "73416467ed043580.json"))
    assert "fix: none in the program: the PTX ISA forbids the offending outcome(s)" in text
    assert "retry `mbarrier.try_wait.parity.acquire.cta r0, bar, 0` in P1 until it returns True" in text


@pytest.mark.skipif(sass.find_tool("nvcc") is None or (sass.find_tool("nvdisasm") is None and sass.find_tool("cuobjdump") is None),
                    reason="needs nvcc and nvdisasm or cuobjdump")
def test_replay_fixed_runs_the_fixed_nc_program_on_the_static_backend():
    """`replay --fixed --backend static` compiles the plain-load program: no SASS finding (it said
    "no fix", not checked, exit 3, before)."""
    r = subprocess.run([sys.executable, "-m", "fuzzgpu", "replay", str(ROOT / "corpus" / "7be901686d91609a.json"),
                        "--backend", "static", "--fixed", "--json"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert r.returncode == 0, r.stdout + r.stderr
    assert out["status"] == "fixed" and out["fix"] == "make `ld.global.nc r0, x` in P1 `ld.weak r0, x`"
    # the static backend runs nothing: no count of offending outcomes (it said "seen 0 times", 1 instance)
    assert out["offending_seen"] is None and out["instances"] == 0
    text = subprocess.run([sys.executable, "-m", "fuzzgpu", "replay", str(ROOT / "corpus" / "7be901686d91609a.json"),
                           "--backend", "static", "--fixed"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert text.returncode == 0, text.stdout + text.stderr
    line = text.stdout.splitlines()[1]
    assert "compiled, not run: fixed (property holds)" in line and "its SASS has no finding" in line
    assert "seen 0 times" not in line and "instances" not in line
    # an entry the static backend cannot run is not run at all (no count of instances); it expects to
    # reproduce, so the model re-judges its recorded outcomes instead, and says so (docs/fuzzing.md)
    skipped = subprocess.run([sys.executable, "-m", "fuzzgpu", "replay", str(ROOT / "corpus" / "73416467ed043580.json"),
                              "--backend", "static"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert skipped.returncode == 0, skipped.stdout
    assert "MBAR  model  not run: PASS [expect reproduces]" in skipped.stdout, skipped.stdout
    assert "checked by the model only" in skipped.stdout and "not re-run here" in skipped.stdout
