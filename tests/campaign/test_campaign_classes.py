"""Campaign bookkeeping that a kernel engineer can trust (issue 12, items 2, 5, 8, 9; issue 13,
item 6): findings grouped by root cause, one corpus entry per class with its count and variants, a
known-findings list counted and never saved again, a finding that cannot be saved kept raw (the
campaign goes on), Hypothesis through its public API only, bad limits refused in one line.

In-process campaigns on the sim backend, stopped after a number of Hypothesis runs (never after
a wall-clock time), so that what they assert is a count, not a speed."""

from __future__ import annotations

import errno
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from fuzzgpu import corpus as C
from fuzzgpu.backends.sim import SimBackend
from fuzzgpu.campaign import Campaign, example_database, load_profile

from programs import SIM_MP_PROFILE  # tests/programs.py

REPO = Path(__file__).resolve().parents[2]
MP_CLASS = "model|*|forbidden:cycle through sync[memory]"

PROFILE = SIM_MP_PROFILE


def campaign(tmp_path: Path, runs: int, *, known: Path | None = None, fault: str = "relacq-as-relaxed") -> tuple[Campaign, str]:
    prof = tmp_path / "mp.toml"
    prof.write_text(PROFILE)
    out = io.StringIO()
    c = Campaign(load_profile(str(prof)), SimBackend(fault), tmp_path / "corpus", "model", seed=3, out=out, live=False, known=known)
    c.max_runs = runs
    c.run(3600)
    return c, out.getvalue()


def entries(c: Campaign) -> list[dict]:
    return [json.loads(p.read_text()) for p in c.corpus.entry_paths()]


def test_one_entry_per_class_with_its_count_and_variants(tmp_path):
    c, out = campaign(tmp_path, 6)
    es = entries(c)
    keys = [C.entry_class(d) for d in es]
    assert keys == [d["class"]["key"] for d in es]  # what the campaign stored is what the entry says
    assert len(keys) == len(set(keys)), keys  # one representative per class
    assert MP_CLASS in keys  # MP and LB with a failed release/acquire: one root cause
    n = sum(int(v["findings"]) for v in c.state.classes.values())
    assert n > len(es)  # more findings than entries: the variants were counted, not saved
    rep = (c.root / "report" / "report.txt").read_text()
    assert f"{n} findings in {len(c.state.classes)} class" in rep
    mp = next(d for d in es if C.entry_class(d) == MP_CLASS)
    assert mp["class"] == {"key": MP_CLASS, "id": C.class_id(MP_CLASS)}
    rec = json.loads(c.corpus.class_path(MP_CLASS).read_text())  # the class's count and variants, beside its entry
    assert rec["findings"] == len(rec["variants"]) == c.state.classes[MP_CLASS]["findings"] >= 2
    assert mp["signature"] in rec["variants"] and len(set(rec["variants"])) == len(rec["variants"])
    assert rec["entry"] == c.state.classes[MP_CLASS]["file"] == c.corpus.classes()[MP_CLASS].name
    for d in es:  # every class with an entry has its record, a class of one finding too (hostile review)
        k = d["class"]["key"]
        r = json.loads(c.corpus.class_path(k).read_text())
        assert r["findings"] == c.state.classes[k]["findings"] and d["signature"] in r["variants"], (k, r)
    # the report does not contradict itself, and says what the exit status means
    prop = next(ln for ln in rep.splitlines() if ln.startswith("property"))
    assert prop == 'property    model: a finding is a program that breaks "no observed outcome is forbidden by the PTX memory model"'
    assert "exit status 1:" in rep and "1 means findings were saved" in rep


