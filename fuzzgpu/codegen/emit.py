"""Per-instruction emission, shared by the static kernels and the harness: an IR instruction ->
C++ statements with inline PTX (:func:`emit_instruction`; :class:`EmitContext` is where the two
emitters differ), the PTX mnemonic of a memory operation or fence (:func:`ptx_of`), and the text
helpers both emitters use (registers, labels, comments)."""

from __future__ import annotations

import re

from .. import ir, semantics


# --------------------------------------------------------------------------------------------
# Per-instruction emission (shared by the static kernels and the harness)
# --------------------------------------------------------------------------------------------


def spread_locations(p: ir.Program, t: ir.Thread) -> frozenset[str]:
    """The locations of ``p`` whose repeated loads in thread ``t`` may go through
    ``address + k * fz_zero`` (a run-time 0 ptxas cannot prove): those whose physical location ``t``
    accesses only with weak generic loads.

    The offset keeps ptxas from merging two loads of one address, but it also tells ptxas that the
    addresses may differ, and ptxas 13.0 then reorders the loads (corr3 of issue 27: the harness's
    ``ld.relaxed.sys r2, y`` issued before its ``ld.volatile r1, y``, so an H200 run counted the
    SC outcome (r1, r2) = (0, 6) as the forbidden (6, 0); docs/findings.md).  The model orders two
    loads of one location in a thread when either is strong (SC per location for morally strong
    operations; ld.volatile is relaxed.sys), and a load after a store or RMW of the thread must
    see it, so only a location read by weak loads alone may be spread: there a merge would lose an
    observation and a reorder is an execution the model allows (two weak loads read any two
    writes in either coherence order)."""
    out: dict[str, bool] = {}
    for ins in t.code:
        for name in ins.locations():
            phys = p.physical(name)
            weak_load = isinstance(ins, ir.Load) and ins.sem is ir.Sem.WEAK and ins.proxy is ir.Proxy.GENERIC
            out[phys] = out.get(phys, True) and weak_load  # (semantics.swappable_access, less .nc: a .nc load is not spread)
    return frozenset(loc.name for loc in p.locations if out.get(p.physical(loc.name), False))


