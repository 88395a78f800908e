"""The fuzzgpu pytest plugin (registered under the ``pytest11`` entry point as ``fuzzgpu``).

Options:

* ``--fuzzgpu-backend auto|cuda|sim|static`` -- where :func:`fuzzgpu_run` and corpus replays run
  (default ``auto``: the GPU when there is one, else the static SASS oracle);
* ``--fuzzgpu-instances N`` -- instances per run, a positive whole number such as 1e8, at most 1e15
  as the CLI's ``--instances`` (default: the backend's / the entry's);
* ``--fuzzgpu-corpus DIR`` -- every entry of the corpus folder (or the one entry file) becomes a test item that replays it
  and judges it against the entry's expectation (``expect``: ``reproduces``, ``fixed``, ``new``,
  :mod:`fuzzgpu.corpus.expect`), as ``fuzzgpu replay`` does: it passes when the replay shows what
  the entry expects, and fails when it does not (with the explanation as the report), when the
  entry cannot be replayed, and when this backend cannot check it (a SASS finding on ``sim``...:
  NOT CHECKED is not green); an entry that expects to reproduce and that this backend cannot run
  (a GPU finding on a CPU machine) is checked by the model, its recorded outcomes re-judged (it
  passes as ``PASSED (checked by the model only)`` under ``-v`` and ``-rA``, what checked it in its
  ``fuzzgpu`` section under ``-rA``/``-rP`` and in the JUnit property ``fuzzgpu_checked_by``); a
  folder without entries is a usage error (pytest exit 4), never a session that passes having
  replayed nothing;
* ``--fuzzgpu-sim-fault F`` -- with the sim backend: inject a fault (``relacq-as-relaxed``).

Every option is checked once, at configuration (before a pytest-xdist worker starts): a bad value is
one usage error naming the option (pytest exit 4), and ``--fuzzgpu-backend cuda`` where no GPU is
usable stops the session with one line saying why (exit 3, the environment's status in
docs/reliability.md), never an error in every test.

Fixtures (session-scoped, so they work inside Hypothesis ``@given`` tests):
``fuzzgpu_run(program, instances=None, **runconfig) -> Histogram`` runs a Program on the chosen
backend -- a run that checked nothing fails its test as NOT CHECKED, never a pass (a program the
backend cannot run, ``Unrunnable``; one the oracle does not cover where the backend consults it,
``model.Unsupported`` on ``sim``; :func:`not_checked`: on ``static``, nothing executed and the
SASS not fully checked); ``fuzzgpu_backend`` is the backend itself (its ``run`` returns whatever
it checked, unjudged, and raises what it cannot run).

With pytest-xdist and several GPUs visible, each worker is pinned to one GPU
(``CUDA_VISIBLE_DEVICES`` from the worker id), and ``-n auto`` starts one worker per GPU.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

if TYPE_CHECKING:  # what Item.repr_failure returns (pytest has no public name for it)
    from _pytest._code.code import TerminalRepr

from fuzzgpu.backends.gpus import pin_worker_gpu, visible_gpus  # noqa: F401 -- public names here too
from fuzzgpu.commands.argtypes import whole_count

_BACKENDS: dict[tuple, Any] = {}


def pytest_addoption(parser: Any) -> None:
    g = parser.getgroup("fuzzgpu", "fuzzgpu: GPU memory-model fuzzing")
    g.addoption("--fuzzgpu-backend", default="auto", choices=("auto", "cuda", "sim", "static"),
                help="backend for fuzzgpu_run and corpus replays (default: auto: the GPU, else static; cuda without a usable GPU: exit 3)")
    g.addoption("--fuzzgpu-instances", type=whole_count, default=None, metavar="N",
                help="instances per run, a positive whole number such as 1e8 (default: the backend's, the entry's)")
    g.addoption("--fuzzgpu-corpus", default=None, metavar="DIR",
                help="collect every entry of this corpus folder (or this one entry file) as a replay test; name the folder as the "
                     "path to collect too (pytest --fuzzgpu-corpus corpus corpus), else pytest also collects its testpaths")
    g.addoption("--fuzzgpu-sim-fault", default=None, metavar="FAULT",
                help="with --fuzzgpu-backend sim: inject a fault (relacq-as-relaxed, timeout[:RATE], unwritten[:RATE], refused[:RATE])")


def _corpus_usage_error(corpus: str) -> str | None:
    """Why ``--fuzzgpu-corpus corpus`` cannot be replayed (a missing path, a folder without
    entries: zero replay tests would pass the session, and a corpus that checked nothing is not
    clean, as ``empty_parameter_set_mark = "fail_at_collect"`` for the project's own
    parametrisations), else None.  A path that is not a folder is one entry file, as ``fuzzgpu
    replay`` takes it (one that is not a valid entry fails as its test)."""
    from fuzzgpu.corpus import Corpus

    root = Path(corpus)
    if not root.exists() and not root.is_symlink():
        return f"--fuzzgpu-corpus {corpus}: no such corpus folder or entry file"
    if not root.is_dir():
        return None
    c = Corpus(root)
    if not c.entry_paths() and not c.rejected_paths():
        return f"--fuzzgpu-corpus {corpus}: no corpus entries: expected a corpus folder with at least one entry file (*.json)"
    return None


def _sim_fault_usage_error(backend: str, fault: str | None) -> str | None:
    """Why ``--fuzzgpu-sim-fault fault`` cannot run with ``--fuzzgpu-backend backend`` (a backend
    with no faults, an unknown fault or rate, a fault that stops the process: only a supervised
    campaign worker survives it), else None."""
    if not fault:
        return None
    if backend != "sim":
        return f"--fuzzgpu-sim-fault {fault}: only with --fuzzgpu-backend sim (backend {backend} injects no fault)"
    from fuzzgpu.backends.base import parse_fault_spec
    from fuzzgpu.backends.sim import FAULTS, PROCESS_FAULTS
    from fuzzgpu.errors import UserError

    try:
        faults = parse_fault_spec(fault, FAULTS, "--fuzzgpu-sim-fault")
    except UserError as e:
        return str(e)
    stopping = [f for f in PROCESS_FAULTS if f in faults]
    if stopping:
        return (f"--fuzzgpu-sim-fault {','.join(stopping)} stops the process: it runs only in a supervised campaign worker "
                f"(fuzzgpu campaign), not in pytest; expected one of {', '.join(f for f in FAULTS if f not in PROCESS_FAULTS)}")
    return None


def _no_gpu(backend: str) -> str | None:
    """With ``--fuzzgpu-backend cuda``: why no GPU is usable here (PyCUDA, cuda-bindings, a driver,
    a device), else None.  No context is opened (each test process opens its own)."""
    if backend != "cuda":
        return None
    from fuzzgpu.backends.cuda import gpu_unavailable

    why = gpu_unavailable()
    return None if why is None else (f"--fuzzgpu-backend cuda: no usable GPU: {why} (on a machine without a GPU: "
                                     "--fuzzgpu-backend auto, static or sim)")


def pytest_configure(config: Any) -> None:
    config.addinivalue_line("markers", "fuzzgpu_corpus: a replayed fuzzgpu corpus entry")
    corpus = config.getoption("--fuzzgpu-corpus", None)
    backend = config.getoption("--fuzzgpu-backend", "auto")
    # checked here, before pytest-xdist starts a worker and once (raised at a worker's collection it
    # was an INTERNALERROR, exit 3, with no line naming the folder; at the backend's creation, a
    # traceback in every test)
    why = (_corpus_usage_error(corpus) if corpus else None) or _sim_fault_usage_error(backend, config.getoption("--fuzzgpu-sim-fault", None))
    if why is not None:
        raise pytest.UsageError(why)
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if backend in ("auto", "cuda"):  # before anything initialises CUDA: it reads CUDA_VISIBLE_DEVICES once
        gpu = pin_worker_gpu(worker, visible_gpus())
        if gpu is not None:
            os.environ["CUDA_VISIBLE_DEVICES"] = gpu
    # the controller asks, once (it initialises the driver, no context); an xdist worker is told by its config
    # (``workerinput``), not by PYTEST_XDIST_WORKER, which a pytest run inside a worker's test inherits
    why = None if hasattr(config, "workerinput") else _no_gpu(backend)
    if why is not None:  # the environment, not the usage: exit 3, as every fuzzgpu command's "no usable GPU"
        pytest.exit(why, returncode=3)  # here, not at session start: there pytest says it twice


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: pytest without xdist must not reject it
def pytest_xdist_auto_num_workers(config: Any) -> int | None:
    """``-n auto`` with the GPU backend: one worker per GPU."""
    if config.getoption("--fuzzgpu-backend", "auto") == "cuda":
        n = len(visible_gpus())
        return n or None
    return None


def _backend(config: Any, arch: str = "sm_90") -> Any:
    from fuzzgpu.backends import make_backend

    key = (config.getoption("--fuzzgpu-backend"), config.getoption("--fuzzgpu-sim-fault"), arch)
    if key not in _BACKENDS:
        _BACKENDS[key] = make_backend(key[0], sim_fault=key[1], arch=arch)[0]
    return _BACKENDS[key]


@pytest.fixture(scope="session")
def fuzzgpu_backend(request: Any) -> Any:
    """The backend chosen with --fuzzgpu-backend."""
    return _backend(request.config)


class NotAHardwareRun(UserWarning):
    """fuzzgpu_run's backend does not run programs on a GPU (sim, static): what a pass means."""


