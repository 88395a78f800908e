"""The fix search's race analyses enumerate fewer paths of a program with an mbarrier
(``events.compute_traces(prune_bars=True)``): a read of an mbarrier by a thread's own operation forks
only on the values its initial value, another thread or the thread's own earlier operations give it,
never on one only the thread's later operations on it write.

Why the answers cannot change (``model.bar_reads.later_writes_unreadable``): PTX ISA 9.x, 8.10 "Axioms",
Causality -- a read does not read from a write it precedes in causality order; base causality order
includes program order, and proxy-preserved base causality keeps a program-order pair of two
generic-proxy accesses of one virtual address.  An mbarrier operation's accesses are generic-proxy,
so a read of an mbarrier that only its own thread's later operation on it could have written is in no
consistent execution.  The race analysis reads consistent executions only: its answer is the same,
from fewer paths -- but ``beyond_bound``, which the pruned paths may leave empty where the full enumeration
was cut by the loop bound only in paths no consistent execution takes (the fix search does not read it).
Where a thread may write the mbarrier's location otherwise (through another name of it: another virtual
address, or naming it in another role) none of its reads of it is pruned.  The value domains, ``explain`` and liveness read every candidate and keep the full
enumeration (here too: the domain of a wait's register, and the Causality explanation).

Checked on a one-thread litmus test, on the fix search's dearest program of a campaign, and on drawn
programs."""

from __future__ import annotations

import tarfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from fuzzgpu import litmus, model, strategies
from fuzzgpu.model import events, race, values
from fuzzgpu.profiles import load_profile

ROOT = Path(__file__).resolve().parents[2]

#: the wait precedes the thread's own arrive in program order: the wait cannot read the phase that
#: arrive completes (Causality, above), so r1 == 1 is forbidden; every other value the wait may read
#: comes from the init (its own earlier operation) or the initial (uninitialised) value
OWN_LATER = litmus.parse("""PTX MBAR-own-later-arrive
"one thread initialises an mbarrier (count 1), waits on its phase 0, then arrives"
{
bar @ shared mbarrier = 0;
}
 P0@cta 0,gpu 0                      ;
 mbarrier.init bar, 1                ;
 mbarrier.try_wait.parity r1, bar, 0 ;
 mbarrier.arrive bar                 ;
exists (P0:r1 == 1)
""")


#: a hostile review's program (2026-12-06): ``y`` another name of the mbarrier's location -- a plain ``st`` through it
#: is another virtual address, which proxy-preserved base causality does not order after the thread's earlier read
#: of ``bar`` (the arrive's): that read may return 5 (Causality does not forbid it) and the arrive write 5's update
#: back.  No read of the mbarrier is pruned where its thread may write its location otherwise.
ALIAS = litmus.parse("""PTX MBAR-alias-st
"an arrive, then a plain st and ld through another name of the mbarrier's location"
{
bar @ shared mbarrier = 0;
y @ generic aliases bar;
}
 P0@cta 0,gpu 0      ;
 mbarrier.arrive bar ;
 st.weak y, 5        ;
 ld.weak r0, y       ;
exists (P0:r0 == 1)
""")

#: the same review: a spin loop whose re-entry only a read of the phase its own later arrive completes would take --
#: the full enumeration's paths are cut at the loop bound there, the pruned ones never reach it
CUT = litmus.parse("""PTX MBAR-own-later-spin
"a wait loop on a phase only the thread's own later arrive completes"
{
bar @ shared mbarrier = 0;
}
 P0@cta 0,gpu 0                      ;
 mbarrier.init bar, 1                ;
 L0:                                 ;
 add r2, r2, 1                       ;
 mbarrier.try_wait.parity r1, bar, 0 ;
 beq r1, 1, L0                       ;
 mbarrier.arrive bar                 ;
exists (P0:r2 == 1)
""")


def cold() -> None:
    events._TRACES.clear()
    events._THREADS.clear()
    race.clear_cache()
    values._DOMAINS.clear()


