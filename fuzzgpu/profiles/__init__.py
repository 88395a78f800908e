"""Campaign profiles: what a profile may say (the shapes and annotation options the generator
draws, :class:`Options`) and the loader of the ``.toml`` files (the ones shipped here, or
``./strategies/NAME.toml``).  Below :mod:`fuzzgpu.strategies` (which draws what a profile
allows) and :mod:`fuzzgpu.campaign` (which runs one)."""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..backends.base import RunConfig
from ..errors import UserError
from ..files import read_toml, toml_key_lines, toml_where
from ..stress.space import StressConfig, knob_error

PROFILE_NAMES = ("all", "classic", "scopes", "pdl", "proxy", "mbarrier", "random", "reliability")
MAX_PROFILE_INT = 10**15  # no knob needs more (instances: 1e15 is days of an H200)
MAX_SIM_INSTANCES = 10**9  # the simulation samples about 2e7 instances/s: 1e9 is a minute per program

#: the classic shapes, in the order the profiles list them
CLASSIC_SHAPES = ("MP", "SB", "LB", "S", "R", "2+2W", "IRIW", "WRC", "ISA2", "CoRR", "CoWW")
#: the patterns beyond the classic shapes
PATTERNS = ("PDL", "TMA-store", "TMA-load", "MBAR", "CP-ASYNC", "random", "SPIN", "MBAR-SPIN", "HANDOFF")
SHAPES = CLASSIC_SHAPES + PATTERNS

#: option names a profile may list (simplest first; the order here is the shrink order)
LOAD_TYPES = ("weak", "relaxed", "acquire", "volatile", "nc")
STORE_TYPES = ("weak", "relaxed", "release", "volatile")
FENCE_TYPES = ("none", "acq_rel", "sc")
SCOPE_NAMES = ("cta", "cluster", "gpu", "sys")
PLACEMENTS = ("same-cta", "different-ctas", "same-cluster")
#: programs whose wait may never complete (SPIN, MBAR-SPIN): none; a flag nobody sets; a wait for a
#: value nobody stores; an mbarrier that gets fewer arrivals than its count
HANG_TYPES = ("none", "unset-flag", "wrong-value", "few-arrivals")

@dataclass(frozen=True)
class Options:
    """What the annotation draws may pick (a profile's ``[annotations]`` table).  Every tuple is
    kept in the canonical simplest-first order whatever order the user wrote."""

    loads: tuple[str, ...] = LOAD_TYPES
    stores: tuple[str, ...] = STORE_TYPES
    fences: tuple[str, ...] = FENCE_TYPES
    scopes: tuple[str, ...] = SCOPE_NAMES
    placements: tuple[str, ...] = PLACEMENTS
    max_threads: int = 3  # free-form random programs
    max_instructions: int = 3
    hangs: tuple[str, ...] = ("none",)  # SPIN, MBAR-SPIN: which may-hang variants to draw too

    def __post_init__(self) -> None:
        for name, universe in (("loads", LOAD_TYPES), ("stores", STORE_TYPES), ("fences", FENCE_TYPES),
                               ("scopes", SCOPE_NAMES), ("placements", PLACEMENTS), ("hangs", HANG_TYPES)):
            vals = getattr(self, name)
            bad = [v for v in vals if v not in universe]
            if bad:
                raise ValueError(f"{name}: unknown option(s) {bad} (choose from {list(universe)})")
            if not vals:
                raise ValueError(f"{name}: needs at least one option")
            object.__setattr__(self, name, tuple(v for v in universe if v in vals))


DEFAULT_OPTIONS = Options()


# --------------------------------------------------------------------------------------------
# Profiles
# --------------------------------------------------------------------------------------------


class ProfileError(UserError):
    """A bad profile: one line naming the file and the key."""


@dataclass(frozen=True)
class Profile:
    name: str
    path: str
    description: str
    shapes: Mapping[str, float]
    options: Options
    stress: RunConfig
    sim_instances: int = 100_000
    max_instances: int = 10_000_000  # cap on a shrink candidate's instances (3/rate)
    max_examples: int = 300  # examples per Hypothesis run
    shrink_seconds: float = 120.0  # a shrink longer than this is cut short (the best so far is saved)
    static_arch: str = "sm_90"
    #: ``[static] unrunnable``: a cuda campaign judges a draw its GPU harness cannot run by the static
    #: check and the oracle (``CheckedBackend.judge_unrunnable``) instead of counting it not covered
    static_unrunnable: bool = False
    #: share of GPU time spent tuning stress per shape family (fuzzgpu.stress.campaign; 0: off)
    tune_share: float = 0.0
    tune_budget_s: float = 5.0  # GPU-seconds of tuning per family


