"""Properties: what counts as a failure when a program's observed outcomes are judged.

* :data:`MODEL` (``model``): no observed outcome is one the memory-model oracle forbids -- a forbidden
  outcome is a hardware, compiler or model bug;
* :data:`SC` (``sc``): no observed outcome is non-SC (weak) -- a weak outcome means the pattern is
  under-synchronised;
* :data:`RACE` (``race``): no observed outcome is one only a racy execution produces -- the program
  has a data race in the PTX ISA's sense (:mod:`fuzzgpu.model.race`: conflicting accesses, not
  morally strong, not ordered by causality order; cross-proxy accesses without the proxy fence, an
  ``ld.global.nc`` whose read-only contract is broken, an async copy not yet made visible by its
  completion mechanism) and the run showed the handoff fail to deliver (a read that missed the data
  it was meant to see).  Each such outcome (verdict ``racy``) names its racing pairs and the
  mechanism that failed; a forbidden outcome fails it too.  On the ``sim`` and ``static`` backends
  the finding is the oracle's (said so in the verdict): ``sim`` samples the oracle's outcomes and
  ``static`` runs nothing, so the racy outcomes are the oracle's, each counted once;
* :func:`predicate`: your own test over outcomes.

Each property returns a :class:`Verdict`: ``pass``, ``fail`` (with the offending outcomes, their
counts and the oracle's judgement of each: verdict, reason and the cycle that forbids it) or
``unsupported`` when the oracle does not cover a mechanism of the program (``model.Unsupported``):
that is reported as such, never guessed.

A backend that does not execute (``static``) puts SASS findings in ``Histogram.meta["sass_findings"]``;
every property also fails on a finding that matters: a memory operation ptxas moved across a
synchronisation point that orders it, or an ``ld.global.nc`` moved across a synchronisation point
that would order a weak load in that direction (``griddepcontrol.wait``, ``bar.sync``, a fence, an
acquire: the PDL + ``__ldg`` race).  Roach-motel moves the ISA allows (an ``.nc`` load hoisted above
a release store, say) are kept as notes, not failures.

A value no store of the program wrote (a key whose observed value lies outside the oracle's value
domain, :mod:`fuzzgpu.model.values`; ``?`` from the GPU harness, whose value tables hold that
domain) is no memory-model verdict: no ordering of the program's accesses, allowed or forbidden,
reads it.  It is a harness or hardware fault (a decoding error, a corrupted word), and every property
fails on it with an offence of its own kind (verdict :data:`UNWRITTEN`, ``Verdict.kinds`` ``fault``),
never as ``forbidden``.

Inside a Hypothesis test, a failing verdict also notes the program as litmus text
(:func:`note_failure`, ``hypothesis.note``): the minimal failing example's report shows it beside the
falsifying example's repr of the ``Program`` dataclass.

Timeouts (``Histogram.timeouts``: instances whose bounded wait ran out of its iteration budget) are
judged by :func:`fuzzgpu.model.termination`, for every property: on a program whose waits must all
complete, they fail it with a finding of their own kind (``Verdict.timeouts``, reason
``timeout: ...``); on a program where a wait may (or must) spin for ever they are expected and noted;
where the oracle cannot say (``unknown``) they are noted, not failed.
"""

from __future__ import annotations

import builtins
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, cast

from .backends.base import Histogram, Outcome, format_outcome
from .ir import Branch, Goto, Program

if TYPE_CHECKING:
    from .model.values import Domains

#: the verdict of an outcome holding a value no store of the program wrote: a harness or hardware
#: fault, not a memory-model verdict
UNWRITTEN = "unwritten"
#: the verdict of an outcome only a racy execution produces (the race property)
RACY = "racy"


@dataclass(frozen=True)
class Offence:
    """One offending outcome: how often it was seen and what the oracle says about it."""

    outcome: tuple[tuple[str, Any], ...]
    count: int
    verdict: str  # the oracle's: sc / allowed / allowed-outside-model / forbidden / not covered; or UNWRITTEN
    reason: str
    explanation: tuple[str, ...] = ()  # the axiom and cycle, one line per distinct reason

    def to_json(self) -> dict[str, Any]:
        return {"outcome": dict(self.outcome), "count": self.count, "verdict": self.verdict,
                "reason": self.reason, "explanation": list(self.explanation)}


