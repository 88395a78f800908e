"""Hostile input and a hostile environment (issue 13): well over 1,000 generated bad inputs --
.litmus files, profile TOML, corpus JSON, campaign state, command-line options and files that are
not files -- each given to the real entry point (the command's main function in-process, or the
loader the command calls).  Every one must end in ONE line on stderr (or one exception line)
naming the file (or the option) and what was expected, with exit status 2 (3 for the
environment), within 10 s of CPU time and 1 GiB of address space more than the test process had;
and nothing may start a process (nvcc included) while they run.

Inputs that a random mutation happens to leave valid are allowed to succeed (they are counted and
must stay a minority); the hand-made cases must all fail as described."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import random
import resource
import socket
import stat
import subprocess
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from fuzzgpu import campaign, cli, corpus
from fuzzgpu.errors import UserError

ROOT = Path(__file__).resolve().parents[2]
LITMUS = ROOT / "tests" / "litmus"
CORPUS = ROOT / "corpus"
PROFILE = ROOT / "fuzzgpu" / "profiles" / "classic.toml"
MiB = 1 << 20

# -- the guard: no process, bounded CPU time and memory ----------------------------------------


@pytest.fixture(autouse=True)
def nothing_executed(monkeypatch):
    def refuse(*a: Any, **k: Any) -> Any:
        raise AssertionError(f"bad input reached a process start (nvcc?): {a!r:.200}")

    for name in ("system", "popen", "execv", "execve", "execvp", "execvpe", "execl", "execlp", "posix_spawn", "posix_spawnp", "fork"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, refuse)
    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setenv("NVCC", "/nonexistent/nvcc-must-not-run")


def _vm_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


@contextlib.contextmanager
def bounded() -> Iterator[None]:
    """At most 1 GiB of address space more than now, and 10 s of CPU time."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = _vm_bytes() + (1 << 30)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    t0 = time.process_time()
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    spent = time.process_time() - t0
    assert spent < 10, f"took {spent:.1f} s of CPU time"


