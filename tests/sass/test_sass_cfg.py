"""The control-flow graphs of PTX and SASS functions (fuzzgpu.sass.cfg): blocks, dominators,
post-dominators, reachability, and the marked points on a dominator chain."""

from __future__ import annotations

from pathlib import Path

from fuzzgpu import sass
from fuzzgpu.sass import parse_ptx, parse_sass
from fuzzgpu.sass.cfg import Flow, build_cfg, min_marks, ptx_cfg, sass_cfg

CAPTURED = Path(__file__).resolve().parents[1] / "kernels" / "captured"

_ = Flow()


def _diamond():
    # 0: entry; 1: @p bra 4 (then/else); 2: else; 3: bra 5; 4: then; 5: join; 6: ret
    return build_cfg([_, Flow((4,), True), _, Flow((5,), False), _, _, Flow((), False, True)])


def test_diamond_branches_never_dominate_each_other():
    g = _diamond()
    assert g.dominates(0, 2) and g.dominates(0, 4) and g.dominates(1, 5)
    assert not g.dominates(2, 4) and not g.dominates(4, 2)  # mutually exclusive
    assert not g.dominates(2, 5) and not g.dominates(4, 5)  # neither branch runs on every path to the join
    assert g.post_dominates(5, 2) and g.post_dominates(5, 4) and g.post_dominates(6, 0)
    assert not g.post_dominates(2, 0) and not g.post_dominates(4, 0)
    assert not g.reaches(2, 4) and not g.reaches(4, 2) and g.reaches(2, 5)


def test_loop_body_dominance_and_reachability():
    # 0; 1 (head); 2; 3: @p bra 1 (back edge); 4: ret
    g = build_cfg([_, _, _, Flow((1,), True), Flow((), False, True)])
    assert g.dominates(1, 2) and not g.dominates(2, 1)
    assert g.reaches(2, 1)  # the back edge runs a later iteration's head after this one's body
    assert g.post_dominates(4, 1) and g.post_dominates(3, 1)


def test_early_exit_breaks_post_dominance():
    # 0: st; 1: @p exit; 2: bar; 3: ret -- the barrier does not run on the exiting path
    g = build_cfg([_, Flow((), True, True), _, Flow((), False, True)])
    assert not g.post_dominates(2, 0)
    assert g.dominates(1, 2)


def test_marks_on_chain_nearest_last():
    g = _diamond()
    dom = g.marks_on_chain({0: "a", 2: "b", 4: "c", 5: "d"})
    assert dom(5) == (0,)  # neither branch's mark dominates the join
    assert dom(6) == (0, 5)
    assert dom(2) == (0,)
    post = g.marks_on_chain({0: "a", 2: "b", 4: "c", 5: "d", 6: "e"}, post=True)
    assert post(2) == (6, 5)
    assert post(1) == (6, 5)  # neither branch post-dominates the branch


def test_sass_retry_loop_out_of_line_keeps_the_wait_on_the_chain():
    # mbarrier_lone_wait `loop`: PHASECHK; @!P0 BRA retry (after EXIT); LDS -- the retry loop
    # branches back to the LDS, so the main-line PHASECHK dominates the LDS and the out-of-line one
    # does not; both run on paths to it
    fn = next(f for f in parse_sass((CAPTURED / "mbarrier_lone_wait.sm_90.sass").read_text()) if f.name == "_Z4loopPi")
    g = sass_cfg(fn)
    checks = [i.index for i in fn.instrs if i.opcode == "SYNCS" and i.mods[0] == "PHASECHK"]
    lds = next(m.instr.index for m in fn.mem_ops if m.instr.opcode == "LDS")
    main, retry = checks
    assert g.dominates(main, lds) and not g.dominates(retry, lds)
    assert g.reaches(retry, lds) and g.is_reachable(retry)
    self_loop = next(i.index for i in fn.instrs if i.opcode == "BRA" and i.index > retry + 2)
    assert not g.is_reachable(self_loop)  # the end-of-function self loop


def test_ptx_loop_and_labels():
    text = (CAPTURED / "mbarrier_lone_wait.sm_90.ptx").read_text()
    fn = next(f for f in parse_ptx(text) if f.name == "_Z4loopPi")
    g = ptx_cfg(fn)
    wait = next(i.index for i in fn.instrs if i.opcode == "mbarrier" and "try_wait" in i.mods)
    ld = next(e.instr.index for e in fn.events if e.mem is not None and e.mem.kind == "load" and e.instr.index > wait)
    assert fn.labels and g.dominates(wait, ld)
    assert g.reaches(wait, wait)  # the retry loop


def _listing(*lines: str) -> str:
    """A listing of function k: lines are instructions, or ``.L_x_N:`` labels."""
    out, off = [".text.k:"], 0
    for ln in lines:
        if ln.endswith(":"):
            out.append(ln)
        else:
            out.append(f"        /*{off:04x}*/                   {ln} ;")
            off += 16
    return "\n".join(out) + "\n"


