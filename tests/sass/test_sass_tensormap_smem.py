"""Tensor maps rewritten in shared memory (CUTLASS example 57, CuTe's
``tma_descriptor_replace_*_in_shared_mem`` and ``tma_descriptor_cp_fence_release``): ptxas 13.0 lowers
``tensormap.replace....shared::cta`` to plain ``STS``/``STS.64``/``LDS``+``STS`` of the map's fields and
``tensormap.cp_fenceproxy`` to an ``LDS`` and an ``ATOMG.E.EXCH`` per lane.  Before these were modelled
their SASS was charged, by class, to unrelated ``ldmatrix``/``st.shared`` of the kernel (140 false
"forbidden" on CUTLASS 57), a replace on shared memory was read as a global store and reported
"deleted", and the release of cp_fenceproxy appeared nowhere in a "fully checked" report.  Also the
guard: a SASS operation is never charged to a PTX one whose line information disagrees with its."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu import sass
from fuzzgpu.sass.matching import locations_meet
from fuzzgpu.sass.ptx_parser import _classify_ptx_sync, _event, _parse_ptx_instr, _rule_key

from sass_cli import own_cache  # noqa: F401 -- the autouse fixture

DATA = Path(__file__).resolve().parents[1] / "data" / "sass"

needs_toolchain = pytest.mark.skipif(
    sass.find_tool("nvcc") is None or sass.find_tool("nvdisasm") is None,
    reason="needs nvcc and nvdisasm (pip install nvidia-cuda-nvdisasm)")

CP_FENCEPROXY = "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd5], [%r9], 128"


@pytest.mark.parametrize("field, width", [("global_address", 64), ("global_dim", 32), ("global_stride", 64)])
def test_a_replace_on_shared_memory_is_a_shared_store_that_may_read_the_map(field, width):
    text = f"tensormap.replace.tile.{field}.shared::cta.b1024.b{width} [%r4], {'1, ' if field != 'global_address' else ''}%rd3"
    ev = _event(_parse_ptx_instr(0, 1, text), {}, [])
    assert ev is not None and ev.mem is not None and ev.sync is None
    assert (ev.mem.kind, ev.mem.space, ev.mem.sem, ev.mem.width, ev.mem.root) == ("store", "shared", "weak", width, "%r4")
    assert ev.mem_class == "STS"
    assert {fam: (m.kind, m.space) for fam, m in ev.parts} == {"STS": ("store", "shared"), "LDS": ("load", "shared")}


def test_a_replace_on_global_memory_stays_a_global_store():
    ev = _event(_parse_ptx_instr(0, 1, "tensormap.replace.tile.global_stride.global.b1024.b64 [%rd5], 0, %rd3"), {}, [])
    assert ev is not None and ev.mem is not None and (ev.mem.space, ev.mem_class) == ("global", "STG")
    assert {fam for fam, _ in ev.parts} == {"STG", "LDG"}


def test_cp_fenceproxy_is_a_copy_and_a_release_with_no_sass_of_its_own():
    ins = _parse_ptx_instr(0, 1, CP_FENCEPROXY)
    ev = _event(ins, {}, [])
    assert ev is not None and ev.mem is not None and ev.sync is not None
    assert (ev.mem.kind, ev.mem.space, ev.mem.root) == ("store", "global", "%rd5")
    parts = dict(ev.parts)
    assert (parts["LDS"].kind, parts["LDS"].space, parts["LDS"].root) == ("load", "shared", "%r9")
    assert parts["ATOMG"] == ev.mem and parts["STG"] == ev.mem
    assert ev.sync.release and not ev.sync.acquire and ev.sync_classes == ()
    assert _rule_key(ev.sync) == "proxy.tensormap"
    assert _classify_ptx_sync(ins, ev.mem) == (ev.sync, ())
    assert (s := sass.sync_of_text(CP_FENCEPROXY)) is not None and s.release


def test_locations_meet_on_the_inlining_chain():
    helper = (("copy_sm90_desc.hpp", 392), ("epilogue.hpp", 1247), ("device_kernel.h", 123))
    other = (("copy_sm75.hpp", 194), ("collective.hpp", 300), ("device_kernel.h", 123))
    assert not locations_meet(helper, other)  # they share only the kernel's outer frame
    assert locations_meet(helper, helper[1:])  # the call site a .loc names
    assert locations_meet(helper[1:], helper)
    assert locations_meet((), other) and locations_meet(helper, ())


_PTX = """
.version 8.5
.target sm_90a
.address_size 64
.visible .entry k(
\t.param .u64 k_param_0
)
{
\t.reg .b32 \t%r<9>;
\t.reg .b64 \t%rd<3>;
\t.shared .align 4 .b8 buf[64];
\tld.param.u64 \t%rd1, [k_param_0];
\t.loc\t1 10 3
\tst.shared.u32 \t[buf], %r1;
\t.loc\t1 11 3
\tbar.sync \t0;
\t.loc\t1 12 3
\tld.shared.u32 \t%r2, [buf+4];
\tst.global.u32 \t[%rd1], %r2;
\tret;
}
\t.file\t1 "/x/k.cu"
"""

_SASS = """
\t.section\t.text.k,"ax",@progbits
.text.k:
\t//## File "/x/k.cu", line 12
        /*0000*/                   LDS R2, [RZ+0x4] ;
