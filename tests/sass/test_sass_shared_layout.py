"""Several ``__shared__`` variables in one window (:mod:`fuzzgpu.sass.shared_layout`): ptxas addresses them from
one register with each variable's offset folded into the immediates, so one shift per SASS base register cannot
map them (FlashInfer's ``trtllm_fused_moe_dev_kernel``: 48 functions not fully checked).  Each variable's place
is proved by the source lines whose PTX and SASS accesses are one set of bytes moved; where two such lines
disagree nothing is placed and the operations stay "not checked"."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu import sass
from fuzzgpu.sass.matching import _map_memory, _sass_mem_class
from fuzzgpu.sass.ptx_parser import parse_ptx
from fuzzgpu.sass.sass_parser import parse_sass
from fuzzgpu.sass.shared_layout import _Group, _solve, shared_layout

from sass_cli import own_cache  # noqa: F401 -- the autouse fixture

DATA = Path(__file__).resolve().parents[1] / "data" / "sass"

needs_toolchain = pytest.mark.skipif(
    sass.find_tool("nvcc") is None or sass.find_tool("nvdisasm") is None,
    reason="needs nvcc and nvdisasm (pip install nvidia-cuda-nvdisasm)")

# the reproducer's PTX and SASS (shared_symbol_offset.cu, nvcc 13.0 sm_90a), cut to the shared accesses:
# `a` at +0, `b` at +4 of the window R11 points at; line 12 (b[5]) added
_PTX = """.version 8.5
.target sm_90a
.address_size 64
\t.file\t1 "k.cu"
.visible .entry k(
\t.param .u64 k_param_0
)
{
\t.reg .f32 %f<8>;
\t.reg .b64 %rd<4>;
\t.shared .align 4 .f32 a;
\t.shared .align 4 .b8 b[24];
\tld.param.u64 %rd1, [k_param_0];
\t.loc\t1 9 0
\tld.shared.f32 %f2, [b+8];
\tld.shared.f32 %f3, [b+12];
\tld.shared.f32 %f4, [b+16];
\tfma.rn.f32 %f5, %f2, %f3, %f4;
\tst.shared.f32 [a], %f5;
\t.loc\t1 10 0
\tbar.sync 0;
\t.loc\t1 11 0
\tld.shared.f32 %f6, [a];
\tst.global.f32 [%rd1], %f6;
\t.loc\t1 12 0
\tld.shared.f32 %f7, [b+20];
\tst.global.f32 [%rd1+4], %f7;
\tret;
}
"""


def _sass(b5: str = "[R11+0x18]") -> str:
    lines = [(9, "LDS R2, [R11+0xc]"), (9, "LDS.64 R4, [R11+0x10]"), (9, "FFMA R4, R2, R4, R5"), (9, "STS [R11], R4"),
             (10, "BAR.SYNC.DEFER_BLOCKING 0x0"), (11, "LDS R5, [R11]"), (11, "STG.E desc[UR4][R2.64], R5"),
             (12, f"LDS R6, {b5}"), (12, "STG.E desc[UR4][R2.64+0x4], R6"), (13, "EXIT")]
    body = "\n".join(f'\t//## File "k.cu", line {n}\n        /*{i * 16:04x}*/                   {t} ;' for i, (n, t) in enumerate(lines))
    return f'\t.section\t.text.k,"ax",@progbits\n.text.k:\n{body}\n'


def _pairs(ptx: str, sass_text: str) -> dict[str, str]:
    """PTX shared access -> the SASS access it was paired with (its text), by :func:`_map_memory`."""
    (pf,), (sf,) = parse_ptx(ptx), parse_sass(sass_text)
    mem_pos = _map_memory(pf.events, sf.mem_ops, pf.instrs)[0]
    return {e.instr.text: (f"{mem_pos[k].instr.full_opcode} {mem_pos[k].instr.operands}" if k in mem_pos else "")
            for k, e in enumerate(pf.events) if e.mem is not None and e.mem.space == "shared"}


def test_each_shared_variable_is_placed_by_its_source_lines():
    (pf,), (sf,) = parse_ptx(_PTX), parse_sass(_sass())
    layout = shared_layout(pf.events, sf.mem_ops, frozenset(), _sass_mem_class)
    assert layout.symbols["b"] - layout.symbols["a"] == 4
    assert layout.bases["R11"] == layout.symbols["a"]  # [R11] is a
    assert _pairs(_PTX, _sass()) == {
        "ld.shared.f32 %f2, [b+8]": "LDS R2, [R11+0xc]",
        "ld.shared.f32 %f3, [b+12]": "LDS.64 R4, [R11+0x10]",  # (b+12 and b+16 read as one LDS.64)
        "ld.shared.f32 %f4, [b+16]": "LDS.64 R4, [R11+0x10]",
        "st.shared.f32 [a], %f5": "STS [R11], R4",
        "ld.shared.f32 %f6, [a]": "LDS R5, [R11]",
        "ld.shared.f32 %f7, [b+20]": "LDS R6, [R11+0x18]",
    }
    (fn,) = sass.analyse(_PTX, _sass(), "sm_90a", "k.cu").functions
    assert fn.findings == () and fn.unchecked == (), (fn.findings, fn.unchecked)


def test_lines_that_disagree_place_nothing():
    """Line 9 puts ``b`` 4 bytes past where R11 points (``b+8`` is ``[R11+0xc]``), line 12 at R11 itself (``b+20``
    as ``[R11+0x14]``): R11's place is not known, so neither is ``a``'s or ``b``'s.  The matching is then the one
    shift per base, which pairs ``[R11+0xc]`` with ``b+12`` and finds no load for ``b+8``, whose value is read:
    not checked, as before the layout."""
    (pf,), (sf,) = parse_ptx(_PTX), parse_sass(_sass("[R11+0x14]"))
    layout = shared_layout(pf.events, sf.mem_ops, frozenset(), _sass_mem_class)
    assert not layout.symbols and not layout.bases
    assert any("disagree on where R11 points" in n for n in layout.notes), layout.notes
    assert _pairs(_PTX, _sass("[R11+0x14]"))["ld.shared.f32 %f2, [b+8]"] == ""
    (fn,) = sass.analyse(_PTX, _sass("[R11+0x14]"), "sm_90a", "k.cu").functions
    assert fn.findings == () and any("[b+8]`: no SASS load paired with it, and an instruction reads its value" in u for u in fn.unchecked), fn
    assert any("disagree on where R11 points" in n for n in fn.notes), fn.notes


def test_no_line_information_places_nothing():
    bare = "\n".join(x for x in _sass().splitlines() if "//##" not in x)
    (pf,), (sf,) = parse_ptx(_PTX), parse_sass(bare)
    assert shared_layout(pf.events, sf.mem_ops, frozenset(), _sass_mem_class).symbols == {}


def _group(where: str, ptx: tuple, base: str, sass_ops: tuple) -> _Group:
    return _Group(where, ptx, base, sass_ops)


def test_a_group_proves_a_move_only_when_its_bytes_are_one_set_moved():
    a_on_r1 = _group("1", (("a", 0, 4),), "R1", ((0, 4),))
    # b+8, b+12, b+16 as one LDS and one LDS.64 four bytes on: b is 4 past where R1 points, past a
    b_on_r1 = _group("2", (("b", 8, 4), ("b", 12, 4), ("b", 16, 4)), "R1", ((0xc, 4), (0x10, 8)))
    offsets, bad, notes = _solve([a_on_r1, b_on_r1])
    assert not bad and not notes
    assert offsets.find(("sym", "b"))[0] == offsets.find(("sym", "a"))[0]
    assert offsets.find(("sym", "b"))[1] - offsets.find(("sym", "a"))[1] == 4
    # an LDS.64 that reads 4 bytes no PTX load of the line reads: no move maps the bytes, no evidence
    loose = _group("3", (("c", 0, 4),), "R2", ((0, 8),))
    offsets, bad, _ = _solve([loose])
    assert offsets.find(("base", "R2"))[0] == ("base", "R2") and not bad
    # a group naming two symbols waits until they are placed relative to each other, then places its base
    both = _group("4", (("a", 0, 4), ("b", 0, 4)), "UR4", ((0, 8),))
    offsets, bad, _ = _solve([both, a_on_r1, _group("5", (("b", 0, 4),), "R1", ((4, 4),))])
    assert not bad and offsets.find(("base", "UR4"))[0] == offsets.find(("sym", "a"))[0]
    # two groups that put one base at two places: that component is bad
    offsets, bad, notes = _solve([a_on_r1, _group("6", (("a", 0, 4),), "R1", ((8, 4),))])
    assert bad == {("base", "R1")} and len(notes) == 1


@needs_toolchain
@pytest.mark.parametrize("name", ["shared_symbol_offset.cu", "shared_symbol_padding.cu"])
def test_the_reproducers_are_fully_checked(name):
    """``shared_symbol_offset.cu``: ``a`` then ``b``, ``b[2..4]`` read as ``[R+0xc]`` and ``[R+0x10]`` (was not
    checked: ``[R+0xc]`` paired with ``b+12``); ``shared_symbol_padding.cu``: ``float s[3]`` then ``float2
    buf[6]``, ``buf`` at ``+0x10`` after 4 bytes of padding (was paired ``s+4`` with ``[R+0x8]``)."""
    (rep,) = sass.check_path(DATA / name, ("sm_90a",))
    (fn,) = rep.functions
    assert fn.findings == () and fn.unchecked == () and rep.complete, (fn.findings, fn.unchecked)
    assert any(n.startswith("shared-window layout from the SASS") for n in fn.notes), fn.notes


@needs_toolchain
def test_the_padded_reproducer_pairs_by_the_window_offsets(tmp_path):
    """``s`` at +0 of the window, ``buf`` at +0x10: ``buf+16`` is ``[R+0x20]``, ``buf+32`` ``[R+0x30]``, ``s+4``
    ``[R+0x4]`` (its store and its load), ``s+8`` ``[R+0x8]``."""
    ptx, cubin = sass.toolchain.compile_cu(DATA / "shared_symbol_padding.cu", "sm_90a", tmp_path)
    pairs = _pairs(ptx, sass.toolchain.disassemble(cubin))
    want = {"E3buf+16]": "+0x20]", "E3buf+32]": "+0x30]", "E1s+4]": "+0x4]", "E1s+8]": "+0x8]"}
    seen = [(p, s) for p in pairs for sym, at in want.items() if sym in p for s in (pairs[p],) if at in s]
    assert len(seen) == 5, pairs  # (s+4: a store and a load)
