"""Hypothesis strategies for Programs.

Usable in your own ``@given`` tests (docs/fuzzing.md)::

    from hypothesis import given
    from fuzzgpu import strategies as fst

    @given(fst.classic("MP"))               # message passing with random annotations
    def test_my_property(program): ...

    @given(fst.programs("pdl"))             # what `fuzzgpu campaign --profile pdl` draws
    def test_pdl(program): ...

Shapes: the classic litmus shapes (:data:`CLASSIC_SHAPES`: MP, SB, LB, S, R, 2+2W, IRIW, WRC, ISA2,
CoRR, CoWW) with random annotations (load type including ``ld.volatile`` and ``ld.global.nc``, store
type, fences and where they go, scopes including ``.cluster``, thread placement: same CTA, different
CTAs, CTAs of one cluster), and the patterns (:data:`PATTERNS`): a PDL handoff between two grids, a
shared-memory -> bulk-copy (TMA) store, a bulk copy -> mbarrier -> generic read, an mbarrier
producer/consumer, cp.async, free-form random programs, and two bounded waits: a spin on a flag
(``SPIN``) and a loop around ``mbarrier.try_wait`` (``MBAR-SPIN``).  With the ``hangs`` option these
two also draw programs whose wait may never complete (:data:`HANG_TYPES`: a flag nobody sets, a wait
for a value nobody stores, an mbarrier with fewer arrivals than its count), whose timeouts on a GPU
are expected, not findings (``fuzzgpu.model.termination``).

The general generator, :func:`producer_consumer` (``HANDOFF`` in a profile; profile ``all``), draws a
data handoff from every mechanism the oracle covers (:data:`MECHANISMS`, placements
:data:`HANDOFF_PLACEMENTS`)::

    @given(fst.producer_consumer(mechanisms=("cp.async", "bar"), placements=("same-cta",)))
    def test_my_handoff(program): ...

Stores write distinct non-zero values (so an observed outcome fixes reads-from); shrinking goes
toward fewer threads, fewer instructions and the default annotations (weak accesses, no fence,
``.cta`` scope, one CTA), because every choice lists its simplest option first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence

import hypothesis.strategies as st

from ..ir import (
    And,
    Atom,
    Barrier,
    Branch,
    BulkCommit,
    BulkWait,
    Cmp,
    Cond,
    Condition,
    CpAsync,
    CpAsyncBulk,
    CpAsyncCommit,
    CpAsyncWait,
    Fence,
    Filler,
    GridDepControl,
    Instruction,
    Label,
    Load,
    Location,
    MbarrierArrive,
    MbarrierInit,
    MbarrierWait,
    Placement,
    Program,
    ProxyFence,
    ProxyFenceKind,
    RegRef,
    RmwOp,
    Scope,
    Sem,
    Space,
    Store,
    Thread,
    validate,
)

from .producer_consumer import (  # noqa: E402
    FENCE_NAMES, HANDOFF_PLACEMENTS, ONE_WAY_FENCES, READ_KINDS, UNRUNNABLE, producer_consumer, profile_fences, side_fences,
)
from ..semantics import DRAWN as MECHANISMS  # noqa: E402
from ..profiles import (  # noqa: E402, F401 -- the vocabulary a profile may use; public names here too
    CLASSIC_SHAPES, DEFAULT_OPTIONS, FENCE_TYPES, HANG_TYPES, LOAD_TYPES, PATTERNS, PLACEMENTS, SCOPE_NAMES, SHAPES,
    STORE_TYPES, Options, Profile, load_profile,
)

SCOPES = (Scope.CTA, Scope.CLUSTER, Scope.GPU, Scope.SYS)
LOAD_SEMS = (Sem.WEAK, Sem.RELAXED, Sem.ACQUIRE, Sem.VOLATILE)
STORE_SEMS = (Sem.WEAK, Sem.RELAXED, Sem.RELEASE, Sem.VOLATILE)
RMW_SEMS = (Sem.RELAXED, Sem.ACQUIRE, Sem.RELEASE, Sem.ACQ_REL)

_HANGS_OF = {"SPIN": ("none", "unset-flag", "wrong-value"), "MBAR-SPIN": ("none", "few-arrivals")}

# Each classic shape: threads of abstract accesses, and the locations whose final value is observed.
_SKELETONS: dict[str, tuple[tuple[tuple[tuple[str, str], ...], ...], tuple[str, ...]]] = {
    "MP": (((("st", "x"), ("st", "y")), (("ld", "y"), ("ld", "x"))), ()),
    "SB": (((("st", "x"), ("ld", "y")), (("st", "y"), ("ld", "x"))), ()),
    "LB": (((("ld", "x"), ("st", "y")), (("ld", "y"), ("st", "x"))), ()),
    "S": (((("st", "x"), ("st", "y")), (("ld", "y"), ("st", "x"))), ("x",)),
    "R": (((("st", "x"), ("st", "y")), (("st", "y"), ("ld", "x"))), ("y",)),
    "2+2W": (((("st", "x"), ("st", "y")), (("st", "y"), ("st", "x"))), ("x", "y")),
    "IRIW": (((("st", "x"),), (("st", "y"),), (("ld", "x"), ("ld", "y")), (("ld", "y"), ("ld", "x"))), ()),
    "WRC": (((("st", "x"),), (("ld", "x"), ("st", "y")), (("ld", "y"), ("ld", "x"))), ()),
    "ISA2": (((("st", "x"), ("st", "y")), (("ld", "y"), ("st", "z")), (("ld", "z"), ("ld", "x"))), ()),
    "CoRR": (((("st", "x"),), (("ld", "x"), ("ld", "x"))), ()),
    "CoWW": (((("st", "x"), ("st", "x")),), ("x",)),
}
#: the same table, public: bench/exposure.py builds its mutants from it
CLASSIC_SKELETONS = _SKELETONS




def _scope(draw, opts: Options) -> Scope:
    return Scope(draw(st.sampled_from(opts.scopes)))


class _Builder:
    """Distinct non-zero store values and fresh register names while a program is drawn."""

    def __init__(self) -> None:
        self.value = 0

    def next_value(self) -> int:
        self.value += 1
        return self.value


def _placement(kind: str, i: int, grid: int = 0) -> Placement:
    if kind == "same-cta":
        return Placement(cta=0, grid=grid)
    if kind == "same-cluster":
        return Placement(cta=i, cluster=0, grid=grid)
    return Placement(cta=i, grid=grid)


@st.composite
def _load(draw, opts: Options, reg: str, loc: str, space: Space = Space.GLOBAL) -> Load:
    kinds = opts.loads if space is Space.GLOBAL else tuple(k for k in opts.loads if k != "nc") or ("weak",)
    kind = draw(st.sampled_from(kinds))
    if kind == "nc":
        return Load(reg, loc, nc=True)
    sem = Sem(kind)
    scope = None if sem in (Sem.WEAK, Sem.VOLATILE) else _scope(draw, opts)
    return Load(reg, loc, sem, scope)


@st.composite
def _store(draw, opts: Options, loc: str, value: int) -> Store:
    sem = Sem(draw(st.sampled_from(opts.stores)))
    scope = None if sem in (Sem.WEAK, Sem.VOLATILE) else _scope(draw, opts)
    return Store(loc, value, sem, scope)


@st.composite
def _fence(draw, opts: Options) -> Fence | None:
    kind = draw(st.sampled_from(opts.fences))
    if kind == "none":
        return None
    return Fence(Sem(kind), _scope(draw, opts))


@st.composite
def classic(draw, shape: str | None = None, options: Options = DEFAULT_OPTIONS) -> Program:
    """One of the classic shapes (``shape``, or any of :data:`CLASSIC_SHAPES`) with random
    annotations: each access's type and scope, a fence (or none) between consecutive accesses of a
    thread, and the threads' placement.  The outcome keys are every loaded register and the final
    value of the locations the shape observes (S, R, 2+2W, CoWW)."""
    if shape is None:
        shape = draw(st.sampled_from(CLASSIC_SHAPES))
    if shape not in _SKELETONS:
        raise ValueError(f"unknown classic shape {shape!r} (one of {list(_SKELETONS)})")
    threads_sk, finals = _SKELETONS[shape]
    placement = draw(st.sampled_from(options.placements))
    b = _Builder()
    threads = []
    keys: list[str] = []
    locs: list[str] = []
    for tid, ops in enumerate(threads_sk):
        code: list[Instruction] = []
        name = f"P{tid}"
        for i, (kind, loc) in enumerate(ops):
            if loc not in locs:
                locs.append(loc)
            if i > 0:
                f = draw(_fence(options))
                if f is not None:
                    code.append(f)
            if kind == "st":
                code.append(draw(_store(options, loc, b.next_value())))
            else:
                reg = f"r{sum(1 for c in code if isinstance(c, Load))}"
                code.append(draw(_load(options, reg, loc)))
                keys.append(f"{name}:{reg}")
        threads.append(Thread(name, _placement(placement, tid), tuple(code)))
    keys.extend(finals)
    p = Program(shape, tuple(threads), tuple(Location(n) for n in sorted(locs)), observed=tuple(keys))
    return validate(p)


# -- PDL --------------------------------------------------------------------------------------

PDL_PROLOGUES = ("none", "smem-bar", "mbarrier-init", "regloop", "smem-filler")


@st.composite
def pdl_handoff(draw, options: Options = DEFAULT_OPTIONS, load_types: Sequence[str] = ("weak", "relaxed", "acquire", "nc")) -> Program:
    """Programmatic dependent launch: grid 0 stores the data and triggers
    ``griddepcontrol.launch_dependents`` (after or before the store, with or without a
    ``fence.acq_rel.gpu`` before it); grid 1, launched as its PDL dependent, runs a prologue (nothing,
    shared-memory stores + ``bar.sync``, an mbarrier init, a register loop, a shared-memory loop),
    ``griddepcontrol.wait`` after or before that prologue, and then reads the data (weak, relaxed,
    acquire or ``ld.global.nc``).  ptxas hoists an ``.nc`` load above the wait only when a prologue
    before the wait gives it room (facts/toolchain-and-ptxas.md section 4)."""
    b = _Builder()
    data_sem = Sem(draw(st.sampled_from(tuple(s for s in ("weak", "relaxed") if s in options.stores) or ("weak",))))
    store = Store("x", b.next_value(), data_sem, None if data_sem is Sem.WEAK else Scope.GPU)
    trigger_after = draw(st.sampled_from((True, False)))  # after the store (correct use) first
    fence = draw(st.sampled_from((False, True)))
    trig: tuple[Instruction, ...] = ((Fence(Sem.ACQ_REL, Scope.GPU),) if fence else ()) + (GridDepControl("launch_dependents"),)
    p0 = (store,) + trig if trigger_after else trig + (store,)
    prologue_kind = draw(st.sampled_from(PDL_PROLOGUES))
    locs = [Location("x")]
    prologue: tuple[Instruction, ...] = ()
    if prologue_kind == "smem-bar":
        locs.append(Location("s", space=Space.SHARED))
        prologue = (Store("s", b.next_value()), Barrier(0))
    elif prologue_kind == "mbarrier-init":
        locs.append(Location("bar", space=Space.SHARED, kind="mbarrier"))
        prologue = (MbarrierInit("bar", 1), Barrier(0))
    elif prologue_kind in ("regloop", "smem-filler"):
        n = draw(st.sampled_from((8, 64, 1, 1024)))
        prologue = (Filler("regloop" if prologue_kind == "regloop" else "smem", n),)
    wait_after_prologue = draw(st.sampled_from((True, False)))
    load_types = tuple(t for t in load_types if t in options.loads) or ("weak",)
    kind = draw(st.sampled_from(load_types))
    load = Load("r0", "x", nc=True) if kind == "nc" else Load("r0", "x", Sem(kind), None if kind == "weak" else Scope.GPU)
    wait = (GridDepControl("wait"),)
    p1 = (prologue + wait if wait_after_prologue else wait + prologue) + (load,)
    threads = (
        Thread("P0", Placement(cta=0, grid=0), p0),
        Thread("P1", Placement(cta=0, grid=1), p1),
    )
    return validate(Program("PDL", threads, tuple(locs), observed=("P1:r0",), pdl_grids=(1,)))


# -- the async proxy: TMA store and load, mbarrier, cp.async ----------------------------------


@st.composite
def tma_store(draw, options: Options = DEFAULT_OPTIONS) -> Program:
    """Shared memory -> bulk copy (TMA store) -> global: the writer stores ``s`` in shared memory,
    a ``fence.proxy.async.shared::cta`` goes in the writer before its ``bar.sync``, in the issuing
    thread after it, or nowhere, and the issuer copies ``s`` to global ``g`` with
    ``cp.async.bulk`` -- or its tensor form, ``cp.async.bulk.tensor.1d`` (UTMASTG, stale at
    another rate than UBLKCP on an H200: bench/results/tensor/h200-tensor-copies.md) -- and waits for the bulk
    group.  Observed: the final value of ``g``."""
    b = _Builder()
    split = draw(st.sampled_from((False, True)))  # one thread writes and issues; or two threads
    fence_at = draw(st.sampled_from(("writer", "none", "issuer")))
    tensor = draw(st.booleans())
    pf = ProxyFence(ProxyFenceKind.ASYNC, "shared::cta")
    write = (Store("s", b.next_value()),)
    copy = (CpAsyncBulk("g", "s", tensor=tensor), BulkCommit(), BulkWait(0))
    locs = (Location("g"), Location("s", space=Space.SHARED))
    if not split:
        code = write + ((pf,) if fence_at != "none" else ()) + copy
        threads: tuple[Thread, ...] = (Thread("P0", Placement(), code),)
    else:
        w = write + ((pf,) if fence_at == "writer" else ()) + (Barrier(0),)
        i = (Barrier(0),) + ((pf,) if fence_at == "issuer" else ()) + copy
        threads = (Thread("P0", Placement(), w), Thread("P1", Placement(), i))
    return validate(Program("TMA-store", threads, locs, observed=("g",)))


@st.composite
def tma_load(draw, options: Options = DEFAULT_OPTIONS) -> Program:
    """Bulk copy (TMA load, ``cp.async.bulk`` or its tensor form ``cp.async.bulk.tensor.1d``)
    global -> shared completing on an mbarrier, then a generic read of the shared data: the reader
    waits on the mbarrier (acquire or relaxed) and reads ``s``.  ``g`` holds a non-zero initial
    value (written before the grid starts).  Observed: whether the wait saw the phase complete, and
    the value read."""
    wait_sem = Sem(draw(st.sampled_from(("acquire", "relaxed"))))
    reader = draw(st.sampled_from(("same-thread", "other-thread")))
    tensor = draw(st.booleans())
    locs = (Location("g", init=1), Location("s", space=Space.SHARED), Location("bar", space=Space.SHARED, kind="mbarrier"))
    issue = (
        MbarrierInit("bar", 1),
        ProxyFence(ProxyFenceKind.ASYNC, "shared::cta"),
        MbarrierArrive("bar", expect_tx=4),
        CpAsyncBulk("s", "g", completion="mbarrier", bar="bar", size=4, tensor=tensor),
    )
    read = (MbarrierWait("r1", "bar", 0, sem=wait_sem), Load("r0", "s"))
    if reader == "same-thread":
        threads: tuple[Thread, ...] = (Thread("P0", Placement(), issue + read),)
        keys = ("P0:r1", "P0:r0")
    else:
        threads = (Thread("P0", Placement(), issue + (Barrier(0),)), Thread("P1", Placement(), (Barrier(0),) + read))
        keys = ("P1:r1", "P1:r0")
    return validate(Program("TMA-load", threads, locs, observed=keys))


@st.composite
def mbarrier_handoff(draw, options: Options = DEFAULT_OPTIONS) -> Program:
    """mbarrier producer/consumer in one CTA: the producer stores the data and arrives (release or
    relaxed); the consumer waits for the phase (acquire or relaxed) and reads the data.  Observed:
    whether the wait saw the phase complete, and the value read."""
    b = _Builder()
    arrive_sem = Sem(draw(st.sampled_from(("release", "relaxed"))))
    wait_sem = Sem(draw(st.sampled_from(("acquire", "relaxed"))))
    space = Space(draw(st.sampled_from(("global", "shared"))))
    store = draw(_store(Options(stores=tuple(s for s in options.stores if s != "volatile") or ("weak",)), "x", b.next_value())) if space is Space.GLOBAL else Store("x", b.next_value())
    locs = (Location("x", space=space), Location("bar", space=Space.SHARED, kind="mbarrier"))
    p0 = (MbarrierInit("bar", 1), Barrier(0), store, MbarrierArrive("bar", sem=arrive_sem))
    p1 = (Barrier(0), MbarrierWait("r0", "bar", 0, sem=wait_sem), Load("r1", "x"))
    threads = (Thread("P0", Placement(), p0), Thread("P1", Placement(), p1))
    return validate(Program("MBAR", threads, locs, observed=("P1:r0", "P1:r1")))


@st.composite
def cp_async(draw, options: Options = DEFAULT_OPTIONS) -> Program:
    """cp.async (LDGSTS) global -> shared: the thread stores ``g``, copies it into ``s`` with
    ``cp.async``, waits (``wait_group 0``, ``wait_all``, or not at all) and reads ``s`` itself, or
    after a ``bar.sync`` in a second thread of the CTA.  Observed: the value read."""
    b = _Builder()
    wait = draw(st.sampled_from(("wait_group", "wait_all", "none")))
    reader = draw(st.sampled_from(("same-thread", "other-thread")))
    locs = (Location("g"), Location("s", space=Space.SHARED))
    code: tuple[Instruction, ...] = (Store("g", b.next_value()), CpAsync("s", "g"), CpAsyncCommit())
    if wait != "none":
        code += (CpAsyncWait(0 if wait == "wait_group" else None),)
    if reader == "same-thread":
        threads: tuple[Thread, ...] = (Thread("P0", Placement(), code + (Load("r0", "s"),)),)
        keys = ("P0:r0",)
    else:
        threads = (Thread("P0", Placement(), code + (Barrier(0),)), Thread("P1", Placement(), (Barrier(0), Load("r0", "s"))))
        keys = ("P1:r0",)
    return validate(Program("CP-ASYNC", threads, locs, observed=keys))


def _hang(draw, shape: str, opts: Options) -> str:
    """The may-hang variant of a wait shape: one of ``opts.hangs`` that applies (none first)."""
    kinds = tuple(h for h in _HANGS_OF[shape] if h in opts.hangs) or ("none",)
    return draw(st.sampled_from(kinds))


@st.composite
def spin_handoff(draw, options: Options = DEFAULT_OPTIONS) -> Program:
    """Message passing with a bounded wait: P0 stores the data ``x`` and then the flag ``y``; P1 spins
    on ``y`` until it reads the flag's value (``LC00: ld r0, y; bne r0, V, LC00``), then reads ``x``.
    Annotations, fences and placement as for the classic shapes (no ``ld.global.nc`` on the flag).
    With ``options.hangs``: ``unset-flag`` (P0 never stores ``y``) or ``wrong-value`` (P1 waits for a
    value nobody stores) -- the wait never completes.  Observed: both registers."""
    b = _Builder()
    hang = _hang(draw, "SPIN", options)
    placement = draw(st.sampled_from(options.placements))
    data = draw(_store(options, "x", b.next_value()))
    flag_value = b.next_value()
    p0: list[Instruction] = [data]
    f = draw(_fence(options))
    if f is not None:
        p0.append(f)
    if hang != "unset-flag":
        p0.append(draw(_store(options, "y", flag_value)))
    spin_opts = dataclasses.replace(options, loads=tuple(k for k in options.loads if k != "nc") or ("weak",))
    awaited = flag_value + 1 if hang == "wrong-value" else flag_value
    p1: list[Instruction] = [Label("LC00"), draw(_load(spin_opts, "r0", "y")), Branch(Cond.NE, "r0", awaited, "LC00")]
    f = draw(_fence(options))
    if f is not None:
        p1.append(f)
    p1.append(draw(_load(options, "r1", "x")))
    threads = (Thread("P0", _placement(placement, 0), tuple(p0)), Thread("P1", _placement(placement, 1), tuple(p1)))
    return validate(Program("SPIN", threads, (Location("x"), Location("y")), observed=("P1:r0", "P1:r1")))


@st.composite
def mbarrier_spin(draw, options: Options = DEFAULT_OPTIONS) -> Program:
    """mbarrier producer/consumer with a bounded wait: as :func:`mbarrier_handoff`, but the consumer
    retries ``mbarrier.try_wait.parity`` until the phase completes (``LC00: try_wait r0, bar, 0; beq
    r0, 0, LC00``).  With ``options.hangs``: ``few-arrivals`` initialises the mbarrier with count 2
    while only the producer arrives -- the phase never completes.  Observed: both registers."""
    b = _Builder()
    hang = _hang(draw, "MBAR-SPIN", options)
    arrive_sem = Sem(draw(st.sampled_from(("release", "relaxed"))))
    wait_sem = Sem(draw(st.sampled_from(("acquire", "relaxed"))))
    locs = (Location("x", space=Space.SHARED), Location("bar", space=Space.SHARED, kind="mbarrier"))
    count = 2 if hang == "few-arrivals" else 1
    p0 = (MbarrierInit("bar", count), Barrier(0), Store("x", b.next_value()), MbarrierArrive("bar", sem=arrive_sem))
    p1 = (Barrier(0), Label("LC00"), MbarrierWait("r0", "bar", 0, sem=wait_sem), Branch(Cond.EQ, "r0", 0, "LC00"),
          Load("r1", "x"))
    threads = (Thread("P0", Placement(), p0), Thread("P1", Placement(), p1))
    return validate(Program("MBAR-SPIN", threads, locs, observed=("P1:r0", "P1:r1")))


def handoff(options: Options = DEFAULT_OPTIONS) -> st.SearchStrategy[Program]:
    """The general generator (:func:`producer_consumer`) with every mechanism and placement, and
    the profile's load, store, fence and scope options (the fences as :func:`profile_fences` reads
    them: ``acq_rel`` brings the one-way fence.release / fence.acquire)."""
    return producer_consumer(loads=options.loads, stores=options.stores, fences=profile_fences(options.fences),
                             scopes=options.scopes)


def random_programs(options: Options = DEFAULT_OPTIONS) -> st.SearchStrategy[Program]:
    """Free-form straight-line programs (:func:`litmus_programs`) named ``random``."""
    def name_and_observe(p: Program) -> Program:
        p = dataclasses.replace(p, name="random")
        if not p.outcome_keys():  # only stores: observe the final values
            p = dataclasses.replace(p, observed=tuple(loc.name for loc in p.locations))
        return p

    return litmus_programs(max_threads=max(2, options.max_threads), max_instructions=max(1, options.max_instructions)).map(
        name_and_observe
    )


def shape(name: str, options: Options = DEFAULT_OPTIONS) -> st.SearchStrategy[Program]:
    """The strategy for one shape or pattern name of :data:`SHAPES`."""
    if name in _SKELETONS:
        return classic(name, options)
    table = {
        "PDL": pdl_handoff,
        "TMA-store": tma_store,
        "TMA-load": tma_load,
        "MBAR": mbarrier_handoff,
        "CP-ASYNC": cp_async,
        "random": random_programs,
        "SPIN": spin_handoff,
        "MBAR-SPIN": mbarrier_spin,
        "HANDOFF": handoff,
    }
    if name not in table:
        raise ValueError(f"unknown shape {name!r} (one of {list(SHAPES)})")
    return table[name](options)


@st.composite
def weighted(draw, weights: Mapping[str, float], options: Options = DEFAULT_OPTIONS) -> Program:
    """A shape drawn with the given weights (shapes of weight 0 never), then a program of it.  The
    draw shrinks toward the first shape listed."""
    names = [n for n, w in weights.items() if w > 0]
    if not names:
        raise ValueError("no shape has a positive weight")
    if len(names) == 1:
        return draw(shape(names[0], options))
    # each shape listed in proportion to its weight (sampled_from draws an index about uniformly;
    # st.integers over a wide range would favour small values, i.e. the first shapes)
    wmin = min(weights[n] for n in names)
    reps = [max(1, round(weights[n] / wmin)) for n in names]
    scale = max(1.0, sum(reps) / 1000)
    table = [n for n, r in zip(names, reps) for _ in range(max(1, round(r / scale)))]
    name = draw(st.sampled_from(table))
    return draw(shape(name, options))


def programs(profile: str | object = "classic") -> st.SearchStrategy[Program]:
    """What a campaign with this profile draws (a profile name, a path to a ``.toml`` file, or a
    :class:`fuzzgpu.profiles.Profile`)."""
    prof = profile if isinstance(profile, Profile) else load_profile(str(profile))
    return weighted(prof.shapes, prof.options)


@st.composite
def _access(draw, kind: str, loc: str, reg: str, value: int) -> Instruction:
    if kind == "ld":
        sem = draw(st.sampled_from(LOAD_SEMS))
        scope = None if sem in (Sem.WEAK, Sem.VOLATILE) else draw(st.sampled_from(SCOPES))
        return Load(reg, loc, sem, scope)
    if kind == "st":
        sem = draw(st.sampled_from(STORE_SEMS))
        scope = None if sem in (Sem.WEAK, Sem.VOLATILE) else draw(st.sampled_from(SCOPES))
        return Store(loc, value, sem, scope)
    if kind == "fence":
        return Fence(draw(st.sampled_from((Sem.ACQ_REL, Sem.SC))), draw(st.sampled_from(SCOPES)))
    sem = draw(st.sampled_from(RMW_SEMS))
    return Atom(reg, loc, draw(st.sampled_from((RmwOp.EXCH, RmwOp.ADD))), (value,), sem, draw(st.sampled_from(SCOPES)))


@st.composite
def litmus_programs(draw, max_threads: int = 3, max_instructions: int = 3, locations: tuple[str, ...] = ("x", "y")) -> Program:
    """Free-form straight-line programs: loads, stores, fences and atomics over a few locations,
    threads in one or several CTAs of one GPU, with an ``exists`` condition over every register.

    At most two ``atom.add`` per location (a third is drawn as ``atom.exch``): ``k`` adds let a
    location hold each of its ``b`` stored values plus any subset of the ``k`` addends, ``b * 2**k``
    values, and with two adds a 3 x 3 program stays within the oracle's
    ``MAX_VALUES_PER_LOCATION`` (32) instead of being "not covered"."""
    n_threads = draw(st.integers(2, max_threads))
    value = 0
    threads = []
    regs = []
    adds: dict[str, int] = {}
    for tid in range(n_threads):
        cta = draw(st.integers(0, n_threads - 1)) if tid else 0
        n_ins = draw(st.integers(1, max_instructions))
        code = []
        for i in range(n_ins):
            kind = draw(st.sampled_from(("ld", "st", "fence", "atom")))
            value += 1
            reg = f"r{i}"
            ins = draw(_access(kind, draw(st.sampled_from(locations)), reg, value))
            if isinstance(ins, Atom) and ins.operation is RmwOp.ADD:
                adds[ins.loc] = adds.get(ins.loc, 0) + 1
                if adds[ins.loc] > 2:
                    ins = dataclasses.replace(ins, operation=RmwOp.EXCH)
            code.append(ins)
            if isinstance(ins, (Load, Atom)):
                regs.append(RegRef(f"P{tid}", reg))
        threads.append(Thread(f"P{tid}", Placement(cta=cta), tuple(code)))
    condition = None
    if regs:
        cmps = tuple(Cmp("==", r, draw(st.integers(0, value))) for r in regs)
        condition = Condition("exists", And(cmps) if len(cmps) > 1 else cmps[0])
    p = Program("random", tuple(threads), tuple(Location(name) for name in locations), condition)
    return validate(p)


# --------------------------------------------------------------------------------------------
# Strengthening: one annotation made stronger (for monotonicity properties)
# --------------------------------------------------------------------------------------------

_STRONGER_LOAD = {Sem.WEAK: (Sem.RELAXED,), Sem.RELAXED: (Sem.ACQUIRE,)}
_STRONGER_STORE = {Sem.WEAK: (Sem.RELAXED,), Sem.RELAXED: (Sem.RELEASE,)}
_STRONGER_RMW = {Sem.RELAXED: (Sem.ACQUIRE, Sem.RELEASE), Sem.ACQUIRE: (Sem.ACQ_REL,), Sem.RELEASE: (Sem.ACQ_REL,)}


def _larger(scope: Scope) -> Iterator[Scope]:
    for s in SCOPES:
        if s.rank > scope.rank:
            yield s


def strengthenings(p: Program) -> Iterator[tuple[str, Program]]:
    """Every Program that differs from ``p`` by one stronger annotation: weak -> relaxed ->
    acquire/release, a larger scope, fence.acq_rel -> fence.sc, or one added fence.sc.sys."""
    for tid, t in enumerate(p.threads):
        for i, ins in enumerate(t.code):
            for what, new in _stronger(ins):
                yield f"{t.name}[{i}] {what}", _replace_code(p, tid, t.code[:i] + (new,) + t.code[i + 1 :])
        for i in range(len(t.code) + 1):
            yield f"{t.name}[{i}] + fence.sc.sys", _replace_code(p, tid, t.code[:i] + (Fence(Sem.SC, Scope.SYS),) + t.code[i:])


def _stronger(ins: Instruction) -> Iterator[tuple[str, Instruction]]:
    import dataclasses

    if isinstance(ins, Load) and not ins.nc:
        for sem in _STRONGER_LOAD.get(ins.sem, ()):
            yield f"ld .{ins.sem} -> .{sem}", dataclasses.replace(ins, sem=sem, scope=ins.scope or Scope.CTA)
    if isinstance(ins, Store):
        for sem in _STRONGER_STORE.get(ins.sem, ()):
            yield f"st .{ins.sem} -> .{sem}", dataclasses.replace(ins, sem=sem, scope=ins.scope or Scope.CTA)
    if isinstance(ins, Atom):
        for sem in _STRONGER_RMW.get(ins.sem, ()):
            yield f"atom .{ins.sem} -> .{sem}", dataclasses.replace(ins, sem=sem)
    if isinstance(ins, Fence) and ins.sem is Sem.ACQ_REL:
        yield "fence.acq_rel -> fence.sc", dataclasses.replace(ins, sem=Sem.SC)
    scope = getattr(ins, "scope", None)
    if isinstance(ins, (Load, Store, Atom, Fence)) and scope is not None:
        for s in _larger(scope):
            yield f"scope .{scope} -> .{s}", dataclasses.replace(ins, scope=s)


def _replace_code(p: Program, tid: int, code: tuple[Instruction, ...]) -> Program:
    import dataclasses

    threads = list(p.threads)
    threads[tid] = dataclasses.replace(threads[tid], code=code)
    return dataclasses.replace(p, threads=tuple(threads))


__all__ = [
    # the general generator
    "producer_consumer", "MECHANISMS", "HANDOFF_PLACEMENTS", "READ_KINDS", "UNRUNNABLE", "FENCE_NAMES", "ONE_WAY_FENCES",
    "side_fences", "profile_fences",
    # templates and profiles
    "programs", "shape", "weighted", "classic", "pdl_handoff", "tma_store", "tma_load", "mbarrier_handoff", "cp_async",
    "spin_handoff", "mbarrier_spin", "handoff", "random_programs", "litmus_programs",
    "Options", "DEFAULT_OPTIONS", "strengthenings",
    # vocabularies
    "SHAPES", "CLASSIC_SHAPES", "PATTERNS", "LOAD_TYPES", "STORE_TYPES", "FENCE_TYPES", "SCOPE_NAMES", "PLACEMENTS",
    "HANG_TYPES", "SCOPES", "LOAD_SEMS", "STORE_SEMS", "RMW_SEMS",
]