\t//## File "/x/k.cu", line 10
        /*0010*/                   STS [RZ], R1 ;
\t//## File "/x/k.cu", line 11
        /*0020*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
\t//## File "/x/k.cu", line 20
        /*0030*/                   STS [RZ+0x8], R1 ;
\t//## File "/x/k.cu", line 12
        /*0040*/                   LDS R3, [RZ+0x4] ;
        /*0050*/                   STG.E desc[UR4][R4.64], R3 ;
        /*0060*/                   EXIT ;
"""


def test_a_sass_access_is_never_charged_to_a_ptx_one_whose_line_disagrees():
    """The STS of line 20 after the barrier is no copy of the st.shared of line 10 (the only PTX STS):
    not checked, not "sunk below bar.sync"; the LDS of line 12 above the barrier is the ld.shared of
    line 12 hoisted: still forbidden."""
    (fn,) = sass.analyse(_PTX, _SASS, "sm_90a", "k.cu").functions
    assert [(f.verdict, f.direction, f.op_ptx, f.op_sass) for f in fn.findings] == [
        (sass.FORBIDDEN, sass.HOISTED, "ld.shared.u32 %r2, [buf+4]", "LDS R2, [RZ+0x4]")]
    assert any("no PTX STS to account for them: STS@0030" in u for u in fn.unchecked), fn.unchecked


@pytest.fixture(scope="module")
def smem_report(tmp_path_factory):
    """The three kernels of tests/data/sass/tensormap_smem.cu, compiled once (a cache of the module's own)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg")))
        (rep,) = sass.check_path(DATA / "tensormap_smem.cu", ("sm_90a",))
    return {fn.short_name: fn for fn in rep.functions}


@needs_toolchain
def test_replaces_after_a_proxy_fence_are_not_charged_to_the_accesses_before_it(smem_report):
    """The hostile test's reproduction (5 false "forbidden" before): clean and fully checked, each
    replace accounted for by its source line."""
    fn = smem_report["replace_after_proxy_fence"]
    assert not fn.findings and not fn.unchecked, (fn.findings, fn.unchecked)
    assert fn.mapped_mem_ops == fn.ptx_mem_ops
    assert sum("is ptxas's expansion into" in n and "tensormap.replace" in n for n in fn.notes) == 3, fn.notes


@needs_toolchain
def test_cp_fenceproxy_is_mapped_and_its_release_is_reported_not_checked(smem_report):
    fn = smem_report["smem_map"]
    assert not fn.findings, [str(f) for f in fn.findings]
    assert fn.mapped_mem_ops == fn.ptx_mem_ops
    (u,) = fn.unchecked
    assert u.startswith("`tensormap.cp_fenceproxy") and "release proxy pattern" in u and "not checked" in u
    assert any("cp_fenceproxy" in n and "LDS@" in n and "ATOMG" in n for n in fn.notes), fn.notes


@needs_toolchain
def test_the_real_hoist_next_to_a_shared_map_is_still_found(smem_report):
    """docs/findings.md 5: the global rewrite's STG.E.64 issued above wait_group.read's DEPBAR, in a
    kernel that also rewrites a map in shared memory after a proxy fence (no false "deleted")."""
    fn = smem_report["rewrite_before_wait"]
    (f,) = fn.findings
    assert f.verdict == sass.FORBIDDEN and f.direction == sass.HOISTED
    assert f.op_ptx.startswith("tensormap.replace.tile.global_address.global") and f.op_sass.startswith("STG.E.64")
    assert f.sync_ptx.startswith("cp.async.bulk.wait_group.read") and f.sync_sass.startswith("DEPBAR")
    assert fn.mapped_mem_ops == fn.ptx_mem_ops and not fn.unchecked
