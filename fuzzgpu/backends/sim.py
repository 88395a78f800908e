"""The ``sim`` backend: a CPU simulation, not a GPU.

It samples outcomes from the set the memory-model oracle allows (fuzzgpu.model): the outcomes of
an interleaving (SC) share most of the probability, each weak-but-allowed outcome gets a small
fixed rate.  Seeded and deterministic per seed.  It exists to test the fuzzer itself (generation,
properties, shrinking, the corpus, replay) on machines without a GPU; it cannot find hardware or
compiler bugs, and every output names it a simulation.

Fault injection (explicit, for testing the fuzzer): ``relacq-as-relaxed`` evaluates the program
with its release/acquire annotations (``st.release``, ``ld.acquire``, RMW ``.acquire/.release/
.acq_rel``, ``mbarrier.arrive.release``, ``mbarrier.try_wait.acquire``) weakened to ``.relaxed`` and
samples from *that* program's allowed set, so it also returns the outcomes the model forbids for
release/acquire message passing -- as a GPU whose release/acquire were no stronger than relaxed would.

Timeouts: a program with a wait (a backward jump) of which no execution completes (the oracle
allows no outcome) reports every instance as a timeout, as the GPU harness does when each
instance's wait runs out of its budget.  The fault ``timeout`` (rate as below: ``timeout:0.5``) makes
``TIMEOUT_FRACTION`` of the instances of the programs it hits time out -- only programs with a wait,
the only ones the harness can report a timeout for; on a program whose waits must complete
(``model.termination``) that is a finding of its own kind (see properties), elsewhere it is
expected.  It is not a process fault: it also fires in-process (replay, the pytest plugin).

Harness fault: ``unwritten`` (rate as below: ``unwritten:0.5``) makes ``UNWRITTEN_FRACTION`` (at
least one) of the instances of the programs it hits show a value no store of the program wrote:
the last outcome key reads ``?``, as a GPU harness whose decoding fails shows it.  Properties report
it as a harness or hardware fault, never as a forbidden outcome.  It fires in-process too.

Driver fault: ``refused`` (rate as below) makes the run of the programs it hits fail as a launch the
CUDA driver refuses (``CUDA driver error <CUDA_ERROR_INVALID_VALUE> from cuLaunchKernelEx``: the
context lives on); a campaign counts the program not covered and keeps it in ``D/refused/``.  It
fires in-process too.

Reliability faults (for testing the campaign's worker supervision, docs/reliability.md): ``hang``
(the run never returns: the process sleeps forever), ``slow`` (the run takes ``SLOW_SECONDS`` then
returns: a time-out), ``crash`` (the process kills itself with SIGSEGV, like a GPU launch that dies on
an illegal address), ``exit`` (``os._exit(3)``), ``gpu-fault`` (raises the cuda backend's
``GpuFault``, as a launch that loses the CUDA context does: the worker reports it and exits), ``error``
(raises a ``RuntimeError``, as a bug in a backend or harness would: the worker reports it as the
program's fault and goes on).  Each hits the programs whose hash falls in a rate
(``hang`` = 1 in 16 by default; ``hang:0.5`` = half of them; ``hang:1`` = every program).  Several
faults combine with commas: ``relacq-as-relaxed,crash:0.1``.  These faults only fire in a process
that a supervisor owns (the campaign's worker sets ``SimBackend.isolated``); anywhere else the
backend refuses them rather than hang or crash its caller.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import time
from typing import Any

import numpy as np

from .. import __version__
from ..ir import (
    Atom,
    Instruction,
    Load,
    MbarrierArrive,
    MbarrierWait,
    Program,
    Red,
    Sem,
    Store,
)
from .base import Histogram, RunConfig, fault_hits, mostly_timed_out, parse_fault_spec

FAULTS = ("relacq-as-relaxed", "timeout", "unwritten", "refused", "hang", "slow", "crash", "exit", "gpu-fault", "error")
#: faults that stop the process (or its answer): only in a supervised worker
PROCESS_FAULTS = ("hang", "slow", "crash", "exit", "gpu-fault", "error")
SLOW_SECONDS = 30.0
#: with the ``timeout`` fault: the share of a hit program's instances that time out
TIMEOUT_FRACTION = 0.01
#: with the ``unwritten`` fault: the share of a hit program's instances that read a value no store wrote
UNWRITTEN_FRACTION = 0.01


def parse_faults(spec: str | None) -> dict[str, float]:
    """``"relacq-as-relaxed,hang:0.25"`` -> ``{"relacq-as-relaxed": 1.0, "hang": 0.25}``; raises
    UserError (one line) on an unknown fault or a bad rate."""
    return parse_fault_spec(spec, FAULTS, "--sim-fault", {"relacq-as-relaxed": 1.0})


#: probability of each weak (allowed, non-SC) outcome per instance
WEAK_RATE = 1e-3


def weaken_relacq(p: Program) -> Program:
    """``p`` with every release/acquire annotation of an access made ``.relaxed`` (fences kept)."""

    def one(ins: Instruction) -> Instruction:
        if isinstance(ins, Load) and ins.sem is Sem.ACQUIRE:
            return dataclasses.replace(ins, sem=Sem.RELAXED)
        if isinstance(ins, Store) and ins.sem is Sem.RELEASE:
            return dataclasses.replace(ins, sem=Sem.RELAXED)
        if isinstance(ins, (Atom, Red)) and ins.sem in (Sem.ACQUIRE, Sem.RELEASE, Sem.ACQ_REL):
            return dataclasses.replace(ins, sem=Sem.RELAXED)
        if isinstance(ins, MbarrierArrive) and ins.sem is Sem.RELEASE:
            return dataclasses.replace(ins, sem=Sem.RELAXED)
        if isinstance(ins, MbarrierWait) and ins.sem is Sem.ACQUIRE:
            return dataclasses.replace(ins, sem=Sem.RELAXED)
        return ins

    threads = tuple(dataclasses.replace(t, code=tuple(one(i) for i in t.code)) for t in p.threads)
    return dataclasses.replace(p, threads=threads)


@functools.lru_cache(maxsize=4096)
def _analysis(program: Program):
    from .. import model

    return model.analyse(program)


class SimBackend:
    """Implements the Backend protocol (``run``, ``describe``, ``name``) on the CPU."""

    name = "sim"
    deterministic = False  # a sample: more instances may show more outcomes

    def __init__(self, fault: str | None = None, weak_rate: float = WEAK_RATE) -> None:
        self.faults = parse_faults(fault)
        self.fault = fault or None
        self.weak_rate = weak_rate
        self.isolated = False  # set by a supervising worker: process faults may fire

    def describe(self) -> str:
        s = "sim: a CPU SIMULATION (outcomes sampled from the memory-model oracle's allowed set; not a GPU)"
        if self.fault:
            s += f", with injected fault {self.fault}"
        return s

    def identity(self) -> tuple[str, str, str]:
        return (f"sim:{self.fault or 'none'}:{self.weak_rate}", "sim", f"fuzzgpu-{__version__}")

    def outcome_space(self, program: Program) -> tuple[tuple[str, ...], list, list]:
        """(keys, the outcomes it samples, their probabilities)."""
        base = _analysis(program)
        src = _analysis(weaken_relacq(program)) if "relacq-as-relaxed" in self.faults else base
        outcomes = sorted(src.possible)  # allowed, and allowed only outside the model (ld.global.nc)
        if not outcomes:
            return base.keys, [], []
        sc = [o for o in outcomes if o in base.sc]
        weak = [o for o in outcomes if o not in base.sc]
        w_weak = min(self.weak_rate, 0.5 / max(1, len(weak))) if sc else 1.0 / len(weak)
        w_sc = (1.0 - w_weak * len(weak)) / len(sc) if sc else 0.0
        probs = [w_sc if o in base.sc else w_weak for o in outcomes]
        total = sum(probs)
        return base.keys, outcomes, [p / total for p in probs]

    def run(self, program: Program, config: RunConfig | None = None) -> Histogram:
        config = config or RunConfig()
        self._process_faults(program)
        rate = self.faults.get("refused")
        if rate is not None and fault_hits(program, "refused", rate):
            from ..errors import UserError
            from .cuda import DRIVER_ERROR

            raise UserError(f"{DRIVER_ERROR} <CUresult.CUDA_ERROR_INVALID_VALUE: 1> from cuLaunchKernelEx "
                            "(simulated: --sim-fault refused)")
        t0 = time.perf_counter()
        keys, outcomes, probs = self.outcome_space(program)
        from ..hashing import program_hash

        seed = int(hashlib.sha256(f"{program_hash(program)}:{config.seed}:{self.fault}".encode()).hexdigest()[:16], 16)
        counts: tuple[tuple[Any, int], ...] = ()
        instances = config.instances
        timeouts = self.timeouts(program, instances, bool(outcomes))
        stopped: tuple[tuple[str, Any], ...] = ()
        if 0 < config.timeout_stop < instances and mostly_timed_out(timeouts, instances):  # as the GPU harness stops (RunConfig)
            instances = config.timeout_stop
            timeouts = self.timeouts(program, instances, bool(outcomes))
            stopped = (("stopped_early", f"{instances} of {config.instances} instances run: most timed out "
                                         f"(RunConfig.timeout_stop {config.timeout_stop})"),)
        if outcomes and instances > timeouts:
            rng = np.random.default_rng(seed)
            drawn = rng.multinomial(instances - timeouts, probs)
            counts = tuple((o, int(c)) for o, c in zip(outcomes, drawn) if c)
            counts = self.unwritten(program, counts)
        meta = (("simulation", True), ("device", "CPU simulation (not a GPU)"), ("fault", self.fault), ("seed", config.seed)) + stopped
        return Histogram(keys, counts, instances, timeouts, time.perf_counter() - t0, "sim", meta)

    def timeouts(self, program: Program, instances: int, completes: bool) -> int:
        """How many of ``instances`` time out: all of them when the program has a wait and no
        execution completes; with the ``timeout`` fault, ``TIMEOUT_FRACTION`` (at least one) of a
        hit program's instances when it has a wait; otherwise none."""
        from ..model import liveness

        if not liveness.waits(program):
            return 0
        if not completes:
            return instances
        rate = self.faults.get("timeout")
        if rate is None or not fault_hits(program, "timeout", rate):
            return 0
        return min(instances, max(1, round(instances * TIMEOUT_FRACTION)))

    def unwritten(self, program: Program, counts: tuple[tuple[Any, int], ...]) -> tuple[tuple[Any, int], ...]:
        """With the ``unwritten`` fault, on a program it hits: ``UNWRITTEN_FRACTION`` (at least one)
        of the instances of the most frequent outcome read ``?`` at the last key instead."""
        rate = self.faults.get("unwritten")
        if rate is None or not counts or not fault_hits(program, "unwritten", rate):
            return counts
        top = max(range(len(counts)), key=lambda i: counts[i][1])
        o, c = counts[top]
        n = min(c, max(1, round(sum(k for _, k in counts) * UNWRITTEN_FRACTION)))
        bad = o[:-1] + ((o[-1][0], None),)
        rest = [(oo, cc) for i, (oo, cc) in enumerate(counts) if i != top] + ([(o, c - n)] if c > n else [])
        return tuple(rest + [(bad, n)])

    def _process_faults(self, program: Program) -> None:
        active = [f for f in PROCESS_FAULTS if f in self.faults]
        if not active:
            return
        if not self.isolated:
            from ..errors import UserError

            raise UserError(f"--sim-fault {','.join(active)} stops the process: it runs only in a supervised worker "
                            f"(fuzzgpu campaign), not in-process")
        import os
        import signal

        for f in active:
            if not fault_hits(program, f, self.faults[f]):
                continue
            if f == "hang":
                while True:
                    time.sleep(3600)
            if f == "slow":
                time.sleep(SLOW_SECONDS)
            if f == "crash":
                os.kill(os.getpid(), signal.SIGSEGV)
                time.sleep(10)
            if f == "exit":
                os._exit(3)
            if f == "gpu-fault":  # what the cuda backend raises when a launch loses the context
                from .cuda import GpuFault

                raise GpuFault("simulated CUDA_ERROR_ILLEGAL_ADDRESS (--sim-fault gpu-fault): the context is lost")
            if f == "error":  # what a bug in a backend or its harness looks like to the worker
                raise RuntimeError("simulated backend bug (--sim-fault error)")

    def close(self) -> None:
        pass


__all__ = ["FAULTS", "PROCESS_FAULTS", "TIMEOUT_FRACTION", "UNWRITTEN_FRACTION", "SimBackend", "fault_hits", "parse_faults", "weaken_relacq"]
