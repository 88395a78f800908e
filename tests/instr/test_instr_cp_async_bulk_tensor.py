"""``cp{.reduce}.async.bulk.tensor.1d`` (TMA with a tensor map, issue 16): the IR field
(``CpAsyncBulk.tensor``), its semantics-table row, the litmus spellings, the harness (a 1-D tiled
tensor map in ``__constant__`` memory, 128-byte shared slots), the SASS ptxas makes of it and the
host's ``cuTensorMapEncodeTiled`` arguments.  The verdicts of tests/litmus/async-proxy/TMA-tensor-*
are in expected.csv (tests/model/test_catalogues.py); here they are also pinned to their non-tensor twins.
The GPU runs are tests/gpu/test_gpu_tensor.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from fuzzgpu import codegen, ir, model, sass, semantics
from fuzzgpu.errors import SourceError, UserError
from fuzzgpu.ir import CpAsyncBulk, ProgramError, RmwOp
from fuzzgpu.litmus import format_instruction, format_program, parse, parse_file

LITMUS = Path(__file__).resolve().parents[1] / "litmus" / "async-proxy"
TWINS = {
    "TMA-tensor-store-no-fence": "TMA-store-no-fence",
    "TMA-tensor-store-fence-writer": "TMA-store-fence-writer",
    "TMA-tensor-load-mbarrier-acquire": "TMA-load-mbarrier-acquire",
    "TMA-tensor-load-mbarrier-relaxed": "TMA-load-mbarrier-relaxed",
    "TMA-tensor-reduce-add-no-fence": "TMA-reduce-add-no-fence",
    "TMA-tensor-reduce-add-fence": "TMA-reduce-add-fence",
}

STORE = """PTX T
{
g = 0;
s @ shared = 0;
}
 P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;
 st.weak s, 1   | bar.sync 0     ;
 bar.sync 0     | COPY           ;
                | cp.async.bulk.commit_group ;
                | cp.async.bulk.wait_group 0 ;
                | ld.weak r1, g  ;
exists (P1:r1 == 0)
"""

LOAD = """PTX T
{
g = 1;
s @ shared = 0;
bar @ shared mbarrier = 0;
}
 P0@cta 0,gpu 0                   | P1@cta 0,gpu 0 ;
 mbarrier.init bar, 1             | bar.sync 0     ;
 bar.sync 0                       | mbarrier.try_wait.parity r1, bar, 0 ;
 mbarrier.arrive.expect_tx bar, 4 | ld.weak r2, s  ;
 COPY                             |                ;
