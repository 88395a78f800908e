"""A loop whose body computes in registers is re-entered up to the loop bound (it is no spin loop).

``model.events._back_limits`` never re-entered a loop whose body writes no memory, on the argument
that a failed iteration only adds reads; a body with ``add r2, r2, 1`` carries r2 from one iteration
to the next, so the outcome ``r2 == 3`` (three reads of the flag: 0, 0, 1) was judged unreachable at
every ``--loop-bound`` and observing it would have been reported as forbidden (hostile
review)."""

from __future__ import annotations

from fuzzgpu import model
from fuzzgpu.litmus import parse

import programs  # tests/programs.py

COUNT = programs.COUNT_TEXT

# the same wait without the counter: a spin loop, never re-entered, the same final states
SPIN = """PTX SPIN
{ x=0; y=0; }
 P0@cta 0,gpu 0      | P1@cta 1,gpu 0       ;
 st.weak x, 1        | LC00:                ;
 st.release.gpu y, 1 | ld.acquire.gpu r1, y ;
                     | beq r1, 0, LC00      ;
                     | ld.weak r2, x        ;
exists (P1:r2 == 0)
"""


def test_an_iteration_count_is_reachable_within_the_loop_bound() -> None:
    p = parse(COUNT)
    assert {dict(o)["P1:r2"] for o in model.analyse(p, loop_bound=1).allowed} == {1, 2}
    assert {dict(o)["P1:r2"] for o in model.analyse(p, loop_bound=3).allowed} == {1, 2, 3, 4}
    assert model.judge(p, {"P1:r2": 3}, loop_bound=3).verdict == "sc"


def test_a_spin_loop_without_register_computation_is_still_not_re_entered() -> None:
    p = parse(SPIN)
    assert model.analyse(p, loop_bound=1).allowed == model.analyse(p, loop_bound=4).allowed == frozenset({(("P1:r2", 1),)})


def test_an_outcome_past_the_loop_bound_is_not_covered_never_forbidden() -> None:
    """The oracle explores at most ``--loop-bound`` iterations of a re-entered loop; an outcome
    only more iterations reach is not one the model forbids.  On a GPU the counter above takes any
    value: judged 'forbidden' it was a false finding (an r2 == 3 at bound 1, an r2 == 9 at bound
    3).  It is not covered (model.Unsupported, which properties and run report as such, exit 3);
    a spin loop's cut paths lose no outcome, so its verdicts stay."""
    import pytest

    p = parse(COUNT)
    for bound, past in ((1, 3), (3, 9)):
        with pytest.raises(model.Unsupported, match=rf"more than {bound} iteration\(s\) of a loop .*P1's loop at LC00"):
            model.judge(p, {"P1:r2": past}, loop_bound=bound)
        a = model.analyse(p, loop_bound=bound)
        with pytest.raises(model.Unsupported, match="past the oracle's loop bound"):
            a.verdict((("P1:r2", past),))
        assert a.verdict((("P1:r2", 1),)) == "sc"  # within the bound: judged
    spin = parse(SPIN)
    assert model.judge(spin, {"P1:r2": 0}).verdict == "forbidden"  # MP with release/acquire: forbidden, not cut
    assert model.analyse(spin).beyond_bound == ""


def test_check_says_never_only_within_the_loop_bound(tmp_path) -> None:
    """`fuzzgpu check` of the counter at bound 1 said 'Never' (exit 0) for r2 == 3; it is not
    covered (exit 3) until the bound reaches it (bound 3: Sometimes, exit 0)."""
    import subprocess
    import sys
    from pathlib import Path

    f = tmp_path / "count.litmus"
    f.write_text(COUNT)
    root = str(Path(__file__).resolve().parents[2])
    run = lambda *a: subprocess.run([sys.executable, "-m", "fuzzgpu", "check", *a, str(f)], capture_output=True,  # noqa: E731
                                    text=True, cwd=root, timeout=120)
    r = run()
    assert r.returncode == 3 and "Never only within the loop bound" in r.stderr and "count.litmus" in r.stderr, r.stdout + r.stderr
    r = run("--loop-bound", "3")
    assert r.returncode == 0 and "Observation SPIN-count Sometimes" in r.stdout, r.stdout + r.stderr


def test_properties_report_an_outcome_past_the_loop_bound_as_not_covered() -> None:
    """Every property (model, sc, race) over a run that shows the counter past the bound says
    'unsupported' with the reason, never 'fail' (a false finding) and never 'pass'."""
    from fuzzgpu.backends.base import Histogram
    from fuzzgpu.properties import check

    p = parse(COUNT)
    h = Histogram(keys=("P1:r2",), counts=(((("P1:r2", 1),), 10), ((("P1:r2", 7),), 5)), instances=15, backend="cuda")
    for prop in ("model", "sc", "race"):
        v = check(prop, p, h)
        assert v.status == "unsupported" and "loop bound" in v.reason, (prop, v)
