"""The PTX parser: PTX text -> functions of typed instructions, memory operations and
synchronisation points in program order (:func:`parse_ptx`).  A synchronisation point is the
semantics-table entry its instruction names (:func:`_table_key`), with the SASS token classes ptxas is
expected to emit for it (:data:`_SASS_OF`, :func:`_classify_ptx_sync`); :func:`_rule_key` gives the
rule a forbidden move across it cites."""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Callable, Sequence

from .. import semantics
from .cfg import ptx_flows, successors
from .loops import back_edges
from .ptx_async import async_conflicts, async_copy
from .ptx_text import (  # noqa: F401 -- _split_operands and _Scope are read from here too
    IMMEDIATE_RE,
    loop_is_intended,
    operand_address,
    _PTX_FUNC_RE,
    _Scope,
    _find_functions,
    _ptx_statements,
    source_lines,
    _split_operands,
    _strip_line_directives,
    _strip_ptx_comments,
)
from .ptx_ir import AsyncAccess, PtxEvent, PtxFunction, PtxInstr, PtxLoop, PtxMemOp, PtxSync  # noqa: F401 -- read from here too
from .report import _int

_set_attr = object.__setattr__
_new = object.__new__


_PTX_PRED_RE = re.compile(r"^@!?%?[\w$]+\s+")
_SPACES = {"global", "shared", "shared::cta", "shared::cluster", "local", "const", "param", "generic"}
_SEMS = {"relaxed", "acquire", "release", "acq_rel", "volatile", "weak", "mmio", "sc"}
_SCOPES = {"cta", "cluster", "gpu", "sys"}
_NAME_RE = re.compile(r"[%\w$]+")
_NUMBER_RE = re.compile(r"-?\d+|0x[0-9a-fA-F]+")
_TYPE_BITS = {
    "b8": 8, "u8": 8, "s8": 8,
    "b16": 16, "u16": 16, "s16": 16, "f16": 16, "bf16": 16, "f16x2": 32, "bf16x2": 32,
    "b32": 32, "u32": 32, "s32": 32, "f32": 32,
    "b64": 64, "u64": 64, "s64": 64, "f64": 64,
    "b128": 128,
}


def _branch_targets(stmts: Sequence[tuple[int, str, tuple[tuple[str, _Scope], ...], _Scope]],
                    instrs: Sequence[PtxInstr]) -> tuple[tuple[int, int], ...]:
    """``(branch index, target index)`` of each ``bra`` whose label is visible from it: the label
    of the innermost enclosing scope (a scope's stack is a prefix of the branch's)."""
    defs: dict[str, list[tuple[_Scope, int]]] = {}
    for idx, stmt in enumerate(stmts):
        for name, scope in stmt[2]:
            defs.setdefault(name, []).append((scope, idx))
    out = []
    for ins, stmt in zip(instrs, stmts):
        if ins.opcode != "bra" or not ins.operands:
            continue
        scope = stmt[3]
        seen = [(len(sc), idx) for sc, idx in defs.get(ins.operands[0].strip(), []) if scope[:len(sc)] == sc]
        if seen:
            out.append((ins.index, max(seen)[1]))
    return tuple(out)


#: what a statement's text alone says: the text with its blanks normalised, the predicate, the
#: opcode, its qualifiers, the operands (:func:`_read_statement`)
_Read = tuple[str, str, str, tuple[str, ...], tuple[str, ...]]


def _read_statement(stmt: str) -> _Read:
    pred = ""
    m = _PTX_PRED_RE.match(stmt) if stmt[:1] == "@" else None
    if m:
        pred = m.group(0).strip()
        stmt_body = stmt[m.end():]
    else:
        stmt_body = stmt
    parts = stmt_body.split(None, 1)
    op = parts[0] if parts else ""
    operands = _split_operands(parts[1]) if len(parts) > 1 else ()
    pieces = op.split(".")
    # re-join "shared::cta" style qualifiers, which contain no dots, so a plain split is right
    return " ".join(stmt.split()), pred, pieces[0], tuple(pieces[1:]), operands


def _parse_ptx_instr(index: int, line: int, stmt: str, src: tuple[tuple[str, int], ...] = (),
                     memo: dict[str, _Read] | None = None) -> PtxInstr:
    """The instruction of statement ``stmt``; what its text alone says is read once per text
    (``memo``: for the statements of one module; a third of them repeat)."""
    got = memo.get(stmt) if memo is not None else None
    if got is None:
        got = _read_statement(stmt)
        if memo is not None:
            memo[stmt] = got
    text, pred, opcode, mods, operands = got
    return PtxInstr(index, line, text, pred, opcode, mods, operands, src)


def _ptx_width(mods: Sequence[str]) -> int:
    vec = 1
    bits = 32
    for m in mods:
        if m in ("v2", "v4", "v8"):
            vec = int(m[1:])
        elif m in _TYPE_BITS:
            bits = _TYPE_BITS[m]
    return vec * bits


#: the SASS families whose class carries the access's strength (``CONSTANT``, ``MMIO``, ``STRONG.<scope>``): plain
#: loads and stores.  An atomic's family, and an asynchronous, bulk or multimem one's (``LDGMC``, ``STAS``,
#: ``REDAS``, ``UMEMSETS``), is its class whatever its PTX semantics: the SASS side reads no strength there
#: (``LDGMC.E.ADD.32.STRONG.SYS`` is class ``LDGMC``), so neither does the PTX side (``multimem.ld_reduce.relaxed.sys``)
STRENGTH_FAMILIES = frozenset(("LDG", "STG", "LD", "ST"))


