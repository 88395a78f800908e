"""The chart of a campaign's report: weak (non-SC) rate per shape (``report/weak-rates.png``)."""

from __future__ import annotations

import os
from pathlib import Path

from .state import State


def plot_weak_rates(state: State, path: Path, backend: str) -> str:
    """A bar chart of weak (non-SC) rate per shape (findings per shape when nothing executed)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no plot (pip install matplotlib, or fuzzgpu[plot])"
    names = sorted(state.shapes)
    if not names:
        return "no programs ran: no plot"
    executed = any(state.shapes[n]["instances"] for n in names)
    fig, ax = plt.subplots(figsize=(max(5, 0.7 * len(names) + 2), 3.5))
    if executed:
        vals = [state.shapes[n]["weak"] / state.shapes[n]["instances"] if state.shapes[n]["instances"] else 0 for n in names]
        ax.bar(names, [v if v > 0 else float("nan") for v in vals], color="tab:blue")
        if any(v > 0 for v in vals):
            ax.set_yscale("log")
            floor = min(v for v in vals if v > 0)
            for i, v in enumerate(vals):
                if v == 0:
                    ax.annotate("0", (i, floor), ha="center", va="bottom", fontsize=8)
        ax.set_ylabel("weak (non-SC) outcomes / instance")
    else:
        ax.bar(names, [state.shapes[n]["failures"] for n in names], color="tab:red")
        ax.set_ylabel("programs with a SASS finding")
    ax.set_title(f"fuzzgpu weak rates per shape ({backend.split(':')[0]})", fontsize=9)
    plt.setp(ax.get_xticklabels(), rotation=30, ha="right", fontsize=8)
    fig.tight_layout()
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    os.replace(tmp, path)
    return str(path.name)
