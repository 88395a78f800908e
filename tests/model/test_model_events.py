"""The event builder's modules (model/trace.py, model/events.py, model/candidates.py): the names
other modules use stay reachable as ``fuzzgpu.model.events.<name>``, and a memory event's typed
accessors."""

from __future__ import annotations

import pytest

from fuzzgpu.ir import Proxy, Sem
from fuzzgpu.model import candidates, events, trace
from fuzzgpu.model.event import Event


@pytest.mark.parametrize(
    "name, home",
    [
        ("Candidate", candidates),
        ("assemble", candidates),
        ("barrier_deadlock", candidates),
        ("barrier_syncs", candidates),
        ("barriers_complete", candidates),
        ("candidates", candidates),
        ("feasible", candidates),
        ("ProgramTraces", trace),
        ("Trace", trace),
        ("copy_with", trace),
    ],
)
def test_events_re_exports_the_moved_names(name, home):
    assert getattr(events, name) is getattr(home, name)
    assert name in events.__all__


def test_every_name_in_events_all_exists():
    missing = [n for n in events.__all__ if not hasattr(events, n)]
    assert not missing


def test_a_memory_event_has_a_typed_location_and_access():
    r = Event(3, 0, 1, "R", Sem.RELAXED, None, Proxy.GENERIC, "x", "x", 7)
    assert r.location == "x"
    assert r.access == ("x", 7)


def test_an_event_without_location_or_value_says_so():
    f = Event(4, 0, 2, "F", Sem.SC)
    with pytest.raises(TypeError, match="event 4 \\(F\\) has no location"):
        _ = f.location
    unread = Event(5, 0, 3, "R", Sem.WEAK, None, Proxy.ASYNC, "x", "x", None)  # a copy's read before its value
    assert unread.location == "x"
    with pytest.raises(TypeError, match="event 5 \\(R\\) is no access with a value"):
        _ = unread.access