def _mem_class(family: str, strength: str) -> str:
    """A memory operation's class, PTX and SASS alike: its SASS family, with its strength where the family
    carries one (:data:`STRENGTH_FAMILIES`)."""
    return f"{family}.{strength}" if strength and family in STRENGTH_FAMILIES else family


def _classify_ptx_mem(ins: PtxInstr, defs: dict[str, tuple[str, int]]) -> PtxMemOp | None:
    op = ins.opcode
    if op in ("ldmatrix", "stmatrix"):  # a warp's matrix fragments to/from shared memory (LDSM/STSM)
        return _matrix_access(ins, defs)
    if op == "tensormap":
        return _tensormap_access(ins, defs)
    if op == "multimem":
        return _multimem_access(ins, defs)
    if op not in ("ld", "st", "atom", "red", "ldu"):
        return None
    mods = ins.mods
    space = "generic"
    for m in mods:
        if m in _SPACES:
            space = {"shared::cta": "shared", "shared::cluster": "cluster"}.get(m, m)
    if space == "param":
        return None
    kind = {"ld": "load", "ldu": "load", "st": "store", "atom": "atomic", "red": "reduction"}[op]
    sem = "weak"
    scope = ""
    for m in mods:
        if m in _SEMS:
            sem = m
        if m in _SCOPES:
            scope = m
    if "nc" in mods or op == "ldu":
        sem = "nc"
    if kind in ("atomic", "reduction"):
        if sem == "weak":
            sem = "relaxed"
        scope = scope or "gpu"
    elif sem in ("relaxed", "acquire", "release", "acq_rel", "mmio") and not scope:
        scope = "sys" if sem == "mmio" else "gpu"
    elif sem == "volatile":
        scope = "sys"
    addr_operand = ""
    for o in ins.operands:
        if o.startswith("["):
            addr_operand = o
            break
    root, off = operand_address(addr_operand) if addr_operand else ("", 0)
    if root in defs:
        r0, o0 = defs[root]
        root, off = r0, o0 + off
    width = _ptx_width(mods)
    return PtxMemOp(ins, kind, space, sem, scope, width, root, off)


#: ``multimem`` operations: their kind and their semantics when no ``.ldsem``/``.stsem``/``.redsem`` is given
_MULTIMEM = {"ld_reduce": ("load", "weak"), "st": ("store", "weak"), "red": ("reduction", "relaxed")}


def _multimem_access(ins: PtxInstr, defs: dict[str, tuple[str, int]]) -> PtxMemOp | None:
    """``multimem.ld_reduce``/``st``/``red``: a load, store or reduction of global memory at a multimem address
    (PTX ISA multimem.ld_reduce, multimem.st, multimem.red: "If explicit semantics qualifiers are not
    specified, then multimem.ld_reduce and multimem.st default to .weak and multimem.red defaults to .relaxed
    ... If the .scope qualifier is not specified for multimem.red then .sys scope is assumed by default"; a
    strong ld_reduce or st without a scope is taken at .gpu, as ld and st).  ptxas 13.0 emits
    ``LDGMC`` for an ld_reduce (a family of its own: :data:`ASYNC_FAMILIES`), ``STG`` and ``REDG`` for the others."""
    mods = ins.mods
    kind_sem = _MULTIMEM.get(mods[0]) if mods else None
    if kind_sem is None:
        return None
    kind, sem = kind_sem
    sem = next((m for m in mods if m in _SEMS), sem)
    scope = next((m for m in mods if m in _SCOPES), "" if sem == "weak" else "sys" if kind == "reduction" else "gpu")
    return PtxMemOp(ins, kind, "global", sem, scope, _ptx_width(mods), *(_operand_address(ins, defs) or ("", 0)))


def _tensormap_access(ins: PtxInstr, defs: dict[str, tuple[str, int]]) -> PtxMemOp | None:
    """``tensormap.replace`` (class D): "a weak memory operation, on the entire 1024-bit opaque
    tensor-map object" (PTX ISA tensormap.replace), a write of its ``.global``/``.shared::cta`` (no
    qualifier: generic) map, of the width of its ``.b32``/``.b64`` value; ``tensormap.cp_fenceproxy``:
    its copy's write of the map to global memory (``[dst]``), a lane's 4 of its 128 bytes
    (:func:`_tensormap_parts` gives the SASS of each)."""
    mods = ins.mods
    if mods[:1] == ("replace",):
        space = "global" if "global" in mods else "shared" if "shared::cta" in mods else "generic"
        return PtxMemOp(ins, "store", space, "weak", "", _ptx_width(mods), *(_operand_address(ins, defs) or ("", 0)))
    if mods[:1] == ("cp_fenceproxy",):
        return PtxMemOp(ins, "store", "global", "weak", "", 32, *(_operand_address(ins, defs) or ("", 0)))
    return None


def _tensormap_parts(ins: PtxInstr, mem: PtxMemOp, defs: dict[str, tuple[str, int]]) -> tuple[tuple[str, PtxMemOp], ...]:
    """The SASS families a tensor-map instruction expands into, any number of each, and the access
    each stands for (ptxas 13.0, sm_90a; tests/sass/test_sass_tensormap.py).  tensormap.replace: a
    field is written with ``ST*`` (``STS.64``/``STG.E.64`` for global_address, ``STS``/``STG.E`` for
    global_dim) or read, modified and written (global_stride: an ``LD*`` and two ``ST*``) -- the
    loads stand for the replace's read of the map.  tensormap.cp_fenceproxy: each lane's ``LDS`` of
    the map in shared memory ([src]) and its write to global memory ([dst]), an
    ``ATOMG.E.EXCH.STRONG.GPU`` (or an ``STG``)."""
    if ins.mods[:1] == ("replace",):
        load = dataclasses.replace(mem, kind="load")
        fam = _ptx_mem_family(mem)
        return ((fam, mem), (_ptx_mem_family(load), load))
    src = next((o for o in ins.operands[1:] if o.startswith("[")), "")
    root, off = operand_address(src) if src else ("", 0)
    root, off = (defs[root][0], defs[root][1] + off) if root in defs else (root, off)
    read = PtxMemOp(ins, "load", "shared", "weak", "", 32, root, off)
    return (("LDS", read), ("ATOMG", mem), ("STG", mem))


