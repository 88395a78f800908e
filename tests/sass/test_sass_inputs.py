"""``fuzzgpu sass`` pointed at a real build (issue 26, items 3-5): the targets of ``-gencode`` /
``-arch=compute_X -code=sm_Y`` flags, an entry of a compile_commands.json, the nvcc command line after
``--``, built binaries (``.o``, an executable, a ``.so``, a fatbin) read through cuobjdump with the
same verdict as the ``.cu``, the cache of ``.cu`` inputs, the ``-G`` hint, names a person reads, and
exit 4 for "not fully checked" apart from 3 for "the environment failed"."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fuzzgpu import sass
from fuzzgpu.errors import UserError
from fuzzgpu.sass import buildline, names, toolchain

from sass_cli import own_cache, sass_cli  # noqa: F401 -- own_cache: the autouse fixture

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "tests" / "kernels"
DATA = ROOT / "tests" / "data" / "sass"
SHAPE = KERNELS / "D_flashmla_shape.cu"

needs_toolchain = pytest.mark.skipif(
    sass.find_tool("nvcc") is None or sass.find_tool("cuobjdump") is None,
    reason="needs nvcc and cuobjdump (pip install nvidia-cuda-cuobjdump)")




def _json(capsys, *args: str) -> tuple[int, list[dict]]:
    rc, out, _ = sass_cli(capsys, "--json", *args)
    return rc, [json.loads(line) for line in out.splitlines()]


def _verdicts(objs: list[dict]) -> list[tuple]:
    """What a person compares between two inputs: per arch, each finding's fingerprint and verdict."""
    return sorted((d["arch"], f["fingerprint"], f["verdict"], f["check"]) for d in objs for f in d["findings"])


# ------------------------------------------------------------------------------------------------
# the nvcc command line (pure)
# ------------------------------------------------------------------------------------------------


def test_gencode_and_arch_code_targets():
    line = buildline.parse_nvcc_args([
        "nvcc", "-O3", "-gencode", "arch=compute_90a,code=sm_90a", "-gencode=arch=compute_100a,code=[sm_100a,compute_100a]",
        "-DFOO=1", "-I", "inc", "-std=c++17", "-lineinfo", "-Xptxas", "-v", "-c", "x.cu", "-o", "x.o", "-MD", "-MF", "x.d"])
    assert [(t.real, t.virtual) for t in line.targets] == [("sm_90a", "compute_90a"), ("sm_100a", "compute_100a")]
    assert line.ptx_only == ("compute_100a",) and line.sources == ("x.cu",) and line.opt == 3
    assert line.flags == ("-DFOO=1", "-Iinc", "-std=c++17", "-lineinfo", "-Xptxas=-v")  # -c, -o, -MD, -MF left out
    assert line.defines == ("FOO=1",)
    line = buildline.parse_nvcc_args(["nvcc", "-arch=compute_80", "-code=sm_90,compute_80", "k.cu"])
    assert [(t.real, t.virtual, t.plain) for t in line.targets] == [("sm_90", "compute_80", False)]
    assert toolchain.arch_flags("sm_90", "compute_80") == ["--gpu-architecture=compute_80", "--gpu-code=sm_90"]
    assert toolchain.arch_flags("sm_90a", "compute_90a") == ["-arch=sm_90a"]
    with pytest.raises(UserError, match="name the GPU arch"):
        buildline.parse_nvcc_args(["nvcc", "-arch=native", "k.cu"])


def test_target_flags_are_split_from_the_others():
    targets, ptx_only, rest = buildline.split_target_flags(
        ["-gencode=arch=compute_90a,code=sm_90a", "-DPDL", "-gencode", "arch=compute_80,code=[sm_80,compute_80]"])
    assert [t.real for t in targets] == ["sm_90a", "sm_80"] and ptx_only == ("compute_80",) and rest == ("-DPDL",)


