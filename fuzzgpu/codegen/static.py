"""Static kernels (for fuzzgpu.sass): :func:`generate_static` writes one ``__global__`` kernel per
litmus thread, its instructions in order, every location a distinct compile-time offset from one
base pointer (:func:`static_offsets`)."""

from __future__ import annotations

from .. import ir, semantics
from ..ir import (
    CpAsyncBulk,
    Instruction,
    Program,
    Space,
)

from .emit import EmitContext, _labels, _registers, comment_text, emit_instruction, spread_locations
from .layout import cluster_rank_of
from .resources import PRELUDE
from .runnable import Unrunnable, _static_reasons

_SCRATCH_DECL = "#ifndef FUZZGPU_SCRATCH\n#define FUZZGPU_SCRATCH\n__shared__ unsigned fz_scratch_smem[256];\n#endif"


class _StaticCtx(EmitContext):
    def __init__(self, p: Program, offsets: dict[str, int]) -> None:
        self.p = p
        self.offsets = offsets
        self.raws: list[str] = []

    def load_result(self, dst: str, raw: str, loc: str) -> str:
        # every load result gets its own variable, kept alive by the sink store at the end
        v = f"ld{len(self.raws)}_"
        self.raws.append(v)
        return f"{v} = {raw}; {self.reg(dst)} = (int){v};"

    def set_result(self, dst: str, expr: str) -> str:
        # kept alive like a load result (a wait whose predicate is unused could be dropped)
        v = f"ld{len(self.raws)}_"
        self.raws.append(v)
        return f"{v} = (unsigned)({expr}); {self.reg(dst)} = (int){v};"

    def home_rank(self, loc: str) -> str:
        return f"{cluster_rank_of(self.p, loc)}u"

    def addr(self, loc: str) -> tuple[str, Space]:
        phys = self.p.physical(loc)
        off = self.offsets[phys]
        if self.p.location(phys).space is Space.SHARED:
            return f"(unsigned)__cvta_generic_to_shared(fz_static_smem + {off})", Space.SHARED
        return f"(base + {off})", Space.GLOBAL

    def tmem_address(self, loc: str) -> str:
        # lane 0, column k for the program's k-th ``tmem`` location (PTX ISA "Tensor Memory addressing":
        # lane in bits 31-16, column in 15-0); compiled, never run: no allocation hands it out
        cells = [x.name for x in self.p.locations if x.kind == ir.TMEM]
        return f"{cells.index(self.p.physical(loc))}u"

    def tensor_map(self, loc: str) -> tuple[str, str]:
        # one map over the base buffer (static kernels are compiled, never run: no host encodes it);
        # a tensor map in global memory (class D) is its location's 128-byte line, read at its target's offset
        target = self.p.location(loc).target
        if target is not None:
            return self.map_address(loc), f"{self.offsets[target]}"
        return "(unsigned long long)&fz_static_tmap", f"{self.offsets[self.p.physical(loc)]}"

    def map_address(self, m: str) -> str:
        return f"(unsigned long long)(base + {self.offsets[m]})"

    def retarget(self, m: str, loc: str) -> str:
        return f"(unsigned long long)(base + {self.offsets[self.p.physical(loc)]})"


STATIC_LOCATION_STRIDE = 32  # words: one 128-byte line per location
_TMAP_DECL = ("#ifndef FUZZGPU_STATIC_TMAP\n#define FUZZGPU_STATIC_TMAP\n"
              "__constant__ FzTensorMap fz_static_tmap;  // tensor copies' map (compiled, never run)\n#endif")


def static_offsets(p: Program) -> dict[str, int]:
    """Word offset of each (physical) location from the base pointer in :func:`generate_static`."""
    out: dict[str, int] = {}
    g = s = 0
    for loc in p.locations:
        if loc.alias_of is not None:
            continue
        if loc.space is Space.SHARED:
            out[loc.name] = s * STATIC_LOCATION_STRIDE
            s += 1
        else:
            out[loc.name] = g * STATIC_LOCATION_STRIDE
            g += 1
    return out


def static_kernel_name(thread: str) -> str:
    return f"fuzzgpu_{thread}"


