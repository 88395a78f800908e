"""The corpus: entries written atomically and named by content hash, deduplicated by signature,
validated on load with one-line errors naming the file, and never executed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fuzzgpu import properties
from fuzzgpu.backends.base import RunConfig
from fuzzgpu.backends.sim import SimBackend
from fuzzgpu.corpus import Corpus, CorpusError, load_entry, make_entry
from fuzzgpu.ir import Fence, Load, Scope, Sem

from programs import MP, mp  # noqa: E402 -- tests/programs.py


def _entry():
    b = SimBackend("relacq-as-relaxed")
    cfg = RunConfig(instances=100_000)
    h = b.run(MP, cfg)
    v = properties.check("model", MP, h)
    return make_entry(MP, v, h, b, cfg)


def test_write_load_dedupe(tmp_path):
    c = Corpus(tmp_path)
    e = _entry()
    path, new = c.add(e)
    assert new and path.name.endswith(".json") and len(path.stem) == 16
    assert path.with_suffix(".litmus").read_text() == e["litmus"]
    assert "exists (P1:r0 == 2 /\\ P1:r1 == 0)" in e["litmus"]
    assert c.add(_entry()) == (path, False)  # same signature: not written twice
    (entry,) = c.entries()
    assert entry.program == MP and entry.prop == "model"
    assert entry.offending() == [(("P1:r0", 2), ("P1:r1", 0))]
    rep = entry.reproduction
    assert 0 < rep["rate"] < 0.01 and rep["replay_instances"] >= 3 / rep["rate"] - 1 and rep["confidence"] >= 0.95
    for k in ("arch", "gpu", "driver", "toolchain", "backend"):
        assert k in entry.data["environment"]
    assert not list(tmp_path.glob(".*.tmp"))  # no temp file left behind


@pytest.mark.parametrize("mutate,want", [
    (lambda d: "not json{", "not valid JSON"),
    (lambda d: json.dumps([1, 2]), "expected a JSON object"),
    (lambda d: json.dumps({**d, "schema": "other"}), "not a fuzzgpu corpus entry"),
    (lambda d: json.dumps({k: v for k, v in d.items() if k != "histogram"}), "missing field 'histogram'"),
    (lambda d: json.dumps({**d, "sass": "x"}), "field 'sass' has the wrong type"),
    (lambda d: json.dumps({**d, "version": 99}), "schema version 99"),
    (lambda d: json.dumps({**d, "program": {**d["program"], "threads": [{"name": "P0", "code": [{"op": "exec", "cmd": "rm -rf /"}]}]}}),
     "unknown instruction 'exec'"),
    (lambda d: json.dumps({**d, "reproduction": {}}), "reproduction.rate"),
])
def test_bad_entries_one_line_naming_the_file(tmp_path, mutate, want):
    d = _entry()
    f = tmp_path / "bad.json"
    f.write_text(mutate(d))
    with pytest.raises(CorpusError) as e:
        load_entry(f)
    msg = str(e.value)
    assert str(f) in msg and want in msg and "\n" not in msg


def test_loading_never_executes(tmp_path):
    """A corpus file is data: strings that look like code stay strings."""
    d = _entry()
    marker = tmp_path / "pwned"
    d["shape"] = "{{7*7}}"
    f = tmp_path / "e.json"
    f.write_text(json.dumps(d))
    e = load_entry(f)
    assert e.shape == "{{7*7}}" and not marker.exists()
    # code in the litmus text: never run, and the entry is refused (its text does not say what its program says)
    d["litmus"] = f"__import__('os').system('touch {marker}')"
    f.write_text(json.dumps(d))
    with pytest.raises(CorpusError, match="field 'litmus' does not match field 'program'"):
        load_entry(f)
    assert not marker.exists()


def test_replay_cli_bad_entry_exit_2(tmp_path):
    (tmp_path / "x.json").write_text("{}")
    r = subprocess.run([sys.executable, "-m", "fuzzgpu", "replay", str(tmp_path), "--backend", "sim"], check=False, capture_output=True, text=True)
    assert r.returncode == 2 and str(tmp_path / "x.json") in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_explain_tells_the_story(tmp_path, capsys):
    from fuzzgpu.cli import main

    path, _ = Corpus(tmp_path).add(_entry())
    assert main(["explain", str(path)]) == 0
    out = capsys.readouterr().out
    for want in ("st.release.gpu y, 2", "forbidden", "Causality", "-sync->", "replay", "SIMULATION"):
        assert want in out


# -- rates, signatures, classes, known findings (issue 12, items 2, 8, 9) ----------------------

REPO = __import__("pathlib").Path(__file__).resolve().parents[2]


def test_rates_come_from_integer_counts_and_never_leave_0_1():
    """The H200 pdl campaign died on reproduction.rate = 1.0000000997: a SASS finding counted one
    failure on top of an all-failing histogram of 10,027,000 instances."""
    from fuzzgpu.backends.base import Histogram
    from fuzzgpu.corpus import reproduction, validate_entry
    from fuzzgpu.properties import Offence, Verdict

    n = 10_027_000
    out = (("P1:r0", 1), ("P1:r1", 0))
    sass = {"check": "crossing", "verdict": "forbidden", "direction": "hoisted above", "function": "fuzzgpu_P1",
            "op_ptx": "ld.global.nc.u32 %r3, [%rd1]", "sync_ptx": "griddepcontrol.wait"}
    v = Verdict("sc", "fail", (Offence(out, n, "allowed", ""),), (sass,), "allowed; SASS", (), n)
    h = Histogram(("P1:r0", "P1:r1"), ((out, n),), n, 0, 0.1, "sim", ())
    e = make_entry(MP, v, h, SimBackend(), RunConfig(instances=n))
    validate_entry(e, "<test>")
    assert e["reproduction"]["rate"] == 1.0 and e["reproduction"]["failures"] == n
    for hits, total in ((n + 1, n), (3, 7), (0, 5), (5, 0), (2**60, 2**53 + 1)):
        r = reproduction(hits, total)
        assert 0.0 <= r["rate"] <= 1.0 and 0.0 <= r["confidence"] <= 1.0 and r["failures"] <= max(total, 0)


def test_a_signature_does_not_depend_on_register_numbering():
    from fuzzgpu.corpus import sass_key

    a = {"check": "crossing", "direction": "hoisted above", "function": "fuzzgpu_P1", "op_ptx": "ld.global.nc.u32 %r3, [%rd1]",
         "sync_ptx": "barrier.sync 0"}
    b = dict(a, op_ptx="ld.global.nc.u32 %r7, [%rd4+8]")
    assert sass_key(a) == sass_key(b) == "crossing|hoisted above|fuzzgpu_P1|ld.global.nc|barrier.sync"


def test_every_shipped_entry_has_its_current_signature_and_class():
    """``python -m fuzzgpu.corpus refresh corpus`` after a change to signature() or finding_class()."""
    from fuzzgpu.corpus import class_id, entry_class, entry_signature

    es = Corpus(REPO / "corpus").entries()
    assert len(es) >= 2
    for e in es:
        assert e.data["signature"] == entry_signature(e.data, e.program), e.path
        assert e.data["class"]["key"] == entry_class(e.data) and e.data["class"]["id"] == class_id(entry_class(e.data)), e.path


def test_the_shipped_known_list_names_the_try_wait_class():
    """Both faces of the lone-try_wait deviation are known: the outcome the oracle forbids (the entry's
    class, found on the H200) and the SASS check that flags its code (found by the static oracle),
    whatever the property; each points at a write-up anchor that exists."""
    from fuzzgpu.backends.base import RunConfig
    from fuzzgpu.backends.static import StaticBackend
    from fuzzgpu.corpus import entry_class, load_known, match_known, verdict_class
    from fuzzgpu.properties import check

    known = load_known(REPO / "corpus" / "known.json")
    findings = (REPO / "docs" / "findings.md").read_text()
    for k in known.values():
        entry = load_entry(REPO / "corpus" / f"{k.entry}.json")
        assert k.writeup.startswith("docs/findings.md#") and f'id="{k.writeup.split("#", 1)[1]}"' in findings, k.writeup
        assert match_known(entry_class(entry.data), known) is not None
    entry = load_entry(REPO / "corpus" / "73416467ed043580.json")
    assert match_known(entry_class(entry.data).replace("model|", "sc|", 1), known) is not None
    h = StaticBackend().run(entry.program, RunConfig(instances=1))
    for prop in ("model", "sc"):
        v = check(prop, entry.program, h)
        assert v.failed and "unguarded-wait" in verdict_class(entry.shape, v)
        assert match_known(verdict_class(entry.shape, v), known) is not None
    assert match_known("model|MP|allowed", known) is None


def test_the_known_list_is_true_to_the_corpus():
    """Issue 27, item 1: the README's main job on a CPU machine saved FlashMLA's class as a NEW FINDING,
    though corpus/ holds that very class: known.json listed only the try_wait classes.  Every class
    of the tracked corpus is known, shown by the entry its known item names; every known item names
    an entry of the corpus."""
    from fuzzgpu.corpus import entry_class, load_known, match_known

    known = load_known(REPO / "corpus" / "known.json")
    entries = {e.path.stem: e for e in Corpus(REPO / "corpus").entries()}
    for name, e in entries.items():
        k = match_known(entry_class(e.data), known)
        assert k is not None and k.entry == name, (name, entry_class(e.data))
    for k in known.values():
        assert k.entry in entries, (k.key, k.entry)


def test_the_readme_main_job_counts_flashmlas_class_as_known():
    """What the campaign of the README's main job computes for the FlashMLA program on a machine
    without a GPU (the static backend: nvcc and the SASS oracle): its class, matched against
    corpus/known.json, is known -- counted, not saved, exit 0."""
    from fuzzgpu.backends.base import RunConfig
    from fuzzgpu.backends.static import StaticBackend
    from fuzzgpu.corpus import load_known, match_known, verdict_class
    from fuzzgpu.properties import check

    known = load_known(REPO / "corpus" / "known.json")
    entry = load_entry(REPO / "corpus" / "7be901686d91609a.json")
    v = check("model", entry.program, StaticBackend().run(entry.program, RunConfig(instances=1)))
    assert v.failed and v.sass
    k = match_known(verdict_class(entry.shape, v), known)
    assert k is not None and k.writeup == "docs/findings.md#nc-hoisted-above-sync"


def _mp(ld_scope, fence=False):
    return mp(p1=(Load("r0", "y", Sem.RELAXED, Scope.GPU), Fence(Sem.ACQ_REL, Scope.GPU), Load("r1", "x")) if fence
              else (Load("r0", "y", Sem.ACQUIRE, ld_scope), Load("r1", "x")))


def _finding(program, fault="relacq-as-relaxed"):
    b = SimBackend(fault)
    cfg = RunConfig(instances=100_000)
    h = b.run(program, cfg)
    return make_entry(program, properties.check("model", program, h), h, b, cfg)


def test_findings_of_one_root_cause_are_one_class_one_entry(tmp_path):
    """An MP whose acquire is a load at .gpu, one at .sys, or a fence: the release/acquire
    synchronisation failed each time (the injected fault) -- one class, one entry, three findings."""
    from fuzzgpu.corpus import entry_class

    es = [_finding(_mp(Scope.GPU)), _finding(_mp(Scope.SYS)), _finding(_mp(Scope.GPU, fence=True))]
    assert len({e["signature"] for e in es}) == 3
    assert {entry_class(e) for e in es} == {"model|*|forbidden:cycle through sync[memory]"}
    c = Corpus(tmp_path)
    first, new = c.add(es[0])
    assert new
    assert c.add(es[1]) == (first, False) and c.add(es[2]) == (first, False) and c.add(es[1]) == (first, False)
    (only,) = c.entries()
    assert only.data == es[0]  # an entry never changes once written
    rec = c.class_record(entry_class(es[0]), first)
    assert rec["findings"] == 3 and rec["variants"] == [e["signature"] for e in es] and rec["entry"] == first.name


def test_finding_class_is_a_pure_function_of_what_broke():
    from fuzzgpu.corpus import finding_class

    mp = "Causality (Axioms: Causality): P1:ld.weak r1, x -fr-> P0:st.weak x, 1 -po-> P0:st.release.cta y, 2 -sync-> P1:ld.acquire.cta r0, y -po-> P1:ld.weak r1, x"
    lb = "Causality (Axioms: Causality): P0:st.weak y, 1 -rf-> P1:ld.weak r0, y -po-> P1:st.release.cta x, 2 -sync-> P0:ld.acquire.cluster r0, x -po-> P0:st.weak y, 1"
    mbar = ("Causality (Axioms: Causality): P1:ld.weak r1, x -fr-> P0:st.weak x, 1 -po-> P0:mbarrier.arrive.release.cta bar (write) "
            "-sync-> P1:mbarrier.try_wait.parity.acquire.cta r0, bar, 0 -po-> P1:ld.weak r1, x")
    one = finding_class("model", "MP", [("forbidden", "forbidden by the Causality axiom", [mp], 90)])
    assert one == finding_class("model", "LB", [("forbidden", "forbidden by the Causality axiom", [lb], 7)])
    assert one == "model|*|forbidden:cycle through sync[memory]"
    assert finding_class("model", "MBAR", [("forbidden", "", [mbar], 5)]) == \
        "model|*|forbidden:cycle through sync[mbarrier.arrive>mbarrier.try_wait]"
    undecodable = finding_class("model", "random", [("forbidden", "a value no store of the program wrote was read", [], 3)])
    assert undecodable == "model|*|forbidden:a value no store of the program wrote was read" != one
    assert finding_class("sc", "MP", [("allowed", "", [], 9)]) == "sc|MP|allowed" != finding_class("sc", "SB", [("allowed", "", [], 9)])
    assert finding_class("model", "MP", [], timeout=True) == "model|MP|timeout"
    sass = {"check": "crossing", "direction": "hoisted above", "op_ptx": "ld.global.nc.u32 %r3, [%rd1]", "sync_ptx": "griddepcontrol.wait"}
    assert finding_class("model", "PDL", [("forbidden", "", [mp], 1)], [sass]) == \
        "model|*|sass:crossing:hoisted above:ld.global.nc"


def test_refresh_recomputes_a_stale_signature(tmp_path):
    from fuzzgpu.corpus import refresh

    path, _ = Corpus(tmp_path).add(_entry())
    d = json.loads(path.read_text())
    good = d["signature"]
    d["signature"] = "0123456789abcdef0123"
    del d["class"]
    path.write_text(json.dumps(d))
    assert refresh(tmp_path) == [(path, True)] and refresh(tmp_path) == [(path, False)]
    d = json.loads(path.read_text())
    assert d["signature"] == good and d["class"]["key"] == "model|*|forbidden:cycle through sync[memory]"


def test_a_verdicts_rate_never_leaves_0_1():
    from fuzzgpu.properties import Offence, Verdict

    n = 10_027_000
    v = Verdict("sc", "fail", (Offence((("P1:r0", 1),), n, "allowed", ""),), ({"check": "crossing"},), "", (), n)
    assert v.rate == 1.0 and v.to_json()["rate"] == 1.0
    assert Verdict("sc", "fail", (Offence((("P1:r0", 1),), 3, "allowed", ""),), (), "", (), 7).rate == 3 / 7


def test_refresh_refuses_a_path_that_is_not_a_corpus_folder(tmp_path):
    """Hostile review: ``python -m fuzzgpu.corpus refresh /nonexist`` printed nothing and
    exited 0, as if every entry were up to date; an entry file given instead of its folder likewise."""
    import subprocess
    import sys

    path, _ = Corpus(tmp_path).add(_entry())
    for bad in (tmp_path / "missing", path):
        r = subprocess.run([sys.executable, "-m", "fuzzgpu.corpus", "refresh", str(bad)], capture_output=True, text=True,
                           cwd=REPO)
        assert r.returncode == 2 and r.stdout == "", (bad, r)
        assert r.stderr.count("\n") == 1 and f"{bad}: not a corpus folder" in r.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    r = subprocess.run([sys.executable, "-m", "fuzzgpu.corpus", "refresh", str(empty)], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0 and r.stdout == "" and "no corpus entries" in r.stderr


def test_a_value_no_store_wrote_is_one_class_whatever_the_shape():
    """Hostile review: ``--sim-fault unwritten`` on profile classic saved 6 entries, one per
    shape (``model|LB|unwritten``, ``model|SB|unwritten``, ...), for one root cause: a harness or
    hardware fault is not a property of the program's shape."""
    from fuzzgpu.corpus import finding_class

    why = "a value no store of the program wrote was read"
    keys = {finding_class("model", shape, [("unwritten", why, [], 1000)]) for shape in ("MP", "SB", "LB", "CoRR")}
    assert keys == {"model|*|unwritten"}
    # an ordering offence seen more often still decides, and the sc property keeps its per-shape kinds
    assert finding_class("sc", "MP", [("allowed", "", [], 9), ("unwritten", why, [], 1)]) == "sc|MP|allowed"


