"""The ``static`` backend: no execution.  It compiles a program's kernels (one ``__global__`` per
litmus thread, :func:`fuzzgpu.codegen.generate_static`) with nvcc for one arch, disassembles them and
runs the static SASS oracle (:mod:`fuzzgpu.sass`).  A finding is a memory operation ptxas moved
across a synchronisation point -- e.g. an ``ld.global.nc`` hoisted above ``griddepcontrol.wait``
(FlashMLA's PDL + ``__ldg`` race) -- reported with the PTX and SASS lines.

It returns a :class:`~fuzzgpu.backends.base.Histogram` with no outcomes (nothing ran) and the SASS
findings in ``meta["sass_findings"]``; :mod:`fuzzgpu.properties` fails on the findings that matter.
Compiling is deterministic for one toolchain, so ``deterministic = True`` (the evidence cache answers
a repeated question without compiling again).

The kernels are :func:`fuzzgpu.codegen.generate_static`'s (``fuzzgpu_<thread>(unsigned* base)``,
each location a distinct compile-time offset, every op ``asm volatile(... ::: "memory")``).
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .. import codegen
from ..errors import UserError
from ..ir import Program
from .base import Histogram, RunConfig

_SOURCE_CACHE: dict[str, dict[str, Any]] = {}
#: where a program with tcgen05 instructions is checked when the backend's arch lacks them
TCGEN05_ARCH = "sm_100a"


def _toolchain_id() -> str:
    from .. import sass

    nvcc = sass.find_tool("nvcc")
    if not nvcc:
        return "no-nvcc"
    try:
        out = subprocess.run([nvcc, "--version"], check=False, capture_output=True, text=True, timeout=60).stdout
    except OSError:
        return "no-nvcc"
    last = [l for l in out.splitlines() if l.strip()][-1:] or ["nvcc"]
    return last[0].strip() + " #" + hashlib.sha256(out.encode()).hexdigest()[:8]


def static_source(p: Program) -> tuple[str, str]:
    """(CUDA source, which generator wrote it): :func:`codegen.generate_static` (one kernel per
    litmus thread, every instruction spelled by ``codegen.emit_instruction``, every load kept alive
    by a sink store so ptxas cannot delete it -- and with it the reordering this backend looks
    for)."""
    return codegen.generate_static(p), "codegen.generate_static"


def batch_kernel_name(index: int, thread: str) -> str:
    """The name of program ``index``'s kernel of ``thread`` in a batch (:func:`check_batch`)."""
    return f"fuzzgpu_b{index}_{thread}"


#: one program's answer in a batch (:func:`check_batch`): what :meth:`StaticBackend.run` puts in its
#: histogram's meta, or None where the program's own check must answer
BatchResult = dict[str, list[Any]] | None
#: a function that checks a batch as :func:`check_batch` does (a campaign's static-check pool); None: no answer
BatchChecker = Callable[[Sequence[Program], str, int], "list[BatchResult] | None"]


def batch_texts(programs: Sequence[Program]) -> dict[int, str]:
    """Each program's static kernels (by its index in ``programs``), each kernel renamed
    :func:`batch_kernel_name` so that the texts join into one translation unit; a program
    :func:`codegen.generate_static` refuses is left out."""
    texts: dict[int, str] = {}
    for i, p in enumerate(programs):
        try:
            src = codegen.generate_static(p)
        except UserError:
            continue
        for t in p.threads:
            src = src.replace(f" {codegen.static_kernel_name(t.name)}(unsigned* base)", f" {batch_kernel_name(i, t.name)}(unsigned* base)")
        texts[i] = src
    return texts


