"""The harness's value encoding (codegen.ValueCodec / value_plan) against the oracle's arithmetic,
and the fault kind for a value no store wrote (properties, sim, replay, run).

Issue 12, item 1: on an H200 a random campaign saved three "forbidden: a value no store of the
program wrote was read" findings, all programs with several ``atom.add`` on one location: the
value tables had been shrunk to the condition's values (``?`` for every RMW result), and the
launch-tagged encoding could not carry RMW arithmetic (carries and borrows into the tag).
"""

from __future__ import annotations

import dataclasses
import itertools
import subprocess
import shutil
from pathlib import Path

import pytest

from fuzzgpu import codegen, litmus, properties
from fuzzgpu.backends.base import Histogram, RunConfig
from fuzzgpu.backends.sim import SimBackend
from fuzzgpu.ir import Atom, Load, Location, Placement, Program, Red, RmwOp, Store, Thread, validate
from fuzzgpu.model import values
from fuzzgpu.model.events import rmw_result

from programs import RMW_ISSUE12

U32 = 0xFFFFFFFF


def issue_program() -> Program:
    """Issue 12's example (tests/programs.py)."""
    return RMW_ISSUE12


# --------------------------------------------------------------------------------------------
# PTX's own arithmetic on 32-bit words (PTX ISA, "atom" / "red": the operation table)
# --------------------------------------------------------------------------------------------


def _s32(x: int) -> int:
    x &= U32
    return x - (1 << 32) if x & 0x80000000 else x


#: PTX ISA "atom", the operation table, on the 32-bit words codegen emits (add.u32, and/or/xor.b32,
#: exch/cas.b32, min/max.s32, inc/dec.u32): an independent reference for the oracle's unbounded
#: arithmetic (``rmw_result``), so written as the ISA's table, not by calling the code under test.
#: sub is emitted as add.u32 of the negated operand; cas writes nothing (None) when old != b.
_PTX_ATOM = {
    RmwOp.ADD: lambda old, b, c: (old + b) & U32,
    RmwOp.SUB: lambda old, b, c: (old + b) & U32,
    RmwOp.AND: lambda old, b, c: old & b,
    RmwOp.OR: lambda old, b, c: old | b,
    RmwOp.XOR: lambda old, b, c: old ^ b,
    RmwOp.EXCH: lambda old, b, c: b,
    RmwOp.CAS: lambda old, b, c: c if old == b else None,
    RmwOp.MIN: lambda old, b, c: min(old, b, key=_s32),
    RmwOp.MAX: lambda old, b, c: max(old, b, key=_s32),
    RmwOp.INC: lambda old, b, c: 0 if old >= b else (old + 1) & U32,  # ((old >= b) ? 0 : (old + 1))
    RmwOp.DEC: lambda old, b, c: b if old == 0 or old > b else (old - 1) & U32,  # (((old == 0) || (old > b)) ? b : (old - 1))
}


def ptx_atom(op: RmwOp, old: int, ops: tuple[int, ...]) -> int | None:
    """The word ``atom.<op>`` leaves in memory (see :data:`_PTX_ATOM`); None when a cas writes nothing."""
    return _PTX_ATOM[op](old, ops[0], ops[1] if len(ops) > 1 else None)


def test_emitted_rmw_types_are_the_ones_mirrored() -> None:
    want = {RmwOp.ADD: "add.u32", RmwOp.SUB: "add.u32", RmwOp.AND: "and.b32", RmwOp.OR: "or.b32", RmwOp.XOR: "xor.b32",
            RmwOp.EXCH: "exch.b32", RmwOp.CAS: "cas.b32", RmwOp.MIN: "min.s32", RmwOp.MAX: "max.s32",
            RmwOp.INC: "inc.u32", RmwOp.DEC: "dec.u32"}
    for op, t in want.items():
        operands = (1, 2) if op is RmwOp.CAS else (1,)
        assert codegen.ptx_of(Atom("r0", "x", op, operands)).endswith("." + t)
        assert codegen.ptx_of(Red("x", op, 1)).endswith("." + t)


