"""Atomics at a generic address (``atom.cas.b64 [%rd]`` with no state space): a generic address may fall
in the shared window (PTX ISA, Generic Addressing), and ptxas 13.0 implements the one PTX instruction
for both -- an ``ATOM.E`` whose predicate says whether the global path performed it, then the shared
window's ``LD.E``/``ST.E`` (64-bit cas and exch), or an ``LDS``, an ``ATOMS.CAST.SPIN`` loop and an
``LD.E``/``ST.E`` (64-bit add and max, add.f32).  Before these were modelled, the extra accesses had
no PTX operation to account for them: DeepEP's ``internode`` and ``internode_ll`` (``atomicCAS`` on
an ``unsigned long long*`` in ``ibgda_device.cuh``) were "not fully checked" in 72 of 85 and 41 of
54 functions, and the kernels below in 6 of 7.  Each is now the atom's expansion, told by its source
line, and checked as the atomic access: moved across a fence, it is a finding."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu import sass
from fuzzgpu.sass.ptx_parser import _event, _parse_ptx_instr

from sass_cli import own_cache  # noqa: F401 -- the autouse fixture

DATA = Path(__file__).resolve().parents[1] / "data" / "sass"

needs_toolchain = pytest.mark.skipif(
    sass.find_tool("nvcc") is None or sass.find_tool("nvdisasm") is None,
    reason="needs nvcc and nvdisasm (pip install nvidia-cuda-nvdisasm)")


@pytest.mark.parametrize("text", ["atom.cas.b64 %rd1, [%rd2], %rd3, %rd4", "atom.add.f32 %f1, [%rd1], %f2",
                                  "red.add.u64 [%rd2], %rd3", "atom.release.gpu.exch.b64 %rd1, [%rd2], %rd3"])
def test_a_generic_atomic_stands_for_its_global_path_and_the_shared_windows(text):
    ev = _event(_parse_ptx_instr(0, 1, text), {}, [])
    assert ev is not None and ev.mem is not None and ev.mem.space == "generic"
    assert ev.mem_class == "ATOM"
    assert dict(ev.parts).keys() == {"ATOM", "LD", "ST", "LDS", "ATOMS"}
    assert all(m == ev.mem for _, m in ev.parts)  # every part is the atomic access itself


@pytest.mark.parametrize("text", ["atom.global.cas.b64 %rd1, [%rd2], %rd3, %rd4", "atom.shared.cas.b64 %rd1, [%r2], %rd3, %rd4",
                                  "red.global.add.u64 [%rd2], %rd3", "ld.u64 %rd1, [%rd2]", "st.u64 [%rd2], %rd1"])
def test_an_atomic_with_a_state_space_and_a_generic_load_or_store_are_one_access(text):
    ev = _event(_parse_ptx_instr(0, 1, text), {}, [])
    assert ev is not None and ev.parts == ()


def _functions(sass_text: str) -> dict:
    ptx = (DATA / "generic_atomics.sm_90.ptx").read_text()
    (rep,) = [sass.analyse(ptx, sass_text, "sm_90", "generic_atomics.cu")]
    return {fn.short_name: fn for fn in rep.functions}


def test_ptxas_s_expansions_are_accounted_for_and_the_kernels_fully_checked():
    """ptxas 13.0's SASS of tests/data/sass/generic_atomics.cu (sm_90, kept with its PTX): every
    function fully checked and clean, each atom's note naming the SASS it became."""
    fns = _functions((DATA / "generic_atomics.sm_90.sass").read_text())
    assert len(fns) == 7
    for name, fn in fns.items():
        assert not fn.findings and not fn.unchecked, (name, fn.findings, fn.unchecked)
    note = next(n for n in fns["cas64"].notes if "is ptxas's expansion into" in n)
    assert "ATOM.E.CAS.64.STRONG.GPU@0060, LD.E.64@0090, ST.E.64@0100" in note
    note = next(n for n in fns["add64"].notes if "is ptxas's expansion into" in n)
    assert "LDS.64@0170, ATOMS.CAST.SPIN.64@01a0, LD.E.64@01f0, ST.E.64@0220" in note


def test_the_shared_windows_load_moved_above_a_fence_is_a_finding():
    """The same SASS with the fallback's ``LD.E.64`` (the CAS's read in the shared window) moved above
    ``fence.acq_rel.gpu``'s MEMBAR, as a hoisting ptxas would be: the atom's access crossed the fence,
    a forbidden move (before, that load had no PTX operation and was only "not checked")."""
    text = (DATA / "generic_atomics.sm_90.sass").read_text()
    fn_text = text[text.index(".text.fence_then_cas64:"):]
    moved = fn_text.replace("        /*0060*/                   LDC.64 R10, c[0x0][0x228] ;",
                            "        /*0060*/                   LD.E.64 R12, [R2] ;", 1)
    moved = moved.replace("        /*0110*/                   LD.E.64 R12, [R2] ;",
                          "        /*0110*/                   LDC.64 R10, c[0x0][0x228] ;", 1)
    assert moved != fn_text and moved.count("LD.E.64 R12, [R2]") == 1
    fn = _functions(text.replace(fn_text, moved))["fence_then_cas64"]
    assert [(f.verdict, f.direction, f.op_sass) for f in fn.findings] == [(sass.FORBIDDEN, sass.HOISTED, "LD.E.64 R12, [R2]")], fn.findings
    assert fn.findings[0].op_ptx.startswith("atom.cas.b64")


@needs_toolchain
@pytest.mark.parametrize("arch", ["sm_90", "sm_100a"])
def test_the_kernels_compiled_now_are_fully_checked(arch):
    """The toolchain of this machine on the same source: no function left "not fully checked"."""
    (rep,) = sass.check_path(DATA / "generic_atomics.cu", (arch,))
    assert len(rep.functions) == 7
    assert all(not fn.unchecked and not fn.findings for fn in rep.functions), [(fn.short_name, fn.unchecked) for fn in rep.functions]
