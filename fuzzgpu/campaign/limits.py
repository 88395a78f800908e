"""How much a campaign does at once and how long its steps may take: the programs compiled and
checked per batch, a finding's fix search's bound, the part of ``--time`` kept for the end, how
often Python's cyclic garbage collector traverses the whole heap."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

#: programs drawn ahead and compiled and checked together (one nvcc, one nvdisasm) by the backends
#: that compile, by backend name; the others judge each program as it is drawn.  The static check
#: costs ~55 CPU ms per program in batches of 32 and ~35 in batches of 64, the harness nvcc ~111 and ~102 (16, 64:
#: issue 29); on a GPU a batch is also the delay before its first run (64 harnesses: ~7 CPU s of nvcc)
BATCH = {"static": 64, "cuda": 64, "auto": 64}


#: seconds of fix search a campaign gives one finding (each candidate is a race analysis, ~0.05 s for
#: a shrunk program, ~0.6 s for a large one, on an H200 host's core): a search past it stops, and the
#: entry says so ("fix search stopped at its bound"), never "no fix"; ``fuzzgpu explain`` runs the
#: whole search.  The session's deadline (less the report's reserve) and the profile's
#: ``shrink_seconds`` cap it too.  30 s: a combined finding's greedy search (class D with a bulk copy
#: read early, 279 candidates) takes 12-19 s on one core; most searches end within 2 s.  Measured on the
#: 60 race findings of a 300 s empty-corpus H100 campaign (``bench/fix_search_cost.py``): 400 VM CPU-s
#: at this bound, 250 at 15 s with the same 48 fixes, 190 at 10 s with 44 -- of the order of a fifth of
#: the workers' Python while findings are many (``bench/results/throughput/README.md``).  On the 116 of a 600 s one
#: (``bench/results/throughput/fix-search/h100-600s-2665391/``): 930 VM CPU-s at this bound, 89% of it on entries not fully shrunk, 731 at
#: 20 s with one fix of 94 fewer, 616 at 15 s with five fewer.
FIX_SECONDS = 30.0


def end_reserve(seconds: float) -> float:
    """Seconds of a ``--time`` kept for the end of the campaign (the last finding's save, its fix
    search, the report): Hypothesis generates and shrinks until ``--time`` minus this."""
    return min(15.0, 0.15 * seconds)


def report_reserve(seconds: float) -> float:
    """Seconds of a ``--time`` kept for the report alone: a fix search ends this long before the end."""
    return min(5.0, 0.08 * seconds)


#: Python's cyclic garbage collector's thresholds while a campaign runs (``gc.set_threshold``; Python's
#: own are (700, 10, 10)).  A campaign process keeps a large heap alive -- the oracle's path and trace
#: caches, Hypothesis's engine --, and each collection of the oldest generation traverses all of it:
#: at Python's thresholds, dozens of times a minute, about a third of a static campaign's CPU on the
#: 2-core VM.  Here a young collection comes every 2,000 allocations (cheap: it traverses only the
#: young), one of the middle generation every 20 young ones, and one of the oldest every 100 middle
#: ones (Python also waits until a quarter of the oldest is new).  The price: garbage in reference
#: cycles lives longer, a process's peak memory is higher.  Measured (``bench/gc_campaign.py``) in
#: ``bench/results/throughput/gc/`` and on the throughput page, which says what a GPU campaign showed.
GC_THRESHOLDS = (2000, 20, 100)


@contextlib.contextmanager
def collector(thresholds: tuple[int, int, int] | None = None) -> Iterator[None]:
    """Python's garbage collector at ``thresholds`` (default :data:`GC_THRESHOLDS`) while the block
    runs, as it was after."""
    before = gc.get_threshold()
    gc.set_threshold(*(thresholds or GC_THRESHOLDS))
    try:
        yield
    finally:
        gc.set_threshold(*before)


__all__ = ["BATCH", "FIX_SECONDS", "GC_THRESHOLDS", "collector", "end_reserve", "report_reserve"]