_CAVEATS = {
    "static": "nothing runs (no GPU): each program is compiled and its SASS checked for compiler reorderings "
              "where the static oracle can map it (a program whose SASS it could not fully check, and where it "
              "found nothing, fails as NOT CHECKED); no outcome is run, so none is checked against hardware "
              "(a property's pass says '0 instances ran'; the race property's findings are the oracle's)",
    "sim": "a CPU SIMULATION: outcomes are sampled from the memory-model oracle, so a property the "
           "oracle decides passes or fails as the oracle says, not as hardware does",
}


@pytest.fixture(scope="session")
def fuzzgpu_run(request: Any):
    """``fuzzgpu_run(program, instances=None, **runconfig) -> Histogram`` on the chosen backend."""
    import dataclasses

    from fuzzgpu.backends.base import RunConfig
    from fuzzgpu.codegen import Unrunnable
    from fuzzgpu.errors import clip
    from fuzzgpu.model import Unsupported

    backend = _backend(request.config)
    default_n = request.config.getoption("--fuzzgpu-instances")
    caveat = _CAVEATS.get(getattr(backend, "name", ""))

    def run(program: Any, instances: int | None = None, **config: Any):
        if caveat:
            # shown in pytest's warnings summary (a pass here is not a hardware run), at the line of
            # the user's test that called fuzzgpu_run (stacklevel 2: the caller of run), once per
            # test and line (Python's default action; pytest resets it for each test).  Warned at
            # the session fixture's set-up, it pointed into _pytest/fixtures.py.
            import warnings

            warnings.warn(NotAHardwareRun(f"fuzzgpu_run on backend {backend.name}: {caveat}"), stacklevel=2)
        cfg = RunConfig(**config)
        n = default_n if instances is None else _instances_argument(instances)
        if n is not None:
            cfg = dataclasses.replace(cfg, instances=n)
        try:
            h = backend.run(program, cfg)
        except (Unrunnable, Unsupported) as e:  # as fuzzgpu replay: skipped, so NOT CHECKED (not a traceback)
            what = "this backend cannot run it" if isinstance(e, Unrunnable) else "the oracle does not cover it"
            fail_not_checked(backend.name, program, f"{what}: {clip(str(e).splitlines()[0] if str(e) else type(e).__name__, 300)}")
        why = not_checked(program, h)
        if why is not None:
            fail_not_checked(backend.name, program, why)
        return h

    return run


