"""``fuzzgpu sass``: a compile error is one line about the user's file, never about a temporary file
of fuzzgpu's (the generated CUDA of a .litmus, nvcc's intermediate PTX), and a user's file name is
never read by a tool as an option.

The toolchain tests need nvcc/ptxas (13.0 here) and skip with the reason without them; the renaming
helpers are pure and run everywhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu import sass
from fuzzgpu.cli import main as cli_main
from fuzzgpu.sass import toolchain

LITMUS = Path(__file__).parents[1] / "litmus"

needs_toolchain = pytest.mark.skipif(
    sass.find_tool("nvcc") is None or sass.find_tool("ptxas") is None,
    reason="nvcc/ptxas not found (install the CUDA toolkit)",
)

BAD_CU = '__global__ void k(int* p) {\n#error boom here\n}\n'
BAD_ASM_CU = '__global__ void k(int* p) {\n  asm volatile("bogus.instr %0;" :: "r"(p[0]));\n}\n'


def _sass_error(capsys, *args: str) -> str:
    """The one line ``fuzzgpu sass ARGS`` prints on stderr, which must exit 2."""
    rc = cli_main(["sass", *args])
    err = capsys.readouterr().err
    assert rc == 2, (rc, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, lines
    assert "fuzzgpu-sass" not in lines[0], lines[0]  # no temporary folder of fuzzgpu's
    return lines[0]


def test_rename_paths_is_one_pass_longest_first():
    names = {"/t/a.cu": "x/a.cu", "/t/a.cu.ptx": "P", "x": "never"}
    assert toolchain.rename_paths("/t/a.cu.ptx, /t/a.cu:2:1", names) == "P, x/a.cu:2:1"
    assert toolchain.rename_paths("unchanged", {}) == "unchanged"


def test_arg_path_never_starts_with_a_dash():
    assert toolchain.arg_path(Path("-o.cu")) == "./-o.cu"
    assert toolchain.arg_path(Path("/abs/-o.cu")) == "/abs/-o.cu"
    assert toolchain.shown_path("a\nb\x1b[2J.cu") == "a\\nb\\x1b[2J.cu"


def test_intermediate_ptx_error_keeps_other_lines(tmp_path):
    line = "x.cu:2:2: error: #error boom"
    assert toolchain.intermediate_ptx_error(line, tmp_path, "x.cu") == line
    # a ptxas error about a .ptx outside nvcc's keep folder (the user's own) stays as it is
    other = "ptxas /elsewhere/y.ptx, line 3; error   : bad"
    assert toolchain.intermediate_ptx_error(other, tmp_path, "x.cu") == other
    (tmp_path / "x.ptx").write_text("a\n  bogus.instr %r1;\n")
    got = toolchain.intermediate_ptx_error(f"ptxas {tmp_path}/x.ptx, line 2; error   : Unknown", tmp_path, "u.cu")
    assert got == "u.cu: ptxas, line 2 of the PTX nvcc made from it ('bogus.instr %r1;'): error : Unknown"


@needs_toolchain
def test_litmus_compile_error_names_the_litmus_file(capsys):
    """An arch the user names that lacks one of the program's instructions is refused before nvcc
    runs, naming the .litmus file (docs/sass.md); nvcc's line (the kernels' #error) named the
    temporary /tmp/fuzzgpu-sass-src-*/NAME.cu."""
    path = LITMUS / "fence-acquire-release" / "FAR-MP-cta-crosscta.litmus"
    line = _sass_error(capsys, "--arch", "sm_80", str(path))
    assert line.startswith(f"fuzzgpu sass: error: {path}: "), line
    assert "fence.release needs sm_90" in line and "not sm_80" in line and "fuzzgpu-sass-src" not in line  # no temporary file


@needs_toolchain
def test_ptxas_error_in_a_cu_names_the_cu_file_and_the_ptx_line(tmp_path, capsys):
    """ptxas, run by nvcc, named nvcc's intermediate PTX in the temporary keep folder."""
    src = tmp_path / "badasm.cu"
    src.write_text(BAD_ASM_CU)
    line = _sass_error(capsys, "--arch", "sm_90", str(src))
    assert f"nvcc: {src}: ptxas, line " in line, line
    assert "of the PTX nvcc made from it ('bogus.instr %r1;')" in line, line


@needs_toolchain
def test_file_named_like_an_option_is_compiled_not_obeyed(tmp_path, capsys, monkeypatch):
    """``-o.cu`` (relative) reached nvcc as an option: 'Unknown option'; ``-x.ptx`` reached ptxas."""
    monkeypatch.chdir(tmp_path)
    Path("-o.cu").write_text(BAD_CU)
    line = _sass_error(capsys, "--arch", "sm_90", "--", "-o.cu")
    assert line.endswith("nvcc: -o.cu:2:2: error: #error boom here"), line
    Path("-x.ptx").write_text(".version 8.0\n.target sm_90\n.address_size 64\nbogus;\n")
    line = _sass_error(capsys, "--arch", "sm_90", "--", "-x.ptx")
    assert "ptxas: ptxas -x.ptx, line 4; fatal" in line, line


@needs_toolchain
def test_file_name_with_a_newline_is_named_whole(tmp_path, capsys):
    """The name is shown whole, on one line (the first error line was cut at its newline, 'x.cu:2:2: ...');
    such a name never reaches nvcc, whose shell would interpret the quote (5c8e2f4: a '$(...)' ran)."""
    src = tmp_path / 'q"u\\o\nx.cu'
    src.write_text(BAD_CU)
    line = _sass_error(capsys, "--arch", "sm_90", str(src))
    shown = str(src).replace("\n", "\\n")
    assert line.startswith(f"fuzzgpu sass: error: {shown}: its path has ") and "which nvcc's shell would interpret" in line, line


@needs_toolchain
def test_a_cuh_file_is_compiled_as_cuda(tmp_path):
    """check_path takes .cuh (and .CU); nvcc refused them: "Don't know what to do with 'k.cuh'"."""
    for name in ("k.cuh", "k.CU"):
        src = tmp_path / name
        src.write_text('__global__ void k(int* p) { asm volatile("st.relaxed.gpu.u32 [%0], 1;" :: "l"(p) : "memory"); }\n')
        (rep,) = sass.check_path(src, ("sm_90",))
        assert rep.source == str(src) and [fn.short_name for fn in rep.functions] == ["k"]
