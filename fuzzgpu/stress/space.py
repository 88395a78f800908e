"""Stress as a search space: every knob of the GPU harness (fuzzgpu.codegen + backends/cuda) that
changes how the hardware interleaves a test, with the values a tuner may try and a default.

A :class:`StressConfig` is the stress part of a :class:`~fuzzgpu.backends.base.RunConfig` (what
runs, not how long: ``instances``, ``seed``, ``budget`` and the launch mode stay outside).  Its keys
are the RunConfig keys a profile's ``[stress]`` table uses, so a tuned configuration is written as
a profile table (:meth:`StressConfig.to_table`) and read back by ``load_profile``.

The knobs follow the harnesses the anchors tuned (facts/anchors.md: GPUHarbor / MC Mutants'
parallel testing environment, cuda-litmus, Kirkham et al. 2020): occupancy (testing CTAs, CTAs per
SM), thread and CTA randomisation, location layout (stride, whether an instance's locations share a
cache line), pre-test stress and concurrent memory stress (how many CTAs, which lines, which access
pattern), the loose barrier and the per-warp spin.  docs/tuning.md lists what each one does.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..backends.base import PRE_STRESS_MAX, RunConfig

#: access patterns of a stress access pair (codegen's fz_hammer)
PATTERNS = {0: "store;load", 1: "store;store", 2: "load;store", 3: "load;load"}


_PATTERN_CODES = ", ".join(f"{k} {v}" for k, v in PATTERNS.items())


def _knob(default: Any, help: str) -> Any:
    """A StressConfig field: its default and the one line that describes it."""
    return dataclasses.field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class StressConfig:
    """The harness's stress knobs.  The defaults are the campaign profiles' fixed ``[stress]``
    table (stride 1, the loose barrier, a 1000-cycle spin, no stress CTAs) with every other knob
    at RunConfig's default: the fixed stress a tuned one is measured against."""

    # each knob's ``help`` is the one line ``fuzzgpu run --help`` shows for its option
    # (fuzzgpu.commands.stress_options derives the options from these fields)
    test_ctas: int = _knob(256, "testing CTAs per launch, a power of two (x cta_threads = instances per launch)")
    cta_threads: int = _knob(256, "threads per CTA: 32, 64, 128 or 256 (cuda-litmus's workgroup size; smaller: more CTAs share an SM)")
    ctas_per_sm: int = _knob(0, "occupancy cap, CTAs per SM (0: as many as fit)")
    permute_ctas: bool = _knob(True, "a random CTA permutation per launch (off: the identity)")
    permute_threads: bool = _knob(True, "a random warp/lane rotation per launch (off: none)")
    stride: int = _knob(1, "words between an instance's locations (1: several share a 128-byte line)")
    shuffle_locations: bool = _knob(True, "a random row per location and launch (off: an instance's locations side by side)")
    pre_stress: int = _knob(0, "scratch-line access pairs per testing thread before the test")
    pre_stress_pattern: int = _knob(0, "the pre-test stress's access pair: " + _PATTERN_CODES)
    stress: int = _knob(0, "concurrent stress CTAs hammering scratch lines while the tests run")
    stress_lines: int = _knob(64, "scratch lines the stress CTAs and the pre-test stress hammer")
    stress_pattern: int = _knob(0, "the stress CTAs' access pair: " + _PATTERN_CODES)
    stress_by_cta: bool = _knob(False, "stress lines chosen per CTA (off: round-robin over warps)")
    stripe_ctas: bool = _knob(False, "roles in different CTAs in neighbouring CTAs, as cuda-litmus places them (off: a random distance)")
    stress_word: bool = _knob(False, "the stress and pre-test stress of a CTA on one scratch word, the same every access, "
                                      "as cuda-litmus's (off: each lane its own word, the line changing)")
    barrier: bool = _knob(True, "a loose global barrier before the test")
    spin: int = _knob(1000, "a random delay of [0, N) %clock cycles per warp before the test")

    def run_config(self, base: RunConfig | None = None, **over: Any) -> RunConfig:
        """``base`` (default RunConfig()) with these knobs, and ``over`` on top."""
        return dataclasses.replace(base or RunConfig(), **self.to_table(), **over)

    @classmethod
    def of(cls, config: RunConfig) -> "StressConfig":
        """The stress knobs of a RunConfig."""
        return cls(**{f.name: getattr(config, f.name) for f in dataclasses.fields(cls)})

    def to_table(self) -> dict[str, Any]:
        """The knobs as a profile ``[stress]`` table (RunConfig keys)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_table(cls, table: Mapping[str, Any], where: str = "stress") -> "StressConfig":
        """The knobs of a ``[stress]`` table (other RunConfig keys ignored); a knob's value must be
        of its type and within :data:`BOUNDS` (ValueError naming ``where`` and the key)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            if f.name not in table:
                continue
            why = knob_error(f.name, table[f.name])
            if why is not None:
                raise ValueError(f"{where}.{f.name}: {why}")
            out[f.name] = table[f.name]
        return cls(**out)

    def with_cta_threads(self, ct: int) -> "StressConfig":
        """These knobs with CTAs of ``ct`` threads and as many test and stress threads as before (CTA
        counts scaled, within :data:`BOUNDS`; at least the 2 test CTAs a launch needs)."""
        scale = self.cta_threads / ct
        return dataclasses.replace(self, cta_threads=ct,
                                   test_ctas=min(max(2, int(self.test_ctas * scale)), BOUNDS["test_ctas"][1]),
                                   stress=min(int(self.stress * scale), BOUNDS["stress"][1]))

    def describe(self) -> str:
        """One line naming the knobs that differ from the default."""
        d0 = StressConfig().to_table()
        diff = [f"{k}={v}" for k, v in self.to_table().items() if d0[k] != v]
        return ", ".join(diff) if diff else "default"

    def key(self) -> str:
        """A stable text key (evidence, state)."""
        return ",".join(f"{k}={v}" for k, v in sorted(self.to_table().items()))