def fail_not_checked(backend: str, program: Any, why: str) -> NoReturn:
    """Fail the test: the run of ``program`` checked nothing (``why``), which is never a pass.  The
    report holds the program as litmus text: pytest prints only the message of this failure, not
    Hypothesis's falsifying example."""
    from fuzzgpu.litmus import format_program

    try:
        text = format_program(program)
    except ValueError as e:  # what the dialect cannot express: said, never a crash of the report
        text = f"(not expressible as litmus text: {e})\n"
    pytest.fail(f"NOT CHECKED on backend {backend}: {why}\nthe program {program.name}, as litmus text:\n{text}", pytrace=False)


def _instances_argument(instances: Any) -> int:
    """``fuzzgpu_run``'s ``instances``, checked as ``--fuzzgpu-instances`` is: a positive whole
    number (``1e6`` too), at most 1e15 -- 0 ran the option's default, -5 ran nothing and passed."""
    import argparse
    import numbers

    try:
        if isinstance(instances, bool) or not isinstance(instances, numbers.Real):
            raise argparse.ArgumentTypeError(f"must be a positive whole number: {instances!r}")
        return whole_count(str(instances))
    except argparse.ArgumentTypeError as e:
        raise ValueError(f"fuzzgpu_run(instances={instances!r}): {e}") from None


def not_checked(program: Any, h: Any) -> str | None:
    """Why the run ``h`` of ``program`` checked less than a pass of it would claim
    (:func:`fuzzgpu.properties.checked_nothing`, the campaign's and replay's rule), else None."""
    from fuzzgpu.properties import checked_nothing

    why = checked_nothing(h)
    return None if why is None else (f"{program.name}: {why}: finding nothing there is not a pass (on a GPU, "
                                     "--fuzzgpu-backend cuda, its outcomes are run and judged)")


class CorpusViolation(Exception):
    pass


#: the user property of a corpus entry that passed by the model's re-judgement, not by a replay
CHECKED_BY = "fuzzgpu_checked_by"
#: what ``-v`` and ``-rA`` print for it instead of PASSED
MODEL_ONLY_WORD = "PASSED (checked by the model only)"


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> tuple[str, str, str] | None:
    """A corpus entry that passed by the model's re-judgement of its recorded outcomes (the backend
    could not run it) reads :data:`MODEL_ONLY_WORD` under ``-v`` and in ``-rA``'s summary, counted
    as passed."""
    if report.when == "call" and report.passed and any(k == CHECKED_BY for k, _ in report.user_properties):
        return "passed", ".", MODEL_ONLY_WORD
    return None