class EmitContext:
    """How one instruction's operands become C++.  The static and the harness emitters differ only
    here: register names, location addresses, value encoding and what a backward jump does."""

    def reg(self, r: str) -> str:  # an int lvalue
        return r

    def home_rank(self, loc: str) -> str:
        """A C++ expression for the cluster rank of the CTA that shared location ``loc`` belongs
        to (the ``mapa`` target of a ``.shared::cluster`` access)."""
        raise NotImplementedError

    def tmem_address(self, loc: str) -> str:
        """A C++ expression for the tensor-memory address of ``tmem`` location ``loc`` (classes E/G:
        only the static kernels emit tensor memory, compiled for sm_100a and never run)."""
        raise NotImplementedError

    def operand(self, v: ir.Operand) -> str:  # an int rvalue
        return self.read(v) if isinstance(v, str) else f"({v})"

    def read(self, r: str) -> str:
        """The value of register ``r`` as an int rvalue."""
        return self.reg(r)

    def write(self, r: str) -> str:
        """An lvalue for a plain (Mov/Arith) write of register ``r``."""
        return self.reg(r)

    def load_result(self, dst: str, raw: str, loc: str) -> str:
        """The statement that puts the raw word ``raw`` read from ``loc`` into register ``dst``."""
        return f"{self.reg(dst)} = {self.dec(raw, loc)};"

    def note_load(self, loc: str) -> int:
        """How many loads of ``loc`` this thread's code had before this one."""
        seen = self.__dict__.setdefault("_loads", {})
        n = seen.get(loc, 0)
        seen[loc] = n + 1
        return n

    #: the locations whose repeated loads go through ``address + k * fz_zero``
    #: (:func:`spread_locations` of the thread being emitted); none unless the emitter sets it
    spread: frozenset[str] = frozenset()

    def addr(self, loc: str) -> tuple[str, ir.Space]:
        """A C++ expression for the location's address: ``unsigned*`` for global, a 32-bit shared
        address (``unsigned``) for shared."""
        raise NotImplementedError

    def tensor_map(self, loc: str) -> tuple[str, str]:
        """C++ expressions for the global operand ``[tensorMap, {c}]`` of a tensor copy of global
        location ``loc``: the generic address of the 1-D tensor map over the buffer that holds it
        (``unsigned long long``) and the location's coordinate in that map (``int``, its element
        index)."""
        raise TypeError(f"no tensor map for {loc} in this kernel")

    def map_address(self, m: str) -> str:
        """The generic address (``unsigned long long``) of tensor map ``m``, a ``tensormap`` location
        in global memory (class D: ``tensormap.replace`` writes it, a tensor copy reads through it,
        the acquire proxy fence names it)."""
        raise TypeError(f"no tensor map in global memory for {m} in this kernel")

    def retarget(self, m: str, loc: str) -> str:
        """The ``global_address`` (``unsigned long long``) that ``tensormap.replace`` writes into
        map ``m`` so that a tensor copy through ``m`` reads location ``loc``'s slot where it read
        the slot of ``m``'s target (the copy's coordinate stays the target's)."""
        raise TypeError(f"no tensor map in global memory for {m} in this kernel")

    def enc(self, expr: str) -> str:
        """The raw 32-bit word stored for litmus value ``expr`` (launch-unique in the harness)."""
        return f"(unsigned)({expr})"

    def enc_rmw(self, op: ir.RmwOp, expr: str) -> str:
        """The raw operand of an RMW whose memory word is encoded."""
        return f"(unsigned)({expr})"

    def dec(self, raw: str, loc: str) -> str:
        """The litmus value of a raw word read from ``loc``."""
        return f"(int)({raw})"

    def async_read(self, ins: ir.AsyncRead) -> list[str]:
        """An ``async.read`` (a wgmma/tcgen05 operand read).  Static kernels: a generic
        ``ld.shared`` with a comment (so the SASS oracle sees a read of the location at that point;
        it is no async-proxy read).  The harness runs a wgmma (:class:`_HarnessCtx`)."""
        a, _ = self.addr(ins.loc)
        return [
            "{ unsigned raw_;  // async.read: stands for a wgmma/tcgen05 operand read (async proxy); emitted as a generic ld.shared",
            f'  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(raw_) : "r"({a}) : "memory");',
            f"  {self.load_result(ins.dst, 'raw_', ins.loc)} }}",
        ]

    def set_result(self, dst: str, expr: str) -> str:
        """The statement that puts a non-memory result (an mbarrier wait's predicate, 0 or 1) into
        register ``dst``."""
        return f"{self.write(dst)} = {expr};"

    def label(self, name: str) -> str:
        return f"L_{name}"

    def jump(self, target: str, backward: bool) -> str:
        return f"goto {self.label(target)};"

    def barrier(self, ins: ir.Barrier) -> str:
        # litmus counts are in threads of the litmus program; one litmus thread is one warp here
        parts: list[str] = []
        inputs: list[str] = []

        def add(v: ir.Operand, scale: int) -> None:
            if isinstance(v, str):
                parts.append(f"%{len(inputs)}")
                inputs.append(f'"r"(({self.read(v)}) * {scale})')
            else:
                parts.append(str(v * scale))

        add(ins.id, 1)
        cnt = ins.count if ins.count is not None else (1 if ins.mode == "arrive" else None)
        if cnt is not None:
            add(cnt, 32)
        return f'asm volatile("barrier.{ins.mode} {", ".join(parts)};" :: {", ".join(inputs)} : "memory");'


def _ss(space: ir.Space) -> str:
    return ".shared" if space is ir.Space.SHARED else ".global"


def _acon(space: ir.Space) -> str:
    return '"r"' if space is ir.Space.SHARED else '"l"'


def _sem_scope(sem: ir.Sem, scope: ir.Scope | None, default_scope: ir.Scope = ir.Scope.GPU) -> str:
    if sem is ir.Sem.WEAK:
        return ""
    if sem is ir.Sem.VOLATILE:
        return ".volatile"
    return f".{sem}.{scope if scope is not None else default_scope}"


_RMW_TYPE = {
    ir.RmwOp.ADD: "add.u32",
    ir.RmwOp.SUB: "add.u32",
    ir.RmwOp.AND: "and.b32",
    ir.RmwOp.OR: "or.b32",
    ir.RmwOp.XOR: "xor.b32",
    ir.RmwOp.EXCH: "exch.b32",
    ir.RmwOp.CAS: "cas.b32",
    ir.RmwOp.MIN: "min.s32",  # the oracle's min/max are signed
    ir.RmwOp.MAX: "max.s32",
    ir.RmwOp.INC: "inc.u32",
    ir.RmwOp.DEC: "dec.u32",
}

_ARITH = {
    ir.ArithOp.ADD: "+",
    ir.ArithOp.SUB: "-",
    ir.ArithOp.MUL: "*",
    ir.ArithOp.AND: "&",
    ir.ArithOp.OR: "|",
    ir.ArithOp.XOR: "^",
}