def test_a_class_with_one_finding_has_its_record_too(tmp_path):
    """Hostile review: ``classes/<class id>.json`` was written only when a class's second
    finding came (the first variant), so a class of one finding had no record, though the corpus
    promises each class's count and variants beside its entry.  The first finding writes it; the
    next ones count in it; ``refresh`` writes the record of an entry that has none (saved before,
    or copied in by hand) and moves it with its class."""
    from fuzzgpu.corpus import entry_class, refresh

    c = Corpus(tmp_path)
    e = _entry()
    path, new = c.add(e)
    key = entry_class(e)
    assert new and c.class_path(key).is_file(), sorted(p.name for p in tmp_path.rglob("*"))
    rec = json.loads(c.class_path(key).read_text())
    assert rec == {"schema": "fuzzgpu.class", "version": 1, "key": key, "entry": path.name, "findings": 1,
                   "variants": [e["signature"]]}
    assert c.add(_entry()) == (path, False) and json.loads(c.class_path(key).read_text())["findings"] == 1  # same finding
    assert [p.name for p in c.entry_paths()] == [path.name]  # the record is no entry (replay, the plugin)
    c.class_path(key).unlink()  # a corpus from before: refresh writes the record, once
    assert refresh(tmp_path) == [(path, True)] and json.loads(c.class_path(key).read_text()) == rec
    assert refresh(tmp_path) == [(path, False)]
    d = json.loads(path.read_text())  # a stale signature: the record's variant follows it
    d["signature"] = "0123456789abcdef0123"
    path.write_text(json.dumps(d))
    c.class_path(key).write_text(json.dumps({**rec, "variants": ["0123456789abcdef0123", "feedfeedfeedfeedfeed"], "findings": 2}))
    assert refresh(tmp_path) == [(path, True)]
    assert json.loads(c.class_path(key).read_text())["variants"] == [e["signature"], "feedfeedfeedfeedfeed"]


