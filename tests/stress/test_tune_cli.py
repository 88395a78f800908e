"""``fuzzgpu tune``: exit codes on the CPU; on a GPU (marked ``gpu``), every knob of the search
space runs and the command writes a loadable profile table."""

from __future__ import annotations

import dataclasses
import json
import subprocess

import pytest
from command import fuzzgpu
from conftest import gpu_unavailable
from paths import LITMUS

from fuzzgpu.stress.space import SPACE, StressConfig

MP = LITMUS / "gpu" / "MP-relaxed-gpu.litmus"


def tune(*args: str) -> subprocess.CompletedProcess[str]:
    return fuzzgpu("tune", *args)


@pytest.mark.skipif(gpu_unavailable() is None, reason="a GPU is present")
def test_without_a_gpu_exits_3_with_one_line() -> None:
    r = tune("--budget", "1", str(MP))
    assert r.returncode == 3, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "no GPU" in r.stderr


def test_bad_inputs_exit_2(tmp_path) -> None:
    bad = tmp_path / "bad.litmus"
    bad.write_text("PTX nonsense\n{\n")
    for args in ((str(tmp_path / "missing.litmus"),), (str(bad),), ("--budget", "0", str(MP)), ("--budget", "x", str(MP))):
        r = tune(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1


def test_an_out_path_that_cannot_be_written_is_refused_before_tuning(tmp_path) -> None:
    """Hostile review: ``--out /no/such/folder/x.toml`` was found only after the tuning
    budget was spent on the GPU (exit 3, the results and any forbidden outcome not printed); on a
    machine without a GPU it said "no GPU" instead of naming the path."""
    for out in (tmp_path / "missing" / "x.toml", tmp_path):
        r = tune("--budget", "1", "--out", str(out), str(MP))
        assert r.returncode == 2, (out, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and f"--out {out}" in r.stderr, r.stderr


def test_listed_in_fuzzgpu_help() -> None:
    r = fuzzgpu("--help", timeout=120)
    assert "tune" in r.stdout


@pytest.mark.gpu
def test_every_knob_value_runs_on_the_gpu() -> None:
    from fuzzgpu import litmus
    from fuzzgpu.backends.cuda import CudaBackend

    b = CudaBackend()
    try:
        p = litmus.parse_file(MP)
        c = b.compile(p)
        # every value the tuner tries, and the knobs it does not search (stress_word) with the
        # stress they change on: stress CTAs and the pre-test stress on one word per CTA
        runs = [(f"{knob}={v}", dataclasses.replace(StressConfig(), **{knob: v})) for knob, vals in SPACE.items() for v in vals]
        runs += [(f"stress_word, {k}", dataclasses.replace(StressConfig(stress_word=True, stress=64, pre_stress=16), **over))
                 for k, over in (("lines round-robin", {}), ("one line", {"stress_lines": 1, "stress_by_cta": True}))]
        for what, sc in runs:
            h = b.run_compiled(c, sc.run_config(instances=1 << 18))
            assert sum(n for _, n in h.counts) + h.timeouts == h.instances, what
            # every value read is one the program wrote: the stress never touches a test location
            assert all(x is not None for o, _ in h.counts for _, x in o), what
    finally:
        b.close()


@pytest.mark.gpu
def test_tune_writes_a_loadable_table(tmp_path) -> None:
    import tomllib

    out = tmp_path / "tuned.toml"
    r = tune("--budget", "3", "--json", "--out", str(out), str(MP))
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["spent_s"] <= 3.0 * 1.05 and d["best"]["weak_per_s"] >= d["default"]["weak_per_s"]
    table = tomllib.loads(out.read_text())["stress"]
    assert StressConfig.from_table(table).to_table() == d["best"]["stress"]
