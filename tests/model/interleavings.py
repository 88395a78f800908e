"""An interleaving interpreter of straight-line programs of several grids, independent of
``fuzzgpu.model`` (it shares no code with it): one instruction at a time, memory a dict, every
interleaving explored.  The execution order between grids of one stream, PDL and named barriers is
the one tests/model/test_model_grids.py's docstring states from the PTX ISA and the CUDA Programming
Guide:

* a grid launched without PDL starts once every earlier grid of the stream has completed;
* a PDL dependent grid starts once every CTA of its primary grid has executed its first
  ``griddepcontrol.launch_dependents`` (whichever thread of the CTA executes it) or completed, and
  once every grid before the primary has completed -- nothing else gates it (no fence);
* ``griddepcontrol.wait`` blocks until every earlier grid has completed;
* ``bar.sync ID``: the k-th ``bar.sync ID`` of each thread of one CTA is one barrier instance.

Supported: ``ld`` (any annotation, ``.nc`` too: in an interleaving a load reads memory), ``st``,
``atom.exch``/``atom.add`` with an immediate, fences (no effect on values), ``griddepcontrol``,
``bar.sync`` without a count, and ``filler`` (no memory effect).  :func:`supported` says whether a
program uses only these.
"""

from __future__ import annotations

from fuzzgpu.ir import Atom, Barrier, Fence, Filler, GridDepControl, Instruction, Load, Program, RmwOp, Store


def supported(p: Program) -> bool:
    """Only straight-line code of the kinds the interpreter runs (module docstring)."""
    for t in p.threads:
        for ins in t.code:
            if isinstance(ins, Atom):
                if ins.operation not in (RmwOp.EXCH, RmwOp.ADD) or not all(isinstance(v, int) for v in ins.operands):
                    return False
            elif isinstance(ins, Barrier):
                if ins.count is not None or ins.mode != "sync" or not isinstance(ins.id, int):
                    return False
            elif isinstance(ins, Store):
                if not isinstance(ins.src, int):
                    return False
            elif isinstance(ins, Load):
                if ins.shared_cluster:
                    return False
            elif not isinstance(ins, (Fence, GridDepControl, Filler)):
                return False
    return not any(loc.alias_of is not None or loc.kind == "mbarrier" for loc in p.locations)


def _is_launch(ins: Instruction) -> bool:
    return isinstance(ins, GridDepControl) and ins.action == "launch_dependents"


def _is_wait(ins: Instruction) -> bool:
    return isinstance(ins, GridDepControl) and ins.action == "wait"


