"""The static backend checks a ``tcgen05.fence`` program on the arch that has the instruction (issue 27,
item 7): compiled for the profile's sm_90 it stopped at the kernel's ``#error`` and 12% of the default
profile was "not covered", with ``UserError: nvcc: ...`` -- a Python class name -- in the report.
Real nvcc and disassembler runs: skipped without them."""

from __future__ import annotations

import io

import pytest

from fuzzgpu.backends.static import TCGEN05_ARCH, StaticBackend
from fuzzgpu.errors import UserError
from fuzzgpu.ir import Placement, Program, Thread, Tcgen05Fence, validate
from fuzzgpu.sass import find_tool

needs_toolchain = pytest.mark.skipif(not (find_tool("nvcc") and (find_tool("nvdisasm") or find_tool("cuobjdump"))),
                                     reason="needs nvcc and nvdisasm/cuobjdump")

TC = validate(Program("tc", (Thread("P0", Placement(), (Tcgen05Fence("before_thread_sync"),)),)))


def test_a_tcgen05_program_is_checked_for_sm100a_and_others_for_the_backend_arch():
    b = StaticBackend("sm_90")
    assert b.arch_for(TC) == TCGEN05_ARCH == "sm_100a"
    plain = validate(Program("p", (Thread("P0", Placement(), ()),)))
    assert b.arch_for(plain) == "sm_90"
    assert StaticBackend("sm_100a").arch_for(TC) == "sm_100a"


@needs_toolchain
def test_the_static_backend_compiles_a_tcgen05_draw_on_an_sm90_profile():
    h = StaticBackend("sm_90").run(TC)  # it raised UserError("nvcc: ... #error ... exists only on sm_100a")
    assert dict(h.meta)["arch"] == "sm_100a"


@needs_toolchain
def test_default_profile_tcgen05_draws_are_covered_on_static():
    """Every draw of the default profile's generator with a tcgen05.fence compiles on the static
    backend of the profile's arch (a few dozen draws: no wall-clock dependence)."""
    from hypothesis import HealthCheck, given, settings

    from fuzzgpu import strategies
    from fuzzgpu.campaign import load_profile

    prof = load_profile("all")
    b = StaticBackend(prof.static_arch)
    seen: list[str] = []

    @settings(max_examples=150, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(strategies.weighted(prof.shapes, prof.options))
    def each(p: Program) -> None:
        if any(isinstance(i, Tcgen05Fence) for t in p.threads for i in t.code) and len(seen) < 8:
            try:
                b.run(p)
            except UserError as e:
                raise AssertionError(f"{p.name}: {e}") from None
            seen.append(p.name)

    each()
    assert seen, "no tcgen05 draw in 150 examples of the default profile"


def test_not_covered_reasons_carry_no_python_class_name(tmp_path):
    from fuzzgpu import model
    from fuzzgpu.backends.sim import SimBackend
    from fuzzgpu.campaign import Campaign, load_profile

    c = Campaign(load_profile("all"), SimBackend(), tmp_path / "c", out=io.StringIO(), live=False)
    c._note_not_covered("HANDOFF", UserError("nvcc: kernel.cu(3): error: something"))
    c._note_not_covered("HANDOFF", model.Unsupported("too large"))
    assert set(c.state.not_covered) == {"HANDOFF: nvcc: kernel.cu(3): error: something",
                                        "HANDOFF: the oracle does not cover it: too large"}


def test_not_covered_reasons_name_the_program_once_and_what_could_not_be_done(tmp_path):
    """A static campaign's draw the static kernels cannot express was listed as "HANDOFF: HANDOFF:
    cannot run on the GPU: ..." (a hostile review, 2026-12-05): the static backend runs nothing on
    a GPU, and the shape was named twice."""
    from fuzzgpu.backends.sim import SimBackend
    from fuzzgpu.campaign import Campaign, load_profile
    from fuzzgpu.codegen import Unrunnable

    c = Campaign(load_profile("all"), SimBackend(), tmp_path / "c", out=io.StringIO(), live=False)
    c._note_not_covered("HANDOFF", Unrunnable("HANDOFF", ["P1:4 wgmma.mma_async"], "has no static kernels"))
    c._note_not_covered("HANDOFF", Unrunnable("HANDOFF", ["tcgen05"]))
    assert set(c.state.not_covered) == {"HANDOFF: has no static kernels: P1:4 wgmma.mma_async",
                                        "HANDOFF: cannot run on the GPU: tcgen05"}
