"""Writes a Program in the litmus dialect, with aligned columns."""

from __future__ import annotations

from ..ir import (
    NAME_RE,
    PROXY_FENCE_SPACES,
    REGISTER_RE,
    And,
    Arith,
    AsyncRead,
    Atom,
    Barrier,
    BoolConst,
    Branch,
    BulkCommit,
    BulkWait,
    ClusterBarrier,
    Cmp,
    Condition,
    CpAsync,
    CpAsyncBulk,
    CpAsyncCommit,
    CpAsyncMbarrierArrive,
    CpAsyncWait,
    Expr,
    Fence,
    FenceMbarrierInit,
    Filler,
    Goto,
    GridDepControl,
    Instruction,
    Label,
    Load,
    Location,
    LocRef,
    MbarrierArrive,
    MbarrierExpectTx,
    MbarrierInit,
    MbarrierWait,
    Mov,
    Not,
    Operand,
    Or,
    Placement,
    Program,
    Proxy,
    ProxyFence,
    Red,
    RegRef,
    Scope,
    Sem,
    Space,
    Store,
    Tcgen05Fence,
    Term,
    Thread,
    instruction_to_json,
)
from .mnemonics import (
    BULK_COMPLETIONS,
    CLUSTER_BARRIER_SEMS,
    CMP_PUNCT,
    DSM_SPACE,
    GRIDDEP_ACTIONS,
    LOC_KINDS,
    MBAR_ARRIVE_SEMS,
    MBAR_SCOPES,
    MBAR_WAIT_SEMS,
    PLACEMENT_KEYS,
    PROXY_PREFIX,
    TCGEN05_FENCES,
)
from .tokens import SPACE

MAX_PRINTED_DEPTH = 40  # expression trees up to this depth print within MAX_NESTING


def format_program(p: Program) -> str:
    """Write ``p`` in the litmus dialect.  Raise ``ValueError`` for what the dialect cannot express
    (a name with whitespace, a comment with a double quote, an unknown instruction type...)."""
    if p.arch != "PTX":
        raise ValueError(f"only PTX programs can be written as litmus text, not {p.arch!r}")
    if not p.name or any(c in SPACE for c in p.name):
        raise ValueError(f"test name {p.name!r} must be non-empty and have no whitespace")
    lines = [f"PTX {p.name}"]
    for c in p.comments:
        if '"' in c:
            raise ValueError(f"a comment cannot contain a double quote: {c!r}")
        lines.append(f'"{c}"')
    lines.append("{")
    lines.extend(f"{_format_location(loc)};" for loc in p.locations)
    if len(set(p.pdl_grids)) != len(p.pdl_grids):
        raise ValueError(f"PDL grids repeated: {p.pdl_grids}")
    lines.extend(f"grid {g} @ pdl;" for g in p.pdl_grids)
    for t in p.threads:
        lines.extend(f"{t.name}:{reg}={value};" for reg, value in t.init)
    lines.append("}")
    lines.extend(_format_table(p.threads))
    if p.observed:
        lines.append("locations [" + " ".join(f"{_check_observed(o)};" for o in p.observed) + "]")
    if p.condition is not None:
        lines.append(_format_condition(p.condition))
    return "\n".join(lines) + "\n"


def _check_observed(key: str) -> str:
    thread, _, reg = key.partition(":")
    if (reg and NAME_RE.fullmatch(thread) and REGISTER_RE.fullmatch(reg)) or (not reg and NAME_RE.fullmatch(key)):
        return key
    raise ValueError(f"bad observed key {key!r}")


def _format_location(loc: Location) -> str:
    attrs = []
    if loc.proxy is not Proxy.GENERIC or loc.alias_of is not None:
        attrs.append(loc.proxy.value)
    if loc.space is not Space.GLOBAL:
        attrs.append(loc.space.value)
    if loc.kind != "data":
        if loc.kind not in LOC_KINDS:
            raise ValueError(f"location kind {loc.kind!r} has no litmus syntax")
        attrs.append(loc.kind)
    if loc.cta is not None:
        attrs.append(f"cta {loc.cta}")
    text = loc.name
    if attrs:
        text += " @ " + " ".join(attrs)
    if loc.alias_of is not None:
        text += f" aliases {loc.alias_of}"
    if loc.alias_of is None or loc.init != 0:
        text += f" = {loc.init}" if attrs else f"={loc.init}"
    return text


def _format_placement(pl: Placement) -> str:
    for key in PLACEMENT_KEYS:
        value = getattr(pl, key)
        if value is not None and (not isinstance(value, int) or value < 0):
            raise ValueError(f"placement {key} {value!r} is not a non-negative integer")
    parts = [f"cta {pl.cta}", f"gpu {pl.gpu}"]
    if pl.grid != 0:
        parts.append(f"grid {pl.grid}")
    if pl.cluster is not None:
        parts.append(f"cluster {pl.cluster}")
    if pl.warp is not None:
        parts.append(f"warp {pl.warp}")
    return ",".join(parts)


