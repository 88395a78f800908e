"""Every stress file shipped under strategies/stress/ is one `fuzzgpu run --stress-config` reads:
a full set of knobs, each of its type and within stress.BOUNDS (a bad one would be exit 2 at the
user's first try of the command its header prints)."""

import dataclasses
from pathlib import Path

import pytest

from fuzzgpu.stress.space import StressConfig, read_knobs

FILES = sorted((Path(__file__).parents[2] / "strategies" / "stress").glob("*.toml"))


def test_there_are_stress_files():
    assert len(FILES) >= 2


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_a_stress_file_names_every_knob_and_run_reads_it(path):
    knobs = read_knobs(str(path))
    assert set(knobs) >= {f.name for f in dataclasses.fields(StressConfig)}
    StressConfig.from_table(knobs, where=path.name)  # raises on a bad type or range
    assert "fuzzgpu run --stress-config strategies/stress/" + path.name in path.read_text()
