"""``model.judge`` of an outcome whose key the program has no value for (a hostile review,
2026-12-05): ``judge(MP, {"P1:r0": 1, "P1:r9": 0})`` answered ``sc`` -- ``r9``, written by no
instruction, read as 0 -- a verdict on an outcome other than the one meant.  Now an error naming
the key and the program's keys; every key a program has a value for is still judged."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu import litmus, model
from fuzzgpu.errors import UserError

ROOT = Path(__file__).resolve().parents[2]
MP = litmus.parse_file(ROOT / "tests" / "litmus" / "core" / "MP-relacq-gpu.litmus")


@pytest.mark.parametrize("outcome", [{"P1:r0": 1, "P1:r9": 0}, {"P9:r0": 1}, {"z": 0}])
def test_a_key_the_program_has_no_value_for_is_an_error(outcome):
    with pytest.raises(UserError, match="name no data location of the program") as e:
        model.judge(MP, outcome)
    assert "its keys: P1:r0, P1:r1" in str(e.value)


def test_every_key_a_program_has_a_value_for_is_judged():
    """The condition's registers, the locations (their final values), and any register a thread
    writes; the stale read is forbidden, its SC twin sc."""
    assert model.judge(MP, {"P1:r0": 1, "P1:r1": 0}).verdict == "forbidden"
    assert model.judge(MP, {"P1:r0": 1, "P1:r1": 1, "x": 1, "y": 1}).verdict == "sc"
    assert model.unknown_keys(MP, {"P1:r0": 1, "x": 0, "y": 0}) == []


def test_every_shipped_litmus_tests_condition_keys_are_known():
    """No litmus test of the repository names a key judge would refuse (its condition and observed
    keys are its outcome keys)."""
    for f in sorted((ROOT / "tests" / "litmus").rglob("*.litmus")):
        p = litmus.parse_file(f)
        assert model.unknown_keys(p, dict.fromkeys(p.outcome_keys(), 0)) == [], f


def test_an_mbarrier_has_no_value_an_outcome_names():
    """The corpus's MBAR entry: ``judge(p, {"bar": 0})`` gave a verdict (No-Thin-Air) for any value of the
    mbarrier object (a re-review of the fix): not a data location, refused."""
    from fuzzgpu.corpus import load_entry

    p = load_entry(ROOT / "corpus" / "73416467ed043580.json").program
    with pytest.raises(UserError, match="'bar' name no data location"):
        model.judge(p, {"bar": 0})
    assert model.unknown_keys(p, {"x": 1}) == []