#: the values a tuner tries per knob (the default's value is always among them)
SPACE: dict[str, tuple[Any, ...]] = {
    "test_ctas": (64, 128, 256, 512, 1024),
    # cuda-litmus's workgroup sizes: on an H200 the WWC variant with a .cta fence only its runner had
    # shown showed at 32-128 threads a CTA, none at 256 (bench/results/anchor/h200-cta/README.md)
    "cta_threads": (256, 128, 64, 32),
    "ctas_per_sm": (0, 1, 2, 4),
    "permute_ctas": (True, False),
    "permute_threads": (True, False),
    "stride": (1, 2, 4, 8, 32),
    "shuffle_locations": (True, False),
    "pre_stress": (0, 16, 64, 256),
    "pre_stress_pattern": (0, 1, 2, 3),
    "stress": (0, 64, 256, 512),
    "stress_lines": (1, 4, 16, 64, 256),
    "stress_pattern": (0, 1, 2, 3),
    "stress_by_cta": (False, True),
    "stripe_ctas": (False, True),
    # cuda-litmus's one-word stress: a knob for hand runs, not searched -- on an H200 it exposed
    # nothing the default did not, over the 159 variants fuzzgpu had not shown and the 7 only the
    # runner had (bench/results/anchor/h200-residue-2s/README.md, "Which of the runner's parameters matter")
    "stress_word": (False,),
    "barrier": (True, False),
    "spin": (0, 300, 1000, 3000, 10000),
}

#: what a hand-written table may hold (the harness's limits: 32-bit knobs, 16-bit CTA ids)
BOUNDS: dict[str, tuple[int, int]] = {
    "test_ctas": (2, 32768),
    "cta_threads": (32, 256),
    "ctas_per_sm": (0, 32),
    "stride": (1, 1 << 16),
    "pre_stress": (0, PRE_STRESS_MAX),
    "pre_stress_pattern": (0, 3),
    "stress": (0, 1 << 15),
    "stress_lines": (1, 1 << 16),
    "stress_pattern": (0, 3),
    "spin": (0, 2**31 - 1),
}

#: knobs the harness needs to be a power of two (backends.geometry.launch_geometry refuses others)
POWERS_OF_TWO = frozenset({"test_ctas", "cta_threads"})


def knob_type(name: str) -> type:
    """``bool`` or ``int``: the type of StressConfig knob ``name``."""
    return type(getattr(StressConfig(), name))


def knob_error(name: str, value: Any) -> str | None:
    """Why ``value`` cannot be StressConfig knob ``name`` ("expected ..., got ..."), or None: of the
    knob's type, within :data:`BOUNDS`, a power of two where :data:`POWERS_OF_TWO` says so."""
    want = knob_type(name)
    if want is bool and not isinstance(value, bool) or want is int and (isinstance(value, bool) or not isinstance(value, int)):
        return f"expected {want.__name__}, got {value!r}"
    lo, hi = BOUNDS.get(name, (None, None))
    if lo is not None and hi is not None and not lo <= value <= hi:
        return f"expected {lo}..{hi}, got {value!r}"
    if name in POWERS_OF_TWO and value & (value - 1):
        return f"expected a power of two, got {value!r}"
    return None


#: cuda-litmus's stored params/stress_params.txt as far as the knobs go: 988 CTAs of 128 threads ~
#: 512 of 256, no workgroup shuffle, its placement (stripe_ctas, same thread index), barrier,
#: memStride 4, pre-stress (57 load;load iterations) on lines chosen per CTA, no spin
ANCHOR_LIKE = StressConfig(test_ctas=512, permute_ctas=False, permute_threads=False, stripe_ctas=True, stride=4,
                           pre_stress=64, pre_stress_pattern=3, stress_lines=16, stress_by_cta=True, spin=0)