exists (P1:r1 == 1 /\\ P1:r2 == 0)
"""


def _copy(text: str, copy: str):
    return next(i for t in parse(text.replace("COPY", copy)).threads for i in t.code if isinstance(i, CpAsyncBulk))


# -- the IR -------------------------------------------------------------------------------------

def test_tensor_is_a_field_of_the_bulk_copy_and_json_stays_additive():
    plain = CpAsyncBulk("g", "s")
    assert plain.tensor is False
    p = parse_file(LITMUS / "TMA-store-no-fence.litmus")
    assert '"tensor"' not in json.dumps(ir.program_to_json(p))  # existing programs' JSON is unchanged
    q = parse_file(LITMUS / "TMA-tensor-store-no-fence.litmus")
    assert '"tensor": true' in json.dumps(ir.program_to_json(q))
    assert ir.program_from_json(json.loads(json.dumps(ir.program_to_json(q)))) == q


def test_a_tensor_copy_copies_one_location():
    p = parse_file(LITMUS / "TMA-tensor-store-no-fence.litmus")
    code = list(p.threads[1].code)
    code[1] = CpAsyncBulk("g", "s", tensor=True, size=16)
    import dataclasses

    bad = dataclasses.replace(p, threads=(p.threads[0], dataclasses.replace(p.threads[1], code=tuple(code))))
    with pytest.raises(ProgramError, match="size 4, the 1-D box"):
        ir.validate(bad)


# -- the semantics table ------------------------------------------------------------------------

def test_table_row_is_the_bulk_copy_semantics():
    row, twin = semantics.TABLE["cp.async.bulk.tensor"], semantics.TABLE["cp.async.bulk"]
    assert row.ir == "CpAsyncBulk (tensor)" and row.source == semantics.ISA and "cp.async.bulk.tensor" in row.isa
    assert (row.proxy, row.strength, row.scope, row.release, row.acquire) == (
        twin.proxy, twin.strength, twin.scope, twin.release, twin.acquire)
    assert semantics.key_of(CpAsyncBulk("g", "s", tensor=True)) == "cp.async.bulk.tensor"
    assert semantics.key_of(CpAsyncBulk("g", "s")) == "cp.async.bulk"


@pytest.mark.parametrize("text", [
    "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2}], [%r3]",
    "cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [%rd1, {%r2}], [%r3]",
    "cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.tile.bulk_group [%rd1, {%r2}], [%r3]",
])
def test_sass_checker_reads_the_tensor_row(text):
    from fuzzgpu.sass.ptx_parser import _parse_ptx_instr, _table_key

    assert _table_key(_parse_ptx_instr(0, 0, text)) == "cp.async.bulk.tensor"
    sync = sass.sync_of_text(text + ";")
    assert sync is not None and (sync.release, sync.acquire) == (False, False)


# -- litmus spellings ---------------------------------------------------------------------------

@pytest.mark.parametrize("text,spelling,fields", [
    (STORE, "cp.async.bulk.tensor.1d.global.shared::cta.bulk_group g, s", dict(completion="bulk_group")),
    (STORE, "cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group g, s", dict(completion="bulk_group")),
    (STORE, "cp.async.bulk.tensor.1d.global.shared g, s", dict(completion="bulk_group")),
    (STORE, "cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.tile.bulk_group g, s",
     dict(completion="bulk_group", reduce=RmwOp.ADD)),
    (LOAD, "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes s, g, bar",
     dict(completion="mbarrier", bar="bar")),
    (LOAD, "cp.async.bulk.tensor.1d.shared.global s, g, bar", dict(completion="mbarrier", bar="bar")),
])
def test_spellings_parse_and_print_in_ptx_order(text, spelling, fields):
    ins = _copy(text, spelling)
    assert ins.tensor and ins.size == 4
    for k, v in fields.items():
        assert getattr(ins, k) == v
    printed = format_instruction(ins)
    assert printed.startswith(("cp.async.bulk.tensor.1d.", "cp.reduce.async.bulk.tensor.1d."))
    assert _copy(text, printed) == ins  # the printer's spelling reads back


@pytest.mark.parametrize("spelling,message", [
    ("cp.async.bulk.tensor.2d.global.shared g, s", "1-D"),
    ("cp.async.bulk.tensor.1d.global g, s", "state space"),
    ("cp.reduce.async.bulk.tensor.1d.global.shared g, s", "names its reduction"),
    ("cp.async.bulk.tensor.1d.global.shared.im2col g, s", "unexpected '.im2col'"),
    ("cp.async.bulk.tensor.1d.global.shared g, s, 4", "takes 2 operand"),
])
def test_bad_spellings_say_what_was_expected(spelling, message):
    with pytest.raises(SourceError, match=message):
        parse(STORE.replace("COPY", spelling))


def test_the_litmus_files_round_trip():
    for name in TWINS:
        p = parse_file(LITMUS / f"{name}.litmus")
        assert any(isinstance(i, CpAsyncBulk) and i.tensor for t in p.threads for i in t.code), name
        assert parse(format_program(p)) == p, name


@pytest.mark.parametrize("tensor,twin", sorted(TWINS.items()))
def test_verdict_is_the_non_tensor_twins(tensor, twin):
    """The same memory-model operation: the tensor test's witness has its twin's verdict (both
    pinned by expected.csv, argued there from the ISA)."""
    from test_catalogues import witness

    a, b = parse_file(LITMUS / f"{tensor}.litmus"), parse_file(LITMUS / f"{twin}.litmus")
    assert a.condition == b.condition
    assert witness(a) == witness(b)
    va, vb = model.judge(a, witness(a)).verdict, model.judge(b, witness(b)).verdict
    assert va == vb, (tensor, va, vb)


# -- code generation ----------------------------------------------------------------------------

def test_the_harness_emits_the_tensor_forms_and_a_constant_tensor_map():
    for name, ptx in (
        ("TMA-tensor-store-no-fence", "cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [%0, {%1}], [%2];"),
        ("TMA-tensor-load-mbarrier-acquire",
         "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];"),
    ):
        p = parse_file(LITMUS / f"{name}.litmus")
        assert not codegen.unrunnable_reasons(p), name
        src, spec = codegen.harness_source(p)
        assert ptx in src, name
        assert spec.tensor_map and f'extern "C" {{ __constant__ FzTensorMap {spec.tensor_map}; }}' in src
        assert f"(unsigned long long)&{spec.tensor_map}" in src and "- mem)" in src  # the coordinate
        assert "__shared__ __align__(128) unsigned fz_sm[" in src
    src, spec = codegen.harness_source(parse_file(LITMUS / "TMA-store-no-fence.litmus"))
    assert spec.tensor_map == "" and "FzTensorMap fz_tmap" not in src  # the non-tensor harness is unchanged


def test_a_tensor_operand_gets_128_byte_slots():
    from fuzzgpu.codegen.layout import _layout, _sm_word

    p = parse_file(LITMUS / "TMA-tensor-load-mbarrier-acquire.litmus")
    lay = _layout(p)
    # s (the tensor copy's destination) first: 256 slots of 32 words; bar after it, 16-byte slots
    assert _sm_word(p, lay, "s", 0, "L") == "(0u + (L) * 32u)"
    assert _sm_word(p, lay, "bar", 1, "L") == "(8192u + (L) * 4u)"
    assert codegen.layout.shared_words(p) == 256 * (32 + 4)


def test_the_reduce_form_is_emitted_without_a_type():
    p = parse(STORE.replace("COPY", "cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.bulk_group g, s"))
    src, _ = codegen.harness_source(p)
    assert "cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.tile.bulk_group [%0, {%1}], [%2];" in src


def test_two_tensor_shared_operands_are_refused_for_shared_memory():
    text = STORE.replace("s @ shared = 0;", "s @ shared = 0;\nt @ shared = 0;").replace(
        "COPY", "cp.async.bulk.tensor.1d.global.shared g, s ;\n | | cp.async.bulk.tensor.1d.global.shared g, t")
    p = parse(text.replace(" ;\n | | ", " ;\n                | ").replace("PTX T", "PTX T2"))
    reasons = codegen.unrunnable_reasons(p)
    assert any("128-byte slots" in r and "more than" in r for r in reasons), reasons


# -- SASS (ptxas 13.0, sm_90): UTMALDG.1D, UTMASTG.1D, UTMAREDG.1D.ADD --------------------------

NVCC = shutil.which("nvcc")


@pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH")
def test_sass_of_the_tensor_harness_is_fully_checked(tmp_path, monkeypatch):
    """The harness of a tensor store, a tensor reduction and a tensor load, compiled for sm_90:
    ptxas makes UTMASTG.1D, UTMAREDG.1D.ADD and UTMALDG.1D of them, the checker maps every
    synchronisation point (the copies among them) and leaves nothing unchecked; without the row's
    SASS tokens the copies stay unmatched (a note names each).""" 
    from fuzzgpu.sass import ptx_parser, toolchain

    ps = [parse_file(LITMUS / "TMA-tensor-store-fence-writer.litmus"),
          parse_file(LITMUS / "TMA-tensor-load-mbarrier-relaxed.litmus"),
          parse(STORE.replace("COPY", "cp.reduce.async.bulk.tensor.1d.global.shared.add g, s").replace("PTX T", "PTX TR"))]
    src, _ = codegen.generate_module(ps)
    cu = tmp_path / "t.cu"
    cu.write_text(src)
    ptx_text, cubin = toolchain.compile_cu(cu, "sm_90", tmp_path)
    sass_text = toolchain.disassemble(cubin)
    for op in ("UTMASTG.1D", "UTMAREDG.1D.ADD", "UTMALDG.1D"):
        assert op in sass_text, op
    rep = sass.analyse(ptx_text, sass_text, "sm_90", "tensor")
    assert rep.findings == () and rep.unchecked == ()
    kernels = [f for f in rep.functions if f.name.startswith("fzh_")]
    assert len(kernels) == 3 and all(f.complete and f.mapped_syncs == f.ptx_syncs for f in kernels)
    assert not any("SASS is not matched" in n for f in kernels for n in f.notes)
    # without the row's SASS tokens the copies are not matched: each is left as a point with no
    # SASS (it orders none of its thread's accesses, so nothing else depends on it)
    monkeypatch.delitem(ptx_parser._SASS_OF, "cp.async.bulk.tensor")
    rep = sass.analyse(ptx_text, sass_text, "sm_90", "tensor")
    kernels = [f for f in rep.functions if f.name.startswith("fzh_")]
    assert len(kernels) == 3 and all(f.mapped_syncs == f.ptx_syncs - 1 for f in kernels)
    assert all(any("async.bulk.tensor" in n and "SASS is not matched" in n for n in f.notes) for f in kernels)


# -- the host's tensor map ----------------------------------------------------------------------

def _fake_cu():
    enum = lambda *names: SimpleNamespace(**{n: n for n in names})  # noqa: E731
    return SimpleNamespace(
        CUtensorMapDataType=enum("CU_TENSOR_MAP_DATA_TYPE_UINT32"),
        CUtensorMapInterleave=enum("CU_TENSOR_MAP_INTERLEAVE_NONE"),
        CUtensorMapSwizzle=enum("CU_TENSOR_MAP_SWIZZLE_NONE"),
        CUtensorMapL2promotion=enum("CU_TENSOR_MAP_L2_PROMOTION_NONE"),
        CUtensorMapFloatOOBfill=enum("CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE"),
        cuuint64_t=lambda v: ("u64", v), cuuint32_t=lambda v: ("u32", v),
    )


def test_tensor_map_arguments():
    from fuzzgpu.backends.cuda import tensor_map_args

    a = tensor_map_args(_fake_cu(), 0x7000_0000, 1 << 20)
    assert a[:7] == ("CU_TENSOR_MAP_DATA_TYPE_UINT32", 1, 0x7000_0000, [("u64", 1 << 20)], [("u64", 4 << 20)], [("u32", 4)], [("u32", 1)])
    assert a[7:] == ("CU_TENSOR_MAP_INTERLEAVE_NONE", "CU_TENSOR_MAP_SWIZZLE_NONE", "CU_TENSOR_MAP_L2_PROMOTION_NONE",
                     "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE")
    assert codegen.TENSOR_BOX * 4 % 16 == 0  # cuTensorMapEncodeTiled: boxDim[0] * element size, a multiple of 16
    # the global strides are never an empty list: cuda-bindings passes it as NULL, and the H200's
    # driver refused that form with CUDA_ERROR_INVALID_VALUE (an H200 on 2026-12-01; bench/tensor_map_probe.py)
    assert len(a[4]) == 1


def test_a_buffer_past_32_bit_coordinates_is_refused():
    from fuzzgpu.backends.cuda import CudaBackend
    from fuzzgpu.backends.geometry import TENSOR_MAP_MAX_WORDS

    b = object.__new__(CudaBackend)
    b.cu = _fake_cu()
    with pytest.raises(codegen.Unrunnable, match="signed 32-bit coordinates"):
        b.put_tensor_map(b"", "P", "fz_tmap_x", 0, TENSOR_MAP_MAX_WORDS + 1)


def test_a_refused_tensor_map_names_what_was_refused():
    """The driver's refusal (an H200 on 2026-12-01: CUDA_ERROR_INVALID_VALUE) comes back as one line with
    the map's arguments, so the next failure can be read without a GPU at hand."""
    from fuzzgpu.backends.cuda import CudaBackend

    b = object.__new__(CudaBackend)
    b.cu = _fake_cu()
    b.cu.cuTensorMapEncodeTiled = lambda *a: (1, None)  # CUDA_ERROR_INVALID_VALUE
    with pytest.raises(UserError, match=r"P: cuTensorMapEncodeTiled refused .*globalDim \[1024\], globalStrides \[4096\].*0x7000"):
        b.put_tensor_map(b"", "P", "fz_tmap_x", 0x7000, 1024)


