"""The fixed CUDA text of the generated sources, kept as ``.cuh`` files of this package (package
data, in the wheel and the sdist) and read once at import: :data:`PRELUDE` (fuzzgpu/codegen/prelude.cuh,
the device helpers of every translation unit) and :data:`HARNESS_HELPERS`
(fuzzgpu/codegen/harness_helpers.cuh, those of the harness)."""

from __future__ import annotations

from importlib import resources


def cuda_text(name: str) -> str:
    """The text of the resource ``name`` of this package (a ``.cuh`` file next to this module)."""
    return resources.files(__name__.rpartition(".")[0]).joinpath(name).read_text(encoding="utf-8")


# each is emitted after a newline of its own (the source it joins has a blank line before it)
PRELUDE = "\n" + cuda_text("prelude.cuh")
HARNESS_HELPERS = "\n" + cuda_text("harness_helpers.cuh")
#: what nvcc pre-includes for a generated module instead of cuda_runtime.h (fuzzgpu.sass.runtime_header_flags)
CUDA_DECLS = cuda_text("cuda_decls.cuh")
