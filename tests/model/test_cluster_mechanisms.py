"""Distributed shared memory, cluster barriers, fence.mbarrier_init and remote mbarrier arrives
(issue 18): the IR's validation, the litmus dialect (parser and printer), JSON, the model's
phases, and code generation (static kernels; the harness refuses them).  The verdicts themselves
are in tests/litmus/{dsm,cluster-barrier,mbarrier-cluster} (tests/model/test_catalogues.py)."""

from __future__ import annotations

import pytest

from fuzzgpu import codegen, ir
from fuzzgpu.errors import SourceError
from fuzzgpu.ir import ClusterBarrier, Load, Location, MbarrierArrive, Placement, Program, ProgramError, Sem, Space, Store, Thread
from fuzzgpu.litmus import format_program, parse
from fuzzgpu.model import judge

DSM = """PTX DSM
{
d @ shared cta 0 = 0;
f @ shared cta 0 = 0;
}
 P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0                ;
 ld.acquire.cluster r1, f | st.weak.shared::cluster d, 1            ;
 ld.weak r2, d            | st.release.cluster.shared::cluster f, 1 ;
exists (P0:r1 == 1 /\\ P0:r2 == 0)
"""


def _dsm(**changes: str) -> str:
    text = DSM
    for old, new in changes.items():
        text = text.replace(old.replace("_", " "), new)
    return text


def test_dsm_round_trip_and_fields() -> None:
    p = parse(DSM)
    assert parse(format_program(p)) == p
    assert p.location("d").cta == 0
    st = p.thread("P1").code[0]
    assert isinstance(st, Store) and st.shared_cluster
    assert ir.program_from_json(ir.program_to_json(p)) == p


def test_json_of_a_program_without_cta_is_unchanged() -> None:
    """Corpus entries keep their text: ``cta`` appears only where it is set."""
    p = parse(DSM.replace(" cta 0", "").replace("cta 1,cluster 0", "cta 0,cluster 0").replace(".shared::cluster", ""))
    assert all("cta" not in loc for loc in ir.program_to_json(p)["locations"])


@pytest.mark.parametrize(
    "old,new,gist",
    [
        ("st.weak.shared::cluster d, 1", "st.weak d, 1", "reaches it only through .shared::cluster"),
        ("d @ shared cta 0 = 0;", "d @ shared = 0;", "declare its CTA"),
        ("P1@cta 1,cluster 0,gpu 0", "P1@cta 1,cluster 1,gpu 0", "used from 2 clusters"),
    ],
)
def test_dsm_validation(old: str, new: str, gist: str) -> None:
    with pytest.raises(SourceError, match=gist):
        parse(DSM.replace(old, new))


def test_shared_cluster_needs_a_shared_location() -> None:
    p = Program("g", (Thread("P0", Placement(), (Load("r0", "x", shared_cluster=True),)),), (Location("x"),))
    with pytest.raises(ProgramError, match="not a shared location"):
        ir.validate(p)
    p = Program("g", (Thread("P0", Placement(), (Load("r0", "x"),)),), (Location("x", cta=0),))
    with pytest.raises(ProgramError, match="only a shared location"):
        ir.validate(p)


@pytest.mark.parametrize(
    "text,gist",
    [
        ("suld.weak.shared::cluster r1, f", "for generic ld, st, atom and red"),
        ("barrier.cluster.arrive.acquire", "unknown barrier"),
        ("barrier.cluster.wait.release", "unknown barrier"),
        ("fence.mbarrier_init.release.gpu", "fence.mbarrier_init.release.cluster"),
    ],
)
def test_litmus_errors(text: str, gist: str) -> None:
    with pytest.raises(SourceError, match=gist):
        parse(DSM.replace("ld.acquire.cluster r1, f", text))


CB = """PTX CB
{
x = 0;
bar @ shared mbarrier cta 0 = 0;
}
 P0@cta 0,cluster 0,gpu 0            | P1@cta 1,cluster 0,gpu 0 ;
 st.weak x, 1                        | barrier.cluster.arrive.relaxed.aligned ;
 mbarrier.init bar, 1                | barrier.cluster.wait.acquire ;
 fence.mbarrier_init.release.cluster | mbarrier.arrive.relaxed.cluster.shared::cluster bar ;
 barrier.cluster.arrive.release      | ld.weak r1, x ;
 barrier.cluster.wait                | ;
exists (P1:r1 == 0)
"""


