"""A device that stopped answering every worker at once, told apart from programs that hang
(docs/reliability.md, "A GPU that stops answering").

A worker's watchdog sees one run that did not return by its deadline and quarantines its program
(:func:`fuzzgpu.workers.supervised.quarantine`): right for a program that hangs, wrong when the GPU
itself stopped answering.  On one H100 (bench/results/throughput/h100-600s-7862a65-w20-stalled/) a
campaign of 20 workers ran 231,000 programs an hour for 218 s; then no kernel of any worker
returned again, NVML showed a kernel resident 100% of the time to the end, each worker's watchdog
fired on whatever it was running -- 19 programs quarantined as "hang" within 21 s, one as a
"gpu-fault" -- the killed backends stayed in the driver, and the restarted ones ran no program.
Twenty programs were accused of hanging for one event of the device.

The parent of the workers tells them apart by the waits and by what ran after: when the runs of
:func:`threshold` workers were all waiting at one instant, none of them returned, and the campaign
ran almost nothing in the seconds after their faults (:func:`quiet`: programs that hang leave the
device to the other workers, and their own workers run again once restarted), the device stopped
answering them, and none of those programs is shown to hang.  Their records leave ``quarantine/``
for ``stalled/`` (a program there is not skipped by later campaigns), and the campaign stops, exit 3.
Looked for where one device runs every worker's programs, each run its worker's (not across several
GPUs, nor with a GPU runner).
"""

from __future__ import annotations

import calendar
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..files import write_atomic

#: the fewest workers whose runs must hang at one instant for a stall (and at least half of them)
MIN_WORKERS = 3
#: the seconds after those runs' faults whose runs do not count: each worker's state counts, at its fault, what it ran
#: before (the H100 campaign's count rose by 46 so, after its GPU had stopped, at its workers' faults) ...
SETTLE_S = 5.0
#: ... and how long after the faults the programs run are counted: the workers whose runs hung restart their backends
#: within seconds, and the others run on ...
QUIET_S = 20.0
#: ... at most this share of what the campaign's rate before that instant would have run: a stall
STALL_SHARE = 0.1
#: the corpus folder of the programs whose runs hung when the device stopped answering
STALLED = "stalled"


def quiet(before: int, before_s: float, since: int, since_s: float) -> bool:
    """Whether ``since`` programs run in ``since_s`` seconds are at most :data:`STALL_SHARE` of what the rate of
    ``before`` programs in ``before_s`` seconds would have run in that time."""
    return since <= STALL_SHARE * before / max(1.0, before_s) * max(0.0, since_s)


@dataclass(frozen=True)
class Hang:
    """A quarantined run that did not return: its record and the wall-clock span it waited."""

    record: Path
    start: float
    end: float
    #: the worker whose run it was (its record's ``worker``), else the record's name
    worker: str