def test_missing_encode_is_an_environment_error():
    from fuzzgpu.backends.cuda import CudaBackend
    from fuzzgpu.errors import EnvError

    b = object.__new__(CudaBackend)
    b.cu = _fake_cu()
    with pytest.raises(EnvError, match="cuTensorMapEncodeTiled"):
        b.put_tensor_map(b"", "P", "fz_tmap_x", 0, 1024)



def test_the_histogram_leaves_static_shared_memory_when_the_slots_fill_it(monkeypatch):
    """The tensor operands' 128-byte slots (36 KB for a load) and a shared histogram must fit the
    48 KB of static shared memory; past it the histogram is kept in global memory."""
    from fuzzgpu.codegen import harness

    p = parse_file(LITMUS / "TMA-tensor-load-mbarrier-acquire.litmus")
    src, _ = codegen.harness_source(p)
    assert "__shared__ unsigned fz_hist[" in src
    monkeypatch.setattr(harness, "STATIC_SHARED_BYTES", 4 * codegen.layout.shared_words(p) + 64)
    src, _ = codegen.harness_source(p)
    assert "__shared__ unsigned fz_hist[" not in src


@pytest.mark.parametrize("copy", [
    # a tensor load completing on a bulk group: the printer would write it as a store
    "cp.async.bulk.tensor.1d.shared::cluster.global.bulk_group s, g",
    "cp.reduce.async.bulk.tensor.1d.shared::cluster.global.add.mbarrier s, g, bar",
])
def test_a_tensor_load_has_only_the_ptx_form(copy):
    # PTX ISA cp.async.bulk.tensor: global -> shared is .mbarrier::complete_tx::bytes only;
    # cp.reduce.async.bulk.tensor: .dst = { .global } only
    with pytest.raises(SourceError, match="completes on an mbarrier"):
        parse(LOAD.replace("COPY", copy))


