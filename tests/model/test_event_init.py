"""The hand-written ``__init__`` of the model's hot frozen dataclasses (:class:`.event.Event`,
:class:`.relations.Rel`) is the one ``dataclasses`` would write: the fields in order, the same
defaults, the same instance state; and the instances stay frozen."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from fuzzgpu.ir import Proxy, Scope, Sem
from fuzzgpu.model.event import Event
from fuzzgpu.model.relations import Rel


@pytest.mark.parametrize("cls", [Event, Rel])
def test_signature_is_the_dataclass_fields(cls: type) -> None:
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    fields = dataclasses.fields(cls)
    assert [p.name for p in params] == [f.name for f in fields]
    assert [p.default for p in params] == [inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default
                                           for f in fields]
    assert all(f.default_factory is dataclasses.MISSING for f in fields)  # no factory the __init__ would have to call


def test_event_state_and_frozen() -> None:
    e = Event(3, 1, 2, "R", Sem.ACQUIRE, Scope.GPU, Proxy.ASYNC, "x", "y", 7, rmw=True, width=16)
    assert list(e.__dict__) == [f.name for f in dataclasses.fields(Event)]
    assert e == dataclasses.replace(e) and hash(e) == hash(dataclasses.replace(e))
    assert (e.eid, e.tid, e.pc, e.kind, e.sem, e.scope, e.proxy, e.loc, e.vloc, e.value, e.rmw, e.width, e.unit) == (
        3, 1, 2, "R", Sem.ACQUIRE, Scope.GPU, Proxy.ASYNC, "x", "y", 7, True, 16, 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.value = 1  # type: ignore[misc]


def test_rel_state_and_frozen() -> None:
    r = Rel(2, (2, 0))
    assert list(r.__dict__) == ["n", "rows"] and r == Rel.from_pairs(2, [(0, 1)]) and r.has(0, 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.n = 3  # type: ignore[misc]