def _format_table(threads: tuple[Thread, ...]) -> list[str]:
    columns = [[f"{t.name}@{_format_placement(t.placement)}"] + [format_instruction(i) for i in t.code] for t in threads]
    height = max(len(c) for c in columns) if columns else 0
    widths = [max(len(cell) for cell in c) for c in columns]
    lines = []
    for row in range(height):
        cells = [(c[row] if row < len(c) else "").ljust(w) for c, w in zip(columns, widths)]
        lines.append(" " + " | ".join(cells) + " ;")
    return lines


def _operand(v: Operand) -> str:
    return str(v)


def _sem_scope(sem: Sem, scope: Scope | None) -> str:
    return f".{sem.value}" + (f".{scope.value}" if scope is not None else "")


def _dsm(shared_cluster: bool) -> str:
    return f".{DSM_SPACE}" if shared_cluster else ""


def _proxied(base: str, proxy: Proxy) -> str:
    if proxy is Proxy.ASYNC:
        return f"{base}.async"
    return PROXY_PREFIX[proxy] + base


def format_instruction(ins: Instruction) -> str:
    """One instruction as a table cell (``ld.acquire.gpu r0, x``)."""
    if isinstance(ins, Load):
        if ins.nc:
            return f"ld.global.nc {ins.dst}, {ins.loc}"
        return f"{_proxied('ld', ins.proxy)}{_sem_scope(ins.sem, ins.scope)}{_dsm(ins.shared_cluster)} {ins.dst}, {ins.loc}"
    if isinstance(ins, Store):
        return f"{_proxied('st', ins.proxy)}{_sem_scope(ins.sem, ins.scope)}{_dsm(ins.shared_cluster)} {ins.loc}, {_operand(ins.src)}"
    if isinstance(ins, Atom):
        ops = ", ".join(_operand(v) for v in ins.operands)
        head = f"{_proxied('atom', ins.proxy)}{_sem_scope(ins.sem, ins.scope)}{_dsm(ins.shared_cluster)}.{ins.operation.value}"
        return f"{head} {ins.dst}, {ins.loc}, {ops}"
    if isinstance(ins, Red):
        head = f"{_proxied('red', ins.proxy)}{_sem_scope(ins.sem, ins.scope)}{_dsm(ins.shared_cluster)}.{ins.operation.value}"
        return f"{head} {ins.loc}, {_operand(ins.value)}"
    if isinstance(ins, Fence):
        return f"fence.{ins.sem.value}.{ins.scope.value}"
    if isinstance(ins, ProxyFence):
        if ins.space is not None and ins.space not in PROXY_FENCE_SPACES:
            raise ValueError(f"proxy fence state space {ins.space!r} has no litmus syntax")
        return f"fence.proxy.{ins.kind.value}" + (f".{ins.space}" if ins.space else "")
    if isinstance(ins, Barrier):
        return _format_barrier(ins)
    if isinstance(ins, Mov):
        return f"ld {ins.dst}, {ins.src}" if isinstance(ins.src, int) else f"mov {ins.dst}, {ins.src}"
    if isinstance(ins, Arith):
        return f"{ins.operation.value} {ins.dst}, {_operand(ins.a)}, {_operand(ins.b)}"
    if isinstance(ins, Label):
        return f"{_label(ins.name)}:"
    if isinstance(ins, Branch):
        return f"b{ins.cond.value} {_operand(ins.a)}, {_operand(ins.b)}, {_label(ins.target)}"
    if isinstance(ins, Goto):
        return f"goto {_label(ins.target)}"
    if isinstance(ins, Filler):
        return f"filler.{ins.kind} {ins.n}"
    text = _format_extension(ins)
    return text if text is not None else _format_json(instruction_to_json(ins))


