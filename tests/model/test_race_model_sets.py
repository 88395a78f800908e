"""A race campaign asks two questions of every program it judges: the model's analysis (``model.analyse``:
the allowed, outside-model and interleaving outcomes -- the run's advice, the weak count, the tuner's
target) and the race analysis (the property's verdict).  Both enumerate the same candidate executions
and coherence orders; ``analyse_races(sc=True)`` gathers the model's sets during its own enumeration
(issue 29: one pass instead of two).  Its answer must be ``model.analyse``'s, set for set and count for
count: checked here on every litmus test of the repository (Dat3M's suite and ours) and on drawn
programs."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings

from fuzzgpu import model, strategies
from fuzzgpu.litmus import parse_file
from fuzzgpu.model import race
from fuzzgpu.profiles import load_profile
from programs import MP  # tests/programs.py

LITMUS = Path(__file__).resolve().parents[1] / "litmus"


def same_as_analyse(p) -> bool | None:
    """Whether the race analysis's model sets are ``model.analyse``'s (None: the oracle does not
    cover the program, or its budget runs out: the race analysis has no budget of its own)."""
    try:
        a = model.analyse(p)
    except model.Unsupported:
        return None
    race.clear_cache()
    r = race.analyse_races(p, sc=True).analysis
    assert r is not None
    return ((a.keys, a.allowed, a.sc, a.outside_model, a.beyond_bound, a.candidates, a.consistent)
            == (r.keys, r.allowed, r.sc, r.outside_model, r.beyond_bound, r.candidates, r.consistent))


def test_every_litmus_test_of_the_repository() -> None:
    files = sorted(LITMUS.rglob("*.litmus"))
    checked = 0
    for f in files:
        try:
            p = parse_file(f)
        except Exception:  # noqa: BLE001 -- files of the dialect's error tests
            continue
        same = same_as_analyse(p)
        assert same is not False, f
        checked += same is True
    assert checked >= 400, checked  # Dat3M's 183 and ours: most are covered by the oracle


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(strategies.weighted(load_profile("all").shapes, load_profile("all").options))
def test_drawn_programs(p) -> None:
    assert same_as_analyse(p) is not False


def test_the_answer_with_the_model_sets_answers_the_question_without_them() -> None:
    race.clear_cache()
    with_sets = race.analyse_races(MP, sc=True)
    assert with_sets.analysis is not None
    assert race.analyse_races(MP) is with_sets  # the property's question, from the same enumeration
    race.clear_cache()
    alone = race.analyse_races(MP)
    assert alone.analysis is None  # asked without: not gathered
    assert race.analyse_races(MP, sc=True) is not alone and race.analyse_races(MP, sc=True).analysis is not None


def test_a_race_campaigns_analyses_come_from_the_race_analysis() -> None:
    from fuzzgpu.campaign.analyses import Analyses

    race.clear_cache()
    a = Analyses(with_races=True).get(MP)
    assert not isinstance(a, str) and a.sc == model.analyse(MP).sc
    assert race.analyse_races(MP).analysis is a  # the verdict's question is answered by the same pass

