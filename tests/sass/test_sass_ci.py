"""``fuzzgpu sass`` in CI (issue 26, items 6 and 7): stable fingerprints, ``--baseline`` /
``--write-baseline``, ``--only``, SARIF 2.1.0 validated against the official schema
(tests/data/sarif/, PROVENANCE.md), the summary line, and the PDL review."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from fuzzgpu import sass
from fuzzgpu.sass import ci, pdl

from sass_cli import own_cache, sass_cli  # noqa: F401 -- own_cache: the autouse fixture

ROOT = Path(__file__).resolve().parents[2]
SHAPE = ROOT / "tests" / "kernels" / "D_flashmla_shape.cu"
FIXED = ROOT / "tests" / "kernels" / "D_flashmla_fixed_01a2772.cu"
DATA = ROOT / "tests" / "data" / "sass"
SCHEMA = ROOT / "tests" / "data" / "sarif" / "sarif-schema-2.1.0.json"

needs_toolchain = pytest.mark.skipif(sass.find_tool("nvcc") is None, reason="needs nvcc")




@dataclasses.dataclass(frozen=True)
class _Located(sass.Finding):
    """A finding with the fields the CFG analysis adds (source position, the points crossed)."""

    crossed: tuple[str, ...] = ()
    src_file: str = ""
    src_line: int = 0


def _finding(**kw) -> _Located:
    base = dict(check=sass.CROSSING, verdict=sass.HAZARD, direction=sass.HOISTED, arch="sm_90a", function="_Z1kPi",
                op_ptx="ld.global.nc.v4.s32 {%r4,%r5,%r6,%r7}, [%rd3]", op_ptx_line=200,
                op_sass="LDG.E.128.CONSTANT R4, desc[UR10][R6.64]", op_sass_line=10, op_sass_offset=0x80,
                sync_ptx="griddepcontrol.wait", sync_ptx_line=190, sync_sass="ACQBULK", sync_sass_line=40,
                sync_sass_offset=0x380, reason=sass.RULE_NC, src_file="/build/csrc/kernels/splitkv_mla.cu", src_line=123)
    return _Located(**{**base, **kw})


def test_fingerprint_ignores_what_edits_shift():
    f = _finding()
    fp = ci.fingerprint(f, "k")
    moved = _finding(op_ptx_line=468, sync_ptx_line=300, op_sass_offset=0x100, sync_sass_offset=0x500,
                     op_ptx="ld.global.nc.v4.s32 {%r40,%r41,%r42,%r43}, [%rd30]", op_sass="LDG.E.128.CONSTANT R8, desc[UR4][R2.64]",
                     src_file="/other/checkout/csrc/kernels/splitkv_mla.cu")
    assert ci.fingerprint(moved, "k") == fp  # PTX lines, SASS offsets, register numbers, the checkout's folder
    for other in (_finding(src_line=124), _finding(verdict=sass.FORBIDDEN), _finding(sync_ptx="bar.sync 0"),
                  _finding(op_ptx="ld.global.nc.s32 %r1, [%rd3]"), _finding(arch="sm_100a")):
        assert ci.fingerprint(other, "k") != fp
    assert ci.fingerprint(f, "k<half_t>") != ci.fingerprint(f, "k<bfloat16_t>")
    assert ci.fingerprint(_finding(crossed=("bar.sync 0",)), "k") != fp  # the kinds of the points crossed


def test_categories_for_only():
    assert ci.categories(_finding()) == {"nc", "pdl"}
    assert ci.categories(_finding(op_ptx="ld.global.u32 %r1, [%rd1]", op_sass="LDG.E R1, desc[UR4][R2.64]",
                                  sync_ptx="fence.proxy.async.shared::cta", sync_sass="FENCE.VIEW.ASYNC.S")) == {"proxy"}
    assert ci.categories(_finding(check=sass.UNGUARDED_WAIT, op_ptx="ld.shared.u32 %r1, [%r2]", op_sass="LDS R1, [R2]",
                                  sync_ptx="mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r3], %r4", sync_sass="SYNCS.PHASECHK")) == {"mbarrier"}


def test_baseline_counts_each_fingerprint(tmp_path):
    known = ci.Known({"a": 1}, "b.json")
    assert ci.mark_new(["a", "a", "b"], known) == [False, True, True]
    p = tmp_path / "b.json"
    p.write_text(json.dumps(ci.baseline_document([{"fingerprint": "a"}, {"fingerprint": "a"}])))
    assert ci.read_baseline(p).counts == {"a": 2}
    p.write_text("[]")
    with pytest.raises(sass.UserError, match="not a fuzzgpu sass baseline"):
        ci.read_baseline(p)


def _validator():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


def test_sarif_with_source_locations_validates():
    f = _finding()
    doc = ci.sarif_document([ci.result_of_finding(f, "k", ci.fingerprint(f, "k"), True, "x.cu"),
                             ci.result_of_finding(_finding(src_file="", src_line=0), "k", "0" * 16, False, "x.cu")], "0.1.0")
    errors = sorted(_validator().iter_errors(doc), key=str)
    assert not errors, errors[0]
    res = doc["runs"][0]["results"]
    assert res[0]["locations"][0]["physicalLocation"]["region"] == {"startLine": 123}
    assert res[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("csrc/kernels/splitkv_mla.cu")
    assert "region" not in res[1]["locations"][0]["physicalLocation"] and res[1]["baselineState"] == "unchanged"
    bad = json.loads(json.dumps(doc))
    bad["runs"][0]["results"][0]["level"] = "fatal"  # the validator is not a rubber stamp
    assert list(_validator().iter_errors(bad))


@needs_toolchain
def test_cli_sarif_validates_against_the_schema(tmp_path, capsys):
    out = tmp_path / "r.sarif"
    rc, _, _ = sass_cli(capsys, "--arch", "sm_90a", "--pdl-review", "--nvcc-flag=-lineinfo", "--sarif", str(out),
                    str(SHAPE), str(DATA / "pdl_early_read.cu"))
    assert rc == 1
    doc = json.loads(out.read_text())
    errors = list(_validator().iter_errors(doc))
    assert not errors, errors[0]
    results = doc["runs"][0]["results"]
    assert {r["ruleId"] for r in results} == {"crossing", "pdl-review/read-before-wait"}
    lines = sorted(r["locations"][0]["physicalLocation"].get("region", {}).get("startLine", 0)
                   for r in results if r["ruleId"].startswith("pdl-review"))
    assert lines == [7, 8]  # the source lines of the two reads before the wait


def _n_findings(capsys, *args: str) -> int:
    rc, out, _ = sass_cli(capsys, "--json", *args)
    return sum(len(json.loads(line)["findings"]) for line in out.splitlines())


@needs_toolchain
def test_cli_baseline_round_trip(tmp_path, capsys):
    n = _n_findings(capsys, "--arch", "sm_90", str(SHAPE))
    assert n >= 1  # the metadata __ldg above griddepcontrol.wait
    base = tmp_path / "baseline.json"
    rc, _, _ = sass_cli(capsys, "--arch", "sm_90", "--write-baseline", str(base), str(SHAPE))
    assert rc == 1 and len(json.loads(base.read_text())["findings"]) == n
    rc, out, err = sass_cli(capsys, "--arch", "sm_90", "--baseline", str(base), str(SHAPE))
    assert rc == 0, out + err  # nothing new
    assert f"(0 new, {n} known)" in out.splitlines()[0] and f"{n} finding(s) (0 new)" in err
    assert "(known)" in out
    rc, out, _ = sass_cli(capsys, "--arch", "sm_90", "--arch", "sm_90a", "--baseline", str(base), str(SHAPE))
    assert rc == 1 and f"({n} new, 0 known)" in out  # sm_90a's are not in the baseline
    rc, _, err = sass_cli(capsys, "--arch", "sm_90", "--baseline", str(tmp_path / "missing.json"), str(SHAPE))
    assert rc == 2 and "cannot read a fuzzgpu sass baseline: No such file" in err


@needs_toolchain
def test_cli_only_filters(capsys):
    rc, out, _ = sass_cli(capsys, "--arch", "sm_90", "--json", "--only", "mbarrier", str(FIXED))
    assert rc == 0
    rc, out, _ = sass_cli(capsys, "--arch", "sm_90", "--json", "--only", "proxy", str(SHAPE))
    assert rc == 0 and json.loads(out)["findings"] == []  # its finding is an .nc load crossing the wait (and bar.sync)
    rc, out, _ = sass_cli(capsys, "--arch", "sm_90", "--json", "--only", "pdl", str(SHAPE))
    assert rc == 1 and [f["sync_sass"] for f in json.loads(out)["findings"]] == ["ACQBULK"]


@needs_toolchain
def test_summary_line_comes_first(capsys):
    n = _n_findings(capsys, "--arch", "sm_90", str(SHAPE))
    rc, out, _ = sass_cli(capsys, "--arch", "sm_90", str(SHAPE))
    first = out.splitlines()[0]
    assert rc == 1
    assert first == (f"{SHAPE} sm_90: {n} finding(s) ({n} permitted-hazard, 0 forbidden) in 1 function(s); "
                     "fully checked; PDL code compiled in: yes")
    blocks = _finding_blocks(out)
    assert len(blocks) == n and all(len(block) <= 4 for block in blocks)  # a finding is a few lines


def _finding_blocks(out: str) -> list[list[str]]:
    blocks: list[list[str]] = []
    for line in out.splitlines():
        if line.startswith("  permitted-hazard") or line.startswith("  forbidden"):
            blocks.append([line])
        elif blocks and line.startswith("    "):
            blocks[-1].append(line)
    return blocks


# ------------------------------------------------------------------------------------------------
# the PDL review
# ------------------------------------------------------------------------------------------------

_PTX = """
.version 9.0
.target sm_90a
.address_size 64
.extern .func  (.param .b32 func_retval0) vprintf
(
	.param .b64 vprintf_param_0,
	.param .b64 vprintf_param_1
)
;
.file 1 "/src/k.cu"
.visible .entry branchy(
\t.param .u64 p
)
{
\t.loc 1 5 0
\tld.param.u64 %rd1, [p];
\tsetp.ne.s32 %p1, %r1, 0;
\t@%p1 bra $L__BB0_2;
\t.loc 1 7 0
\tld.global.u32 %r2, [%rd1];
\tbra.uni $L__BB0_3;
$L__BB0_2:
\t.loc 1 9 0
\tgriddepcontrol.wait;
\t.loc 1 10 0
\tld.global.nc.u32 %r3, [%rd1+4];
$L__BB0_3:
\t.loc 1 12 0
\tld.global.u32 %r4, [%rd1+8];
\tret;
}
.visible .entry nowait(
\t.param .u64 p
)
{
\tld.global.u32 %r2, [%rd1];
\tret;
}
"""


def test_review_walks_paths_not_the_listing():
    """A read on the branch that skips the wait is before it; one after the wait on its branch is
    not; the join after both branches is reached without the wait (line 12).  A kernel with no wait
    is not reviewed.  A declaration before the kernel (device asserts' vprintf) does not take its
    body (FlashMLA combine.cu: its first kernel was lost)."""
    notes = pdl.review(_PTX, "sm_90a")
    assert [(n.kind, n.function, n.src_line) for n in notes] == [
        (pdl.READ_BEFORE_WAIT, "branchy", 7), (pdl.READ_BEFORE_WAIT, "branchy", 12)]
    assert all(n.src_file == "/src/k.cu" for n in notes)


def test_review_reports_the_line_a_person_reads():
    """The innermost inlined frame outside the toolkit's and the libraries' headers."""
    ldg = [("/src/k.cu", 16), ("/usr/local/cuda-13.0/targets/x86_64-linux/include/sm_32_intrinsics.hpp", 119)]
    assert pdl.source_line(ldg) == ("/src/k.cu", 16)
    cutlass = [("/x/include/cutlass/device_kernel.h", 123), ("/x/hopper/flash_fwd_combine_kernel.h", 456),
               ("/x/include/cute/algorithm/copy.hpp", 80)]
    assert pdl.source_line(cutlass) == ("/x/hopper/flash_fwd_combine_kernel.h", 456)
    only_lib = [("/x/include/cutlass/device_kernel.h", 123), ("/x/include/cute/arch/copy_sm90_tma.hpp", 185)]
    assert pdl.source_line(only_lib) == ("/x/include/cute/arch/copy_sm90_tma.hpp", 185)
    assert pdl.source_line([]) == ("", 0)


def test_review_compiled_out(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text("// cudaGridDependencySynchronize() in a comment does not count\n__global__ void k() {\n"
                   "#ifdef PDL\n  cudaGridDependencySynchronize();\n#endif\n}\n")
    ptx = ".version 9.0\n.target sm_90a\n.visible .entry _Z1kv()\n{\n\tret;\n}\n"
    (note,) = pdl.review(ptx, "sm_90a", [src])
    assert note.kind == pdl.COMPILED_OUT and note.src_line == 4 and "PDL compiled out" in note.message
    assert pdl.review(ptx.replace("\tret;", "\tgriddepcontrol.wait;\n\tret;"), "sm_90a", [src]) == ()
    src.write_text("__global__ void k() { }\n")
    assert pdl.review(ptx, "sm_90a", [src]) == ()


def test_review_compiled_out_in_a_library_header(tmp_path):
    """CUTLASS 7107b05 example 48 built without -DCUTLASS_ENABLE_GDC_FOR_SM90: the kernel header
    whose code is in the PTX calls wait_on_dependent_grids(), the PTX has no griddepcontrol.wait.
    The header that defines the wait, and a helper header whose own asm waits (ThunderKittens'
    util.cuh) but that nothing here calls, are no call."""
    kernel = tmp_path / "sm90_gemm_tma_warpspecialized_cooperative.hpp"
    kernel.write_text("template <class P> __device__ void run(P p) {\n  load(p);\n  cutlass::arch::wait_on_dependent_grids();\n}\n")
    definer = tmp_path / "grid_dependency_control.h"
    definer.write_text("CUTLASS_DEVICE\nvoid wait_on_dependent_grids() {\n#if defined(CUTLASS_GDC_ENABLED)\n"
                       '  asm volatile("griddepcontrol.wait;" ::: "memory");\n#endif\n}\n')
    helper = tmp_path / "util.cuh"
    helper.write_text('__device__ static inline void pdl_wait() {\n  asm volatile("griddepcontrol.wait;" ::: "memory");\n}\n')
    ptx = (".version 9.0\n.target sm_90a\n.visible .entry _Z1kv()\n{\n\tret;\n}\n"
           f'.file 1 "{kernel}"\n.file 2 "{definer}"\n.file 3 "{helper}"\n')
    (note,) = pdl.review(ptx, "sm_90a")
    assert (note.kind, Path(note.src_file).name, note.src_line) == (pdl.COMPILED_OUT, kernel.name, 3)
    assert "-DCUTLASS_ENABLE_GDC_FOR_SM90" in note.message
    assert pdl.review(ptx.replace(f'.file 1 "{kernel}"\n', ""), "sm_90a") == ()
    # with line information: the call counts where its function has code in the PTX (a .loc line in it) ...
    code_at = ptx.replace("\tret;", "\t.loc 1 2 3\n\tret;")
    assert [n.src_line for n in pdl.review(code_at, "sm_90a")] == [3]
    # ... not in a helper of the header that the translation unit never calls (ggml's ggml_cuda_pdl_sync in
    # common.cuh, included by every TU: a false "compiled out" on allreduce.cu, hostile5-2026-12-06)
    kernel.write_text(kernel.read_text() + "__device__ void helper() {\n  cudaGridDependencySynchronize();\n}\n")
    assert [n.src_line for n in pdl.review(code_at, "sm_90a")] == [3]
    assert [n.src_line for n in pdl.review(code_at.replace(".loc 1 2 3", ".loc 1 6 3"), "sm_90a")] == [6]


@needs_toolchain
def test_cli_pdl_review_is_a_warning_unless_asked(capsys):
    path = str(DATA / "pdl_early_read.cu")
    rc, out, _ = sass_cli(capsys, "--arch", "sm_90a", "--nvcc-flag=-lineinfo", path)
    assert rc == 0 and "fully checked, clean; 2 PDL review warning(s)" in out.splitlines()[0]
    assert "pdl_early_read.cu:7 in early:" in out and "pdl_early_read.cu:8 in early:" in out
    assert "late:" in out and " in late:" not in out
    rc, _, _ = sass_cli(capsys, "--arch", "sm_90a", "--pdl-review", path)
    assert rc == 1
    rc, _, _ = sass_cli(capsys, "--arch", "sm_90a", "--only", "pdl", path)
    assert rc == 1


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="needs mkfifo")
def test_a_fifo_or_bad_json_as_baseline_or_compile_commands_is_refused_without_blocking(tmp_path, capsys):
    """A FIFO named as --baseline or --compile-commands blocked `fuzzgpu sass` forever (Path.read_text);
    both now go through files.read_json: one line, exit 2."""
    import os

    fifo = tmp_path / "baseline.json"
    os.mkfifo(fifo)
    rc, _, err = sass_cli(capsys, "--baseline", str(fifo), "--ptx", "x.ptx", "x.cubin")
    assert rc == 2 and "cannot read a fuzzgpu sass baseline: not a regular file (a FIFO)" in err and err.count("\n") == 1
    bad = tmp_path / "compile_commands.json"
    bad.write_text("{")
    rc, _, err = sass_cli(capsys, "--compile-commands", str(bad))
    assert rc == 2 and "not a compile_commands.json (JSON)" in err and err.count("\n") == 1