INITS = (0, 1, 5, -1, -7, 0x7FFF, -0x8000, 0xFFFF, 40000, (1 << 31) - 1, -(1 << 31))
OPERANDS = (0, 1, 3, 5, -1, -6, 0x7FFF, 0xFFFF, 40000, (1 << 31) - 1, -(1 << 31))
ARITH_OPS = (RmwOp.ADD, RmwOp.SUB, RmwOp.AND, RmwOp.OR, RmwOp.XOR, RmwOp.EXCH, RmwOp.CAS, RmwOp.MIN, RmwOp.MAX)


def _fits(v: int) -> bool:
    return codegen.VALUE_MIN <= v <= codegen.VALUE_MAX


def _chain_agrees(codec: codegen.ValueCodec, init: int, steps: list[tuple[RmwOp, tuple[int, ...]]]) -> bool:
    """Run an RMW chain on device words and in the oracle's arithmetic; every word read back must
    decode to the oracle's value (while that value fits in 32 bits)."""
    tag = 17
    raw, val = codec.encode(init, tag), init
    for op, ops in steps:
        if codec.decode(raw, tag, init) != val:
            return False
        new_raw = ptx_atom(op, raw, tuple(codec.operand(op, o) if op is not RmwOp.CAS else codec.encode(o, tag) for o in ops))
        new_val = rmw_result(op, val, ops)
        if new_val is None:
            if new_raw is not None:
                return False
            continue
        if not _fits(new_val):
            return True  # value_plan refuses such a program (test below)
        raw, val = new_raw, new_val
    return codec.decode(raw, tag, init) == val


@pytest.mark.parametrize("op", ARITH_OPS, ids=str)
def test_exact_codec_decodes_every_rmw_result_to_the_oracles_value(op: RmwOp) -> None:
    for init, a, b in itertools.product(INITS, OPERANDS, OPERANDS[:6]):
        ops = (a, b) if op is RmwOp.CAS else (a,)
        steps = [(op, ops), (op, (b, a) if op is RmwOp.CAS else (b,)), (RmwOp.ADD, (a,)), (op, ops)]
        assert _chain_agrees(codegen.EXACT, init, steps), (op, init, a, b)
    # the words wrap: 0 - 5, then + 5, and the sign bit crossed by add
    assert _chain_agrees(codegen.EXACT, 0, [(RmwOp.SUB, (5,)), (RmwOp.ADD, (5,)), (RmwOp.SUB, (1,))])
    assert _chain_agrees(codegen.EXACT, -(1 << 31), [(RmwOp.ADD, ((1 << 31) - 1,)), (RmwOp.ADD, (1,)), (RmwOp.ADD, (-1,))])


@pytest.mark.parametrize("op", (RmwOp.INC, RmwOp.DEC), ids=str)
def test_exact_codec_inc_dec_agree_where_the_plan_runs_them(op: RmwOp) -> None:
    """inc/dec are .u32 in PTX; the plan runs them only with a non-negative constant operand on a
    location that never holds a negative value -- there the words agree; elsewhere they would not."""
    for init, b in itertools.product((0, 1, 2, 5, 40000, (1 << 31) - 1), (0, 1, 2, 5, 40000)):
        assert _chain_agrees(codegen.EXACT, init, [(op, (b,))] * 4 + [(RmwOp.ADD, (1,)), (op, (b,))]), (init, b)
    assert not _chain_agrees(codegen.EXACT, -2, [(op, (5,))])  # why the plan refuses negative locations


def test_tagged_codec_roundtrips_stores_and_cannot_carry_rmws() -> None:
    c = codegen.TAGGED
    for tag in (1, 2, 0x7FFF, 0xFFFF):
        for v in (0, 1, -1, 5, codegen.TAGGED_MAX, codegen.TAGGED_MIN):
            assert c.decode(c.encode(v, tag), tag, init=99) == v
        assert c.decode(c.encode(5, tag), tag % 0xFFFF + 1, init=99) == 99  # another launch's word: the initial value
    # the pre-fix encoding of an add (raw operand on a tagged word): -1 + 1 carries into the tag
    assert c.decode((c.encode(-1, 3) + 1) & U32, 3, init=42) == 42 != 0
    with pytest.raises(ValueError):
        c.operand(RmwOp.ADD, 1)