_COND = {ir.Cond.EQ: "==", ir.Cond.NE: "!=", ir.Cond.LT: "<", ir.Cond.LE: "<=", ir.Cond.GT: ">", ir.Cond.GE: ">="}


def ptx_of(ins: ir.Instruction, space: ir.Space = ir.Space.GLOBAL) -> str:
    """The PTX mnemonic (with qualifiers) of a memory operation or fence, operands not included.
    A distributed-shared-memory access (``shared_cluster``) is ``.shared::cluster``."""
    ss = ".shared::cluster" if getattr(ins, "shared_cluster", False) else _ss(space)
    if isinstance(ins, ir.Load):
        if ins.nc:
            return "ld.global.nc.u32"
        return f"ld{_sem_scope(ins.sem, ins.scope)}{ss}.u{ins.width}"  # a narrow ld zero-extends into the 32-bit register
    if isinstance(ins, ir.Store):
        return f"st{_sem_scope(ins.sem, ins.scope)}{ss}.u{ins.width}"  # a narrow st writes the register's low bits
    if isinstance(ins, ir.Atom) or (isinstance(ins, ir.Red) and ins.sem in (ir.Sem.ACQUIRE, ir.Sem.ACQ_REL)):
        return f"atom.{ins.sem}.{ins.scope}{ss}.{_RMW_TYPE[ins.operation]}"
    if isinstance(ins, ir.Red):
        return f"red.{ins.sem}.{ins.scope}{ss}.{_RMW_TYPE[ins.operation]}"
    if isinstance(ins, ir.Fence):
        return f"fence.{ins.sem}.{ins.scope}"
    if isinstance(ins, ir.ProxyFence):
        return f"fence.proxy.{ins.kind}" + (f".{ins.space}" if ins.space else "")
    raise TypeError(f"{ins.OP} has no single PTX mnemonic")


def _mapa(ctx: "EmitContext", loc: str, local: str) -> list[str]:
    """``mapa.shared::cluster``: the address, in the shared memory of the location's CTA
    (``Location.cta``) of this cluster, of the local shared address ``local`` -- into ``ra_``.
    PTX ISA, "mapa": "Get address in the CTA specified by operand b which corresponds to the
    address specified by operand a"."""
    return [f'unsigned ra_; asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(ra_) : "r"({local}), "r"({ctx.home_rank(loc)}));']


def emit_instruction(ins: ir.Instruction, ctx: EmitContext, backward: bool = False) -> list[str]:
    """C++ statements for one instruction.  ``backward``: a branch/goto to an earlier label.  A
    distributed-shared-memory access (``.shared::cluster``) first maps the location's address into
    its CTA with ``mapa`` (:func:`_mapa`), in a block of its own."""
    if getattr(ins, "shared_cluster", False) and isinstance(
            ins, (ir.Load, ir.Store, ir.Atom, ir.Red, ir.MbarrierArrive, ir.MbarrierCompleteTx)):
        name = ins.bar if isinstance(ins, (ir.MbarrierArrive, ir.MbarrierCompleteTx)) else ins.loc
        return ["{"] + ["  " + x for x in _mapa(ctx, name, ctx.addr(name)[0])] + [
            "  " + x for x in _emit(ins, ctx, backward)] + ["}"]
    return _emit(ins, ctx, backward)


def _address(ctx: "EmitContext", ins: ir.Instruction, loc: str) -> tuple[str, ir.Space]:
    """The address operand of ``ins``'s access of ``loc``: the ``mapa`` result ``ra_`` for a
    ``.shared::cluster`` access (see :func:`emit_instruction`), else the context's address."""
    if getattr(ins, "shared_cluster", False):
        return "ra_", ir.Space.SHARED
    return ctx.addr(loc)


