"""fuzzgpu's generated modules compile with their own few CUDA declarations in place of cuda_runtime.h
(``codegen.CUDA_DECLS``, ``sass.runtime_header_flags``: issue 29, nvcc's fixed CPU cost per call).
That is only allowed if it changes nothing the GPU runs or the SASS check reads: compiled both ways,
the harness modules and the static kernels of every ``.litmus`` file in the repository and of each
profile's draws give the same PTX code (the debug lines aside: they name the header a builtin's
wrapper came from) and the same SASS."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from fuzzgpu import codegen, litmus, sass
from fuzzgpu.backends.cuda import CompileError, compile_module
from fuzzgpu.backends.static import StaticBackend, batch_texts
from fuzzgpu.ir import Program

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None or sass.find_tool("nvdisasm") is None,
                                reason="needs nvcc and nvdisasm")

ROOT = Path(__file__).resolve().parents[2]
#: programs per module: one nvcc call each way compiles many (a campaign's batches are smaller)
CHUNK = 40
PROFILES = ("all", "classic", "mbarrier", "pdl", "proxy", "random", "reliability", "scopes")


def litmus_programs() -> list[Program]:
    files = sorted(f for d in ("tests/litmus", "examples", "corpus") for f in (ROOT / d).rglob("*.litmus"))
    return [litmus.parse_file(str(f)) for f in files]


def profile_draws(profile: str, n: int = 12, seed: int = 3) -> list[Program]:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    from fuzzgpu import strategies
    from fuzzgpu.profiles import load_profile

    prof = load_profile(profile)
    out: list[Program] = []

    @hseed(seed)
    @settings(database=None, max_examples=n, deadline=None, phases=(Phase.generate,), suppress_health_check=list(HealthCheck))
    @given(strategies.weighted(prof.shapes, prof.options))
    def collect(p: Program) -> None:
        out.append(p)

    collect()
    return out


def harness_modules(programs: list[Program]) -> Iterator[tuple[str, str]]:
    """(arch, source) of the harness modules a cuda backend would compile for ``programs``."""
    by_arch: dict[str, list[Program]] = {}
    for p in programs:
        if not codegen.unrunnable_reasons(p):
            by_arch.setdefault(codegen.harness_arch([p], "sm_90"), []).append(p)
    for arch, ps in sorted(by_arch.items()):
        for i in range(0, len(ps), CHUNK):
            yield arch, codegen.generate_module(ps[i : i + CHUNK])[0]


def static_modules(programs: list[Program]) -> Iterator[tuple[str, str]]:
    """(arch, source) of the static kernels of ``programs`` batched as ``backends.static.check_batch`` does."""
    backend = StaticBackend("sm_90")
    by_arch: dict[str, list[str]] = {}
    for i, src in batch_texts(programs).items():
        by_arch.setdefault(backend.arch_for(programs[i]), []).append(src)
    for arch, texts in sorted(by_arch.items()):
        for i in range(0, len(texts), CHUNK):
            yield arch, "".join(texts[i : i + CHUNK])


def code_of(ptx: str) -> str:
    """The PTX without its debug lines (``.loc``/``.file``, comments, the ``.debug_str`` section: the
    file a builtin's wrapper came from, a module id), which the two ways may differ in."""
    body = ptx.split(".section\t.debug_str")[0]
    return "\n".join(line for line in body.splitlines() if line.strip() and not re.match(r"\s*(\.loc|\.file|//)", line))


def compiled(source: str, arch: str, header: str | None) -> tuple[str, str]:
    """(PTX code, SASS without line information) of one compile of ``source``."""
    cubin, ptx = compile_module(source, arch, use_cache=False, runtime_header=header)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.cubin"
        path.write_bytes(cubin)
        nvdisasm = sass.require_tool("nvdisasm")
        listing = subprocess.run([nvdisasm, "-c", str(path)], check=True, capture_output=True, text=True).stdout
    return code_of(zlib.decompress(ptx).decode()), listing


def programs_of(name: str) -> list[Program]:
    return litmus_programs() if name == "litmus" else profile_draws(name)


def both_ways(name: str, kind: str) -> None:
    modules = list((harness_modules if kind == "harness" else static_modules)(programs_of(name)))
    assert modules
    for arch, source in modules:
        ptx_full, sass_full = compiled(source, arch, None)
        ptx_lean, sass_lean = compiled(source, arch, codegen.CUDA_DECLS)
        assert ptx_lean == ptx_full, f"{name} {kind} {arch}: the PTX differs"
        assert sass_lean == sass_full, f"{name} {kind} {arch}: the SASS differs"


@pytest.mark.parametrize("kind", ["harness", "static"])
def test_every_litmus_file_compiles_to_the_same_code_as_with_cuda_runtime_h(kind: str) -> None:
    both_ways("litmus", kind)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["harness", "static"])
@pytest.mark.parametrize("profile", PROFILES)
def test_each_profiles_draws_compile_to_the_same_code_as_with_cuda_runtime_h(profile: str, kind: str) -> None:
    both_ways(profile, kind)


def test_a_module_with_a_name_the_declarations_lack_does_not_compile() -> None:
    # the declarations are not cuda_runtime.h: a CUDA function they leave out is an nvcc error, never
    # a silent difference (atomicCAS is not used by the generated code, so not declared)
    src = codegen.PRELUDE + '__global__ void k(unsigned* p) { atomicCAS(p, 0u, 1u); }\n'
    compile_module(src, "sm_90", use_cache=False, runtime_header=None)
    with pytest.raises(CompileError, match="atomicCAS"):
        compile_module(src, "sm_90", use_cache=False, runtime_header=codegen.CUDA_DECLS)


def test_fuzzgpu_sass_on_a_litmus_file_shows_none_of_the_compiles_own_flags() -> None:
    # the declarations' define is how fuzzgpu compiles its generated kernels, not a define of the user's
    # build: a report names the user's defines only (it printed "-D __CUDA_RUNTIME_H__" before)
    (rep,) = sass.check_litmus(ROOT / "tests" / "litmus" / "core" / "CoWW.litmus", ("sm_90",))
    assert rep.defines == () and "__CUDA_RUNTIME_H__" not in str(rep.to_dict())
    (rep,) = sass.check_litmus(ROOT / "tests" / "litmus" / "core" / "CoWW.litmus", ("sm_90",), nvcc_flags=("-DUSER_FLAG=1",))
    assert rep.defines == ("USER_FLAG=1",)
