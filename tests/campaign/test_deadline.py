"""``--time`` is a deadline (issue 27, item 3): the fix search, the shrink and the end of a campaign stop
at it and say what they cut short, never claiming what they did not reach.  Pinned with an injected
clock (a counter the search itself advances), so nothing here depends on how fast the machine is; the
wall-clock figure (a --time 60 campaign ends within 75 s) is measured by bench/deadline.sh."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from fuzzgpu import fixes, properties
from fuzzgpu.backends.base import RunConfig
from fuzzgpu.backends.sim import SimBackend
from fuzzgpu.campaign import Campaign, load_profile
from fuzzgpu.campaign.limits import end_reserve, report_reserve
from fuzzgpu.deadline import Deadline, DeadlinePassed, Watch
from fuzzgpu.litmus import parse_file

ROOT = Path(__file__).resolve().parents[2]
#: its fix is a pair: 138 changed programs judged (every single change first), none a fix alone
PAIR = ROOT / "tests" / "litmus" / "race" / "RACE-5-relacq-cta-across-ctas.litmus"


class Clock:
    """A clock that moves only when told: one second per candidate the search judges."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _finding(path: Path = PAIR):
    p = parse_file(path)
    cfg = RunConfig(instances=100_000, seed=1)
    h = SimBackend().run(p, cfg)
    v = properties.RACE.check(p, h)
    assert v.failed
    return p, v, h, cfg


def test_the_fix_search_stops_at_its_deadline_and_claims_no_fix():
    p, v, _, _ = _finding()
    clock = Clock()

    def step(n: int) -> None:
        clock.now += 1.0

    with pytest.raises(DeadlinePassed) as e:
        fixes.fix_for(p, v, watch=Watch(Deadline(10.0, clock), "fix search", step))
    assert e.value.done == 9  # the 10th candidate was not judged: the clock read 10 before it
    attached = fixes.attach(p, v, Watch(Deadline(0.0, Clock()), "fix search"))
    assert attached.fix == "fix search stopped at the deadline after 0 candidates: no fix claimed"
    # without a deadline the same search finds the pair (the deadline, not the search, stopped it)
    assert "two changes" in fixes.attach(p, v).fix


def test_a_deadline_far_enough_changes_nothing():
    p, v, _, _ = _finding()
    clock = Clock()
    seen: list[int] = []

    def step(n: int) -> None:
        seen.append(n)
        clock.now += 1.0

    f = fixes.fix_for(p, v, watch=Watch(Deadline(10_000.0, clock), "fix search", step))
    assert f is not None and f.text == fixes.fix_for(p, v).text
    assert seen == list(range(1, len(seen) + 1)) and len(seen) > 100  # ticked once per candidate, in order


def _campaign(tmp_path: Path, out: io.StringIO) -> Campaign:
    c = Campaign(load_profile("all"), SimBackend(), tmp_path / "c", "race", seed=1, out=out, live=False, status_every=5.0)
    c.state_dir.mkdir(parents=True, exist_ok=True)
    return c


def test_a_finding_recorded_past_the_deadline_is_saved_without_a_claimed_fix_and_the_report_says_so(tmp_path):
    out = io.StringIO()
    c = _campaign(tmp_path, out)
    clock = Clock()
    clock.now = 100.0
    c.end = Deadline(50.0, clock)  # the session's deadline has passed
    p, v, h, cfg = _finding()
    c._record(p, v, h, cfg, shrunk=True)
    saved = json.loads(next((tmp_path / "c").glob("*.json")).read_text())
    assert saved["verdict"]["fix"] == "fix search stopped at the deadline after 0 candidates: no fix claimed"
    assert c.cut_short == [f"{p.name}: fix search stopped at the deadline after 0 candidates: no fix claimed"]
    assert "CUT SHORT by the deadline: " in out.getvalue()
    from fuzzgpu.campaign import write_report

    d = write_report(c, "time")
    assert "cut short   " + c.cut_short[0] in (d / "report.txt").read_text()
    assert json.loads((d / "report.json").read_text())["cut_short"] == c.cut_short


