"""The Ray path's pieces that need no Ray (fuzzgpu.workers.ray_cluster): without Ray installed ``--ray``
exits 3 in one line and nothing else changes; the driver's file traffic (what an actor sends, what
the driver keeps, class deduplication across actors) on campaigns run here."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from paths import ROOT


def _no_ray_env(tmp_path: Path) -> dict[str, str]:
    """PYTHONPATH with a ``ray`` that cannot be imported (as on a machine without it)."""
    block = tmp_path / "block"
    (block / "ray").mkdir(parents=True)
    (block / "ray" / "__init__.py").write_text("raise ImportError('No module named ray (blocked by the test)')\n")
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(block), str(ROOT)]))


def test_ray_missing_exits_3_in_one_line(tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    r = subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", "--backend", "sim", "--workers", "2", "--ray", "auto",
                        "--time", "5", "--corpus", str(corpus), "--no-live"], cwd=tmp_path, env=_no_ray_env(tmp_path),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 3, r.stdout + r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "pip install 'fuzzgpu[ray]'" in lines[0], r.stderr
    assert not corpus.exists(), "the corpus was touched before Ray was found missing"


def test_no_ray_import_without_ray_option(tmp_path: Path) -> None:
    code = ("import sys, fuzzgpu.cli, fuzzgpu.commands.campaign, fuzzgpu.workers.supervised, fuzzgpu.campaign, fuzzgpu.workers.ray_cluster; "
            "assert 'ray' not in sys.modules, 'ray imported'")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_ray_usage_errors_exit_2(tmp_path: Path) -> None:
    for extra, want in ((["--backend", "cuda", "--workers", "2"], "--workers with --ray"),
                        (["--backend", "cuda", "--gpus", "0,1"], "expected all or a count")):
        r = subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", *extra, "--ray", "auto", "--time", "5",
                            "--corpus", str(tmp_path / "c")], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and want in r.stderr, r.stdout + r.stderr


def _worker_campaign(root: Path, wid: str, seed: int) -> None:
    """A campaign worker's session on its scratch corpus, as an actor runs it (bounded: one finding)."""
    from fuzzgpu.campaign import Campaign, load_profile, make_backend

    prof = load_profile("classic")
    b, note = make_backend("sim", sim_fault="relacq-as-relaxed")
    c = Campaign(prof, b, root, "model", seed, note, io.StringIO(), False, worker_id=wid)
    c.max_findings = 1
    res = c.run(600)
    assert res.new_findings, "no finding within the bound"


def test_driver_keeps_one_entry_per_class_across_actors(tmp_path: Path) -> None:
    """Two workers with the same seed find the same class on their own nodes (each saves it as new
    there); the driver saves the first, counts the second as a variant and lists it in that worker's
    state as saved by another; the file traffic skips temp files, locks and the evidence cache."""
    from fuzzgpu.corpus import Corpus
    from fuzzgpu.workers.ray_cluster import Coordinator, TreeWatch, synced

    driver = tmp_path / "driver"
    driver.mkdir()
    coord = Coordinator(driver)
    sent = {}
    for wid in ("w0", "w1"):
        scratch = tmp_path / wid
        scratch.mkdir()
        watch = TreeWatch(scratch)
        _worker_campaign(scratch, wid, seed=5)
        changed, removed = watch.changes()
        assert all(synced(rel) for rel in changed)
        assert not any(rel.startswith(".fuzzgpu/evidence") or rel.rsplit("/", 1)[-1] == "lock" for rel in changed)
        assert f".fuzzgpu/workers/{wid}/state.json" in changed
        assert watch.changes() == ({}, [])  # nothing changed since
        sent[wid] = changed
        coord.apply(wid, changed, removed)
    entries = Corpus(driver).entry_paths()
    assert len(entries) == 1, entries
    assert [rel for rel, _ in coord.shared if rel.endswith(".json")] == [entries[0].name]
    st0 = json.loads((driver / ".fuzzgpu/workers/w0/state.json").read_text())
    st1 = json.loads((driver / ".fuzzgpu/workers/w1/state.json").read_text())
    assert [f["file"] for f in st0["findings"]] == [entries[0].name] and not st0["findings"][0].get("saved_by_another")
    assert [f["file"] for f in st1["findings"]] == [entries[0].name] and st1["findings"][0]["saved_by_another"]
    # the snapshot an actor (re)starts from: the entry, the class record, its own state, not another's
    snap = coord.snapshot("w1")
    assert entries[0].name in snap and ".fuzzgpu/workers/w1/state.json" in snap
    assert ".fuzzgpu/workers/w0/state.json" not in snap and not any(r.startswith(".fuzzgpu/evidence") for r in snap)


@pytest.mark.parametrize("rel", ["../x.json", "/tmp/x.json", "raw/../../x.json", "", "raw//x.json", "raw/./x.json"])
def test_actor_files_stay_inside_the_corpus(tmp_path: Path, rel: str) -> None:
    from fuzzgpu.workers.ray_cluster import Coordinator

    root = tmp_path / "a" / "corpus"
    root.mkdir(parents=True)
    msgs = Coordinator(root).apply("w0", {rel: b"{}"}, [rel])
    assert len(msgs) == 1 and "outside the corpus" in msgs[0]
    assert not list(tmp_path.rglob("x.json"))
