"""``fuzzgpu necessity``: the table, --json, the exit statuses, and --backend sim (the run path with no GPU)."""

from __future__ import annotations

import json
import subprocess

from command import fuzzgpu

NEC = "examples/necessity"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return fuzzgpu("necessity", *args)


def test_the_table_names_each_change_its_verdict_and_the_outcome():
    r = _run(f"{NEC}/NEC-06-mp-release-fence.litmus")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "the original holds" in out
    row = next(line for line in out.splitlines() if "st.release.cluster f, 1" in line)
    assert "needed" in row and "P1:r1=1; P1:r2=0;" in row
    row = next(line for line in out.splitlines() if line.split()[:1] == ["1"])
    assert "fence.acq_rel.gpu" in row and "not-needed" in row
    assert "summary: 4 needed, 5 not needed, 0 race only, 0 not judged, of 9 changes" in out


def test_json_has_one_entry_per_change_and_a_summary_that_adds_up():
    r = _run("--json", f"{NEC}/NEC-03-tma-store-signal.litmus")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["original"]["fails"] == [] and d["condition"].startswith("exists")
    assert len(d["changes"]) == sum(d["summary"].values()) == 9
    for c in d["changes"]:
        assert c["verdict"] in ("needed", "race-only", "not-needed", "not-judged")
        assert bool(c["outcomes"]) == (c["verdict"] == "needed") and c["gpu"] is None
    drop = next(c for c in d["changes"] if c["from"] == "fence.proxy.async.shared::cta")
    assert drop["to"] == "-" and drop["inverse_of"] == "fence.proxy" and drop["why"]


def test_bad_input_is_exit_2_with_one_line(tmp_path):
    bad = tmp_path / "bad.litmus"
    bad.write_text("garbage\n")
    r = _run(str(bad))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "bad.litmus:1:1" in r.stderr
    r = _run(str(tmp_path / "missing.litmus"))
    assert r.returncode == 2 and "missing.litmus" in r.stderr


def test_a_test_the_gpu_harness_cannot_run_is_bad_input_with_a_backend():
    # a virtual alias needs a second mapping the harness does not make: refused before any run
    r = _run("--backend", "sim", "tests/litmus/core/Alias-fence.litmus")
    assert r.returncode == 2 and "cannot run" in r.stderr and "alias" in r.stderr, r.stderr


def test_backend_sim_counts_the_outcomes_the_model_says_appear():
    r = _run("--json", "--backend", "sim", "--instances", "20000", f"{NEC}/NEC-08-cp-async-pipeline.litmus")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["original"]["gpu"]["ran"] and d["original"]["gpu"]["witness"] == 0
    for c in d["changes"]:
        g = c["gpu"]
        assert g["ran"] and g["instances"] >= 20000
        if c["verdict"] == "not-needed":
            assert g["witness"] == 0  # the simulation samples only outcomes the model allows
        else:
            assert g["witness"] > 0 and g["model_outcomes"] == g["witness"]
