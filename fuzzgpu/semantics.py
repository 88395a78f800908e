"""The one table of instruction semantics: what each PTX instruction fuzzgpu knows *is* for the
memory model -- its proxy, its strength, its scope, what it orders and in which direction -- with
the PTX ISA (9.x) section it rests on and whether the rule is the ISA's or fuzzgpu's reading of it
(docs/oracle.md, "fuzzgpu's readings"; DESIGN.md, "The oracle").

Three readers, one source (docs/architecture.md):

* the model (:mod:`fuzzgpu.model`): which strengths make release and acquire patterns and strong
  operations (:data:`STRENGTHS`), which proxy a proxy fence orders and which state spaces
  (:func:`proxy_fence_proxy`, :func:`proxy_fence_covers`);
* the SASS checker (:mod:`fuzzgpu.sass`): whether a synchronisation point orders the accesses
  before it (``release``: they may not sink below it) and after it (``acquire``: they may not rise
  above it), and which rule a forbidden move cites (``rule``, a key of ``sass.RULE_FORBIDDEN``);
* the properties and the race classes (:mod:`fuzzgpu.properties`, :mod:`fuzzgpu.bug_classes`): the
  same two directions, for the IR instructions of a program (:func:`of`) and for PTX text.

It also holds the handoff vocabulary (:data:`MECHANISMS`: the means by which a producer hands data
to a consumer, made of the table's instructions) that the generator draws and the race property
names; the known bug classes that name a race finding are :mod:`fuzzgpu.bug_classes`'s.

An entry is keyed by the PTX instruction as the ISA names it (``griddepcontrol.wait``,
``mbarrier.try_wait``).  ``release``/``acquire`` say what the instruction orders in the thread's
program order in its default form; an instruction with a ``.sem`` qualifier (``ld``, ``st``,
``atom``, ``red``) takes them from :data:`STRENGTHS`, and one whose ``.relaxed`` form orders nothing
(``mbarrier.arrive``, ``mbarrier.try_wait``, ``barrier.cluster.arrive``) says so in
``relaxed_orders_nothing``.  Adding an instruction: one :class:`Instr` here, its litmus mnemonic, its
tests (docs/architecture.md, "How to add an instruction").

Only :mod:`fuzzgpu.ir` is imported: the table sits below the model, the SASS checker and the
properties.
"""

from __future__ import annotations

from dataclasses import dataclass

from .ir import (
    Barrier,
    ClusterBarrier,
    CpAsyncBulk,
    Fence,
    GridDepControl,
    Instruction,
    Load,
    MbarrierArrive,
    MbarrierWait,
    Program,
    ProgramError,
    Proxy,
    ProxyFence,
    ProxyFenceKind,
    Scope,
    Sem,
    TensormapFence,
    Tcgen05Wait,
    validate,
)

ISA = "ISA"
FUZZGPU = "fuzzgpu's reading"


# --------------------------------------------------------------------------------------------
# Strengths (ISA 8.4 "Operation types", 8.8 "Release and Acquire Patterns", "fence")
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Strength:
    """A ``.sem`` qualifier: whether an operation with it is *strong* (morally strong with another
    strong operation of an including scope), a release (orders the thread's earlier accesses before
    it) and an acquire (orders it before the thread's later accesses)."""

    name: str
    strong: bool
    release: bool
    acquire: bool
    isa: str


#: every strength of the IR (``Sem``), and ``.nc`` (outside the model)
STRENGTHS: dict[str, Strength] = {s.name: s for s in (
    Strength("weak", False, False, False, "8.4 Operation types (a weak memory operation)"),
    Strength("relaxed", True, False, False, "8.4 Operation types (strong, no ordering of its own)"),
    Strength("acquire", True, False, True, "8.8 Release and Acquire Patterns (an acquire operation)"),
    Strength("release", True, True, False, "8.8 Release and Acquire Patterns (a release operation)"),
    Strength("acq_rel", True, True, True, "8.8 Release and Acquire Patterns; fence (fence.acq_rel)"),
    Strength("sc", True, True, True, "fence (fence.sc has all the properties of fence.acq_rel); 8.9.3 Fence-SC order"),
    Strength("volatile", True, False, False, "ld/st .volatile: relaxed with .sys scope (8.4 Operation types)"),
    Strength("mmio", True, False, False, "ld/st .mmio: relaxed with .sys scope, performed exactly once"),
    Strength("nc", False, False, False, "8.1 Scope and applicability of the model; ld (.nc): outside the model"),
)}

#: IR strengths (``Sem``) whose memory operations are releases / acquires (the fences: see
#: :data:`RELEASE_FENCE_SEMS`, :data:`ACQUIRE_FENCE_SEMS`, read from the table's fence rows)
RELEASE_SEMS: tuple[Sem, ...] = tuple(s for s in Sem if STRENGTHS[s.value].release and s is not Sem.SC)
ACQUIRE_SEMS: tuple[Sem, ...] = tuple(s for s in Sem if STRENGTHS[s.value].acquire and s is not Sem.SC)


def is_strong(sem: Sem, nc: bool = False) -> bool:
    """ISA 8.4: relaxed, acquire, release, acq_rel, sc (and volatile) operations are strong; weak
    ones and ``.nc`` loads (outside the model) are not."""
    return not nc and STRENGTHS[sem.value].strong


# --------------------------------------------------------------------------------------------
# Instructions
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Instr:
    """One PTX instruction (family) and what it is for the memory model.

    ``proxy``: the proxy of its memory accesses (``generic``, ``async``) or of the accesses it
    orders (proxy fences), ``""`` for none; ``strength``: its ``.sem`` (``per .sem`` when the
    instruction carries one, then :data:`STRENGTHS` gives ``release``/``acquire``); ``scope`` its
    default scope; ``release``/``acquire`` the program-order directions it orders (earlier accesses
    before it / it before later accesses); ``orders`` what, in words; ``source`` :data:`ISA` or
    :data:`FUZZGPU`; ``isa`` the section(s); ``rule`` the key of ``sass.RULE_FORBIDDEN`` a forbidden
    move across it cites (``""``: by direction -- acquire, release or fence); ``ir`` the IR class."""

    ptx: str
    ir: str
    proxy: str
    strength: str
    scope: str
    release: bool
    acquire: bool
    orders: str
    source: str
    isa: str
    rule: str = ""
    relaxed_orders_nothing: bool = False

    def orders_directions(self, sem: str | None = None) -> tuple[bool, bool]:
        """(release, acquire) of this instruction with the ``.sem`` qualifier ``sem`` (None: as
        written without one)."""
        if self.strength == PER_SEM:
            s = STRENGTHS.get(sem or "weak", STRENGTHS["weak"])
            return (s.release and sem != "sc", s.acquire and sem != "sc")
        if self.relaxed_orders_nothing and sem == "relaxed":
            return False, False
        return self.release, self.acquire


PER_SEM = "per .sem"
_MEM = "the thread's earlier memory operations before it (release) / it before its later ones (acquire), per .sem"

