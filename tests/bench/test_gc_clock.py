"""The workers' clocks on Python's garbage collector (``GCCLOCK=1 bench/h200.sh throughput``): a real
two-worker static campaign with bench/cprofile_site on its path writes one clock per worker, and
bench/throughput.py sums them -- the collections counted under the campaign's thresholds
(``limits.GC_THRESHOLDS``) once the campaign runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from fuzzgpu.campaign import limits

ROOT = Path(__file__).resolve().parents[2]


def test_each_worker_clocks_its_collector_and_throughput_sums_them(tmp_path):
    clocks, corpus = tmp_path / "gc-clock", tmp_path / "corpus"
    clocks.mkdir()
    env = dict(os.environ, FUZZGPU_GC_CLOCK_DIR=str(clocks),
               PYTHONPATH=os.pathsep.join([str(ROOT / "bench" / "cprofile_site"), os.environ.get("PYTHONPATH", "")]))
    subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", "--backend", "sim", "--profile", "classic", "--time", "4",
                    "--corpus", str(corpus), "--seed", "1", "--no-live", "--workers", "2"], env=env, cwd=tmp_path,
                   capture_output=True, timeout=300)
    assert sorted(p.name for p in clocks.iterdir()) == ["gc-w0.json", "gc-w1.json"]
    clocks.rename(corpus / "gc-clock")
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "throughput.py"), str(corpus), "--time", "4"],
                         capture_output=True, text=True, check=True)
    g = json.loads(out.stdout)["gc_clock"]
    assert g["workers"] == 2 and g["process_cpu_s"] > 0
    assert ",".join(map(str, limits.GC_THRESHOLDS)) in g["collections_by_thresholds"]
    assert abs(g["gc_cpu_s"] - sum(g["gc_cpu_s_by_generation"])) < 0.2
