"""The parallel litmus harness that the CUDA backend runs (:func:`generate_harness`,
:func:`generate_module`, :func:`harness_source`): every hardware thread plays every role of the
program for a different instance, the outcome histogram built on the device, and the
:class:`HarnessSpec` the host needs to launch it and read the histogram back.  docs/harness.md
describes it."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Callable, Sequence

from . import wgmma as wg
from .. import semantics
from ..ir import (
    AsyncRead,
    CpAsyncBulk,
    ClusterBarrier,
    GridDepControl,
    Atom,
    Barrier,
    Branch,
    Filler,
    Goto,
    Instruction,
    Label,
    Load,
    Program,
    RmwOp,
    Space,
    TENSORMAP,
)

from .emit import BULK_SLOT_BYTES, EmitContext, _labels, _registers, comment_text, emit_instruction, spread_locations
from .layout import (
    Layout,
    _gslot,
    _inst_from_lane,
    _layout,
    _n_grids,
    _role_inst_expr,
    _slot_words,
    _sm_word,
    cluster_rank_of,
    min_cta_threads,
    shared_words,
    uses_dsm,
    uses_async_proxy,
    uses_tensor_maps,
    uses_wgmma,
)
from .resources import HARNESS_HELPERS as _HARNESS_HELPERS
from .resources import PRELUDE
from .role_lines import ALL_ROLES_MARK, OP_MARK, ROLE_MARK
from .runnable import Unrunnable, check_runnable
from .values import MAX_BINS, TAGGED, ValueCodec, _value_universe, value_plan

#: the largest histogram the device keeps in shared memory per CTA
MAX_SHARED_BINS = 4096
#: static shared memory a kernel may declare
STATIC_SHARED_BYTES = 48 * 1024
#: elements (32-bit) in the box of a harness tensor map: one location's 16-byte slot
#: (cuTensorMapEncodeTiled: boxDim[0] * element size a multiple of 16 bytes)
TENSOR_BOX = BULK_SLOT_BYTES // 4


#: every harness kernel's parameters, in order, (C type, name): the signature :func:`generate_harness` writes
#: and the arguments the cuda backend packs by name (backends/cuda.py, :func:`kernel_args`).  ``ptab`` and
#: ``pmask``: the launches' parameters, a row per launch number (backends/launch_params.py); ``epoch_arg``:
#: the launch number, or ~0 to read it from the control block (graph replay)
KERNEL_PARAMS: tuple[tuple[str, str], ...] = (
    ("unsigned*", "mem"), ("unsigned*", "res"), ("unsigned long long*", "hist"), ("unsigned long long*", "ctl"),
    ("const unsigned short*", "perms"), ("unsigned*", "scratch"), ("unsigned", "ntest"), ("unsigned", "stride"),
    ("unsigned", "spin"), ("unsigned", "barrier"), ("unsigned", "mode"), ("unsigned", "scratch_lines"),
    ("unsigned", "budget"), ("unsigned long long", "epoch0"), ("unsigned", "pdl_delay"),
    ("unsigned long long", "epoch_arg"), ("unsigned", "knobs"), ("const FzParams*", "ptab"), ("unsigned", "pmask"),
)


def kernel_args(values: dict[str, int]) -> list[tuple[str, int]]:
    """The arguments of a harness kernel, in :data:`KERNEL_PARAMS`' order, as ``(kind, value)`` with kind
    ``p`` (a pointer), ``u64`` or ``u32``; a name missing from ``values`` or one it does not take is a
    ``ValueError``."""
    names = [n for _, n in KERNEL_PARAMS]
    if set(values) != set(names):
        raise ValueError(f"kernel_args: missing {sorted(set(names) - set(values))}, unknown {sorted(set(values) - set(names))}")
    return [("p" if t.endswith("*") else "u64" if t == "unsigned long long" else "u32", values[n]) for t, n in KERNEL_PARAMS]


# --------------------------------------------------------------------------------------------
# The harness: outcome keys and value tables
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KeySpec:
    key: str  # "P0:r0" or a location name
    kind: str  # "reg" | "gloc" | "sloc"
    role: int  # role index (reg / sloc); -1 for global locations
    reg: str | None
    loc: str | None
    values: tuple[int, ...]  # known values; index len(values) is "other"

    @property
    def radix(self) -> int:
        return len(self.values) + 1


@dataclass(frozen=True)
class HarnessSpec:
    """What the host needs to run a generated harness kernel and read its histogram back."""

    program: str
    kernel: str
    keys: tuple[KeySpec, ...]
    nbins: int  # outcome bins; bin ``nbins`` counts timeouts
    cluster: int
    n_global_locs: int
    global_locs: tuple[str, ...]
    n_results: int  # result words per instance (register keys, shared finals, timeout flags, where words)
    needs_prime: bool  # a prime launch before each test launch: exact-value programs (initial values), tensor maps in global memory
    roles: int
    source_hash: str = ""
    #: one kernel per grid (launched in this order in one stream); ``kernel`` is the first
    kernels: tuple[str, ...] = ()
    #: per grid: launched as a programmatic dependent (PDL) of the grid before it
    pdl: tuple[bool, ...] = ()
    #: words per location slot (4: 16-byte slots for mbarriers and bulk copies); the host rounds
    #: the location stride up to a multiple of it
    slot_words: int = 1
    #: the value encoding (:class:`ValueCodec`): "tagged" or "exact"
    values: str = "tagged"
    #: the ``__constant__`` tensor map the host encodes over ``mem`` before the launches (a 1-D
    #: tiled map of 32-bit elements, box :data:`TENSOR_BOX` elements) and copies in; "" when the
    #: program has no tensor copy
    tensor_map: str = ""
    #: tensor maps in global memory the program rewrites (``tensormap`` locations, class D): the host
    #: allocates 128 bytes per map and instance after both halves of ``mem`` (the prime launch copies
    #: ``tensor_map`` into each before every test launch; docs/harness.md, "Tensor maps")
    tensormaps: int = 0
    #: the fewest threads a CTA of this harness runs with (RunConfig.cta_threads): 32 per distinct
    #: warp its roles need in one CTA, 256 for wgmma (two warpgroups read the tiles, codegen.wgmma)
    min_cta_threads: int = 32

    @property
    def grids(self) -> int:
        return max(1, len(self.kernels))

    def decode_bin(self, b: int) -> dict[str, int | None]:
        out: dict[str, int | None] = {}
        for k in self.keys:
            d = b % k.radix
            b //= k.radix
            out[k.key] = k.values[d] if d < len(k.values) else None
        return out

    def to_json(self) -> dict:
        import dataclasses

        return dataclasses.asdict(self)


def _key_specs(p: Program, lay: Layout) -> list[KeySpec]:
    """The outcome keys and their value tables: the oracle's domain of each key when it gives one
    (then a value outside the table, ``?``, is one no store of the program wrote), else a heuristic
    table, shrunk to the condition's values when the histogram would be too large."""
    plan = value_plan(p)
    if plan.tables is not None:
        tables = dict(plan.tables)
    else:
        universe = tuple(_value_universe(p, plan.codec))
        tables = {key: universe for key in p.outcome_keys()}
    idx = {t.name: i for i, t in enumerate(p.threads)}
    specs = []
    for key in p.outcome_keys():
        if ":" in key:
            th, reg = key.split(":", 1)
            specs.append(KeySpec(key, "reg", idx[th], reg, None, tables[key]))
        else:
            phys = p.physical(key)
            loc = p.location(phys)
            if loc.space is Space.SHARED:
                role = next(
                    (
                        i
                        for i, t in enumerate(p.threads)
                        for ins in t.code
                        if (name := getattr(ins, "loc", None)) is not None and p.physical(name) == phys
                    ),
                    0,
                )
                specs.append(KeySpec(key, "sloc", role, None, phys, tables[key]))
            else:
                specs.append(KeySpec(key, "gloc", -1, None, phys, tables[key]))
    nb = 1
    for s in specs:
        nb *= s.radix
    if nb > MAX_BINS and plan.tables is None:  # shrink to the values the condition and the initial state name
        small = {0} | {loc.init for loc in p.locations}
        if p.condition is not None:
            small |= {t for t in p.condition.terms() if isinstance(t, int)}
        specs = [KeySpec(s.key, s.kind, s.role, s.reg, s.loc, tuple(sorted(small))) for s in specs]
    return specs