def _harness_helper(name: str) -> str:
    src = codegen._HARNESS_HELPERS
    start = src.index(f"__device__ __forceinline__ int {name}(")
    return src[start : src.index("\n}\n", start) + 3]


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs a host C++ compiler")
def test_device_expressions_match_their_python_mirror(tmp_path: Path) -> None:
    """The C++ the harness emits for encode / RMW operand / decode, compiled for the host and run on
    the words an RMW chain produces, gives what the Python mirror gives."""
    cases = []
    for codec in (codegen.TAGGED, codegen.EXACT):
        tag = 0xBEEF
        for v in (0, 1, -1, 5, 0x7FFF, -0x8000) + ((40000, (1 << 31) - 1, -(1 << 31)) if not codec.tagged else ()):
            cases.append((codec, "enc", v, tag, codec.encode(v, tag)))
        for raw in (0, 5, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, tag << 16 | 5, tag << 16 | 0xFFFB, (tag + 1) << 16 | 5):
            cases.append((codec, "dec", raw, tag, codec.decode(raw, tag, -3)))
        if not codec.tagged:
            for op, v in itertools.product(ARITH_OPS + (RmwOp.INC, RmwOp.DEC), (0, 5, -6, 40000, -(1 << 31))):
                cases.append((codec, op, v, tag, codec.operand(op, v)))
    body = []
    for i, (codec, kind, v, tag, _) in enumerate(cases):
        tagh = f"{tag << 16}u"
        if kind == "enc":
            expr = codec.c_encode(f"{v}ll", tagh)
        elif kind == "dec":
            expr = f"(unsigned)({codec.c_decode(f'{v}u', tagh, -3)})"
        else:
            e = f"(-({v}ll))" if kind is RmwOp.SUB else f"({v}ll)"  # emit_instruction negates sub
            expr = codec.c_operand(kind, e)
        body.append(f'  printf("%u\\n", (unsigned)({expr}));')
    prog = ("#include <cstdio>\n#define __device__\n#define __forceinline__ inline\n" + _harness_helper("fz_dec")
            + "\nint main() {\n" + "\n".join(body) + "\n  return 0;\n}\n")
    (tmp_path / "t.cpp").write_text(prog)
    subprocess.run(["g++", "-O1", "-o", str(tmp_path / "t"), str(tmp_path / "t.cpp")], check=True, capture_output=True)
    out = subprocess.run([str(tmp_path / "t")], check=True, capture_output=True, text=True).stdout.split()
    assert len(out) == len(cases)
    for (codec, kind, v, tag, want), got in zip(cases, out):
        assert int(got) == want & U32, (codec, kind, v)


# --------------------------------------------------------------------------------------------
# value_plan: codec, tables, refusals
# --------------------------------------------------------------------------------------------


def test_issue_program_tables_hold_every_value_its_keys_can_hold() -> None:
    """Before the fix: 5 keys x 19 heuristic values > 2^20 bins, so every table was shrunk to (0,):
    every RMW result read back as ``?``."""
    p = issue_program()
    _, spec = codegen.generate_harness(p)
    dom = values.key_values(p)
    assert spec.values == "exact" and spec.needs_prime
    assert {k.key: set(k.values) for k in spec.keys} == {k: set(v) for k, v in dom.items()}
    assert {5, 6, 11} <= set(dict((k.key, k.values) for k in spec.keys)["P0:r2"])
    # every in-domain outcome has a bin of its own, decoded back without "?"
    for b in range(spec.nbins):
        d = spec.decode_bin(b)
        if all(v is not None for v in d.values()):
            assert all(d[k] in dom[k] for k in d)


