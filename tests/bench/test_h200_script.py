"""bench/h200.sh refuses an X folder that holds files already: on the device a folder of an earlier
session's run outlived it, and its classes.txt sat beside a new run's results (2026-12-05)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_folder_with_an_earlier_runs_files_is_refused(tmp_path: Path) -> None:
    old = tmp_path / "t600"
    old.mkdir()
    (old / "classes.txt").write_text("an earlier run's\n")
    r = subprocess.run(["bash", str(ROOT / "bench" / "h200.sh"), "throughput"], cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, "X": str(old), "OUT": str(tmp_path / "out")}, timeout=60)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines() == [f"bench/h200.sh: X={old} is not empty (an earlier run's files would mix "
                                             "with this one's): name a new folder"]
    assert sorted(p.name for p in old.iterdir()) == ["classes.txt"] and not (tmp_path / "out").exists()


def test_gc_thresholds_are_refused_without_the_clock_or_malformed(tmp_path: Path) -> None:
    """GCTHRESH reaches the workers only through the collector's clock (bench/cprofile_site), which records the
    thresholds each collection ran under: without GCCLOCK, or malformed, the A/B would silently run at the
    campaign's thresholds.  Refused before anything is written."""
    for env in ({"GCTHRESH": "7OO,10,10", "GCCLOCK": "1"}, {"GCTHRESH": "700,10,10"}, {"GCTHRESH": "700,10", "GCCLOCK": "1"}):
        out = tmp_path / "out"
        r = subprocess.run(["bash", str(ROOT / "bench" / "h200.sh"), "throughput"], cwd=ROOT, capture_output=True, text=True,
                           env={**os.environ, "OUT": str(out), **env}, timeout=60)
        assert r.returncode == 2, r.stderr
        assert r.stderr.strip().splitlines() == [f"bench/h200.sh: GCTHRESH={env['GCTHRESH']} needs GCCLOCK=1 and three integers A,B,C"]
        assert not out.exists()


def test_ab_refuses_settings_it_would_not_pass_on(tmp_path: Path) -> None:
    """bench/h200.sh ab passes each side's VAR=value to the throughput part as its variable and sides the runs by what
    they recorded of it: a missing side, two equal sides, two settings at once, a variable the part does not take or
    whose value no run records (it would run both sides alike, or side them all together, and void the A/B), or a
    value with a shell character is refused before anything is written."""
    each = "A and B are each one W, WINDOW or GCTHRESH=value"
    cases = [({"A": "WINDOW=0.5"}, f"'': {each}"),
             ({"A": "WINDOW=0.5", "B": "WINDOW=0.5"}, "A=WINDOW=0.5 B=WINDOW=0.5: two values of one setting, please"),
             ({"A": "WINDOW=0.5", "B": "W=24"}, "A=WINDOW=0.5 B=W=24: two values of one setting, please"),
             ({"A": "WINDOW=0.5 W=24", "B": "WINDOW=0.25"}, f"'WINDOW=0.5 W=24': {each}"),
             ({"A": "WINDOW=0.5", "B": "WINDOWS=0.25"}, f"'WINDOWS=0.25': {each}"),
             ({"A": "POOL=0", "B": "POOL=1"}, f"'POOL=0': {each}"),
             ({"A": "W=20", "B": "W=24;rm"}, f"'W=24;rm': {each}")]
    for env, said in cases:
        out = tmp_path / "out"
        r = subprocess.run(["bash", str(ROOT / "bench" / "h200.sh"), "ab"], cwd=ROOT, capture_output=True, text=True,
                           env={**{k: v for k, v in os.environ.items() if k not in ("A", "B")}, "OUT": str(out), **env},
                           timeout=60)
        assert r.returncode == 2, r.stderr
        assert r.stderr.strip().splitlines() == [f"bench/h200.sh ab: {said}"]
        assert not out.exists()


def test_a_stale_end_mark_beside_the_x_folder_is_refused(tmp_path: Path) -> None:
    """A part run with X=DIR (under setsid, collected by a later call) writes DIR.done when it ends, whatever its exit
    (an EXIT trap), beside DIR (whose files come back); a DIR.done left by an earlier run would end the collector's
    wait at once: refused before anything is written."""
    x = tmp_path / "t600"
    env = {**os.environ, "X": str(x), "OUT": str(tmp_path / "out")}
    (tmp_path / "t600.done").write_text("an earlier run's\n")
    r = subprocess.run(["bash", str(ROOT / "bench" / "h200.sh"), "throughput"], cwd=ROOT, capture_output=True, text=True,
                       env=env, timeout=60)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [f"bench/h200.sh: {x}.done exists (an earlier run's: a wait for this run would "
                                             "end at once): name a new folder"]
    assert not x.exists() and not (tmp_path / "out").exists()