def answer(p, prune_bars: bool, loop_bound: int = 1) -> tuple:
    """The race analysis's answer, from cold caches (without its timing and ``beyond_bound``: :func:`bound`), and
    the fix search's question of it: which of its possible outcomes an execution with no stale read produces."""
    cold()
    ra = race.analyse_races(p, loop_bound, prune_bars=prune_bars)
    cold()
    delivered = race.analyse_races(p, loop_bound, delivered=ra.possible, prune_bars=prune_bars).delivered
    return (ra.keys, ra.possible, ra.clean, frozenset(ra.racy.items()), frozenset(ra.races), delivered)


def bound(p, loop_bound: int = 1) -> tuple[str, str]:
    """``beyond_bound`` over every path and pruned: the pruned paths may be cut by the loop bound at fewer loops
    (a cut path may be one no consistent execution takes), never at more."""
    cold()
    full = race.analyse_races(p, loop_bound).beyond_bound
    cold()
    return full, race.analyse_races(p, loop_bound, prune_bars=True).beyond_bound


def agree(p, loop_bound: int = 1) -> bool:
    full, pruned = bound(p, loop_bound)
    return answer(p, True, loop_bound) == answer(p, False, loop_bound) and pruned in (full, "")


def test_a_wait_does_not_read_the_phase_its_own_later_arrive_completes() -> None:
    cold()
    full = events.program_traces(OWN_LATER)
    pruned = events.program_traces(OWN_LATER, prune_bars=True)
    # unpruned: the wait reads any of the three values of the mbarrier, the arrive likewise (9 paths);
    # pruned: the wait never reads the completed phase, which only the later arrive writes (4)
    assert [len(t) for t in full.traces] == [9] and [len(t) for t in pruned.traces] == [4]
    assert 1 in {dict(tr.regs)["r1"] for tr in full.traces[0]} and {dict(tr.regs)["r1"] for tr in pruned.traces[0]} == {0}
    assert agree(OWN_LATER)
    assert model.judge(OWN_LATER, {"P0:r1": 1}).verdict == "forbidden"
    # the full enumeration stays where every candidate is read: the explanation is the Causality cycle,
    # and the register's domain holds the value (a run showing it would be a forbidden outcome, not an
    # unwritten value)
    cold()
    assert model.explain_forbidden(OWN_LATER, {"P0:r1": 1})[1][0].startswith("Causality (Axioms: Causality)")
    assert dict(values.domains(OWN_LATER)[0])["P0:r1"] == frozenset({0, 1})


def test_the_dearest_fix_search_program_of_a_campaign(tmp_path: Path) -> None:
    """``27d72a0860c81f70`` of the 600 s row's corpus (the page's inspected program: one thread of 32,928
    paths, its mbarrier read three times over a domain of 13 values): 3,456 paths pruned, the same answer."""
    from fuzzgpu.corpus.entry import load_entry

    with tarfile.open(ROOT / "bench" / "results" / "throughput" / "h100-600s-2665391-w20" / "corpus.tar.gz") as tf:
        tf.extract("corpus/27d72a0860c81f70.json", tmp_path, filter="data")
    p = load_entry(tmp_path / "corpus" / "27d72a0860c81f70.json").program
    cold()
    assert [len(t) for t in events.program_traces(p).traces] == [1, 32_928]
    assert [len(t) for t in events.program_traces(p, prune_bars=True).traces] == [1, 3_456]
    assert agree(p) and bound(p) == ("", "")


def test_no_read_is_pruned_where_its_thread_may_write_the_location_otherwise() -> None:
    cold()
    assert [len(t) for t in events.program_traces(ALIAS, prune_bars=True).traces] == [len(t) for t in events.program_traces(ALIAS).traces]
    assert agree(ALIAS) and any(o == (("P0:r0", -1048571),) for o in race.analyse_races(ALIAS, prune_bars=True).possible)


def test_a_loop_cut_only_in_paths_no_consistent_execution_takes() -> None:
    """The same outcome sets and races; the full enumeration says a loop was cut (its outcomes beyond the bound
    are not covered), the pruned one cut none (``beyond_bound`` empty): the fix search does not read it."""
    for lb in (1, 2):
        full, pruned = bound(CUT, lb)
        assert full and not pruned and agree(CUT, lb)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(strategies.weighted(load_profile("all").shapes, load_profile("all").options))
def test_drawn_programs_get_the_same_race_analysis(p) -> None:
    try:
        answer(p, False)
    except model.Unsupported:
        return
    assert agree(p)
