"""Printer and parser agree: ``parse(format_program(p)) == p``, on random Programs and on Dat3M's suite;
and mutated Dat3M files either parse or raise SourceError, quickly."""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fuzzgpu.errors import SourceError
from fuzzgpu.semantics import FENCE_KEYS
from fuzzgpu import ir
from fuzzgpu.litmus import format_program, parse, parse_file, parse_path_tree

from paths import DAT3M
DAT3M_FILES = parse_path_tree([DAT3M])

# random programs and mutated files name registers freely: a condition's register that its thread
# never writes is legal, and its warning (tests/ir/test_litmus_unwritten.py) is noise here
pytestmark = pytest.mark.filterwarnings("ignore::fuzzgpu.errors.SourceWarning")

# --------------------------------------------------------------------------------------------
# A strategy for valid Programs
# --------------------------------------------------------------------------------------------

# Location names include words the dialect uses as keywords: the parser must still read them back.
LOCATION_NAMES = ["x", "y", "flag", "s1", "rd2", "LC00", "P0", "exists", "forall", "final", "locations",
                  "not", "true", "all", "aliases", "shared", "surface", "ld", "_tmp"]
THREAD_NAMES = ["P0", "P1", "P2", "P3", "T", "exists", "not", "true", "worker_7"]
LABEL_NAMES = ["LC00", "LC01", "loop", "exists", "r1", "done"]

values = st.integers(min_value=-(2**32) + 1, max_value=2**32 - 1) | st.integers(-3, 3)
registers = st.integers(0, 12).map(lambda n: f"r{n}")
operands = values | registers
scopes = st.sampled_from(list(ir.Scope))
small = st.integers(0, 5)


def sem_and_scope(sems):
    def scope_for(sem):
        if sem in (ir.Sem.WEAK, ir.Sem.VOLATILE):
            return st.just((sem, None))
        return st.tuples(st.just(sem), st.none() | scopes)

    return st.sampled_from(sorted(sems, key=str)).flatmap(scope_for)


@st.composite
def locations(draw):
    names = draw(st.lists(st.sampled_from(LOCATION_NAMES), min_size=1, max_size=5, unique=True))
    locs: list[ir.Location] = []
    for i, name in enumerate(names):
        if i and draw(st.integers(0, 4)) == 0:
            locs.append(ir.Location(name, init=draw(values), space=ir.Space.SHARED, kind="mbarrier"))
            continue
        data = [loc.name for loc in locs if loc.kind == "data"]
        alias_of = draw(st.none() | st.sampled_from(data)) if data else None
        locs.append(
            ir.Location(
                name,
                init=draw(values),
                space=draw(st.sampled_from(list(ir.Space))),
                alias_of=alias_of,
                proxy=draw(st.sampled_from([p for p in ir.Proxy if p is not ir.Proxy.TENSORMAP])),  # no location is declared in it
            )
        )
    return tuple(locs)


