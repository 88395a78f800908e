"""A corpus replay that means something in CI (issue 28, item 3): each entry carries what CI expects
of it (``expect``: reproduces, fixed, new), and ``fuzzgpu replay`` and the pytest plugin report each
entry against it -- PASS, FAIL with the reason, NOT CHECKED (never green), ERROR -- with JUnit XML
for CI systems.  Real runs: the static SASS oracle (nvcc) for the FlashMLA entry, the simulation
and the oracle for the others."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from fuzzgpu import properties
from fuzzgpu.backends.base import RunConfig
from fuzzgpu.backends.sim import SimBackend
from fuzzgpu.corpus import Corpus, expectation, load_entry, make_entry
from fuzzgpu.corpus.expect import judge

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"
MBAR = CORPUS / "73416467ed043580.json"  # found on an H200: an observed outcome the model forbids
PDL = CORPUS / "7be901686d91609a.json"  # FlashMLA's hoisted ld.global.nc: a SASS finding
ENV = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def fuzzgpu(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fuzzgpu", *args], check=False, capture_output=True, text=True, cwd=ROOT,
                          timeout=600, env=ENV)


def junit(path: Path) -> tuple[ET.Element, dict[str, ET.Element]]:
    root = ET.parse(path).getroot()
    suite = root.find("testsuite")
    assert suite is not None
    return suite, {tc.get("name", "").split(" ", 1)[0]: tc for tc in suite.findall("testcase")}


def copy_entry(src: Path, d: Path, **changes) -> Path:
    d.mkdir(exist_ok=True)
    data = json.loads(src.read_text())
    for k, v in changes.items():
        if v is None:
            data.pop(k, None)
        else:
            data[k] = v
    out = d / src.name
    out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return out


# -- the expectation itself --------------------------------------------------------------------


def test_every_shipped_entry_says_what_ci_expects_of_it():
    for e in Corpus(CORPUS).entries():
        assert e.data.get("expect") == "reproduces", e.path  # both are known hazards kept on purpose (corpus/README.md)


def test_an_entry_without_the_field_is_new_and_loads(tmp_path):
    """Entries saved before expectations existed load unchanged and are judged as before: new."""
    p = copy_entry(MBAR, tmp_path, expect=None)
    assert "expect" not in json.loads(p.read_text())
    assert expectation(load_entry(p).data) == "new"


@pytest.mark.parametrize("expect,status,check", [
    ("reproduces", "violates", "pass"), ("reproduces", "fixed", "fail"),
    ("fixed", "violates", "fail"), ("fixed", "fixed", "pass"),
    ("new", "violates", "fail"), ("new", "fixed", "pass"),
    ("reproduces", "skipped", "not-checked"), ("fixed", "not-reproducible", "not-checked"), ("new", "error", "error"),
])
def test_judge(expect, status, check):
    assert judge(expect, status, "why")[0] == check


def test_a_bad_expectation_is_refused_in_one_line(tmp_path):
    copy_entry(MBAR, tmp_path, expect="maybe")
    r = fuzzgpu("replay", str(tmp_path), "--backend", "sim")
    assert r.returncode == 2 and "field 'expect'" in r.stderr and "Traceback" not in r.stderr, r.stderr


# -- the shipped corpus on a CPU machine: green, and what checked each entry ----------------------


def test_ci_replay_of_the_shipped_corpus_is_green_on_a_cpu_machine(tmp_path):
    """The FlashMLA entry by its SASS (static), the H200 entry by the model (its recorded outcomes
    re-judged): both PASS, exit 0, and the JUnit XML says so."""
    x = tmp_path / "replay.xml"
    r = fuzzgpu("replay", "corpus", "--backend", "static", "--junit-xml", str(x))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "against their expectations: 2 PASS, 0 FAIL, 0 NOT CHECKED, 0 ERROR" in r.stdout, r.stdout
    mbar_line = next(ln for ln in r.stdout.splitlines() if ln.startswith(MBAR.name))
    assert "PASS [expect reproduces]" in mbar_line and "checked by the model only" in mbar_line and "not re-run" in mbar_line
    suite, cases = junit(x)
    assert suite.get("tests") == "2" and suite.get("failures") == "0" and suite.get("errors") == "0"
    assert set(cases) == {MBAR.name, PDL.name}
    assert all(tc.find("failure") is None and tc.find("error") is None for tc in cases.values())


def test_ci_replay_is_red_when_an_expectation_is_broken(tmp_path):
    """The FlashMLA entry marked fixed: ptxas still hoists the load, the finding is back -- FAIL,
    exit 1, a JUnit failure naming the entry; the other entry still passes."""
    d = tmp_path / "c"
    copy_entry(PDL, d, expect="fixed")
    copy_entry(MBAR, d)
    x = tmp_path / "replay.xml"
    r = fuzzgpu("replay", str(d), "--backend", "static", "--junit-xml", str(x))
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-2000:]
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith(PDL.name))
    assert "FAIL [expect fixed]" in line and "the finding is back" in line
    suite, cases = junit(x)
    assert suite.get("failures") == "1" and suite.get("errors") == "0"
    failure = cases[PDL.name].find("failure")
    assert failure is not None and "the finding is back" in failure.get("message", "")
    assert cases[MBAR.name].find("failure") is None


def test_a_hazard_that_silently_stops_reproducing_is_red(tmp_path):
    """The FlashMLA entry with its .nc load made a plain load (what a toolchain that stops the move, or
    a fuzzgpu that lost the check, looks like to the replay): no SASS finding, so expect
    reproduces FAILS -- not "fixed", green."""
    from fuzzgpu.corpus import litmus_text, refreshed
    from fuzzgpu.ir import program_from_json

    data = json.loads(PDL.read_text())
    load = data["program"]["threads"][1]["code"][-1]
    assert load["op"] == "ld" and load.pop("nc") is True
    program = program_from_json(data["program"])
    data["litmus"] = litmus_text(program)  # the entry stays true to itself: its text and signature follow the program
    assert "ld.weak r0, x" in data["litmus"] and ".nc" not in data["litmus"]
    data = refreshed(data, program)
    d = tmp_path / "c"
    d.mkdir()
    (d / PDL.name).write_text(json.dumps(data, indent=1))
    r = fuzzgpu("replay", str(d), "--backend", "static")
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-2000:]
    assert "FAIL [expect reproduces]: no longer reproduces" in r.stdout, r.stdout


def test_the_model_check_of_a_gpu_entry_fails_when_the_model_no_longer_sees_it(tmp_path):
    """The H200 entry, its recorded histogram without the offending outcome: the re-judgement finds
    nothing, and the entry that expects to reproduce FAILS (the model check is a check, not a pass)."""
    data = json.loads(MBAR.read_text())
    h = data["histogram"]
    h["outcomes"] = [o for o in h["outcomes"] if o["outcome"] != {"P1:r0": 1, "P1:r1": 0}]
    d = tmp_path / "c"
    d.mkdir()
    (d / MBAR.name).write_text(json.dumps(data, indent=1))
    r = fuzzgpu("replay", str(d), "--backend", "sim")
    assert r.returncode == 1 and "FAIL [expect reproduces]: no longer reproduces" in r.stdout, r.stdout + r.stderr[-2000:]
    assert "no longer violate the model property" in r.stdout


def test_not_checked_is_never_green(tmp_path):
    """On the simulation the FlashMLA entry (a SASS finding) cannot be checked: NOT CHECKED, exit 3,
    a JUnit error -- never a pass.  (The docs' example ran the plugin this way: "2 skipped", exit 0.)"""
    x = tmp_path / "replay.xml"
    r = fuzzgpu("replay", "corpus", "--backend", "sim", "--junit-xml", str(x))
    assert r.returncode == 3, r.stdout[-3000:] + r.stderr[-2000:]
    assert "1 PASS, 0 FAIL, 1 NOT CHECKED" in r.stdout and "not green" in r.stdout
    suite, cases = junit(x)
    err = cases[PDL.name].find("error")
    assert err is not None and err.get("type") == "not-checked" and suite.get("errors") == "1"


def test_a_fixed_replays_junit_xml_says_of_each_fixed_program_what_its_counts_say(tmp_path):
    """``replay --fixed --junit-xml``: the FlashMLA entry's fix holds (a pass: no element of its own),
    the MBAR entry cannot be checked on static (NOT CHECKED); the counts and the elements agree (every
    fixed program was an unnamed ``<error>`` while the counts said 0 errors: a hostile review)."""
    x = tmp_path / "fixed.xml"
    r = fuzzgpu("replay", "corpus", "--backend", "static", "--fixed", "--junit-xml", str(x))
    assert r.returncode == 3, r.stdout[-3000:] + r.stderr[-2000:]
    suite, cases = junit(x)
    assert cases[PDL.name].find("error") is None and cases[PDL.name].find("failure") is None
    err = cases[MBAR.name].find("error")
    assert err is not None and err.get("type") == "not-checked"
    assert (suite.get("errors"), suite.get("failures")) == ("1", "0")
    assert len(suite.findall("testcase/error")) + len(suite.findall("testcase/failure")) == 1


def test_each_fixed_program_status_is_a_check_and_its_junit_element():
    """Pure: a replay's result for a fixed program as a check (``fixed_program_check``) and in the JUnit
    XML: holds -> pass (no element), still violates -> ``<failure>``, not run -> ``<error
    type="not-checked">``, error -> ``<error>``; the counts equal the elements."""
    from fuzzgpu.commands.junit import junit_xml
    from fuzzgpu.commands.replay import fixed_program_check

    want = {"fixed": ("pass", None), "violates": ("fail", "failure"), "skipped": ("not-checked", "error"),
            "error": ("error", "error")}
    rs = [fixed_program_check({"entry": f"{status}.json", "status": status, "reason": "r"}) for status in want]
    assert [r["check"] for r in rs] == [c for c, _ in want.values()]
    root = ET.fromstring(junit_xml(rs, "s", "b"))
    suite = root.find("testsuite")
    assert suite is not None and (suite.get("failures"), suite.get("errors")) == ("1", "2")
    for tc, (_, element) in zip(suite.findall("testcase"), want.values()):
        found = [c.tag for c in tc if c.tag in ("failure", "error")]
        assert found == ([element] if element else []), (tc.get("name"), found)


# -- an entry found on the simulation: all three expectations, real runs -------------------------

from programs import MP  # noqa: E402 -- tests/programs.py


def _sim_entry(d: Path, expect: str | None) -> Path:
    b = SimBackend("relacq-as-relaxed")  # the simulated hardware ignores release/acquire: MP fails
    cfg = RunConfig(instances=100_000)
    h = b.run(MP, cfg)
    e = make_entry(MP, properties.check("model", MP, h), h, b, cfg)
    assert e["expect"] == "new"  # what a campaign saves: nobody has judged it yet
    if expect is None:
        del e["expect"]
    else:
        e["expect"] = expect
    path, _ = Corpus(d).add(e)
    return path


@pytest.mark.parametrize("expect,fault,rc,mark", [
    ("reproduces", True, 0, "PASS"), ("reproduces", False, 1, "FAIL"),
    ("fixed", True, 1, "FAIL"), ("fixed", False, 0, "PASS"),
    ("new", True, 1, "FAIL"), (None, True, 1, "FAIL"), ("new", False, 0, "PASS"),
])
def test_each_expectation_against_a_real_replay(tmp_path, expect, fault, rc, mark):
    _sim_entry(tmp_path, expect)
    r = fuzzgpu("replay", str(tmp_path), "--backend", "sim", "--max-instances", "100000",
                *(("--sim-fault", "relacq-as-relaxed") if fault else ()))
    assert r.returncode == rc, r.stdout[-3000:] + r.stderr[-2000:]
    assert f"{mark} [expect {expect or 'new'}]" in r.stdout, r.stdout


def test_the_plugin_judges_entries_against_their_expectations(tmp_path):
    """pytest --fuzzgpu-corpus: the shipped corpus on static passes (2 passed); on the simulation
    the SASS entry is NOT CHECKED -- a failure, not a skip that read as green."""
    def pytest_run(backend: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q", "-rA",
                               "--fuzzgpu-corpus", str(CORPUS), "--fuzzgpu-backend", backend],
                              check=False, capture_output=True, text=True, cwd=tmp_path, timeout=600, env=ENV)

    r = pytest_run("static")
    assert r.returncode == 0 and "2 passed" in r.stdout, r.stdout[-3000:] + r.stderr[-2000:]
    r = pytest_run("sim")
    assert r.returncode == 1 and "1 failed, 1 passed" in r.stdout and "NOT CHECKED on backend sim" in r.stdout, r.stdout[-3000:]


def test_a_gpu_backend_that_checks_sass_checks_the_sass_entry():
    """On a GPU, ``auto`` and ``cuda`` check every program's SASS too (CheckedBackend): the FlashMLA
    entry is checked there instead of being skipped as "replay it with --backend static".  Here the
    GPU is the simulation; the SASS check is the real static oracle."""
    from fuzzgpu.backends.static import CheckedBackend, StaticBackend
    from fuzzgpu.commands.replay import against_expectation, replay_entry

    e = load_entry(PDL)
    r = against_expectation(e, replay_entry(e, CheckedBackend(SimBackend(), StaticBackend())))
    assert r["status"] == "violates" and r["check"] == "pass" and "LDG.E.CONSTANT" in r["summary"], r


def test_the_json_of_an_entry_nothing_ran_for_counts_no_instances():
    """``replay --json`` said ``"instances": 1048576`` of the MBAR entry that static skipped (a hostile
    review): nothing ran, 0, and what a run would have asked as ``instances_asked``."""
    r = fuzzgpu("replay", str(MBAR), "--backend", "static", "--json")
    (d,) = [json.loads(line) for line in r.stdout.splitlines()]
    assert d["status"] == "skipped" and d["instances"] == 0 and d["instances_asked"] > 0
