"""Campaigns: long fuzzing runs with a profile, a backend, a time budget and a corpus.

The engine is Hypothesis, for generation *and* shrinking: the property is a Hypothesis test over
the profile's strategy (:func:`fuzzgpu.strategies.weighted`); a failing program is shrunk by
Hypothesis and saved to the corpus (deduplicated by signature); then a new Hypothesis run starts
with the next seed, until the time budget is spent.  Backends are wrapped in the evidence cache
(:mod:`fuzzgpu.evidence`), so Hypothesis sees a deterministic function: a program asked about twice
gets the same evidence.  Once a failure is seen at rate ``r``, every shrink candidate is run with at
least ``3/r`` instances (95% chance to see the failure again if it is still there).

Everything lives in the corpus folder: findings (``*.json`` + ``*.litmus``), ``.fuzzgpu/state.json``
(totals, the run index, per-shape statistics), ``.fuzzgpu/hypothesis`` (Hypothesis's example database:
a shrink interrupted by a kill resumes from its best example) and ``.fuzzgpu/evidence``.  All files
are written atomically, so a kill at any moment loses nothing saved, and a restart continues.

Profiles (``strategies/*.toml``, also shipped as ``fuzzgpu/profiles/*.toml``) select and weight the
shapes and annotations and set the stress settings: see :func:`load_profile`.

The package, one module per job: :mod:`.state` (the saved state, the lock, the result),
:mod:`.database` (Hypothesis's example database), :mod:`.engine` (:class:`Campaign`: the
Hypothesis runs), :mod:`.speculate` (a static shrink's candidates checked in batches),
:mod:`.records` (uncounted entries of an earlier session; findings kept raw), :mod:`.report` (the report text and JSON, one campaign's or the combined one of
a parallel campaign), :mod:`.plot` (the weak-rate chart), :mod:`.run` (:func:`run_campaign`:
the backend, supervised or in-process, and one campaign over it).
"""

from __future__ import annotations

from ..backends import make_backend
from ..profiles import MAX_PROFILE_INT, MAX_SIM_INSTANCES, PROFILE_NAMES, Profile, ProfileError, load_profile, profile_path
from .database import example_database
from .engine import Campaign, PropertyFailed, size_key
from .plot import plot_weak_rates
from .report import (
    class_lines, classes_phrase, combine_states, exit_status_line, report_text, save_error_lines, timeouts_line, write_combined_report,
    write_report,
)
from .run import run_campaign
from .state import RAW_DIR, STATE_VERSION, CampaignResult, State, lock_corpus

__all__ = [
    "MAX_PROFILE_INT",
    "MAX_SIM_INSTANCES",
    "PROFILE_NAMES",
    "RAW_DIR",
    "STATE_VERSION",
    "Campaign",
    "CampaignResult",
    "Profile",
    "ProfileError",
    "PropertyFailed",
    "State",
    "class_lines",
    "classes_phrase",
    "combine_states",
    "example_database",
    "exit_status_line",
    "load_profile",
    "lock_corpus",
    "make_backend",
    "plot_weak_rates",
    "profile_path",
    "report_text",
    "run_campaign",
    "save_error_lines",
    "size_key",
    "timeouts_line",
    "write_combined_report",
    "write_report",
]