def test_sass_indirect_branch_goes_to_its_listed_targets_only():
    """nvdisasm names a BRX's targets (CUTLASS 63's warp-role dispatch): a block that no listed
    target leads to is not reached through it (before: any label, so an LDS after a wait seemed
    reachable without the wait)."""
    (fn,) = parse_sass(_listing(
        "BRX R6 -0x10 (*\"BRANCH_TARGETS .L_x_1,.L_x_2\"*)", ".L_x_1:", "EXIT", ".L_x_2:",
        "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4], R3", ".L_x_3:", "LDS R1, [UR4]", "EXIT"))
    g = sass_cfg(fn)
    wait = next(i.index for i in fn.instrs if i.opcode == "SYNCS")
    lds = next(i.index for i in fn.instrs if i.opcode == "LDS")
    assert g.dominates(wait, lds)


def test_sass_divergence_branch_falls_through():
    """BRA.DIV UR4, target: taken only when the warp diverged, so the code after it runs too."""
    (fn,) = parse_sass(_listing("BRA.DIV UR4, `(.L_x_1)", "STS [R14], R16", "EXIT", ".L_x_1:", "EXIT"))
    g = sass_cfg(fn)
    sts = next(i.index for i in fn.instrs if i.opcode == "STS")
    assert g.is_reachable(sts)


def test_a_second_branch_on_one_predicate_follows_the_first():
    """ptxas's cluster barrier with its one-CTA fallback: ``@!P0 BRA L5; ARV; BRA L6; L5: NOP;
    L6: @!P0 BRA L7; WAIT; EXIT; L7: BAR.SYNC``.  The path that skips the arrive and then runs the
    wait never runs (P0 is not written between the branches), so the store is followed by the
    arrive or the CTA barrier on every path that runs."""
    (fn,) = parse_sass(_listing(
        "ISETP.EQ.U32.AND P0, PT, R0, 0x1, PT", "STS [UR4], R2", "@!P0 BRA `(.L_x_5)", "UCGABAR_ARV", "BRA `(.L_x_6)",
        ".L_x_5:", "NOP", ".L_x_6:", "@!P0 BRA `(.L_x_7)", "UCGABAR_WAIT", "EXIT", ".L_x_7:", "BAR.SYNC.DEFER_BLOCKING 0x0", "EXIT"))
    g = sass_cfg(fn)
    sts = next(i.index for i in fn.instrs if i.opcode == "STS")
    arrive_or_bar = {i.index: 1 for i in fn.instrs if i.opcode in ("UCGABAR_ARV", "BAR")}
    assert min_marks(g, arrive_or_bar, post=True)(sts) == 1
    nop = next(i.index for i in fn.instrs if i.opcode == "NOP")
    wait = next(i.index for i in fn.instrs if i.opcode == "UCGABAR_WAIT")
    assert not g.reaches(nop, wait) and g.reaches(sts, wait)


def test_sm100a_cluster_barrier_fallback_is_no_crossing():
    """ptxas (sm_100a) lowers `barrier.cluster.arrive; barrier.cluster.wait` to two uniform branches
    on one condition, `BRA.U !UP0`: in a cluster the release arrive (MEMBAR.ALL.GPU ... UCGABAR_ARV)
    and the wait; in a cluster of one CTA a NOP and BAR.SYNC 0.  The path that takes one branch one
    way and the other the other way never runs, so `st x; barrier.cluster.arrive` is no store "sunk
    below" the arrive (the H200 campaign of `--profile all` saved it as forbidden before uniform
    branches were read as tests: tests/data/sass/cluster_fallback.sm_100a.*, a campaign draw).
    The same listing with the STG moved past UCGABAR_ARV is a finding, so the test can fail."""
    data = Path(__file__).resolve().parents[1] / "data" / "sass"
    ptx = (data / "cluster_fallback.sm_100a.ptx").read_text()
    sass_text = (data / "cluster_fallback.sm_100a.sass").read_text()
    rep = sass.analyse(ptx, sass_text, "sm_100a")
    assert not rep.findings, [f.to_dict() for f in rep.findings]
    assert rep.complete
    lines = sass_text.splitlines()
    i = next(k for k, line in enumerate(lines) if "STG.E desc[UR4][R2.64], R5" in line)
    j = next(k for k, line in enumerate(lines) if k > i and "UCGABAR_ARV" in line)  # the store's own function's
    # the store now after the arrive on the cluster path, with its own source line (ptxas keeps an
    # instruction's line where it moves it; one whose line disagrees with the PTX store is not it)
    store = lines.pop(i)  # (the arrive is at j - 1 now)
    lines[j:j] = ['\t//## File "cluster_fallback.cu", line 35', store, '\t//## File "cluster_fallback.cu", line 43']
    moved = sass.analyse(ptx, "\n".join(lines) + "\n", "sm_100a")
    assert any(f.check == "crossing" and f.verdict == "forbidden" and f.op_sass.startswith("STG") for f in moved.findings)
