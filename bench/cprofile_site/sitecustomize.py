"""cProfile chosen campaign workers of a parallel campaign, for bench/h200.sh's throughput part
(issue 29: where a worker's wall time goes).  Put this folder first on PYTHONPATH and set

    FUZZGPU_CPROFILE_DIR=DIR  FUZZGPU_CPROFILE_WORKERS=w0[,w1...]

A ``python -m fuzzgpu campaign ... --worker-id wN`` process of the list then runs under cProfile and
writes ``DIR/cprofile-wN.pstats`` and ``.txt`` (top functions by cumulative and own time) at exit;
so does its backend's worker process (multiprocessing spawn: ``cprofile-wN-backend-PID.*``, its main
thread only: the static check's thread shows as the main thread's wait for it).  Other processes
(the parent, the other workers and their backends) are not profiled.
cProfile slows the Python of the profiled worker (the draw, the oracle) more than its waits.

With ``FUZZGPU_GC_CLOCK_DIR=DIR`` (``GCCLOCK=1 bench/h200.sh throughput``), every campaign worker
process (``--worker-id wN``) also clocks Python's garbage collector (``gc.callbacks``: the process's
CPU between each collection's start and stop, by generation) and writes ``DIR/gc-wN.json`` at exit
with its own CPU and the thresholds the collections ran under; ``bench/throughput.py`` sums them.  With
``FUZZGPU_GC_THRESHOLDS=A,B,C`` as well (``GCTHRESH=700,10,10``: Python's own), such a worker runs its
campaign at those thresholds instead of ``fuzzgpu.campaign.limits.GC_THRESHOLDS``: the A/B of that
setting on one GPU machine."""

from __future__ import annotations

import os
import sys


def _gc_clock() -> None:
    out = os.environ.get("FUZZGPU_GC_CLOCK_DIR")
    if not out or "--worker-id" not in sys.argv or sys.argv.index("--worker-id") + 1 >= len(sys.argv):
        return
    wid = sys.argv[sys.argv.index("--worker-id") + 1]
    import re

    if not re.fullmatch(r"w[0-9]{1,3}", wid):  # the campaign refuses any other id; it names a file here
        return
    import atexit
    import json

    from gc_clock import install  # this folder's

    clock = install()
    wanted = os.environ.get("FUZZGPU_GC_THRESHOLDS")
    if wanted:
        from fuzzgpu.campaign import limits

        limits.GC_THRESHOLDS = tuple(int(v) for v in wanted.split(","))  # type: ignore[assignment]

    def dump() -> None:
        with open(os.path.join(out, f"gc-{wid}.json"), "w") as f:
            json.dump({"worker": wid, **clock.figures()}, f)

    atexit.register(dump)


def _start() -> None:
    out = os.environ.get("FUZZGPU_CPROFILE_DIR")
    if not out:
        return
    parent = os.environ.get("FUZZGPU_CPROFILE_PARENT", "")
    if parent and "--multiprocessing-fork" in sys.argv:  # the backend process a profiled worker spawned
        wid = f"{parent}-backend-{os.getpid()}"
    elif "--worker-id" in sys.argv and sys.argv.index("--worker-id") + 1 < len(sys.argv):
        wid = sys.argv[sys.argv.index("--worker-id") + 1]
        if wid not in os.environ.get("FUZZGPU_CPROFILE_WORKERS", "w0").split(","):
            return
        os.environ["FUZZGPU_CPROFILE_PARENT"] = wid  # inherited by its backend process (and by nvcc: ignored)
    else:
        return
    import atexit
    import cProfile

    prof = cProfile.Profile()

    def dump() -> None:
        import io
        import pstats

        prof.disable()
        prof.dump_stats(os.path.join(out, f"cprofile-{wid}.pstats"))
        s = io.StringIO()
        st = pstats.Stats(prof, stream=s)
        st.sort_stats("cumulative").print_stats(60)
        st.sort_stats("tottime").print_stats(40)
        with open(os.path.join(out, f"cprofile-{wid}.txt"), "w") as f:
            f.write(s.getvalue())

    atexit.register(dump)
    prof.enable()


_gc_clock()
_start()
