"""Unit tests of the SASS and PTX parsers and of the analysis, over captured text (no toolchain needed).

The captured files under tests/kernels/captured/ were produced by nvcc/ptxas 13.0 and nvdisasm 13.5 (or
cuobjdump) from the ``*.cu.txt`` sources beside them."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu import sass
from fuzzgpu.errors import UserError
from fuzzgpu.sass import ptx_parser, sass_parser, toolchain

CAP = Path(__file__).parents[1] / "kernels" / "captured"


def _instr(line: str) -> sass.SassInstr:
    (fn,) = sass.parse_sass(".text.k:\n" + line + "\n")
    return fn.instrs[0]


def _classify(line: str):
    return sass_parser._classify_sass(_instr(line))


# ------------------------------------------------------------------ SASS: memory operations


@pytest.mark.parametrize(
    "line, kind, space, width, constant, strength, base, offset",
    [
        ("        /*0050*/                   LDG.E.128.CONSTANT R4, desc[UR10][R6.64] ;", "load", "global", 128, True, "", "R6", 0),
        ("        /*0060*/                   LDG.E.STRONG.GPU R7, desc[UR8][R2.64+0x8] ;", "load", "global", 32, False, "GPU", "R2", 8),
        ("        /*0090*/                   LDG.E.STRONG.SYS R11, desc[UR8][R2.64+0x10] ;", "load", "global", 32, False, "SYS", "R2", 16),
        ("        /*0140*/                   STG.E.STRONG.SM desc[UR8][R2.64+0x20], R7 ;", "store", "global", 32, False, "SM", "R2", 32),
        ("        /*04d0*/                   STG.E.U8 desc[UR8][R2.64+0x58], R11 ;", "store", "global", 8, False, "", "R2", 0x58),
        ("        /*04e0*/                   LDG.E.S16 R10, desc[UR8][R2.64+0x5c] ;", "load", "global", 16, False, "", "R2", 0x5C),
        ("        /*0150*/                   STS [R0], R13 ;", "store", "shared", 32, False, "", "R0", 0),
        ("        /*01e0*/                   LDS R11, [R8+UR7] ;", "load", "shared", 32, False, "", "R8", 0),
        ("        /*0210*/                   LDS.64 R6, [UR4] ;", "load", "shared", 64, False, "", "UR4", 0),
        ("        /*03b0*/                   LD.E R7, desc[UR8][R2.64+0x38] ;", "load", "generic", 32, False, "", "R2", 0x38),
        ("        /*03c0*/                   ST.E desc[UR8][R2.64+0x3c], R7 ;", "store", "generic", 32, False, "", "R2", 0x3C),
        ("        /*0350*/                   ATOMG.E.CAS.STRONG.GPU PT, RZ, [R4+0x2c], R14, R15 ;", "atomic", "global", 32, False, "GPU", "R4", 0x2C),
        ("        /*0310*/               @P0 REDG.E.ADD.STRONG.GPU desc[UR8][R4.64+0x28], R9 ;", "reduction", "global", 32, False, "GPU", "R4", 0x28),
        ("        /*03f0*/                   ATOMS.POPC.INC.32 RZ, [R12+URZ] ;", "atomic", "shared", 32, False, "", "R12", 0),
        ("        /*0100*/                   LDL.64 R2, [R1+0x10] ;", "load", "local", 64, False, "", "R1", 0x10),
        ("        /*0100*/                   LDC R2, c[0x3][0x4] ;", "load", "constant", 32, False, "", "c3", 4),
    ],
)
def test_sass_memory_operations(line, kind, space, width, constant, strength, base, offset):
    m = _classify(line)
    assert isinstance(m, sass.SassMemOp)
    assert (m.kind, m.space, m.width, m.constant, m.strength, m.base, m.offset) == (kind, space, width, constant, strength, base, offset)


def test_sass_flags_and_predicates():
    m = _classify("        /*0100*/                   LDG.E.NA.CONSTANT R2, desc[UR4][R2.64] ;")
    assert m.na and m.constant
    m = _classify("        /*03e0*/                   LDG.E.MMIO.SYS R6, [R2+0x50] ;")
    assert m.mmio and m.offset == 0x50
    i = _instr("        /*0130*/                   @!UP0 SYNCS.EXCH.64 URZ, [UR6], UR4 ;")
    assert i.predicate == "@!UP0" and i.opcode == "SYNCS" and i.mods == ("EXCH", "64")
    assert _classify("        /*0000*/                   LDC R1, c[0x0][0x28] ;") is None  # parameters, not memory
    assert _classify("        /*0070*/                   IMAD.WIDE.U32 R6, R11, 0x10, R6 ;") is None


# ------------------------------------------------------------------ SASS: synchronisation points


@pytest.mark.parametrize(
    "text, kind, token",
    [
        ("ACQBULK", "ACQBULK", "ACQBULK"),
        ("PREEXIT", "PREEXIT", "PREEXIT"),
        ("MEMBAR.ALL.GPU", "MEMBAR", "MEMBAR.ALL.GPU"),
        ("MEMBAR.SC.GPU", "MEMBAR", "MEMBAR.SC.GPU"),
        ("MEMBAR.ALL.CTA", "MEMBAR", "MEMBAR.ALL.CTA"),
        ("MEMBAR.SC.SYS", "MEMBAR", "MEMBAR.SC.SYS"),
        ("FENCE.VIEW.ASYNC.S", "FENCE.VIEW.ASYNC", "FENCE.VIEW.ASYNC.S"),
        ("FENCE.VIEW.ASYNC.G", "FENCE.VIEW.ASYNC", "FENCE.VIEW.ASYNC.G"),
        ("BAR.SYNC.DEFER_BLOCKING 0x0", "BAR", "BAR.SYNC"),
        ("BAR.ARV 0x1, 0x40", "BAR", "BAR.ARV"),
        ("BAR.RED.POPC.DEFER_BLOCKING 0x0, PT", "BAR", "BAR.RED"),
        ("SYNCS.EXCH.64 URZ, [UR13], UR4", "SYNCS", "SYNCS.EXCH"),
        ("SYNCS.ARRIVE.TRANS64.A1T0 R4, [UR13], RZ", "SYNCS", "SYNCS.ARRIVE"),
        ("SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR13], R6", "SYNCS", "SYNCS.PHASECHK"),
        ("CCTL.IVALL", "CCTL.IVALL", "CCTL.IVALL"),
        ("ERRBAR", "ERRBAR", None),
        ("CGAERRBAR", "CGAERRBAR", None),
        ("UBLKCP.S.G [UR12], [UR8], UR10", "BULK", "BULK"),
        # a tensor copy's SASS is its own class: a PTX cp.async.bulk.tensor never pairs with a UBLKCP
        ("UTMALDG.2D [UR8], [UR4]", "TMA", "TMA"),
        ("UTMASTG.1D [UR4], [UR6]", "TMA", "TMA"),
        ("UTMACMDFLUSH", "UTMACMDFLUSH", "UTMACMDFLUSH"),
        ("DEPBAR.LE SB0, 0x0", "DEPBAR", "DEPBAR"),
        ("LDGDEPBAR", "LDGDEPBAR", "LDGDEPBAR"),
        ("LDGSTS.E [R7], desc[UR6][R2.64+0x10]", "LDGSTS", "LDGSTS"),
    ],
)
def test_sass_sync_points(text, kind, token):
    s = _classify(f"        /*0100*/                   {text} ;")
    assert isinstance(s, sass.SassSync)
    assert (s.kind, s.token) == (kind, token)


def test_sass_functions_labels_loops_and_out_of_line_code():
    fns = sass.parse_sass((CAP / "mbarrier_sampler.sm_90.sass").read_text())
    (fn,) = fns
    assert fn.name == "_Z1kPiS_"
    # the retry loops of mbarrier.try_wait live after EXIT: out of line, not matched
    exit_idx = next(i.index for i in fn.instrs if i.opcode == "EXIT" and not i.predicate)
    assert all(not i.mainline for i in fn.instrs[exit_idx + 1:])
    assert all(not i.mainline for i in fn.instrs if i.predicate == "@!PT")
    phasechk = [s for s in fn.syncs if s.token == "SYNCS.PHASECHK"]
    assert len(phasechk) == 4 and sum(s.instr.mainline for s in phasechk) == 2
    assert fn.loops and all(not lp.delay for lp in fn.loops)  # every loop holds a SYNCS or a copy


def test_sass_cuobjdump_format():
    fns = sass.parse_sass((CAP / "flashmla_both.cuobjdump.sass").read_text())
    assert [sass.short_name(f.name) for f in fns] == ["flashmla_fixed", "flashmla_shape"]
    shape = fns[1]
    ldg = [m for m in shape.mem_ops if m.space == "global" and m.kind == "load"]
    assert len(ldg) == 1 and ldg[0].constant and ldg[0].width == 128
    assert sass.cubin_arch((CAP / "flashmla_both.cuobjdump.sass").read_text()) == "sm_90"


def test_sass_opcode_sampler_counts():
    (fn,) = sass.parse_sass((CAP / "opcode_sampler.sm_90.sass").read_text())
    kinds = [s.kind for s in fn.syncs]
    assert kinds.count("MEMBAR") == 11 and kinds.count("CCTL.IVALL") == 7
    assert kinds.count("FENCE.VIEW.ASYNC") == 3 and "PREEXIT" in kinds
    assert {m.space for m in fn.mem_ops} == {"global", "shared", "generic"}


# ------------------------------------------------------------------ PTX


PTX = r"""
.version 9.0
.target sm_90
.address_size 64
.visible .entry k(
	.param .u64 k_param_0
)
{
	.reg .b32 	%r<9>;
	.reg .b64 	%rd<4>;
	ld.param.u64 	%rd1, [k_param_0];
	add.s64 	%rd2, %rd1, 16;
	// begin inline asm
	ld.acquire.gpu.global.u32 %r1, [%rd2+4];
	// end inline asm
	// begin inline asm
	{ .reg .pred P; W: mbarrier.try_wait.parity.shared::cta.b64 P, [%r2], 0; @!P bra W; }
	// end inline asm
$L__BB0_1:
	mov.u32 	%r3, %clock;
	setp.lt.u32 	%p1, %r3, 100;
	@%p1 bra 	$L__BB0_1;
	st.release.cta.shared::cta.v2.u32 	[%r2+8], {%r1, %r3};
	ld.global.nc.v4.s32 {%r4,%r5,%r6,%r7}, [%rd1];
	bar.sync 	0;
	griddepcontrol.wait;
	fence.proxy.async.shared::cta;
	ld.volatile.global.u8 	%r8, [%rd1+1];
	ret;
}
"""


def test_ptx_events_in_program_order():
    (fn,) = sass.parse_ptx(PTX)
    assert fn.name == "k" and fn.entry
    ev = fn.events
    texts = [e.instr.text.split()[0] for e in ev]
    assert texts == [
        "ld.acquire.gpu.global.u32", "mbarrier.try_wait.parity.shared::cta.b64", "st.release.cta.shared::cta.v2.u32",
        "ld.global.nc.v4.s32", "bar.sync", "griddepcontrol.wait", "fence.proxy.async.shared::cta", "ld.volatile.global.u8",
    ]
    acq = ev[0]
    assert acq.mem.sem == "acquire" and acq.mem.scope == "gpu" and acq.mem.address == ("%rd1", 20)  # root + 16 + 4
    assert acq.mem_class == "LDG.STRONG.GPU" and acq.sync.acquire and not acq.sync.release
    assert acq.sync_classes == ("CCTL.IVALL",)
    rel = ev[2]
    assert rel.mem.space == "shared" and rel.mem.width == 64 and rel.sync_classes == ("MEMBAR.ALL.CTA",)
    assert ev[3].mem.sem == "nc" and ev[3].mem.width == 128 and ev[3].mem_class == "LDG.CONSTANT"
    assert ev[4].sync.kind == "bar.sync" and ev[4].sync.release and ev[4].sync.acquire
    assert ev[5].sync.kind == "griddepcontrol.wait" and ev[5].sync.acquire and not ev[5].sync.release
    assert ev[6].sync.space == "shared" and ev[6].sync_classes == ("MEMBAR.ALL.CTA", "FENCE.VIEW.ASYNC.S")
    assert ev[7].mem.sem == "volatile" and ev[7].mem.width == 8 and ev[7].mem_class == "LDG.STRONG.SYS"
    assert [(lp.reads_clock, lp.delay) for lp in fn.loops] == [(False, False), (True, True)]


def test_ptx_statement_lines():
    (fn,) = sass.parse_ptx(PTX)
    lines = PTX.split("\n")
    for e in fn.events:
        assert e.instr.text.split()[0].split(".")[0] in lines[e.instr.line - 1]


# ------------------------------------------------------------------ analysis over captured pairs


def _analyse(stem: str, sass_name: str | None = None) -> sass.Report:
    return sass.analyse((CAP / f"{stem}.sm_90.ptx").read_text(), (CAP / (sass_name or f"{stem}.sm_90.sass")).read_text(), "sm_90", stem)


def test_analysis_flashmla_captured():
    (fn,) = _analyse("D_flashmla_shape").functions
    assert {(f.direction, f.sync_sass.split()[-1] if f.sync_sass else "") for f in fn.findings} >= {(sass.HOISTED, "ACQBULK")}
    assert all(f.verdict == sass.HAZARD and "CONSTANT" in f.op_sass for f in fn.findings)
    assert _analyse("D_flashmla_fixed_01a2772").findings == ()
    rep = _analyse("flashmla_both", "flashmla_both.cuobjdump.sass")
    # one finding per moved operation (issue 26), listing the points it crossed, nearest first:
    # the LDG.E.128.CONSTANT above ACQBULK and BAR.SYNC (mbarrier.init, SYNCS.EXCH, orders no
    # access of the thread, so crossing it is no finding: formerly a third finding)
    assert [len(f.findings) for f in rep.functions] == [1, 0]
    (f,) = rep.functions[0].findings
    assert [c.split(" (")[0] for c in f.crossed] == ["griddepcontrol.wait", "bar.sync 0"] and f.sync_ptx == "griddepcontrol.wait"


def test_analysis_merge_across_acquire_only_is_permitted():
    (fn,) = _analyse("merge_across_acquire").functions
    (f,) = fn.findings
    assert f.check == sass.MERGED and f.verdict == sass.HAZARD and "roach motel" in f.reason
    assert f.op_sass == f.sync_sass and f.op_ptx_line > f.sync_ptx_line


def test_analysis_lds64_combination():
    """Two adjacent ld.acquire.cta.shared become one LDS.64: the relaxed load between them sank
    below the later one, which an acquire allows (it orders only what follows) -- formerly a
    permitted-hazard finding, no finding since issue 26 ("one finding per real hazard": no
    execution of the moved code is one the model forbids for the source); a volatile load stays
    separate (no merge).  Both fully checked and mapped."""
    (fn,) = _analyse("lds64_acquire_pair").functions
    assert fn.findings == () and fn.complete
    assert fn.mapped_mem_ops == fn.ptx_mem_ops
    assert _analyse("lds64_volatile_then_pair").findings == ()


def test_analysis_rebased_pointer():
    """ptxas addresses p+4 and p+8 as [R4.64] and [R4.64+0x4] (R4 = p + 4): mapped by address, not
    by the raw offsets, so no false alarm."""
    rep = _analyse("rebased_atomics")
    assert rep.findings == ()
    (fn,) = rep.functions
    assert fn.mapped_mem_ops == fn.ptx_mem_ops


def test_analysis_store_forwarding():
    """st.shared [s+8]; ld.shared [s+8]: ptxas forwards the stored value; not a merge with the earlier
    volatile load of s+8."""
    (fn,) = _analyse("store_forwarding").functions
    assert fn.findings == ()
    assert any("forwarded from the store" in n for n in fn.notes)


def test_analysis_opcode_sampler():
    """Every access kept in order; the three loads whose registers are overwritten are deleted."""
    rep = _analyse("opcode_sampler")
    assert {f.check for f in rep.findings} == {sass.DELETED}
    assert sorted(f.op_ptx.split()[0] for f in rep.findings) == [
        "ld.acquire.cta.global.u32", "ld.global.nc.L1::no_allocate.u32", "ld.relaxed.cluster.global.u32"]
    assert all(f.verdict == sass.HAZARD and f.op_sass == "" for f in rep.findings)
    (fn,) = rep.functions
    assert fn.mapped_syncs >= fn.ptx_syncs - 1
    rep = _analyse("mbarrier_sampler")
    assert all(f.check == sass.DELETED for f in rep.findings)  # ld.const of an unused register


# ------------------------------------------------------------------ the verdict rules


def _mem(sem="weak", space="global", kind="load", scope="gpu"):
    ins = sass.PtxInstr(0, 1, "ld", "", "ld", (), ())
    return sass.PtxMemOp(ins, kind, space, sem, scope, 32, "%rd1", 0)


def _sync(kind, release, acquire, space=""):
    return sass.PtxSync(sass.PtxInstr(1, 2, kind, "", kind.split(".")[0], (), ()), kind, release, acquire, space)


FENCE = _sync("fence.sc", True, True)
WAIT = _sync("griddepcontrol.wait", False, True)
ARRIVE = _sync("bar.arrive", True, False)
LAUNCH = _sync("griddepcontrol.launch_dependents", False, False)
PROXY_S = _sync("fence.proxy.async", True, True, "shared")


@pytest.mark.parametrize(
    "mem, sync, direction, verdict",
    [
        (_mem("nc"), WAIT, sass.HOISTED, sass.HAZARD),
        (_mem("nc"), FENCE, sass.SUNK, sass.HAZARD),
        (_mem("weak"), WAIT, sass.HOISTED, sass.FORBIDDEN),
        (_mem("relaxed"), WAIT, sass.HOISTED, sass.FORBIDDEN),
        (_mem("volatile"), FENCE, sass.HOISTED, sass.FORBIDDEN),
        (_mem("acquire"), FENCE, sass.SUNK, sass.FORBIDDEN),
        (_mem("weak"), WAIT, sass.SUNK, sass.HAZARD),  # roach motel
        (_mem("weak"), ARRIVE, sass.HOISTED, sass.HAZARD),  # roach motel
        (_mem("weak"), ARRIVE, sass.SUNK, sass.FORBIDDEN),
        (_mem("weak", "local"), FENCE, sass.HOISTED, sass.HAZARD),
        (_mem("weak", "const"), FENCE, sass.HOISTED, sass.HAZARD),
        (_mem("relaxed"), LAUNCH, sass.SUNK, sass.HAZARD),
        (_mem("weak", "global"), PROXY_S, sass.HOISTED, sass.HAZARD),
        (_mem("weak", "shared"), PROXY_S, sass.HOISTED, sass.FORBIDDEN),
    ],
)
def test_judge_crossing(mem, sync, direction, verdict):
    v, reason = sass.judge_crossing(mem, sync, direction)
    assert v == verdict and reason


def test_judge_deleted():
    assert sass.judge_deleted(_mem())[0] == sass.HAZARD
    assert sass.judge_deleted(_mem("volatile"))[0] == sass.FORBIDDEN


def test_judge_merge():
    assert sass.judge_merge(_mem(), _mem(), [])[0] == sass.HAZARD
    assert sass.judge_merge(_mem("volatile"), _mem("volatile"), [])[0] == sass.FORBIDDEN
    assert sass.judge_merge(_mem(), _mem(), [WAIT])[0] == sass.HAZARD
    assert sass.judge_merge(_mem(), _mem(), [ARRIVE, WAIT])[0] == sass.FORBIDDEN  # release then acquire
    assert sass.judge_merge(_mem(), _mem(), [WAIT, ARRIVE])[0] == sass.HAZARD
    assert sass.judge_merge(_mem(), _mem(), [FENCE])[0] == sass.FORBIDDEN
    assert sass.judge_merge(_mem("nc"), _mem("nc"), [FENCE])[0] == sass.HAZARD


def test_helpers():
    assert sass.short_name("_Z10fuzzgpu_P0Pi") == "fuzzgpu_P0"
    assert sass.short_name("plain") == "plain"
    assert sass.parse_arch("sm_100a") == (100, "a")
    with pytest.raises(UserError):
        sass.parse_arch("sm_9x")
    assert sass.archs_for_ptx(".target sm_90a\n", sass.DEFAULT_ARCHS) == ["sm_90a"]
    assert sass.archs_for_ptx(".target sm_90\n", sass.DEFAULT_ARCHS) == list(sass.DEFAULT_ARCHS)
    assert sass.archs_for_ptx(".target sm_100a\n", ("sm_90",)) == ["sm_100a"]
    assert toolchain._ptxas_flags(["-Xptxas", "-v,-O2", "-lineinfo", "--ptxas-options=-dlcm=ca"]) == ["-v", "-O2", "-dlcm=ca"]


def test_missing_disassembler_message(monkeypatch):
    """A missing tool is the environment's failure (MissingTool, an EnvError: exit 3), not bad input."""
    from fuzzgpu.errors import EnvError, MissingTool

    monkeypatch.setattr(sass.toolchain, "find_tool", lambda name: None)
    with pytest.raises(MissingTool, match="pip install nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump") as e:
        sass.disassemble(Path("x.cubin"))
    assert e.value.tool == "nvdisasm" and not isinstance(e.value, UserError)
    with pytest.raises(EnvError, match="nvcc not found: install the CUDA toolkit"):
        sass.require_tool("nvcc")


