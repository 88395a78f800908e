"""Malformed litmus text: every error is a SourceError at the offending token, never a traceback."""

from __future__ import annotations

import pytest

from fuzzgpu.errors import SourceError, UserError
from fuzzgpu.litmus import parse, parse_file

GOOD = """PTX MP
{
x=0; y=0;
P1:r0=0;
}
 P0@cta 0,gpu 0      | P1@cta 0,gpu 0        ;
 st.weak x, 1        | ld.acquire.gpu r0, y  ;
 st.release.gpu y, 1 | ld.weak r1, x         ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""

# name: (text to replace in GOOD, replacement, line, col, gist of the message)
CASES = {
    "unknown mnemonic": ("st.weak x, 1 ", "stx.weak x, 1", 7, 2, "unknown instruction 'stx.weak'"),
    "bad operand": ("ld.weak r1, x", "ld.weak r1, 5", 8, 36, "expected a location, found '5'"),
    "wrong operand count": ("st.weak x, 1 ", "st.weak x    ", 7, 2, "st.weak takes 2 operand(s), got 1"),
    "too many operands": ("st.weak x, 1 ", "st.weak x, 1, 2", 7, 16, "st.weak takes 2 operand(s), got 3"),
    "undeclared thread in condition": ("P1:r1 == 0", "P2:r1 == 0", 9, 23, "unknown thread 'P2'"),
    "too many columns": ("ld.weak r1, x         ;", "ld.weak r1, x | fence.sc.gpu ;", 8, 38, "too many columns"),
    "too few columns": ("| ld.weak r1, x         ;", "                        ;", 8, 46, "row has 1 column(s), expected 2"),
    "missing semicolon": ("ld.weak r1, x         ;", "ld.weak r1, x          ", 9, 1, "expected '|' or ';'"),
    "unterminated comment": ("PTX MP\n", 'PTX MP\n"unterminated\n', 2, 1, "unterminated comment string"),
    "placement key twice": ("P1@cta 0,gpu 0", "P1@cta 0,cta 1", 6, 33, "bad placement: 'cta' given twice"),
    "unknown placement key": ("P1@cta 0,gpu 0", "P1@cta 0,foo 1", 6, 33, "bad placement: expected one of"),
    "negative placement": ("P1@cta 0,gpu 0", "P1@cta -1,gpu 0", 6, 31, "must be at least 0"),
    "duplicate location": ("y=0;", "x=1;", 3, 6, "location 'x' declared twice"),
    "duplicate register init": ("P1:r0=0;", "P1:r0=0; P1:r0=2;", 4, 13, "register P1:r0 initialised twice"),
    "duplicate thread": ("P1@cta 0", "P0@cta 0", 6, 24, "thread 'P0' declared twice"),
    "register init of unknown thread": ("P1:r0=0;", "P7:r0=0;", 4, 1, "unknown thread 'P7'"),
    "unknown label": ("st.weak x, 1 ", "goto LC09    ", 7, 7, "unknown label 'LC09'"),
    "unknown qualifier": ("ld.acquire.gpu r0", "ld.acquire.foo r0", 7, 35, "unknown qualifier '.foo'"),
    "load with release": ("ld.acquire.gpu r0", "ld.release.gpu r0", 7, 27, "a load cannot be .release"),
    "weak with scope": ("st.weak x, 1 ", "st.weak.gpu x, 1", 7, 10, ".weak takes no scope"),
    "bad header": ("PTX MP", "X86 MP", 1, 1, "expected 'PTX TESTNAME' header"),
    "unexpected character": ("x=0;", "x=$;", 3, 3, "unexpected character '$'"),
    "barrier id out of range (from validate)": ("st.weak x, 1 ", "bar.sync 16  ", 7, 2, "barrier id 16 out of range"),
    "value beyond 32 bits": ("st.weak x, 1 ", "st.weak x, 4294967296", 7, 13, "does not fit in 32 bits"),
    "text after the condition": ("== 0)\n", "== 0) foo\n", 9, 35, "unexpected 'foo' after the condition"),
    "undeclared location in condition": ("P1:r1 == 0", "z == 0", 9, 23, "undeclared location 'z'"),
    "missing init block": ("{\nx=0;", "\nx=0;", 3, 1, "expected '{'"),
    "alias of undeclared location": ("y=0;", "y @ surface aliases q;", 3, 26, "'q' is aliased but not declared"),
    "unclosed parenthesis": ("P1:r1 == 0)", "P1:r1 == 0", 10, 1, "expected ')'"),
    "missing comparison": ("P1:r1 == 0", "P1:r1 0", 9, 29, "expected a comparison"),
    "bad quantifier": ("exists (", "maybe (", 9, 1, "unknown instruction 'maybe'"),
    "register as location": ("st.weak x, 1 ", "st.weak r3, 1", 7, 10, "expected a location, found 'r3'"),
    "fence without scope": ("st.weak x, 1 ", "fence.sc     ", 7, 2, "a fence needs a semantics and a scope"),
    "bad proxy fence space": ("st.weak x, 1 ", "fence.proxy.async.local", 7, 20, "bad proxy fence state space '.local'"),
    "red with cas": ("st.weak x, 1 ", "red.relaxed.gpu.cas x, 1", 7, 2, "red has no .cas"),
    "cas with one operand": ("st.weak x, 1 ", "atom.relaxed.gpu.cas r5, x, 1", 7, 2, "takes 4 operand(s), got 3"),
    "label defined twice": ("st.weak x, 1        | ld", "L1: | ld", 7, 2, None),
    "malformed number": ("x=0;", "x=0x1f;", 3, 3, "malformed number"),
    "register without thread in condition": ("P1:r1 == 0", "r1 == 0", 9, 23, "needs a thread"),
    "condition nested too deeply": ("(P1:r0 == 1", "(" * 200 + "P1:r0 == 1" + ")" * 199, 9, 109, "nested more than"),
}


def error_for(text: str) -> SourceError:
    with pytest.raises(SourceError) as info:
        parse(text, "t.litmus")
    return info.value


@pytest.mark.parametrize("name", sorted(CASES))
def test_malformed_input(name):
    old, new, line, col, gist = CASES[name]
    assert old in GOOD
    text = GOOD.replace(old, new, 1)
    if name == "label defined twice":
        text = text.replace(" st.release.gpu y, 1 |", " L1:                 |", 1).replace("L1: | ld", "L1:                 | ld", 1)
        gist = "label 'L1' defined twice"
        line, col = 8, 2
    e = error_for(text)
    assert (e.line, e.col) == (line, col), str(e)
    assert gist in e.message
    assert str(e) == f"t.litmus:{line}:{col}: {e.message}"
    assert isinstance(e, UserError)


def test_good_text_parses():
    assert parse(GOOD).name == "MP"


def test_parse_file_errors(tmp_path):
    with pytest.raises(SourceError) as info:
        parse_file(tmp_path / "missing.litmus")
    assert "cannot read" in str(info.value)
    bad = tmp_path / "bad.litmus"
    bad.write_bytes(b"PTX t\n\xff\xfe")
    with pytest.raises(SourceError, match="not UTF-8"):
        parse_file(bad)
    broken = tmp_path / "broken.litmus"
    broken.write_text(GOOD.replace("st.weak x, 1 ", "stx.weak x, 1"))
    with pytest.raises(SourceError) as info:
        parse_file(broken)
    assert str(info.value).startswith(f"{broken}:7:2: unknown instruction")


@pytest.mark.parametrize("text", ["", "PTX", "PTX t", "PTX t\n{", "PTX t\n{}", "PTX t\n{}\nP0", "PTX t\n{}\nP0;\n st.weak x"])
def test_truncated_input(text):
    error_for(text)
