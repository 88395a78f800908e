"""Profiles: the package copy and strategies/ are the same files; every profile loads; a bad
profile gets one line naming the file and the key."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fuzzgpu.campaign import PROFILE_NAMES, ProfileError, load_profile

ROOT = Path(__file__).resolve().parents[2]


def test_profiles_shipped_and_in_strategies_are_identical():
    pkg = {p.name: p.read_bytes() for p in (ROOT / "fuzzgpu" / "profiles").glob("*.toml")}
    top = {p.name: p.read_bytes() for p in (ROOT / "strategies").glob("*.toml")}
    assert set(pkg) == {f"{n}.toml" for n in PROFILE_NAMES}
    assert pkg == top, "strategies/*.toml and fuzzgpu/profiles/*.toml differ: copy fuzzgpu/profiles/*.toml to strategies/"


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_profiles_load(name):
    p = load_profile(name)
    assert p.shapes and all(w >= 0 for w in p.shapes.values())
    assert not p.static_unrunnable  # no shipped profile judges the harness's refusals by the oracle (docs/fuzzing.md)


def test_static_unrunnable_is_read(tmp_path):
    f = tmp_path / "u.toml"
    f.write_text('[shapes]\nMP = 1\n[static]\nunrunnable = true\n')
    assert load_profile(str(f)).static_unrunnable


BAD = {
    "unknown-key": ('[shapes]\nMP = 1\n[stres]\nspin = 1\n', "unknown key 'stres'"),
    "unknown-subkey": ('[shapes]\nMP = 1\n[stress]\nspinn = 1\n', "unknown key 'stress.spinn'"),
    "wrong-type": ('[shapes]\nMP = 1\n[stress]\nspin = "fast"\n', "key 'stress.spin' must be an integer"),
    "unknown-shape": ('[shapes]\nMPP = 1\n', "unknown key 'shapes.MPP'"),
    "negative-weight": ('[shapes]\nMP = -1\n', "key 'shapes.MP': weight -1"),
    "bad-option": ('[shapes]\nMP = 1\n[annotations]\nloads = ["weak", "strong"]\n', "key 'annotations.loads': unknown option 'strong'"),
    "no-shapes": ('description = "x"\n', "missing table 'shapes'"),
    "bad-toml": ('[shapes\nMP = 1\n', "not valid TOML"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_profile_one_line(tmp_path, case):
    text, want = BAD[case]
    f = tmp_path / f"{case}.toml"
    f.write_text(text)
    with pytest.raises(ProfileError) as e:
        load_profile(str(f))
    msg = str(e.value)
    assert str(f) in msg and want in msg and "\n" not in msg



#: (profile text, the line the error names, what it says): every form a key can take
BAD_AT_LINE = [
    ('[shapes]\nMP = 1\n[stres]\nspin = 1\n', 3, "unknown key 'stres'"),
    ('[shapes]\nMP = 1\n[stress]\nspinn = 1\n', 4, "unknown key 'stress.spinn'"),
    ('shapes = { MP = 1, MPP = 2 }\n', 1, "unknown key 'shapes.MPP'"),
    ('description = "x"\n\nshapes.MP = -1\n', 3, "key 'shapes.MP': weight -1"),
    ('[shapes]\nMP = 1\n\n[stress]\n"stride" = 0\n', 5, "key 'stress.stride': expected 1..65536, got 0"),
    ('[shapes]\nMP = 1\n[ "stress" ]\ntest_ctas = 300\n', 4, "key 'stress.test_ctas': expected a power of two"),
    ('[shapes]\nMP = 1\n[annotations]\nloads = [\n  "weak",\n]\nmax_threads = 9\n', 7, "key 'annotations.max_threads'"),
    ('sim = { instances = 0 }\n[shapes]\nMP = 1\n', 1, "key 'sim.instances' must be >= 1"),
    ('[shapes]\nMP = 1\n[static]\narch = "sm_1"\n', 4, "key 'static.arch'"),
    ('[shapes]\nMP = 1\n[static]\nunrunnable = 1\n', 4, "key 'static.unrunnable' must be true or false"),
    ('stress = 3\n[shapes]\nMP = 1\n', 1, "key 'stress' must be a table"),
]


@pytest.mark.parametrize("text,line,want", BAD_AT_LINE, ids=[w for _, _, w in BAD_AT_LINE])
def test_bad_profile_names_the_line_of_the_key(tmp_path, text, line, want):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(ProfileError) as e:
        load_profile(str(f))
    assert str(e.value).startswith(f"{f}:{line}: ") and want in str(e.value), str(e.value)

def test_bad_profile_cli_exit_2(tmp_path):
    f = tmp_path / "bad.toml"
    f.write_text("[shapes]\nMP = -2\n")
    r = subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", "--profile", str(f), "--backend", "sim",
                        "--time", "1", "--corpus", str(tmp_path / "c")], check=False, capture_output=True, text=True)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "shapes.MP" in r.stderr and str(f) in r.stderr


def test_local_strategies_folder_wins(tmp_path, monkeypatch):
    from fuzzgpu.campaign import profile_path

    monkeypatch.chdir(tmp_path)
    assert profile_path("classic").parent.name == "profiles"  # the packaged copy
    (tmp_path / "strategies").mkdir()
    (tmp_path / "strategies" / "classic.toml").write_text('description = "mine"\n[shapes]\nSB = 1\n')
    assert profile_path("classic") == tmp_path / "strategies" / "classic.toml" or profile_path("classic").resolve() == (tmp_path / "strategies" / "classic.toml").resolve()
    assert load_profile("classic").shapes == {"SB": 1.0}
    with pytest.raises(ProfileError, match="unknown profile 'nope'"):
        load_profile("nope")