def _generic_atomic_parts(mem: PtxMemOp) -> tuple[tuple[str, PtxMemOp], ...]:
    """The SASS families an ``atom``/``red`` at a generic address expands into, each standing for the
    atomic access: a generic address may be in the shared window (PTX ISA, Generic Addressing), and
    ptxas 13.0 emits an ``ATOM.E`` (the global path), then ``LD.E``/``ST.E`` or an ``LDS`` and an
    ``ATOMS.CAST.SPIN`` loop for the shared window (tests/sass/test_sass_generic_atomics.py)."""
    return (("ATOM", mem), ("LD", mem), ("ST", mem), ("LDS", mem), ("ATOMS", mem))


def _operand_address(ins: PtxInstr, defs: dict[str, tuple[str, int]]) -> tuple[str, int] | None:
    """The first ``[...]`` operand of ``ins`` as (root, offset), followed through ``defs``."""
    addr = next((o for o in ins.operands if o.startswith("[")), "")
    if not addr:
        return None
    root, off = operand_address(addr)
    if root in defs:
        r0, o0 = defs[root]
        root, off = r0, o0 + off
    return (root, off)


def _matrix_access(ins: PtxInstr, defs: dict[str, tuple[str, int]]) -> PtxMemOp:
    """ldmatrix/stmatrix (PTX ISA, warp-level matrix load/store): a weak shared-memory access of
    the thread's fragments, 32 bits per matrix (``.x1/.x2/.x4``; SASS ``LDSM``/``STSM .1/.2/.4``)."""
    n = next((int(m[1:]) for m in ins.mods if m in ("x1", "x2", "x4")), 1)
    addr = next((o for o in ins.operands if o.startswith("[")), "")
    root, off = operand_address(addr) if addr else ("", 0)
    if root in defs:
        r0, o0 = defs[root]
        root, off = r0, o0 + off
    return PtxMemOp(ins, "load" if ins.opcode == "ldmatrix" else "store", "shared", "weak", "", 32 * n, root, off)


def _sass_strength_for(mem: PtxMemOp) -> str:
    if mem.space not in ("global", "generic"):
        return ""
    if mem.kind in ("atomic", "reduction"):
        return ""
    if mem.sem == "nc":
        return "CONSTANT"
    if mem.sem == "mmio":
        return "MMIO"
    if mem.sem == "weak":
        # cache operators that ptxas encodes as strengths (seen with ptxas 13.0 on sm_90/sm_100a)
        for op, strength in (("cg", "STRONG.GPU"), ("cv", "STRONG.SYS"), ("ca", "STRONG.SM")):
            if op in mem.instr.mods and mem.kind == "load":
                return strength
        return ""
    return {"cta": "STRONG.SM", "cluster": "STRONG.GPU", "gpu": "STRONG.GPU", "sys": "STRONG.SYS"}[mem.scope]


#: PTX memory operations with SASS of their own: ``st.async`` (STAS), ``red.async`` (REDAS),
#: ``st.bulk`` (UMEMSETS), ``multimem.ld_reduce`` (LDGMC), keyed by (opcode, modifier)
ASYNC_FAMILIES = {("st", "async"): "STAS", ("red", "async"): "REDAS", ("st", "bulk"): "UMEMSETS",
                  ("multimem", "ld_reduce"): "LDGMC"}


def async_family(ins: PtxInstr) -> str:
    """The SASS family of an asynchronous or bulk store/reduction (:data:`ASYNC_FAMILIES`), else ""."""
    return next((f for (op, mod), f in ASYNC_FAMILIES.items() if ins.opcode == op and mod in ins.mods), "")


def _ptx_mem_family(mem: PtxMemOp) -> str:
    family = async_family(mem.instr)
    if family:
        return family
    if mem.kind in ("atomic", "reduction"):
        return {"global": "ATOMG", "shared": "ATOMS"}.get(mem.space, "ATOM")
    load = mem.kind == "load"
    return {
        "global": "LDG" if load else "STG",
        "shared": "LDS" if load else "STS",
        "local": "LDL" if load else "STL",
        "const": "LDC" if load else "STC",
    }.get(mem.space, "LD" if load else "ST")


def _membar(scope: str, sc: bool) -> str:
    s = {"cta": "CTA", "cluster": "GPU", "gpu": "GPU", "sys": "SYS"}.get(scope, "GPU")
    return f"MEMBAR.{'SC' if sc else 'ALL'}.{s}"


def _sync(ins: PtxInstr, kind: str, key: str | None = None, space: str = "") -> PtxSync:
    """The synchronisation point ``kind`` of ``ins``: what it orders (release: the thread's earlier
    accesses before it; acquire: it before the later ones) is the instruction-semantics table's
    entry ``key`` (default ``kind``; :mod:`fuzzgpu.semantics`), with its ``.sem`` qualifier."""
    sem = next((m for m in ins.mods if m in _SEMS), None)
    release, acquire = semantics.entry(key or kind).orders_directions(sem)
    return PtxSync(ins, kind, release, acquire, space)


