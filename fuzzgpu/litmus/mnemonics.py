"""The mnemonic table of the litmus dialect: one table that the builder reads to build an IR
instruction from its mnemonic and the printer reads to write it back.

:data:`TABLE` has two kinds of rows:

* :class:`Form`: one fixed spelling (``cp.async.bulk.wait_group.read``), the IR class it builds,
  the fields the spelling implies (``read=True``) and its operands in order, each a field of the
  class with its operand kind (``n`` is a number).  The builder builds it and the printer writes it
  from this row alone; ``parsed=False`` rows are read by their family (``ld r0, 1`` is a ``Mov``,
  read by the ``ld`` family), ``printed=False`` rows are other spellings of an instruction that
  the printer writes with an earlier row (``membar.gl`` is ``fence.sc.gpu``).
* :class:`Family`: a mnemonic base whose qualifiers come in any order or with defaults
  (``ld.acquire.gpu``, ``atom.add``, ``mbarrier.arrive.expect_tx...``): the builder method that
  reads them (and says what is wrong with a spelling no :class:`Form` matches) and the function
  that writes the family's IR classes.

A new instruction is one row here (a :class:`Form` when its spelling is fixed), plus its IR class
and its litmus tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal, Mapping

from .. import ir
from ..ir import Instruction

# --------------------------------------------------------------------------------------------
# Qualifier spellings (read by the family builders and writers)
# --------------------------------------------------------------------------------------------

LOAD_BASES = {"ld": ir.Proxy.GENERIC, "suld": ir.Proxy.SURFACE, "tld": ir.Proxy.TEXTURE, "cold": ir.Proxy.CONSTANT}
STORE_BASES = {"st": ir.Proxy.GENERIC, "sust": ir.Proxy.SURFACE, "tst": ir.Proxy.TEXTURE, "cost": ir.Proxy.CONSTANT}
ATOM_BASES = {"atom": ir.Proxy.GENERIC, "suatom": ir.Proxy.SURFACE, "tatom": ir.Proxy.TEXTURE, "coatom": ir.Proxy.CONSTANT}
RED_BASES = {"red": ir.Proxy.GENERIC, "sured": ir.Proxy.SURFACE, "tred": ir.Proxy.TEXTURE, "cored": ir.Proxy.CONSTANT}
PROXY_PREFIX = {ir.Proxy.GENERIC: "", ir.Proxy.SURFACE: "su", ir.Proxy.TEXTURE: "t", ir.Proxy.CONSTANT: "co"}
BRANCHES = {"b" + c.value: c for c in ir.Cond}
ARITH = {op.value: op for op in ir.ArithOp}
MEMBAR = {"cta": ir.Scope.CTA, "gl": ir.Scope.GPU, "sys": ir.Scope.SYS}
GRIDDEP_ACTIONS = ("launch_dependents", "wait")
MBAR_ARRIVE_SEMS = {"release": ir.Sem.RELEASE, "relaxed": ir.Sem.RELAXED}
MBAR_WAIT_SEMS = {"acquire": ir.Sem.ACQUIRE, "relaxed": ir.Sem.RELAXED}
MBAR_SCOPES = {"cta": ir.Scope.CTA, "cluster": ir.Scope.CLUSTER}
BULK_COMPLETIONS = ("mbarrier", "bulk_group")
#: PTX spellings of the completion mechanism in the state-space form of cp{.reduce}.async.bulk
BULK_COMPLETION_SPELLINGS = {"mbarrier": "mbarrier", "mbarrier::complete_tx::bytes": "mbarrier", "bulk_group": "bulk_group"}
#: state-space qualifiers of copies (``.shared::cta``/``.shared::cluster`` are both a shared location here)
COPY_SPACES = {"global": ir.Space.GLOBAL, "shared": ir.Space.SHARED, "shared::cta": ir.Space.SHARED, "shared::cluster": ir.Space.SHARED}
#: the tensor copies' dimension and load mode (``cp.async.bulk.tensor.1d...tile``: fuzzgpu's tensor
#: maps are 1-D and tiled) and the state spaces the printer writes for them, as the PTX ISA spells
#: the two forms fuzzgpu emits (cp.async.bulk.tensor: ``.shared::cluster.global`` with
#: ``.mbarrier::complete_tx::bytes``, ``.global.shared::cta`` with ``.bulk_group``)
TENSOR_DIM = "1d"
TENSOR_LOAD_MODE = "tile"
TENSOR_PRINTED = {"mbarrier": "shared::cluster.global", "bulk_group": "global.shared::cta"}
TENSOR_COMPLETION_PRINTED = {"mbarrier": "mbarrier::complete_tx::bytes", "bulk_group": "bulk_group"}
TCGEN05_FENCES = ("before_thread_sync", "after_thread_sync")
#: the shape of ``tcgen05.st``/``tcgen05.ld``: one 32-bit column of one lane per thread (PTX ISA "tcgen05.ld")
TCGEN05_SHAPE = "sync.aligned.32x32b.x1.b32"
#: ``tensormap.replace`` of the global address of a tensor map in global memory (PTX ISA
#: "tensormap.replace": ``.tile`` mode, field ``.global_address``, ``.global``, ``.b1024.b64``)
TENSORMAP_REPLACE = "tensormap.replace.tile.global_address.global.b1024.b64"
#: the proxy-kind pair of ``fence.proxy.tensormap::generic`` (PTX ISA "membar/fence": .to_proxykind::from_proxykind)
TENSORMAP_FENCE_KIND = "tensormap::generic"
LOC_KINDS = ("mbarrier", "tensormap", "tmem")  # "data" is the default and is not written
PLACEMENT_KEYS = ("cta", "gpu", "grid", "cluster", "warp")
#: the state-space qualifier of a distributed-shared-memory access (``ld``/``st``/``atom``/``red``/
#: ``mbarrier.arrive``): parser and printer read this one table
DSM_SPACE = "shared::cluster"
DSM_QUALIFIER: dict[str, Mapping[str, object]] = {"dsm": {DSM_SPACE: True}}
#: ``.u8``/``.u16``/``.u32``: the size of a generic ld/st (:attr:`fuzzgpu.ir.Load.width`; issue 32, class L)
WIDTH_QUALIFIER: dict[str, Mapping[str, object]] = {"width": {f"u{w}": w for w in ir.ACCESS_WIDTHS}}
#: ``barrier.cluster`` modes and their semantics qualifiers (the first is the default)
CLUSTER_BARRIER_SEMS = {"arrive": {"release": ir.Sem.RELEASE, "relaxed": ir.Sem.RELAXED}, "wait": {"acquire": ir.Sem.ACQUIRE}}
SEMS = {s.value: s for s in ir.Sem}
SCOPES = {s.value: s for s in ir.Scope}
RMW_OPS = {o.value: o for o in ir.RmwOp}
CMP_PUNCT = {"==": "==", "=": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


# --------------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------------

#: what an operand is: a register (``r3``), a register or an immediate, a location name, a label,
#: an immediate
SlotKind = Literal["register", "value", "location", "label", "number"]


@dataclass(frozen=True)
class Slot:
    """One operand of a :class:`Form`: the IR field it fills and its kind."""

    field: str
    kind: SlotKind

    def accepts(self, value: object) -> bool:
        """Whether the printer can write ``value`` in this slot (the parser reads it back the same)."""
        if self.kind == "number":
            return isinstance(value, int) and not isinstance(value, bool)
        if self.kind == "value":
            return isinstance(value, (int, str)) and not isinstance(value, bool)
        return isinstance(value, str)


@dataclass(frozen=True)
class Form:
    """A fixed spelling: ``mnemonic`` (the whole dotted word) <-> ``ir`` with ``fields`` set and the
    ``operands`` in order."""

    mnemonic: str
    ir: type[Instruction]
    operands: tuple[Slot, ...] = ()
    fields: tuple[tuple[str, object], ...] = ()
    parsed: bool = True  # False: its family builder reads it
    printed: bool = True  # False: an alias; the printer writes an earlier row

    @property
    def base(self) -> str:
        return self.mnemonic.split(".", 1)[0]

    def matches(self, ins: Instruction) -> bool:
        """Whether this row writes ``ins``: its fields are the row's and its operands fit the slots."""
        return all(getattr(ins, k) == v and type(getattr(ins, k)) is type(v) for k, v in self.fields) and all(
            s.accepts(getattr(ins, s.field)) for s in self.operands
        )