# --------------------------------------------------------------------------------------------
# The harness: code
# --------------------------------------------------------------------------------------------


class _HarnessCtx(EmitContext):
    """Harness emission for role ``k``.  In a thread without branches a loaded register keeps the
    raw word (``k<k>_<r>_raw``) and is decoded where it is first used (or when the results are
    written): decoding right after the load would make the warp wait for the load before issuing
    the next instruction, which hides load->store reordering (LB)."""

    def __init__(self, p: Program, role: int, gidx: dict[str, int], sidx: dict[str, int], nsh: int,
                 lazy: bool = False, codec: ValueCodec = TAGGED, rank: int = 0, cluster: int = 1,
                 tmap: str | None = None, tmidx: dict[str, int] | None = None) -> None:
        self.p = p
        self.tmap = tmap  # the __constant__ tensor map over mem (tensor copies), or None
        self.tmidx = tmidx or {}  # tensormap location -> its index among the program's maps (class D)
        self.rank = rank  # the role's CTA rank in its cluster (RoleLayout.rank)
        self.cluster = cluster
        self.codec = codec
        self.k = role
        self.gidx = gidx
        self.sidx = sidx
        self.nsh = nsh
        self.lazy = lazy
        self.pending: dict[str, str] = {}  # register -> location whose raw word it holds
        self.spread = spread_locations(p, p.threads[role])

    def read(self, r: str) -> str:
        if r in self.pending:
            return self.dec(f"{self.reg(r)}_raw", self.pending[r])
        return self.reg(r)

    def write(self, r: str) -> str:
        self.pending.pop(r, None)
        return self.reg(r)

    def load_result(self, dst: str, raw: str, loc: str) -> str:
        if not self.lazy:
            return super().load_result(dst, raw, loc)
        self.pending[dst] = loc
        return f"{self.reg(dst)}_raw = {raw};"

    def reg(self, r: str) -> str:
        return f"k{self.k}_{r}"

    def home_rank(self, loc: str) -> str:
        # this instance's role of layout rank r runs in the CTA of hardware rank
        # (rank - self.rank + r) mod C (see _inst_from_lane); the location's CTA has layout rank h
        h, C = cluster_rank_of(self.p, loc), self.cluster
        return f"((rank + {C}u - {self.rank}u + {h}u) % {C}u)"

    def addr(self, loc: str) -> tuple[str, Space]:
        phys = self.p.physical(loc)
        if phys in self.sidx:
            return f"k{self.k}_sa{self.sidx[phys]}", Space.SHARED
        return f"k{self.k}_a{self.gidx[phys]}", Space.GLOBAL

    def tensor_map(self, loc: str) -> tuple[str, str]:
        # one 1-D map over the whole location buffer (both launch halves): the coordinate is the
        # word offset of this instance's slot of the location from mem (docs/harness.md, "Tensor maps")
        if self.tmap is None:
            raise TypeError(f"no tensor map for {loc} in this kernel")
        if loc in self.tmidx:  # a map in global memory (class D): a copy of the __constant__ map, at first
            a, _ = self.addr(self._target(loc))
            return self.map_address(loc), f"(int)({a} - mem)"
        a, _ = self.addr(loc)
        return f"(unsigned long long)&{self.tmap}", f"(int)({a} - mem)"

    def _target(self, m: str) -> str:
        target = self.p.location(m).target
        assert target is not None  # ir.tensormap: a tensor map names its target
        return target

    def map_address(self, m: str) -> str:
        return f"(unsigned long long)k{self.k}_m{self.tmidx[m]}"

    def retarget(self, m: str, loc: str) -> str:
        # the copy's coordinate is its target's word offset from mem: a map based at
        # mem + (loc's slot - the target's slot) reads loc's slot there (a 16-byte multiple)
        a, _ = self.addr(loc)
        t, _ = self.addr(self._target(m))
        return f"((unsigned long long)mem + 4ull * (unsigned long long)({a} - {t}))"

    def enc(self, expr: str) -> str:
        return self.codec.c_encode(expr)

    def enc_rmw(self, op: RmwOp, expr: str) -> str:
        return self.codec.c_operand(op, expr)

    def dec(self, raw: str, loc: str) -> str:
        init = self.p.location(self.p.physical(loc)).init
        return self.codec.c_decode(raw, "tagh", init)

    def label(self, name: str) -> str:
        return f"L{self.k}_{name}"

    def jump(self, target: str, backward: bool) -> str:
        if not backward:
            return f"goto {self.label(target)};"
        return f"if (++k{self.k}__spins > budget) {{ k{self.k}__tmo = 1u; goto L{self.k}___end; }} goto {self.label(target)};"

    def async_read(self, ins: AsyncRead) -> list[str]:
        # one wgmma of the warpgroup over location j's tile of this warpgroup (fuzzgpu.codegen.wgmma):
        # every thread of it plays this role for the instance whose word is in its slot
        j = self.sidx[self.p.physical(ins.loc)]
        tile = f"(unsigned)__cvta_generic_to_shared(fz_sm + {j}u * {wg.LOC_WORDS}u + (t >> 7) * {wg.TILE_BYTES // 4}u)"
        bmat = f"(unsigned)__cvta_generic_to_shared(fz_sm + NSH * {wg.LOC_WORDS}u)"
        # a use of the accumulator that ptxas cannot drop (fz_zero is 0 at run time, unknown to it):
        # with the value unused (an unobserved register) ptxas turned the wgmma into
        # "HGMMA.64x8x16.F16 RZ, gdesc[URZ], RZ" -- no read of the tile (an empty asm is no use)
        return [
            f"{{ unsigned raw_ = fz_wg_read({tile}, {bmat});  // async.read: wgmma.mma_async {wg.WGMMA_SHAPE} (async proxy)",
            "  if (fz_zero) scratch[0] = raw_;",
            f"  {self.load_result(ins.dst, 'raw_', ins.loc)} }}",
        ]

    def barrier(self, ins: Barrier) -> str:
        # every hardware thread runs every role: all threads of the CTA meet at each barrier
        # (counts are not honoured: the harness sees a subset of the allowed outcomes)
        if isinstance(ins.id, str):
            return f'asm volatile("barrier.sync %0;" :: "r"(({self.read(ins.id)}) & 15) : "memory");'
        return f'asm volatile("barrier.sync {ins.id};" ::: "memory");'


