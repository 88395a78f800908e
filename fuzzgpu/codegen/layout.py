"""The harness layout: where each role (litmus thread) of an instance runs (:func:`_layout`:
cluster group, CTA rank, warp and lane classes, and the order in which every hardware thread plays
the roles), and where each location of an instance lives in memory (global slots, shared words,
the wgmma tiles of ``async.read`` programs), as the C++ expressions of those maps.
docs/harness.md describes the bijections."""

from __future__ import annotations

from dataclasses import dataclass

from . import wgmma as wg
from .. import ir
from ..ir import (
    AsyncRead,
    CpAsync,
    CpAsyncBulk,
    CpAsyncMbarrierArrive,
    MbarrierArrive,
    MbarrierCompleteTx,
    MbarrierExpectTx,
    MbarrierInit,
    MbarrierWait,
    Branch,
    Goto,
    Program,
    Space,
)

from .emit import BULK_SLOT_BYTES, _labels

#: threads per CTA of the harness at most (8 warps; RunConfig.cta_threads picks 32-256 per run): a
#: role's warp class is below 8, an instance's lane below 256
CTA_THREADS = 256
MAX_CLUSTER = 8


class _LayoutError(Exception):
    pass


@dataclass(frozen=True)
class RoleLayout:
    """Where role (litmus thread) ``index`` of an instance runs, relative to the instance."""

    thread: str
    index: int  # position in Program.threads
    cluster_group: int  # different clusters (or CTAs when clusters are 1 CTA) get different groups
    rank: int  # CTA rank inside the cluster
    cta_group: int  # index of the CTA (cluster_group, rank) among all CTA groups
    warp_class: int  # distinct warps inside the CTA
    lane_class: int  # distinct lanes inside the warp


@dataclass(frozen=True)
class Layout:
    roles: tuple[RoleLayout, ...]
    cluster: int  # CTAs per cluster (1: no __cluster_dims__)
    n_cluster_groups: int
    n_cta_groups: int
    order: tuple[int, ...]  # order in which each hardware thread runs the roles
    warps: int = 1  # the most distinct warps one CTA's roles need: a CTA of fewer warps cannot run them