def extension_instruction(locs):
    """PDL, mbarrier, async-proxy and cp.async instructions, on locations of the right kind."""
    data = [loc for loc in locs if loc.kind == "data"]
    shared = st.sampled_from([loc.name for loc in data if loc.space is ir.Space.SHARED] or [None])
    global_ = st.sampled_from([loc.name for loc in data if loc.space is ir.Space.GLOBAL] or [None])
    bars = [loc.name for loc in locs if loc.kind == "mbarrier"]
    choices = [
        st.builds(ir.GridDepControl, st.sampled_from(["launch_dependents", "wait"])),
        st.builds(ir.Tcgen05Fence, st.sampled_from(["before_thread_sync", "after_thread_sync"])),
        st.just(ir.BulkCommit()),
        st.builds(ir.BulkWait, st.integers(0, 63), st.booleans()),
        st.just(ir.CpAsyncCommit()),
        st.builds(ir.CpAsyncWait, st.none() | st.integers(0, 63)),
    ]
    if bars:
        bar = st.sampled_from(bars)
        choices += [
            st.builds(ir.MbarrierInit, bar, st.integers(1, 2**20 - 1)),
            st.builds(
                ir.MbarrierArrive,
                bar,
                st.sampled_from([ir.Sem.RELEASE, ir.Sem.RELAXED]),
                st.sampled_from([ir.Scope.CTA, ir.Scope.CLUSTER]),
                st.none() | st.integers(0, 2**20 - 1),
                st.integers(1, 5),
            ),
            st.builds(ir.MbarrierExpectTx, bar, st.integers(0, 2**20 - 1)),
            st.builds(
                ir.MbarrierWait,
                registers,
                bar,
                st.integers(0, 1),
                st.sampled_from(["try_wait", "test_wait"]),
                st.sampled_from([ir.Sem.ACQUIRE, ir.Sem.RELAXED]),
                st.sampled_from([ir.Scope.CTA, ir.Scope.CLUSTER]),
            ),
            st.builds(ir.CpAsyncMbarrierArrive, bar),
        ]
    reductions = st.none() | st.sampled_from([ir.RmwOp.ADD, ir.RmwOp.MIN, ir.RmwOp.MAX, ir.RmwOp.AND, ir.RmwOp.OR, ir.RmwOp.XOR,
                                              ir.RmwOp.INC, ir.RmwOp.DEC])
    sizes = st.integers(1, 2**20 - 1)
    if any(loc.space is ir.Space.SHARED for loc in data):
        choices.append(st.builds(ir.AsyncRead, registers, shared))
        if any(loc.space is ir.Space.GLOBAL for loc in data):
            choices += [
                st.builds(ir.CpAsync, shared, global_),
                st.builds(ir.CpAsyncBulk, global_, shared, st.just("bulk_group"), st.none(), reductions, sizes),
                st.builds(ir.CpAsyncBulk, shared, global_, st.just("bulk_group"), st.none(), reductions, sizes),
            ]
            if bars:
                choices.append(
                    st.builds(ir.CpAsyncBulk, shared, global_, st.just("mbarrier"), st.sampled_from(bars), reductions, sizes)
                )
    return st.one_of(choices)


def memory_instruction(locs):
    locs = [loc for loc in locs if loc.kind == "data"]
    names = [loc.name for loc in locs]
    global_names = [loc.name for loc in locs if loc.space is ir.Space.GLOBAL]
    loc = st.sampled_from(names)
    proxy = st.sampled_from(list(ir.Proxy))
    load = st.builds(
        lambda dst, l, ss, p: ir.Load(dst, l, ss[0], ss[1], p), registers, loc, sem_and_scope(ir.LOAD_SEMS), proxy
    )
    store = st.builds(
        lambda l, src, ss, p: ir.Store(l, src, ss[0], ss[1], p), loc, operands, sem_and_scope(ir.STORE_SEMS), proxy
    )
    rmw_sem = st.sampled_from(sorted(ir.RMW_SEMS, key=str))
    atom = st.sampled_from(list(ir.RmwOp)).flatmap(
        lambda op: st.builds(
            ir.Atom,
            registers,
            loc,
            st.just(op),
            st.tuples(operands, operands) if op is ir.RmwOp.CAS else st.tuples(operands),
            rmw_sem,
            scopes,
            proxy,
        )
    )
    red = st.builds(
        ir.Red, loc, st.sampled_from([o for o in ir.RmwOp if o not in (ir.RmwOp.CAS, ir.RmwOp.EXCH)]), operands, rmw_sem, scopes, proxy
    )
    choices = [load, store, atom, red]
    if global_names:
        choices.append(st.builds(lambda d, l: ir.Load(d, l, nc=True), registers, st.sampled_from(global_names)))
    return st.one_of(choices)