#: faults the harness can inject (``fuzzgpu campaign --gpu-fault``), to test a campaign's handling
#: of programs that hang or fault on the GPU: thread 0 of logical CTA 0 of grid 0, before the test
INJECTED_FAULTS = {
    # PTX trap: the launch fails ("unspecified launch failure"); the CUDA context is lost
    "trap": 'if (lcta == 0u && t == 0u) asm volatile("trap;" ::: "memory");',
    # a store to address 16: "an illegal memory access was encountered"; the context is lost
    "illegal-address": 'if (lcta == 0u && t == 0u) asm volatile("st.global.u32 [%0], %1;" :: "l"(16ull), "r"(1u) : "memory");',
    # an unbounded loop (no budget, unlike every wait the harness emits): the launch never ends
    "hang": 'if (lcta == 0u && t == 0u) for (;;) asm volatile("nanosleep.u32 1000;" ::: "memory");',
}


def generate_harness(program: Program, kernel: str | None = None, inject: str | None = None) -> tuple[str, HarnessSpec]:
    """The harness kernel(s) for ``program`` (without the prelude) and its :class:`HarnessSpec`.
    ``inject``: one of :data:`INJECTED_FAULTS` (testing only).

    A program with several grids (``Placement.grid``) gets one kernel per grid,
    ``<kernel>_g<g>``, launched one after the other in one stream (grid ``g`` in
    ``Program.pdl_grids`` as a programmatic dependent of grid ``g-1``); every kernel has the same
    parameters and spreads its roles over its CTAs as a one-grid harness does; grid 0 classifies
    the previous launch; the last grid to finish advances the launch counter."""
    semantics.checked(program)  # the Python API too: no name outside its grammar (no fence outside the table) reaches the source
    check_runnable(program)
    p = program
    lay = _layout(p)
    name = kernel or "fzh_" + _safe(p.name)
    G = _n_grids(p)
    kernels = [name] if G == 1 else [f"{name}_g{g}" for g in range(G)]
    pdl = tuple(g in p.pdl_grids for g in range(G))
    SW = _slot_words(p)
    gl = [loc.name for loc in p.locations if loc.alias_of is None and loc.space is Space.GLOBAL and loc.kind != TENSORMAP]
    tms = [loc.name for loc in p.locations if loc.kind == TENSORMAP]  # class D: maps in global memory
    tmidx = {n: q for q, n in enumerate(tms)}
    sl = [loc.name for loc in p.locations if loc.alias_of is None and loc.space is Space.SHARED]
    # only locations a thread or the condition touches
    gidx = {n: i for i, n in enumerate(gl)}
    sidx = {n: i for i, n in enumerate(sl)}
    NG = max(1, len(gl))
    NSH = len(sl)
    if len(gl) > 16:
        raise Unrunnable(p.name, ["more than 16 global locations"])
    if G > 8:  # the control block keeps 8 words per grid below the provenance words (FZ_PROV_COUNT)
        raise Unrunnable(p.name, ["more than 8 grids"])
    keys = _key_specs(p, lay)
    nbins = 1
    for k in keys:
        nbins *= k.radix
    # result words: one per register key or shared-final key, then one timeout flag per role, then
    # one "where" word per role (fz_where: the SM, CTA, warp and lane that played it; provenance)
    res_keys = [k for k in keys if k.kind in ("reg", "sloc")]
    n_results = len(res_keys) + 2 * len(p.threads)
    # programs with the exact codec (value_plan: RMWs, copies from a global location, values outside
    # 16 bits) get their global locations' initial values written before each launch ("prime"): an
    # RMW must act on the initial value, and a word without a launch tag must not be read as this
    # launch's
    codec = value_plan(p).codec
    prime_values = not codec.tagged
    # tensor maps in global memory (class D) are copied from the __constant__ map before each launch
    needs_prime = prime_values or bool(tms)
    C = lay.cluster
    ngroups = lay.n_cta_groups

    L: list[str] = []
    w = L.append
    w(f"// harness for {comment_text(p.name)}: {len(p.threads)} roles, {ngroups} CTA group(s), cluster {C}, {G} grid(s)"
      + (f", PDL grids {list(p.pdl_grids)}" if p.pdl_grids else ""))
    tmap = f"fz_tmap_{name}" if uses_tensor_maps(p) or tms else None
    if tmap is not None:
        # the tensor copies' 1-D tensor map over mem, encoded and copied here by the host before
        # the launches (CUDA C++ Programming Guide, TMA: a tensor map in constant memory); the
        # program never writes it
        w(f'extern "C" {{ __constant__ FzTensorMap {tmap}; }}')
    w(f"namespace ns_{name} {{")
    w(f"constexpr unsigned NG = {NG}u;")
    w("// exact-value (RMW) programs: initial values before each launch (not inlined: kept out of the test's code)")
    # its parameters are values, not the caller's FzParams: a reference would put FzParams on the
    # stack (local-memory stores in every launch's prologue, before the test)
    w("__device__ __noinline__ void prime(unsigned* memc, unsigned inst, unsigned ninst, unsigned stride,")
    w("                                   unsigned long long epoch, const FzParams* ptab, unsigned pmask,")
    w("                                   unsigned* tmaps) {")
    w("  FzParams P;")
    w("  fz_params(P, ptab, pmask, epoch);")
    w("  (void)tmaps; (void)P;")
    for j, n in enumerate(gl):
        if prime_values:
            w(f"  memc[{_gslot(j, 'inst')}] = {codec.c_encode(str(p.location(n).init), 'P.tagh')};")
    if tms:
        # every tensor map this instance's roles rewrite starts as the __constant__ map (its copies
        # read their target's slot), published to the tensormap proxy: the release proxy fence here,
        # the kernel boundary, the acquire proxy fence on the map in the test (_emit_test) -- the
        # pattern of PTX ISA "membar/fence" (fence.proxy.tensormap::generic) and the CUDA C++
        # Programming Guide, "Usage of a Modified Tensor Map"; a map the last launch rewrote is never
        # read through a stale cached copy
        w("  const unsigned* fz_src = (const unsigned*)&" + str(tmap) + ";")
        for q in range(len(tms)):
            w(f"  {{ unsigned* mq = tmaps + ((unsigned long long)inst * {len(tms)}u + {q}u) * 32ull;")
            w("    for (unsigned i = 0; i < 32u; ++i) mq[i] = fz_src[i]; }")
        w('  asm volatile("fence.proxy.tensormap::generic.release.gpu;" ::: "memory");  // harness: the maps to the tensormap proxy')
    if prime_values and uses_async_proxy(p) and gl:
        # the initial values reach the async proxy of the next (test) launch: a bulk copy from, or a
        # reduction into, a global location reads them there (PTX ISA 9.7.9.25.2 Async Proxy)
        w('  asm volatile("fence.proxy.async.global;" ::: "memory");  // harness: initial state to the async proxy')
    w("}")
    w("}")
    kernel_at = len(L)
    cluster_attr = f"__cluster_dims__({C}, 1, 1) " if C > 1 else ""
    shared_hist = nbins + 1 <= MAX_SHARED_BINS
    if tmap is not None and 4 * (shared_words(p) + nbins + 1 + 256) > STATIC_SHARED_BYTES:
        # tensor copies' 128-byte slots leave no room for the histogram in static shared memory
        shared_hist = False
    res_inits: list[int] = [p.location(k.loc).init if k.kind == "sloc" and k.loc is not None else 0 for k in res_keys]
    for g, kname in enumerate(kernels):
        roles_g = [k for k in lay.order if p.threads[k].placement.grid == g]
        triggers = any(
            isinstance(i, GridDepControl) and i.action == "launch_dependents" for k in roles_g for i in p.threads[k].code
        )
        w(f'extern "C" __global__ void {cluster_attr}__launch_bounds__(256) {kname}(')
        w("    " + ", ".join(f"{ctype} {pname}" for ctype, pname in KERNEL_PARAMS) + ") {")
        w(f"  using namespace ns_{name};")
        w(f"  constexpr unsigned NSH = {NSH}u, NRES = {n_results}u, NBINS = {nbins}u, SW = {SW}u;  (void)SW; (void)NRES;")
        if NSH and uses_wgmma(p):
            # async.read programs: every shared location in two 2 KB wgmma tiles, then B (codegen.wgmma)
            w(f"  __shared__ __align__(128) unsigned fz_sm[NSH * {wg.LOC_WORDS}u + {wg.B_BYTES // 4}u];")
        elif NSH and tmap is not None:
            # tensor copies: a region per location, 128-byte slots for a tensor copy's operand (layout.py)
            w(f"  __shared__ __align__(128) unsigned fz_sm[{shared_words(p)}u];")
        elif NSH:
            w("  __shared__ __align__(16) unsigned fz_sm[NSH * 256u * SW];")
        if any(isinstance(i, Filler) and i.kind == "smem" for k in roles_g for i in p.threads[k].code):
            w("  __shared__ unsigned fz_scratch_smem[256];")
        if shared_hist and g == 0:
            w("  __shared__ unsigned fz_hist[NBINS + 1u];")
        w("  const unsigned t = threadIdx.x;")
        w("  const unsigned fz_zero = (unsigned)((unsigned long long)mem >> 63);  // a run-time 0 (repeated loads)")
        w("  // the launch number: a kernel argument (RunConfig.host_epoch), or read from the control block")
        w("  // (one argument set for every launch: launches replay from a CUDA graph)")
        w("  const unsigned long long epoch = (epoch_arg != ~0ull) ? epoch_arg : fz_ld_vol64(ctl);")
        w(f"  unsigned long long* const ctlg = ctl + {8 * g}u;  // this grid's counters: [1] CTAs done, [2] barrier, [3] warps done")
        w("  const unsigned ninst = ntest * blockDim.x;  // RunConfig.cta_threads: a power of two")
        w(f"  const unsigned nQ = ntest / {C}u;")
        w(f"  const unsigned rank = blockIdx.x % {C}u;")
        w("  FzParams P;")
        w("  fz_params(P, ptab, pmask, epoch);")
        w(f"  const unsigned lq = perms[P.pidx * (gridDim.x / {C}u) + blockIdx.x / {C}u];")
        w(f"  const unsigned lcta = lq * {C}u + rank;")
        w("  const bool testing = lcta < ntest;")
        if any(k.kind == "gloc" for k in keys):
            # the final values of global locations are classified inside the next launch, while it
            # writes: two buffers, alternating per launch
            w("  unsigned* memc = mem + (unsigned long long)(epoch & 1ull) * ((unsigned long long)ninst * NG * stride);")
        else:
            # one buffer, as the probe harness had (facts/h200-litmus-probe.md): each location was
            # last written by the previous launch.  Alternating two buffers (the last write two
            # launches back) raised MP rel/acq.cta with weak data at stride 32 about 30-60x on an
            # H200 (bench/results/table1-probe.json, toggle twobuf)
            w("  unsigned* memc = mem;")
        w("  const unsigned tagh = P.tagh;")
        if tms:  # class D: 128 bytes per tensor map and instance after both halves of mem
            w("  unsigned* const tmaps = mem + 2ull * ninst * NG * stride;")
        w("  (void)pdl_delay; (void)fz_zero; (void)nQ; (void)tagh; (void)memc;")
        if g == 0 and needs_prime:
            # ---- mode 2: prime memory with tagged initial values (RMW programs)
            w("  if (mode == 2u) {")
            w("    if (testing) prime(memc, (lcta << P.lb) | t, ninst, stride, epoch, ptab, pmask, "
              + ("tmaps" if tms else "nullptr") + ");")
            w("    return;")
            w("  }")
        # mode 0: test, then classify the previous launch; 3: test only (a mode-1 launch classifies);
        # 1: classify only; 2: prime memory (RMW programs)
        w("  if (mode == 0u || mode == 3u) {")
        w("    if (testing) {")
        if inject is not None and g == 0:
            if inject not in INJECTED_FAULTS:
                raise ValueError(f"unknown injected fault {inject!r} (one of {sorted(INJECTED_FAULTS)})")
            w(f"      {INJECTED_FAULTS[inject]}  // INJECTED FAULT: {inject}")
        if roles_g:
            _emit_test(p, lay, gl, sl, gidx, sidx, res_keys, w, roles_g, SW, res_inits, codec, tmap, tmidx)
        else:
            w("      // no litmus thread in this grid: its CTAs only take part in the launch")
            w("      __syncwarp();")
            w("      if ((t & 31u) == 0u) atomicAdd(ctlg + 3, 1ull);")
        w("    } else {")
        if triggers:
            w('      asm volatile("griddepcontrol.launch_dependents;" ::: "memory");  // stress CTAs do not hold the dependents back')
        w("      fz_stress(scratch, scratch_lines, ctlg, ntest * (blockDim.x >> 5), knobs);  // stress CTA: until every testing warp is done")
        w("    }")
        w("  }")
        if g == 0:
            w("  if (testing && (mode == 1u || (mode == 0u && epoch > epoch0))) {")
            hist_arg = "fz_hist" if shared_hist else "nullptr"
            w(f"    fzc_{name}(mem, res, hist, {hist_arg}, lcta, ninst, stride, ptab, pmask, epoch, ctl);")
            w("  }")
        w("  if (mode == 0u || mode == 3u) {")
        w("    __syncthreads();")
        w("    if (t == 0u) {")
        w("      __threadfence();")
        w("      unsigned long long old = atomicAdd(ctlg + 1, 1ull);")
        w("      if (old == (unsigned long long)gridDim.x - 1ull) {")
        if G == 1:
            w("        ctl[1] = 0ull; ctl[2] = 0ull; ctl[3] = 0ull; __threadfence(); ctl[0] = epoch + 1ull;")
        else:
            # the grids of one launch may finish in any order (a PDL dependent need not wait for
            # its primary): the last grid to finish advances the launch counter
            w("        ctlg[1] = 0ull; ctlg[2] = 0ull; ctlg[3] = 0ull; __threadfence();")
            w(f"        if (atomicAdd(ctl + 4, 1ull) == {G - 1}ull) {{ ctl[4] = 0ull; __threadfence(); ctl[0] = epoch + 1ull; }}")
        w("      }")
        w("    }")
        w("  }")
        w("}")
    # the classification, not inlined: its accesses stay out of the test's straight-line code
    CK: list[str] = []
    CK.append(f"__device__ __noinline__ void fzc_{name}(const unsigned* mem, const unsigned* res, "
             "unsigned long long* hist, unsigned* fz_hist, unsigned lcta, unsigned ninst, unsigned stride, "
             "const FzParams* ptab, unsigned pmask, unsigned long long epoch, unsigned long long* ctl) {")
    CK.append(f"  constexpr unsigned NG = {NG}u, NRES = {n_results}u, NBINS = {nbins}u;")
    CK.append("  const unsigned t = threadIdx.x;")
    _emit_check(p, keys, res_keys, res_inits, gl, nbins, shared_hist, CK.append, codec)
    CK.append("}")
    L[kernel_at:kernel_at] = CK
    src = "\n".join(L) + "\n"
    spec = HarnessSpec(
        program=p.name,
        kernel=kernels[0],
        keys=tuple(keys),
        nbins=nbins,
        cluster=C,
        n_global_locs=NG,
        global_locs=tuple(gl),
        n_results=n_results,
        needs_prime=needs_prime,
        roles=len(p.threads),
        source_hash=hashlib.sha256(src.encode()).hexdigest()[:16],
        kernels=tuple(kernels),
        pdl=pdl,
        slot_words=SW,
        values="tagged" if codec.tagged else "exact",
        tensor_map=tmap or "",
        tensormaps=len(tms),
        min_cta_threads=min_cta_threads(p),
    )
    return src, spec