def _emit(ins: ir.Instruction, ctx: "EmitContext", backward: bool = False) -> list[str]:
    if isinstance(ins, ir.Load):
        a, space = _address(ctx, ins, ins.loc)
        # ptxas merges two loads of one address even as separate asm volatile statements
        # (facts/h200-litmus-probe.md): a repeated load goes through address + k * (a run-time 0),
        # but only where every access of the location in the thread is a weak load
        # (spread_locations: ptxas then also reorders them, which the model allows)
        k = ctx.note_load(ins.loc)
        if k and ins.loc in ctx.spread:
            a = f"(({a}) + {k if space is ir.Space.GLOBAL else 4 * k}u * fz_zero)"
        return [
            "{ unsigned raw_;",
            f'  asm volatile("{ptx_of(ins, space)} %0, [%1];" : "=r"(raw_) : {_acon(space)}({a}) : "memory");',
            f"  {ctx.load_result(ins.dst, 'raw_', ins.loc)} }}",
        ]
    if isinstance(ins, ir.Store):
        a, space = _address(ctx, ins, ins.loc)
        return [
            f'asm volatile("{ptx_of(ins, space)} [%0], %1;" :: {_acon(space)}({a}), '
            f'"r"({ctx.enc(ctx.operand(ins.src))}) : "memory");'
        ]
    if isinstance(ins, (ir.Atom, ir.Red)):
        a, space = _address(ctx, ins, ins.loc)
        mnem = ptx_of(ins, space)
        ops = ins.operands if isinstance(ins, ir.Atom) else (ins.value,)
        raw_ops = []
        for v in ops:
            e = ctx.operand(v)
            if ins.operation is ir.RmwOp.SUB:
                e = f"(-({e}))"
            raw_ops.append(ctx.enc_rmw(ins.operation, e))
        if mnem.startswith("red."):
            return [
                f'asm volatile("{mnem} [%0], %1;" :: {_acon(space)}({a}), "r"({raw_ops[0]}) : "memory");'
            ]
        operand_list = ", ".join(f"%{i + 2}" for i in range(len(raw_ops)))
        ins_list = ", ".join(f'"r"({o})' for o in raw_ops)
        lines = [
            "{ unsigned raw_;",
            f'  asm volatile("{mnem} %0, [%1], {operand_list};" : "=r"(raw_) : {_acon(space)}({a}), {ins_list} : "memory");',
        ]
        if isinstance(ins, ir.Atom):
            lines.append(f"  {ctx.load_result(ins.dst, 'raw_', ins.loc)} }}")
        else:
            lines.append("  (void)raw_; }")
        return lines
    if isinstance(ins, ir.Fence) and ins.sem in semantics.ONE_WAY_FENCE_SEMS:
        # the one-way fences exist from sm_90 (one_way_fence_arch_ok): the device pass of an older
        # arch stops here with a message instead of ptxas writing a cubin nvdisasm cannot read
        return [f"#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < {ONE_WAY_FENCE_SM}0",
                f'#error "fuzzgpu: fence.{ins.sem.value} needs sm_{ONE_WAY_FENCE_SM} or later (PTX ISA 8.6, membar/fence); '
                'this compile targets an older arch"',
                "#else", f'asm volatile("{ptx_of(ins)};" ::: "memory");', "#endif"]
    if isinstance(ins, (ir.Fence, ir.ProxyFence)):
        return [f'asm volatile("{ptx_of(ins)};" ::: "memory");']
    if isinstance(ins, ir.Barrier):
        return [ctx.barrier(ins)]
    if isinstance(ins, ir.Mov):
        src = ctx.operand(ins.src)
        return [f"{ctx.write(ins.dst)} = {src};"]
    if isinstance(ins, ir.Arith):
        a, b = ctx.operand(ins.a), ctx.operand(ins.b)
        if ins.operation is ir.ArithOp.DIV:
            return [f"{ctx.write(ins.dst)} = ({b}) == 0 ? 0 : ({a}) / ({b});"]
        return [f"{ctx.write(ins.dst)} = ({a}) {_ARITH[ins.operation]} ({b});"]
    if isinstance(ins, ir.Label):
        return [f"{ctx.label(ins.name)}: ;"]
    if isinstance(ins, ir.Branch):
        a, b = ctx.operand(ins.a), ctx.operand(ins.b)
        return [f"if (({a}) {_COND[ins.cond]} ({b})) {{ {ctx.jump(ins.target, backward)} }}"]
    if isinstance(ins, ir.Goto):
        return [f"{{ {ctx.jump(ins.target, backward)} }}"]
    if isinstance(ins, ir.Filler):
        return _emit_filler(ins)
    if isinstance(ins, ir.EXTENSION_INSTRUCTIONS):
        return _emit_extension(ins, ctx)
    if isinstance(ins, ir.TCGEN05_MEMORY_INSTRUCTIONS):
        return _emit_tensor_memory(ins, ctx)
    raise TypeError(f"no code generation for {ins.OP}")


_KNOWN = (ir.Load, ir.Store, ir.Atom, ir.Red, ir.Fence, ir.ProxyFence, ir.Barrier, ir.Mov, ir.Arith, ir.Label, ir.Branch, ir.Goto,
          ir.Filler, *ir.EXTENSION_INSTRUCTIONS, *ir.TCGEN05_MEMORY_INSTRUCTIONS)

