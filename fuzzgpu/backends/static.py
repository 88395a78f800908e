"""The ``static`` backend: no execution.  It compiles a program's kernels (one ``__global__`` per
litmus thread, :func:`fuzzgpu.codegen.generate_static`) with nvcc for one arch, disassembles them and
runs the static SASS oracle (:mod:`fuzzgpu.sass`).  A finding is a memory operation ptxas moved
across a synchronisation point -- e.g. an ``ld.global.nc`` hoisted above ``griddepcontrol.wait``
(FlashMLA's PDL + ``__ldg`` race) -- reported with the PTX and SASS lines.

It returns a :class:`~fuzzgpu.backends.base.Histogram` with no outcomes (nothing ran) and the SASS
findings in ``meta["sass_findings"]``; :mod:`fuzzgpu.properties` fails on the findings that matter.
Compiling is deterministic for one toolchain, so ``deterministic = True`` (the evidence cache answers
a repeated question without compiling again).

Until :mod:`fuzzgpu.codegen` emits the extension instructions (``griddepcontrol``, ``mbarrier``,
``cp.async.bulk``, ``cp.async``...), this module carries a small emitter for them
(:data:`EXTENSION_EMITTERS`); every other instruction is written by ``codegen.emit_instruction``.  The
kernels follow ``generate_static``'s layout (``fuzzgpu_<thread>(unsigned* base)``, each location a
distinct compile-time offset, every op ``asm volatile(... ::: "memory")``), and every register is
stored to a sink at the end: with ``generate_static``'s ``(void)r0;`` ptxas deletes a load whose
value is unused, and with it the very reordering this backend looks for.
"""

from __future__ import annotations

import hashlib
import subprocess
import time
from collections.abc import Callable
from typing import Any

from .. import codegen, ir
from ..errors import UserError
from ..ir import Program, Space
from .base import Histogram, RunConfig

_SOURCE_CACHE: dict[str, dict[str, Any]] = {}


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


# -- the extension emitter (used only while codegen refuses these instructions) ----------------


class _Ctx(codegen.EmitContext):
    def __init__(self, p: Program) -> None:
        self.p = p
        self.offsets = codegen.static_offsets(p)

    def addr(self, loc: str) -> tuple[str, Space]:
        phys = self.p.physical(loc)
        off = self.offsets[phys]
        if self.p.location(phys).space is Space.SHARED:
            return f"(unsigned)__cvta_generic_to_shared(fz_ext_smem + {off})", Space.SHARED
        return f"(base + {off})", Space.GLOBAL


def _griddep(ins: ir.GridDepControl, ctx: _Ctx) -> list[str]:
    return [f'asm volatile("griddepcontrol.{ins.action};" ::: "memory");']


def _mbar_init(ins: ir.MbarrierInit, ctx: _Ctx) -> list[str]:
    a, _ = ctx.addr(ins.bar)
    return [f'asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"({a}), "r"({ins.count}) : "memory");']


def _mbar_arrive(ins: ir.MbarrierArrive, ctx: _Ctx) -> list[str]:
    a, _ = ctx.addr(ins.bar)
    if ins.expect_tx is not None:
        return [f'asm volatile("mbarrier.arrive.expect_tx.{ins.sem}.{ins.scope}.shared::cta.b64 _, [%0], {ins.expect_tx};" :: "r"({a}) : "memory");']
    return [f'asm volatile("mbarrier.arrive.{ins.sem}.{ins.scope}.shared::cta.b64 _, [%0], {ins.count};" :: "r"({a}) : "memory");']


def _mbar_wait(ins: ir.MbarrierWait, ctx: _Ctx) -> list[str]:
    a, _ = ctx.addr(ins.bar)
    return [
        "{ unsigned ok_;",
        f'  asm volatile("{{ .reg .pred p; mbarrier.{ins.kind}.parity.{ins.sem}.{ins.scope}.shared::cta.b64 p, [%1], {ins.parity}; selp.u32 %0, 1, 0, p; }}" : "=r"(ok_) : "r"({a}) : "memory");',
        f"  {ctx.reg(ins.dst)} = (int)ok_; }}",
    ]


def _mbar_expect_tx(ins: ir.MbarrierExpectTx, ctx: _Ctx) -> list[str]:
    a, _ = ctx.addr(ins.bar)
    return [f'asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], {ins.tx};" :: "r"({a}) : "memory");']


