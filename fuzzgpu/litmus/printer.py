"""Writes a Program in the litmus dialect, with aligned columns."""

from __future__ import annotations

from .. import ir
from .mnemonics import (
    CMP_PUNCT,
    LOC_KINDS,
    PLACEMENT_KEYS,
    Family,
    Form,
    printer_rows,
)
from .tokens import SPACE

MAX_PRINTED_DEPTH = 40  # expression trees up to this depth print within MAX_NESTING


def format_program(p: ir.Program) -> str:
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
    if (reg and ir.NAME_RE.fullmatch(thread) and ir.REGISTER_RE.fullmatch(reg)) or (not reg and ir.NAME_RE.fullmatch(key)):
        return key
    raise ValueError(f"bad observed key {key!r}")


def _format_location(loc: ir.Location) -> str:
    attrs = []
    if loc.proxy is not ir.Proxy.GENERIC or loc.alias_of is not None:
        attrs.append(loc.proxy.value)
    if loc.space is not ir.Space.GLOBAL:
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
    if loc.target is not None:
        text += f" = {loc.target}"  # a tensor map names its target's buffer (issue 32, class D)
    elif loc.alias_of is None or loc.init != 0:
        text += f" = {loc.init}" if attrs else f"={loc.init}"
    return text


def _format_placement(pl: ir.Placement) -> str:
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


def _format_table(threads: tuple[ir.Thread, ...]) -> list[str]:
    columns = [[f"{t.name}@{_format_placement(t.placement)}"] + [format_instruction(i) for i in t.code] for t in threads]
    height = max(len(c) for c in columns) if columns else 0
    widths = [max(len(cell) for cell in c) for c in columns]
    lines = []
    for row in range(height):
        cells = [(c[row] if row < len(c) else "").ljust(w) for c, w in zip(columns, widths)]
        lines.append(" " + " | ".join(cells) + " ;")
    return lines


def format_instruction(ins: ir.Instruction) -> str:
    """One instruction as a table cell (``ld.acquire.gpu r0, x``): written by the first row of the
    mnemonic table that can write it, else in the generic JSON form."""
    if isinstance(ins, ir.Label):
        return f"{_label(ins.name)}:"
    for cls in type(ins).__mro__:
        for row in printer_rows(cls):
            text = _write(row, ins)
            if text is not None:
                return text
    return _format_json(ir.instruction_to_json(ins))


def _write(row: Form | Family, ins: ir.Instruction) -> str | None:
    if isinstance(row, Family):
        return row.write(ins) if row.write is not None else None
    if not row.matches(ins):
        return None
    operands = [_label(getattr(ins, s.field)) if s.kind == "label" else str(getattr(ins, s.field)) for s in row.operands]
    return row.mnemonic + (" " + ", ".join(operands) if operands else "")


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
    if not isinstance(name, str) or not ir.NAME_RE.fullmatch(name):
        raise ValueError(f"label {name!r} is not an identifier")
    return name


def _format_condition(c: ir.Condition) -> str:
    if _depth(c.expr) > MAX_PRINTED_DEPTH:
        raise ValueError(f"condition nested more than {MAX_PRINTED_DEPTH} deep")
    return f"{c.quantifier} ({_format_expr(c.expr, top=True)})"


def _depth(e: ir.Expr) -> int:
    """Nesting depth of an expression tree (iterative: the tree may be deep)."""
    deepest, stack = 0, [(e, 1)]
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        if isinstance(node, ir.Not):
            stack.append((node.arg, d + 1))
        elif isinstance(node, (ir.And, ir.Or)):
            stack.extend((a, d + 1) for a in node.args)
    return deepest


def _format_expr(e: ir.Expr, top: bool = False) -> str:
    if isinstance(e, ir.BoolConst):
        return "true" if e.value else "false"
    if isinstance(e, ir.Cmp):
        if e.op not in CMP_PUNCT.values():
            raise ValueError(f"unknown comparison {e.op!r}")
        return f"{_format_term(e.lhs)} {e.op} {_format_term(e.rhs)}"
    if isinstance(e, ir.Not):
        return f"~({_format_expr(e.arg, top=True)})"
    if isinstance(e, (ir.And, ir.Or)):
        op = "/\\" if isinstance(e, ir.And) else "\\/"
        if len(e.args) < 2:
            inner = f"{op} " + "".join(_format_expr(a) for a in e.args)
            return f"({inner.rstrip()})"
        text = f" {op} ".join(_format_expr(a) for a in e.args)
        return text if top else f"({text})"
    raise ValueError(f"not a condition expression: {e!r}")


def _format_term(t: ir.Term) -> str:
    if isinstance(t, ir.RegRef):
        return f"{t.thread}:{t.reg}"
    if isinstance(t, ir.LocRef):
        return t.loc
    return str(t)