def threshold(workers: int) -> int:
    """How many runs hung at one instant make a stall for a campaign of ``workers`` workers on one device."""
    return max(MIN_WORKERS, (workers + 1) // 2)


def hangs_since(quarantine_dir: Path, since: float) -> list[Hang]:
    """The quarantine records of kind ``hang`` written at or after ``since`` (wall-clock seconds);
    a record that cannot be read is left out (it is a worker's, written atomically: a partial one
    is not there)."""
    out = []
    for p in sorted(Path(quarantine_dir).glob("*.json")) if Path(quarantine_dir).is_dir() else ():
        try:
            rec = json.loads(p.read_text())
            fault = rec["fault"]
            # ``ended``: when the watchdog saw it; a record of an older fuzzgpu has only its time, in whole seconds
            end = float(rec["ended"]) if isinstance(rec.get("ended"), (int, float)) else \
                calendar.timegm(time.strptime(rec["time"], "%Y-%m-%dT%H:%M:%SZ")) + 1.0
            waited = float(fault["seconds"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if fault.get("kind") == "hang" and end >= since:
            out.append(Hang(p, end - waited, end, str(rec.get("worker") or p.stem)))
    return out


def concurrent(hangs: list[Hang], enough: int = 1) -> Iterator[list[Hang]]:
    """Each set of ``hangs`` of at least ``enough`` workers whose waits share an instant, earliest first,
    at most one per instant (checked at each wait's start: an instant all of a set's waits share may be
    taken as the latest of their starts)."""
    seen: set[frozenset[int]] = set()
    for h in sorted(hangs, key=lambda g: g.start):
        group = [g for g in hangs if g.start <= h.start <= g.end]
        key = frozenset(id(g) for g in group)
        if len({g.worker for g in group}) >= enough and key not in seen:
            seen.add(key)
            yield group


def set_aside(group: list[Hang], note: str, stalled_dir: Path) -> list[Path]:
    """Move each record of ``group`` (its ``.json``, ``.litmus`` and ``.sass``) to ``stalled_dir``,
    the ``.json`` with ``note`` added under ``stall``; the paths of the moved records.  A record
    gone meanwhile is skipped."""
    stalled_dir.mkdir(parents=True, exist_ok=True)  # (the side files' os.replace needs it)
    moved = []
    for h in group:
        try:
            rec = json.loads(h.record.read_text())
        except (OSError, ValueError):
            continue
        rec["stall"] = note
        dest = stalled_dir / h.record.name
        write_atomic(dest, json.dumps(rec, indent=1, sort_keys=True) + "\n")
        for ext in (".litmus", ".sass"):  # while its .json is there, a worker's quarantine of the program writes nothing
            side = h.record.with_suffix(ext)
            if side.exists():
                os.replace(side, stalled_dir / side.name)
        h.record.unlink(missing_ok=True)
        moved.append(dest)
    return moved



def detect(corpus: Path, since: float, workers: int, device: str, ran: list[tuple[float, int]]) -> list[tuple[str, float]]:
    """When the runs of at least :func:`threshold` of ``workers`` hung at one instant since
    ``since`` and the campaign ran almost nothing in the :data:`QUIET_S` after their faults
    (:func:`quiet`; ``ran``: the programs run by every worker this session at each status
    line, with its wall-clock time): the records of the runs that hung from the instant they shared on (the latest
    of their starts), moved from ``quarantine/`` to ``stalled/``, and the line that says so with that instant; else
    nothing."""
    if not ran:
        return []
    now, runs = ran[-1]
    hangs = hangs_since(corpus / "quarantine", since)
    for group in concurrent(hangs, threshold(workers)):
        after = max(h.end for h in group) + SETTLE_S  # the workers' states count what they ran before their faults
        counted = [(t, r) for t, r in ran if t >= after]
        if not counted or now - counted[0][0] < QUIET_S - SETTLE_S:
            return []  # too soon to say (and later sets are later still)
        at = max(h.start for h in group)
        before = ([r for t, r in ran if t <= at] or [0])[-1]
        if not quiet(before, at - since, runs - counted[0][1], now - counted[0][0]):
            continue  # the workers run programs again: programs that hang, not the device
        began = at  # (the group's earliest start may lie a long deadline back, before hangs of programs of their own)
        hung = [h for h in hangs if h.end >= began]
        most = max(len({h.worker for h in g}) for g in concurrent(hung))
        expected = before / max(1.0, at - since) * (now - counted[0][0])
        note = (f"one of the runs that hung from {time.strftime('%H:%M:%S', time.gmtime(began))} UTC on, when the {device} "
                f"stopped answering this campaign's workers ({most} of them waiting at one instant); this program is not shown "
                "to hang")
        moved = set_aside(hung, note, corpus / STALLED)
        return [(f"the {device} stopped answering: the runs of {most} workers were all waiting at one instant and none "
                 f"returned by its deadline, and in the {now - counted[0][0]:.0f} s after their faults the campaign ran "
                 f"{runs - counted[0][1]} programs, against ~{expected:.0f} at its rate before; the {len(moved)} programs of "
                 f"the runs that hung from {time.strftime('%H:%M:%S', time.gmtime(began))} UTC on are kept in "
                 f"{corpus / STALLED}, not quarantined (none is shown to hang); the campaign stops", began)]
    return []


__all__ = ["MIN_WORKERS", "QUIET_S", "SETTLE_S", "STALLED", "STALL_SHARE", "quiet", "Hang", "concurrent", "detect", "hangs_since", "set_aside", "threshold"]
