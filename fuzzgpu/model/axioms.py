"""Whether an execution satisfies the axioms of :mod:`.ptx`, without a witness.

:func:`.ptx.check_before_co` and :func:`.ptx.check_with_co` return the first axiom an execution
violates with a readable cycle (for ``judge`` and ``explain``); building that cycle is a search per
violation.  The enumerations that only ask *whether* a candidate is consistent (``model.analyse``,
``model.race.analyse_races``) ask these instead: the same axioms over the same relations, each
tested as its ``.cat`` statement (``acyclic``, ``irreflexive``, ``empty``), so
``consistent_before_co(x) == (check_before_co(x) is None)`` and likewise with a coherence order
(tests/model/test_axioms_fast.py checks both over the litmus catalogues and generated programs).
"""

from __future__ import annotations

from .ptx import Execution, from_reads
from .relations import Rel, _bits


def _irreflexive_seq(a: Rel, b: Rel) -> bool:
    """``irreflexive(a ; b)``: no ``a`` edge x -> y with a ``b`` edge y -> x."""
    brows = b.rows
    for x, row in enumerate(a.rows):
        for y in _bits(row):
            if brows[y] >> x & 1:
                return False
    return True


def consistent_before_co(x: Execution) -> bool:
    """No-Thin-Air, Fence-SC and the reads-from part of Causality hold (:func:`.ptx.check_before_co`)."""
    if not (x.rf | x.dep).is_acyclic():  # No Thin Air
        return False
    if x.F_SC & (x.F_SC - 1) and not (x.fence_causality & ~x.sync_fence & x.morally_strong).is_empty():  # Fence-SC
        return False
    return _irreflexive_seq(x.rf, x.causality)  # Causality: irreflexive(rf ; cause)


def consistent_with_co(x: Execution, co: Rel) -> bool:
    """The from-reads part of Causality, Atomicity and SC-per-Location hold with coherence order
    ``co`` (:func:`.ptx.check_with_co`)."""
    fr = from_reads(x, co)
    if not _irreflexive_seq(fr, x.causality):  # Causality: irreflexive(fr ; cause)
        return False
    ms = x.morally_strong
    if any(x.rmw.rows) and not (((ms & fr) @ (ms & co)) & x.rmw).is_empty():  # Atomicity
        return False
    return ((ms & (x.rf | co | fr)) | x.po_vloc).is_acyclic()  # SC per Location


__all__ = ["consistent_before_co", "consistent_with_co"]