_TOP_KEYS = {"description", "shapes", "annotations", "stress", "sim", "hypothesis", "static"}
_ANNOTATION_KEYS = {"loads": list, "stores": list, "fences": list, "scopes": list, "placements": list,
                    "max_threads": int, "max_instructions": int, "hangs": list}
_SIM_KEYS = {"instances": int}
_HYP_KEYS = {"max_examples": int, "max_instances": int, "shrink_seconds": int}
_STATIC_KEYS = {"arch": str, "unrunnable": bool}


def profile_path(name_or_path: str) -> Path:
    """``NAME`` -> ``./strategies/NAME.toml`` when present, else the profile shipped in the package;
    anything with a ``/`` or ending in ``.toml`` is a path."""
    if "/" in name_or_path or name_or_path.endswith(".toml") or os.sep in name_or_path:
        p = Path(name_or_path)
        if not p.is_file():
            raise ProfileError(f"{name_or_path}: no such profile file")
        return p
    local = Path("strategies") / f"{name_or_path}.toml"
    if local.is_file():
        return local
    shipped = Path(__file__).parent / f"{name_or_path}.toml"
    if shipped.is_file():
        return shipped
    known = sorted({p.stem for p in (Path(__file__).parent).glob("*.toml")} | {p.stem for p in Path("strategies").glob("*.toml")})
    raise ProfileError(f"unknown profile {name_or_path!r} (known: {', '.join(known)}; or pass a path to a .toml file)")


def _type_name(t: type) -> str:
    return {int: "an integer", float: "a number", str: "a string", list: "a list", bool: "true or false", dict: "a table"}[t]


def _check_table(where: str, at: Callable[..., str], table: Any, spec: Mapping[str, type]) -> dict:
    """``table`` (the profile's ``[where]``) when each key is in ``spec`` with a value of its type;
    ``at(*key)`` is the file:line of a key (:func:`fuzzgpu.files.toml_where`)."""
    if not isinstance(table, dict):
        raise ProfileError(f"{at(where)}: key '{where}' must be a table")
    for k, v in table.items():
        if k not in spec:
            raise ProfileError(f"{at(where, k)}: unknown key '{where}.{k}' (known: {', '.join(sorted(spec))})")
        t = spec[k]
        ok = isinstance(v, t) and not (t is int and isinstance(v, bool))
        if t is float:
            ok = isinstance(v, (int, float)) and not isinstance(v, bool)
        if not ok:
            raise ProfileError(f"{at(where, k)}: key '{where}.{k}' must be {_type_name(t)}, not {type(v).__name__}")
    return table