def test_compile_commands_entries(tmp_path):
    lines = buildline.compile_commands_lines(DATA / "compile_commands.json")
    assert [Path(ln.sources[0]).name for ln in lines] == ["gdc_macro.cu", "gdc_macro.cu", "pdl_early_read.cu"]
    first = lines[0]
    assert first.cwd == str(DATA) and f"-I{DATA / 'include'}" in first.flags  # relative include made absolute
    assert first.defines == ("CUTLASS_ENABLE_GDC_FOR_SM90",) and [t.real for t in first.targets] == ["sm_90a"]
    assert len(buildline.compile_commands_lines(DATA / "compile_commands.json", ["pdl_early_read.cu"])) == 1
    with pytest.raises(UserError, match="no entry for nothere.cu"):
        buildline.compile_commands_lines(DATA / "compile_commands.json", ["nothere.cu"])
    bad = tmp_path / "compile_commands.json"
    bad.write_text('{"file": "x.cu"}')
    with pytest.raises(UserError, match="JSON array"):
        buildline.compile_commands_lines(bad)


# ------------------------------------------------------------------------------------------------
# the command line on real builds
# ------------------------------------------------------------------------------------------------


@needs_toolchain
def test_gencode_flag_checks_that_target(capsys):
    """Before: "Option '--cubin' is not allowed when compiling for multiple GPU code instances"."""
    rc, objs = _json(capsys, "--nvcc-flag=-gencode=arch=compute_90a,code=sm_90a", str(SHAPE))
    assert rc == 1 and [d["arch"] for d in objs] == ["sm_90a"]
    assert any(f["sync_sass"] == "ACQBULK" and "CONSTANT" in f["op_sass"] for f in objs[0]["findings"])
    rc, _, err = sass_cli(capsys, "--arch", "sm_100a", "--nvcc-flag=-gencode=arch=compute_90a,code=sm_90a", str(SHAPE))
    assert rc == 2 and "names none of the targets" in err


@needs_toolchain
def test_nvcc_command_line_after_dashes(capsys):
    rc, objs = _json(capsys, "--", "nvcc", "-O3", "-gencode", "arch=compute_90a,code=sm_90a", "-c", str(SHAPE), "-o", "x.o")
    assert rc == 1 and [d["arch"] for d in objs] == ["sm_90a"]
    assert not Path("x.o").exists()  # the build's outputs are not the oracle's
    rc, direct = _json(capsys, "--arch", "sm_90a", str(SHAPE))
    assert _verdicts(objs) == _verdicts(direct)


@needs_toolchain
def test_compile_commands_entry_with_its_defines_and_gdc(capsys):
    """The same file with and without the CUTLASS GDC define: the output says whether the PDL code
    is compiled in, lists the -D flags, and warns that PDL was compiled out."""
    rc, out, _ = sass_cli(capsys, "--compile-commands", str(DATA / "compile_commands.json"), "--entry", "gdc_macro.cu")
    assert rc == 1
    summaries = [line for line in out.splitlines() if "PDL code compiled in" in line]
    assert len(summaries) == 2
    assert "PDL code compiled in: yes; -D CUTLASS_ENABLE_GDC_FOR_SM90" in summaries[0]
    assert "PDL code compiled in: no" in summaries[1] and "-D " not in summaries[1]
    assert "PDL compiled out (CUTLASS compiles it in only with -DCUTLASS_ENABLE_GDC_FOR_SM90)" in out
    assert out.splitlines()[0] == summaries[0]  # the summary is the first thing a person reads


@needs_toolchain
def test_dash_G_alone_gets_a_hint(capsys):
    rc, _, err = sass_cli(capsys, "--arch", "sm_90", "--nvcc-flag=-G", str(SHAPE))
    assert rc == 2 and err.count("\n") == 1
    assert "Optimized debugging not supported" in err and "-O 0" in err