#: A litmus location is one 32-bit word; a bulk (TMA) copy moves at least 16 bytes, 16-byte aligned.
#: Code generation gives every location a 16-byte slot (the litmus word first) and scales every
#: transaction byte count by this factor: ``cp.async.bulk ... 4`` (one word) copies the 16-byte slot
#: and completes 16 bytes, ``expect_tx 4`` expects 16, so expected and completed bytes keep their
#: relation.
BULK_SCALE = 4
BULK_SLOT_BYTES = 16

#: cp.reduce.async.bulk operation -> PTX type suffix
_BULK_REDUCE = {
    ir.RmwOp.ADD: "add.u32",
    ir.RmwOp.MIN: "min.u32",
    ir.RmwOp.MAX: "max.u32",
    ir.RmwOp.INC: "inc.u32",
    ir.RmwOp.DEC: "dec.u32",
    ir.RmwOp.AND: "and.b32",
    ir.RmwOp.OR: "or.b32",
    ir.RmwOp.XOR: "xor.b32",
}

#: the bulk reductions the harness runs: two's-complement arithmetic and bitwise operations, the
#: same on the device's 32-bit words as in the oracle (with the exact value codec: value_plan)
_BULK_REDUCE_RUNNABLE = (ir.RmwOp.ADD, ir.RmwOp.AND, ir.RmwOp.OR, ir.RmwOp.XOR)

#: true when the device pass compiles for an arch with tcgen05 (sm_100a / sm_101a / sm_103a, or
#: the sm_100f family)
_TCGEN05_GUARD = (
    "#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM100_ALL) && !defined(__CUDA_ARCH_FEAT_SM101_ALL) "
    "&& !defined(__CUDA_ARCH_FEAT_SM103_ALL) && !(defined(__CUDA_ARCH_FAMILY_SPECIFIC__) && "
    "__CUDA_ARCH_FAMILY_SPECIFIC__ >= 1000)"
)

TCGEN05_ARCHS = ("sm_100a", "sm_100f", "sm_101a", "sm_103a")


def tcgen05_arch_ok(arch: str) -> bool:
    return arch in TCGEN05_ARCHS or arch.startswith(("sm_100a", "sm_100f", "sm_101", "sm_103"))


#: PTX ISA "membar/fence": the one-way ``fence.acquire`` / ``fence.release`` need PTX ISA 8.6 and
#: sm_90 or later (ptxas 13.0 takes them for sm_80 and writes a cubin nvdisasm calls illegal)
ONE_WAY_FENCE_SM = 90
_SM_NUMBER = re.compile(r"\Asm_([0-9]+)")


def one_way_fence_arch_ok(arch: str | None) -> bool:
    """Whether target ``arch`` has ``fence.acquire`` / ``fence.release`` (None, or a name that is
    not ``sm_<N>...``: fuzzgpu's targets, sm_90 and later)."""
    m = _SM_NUMBER.match(arch) if arch else None
    return m is None or int(m.group(1)) >= ONE_WAY_FENCE_SM


def _bulk_bytes(litmus_bytes: int) -> int:
    """Hardware byte count of a litmus copy size (rounded up to a whole 16-byte slot)."""
    n = litmus_bytes * BULK_SCALE
    return (n + BULK_SLOT_BYTES - 1) // BULK_SLOT_BYTES * BULK_SLOT_BYTES