def test_a_known_class_is_counted_and_shown_never_saved(tmp_path):
    known = tmp_path / "known.json"
    known.write_text(json.dumps({"schema": "fuzzgpu.known", "version": 1, "known": [
        {"class": MP_CLASS, "title": "release/acquire ignored (the injected fault)", "writeup": "docs/findings.md#relacq"}]}))
    c, out = campaign(tmp_path, 3, known=known)
    assert all(C.entry_class(d) != MP_CLASS for d in entries(c))
    k = c.state.classes[MP_CLASS]
    assert k["known"] and k["findings"] >= 1 and k["writeup"] == "docs/findings.md#relacq"
    rep = (c.root / "report" / "report.txt").read_text()
    assert "known class" in rep and "KNOWN, see docs/findings.md#relacq" in rep and MP_CLASS in rep
    # the known list's title under the class line: what the write-up is about, where only a wheel is installed
    lines = rep.splitlines()
    at = next(i for i, ln in enumerate(lines) if "KNOWN, see docs/findings.md#relacq" in ln)
    assert lines[at + 1].strip() == "release/acquire ignored (the injected fault)"


def test_a_finding_that_cannot_be_saved_is_kept_raw_and_the_campaign_goes_on(tmp_path, monkeypatch):
    def full_disk(self, entry):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(C.Corpus, "add", full_disk)
    c, out = campaign(tmp_path, 3)
    assert c.state.run_index == 3  # every run ran: the failure to save stopped nothing
    assert c.state.save_errors and not c.corpus.entry_paths()
    for e in c.state.save_errors:
        raw = json.loads((c.root / e["raw"]).read_text())
        assert raw["signature"] == e["signature"] and "No space left" in raw["error"]
        assert raw["entry"]["program"]["threads"]  # the whole finding, as it would have been saved
    assert "FINDING NOT SAVED" in out and "kept raw" in out
    raw_classes = {e["class"] for e in c.state.save_errors}
    assert len(raw_classes) == len(c.state.save_errors)  # one raw record per class; its other findings counted
    assert sum(c.state.classes[k]["findings"] for k in raw_classes) >= len(raw_classes)
    rep = (c.root / "report" / "report.txt").read_text()
    assert "NOT SAVED" in rep and "exit status 1" in rep
    assert c.unsaved


def test_a_finding_whose_entry_cannot_be_made_is_kept_raw(tmp_path, monkeypatch):
    def broken(*a, **k):
        raise ValueError("field 'reproduction.rate': 1.0000000997306475 is out of range (0..1)")

    monkeypatch.setattr(C, "make_entry", broken)
    c, _ = campaign(tmp_path, 2)
    assert c.state.run_index == 2 and c.state.save_errors
    raw = json.loads((c.root / c.state.save_errors[0]["raw"]).read_text())
    assert "out of range" in raw["error"] and raw["program"]["threads"] and raw["verdict"]["status"] == "fail"


def test_the_example_database_is_public_hypothesis_api(tmp_path):
    from hypothesis.database import ExampleDatabase

    db = example_database(tmp_path, b"run-1")
    other = example_database(tmp_path, b"run-2")
    assert isinstance(db, ExampleDatabase)
    db.save(b"k", b"v1")
    db.save(b"k", b"v2")
    db.save(b"k", b"v1")
    assert sorted(db.fetch(b"k")) == [b"v1", b"v2"] and list(other.fetch(b"k")) == []  # runs apart
    db.move(b"k", b"k2", b"v1")
    assert list(db.fetch(b"k")) == [b"v2"] and list(db.fetch(b"k2")) == [b"v1"]
    db.delete(b"k", b"v2")
    assert list(db.fetch(b"k")) == []
    assert not list(tmp_path.glob("*/.tmp-*"))
    src = "".join(f.read_text() for f in sorted((REPO / "fuzzgpu" / "campaign").glob("*.py")))
    assert "ExampleDatabase" in src  # the package that makes the database
    for private in ("_hypothesis_internal", "_key_path", "_metakeys", "_value_path"):
        assert private not in src


