"""The wgmma register instructions of class F (issue 32): litmus spelling (parsed, printed, round
trip; the PTX ``.sync.aligned`` spellings read), JSON (new tags only), validation, and the harness's
refusal (registered, not emitted: the litmus harness has no register-A wgmma)."""

from __future__ import annotations

import pytest

from fuzzgpu.codegen import unrunnable_reasons
from fuzzgpu.errors import SourceError
from fuzzgpu.ir import ProgramError, WgmmaCommit, WgmmaFence, WgmmaMma, WgmmaWait, program_from_json, program_to_json
from fuzzgpu.litmus import format_program, parse

TEXT = """PTX W
{
x = 1;
}
 P0@cta 0,gpu 0 ;
 ld.weak r1, x ;
 {fence} ;
 wgmma.mma_async r2, r1 ;
 {commit} ;
 mov r1, 2 ;
 {wait} 1 ;
exists (P0:r2 == 2)
"""


def _program(fence="wgmma.fence", commit="wgmma.commit_group", wait="wgmma.wait_group", mma="wgmma.mma_async r2, r1"):
    return parse(TEXT.replace("{fence}", fence).replace("{commit}", commit).replace("{wait}", wait)
                 .replace("wgmma.mma_async r2, r1", mma))


def test_parsed_printed_and_round_tripped():
    p = _program()
    assert p.threads[0].code[1:4] == (WgmmaFence(), WgmmaMma("r2", "r1"), WgmmaCommit())
    assert p.threads[0].code[5] == WgmmaWait(1)
    assert parse(format_program(p)) == p
    assert program_from_json(program_to_json(p)) == p


def test_the_ptx_spellings_are_read():
    p = _program("wgmma.fence.sync.aligned", "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned")
    assert p == _program()
    assert "sync.aligned" not in format_program(p)  # written in the dialect's short form


def test_json_tags():
    code = program_to_json(_program())["threads"][0]["code"]
    assert code[1:4] == [{"op": "wgmma.fence"}, {"op": "wgmma.mma_async", "dst": "r2", "a": "r1"}, {"op": "wgmma.commit_group"}]
    assert code[5] == {"op": "wgmma.wait_group", "n": 1}


def test_validation():
    with pytest.raises((ProgramError, SourceError), match="different registers"):
        _program(mma="wgmma.mma_async r1, r1")
    with pytest.raises((ProgramError, SourceError), match="out of range"):
        parse(TEXT.replace("{fence}", "wgmma.fence").replace("{commit}", "wgmma.commit_group")
              .replace("{wait} 1", "wgmma.wait_group 64"))
    with pytest.raises(SourceError, match="wgmma.wait_group n"):
        _program(fence="wgmma.arrive")


def test_the_harness_refuses_them_with_a_reason():
    reasons = unrunnable_reasons(_program())
    assert any("wgmma.mma_async" in r and "not supported by code generation" in r for r in reasons)