TABLE: dict[str, Instr] = {i.ptx: i for i in (
    # -- memory operations ------------------------------------------------------------------
    Instr("ld", "Load", "generic", PER_SEM, "gpu (strong, no scope given)", False, False, _MEM, ISA,
          "ld; 8.4 Operation types; 8.8 Release and Acquire Patterns"),
    Instr("ld.global.nc", "Load (nc)", "generic", "outside the model", "-", False, False,
          "nothing: valid only for data read-only for the kernel's lifetime; where that contract breaks the read "
          "may return any same-location write (allowed-outside-model)", FUZZGPU,
          "8.1 Scope and applicability of the model; ld (.nc)"),
    Instr("st", "Store", "generic", PER_SEM, "gpu (strong, no scope given)", False, False, _MEM, ISA,
          "st; 8.4 Operation types; 8.8 Release and Acquire Patterns"),
    Instr("atom", "Atom", "generic", PER_SEM, "gpu", False, False, _MEM + "; atomic read-modify-write", ISA,
          "atom; 8.10.5 Atomicity"),
    Instr("red", "Red", "generic", PER_SEM, "gpu", False, False, _MEM + "; atomic reduction", ISA, "red; 8.10.5 Atomicity"),
    # multimem operations (NVLink SHARP: a multimem address names a location on each GPU of a multicast object), with no
    # IR class: `fuzzgpu sass` reads them in production kernels (TransformerEngine's userbuffers, all-reduce kernels)
    Instr("multimem.ld_reduce", "", "generic", PER_SEM, "gpu (strong, no scope given)", False, False,
          _MEM + "; a load of every location the multimem address names, reduced ('If explicit semantics qualifiers are "
          "not specified, then multimem.ld_reduce and multimem.st default to .weak')", ISA,
          "multimem.ld_reduce, multimem.st, multimem.red; 8.8 Release and Acquire Patterns"),
    Instr("multimem.st", "", "generic", PER_SEM, "gpu (strong, no scope given)", False, False,
          _MEM + "; a store to every location the multimem address names (.weak without .stsem)", ISA,
          "multimem.ld_reduce, multimem.st, multimem.red; 8.8 Release and Acquire Patterns"),
    Instr("multimem.red", "", "generic", PER_SEM, "sys", False, False,
          _MEM + "; a reduction of every location the multimem address names ('multimem.red defaults to .relaxed', "
          "'If the .scope qualifier is not specified for multimem.red then .sys scope is assumed by default')", ISA,
          "multimem.ld_reduce, multimem.st, multimem.red; 8.10.5 Atomicity"),
    Instr("async.read", "AsyncRead", "async", "weak", "-", False, False,
          "nothing: an abstract operand read of shared memory in the async proxy (wgmma, tcgen05); a fuzzgpu abstraction",
          FUZZGPU, "8.6 Proxies; wgmma; tcgen05 memory consistency"),
    # -- fences -------------------------------------------------------------------------------
    Instr("fence.sc", "Fence (sc)", "generic", "sc", "per .scope", True, True,
          "every memory operation before it with every one after it, and the fence.sc operations among themselves "
          "(Fence-SC order)", ISA, "membar/fence; 8.9.3 Fence-SC order; 8.8 Release and Acquire Patterns", rule="fence"),
    Instr("fence.acq_rel", "Fence (acq_rel)", "generic", "acq_rel", "per .scope", True, True,
          "every memory operation before it with every one after it (a release and an acquire fence)", ISA,
          "membar/fence; 8.8 Release and Acquire Patterns", rule="fence"),
    Instr("fence.acquire", "Fence (acquire)", "generic", "acquire", "per .scope", False, True,
          "it before the thread's later memory operations", ISA, "membar/fence", rule="fence"),
    Instr("fence.release", "Fence (release)", "generic", "release", "per .scope", True, False,
          "the thread's earlier memory operations before it", ISA, "membar/fence", rule="fence"),
    Instr("membar", "", "generic", "sc", ".cta / .gl (gpu) / .sys", True, True, "as fence.sc", ISA,
          "membar/fence (membar is fence.sc)", rule="fence"),
    Instr("fence.proxy.async", "ProxyFence (async)", "async", "-", "the CTA", True, True,
          "generic-proxy accesses before it with async-proxy accesses after it and vice versa, for the state space "
          "given (.global, .shared::cta, .shared::cluster; none: all), in proxy-preserved base causality order",
          ISA, "membar/fence (fence.proxy); 8.6 Proxies; 8.9.7 Proxy-preserved base causality order", rule="proxy"),
    Instr("fence.proxy", "ProxyFence (alias, surface, texture, constant)", "per kind", "-", "the CTA", True, True,
          "accesses of one location through different proxies (.alias: different virtual addresses), in "
          "proxy-preserved base causality order", ISA,
          "membar/fence (fence.proxy); 8.6 Proxies; 8.9.7 Proxy-preserved base causality order", rule="proxy"),
    Instr("fence.mbarrier_init", "FenceMbarrierInit", "generic", "release (mbarrier.init only)", "cluster", False, False,
          "the thread's earlier mbarrier.init operations before the waits of the phase of its next "
          "barrier.cluster.arrive (relaxed or not); nothing else", FUZZGPU, "membar/fence (fence.mbarrier_init)",
          rule="fence"),
    # -- barriers -----------------------------------------------------------------------------
    Instr("bar.sync", "Barrier (sync)", "generic", "acq_rel", "cta", True, True,
          "the participants' accesses before the barrier with every participant's accesses after it "
          "(synchronizes-with)", ISA, "bar/barrier; 8.9.4 Synchronizes-with", rule="bar"),
    Instr("bar.red", "", "generic", "acq_rel", "cta", True, True, "as bar.sync", ISA, "bar/barrier", rule="bar"),
    Instr("bar.arrive", "Barrier (arrive)", "generic", "release", "cta", True, False,
          "the thread's accesses before it with the accesses after a bar.sync of the same barrier that completes "
          "after it", ISA, "bar/barrier; 8.9.4 Synchronizes-with", rule="bar.arrive"),
    Instr("barrier.cluster.arrive", "ClusterBarrier (arrive)", "generic", "release (default) / relaxed", "cluster",
          True, False,
          "a release arrive: the thread's earlier accesses before every barrier.cluster.wait of its phase; "
          ".relaxed: execution order only", FUZZGPU, "barrier.cluster", relaxed_orders_nothing=True),
    Instr("barrier.cluster.wait", "ClusterBarrier (wait)", "generic", "acquire", "cluster", False, True,
          "it before the thread's later accesses (the arrivals of its phase synchronize with it)", FUZZGPU,
          "barrier.cluster"),
    # -- programmatic dependent launch, kernel boundaries -------------------------------------
    Instr("griddepcontrol.wait", "GridDepControl (wait)", "every proxy", "-", "the grids of the stream", False, True,
          "everything after it in program order waits for the prerequisite grid's completion and the flush of its "
          "memory operations: every operation of that grid precedes them, across proxies (an API synchronization "
          "mechanism)", FUZZGPU, "griddepcontrol; 8.9.4 API synchronization", rule="griddep"),
    Instr("griddepcontrol.launch_dependents", "GridDepControl (launch_dependents)", "", "-", "-", False, False,
          "no memory ordering of its own: when the dependent grid may start (execution order: once every CTA of "
          "the primary has executed its first one, or completed); a .gpu/.sys release fence (fence.acq_rel, fence.sc, "
          "fence.release; not fence.acquire) before the CTA's first one synchronizes with the dependent grid's start "
          "(repeated invocations 'have no additional side effects past that of the first invocation')", ISA, "griddepcontrol"),
    # -- mbarrier -----------------------------------------------------------------------------
    Instr("mbarrier.init", "MbarrierInit", "generic", "weak", "-", False, False,
          "nothing: a weak write of the mbarrier object (ordered to other CTAs by fence.mbarrier_init)", ISA,
          "mbarrier.init", rule="mbarrier"),
    Instr("mbarrier.arrive", "MbarrierArrive", "generic", "release (default) / relaxed", "cta (default)", True, False,
          "the thread's earlier accesses before a wait that observes the phase it completes; .relaxed: nothing",
          ISA, "mbarrier.arrive; 8.8 Release and Acquire Patterns", rule="mbarrier", relaxed_orders_nothing=True),
    Instr("mbarrier.arrive.expect_tx", "MbarrierArrive (expect_tx)", "generic", "release (default) / relaxed",
          "cta (default)", True, False, "as mbarrier.arrive, after adding the bytes to the transaction count", ISA,
          "mbarrier.arrive", rule="mbarrier", relaxed_orders_nothing=True),
    Instr("mbarrier.expect_tx", "MbarrierExpectTx", "generic", "relaxed", "cta", False, False,
          "nothing: bytes added to the transaction count", ISA, "mbarrier.expect_tx", rule="mbarrier"),
    Instr("mbarrier.complete_tx", "MbarrierCompleteTx", "generic", "relaxed", "cta (default) / cluster", False, False,
          "nothing (.relaxed is its only .sem): a strong read-modify-write of the mbarrier object that lowers the "
          "transaction count by the bytes given, which may complete the phase; no asynchronous operation, so no "
          "write is published by it; a release fence before it makes a release pattern (8.8), as before any strong write)", ISA,
          "mbarrier.complete_tx; Phase Completion of the mbarrier object", rule="mbarrier"),
    Instr("mbarrier.try_wait", "MbarrierWait (try_wait)", "generic", "acquire (default) / relaxed", "cta (default)",
          False, True,
          "a wait that returns True: it before the thread's later accesses (the arrivals of the phase synchronize "
          "with it); one that returns False orders nothing; .relaxed: nothing", ISA,
          "mbarrier.test_wait/try_wait; 8.8 Release and Acquire Patterns", rule="mbarrier", relaxed_orders_nothing=True),
    Instr("mbarrier.test_wait", "MbarrierWait (test_wait)", "generic", "acquire (default) / relaxed", "cta (default)",
          False, True, "as mbarrier.try_wait", ISA, "mbarrier.test_wait/try_wait", rule="mbarrier",
          relaxed_orders_nothing=True),
    Instr("mbarrier", "", "generic", "-", "-", False, False,
          "nothing known: another mbarrier operation (inval, pending_count, ...)", ISA, "mbarrier", rule="mbarrier"),
    # -- cp.async (non-bulk, LDGSTS) ----------------------------------------------------------
    Instr("cp.async", "CpAsync", "generic", "weak", "-", False, False,
          "nothing: a weak read of global and weak write of shared memory, performed before the issuing thread's "
          "cp.async.wait_group/wait_all or cp.async.mbarrier.arrive that covers it", ISA, "cp.async"),
    Instr("cp.async.commit_group", "CpAsyncCommit", "", "-", "-", False, False,
          "nothing: closes the thread's group of cp.async operations", ISA, "cp.async.commit_group"),
    Instr("cp.async.wait", "CpAsyncWait", "generic", "-", "the thread", False, True,
          "the thread's own cp.async writes of the completed groups before its later accesses (wait_group n: all "
          "but the n most recent groups; wait_all: all)", ISA, "cp.async.wait_group/wait_all", rule="cp.async.wait"),
    Instr("cp.async.mbarrier.arrive", "CpAsyncMbarrierArrive", "generic", "release (of the copies only)", "cta",
          False, False,
          "an arrival once the thread's earlier cp.async complete: it publishes their writes to a wait that observes "
          "the phase, and nothing else of the thread", ISA, "cp.async.mbarrier.arrive; 9.7.9.25.1 Completion Mechanisms",
          rule="mbarrier"),
    # -- the async proxy: cp.async.bulk (TMA) -------------------------------------------------
    Instr("cp.async.bulk", "CpAsyncBulk", "async", "weak", "-", False, False,
          "nothing of the issuing thread: an async-proxy read and write, then the implicit generic-async proxy fence "
          "at completion (complete_tx on an mbarrier, or bulk_group)", ISA, "cp.async.bulk; 8.6 Proxies"),
    # the tensor form: the same operation, its global side named by a tensor map and coordinates
    # (PTX ISA cp.async.bulk.tensor: "The copy operation in cp.async.bulk.tensor is treated as a weak
    # memory operation and the complete-tx operation on the mbarrier has .release semantics at the
    # .cluster scope"; "The copy operation is performed in the async proxy").  "The tensorMap is
    # accessed in tensormap proxy": a host-encoded __constant__ map is never written (docs/harness.md,
    # "Tensor maps"); a ``tensormap`` location the kernel rewrites is ordered by the fences below.
    Instr("cp.async.bulk.tensor", "CpAsyncBulk (tensor)", "async", "weak", "-", False, False,
          "as cp.async.bulk: nothing of the issuing thread; an async-proxy read and write (the box of the tensor map), "
          "then the implicit generic-async proxy fence at completion (complete_tx on an mbarrier, or bulk_group)", ISA,
          "cp.async.bulk.tensor; cp.reduce.async.bulk.tensor; Tensors; 8.6 Proxies"),
    # issue 32, class D: a tensor map in global memory the kernel rewrites (the rule: model.tensormap)
    Instr("tensormap.replace", "TensormapReplace", "generic", "weak", "-", False, False, "nothing: a weak generic write of the "
          "whole map ('a weak memory operation, on the entire 1024-bit opaque tensor-map object')", ISA, "tensormap.replace"),
    # a fused copy and fence, with no IR class (CUTLASS/CuTe's tensor maps in shared memory: tma_descriptor_cp_fence_release)
    Instr("tensormap.cp_fenceproxy", "", "tensormap", "release", "per .scope", True, False,
          "its own copy -- a generic read of the map in shared memory ([src]) and a generic write of it to global memory "
          "([dst]) -- with the later tensormap-proxy accesses of [dst]: 'Establishes a uni-directional proxy release "
          "pattern on the ordering from the copy operation to the subsequent access performed in the tensormap proxy "
          "on the address dst'; not the thread's other accesses", ISA, "tensormap.cp_fenceproxy", rule="proxy.tensormap"),
    Instr("fence.proxy.tensormap::generic.release", "TensormapFence (release)", "tensormap", "release", "per .scope", True, False,
          "the generic accesses before it (cumulatively) with the tensormap-proxy reads after an acquire proxy fence it "
          "synchronizes with; uni-directional", ISA, "membar/fence (uni-directional proxy fence); 8.9.5",
          rule="proxy.tensormap"),
    Instr("fence.proxy.tensormap::generic.acquire", "TensormapFence (acquire)", "tensormap", "acquire", "per .scope", False, True,
          "the tensormap-proxy reads of its map ([addr], 128) after it, in its CTA, with the generic writes before a release "
          "proxy fence that precedes it in causality order", ISA, "membar/fence; CUDA Programming Guide 10.30.2",
          rule="proxy.tensormap"),
    Instr("cp.async.bulk.commit_group", "BulkCommit", "", "-", "-", False, False,
          "nothing: closes the thread's bulk group", ISA, "cp.async.bulk.commit_group"),
    Instr("cp.async.bulk.wait_group", "BulkWait", "async", "-", "the thread", False, True,
          "the thread's own bulk copies of the completed groups (and their implicit proxy fences) before its later "
          "accesses; .read: only their source reads -- fuzzgpu's reading: in every proxy, as if the implicit proxy "
          "fence followed the reads' completion (model.mechanisms.copy_read_completion; issue 32 class 9)", ISA,
          "cp.async.bulk.wait_group; 9.7.9.25.2 Async Proxy (implicit generic-async proxy fence at completion)",
          rule="cp.async.wait"),
    # -- tcgen05 --------------------------------------------------------------------------------
    Instr("tcgen05.fence", "Tcgen05Fence", "", "-", "-", False, False,
          "tcgen05 operations against thread synchronisation; no memory effect in the model (compile-checked only)",
          ISA, "tcgen05 memory consistency (tcgen05.fence)"),
    # issue 32, classes E and G: tensor memory (the rules: model.tensor_memory)
    Instr("tcgen05.st", "Tcgen05St", "generic", "weak", "-", False, False, "nothing: an asynchronous weak write of a "
          "tensor-memory cell, ordered before the thread's later instructions only by a tcgen05.wait::st", ISA,
          "tcgen05.st ('asynchronous'); tcgen05.wait"),
    Instr("tcgen05.ld", "Tcgen05Ld", "generic", "weak", "-", False, False, "nothing: an asynchronous weak read of a "
          "tensor-memory cell into a register, ordered before the thread's later instructions only by a tcgen05.wait::ld",
          ISA, "tcgen05.ld ('asynchronous'); tcgen05.wait"),
    Instr("tcgen05.wait::st", "Tcgen05Wait (st)", "", "-", "the thread", False, False, "the thread's prior tcgen05.st "
          "(completed) before its later instructions", ISA, "tcgen05.wait: 'wait for the completion of all prior tcgen05.st'"),
    Instr("tcgen05.wait::ld", "Tcgen05Wait (ld)", "", "-", "the thread", False, False, "the thread's prior tcgen05.ld "
          "(completed) before its later instructions", ISA, "tcgen05.wait: 'wait for the completion of all prior tcgen05.ld'"),
    Instr("tcgen05.alloc", "Tcgen05Alloc", "generic", "weak", "-", False, False, "nothing: a weak write of the allocated "
          "address to shared memory; other threads see it only through synchronization (bar.sync, release/acquire)",
          ISA, "tcgen05.alloc; tcgen05 memory consistency (canonical patterns: tcgen05.fence around the thread sync)"),
    # -- wgmma register operands (issue 32, class F: wgmma_register_window) --
    Instr("wgmma.fence", "WgmmaFence", "", "-", "-", False, False, "the thread's earlier register accesses before a later wgmma.mma_async's access of the same registers (accumulator, A fragment); no memory effect", ISA, "9.7.15.7.1 wgmma.fence"),
    Instr("wgmma.mma_async", "WgmmaMma", "", "-", "-", False, False, "nothing of memory (register-A form): reads its A fragment and writes its accumulator asynchronously, until a wgmma.wait_group covers its group", ISA, "wgmma.mma_async; 9.7.15.7.3"),
    Instr("wgmma.commit_group", "WgmmaCommit", "", "-", "-", False, False, "nothing: closes the thread's uncommitted wgmma.mma_async into a wgmma-group", ISA, "9.7.15.7.2 wgmma.commit_group"),
    Instr("wgmma.wait_group", "WgmmaWait", "", "-", "the thread", False, False, "the register operands of the wgmmas of the completed groups (all but the n most recent) before the thread's later accesses of them", ISA, "9.7.15.7.3 wgmma.wait_group"),
)}