def test_each_part_has_one_branch_and_the_usage_names_them_all() -> None:
    """bash runs the first branch of a ``case`` that matches: a second ``ab)`` branch left behind by an edit (2026-12-06,
    6bd7431) made ``ab`` run the collector's old A/B, silently.  Each part has exactly one branch, and the usage line
    names exactly the parts there are."""
    import re

    text = (ROOT / "bench" / "h200.sh").read_text()
    body = text[text.index('case "$part" in'):]
    labels = re.findall(r"^([a-z][a-z-]*)\)", body, flags=re.M)
    assert len(labels) == len(set(labels)), sorted(lab for lab in set(labels) if labels.count(lab) > 1)
    usage = re.search(r"usage: bench/h200.sh ([a-z|-]+)\}", text)
    assert usage is not None and sorted(usage.group(1).split("|")) == sorted(labels)


def test_a_run_that_outlives_its_call_runs_from_its_own_copy_of_the_tree(tmp_path: Path) -> None:
    """The device tool copies the working tree over the old one at the start of every call: a part run with X=DIR
    under setsid, collected by a later call, read files while they were rewritten (a campaign worker's first import
    of fuzzgpu.fixes failed as the collecting call began, 2026-12-06).  With X the script copies the tree beside DIR
    (DIR.tree) and runs there; its end mark is still written.  (A part name no branch takes: the run ends at once, on
    the missing wheels or on the usage.)"""
    tree = tmp_path / "checkout"
    (tree / "bench").mkdir(parents=True)
    (tree / "bench" / "h200.sh").write_bytes((ROOT / "bench" / "h200.sh").read_bytes())
    x = tmp_path / "run"
    r = subprocess.run(["bash", "bench/h200.sh", "no-such-part"], cwd=tree, capture_output=True, text=True,
                       env={**os.environ, "X": str(x), "OUT": str(tmp_path / "out")}, timeout=60)
    assert r.returncode in (2, 3), r.stderr
    assert (tmp_path / "run.tree" / "bench" / "h200.sh").read_bytes() == (ROOT / "bench" / "h200.sh").read_bytes()
    assert (tmp_path / "run.done").read_text().startswith(f"exit {r.returncode} ")
    assert sorted(p.name for p in tree.iterdir()) == ["bench"]  # nothing written into the checkout


def test_an_x_inside_the_tree_is_refused_and_nested_runs_stay_in_the_tree(tmp_path: Path) -> None:
    """The copy cannot hold itself: an X inside the tree is refused (exit 2), with its end mark written so that a
    collecting call does not wait its limit out.  The ab part's (and gcab's) own runs each get an X of their own and
    run in the part's tree (FZ_OWN_TREE): a copy each beside them would sit among the runs its glob reads."""
    tree = tmp_path / "checkout"
    (tree / "bench").mkdir(parents=True)
    (tree / "bench" / "h200.sh").write_bytes((ROOT / "bench" / "h200.sh").read_bytes())
    r = subprocess.run(["bash", "bench/h200.sh", "throughput"], cwd=tree, capture_output=True, text=True,
                       env={**os.environ, "X": "runs/one", "OUT": str(tmp_path / "out")}, timeout=60)
    assert r.returncode == 2 and "is inside the tree it would copy" in r.stderr, r.stderr
    assert (tree / "runs" / "one.done").read_text().startswith("exit 2 ") and not (tree / "runs" / "one.tree").exists()
    nested = [ln for ln in (ROOT / "bench" / "h200.sh").read_text().splitlines() if 'X="$x/$i-$side"' in ln]
    assert nested and all("FZ_OWN_TREE=1" in ln for ln in nested)


def test_a_gpu_with_an_earlier_runs_processes_is_refused(tmp_path: Path) -> None:
    """A campaign whose GPU stopped answering left its processes stuck in the driver, and the next part hung behind
    them for its whole call (2026-12-06): a part finds the GPU's compute processes first (nvidia-smi) and refuses to
    measure beside them (exit 3, one line -- a process name's control characters left out --, its end mark written)."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "nvidia-smi").write_text("#!/bin/sh\necho '806, [No data], 530 MiB'\nprintf '738, py\\033[2J, 530 MiB\\n'\n")
    (fake / "nvidia-smi").chmod(0o755)
    x = tmp_path / "run"
    r = subprocess.run(["bash", str(ROOT / "bench" / "h200.sh"), "throughput"], cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, "PATH": f"{fake}:{os.environ['PATH']}", "X": str(x), "FZ_OWN_TREE": "1",
                            "GPU_IDLE_WAIT": "2", "OUT": str(tmp_path / "out")}, timeout=60)
    assert r.returncode == 3, r.stderr
    assert r.stderr.strip().splitlines() == ["bench/h200.sh: the GPU already runs 2 process(es), an earlier run's (stuck in "
                                             "the driver?): 806, [No data], 530 MiB;738, py[2J, 530 MiB; a fresh machine "
                                             "is needed"]
    assert (tmp_path / "run.done").read_text().startswith("exit 3 ")