def test_a_corpus_tensor_load_on_a_bulk_group_is_refused(tmp_path):
    from fuzzgpu.corpus import CorpusError
    from fuzzgpu.corpus.entry import validate_entry

    d = json.loads((Path(__file__).resolve().parents[1] / "data" / "findings" / "tma-load-relaxed-lone-wait.json").read_text())
    copy = next(i for i in d["program"]["threads"][0]["code"] if i["op"] == "cp.async.bulk")
    copy.update(tensor=True, completion="bulk_group")
    del copy["bar"]
    with pytest.raises(CorpusError, match="completes on an mbarrier"):
        validate_entry(d, "e.json")


def test_a_qualifier_is_written_once():
    with pytest.raises(SourceError, match="unexpected '.tile'"):
        parse(STORE.replace("COPY", "cp.async.bulk.tensor.1d.global.shared::cta.tile.tile.bulk_group g, s"))


def _tensor_spec() -> codegen.HarnessSpec:
    _, spec = codegen.harness_source(parse_file(LITMUS / "TMA-tensor-load-mbarrier-acquire.litmus"))
    assert spec.tensor_map and spec.n_global_locs == 1 and spec.slot_words == 4
    return spec


def test_launch_geometry_refuses_a_buffer_past_32_bit_coordinates():
    """2^23 instances (32768 CTAs of 256 threads) x 1 location x stride, both halves of the
    buffer: stride 64 is 2^30 words, stride 128 is 2^31 = TENSOR_MAP_MAX_WORDS + 1."""
    from fuzzgpu.backends.base import RunConfig
    from fuzzgpu.backends.geometry import TENSOR_MAP_MAX_WORDS, launch_geometry

    spec = _tensor_spec()
    geo = launch_geometry(spec, RunConfig(test_ctas=32768, stride=64))
    assert 2 * geo.mem_words == 1 << 31 >> 1 and 2 * geo.mem_words <= TENSOR_MAP_MAX_WORDS
    with pytest.raises(codegen.Unrunnable, match=r"the location buffer has 2147483648 words, past the signed 32-bit "):
        launch_geometry(spec, RunConfig(test_ctas=32768, stride=128))
    # the same buffer without a tensor copy has no 32-bit coordinates to fit
    _, plain = codegen.harness_source(parse_file(LITMUS / "TMA-load-mbarrier-acquire.litmus"))
    assert not plain.tensor_map
    assert launch_geometry(plain, RunConfig(test_ctas=32768, stride=128)).mem_words == 1 << 30