def test_refresh_refuses_a_json_name_that_is_not_a_regular_file(tmp_path):
    """Hostile review: replay and the pytest plugin report a ``*.json`` that is not a
    regular file (a folder, a FIFO, a symbolic link) as an invalid entry, but ``refresh`` dropped it
    silently and exited 0 ("no corpus entries" for a folder holding only such a name)."""
    import os
    import subprocess
    import sys

    path, _ = Corpus(tmp_path).add(_entry())
    before = path.read_text()
    os.symlink(path, tmp_path / "link.json")
    (tmp_path / "dir.json").mkdir()
    r = subprocess.run([sys.executable, "-m", "fuzzgpu.corpus", "refresh", str(tmp_path)], capture_output=True, text=True,
                       cwd=REPO)
    assert r.returncode == 2 and r.stdout == "", r
    assert r.stderr.count("\n") == 1 and f"{tmp_path / 'dir.json'}: not a regular file" in r.stderr
    assert path.read_text() == before  # refused before anything was written


# -- class keys name the mechanism (issue 28, item 5) -----------------------------------------


def test_race_class_keys_name_what_failed():
    """``race:5`` and ``race:1+4`` said nothing to a reader: every part of a race key is a name
    (a known class's, else the failed mechanism's), distinct, with no number left."""
    from fuzzgpu.semantics import MECHANISMS
    from fuzzgpu.bug_classes import CLASS_NAMES, CLASSES, race_name

    assert set(CLASS_NAMES) == set(CLASSES)
    names = [race_name(str(c)) for c in CLASSES] + [race_name(m) for m in MECHANISMS]
    # no number left: no word of a name is a number (an instruction's name such as ``tcgen05`` is a word)
    assert not [n for n in names if any(part.isdigit() for part in n.split("-"))], names
    assert len(set(race_name(str(c)) for c in CLASSES)) == len(CLASSES)
    assert race_name("3") == "missing-proxy-fence" and race_name("flag") == "flag-without-release-acquire"


