"""Hostile corpus inputs that ended in exit 0 on garbage (issue 27, item 8): a ``litmus`` text that
disagrees with the entry's ``program`` (an ANSI escape in it) replayed "fixed"; ``version: 1.0`` was
accepted (the schema says an integer); a FIFO named ``known.json`` in the corpus folder was ignored
silently (replay, the pytest plugin, a campaign).  Each is refused now, one line naming the file and
the field, exit 2 -- the FIFO as ``corpus refresh`` and replay already refuse a FIFO named ``*.json``
(``Corpus.rejected_paths``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fuzzgpu.cli import main as cli_main
from fuzzgpu.corpus import Corpus, CorpusError, load_entry, load_known
from fuzzgpu.errors import EXIT_USAGE

ROOT = Path(__file__).resolve().parents[2]
ENTRY = ROOT / "corpus" / "73416467ed043580.json"


def _write(tmp_path: Path, change) -> Path:
    d = json.loads(ENTRY.read_text())
    change(d)
    p = tmp_path / "e.json"
    p.write_text(json.dumps(d))
    return p


@pytest.mark.parametrize("how", ["ansi", "edited"])
def test_a_litmus_text_that_disagrees_with_the_program_is_refused(tmp_path, capsys, how):
    def change(d):
        if how == "ansi":
            d["litmus"] = d["litmus"].replace("P0", "\x1b[31mP0", 1)
        else:  # valid litmus, another program: a person reading it would review something else
            d["litmus"] = d["litmus"].replace("ld.relaxed", "ld.acquire", 1) if "ld.relaxed" in d["litmus"] else d["litmus"].replace(
                "st.", "st.release.gpu.", 1)

    p = _write(tmp_path, change)
    with pytest.raises(CorpusError, match=r"e\.json: field 'litmus' does not match field 'program'"):
        load_entry(p)
    assert cli_main(["replay", str(p), "--backend", "sim"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "field 'litmus'" in err and "\x1b" not in err


def test_the_same_program_in_another_layout_is_accepted(tmp_path):
    p = _write(tmp_path, lambda d: d.__setitem__("litmus", d["litmus"].replace(" | ", "   |   ")))
    assert load_entry(p).program == load_entry(ENTRY).program


def test_every_shipped_entry_still_loads():
    for p in Corpus(ROOT / "corpus").entry_paths():
        load_entry(p)


def test_a_version_that_is_not_an_integer_is_refused(tmp_path, capsys):
    p = _write(tmp_path, lambda d: d.__setitem__("version", 1.0))
    with pytest.raises(CorpusError, match=r"field 'version' has the wrong type"):
        load_entry(p)
    k = tmp_path / "known.json"
    k.write_text(json.dumps({"schema": "fuzzgpu.known", "version": 1.0, "known": []}))
    with pytest.raises(CorpusError, match="known-findings version 1.0"):
        load_known(k)


def test_a_fifo_named_known_json_is_refused_not_ignored(tmp_path, capsys):
    d = tmp_path / "c"
    d.mkdir()
    (d / ENTRY.name).write_text(ENTRY.read_text())
    os.mkfifo(d / "known.json")
    assert Corpus(d).rejected_paths() == [d / "known.json"]
    assert cli_main(["replay", str(d), "--backend", "sim"]) == EXIT_USAGE
    assert "known.json: not a regular file" in capsys.readouterr().err
    # a campaign reads D/known.json when present: refused in one line, not read (a FIFO would block) nor skipped
    r = subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", "--backend", "sim", "--time", "5", "--no-live", "--corpus", str(d)],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "known.json: cannot read: not a regular file (a FIFO)" in r.stderr
    with pytest.raises(CorpusError, match="not a regular file"):
        load_known(d / "known.json")
    # the pytest plugin fails it as a test of its own
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--fuzzgpu-corpus", str(d),
                        "--fuzzgpu-backend", "sim", str(d)], capture_output=True, text=True, cwd=tmp_path, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert "known.json" in r.stdout and "not a regular file" in r.stdout and r.returncode != 0, r.stdout[-2000:]


@pytest.mark.parametrize("field", ["title", "writeup", "class"])
def test_a_known_list_string_with_a_control_character_is_refused(tmp_path, field):
    """The campaign's report prints a known class's title and write-up as they are: an escape
    sequence in them would reach the terminal."""
    item = {"class": "model|*|sass:x", "title": "a title", "writeup": "docs/findings.md#x"}
    item[field] = item[field] + "\x1b[2J"
    k = tmp_path / "known.json"
    k.write_text(json.dumps({"schema": "fuzzgpu.known", "version": 1, "known": [item]}))
    with pytest.raises(CorpusError, match=rf"field 'known\[0\]': field '{field}' must be a one-line string of printable"):
        load_known(k)