#: IR instructions that have no memory-model meaning of their own (registers, control flow, fuzzgpu's
#: Filler delay/noise, an abstraction)
NO_MEMORY_EFFECT = frozenset({"Mov", "Arith", "Label", "Branch", "Goto", "Filler"})


# --------------------------------------------------------------------------------------------
# Fences: which ``fence{.sem}.scope`` the IR's Fence may carry, read from the table's fence rows
# --------------------------------------------------------------------------------------------


def _fence_keys() -> dict[Sem, str]:
    """``Sem`` -> table key of every entry whose ``ir`` is ``Fence (<sem>)``, in ``Sem`` order: the
    fences fuzzgpu models (an entry whose ``ir`` is ``""`` is known to the SASS checker only)."""
    named = {e.ir: e.ptx for e in TABLE.values()}
    return {s: named[f"Fence ({s.value})"] for s in Sem if f"Fence ({s.value})" in named}


#: the table key of each fence the IR's ``Fence(sem, scope)`` may carry (read by :func:`key_of`)
FENCE_KEYS: dict[Sem, str] = _fence_keys()
#: ISA 8.8 "Release and Acquire Patterns": a release pattern may be "a release fence (or acq_rel/sc)
#: followed by a strong write"; an acquire pattern "a strong read followed by an acquire fence (or
#: acq_rel/sc)" -- the fences whose table row orders the earlier accesses (``release``) / the later
#: ones (``acquire``)
RELEASE_FENCE_SEMS: tuple[Sem, ...] = tuple(s for s, k in FENCE_KEYS.items() if TABLE[k].release)
ACQUIRE_FENCE_SEMS: tuple[Sem, ...] = tuple(s for s, k in FENCE_KEYS.items() if TABLE[k].acquire)
#: "a memory fence" that is both a release and an acquire fence: fence.acq_rel, fence.sc
MEMORY_FENCE_SEMS: tuple[Sem, ...] = tuple(s for s in RELEASE_FENCE_SEMS if s in ACQUIRE_FENCE_SEMS)
#: the fences that order one direction only (fence.release, fence.acquire; PTX ISA 8.6, membar/fence)
ONE_WAY_FENCE_SEMS: tuple[Sem, ...] = tuple(s for s in FENCE_KEYS if s not in MEMORY_FENCE_SEMS)