class CorpusBadEntryItem(pytest.Item):
    """A corpus file that is not a valid entry: a failing test with its one-line reason (it was an
    INTERNALERROR with a traceback that stopped the whole session)."""

    def __init__(self, *, reason: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.reason = reason

    def runtest(self) -> None:
        pytest.fail(f"not a valid corpus entry: {self.reason}", pytrace=False)

    def reportinfo(self):
        return self.path, None, f"fuzzgpu corpus file {self.path.name} (invalid)"


class CorpusEntryFile(pytest.File):
    def collect(self):
        from fuzzgpu.corpus import load_entry

        entry = load_entry(self.path)  # a bad entry is a collection error naming the file
        yield CorpusEntryItem.from_parent(self, name=f"{entry.shape}[{entry.prop}]", entry=entry)


class CorpusEntryItem(pytest.Item):
    def __init__(self, *, entry: Any, **kw: Any) -> None:
        super().__init__(**kw)
        self.entry = entry
        self.add_marker("fuzzgpu_corpus")

    def runtest(self) -> None:
        from fuzzgpu.commands.replay import against_expectation, replay_entry

        arch = self.entry.data.get("environment", {}).get("arch", "sm_90")
        backend = _backend(self.config, arch if isinstance(arch, str) and arch.startswith("sm_") else "sm_90")
        r = against_expectation(self.entry, replay_entry(self.entry, backend, self.config.getoption("--fuzzgpu-instances")))
        status, check = r["status"], r["check"]
        self.user_properties += [("fuzzgpu_replay", status), ("fuzzgpu_expect", r["expect"]), ("fuzzgpu_check", check)]
        if check == "pass":
            if r.get("model_only"):  # said in the report, not a warning: pytest_report_teststatus, -rA/-rP, JUnit
                self.user_properties.append((CHECKED_BY, r["checked_by"]))
                self.add_report_section("call", "fuzzgpu", f"PASS [expect {r['expect']}] checked by {r['checked_by']}\n")
            return
        # an entry this backend cannot check (a SASS finding on the simulation...) is no pass: a
        # corpus replay that skipped what it could not check read as green having checked nothing
        if check == "not-checked":
            pytest.fail(f"NOT CHECKED on backend {backend.name} (expect {r['expect']}): {r['check_reason']}; a corpus replay "
                        "that does not check an entry is not green (on a CPU machine: --fuzzgpu-backend static or auto)",
                        pytrace=False)
        if check == "error":  # the run failed (a compile error...): never a pass
            pytest.fail(f"corpus entry could not be replayed: {r.get('reason', 'error')}", pytrace=False)
        if status == "violates":
            raise CorpusViolation(f"{r['check_reason']}: {r.get('summary', 'still violates')}")
        pytest.fail(f"corpus entry (expect {r['expect']}): {r['check_reason']}", pytrace=False)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str | TerminalRepr:
        if isinstance(excinfo.value, CorpusViolation):
            from fuzzgpu.commands.explain import explain_text

            return f"corpus entry: {excinfo.value}\n\n" + explain_text(self.entry)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"fuzzgpu corpus entry {self.path.name} ({self.entry.shape}, {self.entry.prop})"


def pytest_collection_modifyitems(session: Any, config: Any, items: list) -> None:
    corpus = config.getoption("--fuzzgpu-corpus")
    if not corpus:
        return
    why = _corpus_usage_error(corpus)  # (also at configuration; the folder may have changed since)
    if why is not None:
        raise pytest.UsageError(why)
    from fuzzgpu.corpus import Corpus, CorpusError
    from fuzzgpu.files import is_regular

    root = Path(corpus)
    c = Corpus(root)
    if root.is_dir():
        paths, rejected = c.entry_paths(), c.rejected_paths()
    else:  # one entry file, as fuzzgpu replay takes it
        paths, rejected = ([root], []) if is_regular(root) else ([], [root])
    for path in rejected:  # a FIFO, a link... named *.json: never opened, failed as a test of its own (as replay reports it)
        f = CorpusEntryFile.from_parent(session, path=path.absolute())
        items.append(CorpusBadEntryItem.from_parent(f, name="invalid", reason=f"{path}: not a regular file (a FIFO, a device, "
                                                                               "a folder or a symbolic link): not read"))
    for path in paths:
        f = CorpusEntryFile.from_parent(session, path=path.resolve())
        try:
            items.extend(f.collect())
        except CorpusError as e:  # a bad entry fails as a test of its own, one line naming it; the others run
            items.append(CorpusBadEntryItem.from_parent(f, name="invalid", reason=str(e).splitlines()[0] if str(e) else "invalid"))
