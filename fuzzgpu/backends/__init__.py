"""Backends: what runs a program and returns a histogram of outcomes (:mod:`.base`), and the
factory that picks one by name (``--backend``)."""

from __future__ import annotations

from typing import Any

from ..errors import UserError


def make_backend(name: str, *, sim_fault: str | None = None, arch: str = "sm_90",
                 gpu_fault: str | None = None, runner: str | None = None, judge_unrunnable: bool = False) -> tuple[Any, str]:
    """(backend, a note for the screen).  ``auto``: the GPU when the cuda backend imports and a
    device exists; otherwise the static SASS oracle (with the model), said on screen.
    ``gpu_fault``: faults the cuda backend injects into some programs (testing the campaign).
    ``runner``: the address of the GPU runner that runs the cuda backend's programs (a parallel
    campaign's ``--gpu-context shared``): this process compiles and checks, it opens no CUDA context.
    ``judge_unrunnable`` (a campaign's profile, ``[static] unrunnable``): on ``cuda``/``auto`` a program
    the GPU harness cannot run is judged by its static check and the oracle instead of being refused
    (``CheckedBackend.judge_unrunnable``)."""
    if sim_fault and name != "sim":
        raise UserError("--sim-fault is only for --backend sim")
    if gpu_fault and name != "cuda":
        raise UserError("--gpu-fault is only for --backend cuda")
    if runner is not None and name not in ("cuda", "sim"):
        raise UserError("a GPU runner is only for --backend cuda (and sim, testing it)")
    if name == "sim" and runner is not None:
        from .remote import RemoteSim

        return RemoteSim(runner), "backend sim, run by a runner process (testing the GPU runner on the CPU)"
    if name == "sim":
        from .sim import SimBackend

        return SimBackend(sim_fault), "backend sim: a CPU SIMULATION of the memory model (no GPU)" + (f"; injected fault: {sim_fault}" if sim_fault else "")
    if name == "static":
        from .static import StaticBackend

        return StaticBackend(arch), f"backend static: no execution; nvcc for {arch} + the static SASS oracle"
    if name == "cuda":
        from .cuda import CudaBackend
        from .remote import RemoteCuda
        from .static import CheckedBackend, StaticBackend

        b: CudaBackend | RemoteCuda = RemoteCuda(runner, fault=gpu_fault) if runner is not None else CudaBackend(fault=gpu_fault)
        return CheckedBackend(b, StaticBackend(getattr(b, "arch", None) or arch), judge_unrunnable), f"backend cuda: the GPU ({b.describe()}), every program also checked in its SASS"
    if name == "auto":
        try:
            from .cuda import CudaBackend
            from .static import CheckedBackend, StaticBackend

            b = CudaBackend()
            return (CheckedBackend(b, StaticBackend(getattr(b, "arch", None) or arch), judge_unrunnable),
                    f"backend auto: GPU found ({b.describe()}); every program also checked in its SASS")
        except Exception as e:  # noqa: BLE001 -- no PyCUDA, no driver, no device: all mean 'no GPU'
            from .static import StaticBackend

            why = str(e).splitlines()[0] if str(e) else type(e).__name__
            return StaticBackend(arch), (f"backend auto: no GPU ({why}); running the static SASS oracle and the model "
                                         f"instead: ptxas reorderings are still found, no outcomes are executed")
    raise UserError(f"unknown backend {name!r} (auto, cuda, sim or static)")


__all__ = ["make_backend"]