@dataclass(frozen=True)
class Verdict:
    # the field ``property`` (the JSON key) shadows the builtin in this class body for the type
    # checker: the properties below are ``builtins.property``
    property: str
    status: str  # "pass" | "fail" | "unsupported"
    offending: tuple[Offence, ...] = ()
    sass: tuple[Mapping[str, Any], ...] = ()  # SASS findings that fail the property
    reason: str = ""
    notes: tuple[str, ...] = ()
    instances: int = 0
    #: timed-out instances that are a finding (the model says every wait of the program completes)
    timeouts: int = 0
    #: the model's termination status when the run had timeouts (``fuzzgpu.model.liveness``), else ""
    waits: str = ""
    #: the weakest single change that removes the finding (:mod:`fuzzgpu.fixes`), once searched
    fix: str = ""
    #: the offending outcomes are the oracle's, not a run's (race on the static backend)
    oracle_only: bool = False
    #: what kind of failure this is (race: the known class or mechanism of each racing pair), so that
    #: shrinking keeps to one kind (the campaign raises one exception type per key)
    class_key: str = ""

    @builtins.property
    def failed(self) -> bool:
        return self.status == "fail"

    @builtins.property
    def failures(self) -> int:
        """Instances showing an offending outcome or a forbidden timeout (a static finding counts once)."""
        return (sum(o.count for o in self.offending) + (1 if self.sass else 0) + self.timeouts
                + (1 if self.oracle_only and self.offending else 0))

    @builtins.property
    def kinds(self) -> tuple[str, ...]:
        """What fails: ``fault`` (outcomes with a value no store wrote: a harness or hardware
        fault), ``outcome`` (other offending outcomes), ``sass``, ``timeout``."""
        ordering = any(o.verdict != UNWRITTEN for o in self.offending)
        return tuple(k for k, on in (("fault", self.faults), ("outcome", ordering), ("sass", self.sass),
                                     ("timeout", self.timeouts)) if on)

    @builtins.property
    def faults(self) -> int:
        """Instances that read a value no store of the program wrote (harness or hardware faults)."""
        return sum(o.count for o in self.offending if o.verdict == UNWRITTEN)

    @builtins.property
    def rate(self) -> float:
        """Instances that showed the finding / instances, from integer counts and clamped to 0..1 by
        construction (a SASS finding is not an instance: on top of an all-failing histogram it
        made this 1.0000001 once)."""
        if (self.sass and not self.offending and not self.timeouts) or self.oracle_only:
            return 1.0  # a compile result, or the oracle's verdict: deterministic
        hits = sum(o.count for o in self.offending) + self.timeouts
        return float(Fraction(min(hits, self.instances), self.instances)) if self.instances > 0 else 0.0

    def offending_set(self) -> frozenset:
        return frozenset(o.outcome for o in self.offending)

    def sass_keys(self) -> tuple[str, ...]:
        """What identifies each SASS finding apart from line numbers."""
        return tuple(sorted(f"{f.get('check')}|{f.get('direction')}|{f.get('function')}|{f.get('op_ptx')}|{f.get('sync_ptx')}" for f in self.sass))

    def summary(self) -> str:
        if self.status == "pass":  # a pass over no run says so (the static backend runs nothing)
            return f"{self.property}: pass" + ("" if self.instances else " (0 instances ran: no outcome was observed)")
        if self.status == "unsupported":
            return f"{self.property}: not covered by the oracle ({self.reason})"
        parts: list[str] = []
        faults = [o for o in self.offending if o.verdict == UNWRITTEN]
        if faults:
            shown = ", ".join(f"{format_outcome(o.outcome)} x{o.count}" for o in faults[:3])
            more = f" and {len(faults) - 3} more" if len(faults) > 3 else ""
            parts.append(f"HARNESS OR HARDWARE FAULT (not a memory-model verdict): {self.faults} instance(s) read a "
                         f"value no store of the program wrote: {shown}{more}")
        ordering = [o for o in self.offending if o.verdict != UNWRITTEN]
        parts += [f"{format_outcome(o.outcome)} x{o.count} ({o.verdict})" for o in ordering[:3]]
        if len(ordering) > 3:
            parts.append(f"and {len(ordering) - 3} more offending outcomes")
        parts += [f"SASS: {f.get('op_sass') or f.get('op_ptx')} {f.get('direction')} {f.get('sync_sass') or f.get('sync_ptx')}" for f in self.sass]
        if self.timeouts:
            parts.append(f"timeout: {self.timeouts} instance(s) timed out, though the model says every wait completes")
        races = [o for o in self.offending if o.verdict == RACY]
        if races:
            parts.append("race: " + races[0].reason)
        if self.fix:
            parts.append(f"fix: {self.fix}")
        return f"{self.property}: FAIL: " + "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "property": self.property,
            "status": self.status,
            "reason": self.reason,
            "offending": [o.to_json() for o in self.offending],
            "sass": [dict(f) for f in self.sass],
            "notes": list(self.notes),
            "instances": self.instances,
            "rate": self.rate,
            "timeouts": self.timeouts,
            "waits": self.waits,
            "faults": self.faults,
            "fix": self.fix,
            "oracle_only": self.oracle_only,
            "class_key": self.class_key,
        }