@needs_toolchain
def test_the_ptx_of_a_relocatable_build_names_ptxas_fatal_line_and_a_way_out(tmp_path, capsys):
    """ptxas assembles a .ptx as a whole program: the extern variables of a -rdc build are unresolved -- a warning for
    a sized one, then a fatal error for an unsized one (NCCL's ``ncclShmem`` and ``ncclDevFuncTable``).  The error
    quoted the warning (a hostile review, 2026-12-06); now the fatal line, and a hint of what to check instead."""
    ptx = tmp_path / "rdc.ptx"
    ptx.write_text(".version 8.5\n.target sm_90\n.address_size 64\n.extern .shared .align 16 .b8 shm[64];\n"
                   ".extern .global .align 8 .b8 table[];\n.visible .entry k()\n{\n\t.reg .b32 %r<3>;\n"
                   "\t.reg .b64 %rd<3>;\n\tld.shared.u32 %r1, [shm];\n\tmov.u64 %rd1, table;\n"
                   "\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n")
    rc, _, err = sass_cli(capsys, "--arch", "sm_90", str(ptx))
    assert rc == 2 and err.count("\n") == 1
    assert "fatal" in err and "'table'" in err and "warning" not in err and "relocatable (-rdc)" in err and "--ptx" in err


@needs_toolchain
@pytest.mark.parametrize("form", ["object", "executable", "shared", "fatbin"])
def test_binaries_give_the_verdict_of_the_cu(tmp_path, capsys, form):
    """A kernel compiled to a .o, an executable, a .so and a fatbin (PTX embedded), with -lineinfo as
    `fuzzgpu sass` compiles a .cu: the same findings (fingerprints, verdicts) as the .cu.  (A build
    without line information has no source line in its fingerprints: docs/sass.md.)"""
    main = tmp_path / "main.cu"
    main.write_text("int main() { return 0; }\n")
    out = tmp_path / {"object": "k.o", "executable": "app", "shared": "libk.so", "fatbin": "k.fatbin"}[form]
    cmd = {"object": ["-c", str(SHAPE)], "executable": [str(SHAPE), str(main)],
           "shared": ["-shared", "-Xcompiler", "-fPIC", str(SHAPE)], "fatbin": ["-fatbin", str(SHAPE)]}[form]
    target = ["-arch=sm_90a"] if form != "fatbin" else ["-gencode=arch=compute_90a,code=[sm_90a,compute_90a]"]
    subprocess.run([sass.find_tool("nvcc") or "nvcc", *target, "-O3", "-lineinfo", *cmd, "-o", str(out)], check=True,
                   capture_output=True)
    rc_bin, from_bin = _json(capsys, str(out))
    rc_cu, from_cu = _json(capsys, "--arch", "sm_90a", str(SHAPE))
    assert rc_bin == rc_cu == 1
    assert _verdicts(from_bin) == _verdicts(from_cu) and _verdicts(from_cu)
    assert all(d["complete"] for d in from_bin)


@needs_toolchain
def test_binary_without_ptx_and_cubin_with_given_ptx(tmp_path, capsys):
    nvcc = sass.find_tool("nvcc") or "nvcc"
    obj = tmp_path / "sass_only.o"
    subprocess.run([nvcc, "-gencode=arch=compute_90a,code=sm_90a", "-lineinfo", "-c", str(SHAPE), "-o", str(obj)], check=True)
    rc, _, err = sass_cli(capsys, str(obj))
    assert rc == 2 and "has no PTX to compare with" in err and "code=[sm_90a,compute_90a]" in err
    ptx, cubin = tmp_path / "k.ptx", tmp_path / "lonely.cubin"
    subprocess.run([nvcc, "-arch=sm_90a", "-lineinfo", "-ptx", str(SHAPE), "-o", str(ptx)], check=True)
    subprocess.run([sass.find_tool("ptxas") or "ptxas", "-arch=sm_90a", "-O3", str(ptx), "-o", str(cubin)], check=True)
    rc_obj, with_ptx = _json(capsys, "--ptx", str(ptx), str(obj))
    rc_cubin, cub = _json(capsys, "--ptx", str(ptx), str(cubin))
    rc_cu, from_cu = _json(capsys, "--arch", "sm_90a", str(SHAPE))
    assert rc_obj == rc_cubin == rc_cu == 1
    assert _verdicts(with_ptx) == _verdicts(cub) == _verdicts(from_cu)


