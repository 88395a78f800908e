"""The options that name a file a command writes (``replay --junit-xml``, ``tune --out``) are
checked before any work, by one function (``commands.argtypes.check_output_file``): a folder, or
a file in a folder that does not exist, is one line naming the option and the path, exit 2 --
not an error naming an internal temp file after the replay, nor a folder created unasked."""

from __future__ import annotations

import pytest

from fuzzgpu.cli import main

from paths import ROOT

ENTRY = str(ROOT / "corpus" / "73416467ed043580.json")
MP = str(ROOT / "tests" / "litmus" / "gpu" / "MP-relaxed-gpu.litmus")


def _commands(out: str) -> list[tuple[str, list[str]]]:
    return [("--junit-xml", ["replay", ENTRY, "--backend", "sim", "--junit-xml", out]),
            ("--out", ["tune", "--budget", "1", "--out", out, MP])]


@pytest.fixture
def no_work(monkeypatch):
    """Any work the commands would do before the check fails the test."""
    from fuzzgpu.commands import replay, run

    def work(*_a, **_k):
        raise AssertionError("work done before the output path was checked")

    monkeypatch.setattr(replay, "_load_all", work)
    monkeypatch.setattr(run, "load_runnable", work)


def test_a_folder_is_refused_before_any_work(tmp_path, capsys, no_work):
    for option, argv in _commands(str(tmp_path)):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"{option} {tmp_path}: is a folder" in err and ".tmp" not in err, err


def test_a_missing_folder_is_refused_not_created(tmp_path, capsys, no_work):
    out = tmp_path / "no" / "such" / "r.xml"
    for option, argv in _commands(str(out)):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert f"{option} {out}: no such folder {str(out.parent)!r}" in err, err
        assert not (tmp_path / "no").exists()


def test_replay_writes_the_junit_xml_in_an_existing_folder(tmp_path, capsys):
    out = tmp_path / "replay.xml"
    assert main(["replay", ENTRY, "--backend", "sim", "--junit-xml", str(out)]) == 0
    assert out.read_text().startswith("<?xml") and f"JUnit XML: {out}" in capsys.readouterr().out


def test_a_failed_junit_write_names_the_path_not_a_temp_file(tmp_path, capsys, monkeypatch):
    from fuzzgpu.commands import junit

    def full(path, text, durable=True):
        raise OSError(28, "No space left on device", str(path.parent / f".{path.name}.x1y2.tmp"))

    monkeypatch.setattr(junit, "write_atomic", full)
    out = tmp_path / "replay.xml"
    assert main(["replay", ENTRY, "--backend", "sim", "--junit-xml", str(out)]) == 3
    err = capsys.readouterr().err
    assert f"--junit-xml {out}: No space left on device (the JUnit XML was not written)" in err and ".tmp" not in err, err
