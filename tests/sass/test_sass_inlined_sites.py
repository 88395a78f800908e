"""One helper inlined at three call sites (NCCL 5067397c's ``prims_ll.h`` in its TREE_LL all-reduce): a load of
one address and one source line at each site.  With barriers between the sites, ptxas merged each site's re-read
with the load of its own site, and the checker, grouping the loads by their innermost line alone, took all three
for one merged load across the barriers -- a false "forbidden" (a hostile review, 2026-12-06; ``tests/data/sass/
inlined_sites.cu``).  A merge across a synchronisation point is of one call site's copies: the others are not
mapped (not checked, said so).  With nothing between the sites (the same file with ``-DNO_SYNC``) ptxas loads once for
all three, and those merges across call sites are still found (CUB's radix sort in ggml's argsort.cu: 29)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu import sass

from sass_cli import own_cache  # noqa: F401 -- the autouse fixture

DATA = Path(__file__).resolve().parents[1] / "data" / "sass"
needs_toolchain = pytest.mark.skipif(sass.find_tool("nvcc") is None or sass.find_tool("nvdisasm") is None,
                                     reason="needs nvcc and nvdisasm")


def _captured(name: str) -> sass.FunctionReport:
    rep = sass.analyse((DATA / f"{name}.sm_90a.ptx").read_text(), (DATA / f"{name}.sm_90a.sass").read_text(), "sm_90a",
                       "inlined_sites.cu")
    (fn,) = rep.functions
    return fn


def test_no_merge_across_the_barriers_of_three_call_sites():
    fn = _captured("inlined_sites")
    assert fn.findings == ()
    # the re-reads of sites 1 and 2 (PTX 44 and 62), merged within their own site, are said not checked: never clean
    assert sorted(int(u.split("PTX line ")[1].split()[0]) for u in fn.unchecked) == [44, 62], fn.unchecked


def test_a_merge_across_call_sites_with_nothing_between_is_found():
    fn = _captured("inlined_sites_nosync")
    assert fn.findings and all(f.check == sass.MERGED and f.verdict == sass.HAZARD for f in fn.findings)


@needs_toolchain
def test_the_three_call_sites_compiled():
    for rep in sass.check_path(DATA / "inlined_sites.cu", ("sm_90", "sm_90a", "sm_100a")):
        assert all(f.verdict != sass.FORBIDDEN for fn in rep.functions for f in fn.findings)
    for rep in sass.check_path(DATA / "inlined_sites.cu", ("sm_90a",), nvcc_flags=("-DNO_SYNC",)):
        (fn,) = rep.functions
        assert fn.findings and all(f.check == sass.MERGED and f.verdict == sass.HAZARD for f in fn.findings)