def checked_nothing(h: Histogram) -> str | None:
    """Why the run ``h`` checked nothing a pass could rest on, else None: nothing executed (the static
    backend) and its static oracle could not account for all of the SASS (``meta["sass_unchecked"]``)
    while finding nothing that fails a property -- no finding there is not a pass (issue 12, item 6):
    a campaign counts the program not covered, the pytest plugin fails it NOT CHECKED."""
    from .errors import clip

    left = list(dict(h.meta).get("sass_unchecked") or ())
    if h.instances or not left or _sass_findings(h)[0]:
        return None
    return f"nothing ran, and its SASS was not fully checked ({len(left)} thing(s), e.g. {clip(str(left[0]), 200)})"


def _sass_findings(h: Histogram) -> tuple[list[dict], list[str]]:
    """(findings that fail a property, notes about the others)."""
    from . import sass

    meta = dict(h.meta)
    bad, notes = [], []
    for f in meta.get("sass_findings") or ():
        matters = f.get("verdict") == sass.FORBIDDEN or (
            f.get("check") == sass.CROSSING and f.get("reason") == sass.RULE_NC
            and _would_order(str(f.get("sync_ptx") or ""), str(f.get("direction") or ""))
        )
        if matters:
            bad.append(dict(f))
        else:
            notes.append(f"SASS (allowed by the ISA): {f.get('op_ptx')} {f.get('direction')} {f.get('sync_ptx')}")
    return bad, notes


def _would_order(sync_ptx: str, direction: str) -> bool:
    """Would this synchronisation point order a *weak* load moved in this direction?  An
    ``ld.global.nc`` hoisted above ``griddepcontrol.wait``, ``bar.sync``, a fence or an acquire is
    the PDL + ``__ldg`` race; hoisted above a release store (roach motel) it is nothing new.  What
    each instruction orders, and in which direction, is the instruction-semantics table's
    (:mod:`fuzzgpu.semantics`, read through the SASS checker's classification of the PTX)."""
    from . import sass

    sync = sass.sync_of_text(sync_ptx) if sync_ptx.strip() else None
    return sync is not None and sass.orders_weak_access(sync, direction)


def unwritten_keys(program: Program, outcome: Mapping[str, Any]) -> tuple[str, ...]:
    """The keys of ``outcome`` holding a value no store of the program wrote (outside the oracle's
    value domain; ``None`` is such a value from the GPU harness); ``()`` where the oracle cannot
    give the program's domain."""
    from . import model
    from .model import values

    try:
        return values.unwritten(program, outcome)
    except model.Unsupported:
        return ()


def unwritten_reason(program: Program, outcome: Mapping[str, Any], keys: tuple[str, ...]) -> str:
    """One sentence for an outcome with values no store wrote: which keys, and what they can hold."""
    from .model import values

    dom = values.key_values(program)
    what = "; ".join(f"{k}={'?' if outcome[k] is None else outcome[k]} (it can only be "
                     f"{', '.join(map(str, sorted(dom[k])))})" for k in keys)
    loops = any(isinstance(i, (Branch, Goto)) for t in program.threads for i in t.code)
    return ("harness or hardware fault, not a memory-model verdict: a value no store of the program wrote was read: "
            + what + (" -- or a loop ran more often than the oracle's loop bound" if loops else ""))