#: the opcodes whose instructions are memory operations (:func:`_classify_ptx_mem`); their table
#: entries (``ld``, ``st``, ``atom``, ``red``) are read there, not as synchronisation points
_MEM_OPCODES = ("ld", "ldu", "st", "atom", "red", "ldmatrix", "stmatrix", "multimem")


def _table_name(ins: PtxInstr) -> tuple[str, ...]:
    """The opcode and qualifiers of ``ins`` spelled as the semantics table names its instruction
    (PTX ISA): ``barrier{.cta}{.aligned}`` is ``bar`` and a bare ``bar`` is ``bar.sync``
    (bar/barrier); ``cp.async.wait_group``/``wait_all`` are the one ``cp.async.wait``
    (cp.async.wait_group/wait_all); ``mbarrier.arrive_drop`` is an arrive (mbarrier.arrive_drop);
    ``cp.reduce.async.bulk`` is a bulk copy (cp.reduce.async.bulk)."""
    op, mods = ins.opcode, ins.mods
    if op in ("bar", "barrier") and "cluster" not in mods:
        return ("bar",) + (tuple(m for m in mods if m not in ("cta", "aligned")) or ("sync",))
    if op == "cp" and mods[:1] == ("reduce",):
        mods = mods[1:]
    if mods[:2] in (("async", "wait_group"), ("async", "wait_all")):
        return (op, "async", "wait") + mods[2:]
    if op == "mbarrier" and mods[:1] == ("arrive_drop",):
        return (op, "arrive") + mods[1:]
    return (op,) + mods


def _table_key(ins: PtxInstr) -> str | None:
    """The key of :data:`fuzzgpu.semantics.TABLE` a PTX instruction is: the longest key its name
    (:func:`_table_name`) starts with, qualifier by qualifier; None for a memory operation's opcode
    (:data:`_MEM_OPCODES`) and for an instruction the table does not know."""
    if ins.opcode in _MEM_OPCODES or ins.opcode not in _table_opcodes():
        return None
    return _key_of_name(_table_name(ins))


@functools.lru_cache(maxsize=1)
def _table_opcodes() -> frozenset[str]:
    """The opcodes whose name (:func:`_table_name`) may start a key of the table: the keys' first
    components, and ``bar``/``barrier`` (:func:`_table_name` renames them)."""
    return frozenset(k.split(".")[0] for k in semantics.TABLE) | {"bar", "barrier"}


@functools.lru_cache(maxsize=1)
def _event_opcodes() -> frozenset[str]:
    """The opcodes of the instructions that may be an event: a memory operation
    (:data:`_MEM_OPCODES`, :func:`_classify_ptx_mem`) or a synchronisation point (:func:`_table_key`);
    every other instruction is neither, and :func:`parse_ptx` does not classify it."""
    return frozenset(_MEM_OPCODES) | _table_opcodes()


@functools.lru_cache(maxsize=4096)
def _key_of_name(name: tuple[str, ...]) -> str | None:
    keys = [k for k in semantics.TABLE if name[:len(k.split("."))] == tuple(k.split("."))]
    return max(keys, key=len, default=None)


_Tokens = tuple[str, ...]


def _fence_sass(ins: PtxInstr, key: str) -> tuple[PtxSync | None, _Tokens]:
    """A fence by its table directions (ptxas 13.0, sm_90): its release side is
    ``MEMBAR.SC|ALL.<scope>`` (``.SC`` for fence.sc), its acquire side ``CCTL.IVALL`` beyond the
    CTA -- fence.sc/fence.acq_rel both, fence.release.<s> the ``MEMBAR.ALL`` only, fence.acquire.<s>
    the ``CCTL.IVALL`` only (none at .cta: no SASS, so not checked); fence.mbarrier_init orders
    neither (no SASS of its own); membar is fence.sc."""
    mods = ins.mods
    if key == "membar":
        sc_scope = {"cta": "cta", "gl": "gpu", "sys": "sys"}.get(mods[0] if mods else "gl", "gpu")
        toks = (_membar(sc_scope, True),) + (() if sc_scope == "cta" else ("CCTL.IVALL",))
        return _sync(ins, "fence.sc", "membar"), toks
    sync = _sync(ins, key)
    sc_scope = next((m for m in mods if m in _SCOPES), "") or "sys"
    toks = ((_membar(sc_scope, key == "fence.sc"),) if sync.release else ()) + (
        ("CCTL.IVALL",) if sync.acquire and sc_scope != "cta" else ())
    return sync, toks


def _proxy_fence_sass(ins: PtxInstr, key: str) -> tuple[PtxSync | None, _Tokens]:
    """fence.proxy.async{.space}: ``FENCE.VIEW.ASYNC.G|S``, after a ``MEMBAR`` for
    ``.shared::cta`` and no space; fence.proxy.alias/tensormap: no known token."""
    mods = ins.mods
    if "async" in mods or any(m.startswith("async") for m in mods):
        space = ""
        if "global" in mods:
            return _sync(ins, "fence.proxy.async", space="global"), ("FENCE.VIEW.ASYNC.G",)
        if "shared::cta" in mods:
            return _sync(ins, "fence.proxy.async", space="shared"), ("MEMBAR.ALL.CTA", "FENCE.VIEW.ASYNC.S")
        if "shared::cluster" in mods:
            return _sync(ins, "fence.proxy.async", space="shared"), ("FENCE.VIEW.ASYNC.S",)
        return _sync(ins, "fence.proxy.async", space=space), ("MEMBAR.ALL.GPU", "FENCE.VIEW.ASYNC.S")
    # fence.proxy.alias / tensormap: ordering between proxies of one location; no known token
    return _sync(ins, "fence.proxy." + (mods[1] if len(mods) > 1 else ""), "fence.proxy"), ()