def test_cluster_barrier_round_trip() -> None:
    p = parse(CB)
    assert parse(format_program(p)) == p
    code = p.thread("P1").code
    assert code[0] == ClusterBarrier("arrive", Sem.RELAXED) and code[1] == ClusterBarrier("wait", Sem.ACQUIRE)
    assert p.thread("P0").code[3].effective_sem is Sem.RELEASE  # type: ignore[attr-defined]
    arrive = code[2]
    assert isinstance(arrive, MbarrierArrive) and arrive.shared_cluster
    assert ir.program_from_json(ir.program_to_json(p)) == p


def test_cluster_barrier_alternates() -> None:
    with pytest.raises(SourceError, match="arrive and wait alternate"):
        parse(CB.replace(" barrier.cluster.arrive.release      |", " barrier.cluster.wait                |"))
    bad = Program("b", (Thread("P0", Placement(), (ClusterBarrier("arrive", Sem.ACQUIRE),)),))
    with pytest.raises(ProgramError, match="cannot be .acquire"):
        ir.validate(bad)


def test_cluster_barrier_phases_pair_arrive_k_with_wait_k() -> None:
    """A release arrive of phase 0 synchronizes with the phase-0 waits only: its release forbids
    the stale x; P1's phase-1 arrive, after st y, orders nothing before P0's phase-0 wait, so P0
    may read y before or after P1 writes it (both sc; were the phases merged, r2 == 0 would be
    forbidden)."""
    text = """PTX Phases
{
x = 0; y = 0;
}
 P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 ;
 barrier.cluster.arrive   | st.weak x, 1 ;
 barrier.cluster.wait     | barrier.cluster.arrive ;
 ld.weak r1, x            | barrier.cluster.wait ;
 ld.weak r2, y            | st.weak y, 1 ;
 barrier.cluster.arrive   | barrier.cluster.arrive ;
 barrier.cluster.wait     | barrier.cluster.wait ;
exists (P0:r1 == 0 /\\ P0:r2 == 0)
"""
    p = parse(text)
    assert judge(p, {"P0:r1": 0, "P0:r2": 0}).verdict == "forbidden"
    assert judge(p, {"P0:r1": 1, "P0:r2": 0}).verdict == "sc"
    assert judge(p, {"P0:r1": 1, "P0:r2": 1}).verdict == "sc"


def test_static_kernels_map_to_the_home_cta() -> None:
    text = """PTX DSM-home-1
{
d @ shared cta 1 = 0;
}
 P0@cta 0,cluster 0,gpu 0              | P1@cta 1,cluster 0,gpu 0 ;
 ld.acquire.cluster.shared::cluster r1, d | st.release.cluster d, 1 ;
exists (P0:r1 == 0)
"""
    src = codegen.generate_static(parse(text))
    # the home CTA (cta 1) is the second CTA the program names in its cluster: rank 1
    assert 'mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(ra_) : "r"(' in src and '"r"(1u)' in src
    assert "ld.acquire.cluster.shared::cluster.u32" in src and "st.release.cluster.shared.u32" in src
    src = codegen.generate_static(parse(DSM))
    assert '"r"(0u)' in src and "st.shared::cluster.u32" in src
    cb = codegen.generate_static(parse(CB))
    for ptx in ("barrier.cluster.arrive.relaxed;", "barrier.cluster.wait.acquire;", "barrier.cluster.arrive.release;",
                "barrier.cluster.wait;", "fence.mbarrier_init.release.cluster;",
                "mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%0];"):
        assert ptx in cb, ptx


