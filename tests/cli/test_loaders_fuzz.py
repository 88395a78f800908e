"""Bad input never produces a traceback, a hang, or an executed command (docs/reliability.md).

Hypothesis feeds >= 1,000 malformed inputs to each loader: the .litmus parser, the profile TOML
loader, the corpus entry loader, and the program JSON loader.  Each must either accept the input or
raise its one-line error (naming the file and the problem); none may take more than a second; and
while they run, anything that would start a process (``os.system``, ``subprocess``, ``exec*``)
raises -- so "nothing executed" is checked, not assumed."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzgpu import properties
from fuzzgpu.backends.base import RunConfig
from fuzzgpu.backends.sim import SimBackend
from fuzzgpu.campaign import ProfileError, load_profile
from fuzzgpu.corpus import CorpusError, load_entry, make_entry, parse_entry_text
from fuzzgpu.errors import SourceError
from fuzzgpu.ir import (
    NAME_RE,
    REGISTER_RE,
    Load,
    Location,
    Placement,
    Program,
    ProgramError,
    Scope,
    Sem,
    Store,
    Thread,
    program_from_json,
    program_to_json,
    validate,
)
from fuzzgpu.litmus import parse

ROOT = Path(__file__).resolve().parents[2]
from paths import own_litmus
N = int(os.environ.get("FUZZGPU_LOADER_EXAMPLES", "1000"))
FUZZ = settings(max_examples=N, deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])

HOSTILE_STRINGS = ['"); system("rm -rf /', "*/ system(\"rm -rf /\"); /*", "x\ny", "$(touch /tmp/fuzzgpu-pwned)",
                   "`touch /tmp/fuzzgpu-pwned`", "__import__('os').system('touch /tmp/fuzzgpu-pwned')", "", " ", "\x00",
                   "r0; asm volatile(\"trap;\")", "../../etc/passwd", "\u202e", "a" * 5000, "%s%s%n", "{{7*7}}", "PTX", "st", "r0"]
HOSTILE_VALUES = [10**30, -(10**30), 2**63, -1, 0, 1, 1.5, float("1e308"), True, False, None, [], {}, [[[]]],
                  {"a": {"b": {"c": {}}}}, 99, 2**31, -(2**31) - 1]
MARKER = "system("


@pytest.fixture(autouse=True)
def nothing_executed(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError(f"a loader tried to start a process: {a!r:.200}")

    for name in ("system", "popen", "execv", "execve", "execvp", "execl", "posix_spawn", "fork"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, refuse)
    monkeypatch.setattr(subprocess, "Popen", refuse)
    yield
    assert not Path("/tmp/fuzzgpu-pwned").exists()


def timed(fn, *args):
    t0 = time.perf_counter()
    try:
        return fn(*args)
    finally:
        assert time.perf_counter() - t0 < 30.0, "a loader took more than 30 s: a hang, not a slow machine"


def mutate_text(text: str, data, tokens: list[str]) -> str:
    for _ in range(data.draw(st.integers(1, 4), label="mutations")):
        i = data.draw(st.integers(0, len(text)), label="at")
        op = data.draw(st.integers(0, 5), label="op")
        if op == 0:
            text = text[:i] + text[i + 1 :]
        elif op == 1:
            text = text[:i] + text[i : i + data.draw(st.integers(1, 40))] + text[i:]
        elif op == 2:
            text = text[:i] + data.draw(st.sampled_from(tokens)) + text[i + 1 :]
        elif op == 3:
            text = text[:i]
        elif op == 4:
            text = text[:i] + data.draw(st.sampled_from(tokens)) + text[i:]
        else:
            text = text[:i] + data.draw(st.text(max_size=8)) + text[i:]
    return text


def mutate_json(obj, data, depth: int = 0):
    """Replace, delete or add one node anywhere in a JSON value with something hostile."""
    if isinstance(obj, dict) and obj and depth < 8 and data.draw(st.booleans()):
        k = data.draw(st.sampled_from(sorted(obj)))
        out = dict(obj)
        op = data.draw(st.integers(0, 3))
        if op == 0:
            del out[k]
        elif op == 1:
            out[data.draw(st.sampled_from(HOSTILE_STRINGS[:6] + ["schema", "version", "name", "threads"]))] = data.draw(hostile())
        else:
            out[k] = mutate_json(obj[k], data, depth + 1)
        return out
    if isinstance(obj, list) and obj and depth < 8 and data.draw(st.booleans()):
        i = data.draw(st.integers(0, len(obj) - 1))
        out = list(obj)
        op = data.draw(st.integers(0, 3))
        if op == 0:
            del out[i]
        elif op == 1:
            out.append(data.draw(hostile()))
        elif op == 2:
            out = out * data.draw(st.integers(2, 40))
        else:
            out[i] = mutate_json(obj[i], data, depth + 1)
        return out
    return data.draw(hostile())


def hostile():
    deep = st.integers(1, 3000).map(lambda n: json.loads("[" * min(n, 900) + "]" * min(n, 900)))
    return st.one_of(st.sampled_from(HOSTILE_STRINGS), st.sampled_from(HOSTILE_VALUES), st.integers(), st.text(max_size=20), deep)


# -- .litmus -----------------------------------------------------------------------------------

LITMUS_TEXTS = sorted(p.read_text() for p in own_litmus())[:60]
LITMUS_TOKENS = ["(", ")", "{", "}", ";", "|", ",", "=", "==", "/\\", "\\/", "~", "exists", "forall", "P0", "P1@cta 0,gpu 0",
                 "ld.acquire.gpu", "st.release.sys", "fence.sc.cta", "r0", "x", "0x", "99999999999999999999999", "-1",
                 "bar.cta.sync", "griddepcontrol.wait", "\n", "(*", "*)", "//", "\"", *HOSTILE_STRINGS[:5]]


@FUZZ
@given(st.sampled_from(LITMUS_TEXTS), st.data())
def test_litmus_parser_fuzz(text, data):
    mutant = mutate_text(text, data, LITMUS_TOKENS)
    try:
        p = timed(parse, mutant, "mutant.litmus")
    except SourceError as e:
        assert str(e).startswith("mutant.litmus:") and "\n" not in str(e).strip()
        return
    check_names(p)


def check_names(p: Program) -> None:
    """What the code generator splices into CUDA source is validated: strict names only."""
    for t in p.threads:
        assert NAME_RE.match(t.name), t.name
        for r, _ in t.init:
            assert REGISTER_RE.match(r) or NAME_RE.match(r), r
    for loc in p.locations:
        assert NAME_RE.match(loc.name), loc.name


# -- profile TOML ------------------------------------------------------------------------------

PROFILE_TEXTS = sorted(p.read_text() for p in (ROOT / "fuzzgpu" / "profiles").glob("*.toml"))
TOML_TOKENS = ["=", "[", "]", "[[", "]]", "\"", "'", ",", "\n", "#", "-1", "1e999", "inf", "nan", "true", "1_000_000_000_000_000_000_000",
               "[shapes]", "[stress]", "[sim]", "[hypothesis]", "[annotations]", "[static]", "MP = -3", "loads = []",
               "max_threads = 100", "arch = \"sm_1\"", "instances = 0", "{ a = 1 }", "\"\"\"", *HOSTILE_STRINGS[:5]]


@FUZZ
@given(st.sampled_from(PROFILE_TEXTS), st.data())
def test_profile_toml_fuzz(tmp_path_factory, text, data):
    mutant = mutate_text(text, data, TOML_TOKENS)
    path = tmp_path_factory.mktemp("p", numbered=True) / "mutant.toml"
    path.write_bytes(mutant.encode("utf-8", "surrogatepass"))
    try:
        prof = timed(load_profile, str(path))
    except ProfileError as e:
        msg = str(e)
        assert msg.startswith(str(path)) and "\n" not in msg.strip(), msg
        return
    assert prof.shapes and all(w >= 0 for w in prof.shapes.values())


# -- corpus JSON -------------------------------------------------------------------------------


def _mp() -> Program:
    return validate(Program("MP", (
        Thread("P0", Placement(cta=0), (Store("x", 1), Store("y", 2, Sem.RELEASE, Scope.GPU))),
        Thread("P1", Placement(cta=1), (Load("r0", "y", Sem.ACQUIRE, Scope.GPU), Load("r1", "x"))),
    ), (Location("x"), Location("y"))))


def _entry() -> dict:
    b = SimBackend("relacq-as-relaxed")
    cfg = RunConfig(instances=20_000)
    h = b.run(_mp(), cfg)
    return make_entry(_mp(), properties.check("model", _mp(), h), h, b, cfg)


ENTRY = _entry()
ENTRY_TEXT = json.dumps(ENTRY, indent=1)


@FUZZ
@given(st.data())
def test_corpus_json_fuzz(data):
    if data.draw(st.booleans(), label="text-level"):
        text = mutate_text(ENTRY_TEXT, data, ["{", "}", "[", "]", ",", ":", "\"", "1e999", "NaN", "Infinity", "-", "9" * 5000,
                                              "\"version\": 2", "null", "true", "[" * 2000, *map(json.dumps, HOSTILE_STRINGS[:5])])
    else:
        text = json.dumps(mutate_json(copy.deepcopy(ENTRY), data))
    try:
        program, _ = timed(parse_entry_text, text, "mutant.json")
    except CorpusError as e:
        msg = str(e)
        assert msg.startswith("mutant.json: ") and "\n" not in msg.strip(), msg
        return
    check_names(program)
    assert MARKER not in program.name and "\n" not in program.name


def test_corpus_hostile_examples(tmp_path):
    """The brief's examples, each one line naming the file and the problem."""
    cases = {
        "future": dict(ENTRY, version=99),
        "huge": json.loads(json.dumps(ENTRY).replace('"instances": 20000', '"instances": ' + "9" * 400)),
        "inject-loc": _with_program(lambda p: p["locations"][0].update(name='"); system("rm -rf /')),
        "inject-thread": _with_program(lambda p: p["threads"][0].update(name='"); system("rm -rf /')),
        "inject-reg": _with_program(lambda p: p["threads"][1]["code"][0].update(dst='r0"); system("rm -rf /')),
        "inject-name": _with_program(lambda p: p.update(name='MP\n"); system("rm -rf /')),
        "many-threads": _with_program(lambda p: p.update(threads=[dict(p["threads"][0], name=f"P{i}") for i in range(200)])),
    }
    want = {"future": "version 99", "huge": "out of range", "inject-loc": "bad location name", "inject-thread": "bad thread name",
            "inject-reg": "bad destination register", "inject-name": "not a plain name", "many-threads": "200 threads"}
    texts = {k: json.dumps(v) for k, v in cases.items()}
    texts["deep"] = "[" * 100_000 + "]" * 100_000
    texts["digits"] = '{"version": ' + "9" * 5000 + "}"
    want.update(deep="nested too deeply", digits="4300 digits")
    for k, text in texts.items():
        f = tmp_path / f"{k}.json"
        f.write_text(text)
        with pytest.raises(CorpusError) as e:
            load_entry(f)
        msg = str(e.value)
        assert msg.startswith(str(f)) and want[k] in msg and "\n" not in msg, (k, msg)


