"""``fuzzgpu sass`` never says "clean" for code it did not check (a hostile review, 2026-12-05): a
cubin given another module's PTX, a module with no kernel, findings left out by ``--only``; a SARIF
log carries what was not checked; a device-linked (``-rdc``) build is checked from the PTX of each
of its translation units; ``-x cu`` makes a ``.cpp`` a CUDA source, as CMake's CUDA builds write it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fuzzgpu import sass
from fuzzgpu.sass import buildline, checks
from fuzzgpu.sass.report import EXIT_CLEAN, EXIT_FINDING, EXIT_NOT_FULLY_CHECKED

from sass_cli import own_cache, sass_cli  # noqa: F401 -- own_cache: the autouse fixture

ROOT = Path(__file__).resolve().parents[2]
SHAPE = ROOT / "tests" / "kernels" / "D_flashmla_shape.cu"
OTHER = "__global__ void other(int* p) { p[threadIdx.x] = 1; }\n"

needs_nvcc = pytest.mark.skipif(sass.find_tool("nvcc") is None or sass.find_tool("nvdisasm") is None,
                                reason="needs nvcc and nvdisasm")
needs_cuobjdump = pytest.mark.skipif(sass.find_tool("cuobjdump") is None, reason="needs cuobjdump")


def _nvcc(tmp: Path, *args: str) -> None:
    subprocess.run([sass.require_tool("nvcc"), "-O3", *args], check=True, capture_output=True, cwd=tmp)


@pytest.fixture()
def shape_and_other(tmp_path: Path) -> Path:
    """A cubin of two kernels (FlashMLA's hoisted-``__ldg`` shape and a plain store), and the PTX of
    the plain kernel alone (``one.ptx``)."""
    (tmp_path / "two.cu").write_text(SHAPE.read_text() + OTHER)
    (tmp_path / "one.cu").write_text(OTHER)
    _nvcc(tmp_path, "-arch=sm_90a", "-cubin", "two.cu", "-o", "two.cubin")
    _nvcc(tmp_path, "-arch=sm_90a", "-ptx", "one.cu", "-o", "one.ptx")
    return tmp_path


@needs_nvcc
def test_a_cubin_with_a_ptx_that_defines_part_of_it_is_not_fully_checked(capsys, shape_and_other):
    """The kernel with the hoist has SASS and no PTX in ``one.ptx``: it was never compared, so the
    module is "not fully checked" (exit 4), never "fully checked, clean" (exit 0, before)."""
    d = shape_and_other
    rc, out, _ = sass_cli(capsys, "--ptx", str(d / "one.ptx"), str(d / "two.cubin"))
    assert rc == EXIT_NOT_FULLY_CHECKED
    assert "clean;" not in out.splitlines()[0] and "not fully checked" in out.splitlines()[0]
    assert "D_flashmla_shape" in out and "no PTX to compare with" in out


@needs_nvcc
def test_a_cubin_with_a_ptx_beside_it_that_defines_none_of_it_is_refused(capsys, shape_and_other):
    """A stale ``two.ptx`` beside the cubin, or a file that is no PTX (/dev/null, a .cu), given as
    ``--ptx``: exit 2, naming the cubin's functions."""
    d = shape_and_other
    (d / "two.ptx").write_text((d / "one.ptx").read_text().replace("other", "renamed"))
    rc, _, err = sass_cli(capsys, str(d / "two.cubin"))
    assert rc == 2 and "the PTX beside it" in err and "defines none of the cubin's functions" in err
    for given in (Path("/dev/null"), SHAPE):
        rc, _, err = sass_cli(capsys, "--ptx", str(given), str(d / "two.cubin"))
        assert rc == 2 and "the PTX given (--ptx) defines none" in err


def test_sass_functions_the_ptx_does_not_define_are_unchecked_but_compiler_routines_are_not():
    """Pure: a top-level SASS function absent from the PTX is listed as not checked; ptxas's own
    arithmetic routines (no PTX of their own) are not."""
    assert checks.is_compiler_routine("__cuda_sm20_div_u64")
    assert checks.is_compiler_routine("__internal_0_$__cuda_sm3x_div_rn_noftz_f32_slowpath")
    assert not checks.is_compiler_routine("_Z5otherPi")


@needs_nvcc
@pytest.mark.parametrize("source", ["", "template <int N> __global__ void k(int* p) {\n"
                                        "  asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");\n  p[N] = __ldg(p + 1);\n}\n"])
def test_a_module_with_no_kernel_is_not_clean(capsys, tmp_path, source):
    """An empty .cu, or one whose only kernel is a template never instantiated: nothing was checked
    (exit 4), and no "PDL compiled out" warning for a wait that was never compiled at all."""
    cu = tmp_path / "k.cu"
    cu.write_text(source)
    rc, out, _ = sass_cli(capsys, "--arch", "sm_90", str(cu))
    assert rc == EXIT_NOT_FULLY_CHECKED
    assert "no kernel in the module: nothing was checked" in out and "clean" not in out
    assert "compiled-out" not in out


@needs_nvcc
def test_findings_left_out_by_only_are_not_called_clean(capsys):
    """``--only proxy`` on a kernel whose one finding is an ``.nc`` hoist: no finding shown, exit 0,
    but the lines say a finding was left out rather than "clean"; the JSON's ``clean`` stays false."""
    rc, out, err = sass_cli(capsys, "--arch", "sm_90", "--only", "proxy", str(SHAPE))
    assert rc == EXIT_CLEAN
    assert "clean" not in out and out.count("no finding of the kinds --only names (1 other(s) not shown)") == 2
    assert "1 other finding(s) left out by --only" in err
    rc, out, _ = sass_cli(capsys, "--arch", "sm_90", "--only", "proxy", "--json", str(SHAPE))
    assert json.loads(out.splitlines()[0])["clean"] is False
    assert sass_cli(capsys, "--arch", "sm_90", "--only", "nc", str(SHAPE))[0] == EXIT_FINDING


@needs_nvcc
def test_a_sarif_log_says_what_was_not_checked(capsys, tmp_path, shape_and_other):
    """No result in the log does not mean clean: each module or function not fully checked is a
    warning notification of the run's invocation, an input that could not be read an error one."""
    d = shape_and_other
    sarif = tmp_path / "r.sarif"
    rc, _, _ = sass_cli(capsys, "--ptx", str(d / "one.ptx"), "--sarif", str(sarif), str(d / "two.cubin"),
                        str(tmp_path / "missing.cu"))
    assert rc == 2  # an input not checked
    (inv,) = json.loads(sarif.read_text())["runs"][0]["invocations"]
    assert inv["executionSuccessful"] is False
    levels = [(n["level"], n["message"]["text"]) for n in inv["toolExecutionNotifications"]]
    assert any(lv == "warning" and "not fully checked" in t and "D_flashmla_shape" in t for lv, t in levels)
    assert any(lv == "error" and "missing.cu" in t for lv, t in levels)
    rc, _, _ = sass_cli(capsys, "--arch", "sm_90", "--sarif", str(sarif), str(SHAPE))
    (inv,) = json.loads(sarif.read_text())["runs"][0]["invocations"]
    assert rc == EXIT_FINDING and inv == {"executionSuccessful": True, "toolExecutionNotifications": []}


@needs_nvcc
@needs_cuobjdump
def test_a_device_linked_executable_is_checked_from_each_translation_units_ptx(capsys, tmp_path):
    """``nvcc -rdc=true a.cu b.cu``: the executable embeds no PTX; one TU's PTX is refused with a
    message naming what is missing and how to pass both; both (``--ptx`` twice) check it."""
    (tmp_path / "a.cu").write_text("__device__ int g;\n__global__ void ka(int* p) { p[threadIdx.x] = g; }\n"
                                   "int main() { return 0; }\n")
    (tmp_path / "b.cu").write_text("__global__ void kb(const int* __restrict__ p, int* q) {\n"
                                   "  asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");\n  q[0] = __ldg(p);\n}\n")
    _nvcc(tmp_path, "-arch=sm_90a", "-rdc=true", "-o", "exe", "a.cu", "b.cu")
    for tu in ("a", "b"):
        _nvcc(tmp_path, "-arch=sm_90a", "-rdc=true", "-ptx", f"{tu}.cu", "-o", f"{tu}.ptx")
    exe, a, b = (str(tmp_path / n) for n in ("exe", "a.ptx", "b.ptx"))
    rc, _, err = sass_cli(capsys, exe)
    assert rc == 2 and "device-linked -rdc executable embeds none" in err
    rc, out, _ = sass_cli(capsys, "--ptx", a, exe)  # one TU's: its kernel checked, the other's listed
    assert rc == EXIT_NOT_FULLY_CHECKED and "ka: clean" in out and "_Z2kbPKiPi has SASS but no PTX" in out
    rc, _, err = sass_cli(capsys, "--ptx", str(SHAPE), exe)  # no PTX of it at all
    assert rc == 2 and "defines none of the functions" in err and "--ptx a.ptx --ptx b.ptx" in err
    for order in ((a, b), (b, a)):
        rc, out, _ = sass_cli(capsys, "--ptx", order[0], "--ptx", order[1], exe)
        assert rc in (EXIT_CLEAN, EXIT_FINDING) and "in 2 function(s); fully checked" in out