def load_profile(name_or_path: str) -> Profile:
    """Read and check a profile; every error is one line naming the file and the key, and the
    key's line where the file has it (``FILE:LINE: key 'stress.spin' ...``)."""
    path = profile_path(name_or_path)
    try:
        text, data = read_toml(path, 1 << 20, str(path))
    except FileNotFoundError as e:
        raise ProfileError(f"{path}: cannot read: {e.strerror or e}") from None
    except ValueError as e:
        raise ProfileError(str(e)) from None
    if not isinstance(data, dict):
        raise ProfileError(f"{path}: not a profile")
    lines: list[dict[tuple[str, ...], int]] = []

    def at(*key: str) -> str:  # the key's file:line, the file's lines scanned on the first error
        if not lines:
            lines.append(toml_key_lines(text))
        return toml_where(str(path), lines[0], *key)

    for k in data:
        if k not in _TOP_KEYS:
            raise ProfileError(f"{at(k)}: unknown key '{k}' (known: {', '.join(sorted(_TOP_KEYS))})")
    desc = data.get("description", "")
    if not isinstance(desc, str):
        raise ProfileError(f"{at('description')}: key 'description' must be a string")
    shapes = data.get("shapes")
    if shapes is None:
        raise ProfileError(f"{path}: missing table 'shapes' (the shapes to draw, with weights)")
    _check_table("shapes", at, shapes, {s: float for s in SHAPES})
    for k, v in shapes.items():
        if v < 0 or not math.isfinite(v):
            raise ProfileError(f"{at('shapes', k)}: key 'shapes.{k}': weight {v} must be a non-negative number")
    if not any(v > 0 for v in shapes.values()):
        raise ProfileError(f"{at('shapes')}: key 'shapes': no shape has a positive weight")
    ann = _check_table("annotations", at, data.get("annotations", {}), _ANNOTATION_KEYS)
    universes = {"loads": LOAD_TYPES, "stores": STORE_TYPES, "fences": FENCE_TYPES, "scopes": SCOPE_NAMES, "placements": PLACEMENTS,
                 "hangs": HANG_TYPES}
    for k, universe in universes.items():
        for v in ann.get(k, ()):
            if v not in universe:
                raise ProfileError(f"{at('annotations', k)}: key 'annotations.{k}': unknown option {v!r} (known: {', '.join(universe)})")
        if k in ann and not ann[k]:
            raise ProfileError(f"{at('annotations', k)}: key 'annotations.{k}' must list at least one option")
    for k in ("max_threads", "max_instructions"):
        if k in ann and not 1 <= ann[k] <= 8:
            raise ProfileError(f"{at('annotations', k)}: key 'annotations.{k}' must be between 1 and 8")
    fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in ann.items()}
    options = Options(**fields)
    stress_in = dict(data.get("stress", {})) if isinstance(data.get("stress", {}), dict) else data.get("stress")
    tuning = {k: stress_in.pop(k) for k in ("tune_share", "tune_budget_s") if isinstance(stress_in, dict) and k in stress_in}
    for k, v in tuning.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
                or not (0 <= v <= 1 if k == "tune_share" else 0 < v <= 3600):
            raise ProfileError(f"{at('stress', k)}: key 'stress.{k}' must be a number in " + ("[0, 1]" if k == "tune_share" else "(0, 3600]"))
    rc_fields = {f.name: f.type for f in dataclasses.fields(RunConfig)}
    rc_types = {n: (bool if "bool" in str(t) else int) for n, t in rc_fields.items()}
    stress = _check_table("stress", at, stress_in, rc_types)
    knobs = {f.name for f in dataclasses.fields(StressConfig)}
    for k, v in stress.items():
        why = knob_error(k, v) if k in knobs else None  # the tuned knobs' bounds (StressConfig.from_table's)
        if why is not None:
            raise ProfileError(f"{at('stress', k)}: key 'stress.{k}': {why}")
        if rc_types[k] is int and v < 0:
            raise ProfileError(f"{at('stress', k)}: key 'stress.{k}' must be >= 0")
    for where, table in (("stress", stress), ("sim", data.get("sim", {})), ("hypothesis", data.get("hypothesis", {})),
                         ("annotations", data.get("annotations", {}))):
        for k, v in (table.items() if isinstance(table, dict) else ()):
            if isinstance(v, int) and not isinstance(v, bool) and v > MAX_PROFILE_INT:
                raise ProfileError(f"{at(where, k)}: key '{where}.{k}' must be at most {MAX_PROFILE_INT}")
    if stress.get("instances", 1) < 1:
        raise ProfileError(f"{at('stress', 'instances')}: key 'stress.instances' must be >= 1")
    sim = _check_table("sim", at, data.get("sim", {}), _SIM_KEYS)
    hyp = _check_table("hypothesis", at, data.get("hypothesis", {}), _HYP_KEYS)
    static = _check_table("static", at, data.get("static", {}), _STATIC_KEYS)
    for where, table in (("sim", sim), ("hypothesis", hyp)):
        for k, v in table.items():
            if v < 1:
                raise ProfileError(f"{at(where, k)}: key '{where}.{k}' must be >= 1")
    if sim.get("instances", 1) > MAX_SIM_INSTANCES:
        raise ProfileError(f"{at('sim', 'instances')}: key 'sim.instances' must be at most {MAX_SIM_INSTANCES} (the simulation samples about 2e7 instances/s)")
    if "arch" in static:
        from .. import sass

        try:
            sass.parse_arch(static["arch"])
        except UserError as e:
            raise ProfileError(f"{at('static', 'arch')}: key 'static.arch': {e}") from None
    return Profile(
        name=path.stem,
        path=str(path),
        description=desc,
        shapes={k: float(v) for k, v in shapes.items()},
        options=options,
        stress=RunConfig(**stress),
        sim_instances=sim.get("instances", 100_000),
        max_instances=hyp.get("max_instances", 10_000_000),
        max_examples=hyp.get("max_examples", 300),
        shrink_seconds=float(hyp.get("shrink_seconds", 120)),
        static_arch=static.get("arch", "sm_90"),
        static_unrunnable=static.get("unrunnable", False),
        tune_share=float(tuning.get("tune_share", 0.0)),
        tune_budget_s=float(tuning.get("tune_budget_s", 5.0)),
    )


__all__ = ["CLASSIC_SHAPES", "DEFAULT_OPTIONS", "FENCE_TYPES", "HANG_TYPES", "LOAD_TYPES", "MAX_PROFILE_INT",
           "MAX_SIM_INSTANCES", "Options", "PATTERNS", "PLACEMENTS", "PROFILE_NAMES", "Profile", "ProfileError",
           "SCOPE_NAMES", "SHAPES", "STORE_TYPES", "load_profile", "profile_path"]
