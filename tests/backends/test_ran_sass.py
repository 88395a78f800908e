"""The SASS check of the harness that ran (fuzzgpu.backends.ran_sass): the cubin a run executed, checked
against the PTX it was assembled from, each finding attributed to a role of the program, the
harness's own code, or between two roles; a run that logged a forbidden outcome carries it."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings

from fuzzgpu import codegen, strategies
from fuzzgpu.backends.base import Histogram
from fuzzgpu.backends.cuda import Compiled, HarnessBuilder, compile_programs
from fuzzgpu.backends.ran_sass import check_ran, order_kept, ran_sass_lines
from fuzzgpu.evidence import Evidence
from fuzzgpu.ir import Program
from fuzzgpu.litmus import parse_file
from fuzzgpu.profiles import load_profile
from fuzzgpu.sass import find_tool
from paths import LITMUS, ROOT  # noqa: E402 -- tests/paths.py

needs_toolchain = pytest.mark.skipif(not (find_tool("nvcc") and find_tool("nvdisasm")), reason="needs nvcc and nvdisasm")

#: lines of a harness module that are the harness's own code, never a role's
HARNESS_LINES = ("fz_stress(", "fz_pre_stress(", "atomicAdd(ctlg", "resc[", "fz_gdelay(", "fz_params(", "__syncthreads();")


def litmus(rel: str) -> Program:
    return parse_file(str(LITMUS / rel))


def lines_of(source: str, role: int) -> list[str]:
    text = source.splitlines()
    return [text[n - 1] for first, last, r in codegen.role_regions(source) if r == role for n in range(first, last + 1)]


def check_regions(programs: list[Program]) -> None:
    source, _ = codegen.generate_module(programs)
    text = source.splitlines()
    regions = codegen.role_regions(source)
    inside = {n for first, last, _ in regions for n in range(first, last + 1)}
    for n in inside:
        assert not any(h in text[n - 1] for h in HARNESS_LINES), text[n - 1]
    for first, last, role in regions:
        assert first <= last and (role == codegen.ALL_ROLES or role >= 0)
        if role == codegen.ALL_ROLES:
            assert first == last and codegen.role_lines.ALL_ROLES_MARK in text[first - 1]
    # every role with code has its lines, and the program's memory operations are in them
    for p in programs:
        for k, t in enumerate(p.threads):
            if t.code:
                assert any(r == k for _, _, r in regions), (p.name, k)


def test_role_regions_hold_each_roles_code_and_nothing_of_the_harness() -> None:
    mp, hoist = litmus("core/MP-relacq-gpu.litmus"), litmus("gpu-pdl/PDL-hoist-nc.litmus")
    check_regions([mp, hoist])
    source, _ = codegen.generate_module([hoist])
    consumer = "".join(lines_of(source, 1))
    assert "griddepcontrol.wait" in consumer and "ld.global.nc" in consumer  # P1 of PDL-hoist-nc
    assert "griddepcontrol.wait" not in "".join(lines_of(source, 0))


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(strategies.weighted(load_profile("all").shapes, load_profile("all").options))
def test_role_regions_of_drawn_programs(p: Program) -> None:
    if codegen.unrunnable_reasons(p):
        return
    check_regions([p])


@needs_toolchain
def test_the_nc_hoist_of_the_flashmla_class_is_the_programs() -> None:
    """PDL-hoist-nc: ptxas hoists P1's ld.global.nc above its griddepcontrol.wait in the harness too
    (a permitted hazard: .nc is outside the memory model, docs/sass.md); the finding is role 1's."""
    c = compile_programs([litmus("gpu-pdl/PDL-hoist-nc.litmus")], "sm_90", batch=1, jobs=1, use_cache=False)[0]
    r = check_ran(c, litmus("gpu-pdl/PDL-hoist-nc.litmus"))
    assert [(f["role"], f["check"], f["direction"]) for f in r.program] == [(1, "crossing", "hoisted above")]
    assert "ld.global.nc" in r.program[0]["op_ptx"] and "griddepcontrol.wait" in r.program[0]["sync_ptx"]
    assert order_kept({"ran_sass": r.to_meta()}) is False


