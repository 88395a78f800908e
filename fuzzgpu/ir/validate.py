"""Validation: :func:`validate` raises :class:`ProgramError` naming the thread and instruction at fault."""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Any, Mapping, Union

from .enums import (
    LOAD_SEMS,
    MAX_COMMENT_CHARS,
    MAX_COMMENTS,
    MAX_CONDITION_DEPTH,
    MAX_CONDITION_TERMS,
    MAX_INIT_REGISTERS,
    MAX_INSTRUCTIONS,
    MAX_LOCATIONS,
    MAX_OBSERVED,
    MAX_PLACEMENT,
    MAX_THREADS,
    MAX_VALUE,
    NAME_GRAMMARS,
    PROXY_FENCE_SPACES,
    REGISTER_RE,
    RMW_SEMS,
    STORE_SEMS,
    ProgramError,
    Proxy,
    RmwOp,
    Scope,
    Sem,
    Space,
)
from .instructions import (
    ACCESS_WIDTHS,
    FILLER_KINDS,
    INSTRUCTION_TYPES,
    AsyncRead,
    Atom,
    Barrier,
    Branch,
    BulkWait,
    ClusterBarrier,
    CpAsync,
    CpAsyncBulk,
    CpAsyncMbarrierArrive,
    CpAsyncWait,
    Filler,
    Goto,
    GridDepControl,
    Instruction,
    Label,
    Load,
    MbarrierArrive,
    MbarrierCompleteTx,
    MbarrierExpectTx,
    MbarrierInit,
    MbarrierWait,
    ProxyFence,
    Red,
    Store,
    Tcgen05Fence,
    WgmmaMma,
    WgmmaWait,
    _operands,
    loc_of,
)
from .tensormap import check_tensormap_location, check_tensormap_uses
from .tcgen05 import check_tmem_location, check_tmem_uses
from .program import (
    CMP_OPS,
    QUANTIFIERS,
    And,
    BoolConst,
    Cmp,
    Condition,
    Location,
    LocRef,
    Not,
    Or,
    Placement,
    Program,
    RegRef,
    Term,
    Thread,
)

# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def _clip(v: Any, n: int = 60) -> str:
    text = repr(v)
    return text if len(text) <= n else text[: n - 3] + "..."


def check_name(kind: str, value: Any) -> str:
    """``value`` if it is a ``kind`` name (a key of :data:`NAME_GRAMMARS`: program, thread,
    location, label, arch, register, keyword) in its grammar, in full; else :class:`ProgramError`."""
    rx, grammar = NAME_GRAMMARS[kind]
    if not isinstance(value, str) or not rx.fullmatch(value):
        raise ProgramError(f"bad {kind} name {_clip(value)}: expected {grammar}")
    return value


def is_name(kind: str, value: Any) -> bool:
    """Whether ``value`` is a ``kind`` name (see :func:`check_name`)."""
    return isinstance(value, str) and NAME_GRAMMARS[kind][0].fullmatch(value) is not None


@functools.lru_cache(maxsize=None)
def _hints(cls: Any) -> dict[str, Any]:
    import typing

    return typing.get_type_hints(cls)


def _has_type(value: Any, hint: Any) -> bool:
    """Whether ``value`` is of the annotated type ``hint`` (the IR's annotations only: enums, int,
    str, bool, Optional, Union, tuple[X, ...], dataclasses).  ``bool`` is not an ``int`` here."""
    import types
    import typing

    origin = typing.get_origin(hint)
    if origin is Union or origin is types.UnionType:
        return any(_has_type(value, a) for a in typing.get_args(hint))
    if origin is tuple:
        args = typing.get_args(hint)
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_has_type(v, args[0]) for v in value)
        return len(args) == len(value) and all(_has_type(v, a) for v, a in zip(value, args))
    if hint is type(None):
        return value is None
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is Any:
        return True
    if isinstance(hint, type):
        return isinstance(value, hint) and (hint is bool or not isinstance(value, bool) or issubclass(hint, bool))
    return True


