"""GPU discovery: which GPUs this process may use, and which one a pytest-xdist worker gets.  One
place for the campaign's workers and the pytest plugin."""

from __future__ import annotations

import os
import shutil
import subprocess


def visible_gpus() -> list[str]:
    """The GPUs this process may use (``CUDA_VISIBLE_DEVICES``, else ``nvidia-smi -L``)."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        return [g.strip() for g in env.split(",") if g.strip() and g.strip() != "-1"]
    smi = shutil.which("nvidia-smi")
    if not smi:
        return []
    try:
        out = subprocess.run([smi, "-L"], check=False, capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [str(i) for i, line in enumerate(line for line in out.splitlines() if line.startswith("GPU "))]


def pin_worker_gpu(worker: str | None, gpus: list[str]) -> str | None:
    """``gw3`` with GPUs [0, 1] -> ``1`` (set as CUDA_VISIBLE_DEVICES); None when nothing to pin."""
    if not worker or len(gpus) < 2 or not worker.startswith("gw"):
        return None
    try:
        n = int(worker[2:])
    except ValueError:
        return None
    return gpus[n % len(gpus)]


__all__ = ["pin_worker_gpu", "visible_gpus"]
