"""bench/stages.py's ``oracle`` stage timed by itself, in the tree this runs in, right after the same draw
(32 programs of profile ``all``, seed 1): CPU ms a program.  Run from a tree's root:

    PYTHONPATH=. python3 bench/results/oracle_speed/after-merge/stage_oracle.py
"""
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path.cwd() / "bench"))
import stages  # noqa: E402 -- bench/stages.py of the tree this runs in

programs = stages.draw("all", 32, 1)
copies = [stages.fresh(p) for p in programs]
t = time.process_time()
stages.oracle(copies, "race")
print(f"oracle stage: {1e3 * (time.process_time() - t) / len(copies):.2f} CPU ms a program")