def test_an_entry_saved_with_a_numbered_race_key_loads_under_its_name(tmp_path):
    """An entry of the H200 `all` race campaign (``race|*|race:4+flag``): it loads, its class is the named key, a
    known list written with the old key still matches it, and its class record follows it."""
    import shutil

    from fuzzgpu.corpus import entry_class, load_known, match_known

    src = REPO / "tests" / "data" / "fixes-h200-all-race" / "0df3fb74d88b5f4f.json"
    old = json.loads(src.read_text())["class"]["key"]
    assert old == "race|*|race:4+flag"
    shutil.copy(src, tmp_path / src.name)
    (entry,) = Corpus(tmp_path).entries()
    new = entry_class(entry.data)
    assert new == "race|*|race:cp-async-without-wait+flag-without-release-acquire"
    known = tmp_path / "known.json"
    known.write_text(json.dumps({"schema": "fuzzgpu.known", "version": 1, "known": [
        {"class": "race|*|race:4+flag", "title": "t", "writeup": "docs/findings.md#x"},
        {"class": "*|*|race:5", "title": "t", "writeup": "docs/findings.md#y"}]}))
    k = load_known(known)
    assert match_known(new, k) is not None and match_known("race|*|race:scope-too-small", k) is not None
    # its class record, written under the old key, is the named class's
    c = Corpus(tmp_path)
    c.class_path(old).parent.mkdir(parents=True, exist_ok=True)
    c.class_path(old).write_text(json.dumps({"schema": "fuzzgpu.class", "version": 1, "key": old, "entry": src.name,
                                             "findings": 7, "variants": [entry.signature]}))
    rec = c.class_record(new, entry.path)
    assert rec["findings"] == 7 and rec["key"] == new


