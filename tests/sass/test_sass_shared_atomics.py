"""Atomics on ``.shared`` data that ``ATOMS`` has no instruction for (``atom.shared.add.f32``, ``.f64``,
``max.u64``, ``red.shared.add.noftz.f16``): ptxas 13.0 emits, on sm_90a and sm_100a alike, an ``LDS`` of
the word and an ``ATOMS.CAST.SPIN`` (``ATOMS.CAS`` for 16 bits) loop.  Before this was modelled the
``LDS`` had no PTX ``ld.shared`` to account for it: "1 SASS LDS operation(s) with no PTX LDS", the
function not fully checked (the hostile review of 2026-12-05: CUTLASS example 77's reference kernel,
``atomicAdd`` on a ``__shared__ float``).  Each is now the atom's expansion, told by its source line,
and checked as the atomic access; ``atom.shared.add.u32`` is ``ATOMS.ADD``, one access, as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu import sass
from fuzzgpu.sass.ptx_parser import _event, _parse_ptx_instr

from sass_cli import own_cache  # noqa: F401 -- the autouse fixture

DATA = Path(__file__).resolve().parents[1] / "data" / "sass"
ARCHS = ("sm_90a", "sm_100a")

needs_toolchain = pytest.mark.skipif(
    sass.find_tool("nvcc") is None or sass.find_tool("nvdisasm") is None,
    reason="needs nvcc and nvdisasm (pip install nvidia-cuda-nvdisasm)")


@pytest.mark.parametrize("text", ["atom.shared.add.f32 %f2, [%r9], %f1", "atom.shared.add.f64 %fd2, [%r8], %fd1",
                                  "atom.shared.max.u64 %rd9, [%r8], %rd8", "red.shared.add.noftz.f16 [%r5], %rs2",
                                  "red.release.cta.shared::cta.add.f32 [%r5], %f2", "atom.shared.and.b64 %rd1, [%r2], %rd3"])
def test_a_shared_atomic_atoms_lacks_is_an_lds_and_an_atoms_loop(text):
    ev = _event(_parse_ptx_instr(0, 1, text), {}, [])
    assert ev is not None and ev.mem is not None and ev.mem.space == "shared" and ev.mem_class == "ATOMS"
    assert dict(ev.parts).keys() == {"ATOMS", "LDS"}
    assert all(m == ev.mem for _, m in ev.parts)  # every part is the atomic access itself


@pytest.mark.parametrize("text", ["atom.shared.add.u32 %r1, [%r2], %r3", "red.shared.min.s32 [%r2], %r3",
                                  "atom.shared.exch.b64 %rd1, [%r2], %rd3", "atom.shared.cas.b64 %rd1, [%r2], %rd3, %rd4",
                                  "atom.shared.inc.u32 %r1, [%r2], %r3"])
def test_a_shared_atomic_atoms_has_is_one_access(text):
    ev = _event(_parse_ptx_instr(0, 1, text), {}, [])
    assert ev is not None and ev.mem_class == "ATOMS" and ev.parts == ()


def _functions(arch: str, listing: str | None = None) -> dict[str, sass.FunctionReport]:
    rep = sass.analyse((DATA / f"shared_atomics.{arch}.ptx").read_text(),
                       listing or (DATA / f"shared_atomics.{arch}.sass").read_text(), arch, "shared_atomics.cu")
    return {fn.short_name: fn for fn in rep.functions}


@pytest.mark.parametrize("arch", ARCHS)
def test_the_lds_of_the_loop_is_the_atoms_and_the_kernels_fully_checked(arch):
    """ptxas 13.0's SASS of tests/data/sass/shared_atomics.cu (kept with its PTX): every function
    fully checked and clean, each emulated atom's note naming its LDS and its ATOMS."""
    fns = _functions(arch)
    assert set(fns) == {"fadd", "dadd", "umax64", "hred", "iadd"}
    for name, fn in fns.items():
        assert not fn.findings and not fn.unchecked, (name, fn.findings, fn.unchecked)
    for name, lds, atoms in (("fadd", "LDS@0100", "ATOMS.CAST.SPIN@0120"), ("dadd", "LDS.64@0100", "ATOMS.CAST.SPIN.64@0120"),
                             ("umax64", "LDS.64@0100", "ATOMS.CAST.SPIN.64@0140"), ("hred", "LDS@0150", "ATOMS.CAS@0180")):
        note = next(n for n in fns[name].notes if "is ptxas's expansion into" in n)
        assert f"{lds}, {atoms}" in note, note
    assert not [n for n in fns["iadd"].notes if "expansion" in n]


def test_the_loops_lds_moved_above_the_barrier_is_a_finding():
    """sm_100a's ``fadd`` with the loop's ``LDS`` (and its row, the atom's line) swapped with the
    ``BAR.SYNC`` before it, as a hoisting ptxas would be: the atom's access crossed ``bar.sync``, a
    finding (before, that load had no PTX operation and was only "not checked")."""
    text = (DATA / "shared_atomics.sm_100a.sass").read_text()
    start = text.index(".text._Z4faddPKfPf:")
    end = text.find(".text.", start + 1)
    fn_text = text[start:end if end > 0 else len(text)]
    lines = fn_text.split("\n")
    bar = next(i for i, x in enumerate(lines) if x.endswith("/*00b0*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;"))
    lds = next(i for i, x in enumerate(lines) if x.endswith("/*0100*/                   LDS R8, [R4+UR4] ;"))
    row_bar, row_atom = lines[bar - 1:bar], lines[lds - 2:lds]
    assert row_bar[0].endswith("line 11") and row_atom[1].endswith("line 12") and "sm_20_atomic_functions" in row_atom[0]
    moved = (lines[:bar - 1] + row_atom + ["        /*00b0*/                   LDS R8, [R4+UR4] ;"] + lines[bar + 1:lds - 2]
             + row_bar + ["        /*0100*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;"] + row_atom + lines[lds + 1:])
    fn = _functions("sm_100a", text.replace(fn_text, "\n".join(moved)))["fadd"]
    # (the barrier now follows line 12's LDG too: that one is hoisted above it as well)
    assert sorted((f.direction, f.op_sass, f.sync_sass) for f in fn.findings) == [
        (sass.HOISTED, "LDG.E R3, desc[UR6][R2.64]", "BAR.SYNC.DEFER_BLOCKING 0x0"),
        (sass.HOISTED, "LDS R8, [R4+UR4]", "BAR.SYNC.DEFER_BLOCKING 0x0")], (fn.findings, fn.unchecked)
    (f,) = [f for f in fn.findings if f.op_sass.startswith("LDS")]
    assert f.op_ptx.startswith("atom.shared.add.f32") and f.sync_ptx == "bar.sync 0" and f.verdict == sass.FORBIDDEN
    assert not fn.unchecked


@needs_toolchain
@pytest.mark.parametrize("arch", ARCHS)
def test_the_kernels_compiled_now_are_fully_checked(arch):
    """The toolchain of this machine on the same source: no function left "not fully checked"."""
    (rep,) = sass.check_path(DATA / "shared_atomics.cu", (arch,))
    assert len(rep.functions) == 5
    assert all(not fn.unchecked and not fn.findings for fn in rep.functions), [(fn.short_name, fn.unchecked) for fn in rep.functions]