class Interleavings:
    """Every interleaving of a straight-line program (loads, stores, atoms, fences,
    griddepcontrol), with the execution order between grids of the module docstring."""

    def __init__(self, p: Program) -> None:
        self.p = p
        self.codes = [t.code for t in p.threads]
        self.grid = [t.placement.grid for t in p.threads]
        self.cta = [(t.placement.grid, t.placement.gpu, t.placement.cluster_id, t.placement.cta) for t in p.threads]
        self.pdl = set(p.pdl_grids)
        self.first_launch = [next((i for i, ins in enumerate(code) if _is_launch(ins)), None) for code in self.codes]
        # barrier instances: (thread, pc) of a bar.sync -> the (thread, pc) of every participant
        uses: dict[tuple, list[tuple[int, int]]] = {}
        for tid, code in enumerate(self.codes):
            count: dict[object, int] = {}
            for i, ins in enumerate(code):
                if isinstance(ins, Barrier):
                    k = count.get(ins.id, 0)
                    count[ins.id] = k + 1
                    uses.setdefault((self.cta[tid], ins.id, k), []).append((tid, i))
        self.instance = {member: members for members in uses.values() for member in members}

    def _done(self, pcs: tuple[int, ...], tid: int) -> bool:
        return pcs[tid] >= len(self.codes[tid])

    def _grids_done(self, pcs: tuple[int, ...], below: int) -> bool:
        return all(self._done(pcs, t) for t in range(len(pcs)) if self.grid[t] < below)

    def _triggered(self, pcs: tuple[int, ...], tid: int) -> bool:
        """Has the CTA of ``tid`` triggered its dependents (first launch executed) or completed?"""
        mates = [t for t in range(len(pcs)) if self.cta[t] == self.cta[tid]]
        launched = any(self.first_launch[t] is not None and pcs[t] > self.first_launch[t] for t in mates)
        return launched or all(self._done(pcs, t) for t in mates)

    def _started(self, pcs: tuple[int, ...], g: int) -> bool:
        if g not in self.pdl:
            return self._grids_done(pcs, g)
        if not self._grids_done(pcs, g - 1):
            return False
        primary = [t for t in range(len(pcs)) if self.grid[t] == g - 1]
        return all(self._triggered(pcs, t) for t in primary)

    def _enabled(self, pcs: tuple[int, ...], arrived: tuple[bool, ...], tid: int) -> bool:
        if self._done(pcs, tid):
            return False
        g = self.grid[tid]
        if pcs[tid] == 0 and not arrived[tid] and not self._started(pcs, g):
            return False
        ins = self.codes[tid][pcs[tid]]
        if _is_wait(ins) and g in self.pdl:
            return self._grids_done(pcs, g)
        if isinstance(ins, Barrier) and arrived[tid]:  # released once every participant has arrived
            return all(pcs[t] > i or (pcs[t] == i and arrived[t]) for t, i in self.instance[(tid, pcs[tid])])
        return True

    def _step(self, ins: Instruction, regs: dict[str, int], mem: dict[str, int]) -> None:
        if isinstance(ins, Load):
            regs[ins.dst] = mem[ins.loc]
        elif isinstance(ins, Store):
            mem[ins.loc] = ins.src if isinstance(ins.src, int) else regs.get(ins.src, 0)
        elif isinstance(ins, Atom):
            old = mem[ins.loc]
            b = ins.operands[0]
            assert isinstance(b, int)
            mem[ins.loc] = {RmwOp.EXCH: b, RmwOp.ADD: old + b}[ins.operation]
            regs[ins.dst] = old
        # fences and griddepcontrol change no value

    def outcomes(self) -> set[tuple[tuple[str, int], ...]]:
        keys = self.p.outcome_keys()
        n = len(self.codes)
        start = (tuple([0] * n), tuple(() for _ in range(n)), tuple(sorted((loc.name, loc.init) for loc in self.p.locations)),
                 tuple([False] * n))
        seen = set()
        stack = [start]
        out = set()
        while stack:
            state = stack.pop()
            if state in seen:
                continue
            seen.add(state)
            pcs, regs, mem, arrived = state
            moved = False
            for tid in range(n):
                if not self._enabled(pcs, arrived, tid):
                    continue
                moved = True
                ins = self.codes[tid][pcs[tid]]
                if isinstance(ins, Barrier) and not arrived[tid]:  # arrive, then wait
                    stack.append((pcs, regs, mem, arrived[:tid] + (True,) + arrived[tid + 1 :]))
                    continue
                r, m = dict(regs[tid]), dict(mem)
                self._step(ins, r, m)
                new_pcs = pcs[:tid] + (pcs[tid] + 1,) + pcs[tid + 1 :]
                new_regs = regs[:tid] + (tuple(sorted(r.items())),) + regs[tid + 1 :]
                stack.append((new_pcs, new_regs, tuple(sorted(m.items())), arrived[:tid] + (False,) + arrived[tid + 1 :]))
            if not moved and all(self._done(pcs, t) for t in range(n)):
                out.add(self._outcome(keys, regs, dict(mem)))  # else: threads wait for ever, no final state
        return out

    def _outcome(self, keys, regs, mem) -> tuple[tuple[str, int], ...]:
        names = [t.name for t in self.p.threads]
        vals = []
        for k in keys:
            if ":" in k:
                t, r = k.split(":", 1)
                vals.append((k, dict(regs[names.index(t)]).get(r, 0)))
            else:
                vals.append((k, mem[k]))
        return tuple(vals)
