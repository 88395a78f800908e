"""What every backend (``cuda`` on a GPU, ``sim`` on the CPU) provides: ``run(program, config)``
returning a :class:`Histogram` of outcomes."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Iterator, Mapping, Protocol, Sequence, runtime_checkable

from ..ir import Program

#: one outcome: ``(("P1:r0", 1), ("P1:r1", 0))`` in Program.outcome_keys() order.  A value of
#: ``None`` means the device saw a value outside the program's value table (shown as ``?``).
Outcome = tuple[tuple[str, "int | None"], ...]


def outcome_of(d: Mapping[str, "int | None"]) -> Outcome:
    return tuple(d.items())


def format_outcome(o: Outcome) -> str:
    return "; ".join(f"{k}={'?' if v is None else v}" for k, v in o) + ";"


#: the most pre-test stress iterations a launch can take (bits 8-30 of the knobs word)
PRE_STRESS_MAX = (1 << 23) - 1


@dataclass(frozen=True)
class RunConfig:
    """How a program is run.  The stress knobs follow facts/h200-litmus-probe.md."""

    instances: int = 100_000_000  # total instances (rounded up to whole launches)
    stride: int = 1  # words between a test's locations (1: share lines; 32: one line each)
    barrier: bool = False  # loose global barrier before the test
    spin: int = 0  # per-warp random delay of [0, spin) %clock cycles before the test
    stress: int = 0  # extra CTAs hammering scratch lines while the test runs
    stress_lines: int = 64
    seed: int = 1
    test_ctas: int = 256  # testing CTAs per launch (x cta_threads = instances per launch)
    # threads per CTA, testing and stress CTAs alike: 32, 64, 128 or 256 (cuda-litmus's workgroup
    # size; more, smaller CTAs share an SM); a program whose roles need more warps in one CTA than
    # this has, or a wgmma program (two warpgroups), cannot run with fewer (launch_geometry says so)
    cta_threads: int = 256
    budget: int = 100_000  # iterations a spin loop may take before the instance is a timeout
    # each launch's number as a kernel argument, launches one by one from the host (default), or
    # (False) read by every thread from a control word before the test, which lets launches replay
    # from a CUDA graph (``graphs``): ~5% faster, but the dependent load before the test lines the
    # threads up -- without the barrier knob an H200 then showed up to 2x (LB) and 5x (MP
    # rel/acq.cta, stride 32) the probe's weak rates (bench/results/harness-h200-table1.md)
    host_epoch: bool = True
    graphs: bool = True  # with host_epoch=False: replay launches through a CUDA graph
    # classify the previous launch inside the next test launch (fast; its memory traffic overlaps
    # the tests of CTAs that start later, a mild stress) or in a separate launch after each test
    inline_check: bool = True
    # PDL programs (several grids): the primary spins this many ns (%globaltimer) right after
    # each griddepcontrol.launch_dependents, so that a dependent reading too early reads before
    # the primary's later writes (stale reads show only when the primary runs >= 20 us after its
    # trigger: facts/h200-litmus-probe.md, Table 7)
    pdl_delay_ns: int = 30_000
    # False: launch the program's PDL grids as ordinary stream-ordered kernels (a control run; the
    # histogram's meta says so, and the oracle should then judge the program without pdl_grids)
    pdl: bool = True
    # -- the knobs fuzzgpu.stress tunes (docs/harness.md, "Knobs"; docs/tuning.md) --
    # CTAs per SM: 0 as many as fit (8 of 256 threads); k >= 1 caps the occupancy at k by giving
    # every CTA 1/k of the SM's shared memory (dynamic shared memory, unused)
    ctas_per_sm: int = 0
    permute_ctas: bool = True  # a random CTA permutation per launch (False: identity)
    permute_threads: bool = True  # random warp/lane rotation per launch (False: roles in neighbouring warps, same lane)
    # a random row per location and launch (True), or an instance's locations side by side at the
    # stride (False: with stride x locations <= 32 words they share one 128-byte line)
    shuffle_locations: bool = True
    pre_stress: int = 0  # iterations of scratch-line accesses by every testing thread before the test
    pre_stress_pattern: int = 0  # 0 store;load 1 store;store 2 load;store 3 load;load
    stress_pattern: int = 0  # the stress CTAs' access pattern (same codes)
    stress_by_cta: bool = False  # stress lines: one per CTA (True) or round-robin over warps
    # roles of different CTA groups in neighbouring CTAs (the next cluster, the one after, ...), the
    # same for every instance (cuda-litmus's stripe_workgroup), instead of a random distance
    stripe_ctas: bool = False
    # the stress and the pre-test stress of a CTA on one scratch word, the same in every iteration
    # (cuda-litmus's do_stress), instead of each lane its own word of a line that changes per access
    stress_word: bool = False
    # -- how long a run goes on (like ``instances``: not a stress knob, not in the evidence key) --
    # k > 0: a run whose first judged launch has more than half of its instances timed out (a wait
    # that does not end under this stress) stops after k instances, the histogram's meta says so
    # (``stopped_early``); 0: every instance asked for runs.  Campaigns set it (MAY_HANG_INSTANCES)
    timeout_stop: int = 0

    @property
    def instances_per_launch(self) -> int:
        """The instances one launch runs (``test_ctas`` x ``cta_threads``): a run is whole launches,
        ``instances`` rounded up to them."""
        return self.test_ctas * self.cta_threads

    def knobs_word(self) -> int:
        """The harness kernels' ``knobs`` argument (see codegen's fz_params): the runtime knobs
        that change the kernel's code paths, packed into one 32-bit word."""
        pre = min(max(0, int(self.pre_stress)), PRE_STRESS_MAX)
        return ((0 if self.permute_threads else 1) | (0 if self.shuffle_locations else 2)
                | (int(self.stress_pattern) & 3) << 2 | (int(self.pre_stress_pattern) & 3) << 4
                | (64 if self.stress_by_cta else 0) | (128 if self.stripe_ctas else 0) | pre << 8
                | (1 << 31 if self.stress_word else 0))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def seen_forbidden(meta: Mapping[str, Any]) -> bool:
    """Whether a run's ``meta`` says it logged instances of an outcome the oracle forbids: the
    harness's provenance log (:func:`fuzzgpu.backends.provenance.provenance`) saw some."""
    prov = meta.get("provenance")
    return isinstance(prov, Mapping) and bool(prov.get("seen"))