def unknown_fence(sem: Sem) -> str | None:
    """What is wrong with a ``fence.<sem>`` (None: the table models it).  A fence with a row but
    no IR (``ir`` ``""``) is a PTX fence fuzzgpu does not model; any other is no PTX fence."""
    if sem in FENCE_KEYS:
        return None
    known = [s.value for s in FENCE_KEYS]
    use = ", ".join(known[:-1]) + " or " + known[-1] if len(known) > 1 else "".join(known)
    if f"fence.{sem.value}" in TABLE:
        return f"fence.{sem.value} has no IR in fuzzgpu's semantics table: fuzzgpu does not model it (use {use})"
    return f"fence.{sem.value} is not a PTX fence (use {use})"


def unknown_instructions(p: Program) -> list[str]:
    """One line per instruction of ``p`` that the table cannot read, naming the thread and the
    instruction as :func:`fuzzgpu.ir.validate` does (empty: every one is known)."""
    out = []
    for t in p.threads:
        for n, ins in enumerate(t.code):
            why = unknown_fence(ins.sem) if isinstance(ins, Fence) else None
            if why is not None:
                out.append(f"{t.name}, instruction {n} ({type(ins).__name__}): {why}")
    return out


def checked(p: Program) -> Program:
    """:func:`fuzzgpu.ir.validate`, then every instruction known to the table (the one check of
    which fences exist): return ``p`` or raise :class:`fuzzgpu.ir.ProgramError` (the first fault).

    The door every program loader goes through (the litmus parser, the corpus loader, the code
    generators' entries; docs/architecture.md, "Program loaders"): the IR below the table cannot
    check its instructions, so a loader that stopped at ``ir.validate`` / ``ir.program_from_json``
    would accept a fence the table does not know.  tests/ir/test_program_loaders.py names any
    function of the package that builds, reads or validates a Program without calling this."""
    validate(p)
    bad = unknown_instructions(p)
    if bad:
        raise ProgramError(bad[0])
    return p


