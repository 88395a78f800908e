"""Production kernels, compiled with their projects' own flags (nvcc 13.0, sm_90a), checked from
the slices kept in tests/data/real-kernels/ (one ``.entry`` of nvcc's PTX and the ``nvdisasm -c -gi``
listing of it; PROVENANCE.md there): issue 26's must-shows, in seconds and without a toolchain.

Before the control-flow-graph checker, the same slices gave (``fuzzgpu.sass`` at main): FlashMLA
70b9468 960 findings (393 forbidden, the real hoist blamed on the wrong load), 01a2772 941 (408
forbidden), flash-attention's combine kernel one false finding (an ``st.shared`` of one branch
"hoisted above" the ``cp.async`` of the other) and FlashMLA's combine kernel "not fully checked"."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from fuzzgpu import sass

DATA = Path(__file__).resolve().parents[1] / "data" / "real-kernels"


def _report(stem: str) -> sass.Report:
    ptx = gzip.decompress((DATA / f"{stem}.ptx.gz").read_bytes()).decode()
    listing = gzip.decompress((DATA / f"{stem}.sass.gz").read_bytes()).decode()
    return sass.analyse(ptx, listing, "sm_90a", stem)


def test_flashmla_70b9468_exactly_the_metadata_hoist():
    """The kernel before "Fix synchronization issues": one finding -- the tile metadata's int4
    ``__ldg`` (``ld.global.nc.v4.s32``, splitkv_mla.cu:1020) issued as ``LDG.E.128.CONSTANT`` above
    ``ACQBULK`` (griddepcontrol.wait, line 1017) and the ``bar.sync 0`` before it -- and nothing
    forbidden, every memory operation and point accounted for."""
    rep = _report("flashmla/splitkv_mla-70b9468.sm_90a")
    (fn,) = rep.functions
    assert fn.complete, fn.unchecked
    (f,) = fn.findings
    assert (f.check, f.verdict, f.direction) == (sass.CROSSING, sass.HAZARD, sass.HOISTED)
    assert f.op_ptx.startswith("ld.global.nc.v4.s32") and f.op_sass.startswith("LDG.E.128.CONSTANT")
    assert f.src_file.endswith("csrc/kernels/splitkv_mla.cu") and f.src_line == 1020
    assert f.sync_ptx == "griddepcontrol.wait" and f.sync_sass == "ACQBULK" and f.op_sass_offset < f.sync_sass_offset
    assert [c.split(" (")[0] for c in f.crossed] == ["griddepcontrol.wait", "bar.sync 0"]
    assert f.crossed[0].endswith("splitkv_mla.cu:1017)")
    assert f.reason == sass.RULE_NC
    assert sass.exit_status([rep]) == sass.EXIT_FINDING


@pytest.mark.parametrize("stem", [
    "flashmla/splitkv_mla-01a2772.sm_90a",  # the fix: plain loads after the wait
    "flashmla/combine-9241ae3.sm_90a",  # LDC.64 c[0x4][...] (device asserts) is no memory operation to check
    "flash-attention/flash_fwd_combine-0251105a.sm_90a",  # @P2 STS / LDGSTS of exclusive branches
])
def test_fixed_and_combine_kernels_are_clean(stem):
    rep = _report(stem)
    assert rep.findings == (), [(f.op_ptx, f.direction, f.sync_ptx) for f in rep.findings]
    assert rep.complete, [u for fn in rep.functions for u in fn.unchecked]
    assert sass.exit_status([rep]) == sass.EXIT_CLEAN


def test_the_hoist_is_found_from_the_sass_alone_without_line_information():
    """The listing without its line comments (nvdisasm -c, no -g): the hoist is still found and
    named (the int4 load is the only one of its width); the source line comes from the PTX."""
    ptx = gzip.decompress((DATA / "flashmla/splitkv_mla-70b9468.sm_90a.ptx.gz").read_bytes()).decode()
    listing = gzip.decompress((DATA / "flashmla/splitkv_mla-70b9468.sm_90a.sass.gz").read_bytes()).decode()
    bare = "\n".join(ln for ln in listing.split("\n") if not ln.lstrip().startswith("//##"))
    rep = sass.analyse(ptx, bare, "sm_90a", "bare")
    hoists = [f for f in rep.findings if f.op_sass.startswith("LDG.E.128.CONSTANT") and f.sync_ptx == "griddepcontrol.wait"]
    assert len(hoists) == 1 and hoists[0].src_line == 1020
    assert not [f for f in rep.findings if f.verdict == sass.FORBIDDEN]