def test_a_buffer_past_32_bit_coordinates_is_refused_before_allocating():
    """run_compiled asks launch_geometry first: the refusal comes before any cuMemAlloc (it came
    from put_tensor_map, after the five buffers were allocated)."""
    from fuzzgpu.backends.base import RunConfig
    from fuzzgpu.backends.cuda import Compiled, CudaBackend

    def no_alloc(nbytes: int) -> None:
        raise AssertionError(f"allocated {nbytes} bytes before the refusal")

    b = object.__new__(CudaBackend)
    b.cu = _fake_cu()
    b.cu.cuModuleLoadData = lambda data: (0, "module")
    b.cu.cuModuleGetFunction = lambda mod, name: (0, "function")
    b._modules, b._keys, b.smem_per_sm = {}, {}, 228 * 1024
    b.drv = SimpleNamespace(mem_alloc=no_alloc, to_device=no_alloc)
    spec = _tensor_spec()
    with pytest.raises(codegen.Unrunnable, match="signed 32-bit coordinates"):
        b.run_compiled(Compiled(spec.program, b"cubin", spec), RunConfig(test_ctas=32768, stride=256, ctas_per_sm=0))


def _encoding_cu(symbol_bytes: int):
    """A fake driver whose tensor map encodes, with a module symbol of ``symbol_bytes``."""
    cu = _fake_cu()
    cu.cuTensorMapEncodeTiled = lambda *a: (0, SimpleNamespace(opaque=[0] * 16))
    cu.cuModuleLoadData = lambda data: (0, "module")
    cu.cuModuleGetGlobal = lambda mod, name: (0, 0xD000, symbol_bytes)
    return cu