def entry(ptx: str) -> Instr:
    """The table entry of a PTX instruction (family) name."""
    return TABLE[ptx]


def key_of(ins: Instruction) -> str | None:
    """The table key of an IR instruction, or None for one with no memory-model meaning.

    The classes whose key depends on a field are spelled out here; every other class is found by
    the ``ir`` field of its :data:`TABLE` entry (the class name alone, :data:`BY_IR_CLASS`), so a
    new IR class needs only its table entry."""
    if isinstance(ins, Load):
        return "ld.global.nc" if ins.nc else "ld"
    if isinstance(ins, Fence):
        if ins.sem not in FENCE_KEYS:
            raise ProgramError(unknown_fence(ins.sem) or "")
        return FENCE_KEYS[ins.sem]
    if isinstance(ins, ProxyFence):
        return "fence.proxy.async" if ins.kind is ProxyFenceKind.ASYNC else "fence.proxy"
    if isinstance(ins, Barrier):
        return "bar.arrive" if ins.mode == "arrive" else "bar.sync"
    if isinstance(ins, ClusterBarrier):
        return f"barrier.cluster.{ins.mode}"
    if isinstance(ins, GridDepControl):
        return f"griddepcontrol.{ins.action}"
    if isinstance(ins, MbarrierArrive):
        return "mbarrier.arrive.expect_tx" if ins.expect_tx is not None else "mbarrier.arrive"
    if isinstance(ins, MbarrierWait):
        return f"mbarrier.{ins.kind}"
    if isinstance(ins, CpAsyncBulk) and ins.tensor:
        return "cp.async.bulk.tensor"
    if isinstance(ins, TensormapFence):
        return f"fence.proxy.tensormap::generic.{ins.sem.value}"
    if isinstance(ins, Tcgen05Wait):
        return f"tcgen05.wait::{ins.kind}"
    return BY_IR_CLASS.get(type(ins).__name__)


def _by_ir_class() -> dict[str, str]:
    """IR class name -> table key, for the entries whose ``ir`` is a bare class name (one entry
    per class: a second one would be ambiguous)."""
    out: dict[str, str] = {}
    for e in TABLE.values():
        if e.ir and e.ir.isidentifier():
            if e.ir in out:
                raise ValueError(f"semantics.TABLE: IR class {e.ir} is the bare ir of {out[e.ir]!r} and {e.ptx!r}")
            out[e.ir] = e.ptx
    return out


#: the table key of each IR class named bare in an entry's ``ir`` (read by :func:`key_of`)
BY_IR_CLASS: dict[str, str] = _by_ir_class()


def of(ins: Instruction) -> Instr | None:
    """The table entry of an IR instruction (None: no memory-model meaning)."""
    key = key_of(ins)
    return None if key is None else TABLE[key]


def directions(ins: Instruction) -> tuple[bool, bool]:
    """(release, acquire) of an IR instruction as written: does it order the thread's earlier
    accesses before it, and itself before the thread's later accesses?"""
    e = of(ins)
    if e is None:
        return False, False
    sem = getattr(ins, "sem", None)
    if isinstance(ins, ClusterBarrier):
        sem = ins.effective_sem
    return e.orders_directions(sem.value if isinstance(sem, Sem) else None)


# --------------------------------------------------------------------------------------------
# Proxy fences: the one definition of what fence.proxy.<kind>{.space} orders
# --------------------------------------------------------------------------------------------

#: the proxy whose accesses each proxy fence orders against the generic proxy (``.alias``: generic
#: accesses through different virtual addresses) -- ISA "membar/fence" (fence.proxy), 8.6 Proxies
PROXY_FENCE_PROXY: dict[ProxyFenceKind, Proxy] = {
    ProxyFenceKind.ALIAS: Proxy.GENERIC,
    ProxyFenceKind.SURFACE: Proxy.SURFACE,
    ProxyFenceKind.TEXTURE: Proxy.TEXTURE,
    ProxyFenceKind.CONSTANT: Proxy.CONSTANT,
    ProxyFenceKind.ASYNC: Proxy.ASYNC,
}


def proxy_fence_proxy(kind: ProxyFenceKind) -> Proxy:
    """The proxy a ``fence.proxy.<kind>`` orders (see :data:`PROXY_FENCE_PROXY`)."""
    return PROXY_FENCE_PROXY[kind]


def proxy_fence_covers(fence_space: str | None, access_space: str | None) -> bool:
    """Does a ``fence.proxy.async{.space}`` order an access of this state space?  ISA
    "membar/fence": the fence orders only "objects in the state space specified"; ``.global``
    orders global memory, ``.shared::cta`` and ``.shared::cluster`` shared memory, no qualifier
    every state space.  A generic-addressed access (``access_space`` ``generic``, or unknown:
    None) may be either, so it is covered."""
    if not fence_space or not access_space or access_space == "generic":
        return True
    return (fence_space == "global") == (access_space == "global")


# --------------------------------------------------------------------------------------------
# Handoffs: what the producer/consumer generator draws and the race property names
# --------------------------------------------------------------------------------------------
# A *handoff* is the skeleton of every program :func:`fuzzgpu.strategies.producer_consumer` draws: a
# producer writes data, signals by some means; a consumer waits by some means and reads the data.
# Each :class:`Mechanism` below is one such means, made of instructions of :data:`TABLE`.  The race
# property (:mod:`fuzzgpu.model.race`) names the mechanism whose failure let a racing read miss the
# data, and :mod:`fuzzgpu.fixes` reads ``fixes`` for the changes to try first.