def test_the_ptx_classification_reads_the_table_keys(monkeypatch):
    """A PTX statement is the longest semantics-table key it starts with, qualifier by qualifier,
    after the ISA's other spellings of an entry (``barrier`` for ``bar``, ``wait_group``/``wait_all``
    for ``cp.async.wait``, ``arrive_drop`` for an arrive, ``cp.reduce.async.bulk`` for a bulk copy);
    so an entry added to the table is a synchronisation point without code here, with the table's
    directions and no known SASS (not checked where it orders memory)."""
    import dataclasses

    from fuzzgpu import semantics

    def key(text: str) -> str | None:
        return ptx_parser._table_key(ptx_parser._parse_ptx_instr(0, 0, text))

    assert key("barrier.sync.aligned 0") == key("bar.cta.sync 0") == key("bar 0") == "bar.sync"
    assert key("barrier.cluster.arrive.relaxed.aligned") == "barrier.cluster.arrive"
    assert key("cp.async.wait_group 1") == key("cp.async.wait_all") == "cp.async.wait"
    assert key("mbarrier.arrive_drop.shared::cta.b64 %rd1, [%r1]") == "mbarrier.arrive"
    assert key("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 %rd1, [%r1], 16") == "mbarrier.arrive.expect_tx"
    assert key("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd1], [%r1], 16") == "cp.async.bulk"
    assert key("fence.proxy.alias") == "fence.proxy"
    # issue 32, class D: the tensormap proxy fences are rows of their own (their SASS: tests/sass/test_sass_tensormap.py);
    # tensormap.replace orders nothing of its thread
    for text, directions in (("fence.proxy.tensormap::generic.release.gpu", (True, False)),
                             ("fence.proxy.tensormap::generic.acquire.gpu [%rd1], 128", (False, True))):
        sync, tokens = ptx_parser._classify_ptx_sync(ptx_parser._parse_ptx_instr(0, 0, text), None)
        assert sync is not None and (sync.release, sync.acquire) == directions and len(tokens) == 1
        assert ptx_parser._rule_key(sync) == "proxy.tensormap"
    assert key("tensormap.replace.tile.global_address.global.b1024.b64 [%rd1], %rd2") == "tensormap.replace"
    assert key("ld.param.u64 %rd1, [p]") is None and key("bar.warp.sync -1") is None and key("fence.gpu") is None
    with pytest.raises(KeyError):
        semantics.entry("fence.newkind")
    monkeypatch.setitem(semantics.TABLE, "fence.newkind",
                        dataclasses.replace(semantics.TABLE["fence.acquire"], ptx="fence.newkind"))
    sync, tokens = ptx_parser._classify_ptx_sync(ptx_parser._parse_ptx_instr(0, 0, "fence.newkind.gpu"), None)
    assert sync is not None and (sync.kind, sync.release, sync.acquire, tokens) == ("fence.newkind", False, True, ())