@dataclass(frozen=True)
class Family:
    """Mnemonics starting with one of ``bases`` that no :class:`Form` spells out: ``build`` names the
    :class:`~fuzzgpu.litmus.builder.InstructionBuilder` method that reads their qualifiers (or
    reports what is wrong), ``write`` writes the ``ir`` classes (``None``: no litmus syntax for this
    instance; the printer falls back to the JSON form)."""

    bases: tuple[str, ...]
    build: str
    ir: tuple[type[Instruction], ...] = ()
    write: Callable[[Instruction], str | None] | None = None


def _r(name: str) -> Slot:
    return Slot(name, "register")


def _v(name: str) -> Slot:
    return Slot(name, "value")


def _loc(name: str) -> Slot:
    return Slot(name, "location")


def _n(name: str) -> Slot:
    return Slot(name, "number")


# -- family writers ----------------------------------------------------------------------------


def sem_scope(sem: ir.Sem, scope: ir.Scope | None) -> str:
    return f".{sem.value}" + (f".{scope.value}" if scope is not None else "")


def dsm(shared_cluster: bool) -> str:
    return f".{DSM_SPACE}" if shared_cluster else ""


def width(bits: int) -> str:
    """``.u8``/``.u16`` for a narrow ld/st; nothing for the word (32 bits)."""
    return "" if bits == 32 else f".u{bits}"


