"""A register the condition names that its thread never writes reads as 0 whatever the program
does (``exists (P1:r0 == 1 /\\ P1:r9 == 0)`` where P1 has no r9): a warning at its place, one line
on stderr from the CLI -- not an error (Dat3M's suite names registers written on some paths only)."""

from __future__ import annotations

import warnings

import pytest

from fuzzgpu.errors import SourceWarning
from fuzzgpu.litmus import parse, parse_file

from paths import ROOT

MP = """PTX MP
{ x=0; y=0; }
 P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;
 st.weak x, 1 | ld.acquire.gpu r0, y ;
 st.release.gpu y, 1 | ld.weak r1, x ;
exists (P1:r0 == 1 /\\ P1:r9 == 0 /\\ 1:r9 == 0)
"""


def _warned(text: str, path: str = "t.litmus") -> list[str]:
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        parse(text, path)
    assert all(issubclass(w.category, SourceWarning) for w in got)
    return [str(w.message) for w in got]


def test_unwritten_register_warns_at_its_place():
    assert _warned(MP) == ["t.litmus:6:23: warning: register P1:r9 in the condition is never written by thread P1 "
                           "(nor initialised): it reads as 0 in every outcome"]  # once, at its first mention


@pytest.mark.parametrize("fix", [
    ("P1:r9 == 0 /\\ 1:r9 == 0", "P1:r1 == 0"),  # written by a load
    ("{ x=0; y=0; }", "{ x=0; y=0; P1:r9=0; }"),  # initialised: the test says what it holds
    ("ld.weak r1, x ;", "ld.weak r9, x ;"),  # written
])
def test_written_or_initialised_register_does_not_warn(fix):
    assert _warned(MP.replace(*fix)) == []


def test_register_written_on_some_paths_only_does_not_warn():
    """As Dat3M's tests do: r1 is written only when the branch is not taken."""
    text = """PTX branchy
{ x=0; y=0; }
 P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;
 st.relaxed.gpu x, 1 | ld.relaxed.gpu r0, x ;
                     | bne r0, 0, END ;
                     | ld.relaxed.gpu r1, y ;
                     | END: ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""
    assert _warned(text) == []


def test_the_value_is_still_read_as_zero():
    """A warning, not an error: the test keeps its meaning (the model reads the register as 0)."""
    from fuzzgpu.model import check_condition

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SourceWarning)
        p = parse(MP)
    assert all(dict(o)["P1:r9"] == 0 for o in check_condition(p).analysis.allowed)


def test_every_litmus_file_of_the_repository_loads_without_a_warning():
    files = [f for d in ("tests", "examples", "corpus", "bench") for f in sorted((ROOT / d).rglob("*.litmus"))]
    assert len(files) > 700
    with warnings.catch_warnings():
        warnings.simplefilter("error", SourceWarning)
        for f in files:
            parse_file(f)


def test_cli_prints_the_warning_as_one_line_and_goes_on(tmp_path, capsys):
    from fuzzgpu.cli import main

    path = tmp_path / "mp.litmus"
    path.write_text(MP)
    assert main(["check", str(path)]) == 0
    out, err = capsys.readouterr()
    assert err == (f"{path}:6:23: warning: register P1:r9 in the condition is never written by thread P1 "
                   "(nor initialised): it reads as 0 in every outcome\n")
    assert "Observation MP Sometimes" in out
    assert main(["check", "--json", str(path)]) == 0  # a second run in the process warns again
    out, err = capsys.readouterr()
    assert err.count("warning: register P1:r9") == 1 and out.startswith("{")


def test_a_warning_made_again_from_its_text_reads_the_same():
    """The warnings machinery and pytest make a warning again from its text: it read "<input>: warning:
    FILE:LINE:COL: warning: ..." in pytest's summary (CI, 2026-12-05)."""
    from fuzzgpu.errors import SourceWarning

    w = SourceWarning("register P0:r9 in the condition is never written", "f.litmus", 16, 9)
    assert str(w) == "f.litmus:16:9: warning: register P0:r9 in the condition is never written"
    assert str(SourceWarning(str(w))) == str(w)
