"""A clock on Python's garbage collector for the benches (``gc.callbacks``): the process's CPU between
each collection's start and stop, by generation, the collections, and the thresholds they ran under.
Used by this folder's sitecustomize (``FUZZGPU_GC_CLOCK_DIR``: each campaign worker's clock) and by
``bench/gc_campaign.py``."""

from __future__ import annotations

import gc
import time
from typing import Any


class GcClock:
    def __init__(self) -> None:
        self.started = 0.0
        self.seconds = [0.0, 0.0, 0.0]
        self.collections = [0, 0, 0]
        self.thresholds: dict[str, int] = {}  # "a,b,c" -> collections started under it

    def tick(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self.started = time.process_time()
            key = ",".join(map(str, gc.get_threshold()))
            self.thresholds[key] = self.thresholds.get(key, 0) + 1
        else:
            g = info["generation"]
            self.seconds[g] += time.process_time() - self.started
            self.collections[g] += 1

    def figures(self) -> dict[str, Any]:
        return {"gc_cpu_s": round(sum(self.seconds), 3), "gc_cpu_s_by_generation": [round(x, 3) for x in self.seconds],
                "collections": list(self.collections), "process_cpu_s": round(time.process_time(), 2),
                "collections_by_thresholds": dict(self.thresholds)}


def install() -> GcClock:
    """A clock on this process's collector from now on."""
    clock = GcClock()
    gc.callbacks.append(clock.tick)
    return clock