def generate_static(program: Program, arch: str | None = None) -> str:
    """A CUDA C++ translation unit with one ``__global__`` kernel per litmus thread, named
    ``fuzzgpu_<thread name>``, taking ``unsigned* base``; the body is that thread's instructions in
    program order, every memory op, fence and barrier an ``asm volatile(... ::: "memory")``; global
    location ``x`` is ``base + static_offsets(program)["x"]`` (32 words apart), shared locations
    live in a ``__shared__`` array.  Registers start at the thread's initial values; after the
    thread's code, one guarded store of all load results combined (to the word after the last
    location) keeps every load alive, so ptxas deletes none; a repeated load of one location goes
    through ``address + k * fz_zero`` (a run-time 0) so that ptxas does not merge it, where the thread
    reads the location with weak loads alone (:func:`emit.spread_locations`).  Raises
    :class:`Unrunnable` for constructs without a PTX form (abstract proxies, async-proxy loads and
    stores, a bulk reduction into shared memory) and, with ``arch``, for instructions that arch
    lacks (``tcgen05.fence`` before sm_100a; without ``arch`` the kernel carries an ``#error`` for
    the device pass of such an arch, so nvcc stops with a clear message).

    Extension instructions are emitted as inline PTX too: ``griddepcontrol.*``, ``mbarrier.*``
    (a wait puts its predicate, 0 or 1, into the register), ``cp.async.bulk`` (16-byte slots: every
    litmus byte count is scaled by :data:`BULK_SCALE`), ``cp.async.*``, ``tcgen05.fence::*``;
    ``async.read`` (a wgmma/tcgen05 operand read, which has no value-returning PTX form) becomes a
    generic ``ld.shared`` with a comment.  Shared locations are 128-byte aligned and 128 bytes
    apart, so mbarrier objects and bulk operands are aligned."""
    semantics.checked(program)  # the Python API too: no name outside its grammar (no fence outside the table) reaches the source
    reasons = _static_reasons(program, arch)
    if reasons:
        raise Unrunnable(program.name, reasons, "has no static kernels (nothing to compile for the SASS check)")
    offsets = static_offsets(program)
    nsh = sum(1 for loc in program.locations if loc.space is Space.SHARED and loc.alias_of is None)
    out = [f"// fuzzgpu static kernels for {comment_text(program.name)}", PRELUDE, _SCRATCH_DECL]
    if any(isinstance(i, CpAsyncBulk) and i.tensor for t in program.threads for i in t.code) or any(
            loc.kind == ir.TENSORMAP for loc in program.locations):
        out.append(_TMAP_DECL)
    sink = STATIC_LOCATION_STRIDE * sum(
        1 for loc in program.locations if loc.alias_of is None and loc.space is Space.GLOBAL
    )
    for t in program.threads:
        ctx = _StaticCtx(program, offsets)
        ctx.spread = spread_locations(program, t)
        body: list[str] = []
        labels = _labels(t)
        for n, ins in enumerate(t.code):
            target = getattr(ins, "target", None)
            backward = target is not None and labels.get(target, n + 1) <= n
            body.append(f"  // {n}: {comment_text(_describe(ins))}")
            body.extend("  " + line for line in emit_instruction(ins, ctx, backward))
        out.append(f'extern "C" __global__ void {static_kernel_name(t.name)}(unsigned* base) {{')
        # a run-time 0 the compiler cannot prove (user pointers have the top bit clear)
        out.append("  const unsigned fz_zero = (unsigned)((unsigned long long)base >> 63); (void)fz_zero;")
        if nsh:
            # per kernel (several programs' kernels may share one translation unit); 128-byte
            # aligned, locations 128 bytes apart: mbarrier objects and bulk-copy slots are aligned
            out.append(f"  __shared__ __align__(128) unsigned fz_static_smem[{nsh * STATIC_LOCATION_STRIDE}];")
        regs = _registers(t)
        for r in regs:
            out.append(f"  int {r} = {t.init_value(r)};")
        for v in ctx.raws:
            out.append(f"  unsigned {v} = 0u;")
        out.extend(body)
        # distinct odd weights: no two load results can cancel (an XOR of equal values would)
        keep = [f"{2 * i + 1}u * {v}" for i, v in enumerate(ctx.raws)]
        if keep:
            # keep every load result alive (ptxas deletes a load whose result is never used, even
            # an asm volatile one): one unconditional store after the thread's code, to the word
            # after the last location.  (A store guarded by a never-true condition let ptxas sink
            # the loads into the guarded block, below every synchronisation point: that hid the
            # ld.global.nc hoist above griddepcontrol.wait that this check exists to find.  The
            # static kernels are compiled, never run.)
            out.append(f"  base[{sink}] = {' + '.join(keep)};")
        out.append("}")
    return "\n".join(out) + "\n"


def _describe(ins: Instruction) -> str:
    d = ir.instruction_to_json(ins)
    op = d.pop("op")
    return op + " " + " ".join(f"{k}={v}" for k, v in d.items())
