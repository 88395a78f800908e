"""``mbarrier.complete_tx`` end to end (docs/architecture.md, "How to add an instruction"), and the
generic mechanism it rests on: :func:`fuzzgpu.semantics.key_of` finds an IR class through the
``ir`` field of its table entry, so a new class needs no code in ``key_of``."""

from __future__ import annotations

import pytest

from fuzzgpu import ir, semantics


def _sample(cls: type[ir.Instruction]) -> ir.Instruction:
    """One instance of an IR class, built from placeholder operands."""
    import dataclasses

    values = {"bar": "b", "loc": "x", "dst": "r0", "dst_loc": "s", "src_loc": "g", "src": 1, "value": 1,
              "operation": ir.RmwOp.ADD, "operands": (1,), "count": 1, "tx": 4, "kind": "before_thread_sync"}
    required = {f.name: values[f.name] for f in dataclasses.fields(cls)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    return cls(**required)


@pytest.mark.parametrize("cls_name,key", sorted(semantics.BY_IR_CLASS.items()))
def test_key_of_finds_a_class_by_its_table_entry(cls_name, key):
    cls = ir.INSTRUCTION_TYPES[next(t for t, c in ir.INSTRUCTION_TYPES.items() if c.__name__ == cls_name)]
    ins = _sample(cls)
    if isinstance(ins, ir.MbarrierArrive):
        assert semantics.key_of(ins) == "mbarrier.arrive"
    else:
        assert semantics.key_of(ins) == key
    assert semantics.of(ins) is semantics.TABLE[semantics.key_of(ins)]


def test_every_registered_class_has_a_key_or_no_memory_effect():
    """A class the table does not name is either one with no memory-model meaning or a bug."""
    for cls in ir.INSTRUCTION_TYPES.values():
        if cls.__name__ in semantics.NO_MEMORY_EFFECT:
            continue
        try:
            ins = _sample(cls)
        except KeyError:  # a field the sampler has no placeholder for: the classes spelled out in key_of
            continue
        assert semantics.key_of(ins) in semantics.TABLE, cls.__name__


def test_a_class_named_bare_twice_is_refused(monkeypatch):
    twice = dict(semantics.TABLE)
    twice["mbarrier.expect_tx.again"] = semantics.TABLE["mbarrier.expect_tx"].__class__(
        **{**semantics.TABLE["mbarrier.expect_tx"].__dict__, "ptx": "mbarrier.expect_tx.again"})
    monkeypatch.setattr(semantics, "TABLE", twice)
    with pytest.raises(ValueError, match="MbarrierExpectTx"):
        semantics._by_ir_class()