local_instruction = st.one_of(
    st.builds(ir.Fence, st.sampled_from(sorted(FENCE_KEYS, key=str)), scopes),
    st.builds(
        ir.ProxyFence,
        st.sampled_from(list(ir.ProxyFenceKind)),
        st.sampled_from([None, "global", "shared::cta", "shared::cluster"]),
    ),
    st.builds(
        ir.Barrier,
        id=st.integers(0, 15) | registers,
        count=st.none() | st.integers(1, 1024) | registers,
        mode=st.sampled_from(["sync", "arrive"]),
        instance=st.none() | st.integers(0, 4),
    ),
    st.builds(ir.Mov, registers, operands),
    st.builds(ir.Arith, st.sampled_from(list(ir.ArithOp)), registers, operands, operands),
    st.builds(ir.Filler, st.sampled_from(sorted(ir.FILLER_KINDS)), st.integers(0, 1_000_000)),
)


@st.composite
def thread_code(draw, locs):
    code = draw(st.lists(memory_instruction(locs) | local_instruction | extension_instruction(locs), max_size=6))
    labels = draw(st.lists(st.sampled_from(LABEL_NAMES), max_size=2, unique=True))
    for name in labels:
        code.insert(draw(st.integers(0, len(code))), ir.Label(name))
        jump = st.builds(ir.Branch, st.sampled_from(list(ir.Cond)), operands, operands, st.just(name)) | st.just(ir.Goto(name))
        code.insert(draw(st.integers(0, len(code))), draw(jump))
    return tuple(code)


placements = st.builds(
    ir.Placement, cta=small, gpu=small, grid=small, cluster=st.none() | small, warp=st.none() | small
)


def terms(threads, locs):
    regrefs = st.builds(ir.RegRef, st.sampled_from([t.name for t in threads]), registers)
    return st.one_of(values, regrefs, st.sampled_from([ir.LocRef(loc.name) for loc in locs]))


def exprs(threads, locs):
    cmp = st.builds(ir.Cmp, st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), terms(threads, locs), terms(threads, locs))
    leaves = cmp | st.builds(ir.BoolConst, st.booleans())
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.builds(ir.Not, inner),
            st.builds(ir.And, st.lists(inner, max_size=3).map(tuple)),
            st.builds(ir.Or, st.lists(inner, max_size=3).map(tuple)),
        ),
        max_leaves=8,
    )


comment_text = st.text(
    alphabet=st.characters(blacklist_characters='"', blacklist_categories=("Cs",)), max_size=30
)


@st.composite
def programs(draw):
    locs = draw(locations())
    names = draw(st.lists(st.sampled_from(THREAD_NAMES), min_size=1, max_size=3, unique=True))
    threads = []
    for name in names:
        init = draw(st.dictionaries(registers, values, max_size=3))
        threads.append(ir.Thread(name, draw(placements), draw(thread_code(locs)), tuple(sorted(init.items()))))
    if any(loc.space is ir.Space.SHARED for loc in locs):
        # shared memory belongs to one CTA: keep every thread in the first thread's CTA
        home = threads[0].placement
        threads = [
            dataclasses.replace(t, placement=dataclasses.replace(home, warp=t.placement.warp)) for t in threads
        ]
    condition = draw(
        st.none()
        | st.builds(ir.Condition, st.sampled_from(["exists", "~exists", "forall", "final"]), exprs(threads, locs))
    )
    keys = [loc.name for loc in locs] + [f"{t.name}:{r}" for t in threads for r in ("r0", "r11")]
    observed = tuple(draw(st.lists(st.sampled_from(keys), max_size=3)))
    name = draw(st.text(alphabet="abcXYZ019+-_.=~{}", min_size=1, max_size=20))
    comments = tuple(draw(st.lists(comment_text, max_size=2)))
    pdl_grids = tuple(draw(st.lists(st.integers(1, 3), unique=True, max_size=2)))
    program = ir.Program(name, tuple(threads), locs, condition, comments, observed, pdl_grids=pdl_grids)
    try:
        return ir.validate(program)
    except ir.ProgramError:
        pass
    # Shared memory belongs to one CTA: put every thread in the first thread's CTA and try again.
    first = threads[0].placement
    same_cta = [
        dataclasses.replace(t, placement=dataclasses.replace(first, warp=t.placement.warp)) for t in threads
    ]
    program = dataclasses.replace(program, threads=tuple(same_cta))
    try:
        return ir.validate(program)
    except ir.ProgramError:
        assume(False)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_parse_inverts_format(p):
    text = format_program(p)
    assert parse(text) == p
    assert format_program(parse(text)) == text