#: configurations the anchors and facts/h200-litmus-probe.md found effective, tried first
SEEDS: tuple[StressConfig, ...] = (
    StressConfig(),
    StressConfig(spin=3000),
    StressConfig(spin=3000, stress=512),
    StressConfig(stride=32, stress=256, barrier=False, spin=0),
    StressConfig(stress=256, stress_lines=1),
    StressConfig(ctas_per_sm=1, spin=3000),
    StressConfig(pre_stress=64, spin=3000, shuffle_locations=False),
    # cuda-litmus's placement: the roles of an instance in neighbouring CTAs at the same thread
    # index, started together (no per-warp delay); on an H200 the best of fixed configurations for
    # WRW+2W with a .cta fence, 15-200x (bench/results/anchor/h200-seed31/README.md)
    StressConfig(stripe_ctas=True, permute_threads=False, spin=0),
    ANCHOR_LIKE,
    # cuda-litmus's random configuration that showed WWC with .cta accesses and a .cta fence over
    # three CTAs (wwc_TB_0_1_2_SCOPE_BLOCK_FENCE_SCOPE_BLOCK_THREAD_2_FENCE_ACQ), mirrored in 64-thread
    # CTAs: on an H200 66 instances in 5.4e8, none with 256-thread CTAs (bench/results/anchor/h200-cta/README.md)
    StressConfig(test_ctas=1024, cta_threads=64, permute_threads=False, stride=4, pre_stress=37, stress_lines=8,
                 stress_pattern=3, stress_by_cta=True, stripe_ctas=True, stress_word=True, barrier=False, spin=0),
)


#: keys a ``[stress]`` table may hold that are not stress knobs: the rest of a RunConfig (how long,
#: which seed) and a profile's tuning share; a stress file's reader skips them
NOT_KNOBS = frozenset({f.name for f in dataclasses.fields(RunConfig)} - {f.name for f in dataclasses.fields(StressConfig)}
                      | {"tune_share", "tune_budget_s"})

#: the largest stress file read (a profile is at most 1 MiB, as load_profile reads it)
MAX_FILE_BYTES = 1 << 20


def read_knobs(path: str | Path) -> dict[str, Any]:
    """The knobs the ``[stress]`` table of TOML file ``path`` sets (a table ``fuzzgpu tune --out``
    writes, or a profile with one); keys of :data:`NOT_KNOBS` are skipped, other tables of the
    file (a profile's shapes, ...) are not read.  A bad file raises
    :class:`~fuzzgpu.errors.UserError`, one line naming the file, the line and the key."""
    from ..errors import UserError, clip
    from ..files import read_toml, toml_key_lines, toml_where

    where = clip(str(path), 200)
    try:
        text, data = read_toml(path, MAX_FILE_BYTES, where)
    except FileNotFoundError:
        raise UserError(f"{where}: no such file (expected a TOML file with a [stress] table)") from None
    except ValueError as e:
        raise UserError(str(e)) from None
    table = data.get("stress")
    if table is None:
        raise UserError(f"{where}: no [stress] table (expected the table `fuzzgpu tune --out` writes, or a profile with one)")
    if not isinstance(table, dict):
        at = toml_where(where, toml_key_lines(text), "stress")
        raise UserError(f"{at}: key 'stress' must be a table, not {type(table).__name__}")
    knobs = {f.name for f in dataclasses.fields(StressConfig)}
    out: dict[str, Any] = {}
    for k, v in table.items():
        if k in NOT_KNOBS:
            continue
        why = None if k not in knobs else knob_error(k, v)
        if k in knobs and why is None:
            out[k] = v
            continue
        at = toml_where(where, toml_key_lines(text), "stress", k)
        if why is None:
            raise UserError(clip(f"{at}: unknown key 'stress.{k}' (expected a stress knob: {', '.join(sorted(knobs))}; "
                                 f"allowed but not read: {', '.join(sorted(NOT_KNOBS))})"))
        raise UserError(clip(f"{at}: key 'stress.{k}': {why}"))
    return out


def fit_cta(config: StressConfig, min_cta_threads: int) -> StressConfig:
    """``config`` with CTAs of at least ``min_cta_threads`` threads (what a program's roles need:
    codegen.min_cta_threads; :meth:`StressConfig.with_cta_threads`); ``config`` itself when its CTAs
    are large enough."""
    return config if config.cta_threads >= min_cta_threads else config.with_cta_threads(min_cta_threads)


def sample(rng: random.Random, n: int, seeds: Sequence[StressConfig] = SEEDS) -> list[StressConfig]:
    """``seeds`` and then random points of :data:`SPACE` until ``n`` distinct configurations."""
    out: list[StressConfig] = []
    seen: set[StressConfig] = set()
    for s in seeds:
        if len(out) < n and s not in seen:
            out.append(s)
            seen.add(s)
    tries = 0
    while len(out) < n and tries < 100 * n:
        tries += 1
        c = StressConfig(**{k: rng.choice(v) for k, v in SPACE.items()})
        if c not in seen:
            out.append(c)
            seen.add(c)
    return out


__all__ = ["StressConfig", "SPACE", "BOUNDS", "SEEDS", "ANCHOR_LIKE", "PATTERNS", "POWERS_OF_TWO", "NOT_KNOBS", "fit_cta", "knob_type", "knob_error",
           "read_knobs", "sample"]
