"""fuzzgpu.model.liveness and cluster barriers (PTX ISA, "barrier.cluster": the wait "causes the
executing thread to wait for all non-exited threads of the cluster to perform
barrier.cluster.arrive"): a program that must hang at a cluster barrier has no final state, and
``fuzzgpu check`` says why.  The verdicts are in tests/litmus/termination/expected.csv."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fuzzgpu import model
from fuzzgpu.litmus import parse_file
from fuzzgpu.model import liveness as T

FOLDER = Path(__file__).resolve().parents[1] / "litmus" / "termination"
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name,why", [
    ("CB-hang-bar-sync-opposite", "P1 in barrier.cluster.wait"),
    ("CB-hang-spin-before-arrive", "P0's barrier.cluster.wait (P0:3) waits for ever"),
])
def test_check_says_no_final_state(name: str, why: str) -> None:
    out = subprocess.run([sys.executable, "-m", "fuzzgpu", "check", "--json", str(FOLDER / f"{name}.litmus")],
                         capture_output=True, text=True, cwd=ROOT, check=True).stdout
    result = json.loads(out.splitlines()[0])
    assert result["allowed"] == [] and why in result["no_final_state"]


def test_a_spinning_thread_blocks_the_later_phases_of_its_cluster() -> None:
    p = parse_file(FOLDER / "CB-hang-spin-before-arrive.litmus")
    (w,) = T.waits(p)
    assert T.cluster_blocked(p, (None, w)) == {0: 3}  # P0's second barrier.cluster.wait
    assert T.cluster_blocked(p, (None, None)) == {}


def test_an_exited_thread_does_not_hold_the_cluster_barrier() -> None:
    p = parse_file(FOLDER / "CB-exited-thread.litmus")
    assert model.termination(p).status == T.MUST_COMPLETE
    out = subprocess.run([sys.executable, "-m", "fuzzgpu", "check", "--json", str(FOLDER / "CB-exited-thread.litmus")],
                         capture_output=True, text=True, cwd=ROOT, check=True).stdout
    result = json.loads(out.splitlines()[0])
    assert "no_final_state" not in result and result["allowed"]