def _emit_test(p, lay: Layout, gl, sl, gidx, sidx, res_keys, w: Callable[[str], None], roles: Sequence[int],
               SW: int, res_inits: list[int], codec: ValueCodec, tmap: str | None, tmidx: dict[str, int]) -> None:
    """The test of the roles ``roles`` (those of one grid): instances, addresses, the litmus code,
    the result words.  Fills ``res_inits`` (the initial value a raw result word decodes against)
    for the result keys of these roles."""
    ind = "      "
    mbar = {loc.name for loc in p.locations if loc.kind == "mbarrier"}
    # per role: instance, addresses, registers
    for k in roles:
        r = lay.roles[k]
        t = p.threads[k]
        for line in _role_inst_expr(lay, r, "t", f"inst{k}"):
            w(ind + line)
        used = {p.physical(n) for i in t.code for n in i.locations()}
        maps = [n for n in tmidx if n in used]
        used |= {p.location(n).target or n for n in maps}  # a copy through a map reads at its target's coordinate
        for n in gl:
            if n in used:
                j = gidx[n]
                w(ind + f"unsigned* k{k}_a{j} = memc + {_gslot(j, f'inst{k}')};")
        for n in maps:
            q = tmidx[n]
            w(ind + f"unsigned* k{k}_m{q} = tmaps + ((unsigned long long)inst{k} * {len(tmidx)}u + {q}u) * 32ull;")
            if any(isinstance(i, CpAsyncBulk) and i.src_loc == n for i in t.code):
                # the map as the prime launch wrote it, in this thread's tensormap proxy: the acquire
                # of the release in prime() (no cached copy of the map the last launch rewrote)
                w(ind + f'asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" :: "l"(k{k}_m{q}) : "memory");'
                  "  // harness: this launch's map")
        for n in sl:
            if n in used:
                j = sidx[n]
                w(ind + f"unsigned k{k}_sa{j} = (unsigned)__cvta_generic_to_shared(fz_sm + {_sm_word(p, lay, n, j, f'inst{k}_L')});")
        for reg in _registers(t):
            w(ind + f"int k{k}_{reg} = {t.init_value(reg)};")
        for reg in dict.fromkeys(i.dst for i in t.code if isinstance(i, (Load, Atom, AsyncRead))):
            w(ind + f"unsigned k{k}_{reg}_raw = 0u; (void)k{k}_{reg}_raw;")
        w(ind + f"unsigned k{k}__tmo = 0u, k{k}__spins = 0u; (void)k{k}__spins;")
    data_sl = [n for n in sl if n not in mbar]
    if sl:
        w(ind + "// shared locations: initial values, every launch (mbarrier objects: the program inits them)")
        for n in data_sl:
            j = sidx[n]
            w(ind + f"fz_sm[{_sm_word(p, lay, n, j, 't')}] = {codec.c_encode(str(p.location(n).init))};")
        if uses_wgmma(p):
            w(ind + f"if (t < {wg.B_BYTES // 4}u) fz_sm[NSH * {wg.LOC_WORDS}u + t] = fz_wg_b[t];")
        if uses_async_proxy(p):
            # the initial values (and the wgmma selection matrix B) reach the async proxy before the
            # test: a proxy fence in every writer, then the CTA barrier below.  The litmus initial
            # state precedes every access in every proxy; without the fence a bulk copy or reduction
            # could read the slot as the previous launch left it (PTX ISA 9.7.9.25.2 Async Proxy:
            # "Accessing the same memory location across multiple proxies needs a cross-proxy
            # fence"; wgmma.fence: "an async proxy fence must be used to establish an ordering
            # between prior writes to shared memory matrices and subsequent reads of the same
            # matrices in a wgmma.mma_async")
            w(ind + 'asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // harness: initial state to the async proxy')
        if uses_dsm(p):
            # distributed shared memory: no CTA reaches another's slots before that CTA wrote their
            # initial values (the whole cluster tests: ntest is a multiple of the cluster size)
            w(ind + 'asm volatile("barrier.cluster.arrive.release;\\n\\tbarrier.cluster.wait.acquire;" ::: "memory");  // DSM: slots initialised cluster-wide')
        else:
            w(ind + "__syncthreads();")
    w(ind + "if ((knobs >> 8) & FZ_PRE_STRESS_MASK) fz_pre_stress(scratch, scratch_lines, knobs);  // pre-test stress")
    w(ind + "if (barrier) {  // loose global barrier: one lane per warp counts in, polls at most 1024 times")
    w(ind + "  if ((t & 31u) == 0u) {")
    w(ind + "    atomicAdd(ctlg + 2, 1ull);")
    w(ind + "    for (unsigned i = 0; i < 1024u; ++i) if (fz_ld_vol64(ctlg + 2) >= (unsigned long long)ntest * (blockDim.x >> 5)) break;")
    w(ind + "  }")
    w(ind + "  __syncwarp();")
    w(ind + "}")
    w(ind + "if (spin) fz_delay(fz_mix(P.seed ^ (lcta * 8u + (t >> 5))) % spin);  // per-warp random delay")
    ctxs: dict[int, _HarnessCtx] = {}
    # barrier programs run in segments: segment j of every role, then one CTA-wide barrier, so that
    # the j-th barrier of every role of an instance is one hardware barrier episode
    separators = (Barrier, ClusterBarrier)  # barrier.cluster: see _cluster_barrier_reasons
    nseg = 1 + max(sum(isinstance(i, separators) for i in p.threads[k].code) for k in roles)
    boundary: dict[int, Instruction] = {}
    pos = {k: 0 for k in roles}
    for seg in range(nseg):
        for k in roles:
            t = p.threads[k]
            if k not in ctxs:
                straight = not any(isinstance(i, (Branch, Goto, Label)) for i in t.code)
                ctxs[k] = _HarnessCtx(p, k, gidx, sidx, len(sl), lazy=straight, codec=codec,
                                      rank=lay.roles[k].rank, cluster=lay.cluster, tmap=tmap, tmidx=tmidx)
            ctx = ctxs[k]
            labels = _labels(t)
            w(ind + f"{ROLE_MARK}{k}: {comment_text(t.name)}" + (f" (segment {seg})" if nseg > 1 else ""))
            while pos[k] < len(t.code):
                n = pos[k]
                ins = t.code[n]
                pos[k] += 1
                if isinstance(ins, separators):
                    boundary.setdefault(seg, ins)
                    break
                target = getattr(ins, "target", None)
                backward = target is not None and labels.get(target, n + 1) <= n
                for line in emit_instruction(ins, ctx, backward):
                    w(ind + line + f"  {OP_MARK}{k}.{n}")  # which instruction of which role: op_lines
                if isinstance(ins, GridDepControl) and ins.action == "launch_dependents":
                    # the primary runs on long after its trigger (a %globaltimer delay, ns), so
                    # that a dependent that reads too early reads before the primary's writes
                    w(ind + "if (pdl_delay) fz_gdelay(pdl_delay);  // PDL: the primary runs long after its trigger")
            if seg == nseg - 1:
                w(ind + f"L{k}___end: ;")
        if seg < nseg - 1:
            sep = boundary.get(seg)
            if isinstance(sep, ClusterBarrier):  # the litmus cluster barrier, all roles at once
                for line in emit_instruction(sep, ctxs[roles[0]]):
                    w(ind + line + f"  // the litmus cluster barrier, {ALL_ROLES_MARK}")
            else:
                w(ind + f'asm volatile("barrier.sync 1;" ::: "memory");  // the litmus barrier, {ALL_ROLES_MARK}')
    # results
    resc = "res + (unsigned long long)(epoch & 1ull) * ((unsigned long long)NRES * ninst)"
    w(ind + f"unsigned* resc = {resc};")
    # result words are raw: a register that still holds a loaded word is stored as loaded (decoding
    # it here would let ptxas schedule the decode -- a wait for the load -- before later test stores);
    # other values are stored encoded.  The check phase of the next launch decodes them.
    mine = set(roles)
    for ri, ks in enumerate(res_keys):
        if ks.role not in mine:
            continue
        if ks.kind == "reg":
            c = ctxs[ks.role]
            if ks.reg in c.pending:
                res_inits[ri] = p.location(p.physical(c.pending[ks.reg])).init
                w(ind + f"resc[{ri}ull * ninst + inst{ks.role}] = k{ks.role}_{ks.reg}_raw;")
            else:
                res_inits[ri] = 0
                w(ind + f"resc[{ri}ull * ninst + inst{ks.role}] = {c.enc(c.read(ks.reg))};")
        else:
            res_inits[ri] = p.location(ks.loc).init
    if any(ks.kind == "sloc" and ks.role in mine for ks in res_keys):
        w(ind + "__syncthreads();")
        for ri, ks in enumerate(res_keys):
            if ks.kind == "sloc" and ks.role in mine:
                r = lay.roles[ks.role]
                for line in _inst_from_lane(lay, r, "t", f"sinst{ri}"):
                    w(ind + line)
                w(ind + f"resc[{ri}ull * ninst + sinst{ri}] = fz_sm[{_sm_word(p, lay, ks.loc, sidx[ks.loc], 't')}];")
    for k in roles:
        w(ind + f"resc[{len(res_keys) + k}ull * ninst + inst{k}] = k{k}__tmo;")
    for k in roles:
        w(ind + f"resc[{len(res_keys) + len(p.threads) + k}ull * ninst + inst{k}] = fz_where();  // provenance")
    if uses_dsm(p):
        # a CTA's shared memory must outlive the other CTAs' accesses to it (and the next launch's
        # initialisation must not overtake them): the cluster meets once more
        w(ind + 'asm volatile("barrier.cluster.arrive.release;\\n\\tbarrier.cluster.wait.acquire;" ::: "memory");  // DSM: no CTA leaves while others may reach its shared memory')
    w(ind + "__syncwarp();")
    w(ind + "if ((t & 31u) == 0u) atomicAdd(ctlg + 3, 1ull);")