def proxied(base: str, proxy: ir.Proxy) -> str:
    if proxy is ir.Proxy.ASYNC:
        return f"{base}.async"
    return PROXY_PREFIX[proxy] + base


def write_access(ins: Instruction) -> str | None:
    """``ld``/``st``/``atom``/``red`` and their proxy spellings (``suld``, ``ld.async``...)."""
    if isinstance(ins, ir.Load):
        if ins.nc:
            return f"ld.global.nc {ins.dst}, {ins.loc}"
        head = f"{proxied('ld', ins.proxy)}{sem_scope(ins.sem, ins.scope)}{dsm(ins.shared_cluster)}{width(ins.width)}"
        return f"{head} {ins.dst}, {ins.loc}"
    if isinstance(ins, ir.Store):
        head = f"{proxied('st', ins.proxy)}{sem_scope(ins.sem, ins.scope)}{dsm(ins.shared_cluster)}{width(ins.width)}"
        return f"{head} {ins.loc}, {ins.src}"
    if isinstance(ins, ir.Atom):
        ops = ", ".join(str(v) for v in ins.operands)
        head = f"{proxied('atom', ins.proxy)}{sem_scope(ins.sem, ins.scope)}{dsm(ins.shared_cluster)}.{ins.operation.value}"
        return f"{head} {ins.dst}, {ins.loc}, {ops}"
    if isinstance(ins, ir.Red):
        head = f"{proxied('red', ins.proxy)}{sem_scope(ins.sem, ins.scope)}{dsm(ins.shared_cluster)}.{ins.operation.value}"
        return f"{head} {ins.loc}, {ins.value}"
    return None


def write_fence(ins: Instruction) -> str | None:
    """``fence.{acq_rel,sc}.scope``, ``fence.proxy.<kind>{.space}`` and
    ``fence.proxy.tensormap::generic.{release,acquire}.scope{ map}``."""
    if isinstance(ins, ir.Fence):
        return f"fence.{ins.sem.value}.{ins.scope.value}"
    if isinstance(ins, ir.ProxyFence):
        if ins.space is not None and ins.space not in ir.PROXY_FENCE_SPACES:
            raise ValueError(f"proxy fence state space {ins.space!r} has no litmus syntax")
        return f"fence.proxy.{ins.kind.value}" + (f".{ins.space}" if ins.space else "")
    if isinstance(ins, ir.TensormapFence):  # the acquire form's [map], 128: the map alone
        head = f"fence.proxy.{TENSORMAP_FENCE_KIND}.{ins.sem.value}.{ins.scope.value}"
        return head + (f" {ins.map}" if ins.map is not None else "")
    return None