def check_batch(programs: Sequence[Program], arch: str, opt: int = 3) -> list[BatchResult]:
    """The static check of many programs at once: their kernels (each renamed
    :func:`batch_kernel_name`) in one translation unit, one nvcc and one nvdisasm, the SASS analysis
    function by function -- ptxas compiles each kernel on its own, so a kernel's SASS is the one a
    single compile gives (tests/backends/test_static_batch.py checks that the findings and the
    property verdicts agree with single checks).

    Per program, what :meth:`StaticBackend.run` puts in its histogram's meta (``sass_findings``,
    ``sass_notes``, ``sass_unchecked``), each finding named as in a single check (its kernel, its
    ``.litmus``, its CUDA source line); its PTX and SASS line numbers are those of the batch's
    listing, and so are the PTX lines its ``sass_unchecked`` items name (what the analysis of a
    kernel could not check is the single check's: the same kernel, the same SASS).  ``None`` for a
    program the single check must answer: one a note or unchecked item of the whole module names,
    with no static kernels, or whose kernels are missing from the batch's SASS.  A batch nvcc
    refuses is split in halves and each half checked again; a program refused on its own is
    ``None`` (its single check says why)."""
    texts = batch_texts(programs)
    out: list[BatchResult] = [None] * len(programs)
    _check_group(programs, texts, sorted(texts), arch, opt, out)
    return out


_BATCH_NAME = re.compile(r"\bfuzzgpu_b(\d+)_(\w+)")


def _single_name(m: re.Match[str]) -> str:
    return codegen.static_kernel_name(m.group(2))


def _as_single(d: dict[str, Any], function: str, program: str, shift: int) -> dict[str, Any]:
    """A finding of a batch as the program's own check states it: its kernel's name, its ``.litmus``,
    its source lines (``shift`` lines earlier in the batch's file than in its own)."""

    def line(m: re.Match[str]) -> str:
        return f":{int(m.group(1)) - shift})"

    d.update(function=function, source=f"{program}.litmus", reason=_BATCH_NAME.sub(_single_name, d["reason"]),
             crossed=tuple(re.sub(r":(\d+)\)$", line, _BATCH_NAME.sub(_single_name, c)) for c in d["crossed"]))
    if d["src_line"]:
        d["src_line"] -= shift
    return d


