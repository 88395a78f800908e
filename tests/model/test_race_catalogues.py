"""Issue 32's race catalogues that share one form (``expected.csv`` rows checked by
:func:`race_catalogue.check_row`): classes L (tests/litmus/race-mixed), D (race-tensormap) and E/G
(race-tcgen05).  Each row: the racy verdict argued from the PTX ISA in its file, its one witness, a racy
witness's mechanism and class.  The class-specific tests (fixes, numbers) stay in each class's file."""

from __future__ import annotations

from pathlib import Path

import pytest

from paths import catalogue_rows
from race_catalogue import check_row

LITMUS = Path(__file__).resolve().parents[1] / "litmus"
CATALOGUES = ("race-mixed", "race-tensormap", "race-tcgen05")
ROWS = [(name, row) for name in CATALOGUES for row in catalogue_rows(LITMUS / name)]


@pytest.mark.parametrize("name, row", ROWS, ids=[f"{n}/{r['path']}" for n, r in ROWS])
def test_catalogue_row(name, row):
    check_row(LITMUS / name, row)


@pytest.mark.parametrize("name", CATALOGUES)
def test_catalogue_lists_every_file(name):
    rows = catalogue_rows(LITMUS / name)
    assert rows and {r["path"] for r in rows} == {f.name for f in (LITMUS / name).glob("*.litmus")}
