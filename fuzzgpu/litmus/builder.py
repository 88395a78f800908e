"""Builds one IR instruction from its mnemonic token and operand tokens."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Protocol, TypeVar

from .. import semantics
from ..errors import SourceError
from .. import ir
from .mnemonics import (
    ATOM_BASES,
    BULK_COMPLETION_SPELLINGS,
    BULK_COMPLETIONS,
    COPY_SPACES,
    TENSOR_DIM,
    TENSORMAP_FENCE_KIND,
    TENSORMAP_REPLACE,
    TENSOR_LOAD_MODE,
    DSM_QUALIFIER,
    WIDTH_QUALIFIER,
    DSM_SPACE,
    FAMILIES,
    FORMS,
    LOAD_BASES,
    MBAR_ARRIVE_SEMS,
    MBAR_SCOPES,
    MBAR_WAIT_SEMS,
    RED_BASES,
    RMW_OPS,
    SCOPES,
    SEMS,
    STORE_BASES,
    Form,
)
from .tokens import NUM, WORD, Token


@dataclass
class Qualifier:
    text: str
    col: int


_V = TypeVar("_V")


def qualifier_value(found: Mapping[str, tuple[object, Qualifier]], category: str, kind: type[_V]) -> tuple[_V, Qualifier] | None:
    """``found[category]`` (from :meth:`Builder.classify`: a value and the qualifier that gave it) with
    the value checked to be a ``kind`` -- each category's table holds values of one type -- or
    ``None`` when the instruction has no qualifier of that category."""
    entry = found.get(category)
    if entry is None:
        return None
    value, q = entry
    if not isinstance(value, kind):
        raise TypeError(f"qualifier category {category!r} holds {value!r}, not a {kind.__name__}")
    return value, q


@dataclass
class Cell:
    """One parsed instruction with the tokens errors may point at."""

    instr: ir.Instruction
    token: Token
    targets: list[Token] = field(default_factory=list)  # label operands
    locations: list[Token] = field(default_factory=list)  # location operands
    #: (operand token, state space its mnemonic says it is in): ``cp.async.bulk.shared.global ...``
    spaces: list[tuple[Token, ir.Space]] = field(default_factory=list)



class TokenSource(Protocol):
    """What the builder needs of the parser: the file name, errors at a token, 32-bit numbers."""

    path: str

    def error(self, message: str, tok: Token) -> SourceError: ...

    def int_value(self, tok: Token) -> int: ...


# --------------------------------------------------------------------------------------------
# Instructions
# --------------------------------------------------------------------------------------------


class InstructionBuilder:
    """Builds one instruction from its mnemonic token and operand tokens."""

    def __init__(self, parser: TokenSource, mnemonic: Token, operands: list[Token]) -> None:
        self.p = parser
        self.tok = mnemonic
        parts = mnemonic.text.split(".")
        self.base = parts[0]
        self.quals: list[Qualifier] = []
        col = mnemonic.col + len(parts[0]) + 1
        for part in parts[1:]:
            self.quals.append(Qualifier(part, col))
            col += len(part) + 1
        self.operands = operands
        self.cell = Cell(ir.Label("?"), mnemonic)

    def error(self, message: str, tok: Token | None = None) -> SourceError:
        return self.p.error(message, tok or self.tok)

    def qual_error(self, message: str, q: Qualifier) -> SourceError:
        return SourceError(message, self.p.path, self.tok.line, q.col)

    def build(self) -> Cell:
        """The instruction: the table's :class:`Form` of this exact mnemonic, else its family's builder."""
        form = FORMS.get(self.tok.text)
        if form is not None:
            instr = self.form(form)
        elif self.base in FAMILIES:
            instr = getattr(self, FAMILIES[self.base].build)()
        else:
            raise self.error(f"unknown instruction {self.tok.text!r}")
        self.cell.instr = instr
        return self.cell

    def form(self, form: Form) -> ir.Instruction:
        """A fixed spelling: its operands, in order, into the fields the table names."""
        self.count(len(form.operands))
        read = {"register": self.register, "value": self.value, "location": self.location, "label": self.label,
                "number": self.number}
        fields = {slot.field: read[slot.kind](i) for i, slot in enumerate(form.operands)}
        return form.ir(**dict(form.fields), **fields)

    # operands ---------------------------------------------------------------------------

    def count(self, *allowed: int) -> None:
        n = len(self.operands)
        if n not in allowed:
            want = " or ".join(str(a) for a in allowed)
            where = self.operands[max(allowed)] if n > max(allowed) else self.tok
            raise self.error(f"{self.tok.text} takes {want} operand(s), got {n}", where)

    def register(self, i: int) -> str:
        tok = self.operands[i]
        if tok.kind != WORD or not ir.REGISTER_RE.fullmatch(tok.text):
            raise self.error(f"expected a register, found {tok.describe()}", tok)
        return tok.text

    def value(self, i: int) -> ir.Operand:
        tok = self.operands[i]
        if tok.kind == NUM:
            return self.p.int_value(tok)
        return self.register(i)

    def location(self, i: int) -> str:
        tok = self.operands[i]
        if tok.kind != WORD or not ir.NAME_RE.fullmatch(tok.text) or ir.REGISTER_RE.fullmatch(tok.text):
            raise self.error(f"expected a location, found {tok.describe()}", tok)
        self.cell.locations.append(tok)
        return tok.text

    def label(self, i: int) -> str:
        tok = self.operands[i]
        if tok.kind != WORD or not ir.NAME_RE.fullmatch(tok.text):
            raise self.error(f"expected a label, found {tok.describe()}", tok)
        self.cell.targets.append(tok)
        return tok.text

    # qualifiers -------------------------------------------------------------------------

    def no_qualifiers(self) -> ir.Instruction:
        """``mov``, arithmetic, branches, ``goto``: a qualified spelling (no :class:`Form` has one)."""
        q = self.quals[0]
        raise self.qual_error(f"{self.base} takes no qualifier, found '.{q.text}'", q)

    def classify(
        self, allowed: Mapping[str, Mapping[str, object]], quals: list[Qualifier] | None = None
    ) -> dict[str, tuple[object, Qualifier]]:
        """Sort qualifiers (default: all of them) into categories (sem, scope...), each at most once,
        in any order."""
        found: dict[str, tuple[object, Qualifier]] = {}
        for q in self.quals if quals is None else quals:
            for category, values in allowed.items():
                if q.text in values:
                    if category in found:
                        raise self.qual_error(f"more than one {category} qualifier in {self.tok.text!r}", q)
                    found[category] = (values[q.text], q)
                    break
            else:
                raise self.qual_error(f"unknown qualifier '.{q.text}' in {self.tok.text!r}", q)
        return found

    def sem_scope(
        self, found: dict[str, tuple[object, Qualifier]], sems: frozenset[ir.Sem], what: str
    ) -> tuple[ir.Sem, ir.Scope | None]:
        """A load's or store's ``.sem.scope`` (``.weak`` when absent; a scope needs a semantics)."""
        sem, scope = qualifier_value(found, "sem", ir.Sem), qualifier_value(found, "scope", ir.Scope)
        if sem is None and scope is not None:
            raise self.qual_error(f"a scope needs a semantics, as in {self.base}.relaxed.{scope[0]}", scope[1])
        if sem is None:
            return ir.Sem.WEAK, None
        if sem[0] not in sems:
            raise self.qual_error(f"{what} cannot be .{sem[0]}", sem[1])
        if sem[0] in (ir.Sem.WEAK, ir.Sem.VOLATILE) and scope is not None:
            raise self.qual_error(f".{sem[0]} takes no scope", scope[1])
        return sem[0], None if scope is None else scope[0]

    def proxy(self, bases: dict[str, ir.Proxy], found: dict[str, tuple[object, Qualifier]]) -> ir.Proxy:
        proxy = bases[self.base]
        if "proxy" in found:
            if proxy is not ir.Proxy.GENERIC:
                raise self.qual_error(f"'.async' cannot be combined with {self.base}", found["proxy"][1])
            proxy = ir.Proxy.ASYNC
        return proxy

    # instruction kinds ------------------------------------------------------------------

    def access(self) -> ir.Instruction:
        """``ld``/``st``/``atom``/``red`` and their proxy bases (``suld``, ``tld``, ``cold``...)."""
        if self.base in LOAD_BASES:
            return self.load()
        if self.base in STORE_BASES:
            return self.store()
        if self.base in ATOM_BASES:
            return self.atom()
        return self.red()

    def load(self) -> ir.Instruction:
        found = self.classify(
            {"sem": SEMS, "scope": SCOPES, "proxy": {"async": ir.Proxy.ASYNC}, "space": {"global": "global"}, "nc": {"nc": True},
             **DSM_QUALIFIER, **WIDTH_QUALIFIER}
        )
        self.count(2)
        dst = self.register(0)
        if self.base == "ld" and not found and self.operands[1].kind == NUM:
            return ir.Mov(dst, self.value(1))
        if "nc" in found or "space" in found:
            self.check_nc(found)
            return ir.Load(dst, self.location(1), nc=True)
        sem, scope = self.sem_scope(found, ir.LOAD_SEMS, "a load")
        return ir.Load(dst, self.location(1), sem, scope, self.proxy(LOAD_BASES, found), shared_cluster=self.dsm(found),
                       width=self.width(found))

    def width(self, found: dict[str, tuple[object, Qualifier]]) -> int:
        """``.u8``/``.u16``/``.u32``: the size of a generic ``ld``/``st`` (issue 32, class L); 32 when absent."""
        if "width" not in found:
            return 32
        w, q = found["width"]
        if self.base not in ("ld", "st") or "proxy" in found:
            raise self.qual_error(f"'.{q.text}' is for generic ld and st", q)
        assert isinstance(w, int)
        return w

    def dsm(self, found: dict[str, tuple[object, Qualifier]]) -> bool:
        """``.shared::cluster`` (distributed shared memory): generic ld/st/atom/red only."""
        if "dsm" not in found:
            return False
        if self.base not in ("ld", "st", "atom", "red") or "proxy" in found:
            raise self.qual_error(f"'.{DSM_SPACE}' is for generic ld, st, atom and red", found["dsm"][1])
        return True

    def check_nc(self, found: dict[str, tuple[object, Qualifier]]) -> None:
        """``ld.global.nc`` exactly: no other qualifier, generic ``ld`` only."""
        others = [q for k, (_, q) in found.items() if k not in ("nc", "space")]
        if others:
            raise self.qual_error(f"ld.global.nc takes no other qualifier, found '.{others[0].text}'", others[0])
        if "nc" not in found:
            raise self.qual_error("'.global' is only supported in ld.global.nc", found["space"][1])
        if "space" not in found:
            raise self.qual_error("write '.nc' as ld.global.nc", found["nc"][1])
        if self.base != "ld":
            raise self.error(f"{self.base} cannot be .global.nc (only ld)")

    def store(self) -> ir.Instruction:
        found = self.classify({"sem": SEMS, "scope": SCOPES, "proxy": {"async": ir.Proxy.ASYNC}, **DSM_QUALIFIER,
                               **WIDTH_QUALIFIER})
        self.count(2)
        sem, scope = self.sem_scope(found, ir.STORE_SEMS, "a store")
        return ir.Store(self.location(0), self.value(1), sem, scope, self.proxy(STORE_BASES, found), shared_cluster=self.dsm(found),
                        width=self.width(found))

    def rmw_qualifiers(self, bases: dict[str, ir.Proxy]) -> tuple[ir.RmwOp, ir.Sem, ir.Scope, ir.Proxy, bool]:
        found = self.classify(
            {"sem": SEMS, "scope": SCOPES, "proxy": {"async": ir.Proxy.ASYNC}, "operation": RMW_OPS, **DSM_QUALIFIER}
        )
        op = qualifier_value(found, "operation", ir.RmwOp)
        if op is None:
            raise self.error(f"{self.tok.text!r} needs an operation (.add, .cas, .exch...)")
        sem = qualifier_value(found, "sem", ir.Sem)  # absent: .relaxed, one of RMW_SEMS
        if sem is not None and sem[0] not in ir.RMW_SEMS:
            raise self.qual_error(f"{self.base} cannot be .{sem[0]}", sem[1])
        scope = qualifier_value(found, "scope", ir.Scope)
        return (op[0], ir.Sem.RELAXED if sem is None else sem[0], ir.Scope.GPU if scope is None else scope[0], self.proxy(bases, found),
                self.dsm(found))

    def atom(self) -> ir.Instruction:
        op, sem, scope, proxy, dsm = self.rmw_qualifiers(ATOM_BASES)
        self.count(4 if op is ir.RmwOp.CAS else 3)
        dst, loc = self.register(0), self.location(1)
        operands = tuple(self.value(i) for i in range(2, len(self.operands)))
        return ir.Atom(dst, loc, op, operands, sem, scope, proxy, shared_cluster=dsm)

    def red(self) -> ir.Instruction:
        op, sem, scope, proxy, dsm = self.rmw_qualifiers(RED_BASES)
        if op in (ir.RmwOp.CAS, ir.RmwOp.EXCH):
            raise self.error(f"red has no .{op}")
        self.count(2)
        return ir.Red(self.location(0), op, self.value(1), sem, scope, proxy, shared_cluster=dsm)

    def fence(self) -> ir.Instruction:
        if [q.text for q in self.quals[:2]] == ["proxy", TENSORMAP_FENCE_KIND]:
            return self.tensormap_fence()
        self.count(0)
        if self.quals and self.quals[0].text == "proxy":
            return self.proxy_fence()
        if self.quals and self.quals[0].text == "mbarrier_init":  # the right spelling is a Form
            raise self.error(f"unknown fence {self.tok.text!r} (fence.mbarrier_init.release.cluster)")
        found = self.classify({"sem": SEMS, "scope": SCOPES})
        sem, scope = qualifier_value(found, "sem", ir.Sem), qualifier_value(found, "scope", ir.Scope)
        if sem is None or scope is None:
            raise self.error(f"{self.tok.text!r}: a fence needs a semantics and a scope, as in fence.sc.gpu")
        unknown = semantics.unknown_fence(sem[0])  # the fences of the semantics table
        if unknown is not None:
            raise self.qual_error(unknown, sem[1])
        return ir.Fence(sem[0], scope[0])

    def proxy_fence(self) -> ir.Instruction:
        if len(self.quals) < 2:
            raise self.error("fence.proxy needs a kind (alias, surface, texture, constant, async)")
        kind_q = self.quals[1]
        kinds = {k.value: k for k in ir.ProxyFenceKind}
        if kind_q.text not in kinds:
            raise self.qual_error(f"unknown proxy fence kind '.{kind_q.text}'", kind_q)
        space = None
        if len(self.quals) > 2:
            space_q = self.quals[2]
            if space_q.text not in ir.PROXY_FENCE_SPACES or len(self.quals) > 3:
                bad = space_q if space_q.text not in ir.PROXY_FENCE_SPACES else self.quals[3]
                raise self.qual_error(
                    f"bad proxy fence state space '.{bad.text}' (global, shared::cta, shared::cluster)", bad
                )
            space = space_q.text
        return ir.ProxyFence(kinds[kind_q.text], space)

    def tensormap_fence(self) -> ir.Instruction:
        """``fence.proxy.tensormap::generic.release.scope`` / ``...acquire.scope map{, 128}`` (PTX ISA
        "membar/fence": the acquire form names the tensor map, ``[addr], 128``; 128 is the only size)."""
        form = "fence.proxy.tensormap::generic.{release,acquire}.SCOPE (the acquire form: its tensor map, then 128)"
        found = self.classify({"sem": {"release": ir.Sem.RELEASE, "acquire": ir.Sem.ACQUIRE}, "scope": SCOPES}, self.quals[2:])
        sem, scope = qualifier_value(found, "sem", ir.Sem), qualifier_value(found, "scope", ir.Scope)
        if sem is None or scope is None:
            raise self.error(f"{self.tok.text!r}: {form}")
        if sem[0] is ir.Sem.RELEASE:
            self.count(0)
            return ir.TensormapFence(ir.Sem.RELEASE, scope[0])
        self.count(1, 2)
        if len(self.operands) == 2 and self.operands[1].text != "128":
            raise self.error("the size of a tensor map is 128 (bytes)", self.operands[1])
        return ir.TensormapFence(ir.Sem.ACQUIRE, scope[0], self.location(0))

    def unknown_tensormap(self) -> ir.Instruction:
        raise self.error(f"unknown {self.tok.text!r} ({TENSORMAP_REPLACE} map, address)")

    def unknown_membar(self) -> ir.Instruction:
        """``membar.{cta,gl,sys}`` are Forms (``fence.sc``); any other spelling is wrong."""
        self.count(0)
        raise self.error(f"{self.tok.text!r}: expected membar.cta, membar.gl or membar.sys")

    def cluster_barrier(self) -> ir.Instruction:
        """``barrier.cluster...``: the right spellings are Forms; this one is wrong."""
        raise self.error(
            f"unknown barrier {self.tok.text!r} (barrier.cluster.arrive{{.release,.relaxed}} or barrier.cluster.wait{{.acquire}})"
        )

    def barrier(self) -> ir.Instruction:
        texts = [q.text for q in self.quals]
        if self.base == "barrier" and texts and texts[0] == "cluster":
            return self.cluster_barrier()
        dat3m = bool(texts) and texts[0] == "cta"
        if dat3m:
            texts = texts[1:]
        if texts not in (["sync"], ["arrive"]):
            raise self.error(f"unknown barrier {self.tok.text!r} (bar{{.cta}}.sync or bar{{.cta}}.arrive)")
        mode = texts[0]
        n = len(self.operands)
        if not dat3m:  # PTX: bar.sync id{, count}
            self.count(1, 2)
            return ir.Barrier(id=self.value(0), count=self.barrier_count(1) if n == 2 else None, mode=mode)
        # Dat3M: bar.cta.sync id | bar.cta.sync instance, id{, quorum}
        self.count(1, 2, 3)
        if n == 1:
            return ir.Barrier(id=self.value(0), mode=mode)
        instance = self.operands[0]
        if instance.kind != NUM:
            raise self.error(f"the barrier instance must be a number, found {instance.describe()}", instance)
        count = self.barrier_count(2) if n == 3 else None
        return ir.Barrier(id=self.value(1), count=count, mode=mode, instance=self.p.int_value(instance))

    def barrier_count(self, i: int) -> ir.Operand | None:
        tok = self.operands[i]
        if tok.kind == WORD and tok.text == "all":
            return None
        return self.value(i)

    def texts(self) -> list[str]:
        return [q.text for q in self.quals]

    def number(self, i: int) -> int:
        tok = self.operands[i]
        if tok.kind != NUM:
            raise self.error(f"expected a number, found {tok.describe()}", tok)
        return self.p.int_value(tok)

    def unknown_griddepcontrol(self) -> ir.Instruction:
        raise self.error(f"unknown {self.tok.text!r} (griddepcontrol.launch_dependents or griddepcontrol.wait)")

    def unknown_tcgen05(self) -> ir.Instruction:
        raise self.error(f"unknown {self.tok.text!r} (tcgen05.fence::before_thread_sync or ::after_thread_sync, "
                         "tcgen05.st t, v, tcgen05.ld r, t, tcgen05.wait::st or ::ld, tcgen05.alloc slot, address)")

    def unknown_async(self) -> ir.Instruction:
        raise self.error(f"unknown instruction {self.tok.text!r} (async.read)")

    def unknown_wgmma(self) -> ir.Instruction:
        raise self.error(f"unknown instruction {self.tok.text!r} (wgmma.fence, wgmma.mma_async d, a, wgmma.commit_group, "
                         "wgmma.wait_group n)")

    def mbarrier_sem_scope(self, quals: list[Qualifier], sems: dict[str, ir.Sem], default: ir.Sem) -> tuple[ir.Sem, ir.Scope]:
        found = self.classify({"sem": sems, "scope": MBAR_SCOPES}, quals)
        sem, scope = qualifier_value(found, "sem", ir.Sem), qualifier_value(found, "scope", ir.Scope)
        return default if sem is None else sem[0], ir.Scope.CTA if scope is None else scope[0]

    def mbarrier(self) -> ir.Instruction:
        texts = self.texts()
        op = texts[0] if texts else ""
        rest = self.quals[1:]
        if op == "arrive":
            expect = bool(rest) and rest[0].text == "expect_tx"
            rest = rest[1:] if expect else rest
            dsm = bool(rest) and rest[-1].text == DSM_SPACE
            rest = rest[:-1] if dsm else rest
            sem, scope = self.mbarrier_sem_scope(rest, MBAR_ARRIVE_SEMS, ir.Sem.RELEASE)
            self.count(*((2, 3) if expect else (1, 2)))
            tx = self.number(1) if expect else None
            extra = 2 if expect else 1
            count = self.number(extra) if len(self.operands) > extra else 1
            return ir.MbarrierArrive(self.location(0), sem, scope, tx, count, shared_cluster=dsm)
        if op in ("try_wait", "test_wait"):
            if not rest or rest[0].text != "parity":
                raise self.error(f"{self.tok.text!r}: write mbarrier.{op}.parity")
            sem, scope = self.mbarrier_sem_scope(rest[1:], MBAR_WAIT_SEMS, ir.Sem.ACQUIRE)
            self.count(3)
            return ir.MbarrierWait(self.register(0), self.location(1), self.number(2), op, sem, scope)
        fixed = [f.mnemonic for f in FORMS.values() if f.printed and f.mnemonic.split(".")[:2] == ["mbarrier", op]]
        if fixed:  # an operation the table spells out: its spellings
            raise self.error(f"unknown instruction {self.tok.text!r} (write {' or '.join(fixed)})")
        ops = sorted({f.mnemonic.split(".")[1] for f in FORMS.values() if f.base == "mbarrier" and "." in f.mnemonic})
        raise self.error(
            f"unknown instruction {self.tok.text!r} (mbarrier.{', .'.join(ops)}, .arrive, .try_wait.parity, .test_wait.parity)"
        )

    def copy(self) -> ir.Instruction:
        """``cp.async...`` and ``cp.reduce.async.bulk...``."""
        texts = self.texts()
        if texts[:1] == ["reduce"]:
            return self.bulk_copy(texts[1:], reduce=True)
        if texts[:2] == ["async", "bulk"]:
            return self.bulk_copy(texts, reduce=False)
        if texts[:2] in (["async", "ca"], ["async", "cg"]):
            # PTX spelling: cp.async.ca.shared.global s, g (or .cg); the size operand is not written
            if texts[2:] not in (["shared", "global"], ["shared::cta", "global"]):
                raise self.error(f"unknown instruction {self.tok.text!r} (cp.async.{texts[1]}.shared.global DST, SRC)")
            self.count(2)
            self.expect_space(0, ir.Space.SHARED)
            self.expect_space(1, ir.Space.GLOBAL)
            return ir.CpAsync(self.location(0), self.location(1))
        if tuple(texts) == ("async", "mbarrier", "arrive"):
            raise self.error(
                f"write {self.tok.text}.noinc: the arrival of cp.async.mbarrier.arrive counts against the mbarrier's "
                "expected arrivals only in the .noinc form (without it the pending count is first incremented)"
            )
        raise self.error(f"unknown instruction {self.tok.text!r}")

    def expect_space(self, i: int, space: ir.Space) -> None:
        if i < len(self.operands):
            self.cell.spaces.append((self.operands[i], space))

    def bulk_copy(self, texts: list[str], reduce: bool) -> ir.Instruction:
        if texts[:2] != ["async", "bulk"] or len(texts) < 3:
            raise self.error(f"unknown instruction {self.tok.text!r}")
        tail = texts[2:]  # commit_group and wait_group{.read} are Forms
        if tail[0] == "tensor":
            return self.tensor_copy(tail[1:], reduce)
        if tail[0] in COPY_SPACES:
            return self.bulk_copy_spaces(tail, reduce)
        completion, ops = tail[0], tail[1:]
        if completion not in BULK_COMPLETIONS or len(ops) != (1 if reduce else 0):
            raise self.error(
                f"unknown instruction {self.tok.text!r} (cp{{.reduce}}.async.bulk.mbarrier or .bulk_group{{.op}}, "
                "or the PTX form cp{.reduce}.async.bulk.DST.SRC{.COMPLETION}{.op})"
            )
        op = self.reduction(ops[0]) if reduce else None
        self.count(4 if completion == "mbarrier" else 3)
        dst, src, size = self.location(0), self.location(1), self.number(2)
        bar = self.location(3) if completion == "mbarrier" else None
        return ir.CpAsyncBulk(dst, src, completion, bar, op, size)

    def reduction(self, text: str) -> ir.RmwOp:
        if text not in RMW_OPS:
            raise self.error(f"unknown reduction '.{text}' in {self.tok.text!r}")
        return RMW_OPS[text]

    def bulk_copy_spaces(self, tail: list[str], reduce: bool) -> ir.Instruction:
        """The PTX form ``cp{.reduce}.async.bulk.DST.SRC{.COMPLETION}{.op} dst, src{, size}{, bar}``:
        ``DST``/``SRC`` are ``global``, ``shared`` (``shared::cta``, ``shared::cluster``) and must match
        the declared locations; the completion defaults to ``mbarrier`` for a copy into shared memory and
        ``bulk_group`` for one into global memory; the size defaults to 4 bytes."""
        if len(tail) < 2 or tail[1] not in COPY_SPACES:
            raise self.error(f"{self.tok.text!r}: write the destination and the source state space, as in cp.async.bulk.shared.global")
        dst_space, src_space = COPY_SPACES[tail[0]], COPY_SPACES[tail[1]]
        rest = tail[2:]
        if rest and rest[0] in BULK_COMPLETION_SPELLINGS:
            completion = BULK_COMPLETION_SPELLINGS[rest[0]]
            rest = rest[1:]
        else:
            completion = "mbarrier" if dst_space is ir.Space.SHARED else "bulk_group"
        if len(rest) != (1 if reduce else 0):
            what = "one reduction (.add, .min...)" if reduce else "nothing"
            raise self.error(f"{self.tok.text!r}: after the state spaces and completion comes {what}")
        op = self.reduction(rest[0]) if reduce else None
        with_bar = completion == "mbarrier"
        self.count(*((3, 4) if with_bar else (2, 3)))
        sized = len(self.operands) == (4 if with_bar else 3)
        dst, src = self.location(0), self.location(1)
        size = self.number(2) if sized else 4
        bar = self.location(len(self.operands) - 1) if with_bar else None
        self.expect_space(0, dst_space)
        self.expect_space(1, src_space)
        return ir.CpAsyncBulk(dst, src, completion, bar, op, size)

    def tensor_copy(self, tail: list[str], reduce: bool) -> ir.Instruction:
        """The PTX form ``cp{.reduce}.async.bulk.tensor.1d.DST.SRC{.op}{.tile}{.COMPLETION} dst, src{, bar}``
        (PTX ISA cp.async.bulk.tensor, cp.reduce.async.bulk.tensor): the global operand names the
        location whose 1-D tensor map and coordinate the harness builds (``[tensorMap, {c}]`` in
        PTX), so there is no size operand (the box is the location's word); ``.tile`` is the only
        load mode; the completion defaults as in the non-tensor form."""
        form = "cp{.reduce}.async.bulk.tensor.1d.DST.SRC{.op}{.tile}{.COMPLETION}"
        if tail[:1] != [TENSOR_DIM]:
            raise self.error(f"{self.tok.text!r}: fuzzgpu's tensor copies are 1-D ({form})")
        spaces = tail[1:3]
        if len(spaces) < 2 or not all(q in COPY_SPACES for q in spaces):
            raise self.error(f"{self.tok.text!r}: write the destination and the source state space ({form})")
        dst_space, src_space = COPY_SPACES[spaces[0]], COPY_SPACES[spaces[1]]
        completion: str | None = None
        op: ir.RmwOp | None = None
        tile = False
        for q in tail[3:]:
            if q in BULK_COMPLETION_SPELLINGS and completion is None:
                completion = BULK_COMPLETION_SPELLINGS[q]
            elif q == TENSOR_LOAD_MODE and not tile:
                tile = True
            elif reduce and op is None and q in RMW_OPS:
                op = self.reduction(q)
            else:
                raise self.error(f"{self.tok.text!r}: unexpected '.{q}' ({form})")
        if reduce and op is None:
            raise self.error(f"{self.tok.text!r}: cp.reduce.async.bulk.tensor names its reduction (.add, .min...)")
        if completion is None:
            completion = "mbarrier" if dst_space is ir.Space.SHARED else "bulk_group"
        self.count(3 if completion == "mbarrier" else 2)
        dst, src = self.location(0), self.location(1)
        bar = self.location(2) if completion == "mbarrier" else None
        self.expect_space(0, dst_space)
        self.expect_space(1, src_space)
        return ir.CpAsyncBulk(dst, src, completion, bar, op, 4, tensor=True)

    def unknown_filler(self) -> ir.Instruction:
        raise self.error(f"unknown filler {self.tok.text!r} (filler.regloop, filler.smem, filler.delay)")
