"""The oracle's work is bounded (issue 13, item 3): past ``ORACLE_BUDGET`` units of work a question
ends with :class:`fuzzgpu.model.TooLarge` -- an ``Unsupported``, so every caller reports the
program as "not covered: too large" -- never a hang, never an exhausted memory, never "clean".

The checks count work, not seconds: a budget that is spent raises, whatever the machine's speed.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import fuzzgpu.model.event as event
from fuzzgpu.ir import Fence, Load, Location, Placement, Program, Scope, Sem, Store, Thread, program_to_json, validate
from fuzzgpu.litmus import format_program, parse
from fuzzgpu.model import ORACLE_BUDGET, TooLarge, Unsupported, analyse, check_condition, judge, termination


def six_by_eight(seed: int = 0) -> Program:
    """6 threads of 8 loads, stores and fences over two locations (the size of issue 13's entry)."""
    r = random.Random(seed)
    threads, observed, v = [], [], 0
    for t in range(6):
        code = []
        for i in range(8):
            v += 1
            kind, loc = r.choice(("ld", "st", "st", "fence")), r.choice(("x", "y"))
            if kind == "ld":
                sem = r.choice((Sem.WEAK, Sem.RELAXED, Sem.ACQUIRE))
                code.append(Load(f"r{i}", loc, sem, None if sem is Sem.WEAK else Scope.GPU))
                observed.append(f"P{t}:r{i}")
            elif kind == "st":
                sem = r.choice((Sem.WEAK, Sem.RELAXED, Sem.RELEASE))
                code.append(Store(loc, v, sem, None if sem is Sem.WEAK else Scope.GPU))
            else:
                code.append(Fence(r.choice((Sem.ACQ_REL, Sem.SC)), Scope.GPU))
        threads.append(Thread(f"P{t}", Placement(cta=t), tuple(code)))
    return validate(Program("six-by-eight", tuple(threads), (Location("x"), Location("y")), None,
                            observed=tuple(observed[:4]) + ("x", "y")))


def sixty_four_threads() -> Program:
    """A 64-thread litmus test: one writer, 63 readers of x."""
    lines = ["PTX sixty-four", "{", "x=0;", "}"]
    threads = ["st.relaxed.gpu x, 1"] + ["ld.relaxed.gpu r0, x"] * 63
    lines.append(" | ".join(f"P{i}@cta {i},gpu 0" for i in range(64)) + " ;")
    lines.append(" | ".join(threads) + " ;")
    lines.append("exists (P1:r0 == 0 /\\ P63:r0 == 1)")
    return parse("\n".join(lines) + "\n")


@pytest.fixture
def budgets(monkeypatch):
    """Every Budget the oracle makes, to count the work done and the budgets spent."""
    made: list[event.Budget] = []
    orig = event.Budget.__init__

    def init(self, limit: int = ORACLE_BUDGET) -> None:
        orig(self, limit)
        made.append(self)

    monkeypatch.setattr(event.Budget, "__init__", init)
    return made


#: the budget of the tests that follow a "too large" answer through a caller (check, explain, replay,
#: termination): any budget the program exceeds gives the same answer, and the real one costs each
#: test ~8 CPU-seconds; the tests above spend the real ORACLE_BUDGET
SMALL_BUDGET = 100_000


@pytest.fixture
def small_budget(monkeypatch):
    """Every Budget the oracle makes is at most SMALL_BUDGET."""
    orig = event.Budget.__init__

    def init(self, limit: int = ORACLE_BUDGET) -> None:
        orig(self, min(limit, SMALL_BUDGET))

    monkeypatch.setattr(event.Budget, "__init__", init)


def test_too_large_is_not_covered():
    assert issubclass(TooLarge, Unsupported)
    assert ORACLE_BUDGET == 4_000_000  # docs/oracle.md and docs/reliability.md give this number


def test_six_by_eight_ends_too_large(budgets):
    p = six_by_eight(0)
    with pytest.raises(TooLarge, match="too large"):
        analyse(p)
    with pytest.raises(TooLarge):
        judge(p, {k: 0 for k in p.outcome_keys()})
    assert budgets and all(b.used <= b.limit + b.limit // 2 for b in budgets)  # stopped at the budget, not far past it


def test_small_budget_stops_a_small_program():
    """The budget is what stops the enumeration: MP needs a few hundred units."""
    mp = parse("PTX MP\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak x, 1 | ld.acquire.gpu r0, y ;\n"
               " st.release.gpu y, 1 | ld.weak r1, x ;\nexists (P1:r0 == 1 /\\ P1:r1 == 0)\n")
    assert analyse(mp).allowed
    with pytest.raises(TooLarge):
        analyse(mp, budget=50)
    with pytest.raises(TooLarge):
        judge(mp, {"P1:r0": 1, "P1:r1": 0}, budget=50)


def test_sixty_four_threads_check_is_answered_or_too_large():
    p = sixty_four_threads()
    try:
        obs = check_condition(p)
    except TooLarge as e:
        assert "too large" in str(e)
    else:
        assert obs.observation in ("Never", "Sometimes", "Always")


def test_check_cli_says_not_covered_too_large(small_budget):
    from fuzzgpu.commands.check import check_one
    from fuzzgpu.errors import UserError

    with pytest.raises(UserError, match="not covered by the oracle: too large"):
        check_one(sixty_four_threads(), "sixty-four.litmus", 1, False)


def test_termination_of_a_large_program_is_unknown(small_budget):
    t = termination(six_by_eight(0))
    assert t.status == "unknown" and "too large" in t.reason


def _big_entry(tmp_path):
    """A corpus entry (as someone could write it) holding the 6 x 8 program."""
    from test_corpus import _entry

    from fuzzgpu.corpus.entry import litmus_text

    d = _entry()
    p = six_by_eight(0)
    keys = list(p.outcome_keys())
    d["program"], d["litmus"], d["shape"] = program_to_json(p), format_program(p), "random"
    outcomes = [{k: 0 for k in keys}, {k: i % 3 for i, k in enumerate(keys)}]
    d["histogram"].update(keys=keys, outcomes=[{"outcome": o, "count": 10} for o in outcomes], instances=20)
    d["verdict"]["offending"] = [{"outcome": outcomes[1], "count": 10, "verdict": "forbidden", "reason": "r",
                                  "explanation": ["stored"]}]
    d["oracle"] = {"covered": False, "reason": "too large"}
    # the litmus text an entry carries says what its program and offending outcome say (entry.py's
    # _check_litmus): the text fuzzgpu prints, with the offending outcome as its condition
    d["litmus"] = litmus_text(p, [tuple((k, outcomes[1][k]) for k in keys)])
    path = tmp_path / "big.json"
    path.write_text(json.dumps(d))
    return path


def test_explain_a_large_entry_asks_the_oracle_once(tmp_path, capsys, small_budget, budgets):
    from fuzzgpu.cli import main

    path = _big_entry(tmp_path)
    assert main(["explain", str(path)]) == 0
    out = capsys.readouterr().out
    assert "not covered" in out and "too large" in out
    spent = [b for b in budgets if b.used > b.limit]
    assert len(spent) == 1, "one too-large answer per entry, not one per outcome"


def test_replay_sim_skips_a_large_entry(tmp_path, capsys, small_budget):
    from fuzzgpu.cli import main

    path = _big_entry(tmp_path)
    rc = main(["replay", str(path), "--backend", "sim", "--json"])
    out = capsys.readouterr().out
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert rows and rows[0]["status"] == "skipped" and "too large" in rows[0]["reason"], out
    assert rc != 1  # not "still violates", and never "fixed"
    assert rows[0]["status"] != "fixed"


def test_check_cli_exit_status_for_a_too_large_test_is_3(tmp_path, capsys, small_budget):
    """A test the oracle could not finish is not checked: never exit 0, and not a usage error (2)."""
    from fuzzgpu.cli import main
    from fuzzgpu.litmus import format_program

    big = tmp_path / "sixty-four.litmus"
    big.write_text(format_program(sixty_four_threads()))
    small = Path(__file__).parents[1] / "litmus" / "core" / "CoWW.litmus"
    rc = main(["check", str(big), str(small)])
    out, err = capsys.readouterr()
    assert rc == 3 and "not covered by the oracle: too large" in err and "Observation CoWW" in out


def _race_programs() -> list[Program]:
    """A few tests of the repository, of every kind the race analysis classifies."""
    here = Path(__file__).parents[1] / "litmus"
    names = ["core/MP-relacq-gpu.litmus", "core/CoWW.litmus", "race-tensormap/NORACE-11-rewrite-after-completion.litmus",
             "race-tensormap/NORACE-11-same-thread-fence-pair.litmus", "gpu/D-rewrite-after-wait-read-fenced.litmus"]
    from fuzzgpu.litmus import parse_file

    return [parse_file(here / n) for n in names]


@pytest.mark.parametrize("sc", [False, True])
def test_race_analysis_charges_what_analyse_charges(budgets, sc):
    """The race analysis enumerates what ``model.analyse`` enumerates and is charged the same units:
    it runs out of the oracle's budget where the model's analysis does (``fuzzgpu check`` and
    ``fuzzgpu necessity`` say "too large" of the same tests)."""
    from fuzzgpu.model import race

    for p in _race_programs():
        budgets.clear()
        analyse(p, sc=sc)
        model_used = [b.used for b in budgets]
        budgets.clear()
        race.clear_cache()
        race.analyse_races(p, sc=sc)
        assert [b.used for b in budgets] == model_used, p.name


def test_race_analysis_ends_too_large():
    """issue: ``fuzzgpu necessity`` of a test too large for the oracle never finished (the race
    analysis had no budget).  MP needs a few hundred units; a budget of 50 stops it."""
    from fuzzgpu.model import race

    mp = parse("PTX MP\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak x, 1 | ld.acquire.gpu r0, y ;\n"
               " st.release.gpu y, 1 | ld.weak r1, x ;\nexists (P1:r0 == 1 /\\ P1:r1 == 0)\n")
    race.clear_cache()
    assert race.analyse_races(mp).possible  # within the budget: answered
    for sc in (False, True):
        with pytest.raises(TooLarge, match="too large"):
            race.analyse_races(mp, sc=sc, budget=50)


#: 4 threads, one location: ~640,000 units (past SMALL_BUDGET) in its enumeration, few in its paths
FOUR_WRITERS = """PTX four-writers
{ x=0; }
 P0@cta 0,gpu 0 | P1@cta 1,gpu 0 | P2@cta 2,gpu 0 | P3@cta 3,gpu 0 ;
 st.relaxed.gpu x, 1 | st.relaxed.gpu x, 2 | st.relaxed.gpu x, 3 | ld.relaxed.gpu r0, x ;
 st.relaxed.gpu x, 4 | ld.relaxed.gpu r1, x | ld.relaxed.gpu r1, x | ld.relaxed.gpu r1, x ;
exists (P3:r0 == 1)
"""


def test_necessity_cli_too_large_is_not_covered(tmp_path, capsys, small_budget):
    """``fuzzgpu necessity`` of a test past the budget: exit 3, "not covered by the oracle: too
    large", as ``fuzzgpu check`` says of it (before, the race analysis it asks ran unbounded)."""
    from fuzzgpu.cli import main
    from fuzzgpu.model import race

    path = tmp_path / "four-writers.litmus"
    path.write_text(FOUR_WRITERS)
    race.clear_cache()  # an answer kept from another test was found under the real budget
    assert main(["check", str(path)]) == 3
    assert "not covered by the oracle: too large" in capsys.readouterr().err
    assert main(["necessity", str(path)]) == 3
    out, err = capsys.readouterr()
    assert "not covered by the oracle: too large" in err and not out


def test_the_race_verdict_keeps_its_larger_budget_and_necessity_asks_under_the_oracles(budgets):
    """The race property's verdict ran unbounded, and some of the generator's draws are a little past
    the model's budget (tests/strategies/test_producer_consumer_cluster.py's draws 114-115: model.analyse
    too large, the race analysis done in ~1 s): its default budget is ``RACE_BUDGET``, ten times the
    model's, so those verdicts stay; ``fuzzgpu necessity`` asks under ``ORACLE_BUDGET``, as ``check``."""
    from fuzzgpu.model import race
    from fuzzgpu.necessity import necessity

    assert race.RACE_BUDGET == 10 * ORACLE_BUDGET
    mp = parse("PTX MP\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak x, 1 | ld.acquire.gpu r0, y ;\n"
               " st.release.gpu y, 1 | ld.weak r1, x ;\nexists (P1:r0 == 1 /\\ P1:r1 == 0)\n")
    race.clear_cache()
    race.analyse_races(mp)
    assert [b.limit for b in budgets] == [race.RACE_BUDGET]
    budgets.clear()
    race.clear_cache()
    necessity(mp)
    assert budgets and {b.limit for b in budgets} == {ORACLE_BUDGET}