@dataclass(frozen=True)
class Mechanism:
    """One means of a handoff.

    ``name`` is the generator's and the race property's name for it; ``instructions`` the PTX it is
    made of (keys of :data:`TABLE`, or scope qualifiers); ``orders`` what it orders when used right; ``failure`` what went wrong when a racing
    read missed the data through it; ``fixes`` the single changes (:mod:`fuzzgpu.fixes` kinds) that
    repair it, tried first; ``isa`` the PTX ISA 9.x section(s)."""

    name: str
    instructions: tuple[str, ...]
    orders: str
    failure: str
    fixes: tuple[str, ...]
    isa: str
    drawn: bool = True  # the generator draws it (False: a failure name only)
    #: the failure's name in a race finding's class key (``race:flag-without-release-acquire``) when
    #: no known class (:data:`CLASS_NAMES`) names it; "" for the mechanism's own name
    race_name: str = ""


MECHANISMS: dict[str, Mechanism] = {m.name: m for m in (
    Mechanism("flag", ("st", "ld", "atom", "red"),
              "a release pattern synchronizes with an acquire pattern that reads its write, when the first "
              "and last operations are morally strong",
              "the flag handoff has no release/acquire pattern (a weak or relaxed flag, no fence)",
              ("strengthen", "fence"), "8.8 Release and Acquire Patterns; 8.9.4 Synchronizes-with",
              race_name="flag-without-release-acquire"),
    Mechanism("bar", ("bar.sync", "bar.arrive"),
              "bar.sync/bar.arrive synchronizes with a bar.sync on the same barrier",
              "the barrier orders the threads' own accesses only", ("wait", "fence.proxy"),
              "8.9.4 Synchronizes-with (bar); barrier"),
    Mechanism("mbarrier", ("mbarrier.init", "mbarrier.arrive", "mbarrier.try_wait", "mbarrier.test_wait"),
              "an arrive with release semantics is observed by a try_wait/test_wait with acquire semantics that "
              "returns True",
              "mbarrier .relaxed arrive or wait with no fence: the phase completion orders nothing",
              ("strengthen", "fence"), "mbarrier.arrive; mbarrier.test_wait/try_wait"),
    Mechanism("pdl", ("griddepcontrol.launch_dependents", "griddepcontrol.wait"),
              "every operation of the prerequisite grid precedes every operation after griddepcontrol.wait",
              "the dependent grid read the primary's data before griddepcontrol.wait (or without one)",
              ("wait",), "griddepcontrol"),
    Mechanism("stream", (),
              "a kernel boundary in one stream orders every operation of the earlier grid before the later one",
              "(never fails)", (), "8.9.4 API synchronization (CUDA stream order)"),
    Mechanism("same-thread", (),
              "program order between the thread's own accesses of one proxy and address",
              "(never fails in one proxy)", (), "8.9.5 Base causality order"),
    Mechanism("cp.async", ("cp.async", "cp.async.commit_group", "cp.async.wait", "cp.async.mbarrier.arrive"),
              "the copy's write is visible after cp.async.wait_group/wait_all in the issuing thread, or after a "
              "wait on the mbarrier cp.async.mbarrier.arrive tracks it with",
              "the cp.async write was not yet complete: no cp.async.wait_group/wait_all (or "
              "cp.async.mbarrier.arrive) in the issuing thread before the handoff",
              ("wait",), "cp.async; cp.async.wait_group; 9.7.9.25.1 Completion Mechanisms"),
    Mechanism("bulk-load", ("cp.async.bulk", "mbarrier.arrive.expect_tx", "mbarrier.try_wait"),
              "the copy's write (async proxy) is visible to generic reads through the implicit proxy fence once "
              "the reader observes the mbarrier phase its complete_tx completed",
              "the bulk copy's write was read before its completion was observed", ("strengthen", "wait"),
              "cp.async.bulk; 8.6 Proxies (implicit generic-async proxy fence at completion)"),
    Mechanism("bulk-store", ("cp.async.bulk", "cp.async.bulk.commit_group", "cp.async.bulk.wait_group",
                             "fence.proxy.async"),
              "a generic write is seen by the async proxy (the bulk copy's read) only through a fence.proxy.async "
              "on the causality path between them",
              "the generic write of shared memory was read by the async proxy without fence.proxy.async on the path",
              ("fence.proxy",), "8.6 Proxies; fence.proxy.async; cp.async.bulk"),
    Mechanism("bulk-store-data", ("st", "fence.proxy.async", "cp.async.bulk", "cp.async.bulk.commit_group",
                                  "cp.async.bulk.wait_group"),
              "data written to global memory by a TMA store of a staged shared buffer: its write is complete and "
              "visible to the issuing thread after cp.async.bulk.wait_group (without .read), whose release then "
              "publishes it",
              "the TMA store's global write was consumed before its completion: cp.async.bulk.wait_group.read (only "
              "the source reads) or no wait before the signal", ("strengthen", "wait"),
              "cp.async.bulk.wait_group; cp.async.bulk (issue 32, class 10)", race_name="bulk-copy-read-before-completion"),
    Mechanism("dsm", ("ld", "st", "atom", "red", ".cluster"),  # on .shared::cluster addresses (through mapa)
              "a thread of another CTA of the cluster reaches the shared memory of the data's CTA through its "
              ".shared::cluster address; the handoff orders the accesses as for any other location",
              "(a placement of the data, not a signal: the signal's failure is named)", ("strengthen", "fence"),
              "mapa; 8.5 Scope (.cluster); State spaces (.shared::cluster)"),
    Mechanism("cluster-barrier", ("barrier.cluster.arrive", "barrier.cluster.wait"),
              "a barrier.cluster.arrive (.release by default) synchronizes with the barrier.cluster.wait "
              "(.acquire) of its phase in the other threads of the cluster",
              "a barrier.cluster.arrive.relaxed orders execution only", ("strengthen", "fence"), "barrier.cluster"),
    Mechanism("remote-arrive", ("mbarrier.init", "fence.mbarrier_init", "barrier.cluster.arrive",
                                "mbarrier.arrive", "mbarrier.try_wait", ".cluster"),  # the arrive on .shared::cluster
              "an mbarrier initialised and published to the cluster (a release cluster barrier, or "
              "fence.mbarrier_init.release.cluster before a relaxed one) receives a remote arrive with release "
              "semantics at .cluster scope, observed by an acquiring try_wait/test_wait of .cluster scope",
              "the remote arrive or the wait is relaxed, or its scope (.cta) does not include the other CTA",
              ("strengthen", "fence"), "mbarrier.arrive (.shared::cluster); mbarrier.test_wait/try_wait; membar/fence "
              "(fence.mbarrier_init)"),
    # failure names only (the race property's classification of a racing pair)
    Mechanism("nc", ("ld.global.nc",),
              "a non-coherent load reads data that is read-only for the lifetime of the kernel",
              "ld.global.nc read data written during the reading kernel's lifetime: its read-only contract is broken",
              ("strengthen",), "8.1 Scope and applicability of the model; ld (.nc)", drawn=False,
              race_name="nc-load-of-written-data"),
    Mechanism("scope", (".cta", ".cluster", ".gpu", ".sys"),
              "two strong operations are morally strong when each one's scope includes the other's thread",
              "a release/acquire or fence whose scope does not include the other thread (.cta across CTAs, "
              ".cluster across clusters)", ("strengthen",), "8.5 Scope; 8.7 Morally strong operations", drawn=False),
    Mechanism("proxy", ("fence.proxy.async",),
              "accesses of different proxies are ordered only through a proxy fence on the causality path",
              "accesses in different proxies without the proxy fence on the path", ("fence.proxy",),
              "8.6 Proxies; 8.9.7 Proxy-preserved base causality order", drawn=False,
              race_name="cross-proxy-without-fence"),
    Mechanism("bulk-completion", ("cp.async.bulk", "cp.async.bulk.wait_group", "mbarrier.try_wait"),
              "the bulk copy's write (async proxy) is visible to generic accesses through the implicit proxy fence "
              "once its completion is observed (mbarrier phase, cp.async.bulk.wait_group without .read)",
              "the bulk copy's write was accessed before its completion was observed", ("wait", "strengthen"),
              "cp.async.bulk; cp.async.bulk.wait_group; 8.6 Proxies (implicit proxy fence at completion)", drawn=False,
              race_name="bulk-copy-read-before-completion"),
    Mechanism("proxy-fence", ("fence.proxy.async",),
              "a generic write is seen by the async proxy only through a fence.proxy.async on the causality path",
              "the generic write was read by the async proxy without fence.proxy.async on the path", ("fence.proxy",),
              "8.6 Proxies; fence.proxy.async; 8.9.7 Proxy-preserved base causality order", drawn=False),
    Mechanism("mbarrier-init", ("mbarrier.init", "fence.mbarrier_init"),
              "an mbarrier is used by other threads only after its mbarrier.init is ordered before their use "
              "(a release cluster barrier, or fence.mbarrier_init.release.cluster before a relaxed one, in the "
              "initialising thread)",
              "the mbarrier was used before its mbarrier.init was made visible: no fence.mbarrier_init in the "
              "initialising thread before a relaxed cluster barrier", ("fence", "strengthen"),
              "mbarrier.init; membar/fence (fence.mbarrier_init); barrier.cluster", drawn=False,
              race_name="mbarrier-used-before-init"),
    # issue 32: write-after-read across proxies (model/race.py: a read that saw a later write)
    Mechanism("async-overwrite", ("fence.proxy.async",),
              "a generic access of a buffer is ordered before a later async-proxy write of it (a TMA load into the "
              "stage) only through a fence.proxy.async on the causality path between them",
              "the buffer was overwritten by an async-proxy write (TMA load) while a generic read still read it: no "
              "fence.proxy.async between the generic access and the async reuse", ("fence.proxy",),
              "8.6 Proxies; 8.9.7 Proxy-preserved base causality order; cp.async.bulk", drawn=False),
    Mechanism("bulk-source-overwrite", ("cp.async.bulk", "cp.async.bulk.commit_group", "cp.async.bulk.wait_group"),
              "a bulk copy's source reads are performed once a cp.async.bulk.wait_group(.read) of the issuing thread "
              "covers its group; the source may be written after that wait (and what it orders)",
              "the bulk copy's source was overwritten before its read completed: no wait_group of the issuing thread "
              "covering its group (a wait by another thread, or wait_group N with the copy among the N most recent)",
              ("wait",), "cp.async.bulk.wait_group (.read); cp.async.bulk.commit_group (per-thread groups)", drawn=False),
    # issue 32, class L: the flag's two accesses of different sizes (access_extent)
    Mechanism("mixed-size", ("ld", "st"),
              "a release pattern synchronizes with an acquire pattern that reads its write only when the two "
              "accesses of the flag are morally strong: they overlap completely (the same address and size)",
              "the flag was written and read with accesses of different sizes (a partial overlap): they are not "
              "morally strong, so the release/acquire handoff synchronizes nothing", ("strengthen",),
              "8.2 Memory operations (Overlap); 8.7 Morally strong operations; 8.10.1 Data races", drawn=False),
    Mechanism("wgmma-register", ("wgmma.fence", "wgmma.mma_async", "wgmma.commit_group", "wgmma.wait_group"),  # class F
              "a wgmma.mma_async's accumulator and A-fragment registers are accessed by other instructions only before "
              "a wgmma.fence that precedes it, or after a wgmma.wait_group that covers its group",
              "a register operand of a wgmma accessed in flight: the A fragment overwritten or the accumulator accessed "
              "before the wgmma.wait_group covering its group, or written with no wgmma.fence before the wgmma",
              ("wait", "fence"), "9.7.15.7.1 wgmma.fence; 9.7.15.7.3 wgmma.wait_group", drawn=False),
    # issue 32, class D (model.tensormap): a generic rewrite of a tensor map and a tensor copy's read of it
    Mechanism("tensormap-fence", ("tensormap.replace", "fence.proxy.tensormap::generic.release", "fence.proxy.tensormap::generic.acquire"),
              "a generic write of a tensor map is seen by a tensor copy's read of it only through a .release tensormap proxy fence "
              "after the write and an .acquire one on the map, in the copy's CTA, before the copy",
              "the tensor map was rewritten and used by a tensor copy without the fence.proxy.tensormap::generic release/acquire "
              "pair", ("fence.proxy",), "membar/fence; cp.async.bulk.tensor; 8.9.5 Proxy-preserved base causality order", drawn=False),
    Mechanism("tensormap-overwrite", ("cp.async.bulk.tensor", "mbarrier.try_wait", "cp.async.bulk.wait_group"),
              "a tensor copy's read of its map is performed once its completion is observed (mbarrier phase, wait_group.read)",
              "the tensor map was rewritten while an earlier tensor copy still read it: no wait for its completion first",
              ("wait",), "cp.async.bulk.tensor (completion mechanisms); mbarrier.try_wait; cp.async.bulk.wait_group", drawn=False),
    # issue 32, class E (model.tensor_memory): a tcgen05.st/ld not completed before the handoff
    Mechanism("tcgen05-wait", ("tcgen05.st", "tcgen05.ld", "tcgen05.wait::st", "tcgen05.wait::ld"),
              "a tcgen05.st (tcgen05.ld) is ordered before the thread's later instructions -- a release, a barrier, a "
              "reuse of the cell -- only once a tcgen05.wait::st (::ld) of the thread completed it",
              "tcgen05 completion not awaited: a tcgen05.st published, or a tcgen05.ld's cell reused, before the "
              "tcgen05.wait::st / tcgen05.wait::ld of the issuing thread", ("wait",), "tcgen05.st; tcgen05.ld; tcgen05.wait",
              drawn=False),
    # issue 32, class G: the address tcgen05.alloc wrote to shared memory read by another thread without synchronization
    Mechanism("tcgen05-alloc", ("tcgen05.alloc", "bar.sync", "st", "ld", "tcgen05.fence"),
              "the address tcgen05.alloc writes to shared memory is seen by another thread through a barrier or a "
              "release/acquire handoff (tcgen05.fence::before_thread_sync / ::after_thread_sync around it)",
              "the tcgen05.alloc result published weakly: read by another thread with no synchronization that orders it "
              "after the allocation (a weak or relaxed flag, no barrier)", ("strengthen", "fence"),
              "tcgen05.alloc; 8.8 Release and Acquire Patterns; tcgen05 memory consistency", drawn=False),
    Mechanism("unordered", (),
              "conflicting accesses that are not morally strong must be ordered by causality order",
              "nothing orders the write before the read", ("fence", "strengthen", "wait"),
              "8.10.1 Data races (conflict, morally strong, causality order)", drawn=False,
              race_name="unordered-accesses"),
)}

