"""The command line as a user runs it: ``python -m fuzzgpu ARGS`` in a subprocess of this
interpreter (the checkout's package), its output captured as text."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from paths import ROOT


def fuzzgpu(*args: str, cwd: Path | None = ROOT, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fuzzgpu", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, check=False)
