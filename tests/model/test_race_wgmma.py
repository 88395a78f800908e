"""Class F (13) of issue 32 -- a wgmma register operand accessed in flight: the A fragment
overwritten, or the accumulator read, before the ``wgmma.wait_group`` that covers the wgmma, or
written with no ``wgmma.fence`` before the wgmma (DeepGEMM #448/#449).  The hand-written catalogue
tests/litmus/race-wgmma (verdicts argued from the PTX ISA in each file), the race property's
mechanism and class of each racy witness, and the fix (the wait_group, or the wgmma.fence, that
orders the access)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu.ir import Mov
from fuzzgpu.litmus import format_instruction
from fuzzgpu.model.race import analyse_races
from fuzzgpu.bug_classes import CLASS_NAMES, CLASSES

from paths import catalogue_rows
from race_catalogue import check_row, fix_matches, judged

HERE = Path(__file__).resolve().parents[1] / "litmus" / "race-wgmma"
#: the catalogue's rows, by file name (every file has one)
ROWS = {r["path"]: r for r in catalogue_rows(HERE)}


@pytest.mark.parametrize("name", sorted(ROWS))
def test_wgmma_register_catalogue(name):
    check_row(HERE, ROWS[name])  # the row's racy verdict, its one witness, and a racy witness's mechanism and class


def test_the_catalogue_and_the_class_number():
    assert set(ROWS) == {f.name for f in HERE.glob("*.litmus")}
    # F is the sixth letter: 8 + 5, as A-C = 8-10, H-J = 15-17, L = 19
    assert CLASS_NAMES[13] == "wgmma-register-in-flight" and "F." in CLASSES[13]


def test_the_racing_pair_names_the_access_and_the_wgmma():
    p, ra, witness = judged(HERE / "RACE-13-a-overwritten-before-wait.litmus", ROWS["RACE-13-a-overwritten-before-wait.litmus"])
    (pair,) = ra.racy[witness]
    assert pair.write == f"P0:{format_instruction(Mov('r1', 2))}" and pair.other == "P0:wgmma.mma_async r2, r1"
    assert pair.location == "P0:r1" and pair.write_at == (0, 4) and pair.other_at == (0, 2)


@pytest.mark.parametrize("racy, fixed", [("RACE-13-a-overwritten-before-wait", "NORACE-13-wait-then-overwrite"),
                                         ("RACE-13-accumulator-read-before-wait", "NORACE-13-accumulator-read-after-wait"),
                                         ("RACE-13-no-wgmma-fence", "NORACE-13-fence-after-write")])
def test_the_fix_orders_the_register_access(racy, fixed):
    fixed_program = fix_matches(HERE, racy, fixed)
    assert not analyse_races(fixed_program).is_racy


def test_an_early_accumulator_read_may_return_the_result():
    # undefined behaviour: the read before the wait may see the wgmma's result as well as the older
    # value. The H200 showed r3 == 1 in every one of 21,626,880 threads (ptxas 13.0 moved the read
    # after WARPGROUP.DEPBAR; bench/results/wgmma-regs), which a first model called forbidden
    p, ra, _ = judged(HERE / "RACE-13-accumulator-read-before-wait.litmus", ROWS["RACE-13-accumulator-read-before-wait.litmus"])
    assert ra.verdict((("P0:r3", 1),)) == "racy" and ra.verdict((("P0:r3", 0),)) == "racy"