def run_main(argv: list[str]) -> tuple[int, str, str]:
    """``fuzzgpu ARGV`` in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with bounded(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = cli.main(argv)
        except SystemExit as e:  # argparse
            rc = e.code if isinstance(e.code, int) else 2
    return rc, out.getvalue(), err.getvalue()


def one_line_naming(err: str, name: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, f"expected one error line, got {len(lines)}: {err[:500]!r}"
    line = lines[0]
    assert name in line, f"the error does not name {name!r}: {line[:300]!r}"
    assert len(line) <= 1000 and "Traceback" not in line, line[:300]
    assert len(line) > len(name) + 8, f"the error does not say what was expected: {line!r}"
    return line


# -- mutation helpers ----------------------------------------------------------------------

TOKENS = ["{", "}", "|", ";", ":", "@", "(", ")", "[", "]", ",", "=", "==", "~", "/\\", "\\/", '"', "\n", "\x00", "\x1b[2J",
          "-", "99999999999999999999999", "r", "r0", "P9", "x", "ld.weak", "st.bogus", "goto", "L", "exists", "locations",
          "a: ;\n#include </etc/passwd>\n//", '{"op": "label", "name": "a: ; __trap(); L_b"}', "é", "\ufeff", "\u202e",
          "bar.sync 99", "mbarrier.init", "grid 1 @ pdl", "P0@cta 99999999", "\t", "\r", "x" * 5000]


def mutate_text(text: str, rng: random.Random) -> str:
    kind = rng.randrange(6)
    i = rng.randrange(len(text) + 1)
    if kind == 0:  # insert a token
        return text[:i] + rng.choice(TOKENS) + text[i:]
    if kind == 1:  # delete a span
        return text[:i] + text[i + rng.randrange(1, 40):]
    if kind == 2:  # truncate
        return text[:i]
    if kind == 3:  # replace a span by a token
        return text[:i] + rng.choice(TOKENS) + text[i + rng.randrange(1, 10):]
    lines = text.splitlines(keepends=True)
    if kind == 4 and len(lines) > 1:  # duplicate a line
        j = rng.randrange(len(lines))
        return "".join(lines[: j + 1] + lines[j:])
    j, k = rng.randrange(len(lines)), rng.randrange(len(lines))  # swap two lines
    lines[j], lines[k] = lines[k], lines[j]
    return "".join(lines)


def mutants(text: str, count: int, most_edits: int, rng: random.Random, prefix: str) -> list[tuple[str, str]]:
    """``count`` mutants of ``text``, named PREFIX0, PREFIX1...: each 1 to ``most_edits`` - 1 edits
    of :func:`mutate_text`."""
    out = []
    for i in range(count):
        t = text
        for _ in range(rng.randrange(1, most_edits)):
            t = mutate_text(t, rng)
        out.append((f"{prefix}{i}", t))
    return out


def json_paths(d: Any, path: tuple = ()) -> Iterator[tuple]:
    yield path
    if isinstance(d, dict):
        for k, v in d.items():
            yield from json_paths(v, (*path, k))
    elif isinstance(d, list):
        for i, v in enumerate(d[:3]):
            yield from json_paths(v, (*path, i))


def json_set(d: Any, path: tuple, value: Any) -> Any:
    d = copy.deepcopy(d)
    if not path:
        return value
    parent = d
    for p in path[:-1]:
        parent = parent[p]
    parent[path[-1]] = value
    return d


def json_del(d: Any, path: tuple) -> Any:
    d = copy.deepcopy(d)
    parent = d
    for p in path[:-1]:
        parent = parent[p]
    del parent[path[-1]]
    return d


#: values of the wrong type, out of range, or hostile, spliced into documents
BAD_VALUES: list[Any] = ["many", "x", "", "\n", "r3\n", "P9:r0", "a: ; __trap(); L_b", "\x1b[2J", "x" * 20000, -1, -(2**70), 2**70,
                         1.5, 1e308, True, None, [], [5], {}, {"a": {"b": {}}}, [[[[[]]]]], 0]


# -- A. .litmus files through `fuzzgpu check` ------------------------------------------------

LITMUS_BASES = sorted(LITMUS.glob("core/*.litmus"))[:6] + sorted(LITMUS.glob("termination/*.litmus"))[:2] + \
    sorted(LITMUS.glob("async-proxy/*.litmus"))[:2]

LITMUS_HANDMADE: dict[str, str | bytes] = {
    "label-inject": 'PTX t\n{ x=0; }\n P0 ;\n {"op": "label", "name": "a: ; base[7] = 0x1337; __trap(); L_b"} ;\n st.weak x, 1 ;\nexists (x == 1)\n',
    "label-include": 'PTX t\n{ x=0; }\n P0 ;\n {"op": "label", "name": "a: ;\\n#include </etc/passwd>\\n//"} ;\nexists (x == 1)\n',
    "label-error": 'PTX t\n{ x=0; }\n P0 ;\n {"op": "label", "name": "#error x"} ;\nexists (x == 1)\n',
    "reg-newline": 'PTX t\n{ x=0; }\n P0 ;\n {"op": "ld", "dst": "r3\\n", "loc": "x"} ;\nexists (x == 1)\n',
    "loc-inject": 'PTX t\n{ x=0; }\n P0 ;\n {"op": "st", "loc": "x\\"); __trap(); //", "src": 1} ;\nexists (x == 1)\n',
    "space-inject": 'PTX t\n{ x=0; }\n P0 ;\n {"op": "fence.proxy", "kind": "async", "space": "global;\\" ::: ); __trap(); asm(\\""} ;\nexists (x == 1)\n',
    "scope-string": 'PTX t\n{ x=0; }\n P0 ;\n {"op": "fence", "sem": "sc", "scope": "gpu;"} ;\nexists (x == 1)\n',
    "no-header": "{ x=0; }\n P0 ;\n st.weak x, 1 ;\nexists (x == 1)\n",
    "empty": "",
    "nul": "\x00" * 100,
    "binary": bytes(range(256)) * 10,
    "latin1": "PTX caf\xe9\n{ x=0; }\n P0 ;\n st.weak x, 1 ;\nexists (x == 1)\n".encode("latin-1"),
    "name-huge": "PTX " + "a" * 2_000_000 + "\n{ x=0; }\n P0 ;\n st.weak x, 1 ;\nexists (x == 1)\n",
    "word-huge": "PTX t\n{ " + "a" * 2_000_000 + "=0; }\n P0 ;\n st.weak x, 1 ;\nexists (x == 1)\n",
    "line-10MB": "PTX t\n{ x=0; }\n P0 ;\n st.weak x, 1 " + "| st.weak x, 1 " * 700_000 + ";\nexists (x == 1)\n",
    "rows-10MB": "PTX t\n{ x=0; y=0; }\n P0 | P1 ;\n" + "st.relaxed.gpu x, 1 | ld.relaxed.gpu r0, y ;\n" * 230_000 + "exists (P1:r0 == 0)\n",
    "threads-100": "PTX t\n{ x=0; }\n" + " | ".join(f"P{i}" for i in range(100)) + " ;\n" + " | ".join("st.weak x, 1" for _ in range(100)) + " ;\nexists (x == 1)\n",
    "locs-100k": "PTX t\n{ " + " ".join(f"x{i}=0;" for i in range(100_000)) + " }\n P0 ;\n st.weak x0, 1 ;\nexists (x0 == 1)\n",
    "instr-1000": "PTX t\n{ x=0; }\n P0 ;\n" + " st.weak x, 1 ;\n" * 1000 + "exists (x == 1)\n",
    "deep-cond": "PTX t\n{ x=0; }\n P0 ;\n st.weak x, 1 ;\nexists " + "(" * 50_000 + "x == 1" + ")" * 50_000 + "\n",
    "wide-cond": "PTX t\n{ x=0; }\n P0 ;\n st.weak x, 1 ;\nexists (" + " \\/ ".join(["x == 1"] * 70_000) + ")\n",
    "semis": "PTX t\n{ x=0; }\n P0 ;\n" + " ;\n" * 3_000_000 + "exists (x == 1)\n",
    "comments": 'PTX t\n' + '"c" ' * 100_000 + "{ x=0; }\n P0 ;\n st.weak x, 1 ;\nexists (x == 1)\n",
    "json-huge": 'PTX t\n{ x=0; }\n P0 ;\n {"op": "ld", "dst": [' + "1," * 1_000_000 + '1]} ;\nexists (x == 1)\n',
    "json-deep": 'PTX t\n{ x=0; }\n P0 ;\n {"op": ' + "[" * 10_000 + "]" * 10_000 + "} ;\nexists (x == 1)\n",
    "unterminated": 'PTX t\n"never closed\n{ x=0; }\n',
    "unknown-thread": "PTX t\n{ x=0; }\n P0 ;\n st.weak x, 1 ;\nexists (P7:r0 == 1)\n",
    "big-number": "PTX t\n{ x=99999999999; }\n P0 ;\n st.weak x, 1 ;\nexists (x == 1)\n",
    "placement-huge": "PTX t\n{ x=0; }\n P0@cta 99999999 ;\n st.weak x, 1 ;\nexists (x == 1)\n",
    "bad-barrier": "PTX t\n{ x=0; }\n P0 ;\n bar.sync 99 ;\nexists (x == 1)\n",
    "escape-name": "PTX t\x1b[2J\n{ x=0; }\n P0 ;\n st.weak x, 1 ;\nexists (x == 1)\n",
    "backslash-name": "PTX t\\\n{ x=0; }\n P0 ;\n st.weak x, 1 ;\nexists (x == 1)\n",
}


def _litmus_mutants() -> list[tuple[str, str]]:
    rng = random.Random(13)
    return [m for base in LITMUS_BASES for m in mutants(base.read_text(), 36, 4, rng, f"{base.stem}-")]


LITMUS_MUTANTS = _litmus_mutants()


@pytest.mark.parametrize("name", sorted(LITMUS_HANDMADE))
def test_litmus_handmade(name, tmp_path):
    f = tmp_path / f"{name}.litmus"
    data = LITMUS_HANDMADE[name]
    f.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    rc, out, err = run_main(["check", str(f)])
    assert rc == 2, (rc, err[:300])
    line = one_line_naming(err, str(f))
    assert "\x1b" not in line and "\x00" not in line


@pytest.mark.parametrize("name,text", LITMUS_MUTANTS, ids=[n for n, _ in LITMUS_MUTANTS])
def test_litmus_mutants(name, text, tmp_path):
    f = tmp_path / "case.litmus"
    f.write_text(text)
    rc, out, err = run_main(["check", str(f)])
    if rc == 0:
        assert "Observation" in out and not err.strip()
        return
    # 2: bad input; 3: a valid test the oracle could not finish ("not covered: too large")
    assert rc == 2 or (rc == 3 and "not covered by the oracle" in err), (rc, err[:300])
    one_line_naming(err, str(f))


def test_litmus_mutants_are_mostly_invalid():
    from fuzzgpu import litmus
    from fuzzgpu.errors import SourceError

    valid = 0
    for name, text in LITMUS_MUTANTS:
        try:
            litmus.parse(text, f"{name}.litmus")
            valid += 1
        except SourceError:
            pass
    assert len(LITMUS_MUTANTS) >= 300
    assert valid < len(LITMUS_MUTANTS) // 2, valid


def test_a_10MB_litmus_file_parses_in_linear_time(tmp_path):
    """10 MB of whitespace and one long comment around a valid test: parsed at once (the issue saw
    55 s); 10 MB of rows: refused at the instruction limit, without reading the rest."""
    from fuzzgpu import litmus

    text = 'PTX t\n"' + "c" * 60000 + '"\n' + " " * (10 * MiB) + "{ x=0; }\n P0 ;\n st.weak x, 1 ;\nexists (x == 1)\n"
    with bounded():
        t0 = time.process_time()
        p = litmus.parse(text, "big.litmus")
        assert time.process_time() - t0 < 5
    assert p.name == "t"


# -- B. profile TOML through campaign.load_profile (what `campaign --profile` reads) ---------

PROFILE_TEXT = PROFILE.read_text()
PROFILE_HANDMADE = {
    "arch-newline": PROFILE_TEXT + '\n[static]\narch = "sm_90\\n"\n',
    "arch-inject": PROFILE_TEXT + '\n[static]\narch = "sm_90; rm -rf /"\n',
    "unknown-top": PROFILE_TEXT + "\n[evil]\nx = 1\n",
    "shape-unknown": PROFILE_TEXT.replace("MP = 4", "MPX = 4"),
    "weight-negative": PROFILE_TEXT.replace("MP = 4", "MP = -4"),
    "weight-string": PROFILE_TEXT.replace("MP = 4", 'MP = "4"'),
    "weight-nan": PROFILE_TEXT.replace("MP = 4", "MP = nan"),
    "weight-inf": PROFILE_TEXT.replace("MP = 4", "MP = inf"),
    "loads-bad": PROFILE_TEXT.replace('"weak", "relaxed", "acquire"', '"weak", "bogus", "acquire"'),
    "loads-type": PROFILE_TEXT.replace('loads = ["weak", "relaxed", "acquire", "volatile", "nc"]', "loads = 5"),
    "stress-neg": PROFILE_TEXT.replace("spin = 1000", "spin = -1000"),
    "stress-float": PROFILE_TEXT.replace("spin = 1000", "spin = 10.5"),
    "not-toml": "this is [not toml",
    "deep": "a = " + "[" * 5000 + "]" * 5000,
    "binary": "\x00\x01\x02",
    "empty": "",
}


def _profile_mutants() -> list[tuple[str, str]]:
    return mutants(PROFILE_TEXT, 160, 3, random.Random(7), "m")


PROFILE_MUTANTS = _profile_mutants()


def _load_profile(f: Path) -> str | None:
    """None when the profile loads; else its one-line error."""
    with bounded():
        try:
            campaign.load_profile(str(f))
        except UserError as e:
            return str(e)
    return None


@pytest.mark.parametrize("name", sorted(PROFILE_HANDMADE))
def test_profile_handmade(name, tmp_path):
    f = tmp_path / f"{name}.toml"
    f.write_text(PROFILE_HANDMADE[name])
    err = _load_profile(f)
    assert err is not None, f"{name} loaded"
    one_line_naming(err, str(f))


@pytest.mark.parametrize("name,text", PROFILE_MUTANTS, ids=[n for n, _ in PROFILE_MUTANTS])
def test_profile_mutants(name, text, tmp_path):
    f = tmp_path / "p.toml"
    f.write_text(text, encoding="utf-8", errors="surrogateescape")
    err = _load_profile(f)
    if err is not None:
        one_line_naming(err, str(f))


def test_profile_mutants_are_mostly_refused(tmp_path):
    """test_profile_mutants passes a mutant the loader accepts: a loader that refused nothing passed
    all 160 (115 are refused today)."""
    refused = 0
    for _, text in PROFILE_MUTANTS:
        f = tmp_path / "p.toml"
        f.write_text(text, encoding="utf-8", errors="surrogateescape")
        refused += _load_profile(f) is not None
    assert len(PROFILE_MUTANTS) >= 150 and refused >= len(PROFILE_MUTANTS) // 2, (refused, len(PROFILE_MUTANTS))


def test_profile_through_the_campaign_command(tmp_path):
    f = tmp_path / "p.toml"
    f.write_text(PROFILE_HANDMADE["arch-newline"])
    rc, _, err = run_main(["campaign", "--profile", str(f), "--backend", "sim", "--time", "5", "--in-process", "--no-live",
                           "--corpus", str(tmp_path / "c")])
    assert rc == 2
    one_line_naming(err, str(f))


# -- C. corpus JSON through load_entry, replay and explain -----------------------------------

ENTRIES = {p.stem: json.loads(p.read_text()) for p in sorted(CORPUS.glob("*.json")) if p.name != "known.json"}
ENTRY_HANDMADE: dict[str, Callable[[dict], Any]] = {
    "hist-instances": lambda d: json_set(d, ("histogram", "instances"), "many"),
    "hist-outcomes": lambda d: json_set(d, ("histogram", "outcomes"), "x"),
    "sass-int": lambda d: json_set(d, ("sass",), [5]),
    "offending-key": lambda d: json_set(d, ("verdict", "offending"), [{"outcome": {"P7:r9": 1}, "count": 1}]),
    "observed": lambda d: json_set(d, ("program", "observed"), ["P9:r0"]),
    "label-space": lambda d: json_set(d, ("program", "threads", 0, "code"),
                                      [{"op": "label", "name": "q q"}, {"op": "goto", "target": "q q"}]),
    "label-inject": lambda d: json_set(d, ("program", "threads", 0, "code"), [{"op": "label", "name": "a: ; base[7] = 0x1337; __trap(); L_b"}]),
    "label-error": lambda d: json_set(d, ("program", "threads", 0, "code"), [{"op": "label", "name": "a: ;\n#error boom\n//"}]),
    "reg-newline": lambda d: json_set(d, ("program", "threads", 0, "init"), {"r3\n": 1}),
    "locations-100k": lambda d: json_set(d, ("program", "locations"), [{"name": f"x{i}"} for i in range(100_000)]),
    "threads-64": lambda d: json_set(d, ("program", "threads"), [dict(d["program"]["threads"][0], name=f"P{i}") for i in range(64)]),
    "code-1000": lambda d: json_set(d, ("program", "threads", 0, "code"), [{"op": "fence", "sem": "sc", "scope": "gpu"}] * 1000),
    "stress-spin": lambda d: json_set(d, ("stress", "spin"), 10**16),
    "stress-type": lambda d: json_set(d, ("stress", "barrier"), "yes"),
    "rate": lambda d: json_set(d, ("reproduction", "rate"), 7),
    "signature": lambda d: json_set(d, ("signature",), "../../etc/passwd"),
    "property": lambda d: json_set(d, ("property",), "rm -rf"),
    "litmus-huge": lambda d: json_set(d, ("litmus",), "x" * (2 * MiB)),
    "version": lambda d: json_set(d, ("version",), 99),
    "schema": lambda d: json_set(d, ("schema",), "other"),
    "missing": lambda d: json_del(d, ("histogram",)),
    "not-object": lambda d: [d],
    "arch": lambda d: json_set(d, ("program", "arch"), "sm_90\n"),
}


def _entry_mutants() -> list[tuple[str, str, tuple, Any]]:
    out = []
    rng = random.Random(5)
    for stem, d in ENTRIES.items():
        paths = [p for p in json_paths(d) if p]
        rng.shuffle(paths)
        for p in paths[:170]:
            out.append((stem, "set", p, rng.choice(BAD_VALUES)))
    return out


ENTRY_MUTANTS = _entry_mutants()


def _write_entry(folder: Path, doc: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    f = folder / "entry.json"
    f.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return f


def test_corpus_mutants_are_mostly_refused(tmp_path):
    """test_corpus_mutants replays a mutant the loader accepts: a loader that refused nothing passed
    all 340 (219 are refused today)."""
    refused = 0
    for stem, _, path, value in ENTRY_MUTANTS:
        f = _write_entry(tmp_path / "c", json_set(ENTRIES[stem], path, value))
        try:
            corpus.load_entry(f)
        except corpus.CorpusError:
            refused += 1
    assert len(ENTRY_MUTANTS) >= 300 and refused >= len(ENTRY_MUTANTS) // 2, (refused, len(ENTRY_MUTANTS))


def test_corpus_entries_to_mutate_are_valid():
    assert len(ENTRIES) >= 2
    for stem in ENTRIES:
        corpus.load_entry(CORPUS / f"{stem}.json")


@pytest.mark.parametrize("name", sorted(ENTRY_HANDMADE))
def test_corpus_handmade_replay_and_explain(name, tmp_path):
    d = ENTRY_HANDMADE[name](ENTRIES[sorted(ENTRIES)[0]])
    f = _write_entry(tmp_path / "c", d)
    rc, out, err = run_main(["replay", str(tmp_path / "c"), "--backend", "sim", "--max-instances", "1000"])
    assert rc == 2, (rc, err[:300])
    one_line_naming(err, str(f))
    rc, out, err = run_main(["explain", str(f)])
    assert rc == 2
    one_line_naming(err, str(f))


@pytest.mark.parametrize("stem,how,path,value", ENTRY_MUTANTS,
                         ids=[f"{s}:{'.'.join(map(str, p))}:{i}" for i, (s, _, p, _) in enumerate(ENTRY_MUTANTS)])
def test_corpus_mutants(stem, how, path, value, tmp_path):
    f = _write_entry(tmp_path / "c", json_set(ENTRIES[stem], path, value))
    rc, out, err = run_main(["replay", str(tmp_path / "c"), "--backend", "sim", "--max-instances", "1000"])
    if rc == 2:
        one_line_naming(err, str(f))
        with pytest.raises(corpus.CorpusError):
            corpus.load_entry(f)
        return
    # accepted (a field fuzzgpu does not read, a value still in range): replayed, and explain
    # still tells the story
    assert rc in (0, 1, 3) and "Traceback" not in err, (rc, err[:300])
    rc, out, err = run_main(["explain", str(f)])
    assert rc == 0, (rc, err[:300])
    assert "\x1b" not in out


def test_one_bad_entry_does_not_stop_the_replay_of_the_others(tmp_path):
    good = ENTRIES[sorted(ENTRIES)[0]]
    c = tmp_path / "c"
    c.mkdir()
    (c / "a-good.json").write_text(json.dumps(good))
    (c / "b-bad.json").write_text(json.dumps(json_set(good, ("histogram", "instances"), "many")))
    (c / "c-good.json").write_text(json.dumps(good))
    rc, out, err = run_main(["replay", str(c), "--backend", "sim", "--max-instances", "1000"])
    # both good entries replayed, the bad one named; the exit is 2, not 0
    assert rc == 2
    one_line_naming(err, "b-bad.json")
    assert out.count("a-good.json") == 1 and out.count("c-good.json") == 1 and "3 entries" in out


# -- D. campaign state through State.load (what every campaign start reads) ------------------

STATE = {"schema": "fuzzgpu.campaign-state", "version": 1, "profile": "classic", "backend": "sim", "property": "model", "seed": 7,
         "run_index": 3, "sessions": 2, "programs": 10, "instances": 1000, "elapsed": 5.0, "last_finding_elapsed": 2.0,
         "findings": [{"signature": "0123456789abcdef0123", "file": "0123456789abcdef.json", "shape": "MP", "threads": 2,
                       "summary": "model: FAIL", "shrunk": True, "rate": 0.01}],
         "duplicates": 0, "shapes": {"MP": {"programs": 1, "instances": 10, "weak": 1, "failures": 0, "unsupported": 0, "findings": 1}},
         "not_covered": {"why": 1}, "quarantined": 0, "faults": {"hang": 1}, "timeouts": {"instances": 0}, "worker": None}

STATE_HANDMADE = {
    "shapes": json_set(STATE, ("shapes",), {"MP": "x"}),
    "not_covered": json_set(STATE, ("not_covered",), {"why": "many"}),
    "findings-abc": json_set(STATE, ("findings",), [{"signature": "abc"}]),
    "findings-file": json_set(STATE, ("findings", 0, "file"), "../../etc/passwd"),
    "seed": json_set(STATE, ("seed",), -1),
    "version": json_set(STATE, ("version",), 99),
    "schema": json_set(STATE, ("schema",), "other"),
    "missing-seed": json_del(STATE, ("seed",)),
    "not-json": "{",
    "deep": "[" * 100_000,
    "list": [STATE],
}


def _state_mutants() -> list[tuple[tuple, Any]]:
    rng = random.Random(3)
    paths = [p for p in json_paths(STATE) if p]
    out = []
    for p in paths:
        for v in rng.sample(BAD_VALUES, 6):
            out.append((p, v))
    return out


STATE_MUTANTS = _state_mutants()


def _load_state(f: Path) -> str | None:
    with bounded():
        try:
            campaign.State.load(f)
        except UserError as e:
            return str(e)
    return None


def test_the_base_state_loads(tmp_path):
    f = tmp_path / "state.json"
    f.write_text(json.dumps(STATE))
    assert _load_state(f) is None


@pytest.mark.parametrize("name", sorted(STATE_HANDMADE))
def test_state_handmade(name, tmp_path):
    f = tmp_path / "state.json"
    d = STATE_HANDMADE[name]
    f.write_text(d if isinstance(d, str) else json.dumps(d))
    err = _load_state(f)
    assert err is not None, name
    one_line_naming(err, str(f))


@pytest.mark.parametrize("path,value", STATE_MUTANTS, ids=[f"{'.'.join(map(str, p))}:{i}" for i, (p, _) in enumerate(STATE_MUTANTS)])
def test_state_mutants(path, value, tmp_path):
    f = tmp_path / "state.json"
    f.write_text(json.dumps(json_set(STATE, path, value)))
    err = _load_state(f)
    if err is not None:
        one_line_naming(err, str(f))


def test_state_mutants_are_many_and_mostly_refused(tmp_path):
    assert len(STATE_MUTANTS) >= 150
    refused = 0
    for path, value in STATE_MUTANTS:
        f = tmp_path / "state.json"
        f.write_text(json.dumps(json_set(STATE, path, value)))
        refused += _load_state(f) is not None
    assert refused >= len(STATE_MUTANTS) * 2 // 3, refused


def test_a_hostile_state_stops_the_campaign_before_it_runs(tmp_path):
    c = tmp_path / "c"
    (c / ".fuzzgpu").mkdir(parents=True)
    f = c / ".fuzzgpu" / "state.json"
    f.write_text(json.dumps(STATE_HANDMADE["findings-abc"]))
    t0 = time.process_time()
    rc, _, err = run_main(["campaign", "--profile", "classic", "--backend", "sim", "--time", "600", "--in-process", "--no-live",
                           "--corpus", str(c)])
    assert rc == 2 and time.process_time() - t0 < 10
    one_line_naming(err, str(f))


# -- E. command-line options ---------------------------------------------------------------

HUGE = "9" * (1 * MiB)
OPTION_CASES: list[tuple[list[str], str]] = []
for _opt, _bad in [
    ("--instances", ["-5", "0", "x", "nan", "inf", "", "1.5", "-0", "1e-3", "1e16", HUGE]),
    ("--max-instances", ["0", "-1", "x", "nan", "", "0.5", HUGE]),
]:
    OPTION_CASES += [(["replay", str(CORPUS), "--backend", "sim", _opt, v], _opt) for v in _bad]
for _opt, _bad in [("--loop-bound", ["-1", "x", "1.5", "", "nan", "65", "99999999999", HUGE])]:
    OPTION_CASES += [(["check", str(LITMUS / "core" / "MP-relacq-gpu.litmus"), _opt, v], _opt) for v in _bad]
for _opt, _bad in [
    ("--instances", ["-5", "0", "x", "nan", "inf", "", "1.5", "1e16", HUGE]),
    ("--stride", ["0", "-1", "x", "0.5", "1e6"]),
    ("--spin", ["-1", "x", "1.5", "99999999999"]),
    ("--stress", ["-1", "x", "1000000"]),
    ("--seed", ["-1", "x", str(2**32)]),
    ("--budget", ["0", "-1", "x", "1e12"]),
    ("--pdl-delay-ns", ["-1", "x", "1" + "0" * 12]),
]:
    OPTION_CASES += [(["run", str(LITMUS / "core" / "MP-relacq-gpu.litmus"), _opt, v], _opt) for v in _bad]
for _opt, _bad in [
    ("--time", ["-1", "0", "x", "nan", ""]),
    ("--seed", ["-1", "x", "1.5"]),
    ("--max-findings", ["-1", "x", "0"]),  # 0: ran the whole --time, then said it stopped at 0 findings
    ("--workers", ["0", "-1", "x", "257"]),
    ("--workers-per-gpu", ["0", "x"]),
    ("--backend", ["gpu", "", "sim;rm"]),
    ("--property", ["race2", ""]),
    ("--watchdog", ["0", "-1", "x", "nan"]),
]:
    OPTION_CASES += [(["campaign", "--corpus", "/nonexistent-never-created", _opt, v], _opt) for v in _bad]
OPTION_CASES += [
    (["replay", str(CORPUS), "--backend", "sim", "--sim-fault", f], "--sim-fault") for f in ("hang", "crash", "exit", "slow", "gpu-fault")
]
OPTION_CASES += [(["replay", str(CORPUS), "--backend", "sim", "--sim-fault", f], "fault") for f in ("bogus", "hang:2", "timeout:x", "timeout:0", "x" * 10000)]
OPTION_CASES += [(["replay", str(CORPUS), "--backend", b], "--backend") for b in ("gpu", "", "x" * 10000)]
OPTION_CASES += [([cmd, "--bogus-option"], cmd if cmd != "campaign" else "--bogus-option")
                 for cmd in ("check", "run", "replay", "explain", "campaign", "sass")]
OPTION_CASES += [([cmd, "x", "--bogus-option"], "--bogus-option") for cmd in ("check", "run", "replay", "explain", "sass")]
OPTION_CASES += [([cmd], cmd) for cmd in ("check", "run", "replay", "explain", "sass")]
OPTION_CASES += [(["nope"], "nope"), (["x" * 100000], "invalid choice")]


@pytest.mark.parametrize("argv,name", OPTION_CASES, ids=[f"{i}:{' '.join(a)[:60]}" for i, (a, _) in enumerate(OPTION_CASES)])
def test_bad_options(argv, name):
    rc, out, err = run_main(argv)
    assert rc == 2, (rc, err[:300])
    one_line_naming(err, name)


def test_option_cases_are_many():
    assert len(OPTION_CASES) >= 100


# -- F. files that are not files ----------------------------------------------------------


def _make(kind: str, where: Path) -> Path:
    where.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(where)
    elif kind == "symlink-zero":
        where.symlink_to("/dev/zero")
    elif kind == "symlink-out":
        outside = where.parent.parent / "outside.json"
        outside.write_text(json.dumps(ENTRIES[sorted(ENTRIES)[0]]))
        where.symlink_to(outside)
    elif kind == "dangling":
        where.symlink_to(where.parent / "nowhere")
    elif kind == "folder":
        where.mkdir()
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(where))
        s.close()
    elif kind == "empty":
        where.write_bytes(b"")
    elif kind == "sparse-17MB":
        with open(where, "wb") as f:
            f.truncate(17 * MiB)
    elif kind == "binary":
        where.write_bytes(bytes(range(256)) * 64)
    elif kind == "utf16":
        where.write_bytes("PTX t\n{}".encode("utf-16"))
    return where


FILE_KINDS = ["fifo", "symlink-zero", "dangling", "folder", "socket", "empty", "sparse-17MB", "binary", "utf16"]


@pytest.mark.parametrize("kind", FILE_KINDS)
def test_litmus_file_types(kind, tmp_path):
    f = _make(kind, tmp_path / "t.litmus")
    rc, out, err = run_main(["check", str(f)])
    assert rc == 2, (rc, err[:300])
    one_line_naming(err, str(f) if kind != "folder" else "t.litmus")


@pytest.mark.parametrize("kind", [*FILE_KINDS, "symlink-out"])
def test_corpus_file_types_in_a_folder(kind, tmp_path):
    """A FIFO named *.json does not hang replay; a link is not followed; the rest is replayed."""
    c = tmp_path / "c"
    f = _make(kind, c / "e.json")
    rc, out, err = run_main(["replay", str(c), "--backend", "sim", "--max-instances", "1000"])
    assert rc == 2, (rc, err[:300])
    one_line_naming(err, str(f))


@pytest.mark.parametrize("kind", [k for k in FILE_KINDS if k != "folder"])
def test_corpus_file_types_named(kind, tmp_path):
    f = _make(kind, tmp_path / "e.json")
    for argv in (["explain", str(f)], ["replay", str(f), "--backend", "sim"]):
        rc, out, err = run_main(argv)
        assert rc == 2, (argv, rc, err[:300])
        one_line_naming(err, str(f))


@pytest.mark.parametrize("kind", ["fifo", "symlink-zero", "socket", "sparse-17MB", "binary", "utf16", "empty"])
def test_profile_and_state_file_types(kind, tmp_path):
    f = _make(kind, tmp_path / "p.toml")
    err = _load_profile(f)
    if kind != "empty":  # an empty profile is a profile with no shapes: refused too
        assert err is not None
    if err is not None:
        one_line_naming(err, str(f))
    s = _make(kind, tmp_path / "state.json")
    err = _load_state(s)
    assert err is not None
    one_line_naming(err, str(s))


@pytest.mark.parametrize("where", ["/proc/self/fdinfo", "/proc/1/fdinfo", "/sys/kernel"])
def test_campaign_corpus_in_proc_is_an_environment_error(where):
    rc, out, err = run_main(["campaign", "--profile", "classic", "--backend", "sim", "--time", "1", "--in-process", "--no-live",
                             "--corpus", where])
    assert rc in (2, 3), (rc, err[:300])
    one_line_naming(err, where)


def test_replay_of_proc_is_not_clean():
    rc, out, err = run_main(["replay", "/proc/self/status", "--backend", "sim"])
    assert rc == 2
    one_line_naming(err, "/proc/self/status")


def test_read_only_and_full_disks_are_environment_errors(tmp_path, monkeypatch):
    """A write that fails (EROFS, ENOSPC) ends the campaign with exit 3 and one line -- never 1,
    which means a finding, and never a traceback."""
    import errno

    real = os.open

    for code in (errno.EROFS, errno.ENOSPC, errno.EACCES):
        def failing_open(path, flags, *a, code=code, **k):
            if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT) and str(tmp_path) in str(path):
                raise OSError(code, os.strerror(code), str(path))
            return real(path, flags, *a, **k)

        monkeypatch.setattr(os, "open", failing_open)
        c = tmp_path / f"c{code}"
        c.mkdir()
        rc, out, err = run_main(["campaign", "--profile", "classic", "--backend", "sim", "--time", "1", "--in-process", "--no-live",
                                 "--corpus", str(c)])
        monkeypatch.setattr(os, "open", real)
        assert rc == 3, (code, rc, err[:300])
        line = one_line_naming(err, str(c))
        assert "environment error" in line and os.strerror(code) in line


def test_new_files_follow_the_umask(tmp_path):
    from fuzzgpu.files import create_exclusive, write_atomic

    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "a.json", "{}")
        create_exclusive(tmp_path / "b.json", "{}")
        os.umask(0o077)
        write_atomic(tmp_path / "c.json", "{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.json").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "b.json").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "c.json").stat().st_mode) == 0o600


def test_the_suite_is_large_enough():
    n = (len(LITMUS_HANDMADE) + len(LITMUS_MUTANTS) + len(PROFILE_HANDMADE) + len(PROFILE_MUTANTS) + len(ENTRY_HANDMADE)
         + len(ENTRY_MUTANTS) + len(STATE_HANDMADE) + len(STATE_MUTANTS) + len(OPTION_CASES) + 3 * len(FILE_KINDS))
    assert n >= 1000, n


def test_explain_of_an_accepted_entry_never_crashes(tmp_path):
    """What the schema lets through, explain can show: a SASS finding without offsets; an oracle
    list item without its outcome is refused (explain used to raise KeyError / TypeError)."""
    sass_entry = next(d for d in ENTRIES.values() if d["sass"])
    d = copy.deepcopy(sass_entry)
    for f in d["sass"]:
        f["op_sass_offset"] = None
        f["sync_sass_offset"] = None
    f = _write_entry(tmp_path / "a", d)
    rc, out, err = run_main(["explain", str(f)])
    assert rc == 0 and "/*----*/" in out, err
    outcome_entry = next(d for d in ENTRIES.values() if not d["sass"])
    d = json_set(outcome_entry, ("oracle", "allowed", 0), {"verdict": "sc"})
    f = _write_entry(tmp_path / "b", d)
    rc, out, err = run_main(["explain", str(f)])
    assert rc == 2
    assert "missing field 'oracle.allowed[0].outcome'" in one_line_naming(err, str(f))


def test_a_fifo_in_the_evidence_cache_is_evidence_of_nothing(tmp_path):
    from fuzzgpu.evidence import EvidenceCache

    cache = EvidenceCache(tmp_path)
    key = "ab" + "0" * 30
    p = cache.path(key)
    p.parent.mkdir(parents=True)
    os.mkfifo(p)
    with bounded():
        assert cache.get(key) is None
    p.unlink()
    p.symlink_to("/dev/zero")
    with bounded():
        assert cache.get(key) is None