def test_the_package_re_exports_no_private_name():
    """``fuzzgpu.sass`` re-exports public names only: a private helper is imported from its own
    module (as the tests above do), so the package's surface is ``__all__`` and its submodules."""
    import types

    private = [n for n, v in vars(sass).items()
               if n.startswith("_") and not n.startswith("__") and not isinstance(v, types.ModuleType)]
    assert not private, private
    assert all(hasattr(sass, n) for n in sass.__all__)


def test_only_the_toolchain_module_runs_programs():
    """The toolchain edges are behind one module: only fuzzgpu/sass/toolchain.py imports
    subprocess, shutil or tempfile, and no other module of the package but its __init__ imports it,
    so the parsers, the matching, the rules and the checks stay pure (only the input drivers call it) (testable on captured text)."""
    import ast

    edges = {"subprocess", "shutil", "tempfile", "concurrent.futures"}
    for path in sorted(Path(sass.__file__).parent.glob("*.py")):
        imported = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                imported |= {node.module or ""} | {f"{node.module}.{a.name}" if node.module else a.name for a in node.names}
        if path.name == "toolchain.py":
            assert imported & edges, path
        else:
            assert not imported & edges, (path.name, imported & edges)
            # the input drivers (a binary's cubins through cuobjdump, the kinds of input, the demangler's
            # command line) call the toolchain; the analysis never does
            assert path.name in _TOOLCHAIN_USERS or not {"toolchain", "fuzzgpu.sass.toolchain"} & imported, path.name