def write_barrier(ins: Instruction) -> str | None:
    """Dat3M's ``bar.cta.sync id`` / ``bar.cta.sync instance, id{, quorum}``; PTX's
    ``bar.sync id, count`` when there is a count but no instance."""
    if not isinstance(ins, ir.Barrier):
        return None
    if ins.instance is None:
        if ins.count is None:
            return f"bar.cta.{ins.mode} {ins.id}"
        return f"bar.{ins.mode} {ins.id}, {ins.count}"
    if ins.count is None:
        return f"bar.cta.{ins.mode} {ins.instance}, {ins.id}"
    return f"bar.cta.{ins.mode} {ins.instance}, {ins.id}, {ins.count}"


def write_mbarrier(ins: Instruction) -> str | None:
    """``mbarrier.arrive{.expect_tx}.sem.scope{.shared::cluster}`` and ``mbarrier.{try,test}_wait.parity.sem.scope``."""
    if isinstance(ins, ir.MbarrierArrive):
        if ins.sem.value not in MBAR_ARRIVE_SEMS or ins.scope.value not in MBAR_SCOPES:
            return None
        head = "mbarrier.arrive" + (".expect_tx" if ins.expect_tx is not None else "")
        args = [ins.bar] + ([str(ins.expect_tx)] if ins.expect_tx is not None else [])
        args += [str(ins.count)] if ins.count != 1 else []
        return f"{head}.{ins.sem.value}.{ins.scope.value}{dsm(ins.shared_cluster)} {', '.join(args)}"
    if isinstance(ins, ir.MbarrierWait):
        if ins.sem.value not in MBAR_WAIT_SEMS or ins.scope.value not in MBAR_SCOPES or ins.kind not in ("try_wait", "test_wait"):
            return None
        return f"mbarrier.{ins.kind}.parity.{ins.sem.value}.{ins.scope.value} {ins.dst}, {ins.bar}, {ins.parity}"
    return None


def write_bulk_copy(ins: Instruction) -> str | None:
    """``cp{.reduce}.async.bulk.{mbarrier,bulk_group}{.op} dst, src, size{, bar}``; a tensor copy
    ``cp{.reduce}.async.bulk.tensor.1d.DST.SRC{.op}.COMPLETION dst, src{, bar}``."""
    if not isinstance(ins, ir.CpAsyncBulk):
        return None
    if ins.completion not in BULK_COMPLETIONS or (ins.bar is not None) != (ins.completion == "mbarrier"):
        return None
    if ins.tensor:
        # cp{.reduce}.async.bulk.tensor.1d.DST.SRC{.op}.COMPLETION dst, src{, bar} (PTX ISA order)
        head = ("cp.reduce" if ins.reduce is not None else "cp") + f".async.bulk.tensor.{TENSOR_DIM}."
        head += TENSOR_PRINTED[ins.completion] + (f".{ins.reduce.value}" if ins.reduce is not None else "")
        head += "." + TENSOR_COMPLETION_PRINTED[ins.completion]
        bar = f", {ins.bar}" if ins.bar is not None else ""
        return None if ins.size != 4 else f"{head} {ins.dst_loc}, {ins.src_loc}{bar}"
    head = ("cp.reduce" if ins.reduce is not None else "cp") + f".async.bulk.{ins.completion}"
    head += f".{ins.reduce.value}" if ins.reduce is not None else ""
    bar = f", {ins.bar}" if ins.bar is not None else ""
    return f"{head} {ins.dst_loc}, {ins.src_loc}, {ins.size}{bar}"


def _cluster_barrier_forms() -> list[Form]:
    """``barrier.cluster.arrive{.release|.relaxed}{.aligned}``, ``barrier.cluster.wait{.acquire}{.aligned}``
    (``.aligned`` is read and not written: the model does not distinguish it)."""
    forms = []
    for mode, sems in CLUSTER_BARRIER_SEMS.items():
        for aligned in ("", ".aligned"):
            spellings: list[tuple[str, ir.Sem | None]] = [("", None), *((f".{k}", v) for k, v in sems.items())]
            for qual, sem in spellings:
                forms.append(Form(f"barrier.cluster.{mode}{qual}{aligned}", ir.ClusterBarrier,
                                  fields=(("mode", mode), ("sem", sem)), printed=not aligned))
    return forms


