"""The plots of a campaign's report (``report/*.png``), each titled with what it shows and drawn only
when there is something to show -- else a note says "nothing to plot" and why:

* ``findings-over-time.png`` -- distinct findings per class against the campaign's elapsed time
  (known classes dashed), axis from zero;
* ``programs-per-second.png`` -- programs judged per second over time (all workers), axis from zero;
* ``weak-rates.png`` -- weak (non-SC) outcomes per instance for each shape, only where programs
  executed (the GPU, or the simulation: sampled from the model), a linear axis from zero with each
  bar's value written on it (a log axis with a cut baseline made 8e-4 against 9e-4 look far apart).

Every function returns ``(file name or None, note)``; matplotlib missing is a note too.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .timeline import rates

Plot = tuple[str | None, str]


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


_NO_MPL = "matplotlib is not installed: no plot (pip install matplotlib, or fuzzgpu[plot])"


def _save(fig: Any, plt: Any, path: Path) -> str:
    fig.tight_layout()
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    os.replace(tmp, path)
    return path.name


def short_key(key: str, n: int = 70) -> str:
    """A class key short enough for a legend."""
    return key if len(key) <= n else key[: n - 3] + "..."


def plot_findings_over_time(timeline: Sequence[Mapping[str, Any]], classes: Mapping[str, Mapping[str, Any]], path: Path,
                            what: str) -> Plot:
    """Distinct findings per class against elapsed time (a step line per class)."""
    keys = [k for k, c in classes.items() if int(c.get("findings", 0))]
    if not keys:
        return None, "no findings: nothing to plot"
    if not timeline:
        return None, "no timeline recorded (a campaign state saved before timelines existed): nothing to plot"
    plt = _pyplot()
    if plt is None:
        return None, _NO_MPL
    fig, ax = plt.subplots(figsize=(8, 4))
    keys = sorted(keys, key=lambda k: (-int(classes[k].get("findings", 0)), k))
    end = float(timeline[-1]["t"])
    top = 0
    colors = plt.get_cmap("tab20").colors if len(keys) > 10 else plt.get_cmap("tab10").colors
    for i, k in enumerate(keys[:12]):
        xs = [0.0] + [float(s["t"]) for s in timeline] + [end]
        ys = [0] + [int((s.get("findings") or {}).get(k, 0)) for s in timeline] + [int(classes[k].get("findings", 0))]
        top = max(top, max(ys))
        known = bool(classes[k].get("known"))
        ax.step(xs, ys, where="post", linestyle="--" if known else "-", color=colors[i % len(colors)], linewidth=1.6,
                label=("KNOWN " if known else "") + short_key(k) + f" ({ys[-1]})")
    ax.set_xlim(left=0)
    ax.set_ylim(0, top + 1)
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_xlabel("campaign time (s)")
    ax.set_ylabel("distinct findings")
    ax.set_title(f"distinct findings per class over time ({what})" + (f"; the {len(keys) - 12} smaller classes not drawn" if len(keys) > 12 else ""),
                 fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(0, -0.2), ncol=2 if len(keys) > 6 else 1, frameon=False)
    return _save(fig, plt, path), ""


def plot_programs_per_second(timeline: Sequence[Mapping[str, Any]], path: Path, what: str) -> Plot:
    """Programs judged and programs run (by the backend: not the evidence cache's answers, nor the
    draws not covered) per second over time, from the timeline's samples."""
    pts = rates(timeline)
    if len(pts) < 2:
        return None, "fewer than three timeline samples (a run of a few seconds): nothing to plot"
    plt = _pyplot()
    if plt is None:
        return None, _NO_MPL
    run = rates(timeline, key="run")
    fig, ax = plt.subplots(figsize=(8, 3))
    ax.plot([t for t, _ in pts], [r for _, r in pts], drawstyle="steps-pre", color="tab:blue", label="judged")
    if run:
        ax.plot([t for t, _ in run], [r for _, r in run], drawstyle="steps-pre", color="tab:orange", label="run by the backend")
        ax.legend(fontsize=7, loc="lower right", frameon=False)
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0, top=max(r for _, r in pts + run) * 1.15 or 1)
    ax.set_xlabel("campaign time (s)")
    ax.set_ylabel("programs / s")
    ax.set_title(f"programs judged{' and run' if run else ''} per second ({what})", fontsize=9)
    return _save(fig, plt, path), ""


def plot_weak_rates(shapes: Mapping[str, Mapping[str, Any]], path: Path, backend: str) -> Plot:
    """Weak (non-SC) outcomes per instance for each shape that executed, linear from zero, each
    bar labelled with its value."""
    ran = {n: s for n, s in shapes.items() if s.get("instances")}
    if not ran:
        return None, f"no program executed ({backend.split(':')[0]} backend: nothing runs): no weak rates, nothing to plot"
    rates_ = {n: float(s["weak"]) / float(s["instances"]) for n, s in ran.items()}
    if not any(rates_.values()):
        total = sum(float(s["instances"]) for s in ran.values())
        return None, f"no weak (non-SC) outcome in {total:.3g} instances: nothing to plot"
    plt = _pyplot()
    if plt is None:
        return None, _NO_MPL
    names = sorted(rates_)
    vals = [rates_[n] for n in names]
    fig, ax = plt.subplots(figsize=(max(6, 0.8 * len(names) + 2), 4))
    bars = ax.bar(names, vals, color="tab:blue")
    for b, v in zip(bars, vals):
        ax.annotate(f"{v:.2g}" if v else "0", (b.get_x() + b.get_width() / 2, b.get_height()), ha="center", va="bottom", fontsize=7)
    ax.set_ylim(0, max(vals) * 1.18)
    kind = backend.split(":")[0]
    src = "sampled from the memory model, not hardware" if kind == "sim" else "observed"
    ax.set_ylabel("weak outcomes / instance (linear)")
    ax.set_title(f"weak (non-SC) outcomes per instance, per shape\n({kind}: {src})", fontsize=9)
    plt.setp(ax.get_xticklabels(), rotation=30, ha="right", fontsize=8)
    return _save(fig, plt, path), ""


__all__ = ["Plot", "plot_findings_over_time", "plot_programs_per_second", "plot_weak_rates", "short_key"]
