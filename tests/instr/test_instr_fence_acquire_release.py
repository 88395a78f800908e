"""``fence.acquire.<scope>`` and ``fence.release.<scope>`` end to end (docs/architecture.md, "How to
add an instruction", the table-only path): the IR already carries them (``Fence(sem, scope)``), the
litmus fence family spells any ``fence.<sem>.<scope>``, codegen emits ``fence.{sem}.{scope}``, so
naming their IR in their rows of the semantics table is the whole instruction.

PTX ISA 8.6+ (sm_90), membar/fence: 'fence{.sem}.scope; .sem = {.sc, .acq_rel, .acquire,
.release}'.  PTX ISA 9.1, 8.8 Release and Acquire Patterns: a release pattern is '... a release or
acquire-release memory fence followed by a strong write on M in program order'; an acquire pattern
'... a strong read on M followed by an acquire memory fence in program order'."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu import ir, model, sass, semantics
from fuzzgpu.ir import Fence, Scope, Sem
from fuzzgpu.litmus import format_instruction, format_program, parse, parse_file

from paths import catalogue_rows

LITMUS = Path(__file__).resolve().parents[1] / "litmus" / "fence-acquire-release"
CAP = Path(__file__).resolve().parents[1] / "kernels" / "captured"


# -- the table rows ---------------------------------------------------------------------------

@pytest.mark.parametrize("sem,release,acquire", [(Sem.ACQUIRE, False, True), (Sem.RELEASE, True, False)])
def test_table_row(sem, release, acquire):
    ins = Fence(sem, Scope.GPU)
    e = semantics.of(ins)
    assert e is semantics.TABLE[f"fence.{sem.value}"] and e.ir == f"Fence ({sem.value})"
    assert e.source == semantics.ISA and e.rule == "fence"
    assert semantics.directions(ins) == (release, acquire)
    assert (sem in semantics.RELEASE_FENCE_SEMS, sem in semantics.ACQUIRE_FENCE_SEMS) == (release, acquire)
    assert sem not in semantics.MEMORY_FENCE_SEMS  # one direction each: not "a memory fence" of both
    assert semantics.unknown_fence(sem) is None


def test_only_fence_sc_is_in_fence_sc_order():
    from fuzzgpu.model import ptx

    assert set(ptx.FENCE_SEMS) == {Sem.ACQ_REL, Sem.SC}
    assert Sem.RELEASE in ptx.RELEASE_FENCE_SEMS and Sem.ACQUIRE in ptx.ACQUIRE_FENCE_SEMS


# -- the litmus spellings ---------------------------------------------------------------------

def _one(line: str) -> ir.Instruction:
    text = f"PTX T\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n {line} ;\n st.weak x, 1 ;\nexists (x == 1)\n"
    return parse(text).threads[0].code[0]


@pytest.mark.parametrize("scope", list(Scope))
@pytest.mark.parametrize("sem", [Sem.ACQUIRE, Sem.RELEASE])
def test_spellings_parse_and_print(sem, scope):
    spelling = f"fence.{sem.value}.{scope.value}"
    ins = _one(spelling)
    assert ins == Fence(sem, scope)
    assert format_instruction(ins) == spelling
    assert ir.instruction_from_json(ir.instruction_to_json(ins)) == ins


def test_a_fence_that_is_not_one_still_names_the_fences():
    from fuzzgpu.errors import SourceError

    with pytest.raises(SourceError, match=r"fence\.relaxed is not a PTX fence \(use acquire, release, acq_rel or sc\)"):
        _one("fence.relaxed.gpu")


# -- the litmus tests: verdicts written from the ISA ------------------------------------------

def _rows() -> list[dict[str, str]]:
    return catalogue_rows(LITMUS)


def test_catalogue_shape():
    rows = _rows()
    assert sorted(r["path"] for r in rows) == sorted(f.name for f in LITMUS.glob("*.litmus"))
    assert {r["verdict"] for r in rows} == {"forbidden", "allowed", "sc"}
    for r in rows:
        p = parse_file(LITMUS / r["path"])
        text = " ".join(p.comments)
        assert "PTX ISA" in text and "Verdict " + r["verdict"] in text and "'" in text, r["path"]
        assert any(isinstance(i, Fence) and i.sem in (Sem.ACQUIRE, Sem.RELEASE) for t in p.threads for i in t.code)
        assert parse(format_program(p)) == p


@pytest.mark.parametrize("row", _rows(), ids=lambda r: r["path"])
def test_verdict(row):
    from test_catalogues import witness

    p = parse_file(LITMUS / row["path"])
    assert p.condition is not None and p.condition.quantifier == row["quantifier"]
    assert model.judge(p, witness(p)).verdict == row["verdict"]
    assert model.check_condition(p).witness_reachable == (row["witness_reachable"] == "true")


# -- code generation and the SASS checker -----------------------------------------------------

def test_the_gpu_harness_emits_it():
    from fuzzgpu import codegen

    p = parse_file(LITMUS / "FAR-MP.litmus")
    assert not codegen.unrunnable_reasons(p)
    src, _ = codegen.harness_source(p)
    assert 'fence.release.gpu;' in src and 'fence.acquire.gpu;' in src


def test_an_arch_before_sm_90_is_refused_with_the_isa_reason():
    """fence.acquire/.release are sm_90+ (PTX ISA 8.6, membar/fence).  ptxas 13.0 takes them for
    sm_80 and writes a cubin nvdisasm refuses ("Illegal instruction found": ``fuzzgpu sass --arch
    sm_80`` said only that); the static kernels for an arch refuse them, and the source's device
    pass for an older arch stops on an #error naming the fence."""
    from fuzzgpu import codegen

    p = parse_file(LITMUS / "FAR-MP.litmus")
    with pytest.raises(codegen.Unrunnable, match=r"fence.release needs sm_90 or later .*not sm_80"):
        codegen.generate_static(p, "sm_80")
    assert "fence.release.gpu" in codegen.generate_static(p, "sm_90")
    src = codegen.generate_static(p)
    assert "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900" in src and '#error "fuzzgpu: fence.release needs sm_90' in src
    assert codegen.emit.ONE_WAY_FENCE_SM == 90
    assert set(semantics.ONE_WAY_FENCE_SEMS) == {Sem.ACQUIRE, Sem.RELEASE}