def test_harness_runs_dsm_and_cluster_barriers() -> None:
    """The harness runs distributed shared memory (mapa to the home CTA's hardware rank, the
    cluster meeting after the slots are initialised and before any CTA leaves) and cluster barriers
    (segments: every role's code up to its k-th barrier.cluster instruction, then the instruction
    once); it refuses threads with different barrier.cluster sequences, a remote arrive with no
    cluster barrier to publish the mbarrier's initialisation, and a DSM location's final value."""
    p = parse(DSM)
    assert codegen.unrunnable_reasons(p) == []
    src, spec = codegen.generate_harness(p)
    assert spec.cluster == 2 and "__cluster_dims__(2, 1, 1)" in src
    # role 1 (P1, layout rank 1) reaches the slots of layout rank 0: hardware rank (rank - 1 + 0) mod 2
    assert '"r"(((rank + 2u - 1u + 0u) % 2u))' in src
    assert src.count("barrier.cluster.arrive.release;") == 2
    reasons = " ".join(codegen.unrunnable_reasons(parse(CB)))
    assert "different barrier.cluster sequences" in reasons
    same = CB.replace("barrier.cluster.arrive.release      |", "barrier.cluster.arrive.relaxed      |")
    same = same.replace("barrier.cluster.wait.acquire ;", "barrier.cluster.wait ;")
    src, _ = codegen.generate_harness(parse(same))
    assert src.count("the litmus cluster barrier, all roles at once") == 2  # one arrive, one wait
    lone = DSM.replace("st.release.cluster.shared::cluster f, 1", "st.release.cluster.shared::cluster f, 1").replace(
        "f @ shared cta 0 = 0;", "f @ shared cta 0 = 0; bar @ shared mbarrier cta 0 = 0;").replace(
        " ld.weak r2, d            |", " mbarrier.init bar, 1     |").replace(
        "| st.release.cluster.shared::cluster f, 1 ;", "| mbarrier.arrive.release.cluster.shared::cluster bar ;")
    assert any("remote arrive" in r for r in codegen.unrunnable_reasons(parse(lone.replace("P0:r2 == 0", "P0:r1 == 0"))))
    final = parse(DSM.replace("exists (P0:r1 == 1 /\\ P0:r2 == 0)", "exists (d == 0)"))
    assert any("final value of distributed shared location d" in r for r in codegen.unrunnable_reasons(final))
    with pytest.raises(codegen.Unrunnable):
        codegen.generate_harness(parse(CB))


def test_dsm_accesses_share_the_location() -> None:
    """A .shared::cluster access and the owner's own access are one location at one address
    (fuzzgpu's reading of mapa): coherence relates them (CoRR across the two views)."""
    text = """PTX CoRR-DSM
{
s @ shared cta 0 = 0;
}
 P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 ;
 st.relaxed.cluster s, 1  | ld.relaxed.cluster.shared::cluster r1, s ;
                          | ld.relaxed.cluster.shared::cluster r2, s ;
exists (P1:r1 == 1 /\\ P1:r2 == 0)
"""
    assert judge(parse(text), {"P1:r1": 1, "P1:r2": 0}).verdict == "forbidden"
    assert Space.SHARED is parse(text).location("s").space


@pytest.mark.parametrize("ctas, runnable", [(2, True), (3, False), (4, True), (5, False)])
def test_the_harness_runs_clusters_of_a_power_of_two_ctas(ctas: int, runnable: bool) -> None:
    """An instance's index is (cluster index * C + CTA rank) << 8 | lane over a power-of-two number
    of instances, so the test CTAs (a power of two) are whole clusters only when C is one: a
    cluster of 3 CTAs is refused by name, not at launch with a test_ctas the user cannot fix (an
    H200 campaign met "test_ctas 256 is not a multiple of the cluster size 3")."""
    cols = " | ".join(f"P{k}@cta {k},cluster 0,gpu 0" for k in range(ctas))
    body = " | ".join(["st.relaxed.gpu x, 1"] + [f"ld.relaxed.gpu r{k}, x" for k in range(1, ctas)])
    keys = " ".join(f"P{k}:r{k};" for k in range(1, ctas))
    p = parse(f"PTX C{ctas}\n{{\nx=0;\n}}\n {cols} ;\n {body} ;\nlocations [{keys}]\n")
    reasons = [r for r in codegen.unrunnable_reasons(p) if "cluster" in r]
    assert (reasons == []) is runnable, reasons
    if not runnable:
        assert reasons == [f"{ctas} CTAs in one cluster: the harness runs clusters of 1, 2, 4 or 8 CTAs "
                           "(its test CTAs, a power of two, are whole clusters)"]
