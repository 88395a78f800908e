"""The fuzzgpu pytest plugin (registered under the ``pytest11`` entry point as ``fuzzgpu``).

Options:

* ``--fuzzgpu-backend auto|cuda|sim|static`` -- where :func:`fuzzgpu_run` and corpus replays run
  (default ``auto``: the GPU when there is one, else the static SASS oracle);
* ``--fuzzgpu-instances N`` -- instances per run (default: the backend's / the entry's);
* ``--fuzzgpu-corpus DIR`` -- every entry of the corpus folder becomes a test item that replays it
  and judges it against the entry's expectation (``expect``: ``reproduces``, ``fixed``, ``new``,
  :mod:`fuzzgpu.corpus.expect`), as ``fuzzgpu replay`` does: it passes when the replay shows what
  the entry expects, and fails when it does not (with the explanation as the report), when the
  entry cannot be replayed, and when this backend cannot check it (a SASS finding on ``sim``...:
  NOT CHECKED is not green); an entry that expects to reproduce and that this backend cannot run
  (a GPU finding on a CPU machine) is checked by the model, its recorded outcomes re-judged; a
  folder without entries is a usage error (pytest exit 4), never a session that passes having
  replayed nothing;
* ``--fuzzgpu-sim-fault F`` -- with the sim backend: inject a fault (``relacq-as-relaxed``).

Fixtures (session-scoped, so they work inside Hypothesis ``@given`` tests):
``fuzzgpu_run(program, instances=None, **runconfig) -> Histogram`` runs a Program on the chosen
backend; ``fuzzgpu_backend`` is the backend itself.

With pytest-xdist and several GPUs visible, each worker is pinned to one GPU
(``CUDA_VISIBLE_DEVICES`` from the worker id), and ``-n auto`` starts one worker per GPU.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # what Item.repr_failure returns (pytest has no public name for it)
    from _pytest._code.code import TerminalRepr

from fuzzgpu.backends.gpus import pin_worker_gpu, visible_gpus  # noqa: F401 -- public names here too

_BACKENDS: dict[tuple, Any] = {}


def pytest_addoption(parser: Any) -> None:
    g = parser.getgroup("fuzzgpu", "fuzzgpu: GPU memory-model fuzzing")
    g.addoption("--fuzzgpu-backend", default="auto", choices=("auto", "cuda", "sim", "static"),
                help="backend for fuzzgpu_run and corpus replays (default: auto)")
    g.addoption("--fuzzgpu-instances", type=float, default=None, metavar="N", help="instances per run (e.g. 1e8)")
    g.addoption("--fuzzgpu-corpus", default=None, metavar="DIR", help="collect every entry of this corpus folder as a replay test")
    g.addoption("--fuzzgpu-sim-fault", default=None, metavar="FAULT", help="with --fuzzgpu-backend sim: inject a fault")


def _corpus_usage_error(corpus: str) -> str | None:
    """Why ``--fuzzgpu-corpus corpus`` cannot be replayed (a missing folder, a folder without
    entries: zero replay tests would pass the session, and a corpus that checked nothing is not
    clean, as ``empty_parameter_set_mark = "fail_at_collect"`` for the project's own
    parametrisations), else None."""
    from fuzzgpu.corpus import Corpus

    root = Path(corpus)
    if not root.is_dir():
        return f"--fuzzgpu-corpus {corpus}: no such folder"
    c = Corpus(root)
    if not c.entry_paths() and not c.rejected_paths():
        return f"--fuzzgpu-corpus {corpus}: no corpus entries: expected a corpus folder with at least one entry file (*.json)"
    return None


def pytest_configure(config: Any) -> None:
    config.addinivalue_line("markers", "fuzzgpu_corpus: a replayed fuzzgpu corpus entry")
    corpus = config.getoption("--fuzzgpu-corpus", None)
    # checked here, before pytest-xdist starts a worker: raised at a worker's collection it was an
    # INTERNALERROR (exit 3) with no line naming the folder
    why = _corpus_usage_error(corpus) if corpus else None
    if why is not None:
        raise pytest.UsageError(why)
    if config.getoption("--fuzzgpu-backend", "auto") in ("auto", "cuda"):
        gpu = pin_worker_gpu(os.environ.get("PYTEST_XDIST_WORKER"), visible_gpus())
        if gpu is not None:
            os.environ["CUDA_VISIBLE_DEVICES"] = gpu


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
    "static": "nothing runs (no GPU): each program is compiled and its SASS checked; a property over "
              "outcomes sees none (its verdict says '0 instances ran')",
    "sim": "a CPU SIMULATION: outcomes are sampled from the memory-model oracle, so a property the "
           "oracle decides passes or fails as the oracle says, not as hardware does",
}


@pytest.fixture(scope="session")
def fuzzgpu_run(request: Any):
    """``fuzzgpu_run(program, instances=None, **runconfig) -> Histogram`` on the chosen backend."""
    import dataclasses

    from fuzzgpu.backends.base import RunConfig

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
        n = instances or default_n
        if n:
            cfg = dataclasses.replace(cfg, instances=int(n))
        return backend.run(program, cfg)

    return run


class CorpusViolation(Exception):
    pass


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
        n = self.config.getoption("--fuzzgpu-instances")
        r = against_expectation(self.entry, replay_entry(self.entry, backend, int(n) if n else None))
        status, check = r["status"], r["check"]
        self.user_properties += [("fuzzgpu_replay", status), ("fuzzgpu_expect", r["expect"]), ("fuzzgpu_check", check)]
        if check == "pass":
            if r.get("model_only"):  # said in the report (-rA, JUnit's properties), not a warning
                self.user_properties.append(("fuzzgpu_checked_by", r["checked_by"]))
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

    root = Path(corpus)
    c = Corpus(root)
    paths, rejected = c.entry_paths(), c.rejected_paths()
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