@needs_toolchain
def test_a_kept_order_is_said_only_when_fully_checked() -> None:
    c = compile_programs([litmus("core/SB-fence-sc.litmus")], "sm_90", batch=1, jobs=1, use_cache=False)[0]
    r = check_ran(c)
    assert not r.program and not r.unchecked
    meta = {"ran_sass": r.to_meta()}
    assert order_kept(meta) is True and "kept the program's order" in ran_sass_lines(meta)[0]
    partial = {"ran_sass": {**r.to_meta(), "unchecked": ["fzh_0: something not mapped"]}}
    assert order_kept(partial) is None


@needs_toolchain
def test_an_unguarded_wait_is_the_waiting_roles() -> None:
    """The corpus's MBAR entry: P1's try_wait result is never tested, so its load does not wait."""
    c = compile_programs([parse_file(str(ROOT / "corpus" / "73416467ed043580.litmus"))], "sm_90", batch=1, jobs=1,
                         use_cache=False)[0]
    r = check_ran(c)
    assert [(f["role"], f["check"]) for f in r.program] == [(1, "unguarded-wait")]


@needs_toolchain
def test_a_batch_attributes_each_programs_kernels() -> None:
    """In a batch each program's findings are its own, whatever else the module holds."""
    progs = [litmus("core/SB-fence-sc.litmus"), litmus("gpu-pdl/PDL-hoist-nc.litmus"), litmus("core/MP-relacq-gpu.litmus")]
    batch = compile_programs(progs, "sm_90", batch=3, jobs=1, use_cache=False)
    assert len({c.cubin for c in batch}) == 1 and all(c.ptx and c.roles for c in batch)
    found = [[(f["role"], f["check"]) for f in check_ran(c, p).program] for c, p in zip(batch, progs)]
    assert found == [[], [(1, "crossing")], []]


@needs_toolchain
def test_a_run_carries_the_check_only_when_it_saw_a_forbidden_outcome() -> None:
    hoist = litmus("gpu-pdl/PDL-hoist-nc.litmus")
    c = compile_programs([hoist], "sm_90", batch=1, jobs=1, use_cache=False)[0]
    builder = HarnessBuilder("sm_90")
    quiet = Histogram(("P1:r0",), (((("P1:r0", 1),), 10),), 10, meta=(("provenance", {"seen": 0, "logged": 0, "entries": []}),))
    assert builder.with_ran_sass(hoist, c, quiet) is quiet
    seen = dataclasses.replace(quiet, meta=(("provenance", {"seen": 2, "logged": 2, "entries": []}),))
    meta = dict(builder.with_ran_sass(hoist, c, seen).meta)
    assert meta["ran_sass"]["program"][0]["role"] == 1 and "summary" in meta["ran_sass"]
    no_ptx = Compiled(c.program, c.cubin, c.spec)
    assert "not checked" in dict(builder.with_ran_sass(hoist, no_ptx, seen).meta)["ran_sass"]["error"]


def test_evidence_keeps_a_later_runs_forbidden_instances() -> None:
    """The evidence cache describes itself by its first run's meta; what a later run logged of a
    forbidden outcome (its provenance, the SASS check of what ran) is kept all the same."""
    keys = ("x",)
    ev = Evidence(keys)
    ev.merge(Histogram(keys, (((("x", 0),), 5),), 5, meta=(("kernel", "k"), ("provenance", {"seen": 0}))))
    later = (("kernel", "k"), ("provenance", {"seen": 1, "logged": 1, "entries": []}), ("ran_sass", {"program": []}))
    ev.merge(Histogram(keys, (((("x", 1),), 1),), 1, meta=later))
    ev.merge(Histogram(keys, (((("x", 1),), 1),), 1, meta=(("provenance", {"seen": 7}),)))
    meta = dict(ev.histogram().meta)
    assert meta["provenance"]["seen"] == 1 and meta["ran_sass"] == {"program": []} and meta["kernel"] == "k"