def _cluster_barrier_sass(ins: PtxInstr, key: str) -> tuple[PtxSync | None, _Tokens]:
    """barrier.cluster.arrive (release unless .relaxed) / barrier.cluster.wait (acquire); ptxas 13.0,
    sm_90: arrive[.release] is MEMBAR.ALL.GPU; ERRBAR; CGAERRBAR; UCGABAR_ARV, arrive.relaxed is
    UCGABAR_ARV alone, wait[.acquire] is UCGABAR_WAIT; CCTL.IVALL (.aligned or not)."""
    if key == "barrier.cluster.wait":
        return _sync(ins, key), ("UCGABAR_WAIT", "CCTL.IVALL")
    if "relaxed" in ins.mods:
        return _sync(ins, key), ("UCGABAR_ARV",)
    return _sync(ins, key), ("MEMBAR.ALL.GPU", "UCGABAR_ARV")


def _mbarrier_wait_sass(ins: PtxInstr, key: str) -> tuple[PtxSync | None, _Tokens]:
    """mbarrier.try_wait/test_wait: ``SYNCS.PHASECHK``, then ``CCTL.IVALL`` for an acquire beyond the CTA."""
    mods = ins.mods
    toks: _Tokens = ("SYNCS.PHASECHK",)
    if "acquire" in mods and ("cluster" in mods or "gpu" in mods or "sys" in mods):
        toks += ("CCTL.IVALL",)
    return _sync(ins, key), toks


def _other_mbarrier_sass(ins: PtxInstr, key: str) -> tuple[PtxSync | None, _Tokens]:
    """Another mbarrier operation (inval, pending_count, ...): no known token."""
    return _sync(ins, "mbarrier." + (ins.mods[0] if ins.mods else ""), "mbarrier"), ()


def _cp_async_sass(ins: PtxInstr, key: str) -> tuple[PtxSync | None, _Tokens]:
    """cp.async.ca/.cg: ``LDGSTS``; another cp.async spelling is not a copy it knows."""
    if len(ins.mods) > 1 and ins.mods[1] in ("ca", "cg"):
        return _sync(ins, key), ("LDGSTS",)
    return None, ()


def _bulk_copy_sass(ins: PtxInstr, key: str) -> tuple[PtxSync | None, _Tokens]:
    """cp{.reduce}.async.bulk{.prefetch}: the ``UBLKCP``/``UBLKRED``/``UBLKPF`` family (``BULK``);
    with ``.tensor`` (a tensor map) the ``UTMALDG``/``UTMASTG``/``UTMAREDG``/``UTMAPF`` family (``TMA``)."""
    return _sync(ins, ".".join(("cp",) + ins.mods[:3]), key), ("TMA",) if "tensor" in ins.mods else ("BULK",)


def _tokens(*toks: str) -> Callable[[PtxInstr, str], tuple[PtxSync | None, _Tokens]]:
    """A table entry whose SASS is always the token classes ``toks``."""
    return lambda ins, key: (_sync(ins, key), toks)


#: the table keys of the tensor-memory accesses and their waits (classes E/G): the checker reports them
#: not checked (:func:`unmatched_sync`), never clean and never judged
TENSOR_MEMORY_KEYS = frozenset({"tcgen05.st", "tcgen05.ld", "tcgen05.wait::st", "tcgen05.wait::ld"})

#: the SASS side of the semantics table: for each key of :data:`fuzzgpu.semantics.TABLE` whose SASS
#: is known, the synchronisation point and the SASS token classes ptxas emits for it (in SASS
#: order; ptxas 13.0, sm_90/sm_100a, docs/sass.md).  A table key missing here is still a
#: synchronisation point, with no known SASS (so not checked where it orders memory).
_SASS_OF: dict[str, Callable[[PtxInstr, str], tuple[PtxSync | None, _Tokens]]] = {
    "membar": _fence_sass, "fence.sc": _fence_sass, "fence.acq_rel": _fence_sass,
    "fence.acquire": _fence_sass, "fence.release": _fence_sass,
    # a release fence for prior mbarrier.init only (PTX ISA, membar/fence: fence.mbarrier_init)
    "fence.mbarrier_init": _fence_sass,
    "fence.proxy": _proxy_fence_sass, "fence.proxy.async": _proxy_fence_sass,
    # class D (ptxas 13.0): release MEMBAR.ALL.GPU (.SYS at .sys), acquire UTMACCTL.IV [map] (its cached copy dropped)
    "fence.proxy.tensormap::generic.release": lambda ins, key: (_sync(ins, key), (_membar("sys" if "sys" in ins.mods else "gpu", False),)),
    "fence.proxy.tensormap::generic.acquire": _tokens("UTMACCTL.IV"),
    "bar.sync": _tokens("BAR.SYNC"), "bar.arrive": _tokens("BAR.ARV"), "bar.red": _tokens("BAR.RED"),
    "barrier.cluster.arrive": _cluster_barrier_sass, "barrier.cluster.wait": _cluster_barrier_sass,
    "griddepcontrol.wait": _tokens("ACQBULK"), "griddepcontrol.launch_dependents": _tokens("PREEXIT"),
    "mbarrier.init": _tokens("SYNCS.EXCH"),
    "mbarrier.arrive": _tokens("SYNCS.ARRIVE"), "mbarrier.arrive.expect_tx": _tokens("SYNCS.ARRIVE"),
    "mbarrier.expect_tx": _tokens("SYNCS.ARRIVE"), "mbarrier.complete_tx": _tokens("SYNCS.ARRIVE"),
    "mbarrier.try_wait": _mbarrier_wait_sass, "mbarrier.test_wait": _mbarrier_wait_sass,
    "mbarrier": _other_mbarrier_sass,
    "cp.async": _cp_async_sass, "cp.async.commit_group": _tokens("LDGDEPBAR"), "cp.async.wait": _tokens("DEPBAR"),
    "cp.async.bulk": _bulk_copy_sass, "cp.async.bulk.tensor": _bulk_copy_sass, "cp.async.bulk.commit_group": _tokens("UTMACMDFLUSH"),
    "cp.async.bulk.wait_group": _tokens("DEPBAR"),
    # orders none of the thread's own accesses (its release is of the copies only, which the checker does not
    # follow) and its SASS is not matched: no point here
    "cp.async.mbarrier.arrive": lambda ins, key: (None, ()),
    "tcgen05.fence": _tokens(),  # emits no SASS (toolchain §5)
    # tensor memory (classes E/G): no SASS is matched -- the checker follows no tensor-memory access
    **{k: _tokens() for k in TENSOR_MEMORY_KEYS},
}


