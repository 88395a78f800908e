"""The Coherence axiom read from an observed final value (for explanations: ``model.judge``).

PTX ISA, Axioms, Coherence: "If a write W precedes an overlapping write W' in causality order, then
W must precede W' in coherence order".  :meth:`ptx.Execution.coherence_orders` builds the axiom in,
so a final value that only such writes wrote matches no coherence order; :func:`coherence_last`
names the axiom and its cycle instead of "no execution produces these values"."""

from __future__ import annotations

from typing import Mapping

from .ptx import Execution, Violation, axiom_cycle


def coherence_last(x: Execution, final: Mapping[str, int]) -> Violation | None:
    """ISA axiom "Coherence" for observed final values: "If a write W precedes an overlapping write
    W' in causality order, then W must precede W' in coherence order", so W is not the
    coherence-last write of its location and its value cannot be the final one.

    :meth:`Execution.coherence_orders` builds the axiom in (:attr:`Execution.required_co`), so a final
    value that only such writes wrote matches no coherence order; this names the axiom and the
    cycle ``W' -co-> W -...-> W'`` (W' is coherence-before the final write W, W precedes W' in
    causality order).  ``final`` maps physical locations to observed final values; None when every
    one of them is some write's that no causality order puts before another write of its location
    (an initial value overwritten by a store has no causality path: None too)."""
    req = x.required_co
    for loc, value in sorted(final.items()):
        ws = [e for e in x.ev if e.kind == "W" and e.location == loc]
        wrote = [e for e in ws if e.access[1] == value]
        blocked = [(w, next((v for v in ws if req.has(w.eid, v.eid)), None)) for w in wrote]
        if not wrote or any(v is None or w.init for w, v in blocked):
            continue
        w, later = blocked[0]
        assert later is not None
        return axiom_cycle(x, "Coherence", "Axioms: Coherence", {"co": req}, later.eid, w.eid)
    return None


__all__ = ["coherence_last"]
