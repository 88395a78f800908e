"""A campaign's course over time (``State.timeline``): samples of its elapsed time, programs
judged and run, instances and findings per class, taken as the state is saved, for the report's plots (findings and
programs/s over time).  A parallel campaign's timelines are summed (:func:`merge`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

#: at most this many samples are kept: past it, every other one is dropped (first and last kept)
MAX_SAMPLES = 400
#: a new sample once this many seconds passed since the last one (sooner when a class's count changed)
EVERY_S = 2.0


def sample(timeline: list[dict[str, Any]], elapsed: float, programs: int, instances: int,
           classes: Mapping[str, Mapping[str, Any]], force: bool = False, run: int = 0) -> None:
    """Append a sample ``{"t", "programs" (judged), "run", "instances", "findings": {class key: findings}}`` to
    ``timeline`` (in place) when ``force`` (the state saved at a finding, at the end of a run), when
    :data:`EVERY_S` passed or when a class's count changed; thin it past :data:`MAX_SAMPLES`."""
    findings = {k: int(c.get("findings", 0)) for k, c in classes.items() if int(c.get("findings", 0))}
    last = timeline[-1] if timeline else None
    if last is not None and (elapsed <= float(last.get("t", 0)) or (
            not force and elapsed - float(last.get("t", 0)) < EVERY_S and last.get("findings") == findings)):
        return
    timeline.append({"t": round(float(elapsed), 3), "programs": int(programs), "run": int(run), "instances": int(instances),
                     "findings": findings})
    if len(timeline) > MAX_SAMPLES:
        keep = timeline[:-1:2] + [timeline[-1]]
        timeline[:] = keep


def merge(timelines: Iterable[Sequence[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """Several workers' timelines as one: at each sample time of any worker, the sum over workers
    of their latest sample at or before it (programs judged and run, instances, findings per class);
    ``run`` only where every worker's latest sample has it (a sample written before it was counted has not)."""
    tls = [sorted((s for s in tl if isinstance(s, Mapping)), key=lambda s: float(s.get("t", 0))) for tl in timelines]
    times = sorted({float(s.get("t", 0)) for tl in tls for s in tl})
    out: list[dict[str, Any]] = []
    for t in times:
        acc: dict[str, Any] = {"t": t, "programs": 0, "run": 0, "instances": 0, "findings": {}}
        for tl in tls:
            latest = None
            for s in tl:
                if float(s.get("t", 0)) > t:
                    break
                latest = s
            if latest is None:
                continue
            acc["programs"] += int(latest.get("programs", 0))
            if "run" in acc and "run" in latest:
                acc["run"] += int(latest["run"])
            else:
                acc.pop("run", None)
            acc["instances"] += int(latest.get("instances", 0))
            for k, n in (latest.get("findings") or {}).items():
                acc["findings"][k] = acc["findings"].get(k, 0) + int(n)
        out.append(acc)
    return out


def rates(timeline: Sequence[Mapping[str, Any]], min_dt: float = EVERY_S, key: str = "programs") -> list[tuple[float, float]]:
    """(time, programs -- judged, or ``key`` "run": run -- per second over the interval ending then),
    over intervals of at least ``min_dt`` seconds (a sample taken early, for a finding, would make a
    spike of a tenth of a second); only over the samples that have ``key``."""
    out: list[tuple[float, float]] = []
    timeline = [s for s in timeline if key in s]
    if not timeline:
        return out
    a = timeline[0]
    for b in timeline[1:]:
        dt = float(b["t"]) - float(a["t"])
        if dt >= min_dt or (b is timeline[-1] and dt > 0 and not out):  # (a last, shorter interval: the end's save)
            out.append((float(b["t"]), max(0.0, (int(b[key]) - int(a[key])) / dt)))
            a = b
    return out


def first_seen(timeline: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Class key -> the time of the first sample that counts a finding of it."""
    out: dict[str, float] = {}
    for s in timeline:
        for k, n in (s.get("findings") or {}).items():
            if n and k not in out:
                out[k] = float(s["t"])
    return out


__all__ = ["EVERY_S", "MAX_SAMPLES", "first_seen", "merge", "rates", "sample"]