#: the modules of fuzzgpu.sass that may call fuzzgpu/sass/toolchain.py: the package's __init__ and the
#: input drivers; every other one (parsers, CFG, matching, order, rules, checks, PDL review, CI
#: formats) is pure
_TOOLCHAIN_USERS = ("__init__.py", "binaries.py", "inputs.py", "names.py")


@pytest.mark.parametrize("operands, opcode, want", [
    ("R5, [R11+0xc]", "LDS", ("R11", 12, ())),                          # one register and an immediate
    ("R5, [UR4]", "LDS", ("UR4", 0, ())),
    ("R5, [R2+UR4+0x10]", "LDS", ("R2", 16, ("UR4",))),                 # two registers: the second is not the base's
    ("R2, desc[UR6][R4.64+0x8]", "LDG", ("R4", 8, ())),                 # the descriptor's bracket is not the address
    ("RZ.U32+UR4, R3", "STG", ("", 0, ())),                             # no bracket: no address
    ("[RZ.U32+UR4+0x4], R3", "LDGMC", ("UR4", 4, ())),                  # the zero register is no register of the address
])
def test_a_sass_address_is_its_base_offset_and_other_registers(operands: str, opcode: str, want: tuple) -> None:
    # (fuzzgpu.sass.shared_layout places a shared variable only from one-register addresses: SassMemOp.others empty)
    assert sass_parser._sass_address(operands, opcode) == want