def test_a_class_of_several_known_root_causes_is_known():
    """The H200 campaign of `--profile all` filed `.nc hoisted + unguarded wait` programs as new
    classes though each root cause is in the known list (bench/results/campaigns/
    h200-all-race-600s-cfg.md); a class "A + B" is known when A and B both are, not when one is."""
    from fuzzgpu.corpus import load_known, match_known

    known = load_known(REPO / "corpus" / "known.json")
    nc, wait = "sass:crossing:hoisted above:ld.global.nc", "sass:unguarded-wait::ld.shared"
    both = match_known(f"race|*|{nc} + {wait}", known)
    assert both is not None and both.writeup == "docs/findings.md#nc-hoisted-above-sync"
    assert match_known(f"race|*|{nc} + race:scope-too-small", known) is None
    assert match_known(f"race|*|race:scope-too-small + {wait}", known) is None
    assert match_known("race|*|race:scope-too-small", known) is None


def test_the_shipped_known_list_is_the_repositorys():
    """``--known shipped`` (a campaign from an installed wheel has no corpus/ beside it) reads the copy
    that comes with the package: it must say what corpus/known.json says."""
    from fuzzgpu.corpus.known import SHIPPED, known_file, load_known

    root = Path(__file__).resolve().parents[2]
    shipped = Path(known_file(SHIPPED) or "")
    assert shipped.read_bytes() == (root / "corpus" / "known.json").read_bytes()
    assert load_known(shipped) and known_file("x.json") == "x.json" and known_file(None) is None


def test_a_campaign_with_the_shipped_known_list_runs_from_an_empty_folder(tmp_path):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", "--profile", "pdl", "--backend", "sim", "--time", "20",
                        "--corpus", "c", "--known", "shipped", "--max-findings", "1", "--no-live", "--seed", "1"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode in (0, 1), r.stderr[-1500:]
    assert "cannot read" not in r.stderr