def test_codec_choice() -> None:
    mp = litmus.parse_file(Path(__file__).parents[1] / "litmus" / "gpu" / "MP-relaxed-gpu.litmus")
    assert codegen.value_plan(mp).codec is codegen.TAGGED
    assert codegen.generate_harness(mp)[1].values == "tagged" and not codegen.generate_harness(mp)[1].needs_prime
    # a stored value outside 16 bits: the tagged decode read 40000 back as -25536 ("?")
    wide = dataclasses.replace(mp, name="wide", threads=tuple(
        dataclasses.replace(t, code=tuple(dataclasses.replace(i, src=40000) if isinstance(i, Store) and i.loc == "x" else i
                                          for i in t.code)) for t in mp.threads), condition=None)
    plan = codegen.value_plan(wide)
    assert plan.codec is codegen.EXACT and not plan.reasons
    assert 40000 in dict(plan.tables)["P1:r1"] or 40000 in dict(plan.tables)["P1:r0"]
    assert codegen.value_plan(issue_program()).codec is codegen.EXACT


def _one(op: RmwOp, operand: int, init: int = 0, store: int | None = None) -> Program:
    code0 = ((Store("x", store),) if store is not None else ()) + (Atom("r0", "x", op, (operand,)),)
    return validate(Program(f"p-{op}", (Thread("P0", Placement(cta=0), code0), Thread("P1", Placement(cta=1), (Load("r1", "x"),))),
                            (Location("x", init),)))


def test_inc_dec_run_only_where_unsigned_and_signed_agree() -> None:
    for op in (RmwOp.INC, RmwOp.DEC):
        assert codegen.unrunnable_reasons(_one(op, 5)) == []
        assert any("negative" in r for r in codegen.unrunnable_reasons(_one(op, 5, init=-2)))
        assert any("negative" in r for r in codegen.unrunnable_reasons(_one(op, 5, store=-1)))
        assert any("non-negative constant" in r for r in codegen.unrunnable_reasons(_one(op, -1)))
    # min/max with negative values now run (min.s32 / max.s32, as the oracle compares)
    assert codegen.unrunnable_reasons(_one(RmwOp.MIN, -5, init=3)) == []


def test_values_beyond_32_bits_and_huge_tables_are_refused_before_running() -> None:
    big = _one(RmwOp.ADD, (1 << 31) - 1, init=5)  # 5 + (2^31 - 1) overflows int32
    assert any("signed 32-bit word" in r for r in codegen.unrunnable_reasons(big))
    loads = tuple(Load(f"r{i}", "x") for i in range(9))
    many = validate(Program("many", (Thread("P0", Placement(cta=0), (Store("x", 1), Store("x", 2), Store("x", 3))),
                                     Thread("P1", Placement(cta=1), loads)), (Location("x"),)))
    reasons = codegen.unrunnable_reasons(many)
    assert any("bins" in r and str(codegen.MAX_BINS) in r for r in reasons), reasons


# --------------------------------------------------------------------------------------------
# The fault kind: a value no store wrote is never "forbidden"
# --------------------------------------------------------------------------------------------


def _hist(p: Program, rows: list[tuple[dict, int]]) -> Histogram:
    keys = p.outcome_keys()
    counts = tuple((tuple((k, d[k]) for k in keys), c) for d, c in rows)
    return Histogram(keys, counts, sum(c for _, c in rows), backend="test")


def test_unwritten_values_are_a_fault_not_forbidden() -> None:
    p = issue_program()
    ok = {"P0:r1": 0, "P0:r2": 5, "P1:r1": 0, "P1:r2": 5, "P2:r0": 11}
    qmark = dict(ok, **{"P1:r2": None})  # the harness's "?"
    seven = dict(ok, **{"P0:r1": 7})  # no store writes 7
    both5 = dict(ok, **{"P1:r1": 5})  # each value written by the program, the combination impossible
    h = _hist(p, [(ok, 100), (qmark, 7), (seven, 3), (both5, 2)])
    for prop in ("model", "sc"):
        v = properties.check(prop, p, h)
        faults = [o for o in v.offending if o.verdict == properties.UNWRITTEN]
        assert {tuple(o.outcome) for o in faults} == {tuple(qmark.items()), tuple(seven.items())}
        assert all("harness or hardware fault" in o.reason and "no store" in o.reason for o in faults)
        assert [dict(o.outcome) for o in v.offending if o.verdict == "forbidden"] == [both5]
        assert v.faults == 10 and "fault" in v.kinds and "outcome" in v.kinds
        assert "HARNESS OR HARDWARE FAULT" in v.summary() and "(forbidden)" in v.summary()
        assert v.to_json()["faults"] == 10
    only = properties.check("model", p, _hist(p, [(ok, 100), (qmark, 7)]))
    assert only.failed and only.kinds == ("fault",) and "forbidden" not in only.summary()
    assert properties.check("model", p, _hist(p, [(ok, 100)])).status == "pass"