@needs_nvcc
def test_joined_modules_keep_their_own_source_files(tmp_path):
    """Every module numbers its ``.file`` from 1: joined as they were, the last module's table named
    every module's lines (a device-linked DeepEP build mapped 0 of 897 accesses of one TU's kernel).
    Each function of the joined text keeps its own module's file."""
    from fuzzgpu.sass.ptx_parser import parse_ptx
    from fuzzgpu.sass.ptx_text import join_modules

    texts = []
    for tu, body in (("a", "p[threadIdx.x] = p[threadIdx.x + 1] + 1;"), ("b", "q[0] = q[1] * 3;")):
        (tmp_path / f"{tu}.cu").write_text(f"__global__ void k{tu}(int* {'p' if tu == 'a' else 'q'}) {{\n  {body}\n}}\n")
        _nvcc(tmp_path, "-arch=sm_90a", "-rdc=true", "-lineinfo", "-ptx", f"{tu}.cu", "-o", f"{tu}.ptx")
        texts.append((tmp_path / f"{tu}.ptx").read_text())
    for order in (texts, texts[::-1]):
        funcs = {f.name: f for f in parse_ptx(join_modules(order))}
        for tu in ("a", "b"):
            files = {Path(src[0][0]).name for i in funcs[f"_Z2k{tu}Pi"].instrs if (src := i.src)}
            assert files == {f"{tu}.cu"}, (tu, files)