@needs_toolchain
def test_the_issue_27_harness_artefact_is_seen() -> None:
    """The corr3 harness of 55df353 -- the code an H200 ran when it reported a coherence violation
    (docs/findings.md, section 3): ptxas issued P0's ``ld.relaxed.sys y`` before its ``ld.volatile y``
    (the second through ``y + 4*fz_zero``).  The model keeps the two in program order (both strong:
    SC per location), so the check of what ran reports it -- and the harness of today keeps them."""
    from fuzzgpu.backends.cuda import compile_module

    corr3 = litmus("gpu/corr3-volatile-relaxed.litmus")
    spec = codegen.generate_module([corr3])[1][0]
    for source, reordered in (((ROOT / "tests" / "data" / "ran_sass" / "corr3-harness-55df353.cu").read_text(), True),
                              (codegen.generate_module([corr3])[0], False)):
        cubin, ptx = compile_module(source, "sm_90", use_cache=False)
        c = Compiled(corr3.name, cubin, spec, ptx, codegen.role_regions(source), codegen.op_lines(source))
        found = [(f["check"], f["verdict"], f["role"], f["op_ptx"], f["sync_ptx"]) for f in check_ran(c, corr3).program]
        assert found == ([("reordered", "forbidden", 0, "ld.relaxed.sys.global.u32 y", "ld.volatile.global.u32 y")]
                         if reordered else [])


def test_only_two_weak_loads_of_one_location_may_swap() -> None:
    """semantics.keeps_location_order: SC per location and the thread's own writes (ISA 8.10)."""
    from fuzzgpu import semantics
    from fuzzgpu.ir import Load, Proxy, Scope, Sem, Store

    weak, nc = Load("r0", "x"), Load("r0", "x", nc=True)
    relaxed = Load("r1", "x", sem=Sem.RELAXED, scope=Scope.GPU)
    store = Store("x", 1)
    assert not semantics.keeps_location_order(weak, Load("r2", "x"))
    assert not semantics.keeps_location_order(weak, nc)
    assert semantics.keeps_location_order(weak, relaxed) and semantics.keeps_location_order(relaxed, weak)
    assert semantics.keeps_location_order(store, weak) and semantics.keeps_location_order(weak, store)
    assert semantics.keeps_location_order(store, Store("x", 2))
    assert not semantics.keeps_location_order(store, Load("r3", "x", proxy=Proxy.TEXTURE))  # another proxy: a proxy fence orders it


@pytest.mark.parametrize("ran, said", [
    ({"program": [], "unchecked": [], "summary": "the SASS that ran (k): ptxas kept the program's order"},
     "the hardware deviates (or the model is wrong): the SASS that ran kept the program's order"),
    ({"program": [{"check": "unguarded-wait", "verdict": "forbidden", "role": 1, "op_ptx": "ld.global.u32",
                   "sync_ptx": "mbarrier.try_wait", "op_sass": "LDG.E", "op_sass_offset": 16}], "unchecked": [],
      "summary": "the SASS that ran (k): 1 finding(s)"},
     "the SASS that ran does not keep the program's order"),
    ({"program": [], "unchecked": ["k: something"], "summary": "the SASS that ran (k): not fully checked"},
     "so the hardware or the compiler deviates"),
])
def test_explain_says_what_the_sass_that_ran_tells(tmp_path, capsys, ran, said) -> None:
    """fuzzgpu explain of a GPU entry with a forbidden outcome: the hardware only when the SASS that ran
    kept the program's order and was fully checked; the compiled code first when it has a finding."""
    import json
    import shutil

    from fuzzgpu.cli import main as cli_main

    entry = json.loads((ROOT / "corpus" / "73416467ed043580.json").read_text())
    entry["histogram"]["meta"].update(provenance={"seen": 1, "logged": 0, "entries": []}, ran_sass=ran)
    (tmp_path / "e.json").write_text(json.dumps(entry))
    shutil.copy(ROOT / "corpus" / "73416467ed043580.litmus", tmp_path / "e.litmus")
    cli_main(["explain", str(tmp_path / "e.json")])
    out = " ".join(capsys.readouterr().out.split())
    assert said in out and ran["summary"] in out
