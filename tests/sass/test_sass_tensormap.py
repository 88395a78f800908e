"""Class D in the SASS checker: ``tensormap.replace`` is a weak generic write of the map (PTX ISA
tensormap.replace: "a weak memory operation, on the entire 1024-bit opaque tensor-map object"),
which ptxas 13.0 emits as one ``STG.E.64`` (its global_address field); the release proxy fence is
``MEMBAR.ALL.GPU`` (``.SYS`` at ``.sys``), the acquire one ``UTMACCTL.IV [map]``.  Before these
were known the replace's STG was paired by count with the static kernel's sink store and reported
as that store "forbidden hoisted above" an mbarrier wait: a false finding on every class-D
program."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu import sass
from fuzzgpu.sass.rules import judge_move, why_not
from fuzzgpu.sass.ptx_parser import _classify_ptx_mem, _classify_ptx_sync, _parse_ptx_instr
from fuzzgpu.sass.sass_parser import _classify_sass, parse_sass

from sass_cli import own_cache  # noqa: F401 -- the autouse fixture

CATALOGUE = Path(__file__).resolve().parents[1] / "litmus" / "race-tensormap"

needs_toolchain = pytest.mark.skipif(
    sass.find_tool("nvcc") is None or sass.find_tool("nvdisasm") is None,
    reason="needs nvcc and nvdisasm (pip install nvidia-cuda-nvdisasm)")


def test_the_replace_is_a_weak_64_bit_global_store_and_no_synchronisation_point():
    ins = _parse_ptx_instr(0, 1, "tensormap.replace.tile.global_address.global.b1024.b64 [%rd5], %rd3")
    mem = _classify_ptx_mem(ins, {})
    assert mem is not None and (mem.kind, mem.space, mem.sem, mem.width, mem.root) == ("store", "global", "weak", 64, "%rd5")
    assert _classify_ptx_sync(ins, mem) == (None, ())


@pytest.mark.parametrize("scope, membar", [("cta", "MEMBAR.ALL.GPU"), ("gpu", "MEMBAR.ALL.GPU"), ("sys", "MEMBAR.ALL.SYS")])
def test_the_proxy_fences_sass(scope, membar):
    rel = _parse_ptx_instr(0, 1, f"fence.proxy.tensormap::generic.release.{scope}")
    acq = _parse_ptx_instr(1, 2, f"fence.proxy.tensormap::generic.acquire.{scope} [%rd5], 128")
    (srel, trel), (sacq, tacq) = _classify_ptx_sync(rel, None), _classify_ptx_sync(acq, None)
    assert srel is not None and srel.release and not srel.acquire and trel == (membar,)
    assert sacq is not None and sacq.acquire and not sacq.release and tacq == ("UTMACCTL.IV",)


def test_utmacctl_iv_is_the_acquire_not_a_tensor_copy():
    fn = parse_sass(".text.k:\n        /*0120*/                   UTMACCTL.IV [UR4] ;\n"
                    "        /*0130*/                   UTMALDG.1D [UR8], [UR4] ;\n")[0]
    kinds = [_classify_sass(i) for i in fn.instrs]
    assert [getattr(k, "token", None) for k in kinds] == ["UTMACCTL.IV", "TMA"]


def test_a_later_access_raised_above_the_acquire_proxy_fence_is_no_finding_one_sunk_below_the_release_is():
    acq = _classify_ptx_sync(_parse_ptx_instr(1, 2, "fence.proxy.tensormap::generic.acquire.gpu [%rd5], 128"), None)[0]
    rel = _classify_ptx_sync(_parse_ptx_instr(1, 2, "fence.proxy.tensormap::generic.release.gpu"), None)[0]
    ld = _classify_ptx_mem(_parse_ptx_instr(2, 3, "ld.global.u32 %r1, [%rd7]"), {})
    st = _classify_ptx_mem(_parse_ptx_instr(0, 1, "tensormap.replace.tile.global_address.global.b1024.b64 [%rd5], %rd3"), {})
    assert acq is not None and rel is not None and ld is not None and st is not None
    # the acquire orders the tensormap-proxy reads of its map after it, no generic access
    assert judge_move(ld, acq, sass.HOISTED) is None
    assert "tensormap-proxy reads" in why_not(ld, acq, sass.HOISTED)
    # the release orders the generic accesses before it (the replace) with the tensormap proxy
    verdict = judge_move(st, rel, sass.SUNK)
    assert verdict is not None and verdict[0] == sass.FORBIDDEN and "fence.proxy.tensormap::generic.release" in verdict[1]


#: docs/findings.md, 5: ptxas 13.0 issues the rewrite's STG before cp.async.bulk.wait_group.read's DEPBAR
REWRITE_BEFORE_WAIT = "NORACE-11-rewrite-after-wait-read.litmus"


@needs_toolchain
@pytest.mark.parametrize("litmus", sorted(p.name for p in CATALOGUE.glob("*.litmus")))
def test_every_class_d_catalogue_program_is_fully_checked(litmus):
    """sm_90a (tensormap.replace needs the arch-specific target): every replace, proxy fence and
    tensor copy is mapped one-to-one; ptxas 13.0 moves nothing the checker calls a finding but the
    rewrite issued before a bulk wait that awaits the copy's read of the map (docs/findings.md, 5)."""
    reports = sass.check_path(CATALOGUE / litmus, ("sm_90a",))
    assert len(reports) == 1
    rep = reports[0]
    assert rep.complete, [f.unchecked for f in rep.functions]
    for fn in rep.functions:
        assert fn.mapped_mem_ops == fn.ptx_mem_ops and fn.mapped_syncs == fn.ptx_syncs, fn
    if litmus != REWRITE_BEFORE_WAIT:
        assert not rep.findings, [str(x) for x in rep.findings]
        return
    (f,) = rep.findings
    assert f.verdict == sass.FORBIDDEN and f.direction == sass.HOISTED
    assert f.op_ptx.startswith("tensormap.replace") and f.op_sass.startswith("STG.E.64")
    assert f.sync_ptx.startswith("cp.async.bulk.wait_group.read") and f.sync_sass.startswith("DEPBAR")