def test_pairing_leaves_out_ptxas_routines():
    """A relocatable object's cubin carries ptxas's arithmetic routines as functions of their own
    (DeepEP's internode_ll.o: ``__cuda_sm20_rcp_rn_f32_slowpath``): no PTX defines them, so the
    pairing asks the PTX for the module's own functions only (the object was refused before)."""
    from fuzzgpu.sass.binaries import pair_ptx

    ptx = ".version 8.8\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n"
    assert pair_ptx("sm_90", {"k", "__cuda_sm20_rcp_rn_f32_slowpath"}, [("k.ptx", ptx)]) == ("k.ptx", ptx)
    assert pair_ptx("sm_90", {"k", "other"}, [("k.ptx", ptx)]) is None


def test_x_cu_makes_a_cpp_file_a_cuda_source():
    """nvcc's ``-x cu`` applies to the input files after it (CMake's CUDA builds of ``.cpp`` files);
    without it a ``.cpp`` is host code, not the oracle's."""
    for spelling, flags in ((["-x", "cu"], ("-x", "cu")), (["-xcu"], ("-x", "cu")), (["--x=cu"], ("--x=cu",)),
                            (["--x", "cu"], ("--x=cu",))):
        line = buildline.parse_nvcc_args(["nvcc", "-O3", "-arch=sm_90a", *spelling, "-c", "d.cpp", "-o", "d.o"])
        assert line.sources == ("d.cpp",) and line.flags == flags
    assert buildline.parse_nvcc_args(["nvcc", "-O3", "-c", "d.cpp"]).sources == ()
    assert buildline.parse_nvcc_args(["nvcc", "-c", "d.cpp", "-x", "cu", "e.cc"]).sources == ("e.cc",)


