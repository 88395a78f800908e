"""Where a campaign worker's wall time goes (issue 29), from a cProfile of the worker process
(bench/cprofile_site/sitecustomize.py writes ``cprofile-wN.pstats``).

    python bench/worker_split.py DIR/cprofile-w0.pstats [--backend DIR/cprofile-w0-backend-PID.pstats]

Prints one JSON object: seconds (cumulative, wall clock: cProfile's timer) of the whole process, of
the campaign's session, of Hypothesis's engine, of judging (a batch, or one program), and inside it of
the waits on the backend's worker process (``prepare``: a batch's compile and SASS check; ``run``:
each program's run, with its own compile and check when it was not prepared -- shrink candidates),
the oracle (``Property.check``), the weak count (the model), tuning, saving findings (``_record``:
the entry, its fix search); the draw is Hypothesis's engine less the judging.  With ``--backend``, the
same for the backend process's main thread: compile, SASS check wait, GPU run, the oracle's watch set.
"""

from __future__ import annotations

import argparse
import json
import pstats
import sys
from typing import Any

#: (label, file suffix, function name): the cumulative time of every function so named, summed
CAMPAIGN = [
    ("session", "campaign/engine.py", "_run"),
    ("hypothesis_engine", "hypothesis/core.py", "run_engine"),
    ("judge_ahead", "campaign/engine.py", "judge_ahead"),
    ("judge", "campaign/engine.py", "judge"),
    ("wait_prepare", "workers/supervised.py", "prepare"),
    ("wait_run", "workers/supervised.py", "run"),
    ("oracle_check", "fuzzgpu/properties.py", "check"),
    ("weak_count", "campaign/engine.py", "_weak_count"),
    ("tune", "campaign/engine.py", "_tune"),
    ("record_finding", "campaign/engine.py", "_record"),
    ("fix_search", "fuzzgpu/fixes.py", "attach"),
    ("report", "campaign/report.py", "write_report"),
    ("save_state", "campaign/engine.py", "save_state"),
]
BACKEND = [
    ("prepare", "backends/static.py", "prepare"),
    ("run", "backends/static.py", "run"),
    ("cuda_prepare", "backends/cuda.py", "prepare"),
    ("cuda_run", "backends/cuda.py", "run"),
    ("cuda_compile_single", "backends/cuda.py", "compile"),
    ("run_compiled", "backends/cuda.py", "run_compiled"),
    ("forbidden_watch", "fuzzgpu/properties.py", "forbidden_watch"),
    ("watch_bitmap", "backends/cuda.py", "watch_bitmap"),
    ("sync", "backends/cuda.py", "sync"),
    ("module_load", "backends/cuda.py", "_module"),
    ("wait_static_thread", "concurrent/futures/_base.py", "result"),
    ("subprocess_run", "subprocess.py", "run"),
]


def split(path: str, table: list[tuple[str, str, str]]) -> dict[str, Any]:
    st = pstats.Stats(path)
    stats: dict[Any, Any] = st.stats  # type: ignore[attr-defined]
    out: dict[str, Any] = {"total_s": round(st.total_tt, 2)}  # type: ignore[attr-defined]
    # a program judged one by one (a shrink candidate, a replayed draw): judge called by body, not judge_ahead
    out["judge_one_by_one_s"] = round(sum(ct for (f, _, fn), v in stats.items() if fn == "judge" and f.endswith("campaign/engine.py")
                                          for (cf, _, cfn), (_, _, _, ct) in v[4].items() if cfn != "judge_ahead"), 2)
    for label, suffix, name in table:
        # cumulative time of the outermost calls only: a recursive function's ct already counts once
        secs = sum(v[3] for (f, _, fn), v in stats.items() if fn == name and f.endswith(suffix))
        calls = sum(v[1] for (f, _, fn), v in stats.items() if fn == name and f.endswith(suffix))
        out[label] = {"s": round(secs, 2), "calls": calls}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pstats")
    ap.add_argument("--backend", action="append", default=[])
    args = ap.parse_args()
    doc: dict[str, Any] = {"campaign": split(args.pstats, CAMPAIGN)}
    c = doc["campaign"]
    c["draw_and_engine_s"] = round(c["hypothesis_engine"]["s"] - c["judge_ahead"]["s"] - c["judge_one_by_one_s"], 2)
    c["outside_session_s"] = round(c["total_s"] - c["session"]["s"], 2)  # start-up (imports, backend start), exit
    for i, b in enumerate(args.backend):
        doc[f"backend{i}"] = split(b, BACKEND)
    print(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