def fuzzgpu(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fuzzgpu", *args], check=False, capture_output=True, text=True, cwd=cwd, timeout=120)


@pytest.mark.parametrize("args,want", [
    (["--time", "inf"], "--time: must be a number of seconds above 0"),
    (["--time", "nan"], "--time: must be a number of seconds above 0"),
    (["--watchdog", "1e7"], "--watchdog: must be a number of seconds above 0 and at most 86400"),
    (["--workers-per-gpu", "3"], "--workers-per-gpu goes with --gpus"),
])
def test_bad_campaign_limits_one_line_exit_2(tmp_path, args, want):
    r = fuzzgpu("campaign", "--backend", "sim", "--corpus", str(tmp_path / "c"), *args)
    assert r.returncode == 2 and want in r.stderr.strip().splitlines()[-1], r.stderr  # (argparse prints its usage above)
    assert not (tmp_path / "c").exists()


def test_a_profile_asking_for_too_many_sim_instances_is_refused(tmp_path):
    p = tmp_path / "big.toml"
    p.write_text(PROFILE.replace("instances = 20_000", "instances = 4300000000000"))
    r = fuzzgpu("campaign", "--backend", "sim", "--profile", str(p), "--corpus", str(tmp_path / "c"))
    line = p.read_text().splitlines().index("instances = 4300000000000") + 1
    assert r.returncode == 2 and f"{p}:{line}: key 'sim.instances' must be at most" in r.stderr, r.stderr


def test_a_deadline_never_overflows_the_pipe_poll():
    from fuzzgpu.backends.base import RunConfig
    from fuzzgpu.workers.supervised import MAX_DEADLINE, BackendSpec, SupervisedBackend

    sup = SupervisedBackend.__new__(SupervisedBackend)  # the deadline is arithmetic: no worker needed
    sup.spec, sup.watchdog = BackendSpec("sim"), 86400.0
    assert sup.deadline_for(RunConfig(instances=10**15)) == MAX_DEADLINE < 2**31 / 1000


def test_a_known_list_that_is_not_one_is_refused_in_one_line(tmp_path):
    bad = tmp_path / "known.json"
    bad.write_text(json.dumps({"schema": "fuzzgpu.known", "version": 1, "known": [{"class": "x", "title": "t", "writeup": "w"}]}))
    r = fuzzgpu("campaign", "--backend", "sim", "--known", str(bad), "--corpus", str(tmp_path / "c"), "--time", "5")
    assert r.returncode == 2 and str(bad) in r.stderr and "not a class key" in r.stderr, r.stderr


@pytest.mark.parametrize("rc,finished,progressed,restarts,left,want", [
    (0, True, True, 0, 100, "done"),
    (1, True, True, 0, 100, "done"),  # findings saved, report written
    (1, False, True, 0, 100, "restart"),  # a traceback (Python exits 1) before the end
    (2, False, True, 0, 100, "restart"),  # an error after it had started (the reproduction.rate crash)
    (2, False, False, 0, 100, "refused"),  # a bad option or profile: restarting does not help
    (3, False, False, 0, 100, "refused"),  # no usable GPU, a missing tool before the first program: restarting does not help
    (3, False, True, 0, 100, "restart"),  # the environment failed after it had started (a full disk) may recover
    (-9, False, True, 0, 100, "restart"),  # killed
    (-9, False, True, 20, 100, "give-up"),  # bounded
    (-9, False, True, 0, 1, "done"),  # the time is up anyway
])
def test_a_worker_that_exits_on_an_error_is_restarted_with_a_bound(rc, finished, progressed, restarts, left, want):
    from fuzzgpu.workers.local import after_exit
    from fuzzgpu.workers.supervised import MAX_RESTARTS

    assert MAX_RESTARTS == 20
    assert after_exit(rc, finished, progressed, restarts, left) == want


@pytest.mark.parametrize("bad,want", [
    ({"classes": {"model|*|x": {"findings": "many"}}}, "field 'classes.model|*|x.findings' has the wrong type"),
    ({"classes": {"model|*|x": 5}}, "field 'classes.model|*|x' has the wrong type"),
    ({"save_errors": [{"raw": "raw/x.json"}]}, "missing field 'save_errors[0].signature'"),
])
def test_a_state_with_bad_class_counts_is_refused_in_one_line(tmp_path, bad, want):
    from fuzzgpu.campaign import State
    from fuzzgpu.errors import UserError

    p = tmp_path / "state.json"
    p.write_text(json.dumps({"schema": "fuzzgpu.campaign-state", "version": 1, "profile": "classic", "backend": "sim",
                             "property": "model", "seed": 1, **bad}))
    with pytest.raises(UserError) as e:
        State.load(p)
    assert str(p) in str(e.value) and want in str(e.value) and "\n" not in str(e.value)