def _format_extension(ins: Instruction) -> str | None:
    """PDL, mbarrier, async-proxy and cp.async instructions; ``None`` for other types."""
    if isinstance(ins, GridDepControl):
        return f"griddepcontrol.{ins.action}" if ins.action in GRIDDEP_ACTIONS else None
    if isinstance(ins, Tcgen05Fence):
        return f"tcgen05.fence::{ins.kind}" if ins.kind in TCGEN05_FENCES else None
    if isinstance(ins, AsyncRead):
        return f"async.read {ins.dst}, {ins.loc}"
    if isinstance(ins, MbarrierInit):
        return f"mbarrier.init {ins.bar}, {ins.count}"
    if isinstance(ins, MbarrierExpectTx):
        return f"mbarrier.expect_tx {ins.bar}, {ins.tx}"
    if isinstance(ins, MbarrierArrive):
        if ins.sem.value not in MBAR_ARRIVE_SEMS or ins.scope.value not in MBAR_SCOPES:
            return None
        head = "mbarrier.arrive" + (".expect_tx" if ins.expect_tx is not None else "")
        args = [ins.bar] + ([str(ins.expect_tx)] if ins.expect_tx is not None else [])
        args += [str(ins.count)] if ins.count != 1 else []
        return f"{head}.{ins.sem.value}.{ins.scope.value}{_dsm(ins.shared_cluster)} {', '.join(args)}"
    if isinstance(ins, MbarrierWait):
        if ins.sem.value not in MBAR_WAIT_SEMS or ins.scope.value not in MBAR_SCOPES or ins.kind not in ("try_wait", "test_wait"):
            return None
        return f"mbarrier.{ins.kind}.parity.{ins.sem.value}.{ins.scope.value} {ins.dst}, {ins.bar}, {ins.parity}"
    if isinstance(ins, CpAsyncBulk):
        if ins.completion not in BULK_COMPLETIONS or (ins.bar is not None) != (ins.completion == "mbarrier"):
            return None
        head = ("cp.reduce" if ins.reduce is not None else "cp") + f".async.bulk.{ins.completion}"
        head += f".{ins.reduce.value}" if ins.reduce is not None else ""
        bar = f", {ins.bar}" if ins.bar is not None else ""
        return f"{head} {ins.dst_loc}, {ins.src_loc}, {ins.size}{bar}"
    if isinstance(ins, BulkCommit):
        return "cp.async.bulk.commit_group"
    if isinstance(ins, BulkWait):
        return f"cp.async.bulk.wait_group{'.read' if ins.read else ''} {ins.n}"
    if isinstance(ins, CpAsync):
        return f"cp.async {ins.dst_loc}, {ins.src_loc}"
    if isinstance(ins, CpAsyncCommit):
        return "cp.async.commit_group"
    if isinstance(ins, CpAsyncWait):
        return "cp.async.wait_all" if ins.n is None else f"cp.async.wait_group {ins.n}"
    if isinstance(ins, CpAsyncMbarrierArrive):
        return f"cp.async.mbarrier.arrive.noinc {ins.bar}"
    if isinstance(ins, ClusterBarrier):
        sems = CLUSTER_BARRIER_SEMS.get(ins.mode)
        if sems is None:
            return None
        names = {v: k for k, v in sems.items()}
        if ins.sem is not None and ins.sem not in names:
            return None
        return f"barrier.cluster.{ins.mode}" + (f".{names[ins.sem]}" if ins.sem is not None else "")
    if isinstance(ins, FenceMbarrierInit):
        return "fence.mbarrier_init.release.cluster"
    return None


def _format_json(value: object) -> str:
    """JSON for the generic instruction form; strings must not need escapes."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_format_json(k)}: {_format_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_format_json(v) for v in value) + "]"
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and not any(c in value for c in '"\\\n'):
        return f'"{value}"'
    raise ValueError(f"{value!r} cannot be written in a litmus JSON instruction")


def _label(name: str) -> str:
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise ValueError(f"label {name!r} is not an identifier")
    return name


def _format_barrier(b: Barrier) -> str:
    """Dat3M's ``bar.cta.sync id`` / ``bar.cta.sync instance, id{, quorum}``; PTX's
    ``bar.sync id, count`` when there is a count but no instance."""
    if b.instance is None:
        if b.count is None:
            return f"bar.cta.{b.mode} {b.id}"
        return f"bar.{b.mode} {b.id}, {b.count}"
    if b.count is None:
        return f"bar.cta.{b.mode} {b.instance}, {b.id}"
    return f"bar.cta.{b.mode} {b.instance}, {b.id}, {b.count}"


def _format_condition(c: Condition) -> str:
    if _depth(c.expr) > MAX_PRINTED_DEPTH:
        raise ValueError(f"condition nested more than {MAX_PRINTED_DEPTH} deep")
    return f"{c.quantifier} ({_format_expr(c.expr, top=True)})"


def _depth(e: Expr) -> int:
    """Nesting depth of an expression tree (iterative: the tree may be deep)."""
    deepest, stack = 0, [(e, 1)]
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        if isinstance(node, Not):
            stack.append((node.arg, d + 1))
        elif isinstance(node, (And, Or)):
            stack.extend((a, d + 1) for a in node.args)
    return deepest


def _format_expr(e: Expr, top: bool = False) -> str:
    if isinstance(e, BoolConst):
        return "true" if e.value else "false"
    if isinstance(e, Cmp):
        if e.op not in CMP_PUNCT.values():
            raise ValueError(f"unknown comparison {e.op!r}")
        return f"{_format_term(e.lhs)} {e.op} {_format_term(e.rhs)}"
    if isinstance(e, Not):
        return f"~({_format_expr(e.arg, top=True)})"
    if isinstance(e, (And, Or)):
        op = "/\\" if isinstance(e, And) else "\\/"
        if len(e.args) < 2:
            inner = f"{op} " + "".join(_format_expr(a) for a in e.args)
            return f"({inner.rstrip()})"
        text = f" {op} ".join(_format_expr(a) for a in e.args)
        return text if top else f"({text})"
    raise ValueError(f"not a condition expression: {e!r}")


def _format_term(t: Term) -> str:
    if isinstance(t, RegRef):
        return f"{t.thread}:{t.reg}"
    if isinstance(t, LocRef):
        return t.loc
    return str(t)
