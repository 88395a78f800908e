"""The CUDA toolchain a backend needs, checked before a command starts: a missing program is the
environment's failure -- one line naming it and how to get it, exit status 3 (DESIGN.md, "Exit
codes") -- not a bad input (2), and never a campaign that counts every program "not covered"."""

from __future__ import annotations


def require_backend_tools(backend: str) -> None:
    """``sim`` needs nothing; ``static`` compiles (nvcc) and disassembles (nvdisasm or cuobjdump);
    ``cuda`` compiles its harness with nvcc (``$NVCC`` first) and checks its SASS like ``static``;
    ``auto`` is one of the two.  Raises :class:`~fuzzgpu.errors.MissingTool`."""
    if backend == "sim":
        return
    from .. import sass
    from ..backends.cuda import nvcc_path

    if backend == "cuda":
        nvcc_path()
    sass.require_tool("nvcc")
    if sass.find_tool("nvdisasm") is None and sass.find_tool("cuobjdump") is None:
        sass.require_tool("nvdisasm")