def _check_fields(obj: Any, what: str) -> None:
    """Every field of the dataclass ``obj`` has its annotated type (an enum member, not a string
    that looks like one: code generation writes ``.{scope}`` into inline PTX)."""
    for f in dataclasses.fields(obj):
        v = getattr(obj, f.name)
        if not _has_type(v, _hints(obj.__class__)[f.name]):
            raise ProgramError(f"{what}: field {f.name!r} has the wrong type ({type(v).__name__}: {_clip(v)})")


#: what a comment may not hold: a double quote (it ends a litmus comment string), control characters
_COMMENT_BAD = re.compile('["\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f]')

#: instruction fields that hold names (their grammar) -- every other string field is a keyword
_REGISTER_FIELDS = frozenset({"dst"})
_LOCATION_FIELDS = frozenset({"loc", "bar", "dst_loc", "src_loc", "map", "address", "slot"})
_OPERAND_FIELDS = frozenset({"src", "a", "b", "value", "operands", "expected", "id", "count"})


def validate(p: Program) -> Program:
    """Check a Program for consistency; return it unchanged or raise :class:`ProgramError`.

    Limits first (:data:`MAX_THREADS`, :data:`MAX_INSTRUCTIONS`, :data:`MAX_LOCATIONS`...), so that
    the rest runs in time linear in the program; then the type of every field and the grammar of
    every name (:func:`check_name`), then the ISA's rules."""
    if not isinstance(p, Program):
        raise ProgramError(f"not a Program: {type(p).__name__}")
    for field_name in ("threads", "locations", "comments", "observed", "pdl_grids"):
        if not isinstance(getattr(p, field_name), tuple):
            raise ProgramError(f"program field {field_name!r} is not a tuple")
    if not p.threads:
        raise ProgramError("the program has no threads")
    if len(p.threads) > MAX_THREADS:
        raise ProgramError(f"{len(p.threads)} threads: a program has at most {MAX_THREADS}")
    if len(p.locations) > MAX_LOCATIONS:
        raise ProgramError(f"{len(p.locations)} locations: a program has at most {MAX_LOCATIONS}")
    if len(p.observed) > MAX_OBSERVED:
        raise ProgramError(f"{len(p.observed)} observed keys: at most {MAX_OBSERVED}")
    if len(p.pdl_grids) > MAX_THREADS:
        raise ProgramError(f"{len(p.pdl_grids)} PDL grids: at most {MAX_THREADS}")
    if len(p.comments) > MAX_COMMENTS:
        raise ProgramError(f"{len(p.comments)} comments: at most {MAX_COMMENTS}")
    for t in p.threads:
        if not isinstance(t, Thread) or not isinstance(t.code, tuple):
            raise ProgramError(f"not a Thread: {_clip(t)}")
        if len(t.code) > MAX_INSTRUCTIONS:
            raise ProgramError(f"thread {_clip(t.name)}: {len(t.code)} instructions, at most {MAX_INSTRUCTIONS}")
    check_name("program", p.name)
    check_name("arch", p.arch)
    for c in p.comments:
        if not isinstance(c, str) or len(c) > MAX_COMMENT_CHARS:
            raise ProgramError(f"a comment is not a string of at most {MAX_COMMENT_CHARS} characters")
        if _COMMENT_BAD.search(c):
            raise ProgramError("a comment holds a double quote or a control character")
    names: set[str] = set()
    for t in p.threads:
        check_name("thread", t.name)
        if t.name in names:
            raise ProgramError(f"thread names repeated: [{t.name!r}]")
        names.add(t.name)
    locs: dict[str, Location] = {}
    for loc in p.locations:
        if not isinstance(loc, Location):
            raise ProgramError(f"not a Location: {_clip(loc)}")
        check_name("location", loc.name)
        _check_fields(loc, f"location {loc.name!r}")
        if loc.name in locs:
            raise ProgramError(f"location {loc.name!r} declared twice")
        if REGISTER_RE.fullmatch(loc.name):
            raise ProgramError(f"location {loc.name!r} has a register's name")
        _check_value(loc.init, f"initial value of {loc.name}")
        locs[loc.name] = loc
    physical = _physical_names(locs)
    for loc in p.locations:
        if loc.kind not in ("data", "mbarrier", "tensormap", "tmem"):
            raise ProgramError(f"location {loc.name!r}: unknown kind {_clip(loc.kind)}")
        check_tensormap_location(loc, locs)
        check_tmem_location(loc)
        if loc.kind == "mbarrier" and (loc.space is not Space.SHARED or loc.alias_of is not None):
            raise ProgramError(f"mbarrier object {loc.name!r} must be a shared location, not an alias")
        if loc.cta is not None:
            if loc.space is not Space.SHARED or loc.alias_of is not None:
                raise ProgramError(f"location {loc.name!r}: only a shared location (not an alias) belongs to a CTA")
            if not 0 <= loc.cta < MAX_PLACEMENT:
                raise ProgramError(f"location {loc.name!r}: CTA {loc.cta} is out of range 0..{MAX_PLACEMENT - 1}")
    for t in p.threads:
        _validate_thread(t, locs)
    _validate_placement(p, locs, physical)
    _check_widths(p, locs, physical)
    for key in p.observed:
        _check_observed(p, key, names, locs)
    if p.condition is not None:
        if not isinstance(p.condition, Condition):
            raise ProgramError(f"not a Condition: {_clip(p.condition)}")
        if p.condition.quantifier not in QUANTIFIERS:
            raise ProgramError(f"unknown quantifier {_clip(p.condition.quantifier)}")
        for term in _checked_terms(p.condition.expr):
            _check_term(term, names, locs)
    return p


