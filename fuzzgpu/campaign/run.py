"""One campaign from the command line's settings: the profile, the backend (in a supervised worker
process by default, else in this process) and the :class:`Campaign` over them."""

from __future__ import annotations

from typing import Any

from ..backends import make_backend
from ..errors import UserError
from ..profiles import load_profile
from . import limits
from .engine import Campaign
from .state import CampaignResult


#: why --property sc judges nothing on the static backend
SC_ON_STATIC = ("PROPERTY sc NOT CHECKED: it fails on an executed outcome that is not SC, and the static backend executes "
                "nothing (it checks the SASS only, as --property model does); run sc on --backend cuda or sim")


def refuse_unfailable(prop: str, backend: str) -> None:
    """A property that cannot fail on the backend asked for is refused (one line, exit 2), not run
    as a campaign that ends "no new finding": ``sc`` on ``static`` (issue 27, item 5)."""
    if prop == "sc" and backend == "static":
        raise UserError("--property sc with --backend static: " + SC_ON_STATIC.split(": ", 1)[1]
                        + " (or use --property model or race on static)")


def run_campaign(profile: str, backend: str = "auto", seconds: float = 60, corpus_dir: str = "fuzz-corpus", prop: str = "model",
                 seed: int | None = None, sim_fault: str | None = None, out: Any = None, live: bool | None = None,
                 max_findings: int | None = None, watchdog: float | None = None, worker_id: str | None = None,
                 isolate: bool = True, gpu_fault: str | None = None, known: str | None = None,
                 started: float | None = None, runner: str | None = None) -> CampaignResult:
    """One campaign.  ``isolate`` (the default): the backend runs in a supervised worker process
    (:class:`fuzzgpu.workers.supervised.SupervisedBackend`): a program that hangs or crashes it is quarantined
    and the campaign goes on.  ``runner``: the address of the GPU runner that runs the cuda
    backend's programs (a parallel campaign's worker, ``--gpu-context shared``)."""
    import time

    t0 = time.monotonic()  # --time counts from here (or ``started``): the backend's start-up is part of it
    refuse_unfailable(prop, backend)
    prof = load_profile(profile)
    if isolate:
        from ..backends.sim import parse_faults
        from ..workers.supervised import DEFAULT_WATCHDOG, BackendSpec, SupervisedBackend

        if sim_fault and backend != "sim":
            raise UserError("--sim-fault is only for --backend sim")
        parse_faults(sim_fault)  # a bad --sim-fault is one line here, not in the worker
        if gpu_fault:
            from ..backends.cuda import parse_gpu_faults

            if backend != "cuda":
                raise UserError("--gpu-fault is only for --backend cuda")
            parse_gpu_faults(gpu_fault)
        b = SupervisedBackend(BackendSpec(backend, sim_fault, prof.static_arch, gpu_fault, runner,
                                          judge_unrunnable=prof.static_unrunnable), watchdog or DEFAULT_WATCHDOG)
        note = b.note + f"; backend in a supervised worker process (watchdog {b.watchdog:g} s + expected run time)"
    else:
        from ..backends.sim import PROCESS_FAULTS, parse_faults

        stopping = [f for f in PROCESS_FAULTS if f in parse_faults(sim_fault)]
        if stopping:  # the sim refuses them in-process: every program would be "not covered", the campaign "clean"
            raise UserError(f"--sim-fault {','.join(stopping)} stops the process: it runs only in a supervised campaign worker, "
                            "not with --in-process")
        b, note = make_backend(backend, sim_fault=sim_fault, arch=prof.static_arch, gpu_fault=gpu_fault, runner=runner,
                               judge_unrunnable=prof.static_unrunnable)
    if prop == "sc" and getattr(b, "name", "") == "static":  # --backend auto without a GPU: said loudly, on screen and in the report
        note += "; " + SC_ON_STATIC
    try:
        c = Campaign(prof, b, corpus_dir, prop, seed, note, out, live, worker_id=worker_id, known=known)
    except BaseException:
        getattr(b, "close", lambda: None)()
        raise
    c.close_backend = isolate
    c.max_findings = max_findings
    with limits.collector():  # a campaign's heap is large and long-lived: the whole of it traversed less often
        return c.run(seconds, started if started is not None else t0)