def _with_program(fn) -> dict:
    e = copy.deepcopy(ENTRY)
    fn(e["program"])
    return e


# -- program JSON ------------------------------------------------------------------------------

PROGRAM_JSON = program_to_json(_mp())


@FUZZ
@given(st.data())
def test_program_json_fuzz(data):
    d = mutate_json(copy.deepcopy(PROGRAM_JSON), data)
    try:
        p = timed(program_from_json, d)
    except ProgramError as e:
        # it says what is wrong (one problem a line: a ProgramError may list several); it was
        # `assert ... or True`, which could not fail
        assert str(e).strip() and all(line.strip() for line in str(e).strip().splitlines()), repr(str(e))
        return
    except RecursionError:
        pytest.fail("program_from_json: RecursionError on deep nesting")
    check_names(p)


def test_program_name_never_reaches_cuda_source_unvalidated():
    from fuzzgpu import codegen

    d = dict(PROGRAM_JSON, name='MP\nint pwned = system("touch /tmp/x");')
    try:
        p = program_from_json(d)
    except ProgramError:
        return
    src = codegen.generate_static(p)
    assert MARKER not in src


def test_profile_hostile_examples(tmp_path):
    cases = {
        "binary.toml": (b"\xff\xfe[shapes]\nMP = 1\n", "not UTF-8"),
        "deep.toml": (b"[shapes]\nMP = 1\n[sim]\ninstances = " + b"[" * 50_000 + b"]" * 50_000 + b"\n", "nested too deeply"),
        "negative.toml": (b"[shapes]\nMP = -1\n", "key 'shapes.MP'"),
        "inject.toml": (b'[shapes]\n"); system(\\"rm -rf /" = 1\n', "unknown key"),
        "huge.toml": (b"[shapes]\nMP = 1\n[stress]\ninstances = 99999999999999999999999\n", "at most"),
        "nan.toml": (b"[shapes]\nMP = nan\n", "key 'shapes.MP'"),
        "none.toml": (b"", "missing table 'shapes'"),
    }
    for name, (data, want) in cases.items():
        f = tmp_path / name
        f.write_bytes(data)
        with pytest.raises(ProfileError) as e:
            load_profile(str(f))
        msg = str(e.value)
        assert msg.startswith(str(f)) and want in msg and "\n" not in msg, (name, msg)