def test_not_a_cuda_binary_is_bad_input(tmp_path, capsys):
    elf = tmp_path / "tool"
    elf.write_bytes(Path("/bin/true").read_bytes() if Path("/bin/true").is_file() else b"\x7fELF" + b"\0" * 60)
    if sass.find_tool("cuobjdump") is None:
        pytest.skip("needs cuobjdump")
    rc, _, err = sass_cli(capsys, str(elf))
    assert rc == 2 and err.count("\n") == 1 and "tool" in err


# ------------------------------------------------------------------------------------------------
# the cache of .cu inputs
# ------------------------------------------------------------------------------------------------


@needs_toolchain
def test_cache_is_keyed_by_the_preprocessed_source(tmp_path, monkeypatch):
    """A second check of an unchanged .cu does not compile; an edit of a header it includes does."""
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "val.h").write_text("#define VAL 1\n")
    src = tmp_path / "k.cu"
    src.write_text('#include "val.h"\n__global__ void k(int* p) { p[threadIdx.x] = VAL; }\n')
    cache = tmp_path / "cache"
    calls = []
    real = toolchain.compile_cu

    def counting(*a, **k):
        calls.append(a[0])
        return real(*a, **k)

    monkeypatch.setattr(toolchain, "compile_cu", counting)
    flags = (f"-I{inc}",)
    first = sass.check_path(src, ("sm_90",), nvcc_flags=flags, cache_dir=cache)
    again = sass.check_path(src, ("sm_90",), nvcc_flags=flags, cache_dir=cache)
    assert len(calls) == 1 and first[0].to_dict() == again[0].to_dict()
    (inc / "val.h").write_text("#define VAL 2\n")
    sass.check_path(src, ("sm_90",), nvcc_flags=flags, cache_dir=cache)
    assert len(calls) == 2
    sass.check_path(src, ("sm_90",), nvcc_flags=(*flags, "-DOTHER"), cache_dir=cache)
    assert len(calls) == 3  # the flags are part of the key
    sass.check_path(src, ("sm_90",), nvcc_flags=flags, cache_dir=None)
    assert len(calls) == 4  # --no-cache


# ------------------------------------------------------------------------------------------------
# names
# ------------------------------------------------------------------------------------------------

BF16 = "_Z28flash_fwd_splitkv_mla_kernelIN7cutlass10bfloat16_tELi576ELb1E11FlashParamsEvPT_T2_"
FP16 = "_Z28flash_fwd_splitkv_mla_kernelIN7cutlass6half_tELi576ELb1E11FlashParamsEvPT_T2_"


def test_names_are_demangled_and_kept_apart(monkeypatch):
    pytest.importorskip("cxxfilt")
    assert names.demangle(BF16) == ("void flash_fwd_splitkv_mla_kernel<cutlass::bfloat16_t, 576, true, FlashParams>"
                                    "(cutlass::bfloat16_t*, FlashParams)")
    assert names.demangle("fuzzgpu_P0") == "fuzzgpu_P0"
    shown = names.display_names([BF16, FP16, "_Z10fuzzgpu_P0Pi"])
    assert shown[BF16] == "flash_fwd_splitkv_mla_kernel<bfloat16_t, 576, true, FlashParams>"
    assert shown[FP16] == "flash_fwd_splitkv_mla_kernel<half_t, 576, true, FlashParams>"
    assert shown["_Z10fuzzgpu_P0Pi"] == "fuzzgpu_P0"
    monkeypatch.setattr(names, "LONG", 30)  # a long name keeps only the arguments that differ
    shown = names.display_names([BF16, FP16])
    assert shown == {BF16: "flash_fwd_splitkv_mla_kernel<bfloat16_t, …>", FP16: "flash_fwd_splitkv_mla_kernel<half_t, …>"}


def test_overloads_without_templates_stay_apart():
    pytest.importorskip("cxxfilt")
    assert names.display_names(["_Z1kPi", "_Z1kPf"]) == {"_Z1kPi": "k(int*)", "_Z1kPf": "k(float*)"}


