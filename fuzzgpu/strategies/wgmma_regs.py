"""Issue 32, class F (a wgmma register operand accessed in flight; DeepGEMM #448/#449) in the general
generator: the value a consumer loaded becomes the A fragment of a ``wgmma.mma_async`` (the
register-A form), whose accumulator is observed, and the fragment register is then reused for the
next tile (``mov``) -- after the ``wgmma.wait_group 0`` that covers the wgmma (the right way), before
it, after a ``wgmma.wait_group 1`` that leaves its group pending, or with the ``wgmma.fence`` before
the wgmma left out (:func:`fuzzgpu.semantics.wgmma_register_window`).

Drawn once the stages are (their spans before it: the shrinker can make a stage trivial and keep
this draw), in one program of :data:`SHARE` (none first, so a shrink goes back to the plain read),
after the last observed ``ld`` of a thread that no branch follows (a data read, not a poll), and only
where the draw may hold what the GPU harness cannot run (it has no register-A wgmma: the cuda
backend refuses such a program before running it, the campaign counts it not covered)."""

from __future__ import annotations

from collections.abc import Callable

import hypothesis.strategies as st

from ..ir import Branch, Goto, Instruction, Label, Load, Mov, WgmmaCommit, WgmmaFence, WgmmaMma, WgmmaWait

#: one program in this many feeds a loaded value to a wgmma
SHARE = 8
#: how the fragment register is reused, the right way first (the shrink order)
ORDERS = ("wait-then-reuse", "reuse-then-wait", "wait-1-then-reuse", "no-fence")


def fragment_reuse(draw: st.DrawFn, code: list[list[Instruction]], observed: list[str], new_reg: Callable[[int], str],
                   new_value: Callable[[], int], allowed: bool) -> None:
    """In one draw of :data:`SHARE` where ``allowed``: after the last observed ``ld`` (thread ``P<t>``'s
    register in ``observed``) that no branch follows, ``wgmma.fence; wgmma.mma_async d, r;
    wgmma.commit_group`` and the reuse ``mov r, v`` placed as :data:`ORDERS` says; ``d`` observed."""
    sites = [(t, k, ins.dst) for t, c in enumerate(code) for k, ins in enumerate(c)
             if isinstance(ins, Load) and f"P{t}:{ins.dst}" in observed
             and not any(isinstance(i, (Branch, Goto, Label)) for i in c[k + 1:])]
    if not sites or not allowed or not draw(st.sampled_from((False,) * (SHARE - 1) + (True,))):
        return
    order = draw(st.sampled_from(ORDERS))
    t, k, fragment = sites[-1]
    acc = new_reg(t)
    reuse = Mov(fragment, new_value())
    new: list[Instruction] = [] if order == "no-fence" else [WgmmaFence()]
    new += [WgmmaMma(acc, fragment), WgmmaCommit()]
    if order == "reuse-then-wait":
        new += [reuse, WgmmaWait(0)]
    elif order == "wait-1-then-reuse":  # one group committed: wait_group 1 leaves it pending
        new += [WgmmaWait(1), reuse, WgmmaWait(0)]
    else:  # the right way (and no-fence: the fence is what is missing)
        new += [WgmmaWait(0), reuse]
    code[t][k + 1:k + 1] = new
    observed.append(f"P{t}:{acc}")


__all__ = ["ORDERS", "SHARE", "fragment_reuse"]
