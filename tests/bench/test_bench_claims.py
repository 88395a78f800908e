"""bench/results/tensor/h200-tensor-copies.md against its raw outputs (hostile review): the tensor
table's instance counts are each the ``Instances N`` line of a raw ``fuzzgpu run`` output in
``tensor/h200-tensor-copies/tensor/`` or ``tensor/h200-tensor-copies/tensor-1e9-1e10/``, and the drawn programs' load/store
count is the manifest's.  The page had reported a 1e10 run (10,000,007,168 instances) whose raw
file was a copy of the 1e9 run (a ``cp`` of two files of one name; the run's own output is there
now), and "27 tensor loads, 12 tensor stores" for a manifest of 31 and 8."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "bench" / "results"
PAGE = ROOT / "tensor/h200-tensor-copies.md"
RAW = ROOT / "tensor/h200-tensor-copies"


def _table_instances(text: str) -> list[int]:
    """The instance counts of the table under "The tensor litmus tests under the tuned TMA-store stress"."""
    section = text.split("## The tensor litmus tests", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "TMA-tensor" in line]
    return [int(line.split("|")[2].strip(" *").replace(",", "")) for line in rows]


def test_every_tensor_run_count_is_in_a_raw_output() -> None:
    raw = {int(m) for d in ("tensor", "tensor-1e9-1e10") for f in (RAW / d).glob("*.txt")
           for m in re.findall(r"^Instances (\d+) ", f.read_text(), re.M)}
    claimed = _table_instances(PAGE.read_text())
    assert claimed, "the table was not found"
    assert [n for n in claimed if n not in raw] == []


def test_drawn_load_and_store_counts_are_the_manifests() -> None:
    manifest = json.loads((RAW / "tensor-draws" / "manifest.json").read_text())
    copies = Counter(entry["copy"] for entry in manifest.values())
    text = " ".join(PAGE.read_text().split())
    assert f"({copies['load']} tensor loads, {copies['store']} tensor stores" in text
