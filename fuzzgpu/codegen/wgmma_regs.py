"""Class F (issue 32) on the GPU: a one-thread program of ``mov``, ``ld`` and the wgmma register
instructions (:class:`fuzzgpu.ir.WgmmaMma` ...) as a stand-alone warpgroup kernel -- the litmus
harness has no register-A wgmma, so such programs are refused there and run here
(bench/wgmma_regs.py).

Every one of the 128 threads of a CTA (one warpgroup: ``.sync.aligned`` wants all of them) runs
the thread's code in one ``asm volatile`` block, in program order as written, its litmus registers
PTX registers of the block.  ``wgmma.mma_async d, a`` is
``wgmma.mma_async.sync.aligned.m64n16k32.s32.u8.u8 {d, d_1..d_7}, {a, a_1, a_2, a_3}, descB, p``
with scale-d false and B (:func:`b_words`) one in K byte 0 of every column and zero elsewhere: every
element of D's row is A's element (row, 0), the low byte of register ``a`` of the row's lane-0-of-4
thread (PTX ISA "Register Fragments", the m64nNk32 A and D figures) -- all 128 threads run the same
code, so ``d`` is the low byte of ``a`` as the wgmma read it (litmus values below 256).  ``ld`` reads
a global word of the ``locs`` array (its location's initial value).  Thread q of CTA b writes its
final value of register k (:func:`keys`) to ``out[(b * K + k) * 128 + q]``."""

from __future__ import annotations

from ..ir import Instruction, Load, Mov, Program, WgmmaCommit, WgmmaFence, WgmmaMma, WgmmaWait
from . import wgmma as wg

THREADS = 128
SHAPE = "m64n16k32"


def b_words() -> list[int]:
    """B (32 K x 16 N u8, the tile layout of :func:`fuzzgpu.codegen.wgmma.tile_offset`): K byte 0 of every column is 1."""
    b = bytearray(wg.B_BYTES)
    for n in range(16):
        b[wg.tile_offset(n, 0)] = 1
    return [int.from_bytes(b[4 * i:4 * i + 4], "little") for i in range(wg.B_BYTES // 4)]


def reasons(p: Program) -> list[str]:
    """Why ``p`` cannot run as this kernel (empty: it can)."""
    out = [] if all(k.startswith("P0:") for k in p.outcome_keys()) else ["outcome keys other than P0's registers"]
    if len(p.threads) != 1:
        out.append(f"{len(p.threads)} threads (the kernel runs one litmus thread per warpgroup thread)")
    for ins in (i for t in p.threads for i in t.code):
        if not isinstance(ins, (Mov, Load, WgmmaFence, WgmmaMma, WgmmaCommit, WgmmaWait)):
            out.append(f"{ins.OP}: only mov, ld and the wgmma register instructions")
        elif isinstance(ins, Mov) and isinstance(ins.src, int) and not 0 <= ins.src < 256:
            out.append(f"mov {ins.dst}, {ins.src}: a value of 0..255 (the u8 A fragment)")
    return out


def keys(p: Program) -> list[str]:
    """The registers the kernel writes out, in ``out``'s order: the program's outcome keys (all of thread P0),
    then every other register the code names (so that no write of a register is dead code to ptxas:
    an overwritten fragment nothing read again was dropped, and the hazard with it)."""
    out = {k.split(":", 1)[1]: None for k in p.outcome_keys() if ":" in k}
    for ins in p.threads[0].code:
        for r in (*ins.registers_read(), ins.register_written()):
            if r is not None:
                out[r] = None
    return list(out)


def _ptx(ins: Instruction, locs: dict[str, int]) -> str:
    if isinstance(ins, Mov):
        return f"mov.b32 {ins.dst}, {ins.src};"
    if isinstance(ins, Load):
        return f"ld.global.u32 {ins.dst}, [%{{LOCS}}+{4 * locs[ins.loc]}];"
    if isinstance(ins, WgmmaFence):
        return "wgmma.fence.sync.aligned;"
    if isinstance(ins, WgmmaMma):
        d = ", ".join([ins.dst] + [f"{ins.dst}_{i}" for i in range(1, 8)])
        a = ", ".join([ins.a] + [f"{ins.a}_{i}" for i in range(1, 4)])
        return f"wgmma.mma_async.sync.aligned.{SHAPE}.s32.u8.u8 {{{d}}}, {{{a}}}, %{{DESC}}, p_;"
    if isinstance(ins, WgmmaCommit):
        return "wgmma.commit_group.sync.aligned;"
    assert isinstance(ins, WgmmaWait)
    return f"wgmma.wait_group.sync.aligned {ins.n};"


def kernel_source(p: Program, name: str = "fz_wgr") -> str:
    """The kernel (``extern "C" __global__ void name(unsigned* out, const unsigned* locs, const unsigned* bw)``)."""
    bad = reasons(p)
    if bad:
        raise ValueError("; ".join(bad))
    regs = keys(p)
    init = dict(p.threads[0].init)
    locs = {loc.name: i for i, loc in enumerate(p.locations)}
    names = keys(p)
    n_out, desc, base = len(names), len(names), len(names) + 1
    decl = ", ".join(f"{r}{s}" for r in regs for s in ["", *(f"_{i}" for i in range(1, 8))])
    body = [f".reg .b32 {decl};", ".reg .pred p_;", "setp.ne.b32 p_, 0, 0;"]
    body += [f"mov.b32 {r}{s}, {init.get(r, 0) if s == '' else 0};" for r in regs for s in ["", *(f"_{i}" for i in range(1, 8))]]
    body += [_ptx(i, locs).replace("%{LOCS}", f"%{base}").replace("%{DESC}", f"%{desc}") for i in p.threads[0].code]
    body += [f"mov.b32 %{k}, {r};" for k, r in enumerate(names)]
    asm = "\\n\\t".join(body)
    outs = ", ".join(f'"=r"(o{k})' for k in range(n_out))
    stores = "\n".join(f"  out[(blockIdx.x * {n_out}u + {k}u) * {THREADS}u + t] = o{k};" for k in range(n_out))
    return f"""
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "class F kernels run wgmma.mma_async: compile for sm_90a"
#endif
extern "C" __global__ void __launch_bounds__({THREADS}) {name}(unsigned* out, const unsigned* locs, const unsigned* bw) {{
  __shared__ __align__(128) unsigned fz_b[{wg.B_BYTES // 4}];
  const unsigned t = threadIdx.x;
  fz_b[t] = bw[t];
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // B written generically, read by the wgmma
  __syncthreads();
  const unsigned long long desc = (unsigned long long)(((unsigned)__cvta_generic_to_shared(fz_b) & 0x3FFFFu) >> 4)
      | ((unsigned long long)({wg.LBO}u >> 4) << 16) | ((unsigned long long)({wg.SBO}u >> 4) << 32);
  unsigned {", ".join(f"o{k}" for k in range(n_out))};
  asm volatile("{{\\n\\t{asm}\\n\\t}}" : {outs} : "l"(desc), "l"(locs) : "memory");
{stores}
}}
"""


__all__ = ["SHAPE", "THREADS", "b_words", "kernel_source", "keys", "reasons"]