@pytest.mark.parametrize("option, value, said", [
    ("--sarif", "{tmp}/no-such-folder/x.sarif", "no such folder"),
    ("--sarif", "{tmp}", "is a folder"),
    ("--write-baseline", "{tmp}/no-such-folder/b.json", "no such folder"),
    ("--keep", "{tmp}/a-file", "is a file"),
])
def test_output_paths_are_refused_before_any_compile(capsys, tmp_path, monkeypatch, option, value, said):
    """An output path that cannot be written was found only after every compile, and said as an
    environment error (exit 3); now exit 2 before nvcc runs (the missing folder is not created)."""
    from fuzzgpu.sass import inputs

    def no_compile(*args, **kwargs):
        raise AssertionError("compiled before the output paths were checked")

    monkeypatch.setattr(inputs, "check_cu", no_compile)
    (tmp_path / "a-file").write_text("")
    rc, _, err = sass_cli(capsys, "--arch", "sm_90", option, value.format(tmp=tmp_path), str(SHAPE))
    assert rc == 2 and err.count("\n") == 1 and f"{option} " in err and said in err
    assert not (tmp_path / "no-such-folder").exists()


@needs_nvcc
def test_a_device_function_the_ptx_does_not_define_is_not_checked(capsys, tmp_path):
    """A ``__noinline__`` helper compiled into its kernel's section, its ``.func`` missing from the PTX
    given: its accesses and fence were never compared, yet the module was "fully checked, clean" (a
    re-review of f69750c, which flagged only functions with sections of their own)."""
    (tmp_path / "dev.cu").write_text("__device__ __noinline__ void helper(int* p, int v) {\n"
                                     "  p[threadIdx.x] = v; __threadfence(); p[threadIdx.x + 32] = v + 1;\n}\n"
                                     "__global__ void kd(int* p) { int x = p[0]; helper(p, x); }\n")
    _nvcc(tmp_path, "-arch=sm_90a", "-cubin", "-o", "dev.cubin", "dev.cu")
    _nvcc(tmp_path, "-arch=sm_90a", "-ptx", "-o", "full.ptx", "dev.cu")
    full = (tmp_path / "full.ptx").read_text()
    start = full.index(".visible .func _Z6helperPii") if ".visible .func _Z6helperPii" in full else full.index(".func _Z6helperPii")
    body_end = full.index("\n}\n", full.index("{", start)) + 3
    (tmp_path / "cut.ptx").write_text(full[:start] + full[body_end:])
    rc, out, _ = sass_cli(capsys, "--ptx", str(tmp_path / "full.ptx"), str(tmp_path / "dev.cubin"))
    assert rc in (EXIT_CLEAN, EXIT_FINDING) and "helper (in kd)" in out
    rc, out, _ = sass_cli(capsys, "--ptx", str(tmp_path / "cut.ptx"), str(tmp_path / "dev.cubin"))
    assert rc == EXIT_NOT_FULLY_CHECKED and "_Z6helperPii has SASS but no PTX" in out and "clean;" not in out.splitlines()[0]
    assert "kd: clean" in out  # the kernel itself is still checked


@pytest.mark.parametrize("name", ["y$(touch PWNED).cu", "p\"q.cu", "b`touch PWNED`.cu"])
def test_a_path_nvcc_s_shell_would_interpret_is_refused_before_nvcc_runs(capsys, tmp_path, name):
    """nvcc hands its input's name to a shell: a file named ``y$(touch PWNED).cu`` ran ``touch`` (a hostile
    user's check).  Such a path is refused, one line, exit 2, and nothing runs."""
    src = tmp_path / name
    src.write_text('extern "C" __global__ void k(int* p) { p[0] = 1; }\n')
    rc, out, err = sass_cli(capsys, "--arch", "sm_90", str(src))
    assert rc == 2 and "which nvcc's shell would interpret" in err and len(err.strip().splitlines()) == 1, (rc, out, err)
    assert not (tmp_path / "PWNED").exists() and not Path("PWNED").exists()