def complete_outcome(outcome: Outcome) -> tuple[tuple[str, int], ...] | None:
    """The outcome as the oracle's ``model.Outcome`` (every value an int), or ``None`` when a value
    is ``?`` (the device saw a value outside the program's value table)."""
    values = tuple((k, v) for k, v in outcome if v is not None)
    return values if len(values) == len(outcome) else None


def _judge(program: Program, outcome: Mapping[str, Any]) -> tuple[str, str, tuple[str, ...]]:
    from . import model

    keys = unwritten_keys(program, outcome)
    if keys:
        return UNWRITTEN, unwritten_reason(program, outcome, keys), ()
    if any(v is None for v in outcome.values()):  # outside the value table, but no domain to judge it by
        return "not covered", "a value outside the program's value table was read", ()
    j, lines = model.explain_forbidden(program, dict(outcome))
    return j.verdict, j.reason, tuple(lines)


class Property:
    """A named property: ``check(program, histogram) -> Verdict``.

    ``bad(verdict, outcome_dict) -> bool`` decides whether an outcome with the oracle's verdict
    offends; ``needs_model``: whether the oracle must be consulted for every outcome.
    """

    def __init__(self, name: str, bad: Callable[[str, Mapping[str, Any]], bool], needs_model: bool = True, doc: str = "") -> None:
        self.name = name
        self.bad = bad
        self.needs_model = needs_model
        self.doc = doc

    def __repr__(self) -> str:
        return f"Property({self.name!r})"

    def check(self, program: Program, h: Histogram) -> Verdict:
        """The verdict of ``h``, a run of ``program`` (:meth:`judge`); a failing one, inside a
        Hypothesis test, also puts the program as litmus text in Hypothesis's report
        (:func:`note_failure`)."""
        verdict = self.judge(program, h)
        note_failure(program, verdict)
        return verdict

    def judge(self, program: Program, h: Histogram) -> Verdict:
        from . import model

        sass_bad, notes = _sass_findings(h)
        offending: list[Offence] = []
        try:
            analysis = model.analyse(program) if (self.needs_model and h.counts) else None
            for o, c in h.counts:
                if c <= 0:  # recorded but never seen (a hand-edited entry, a histogram built by user code)
                    continue
                d = dict(o)
                bad_keys = unwritten_keys(program, d)
                if bad_keys:  # a fault, whatever the property: never an ordering verdict
                    offending.append(Offence(o, c, UNWRITTEN, unwritten_reason(program, d, bad_keys)))
                    continue
                complete = complete_outcome(o)
                if analysis is not None and complete is not None:
                    verdict = analysis.verdict(complete)
                    if verdict == "forbidden":  # the cycle that forbids it
                        verdict, reason, lines = _judge(program, d)
                    else:
                        reason, lines = "", ()
                elif analysis is not None:
                    verdict, reason, lines = _judge(program, d)
                else:
                    verdict, reason, lines = "not judged", "", ()
                if self.bad(verdict, d):
                    if verdict == "not judged":
                        try:
                            verdict, reason, lines = _judge(program, d)
                        except model.Unsupported as e:
                            verdict, reason, lines = "not covered", f"not covered by the oracle: {e}", ()
                    elif verdict in ("sc", "allowed") and not reason:
                        verdict, reason, lines = _judge(program, d)
                    offending.append(Offence(o, c, verdict, reason, lines))
        except model.Unsupported as e:
            if sass_bad:
                return Verdict(self.name, "fail", (), tuple(sass_bad), f"SASS finding (the oracle does not cover the program: {e})", tuple(notes), h.instances)
            _, waits, why = judge_timeouts(program, h)  # unknown: noted, never failed
            return Verdict(self.name, "unsupported", (), (), str(e), tuple(notes) + ((why,) if why else ()), h.instances, 0, waits)
        timeouts, waits, why = judge_timeouts(program, h)
        if why and not timeouts:
            notes.append(why)
        if offending or sass_bad or timeouts:
            return Verdict(self.name, "fail", tuple(offending), tuple(sass_bad), fail_reason(offending, bool(sass_bad), timeouts, why),
                           tuple(notes), h.instances, timeouts, waits)
        return Verdict(self.name, "pass", (), (), "", tuple(notes), h.instances, 0, waits)