def test_degenerate_conjunctions_round_trip():
    t = ir.Thread("P0", ir.Placement(), (ir.Mov("r0", 1),))
    for expr in (ir.And(()), ir.Or(()), ir.And((ir.BoolConst(False),)), ir.Not(ir.Or((ir.Cmp("==", 1, 2),))),
                 ir.And((ir.And((ir.BoolConst(True),)),))):
        p = ir.Program("t", (t,), condition=ir.Condition("exists", expr))
        assert parse(format_program(p)) == p, format_program(p)


# --------------------------------------------------------------------------------------------
# Dat3M files
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", DAT3M_FILES, ids=lambda p: str(p.relative_to(DAT3M)))
def test_dat3m_round_trip(path):
    p = parse_file(path)
    text = format_program(p)
    assert parse(text, str(path)) == p
    assert format_program(parse(text)) == text


# --------------------------------------------------------------------------------------------
# Mutation fuzzing: parse or SourceError, nothing else, and fast
# --------------------------------------------------------------------------------------------

TOKENS = list(" \n\t\"{}()[];|,@:=<>~/\\.-_0123456789rxP") + [
    "ld.weak", "st.release.gpu", "::", "exists", "/\\", "\\/", "r0", "P1:", "aliases", "bar.cta.sync", "1,",
    "~exists", "locations [", "LC00:", "goto", "fence.proxy.async.shared::cta", "99999999999999999999999",
    "grid 1 @ pdl;", "b @ shared mbarrier = 0;", "mbarrier.arrive.expect_tx", "cp.async.bulk.mbarrier x, y, 4, b",
    "mbarrier.try_wait.parity r1, b, 0", "tcgen05.fence::", '{"op": "ld", "dst": "r0", "loc": "x"}', "[", "]",
]


def mutate(text: str, rng: random.Random) -> str:
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(text) + 1)
        kind = rng.randrange(5)
        if kind == 0:
            text = text[:i] + text[i + 1 :]
        elif kind == 1:
            text = text[:i] + text[i : i + rng.randint(1, 30)] + text[i:]
        elif kind == 2:
            text = text[:i] + rng.choice(TOKENS) + text[i + 1 :]
        elif kind == 3:
            text = text[:i]
        else:
            text = text[:i] + rng.choice(TOKENS) + text[i:]
    return text


@pytest.mark.parametrize("seed", range(4))
def test_mutated_dat3m_files_parse_or_raise_source_error(seed):
    rng = random.Random(seed)
    texts = [f.read_text() for f in DAT3M_FILES]
    outcomes = {"parsed": 0, "error": 0}
    for _ in range(1500):
        text = mutate(rng.choice(texts), rng)
        try:
            parse(text, "mutant.litmus")
            outcomes["parsed"] += 1
        except SourceError as e:
            assert e.path == "mutant.litmus" and e.line >= 1 and e.col >= 1, str(e)
            outcomes["error"] += 1
    assert outcomes["error"] > 0 and outcomes["parsed"] > 0


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_random_text_parses_or_raises_source_error(text):
    for candidate in (text, "PTX t\n" + text, "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n" + text):
        try:
            parse(candidate)
        except SourceError:
            pass


def test_deep_nesting_is_bounded():
    base = "PTX t\n{x=0;}\nP0;\nst.weak x, 1;\nexists "
    for opener in ("(", "~", "not "):
        with pytest.raises(SourceError, match="nested more than"):
            parse(base + opener * 10_000 + "x == 1" + (")" * 10_000 if opener == "(" else ""))
    long_chain = base + "(" + " /\\ ".join("x == 1" for _ in range(20_000)) + ")"
    # no wall-clock bound here (CI machines are loaded, issue 12.7): the parser's linear time is
    # pinned by counting work in the hostile-input tests
    assert len(parse(long_chain).condition.expr.args) == 20_000
