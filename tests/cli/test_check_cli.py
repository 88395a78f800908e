"""``fuzzgpu check``: herd-style output, JSON, exit status, and one-line errors for bad files."""

import json
import subprocess
import sys

import pytest

MP = """PTX MP-relacq
"message passing with release/acquire across CTAs"
{ x=0; y=0; }
 P0@cta 0,gpu 0      | P1@cta 1,gpu 0       ;
 st.weak x, 1        | ld.acquire.gpu r0, y ;
 st.release.gpu y, 1 | ld.weak r1, x        ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""


def fuzzgpu(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "fuzzgpu", *args], capture_output=True, text=True, cwd=cwd)


def test_herd_output(tmp_path):
    f = tmp_path / "mp.litmus"
    f.write_text(MP)
    r = fuzzgpu("check", str(f))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-2] == "Observation MP-relacq Never 0 3"
    assert "States 3" in r.stdout


def test_json_output(tmp_path):
    f = tmp_path / "mp.litmus"
    f.write_text(MP.replace("st.release.gpu", "st.relaxed.gpu").replace("ld.acquire.gpu", "ld.relaxed.gpu"))
    r = fuzzgpu("check", "--json", str(f))
    assert r.returncode == 0, r.stderr
    obj = json.loads(r.stdout)
    assert obj["observation"] == "Sometimes" and obj["witness_reachable"] is True
    assert {"P1:r0": 1, "P1:r1": 0} in obj["allowed"]
    assert set(obj) >= {"name", "path", "quantifier", "witness_reachable", "observation", "allowed", "seconds"}


def test_explain_names_the_cycle(tmp_path):
    f = tmp_path / "mp.litmus"
    f.write_text(MP)
    r = fuzzgpu("check", "--explain", str(f))
    assert "Causality" in r.stdout and "-sync->" in r.stdout and "P0:st.release.gpu y, 1" in r.stdout


def test_folder_is_searched(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.litmus").write_text(MP)
    (tmp_path / "two.litmus").write_text(MP.replace("MP-relacq", "MP2"))
    r = fuzzgpu("check", str(tmp_path))
    assert r.returncode == 0
    assert r.stdout.count("Observation ") == 2


# Each malformed file: (what is wrong, text, expected "line:col" and a word of the message).
BAD = [
    ("unknown mnemonic", MP.replace("st.weak x, 1", "sto.weak x, 1"), "5:2", "sto"),
    ("unknown qualifier", MP.replace("st.weak x, 1", "st.wek x, 1"), "5:5", "wek"),
    ("missing operand", MP.replace("st.weak x, 1", "st.weak x"), "5:2", "operand"),
    ("bad register", MP.replace("ld.weak r1, x", "ld.weak q1, x"), "6:32", "q1"),
    ("missing semicolon", MP.replace("ld.weak r1, x        ;", "ld.weak r1, x"), "7:1", ";"),
    ("column count", MP.replace(" st.weak x, 1        | ld.acquire.gpu r0, y ;", " st.weak x, 1 ;"), "5:15", "column"),
    ("unterminated comment", MP.replace('"message passing with release/acquire across CTAs"', '"oops'), "2:1", "unterminated"),
    ("bad placement", MP.replace("P1@cta 1,gpu 0", "P1@cat 1,gpu 0"), "4:27", "cat"),
    ("unknown thread in condition", MP.replace("P1:r1 == 0", "P7:r1 == 0"), "7:23", "P7"),
    ("bad scope", MP.replace("ld.acquire.gpu", "ld.acquire.galaxy"), "5:35", "galaxy"),
    ("duplicate location", MP.replace("{ x=0; y=0; }", "{ x=0; x=1; y=0; }"), "3:8", "x"),
    ("undefined label", MP.replace("ld.weak r1, x", "goto LC09"), "6:29", "LC09"),
    ("not a litmus header", MP.replace("PTX MP-relacq", "X86 MP"), "1:1", "PTX"),
]


@pytest.mark.parametrize("what,text,where,word", BAD, ids=[b[0] for b in BAD])
def test_malformed_file_one_line_exit_2(tmp_path, what, text, where, word):
    f = tmp_path / "bad.litmus"
    f.write_text(text)
    r = fuzzgpu("check", str(f))
    assert r.returncode == 2, (what, r.stdout, r.stderr)
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1, err
    assert "Traceback" not in err
    assert err.startswith(f"{f}:{where}:"), err
    assert word.lower() in err.lower(), err


def test_a_test_without_condition_is_checked_as_herd7_reads_it(tmp_path):
    """docs/litmus-format.md: the condition may be absent.  herd7's parser reads no condition as
    ``forall (true)`` (ConstrGen.ForallStates (And [])): every final state is listed and the test is
    "Ok", "Always".  It was refused, exit 2 at 0:0."""
    f = tmp_path / "nocond.litmus"
    f.write_text(MP.replace("exists (P1:r0 == 1 /\\ P1:r1 == 0)\n", ""))
    r = fuzzgpu("check", str(f))
    assert r.returncode == 0 and not r.stderr, (r.stdout, r.stderr)
    lines = r.stdout.splitlines()
    assert lines[:2] == ["Test MP-relacq Required", "States 3"], r.stdout
    # every final state the model allows, over the registers the loads write; r0=1, r1=0 is forbidden
    assert lines[2:5] == ["P1:r0=0; P1:r1=0;", "P1:r0=0; P1:r1=1;", "P1:r0=1; P1:r1=1;"], r.stdout
    assert "Ok" in lines and "Condition forall (true)" in lines and "Observation MP-relacq Always 3 0" in lines, r.stdout
    j = json.loads(fuzzgpu("check", "--json", str(f)).stdout)
    assert (j["quantifier"], j["condition"], j["ok"], j["observation"]) == ("forall", "forall (true)", True, "Always")


def test_unreadable_path():
    r = fuzzgpu("check", "/nonexistent/x.litmus")
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