def failure_note(program: Program, verdict: Verdict) -> str:
    """What a failing property adds to Hypothesis's report: the verdict's summary and the program
    as litmus text, which a person reads, saves as a ``.litmus`` file and re-checks (``fuzzgpu
    check``); the falsifying example shows only the Program's summary (``Program.__repr__``)."""
    from .litmus import format_program

    try:
        text = format_program(program)
    except ValueError as e:  # what the dialect cannot express: said, never a crash of the report
        text = f"(not expressible as litmus text: {e})\n"
    return f"fuzzgpu: {verdict.summary()}; the program {program.name}, as litmus text:\n{text}"


def note_failure(program: Program, verdict: Verdict) -> None:
    """Inside a Hypothesis test, :func:`hypothesis.note` the :func:`failure_note` of a failing
    verdict: Hypothesis prints the notes of the minimal failing example only.  Nothing outside a
    test (``hypothesis.currently_in_test_context``), nor for a verdict that does not fail."""
    if not verdict.failed:
        return
    from hypothesis import currently_in_test_context, note

    if currently_in_test_context():
        note(failure_note(program, verdict))


def fail_reason(offending: list[Offence], sass_bad: bool, timeouts: int, why: str) -> str:
    """A failing verdict's one-line reason, the same for every property: the verdicts of its
    offending outcomes, then a SASS finding, then the timeouts."""
    reason = "; ".join(sorted({x.verdict if x.verdict != UNWRITTEN else "harness or hardware fault (a value no store wrote)"
                               for x in offending}))
    if sass_bad:
        reason = (reason + "; " if reason else "") + "SASS: a memory operation moved across a synchronisation point"
    if timeouts:
        reason = (reason + "; " if reason else "") + why
    return reason


def judge_timeouts(program: Program, h: Histogram) -> tuple[int, str, str]:
    """(timed-out instances that are a finding, the model's termination status, a sentence).

    A timeout is a finding exactly when :func:`fuzzgpu.model.termination` says every wait of the
    program must complete; when a wait may or must spin for ever it is expected; when the oracle
    cannot say (``unknown``) it is only reported."""
    if not h.timeouts:
        return 0, "", ""
    from . import model

    t = model.termination(program)
    n = h.timeouts
    if t.must_complete:
        waits = ", ".join(w.describe() for w in t.waits) or "the program has no loop"
        return n, t.status, f"timeout: the model says every wait completes ({waits}), yet {n} instance(s) timed out"
    if t.may_hang:
        return 0, t.status, f"{n} instance(s) timed out, as the model allows ({t.status}): {t.reason}"
    return 0, t.status, f"{n} instance(s) timed out; the model cannot say whether the waits must complete: {t.reason}"


MODEL = Property("model", lambda verdict, o: verdict == "forbidden",
                 doc="no observed outcome is forbidden by the PTX memory model")
SC = Property("sc", lambda verdict, o: verdict not in ("sc",),
              doc="every observed outcome is sequentially consistent (an interleaving)")

