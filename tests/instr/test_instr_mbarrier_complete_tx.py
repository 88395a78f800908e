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
              "operation": ir.RmwOp.ADD, "operands": (1,), "count": 1, "tx": 4, "kind": "before_thread_sync",
              "map": "m", "address": "g", "a": "r1", "slot": "s"}
    if cls is ir.Tcgen05Wait:  # its kind is what it completes (the placeholder is a tcgen05.fence's)
        values["kind"] = "st"
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


# -- the IR class -----------------------------------------------------------------------------

_PROGRAM = {
    "schema": "fuzzgpu.program", "version": 1, "name": "CTX", "arch": "PTX",
    "locations": [{"name": "x", "space": "shared"}, {"name": "bar", "space": "shared", "kind": "mbarrier"}],
    "threads": [{"name": "P0", "placement": {"cta": 0}, "code": [
        {"op": "mbarrier.init", "bar": "bar", "count": 1},
        {"op": "mbarrier.complete_tx", "bar": "bar", "tx": 4, "scope": "cluster"},
    ]}],
}


def _program(**complete_tx):
    import copy

    d = copy.deepcopy(_PROGRAM)
    d["threads"][0]["code"][1].update(complete_tx)
    return ir.program_from_json(d)


def test_complete_tx_json_round_trip():
    p = _program()
    ins = p.threads[0].code[1]
    assert ins == ir.MbarrierCompleteTx("bar", 4, ir.Scope.CLUSTER)
    assert ir.instruction_from_json(ir.instruction_to_json(ins)) == ins
    assert ir.program_from_json(ir.program_to_json(p)) == p


@pytest.mark.parametrize("fields,message", [
    ({"tx": 2**20}, "transaction bytes 1048576 out of range"),
    ({"tx": -1}, "transaction bytes -1 out of range"),
    ({"scope": "gpu"}, "at .cta or .cluster scope"),
    ({"bar": "x"}, "'x' is not declared as an mbarrier object"),
])
def test_complete_tx_validation(fields, message):
    with pytest.raises(ir.ProgramError, match=message):
        ir.validate(_program(**fields))


# -- the litmus spellings (the mnemonic table) ------------------------------------------------

from fuzzgpu.litmus import format_instruction, format_program, parse, parse_file  # noqa: E402


def _one(line: str) -> ir.Instruction:
    """The instruction ``line`` of P1; P1 is in the other CTA of the cluster for a .shared::cluster one."""
    cta = 1 if ".shared::cluster" in line else 0
    text = (f"PTX T\n{{\nbar @ shared mbarrier cta 0 = 0;\n}}\n P0@cta 0,cluster 0,gpu 0 | P1@cta {cta},cluster 0,gpu 0 ;\n"
            f" mbarrier.init bar, 1 | {line} ;\nexists (P0:r0 == 0)\n")
    return parse(text).threads[1].code[0]


@pytest.mark.parametrize("spelling,expected,printed", [
    ("mbarrier.complete_tx bar, 4", ir.MbarrierCompleteTx("bar", 4), "mbarrier.complete_tx.relaxed.cta bar, 4"),
    ("mbarrier.complete_tx.relaxed.cta.shared::cta bar, 4", ir.MbarrierCompleteTx("bar", 4),
     "mbarrier.complete_tx.relaxed.cta bar, 4"),
    ("mbarrier.complete_tx.relaxed.cluster bar, 8", ir.MbarrierCompleteTx("bar", 8, ir.Scope.CLUSTER),
     "mbarrier.complete_tx.relaxed.cluster bar, 8"),
    ("mbarrier.complete_tx.relaxed.cluster.shared::cluster bar, 4",
     ir.MbarrierCompleteTx("bar", 4, ir.Scope.CLUSTER, shared_cluster=True),
     "mbarrier.complete_tx.relaxed.cluster.shared::cluster bar, 4"),
    ("mbarrier.complete_tx.relaxed.cta.shared::cluster bar, 4", ir.MbarrierCompleteTx("bar", 4, shared_cluster=True),
     "mbarrier.complete_tx.relaxed.cta.shared::cluster bar, 4"),
    # PTX ISA 9.1: mbarrier.complete_tx{.sem.scope}{.space}.b64 -- a state space without .sem.scope
    # (the ISA's example: mbarrier.complete_tx.shared.b64) is .relaxed.cta
    ("mbarrier.complete_tx.shared bar, 4", ir.MbarrierCompleteTx("bar", 4), "mbarrier.complete_tx.relaxed.cta bar, 4"),
    ("mbarrier.complete_tx.shared::cta bar, 4", ir.MbarrierCompleteTx("bar", 4), "mbarrier.complete_tx.relaxed.cta bar, 4"),
    ("mbarrier.complete_tx.shared::cluster bar, 4", ir.MbarrierCompleteTx("bar", 4, shared_cluster=True),
     "mbarrier.complete_tx.relaxed.cta.shared::cluster bar, 4"),
])
def test_spellings_parse_and_print(spelling, expected, printed):
    ins = _one(spelling)
    assert ins == expected
    assert format_instruction(ins) == printed
    assert _one(printed) == ins


