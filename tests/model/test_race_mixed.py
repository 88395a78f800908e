"""Class L (mixed-size accesses) of issue 32: the hand-written catalogue tests/litmus/race-mixed
(verdicts argued from the PTX ISA in each file), the race property's class of each racy witness,
and the fix (the sizes made to agree)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu.model.race import analyse_races
from fuzzgpu.bug_classes import CLASS_NAMES, CLASSES

from paths import catalogue_rows
from race_catalogue import check_row, fix_matches

HERE = Path(__file__).resolve().parents[1] / "litmus" / "race-mixed"


def _rows() -> list[dict[str, str]]:
    return catalogue_rows(HERE)


@pytest.mark.parametrize("row", _rows(), ids=lambda r: r["path"])
def test_mixed_size_catalogue(row):
    check_row(HERE, row)  # the row's racy verdict, its one witness, and a racy witness's mechanism and class


def test_catalogue_lists_every_file():
    assert {r["path"] for r in _rows()} == {f.name for f in HERE.glob("*.litmus")}


def test_the_class_has_its_fixed_number():
    assert CLASS_NAMES[19] == "mixed-size-access" and "L." in CLASSES[19]


@pytest.mark.parametrize("racy, fixed", [("RACE-19-mixed-size-flag", "NORACE-19-same-size-flag"),
                                         ("RACE-19-narrow-store-wide-load", "NORACE-19-same-size-flag"),
                                         ("RACE-19-byte-poll-of-half-word-store", "NORACE-19-both-narrow-flag")])
def test_the_fix_makes_the_sizes_agree(racy, fixed):
    fixed_program = fix_matches(HERE, racy, fixed)
    assert not analyse_races(fixed_program).is_racy