def _emit_check(p, keys, res_keys, res_inits, gl, nbins, shared_hist, w, codec: ValueCodec) -> None:
    ind = "    "
    w(ind + "// classify the previous launch's instances; the histogram lives on the device")
    w(ind + "const unsigned long long pe = epoch - 1ull;")
    w(ind + "FzParams PP;")
    w(ind + "fz_params(PP, ptab, pmask, pe);")
    w(ind + "const unsigned inst = (lcta << PP.lb) | t;")
    w(ind + "const unsigned* resp = res + (unsigned long long)(pe & 1ull) * ((unsigned long long)NRES * ninst);")
    w(ind + "const unsigned* memp = mem + (unsigned long long)(pe & 1ull) * ((unsigned long long)ninst * NG * stride);")
    w(ind + "unsigned tmo = 0u;")
    w(ind + f"for (unsigned k = {len(res_keys)}u; k < {len(res_keys) + len(p.threads)}u; ++k) tmo |= resp[(unsigned long long)k * ninst + inst];")
    w(ind + "unsigned bin = 0u, mult = 1u; int v;")
    ri = {ks.key: i for i, ks in enumerate(res_keys)}
    gidx = {n: i for i, n in enumerate(gl)}
    for ks in keys:
        if ks.kind == "gloc":
            j = gidx[ks.loc]
            slot = _gslot(j, "inst").replace("P.", "PP.")
            init = p.location(ks.loc).init
            w(ind + f"{{ unsigned raw = *(volatile const unsigned*)(memp + {slot}); v = {codec.c_decode('raw', 'PP.tagh', init)}; }}")
        else:
            k = ri[ks.key]
            w(ind + f"v = {codec.c_decode(f'resp[{k}ull * ninst + inst]', 'PP.tagh', res_inits[k])};")
        conds = " ".join(f"v == {val} ? {d}u :" for d, val in enumerate(ks.values))
        w(ind + f"bin += mult * ({conds} {len(ks.values)}u); mult *= {ks.radix}u;")
    w(ind + "if (tmo) bin = NBINS;")
    # provenance: an instance whose bin the host marked (the oracle's forbidden outcomes) is logged
    # with its launch, instance and every role's where word (fz_where) -- PROV_* in the prelude
    nroles = len(p.threads)
    w(ind + "if (bin < FZ_PROV_BINS && ((ctl[FZ_PROV_WATCH + bin / 64u] >> (bin % 64u)) & 1ull)) {")
    w(ind + "  const unsigned long long slot = atomicAdd(ctl + FZ_PROV_COUNT, 1ull);")
    w(ind + f"  if (slot < FZ_PROV_CAP) {{ unsigned long long* e = ctl + FZ_PROV_LOG + slot * {2 + nroles}ull;")
    w(ind + "    e[0] = (pe << 32) | inst; e[1] = bin;")
    for k in range(nroles):
        w(ind + f"    e[{2 + k}] = resp[{len(res_keys) + nroles + k}ull * ninst + inst];")
    w(ind + "  }")
    w(ind + "}")
    if shared_hist:
        w(ind + "for (unsigned b = t; b <= NBINS; b += blockDim.x) fz_hist[b] = 0u;")
        w(ind + "__syncthreads();")
        w(ind + "atomicAdd(&fz_hist[bin], 1u);")
        w(ind + "__syncthreads();")
        w(ind + "for (unsigned b = t; b <= NBINS; b += blockDim.x) if (fz_hist[b]) atomicAdd(hist + b, (unsigned long long)fz_hist[b]);")
    else:
        w(ind + "atomicAdd(hist + bin, 1ull);")


def _safe(name: str) -> str:
    s = "".join(c if c.isalnum() else "_" for c in name)
    return s[:40] + "_" + hashlib.sha1(name.encode()).hexdigest()[:6]


def generate_module(programs: Sequence[Program], inject: str | None = None) -> tuple[str, list[HarnessSpec]]:
    """One translation unit holding the harness kernels of many programs (batched compilation);
    kernel names are ``fzh_<i>_<name>``.  Raises :class:`Unrunnable` for the first program that
    cannot run: filter with :func:`unrunnable_reasons` first."""
    parts = [PRELUDE, _HARNESS_HELPERS]
    if any(uses_wgmma(p) for p in programs):
        parts.append(wg.helpers())
    specs = []
    for i, p in enumerate(programs):
        src, spec = generate_harness(p, kernel=f"fzh_{i}_{_safe(p.name)}", inject=inject)
        parts.append(src)
        specs.append(spec)
    return "\n".join(parts), specs


def harness_source(program: Program, inject: str | None = None) -> tuple[str, HarnessSpec]:
    """A complete translation unit for one program's harness (``inject``: see :data:`INJECTED_FAULTS`)."""
    src, specs = generate_module([program], inject=inject)
    return src, specs[0]
