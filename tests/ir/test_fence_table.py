"""Which fences exist is read from one place, the semantics table (fuzzgpu/semantics.py TABLE): its
rows whose ``ir`` is ``Fence (<sem>)``.  The model's release and acquire patterns, the IR's key in
the table, the litmus builder, every program loader and the SASS checker's fence tokens read it;
the IR layer (below the table) no longer keeps a list of its own."""

from __future__ import annotations

import dataclasses

import pytest

from fuzzgpu import ir, semantics
from fuzzgpu.errors import SourceError
from fuzzgpu.ir import Fence, Scope, Sem
from fuzzgpu.model import ptx

_NOT_A_FENCE = r"fence\.relaxed is not a PTX fence \(use (\w+, )*acq_rel or sc\)"


def test_the_fence_sets_are_the_tables_fence_rows():
    for sem, key in semantics.FENCE_KEYS.items():
        row = semantics.TABLE[key]
        assert row.ir == f"Fence ({sem.value})" and key == f"fence.{sem.value}"
        assert (sem in semantics.RELEASE_FENCE_SEMS) is row.release
        assert (sem in semantics.ACQUIRE_FENCE_SEMS) is row.acquire
    assert set(semantics.MEMORY_FENCE_SEMS) == {Sem.ACQ_REL, Sem.SC}
    # the model's patterns read the same sets (8.8: a release fence then a strong write; a strong
    # read then an acquire fence), Fence-SC order fence.sc alone
    assert ptx.RELEASE_FENCE_SEMS == semantics.RELEASE_FENCE_SEMS
    assert ptx.ACQUIRE_FENCE_SEMS == semantics.ACQUIRE_FENCE_SEMS


def test_a_row_that_names_its_ir_is_a_fence(monkeypatch):
    """Naming the IR in a row is all it takes: the fence sets and ``key_of`` follow."""
    table = dict(semantics.TABLE)
    table["fence.release"] = dataclasses.replace(table["fence.release"], ir="Fence (release)")
    monkeypatch.setattr(semantics, "TABLE", table)
    keys = semantics._fence_keys()
    assert keys[Sem.RELEASE] == "fence.release" and keys[Sem.SC] == "fence.sc"
    assert list(keys) == [s for s in Sem if s in keys]  # Sem order


def test_key_of_a_fence_is_its_row():
    assert semantics.key_of(Fence(Sem.SC, Scope.GPU)) == "fence.sc"
    assert semantics.key_of(Fence(Sem.ACQ_REL, Scope.CTA)) == "fence.acq_rel"
    with pytest.raises(ir.ProgramError, match=_NOT_A_FENCE):
        semantics.key_of(Fence(Sem.RELAXED, Scope.GPU))


@pytest.mark.parametrize("sem", [s for s in Sem if s not in semantics.FENCE_KEYS])
def test_a_fence_the_table_does_not_model_is_one_line(sem):
    msg = semantics.unknown_fence(sem)
    assert msg is not None and "\n" not in msg and msg.startswith(f"fence.{sem.value} ")
    if f"fence.{sem.value}" in semantics.TABLE:  # a PTX fence whose row names no IR
        assert "has no IR in fuzzgpu's semantics table" in msg
    else:
        assert "is not a PTX fence" in msg


def _litmus(fence: str) -> str:
    return (f"PTX F\n{{ x=0; }}\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.relaxed.gpu x, 1 | ld.relaxed.gpu r0, x ;\n"
            f" {fence} | ;\nexists (P1:r0 == 0)\n")


def test_the_litmus_builder_refuses_a_fence_the_table_does_not_know():
    from fuzzgpu.litmus import parse

    with pytest.raises(SourceError, match=_NOT_A_FENCE) as e:
        parse(_litmus("fence.relaxed.gpu"), "f.litmus")
    assert "f.litmus:5" in str(e.value) and "\n" not in str(e.value).strip()
    assert parse(_litmus("fence.acq_rel.gpu")).threads[0].code[1] == Fence(Sem.ACQ_REL, Scope.GPU)


