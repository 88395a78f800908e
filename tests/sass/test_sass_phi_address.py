"""An address register written on two paths that join (NVVM writes a phi as two definitions of one PTX
register), or under a predicate, is not followed to the listing's last definition: at a use after the join
its value may be the other definition's.  Followed so, a load through it was taken for another load of the
same address, "merged" across a fence -- a false "forbidden" on a 17-line kernel (``tests/data/sass/
phi_fence.cu``) and false "merged" findings in NCCL's LL128 primitives (a hostile review, 2026-12-06).
Only a register defined once, unpredicated, is followed, and only through such registers (SSA form, which
NVVM writes but for phis)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu import sass
from fuzzgpu.sass.ptx_parser import parse_ptx

from sass_cli import own_cache  # noqa: F401 -- the autouse fixture

DATA = Path(__file__).resolve().parents[1] / "data" / "sass"


def _roots(body: str) -> list[tuple[str, int]]:
    """The (root, offset) of each memory operation of a kernel whose body is ``body``."""
    ptx = (".version 8.5\n.target sm_90\n.address_size 64\n.visible .entry k(\n\t.param .u64 k_param_0,\n"
           "\t.param .u32 k_param_1\n)\n{\n\t.reg .pred %p<4>;\n\t.reg .b32 %r<12>;\n\t.reg .b64 %rd<12>;\n"
           "\tld.param.u64 %rd1, [k_param_0];\n\tld.param.u32 %r1, [k_param_1];\n" + body + "\tret;\n}\n")
    (fn,) = parse_ptx(ptx)
    return [e.mem.address for e in fn.events if e.mem is not None and e.mem.space != "param"]


def test_a_register_defined_once_is_followed():
    assert _roots("\tadd.s64 %rd2, %rd1, 8;\n\tadd.s64 %rd3, %rd2, 16;\n\tld.global.u32 %r2, [%rd3+4];\n") == [("%rd1", 28)]


def test_a_register_defined_on_two_paths_is_its_own_root():
    body = ("\tld.global.u64 %rd2, [%rd1+408];\n\tmov.u64 %rd3, %rd1;\n\tsetp.eq.s32 %p1, %r1, 0;\n\t@%p1 bra $L_join;\n"
            "\tadd.s64 %rd3, %rd1, 304;\n$L_join:\n\tmembar.gl;\n\tld.global.u64 %rd4, [%rd3+104];\n")
    # before: the second load was [%rd1+408], the first's address, by the listing's last definition of %rd3
    assert _roots(body) == [("%rd1", 408), ("%rd3", 104)]


def test_a_register_defined_under_a_predicate_is_its_own_root():
    body = "\tsetp.eq.s32 %p1, %r1, 0;\n\t@%p1 add.s64 %rd2, %rd1, 8;\n\tld.global.u32 %r2, [%rd2];\n"
    assert _roots(body) == [("%rd2", 0)]


def test_a_register_is_not_followed_through_one_written_again():
    # %rd2 = %rd1 + 8 before %rd1 moves on: [%rd2] is not [%rd1 + 8] after it
    body = ("\tmov.u64 %rd3, %rd1;\n\tadd.s64 %rd2, %rd3, 8;\n\tadd.s64 %rd3, %rd3, 16;\n\tld.global.u32 %r2, [%rd2];\n"
            "\tld.global.u32 %r3, [%rd3+8];\n")
    roots = _roots(body)
    assert roots[0] != roots[1] and roots[0] == ("%rd2", 0)


def test_the_phi_kernel_captured_is_clean():
    """The captured PTX/SASS of ``phi_fence.cu`` (nvcc/ptxas 13.0, sm_90a): every load has its own SASS load,
    the one after ``__threadfence()`` after ``MEMBAR.SC.GPU``; before, a "forbidden" merge."""
    rep = sass.analyse((DATA / "phi_fence.sm_90a.ptx").read_text(), (DATA / "phi_fence.sm_90a.sass").read_text(),
                       "sm_90a", "phi_fence.cu")
    (fn,) = rep.functions
    assert fn.findings == () and not fn.unchecked, (fn.findings, fn.unchecked)


@pytest.mark.skipif(sass.find_tool("nvcc") is None or sass.find_tool("nvdisasm") is None, reason="needs nvcc and nvdisasm")
def test_the_phi_kernel_compiled_is_clean():
    for rep in sass.check_path(DATA / "phi_fence.cu", ("sm_90", "sm_90a", "sm_100a")):
        assert all(fn.findings == () for fn in rep.functions), [fn.findings for fn in rep.functions]