#: the handoff means the generator draws (profile ``all`` draws every one)
DRAWN = tuple(m.name for m in MECHANISMS.values() if m.drawn)


# --------------------------------------------------------------------------------------------
# Rules the bug classes (:mod:`fuzzgpu.bug_classes`) and the model read
# --------------------------------------------------------------------------------------------

def wrong_parity(program: Program, at: tuple[int, int]) -> bool:
    """Does thread ``at[0]`` reach instruction ``at[1]`` through -- or is it -- a first
    ``mbarrier.try_wait`` / ``test_wait`` on an mbarrier that asks for parity 1 (the read after it
    races, or the wait itself races with the arrive it did not wait for)?  PTX ISA mbarrier.test_wait/try_wait:
    ``phaseParity`` is 'the integer parity of either the current phase or the immediately preceding
    phase'; an mbarrier starts in phase 0 (parity 0), so until a wait of the thread has seen phase 0
    complete, parity 1 names the immediately preceding phase, 'for which waitComplete returns True':
    the wait returns at once (issue 32, class I: the phase bookkeeping off by one).  Later waits are
    not judged (which phase they mean depends on the program's bookkeeping)."""
    tid, pc = at
    seen: set[str] = set()
    for ins in program.threads[tid].code[:pc + 1]:
        if isinstance(ins, MbarrierWait):
            if ins.bar not in seen and ins.parity == 1:
                return True
            seen.add(ins.bar)
    return False


