"""Harnesses compiled ahead in one nvcc call (issue 29): the same kernels and specs as one compile per
program; a batch nvcc refuses is split; and (on a GPU) a run reports the GPU's busy time."""

from __future__ import annotations

import shutil

import pytest

from fuzzgpu.backends.cuda import compile_batch, compile_programs
from fuzzgpu.ir import Program
from paths import LITMUS  # noqa: E402 -- tests/paths.py
from programs import MP  # noqa: E402 -- tests/programs.py

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")


def sb() -> Program:
    from fuzzgpu.litmus import parse_file

    return parse_file(str(LITMUS / "core" / "SB-fence-sc.litmus"))


@needs_nvcc
def test_a_batch_has_the_harness_of_each_program(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("FUZZGPU_CACHE", str(tmp_path))
    programs = [MP, sb()]
    batch = compile_batch(programs, "sm_90")
    assert set(batch) == set(programs)
    assert batch[MP].cubin == batch[programs[1]].cubin  # one module
    for p in programs:
        one = compile_programs([p], "sm_90", batch=1, jobs=1)[0]
        assert batch[p].spec.kernel.startswith("fzh_") and batch[p].spec.kernel.encode() in batch[p].cubin
        assert (batch[p].spec.keys, batch[p].spec.nbins, batch[p].spec.roles) == (one.spec.keys, one.spec.nbins, one.spec.roles)
    assert not list(tmp_path.glob("cubin/*.cubin")) or len(list(tmp_path.glob("cubin/*.cubin"))) == 2  # the batch is not cached


@needs_nvcc
def test_a_batch_nvcc_refuses_is_split(monkeypatch) -> None:
    from fuzzgpu.backends import cuda

    real = cuda.compile_programs

    def refusing(programs, *a, **k):  # nvcc refuses any module holding the harness of MP
        if MP in programs:
            raise cuda.CompileError("nvcc failed (sm_90): test")
        return real(programs, *a, **k)

    monkeypatch.setattr(cuda, "compile_programs", refusing)
    other = sb()
    batch = compile_batch([MP, other], "sm_90")
    assert MP not in batch and other in batch


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_each_kernels_copy_of_the_stress_helpers_stays_small(tmp_path, monkeypatch) -> None:
    """ptxas compiles a module's kernels as one program and gives each kernel that calls a
    ``__noinline__`` helper its own copy: every program of a batch pays for ``fz_stress`` and
    ``fz_pre_stress`` again.  Unrolled, the two copies were 229 and 292 SASS instructions of a
    typical kernel's ~1,030 (and ~40% of its ptxas time); with their loops kept rolled, ~100 each."""
    import re
    import subprocess

    from fuzzgpu.sass import find_tool

    nvd = find_tool("nvdisasm")
    if nvd is None:
        pytest.skip("needs nvdisasm (the sass extra)")
    monkeypatch.setenv("FUZZGPU_CACHE", str(tmp_path))
    programs = [MP, sb()]
    batch = compile_batch(programs, "sm_90")
    cubin = tmp_path / "m.cubin"
    cubin.write_bytes(batch[MP].cubin)
    sass = subprocess.run([nvd, "-c", str(cubin)], capture_output=True, text=True, check=True).stdout
    sizes: dict[str, int] = {}
    name = ""
    for line in sass.splitlines():
        m = re.match(r"^(\$?[\w$]+):\s*$", line)
        if m and not m.group(1).startswith(".L"):
            name = m.group(1)
        elif name and re.search(r"/\*[0-9a-f]{4}\*/\s", line):
            sizes[name] = sizes.get(name, 0) + 1
    for p in programs:
        kernel = batch[p].spec.kernel
        for helper in ("fz_stress", "fz_pre_stress"):
            copy = [n for n in sizes if n.startswith(f"${kernel}$") and re.search(rf"\d{helper}P", n)]
            assert len(copy) == 1, (kernel, helper, sorted(sizes))  # its own copy, as the docstring says
            assert sizes[copy[0]] <= 150, (copy[0], sizes[copy[0]])


@needs_nvcc
def test_a_prepared_harness_serves_every_run_of_its_program(tmp_path, monkeypatch) -> None:
    """A program runs again after its first run (its profile's budget after timeouts at the short
    one, the tuner's configurations, more instances): from the cubin prepared with its batch -- the
    one its SASS check read -- not from a compile of its own; the least recently used go first."""
    from fuzzgpu.backends import cuda

    monkeypatch.setenv("FUZZGPU_CACHE", str(tmp_path))
    builder = cuda.HarnessBuilder("sm_90")
    other = sb()
    builder.prepare([MP, other])
    first = builder.harness(MP)

    def no_compile(*a, **k):
        raise AssertionError("compiled again")

    monkeypatch.setattr(builder, "compile", no_compile)
    assert builder.harness(MP) is first and builder.harness(MP).cubin == builder.harness(other).cubin
    monkeypatch.setattr(builder._prepared, "size", 1)
    builder.prepare([dataclass_renamed(MP)])  # one more: the least recently used go
    assert list(builder._prepared) == [dataclass_renamed(MP)]


def dataclass_renamed(p: Program) -> Program:
    import dataclasses

    return dataclasses.replace(p, name=p.name + "_again")


@needs_nvcc
def test_a_program_given_twice_is_compiled_once(tmp_path, monkeypatch) -> None:
    """A campaign's batch of draws holds programs Hypothesis drew twice (10-20 of 64): one kernel each."""
    from fuzzgpu.backends import cuda

    monkeypatch.setenv("FUZZGPU_CACHE", str(tmp_path))
    compiled: list[list[Program]] = []

    def spy(programs, arch, inject=None):
        compiled.append(list(programs))
        return compile_batch(programs, arch, inject)

    monkeypatch.setattr(cuda, "compile_batch", spy)
    other = sb()
    cuda.HarnessBuilder("sm_90").prepare([MP, other, MP, other, MP])
    assert compiled == [[MP, other]]
