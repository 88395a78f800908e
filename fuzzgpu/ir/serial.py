"""JSON: :func:`program_to_json` / :func:`program_from_json` round-trip a Program through plain dicts
(named ``serial`` so as not to shadow the standard ``json``)."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, Mapping, Union

from .enums import SCHEMA_NAME, SCHEMA_VERSION, ProgramError
from .instructions import INSTRUCTION_TYPES, Instruction
from .program import CMP_OPS, And, BoolConst, Cmp, Condition, Expr, Location, LocRef, Not, Or, Placement, Program, RegRef, Term, Thread
from .validate import _clip, _hints, validate

# --------------------------------------------------------------------------------------------
# JSON
# --------------------------------------------------------------------------------------------


def _to_plain(v: Any) -> Any:
    if isinstance(v, enum.Enum):
        return v.value
    if isinstance(v, tuple):
        return [_to_plain(x) for x in v]
    if dataclasses.is_dataclass(v):
        return {f.name: _to_plain(getattr(v, f.name)) for f in dataclasses.fields(v)}
    return v


def instruction_to_json(ins: Instruction) -> dict[str, Any]:
    d = {"op": ins.OP}
    for f in dataclasses.fields(ins):
        val = getattr(ins, f.name)
        if val != f.default:
            d[f.name] = _to_plain(val)
    return d


def _expr_to_json(e: Expr) -> Any:
    if isinstance(e, BoolConst):
        return {"const": e.value}
    if isinstance(e, Cmp):
        return {"cmp": e.op, "lhs": _term_to_json(e.lhs), "rhs": _term_to_json(e.rhs)}
    if isinstance(e, Not):
        return {"not": _expr_to_json(e.arg)}
    if isinstance(e, And):
        return {"and": [_expr_to_json(a) for a in e.args]}
    return {"or": [_expr_to_json(a) for a in e.args]}


def _term_to_json(t: Term) -> Any:
    if isinstance(t, RegRef):
        return {"thread": t.thread, "reg": t.reg}
    if isinstance(t, LocRef):
        return {"loc": t.loc}
    return t


def program_to_json(p: Program) -> dict[str, Any]:
    return {
        "schema": SCHEMA_NAME,
        "version": SCHEMA_VERSION,
        "name": p.name,
        "arch": p.arch,
        "comments": list(p.comments),
        "locations": [_location_to_json(loc) for loc in p.locations],
        "threads": [
            {
                "name": t.name,
                "placement": _to_plain(t.placement),
                "init": {r: v for r, v in t.init},
                "code": [instruction_to_json(i) for i in t.code],
            }
            for t in p.threads
        ],
        "condition": None
        if p.condition is None
        else {"quantifier": p.condition.quantifier, "expr": _expr_to_json(p.condition.expr)},
        "observed": list(p.observed),
        "pdl_grids": list(p.pdl_grids),
    }


def _location_to_json(loc: Location) -> dict[str, Any]:
    """A location's fields; ``cta`` (distributed shared memory) only when set, so that the JSON of
    every program without it is what it was before the field existed (corpus entries keep their
    text and their hashes)."""
    d = _to_plain(loc)
    for optional in ("cta", "target"):  # ``target``: a tensor map's (issue 32, class D), the same way
        if getattr(loc, optional) is None:
            del d[optional]
    return d


def _field_types(cls: type) -> dict[str, Any]:
    return _hints(cls)


def _convert(value: Any, hint: Any, where: str) -> Any:
    """Convert a JSON value to the Python type ``hint`` (enums, tuples, optionals, ints, strs)."""
    import typing

    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is Union or (origin is not None and str(origin) == "<class 'types.UnionType'>"):
        if value is None and type(None) in args:
            return None
        errors = []
        for a in args:
            if a is type(None):
                continue
            try:
                return _convert(value, a, where)
            except ProgramError as e:
                errors.append(str(e))
        raise ProgramError(f"{where}: {value!r} is not any of {[getattr(a, '__name__', a) for a in args]}")
    if origin is tuple:
        if not isinstance(value, list):
            raise ProgramError(f"{where}: expected a list, got {type(value).__name__}")
        inner = args[0] if args else Any
        return tuple(_convert(v, inner, where) for v in value)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        try:
            return hint(value)
        except ValueError:
            raise ProgramError(
                f"{where}: {value!r} is not one of {[m.value for m in hint]}"
            ) from None
    if hint is int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise ProgramError(f"{where}: expected an integer, got {value!r}")
        return value
    if hint is str:
        if not isinstance(value, str):
            raise ProgramError(f"{where}: expected a string, got {value!r}")
        return value
    if hint is bool:
        if not isinstance(value, bool):
            raise ProgramError(f"{where}: expected true or false, got {value!r}")
        return value
    if hint is Any:
        return value
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _dataclass_from_json(hint, value, where)
    return value


def _dataclass_from_json(cls: type, d: Any, where: str, skip: tuple[str, ...] = ()) -> Any:
    if not isinstance(d, dict):
        raise ProgramError(f"{where}: expected an object, got {type(d).__name__}")
    hints = _field_types(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = set(d) - names - set(skip)
    if unknown:
        raise ProgramError(f"{where}: unknown field(s) {sorted(unknown)}")
    kwargs = {}
    for f in dataclasses.fields(cls):
        if f.name in d:
            kwargs[f.name] = _convert(d[f.name], hints[f.name], f"{where}.{f.name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ProgramError(f"{where}: missing field {f.name!r}")
    return cls(**kwargs)


def instruction_from_json(d: Any, where: str = "instruction") -> Instruction:
    if not isinstance(d, dict) or "op" not in d:
        raise ProgramError(f"{where}: expected an object with an 'op' field")
    cls = INSTRUCTION_TYPES.get(d["op"]) if isinstance(d["op"], str) else None
    if cls is None:
        raise ProgramError(f"{where}: unknown instruction {d['op']!r}")
    body = {k: v for k, v in d.items() if k != "op"}
    return _dataclass_from_json(cls, body, f"{where} ({d['op']})")


def _term_from_json(d: Any, where: str) -> Term:
    if isinstance(d, int) and not isinstance(d, bool):
        return d
    if isinstance(d, dict) and set(d) == {"thread", "reg"}:
        return RegRef(_convert(d["thread"], str, where), _convert(d["reg"], str, where))
    if isinstance(d, dict) and set(d) == {"loc"}:
        return LocRef(_convert(d["loc"], str, where))
    raise ProgramError(f"{where}: bad condition term {d!r}")


def _expr_from_json(d: Any, where: str, depth: int = 0) -> Expr:
    if depth > 64:
        raise ProgramError(f"{where}: condition nested too deeply")
    if not isinstance(d, dict) or len(d) == 0:
        raise ProgramError(f"{where}: bad condition expression")
    if "const" in d:
        return BoolConst(_convert(d["const"], bool, where))
    if "cmp" in d:
        if d["cmp"] not in CMP_OPS:
            raise ProgramError(f"{where}: bad comparison {d['cmp']!r}")
        return Cmp(d["cmp"], _term_from_json(d.get("lhs"), where), _term_from_json(d.get("rhs"), where))
    if "not" in d:
        return Not(_expr_from_json(d["not"], where, depth + 1))
    for key, cls in (("and", And), ("or", Or)):
        if key in d:
            if not isinstance(d[key], list):
                raise ProgramError(f"{where}: '{key}' needs a list")
            return cls(tuple(_expr_from_json(a, where, depth + 1) for a in d[key]))
    raise ProgramError(f"{where}: bad condition expression {sorted(d)}")


def program_from_json(d: Any) -> Program:
    """Build a Program from :func:`program_to_json`'s output; raise :class:`ProgramError`."""
    if not isinstance(d, dict):
        raise ProgramError("a program must be a JSON object")
    if d.get("schema") != SCHEMA_NAME:
        raise ProgramError(f"not a fuzzgpu program (schema {d.get('schema')!r})")
    version = d.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ProgramError(f"bad schema version {version!r}")
    if version > SCHEMA_VERSION:
        raise ProgramError(
            f"program schema version {version} is newer than this fuzzgpu understands ({SCHEMA_VERSION})"
        )
    _known_keys(d, ("schema", "version", "name", "arch", "comments", "locations", "threads", "condition", "observed",
                    "pdl_grids"), "program")
    locations = tuple(
        _dataclass_from_json(Location, loc, f"locations[{i}]") for i, loc in enumerate(_list(d, "locations"))
    )
    threads = []
    for i, t in enumerate(_list(d, "threads")):
        where = f"threads[{i}]"
        if not isinstance(t, dict):
            raise ProgramError(f"{where}: expected an object")
        _known_keys(t, ("name", "placement", "init", "code"), where)
        init = t.get("init", {})
        if not isinstance(init, dict):
            raise ProgramError(f"{where}.init: expected an object")
        threads.append(
            Thread(
                name=_convert(t.get("name"), str, f"{where}.name"),
                placement=_dataclass_from_json(Placement, t.get("placement", {}), f"{where}.placement"),
                code=tuple(
                    instruction_from_json(ins, f"{where}.code[{j}]") for j, ins in enumerate(_list(t, "code"))
                ),
                init=tuple(sorted((str(r), _convert(v, int, f"{where}.init.{r}")) for r, v in init.items())),
            )
        )
    cond = d.get("condition")
    condition = None
    if cond is not None:
        if not isinstance(cond, dict):
            raise ProgramError("condition: expected an object")
        _known_keys(cond, ("quantifier", "expr"), "condition")
        condition = Condition(_convert(cond.get("quantifier"), str, "condition.quantifier"), _expr_from_json(cond.get("expr"), "condition.expr"))
    p = Program(
        name=_convert(d.get("name"), str, "name"),
        threads=tuple(threads),
        locations=locations,
        condition=condition,
        comments=tuple(_convert(c, str, "comments") for c in _list(d, "comments")),
        observed=tuple(_convert(c, str, "observed") for c in _list(d, "observed")),
        arch=_convert(d.get("arch", "PTX"), str, "arch"),
        pdl_grids=tuple(_convert(g, int, "pdl_grids") for g in _list(d, "pdl_grids")),
    )
    return validate(p)


def _known_keys(d: Mapping[str, Any], known: tuple[str, ...], where: str) -> None:
    unknown = [k for k in d if k not in known]
    if unknown:
        raise ProgramError(f"{where}: unknown field {_clip(unknown[0])} (known: {', '.join(known)})")


def _list(d: Mapping[str, Any], key: str) -> list[Any]:
    v = d.get(key, [])
    if not isinstance(v, list):
        raise ProgramError(f"{key}: expected a list")
    return v