def swappable_access(ins: Instruction) -> bool:
    """An access whose order with another swappable access of the same location in the same thread
    the model leaves free: a weak load (``ld`` with no ``.sem``, or ``ld.global.nc``, outside the
    model) of the generic proxy.  Any other pair of one thread's accesses of one location keeps its
    program order (:func:`keeps_location_order`)."""
    return isinstance(ins, Load) and (ins.sem is Sem.WEAK or ins.nc) and ins.proxy is Proxy.GENERIC


def keeps_location_order(first: Instruction, second: Instruction) -> bool:
    """Whether ``first`` and ``second``, two generic-proxy accesses of one location by one thread in
    this program order, must take effect in it -- a compiler that swaps them changes what the
    program may observe.  PTX ISA 9.x, 8.10 "Axioms": Coherence ("the concatenation of program order
    between overlapping operations and morally strong relations in communication order cannot result
    in a cycle": SC per location for morally strong operations, and every access of one thread to
    one location is morally strong with its own others when both are strong), and a read is not
    allowed to read a write that follows it in program order, nor a write older than one of its
    thread's writes that precede it (Causality order: base causality order includes program order
    between overlapping operations with a write).  Only two weak loads may be swapped: each may read
    any write the other may read, in either coherence order (docs/findings.md, section 3: ptxas 13.0
    issued corr3's ``ld.relaxed.sys y`` before its ``ld.volatile y``, and an H200 run counted the SC
    outcome as a forbidden one)."""
    generic = all(getattr(i, "proxy", Proxy.GENERIC) is Proxy.GENERIC for i in (first, second))
    return generic and not (swappable_access(first) and swappable_access(second))


def access_extent(width: int) -> tuple[int, int]:
    """The bytes an ``ld``/``st`` of ``width`` bits covers in its location's word: (offset, size).
    Every access is at offset 0 (``ir.Load.width``), so two accesses of one address overlap
    completely exactly when their sizes agree.  PTX ISA 9.x, 8.2 "Memory operations" (Overlap): two
    memory operations overlap when they specify the same virtual address and their memory locations
    overlap; the overlap is complete when both specify the same virtual address and the memory
    locations overlap exactly, and partial otherwise.  8.7 "Morally strong operations": two
    operations are morally strong only if, both being memory operations, "they overlap completely"
    -- so a 32-bit ``st`` and a 16-bit ``ld`` of one word are never morally strong, whatever their
    semantics and scopes: conflicting and unordered, they are a data race (8.10.1), and a
    release/acquire handoff through them synchronizes nothing (8.9.4; issue 32, class L)."""
    return 0, width // 8


def wgmma_register_window(groups: int, n: int) -> int:
    """How many of ``groups`` committed wgmma-groups (oldest first) ``wgmma.wait_group n`` completes: all but
    the ``n`` most recent (an uncommitted wgmma is in none).  PTX ISA 9.7.15.7.3: it waits "until only N or fewer of
    the most recent wgmma-groups are pending"; "Accessing the accumulator register or the input register containing
    the fragments of matrix A of a wgmma.mma_async instruction without first performing a wgmma.wait_group
    instruction that waits on a wgmma-group including that wgmma.mma_async instruction is undefined behavior".
    9.7.15.7.1: wgmma.fence orders "prior accesses to any warpgroup registers and subsequent accesses to the same
    registers by a wgmma.mma_async" and is needed between the two, "Otherwise, the behavior is undefined".  So a
    wgmma's register window runs from the last wgmma.fence before it to the wait covering its group (class F;
    fuzzgpu's reading of the undefined behaviour: :mod:`fuzzgpu.model.wgmma`)."""
    return max(0, groups - n)


def remote_cta_scope(program: Program) -> bool:
    """Issue 32 class 17 (J): an mbarrier that a thread of another CTA arrives on through
    ``.shared::cluster`` (a remote arrive), with a release arrive of ``.cta`` scope or an acquire wait
    of ``.cta`` scope on it: the scope excludes the other CTA, so the release and acquire patterns
    are not morally strong (ISA "Morally strong operations"; mbarrier.arrive: ".scope ... the set of
    threads that directly observe the memory synchronizing effect").  A ``.relaxed`` arrive or wait
    there is class 6's."""
    arrives = [i for t in program.threads for i in t.code if isinstance(i, MbarrierArrive) and i.shared_cluster]
    waits = [i for t in program.threads for i in t.code if isinstance(i, MbarrierWait)]
    for a in arrives:
        mine = [w for w in waits if w.bar == a.bar]
        if a.sem is Sem.RELAXED or any(w.sem is Sem.RELAXED for w in mine):
            continue
        if a.scope is Scope.CTA or any(w.scope is Scope.CTA for w in mine):
            return True
    return False


__all__ = ["ACQUIRE_FENCE_SEMS", "access_extent", "remote_cta_scope", "wgmma_register_window", "ACQUIRE_SEMS", "FENCE_KEYS", "RELEASE_FENCE_SEMS", "checked", "unknown_fence",
           "unknown_instructions", "wrong_parity", "DRAWN", "MECHANISMS", "Mechanism", "FUZZGPU", "ISA", "Instr", "MEMORY_FENCE_SEMS", "ONE_WAY_FENCE_SEMS", "NO_MEMORY_EFFECT", "PER_SEM",
           "PROXY_FENCE_PROXY", "RELEASE_SEMS", "STRENGTHS", "Strength", "TABLE", "BY_IR_CLASS", "directions", "entry", "is_strong",
           "key_of", "of", "proxy_fence_covers", "proxy_fence_proxy"]
