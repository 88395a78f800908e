"""A campaign's state: what ``.fuzzgpu/state.json`` holds (:class:`State`, validated on load), the
lock that keeps one campaign per corpus (:func:`lock_corpus`), and what a session returns
(:class:`CampaignResult`)."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..files import read_regular

RAW_DIR = "raw"  # findings that could not be saved as corpus entries (D/raw/<signature>.json)
STATE_VERSION = 1


def _new_shape_stats() -> dict[str, float]:
    return {"programs": 0, "instances": 0, "weak": 0, "failures": 0, "unsupported": 0, "findings": 0}


@dataclass
class State:
    profile: str
    backend: str
    property: str
    seed: int
    run_index: int = 0
    sessions: int = 0
    #: programs judged: every program the property judged, the evidence cache's answers (a program
    #: asked again) and the draws not covered included (the key ``programs`` in state.json)
    programs: int = 0
    #: of them, programs judged while shrinking a failure (its candidates; with batches, the replayed draw too)
    shrink_programs: int = 0
    #: programs run: those the backend ran afresh (on cuda, GPU runs; on sim and static, its own
    #: runs and checks), neither the evidence cache's answer nor a draw it could not run
    run: int = 0
    instances: int = 0
    elapsed: float = 0.0
    #: the GPU's busy time over the campaign: CUDA events around each run's harness launches
    gpu_seconds: float = 0.0
    last_finding_elapsed: float | None = None
    findings: list[dict[str, Any]] = field(default_factory=list)
    duplicates: int = 0
    shapes: dict[str, dict[str, float]] = field(default_factory=dict)
    not_covered: dict[str, int] = field(default_factory=dict)  # why programs were not judged: reason -> count
    quarantined: int = 0  # programs that hung or crashed the backend's worker (corpus/quarantine/)
    faults: dict[str, int] = field(default_factory=dict)  # hang / crash / error -> count
    #: timeouts: instances, programs, and programs by the model's verdict on their waits
    #: (must-complete: findings; may-hang: expected; unknown)
    timeouts: dict[str, int] = field(default_factory=dict)
    worker: str | None = None  # the worker id in a parallel campaign
    #: findings by root cause (corpus.finding_class): class key -> {"id", "file" (the entry that
    #: represents it, "" for a known class), "findings" (distinct findings of this campaign in the
    #: class), "known" (a class of the known-findings list: counted, not saved), "writeup", "kinds"}
    classes: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: findings that could not be saved as corpus entries: {"signature", "class", "raw" (the file
    #: under D/raw/ that keeps them, or null when even that failed), "error"}
    save_errors: list[dict[str, Any]] = field(default_factory=list)
    #: stress tuned per shape family (fuzzgpu.stress.campaign.CampaignTuner): GPU-seconds spent
    #: tuning and running, and per family the tuned [stress] knobs and their weak rates
    tuning: dict[str, Any] = field(default_factory=dict)
    #: the campaign's course (fuzzgpu.campaign.timeline): samples {"t", "programs", "instances",
    #: "findings": {class key: findings}} for the report's plots over time
    timeline: list[dict[str, Any]] = field(default_factory=list)

    def count_timeouts(self, n: int, waits: str, stopped: bool = False) -> None:
        """Timed-out instances and programs, by the model's verdict on the program's ``waits``:
        ``must-complete`` (a finding), ``may-hang`` (expected, also must-hang), ``unknown``;
        ``stopped_early``: runs that stopped on their timeouts (``RunConfig.timeout_stop``)."""
        t = self.timeouts
        t["instances"] = t.get("instances", 0) + n
        t["programs"] = t.get("programs", 0) + 1
        if stopped:
            t["stopped_early"] = t.get("stopped_early", 0) + 1
        kind = {"must-complete": "must-complete", "may-hang": "may-hang", "must-hang": "may-hang"}.get(waits, "unknown")
        t[kind] = t.get(kind, 0) + 1

    def note_not_covered(self, shape: str, why: Any) -> None:
        """Count a program not judged, by its reason as a person reads it: the first line, never a
        Python class name ("UserError: nvcc: ..."); at most 30 reasons (then only those counted)."""
        from .. import model

        first = str(why).splitlines()[0] if str(why) else "(no reason given)"
        first = first.removeprefix(f"{shape}: ")  # a message that names the program already (codegen.Unrunnable)
        text = f"{shape}: {'the oracle does not cover it: ' if isinstance(why, model.Unsupported) else ''}{first}"[:240]
        if text in self.not_covered or len(self.not_covered) < 30:
            self.not_covered[text] = self.not_covered.get(text, 0) + 1

    def to_json(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["schema"] = "fuzzgpu.campaign-state"
        d["version"] = STATE_VERSION
        return d

    @classmethod
    def load(cls, path: Path) -> State | None:
        """The state saved in ``path`` (None when there is none), the whole document validated
        against :data:`fuzzgpu.schema.STATE_SCHEMA` first: a damaged, foreign or future-version
        state, or one with a wrong field anywhere, is refused in one line."""
        from .. import schema
        from ..errors import EnvError, clip
        from ..files import UnreadableFile

        try:
            d = json.loads(read_regular(path, 64 << 20))
        except FileNotFoundError:
            return None
        except UnreadableFile as e:
            raise UserError(f"{path}: cannot read the campaign state: {e}") from None
        except OSError as e:  # permissions, /proc, a failing disk: the environment (exit 3)
            raise EnvError(f"{path}: cannot read the campaign state: {e.strerror or e}") from None
        except (ValueError, RecursionError) as e:
            raise UserError(f"{path}: damaged campaign state ({type(e).__name__}); move it away to start afresh") from None
        if not isinstance(d, dict) or d.get("schema") != "fuzzgpu.campaign-state":
            raise UserError(f"{path}: not a fuzzgpu campaign state")
        v = d.get("version")
        if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= STATE_VERSION:
            raise UserError(f"{path}: campaign state version {clip(repr(v), 60)} is not one this fuzzgpu reads (1..{STATE_VERSION})")
        try:
            schema.check("state", d)
        except schema.SchemaError as e:
            raise UserError(f"{path}: damaged campaign state: {e}; move it away to start afresh") from None
        d.pop("schema", None)
        d.pop("version", None)
        names = {f.name: f for f in dataclasses.fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        from ..corpus import readable_class_key

        # class keys saved before race classes had names (race:5) count with the named ones
        kw["classes"] = {readable_class_key(k): v for k, v in (kw.get("classes") or {}).items()}
        for f in kw.get("findings") or []:
            if isinstance(f, dict) and isinstance(f.get("class"), str):
                f["class"] = readable_class_key(f["class"])
        tl = kw.get("timeline")
        kw["timeline"] = [x for x in tl if isinstance(x, dict)] if isinstance(tl, list) else []
        return cls(**kw)


def throughput(judged: int, run: int, elapsed: float) -> dict[str, Any]:
    """A campaign's totals as report.json gives them: programs ``judged`` and ``run`` (see
    :class:`State`), and each per hour of the campaign's ``elapsed`` seconds (None before a second)."""
    per_hour = (lambda n: round(3600 * n / elapsed)) if elapsed >= 1 else (lambda n: None)
    return {"judged": int(judged), "run": int(run), "elapsed_s": round(float(elapsed), 1),
            "judged_per_hour": per_hour(judged), "run_per_hour": per_hour(run)}


@dataclass
class CampaignResult:
    state: State
    new_findings: list[dict[str, Any]]
    reason: str
    report_dir: Path
    backend_description: str
    note: str
    session_seconds: float
    session_programs: int
    session_instances: int
    unsaved: list[str] = field(default_factory=list)  # findings kept raw (not saved as entries) this session
    stopped_by_fault: str | None = None  # the campaign stopped on a fault it cannot recover from (exit 3), and why
    session_run: int = 0  # of session_programs (judged), the programs the backend ran (State.run)


def lock_corpus(state_dir: Path, name: str = "lock", what: str = "another campaign is running on this corpus") -> Any:
    """An exclusive lock on ``state_dir/name`` (released by the OS when the process ends, even by
    SIGKILL); a UserError when another process holds it."""
    state_dir.mkdir(parents=True, exist_ok=True)
    f = open(state_dir / name, "a+")  # noqa: SIM115 -- held open for the whole campaign
    try:
        import fcntl

        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except ImportError:  # not POSIX: no lock
        pass
    except OSError:
        f.close()
        raise UserError(f"{state_dir.parent}: {what} (lock {state_dir / name})") from None
    return f