def mostly_timed_out(timeouts: int, instances: int) -> bool:
    """``RunConfig.timeout_stop``'s rule: more than half of the instances judged so far timed out."""
    return instances > 0 and 2 * timeouts > instances


@dataclass(frozen=True)
class Histogram:
    """Outcome counts of one run.  ``counts`` excludes timeouts; ``instances`` includes them."""

    keys: tuple[str, ...]
    counts: tuple[tuple[Outcome, int], ...]
    instances: int
    timeouts: int = 0
    seconds: float = 0.0
    backend: str = ""
    meta: tuple[tuple[str, Any], ...] = ()

    def __iter__(self) -> Iterator[tuple[Outcome, int]]:
        return iter(self.counts)

    def as_dict(self) -> dict[Outcome, int]:
        return dict(self.counts)

    def count(self, outcome: Mapping[str, "int | None"]) -> int:
        return self.as_dict().get(outcome_of({k: outcome[k] for k in self.keys}), 0)

    @property
    def rate(self) -> float:
        return self.instances / self.seconds if self.seconds > 0 else 0.0

    def matching(self, pred) -> int:
        """Instances whose outcome satisfies ``pred(dict)`` (outcomes with ``?`` values are skipped)."""
        n = 0
        for o, c in self.counts:
            d = dict(o)
            if any(v is None for v in d.values()):
                continue
            if pred(d):
                n += c
        return n

    def to_json(self) -> dict[str, Any]:
        return {
            "keys": list(self.keys),
            "outcomes": [{"outcome": dict(o), "count": c} for o, c in self.counts],
            "instances": self.instances,
            "timeouts": self.timeouts,
            "seconds": self.seconds,
            "backend": self.backend,
            "meta": dict(self.meta),
        }


#: a fault hits this share of programs unless its spec gives a rate (``hang:0.25``)
DEFAULT_FAULT_RATE = 1 / 16


def parse_fault_spec(spec: str | None, known: Sequence[str], option: str,
                     default_rates: Mapping[str, float] | None = None) -> dict[str, float]:
    """``"a,b:0.25"`` -> ``{"a": default, "b": 0.25}`` for an injected-fault option (``--sim-fault``,
    ``--gpu-fault``); raises UserError (one line) on an unknown fault or a bad rate."""
    from ..errors import UserError

    out: dict[str, float] = {}
    for part in (spec or "").split(","):
        part = part.strip()
        if not part:
            continue
        name, _, rate_text = part.partition(":")
        if name not in known:
            raise UserError(f"unknown {option} {name!r} (known: {', '.join(known)}; several with commas, a rate with NAME:RATE)")
        rate = (default_rates or {}).get(name, DEFAULT_FAULT_RATE)
        if rate_text:
            try:
                rate = float(rate_text)
            except ValueError:
                rate = -1.0
            if not 0 < rate <= 1:
                raise UserError(f"{option} {part!r}: the rate must be a number in (0, 1]")
        out[name] = rate
    return out


def fault_hits(program: Program, fault: str, rate: float) -> bool:
    """Whether a rate-``rate`` injected fault hits this program (a deterministic function of its hash)."""
    import hashlib

    from ..hashing import program_hash

    h = int(hashlib.sha256(f"{fault}:{program_hash(program)}".encode()).hexdigest()[:12], 16)
    return h < rate * (1 << 48)


@runtime_checkable
class Backend(Protocol):
    name: str

    def run(self, program: Program, config: RunConfig) -> Histogram: ...

    def describe(self) -> str: ...


__all__ = ["Backend", "Histogram", "RunConfig", "Outcome", "outcome_of", "format_outcome", "fault_hits", "mostly_timed_out", "seen_forbidden", "parse_fault_spec",
           "DEFAULT_FAULT_RATE"]
