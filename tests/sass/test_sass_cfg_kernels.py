"""Production-shaped kernels of our own (tests/kernels/production/shapes.cu), compiled here: the
control-flow-graph checker reports the real hoist -- an ``__ldg`` above ``griddepcontrol.wait`` in a
warp-role branch -- and nothing for warp-specialised producer/consumer roles over an mbarrier
pipeline, an inlined subroutine called twice, an unrolled shared-memory reduction, or the same
kernels under ``-G -O0`` (local stack accesses); and a load moved above the wait by hand is caught."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fuzzgpu import sass

SHAPES = Path(__file__).resolve().parents[1] / "kernels" / "production" / "shapes.cu"
LDG_LINE = next(n for n, ln in enumerate(SHAPES.read_text().splitlines(), 1) if "__ldg(meta" in ln)

needs_toolchain = pytest.mark.skipif(
    sass.find_tool("nvcc") is None or (sass.find_tool("nvdisasm") is None and sass.find_tool("cuobjdump") is None),
    reason="needs nvcc and nvdisasm or cuobjdump (pip install nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump)",
)


@pytest.fixture(scope="module")
def reports() -> dict[str, sass.Report]:
    return {rep.arch: rep for rep in sass.check_path(SHAPES, ("sm_90", "sm_100a"))}


@needs_toolchain
@pytest.mark.parametrize("arch", ["sm_90", "sm_100a"])
def test_the_role_branch_hoist_is_the_only_finding(reports, arch):
    rep = reports[arch]
    by = {fn.short_name: fn for fn in rep.functions}
    # complete; in P1 ptxas places a warp role after the other role's EXIT, where the token order pairs no phase
    # check: at sm_90 the producer's wait (one of its source line: paired by it, and checked); at sm_100a the
    # consumer's five unrolled copies of one line, which the graphs do not tell apart -- not checked, and said
    assert all(fn.complete for name, fn in by.items() if name != "P1_producer_consumer"), \
        [(fn.short_name, fn.unchecked) for fn in rep.functions]
    p1 = by["P1_producer_consumer"]
    assert all("mbarrier.try_wait" in u and "whether an access after it is unguarded was not checked" in u
               for u in p1.unchecked), p1.unchecked
    assert p1.complete if arch == "sm_90" else p1.unchecked, p1.unchecked
    (f,) = rep.findings
    assert sass.short_name(f.function) == "P4_pdl_ldg_role"
    assert (f.check, f.verdict, f.direction) == (sass.CROSSING, sass.HAZARD, sass.HOISTED)
    assert f.op_ptx.startswith("ld.global.nc.v4.s32") and f.op_sass.startswith("LDG.E.128.CONSTANT")
    assert f.sync_ptx == "griddepcontrol.wait" and f.sync_sass == "ACQBULK"
    assert f.src_file.endswith("shapes.cu") and f.src_line == LDG_LINE  # the __ldg's line, not sm_32_intrinsics.hpp
    for name in ("P1_producer_consumer", "P2_inlined_twice", "P3_reduction", "P5_pdl_plain_role"):
        assert by[name].findings == () and (by[name].complete or name == "P1_producer_consumer"), (name, by[name].unchecked)


@needs_toolchain
def test_debug_build_local_stack_is_no_hazard():
    """``-G -O0``: every variable lives on the thread's stack (``st.local``, ``cvta.local`` of
    ``__local_depot``, STL/LDL); none of it is an ordering hazard or leaves a kernel unchecked."""
    (rep,) = sass.check_path(SHAPES, ("sm_90",), opt=0, nvcc_flags=("-G",))
    assert not [f for f in rep.findings if f.verdict == sass.FORBIDDEN], rep.findings
    assert rep.complete, [(fn.short_name, fn.unchecked) for fn in rep.functions]


def _location_run(lines: list[str], i: int) -> list[str]:
    """The ``//## File`` lines (nvdisasm -gi: a location and the call sites it was inlined at) in
    force at line ``i`` of a listing."""
    end = next((k for k in range(i - 1, -1, -1) if "//## File" in lines[k]), -1)
    start = end
    while start > 0 and "//## File" in lines[start - 1]:
        start -= 1
    return lines[start:end + 1] if end >= 0 else []


@needs_toolchain
def test_a_plain_load_moved_above_the_wait_by_hand_is_forbidden(tmp_path):
    """The fixed kernel's listing with its LDG.E.128 moved above ACQBULK: a weak load raised above
    griddepcontrol.wait is forbidden (the check can fail: the kernel as compiled is clean)."""
    (rep,) = sass.check_path(SHAPES, ("sm_90",), keep_dir=tmp_path)
    ptx = (tmp_path / "shapes.sm_90.ptx").read_text()
    listing = (tmp_path / "shapes.sm_90.sass").read_text()
    start = next(m.start() for m in re.finditer(r"^\.text\.\w*P5_pdl_plain_role\w*:", listing, re.M))
    end = listing.find("//---", start)
    body = listing[start:end if end > 0 else len(listing)].split("\n")
    load = next(i for i, ln in enumerate(body) if "LDG.E.128 " in ln)
    wait = next(i for i, ln in enumerate(body) if "ACQBULK" in ln)
    assert wait < load
    # the load with its own source line, the wait's restored after it (ptxas keeps an instruction's
    # line where it moves it; a SASS access whose line disagrees with the PTX load's is not it)
    load_loc, wait_loc = _location_run(body, load), _location_run(body, wait)
    body[wait:wait] = load_loc + [body.pop(load)] + wait_loc
    moved = listing[:start] + "\n".join(body) + (listing[end:] if end > 0 else "")
    by = {fn.short_name: fn for fn in sass.analyse(ptx, moved, "sm_90", "moved").functions}
    (f,) = by["P5_pdl_plain_role"].findings
    assert (f.verdict, f.direction, f.sync_ptx) == (sass.FORBIDDEN, sass.HOISTED, "griddepcontrol.wait")
    assert f.op_sass.startswith("LDG.E.128 ")