def _emit_extension(ins: ir.Instruction, ctx: EmitContext) -> list[str]:
    """The PDL / mbarrier / async-proxy / cp.async instructions, each one inline-PTX statement with
    a ``"memory"`` clobber.  mbarrier objects and bulk-copy operands are 32-bit shared addresses
    (``ctx.addr``); the context keeps them 8- (mbarrier) and 16-byte (bulk) aligned."""
    if isinstance(ins, ir.GridDepControl):
        return [f'asm volatile("griddepcontrol.{ins.action};" ::: "memory");']
    if isinstance(ins, (ir.TensormapReplace, ir.TensormapFence)):
        return _emit_tensormap(ins, ctx)
    if isinstance(ins, ir.MbarrierInit):
        a, _ = ctx.addr(ins.bar)
        return [f'asm volatile("mbarrier.init.shared::cta.b64 [%0], {ins.count};" :: "r"({a}) : "memory");']
    if isinstance(ins, ir.ClusterBarrier):
        sem = f".{ins.sem}" if ins.sem is not None else ""
        return [f'asm volatile("barrier.cluster.{ins.mode}{sem};" ::: "memory");']
    if isinstance(ins, ir.FenceMbarrierInit):
        return ['asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");']
    if isinstance(ins, ir.MbarrierArrive):
        a, _ = _address(ctx, ins, ins.bar)
        space = "shared::cluster" if ins.shared_cluster else "shared::cta"
        q = f".{ins.sem}.{ins.scope}.{space}.b64"
        # a remote arrive (.shared::cluster) returns no state: its destination is the sink _
        decl, state = ("", "_") if ins.shared_cluster else (".reg .b64 st_; ", "st_")
        if ins.expect_tx is not None:
            tx = ins.expect_tx * BULK_SCALE
            if ins.count == 1:
                return [f'asm volatile("{{ {decl}mbarrier.arrive.expect_tx{q} {state}, [%0], {tx}; }}" :: "r"({a}) : "memory");']
            # no single PTX form with both: expect the bytes first (relaxed), then the arrivals
            return [
                f'asm volatile("mbarrier.expect_tx.relaxed.{ins.scope}.{space}.b64 [%0], {tx};" :: "r"({a}) : "memory");',
                f'asm volatile("{{ {decl}mbarrier.arrive{q} {state}, [%0], {ins.count}; }}" :: "r"({a}) : "memory");',
            ]
        cnt = f", {ins.count}" if ins.count != 1 else ""
        return [f'asm volatile("{{ {decl}mbarrier.arrive{q} {state}, [%0]{cnt}; }}" :: "r"({a}) : "memory");']
    if isinstance(ins, ir.MbarrierExpectTx):
        a, _ = ctx.addr(ins.bar)
        return [f'asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], {ins.tx * BULK_SCALE};" :: "r"({a}) : "memory");']
    if isinstance(ins, ir.MbarrierCompleteTx):
        a, _ = _address(ctx, ins, ins.bar)
        space = "shared::cluster" if ins.shared_cluster else "shared::cta"
        return [f'asm volatile("mbarrier.complete_tx.relaxed.{ins.scope}.{space}.b64 [%0], {ins.tx * BULK_SCALE};" :: "r"({a}) : "memory");']
    if isinstance(ins, ir.MbarrierWait):
        a, _ = ctx.addr(ins.bar)
        # one try: try_wait itself gives up after a hardware time limit (false), test_wait at once
        return [
            "{ unsigned ok_;",
            f'  asm volatile("{{ .reg .pred p_; mbarrier.{ins.kind}.parity.{ins.sem}.{ins.scope}.shared::cta.b64 p_, [%1], {ins.parity}; '
            f'selp.u32 %0, 1, 0, p_; }}" : "=r"(ok_) : "r"({a}) : "memory");',
            f"  {ctx.set_result(ins.dst, '(int)ok_')} }}",
        ]
    if isinstance(ins, ir.CpAsyncBulk) and ins.tensor:
        return _emit_tensor_copy(ins, ctx)
    if isinstance(ins, ir.CpAsyncBulk):
        d, dsp = ctx.addr(ins.dst_loc)
        src, ssp = ctx.addr(ins.src_loc)
        n = _bulk_bytes(ins.size)
        if dsp is ir.Space.SHARED:  # global -> shared, completes on the mbarrier
            if ins.reduce is not None:
                raise TypeError("cp.reduce.async.bulk has no global -> shared form")
            if ins.completion != "mbarrier" or ins.bar is None:
                raise TypeError("cp.async.bulk global -> shared completes on an mbarrier (no bulk_group form emitted)")
            b, _ = ctx.addr(ins.bar)
            return [f'asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], {n}, [%2];" '
                    f':: "r"({d}), "l"({src}), "r"({b}) : "memory");']
        if ins.completion != "bulk_group":
            raise TypeError(f"cp.async.bulk {ins.completion} completion from shared to global")
        op = "cp.async.bulk" if ins.reduce is None else "cp.reduce.async.bulk"
        red = "" if ins.reduce is None else "." + _BULK_REDUCE[ins.reduce]
        return [f'asm volatile("{op}.global.shared::cta.bulk_group{red} [%0], [%1], {n};" :: "l"({d}), "r"({src}) : "memory");']
    if isinstance(ins, ir.BulkCommit):
        return ['asm volatile("cp.async.bulk.commit_group;" ::: "memory");']
    if isinstance(ins, ir.BulkWait):
        return [f'asm volatile("cp.async.bulk.wait_group{".read" if ins.read else ""} {ins.n};" ::: "memory");']
    if isinstance(ins, ir.CpAsync):
        d, _ = ctx.addr(ins.dst_loc)
        src, _ = ctx.addr(ins.src_loc)
        return [f'asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"({d}), "l"({src}) : "memory");']
    if isinstance(ins, ir.CpAsyncCommit):
        return ['asm volatile("cp.async.commit_group;" ::: "memory");']
    if isinstance(ins, ir.CpAsyncWait):
        if ins.n is None:
            return ['asm volatile("cp.async.wait_all;" ::: "memory");']
        return [f'asm volatile("cp.async.wait_group {ins.n};" ::: "memory");']
    if isinstance(ins, ir.CpAsyncMbarrierArrive):
        a, _ = ctx.addr(ins.bar)
        return [f'asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" :: "r"({a}) : "memory");']
    if isinstance(ins, ir.AsyncRead):
        return ctx.async_read(ins)
    if isinstance(ins, ir.Tcgen05Fence):
        return _emit_tcgen05_fence(ins)
    raise TypeError(f"no code generation for {ins.OP}")