class RaceProperty(Property):
    """``race``: fails on an observed outcome only a racy execution produces (verdict ``racy``,
    :mod:`fuzzgpu.model.race`), on a forbidden one, and as every property on faults, SASS findings
    and forbidden timeouts."""

    def judge(self, program: Program, h: Histogram) -> Verdict:
        from . import model
        from .model import race

        sass_bad, notes = _sass_findings(h)
        try:
            ra = race.analyse_races(program)
        except model.Unsupported as e:
            if sass_bad:
                return Verdict(self.name, "fail", (), tuple(sass_bad), f"SASS finding (the oracle does not cover the program: {e})",
                               tuple(notes), h.instances)
            _, waits, why = judge_timeouts(program, h)
            return Verdict(self.name, "unsupported", (), (), str(e), tuple(notes) + ((why,) if why else ()), h.instances, 0, waits)
        oracle = _oracle_backend(h)
        offending: list[Offence] = []
        counts = tuple((o, c) for o, c in h.counts if c > 0)  # an outcome recorded 0 times was not seen
        oracle_only = False
        if not counts and h.backend == "static" and ra.racy:  # nothing ran: the oracle's racy outcomes
            counts = tuple((o, 0) for o in sorted(ra.racy))
            oracle_only = True
        for o, c in counts:
            d = dict(o)
            bad_keys = unwritten_keys(program, d)
            if bad_keys:
                offending.append(Offence(o, c, UNWRITTEN, unwritten_reason(program, d, bad_keys)))
                continue
            if any(v is None for v in d.values()):
                continue
            known = cast("tuple[tuple[str, int], ...]", o)  # no value is None (checked above)
            try:
                v = ra.verdict(known)
            except model.Unsupported as e:  # an outcome past the loop bound: not covered, never judged
                if sass_bad:
                    return Verdict(self.name, "fail", (), tuple(sass_bad), f"SASS finding (the oracle does not cover an outcome: {e})",
                                   tuple(notes), h.instances)
                _, waits, why = judge_timeouts(program, h)
                return Verdict(self.name, "unsupported", (), (), str(e), tuple(notes) + ((why,) if why else ()), h.instances, 0, waits)
            if v == "racy":
                pairs = ra.racy[known]
                lines = tuple(p.describe() for p in pairs)
                reason = (f"only a racy execution produces it (the handoff did not deliver): {lines[0]}"
                          + (f" -- the oracle's finding ({oracle})" if oracle else ""))
                offending.append(Offence(o, c, RACY, reason, lines))
            elif v == "forbidden":
                verdict, reason, lines = _judge(program, d)
                if verdict == "forbidden":
                    offending.append(Offence(o, c, verdict, reason, lines))
        if ra.is_racy and not any(x.verdict == RACY for x in offending):
            shown = "; ".join(sorted({f"{p.write} / {p.other}" for p in ra.races})[:3])
            notes.append(f"the program has data races ({shown}), but no observed outcome shows a handoff that failed")
        timeouts, waits, why = judge_timeouts(program, h)
        if why and not timeouts:
            notes.append(why)
        if offending or sass_bad or timeouts:
            return Verdict(self.name, "fail", tuple(offending), tuple(sass_bad), fail_reason(offending, bool(sass_bad), timeouts, why),
                           tuple(notes), h.instances, timeouts,
                           waits, oracle_only=oracle_only, class_key=race_class_key(program, ra, offending))
        return Verdict(self.name, "pass", (), (), "", tuple(notes), h.instances, 0, waits)


def may_fail_as(program: Program, class_key: str) -> bool:
    """False when ``program`` cannot fail the race property with ``class_key`` whatever a backend
    shows: a ``race:...`` key names the classes of the racy outcomes observed (:func:`race_class_key`),
    and the program has no racy outcome at all (``race.analyse_races``).  True for every other key
    (``race:other``: a forbidden outcome, a timeout, a SASS finding), where the oracle does not cover
    the program, and where some racy outcome exists -- also one of another class only: a campaign's
    shrink asks this of a candidate before it compiles or runs it (fuzzgpu.campaign.engine), and a
    candidate that fails in another class is a finding Hypothesis may shrink to instead (answering
    such candidates "passes" made the sim campaigns' shrinks ask 4-9 times more candidates)."""
    from . import model
    from .model import race

    if not class_key.startswith("race:") or class_key == "race:other":
        return True
    try:
        return bool(race.analyse_races(program).racy)
    except model.Unsupported:
        return True


def _pair_class(program: Program, pair: Any) -> str:
    """The part of a race class key one racing pair gives: its class's name, else its mechanism's."""
    from .bug_classes import finding_class, race_name

    c = finding_class(program, pair.mechanism, pair.other_at)
    return race_name(str(c)) if c is not None else race_name(pair.mechanism)


def race_class_key(program: Program, ra: Any, offending: list[Offence]) -> str:
    """``race:cp-async-without-wait`` -- what failed, named: the classes of
    :data:`fuzzgpu.bug_classes.CLASSES` (:data:`~fuzzgpu.bug_classes.CLASS_NAMES`), else the failed
    mechanisms (:func:`fuzzgpu.bug_classes.race_name`), of the racing pairs of the racy offences,
    joined by ``+`` (``race:cp-async-without-wait+flag-without-release-acquire``); ``race:other``
    without one."""
    keys = {_pair_class(program, p) for o in offending if o.verdict == RACY for p in ra.racy.get(o.outcome, ())}
    return "race:" + ("+".join(sorted(keys)) or "other")


