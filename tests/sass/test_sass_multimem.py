"""multimem.ld_reduce / multimem.st / multimem.red: memory operations of global memory at a multimem address
(NVLink SHARP: TransformerEngine's userbuffers all-reduce kernels).  They were not memory operations to the
checker: a kernel of them was "clean" with its multimem loads unchecked, and one with a multimem.st "not fully
checked" (a SASS STG with no PTX store).  Captured with nvcc 13.0.88 (tests/kernels/captured/multimem.cu)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu import sass
from fuzzgpu.sass.ptx_parser import parse_ptx

CAPTURED = Path(__file__).resolve().parents[1] / "kernels" / "captured"


def _texts() -> tuple[str, str]:
    return (CAPTURED / "multimem.sm_90a.ptx").read_text(), (CAPTURED / "multimem.sm_90a.sass").read_text()


def _move(text: str, line: str, before: str | None = None, after: str | None = None) -> str:
    """The SASS with the instruction ``line`` moved to just before the first ``before`` (or just after ``after``)."""
    rows = text.splitlines()
    (k,) = [i for i, r in enumerate(rows) if line in r]
    row = rows.pop(k)
    if before is not None:
        j = next(i for i, r in enumerate(rows) if before in r)
    else:
        assert after is not None
        j = next(i for i, r in enumerate(rows) if after in r) + 1
    rows.insert(j, row)
    return "\n".join(rows) + "\n"


def test_multimem_operations_are_memory_operations_with_the_isa_defaults():
    """PTX ISA multimem.ld_reduce/st/red: 'If explicit semantics qualifiers are not specified, then
    multimem.ld_reduce and multimem.st default to .weak and multimem.red defaults to .relaxed'; 'If the .scope
    qualifier is not specified for multimem.red then .sys scope is assumed by default'."""
    (fn,) = parse_ptx(_texts()[0])
    mems = {e.mem.instr.text.split()[0]: e.mem for e in fn.events if e.mem is not None}
    ld = mems["multimem.ld_reduce.global.add.u32"]
    assert (ld.kind, ld.space, ld.sem, ld.width) == ("load", "global", "weak", 32)
    v4 = mems["multimem.ld_reduce.relaxed.sys.global.add.v4.f32"]
    assert (v4.kind, v4.sem, v4.scope, v4.width) == ("load", "relaxed", "sys", 128)
    st = mems["multimem.st.global.v4.f32"]
    assert (st.kind, st.space, st.sem, st.width) == ("store", "global", "weak", 128)
    red = mems["multimem.red.release.sys.global.add.u32"]
    assert (red.kind, red.sem, red.scope) == ("reduction", "release", "sys")
    (bare,) = parse_ptx(".version 8.1\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
                        ".reg .b64 %rd<2>;\nld.param.u64 %rd1, [p];\nmultimem.red.global.add.u32 [%rd1], 1;\nret;\n}\n")
    (r,) = [e.mem for e in bare.events if e.mem is not None]
    assert (r.kind, r.sem, r.scope) == ("reduction", "relaxed", "sys")


def test_the_kernel_is_fully_checked_and_clean():
    ptx, text = _texts()
    (fn,) = sass.analyse(ptx, text, "sm_90a", "multimem").functions
    assert fn.complete and not fn.unchecked and fn.findings == (), fn.unchecked
    assert fn.ptx_mem_ops == 6 and fn.mapped_mem_ops >= 5


@pytest.mark.parametrize("line,before,after,direction,op", [
    # the multimem load after fence.acq_rel.sys moved above its MEMBAR: what a 'clean' verdict let through
    ("LDGMC.E.ADD.32.STRONG.SYS R13", "MEMBAR.ALL.SYS", None, sass.HOISTED, "multimem.ld_reduce"),
    # the multimem.st before multimem.red.release.sys moved below the reduction (and its MEMBAR)
    ("STG.E.128 desc[UR8][R8.64+0x10], R4", None, "@P0 REDG.E.ADD.STRONG.SYS", sass.SUNK, "multimem.st"),
])
def test_a_multimem_access_moved_across_an_ordering_point_is_forbidden(line, before, after, direction, op):
    ptx, text = _texts()
    (fn,) = sass.analyse(ptx, _move(text, line, before=before, after=after), "sm_90a", "multimem").functions
    found = [f for f in fn.findings if f.check == sass.CROSSING and f.direction == direction]
    assert found and all(f.verdict == sass.FORBIDDEN for f in found), fn.findings
    assert any(op in f.op_ptx for f in found)


def test_a_strong_ld_reduce_has_the_class_its_sass_has():
    """``multimem.ld_reduce.relaxed.sys`` is ``LDGMC.E.ADD.F32.STRONG.SYS`` in SASS: a family of its own, whose class
    carries no strength on the SASS side, so none on the PTX side either (``ptx_parser.STRENGTH_FAMILIES``).  Three of
    them in three branches (tests/kernels/captured/multimem_branches.cu, a hostile review of mscclpp's allreduce6):
    before, the PTX class was ``LDGMC.STRONG.SYS``, and the SASS loads the address pairing left over found "no PTX
    LDGMC to account for them" -- not fully checked, and a move of such a load never judged."""
    ptx = (CAPTURED / "multimem_branches.sm_90a.ptx").read_text()
    (fn,) = parse_ptx(ptx)
    assert {e.mem_class for e in fn.events if e.mem is not None and e.mem.instr.opcode == "multimem"} == {"LDGMC"}
    (rep,) = sass.analyse(ptx, (CAPTURED / "multimem_branches.sm_90a.sass").read_text(), "sm_90a", "multimem_branches").functions
    assert rep.complete and not rep.unchecked and rep.findings == (), rep.unchecked