def _complete_tx_forms() -> list[Form]:
    """``mbarrier.complete_tx.relaxed.{cta,cluster}{.shared::cta|.shared::cluster} bar, tx`` (PTX ISA
    "mbarrier.complete_tx": ``.sem = { .relaxed }``, ``.scope = { .cta, .cluster }``); the bare
    ``mbarrier.complete_tx`` is ``.relaxed.cta``, as ``mbarrier.expect_tx`` is here.  ``.shared::cta``
    is read and not written (the default state space)."""
    forms = []
    for scope in MBAR_SCOPES.values():
        for space, remote, printed in (("", False, True), (".shared::cta", False, False), (f".{DSM_SPACE}", True, True)):
            forms.append(Form(f"mbarrier.complete_tx.relaxed.{scope.value}{space}", ir.MbarrierCompleteTx,
                              (_loc("bar"), _n("tx")), (("scope", scope), ("shared_cluster", remote)), printed=printed))
    # no .sem.scope (PTX ISA 9.1: mbarrier.complete_tx{.sem.scope}{.space}.b64; the ISA's example
    # mbarrier.complete_tx.shared.b64): .relaxed.cta, on the given state space
    for space, remote in (("", False), (".shared", False), (".shared::cta", False), (f".{DSM_SPACE}", True)):
        forms.append(Form(f"mbarrier.complete_tx{space}", ir.MbarrierCompleteTx, (_loc("bar"), _n("tx")),
                          (("scope", ir.Scope.CTA), ("shared_cluster", remote)), printed=False))
    return forms


