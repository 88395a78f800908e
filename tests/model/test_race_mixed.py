"""Class L (mixed-size accesses) of issue 32: the class's number and the fix (the sizes made to agree);
the hand-written catalogue tests/litmus/race-mixed (verdicts argued from the PTX ISA in each file) is
checked row by row in test_race_catalogues.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzgpu.model.race import analyse_races
from fuzzgpu.bug_classes import CLASS_NAMES, CLASSES

from race_catalogue import fix_matches

HERE = Path(__file__).resolve().parents[1] / "litmus" / "race-mixed"


def test_the_class_has_its_fixed_number():
    assert CLASS_NAMES[19] == "mixed-size-access" and "L." in CLASSES[19]


@pytest.mark.parametrize("racy, fixed", [("RACE-19-mixed-size-flag", "NORACE-19-same-size-flag"),
                                         ("RACE-19-narrow-store-wide-load", "NORACE-19-same-size-flag"),
                                         ("RACE-19-byte-poll-of-half-word-store", "NORACE-19-both-narrow-flag")])
def test_the_fix_makes_the_sizes_agree(racy, fixed):
    fixed_program = fix_matches(HERE, racy, fixed)
    assert not analyse_races(fixed_program).is_racy


#: a TMA store whose issuing thread waits for its write in full (cp.async.bulk.wait_group 0, no .read), then
#: a mixed-size flag handoff: PTX ISA cp.async.bulk.wait_group (without .read the wait covers "Writing to their
#: respective destination locations"), so the completion did not fail; the 16-bit acquire of the 32-bit flag
#: is not morally strong with the release (8.7: "they overlap completely" fails), so the handoff synchronizes
#: nothing (8.9.4).  The finding is class L's, not class C's (10: a .read wait taken for write completion).
#: (The general generator's class-10 search shrank to this program while the completion was named first.)
WAITED_TMA_STORE_MIXED_FLAG = """PTX WAITED-TMA-STORE-MIXED-FLAG
{
g = 0;
f = 0;
s @ shared = 0;
}
 P0@cta 0,gpu 0                     | P1@cta 0,gpu 0           ;
 st.weak s, 2                       | LC00:                    ;
 fence.proxy.async.shared::cta      | ld.acquire.cta.u16 r0, f ;
 cp.async.bulk.bulk_group g, s, 4   | bne r0, 3, LC00          ;
 cp.async.bulk.commit_group         | ld.weak r1, g            ;
 cp.async.bulk.wait_group{read} 0   |                          ;
 st.release.cta f, 3                |                          ;
exists (P1:r0 == 3 /\\ P1:r1 == 0)
"""


@pytest.mark.parametrize("read, cls", [("", 19), (".read", 10)])
def test_a_waited_copy_then_a_mixed_size_flag_is_the_flags_failure(read, cls):
    from fuzzgpu.bug_classes import finding_class
    from fuzzgpu.litmus import parse

    p = parse(WAITED_TMA_STORE_MIXED_FLAG.replace("{read}", read))
    ra = analyse_races(p)
    assert ra.is_racy
    found = {finding_class(p, rp.mechanism, rp.other_at) for pairs in ra.racy.values() for rp in pairs}
    assert cls in found and (cls == 10 or 10 not in found), found


#: the same for cp.async (class 4: "cp.async data consumed without cp.async.wait_group/wait_all in the issuing
#: thread"): PTX ISA cp.async.wait_all "is equivalent to cp.async.commit_group followed by cp.async.wait_group
#: 0", which waits for the completion of the thread's cp.async operations; after it, the data is the thread's
#: own write, and only the mixed-size flag fails.  Without the wait the copy's completion failed too (class 4).
WAITED_CP_ASYNC_MIXED_FLAG = """PTX WAITED-CP-ASYNC-MIXED-FLAG
{
g = 7;
f = 0;
s @ shared = 0;
}
 P0@cta 0,gpu 0      | P1@cta 0,gpu 0           ;
 cp.async s, g       | LC00:                    ;
 {wait}              | ld.acquire.cta.u16 r0, f ;
 st.release.cta f, 3 | bne r0, 3, LC00          ;
                     | ld.weak r1, s            ;
exists (P1:r0 == 3 /\\ P1:r1 == 0)
"""


@pytest.mark.parametrize("wait, cls", [("cp.async.wait_all  ", 19), ("st.weak g, 7       ", 4)])
def test_a_waited_cp_async_then_a_mixed_size_flag_is_the_flags_failure(wait, cls):
    from fuzzgpu.bug_classes import finding_class
    from fuzzgpu.litmus import parse

    p = parse(WAITED_CP_ASYNC_MIXED_FLAG.replace("{wait}             ", wait))
    ra = analyse_races(p)
    found = {finding_class(p, rp.mechanism, rp.other_at) for pairs in ra.racy.values() for rp in pairs}
    assert cls in found and (cls == 4 or 4 not in found), found