def test_sim_fault_unwritten_is_reported_as_a_fault() -> None:
    mp = litmus.parse_file(Path(__file__).parents[1] / "litmus" / "gpu" / "MP-relacq-gpu.litmus")
    h = SimBackend("unwritten:1").run(mp, RunConfig(instances=20_000))
    assert sum(c for o, c in h.counts if dict(o)[h.keys[-1]] is None) == 200
    v = properties.check("model", mp, h)
    assert v.failed and v.kinds == ("fault",) and v.faults == 200
    assert all(o.verdict == properties.UNWRITTEN for o in v.offending)
    assert properties.check("model", mp, SimBackend().run(mp, RunConfig(instances=20_000))).status == "pass"


def test_replay_of_a_fault_entry(tmp_path: Path) -> None:
    from fuzzgpu import corpus
    from fuzzgpu.backends.static import StaticBackend
    from fuzzgpu.commands.replay import replay_entry

    mp = litmus.parse_file(Path(__file__).parents[1] / "litmus" / "gpu" / "MP-relacq-gpu.litmus")
    sim = SimBackend("unwritten:1")
    cfg = RunConfig(instances=20_000)
    h = sim.run(mp, cfg)
    v = properties.check("model", mp, h)
    e = corpus.make_entry(mp, v, h, sim, cfg, shape="MP")
    path, written = corpus.Corpus(tmp_path).add(e)
    assert written
    entry = corpus.load_entry(path)
    r = replay_entry(entry, sim)
    assert r["status"] == "violates" and r["kinds"] == ["fault"] and "HARNESS OR HARDWARE FAULT" in r["summary"]
    assert replay_entry(entry, StaticBackend())["status"] == "skipped"  # executes nothing
    # its own signature: not the one of the same program's forbidden-outcome finding
    bad = SimBackend("relacq-as-relaxed").run(mp, RunConfig(instances=200_000))
    vb = properties.check("model", mp, bad)
    assert vb.failed and "fault" not in vb.kinds
    assert corpus.verdict_signature(mp, vb) != e["signature"]


def test_run_command_calls_unwritten_values_a_fault() -> None:
    from fuzzgpu.commands.run import _verdicts

    p = issue_program()
    ok = {"P0:r1": 0, "P0:r2": 5, "P1:r1": 0, "P1:r2": 5, "P2:r0": 11}
    h = _hist(p, [(ok, 10), (dict(ok, **{"P1:r2": None}), 3)])
    v = _verdicts(p, h)
    assert [x[0] for x in v.values()] == ["sc", properties.UNWRITTEN]


def test_cuda_evidence_identity_names_the_value_encoding() -> None:
    from types import SimpleNamespace

    from fuzzgpu.backends.cuda import CudaBackend

    bid, arch, _ = CudaBackend.identity(SimpleNamespace(arch="sm_90"))
    assert bid == f"cuda:values-v{codegen.VALUES_VERSION}" and arch == "sm_90" and codegen.VALUES_VERSION >= 2


def test_explain_calls_a_numeric_unwritten_value_a_fault(tmp_path: Path) -> None:
    from fuzzgpu import corpus
    from fuzzgpu.commands.explain import explain_text

    p = issue_program()
    ok = {"P0:r1": 0, "P0:r2": 5, "P1:r1": 0, "P1:r2": 5, "P2:r0": 11}
    h = _hist(p, [(ok, 100), (dict(ok, **{"P0:r1": 7}), 3)])
    v = properties.check("model", p, h)
    path, _ = corpus.Corpus(tmp_path).add(corpus.make_entry(p, v, h, SimBackend(), RunConfig(instances=103), shape="random"))
    text = explain_text(corpus.load_entry(path))
    line = next(ln for ln in text.splitlines() if "seen 3 times" in ln)
    assert "unwritten: harness or hardware fault" in line and "forbidden" not in line