def test_kernels_of_one_name_in_two_namespaces_are_named_by_their_namespaces():
    """``a::k(int*)`` and ``b::k(int*)`` were ``k#55a4db`` and ``k#d77bcf``: a hash where the namespace tells
    them apart; one ``k`` alone is still ``k``, and the same kernel in the same namespace twice (overloads)
    keeps its parameter lists."""
    pytest.importorskip("cxxfilt")
    a, b = "_ZN1a1kEPi", "_ZN1b1kEPi"
    assert names.display_names([a, b]) == {a: "a::k", b: "b::k"}
    assert names.display_names([a]) == {a: "k"}
    t1, t2 = "_ZN1a1tIfEEvPT_", "_ZN1b1tIfEEvPT_"  # a::t<float>, b::t<float>
    assert names.display_names([t1, t2]) == {t1: "a::t<float>", t2: "b::t<float>"}
    assert names.display_names(["_ZN1a1kEPi", "_ZN1a1kEPf"]) == {"_ZN1a1kEPi": "k(int*)", "_ZN1a1kEPf": "k(float*)"}


@needs_toolchain
def test_cli_prints_each_instantiation_by_its_own_name(capsys):
    pytest.importorskip("cxxfilt")
    rc, out, _ = sass_cli(capsys, "--compile-commands", str(DATA / "compile_commands.json"), "--entry", "gdc_macro.cu")
    assert "decode_kernel<float>:" in out and "decode_kernel<int>:" in out and "_Z" not in out