def _layout(p: Program) -> Layout:
    clusters: dict[tuple[int, int, int], int] = {}
    ctas: dict[tuple[int, int, int, int], tuple[int, int]] = {}
    ranks: dict[int, int] = {}
    roles = []
    warp_classes: dict[int, dict[object, int]] = {}
    lanes: dict[tuple[int, int], int] = {}
    for i, t in enumerate(p.threads):
        pl = t.placement
        ck = (pl.gpu, pl.grid, pl.cluster_id)
        cg = clusters.setdefault(ck, len(clusters))
        tk = (pl.gpu, pl.grid, pl.cluster_id, pl.cta)
        if tk not in ctas:
            r = ranks.get(cg, 0)
            ranks[cg] = r + 1
            ctas[tk] = (len(ctas), r)
        tg, rank = ctas[tk]
        wmap = warp_classes.setdefault(tg, {})
        wkey: object = ("w", pl.warp) if pl.warp is not None else ("t", t.name)
        wc = wmap.setdefault(wkey, len(wmap))
        lc = lanes.get((tg, wc), 0)
        lanes[(tg, wc)] = lc + 1
        roles.append(RoleLayout(t.name, i, cg, rank, tg, wc, lc))
    cluster = max(ranks.values()) if ranks else 1
    if cluster > MAX_CLUSTER:
        raise _LayoutError(f"{cluster} CTAs in one cluster (at most {MAX_CLUSTER})")
    if cluster & (cluster - 1):
        # an instance's index is (cluster index * C + CTA rank) << log2(CTA threads) | lane, over a power-of-two
        # number of instances (the test CTAs, a multiple of C: _inst_from_lane, launch_geometry)
        raise _LayoutError(f"{cluster} CTAs in one cluster: the harness runs clusters of 1, 2, 4 or 8 CTAs "
                           "(its test CTAs, a power of two, are whole clusters)")
    if any(len(w) > CTA_THREADS // 32 for w in warp_classes.values()):
        raise _LayoutError(f"more than {CTA_THREADS // 32} distinct warps in one CTA")
    if any(n > 32 for n in lanes.values()):
        raise _LayoutError("more than 32 threads in one warp")
    # shared locations: used from one CTA only (distributed shared memory: a location of a declared
    # CTA, which ir.validate checks, is reached from the other CTAs of its cluster through mapa)
    for loc in p.locations:
        if loc.space is Space.SHARED and loc.cta is None:
            groups = {
                roles[i].cta_group
                for i, t in enumerate(p.threads)
                for ins in t.code
                if (name := getattr(ins, "loc", None)) is not None and p.physical(name) == loc.name
            }
            if len(groups) > 1:
                raise _LayoutError(f"shared location {loc.name} is accessed from different CTAs")
    # roles without backward jumps first, so spin loops mostly wait on roles that already ran
    def has_loop(t: ir.Thread) -> bool:
        lab = _labels(t)
        return any(
            isinstance(ins, (Branch, Goto)) and lab.get(ins.target, n + 1) <= n for n, ins in enumerate(t.code)
        )

    order = tuple(sorted(range(len(p.threads)), key=lambda i: (has_loop(p.threads[i]), i)))
    warps = max((len(w) for w in warp_classes.values()), default=1)
    return Layout(tuple(roles), cluster, len(clusters), len(ctas), order, warps)


def min_cta_threads(p: Program) -> int:
    """The fewest threads a harness CTA of ``p`` runs with (RunConfig.cta_threads, a power of two):
    a warp for each distinct warp its roles need in one CTA, rounded up to a power of two (three
    warps: 128 threads), 256 for a wgmma (two warpgroups read the tiles: codegen.wgmma); 256 for a
    program the harness cannot lay out (it runs nothing)."""
    try:
        lay = _layout(p)
    except _LayoutError:
        return CTA_THREADS
    return CTA_THREADS if uses_wgmma(p) else 32 << (lay.warps - 1).bit_length()


def cluster_rank_of(p: Program, loc: str) -> int:
    """The rank, in its cluster, of the CTA a shared location belongs to (``Location.cta``): CTAs
    of a cluster are ranked in the order the program's threads first name them (as the harness
    layout ranks them); a CTA no thread runs in comes after those."""
    home = p.location(p.physical(loc))
    users = [t.placement for t in p.threads if any(p.physical(n) == home.name for i in t.code for n in i.locations())]
    if home.cta is None or not users:
        return 0
    pl0 = users[0]
    cluster = (pl0.gpu, pl0.grid, pl0.cluster_id)
    ranks: dict[int, int] = {}
    for t in p.threads:
        pl = t.placement
        if (pl.gpu, pl.grid, pl.cluster_id) == cluster:
            ranks.setdefault(pl.cta, len(ranks))
    return ranks.get(home.cta, len(ranks))


def uses_wgmma(p: Program) -> bool:
    """Whether the harness runs an ``async.read`` of ``p`` as a wgmma (needs sm_90a)."""
    return any(isinstance(i, AsyncRead) for t in p.threads for i in t.code)


def _wgmma_readers(p: Program) -> dict[str, list[int]]:
    """Shared location -> the roles that read it with ``async.read`` (more than one is refused by
    :func:`_wgmma_reasons`)."""
    out: dict[str, list[int]] = {}
    for k, t in enumerate(p.threads):
        for i in t.code:
            if isinstance(i, AsyncRead):
                roles = out.setdefault(p.physical(i.loc), [])
                if k not in roles:
                    roles.append(k)
    return out


def uses_dsm(p: Program) -> bool:
    """Whether a thread accesses another CTA's shared memory (``.shared::cluster``)."""
    return any(getattr(i, "shared_cluster", False) for t in p.threads for i in t.code)


def _role_inst_expr(lay: Layout, r: RoleLayout, lane: str, out: str) -> list[str]:
    """C++ computing ``out`` = the instance whose role ``r`` this thread plays, given its lane ``t``
    (``lane`` names the thread's lane variable).  See docs/harness.md for the bijection."""
    g = r.cta_group
    L = f"{out}_L"
    lines = [
        f"unsigned {L} = (fz_unrot({lane}, {r.warp_class}u, P.mw, {r.lane_class}u, P.ml, P.wm) * P.finv[{g}]) & P.cm;",
    ]
    lines += _inst_from_lane(lay, r, L, out)
    return lines


def _inst_from_lane(lay: Layout, r: RoleLayout, L: str, out: str) -> list[str]:
    a = r.cluster_group
    if lay.n_cluster_groups > 1 and a > 0:
        m = f"((nQ - 1u) / {lay.n_cluster_groups - 1}u)"
        # knob bit 7 (stripe_ctas): cluster group a sits a clusters on, every instance alike
        # (cuda-litmus's stripe_workgroup: the roles in neighbouring CTAs, started together);
        # off: a random distance per lane and launch
        dq = f"({a}u * ((knobs & 128u) ? 1u : (1u + (({L} + P.seed) % {m}))))"
    else:
        dq = "0u"
    C = lay.cluster
    rk = f"((rank + {C}u - {r.rank}u) % {C}u)" if C > 1 else "0u"
    return [f"unsigned {out} = ((((lq + nQ - {dq}) % nQ) * {C}u + {rk}) << P.lb) | {L};"]


def _gslot(j: int, inst: str) -> str:
    """Word offset of global location ``j`` of instance ``inst`` (P: that launch's params)."""
    if j == 0:
        return f"((unsigned long long)({inst}) * (NG * stride))"
    return f"((unsigned long long)((({inst}) * P.F[{j}] + P.Cc[{j}]) & (ninst - 1u)) * (NG * stride) + {j}u * stride)"


def _n_grids(p: Program) -> int:
    return 1 + max(t.placement.grid for t in p.threads)


def _slot_words(p: Program) -> int:
    """Words per location slot: 4 (16 bytes, aligned) when the program has mbarrier objects or
    asynchronous copies (bulk copies move 16-byte aligned slots; mbarriers are 8-byte objects)."""
    ext = (CpAsyncBulk, CpAsync, MbarrierInit, MbarrierArrive, MbarrierWait, MbarrierExpectTx, MbarrierCompleteTx, CpAsyncMbarrierArrive)
    if any(loc.kind == "mbarrier" for loc in p.locations) or any(
        isinstance(i, ext) for t in p.threads for i in t.code
    ):
        return BULK_SLOT_BYTES // 4
    return 1


#: words per instance slot of a shared location that a tensor copy reads or writes: 128 bytes, so
#: that its address is 128-byte aligned (CUDA C++ Programming Guide, "Using TMA to transfer
#: multi-dimensional arrays", alignment requirements: the shared memory address of a bulk tensor
#: copy must be 128-byte aligned; 16 bytes suffice for the non-tensor cp.async.bulk)
TENSOR_SLOT_WORDS = 32


def tensor_shared_locs(p: Program) -> tuple[str, ...]:
    """The (physical) shared locations that a tensor copy (``cp.async.bulk.tensor``) reads or
    writes, in declaration order."""
    used = {p.physical(n) for t in p.threads for i in t.code if isinstance(i, CpAsyncBulk) and i.tensor
            for n in (i.dst_loc, i.src_loc)}
    return tuple(loc.name for loc in p.locations if loc.alias_of is None and loc.space is Space.SHARED and loc.name in used)


def uses_async_proxy(p: Program) -> bool:
    """Whether ``p`` accesses memory in the async proxy: a bulk copy or reduction
    (``cp{.reduce}.async.bulk{.tensor}``) or an ``async.read`` (wgmma operands).  Its harness then
    fences the initial values it writes into the async proxy (PTX ISA 9.7.9.25.2 Async Proxy:
    "Accessing the same memory location across multiple proxies needs a cross-proxy fence")."""
    return any(isinstance(i, (CpAsyncBulk, AsyncRead)) for t in p.threads for i in t.code)


def uses_tensor_maps(p: Program) -> bool:
    """Whether the harness of ``p`` needs a tensor map (a ``cp.async.bulk.tensor``)."""
    return any(isinstance(i, CpAsyncBulk) and i.tensor for t in p.threads for i in t.code)


def _shared_slot_words(p: Program) -> list[int]:
    """Words per instance slot of each shared location (declaration order): ``_slot_words(p)``,
    :data:`TENSOR_SLOT_WORDS` for a tensor copy's operand."""
    tensor = set(tensor_shared_locs(p))
    sw = _slot_words(p)
    return [TENSOR_SLOT_WORDS if loc.name in tensor else sw
            for loc in p.locations if loc.alias_of is None and loc.space is Space.SHARED]


def shared_words(p: Program) -> int:
    """The words of ``fz_sm`` for the 256 instances of a CTA, when the program has a tensor copy
    (each shared location a region of 256 slots of its own size)."""
    return 256 * sum(_shared_slot_words(p))


def _sm_word(p: Program, lay: Layout, loc: str, j: int, L: str) -> str:
    """C++ word offset in ``fz_sm`` of shared location ``loc`` (index ``j``) of the instance of
    lane ``L``.  Plain programs: ``(L * NSH + j) * SW``.  Programs with a tensor copy: location
    j's region (256 slots each), then the lane's slot in it (:func:`_shared_slot_words`).  Programs with ``async.read``: the slot,
    in location j's tiles, of the hardware thread that plays the CTA's reading role for that
    instance -- the role that reads the location with ``async.read`` -- (the inverse of
    :func:`_role_inst_expr`; fuzzgpu.codegen.wgmma), so that the warpgroup's wgmma reads, for each
    of its threads, that thread's own instance's word."""
    if uses_tensor_maps(p):
        # a region of 256 slots per location, 128-byte slots for a tensor copy's operand
        words = _shared_slot_words(p)
        return f"({256 * sum(words[:j])}u + ({L}) * {words[j]}u)"
    if not uses_wgmma(p):
        return f"(({L}) * NSH + {j}u) * SW"
    readers = _wgmma_readers(p).get(loc, [])
    k = readers[0] if readers else None
    if k is None:  # a location no async.read reads: any bijection will do
        q = f"(({L}) & 255u)"
    else:
        r = lay.roles[k]
        q = f"fz_rot((({L}) * P.f[{r.cta_group}]) & P.cm, {r.warp_class}u, P.mw, {r.lane_class}u, P.ml, P.wm)"
    return f"({j}u * {wg.LOC_WORDS}u + fz_wg_word({q}))"