def _emit_tensor_copy(ins: ir.CpAsyncBulk, ctx: EmitContext) -> list[str]:
    """``cp{.reduce}.async.bulk.tensor.1d`` (PTX ISA cp.async.bulk.tensor, cp.reduce.async.bulk.tensor):
    the global side is ``[tensorMap, {c}]`` (``ctx.tensor_map``: the 1-D map over the location
    buffer, whose box is the location's 16-byte slot -- 4 32-bit elements -- so the copy moves and
    completes the same bytes as the non-tensor copy); ``.tile`` load mode."""
    _, dsp = ctx.addr(ins.dst_loc)
    if dsp is ir.Space.SHARED:  # global -> shared, completes on the mbarrier
        if ins.reduce is not None or ins.completion != "mbarrier" or ins.bar is None:
            raise TypeError("cp.async.bulk.tensor global -> shared completes on an mbarrier (no reduction)")
        d, _ = ctx.addr(ins.dst_loc)
        tmap, c = ctx.tensor_map(ins.src_loc)
        b, _ = ctx.addr(ins.bar)
        return ['asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes '
                f'[%0], [%1, {{%2}}], [%3];" :: "r"({d}), "l"({tmap}), "r"({c}), "r"({b}) : "memory");']
    if ins.completion != "bulk_group":
        raise TypeError(f"cp.async.bulk.tensor {ins.completion} completion from shared to global")
    src, _ = ctx.addr(ins.src_loc)
    tmap, c = ctx.tensor_map(ins.dst_loc)
    op = "cp.async.bulk.tensor" if ins.reduce is None else "cp.reduce.async.bulk.tensor"
    red = "" if ins.reduce is None else "." + _BULK_REDUCE[ins.reduce].split(".")[0]  # the type is the map's
    return [f'asm volatile("{op}.1d.global.shared::cta{red}.tile.bulk_group [%0, {{%1}}], [%2];" '
            f':: "l"({tmap}), "r"({c}), "r"({src}) : "memory");']


def _emit_tensormap(ins: ir.TensormapReplace | ir.TensormapFence, ctx: EmitContext) -> list[str]:
    """Class D (sm_90a): ``tensormap.replace.tile.global_address.global.b1024.b64 [map], addr``
    (PTX ISA "tensormap.replace"; the map's generic address, as CUTLASS passes it) and the
    uni-directional proxy fences ``fence.proxy.tensormap::generic.release.scope`` and
    ``.acquire.scope [map], 128`` (PTX ISA "membar/fence")."""
    if isinstance(ins, ir.TensormapReplace):
        return ['asm volatile("tensormap.replace.tile.global_address.global.b1024.b64 [%0], %1;" '
                f':: "l"({ctx.map_address(ins.map)}), "l"({ctx.retarget(ins.map, ins.address)}) : "memory");']
    if ins.sem is ir.Sem.RELEASE:
        return [f'asm volatile("fence.proxy.tensormap::generic.release.{ins.scope.value};" ::: "memory");']
    if ins.map is None:
        raise TypeError("fence.proxy.tensormap::generic.acquire names its tensor map")
    return [f'asm volatile("fence.proxy.tensormap::generic.acquire.{ins.scope.value} [%0], 128;" '
            f':: "l"({ctx.map_address(ins.map)}) : "memory");']