@needs_toolchain
def test_help_examples_of_real_builds_run_as_pasted(tmp_path):
    """The --help examples of this command that point at real builds run from a clone (the others
    are run by their own tests); what they write goes to a scratch folder."""
    import shlex
    import sys

    help_text = subprocess.run([sys.executable, "-m", "fuzzgpu", "sass", "--help"], capture_output=True, text=True,
                               cwd=ROOT, check=True).stdout
    wanted = ("-gencode", "--compile-commands", "-- nvcc", "--sarif", "--pdl-review")
    examples = [line.strip().split("   ")[0] for line in help_text.splitlines()
                if line.strip().startswith("fuzzgpu sass") and any(w in line for w in wanted)]
    assert len(examples) == 5, examples
    for ex in examples:
        argv = shlex.split(ex)[1:]
        argv = [str(ROOT / a) if (ROOT / a).exists() and a.startswith("tests/") else a for a in argv]
        r = subprocess.run([sys.executable, "-m", "fuzzgpu", *argv], capture_output=True, text=True, cwd=tmp_path,
                           timeout=600, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
        assert r.returncode in (0, 1), (ex, r.stderr[-500:])
        assert "Traceback" not in r.stderr


def test_exit_4_not_fully_checked_apart_from_3_environment(monkeypatch, capsys, tmp_path):
    """Item 3: "not fully checked" (4) and "the environment failed" (3) are different statuses,
    whatever the analysis finds: a report with something unchecked, and a missing tool."""
    from fuzzgpu.errors import MissingTool

    src = tmp_path / "k.cu"
    src.write_text("")
    partial = sass.Report("k.cu", "sm_90", (), unchecked=("kernel k has no SASS",))
    monkeypatch.setattr(sass, "check_path", lambda *a, **k: [partial])
    rc, out, _ = sass_cli(capsys, "--arch", "sm_90", str(src))
    assert rc == sass.EXIT_NOT_FULLY_CHECKED == 4
    assert "not fully checked (the module)" in out.splitlines()[0] and "clean" not in out

    def missing(*a, **k):
        raise MissingTool("nvdisasm", "pip install nvidia-cuda-nvdisasm")

    monkeypatch.setattr(sass, "check_path", missing)
    rc, _, err = sass_cli(capsys, "--arch", "sm_90", str(src))
    assert rc == 3 and "nvdisasm not found" in err
    assert sass.exit_status([partial]) == 4 and sass.exit_status([sass.Report("k.cu", "sm_90", ())]) == 0


#: a CUTLASS 7107b05 kernel (examples/63_hopper_gemm_with_weight_prefetch, sm_90a): libstdc++'s
#: demangler (and binutils 2.40's c++filt) refuse its enum template argument (GMMA::ScaleIn)
CUTLASS_KERNEL = (
    "_ZN7cutlass13device_kernelINS_4gemm6kernel13GemmUniversalIN4cute5tupleIJiiiiEEENS1_10collective13CollectiveMmaINS1_46MainloopSm90TmaGmmaWarpSpecializedWithPrefetchILi13ENS5_IJNS4_1CILi1EEESB_SB_EEENS1_59KernelTmaWarpSpecializedFP8FastAccumWithPrefetchAndSplitDMAEEENS5_IJNSA_ILi64EEESF_NSA_ILi128EEEEEENS_12float_e4m3_tENS5_IJlSB_lEEENS_12float_e5m2_tESJ_NS4_8TiledMMAINS4_8MMA_AtomIJNS4_4SM904GMMA30MMA_64x64x32_F32E4M3E5M2_SS_TNILNSO_7ScaleInE1ELSQ_1EEEEEENS4_6LayoutISC_NS5_IJNSA_ILi0EEESU_SU_EEEEENS5_IJNS4_10UnderscoreESX_SX_EEEEENS4_13SM90_TMA_LOADENS4_14ComposedLayoutINS4_7SwizzleILi3ELi4ELi3EEENS4_18smem_ptr_flag_bitsILi8EEENST_INS5_IJNSA_ILi8EEESG_EEENS5_IJSG_SB_EEEEEEEvNS4_8identityES10_S1A_vS1B_EENS_8epilogue10collective18CollectiveEpilogueINS1D_22Sm90TmaWarpSpecializedILi1ELi1ELi32ELb0ELb0EEEJSH_NS5_IJSF_SF_EEESI_NS5_IJSB_llEEESI_S1J_NS1D_6fusion15FusionCallbacksIS1H_NS1K_17LinearCombinationISI_fSI_fLNS_15FloatRoundStyleE2EEESH_S1I_JEEES10_NS11_INS12_ILi2ELi4ELi3EEES15_NST_INS5_IJSF_S16_EEENS5_IJSB_SF_EEEEEEENS4_39AutoVectorizingCopyWithAssumedAlignmentILi128EEENS4_14SM90_TMA_STOREES1U_S1W_NS4_9Copy_AtomIJNS4_17SM90_U32x4_STSM_NENS_6half_tEEEEvEEEvvEEEEvNT_6ParamsE")


@pytest.mark.skipif(__import__("shutil").which("llvm-cxxfilt") is None, reason="needs llvm-cxxfilt")
def test_a_name_the_runtime_refuses_is_demangled_by_the_next_demangler():
    names.demangle.cache_clear()
    full = names.demangle(CUTLASS_KERNEL)
    assert full.startswith("void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int>")
    assert names.display_name(CUTLASS_KERNEL) == "device_kernel<GemmUniversal<tuple<int, int, int, in...>"


def test_nested_template_arguments_keep_what_differs():
    """flash-attention's combine kernels are 108 instantiations of device_kernel<FlashAttnFwdCombine<...>>
    with one template argument each: what tells them apart is inside it."""
    a = ["FlashAttnFwdCombine<tuple<C<16>, C<64> >, 4, 256, 1, false, true, bfloat16_t, float, Sm80>"]
    b = ["FlashAttnFwdCombine<tuple<C<16>, C<64> >, 4, 256, 1, false, true, half_t, float, Sm90>"]
    c = ["FlashAttnFwdCombine<tuple<C<32>, C<64> >, 4, 256, 1, false, true, half_t, float, Sm90>"]
    assert names._elide(a, [b, c]) == ["FlashAttnFwdCombine<tuple<C<16>, …>, …, bfloat16_t, …>"]
    assert names._elide(b, [a, c]) == ["FlashAttnFwdCombine<tuple<C<16>, …>, …, half_t, …>"]
    assert names._elide(c, [a, b]) == ["FlashAttnFwdCombine<tuple<C<32>, …>, …>"]  # told apart by its first
    assert names._elide(["int", "x" * 50], []) == ["int", "x" * 37 + "..."]  # a lone one: clipped, all kept
