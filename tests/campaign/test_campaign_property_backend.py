"""A property that cannot fail on the backend is refused or said loudly (issue 27, item 5): ``--property
sc`` on the static backend (nothing executes) ran 102 programs, "0 instances", exit 0, "no new
finding"."""

from __future__ import annotations

import io
import sys

import pytest

from fuzzgpu.campaign import run_campaign
from fuzzgpu.campaign.run import SC_ON_STATIC
from fuzzgpu.cli import main as cli_main
from fuzzgpu.errors import EXIT_USAGE


@pytest.mark.parametrize("extra", [[], ["--workers", "2"]])
def test_sc_on_the_static_backend_is_refused_in_one_line(tmp_path, capsys, extra):
    argv = ["campaign", "--property", "sc", "--backend", "static", "--time", "5", "--no-live", "--corpus", str(tmp_path / "c"), *extra]
    assert cli_main(argv) == EXIT_USAGE
    out = capsys.readouterr()
    assert out.err.count("\n") == 1 and "--property sc with --backend static" in out.err, out.err
    assert not (tmp_path / "c").exists()  # refused before anything was written


def test_sc_on_auto_without_a_gpu_says_so_on_screen_and_in_the_report(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pycuda", None)  # no GPU: auto falls back to static
    monkeypatch.setitem(sys.modules, "pycuda.driver", None)
    out = io.StringIO()
    res = run_campaign("classic", "auto", 0.001, str(tmp_path / "c"), "sc", seed=1, out=out, live=False, isolate=False)
    assert SC_ON_STATIC in out.getvalue()
    assert SC_ON_STATIC in (res.report_dir / "report.txt").read_text()


def test_sc_on_the_simulation_runs(tmp_path):
    out = io.StringIO()
    res = run_campaign("classic", "sim", 0.001, str(tmp_path / "c"), "sc", seed=1, out=out, live=False, isolate=False)
    assert "NOT CHECKED" not in out.getvalue() and res.reason
