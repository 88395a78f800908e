"""The corpus: entries written atomically and named by content hash, deduplicated by signature,
validated on load with one-line errors naming the file, and never executed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from fuzzgpu import properties
from fuzzgpu.backends.base import RunConfig
from fuzzgpu.backends.sim import SimBackend
from fuzzgpu.corpus import Corpus, CorpusError, load_entry, make_entry
from fuzzgpu.ir import (
    Load,
    Location,
    Placement,
    Program,
    Scope,
    Sem,
    Store,
    Thread,
    validate,
)

MP = validate(Program("MP", (
    Thread("P0", Placement(cta=0), (Store("x", 1), Store("y", 2, Sem.RELEASE, Scope.GPU))),
    Thread("P1", Placement(cta=1), (Load("r0", "y", Sem.ACQUIRE, Scope.GPU), Load("r1", "x"))),
), (Location("x"), Location("y"))))


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
    d["litmus"] = f"__import__('os').system('touch {marker}')"
    d["shape"] = "{{7*7}}"
    f = tmp_path / "e.json"
    f.write_text(json.dumps(d))
    e = load_entry(f)
    assert e.shape == "{{7*7}}" and not marker.exists()


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