def test_a_tensor_map_symbol_of_the_wrong_size_is_a_harness_fault_not_bad_input():
    """codegen declares the symbol: a wrong size is fuzzgpu's bug.  GpuFault, not UserError (exit
    2, which blames the input): `run` exits 3 (below), a supervised campaign quarantines the
    program and goes on with a fresh worker (fuzzgpu.workers)."""
    from fuzzgpu.backends.cuda import CudaBackend, GpuFault

    copied = []
    b = object.__new__(CudaBackend)
    b.cu, b._modules, b._keys = _encoding_cu(64), {}, {}
    b.drv = SimpleNamespace(memcpy_htod=lambda dptr, raw: copied.append((dptr, raw)))
    with pytest.raises(GpuFault, match=r"P: harness bug: tensor map fz_tmap_x is 64 bytes in the module, not the 128") as e:
        b.put_tensor_map(b"", "P", "fz_tmap_x", 0x7000, 1024)
    assert not isinstance(e.value, UserError) and not copied
    b.cu = _encoding_cu(128)  # the right size is copied
    b.put_tensor_map(b"", "P", "fz_tmap_x", 0x7000, 1024)
    assert copied == [(0xD000, bytes(128))]


def test_run_exits_3_on_a_tensor_map_harness_fault(monkeypatch, capsys):
    from fuzzgpu.backends import cuda
    from fuzzgpu.cli import main

    real = cuda.CudaBackend

    class Backend:  # a CudaBackend whose driver encodes a map for a symbol of the wrong size
        def __init__(self, *_, **__) -> None:
            self.b = object.__new__(real)
            self.b.cu, self.b._modules, self.b._keys = _encoding_cu(64), {}, {}

        def run(self, program, config):
            self.b.put_tensor_map(b"", program.name, "fz_tmap_x", 0x7000, 1024)

        def close(self) -> None:
            pass

    monkeypatch.setattr(cuda, "CudaBackend", Backend)
    monkeypatch.setattr(cuda, "nvcc_path", lambda: "nvcc")
    rc = main(["run", str(LITMUS / "TMA-tensor-load-mbarrier-acquire.litmus")])
    err = capsys.readouterr().err
    assert rc == 3 and "harness bug: tensor map fz_tmap_x is 64 bytes" in err, (rc, err)


