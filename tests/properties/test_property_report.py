"""What a failing property shows in Hypothesis's report: the program as litmus text (a person reads
it, saves it as a ``.litmus`` file and re-checks it), not only the falsifying example's repr of the
``Program`` dataclass (hostile review).  Public Hypothesis API: ``hypothesis.note``."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzgpu import litmus, properties
from fuzzgpu.backends.base import Histogram

ROOT = Path(__file__).resolve().parents[2]
MP = litmus.parse_file(ROOT / "tests" / "litmus" / "core" / "MP-relacq-gpu.litmus")
#: the stale read that release/acquire forbids: it fails model, sc and race alike
STALE = Histogram(("P1:r0", "P1:r1"), (((("P1:r0", 1), ("P1:r1", 0)), 7), ((("P1:r0", 1), ("P1:r1", 1)), 93)), 100, backend="test")
FINE = Histogram(("P1:r0", "P1:r1"), (((("P1:r0", 1), ("P1:r1", 1)), 100),), 100, backend="test")


def _notes_of_failing(prop: str | properties.Property, h: Histogram) -> str:
    @settings(max_examples=5, database=None, deadline=None, derandomize=True)
    @given(st.just(MP))
    def holds(p):
        assert not properties.check(prop, p, h).failed

    with pytest.raises(AssertionError) as e:
        holds()
    return "\n".join(getattr(e.value, "__notes__", ()))


@pytest.mark.parametrize("prop", ["model", "sc", "race", properties.predicate("r1-set", lambda o: o["P1:r1"] == 1)])
def test_a_failing_property_notes_the_program_as_litmus_text(prop):
    notes = _notes_of_failing(prop, STALE)
    name = prop if isinstance(prop, str) else prop.name
    # Hypothesis's own report, which the note joins (its header is "Falsifying example" before
    # Hypothesis 6.16x, "Failing test case" after)
    assert "Falsifying example" in notes or "Failing test case" in notes, notes
    assert f"fuzzgpu: {name}: FAIL: P1:r0=1; P1:r1=0; x7" in notes, notes
    assert litmus.format_program(MP) in notes, notes
    # the noted text is a litmus test: it parses back to the program that failed
    text = notes[notes.index(f"PTX {MP.name}"):]
    assert litmus.parse(text[:text.index("\n\n")] if "\n\n" in text else text) == MP


def test_a_passing_property_or_a_check_outside_a_test_notes_nothing():
    assert properties.failure_note(MP, properties.check("model", MP, STALE)).startswith("fuzzgpu: model: FAIL")
    properties.note_failure(MP, properties.check("model", MP, STALE))  # outside a Hypothesis test: no error, nothing

    @settings(max_examples=3, database=None, deadline=None, derandomize=True)
    @given(st.just(MP))
    def fails_after_a_pass(p):
        assert not properties.check("model", p, FINE).failed
        raise AssertionError("the user's own assertion")

    with pytest.raises(AssertionError) as e:
        fails_after_a_pass()
    assert "fuzzgpu:" not in "\n".join(getattr(e.value, "__notes__", ()))


def test_pytest_shows_the_litmus_text_of_a_failing_property(tmp_path):
    """The report a plugin user reads: a property over ``fuzzgpu_run`` on the simulation, failing."""
    (tmp_path / "test_user.py").write_text(textwrap.dedent('''
        from hypothesis import given, settings, strategies as st
        from fuzzgpu import litmus
        from fuzzgpu.properties import check, predicate

        MP = litmus.parse_file(%r)

        @settings(max_examples=3, deadline=None, database=None, derandomize=True)
        @given(st.just(MP))
        def test_mp(fuzzgpu_run, p):
            assert not check(predicate("never", lambda o: False), p, fuzzgpu_run(p, instances=1000)).failed
    ''' % str(ROOT / "tests" / "litmus" / "core" / "MP-relacq-gpu.litmus")))
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q", "--fuzzgpu-backend", "sim",
                        "test_user.py"], check=False, capture_output=True, text=True, cwd=tmp_path, timeout=300, env=env)
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-2000:]
    assert "fuzzgpu: never: FAIL" in r.stdout and " st.release.gpu y, 1 | ld.weak r1, x" in r.stdout, r.stdout[-4000:]


@pytest.mark.parametrize("prop", ["model", "sc", "race"])
def test_an_outcome_recorded_zero_times_was_not_observed(prop):
    """A histogram that records the stale outcome 0 times (a hand-edited corpus entry; user code)
    was judged as if the outcome had been seen -- "FAIL: ... (forbidden)" (a hostile review).  Seen
    0 times it is no evidence: the verdict is the one without it; seen once it fails."""
    stale0 = Histogram(STALE.keys, (((("P1:r0", 1), ("P1:r1", 0)), 0), ((("P1:r0", 1), ("P1:r1", 1)), 100)), 100, backend="test")
    assert not properties.check(prop, MP, stale0).failed
    stale1 = Histogram(STALE.keys, (((("P1:r0", 1), ("P1:r1", 0)), 1), ((("P1:r0", 1), ("P1:r1", 1)), 99)), 100, backend="test")
    assert properties.check(prop, MP, stale1).failed
