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
from typing import Any, Mapping, Sequence

from .backends.base import RunConfig

#: access patterns of a stress access pair (codegen's fz_hammer)
PATTERNS = {0: "store;load", 1: "store;store", 2: "load;store", 3: "load;load"}


@dataclass(frozen=True)
class StressConfig:
    """The harness's stress knobs.  The defaults are the campaign profiles' fixed ``[stress]``
    table (stride 1, the loose barrier, a 1000-cycle spin, no stress CTAs) with every other knob
    at RunConfig's default: the fixed stress a tuned one is measured against."""

    test_ctas: int = 256  # testing CTAs per launch (x 256 threads = instances per launch)
    ctas_per_sm: int = 0  # occupancy cap (0: as many as fit)
    permute_ctas: bool = True
    permute_threads: bool = True
    stride: int = 1  # words between an instance's locations
    shuffle_locations: bool = True  # False: an instance's locations side by side (one line at stride 1)
    pre_stress: int = 0  # scratch accesses per testing thread before the test
    pre_stress_pattern: int = 0
    stress: int = 0  # concurrent stress CTAs
    stress_lines: int = 64  # scratch lines they (and the pre-test stress) hammer
    stress_pattern: int = 0
    stress_by_cta: bool = False  # lines chosen per CTA (else round-robin over warps)
    barrier: bool = True
    spin: int = 1000  # per-warp random delay bound, %clock cycles

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
            v = table[f.name]
            want = type(getattr(cls(), f.name))
            if want is bool and not isinstance(v, bool) or want is int and (isinstance(v, bool) or not isinstance(v, int)):
                raise ValueError(f"{where}.{f.name}: expected {want.__name__}, got {v!r}")
            lo, hi = BOUNDS.get(f.name, (None, None))
            if lo is not None and not lo <= v <= hi:
                raise ValueError(f"{where}.{f.name}: expected {lo}..{hi}, got {v!r}")
            out[f.name] = v
        return cls(**out)

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
    "barrier": (True, False),
    "spin": (0, 300, 1000, 3000, 10000),
}

#: what a hand-written table may hold (the harness's limits: 32-bit knobs, 16-bit CTA ids)
BOUNDS: dict[str, tuple[int, int]] = {
    "test_ctas": (2, 32768),
    "ctas_per_sm": (0, 8),
    "stride": (1, 1 << 16),
    "pre_stress": (0, (1 << 24) - 1),
    "pre_stress_pattern": (0, 3),
    "stress": (0, 1 << 15),
    "stress_lines": (1, 1 << 16),
    "stress_pattern": (0, 3),
    "spin": (0, 2**31 - 1),
}

#: configurations the anchors and facts/h200-litmus-probe.md found effective, tried first
SEEDS: tuple[StressConfig, ...] = (
    StressConfig(),
    StressConfig(spin=3000),
    StressConfig(spin=3000, stress=512),
    StressConfig(stride=32, stress=256, barrier=False, spin=0),
    StressConfig(stress=256, stress_lines=1),
    StressConfig(ctas_per_sm=1, spin=3000),
    StressConfig(pre_stress=64, spin=3000, shuffle_locations=False),
)


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


__all__ = ["StressConfig", "SPACE", "BOUNDS", "SEEDS", "PATTERNS", "sample"]