def _json_program(sem: str) -> dict:
    return {"schema": "fuzzgpu.program", "version": 1, "name": "F", "arch": "PTX",
            "locations": [{"name": "x"}],
            "threads": [{"name": "P0", "code": [{"op": "fence", "sem": sem, "scope": "gpu"}]}]}


def test_every_loader_refuses_a_fence_the_table_does_not_know():
    """ir.validate no longer knows the fences (the IR sits below the table): semantics.checked does,
    and the loaders above the IR call it -- the JSON program, the codegen entry, the model."""
    from fuzzgpu import codegen, model

    p = ir.program_from_json(_json_program("relaxed"))  # the IR's own checks pass
    with pytest.raises(ir.ProgramError, match="P0, instruction 0 \\(Fence\\): " + _NOT_A_FENCE):
        semantics.checked(p)
    assert semantics.unknown_instructions(p) and not semantics.unknown_instructions(
        ir.program_from_json(_json_program("sc")))
    with pytest.raises(ir.ProgramError, match=_NOT_A_FENCE):
        codegen.harness_source(p)
    with pytest.raises(model.Unsupported, match=_NOT_A_FENCE):
        model.analyse(p)


def test_the_corpus_refuses_a_fence_the_table_does_not_know():
    import copy

    from fuzzgpu import properties
    from fuzzgpu.backends.base import RunConfig
    from fuzzgpu.backends.sim import SimBackend
    from fuzzgpu.corpus import CorpusError, make_entry, validate_entry

    p = semantics.checked(ir.program_from_json(_json_program("sc")))
    b, cfg = SimBackend(), RunConfig(instances=100)
    h = b.run(p, cfg)
    e = make_entry(p, properties.check("model", p, h), h, b, cfg)
    assert validate_entry(e, "<e>") == p
    bad = copy.deepcopy(e)
    bad["program"]["threads"][0]["code"][0]["sem"] = "relaxed"
    with pytest.raises(CorpusError, match="<e>: field 'program': P0, instruction 0 \\(Fence\\): " + _NOT_A_FENCE):
        validate_entry(bad, "<e>")


@pytest.mark.parametrize("text,tokens", [
    # ptxas 13.0 -arch=sm_90, nvdisasm -c (the fence between ld.relaxed.gpu and st.relaxed.gpu):
    ("fence.sc.gpu", ("MEMBAR.SC.GPU", "CCTL.IVALL")),
    ("fence.acq_rel.gpu", ("MEMBAR.ALL.GPU", "CCTL.IVALL")),  # MEMBAR.ALL.GPU ERRBAR CGAERRBAR CCTL.IVALL
    ("fence.acq_rel.cta", ("MEMBAR.ALL.CTA",)),
    ("fence.release.gpu", ("MEMBAR.ALL.GPU",)),  # MEMBAR.ALL.GPU ERRBAR CGAERRBAR
    ("fence.release.cluster", ("MEMBAR.ALL.GPU",)),
    ("fence.release.cta", ("MEMBAR.ALL.CTA",)),
    ("fence.release.sys", ("MEMBAR.ALL.SYS",)),
    ("fence.acquire.gpu", ("CCTL.IVALL",)),
    ("fence.acquire.sys", ("CCTL.IVALL",)),
    ("fence.acquire.cta", ()),  # no SASS: a point that orders with no token is "not checked"
    ("fence.mbarrier_init.release.cluster", ()),
])
def test_the_sass_of_a_fence_is_its_directions(text, tokens):
    from fuzzgpu.sass import ptx_parser

    sync, toks = ptx_parser._classify_ptx_sync(ptx_parser._parse_ptx_instr(0, 0, text), None)
    assert sync is not None and toks == tokens
    row = semantics.TABLE[ptx_parser._table_key(ptx_parser._parse_ptx_instr(0, 0, text)) or ""]
    assert (sync.release, sync.acquire) == (row.release, row.acquire)