def _physical_names(locs: Mapping[str, Location]) -> dict[str, str]:
    """Each location's physical location (through its aliases); ProgramError for an undeclared
    target or a cycle.  Linear in the number of locations."""
    out: dict[str, str] = {}
    for name in locs:
        chain: list[str] = []
        cur = name
        while cur not in out:
            loc = locs[cur]
            if loc.alias_of is None:
                out[cur] = cur
                break
            if loc.alias_of not in locs:
                raise ProgramError(f"location {loc.name!r} aliases undeclared location {_clip(loc.alias_of)}")
            if cur in chain:
                raise ProgramError(f"alias cycle through location {name!r}")
            chain.append(cur)
            cur = loc.alias_of
        for c in chain:
            out[c] = out[cur]
    return out


def _checked_terms(e: Any) -> list[Term]:
    """The terms of a condition expression, its nodes checked (types, comparison operators, size
    and depth) without recursion: a hostile expression may be deep."""
    terms: list[Term] = []
    count = 0
    stack: list[tuple[Any, int]] = [(e, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_CONDITION_DEPTH:
            raise ProgramError(f"condition nested more than {MAX_CONDITION_DEPTH} deep")
        if isinstance(node, Cmp):
            if node.op not in CMP_OPS:
                raise ProgramError(f"condition: unknown comparison {_clip(node.op)}")
            terms += (node.lhs, node.rhs)
            count += 1
        elif isinstance(node, Not):
            stack.append((node.arg, depth + 1))
        elif isinstance(node, (And, Or)) and isinstance(node.args, tuple):
            stack.extend((a, depth + 1) for a in node.args)
        elif isinstance(node, BoolConst) and isinstance(node.value, bool):
            count += 1
        else:
            raise ProgramError(f"condition: not an expression: {_clip(node)}")
        if count > MAX_CONDITION_TERMS:
            raise ProgramError(f"condition has more than {MAX_CONDITION_TERMS} terms")
    return terms


def _check_observed(p: Program, key: Any, threads: set[str], locs: Mapping[str, Location]) -> None:
    if not isinstance(key, str):
        raise ProgramError(f"observed key {_clip(key)} is not a string")
    thread, sep, reg = key.partition(":")
    if sep:
        if thread not in threads or not REGISTER_RE.fullmatch(reg):
            raise ProgramError(f"observed key {_clip(key)}: expected THREAD:REGISTER of a thread of the program")
    elif key not in locs:
        raise ProgramError(f"observed key {_clip(key)}: not a declared location")


def _validate_placement(p: Program, locs: Mapping[str, Location], physical: Mapping[str, str]) -> None:
    """Placements are small non-negative numbers.  Shared memory belongs to one CTA: a shared
    location is used by the threads of one CTA.  PDL grids follow another grid."""
    for g in p.pdl_grids:
        if not isinstance(g, int) or isinstance(g, bool) or not 1 <= g < MAX_PLACEMENT:
            raise ProgramError(f"PDL grid {_clip(g)}: a dependent grid follows another, so it is 1 or more")
    users: dict[str, set[tuple[tuple[int, int, int, int], bool]]] = {}
    for t in p.threads:
        pl = t.placement
        for k in ("cta", "gpu", "grid", "cluster", "warp"):
            v = getattr(pl, k)
            if v is not None and not 0 <= v < MAX_PLACEMENT:
                raise ProgramError(f"thread {t.name}: placement {k} {v} is out of range 0..{MAX_PLACEMENT - 1}")
        remote = False
        for ins in t.code:
            remote = getattr(ins, "shared_cluster", False) is True
            for name in ins.locations():
                phys = physical[name]
                if locs[phys].space is Space.SHARED:
                    users.setdefault(phys, set()).add(((pl.gpu, pl.grid, pl.cluster_id, pl.cta), remote))
    for name, uses in users.items():
        _check_shared_users(locs[name], uses)


def _check_shared_users(loc: Location, uses: set[tuple[tuple[int, int, int, int], bool]]) -> None:
    """Shared memory belongs to one CTA (PTX ISA, "State spaces": a CTA's shared memory is its
    own); threads of the other CTAs of its cluster reach it only through a
    ``.shared::cluster`` address (distributed shared memory, ``mapa``: "Get address in the CTA
    specified by operand b which corresponds to the address specified by operand a").  Without a
    declared CTA (``Location.cta``), every thread that uses the location is in one CTA."""
    ctas = {cta for cta, _ in uses}
    if loc.cta is None:
        if len(ctas) > 1:
            raise ProgramError(
                f"shared location {loc.name!r} is used by threads of {len(ctas)} different CTAs "
                f"(declare its CTA, '{loc.name} @ shared cta N', for distributed shared memory)"
            )
        return
    clusters = {cta[:3] for cta in ctas}
    if len(clusters) > 1:
        raise ProgramError(
            f"shared location {loc.name!r} of CTA {loc.cta} is used from {len(clusters)} clusters: "
            f"distributed shared memory reaches the CTAs of one cluster only"
        )
    for cta, remote in sorted(uses):
        if cta[3] != loc.cta and not remote:
            raise ProgramError(
                f"shared location {loc.name!r} belongs to CTA {loc.cta}: a thread of CTA {cta[3]} reaches it only "
                f"through .shared::cluster"
            )


def _check_value(v: int, what: str) -> None:
    if not isinstance(v, int) or isinstance(v, bool):
        raise ProgramError(f"{what}: {_clip(v)} is not an integer")
    if not -MAX_VALUE < v < MAX_VALUE:
        raise ProgramError(f"{what}: {_clip(v)} does not fit in 32 bits")


def _check_term(term: Any, threads: set[str], locs: Mapping[str, Location]) -> None:
    if isinstance(term, RegRef):
        if not isinstance(term.thread, str) or term.thread not in threads:
            raise ProgramError(f"condition names unknown thread {_clip(term.thread)}")
        if not is_name("register", term.reg):
            raise ProgramError(f"condition names bad register {_clip(term.reg)}")
    elif isinstance(term, LocRef):
        if not isinstance(term.loc, str) or term.loc not in locs:
            raise ProgramError(f"condition names undeclared location {_clip(term.loc)}")
    else:
        _check_value(term, "condition constant")


def _validate_thread(t: Thread, locs: Mapping[str, Location]) -> None:
    if not isinstance(t.placement, Placement):
        raise ProgramError(f"{t.name}: placement is not a Placement")
    _check_fields(t.placement, f"{t.name}: placement")
    if not isinstance(t.init, tuple) or not all(isinstance(x, tuple) and len(x) == 2 for x in t.init):
        raise ProgramError(f"{t.name}: initial registers are not (register, value) pairs")
    if len(t.init) > MAX_INIT_REGISTERS:
        raise ProgramError(f"{t.name}: {len(t.init)} initialised registers, at most {MAX_INIT_REGISTERS}")
    for reg, val in t.init:
        if not is_name("register", reg):
            raise ProgramError(f"{t.name}: bad register name {_clip(reg)}")
        _check_value(val, f"{t.name}:{reg} initial value")
    labels: set[str] = set()
    for n, ins in enumerate(t.code):
        if isinstance(ins, Label):
            try:
                check_name("label", ins.name)
            except ProgramError as e:
                raise ProgramError(f"{t.name}, instruction {n} (Label): {e}") from None
            if ins.name in labels:
                raise ProgramError(f"{t.name}: labels defined twice: [{ins.name!r}]")
            labels.add(ins.name)
    for n, ins in enumerate(t.code):
        where = f"{t.name}, instruction {n} ({type(ins).__name__})"
        try:
            _validate_instruction(ins, locs, labels)
        except ProgramError as e:
            raise ProgramError(f"{where}: {e}") from None
    _check_cluster_barrier_pairs(t)


def _check_cluster_barrier_pairs(t: Thread) -> None:
    """PTX ISA, "barrier.cluster" (paraphrased): a thread arrives, then waits for the other threads
    of the cluster to arrive; the barrier is reused phase after phase.  So a thread alternates
    ``barrier.cluster.arrive`` and ``barrier.cluster.wait``, starting with an arrive (in code order,
    which the model's phases count)."""
    expect = "arrive"
    for n, ins in enumerate(t.code):
        if isinstance(ins, ClusterBarrier):
            if ins.mode != expect:
                raise ProgramError(
                    f"{t.name}, instruction {n} (ClusterBarrier): barrier.cluster.{ins.mode} where barrier.cluster.{expect} "
                    f"is due (arrive and wait alternate, arrive first)"
                )
            expect = "wait" if expect == "arrive" else "arrive"


def _validate_instruction(ins: Instruction, locs: Mapping[str, Location], labels: set[str]) -> None:
    if not isinstance(ins, Instruction) or INSTRUCTION_TYPES.get(type(ins).OP) is not type(ins):
        raise ProgramError(f"not a registered instruction: {_clip(ins)}")
    _check_fields(ins, "instruction")
    for f in dataclasses.fields(ins):
        v = getattr(ins, f.name)
        if f.name in _REGISTER_FIELDS or f.name in _OPERAND_FIELDS or f.name in ("target", "name") \
                or f.name in _LOCATION_FIELDS or not isinstance(v, str):
            continue
        check_name("keyword", v)  # every other string reaches the source as a keyword
    named = [getattr(ins, f.name) for f in dataclasses.fields(ins) if f.name in _LOCATION_FIELDS]
    for loc in (*ins.locations(), *(v for v in named if v is not None)):
        if not isinstance(loc, str) or loc not in locs:
            raise ProgramError(f"location {_clip(loc)} is not declared")
    _validate_extension(ins, locs)
    check_tensormap_uses(ins, locs)
    check_tmem_uses(ins, locs)
    dst = ins.register_written()
    if dst is not None and not is_name("register", dst):
        raise ProgramError(f"bad destination register {_clip(dst)}")
    for v in _operands(ins):
        if isinstance(v, str):
            if not is_name("register", v):
                raise ProgramError(f"bad register operand {_clip(v)}")
        else:
            _check_value(v, "immediate operand")
    if isinstance(ins, ProxyFence) and ins.space is not None and ins.space not in PROXY_FENCE_SPACES:
        raise ProgramError(f"fence.proxy state space {_clip(ins.space)} (one of {', '.join(PROXY_FENCE_SPACES)})")
    if isinstance(ins, Load):
        if ins.sem not in LOAD_SEMS:
            raise ProgramError(f"a load cannot be .{ins.sem}")
        if ins.nc and (ins.sem is not Sem.WEAK or ins.proxy is not Proxy.GENERIC):
            raise ProgramError("ld.global.nc is a weak generic load")
        if ins.nc and locs[ins.loc].space is not Space.GLOBAL:
            raise ProgramError(f"ld.global.nc of shared location {ins.loc!r}")
        _check_scope(ins.sem, ins.scope)
        _check_width(ins)
    elif isinstance(ins, Store):
        if ins.sem not in STORE_SEMS:
            raise ProgramError(f"a store cannot be .{ins.sem}")
        _check_scope(ins.sem, ins.scope)
        _check_width(ins)
    elif isinstance(ins, (Atom, Red)):
        if ins.sem not in RMW_SEMS:
            raise ProgramError(f"{ins.OP} cannot be .{ins.sem}")
        if isinstance(ins, Atom):
            want = 2 if ins.operation is RmwOp.CAS else 1
            if len(ins.operands) != want:
                raise ProgramError(f"atom.{ins.operation} takes {want} operand(s), got {len(ins.operands)}")
        elif ins.operation in (RmwOp.CAS, RmwOp.EXCH):
            raise ProgramError(f"red has no .{ins.operation}")
    elif isinstance(ins, Barrier):
        if ins.mode not in ("sync", "arrive"):
            raise ProgramError(f"bar.{ins.mode} is not supported (sync or arrive)")
        if isinstance(ins.id, int) and not 0 <= ins.id < 16:
            raise ProgramError(f"barrier id {ins.id} out of range 0..15")
        if isinstance(ins.count, int) and ins.count < 1:
            raise ProgramError(f"barrier thread count {ins.count} must be positive")
    elif isinstance(ins, (Branch, Goto)):
        if ins.target not in labels:
            raise ProgramError(f"branch to undefined label {_clip(ins.target)}")
    elif isinstance(ins, Filler):
        if ins.kind not in FILLER_KINDS:
            raise ProgramError(f"unknown filler kind {ins.kind!r}")
        if not 0 <= ins.n <= 1_000_000:
            raise ProgramError(f"filler size {ins.n} out of range 0..1000000")


def _validate_extension(ins: Instruction, locs: Mapping[str, Location]) -> None:
    """Checks of the PDL / mbarrier / async-proxy / cp.async instructions."""
    mbar_ops = (MbarrierInit, MbarrierArrive, MbarrierExpectTx, MbarrierCompleteTx, MbarrierWait, CpAsyncMbarrierArrive)
    for name in ins.locations():
        is_bar = locs[name].kind == "mbarrier"
        names_bar = isinstance(ins, mbar_ops) or (isinstance(ins, CpAsyncBulk) and name == ins.bar)
        if is_bar and not names_bar:
            raise ProgramError(f"{name!r} is an mbarrier object: only mbarrier operations may use it")
        if names_bar and not is_bar:
            raise ProgramError(f"{name!r} is not declared as an mbarrier object")
    if isinstance(ins, GridDepControl) and ins.action not in ("launch_dependents", "wait"):
        raise ProgramError(f"griddepcontrol.{ins.action} (launch_dependents or wait)")
    if isinstance(ins, MbarrierInit) and not 1 <= ins.count < 2**20:
        raise ProgramError(f"mbarrier count {ins.count} out of range 1..2^20-1")
    if isinstance(ins, MbarrierArrive):
        if ins.sem not in (Sem.RELEASE, Sem.RELAXED) or ins.scope not in (Scope.CTA, Scope.CLUSTER):
            raise ProgramError("mbarrier.arrive is .release or .relaxed, at .cta or .cluster scope")
        if ins.count < 1 or (ins.expect_tx is not None and not 0 <= ins.expect_tx < 2**20):
            raise ProgramError("mbarrier.arrive: bad count or transaction bytes")
    if isinstance(ins, MbarrierWait):
        if ins.sem not in (Sem.ACQUIRE, Sem.RELAXED) or ins.scope not in (Scope.CTA, Scope.CLUSTER):
            raise ProgramError("mbarrier waits are .acquire or .relaxed, at .cta or .cluster scope")
        if ins.parity not in (0, 1) or ins.kind not in ("try_wait", "test_wait"):
            raise ProgramError("mbarrier wait: parity is 0 or 1; kind is try_wait or test_wait")
    if isinstance(ins, MbarrierExpectTx) and not 0 <= ins.tx < 2**20:
        raise ProgramError("mbarrier.expect_tx: bad transaction bytes")
    if isinstance(ins, MbarrierCompleteTx):
        if ins.scope not in (Scope.CTA, Scope.CLUSTER):
            raise ProgramError("mbarrier.complete_tx is at .cta or .cluster scope")
        if not 0 <= ins.tx < 2**20:
            raise ProgramError(f"mbarrier.complete_tx: transaction bytes {ins.tx} out of range 0..2^20-1")
    if isinstance(ins, CpAsyncBulk):
        spaces = (locs[ins.dst_loc].space, locs[ins.src_loc].space)
        if spaces not in ((Space.SHARED, Space.GLOBAL), (Space.GLOBAL, Space.SHARED)):
            raise ProgramError("cp.async.bulk copies between shared and global memory")
        if ins.completion not in ("mbarrier", "bulk_group"):
            raise ProgramError(f"cp.async.bulk completion {ins.completion!r} (mbarrier or bulk_group)")
        if (ins.completion == "mbarrier") != (ins.bar is not None):
            raise ProgramError("cp.async.bulk with mbarrier completion names its mbarrier (and only then)")
        if ins.completion == "mbarrier" and spaces[0] is not Space.SHARED:
            raise ProgramError("mbarrier completion is for copies into shared memory")
        if ins.reduce is not None and ins.reduce not in (RmwOp.ADD, RmwOp.MIN, RmwOp.MAX, RmwOp.AND, RmwOp.OR, RmwOp.XOR, RmwOp.INC, RmwOp.DEC):
            raise ProgramError(f"cp.reduce.async.bulk has no .{ins.reduce}")
        if not 1 <= ins.size < 2**20:
            raise ProgramError(f"cp.async.bulk size {ins.size} out of range")
        if ins.tensor and ins.size != 4:
            # the 1-D tensor map's box is the location's word (PTX ISA "Tensor": the bounding box;
            # the harness scales it to the 16-byte slot, cuTensorMapEncodeTiled: boxDim[0] *
            # element size a multiple of 16 bytes)
            raise ProgramError(f"cp.async.bulk.tensor copies one location (size 4, the 1-D box), not {ins.size} bytes")
        if spaces[0] is Space.SHARED and (ins.completion != "mbarrier" or ins.reduce is not None):
            # PTX ISA cp.async.bulk(.tensor): global -> shared::cta / shared::cluster has
            # .completion_mechanism = { .mbarrier::complete_tx::bytes } only; cp.reduce.async.bulk(.tensor)
            # reads shared::cta and writes global memory (or, not expressible here, shared::cluster)
            op = "cp.async.bulk.tensor" if ins.tensor else "cp.async.bulk"
            raise ProgramError(f"{op} global -> shared completes on an mbarrier (.mbarrier::complete_tx::bytes), "
                               f"with no reduction (cp.reduce.async.bulk{'.tensor' if ins.tensor else ''} reads shared memory)")
    if isinstance(ins, BulkWait) and not 0 <= ins.n < 64:
        raise ProgramError(f"cp.async.bulk.wait_group {ins.n} out of range 0..63")
    if isinstance(ins, WgmmaWait) and not 0 <= ins.n < 64:
        raise ProgramError(f"wgmma.wait_group {ins.n} out of range 0..63")
    if isinstance(ins, WgmmaMma) and ins.dst == ins.a:
        raise ProgramError(f"wgmma.mma_async {ins.dst}, {ins.a}: the accumulator and the A fragment are different registers")
    if isinstance(ins, CpAsync):
        if locs[ins.dst_loc].space is not Space.SHARED or locs[ins.src_loc].space is not Space.GLOBAL:
            raise ProgramError("cp.async copies global memory into shared memory")
    if isinstance(ins, CpAsyncWait) and ins.n is not None and not 0 <= ins.n < 64:
        raise ProgramError(f"cp.async.wait_group {ins.n} out of range 0..63")
    if isinstance(ins, AsyncRead) and locs[ins.loc].space is not Space.SHARED:
        raise ProgramError("async-proxy operand reads (wgmma/tcgen05) read shared memory")
    if isinstance(ins, Tcgen05Fence) and ins.kind not in ("before_thread_sync", "after_thread_sync"):
        raise ProgramError(f"tcgen05.fence::{ins.kind}")
    if isinstance(ins, (Load, Store, Atom, Red)) and locs[ins.loc].kind == "mbarrier":
        raise ProgramError(f"{ins.loc!r} is an mbarrier object")
    if getattr(ins, "shared_cluster", False):
        remote_name: str | None = ins.bar if isinstance(ins, (MbarrierArrive, MbarrierCompleteTx)) else loc_of(ins)
        if remote_name is None:
            raise ProgramError(".shared::cluster is for generic-proxy ld, st, atom, red, mbarrier.arrive and mbarrier.complete_tx")
        if locs[remote_name].space is not Space.SHARED:
            raise ProgramError(f".shared::cluster access to {remote_name!r}, which is not a shared location")
        if getattr(ins, "proxy", Proxy.GENERIC) is not Proxy.GENERIC or getattr(ins, "nc", False):
            raise ProgramError(".shared::cluster is for generic-proxy ld, st, atom, red, mbarrier.arrive and mbarrier.complete_tx")
    if isinstance(ins, ClusterBarrier):
        if ins.mode not in ("arrive", "wait"):
            raise ProgramError(f"barrier.cluster.{ins.mode} (arrive or wait)")
        allowed = (Sem.RELEASE, Sem.RELAXED) if ins.mode == "arrive" else (Sem.ACQUIRE,)
        if ins.sem is not None and ins.sem not in allowed:
            raise ProgramError(f"barrier.cluster.{ins.mode} cannot be .{ins.sem} ({', '.join('.' + str(a) for a in allowed)})")


def _check_scope(sem: Sem, scope: Scope | None) -> None:
    if sem in (Sem.WEAK, Sem.VOLATILE) and scope is not None:
        raise ProgramError(f".{sem} takes no scope")


def _check_width(ins: Load | Store) -> None:
    """An ``ld``/``st`` of 8, 16 or 32 bits; a narrower one is a generic access (not ``.nc``), and a
    narrower store writes an immediate that fits in its width (unsigned)."""
    if type(ins.width) is not int or ins.width not in ACCESS_WIDTHS:
        raise ProgramError(f"{ins.OP} of {_clip(ins.width)} bits (one of {', '.join(map(str, ACCESS_WIDTHS))})")
    if ins.width == 32:
        return
    if ins.proxy is not Proxy.GENERIC or (isinstance(ins, Load) and ins.nc):
        raise ProgramError(f"a {ins.width}-bit {ins.OP} is a generic access (not .nc, not another proxy)")
    if isinstance(ins, Store) and not (isinstance(ins.src, int) and 0 <= ins.src < 1 << ins.width):
        raise ProgramError(f"st.u{ins.width} {ins.loc}: the value must be an immediate 0..{(1 << ins.width) - 1}")


def _check_widths(p: Program, locs: Mapping[str, Location], physical: Mapping[str, str]) -> None:
    """A location accessed narrower than 32 bits (issue 32, class L) holds only values that fit in its
    narrowest access: its initial value and every write of it are ``st`` of an immediate 0..2^w-1
    (no read-modify-write, no copy).  Its word then always holds the low part's value, which every
    access of it reads or writes alike; the model keeps one value per location on that ground."""
    narrow: dict[str, int] = {}
    for t in p.threads:
        for ins in t.code:
            if isinstance(ins, (Load, Store)) and ins.width != 32:
                ph = physical[ins.loc]
                narrow[ph] = min(narrow.get(ph, 32), ins.width)
    if not narrow:
        return
    for name, w in narrow.items():
        if not 0 <= locs[name].init < 1 << w:
            raise ProgramError(f"location {name!r}, accessed in {w} bits, must start at 0..{(1 << w) - 1}")
    for t in p.threads:
        for ins in t.code:
            hit = sorted({physical[n] for n in ins.locations() if n in physical} & narrow.keys())
            if not hit:
                continue
            w = narrow[hit[0]]
            if isinstance(ins, Store) and not (isinstance(ins.src, int) and 0 <= ins.src < 1 << w):
                raise ProgramError(f"thread {t.name}: location {hit[0]!r} is accessed in {w} bits: a store of it "
                                   f"writes an immediate 0..{(1 << w) - 1}")
            if not isinstance(ins, (Load, Store)):
                raise ProgramError(f"thread {t.name}: location {hit[0]!r} is accessed in {w} bits: only ld and st "
                                   f"may name it, not {ins.OP}")