@pytest.mark.parametrize("spelling", ["mbarrier.complete_tx.release.cta bar, 4", "mbarrier.complete_tx.relaxed.gpu bar, 4"])
def test_a_bad_spelling_names_the_spellings(spelling):
    from fuzzgpu.errors import SourceError

    with pytest.raises(SourceError, match=r"write mbarrier\.complete_tx\.relaxed\.cta or "):
        _one(spelling)


# -- its meaning: the semantics table, the SASS checker, code generation ----------------------


def test_table_entry_orders_nothing():
    ins = ir.MbarrierCompleteTx("bar", 4, ir.Scope.CLUSTER, shared_cluster=True)
    e = semantics.of(ins)
    assert e is semantics.TABLE["mbarrier.complete_tx"] and e.ir == "MbarrierCompleteTx"
    assert e.strength == "relaxed" and e.source == semantics.ISA
    assert semantics.directions(ins) == (False, False)


def test_sass_checker_reads_the_same_entry():
    from fuzzgpu import sass

    sync = sass.sync_of_text("mbarrier.complete_tx.relaxed.cluster.shared::cluster.b64 [%r1], 16;")
    assert sync is not None and (sync.release, sync.acquire) == (False, False)


def test_the_gpu_harness_emits_it():
    """The harness runs it: one ``mbarrier.complete_tx.relaxed.<scope>.<space>.b64`` statement, its
    byte count scaled as every transaction count is (codegen BULK_SCALE), the remote form through
    ``mapa`` (``.shared::cluster``)."""
    from fuzzgpu import codegen

    for name, ptx in (("CTX-MP-fence.litmus", "mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], 16;"),
                      ("CTX-MP-remote-cluster.litmus", "mbarrier.complete_tx.relaxed.cluster.shared::cluster.b64 [%0], 16;")):
        p = parse_file(_file(name))
        assert not [r for r in codegen.unrunnable_reasons(p) if "complete_tx" in r], name
        src, _ = codegen.harness_source(p)
        assert ptx in src, name


# -- the litmus tests: verdicts written from the ISA (tests/litmus/mbarrier-complete-tx) -------

from pathlib import Path  # noqa: E402
from paths import catalogue_rows  # noqa: E402

from fuzzgpu import model  # noqa: E402

#: the spelling tests' litmus conditions are placeholders naming a register no instruction writes (what they test
#: is how an instruction parses and prints): the parser's true warning about it is not theirs to show
pytestmark = pytest.mark.filterwarnings("ignore::fuzzgpu.errors.SourceWarning")

LITMUS = Path(__file__).resolve().parents[1] / "litmus" / "mbarrier-complete-tx"


def _file(name: str) -> Path:
    return LITMUS / name


def _rows() -> list[dict[str, str]]:
    return catalogue_rows(LITMUS)


def test_catalogue_shape():
    rows = _rows()
    files = [f.name for f in LITMUS.glob("*.litmus")]
    assert sorted(r["path"] for r in rows) == sorted(files)
    assert {r["verdict"] for r in rows} >= {"forbidden", "allowed", "sc"}
    for r in rows:
        p = parse_file(_file(r["path"]))
        text = " ".join(p.comments)
        assert "PTX ISA" in text and "Verdict " + r["verdict"] in text and "'" in text, r["path"]
        assert any(isinstance(i, ir.MbarrierCompleteTx) for t in p.threads for i in t.code), r["path"]
        assert parse(format_program(p)) == p


@pytest.mark.parametrize("row", _rows(), ids=lambda r: r["path"])
def test_verdict(row):
    from test_catalogues import witness

    p = parse_file(_file(row["path"]))
    assert p.condition is not None and p.condition.quantifier == row["quantifier"]
    assert model.judge(p, witness(p)).verdict == row["verdict"]
    assert model.check_condition(p).witness_reachable == (row["witness_reachable"] == "true")


@pytest.mark.parametrize("line", ["mbarrier.complete_tx.relaxed.cta bar, 300000", "mbarrier.expect_tx bar, 300000",
                                  "mbarrier.arrive.expect_tx.release.cta bar, 300000"])
def test_the_harness_refuses_a_byte_count_past_the_tx_count_limit(line):
    """The IR takes byte counts below 2^20; the harness emits them x4 (BULK_SCALE: a location is a
    16-byte slot), and the ISA bounds the tx-count by 2^20 - 1: 300000 bytes would be 1200000 on the
    device (undefined), so the harness refuses it in one line, and 4 bytes (16) runs."""
    from fuzzgpu import codegen

    text = _file("CTX-phase-completes.litmus").read_text()
    big = parse(text.replace("mbarrier.complete_tx.relaxed.cta bar, 4", line))
    assert big != parse(text)
    reasons = [r for r in codegen.unrunnable_reasons(big) if "tx-count's limit" in r]
    assert len(reasons) == 1 and "300000 bytes" in reasons[0] and "1200000" in reasons[0], codegen.unrunnable_reasons(big)
    assert not [r for r in codegen.unrunnable_reasons(parse(text)) if "tx-count" in r]
