"""The litmus parser on Dat3M's PTX suite and on fuzzgpu's extensions."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzgpu import ir
from fuzzgpu.errors import SourceError
from fuzzgpu.litmus import format_program, parse, parse_file, parse_path_tree

from paths import DAT3M


def dat3m_files() -> list[Path]:
    return parse_path_tree([DAT3M])


def dat3m(rel: str):
    return parse_file(DAT3M / rel)


# --------------------------------------------------------------------------------------------
# The whole suite
# --------------------------------------------------------------------------------------------


def test_suite_has_the_expected_files():
    listed = set()
    with open(DAT3M / "expected.csv") as f:
        for row in csv.reader(line for line in f if not line.startswith("#")):
            listed.add(row[0])
    found = {str(p.relative_to(DAT3M)) for p in dat3m_files()}
    assert found == listed
    assert len(found) == 183


@pytest.mark.parametrize("path", dat3m_files(), ids=lambda p: str(p.relative_to(DAT3M)))
def test_every_dat3m_file_parses(path):
    p = parse_file(path)
    assert p.threads and p.condition is not None


def test_quantifiers_match_expected_csv():
    with open(DAT3M / "expected.csv") as f:
        rows = [row for row in csv.reader(line for line in f if not line.startswith("#")) if row]
    assert len(rows) == 183, f"{DAT3M / 'expected.csv'}: {len(rows)} rows (an empty file checks nothing)"
    for row in rows:
        assert dat3m(row[0]).condition.quantifier == row[1], row[0]


def test_whole_suite_parses():
    """Every Dat3M file parses (its speed is measured by bench/oracle.py, not asserted here: tests
    must not depend on the CI machine's load)."""
    for f in dat3m_files():
        assert parse(f.read_text(), str(f)).threads


# --------------------------------------------------------------------------------------------
# Spot checks of parsed structure
# --------------------------------------------------------------------------------------------


def test_mp_structure():
    p = dat3m("Nvidia/Co-Total-3-threads-scope-diff.litmus")
    assert p.name == "Co-Total-3-threads-scope-diff"
    assert p.comments == (
        "Release consistency of three locations",
        "https://github.com/NVlabs/mixedproxy/blob/main/tests/ISA2.test",
    )
    assert [loc.name for loc in p.locations] == ["x", "flag1", "flag2"]
    assert [t.placement for t in p.threads] == [ir.Placement(cta=0), ir.Placement(cta=0), ir.Placement(cta=1)]
    assert p.threads[0].code == (ir.Store("x", 42), ir.Store("flag1", 1, ir.Sem.RELEASE, ir.Scope.CTA))
    assert p.threads[2].code == (ir.Load("r1", "flag2", ir.Sem.ACQUIRE, ir.Scope.GPU), ir.Load("r2", "x"))
    assert p.condition.quantifier == "exists"
    assert p.condition.expr == ir.And(
        (ir.Cmp("==", ir.RegRef("P1", "r0"), 1), ir.Cmp("==", ir.RegRef("P2", "r1"), 1), ir.Cmp("==", ir.RegRef("P2", "r2"), 42))
    )


def test_barrier_forms():
    quorum = dat3m("Barrier/quorum1-fail.litmus")
    assert quorum.threads[1].code[0] == ir.Barrier(instance=1, id=1, count=3)
    named = dat3m("Manual/SB+named-bar-reg-diff.litmus")
    assert named.threads[0].code[1] == ir.Barrier(instance=1, id="r2")  # Dat3M: instance, id
    assert named.threads[0].init == (("r0", 0), ("r2", 1))
    plain = dat3m("Manual/barrier-instance-id-forall.litmus")
    assert plain.threads[2].code[1] == ir.Barrier(id=2)


def test_branches_labels_and_rmw():
    p = dat3m("Manual/Ticketlock-diff-gpu.litmus")
    code = p.threads[0].code
    assert code[0] == ir.Atom("r1", "in", ir.RmwOp.ADD, (1,), ir.Sem.ACQUIRE, ir.Scope.GPU)
    assert code[1] == ir.Label("LC00")
    assert code[3] == ir.Branch(ir.Cond.EQ, "r1", "r2", "LC01")
    assert code[4] == ir.Goto("LC00")
    assert p.threads[1].placement == ir.Placement(cta=0, gpu=1)
    sl = dat3m("Manual/SL-future-plus.litmus")
    assert sl.threads[1].code[:2] == (
        ir.Atom("r2", "m", ir.RmwOp.CAS, (0, 1), ir.Sem.RELAXED, ir.Scope.GPU),
        ir.Branch(ir.Cond.NE, "r2", 0, "LC00"),
    )
    assert sl.threads[0].code[2] == ir.Atom("r1", "m", ir.RmwOp.EXCH, (0,))
    assert sl.location("m") == ir.Location("m", init=1)
    assert "\n" in sl.comments[0]


def test_aliases_and_proxies():
    p = dat3m("Nvidia/proxy/Proxy-MP-Alias+diffProxy-aliasFence+proxyFence-correctOrder2.litmus")
    assert p.location("y") == ir.Location("y", alias_of="x", proxy=ir.Proxy.GENERIC)
    assert p.location("s1") == ir.Location("s1", alias_of="y", proxy=ir.Proxy.SURFACE)
    assert p.location("t") == ir.Location("t", alias_of="y", proxy=ir.Proxy.TEXTURE)
    assert p.threads[0].code[:2] == (ir.Store("s", 2, proxy=ir.Proxy.SURFACE), ir.ProxyFence(ir.ProxyFenceKind.SURFACE))
    assert p.threads[1].code[1:] == (
        ir.ProxyFence(ir.ProxyFenceKind.ALIAS),
        ir.ProxyFence(ir.ProxyFenceKind.TEXTURE),
        ir.Load("r1", "t", proxy=ir.Proxy.TEXTURE),
    )
    assert p.condition.quantifier == "~exists"


def test_forall_with_nested_condition():
    p = dat3m("Manual/barrier-instance-id-forall.litmus")
    assert p.condition.quantifier == "forall"
    a = lambda t: ir.Cmp("==", ir.RegRef(t, "r0"), 1)  # noqa: E731
    b = lambda t: ir.Cmp("==", ir.RegRef(t, "r1"), 1)  # noqa: E731
    assert p.condition.expr == ir.And((ir.Or((a("P0"), a("P1"))), ir.Or((b("P2"), b("P3")))))


def test_thread_number_form_single_equals_and_mov():
    p = dat3m("Manual/LB+RMW-a.litmus")
    assert p.condition.expr.args[0] == ir.Cmp("==", ir.RegRef("P0", "r0"), 1)
    m = dat3m("Memalloy/IRRWIW1.litmus")
    assert m.threads[0].code[0] == ir.Mov("r0", 2)
    assert ir.Cmp("==", ir.LocRef("x"), 2) in m.condition.expr.args


# --------------------------------------------------------------------------------------------
# Extensions
# --------------------------------------------------------------------------------------------

EXTENSIONS = r"""PTX ext-all
"every extension"
{
x = 0;
s @ shared = 3;
a @ surface aliases x;
sc @ texture shared aliases s = 0;
P0:r1=5;
}
 P0@grid 1,cluster 0,cta 0,warp 2,gpu 0 | P1@cta 1,gpu 0 ;
 ld.volatile r0, x            | st.volatile x, 2             ;
 ld.global.nc r2, x           | membar.cta                   ;
 ld.relaxed.cluster r3, s     | membar.gl                    ;
 fence.acq_rel.cluster        | membar.sys                   ;
 fence.proxy.async            | bar.sync 0                   ;
 fence.proxy.async.global     | bar.arrive 1, 2              ;
 fence.proxy.async.shared::cta | barrier.sync 3              ;
 fence.proxy.async.shared::cluster | bar.cta.arrive 1, 2, all ;
 atom.add r4, x, 1            | red.add x, r1                ;
 atom.acquire.exch r5, x, 7   | red.release.sys.and x, 6     ;
 filler.regloop 64            | filler.smem 4                ;
 filler.delay 3000            | mov r6, r1                   ;
 mul r7, r6, 3                | xor r8, r7, r6               ;
 ld r9, -4                    | blt r8, 3, L1                ;
 L1:                          | L1:                          ;
locations [x; P0:r2; 1:r6;]
final (x == 2 \/ ~(P0:r0 >= 1) /\ not (P1:r8 < -1) \/ true)
"""


def test_extensions_parse():
    p = parse(EXTENSIONS)
    t0, t1 = p.threads
    assert t0.placement == ir.Placement(cta=0, gpu=0, grid=1, cluster=0, warp=2)
    assert t0.init == (("r1", 5),)
    assert p.location("s") == ir.Location("s", init=3, space=ir.Space.SHARED)
    assert p.location("sc") == ir.Location("sc", space=ir.Space.SHARED, alias_of="s", proxy=ir.Proxy.TEXTURE)
    assert t0.code[:8] == (
        ir.Load("r0", "x", ir.Sem.VOLATILE),
        ir.Load("r2", "x", nc=True),
        ir.Load("r3", "s", ir.Sem.RELAXED, ir.Scope.CLUSTER),
        ir.Fence(ir.Sem.ACQ_REL, ir.Scope.CLUSTER),
        ir.ProxyFence(ir.ProxyFenceKind.ASYNC),
        ir.ProxyFence(ir.ProxyFenceKind.ASYNC, "global"),
        ir.ProxyFence(ir.ProxyFenceKind.ASYNC, "shared::cta"),
        ir.ProxyFence(ir.ProxyFenceKind.ASYNC, "shared::cluster"),
    )
    assert t0.code[8:] == (
        ir.Atom("r4", "x", ir.RmwOp.ADD, (1,)),
        ir.Atom("r5", "x", ir.RmwOp.EXCH, (7,), ir.Sem.ACQUIRE, ir.Scope.GPU),
        ir.Filler("regloop", 64),
        ir.Filler("delay", 3000),
        ir.Arith(ir.ArithOp.MUL, "r7", "r6", 3),
        ir.Mov("r9", -4),
        ir.Label("L1"),
    )
    assert t1.code[:9] == (
        ir.Store("x", 2, ir.Sem.VOLATILE),
        ir.Fence(ir.Sem.SC, ir.Scope.CTA),
        ir.Fence(ir.Sem.SC, ir.Scope.GPU),
        ir.Fence(ir.Sem.SC, ir.Scope.SYS),
        ir.Barrier(id=0),
        ir.Barrier(id=1, count=2, mode="arrive"),
        ir.Barrier(id=3),
        ir.Barrier(id=2, mode="arrive", instance=1),
        ir.Red("x", ir.RmwOp.ADD, "r1"),
    )
    assert t1.code[9] == ir.Red("x", ir.RmwOp.AND, 6, ir.Sem.RELEASE, ir.Scope.SYS)
    assert t1.code[13] == ir.Branch(ir.Cond.LT, "r8", 3, "L1")
    assert p.observed == ("x", "P0:r2", "P1:r6")
    assert p.condition.quantifier == "final"
    assert p.condition.expr == ir.Or(
        (
            ir.Cmp("==", ir.LocRef("x"), 2),
            ir.And((ir.Not(ir.Cmp(">=", ir.RegRef("P0", "r0"), 1)), ir.Not(ir.Cmp("<", ir.RegRef("P1", "r8"), -1)))),
            ir.BoolConst(True),
        )
    )
    assert parse(format_program(p)) == p


def test_implicit_locations_in_first_use_order():
    p = parse("PTX t\n{ }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n st.weak b, 1 | ld.weak r0, c ;\n st.weak a, 1 | ld.weak r1, b ;\nexists (a == 1)\n")
    assert [loc.name for loc in p.locations] == ["b", "c", "a"]  # row by row, left to right
    assert all(loc == ir.Location(loc.name) for loc in p.locations)


def test_no_condition_and_herd_style_header():
    p = parse("PTX t\n{ x=0; }\n P0 ;\n st.weak x, 1 ;\n")
    assert p.condition is None
    assert p.threads[0].placement == ir.Placement()


def test_printer_aligns_columns():
    text = format_program(parse("PTX t\n{x=0;}\nP0@cta 0,gpu 0|P1@cta 1,gpu 0;\nst.release.gpu x, 1|ld.weak r0, x;\nexists (P1:r0==1)"))
    table = [line for line in text.splitlines() if line.endswith(";") and "|" in line]
    assert len({line.index("|") for line in table}) == 1
    assert text.splitlines()[0] == "PTX t"


def test_parse_path_tree(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "z.litmus").write_text("x")
    (tmp_path / "a.litmus").write_text("x")
    (tmp_path / "notes.txt").write_text("x")
    single = tmp_path / "notes.txt"
    assert parse_path_tree([tmp_path, single]) == [tmp_path / "a.litmus", tmp_path / "b" / "z.litmus", single]


# --------------------------------------------------------------------------------------------
# The generic JSON form, for instruction types registered by extensions
# --------------------------------------------------------------------------------------------


@pytest.fixture
def probe_instruction():
    @dataclass(frozen=True)
    class Probe(ir.Instruction):
        OP: ClassVar[str] = "test.litmus.probe"
        loc: str
        phase: ir.Operand
        scope: ir.Scope = ir.Scope.CTA
        regs: tuple[ir.Operand, ...] = ()
        space: str | None = None

    ir.register_instruction(Probe)
    try:
        yield Probe
    finally:
        ir.INSTRUCTION_TYPES.pop(Probe.OP, None)


def test_unknown_instruction_types_print_and_parse_as_json(probe_instruction):
    from fuzzgpu.ir import Program, Thread, validate

    Probe = probe_instruction
    code = (Probe("bar", "r1", ir.Scope.GPU, (1, "r2"), "shared::cta"), Probe("x", 3), ir.Label("L"), ir.Goto("L"))
    p = validate(Program("t", (Thread("P0", ir.Placement(), code),), (ir.Location("x"), ir.Location("bar", space=ir.Space.SHARED))))
    text = format_program(p)
    assert ' {"op": "test.litmus.probe", "loc": "x", "phase": 3} ' in text
    assert parse(text) == p
    # a location named only inside a JSON instruction is declared implicitly, like any other
    assert parse(text.replace("bar @ shared = 0;\n", "")).location("bar") == ir.Location("bar")


def test_json_form_errors(probe_instruction):
    base = 'PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n INSTR ;\n'
    cases = {
        '{"op": "nope"}': (4, 2, "unknown instruction 'nope'"),
        '{"op": "test.litmus.probe", "loc": "x"}': (4, 2, "missing field 'phase'"),
        '{"op": "test.litmus.probe", "loc": "x", "phase": [1]}': (4, 2, "phase"),
        '{"op": "test.litmus.probe" "loc": "x"}': (4, 29, "expected ','"),
        '{"op": "ld", "op": "st"}': (4, 15, "expected a new JSON key"),
    }
    for instr, (line, col, gist) in cases.items():
        with pytest.raises(SourceError) as info:
            parse(base.replace("INSTR", instr))
        assert (info.value.line, info.value.col) == (line, col) and gist in info.value.message, str(info.value)
    assert parse(base.replace("INSTR", '{"op": "ld", "dst": "r0", "loc": "x", "sem": "acquire", "scope": "gpu"}')).threads[
        0
    ].code == (ir.Load("r0", "x", ir.Sem.ACQUIRE, ir.Scope.GPU),)


# --------------------------------------------------------------------------------------------
# PDL, mbarrier, async proxy, cp.async
# --------------------------------------------------------------------------------------------

ASYNC = r"""PTX tma-pdl
{
g = 0;
s @ shared = 0;
bar @ shared mbarrier = 0;
grid 1 @ pdl;
}
 P0@cta 0,gpu 0                              | P1@cta 0,gpu 0,grid 1            ;
 st.weak g, 1                                | griddepcontrol.wait              ;
 mbarrier.init bar, 1                        | ld.global.nc r0, g               ;
 cp.async.bulk.mbarrier s, g, 4, bar         | tcgen05.fence::after_thread_sync ;
 mbarrier.arrive.expect_tx bar, 4            |                                  ;
 mbarrier.try_wait.parity r1, bar, 0         |                                  ;
 cp.reduce.async.bulk.bulk_group.add g, s, 4 |                                  ;
 cp.async.bulk.commit_group                  |                                  ;
 cp.async.bulk.wait_group.read 0             |                                  ;
 cp.async s, g                               |                                  ;
 cp.async.commit_group                       |                                  ;
 cp.async.wait_group 0                       |                                  ;
 cp.async.wait_all                           |                                  ;
 cp.async.mbarrier.arrive.noinc bar          |                                  ;
 mbarrier.expect_tx bar, 8                   |                                  ;
 mbarrier.arrive.relaxed.cluster bar, 2      |                                  ;
 mbarrier.test_wait.parity.relaxed.cta r3, bar, 1 |                             ;
 async.read r4, s                            |                                  ;
 griddepcontrol.launch_dependents            |                                  ;
exists (P1:r0 == 0)
"""


def test_async_and_pdl_extensions():
    p = parse(ASYNC)
    assert p.pdl_grids == (1,)
    assert p.location("bar") == ir.Location("bar", space=ir.Space.SHARED, kind="mbarrier")
    assert p.threads[1].placement == ir.Placement(grid=1)
    assert p.threads[1].code == (ir.GridDepControl("wait"), ir.Load("r0", "g", nc=True), ir.Tcgen05Fence("after_thread_sync"))
    assert p.threads[0].code[1:] == (
        ir.MbarrierInit("bar", 1),
        ir.CpAsyncBulk("s", "g", "mbarrier", "bar", None, 4),
        ir.MbarrierArrive("bar", ir.Sem.RELEASE, ir.Scope.CTA, expect_tx=4),
        ir.MbarrierWait("r1", "bar", 0, "try_wait", ir.Sem.ACQUIRE, ir.Scope.CTA),
        ir.CpAsyncBulk("g", "s", "bulk_group", None, ir.RmwOp.ADD, 4),
        ir.BulkCommit(),
        ir.BulkWait(0, read=True),
        ir.CpAsync("s", "g"),
        ir.CpAsyncCommit(),
        ir.CpAsyncWait(0),
        ir.CpAsyncWait(None),
        ir.CpAsyncMbarrierArrive("bar"),
        ir.MbarrierExpectTx("bar", 8),
        ir.MbarrierArrive("bar", ir.Sem.RELAXED, ir.Scope.CLUSTER, None, 2),
        ir.MbarrierWait("r3", "bar", 1, "test_wait", ir.Sem.RELAXED, ir.Scope.CTA),
        ir.AsyncRead("r4", "s"),
        ir.GridDepControl("launch_dependents"),
    )
    text = format_program(p)
    assert "mbarrier.arrive.expect_tx.release.cta bar, 4" in text and "grid 1 @ pdl;" in text
    assert parse(text) == p


def _error_of_edit(text: str, old: str, new: str, *name: str) -> tuple[SourceError, int]:
    """The SourceError of ``text`` with its first ``old`` replaced by ``new``, and the line ``old`` is on."""
    assert old in text
    line = next(i for i, s in enumerate(text.splitlines(), 1) if old in s)
    with pytest.raises(SourceError) as info:
        parse(text.replace(old, new, 1), *name)
    return info.value, line


@pytest.mark.parametrize(
    "old, new, col, gist",
    [
        ("mbarrier.init bar, 1 ", "mbarrier.inot bar, 1 ", 2, "unknown instruction 'mbarrier.inot'"),
        ("mbarrier.try_wait.parity r1", "mbarrier.try_wait r1       ", 2, "write mbarrier.try_wait.parity"),
        ("mbarrier.try_wait.parity r1", "mbarrier.try_wait.parity.sys r1", 27, "unknown qualifier '.sys'"),
        ("cp.async.bulk.mbarrier s, g, 4, bar", "cp.async.bulk.mbarrier s, g, 4     ", 2, "takes 4 operand(s), got 3"),
        ("cp.async.bulk.mbarrier s, g, 4, bar", "cp.async.bulk.mbarrier s, g, x, bar", 31, "expected a number"),
        ("cp.async.bulk.mbarrier s, g, 4, bar", "cp.async.bulk.mbarrier g, g, 4, bar", 2, "between shared and global"),
        ("mbarrier.init bar, 1 ", "mbarrier.init s, 1   ", 2, "not declared as an mbarrier object"),
    ],
)
def test_async_extension_errors(old, new, col, gist):
    err, line = _error_of_edit(ASYNC, old, new)
    assert (err.line, err.col) == (line, col), str(err)
    assert gist in err.message


@pytest.mark.parametrize(
    "old, new, line, col, gist",
    [
        ("grid 1 @ pdl;", "grid 0 @ pdl;", 6, 6, "at least 1"),
        ("grid 1 @ pdl;", "grid 1 @ pdl; grid 1 @ pdl;", 6, 20, "grid 1 declared twice"),
        ("grid 1 @ pdl;", "grid 1 @ fast;", 6, 10, "expected 'pdl'"),
        ("bar @ shared mbarrier", "bar @ shared mbarrier mbarrier", 5, 23, "bad location attribute 'mbarrier'"),
    ],
)
def test_pdl_and_mbarrier_declaration_errors(old, new, line, col, gist):
    with pytest.raises(SourceError) as info:
        parse(ASYNC.replace(old, new, 1))
    assert (info.value.line, info.value.col) == (line, col), str(info.value)
    assert gist in info.value.message


PTX_SPELLINGS = r"""PTX tma-ptx-spellings
{
g = 1;
h = 0;
s @ shared = 0;
bar @ shared mbarrier = 0;
}
 P0                                                                   ;
 mbarrier.init bar, 1                                                 ;
 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes s, g, bar ;
 cp.async.bulk.shared.global s, g, 16, bar                            ;
 cp.async.bulk.global.shared::cta.bulk_group h, s                     ;
 cp.async.bulk.global.shared h, s, 8                                  ;
 cp.reduce.async.bulk.global.shared.add h, s                          ;
 cp.reduce.async.bulk.global.shared::cta.bulk_group.min h, s, 16      ;
 cp.async.ca.shared.global s, g                                       ;
 cp.async.cg.shared.global s, g                                       ;
"""


def test_bulk_copy_ptx_spellings():
    """The PTX form ``cp{.reduce}.async.bulk.DST.SRC{.COMPLETION}{.op}``: completion inferred from the
    direction, size optional (4), state spaces checked against the declarations."""
    code = parse(PTX_SPELLINGS).threads[0].code
    assert code[1:] == (
        ir.CpAsyncBulk("s", "g", "mbarrier", "bar", None, 4),
        ir.CpAsyncBulk("s", "g", "mbarrier", "bar", None, 16),
        ir.CpAsyncBulk("h", "s", "bulk_group", None, None, 4),
        ir.CpAsyncBulk("h", "s", "bulk_group", None, None, 8),
        ir.CpAsyncBulk("h", "s", "bulk_group", None, ir.RmwOp.ADD, 4),
        ir.CpAsyncBulk("h", "s", "bulk_group", None, ir.RmwOp.MIN, 16),
        ir.CpAsync("s", "g"),
        ir.CpAsync("s", "g"),
    )
    p = parse(PTX_SPELLINGS)
    assert parse(format_program(p)) == p


@pytest.mark.parametrize(
    "old, new, col, gist",
    [
        ("cp.async.bulk.shared.global s, g, 16, bar", "cp.async.bulk.shared.global h, g, 16, bar", 30, "'h' is a global location"),
        ("cp.async.bulk.global.shared h, s, 8", "cp.async.bulk.global.shared s, s, 8", 30, "'s' is a shared location"),
        ("cp.async.bulk.global.shared h, s, 8", "cp.async.bulk.global h, s, 8       ", 2, "destination and the source state space"),
        ("cp.async.bulk.global.shared h, s, 8", "cp.async.bulk.global.shared.add h, s", 2, "comes nothing"),
        ("cp.reduce.async.bulk.global.shared.add h, s", "cp.reduce.async.bulk.global.shared h, s    ", 2, "one reduction"),
        ("cp.reduce.async.bulk.global.shared.add h, s", "cp.reduce.async.bulk.global.shared.cas h, s", 2, "bad_reduction"),
        ("cp.async.bulk.shared.global s, g, 16, bar", "cp.async.bulk.shared.global s, g, x, bar ", 36, "expected a number"),
        ("cp.async.bulk.shared.global s, g, 16, bar", "cp.async.bulk.shared.global s, g         ", 2, "takes 3 or 4 operand(s), got 2"),
        ("cp.async.ca.shared.global s, g", "cp.async.ca.global.shared s, g", 2, "cp.async.ca.shared.global DST, SRC"),
        ("cp.async.ca.shared.global s, g", "cp.async.ca.shared.global h, g", 28, "'h' is a global location"),
        ("cp.async.ca.shared.global s, g", "cp.async.mbarrier.arrive bar  ", 2, "write cp.async.mbarrier.arrive.noinc"),
    ],
)
def test_bulk_copy_ptx_spelling_errors(old, new, col, gist):
    err, line = _error_of_edit(PTX_SPELLINGS, old, new, "spell.litmus")
    assert (err.line, err.col) == (line, col), str(err)
    if gist == "bad_reduction":
        assert "cp.reduce.async.bulk has no .cas" in err.message or "reduction" in err.message
    else:
        assert gist in err.message
    assert str(err).startswith(f"spell.litmus:{line}:{col}:")


@st.composite
def _bulk_copy_spelling(draw):
    """A valid CpAsyncBulk and one of its PTX spellings."""
    to_shared = draw(st.booleans())
    # PTX ISA cp.reduce.async.bulk: .src = { .shared::cta } (into .shared::cluster or .global), so a
    # reduction never reads global memory: global -> shared has no reduce form
    ops = st.sampled_from([ir.RmwOp.ADD, ir.RmwOp.MIN, ir.RmwOp.MAX, ir.RmwOp.AND, ir.RmwOp.OR, ir.RmwOp.XOR, ir.RmwOp.INC, ir.RmwOp.DEC])
    reduce = None if to_shared else draw(st.none() | ops)
    size = draw(st.integers(1, 2**20 - 1))
    shared = draw(st.sampled_from(["shared", "shared::cta", "shared::cluster"]))
    if to_shared:
        ins = ir.CpAsyncBulk("s", "g", "mbarrier", "bar", reduce, size)
        spaces, completion = [shared, "global"], draw(st.sampled_from(["", ".mbarrier", ".mbarrier::complete_tx::bytes"]))
        operands = ["s", "g"] + ([] if size == 4 and draw(st.booleans()) else [str(size)]) + ["bar"]
    else:
        ins = ir.CpAsyncBulk("g", "s", "bulk_group", None, reduce, size)
        spaces, completion = ["global", shared], draw(st.sampled_from(["", ".bulk_group"]))
        operands = ["g", "s"] + ([] if size == 4 and draw(st.booleans()) else [str(size)])
    head = ("cp.reduce" if reduce else "cp") + ".async.bulk." + ".".join(spaces) + completion + (f".{reduce}" if reduce else "")
    return ins, f"{head} {', '.join(operands)}"


@pytest.mark.parametrize("text", [
    "cp.async.bulk.shared::cluster.global.bulk_group s, g",  # .completion_mechanism = { .mbarrier::complete_tx::bytes } only
    "cp.reduce.async.bulk.shared::cluster.global.mbarrier.add s, g, bar",  # a reduction reads .shared::cta only
])
def test_bulk_copy_forms_ptx_does_not_have_are_refused(text):
    """PTX ISA cp.async.bulk / cp.reduce.async.bulk: a copy global -> shared completes on an
    mbarrier, and no reduction reads global memory."""
    with pytest.raises(SourceError, match="completes on an mbarrier"):
        parse(f"PTX t\n{{ g = 0; s @ shared = 0; bar @ shared mbarrier = 0; }}\n P0 ;\n {text} ;\n")


@settings(max_examples=200, deadline=None)
@given(_bulk_copy_spelling())
def test_bulk_copy_ptx_spellings_read_as_the_short_form(case):
    ins, text = case
    program = parse(f"PTX t\n{{ g = 0; s @ shared = 0; bar @ shared mbarrier = 0; }}\n P0 ;\n {text} ;\n")
    assert program.threads[0].code == (ins,), text
    assert parse(format_program(program)) == program
