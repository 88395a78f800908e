"""Issue 32, class L: an ld/st's size (``.u8``/``.u16``; 32 bits by default), in the IR, the litmus
dialect (printed and parsed back), the validation of what a narrow access may meet, and the harness."""

from __future__ import annotations

import pytest

from fuzzgpu.codegen import generate_static, harness_source
from fuzzgpu.codegen.values import value_plan
from fuzzgpu.errors import UserError
from fuzzgpu.ir import Load, ProgramError, Store, program_from_json, program_to_json
from fuzzgpu.litmus import parse
from fuzzgpu.litmus.printer import format_program

from nvcc import needs_nvcc

TEXT = """PTX W
{{
x=0;
f={init};
}}
 P0@cta 0,gpu 0      | P1@cta 1,gpu 0  ;
 st.weak x, 1        | {load} ;
 {store} | ld.weak r2, x   ;
exists (P1:r1 == 1)
"""


def prog(load: str = "ld.acquire.gpu.u16 r1, f", store: str = "st.release.gpu f, 1", init: int = 0):
    return parse(TEXT.format(load=load, store=store, init=init))


def test_widths_parse_print_and_round_trip():
    p = prog("ld.acquire.gpu.u8 r1, f", "st.release.gpu.u16 f, 1")
    ld, st = p.threads[1].code[0], p.threads[0].code[1]
    assert isinstance(ld, Load) and ld.width == 8 and isinstance(st, Store) and st.width == 16
    text = format_program(p)
    assert "ld.acquire.gpu.u8 r1, f" in text and "st.release.gpu.u16 f, 1" in text
    assert parse(text) == p
    assert program_from_json(program_to_json(p)) == p
    assert "width" not in str(program_to_json(prog("ld.acquire.gpu r1, f"))["threads"])  # 32: the default, not written
    assert prog("ld.acquire.gpu.u32 r1, f") == prog("ld.acquire.gpu r1, f")


@pytest.mark.parametrize("load, store, init, why", [
    ("ld.acquire.gpu.u16 r1, f", "st.release.gpu f, 70000", 0, "accessed in 16 bits"),
    ("ld.acquire.gpu.u8 r1, f", "st.release.gpu f, 1", 300, "must start at 0..255"),
    ("ld.acquire.gpu.u16 r1, f", "atom.add r9, f, 1", 0, "only ld and st"),
    ("ld.acquire.gpu r1, f", "st.release.gpu.u16 f, 65536", 0, "immediate 0..65535"),
    ("ld.global.nc.u16 r1, f", "st.release.gpu f, 1", 0, "ld.global.nc takes no other qualifier"),
    ("ld.async.u16 r1, f", "st.release.gpu f, 1", 0, "for generic ld and st"),
    ("ld.acquire.gpu r1, f", "red.add.u16 f, 1", 0, "unknown qualifier"),
])
def test_what_a_narrow_access_may_meet(load, store, init, why):
    with pytest.raises((UserError, ProgramError)) as e:
        prog(load, store, init)
    assert why in str(e.value)


def test_the_harness_emits_the_sizes_and_primes_exact_words():
    p = prog()
    src = harness_source(p)[0]
    assert "ld.acquire.gpu.global.u16 %0" in src and "st.release.gpu.global.u32" in src
    assert not value_plan(p).codec.tagged  # a 16-bit st would keep another launch's tag in the high half
    assert value_plan(prog("ld.acquire.gpu r1, f")).codec.tagged
    assert "ld.acquire.gpu.global.u16" in generate_static(p)


@needs_nvcc
def test_the_static_sass_check_maps_the_narrow_accesses_one_to_one():
    """ptxas's ``LDG.E.U16.STRONG.GPU`` pairs with the PTX ``ld.acquire.gpu.global.u16`` (sass_parser reads
    the width): the SASS check of a class-L program is as complete as the same-size one's."""
    import subprocess
    import sys
    from pathlib import Path

    here = Path(__file__).resolve().parents[1] / "litmus" / "race-mixed"
    r = subprocess.run([sys.executable, "-m", "fuzzgpu", "sass", "--arch", "sm_90", "--no-progress",
                        str(here / "RACE-19-mixed-size-flag.litmus"), str(here / "RACE-19-narrow-store-wide-load.litmus")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("fully checked, clean") == 2 and "3/3 memory operations" in r.stdout, r.stdout