def test_a_ptx_that_is_not_text_is_bad_input(capsys, tmp_path):
    """A ``.ptx`` of binary bytes was an 'internal error' (UnicodeDecodeError: 'a bug in fuzzgpu'), exit 3."""
    bad = tmp_path / "garbage.ptx"
    bad.write_bytes(b".version 8.5\n\xff\xfe garbage\n")
    rc, _, err = sass_cli(capsys, str(bad))
    assert rc == 2 and "is not UTF-8 text" in err and "internal error" not in err, (rc, err)


# -- source files named outside ASCII ------------------------------------------------------------------------


def test_escaped_file_names_decode_to_the_name_on_disk():
    """PTX spells a name's UTF-8 bytes as octal escapes (``.file 1 "/s/\\303\\251.cu"``); nvdisasm prints the
    cubin's copy with its last backslash as a folder separator (``/s/\\303/251.cu``): both are ``/s/é.cu``."""
    from fuzzgpu.sass.file_names import nvdisasm_file_name, ptx_file_name

    assert ptx_file_name("/s/\\303\\251.cu") == "/s/é.cu" == nvdisasm_file_name("/s/\\303/251.cu")
    assert ptx_file_name("/s/\\346\\227\\245\\346\\234\\254.cu") == "/s/日本.cu" == nvdisasm_file_name("/s/\\346\\227\\245\\346\\234/254.cu")
    assert ptx_file_name("/s/d\\303\\251/x.cu") == "/s/dé/x.cu" == nvdisasm_file_name("/s/d\\303\\251/x.cu")
    # a folder named é holding 251.cu is what it says (valid UTF-8 as printed: nothing to undo)
    assert nvdisasm_file_name("/s/\\303\\251/251.cu") == "/s/é/251.cu"
    assert ptx_file_name("/s/plain.cu") == "/s/plain.cu" and ptx_file_name("/s/\\351.cu") == "/s/\\xe9.cu"  # not UTF-8: kept visible


@needs_nvcc
@pytest.mark.parametrize("name", ["é.cu", "日本.cu", "dé/x.cu"])
def test_a_source_named_outside_ascii_is_fully_checked(capsys, tmp_path, name):
    """Its PTX and SASS line tables spell the name differently (above): the instructions were never paired and
    every function was 'not fully checked', exit 4.  The PDL note names the file as it is on disk."""
    src = tmp_path / name
    src.parent.mkdir(exist_ok=True)
    src.write_text("__global__ void k(const float* __restrict__ a, float* out) {\n"
                   "  float v = __ldg(a + threadIdx.x);\n"
                   "  cudaGridDependencySynchronize();\n"
                   "  out[threadIdx.x] = v;\n}\n")
    rc, out, err = sass_cli(capsys, "--arch", "sm_90", str(src))
    assert rc == EXIT_CLEAN and "fully checked, clean" in out and "not fully checked" not in out, (rc, out, err)
    assert f"read-before-wait at {src}:2 in k" in out, out


@needs_nvcc
def test_a_ptx_named_with_control_characters_prints_one_line_per_result(capsys, tmp_path):
    """A ``.ptx`` or ``.cubin`` reaches no shell, so its name may hold a newline or a terminal escape: the
    result lines printed it raw (a line broken in two; a terminal recoloured).  Shown escaped, as the error
    lines do."""
    cu = tmp_path / "k.cu"
    cu.write_text("__global__ void k(int* x) { x[0] = 1; }\n")
    ptx = tmp_path / "a\nb\x1b[31m.ptx"
    subprocess.run([sass.require_tool("nvcc"), "-arch=sm_90", "-lineinfo", "-ptx", "-o", str(ptx), str(cu)], check=True)
    rc, out, err = sass_cli(capsys, "--arch", "sm_90", str(ptx))
    shown = str(ptx).replace("\n", "\\n").replace("\x1b", "\\x1b")
    assert rc == EXIT_CLEAN and "\x1b" not in out, (rc, out, err)
    lines = out.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith(f"{shown} sm_90") for line in lines), out