#: The one table: builder and printer read it (see the module docstring).
TABLE: tuple[Form | Family, ...] = (
    # ld/st/atom/red, in the generic proxy and the surface/texture/constant/async ones
    Form("ld", ir.Mov, (_r("dst"), _n("src")), parsed=False),  # Dat3M's ``ld r0, 1``: read by the ld family
    Family((*LOAD_BASES, *STORE_BASES, *ATOM_BASES, *RED_BASES), "access", (ir.Load, ir.Store, ir.Atom, ir.Red), write_access),
    # local computation and control flow
    Form("mov", ir.Mov, (_r("dst"), _v("src"))),
    *(Form(op.value, ir.Arith, (_r("dst"), _v("a"), _v("b")), (("operation", op),)) for op in ir.ArithOp),
    *(Form(f"b{c.value}", ir.Branch, (_v("a"), _v("b"), Slot("target", "label")), (("cond", c),)) for c in ir.Cond),
    Form("goto", ir.Goto, (Slot("target", "label"),)),
    Family(("mov", *ARITH, *BRANCHES, "goto"), "no_qualifiers"),
    *(Form(f"filler.{k}", ir.Filler, (_n("n"),), (("kind", k),)) for k in sorted(ir.FILLER_KINDS)),
    Family(("filler",), "unknown_filler"),
    # fences and barriers
    Form("fence.mbarrier_init.release.cluster", ir.FenceMbarrierInit),
    Family(("fence",), "fence", (ir.Fence, ir.ProxyFence, ir.TensormapFence), write_fence),
    *(Form(f"membar.{q}", ir.Fence, (), (("sem", ir.Sem.SC), ("scope", s)), printed=False) for q, s in MEMBAR.items()),
    Family(("membar",), "unknown_membar"),
    *_cluster_barrier_forms(),
    Family(("bar", "barrier"), "barrier", (ir.Barrier,), write_barrier),
    # programmatic dependent launch, tcgen05, the async-proxy read
    *(Form(f"griddepcontrol.{a}", ir.GridDepControl, (), (("action", a),)) for a in GRIDDEP_ACTIONS),
    Family(("griddepcontrol",), "unknown_griddepcontrol"),
    *(Form(f"tcgen05.fence::{k}", ir.Tcgen05Fence, (), (("kind", k),)) for k in TCGEN05_FENCES),
    # tensor memory (issue 32, classes E and G): the PTX spellings, and the short ones read
    Form(f"tcgen05.st.{TCGEN05_SHAPE}", ir.Tcgen05St, (_loc("loc"), _v("src"))),
    Form("tcgen05.st", ir.Tcgen05St, (_loc("loc"), _v("src")), printed=False),
    Form(f"tcgen05.ld.{TCGEN05_SHAPE}", ir.Tcgen05Ld, (_r("dst"), _loc("loc"))),
    Form("tcgen05.ld", ir.Tcgen05Ld, (_r("dst"), _loc("loc")), printed=False),
    *(Form(f"tcgen05.wait::{k}.sync.aligned", ir.Tcgen05Wait, (), (("kind", k),)) for k in ir.WAIT_KINDS),
    *(Form(f"tcgen05.wait::{k}", ir.Tcgen05Wait, (), (("kind", k),), printed=False) for k in ir.WAIT_KINDS),
    Form("tcgen05.alloc", ir.Tcgen05Alloc, (_loc("slot"), _n("value"))),
    Family(("tcgen05",), "unknown_tcgen05"),
    Form("async.read", ir.AsyncRead, (_r("dst"), _loc("loc"))),
    Family(("async",), "unknown_async"),
    # wgmma register operands (issue 32, class F): wgmma.mma_async d, a -- the accumulator, the A fragment
    Form("wgmma.fence", ir.WgmmaFence),
    Form("wgmma.mma_async", ir.WgmmaMma, (_r("dst"), _r("a"))),
    Form("wgmma.commit_group", ir.WgmmaCommit),
    Form("wgmma.wait_group", ir.WgmmaWait, (_n("n"),)),
    Form("wgmma.fence.sync.aligned", ir.WgmmaFence, printed=False),  # the PTX spellings, read and not written
    Form("wgmma.commit_group.sync.aligned", ir.WgmmaCommit, printed=False),
    Form("wgmma.wait_group.sync.aligned", ir.WgmmaWait, (_n("n"),), printed=False),
    Family(("wgmma",), "unknown_wgmma"),
    # mbarrier
    Form("mbarrier.init", ir.MbarrierInit, (_loc("bar"), _n("count"))),
    Form("mbarrier.expect_tx", ir.MbarrierExpectTx, (_loc("bar"), _n("tx"))),
    *_complete_tx_forms(),
    Family(("mbarrier",), "mbarrier", (ir.MbarrierArrive, ir.MbarrierWait), write_mbarrier),
    # cp.async.bulk (TMA) and cp.async (LDGSTS)
    # tensor maps the kernel writes (issue 32, class D): the one field fuzzgpu replaces
    Form(TENSORMAP_REPLACE, ir.TensormapReplace, (_loc("map"), _loc("address"))),
    Form("tensormap.replace", ir.TensormapReplace, (_loc("map"), _loc("address")), printed=False),
    Family(("tensormap",), "unknown_tensormap"),
    Form("cp.async.bulk.commit_group", ir.BulkCommit),
    Form("cp.async.bulk.wait_group", ir.BulkWait, (_n("n"),), (("read", False),)),
    Form("cp.async.bulk.wait_group.read", ir.BulkWait, (_n("n"),), (("read", True),)),
    Form("cp.async", ir.CpAsync, (_loc("dst_loc"), _loc("src_loc"))),
    Form("cp.async.commit_group", ir.CpAsyncCommit),
    Form("cp.async.wait_all", ir.CpAsyncWait, (), (("n", None),)),
    Form("cp.async.wait_group", ir.CpAsyncWait, (_n("n"),)),
    Form("cp.async.mbarrier.arrive.noinc", ir.CpAsyncMbarrierArrive, (_loc("bar"),)),
    Family(("cp",), "copy", (ir.CpAsyncBulk,), write_bulk_copy),
)

#: the rows the builder reads: each parsed Form by its whole mnemonic, each Family by its bases
FORMS: dict[str, Form] = {row.mnemonic: row for row in TABLE if isinstance(row, Form) and row.parsed}
FAMILIES: dict[str, Family] = {base: row for row in TABLE if isinstance(row, Family) for base in row.bases}
#: the first words the parser accepts as an instruction
MNEMONICS = frozenset(FAMILIES)


def printer_rows(cls: type[Instruction]) -> tuple[Form | Family, ...]:
    """The rows that may write an instruction of class ``cls``, in table order."""
    return _PRINTER_ROWS.get(cls, ())


def _printer_rows() -> dict[type[Instruction], tuple[Form | Family, ...]]:
    rows: dict[type[Instruction], list[Form | Family]] = {}
    for row in TABLE:
        if isinstance(row, Form) and row.printed:
            rows.setdefault(row.ir, []).append(row)
        elif isinstance(row, Family):
            for cls in row.ir:
                rows.setdefault(cls, []).append(row)
    return {cls: tuple(r) for cls, r in rows.items()}


_PRINTER_ROWS = _printer_rows()