@needs_toolchain
def test_the_rewrite_after_a_fence_is_clean():
    """The control the H200 ran (0 of 1e8): with fence.acq_rel.cta between the wait and the rewrite,
    ptxas issues the DEPBAR first."""
    rep, = sass.check_path(CATALOGUE.parent / "gpu" / "D-rewrite-after-wait-read-fenced.litmus", ("sm_90a",))
    assert rep.complete and not rep.findings


def test_a_tensor_copy_awaits_its_map_read_in_a_bulk_group_and_only_a_rewrite_conflicts():
    from fuzzgpu.sass.ptx_async import async_copy

    copy = _parse_ptx_instr(8, 9, "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
                                  "[%r4], [%rd3, {%r5}], [%r6]")
    fam, (acc,) = async_copy(copy, {})  # type: ignore[misc]
    assert fam == "bulk_group" and acc.tensormap and (acc.space, acc.root, acc.size, acc.write) == ("global", "%rd3", 128, False)
    plain = _parse_ptx_instr(8, 9, "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r4], [%rd3], 16, [%r6]")
    assert async_copy(plain, {}) is None  # an mbarrier completes it; no bulk group waits for it


@needs_toolchain
def test_the_default_archs_leave_out_sm_90_and_say_so_a_chosen_sm_90_is_refused():
    from fuzzgpu.errors import UserError

    path = CATALOGUE / "RACE-11-rewrite-in-flight.litmus"
    reports = sass.check_path(path, None)
    assert sorted(r.arch for r in reports) == ["sm_100a", "sm_90a"]
    assert all(any(n.startswith("not checked for sm_90: ") and "tensormap.replace" in n for n in r.notes) for r in reports)
    with pytest.raises(UserError, match="tensormap.replace needs an arch-specific target .sm_90a; class D.; not sm_90"):
        sass.check_path(path, ("sm_90",))