def unmatched_sync(ins: PtxInstr, orders: bool) -> tuple[bool, str]:
    """What the report says of a synchronisation point with no SASS to match: (not checked?, the
    text).  A tensor-memory access or its wait is not checked (the SASS checker follows no tensor
    memory; its order is the oracle's); another point is not checked where it ``orders`` a memory
    operation of its thread, else a note."""
    if _table_key(ins) in TENSOR_MEMORY_KEYS:
        return True, (f"`{ins.text}` (PTX line {ins.line}): tensor memory (tcgen05, sm_100a), an access or its wait -- "
                      "the SASS checker follows no tensor-memory access (their order is tcgen05.wait's): not checked")
    if _table_key(ins) == "tensormap.cp_fenceproxy":
        return True, (f"`{ins.text}` (PTX line {ins.line}): its release proxy pattern orders its copy before the later "
                      "tensormap-proxy accesses of [dst] (tensor copies, which the SASS checker follows as no memory "
                      "operations) and has no SASS of its own: not checked (its copy is checked as memory operations)")
    if orders:
        return True, f"`{ins.text}` (PTX line {ins.line}) has no known SASS: not checked"
    what = ("its operand reads are async-proxy, ordered by wgmma.fence / commit_group / wait_group, which this "
            "checker does not follow" if ins.opcode == "wgmma" else "nothing to check")
    return False, (f"`{ins.text}` (PTX line {ins.line}): its SASS is not matched, and it orders no generic-proxy "
                   f"memory operation of its thread ({what})")


def sync_of(ins: PtxInstr) -> PtxSync | None:
    """The synchronisation meaning of one PTX statement on its own (no addresses followed), or None when it
    orders nothing."""
    return _classify_ptx_sync(ins, _classify_ptx_mem(ins, {}))[0]


def _classify_ptx_sync(ins: PtxInstr, mem: PtxMemOp | None) -> tuple[PtxSync | None, tuple[str, ...]]:
    """The synchronisation meaning of a PTX instruction and the SASS token classes it expands to
    (in SASS order), or ``(None, ())``.  A memory operation is one when its ``.sem`` orders (the
    table's ``ld``/``st``/``atom``/``red`` with :data:`fuzzgpu.semantics.STRENGTHS`); any other
    instruction is the table entry :func:`_table_key` names, with the SASS of :data:`_SASS_OF`."""
    op = ins.opcode
    if op == "tensormap":  # tensormap.replace: a weak store, no point; cp_fenceproxy: a release with no SASS of its own
        key = _table_key(ins)
        return (_sync(ins, key), ()) if key is not None and semantics.entry(key).release else (None, ())
    if mem is not None:
        key = {"ldu": "ld", "ldmatrix": "ld", "stmatrix": "st"}.get(op, op)
        if op == "multimem":
            key = f"multimem.{ins.mods[0]}"
        rel, acq = semantics.entry(key).orders_directions(mem.sem)
        if not (rel or acq):
            return None, ()
        classes: list[str] = []
        if rel:
            classes.append(_membar(mem.scope, False))
        classes.append("@mem")
        if acq and mem.scope in ("gpu", "sys", "cluster"):
            classes.append("CCTL.IVALL")
        kind = {(True, False): "release", (False, True): "acquire", (True, True): "acq_rel"}[(rel, acq)]
        return PtxSync(ins, kind, rel, acq), tuple(classes)
    key = _table_key(ins) if mem is None else None
    if key is None:
        return None, ()
    sass = _SASS_OF.get(key)
    return sass(ins, key) if sass is not None else (_sync(ins, key), ())


_WRITES_NONE = {"st", "red", "bar", "barrier", "bra", "ret", "exit", "fence", "membar", "griddepcontrol", "cp", "prefetch", "prefetchu", "call"}


def _ptx_dests(ins: PtxInstr) -> tuple[str, ...]:
    return _dests_of(ins.opcode, ins.operands)


def _dests_of(opcode: str, operands: tuple[str, ...]) -> tuple[str, ...]:
    """The registers an instruction of ``opcode`` with ``operands`` writes (:func:`_ptx_dests`)."""
    if opcode in _WRITES_NONE or not operands:
        return ()
    first = operands[0]
    if first.startswith("["):
        return ()
    if "," not in first:  # one register (the common case)
        r = first.strip("{}").strip()
        return (r,) if r.startswith("%") else ()
    return tuple(r.strip() for r in first.strip("{}").split(",") if r.strip().startswith("%"))