def _emit_tcgen05_fence(ins: ir.Tcgen05Fence) -> list[str]:
    return [
        _TCGEN05_GUARD,
        f'#error "fuzzgpu: tcgen05.fence::{ins.kind} exists only on sm_100a/sm_101a/sm_103a (or the sm_100f family); this compile targets another arch"',
        "#else",
        f'asm volatile("tcgen05.fence::{ins.kind};" ::: "memory");',
        "#endif",
    ]


def _emit_tensor_memory(ins: ir.Instruction, ctx: EmitContext) -> list[str]:
    """Classes E/G's instructions as inline PTX (sm_100a; one 32-bit column per thread: ``.32x32b.x1``);
    the allocation writes its address to its slot (32 columns, the fewest ``tcgen05.alloc`` takes)."""
    if isinstance(ins, ir.Tcgen05St):
        return [_TCGEN05_GUARD, '#error "fuzzgpu: tcgen05.st needs sm_100a (tensor memory)"', "#else",
                f'asm volatile("tcgen05.st.sync.aligned.32x32b.x1.b32 [%0], {{%1}};" :: "r"({ctx.tmem_address(ins.loc)}), '
                f'"r"((unsigned)({ctx.operand(ins.src)})) : "memory");', "#endif"]
    if isinstance(ins, ir.Tcgen05Ld):
        return [_TCGEN05_GUARD, '#error "fuzzgpu: tcgen05.ld needs sm_100a (tensor memory)"', "#else",
                "{ unsigned raw_;",
                f'  asm volatile("tcgen05.ld.sync.aligned.32x32b.x1.b32 {{%0}}, [%1];" : "=r"(raw_) : "r"({ctx.tmem_address(ins.loc)}) : "memory");',
                f"  {ctx.load_result(ins.dst, 'raw_', ins.loc)} }}", "#endif"]
    if isinstance(ins, ir.Tcgen05Wait):
        return [_TCGEN05_GUARD, f'#error "fuzzgpu: tcgen05.wait::{ins.kind} needs sm_100a"', "#else",
                f'asm volatile("tcgen05.wait::{ins.kind}.sync.aligned;" ::: "memory");', "#endif"]
    if isinstance(ins, ir.Tcgen05Alloc):
        a, _ = ctx.addr(ins.slot)
        return [_TCGEN05_GUARD, '#error "fuzzgpu: tcgen05.alloc needs sm_100a"', "#else",
                f'asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 32;" :: "r"({a}) : "memory");',
                "#endif"]
    raise TypeError(f"no code generation for {ins.OP}")


def _emit_filler(ins: ir.Filler) -> list[str]:
    n = ins.n
    if ins.kind == "delay":
        # %clock is read by asm volatile, so the loop cannot be folded or deleted (an empty loop is).
        return [f"fz_delay({n}u);"]
    if ins.kind == "regloop":
        return [
            "{ unsigned acc_ = threadIdx.x;",
            f"  for (unsigned i_ = 0; i_ < {n}u; ++i_) acc_ = acc_ * 1664525u + 1013904223u;",
            '  asm volatile("" :: "r"(acc_)); }',
        ]
    if ins.kind == "smem":
        return [
            "{ volatile unsigned* s_ = fz_scratch_smem + (threadIdx.x & 255u); unsigned acc_ = 0;",
            f"  for (unsigned i_ = 0; i_ < {n}u; ++i_) {{ s_[0] = i_ + acc_; acc_ += s_[0]; }}",
            '  asm volatile("" :: "r"(acc_)); }',
        ]
    raise TypeError(f"unknown filler {ins.kind!r}")


def _registers(t: ir.Thread) -> list[str]:
    regs: dict[str, None] = {}
    for r, _ in t.init:
        regs[r] = None
    for ins in t.code:
        d = ins.register_written()
        if d:
            regs[d] = None
        for r in ins.registers_read():
            if isinstance(r, str):
                regs[r] = None
    return list(regs)


def _labels(t: ir.Thread) -> dict[str, int]:
    return {ins.name: n for n, ins in enumerate(t.code) if isinstance(ins, ir.Label)}


_COMMENT_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _.,:;=+-()[]{}<>@#!$&*|^~'\"/")


def comment_text(text: str) -> str:
    """``text`` for a ``//`` comment of generated source: every character outside a plain set
    (a newline, a backslash that would continue the comment, ``?`` of a trigraph, anything not
    ASCII) written as ``%XX`` of its UTF-8 bytes.  The IR's names are checked (ir.check_name);
    this keeps any text that reaches a comment inert, whatever it holds."""
    return "".join(c if c in _COMMENT_SAFE else "".join(f"%{b:02X}" for b in c.encode("utf-8", "replace")) for c in text)