#: bulk copies move whole 16-byte units: the static kernels copy 16 bytes (locations are 128 apart)
BULK_BYTES = 16


def _bulk(ins: ir.CpAsyncBulk, ctx: _Ctx) -> list[str]:
    d, dspace = ctx.addr(ins.dst_loc)
    s, _ = ctx.addr(ins.src_loc)
    n = max(BULK_BYTES, (ins.size + 15) // 16 * 16)
    if ins.completion == "mbarrier":  # global -> shared
        b, _ = ctx.addr(ins.bar or "")
        return [(f'asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], {n}, [%2];" '
                 f':: "r"({d}), "l"({s}), "r"({b}) : "memory");')]
    if dspace is Space.GLOBAL:  # shared -> global, bulk group
        if ins.reduce is not None:
            return [(f'asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.{ins.reduce}.u32 [%0], [%1], {n};" '
                     f':: "l"({d}), "r"({s}) : "memory");')]
        return [f'asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], {n};" :: "l"({d}), "r"({s}) : "memory");']
    raise codegen.Unrunnable("static", [f"cp.async.bulk {ins.src_loc} -> {ins.dst_loc}: no static form for this direction"])


def _bulk_commit(ins: ir.BulkCommit, ctx: _Ctx) -> list[str]:
    return ['asm volatile("cp.async.bulk.commit_group;" ::: "memory");']


def _bulk_wait(ins: ir.BulkWait, ctx: _Ctx) -> list[str]:
    return [f'asm volatile("cp.async.bulk.wait_group{".read" if ins.read else ""} {ins.n};" ::: "memory");']


def _cp_async(ins: ir.CpAsync, ctx: _Ctx) -> list[str]:
    d, _ = ctx.addr(ins.dst_loc)
    s, _ = ctx.addr(ins.src_loc)
    return [f'asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"({d}), "l"({s}) : "memory");']


def _cp_async_commit(ins: ir.CpAsyncCommit, ctx: _Ctx) -> list[str]:
    return ['asm volatile("cp.async.commit_group;" ::: "memory");']


def _cp_async_wait(ins: ir.CpAsyncWait, ctx: _Ctx) -> list[str]:
    if ins.n is None:
        return ['asm volatile("cp.async.wait_all;" ::: "memory");']
    return [f'asm volatile("cp.async.wait_group {ins.n};" ::: "memory");']


def _cp_async_mbar(ins: ir.CpAsyncMbarrierArrive, ctx: _Ctx) -> list[str]:
    a, _ = ctx.addr(ins.bar)
    return [f'asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" :: "r"({a}) : "memory");']


EXTENSION_EMITTERS: dict[type, Callable[[Any, _Ctx], list[str]]] = {
    ir.GridDepControl: _griddep,
    ir.MbarrierInit: _mbar_init,
    ir.MbarrierArrive: _mbar_arrive,
    ir.MbarrierWait: _mbar_wait,
    ir.MbarrierExpectTx: _mbar_expect_tx,
    ir.CpAsyncBulk: _bulk,
    ir.BulkCommit: _bulk_commit,
    ir.BulkWait: _bulk_wait,
    ir.CpAsync: _cp_async,
    ir.CpAsyncCommit: _cp_async_commit,
    ir.CpAsyncWait: _cp_async_wait,
    ir.CpAsyncMbarrierArrive: _cp_async_mbar,
}


def _extension_source(p: Program) -> str:
    """Static kernels for a program whose only obstacle in codegen is an extension instruction."""
    ctx = _Ctx(p)
    nsh = sum(1 for loc in p.locations if loc.space is Space.SHARED and loc.alias_of is None)
    out = [f"// fuzzgpu static kernels for {p.name} (extension emitter of fuzzgpu.backends.static)", codegen.PRELUDE,
           "#ifndef FUZZGPU_SCRATCH\n#define FUZZGPU_SCRATCH\n__shared__ unsigned fz_scratch_smem[256];\n#endif"]
    if nsh:
        out.append(f"__shared__ __align__(128) unsigned fz_ext_smem[{nsh * codegen.STATIC_LOCATION_STRIDE}];")
    for t in p.threads:
        regs: dict[str, None] = {r: None for r, _ in t.init}
        for ins in t.code:
            d = ins.register_written()
            if d:
                regs[d] = None
            for r in ins.registers_read():
                regs[r] = None
        labels = {ins.name: n for n, ins in enumerate(t.code) if isinstance(ins, ir.Label)}
        out.append(f'extern "C" __global__ void {codegen.static_kernel_name(t.name)}(unsigned* base) {{')
        out.extend(f"  int {r} = {t.init_value(r)};" for r in regs)
        for n, ins in enumerate(t.code):
            out.append(f"  // {n}: {ins.OP}")
            emit = EXTENSION_EMITTERS.get(type(ins)) if type(ins) not in getattr(codegen, "_KNOWN", ()) else None
            if emit is not None:
                lines = emit(ins, ctx)
            else:
                target = getattr(ins, "target", None)
                lines = codegen.emit_instruction(ins, ctx, target is not None and labels.get(target, n + 1) <= n)
            out.extend("  " + l for l in lines)
        # keep every register alive: a load whose value is unused is deleted by ptxas (and its
        # ordering with it), which would hide exactly the moves this backend looks for
        sink = (1 + max(ctx.offsets.values(), default=0)) + codegen.STATIC_LOCATION_STRIDE
        out.extend(f"  base[{sink + k}] = (unsigned){r};" for k, r in enumerate(regs))
        out.append("}")
    return "\n".join(out) + "\n"


def static_source(p: Program) -> tuple[str, str]:
    """(CUDA source, which generator wrote it).

    The kernels are :func:`codegen.generate_static`'s layout, every instruction written by
    :func:`codegen.emit_instruction` (the one place PTX is spelled), except the extension
    instructions codegen does not emit yet (:data:`EXTENSION_EMITTERS`); and every register is
    stored to a sink at the end, so that ptxas cannot delete a load whose value is unused."""
    try:
        codegen.generate_static(p)
    except codegen.Unrunnable as e:
        others = [r for r in e.reasons if "not supported by code generation yet" not in r]
        kinds = {type(i) for t in p.threads for i in t.code}
        unknown = {k for k in kinds if k not in getattr(codegen, "_KNOWN", ()) and k not in EXTENSION_EMITTERS}
        if others or unknown:
            raise
    return _extension_source(p), "static-backend kernels (codegen.emit_instruction + extension emitter)"


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

    def run(self, program: Program, config: RunConfig | None = None) -> Histogram:
        from .. import sass

        t0 = time.perf_counter()
        src, generator = static_source(program)
        key = hashlib.sha256(f"{self.arch}:{self.opt}:{src}".encode()).hexdigest()
        res = _SOURCE_CACHE.get(key)
        if res is None:
            reports = sass.check_cu_source(src, (self.arch,), self.opt, source=f"{program.name}.litmus", name="fuzzgpu_static")
            findings = [f.to_dict() for r in reports for f in r.findings]
            notes = [n for r in reports for fn in r.functions for n in fn.notes] + [n for r in reports for n in r.notes]
            res = {"sass_findings": findings, "sass_notes": notes}
            _SOURCE_CACHE[key] = res
        meta = (
            ("static", True),
            ("device", "none (static: compiled, not run)"),
            ("arch", self.arch),
            ("toolchain", self.toolchain),
            ("generator", generator),
            ("sass_findings", res["sass_findings"]),
            ("sass_notes", res["sass_notes"]),
        )
        return Histogram(program.outcome_keys(), (), 0, 0, time.perf_counter() - t0, "static", meta)

    def close(self) -> None:
        pass


__all__ = ["EXTENSION_EMITTERS", "StaticBackend", "static_source"]


class CheckedBackend:
    """A GPU backend whose programs are also checked statically: the SASS findings of
    :class:`StaticBackend` join the GPU histogram's ``meta["sass_findings"]`` (DESIGN.md: the harness
    reports compiler reorderings as findings in their own right).  A program the GPU harness cannot
    run (e.g. a PDL pair while the harness has no PDL launch) still gets its static check: the
    histogram is then the static one (no outcomes)."""

    deterministic = False

    def __init__(self, inner: Any, static: StaticBackend) -> None:
        self.inner = inner
        self.static = static
        self.name = inner.name

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

    def run(self, program: Program, config: RunConfig | None = None) -> Histogram:
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
            h = self.inner.run(program, config)
        except UserError:
            sh = static_result()
            if sh is not None and dict(sh.meta).get("sass_findings"):
                return sh
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