#: how an instruction follows an address (``add/sub reg, reg, imm``, ``mov``, ``cvta``: an address is a
#: (root, offset)), from its text alone (:func:`_def_step`): None (its destinations are only forgotten),
#: or ``(name, delta, follow)``: its one destination becomes ``name`` (followed through the addresses
#: known, when ``follow``) plus ``delta`` bytes
_Step = tuple[str, int, bool] | None
_STEP_OPCODES = frozenset(("mov", "cvta", "cvt", "add", "sub"))  # (the others make no step)
_NOT_FOLLOWED = ("%tid", "%ctaid", "%clock", "%ntid", "%laneid", "%smid", "%nctaid", "%globaltimer")


def _def_step(opcode: str, ops: tuple[str, ...], dests: tuple[str, ...]) -> _Step:
    if len(dests) != 1:
        return None
    if opcode in ("mov", "cvta", "cvt") and len(ops) == 2 and not ops[1].startswith("{"):
        if _NAME_RE.fullmatch(ops[1]) and not _NUMBER_RE.fullmatch(ops[1]):
            if ops[1].startswith("%") and not ops[1].startswith(_NOT_FOLLOWED):
                return (ops[1], 0, True)
            if not ops[1].startswith("%"):
                return (ops[1], 0, False)  # a symbol (shared variable)
    elif opcode in ("add", "sub") and len(ops) == 3:
        a, b = ops[1], ops[2]
        if IMMEDIATE_RE.fullmatch(b) and a.startswith("%"):
            k = _int(b)
            return (a, k if opcode == "add" else -k, True)
    return None


#: the ``.shared`` atomics ``ATOMS`` has an instruction for (ptxas 13.0, sm_90a and sm_100a): every
#: operation on a 32-bit integer, exchange and compare-and-swap on 64 bits
_ATOMS_NATIVE_TYPES = frozenset(("b32", "u32", "s32"))
_ATOMS_NATIVE_64 = frozenset(("exch", "cas"))


def _shared_atomic_parts(mem: PtxMemOp) -> tuple[tuple[str, PtxMemOp], ...]:
    """The SASS families an ``atom``/``red`` on ``.shared`` data expands into when ``ATOMS`` has no
    instruction for it, each standing for the atomic access; none when it has one.  ptxas 13.0 (sm_90a
    and sm_100a) emits an ``LDS`` of the word and an ``ATOMS.CAST.SPIN`` (``ATOMS.CAS`` for 16 bits)
    loop for ``add`` on ``f16``/``f16x2``/``bf16x2``/``f32``/``f64`` and for ``add``/``min``/``max``/
    ``and``/``or`` on 64 bits (tests/data/sass/shared_atomics.cu); an operation not known to be
    native is taken as such a loop (its LDS is then accounted for, never one more SASS access)."""
    mods = mem.instr.mods
    if any(m in _ATOMS_NATIVE_TYPES for m in mods) or (mem.width == 64 and any(m in _ATOMS_NATIVE_64 for m in mods)):
        return ()
    return (("ATOMS", mem), ("LDS", mem))


def _apply_step(step: _Step, dests: tuple[str, ...], defs: dict[str, tuple[str, int]], unstable: frozenset[str]) -> None:
    """The addresses known (``defs``) after an instruction that writes ``dests`` with ``step``.  Only a
    register defined once, unpredicated (not in ``unstable``), is followed, and only through another
    such register: the listing's last definition of a register written on two paths that join (NVVM
    writes a phi as two definitions of one PTX register) is not the one that reaches every use after
    the join -- a load through it was taken for another load of the same address ("merged" across a
    fence: a false "forbidden", NCCL's LL128 primitives, bench/results/sass/hostile5-2026-12-06/)."""
    for d in dests:
        defs.pop(d, None)
    if step is None or dests[0] in unstable:
        return
    name, delta, follow = step
    if follow and name in unstable:
        return  # its value here is not the one a later redefinition gives it: ``dests[0]`` is its own root
    base = defs.get(name, (name, 0)) if follow else (name, 0)
    if base[0] != dests[0]:
        defs[dests[0]] = (base[0], base[1] + delta)


def _event(ins: PtxInstr, defs: dict[str, tuple[str, int]], copies: list[tuple[int, str, tuple[AsyncAccess, ...]]]) -> PtxEvent | None:
    """The event ``ins`` is (``defs``: the addresses followed so far, before ``ins``), or None; an
    asynchronous copy is added to ``copies``."""
    mem = _classify_ptx_mem(ins, defs)
    sync, classes = _classify_ptx_sync(ins, mem)
    copy = async_copy(ins, defs) if ins.opcode == "cp" else None
    if copy is not None:
        copies.append((ins.index, *copy))
    if sync is not None and ins.opcode == "mbarrier":
        sync = dataclasses.replace(sync, address=_operand_address(ins, defs))
    if mem is None and sync is None:
        return None
    mem_class = _mem_class(_ptx_mem_family(mem), _sass_strength_for(mem)) if mem else None
    return PtxEvent(ins, mem, sync, mem_class, tuple(c for c in classes if c != "@mem"), _parts(ins, mem, defs))


def _parts(ins: PtxInstr, mem: PtxMemOp | None, defs: dict[str, tuple[str, int]]) -> tuple[tuple[str, PtxMemOp], ...]:
    """The SASS families ``ins`` expands into and the access each stands for (:attr:`PtxEvent.parts`), if
    ptxas expands it into several accesses."""
    if mem is None:
        return ()
    if ins.opcode == "tensormap":
        return _tensormap_parts(ins, mem, defs)
    if mem.kind in ("atomic", "reduction") and mem.space == "generic":
        return _generic_atomic_parts(mem)
    if mem.kind in ("atomic", "reduction") and mem.space == "shared":
        return _shared_atomic_parts(mem)
    return ()