def test_a_long_fix_search_shows_progress_and_stops_at_the_shrink_budget(tmp_path):
    """The fix search of one finding gets at most the profile's shrink_seconds (here: the clock moves
    one second per candidate) and prints a status line every status_every seconds while it runs."""
    out = io.StringIO()
    c = _campaign(tmp_path, out)
    clock = Clock()
    c.end = Deadline(10_000.0, clock)
    watch = c._fix_watch("MP")
    assert watch.deadline.at == c.profile.shrink_seconds  # sooner than the session's end
    p, v, _, _ = _finding()

    def step(n: int) -> None:
        clock.now += 1.0
        watch.on_step(n)  # type: ignore[misc]

    with pytest.raises(DeadlinePassed):
        fixes.fix_for(p, v, watch=Watch(watch.deadline, "fix search", step))
    lines = [l for l in out.getvalue().splitlines() if l.startswith("[finishing] fix search for MP:")]
    assert len(lines) >= 5, out.getvalue()


def test_the_end_reserve_is_inside_the_time():
    for t in (0.5, 5.0, 60.0, 180.0, 3600.0, 30 * 86400.0):
        assert 0 < report_reserve(t) < end_reserve(t) < t
    assert end_reserve(60.0) == 9.0 and end_reserve(3600.0) == 15.0


class Ticking:
    """A clock that moves half a second each time it is read (the search reads it per candidate)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 0.5
        return self.now


def test_a_campaign_bounds_each_fix_search_and_the_entry_says_so_not_no_fix(tmp_path):
    """A campaign gives one finding's fix search FIX_SECONDS (here: a clock the search moves), far
    sooner than the session's deadline: the entry says the search stopped at its bound -- not "no
    fix", not cut short by the deadline -- and the same search unbounded (explain's) finds the pair."""
    from fuzzgpu.campaign.limits import FIX_SECONDS

    out = io.StringIO()
    c = _campaign(tmp_path, out)
    c.end = Deadline(10_000.0, Ticking())
    watch = c._fix_watch("MP")
    assert watch.deadline.at > watch.bound.at
    p, v, h, cfg = _finding()
    c._record(p, v, h, cfg, shrunk=True)
    saved = json.loads(next((tmp_path / "c").glob("*.json")).read_text())
    fix = saved["verdict"]["fix"]
    assert fix.startswith(f"fix search stopped at its bound ({FIX_SECONDS:g} s per finding in a campaign; "
                          "`fuzzgpu explain` searches on) after ") and fix.endswith(" candidates: no fix claimed"), fix
    assert fixes.NO_FIX not in fix and c.cut_short == [] and "CUT SHORT" not in out.getvalue()
    assert "two changes" in fixes.attach(p, v).fix  # unbounded, the search goes on to the pair


def test_the_session_deadline_before_the_bound_is_a_cut_short():
    """Both passed: the deadline is named (the step was cut short), not the bound."""
    clock = Clock()
    clock.now = 10.0
    w = Watch(Deadline(5.0, clock), "fix search", bound=Deadline(1.0, clock), bound_text="its bound")
    with pytest.raises(DeadlinePassed) as e:
        w.tick(3)
    assert e.value.at == "the deadline" and e.value.done == 2
    w = Watch(Deadline(50.0, clock), "fix search", bound=Deadline(1.0, clock), bound_text="its bound")
    with pytest.raises(DeadlinePassed, match="fix search stopped at its bound after 2 candidates"):
        w.tick(3)


def test_campaign_help_states_the_fix_search_bound():
    """`fuzzgpu campaign --help` says how long a finding's fix search may take: the bound the code uses."""
    from fuzzgpu.campaign.limits import FIX_SECONDS
    from fuzzgpu.commands.campaign import DESCRIPTION

    assert f"fix search after {FIX_SECONDS:g} s" in " ".join(DESCRIPTION.split())