def _check_group(programs: Sequence[Program], texts: Mapping[int, str], idx: list[int], arch: str, opt: int,
                 out: list[BatchResult]) -> None:
    from .. import sass

    if not idx:
        return
    try:
        reports = sass.check_cu_source("".join(texts[i] for i in idx), (arch,), opt, source="batch.litmus", name="fuzzgpu_static",
                                       runtime_header=codegen.CUDA_DECLS)
    except UserError:
        if len(idx) > 1:  # one program's error breaks its batch: check the halves again
            _check_group(programs, texts, idx[: len(idx) // 2], arch, opt, out)
            _check_group(programs, texts, idx[len(idx) // 2 :], arch, opt, out)
        return
    first_line, line = {}, 1
    for i in idx:
        first_line[i] = line
        line += texts[i].count("\n")
    single = {batch_kernel_name(i, t.name): (i, codegen.static_kernel_name(t.name)) for i in idx for t in programs[i].threads}
    found: dict[int, dict[str, list[Any]]] = {i: {"sass_findings": [], "sass_notes": [], "sass_unchecked": []} for i in idx}
    seen: dict[int, set[str]] = {i: set() for i in idx}
    bad: set[int] = set()
    for rep in reports:
        for fn in rep.functions:
            if fn.name not in single:  # a function that is no program's kernel (a device function not inlined)
                return  # single checks for all
            i, name = single[fn.name]
            seen[i].add(fn.name)
            # what the analysis of this kernel could not check: the single check's items (the same
            # kernel, the same SASS), their PTX lines the batch listing's
            found[i]["sass_unchecked"] += [_BATCH_NAME.sub(_single_name, u) for u in fn.unchecked]
            found[i]["sass_findings"] += [_as_single(f.to_dict(), name, programs[i].name, first_line[i] - 1) for f in fn.findings]
            found[i]["sass_notes"] += [_BATCH_NAME.sub(_single_name, n) for n in fn.notes]
        for text in rep.unchecked + rep.notes:
            hit = {single[m.group(0)][0] for m in _BATCH_NAME.finditer(text) if m.group(0) in single}
            if not hit:
                return  # a module note naming no kernel: every program of the batch gets its single check
            bad |= hit
    for i in idx:
        if i not in bad and seen[i] == {batch_kernel_name(i, t.name) for t in programs[i].threads}:
            out[i] = {**found[i], "sass_listing": [f"one compile of {len(idx)} programs' kernels: a finding's PTX and SASS "
                                                   "line numbers, and a PTX line an unchecked item names, are that listing's"]}


class StaticBackend:
    """Implements the Backend protocol without executing anything (see the module doc)."""

    name = "static"
    deterministic = True

    def __init__(self, arch: str = "sm_90", opt: int = 3) -> None:
        from .. import sass

        sass.parse_arch(arch)
        self.arch = arch
        self.opt = opt
        self._toolchain: str | None = None
        #: where batches are checked together with other workers' (``campaign --static-pool``: the pool's
        #: ``fuzzgpu.backends.static_pool.PoolClient.check``, set by the worker process that builds this
        #: backend, ``attach_pool``); its answer is :func:`check_batch`'s, None when it gave none.  None: here
        self.pool: BatchChecker | None = None

    @property
    def toolchain(self) -> str:
        if self._toolchain is None:
            self._toolchain = _toolchain_id()
        return self._toolchain

    def identity(self) -> tuple[str, str, str]:
        return (f"static:O{self.opt}", self.arch, self.toolchain)

    def describe(self) -> str:
        return (f"static: no execution; nvcc -O{self.opt} for {self.arch} and the static SASS oracle "
                f"({self.toolchain})")

    def arch_for(self, program: Program) -> str:
        """The arch this program's kernels are compiled and checked for: this backend's, except for a
        program with a ``tcgen05.fence`` where that arch lacks tcgen05 (sm_90): sm_100a, the arch the
        instruction exists on (and the ``a`` target for a tensor-map rewrite, class D) -- compiled for sm_90 it stopped at the kernel's ``#error`` and the
        program was "not covered" (issue 27, item 7)."""
        from ..codegen.emit import tcgen05_arch_ok
        from ..codegen.runnable import tensormap_arch, uses_tensormap_rewrites
        from ..ir import TCGEN05_MEMORY_INSTRUCTIONS, Tcgen05Fence

        tcgen05: tuple[type, ...] = (Tcgen05Fence, *TCGEN05_MEMORY_INSTRUCTIONS)  # and tensor memory (classes E/G)
        if tcgen05_arch_ok(self.arch) or not any(isinstance(i, tcgen05) for t in program.threads for i in t.code):
            # tensormap.replace (class D) exists on the arch-specific targets only: sm_90 -> sm_90a
            return tensormap_arch(self.arch) if uses_tensormap_rewrites(program) else self.arch
        return TCGEN05_ARCH

    def _key(self, program: Program, src: str) -> str:
        return hashlib.sha256(f"{self.arch_for(program)}:{self.opt}:{src}".encode()).hexdigest()

    def prepare(self, programs: Sequence[Program]) -> None:
        """Check ``programs`` ahead, in batches per arch (:func:`check_batch`): a later :meth:`run`
        of a program the batch found clean answers from memory; the others are checked one by one
        when they run; a program given twice is checked once."""
        todo: dict[str, list[tuple[Program, str]]] = {}
        for p in dict.fromkeys(programs):
            try:
                src = codegen.generate_static(p)
            except UserError:
                continue
            if self._key(p, src) not in _SOURCE_CACHE:
                todo.setdefault(self.arch_for(p), []).append((p, src))
        for arch, group in todo.items():
            for (p, src), res in zip(group, self._check_batch([p for p, _ in group], arch)):
                if res is not None:
                    _SOURCE_CACHE[self._key(p, src)] = res
        while len(_SOURCE_CACHE) > 20_000:  # a long campaign: the oldest answers go first
            del _SOURCE_CACHE[next(iter(_SOURCE_CACHE))]

    def _check_batch(self, programs: list[Program], arch: str) -> list[BatchResult]:
        """:func:`check_batch` of ``programs``: the pool's answer when there is one, else here."""
        res = self.pool(programs, arch, self.opt) if self.pool is not None else None
        return res if res is not None else check_batch(programs, arch, self.opt)

    def run(self, program: Program, config: RunConfig | None = None, own: bool = False) -> Histogram:
        """The static check of ``program``: a batch's answer when :meth:`prepare` gave one (or an
        earlier check of the same source), else its own check; ``own``: its own check whatever was
        answered before (a saved finding's PTX and SASS line numbers are then its own listing's)."""
        from .. import sass

        t0 = time.perf_counter()
        src, generator = static_source(program)
        arch = self.arch_for(program)
        key = self._key(program, src)
        res = None if own else _SOURCE_CACHE.get(key)
        if res is None:  # its own check, here (not the pool's: a single program would wait for its round)
            reports = sass.check_cu_source(src, (arch,), self.opt, source=f"{program.name}.litmus", name="fuzzgpu_static",
                                           runtime_header=codegen.CUDA_DECLS)
            findings = [f.to_dict() for r in reports for f in r.findings]
            notes = [n for r in reports for fn in r.functions for n in fn.notes] + [n for r in reports for n in r.notes]
            # what the oracle could not check: no finding then does not mean "clean" (docs/sass.md)
            unchecked = [u for r in reports for fn in r.functions for u in fn.unchecked] + [u for r in reports for u in r.unchecked]
            res = {"sass_findings": findings, "sass_notes": notes, "sass_unchecked": unchecked}
            _SOURCE_CACHE[key] = res
        meta = (
            ("static", True),
            ("device", "none (static: compiled, not run)"),
            ("arch", arch),
            ("toolchain", self.toolchain),
            ("generator", generator),
            ("sass_findings", res["sass_findings"]),
            ("sass_notes", res["sass_notes"]),
            ("sass_unchecked", res["sass_unchecked"]),
        ) + ((("sass_listing", res["sass_listing"][0]),) if res.get("sass_listing") else ())
        return Histogram(program.outcome_keys(), (), 0, 0, time.perf_counter() - t0, "static", meta)

    def close(self) -> None:
        pass


def oracle_only(program: Program, static: StaticBackend, why: str) -> Histogram:
    """The answer for a program neither the GPU harness nor the static kernels can express: nothing
    ran, no SASS was checked (``sass_unchecked`` says why, so a pass is never "clean"); the
    properties judge the oracle's outcomes (the race property: its racy ones, count 0)."""
    meta: tuple[tuple[str, Any], ...] = (
        ("static", True),
        ("device", "none (not compiled: neither the harness nor the static kernels express it)"),
        ("arch", static.arch_for(program)),
        ("toolchain", static.toolchain),
        ("generator", "none"),
        ("sass_findings", []),
        ("sass_notes", []),
        ("sass_unchecked", [f"no SASS checked: {why}"]),
    )
    return Histogram(program.outcome_keys(), (), 0, 0, 0.0, "static", meta)


def _unrunnable(e: BaseException) -> bool:
    """Did the GPU backend refuse the program because its harness cannot run it (not a compile or
    driver error)?  A supervised worker's refusal comes back as the same exception, pickled."""
    from ..codegen import Unrunnable

    return isinstance(e, Unrunnable)


class CheckedBackend:
    """A GPU backend whose programs are also checked statically: the SASS findings of
    :class:`StaticBackend` join the GPU histogram's ``meta["sass_findings"]`` (DESIGN.md: the harness
    reports compiler reorderings as findings in their own right).  A program the GPU harness cannot
    run still gets its static check: where that check has SASS findings, the histogram is the static
    one (no outcomes).  ``judge_unrunnable`` (a campaign whose profile sets ``[static] unrunnable``): a program the harness cannot run at all
    (:class:`fuzzgpu.codegen.Unrunnable`: tcgen05 on sm_90, a register-level wgmma...) is answered by
    the static check whatever it found, as ``--backend static`` answers it -- the properties then judge
    the oracle's outcomes ("the oracle's finding (static)", rate 0) instead of the draw going
    uncovered; where the static kernels cannot express it either (a register-level wgmma), by the
    oracle alone, the histogram saying that no SASS was checked (:func:`oracle_only`).  Elsewhere
    (``fuzzgpu run``) the refusal is the answer."""

    deterministic = False

    def __init__(self, inner: Any, static: StaticBackend, judge_unrunnable: bool = False) -> None:
        self.inner = inner
        self.static = static
        self.judge_unrunnable = judge_unrunnable
        self.name = inner.name
        #: its run forwards a campaign worker's ``advice`` (``properties.RunAdvice``) to the GPU backend
        self.takes_advice = bool(getattr(inner, "takes_advice", False))

    def identity(self) -> tuple[str, str, str]:
        ident = getattr(self.inner, "identity", None)
        if ident:
            name, arch, tool = ident()
        else:  # the cuda backend: its description names the GPU, the driver and the arch
            name, arch, tool = self.inner.name, getattr(self.inner, "arch", self.static.arch), self.inner.describe()
        return (f"{name}+static", arch, f"{tool}|{self.static.toolchain}")

    def _driver(self) -> str:
        drv = getattr(self.inner, "drv", None)
        try:
            return str(drv.get_driver_version()) if drv is not None else "unknown"
        except Exception:  # noqa: BLE001 -- a description only; any driver error means "unknown"
            return "unknown"

    def describe(self) -> str:
        return f"{self.inner.describe()} + static SASS checks ({self.static.arch})"

    def prepare(self, programs: Sequence[Program]) -> None:
        """Both ahead: the static check in the worker thread while the harnesses compile here."""
        import concurrent.futures

        if not hasattr(self, "_pool"):
            self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="fuzzgpu-static")
        fut = self._pool.submit(self.static.prepare, programs)
        prepare = getattr(self.inner, "prepare", None)
        try:
            if prepare is not None:
                prepare(programs)
        finally:
            fut.result()

    def run(self, program: Program, config: RunConfig | None = None, advice: Any = None) -> Histogram:
        import concurrent.futures
        import dataclasses

        config = config or RunConfig()
        # the static compile (an nvcc subprocess) runs in a worker thread while the GPU backend
        # compiles and runs in this thread (its CUDA context is current here)
        if not hasattr(self, "_pool"):
            self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="fuzzgpu-static")
        fut = self._pool.submit(self.static.run, program, config)

        def static_result() -> Histogram | None:
            try:
                return fut.result()
            except UserError:  # nvcc refused the static kernels: the GPU run still counts
                return None

        try:
            h = self.inner.run(program, config, advice=advice) if advice is not None else self.inner.run(program, config)
        except UserError as e:
            sh = static_result()
            if sh is not None and (dict(sh.meta).get("sass_findings") or (self.judge_unrunnable and _unrunnable(e))):
                return sh
            static_error = fut.exception()
            if sh is None and self.judge_unrunnable and _unrunnable(e) and isinstance(static_error, UserError) and \
                    _unrunnable(static_error):
                return oracle_only(program, self.static, str(static_error))
            raise
        sh = static_result()
        if sh is None:
            return h
        meta = dict(h.meta)
        meta["sass_findings"] = dict(sh.meta)["sass_findings"]
        meta.setdefault("driver", self._driver())
        meta.setdefault("toolchain", self.static.toolchain)
        return dataclasses.replace(h, meta=tuple(meta.items()))

    def close(self) -> None:
        pool = getattr(self, "_pool", None)
        if pool is not None:
            pool.shutdown(wait=True)
        close = getattr(self.inner, "close", None)
        if close:
            close()


__all__ = ["CheckedBackend", "StaticBackend", "oracle_only", "static_source"]