@pytest.mark.skipif(__import__("shutil").which("nvcc") is None, reason="nvcc not on PATH")
def test_nvcc_for_sm_80_names_the_fence(tmp_path):
    import subprocess

    from fuzzgpu import codegen

    cu = tmp_path / "f.cu"
    cu.write_text(codegen.generate_static(parse_file(LITMUS / "FAR-MP.litmus")))
    r = subprocess.run(["nvcc", "-arch=sm_80", "-cubin", "-o", str(tmp_path / "f.cubin"), str(cu)],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "fence.release needs sm_90 or later" in r.stderr


@pytest.mark.parametrize("text,release,acquire", [("fence.release.gpu", True, False), ("fence.acquire.cluster", False, True)])
def test_sass_checker_reads_the_same_row(text, release, acquire):
    sync = sass.sync_of_text(text + ";")
    assert sync is not None and (sync.release, sync.acquire) == (release, acquire)


def test_sass_of_the_harness_is_checked():
    """FAR-MP's harness, compiled by ptxas 13.0 for sm_90 (``fuzzgpu sass --keep``): fence.release.gpu
    is MEMBAR.ALL.GPU, fence.acquire.gpu CCTL.IVALL; both map, nothing is left "not checked"."""
    rep = sass.analyse((CAP / "FAR-MP.sm_90.ptx").read_text(), (CAP / "FAR-MP.sm_90.sass").read_text(), "sm_90", "FAR-MP")
    assert rep.findings == () and rep.unchecked == ()
    assert len(rep.functions) == 2


@pytest.mark.gpu
def test_far_mp_on_the_gpu():
    """On a GPU: FAR-MP's forbidden outcome never appears (a finding would be a hardware or model bug)."""
    from fuzzgpu.backends.base import RunConfig
    from fuzzgpu.backends.cuda import CudaBackend

    p = parse_file(LITMUS / "FAR-MP.litmus")
    hist = CudaBackend().run(p, RunConfig(instances=100_000))
    assert hist.instances > 0
    assert not any(dict(o).get("P1:r0") == 1 and dict(o).get("P1:r1") == 0 for o, _ in hist.counts)
