"""The model's analysis of each program a campaign worker judges, computed once in the worker
(``model.analyse``, with the SC set; in a race campaign from the race analysis's enumeration, which
the property's verdict reuses) and used three times: the live display's weak count, the
stress tuner's weak outcomes, and -- sent with the run request as a
:class:`~fuzzgpu.properties.RunAdvice` -- the outcomes the GPU harness watches
(``properties.forbidden_watch``), which the backend's process would otherwise compute again."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, cast

from ..ir import Program
from ..properties import RunAdvice, unwritten_keys
from ..recent import Recent

if TYPE_CHECKING:
    from ..model import Analysis

#: programs whose analyses a worker keeps (those asked about most recently)
KEEP = 2000
#: what the cache keeps for a program the oracle does not cover: past its budget, or otherwise
_TOO_LARGE, _UNSUPPORTED = "too large", "unsupported"


class Analyses:
    def __init__(self, budget: int | None = None, with_races: bool = False) -> None:
        self._cache: Recent[Program, Analysis | str] = Recent(KEEP)
        self.budget = budget  # the oracle's budget (None: model.ORACLE_BUDGET, the backend's)
        # a race campaign asks the race analysis of every program it judges: the model's analysis comes
        # from the same enumeration (model.race.analyse_races(sc=True): the same sets, one pass)
        self.with_races = with_races

    def get(self, program: Program) -> Analysis | str:
        """``model.analyse(program)``, once; ``"too large"`` or ``"unsupported"`` where the oracle
        does not cover it.  ``with_races``: the same analysis, from the race analysis's enumeration
        (which the race property's verdict then reuses), under the race analysis's budget
        (``model.race.RACE_BUDGET``, the verdict's: its enumeration charged as ``model.analyse``'s)."""
        from .. import model

        hit = self._cache.get(program)
        if hit is None:
            try:
                if self.with_races:
                    from ..model import race

                    budget = race.RACE_BUDGET if self.budget is None else self.budget  # the race verdict's own
                    hit = cast("Analysis", race.analyse_races(program, sc=True, budget=budget).analysis)  # sc=True: always set
                else:
                    hit = model.analyse(program) if self.budget is None else model.analyse(program, budget=self.budget)
            except model.TooLarge:
                hit = _TOO_LARGE
            except model.Unsupported:
                hit = _UNSUPPORTED
            self._cache.put(program, hit)
        return hit

    def cached(self, program: Program) -> Analysis | None:
        """The analysis when it was computed (and covers the program), else None."""
        hit = self._cache.get(program)
        return None if hit is None or isinstance(hit, str) else hit

    def advice(self, program: Program) -> RunAdvice | None:
        """What the backend's harness needs of the analysis.  None where the analysis with the SC
        set ran past the oracle's budget: the backend's own (without the SC set: less work) may
        not, and then it watches what it covers -- the same watch as without advice."""
        from ..codegen.values import harness_domains

        a = self.get(program)
        if a == _TOO_LARGE:
            return None
        advice = RunAdvice(None) if isinstance(a, str) else RunAdvice.of(a)
        return dataclasses.replace(advice, domains=harness_domains(program))

    def weak_count(self, program: Program, hist: Any) -> int:
        """The instances of ``hist`` whose outcome no interleaving produces (a value no store wrote
        is a fault, not a weak outcome); 0 where the oracle does not cover the program."""
        if not hist.counts:
            return 0
        a = self.get(program)
        if isinstance(a, str):
            return 0
        return sum(c for o, c in hist.counts if o not in a.sc and not unwritten_keys(program, dict(o)))


__all__ = ["KEEP", "Analyses"]