def _oracle_backend(h: Histogram) -> str:
    """Why a backend's finding is the oracle's ("" for a GPU run)."""
    if h.backend == "sim" or dict(h.meta).get("simulation"):
        return "the sim backend samples the oracle's outcomes: not a hardware observation"
    if h.backend == "static":
        return "the static backend runs nothing: the outcome is the oracle's"
    return ""


RACE = RaceProperty("race", lambda verdict, o: verdict in (RACY, "forbidden"),
                    doc="no observed outcome is one only a data race produces (the handoff delivered)")

PROPERTIES = {"model": MODEL, "sc": SC, "race": RACE}


def predicate(name: str, ok: Callable[[Mapping[str, Any]], bool]) -> Property:
    """A user property: ``ok(outcome)`` (a dict ``{"P1:r0": 1, ...}``) says whether an outcome is
    acceptable; the verdict still carries the oracle's judgement of each offending outcome.  Like
    every property it also fails on a SASS finding that matters (a synchronisation ptxas moved an
    access across, a ``ld.global.nc`` hoisted above a wait: the histogram's ``sass_findings``),
    whatever ``ok`` says of the outcomes: compiled code that can break the handoff is a failure."""
    return Property(name, lambda verdict, o: not ok(o), needs_model=False)


def get(name: str) -> Property:
    from .errors import UserError

    if name not in PROPERTIES:
        raise UserError(f"unknown property {name!r} (model, sc or race)")
    return PROPERTIES[name]


def check(prop: str | Property, program: Program, h: Histogram) -> Verdict:
    return (get(prop) if isinstance(prop, str) else prop).check(program, h)


__all__ = ["MODEL", "PROPERTIES", "RACE", "RACY", "RaceProperty", "RunAdvice", "SC", "UNWRITTEN", "Offence", "Property", "Verdict", "check", "checked_nothing", "failure_note", "get", "judge_timeouts", "may_fail_as",
           "note_failure", "predicate", "unwritten_keys", "unwritten_reason"]


@dataclass(frozen=True)
class RunAdvice:
    """What a campaign worker already knows of a program, sent with its run request so that the
    backend's process does not compute it again (picklable, small): ``possible``, the outcomes the
    oracle allows (in or outside the model: ``model.Analysis.possible``), None when the oracle does
    not cover the program completely -- what :func:`forbidden_watch` asks of the model; ``domains``,
    the values the harness's tables and the watch's fault test are made of."""

    possible: frozenset | None
    #: the oracle's value domains the harness is written from (``codegen.values.harness_domains``), which
    #: the backend's process adopts (``model.values.adopt``) instead of computing the oracle's traces again
    domains: tuple[tuple[Program, Domains], ...] = ()

    @classmethod
    def of(cls, analysis: Any) -> RunAdvice:
        """From a ``model.analyse`` of the program (with or without its SC set: the allowed and
        outside-model sets are the same either way)."""
        return cls(None if analysis.beyond_bound else analysis.possible)


def forbidden_watch(program: Program, advice: RunAdvice | None = None) -> Callable[[dict[str, int | None]], bool] | None:
    """The outcomes whose instances the GPU harness logs with their provenance (where each role
    ran: docs/harness.md, "Provenance"): those the oracle forbids -- written values, outside the
    model's possible set (one ``model.analyse``, or ``advice.possible`` when the caller has it).
    None when the oracle does not cover the program (then nothing is logged)."""
    possible = advice.possible if advice is not None else _possible(program)
    if possible is None:
        return None

    def watch(d: dict[str, int | None]) -> bool:
        if any(v is None for v in d.values()) or unwritten_keys(program, d):
            return False
        return tuple(d.items()) not in possible

    return watch


@functools.lru_cache(maxsize=256)
def _possible(program: Program) -> frozenset | None:
    """The outcomes the oracle allows (in or outside the model), once per program (a campaign runs
    one program many times); None when it does not cover the program completely."""
    from . import model

    try:
        a = model.analyse(program, sc=False)
    except model.Unsupported:
        return None
    return RunAdvice.of(a).possible