#: what :func:`parse_ptx` reads from a statement's text alone, once per text (most repeat): what
#: :func:`_read_statement` says, the registers it writes (:func:`_dests_of`), its address-following
#: step (:func:`_def_step`) and whether it may be an event (its opcode)
_Static = tuple[str, str, str, tuple[str, ...], tuple[str, ...], tuple[str, ...], _Step, bool]


def _static(stmt: str, may_be_event: frozenset[str]) -> _Static:
    text, pred, opcode, mods, operands = _read_statement(stmt)
    dests = _dests_of(opcode, operands)
    step = _def_step(opcode, operands, dests) if opcode in _STEP_OPCODES else None
    return text, pred, opcode, mods, operands, dests, step, opcode in may_be_event


def parse_ptx(text: str) -> tuple[PtxFunction, ...]:
    """Parse PTX into functions whose events (memory operations and synchronisation points) are in
    program order."""
    clean, raw = _strip_line_directives(_strip_ptx_comments(text)), text
    lines: list[str] = []  # the text's lines, split when a loop first asks (loop_is_intended)
    src_at = source_lines(text)
    funcs = []
    seen: dict[str, _Static] = {}
    for name, entry, header, body, first in _find_functions(clean):
        stmts = _ptx_statements(body, first)
        instrs = []
        label_at: dict[str, int] = {}
        defs: dict[str, tuple[str, int]] = {}
        events = []
        copies: list[tuple[int, str, tuple[AsyncAccess, ...]]] = []
        writes: dict[str, int] = {}
        may_be_event = _event_opcodes()
        statics = []
        for _, stmt, _, _ in stmts:
            got = seen.get(stmt)
            if got is None:
                got = seen[stmt] = _static(stmt, may_be_event)
            statics.append(got)
            for d in got[5]:
                writes[d] = writes.get(d, 0) + 1
        # registers whose value at a use the listing does not tell: written more than once or under a predicate
        unstable = frozenset(d for d, n in writes.items() if n > 1) | frozenset(d for got in statics if got[1] for d in got[5])
        for idx, (line, stmt, labels, _) in enumerate(stmts):
            if labels:
                for lab, _ in labels:
                    label_at.setdefault(lab, idx)
            text, pred, opcode, mods, operands, dests, step, maybe = statics[idx]
            # (PtxInstr's fields as its __init__ sets them, without the call)
            ins = _new(PtxInstr)
            _set_attr(ins, "__dict__", {"index": idx, "line": line, "text": text, "predicate": pred, "opcode": opcode,
                                        "mods": mods, "operands": operands, "src": src_at(line)})
            instrs.append(ins)
            if maybe:  # (most instructions are neither a memory operation nor a point)
                ev = _event(ins, defs, copies)
                if ev is not None:
                    events.append(ev)
            if dests:  # the addresses followed (_apply_step), after the event read them
                _apply_step(step, dests, defs, unstable)
        loops: list[PtxLoop] = []
        targets = _branch_targets(stmts, instrs)
        # a backward branch closes a loop when its target reaches it again; the loop is its natural loop on
        # the function's control-flow graph (cfg.ptx_flows, loops.back_edges), not the listing between the two
        back = [(b, h) for b, h in targets if h <= b]
        succs = successors(ptx_flows(PtxFunction(name, entry, header, tuple(instrs), (), (), tuple(label_at.items()), targets))) if back else []
        at_events = {e.instr.index for e in events}
        for bra, head, in_loop in back_edges(succs, back):
            ins = instrs[bra]
            clock = any("%clock" in o for i in in_loop for o in instrs[i].operands)
            busy = not at_events.isdisjoint(in_loop)
            if not busy and not clock:
                lines = lines or raw.split("\n")
            loops.append(PtxLoop(head, ins.index, ins.line, clock, not busy and (
                clock or loop_is_intended(instrs, in_loop, succs, lines, _dests_of)), in_loop))
        events = [e if e.sync is None or _rule_key(e.sync) != "cp.async.wait" else dataclasses.replace(
            e, sync=dataclasses.replace(e.sync, orders_only=async_conflicts(e.instr, copies, events, loops, writes)))
            for e in events]
        funcs.append(PtxFunction(name, entry, header, tuple(instrs), tuple(events), tuple(loops), tuple(label_at.items()), targets))
    return tuple(funcs)


def _rule_key(sync: PtxSync) -> str:
    """The key of :data:`RULE_FORBIDDEN` a forbidden move across ``sync`` cites: the semantics
    table's ``rule`` (:mod:`fuzzgpu.semantics`), else by direction (an acquire only, a release only,
    or a fence)."""
    key = _semantics_key(sync.kind)
    rule = semantics.TABLE[key].rule if key in semantics.TABLE else ""
    if rule:
        return rule
    if sync.acquire and not sync.release:
        return "acquire"
    if sync.release and not sync.acquire:
        return "release"
    return "fence"


def _semantics_key(kind: str) -> str:
    """The semantics-table key of a :class:`PtxSync` kind (``fence.proxy.alias`` -> ``fence.proxy``,
    a bulk copy ``cp.async.bulk.shared::cluster`` -> ``cp.async.bulk``)."""
    if kind.startswith("fence.proxy.") and kind not in semantics.TABLE:  # (fence.proxy.tensormap::generic.*: rows of their own)
        return "fence.proxy"
    if kind.startswith(("cp.async.bulk.", "cp.reduce.async.bulk")) and kind not in semantics.TABLE:
        return "cp.async.bulk"
    if kind.startswith("mbarrier.") and kind not in semantics.TABLE:
        return "mbarrier"
    return kind