@needs_nvcc
def test_spills_in_ptxas_out_of_line_subroutines_are_not_unchecked(capsys):
    """With few registers ptxas spills inside its division slow path, a subroutine reached by CALL.REL.NOINC that
    the CFG does not enter: its STL/LDL were 'out of line that no path from the entry reaches: not checked' --
    TransformerEngine's cast.cu had 10 functions 'not fully checked' for this alone.  Local memory is the
    thread's own: no other thread observes its order."""
    src = Path(__file__).resolve().parents[1] / "kernels" / "captured" / "spill_in_slowpath.cu"
    rc, out, err = sass_cli(capsys, "--arch", "sm_90a", "--nvcc-flag=-maxrregcount=24", str(src))
    assert rc == EXIT_CLEAN and "fully checked, clean" in out and "out of line" not in out, (rc, out, err)


@needs_nvcc
def test_loads_on_exclusive_paths_are_never_merged(capsys):
    """Two loads of one address on the two arms of an ``if`` (each arm has its own SASS load) were paired with one
    SASS load by the address mapping and reported 'merged' (2 false permitted-hazards): no path runs both."""
    src = Path(__file__).resolve().parents[1] / "kernels" / "captured" / "layout_pair.cu"
    rc, out, err = sass_cli(capsys, "--arch", "sm_90a", "--nvcc-flag=-lineinfo", str(src))
    assert rc == EXIT_CLEAN and "merged" not in out and "fully checked, clean" in out, (rc, out, err)


@needs_nvcc
def test_a_per_thread_mbarrier_init_written_by_a_plain_store_is_accounted(capsys):
    """CUB's warpspeed sync_handler initialises one mbarrier per thread; ptxas 13.0 on sm_100a writes it with a plain
    STS.64 (no SYNCS.EXCH): 'SASS STS with no PTX STS', not fully checked.  It is that init's write (by its source
    line), which orders nothing (semantics: mbarrier.init): accounted, with a note saying its order is not checked."""
    src = Path(__file__).resolve().parents[1] / "kernels" / "captured" / "mbar_init_per_thread.cu"
    rc, out, err = sass_cli(capsys, "--arch", "sm_100a", "--details", str(src))
    assert rc == EXIT_CLEAN and "fully checked, clean" in out and "no PTX STS" not in out, (rc, out, err)
    assert "is ptxas's expansion of `mbarrier.init.shared.b64" in out and "its order is not checked as one" in out


@needs_nvcc
def test_a_register_move_at_the_join_does_not_open_an_impossible_path(capsys):
    """ptxas -O0 tests the cluster size before the cluster barrier's arrive and again before its wait, and puts a
    ``MOV Rn, Rn`` at the join before the second test; the CFG linked the two tests only across NOP/LDC/ISETP, so
    the path that skips the arrive and takes the wait survived, with no release after the shared load: a false
    'forbidden' (FlashInfer's trtllm all-reduce at -O0: 28 of them)."""
    src = Path(__file__).resolve().parents[1] / "kernels" / "captured" / "cluster_sync_O0.cu"
    rc, out, err = sass_cli(capsys, "--arch", "sm_90a", "--nvcc-flag=-lineinfo", "--nvcc-flag=-Xptxas", "--nvcc-flag=-O0", str(src))
    assert rc == EXIT_CLEAN and "forbidden" not in out.replace("0 forbidden", "") and "fully checked, clean" in out, (rc, out, err)


@needs_nvcc
def test_stores_combined_with_a_release_into_one_wide_store_are_not_checked(capsys):
    """ptxas combines three weak stores with the ``.release`` store after them into one STG.E.128 after the release's
    MEMBAR.  They were reported 'deleted' with the dead-load rule's reason (a load's text for a store); whether one
    wide store keeps the release's order for the others is not the checker's to say: not checked, with a note."""
    src = Path(__file__).resolve().parents[1] / "kernels" / "captured" / "stores_combined.cu"
    rc, out, err = sass_cli(capsys, "--arch", "sm_90a", "--details", str(src))
    assert rc == EXIT_NOT_FULLY_CHECKED and "deleted" not in out and "finding(s) (0 permitted-hazard, 0 forbidden)" in out, (rc, out, err)
    assert out.count("combined with a store of another .sem or scope: not paired, its order not checked") == 3, out