def test_a_campaign_worker_quarantines_a_tensor_map_harness_fault_and_goes_on(monkeypatch):
    """In a supervised worker (every campaign but --in-process) the GpuFault is a ProgramFault of
    kind gpu-fault, which the campaign quarantines; the next program runs in a fresh worker."""
    from fuzzgpu import backends
    from fuzzgpu.backends.base import RunConfig
    from fuzzgpu.backends.cuda import CudaBackend
    from fuzzgpu.backends.sim import SimBackend
    from fuzzgpu.workers.supervised import BackendSpec, ProgramFault, SupervisedBackend

    class Backend(SimBackend):  # a sim whose tensor-copy program meets a wrong-size symbol
        def run(self, program, config=None):
            if program.name == "TMA-tensor-load-mbarrier-acquire":
                b = object.__new__(CudaBackend)
                b.cu, b._modules, b._keys = _encoding_cu(64), {}, {}
                b.put_tensor_map(b"", program.name, "fz_tmap_x", 0x7000, 1024)
            return super().run(program, config)

    monkeypatch.setattr(backends, "make_backend", lambda *a, **k: (Backend(), ""))  # the forked worker's
    sup = SupervisedBackend(BackendSpec("sim"), watchdog=60, start_method="fork")
    try:
        with pytest.raises(ProgramFault) as e:
            sup.run(parse_file(LITMUS / "TMA-tensor-load-mbarrier-acquire.litmus"), RunConfig(instances=1000))
        assert e.value.kind == "gpu-fault" and "harness bug: tensor map fz_tmap_x is 64 bytes" in e.value.detail
        assert sup.run(parse_file(LITMUS / "TMA-load-mbarrier-acquire.litmus"), RunConfig(instances=1000)).instances == 1000
    finally:
        sup.close()


@pytest.mark.parametrize("name, prime", [("TMA-tensor-reduce-add-no-fence", True), ("TMA-store-no-fence", False),
                                         ("TMA-tensor-load-mbarrier-relaxed", True)])
def test_the_harness_fences_its_initial_values_into_the_async_proxy(name, prime):
    """The litmus initial state precedes every access in every proxy, so a harness whose program
    reads memory in the async proxy (a bulk copy's source, a reduction's destination) fences the
    initial values it writes: shared ones in the test launch before the CTA barrier, global ones at
    the end of the prime launch (PTX ISA 9.7.9.25.2 Async Proxy: accessing the same location across
    proxies needs a cross-proxy fence).  A program without an async-proxy access has neither."""
    src, spec = codegen.harness_source(parse_file(LITMUS / f"{name}.litmus"))
    test = src[src.index('extern "C" __global__'):]
    assert 'fence.proxy.async.shared::cta;" ::: "memory");  // harness: initial state' in test
    assert test.index("harness: initial state to the async proxy") < test.index("// ---- role")
    assert spec.needs_prime is prime
    at = src.index("void prime(")
    prime_fn = src[at:src.index("\n}\n", at)]
    assert ('fence.proxy.async.global;' in prime_fn) is prime
    plain, _ = codegen.harness_source(parse_file(LITMUS.parent / "gpu" / "MP-relaxed-gpu.litmus"))
    assert "harness: initial state to the async proxy" not in plain


def test_a_tensor_copy_never_pairs_with_a_plain_bulk_copys_sass():
    """The SASS checker's token classes: cp.async.bulk makes UBLKCP/UBLKRED (BULK), a tensor copy
    UTMALDG/UTMASTG/UTMAREDG (TMA); one class for both let a tensor copy's PTX be matched with a
    UBLKCP (hostile review)."""
    from fuzzgpu.sass.ptx_parser import _SASS_OF, _parse_ptx_instr, _table_key

    def tokens(text):
        ins = _parse_ptx_instr(0, 0, text)
        return _SASS_OF[_table_key(ins)](ins, _table_key(ins))[1]

    assert tokens("cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [%rd1, {%r2}], [%r3]") == ("TMA",)
    assert tokens("cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.tile.bulk_group [%rd1, {%r2}], [%r3]") == ("TMA",)
    assert tokens("cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r3], 16") == ("BULK",)
