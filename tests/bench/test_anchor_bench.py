"""bench/anchor.py, on the CPU: the conversion of a kernel written in the anchor's style (the
variant's `#ifdef` blocks, each thread's libcu++ accesses, the check kernel's `weak` line) into a
litmus test, judged by the oracle; and bench/results/anchor/README.md's combined table against the
two runs' raw figures (anchor.json).  The artifact itself is not in the repository (no licence):
the kernel below is a stand-in written for this test, in its style."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from fuzzgpu import model
from paths import bench_script

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results" / "anchor"

KERNEL = r"""
__global__ void litmus_test(d_atomic_uint* test_locations) {
  if (shuffled_workgroup < kernel_params->testing_workgroups) {
#ifdef RELAXED
    cuda::memory_order store_order = cuda::memory_order_relaxed;
    cuda::memory_order load_order = cuda::memory_order_relaxed;
    #define FENCE_0()
    #define FENCE_1()
#elif defined(BOTH_FENCE)
    cuda::memory_order store_order = cuda::memory_order_relaxed;
    cuda::memory_order load_order = cuda::memory_order_relaxed;
    #define FENCE_0() cuda::atomic_thread_fence(cuda::memory_order_acq_rel, FENCE_SCOPE);
    #define FENCE_1() cuda::atomic_thread_fence(cuda::memory_order_acq_rel, FENCE_SCOPE);
#else
    cuda::memory_order store_order = cuda::memory_order_release;
    cuda::memory_order load_order = cuda::memory_order_acquire;
    #define FENCE_0()
    #define FENCE_1()
#endif
    DEFINE_IDS();
    PRE_STRESS();
    if (id_0 != id_1) {
      test_locations[x_0].store(1, cuda::memory_order_relaxed);
      FENCE_0()
      test_locations[y_0].store(1, store_order);
      uint r0 = test_locations[y_1].load(load_order);
      FENCE_1()
      uint r1 = test_locations[x_1].load(cuda::memory_order_relaxed);
      cuda::atomic_thread_fence(cuda::memory_order_seq_cst);
      read_results[id_1].r0 = r0;
    }
  }
}
__global__ void check_results(TestResults* test_results) {
  if (r0 == 1 && r1 == 1) {
    test_results->res0.fetch_add(1);
  } else if (r0 == 1 && r1 == 0) {
    test_results->weak.fetch_add(1);
  }
}
"""


def _bench():
    return bench_script("anchor.py")


def _convert(tmp_path: Path, name: str) -> str:
    a = _bench()
    (tmp_path / "kernels").mkdir(exist_ok=True)
    (tmp_path / "kernels" / "mpx.cu").write_text(KERNEL)
    a.KERNEL["mpx"] = "mpx"
    m = a.NAME.match(name)
    assert m is not None
    v = a.Variant(name, m["fam"], m["tb"], m["scope"], m["fs"], m["var"], "INSTANCE", True)
    return a.convert(v, tmp_path)


def test_a_variant_becomes_the_litmus_test_its_kernel_runs(tmp_path: Path) -> None:
    text = _convert(tmp_path, "mpx_TB_0_1_SCOPE_BLOCK_FENCE_SCOPE_DEVICE_BOTH_FENCE")
    body = text.splitlines()
    assert " P0@cta 0,gpu 0      | P1@cta 1,gpu 0       ;" in body
    assert " fence.acq_rel.gpu   | fence.acq_rel.gpu    ;" in body  # FENCE_SCOPE_DEVICE; accesses at SCOPE_BLOCK
    assert " st.relaxed.cta y, 1 | ld.relaxed.cta r1, x ;" in body
    assert body[-1] == "exists (P1:r0 == 1 /\\ P1:r1 == 0)"
    # the trailing seq_cst fence orders nothing of the test: not converted
    assert "fence.sc" not in text
    p = _bench()._parse(text)
    # the flag accesses are .cta-scoped and the threads in different CTAs: not morally strong (PTX ISA,
    # Memory Consistency Model, "Morally strong operations": each in the other's scope), so the
    # .gpu fences never synchronise through them and MP's weak outcome is allowed
    assert model.check_condition(p).witness_reachable


def test_the_else_block_and_release_acquire_in_one_cta(tmp_path: Path) -> None:
    text = _convert(tmp_path, "mpx_TB_01_SCOPE_BLOCK_NO_FENCE_DEFAULTED")
    assert " st.relaxed.cta x, 1 | ld.acquire.cta r0, y ;" in text.splitlines()
    assert " st.release.cta y, 1 | ld.relaxed.cta r1, x ;" in text.splitlines()
    assert "P0@cta 0,gpu 0" in text and "P1@cta 0,gpu 0" in text
    # release/acquire at .cta inside one CTA: MP's weak outcome is forbidden
    assert not model.check_condition(_bench()._parse(text)).witness_reachable


def test_the_full_runs_table_is_the_runs_figures(tmp_path: Path) -> None:
    """bench/results/anchor/README.md's table of every variant is what ``--merge`` makes of the four
    runs' anchor.json, row for row; its headline (variants each tool showed, alone or both) counted
    here again from the rows, apart from the script's table; and no forbidden variant observed."""
    full = RESULTS / "h200-full"
    runs = [full / f"run{x}" for x in "ABDC"]
    assert _bench().merge(runs, tmp_path) == 0  # 0: no forbidden outcome observed by fuzzgpu
    made = (tmp_path / "anchor-merged.md").read_text()
    assert made == (full / "anchor-merged.md").read_text()
    page = (RESULTS / "h200-full" / "README.md").read_text()
    table = [ln for ln in made.splitlines() if ln.startswith("| ") and not ln.startswith("| family")]
    assert len(table) == 16 and all(ln in page for ln in table)
    kept: dict[str, dict] = {}  # the first run in which both tools ran a variant
    for d in runs:
        for r in json.loads((d / "anchor.json").read_text())["rows"]:
            both = "condition" in r["fuzzgpu"] and "condition" in r["anchor"]
            if r["variant"] not in kept or (both and not kept[r["variant"]]["both"]):
                kept[r["variant"]] = {"both": both, **r}
    seen = [r for r in kept.values() if r["seen"] and not r["forbidden"]]
    fz = {r["variant"] for r in seen if r["fuzzgpu"].get("condition", 0) > 0}
    an = {r["variant"] for r in seen if r["anchor"].get("condition", 0) > 0}
    assert (len(seen), len(fz), len(an), len(fz - an), len(an - fz)) == (559, 375, 366, 39, 30)
    assert "fuzzgpu 375 of 559 (67%), the anchor's runner 366 (65%); 336 by both, 39 by fuzzgpu alone, 30 by the\nrunner alone" in page
    forbidden = [r for r in kept.values() if r["forbidden"]]
    assert len(forbidden) == 98 and all(r["fuzzgpu"]["condition"] == 0 and r["fuzzgpu"]["model_forbidden"] == 0 for r in forbidden)


def _mechanisms():
    return bench_script("anchor_mechanisms.py")


def test_the_residue_pass_and_the_present_state_are_the_runs_figures(tmp_path: Path) -> None:
    """The 2 GPU-s pass's table is what ``--merge`` makes of its two runs, and the page's headline
    (what each tool showed over every run, what only the runner showed) is counted again here from
    the seven runs' rows and the mechanism calls' searches."""
    res = RESULTS / "h200-residue-2s"
    assert _bench().merge([res / "runA", res / "runB"], tmp_path) == 0
    made = (tmp_path / "anchor-merged.md").read_text()
    assert made == (res / "anchor-merged.md").read_text()
    page = (RESULTS / "h200-residue-2s" / "README.md").read_text()
    assert all(ln in page for ln in made.splitlines() if ln.startswith("| "))
    fz: dict[str, int] = {}
    an: dict[str, int] = {}
    seen: set[str] = set()
    runs = [RESULTS / "h200-full" / f"run{x}" for x in "ABCD"] + [RESULTS / "h200-full" / "rerun", res / "runA", res / "runB",
                                                                   RESULTS / "h200-one-run"]
    for d in runs:
        for r in json.loads((d / "anchor.json").read_text())["rows"]:
            if r["seen"]:
                seen.add(r["variant"])
            fz[r["variant"]] = fz.get(r["variant"], 0) + r["fuzzgpu"].get("condition", 0)
            an[r["variant"]] = an.get(r["variant"], 0) + r["anchor"].get("condition", 0)
    shown = {v for v in seen if fz[v] > 0}
    searched = dict(fz)
    cta = RESULTS / "h200-cta"
    for call in (res / "mechanisms", res / "mechanisms-fz", cta / "sizes", cta / "runner-only", cta / "residue-a",
                 cta / "residue-b", cta / "all-0.5s", cta / "unshown-1s"):
        for v, r in json.loads((call / "mechanisms.json").read_text())["variants"].items():
            # fuzzgpu's searches and fixed configurations (n/a: a CTA too small for the roles, not run)
            searched[v] = searched.get(v, 0) + r["fuzzgpu"].get("tune", {}).get("condition", 0) + sum(
                x["condition"] or 0 for x in r["fuzzgpu"]["fixed"].values())
            an[v] = an.get(v, 0) + r["anchor"].get("exposing_run", {}).get("weak", 0)
    runner = {v for v in seen if an[v] > 0}
    only = {v for v in runner if searched[v] == 0}
    assert (len(seen), len(shown), sum(searched[v] > 0 for v in seen), len(runner), len(shown | runner)) \
        == (559, 436, 452, 383, 441)
    assert sum(searched[v] > 0 or an[v] > 0 for v in seen) == 452 and not only
    flat = " ".join((RESULTS / "h200-one-run" / "README.md").read_text().split())
    assert "fuzzgpu showed 452 of the 559 (80.9%), the runner 383 (68.5%), either of them 452: every variant the runner " \
           "ever showed here, fuzzgpu showed too" in flat


def test_the_one_pass_over_every_variant_is_its_runs_figures() -> None:
    """The present state's one-pass table: per family, the new 0.5 GPU-s pass beside the first pass's
    two tools (anchor-merged.json), counted again here."""
    new = json.loads((RESULTS / "h200-cta" / "all-0.5s" / "mechanisms.json").read_text())["variants"]
    old = [r for r in json.loads((RESULTS / "h200-full" / "anchor-merged.json").read_text())["rows"] if r["seen"]]
    assert len(new) == len(old) == 559
    fams: dict[str, list[int]] = {}
    for r in old:
        t = new[r["variant"]]["fuzzgpu"]["tune"]
        # the search's budget: one run past its estimate took one variant to 0.587 GPU-s (the page says so)
        assert t["forbidden"] == 0 and t["gpu_s"] <= 0.59
        f = fams.setdefault(r["variant"].split("_TB")[0], [0, 0, 0, 0, 0])
        for i, x in enumerate((1, r["fuzzgpu"].get("condition", 0) > 0, r["anchor"].get("condition", 0) > 0,
                               t["condition"] > 0, t["condition"] > 0 and "cta_threads=" in t["best"])):
            f[i] += int(x)
    page = (RESULTS / "h200-cta" / "README.md").read_text()
    for k, f in fams.items():
        assert f"| {k} | " + " | ".join(map(str, f)) + " |" in page
    total = [sum(f[i] for f in fams.values()) for i in range(5)]
    assert total == [559, 375, 366, 435, 232] and "| **all** | 559 | 375 | 366 | **435** | 232 |" in page
    spent = sorted(new[r["variant"]]["fuzzgpu"]["tune"]["gpu_s"] for r in old)
    assert round(sum(spent)) == 278 and spent[-1] == 0.587 and spent[-2] <= 0.515


def test_the_cta_size_calls_ran_what_configs_cta_makes() -> None:
    """Each configuration the CTA-size calls name is the default's or the runner's mirrored one at
    that size (StressConfig.with_cta_threads), the mirror of the seeded draw anchor.py makes."""
    import random

    from fuzzgpu.stress.space import StressConfig

    m = _mechanisms()
    for call in ("sizes", "runner-only"):
        for name, v in json.loads((RESULTS / "h200-cta" / call / "mechanisms.json").read_text())["variants"].items():
            mirrored = StressConfig(**m.mirror(_bench().random_params(random.Random(f"31:{name}"))))
            for what, base in (("default", StressConfig()), ("mirror", mirrored)):
                for ct in (256, 128, 64, 32):
                    assert v["fuzzgpu"]["configs"][f"{what}, cta_threads {ct}"] == base.with_cta_threads(ct).describe()


def test_the_cta_size_tables_and_the_residue_pass_are_the_calls_figures() -> None:
    """The CTA-size section's tables are the calls' JSON, and its residue figures (42 of 159 shown,
    the best configurations' CTA sizes, nothing forbidden) are counted again here."""
    cta = RESULTS / "h200-cta"
    page = (RESULTS / "h200-cta" / "README.md").read_text()
    for call, tag in (("sizes", "m"), ("runner-only", "r")):
        doc = json.loads((cta / call / "mechanisms.json").read_text())
        names = list(doc["variants"])
        for k in doc["variants"][names[0]]["fuzzgpu"]["fixed"]:
            cells = [doc["variants"][n]["fuzzgpu"]["fixed"][k]["condition"] for n in names]
            assert f"| {k} | " + " | ".join("n/a" if c is None else str(c) for c in cells) + " |" in page
            assert all(doc["variants"][n]["fuzzgpu"]["fixed"][k].get("forbidden", 0) == 0 for n in names)
        assert ", ".join(f"{tag}{i + 1} `{n}`" for i, n in enumerate(names)) in page
    sizes = json.loads((cta / "sizes" / "mechanisms.json").read_text())["variants"]
    flat = " ".join(page.split())
    for ct, unit in ((256, "in 256-thread CTAs"), (128, "in 128"), (64, "in 64"), (32, "in 32")):
        rates = [x["instances"] / x["seconds"] / 1e9 for v in sizes.values()
                 for k, x in v["fuzzgpu"]["fixed"].items() if k == f"default, cta_threads {ct}" and x["condition"] is not None]
        assert f"{min(rates):.2f}-{max(rates):.2f}e9/s {unit}" in flat, ct
    shown, small, forbidden, gpu_s = 0, 0, 0, 0.0
    for half in ("residue-a", "residue-b"):
        for r in json.loads((cta / half / "mechanisms.json").read_text())["variants"].values():
            fz = r["fuzzgpu"]
            forbidden += fz["tune"]["forbidden"] + sum(x["forbidden"] for x in fz["fixed"].values())
            gpu_s += fz["tune"]["gpu_s"]
            if fz["tune"]["condition"] + sum(x["condition"] for x in fz["fixed"].values()):
                shown += 1
                small += "cta_threads=" in fz["tune"]["best"]
    assert (shown, small, forbidden, round(gpu_s)) == (42, 40, 0, 318)
    assert "**42 shown**" in page and "318 GPU-s" in page


def test_the_runner_one_at_a_time_table_is_the_calls_figures() -> None:
    m = _mechanisms()
    doc = json.loads((RESULTS / "h200-residue-2s" / "mechanisms" / "mechanisms.json").read_text())
    rows = [ln for ln in m.compact_table(doc) if ln.startswith("| ")]
    page = (RESULTS / "h200-residue-2s" / "README.md").read_text()
    assert len(rows) == 23 and all(ln in page for ln in rows)


def test_the_mirror_of_a_runner_configuration() -> None:
    m = _mechanisms()
    base = {"testingWorkgroups": 617, "maxWorkgroups": 1012, "workgroupSize": 194, "shufflePct": 83, "barrierPct": 80,
            "stressLineSize": 64, "stressTargetLines": 5, "memStride": 2, "memStressPct": 53, "memStressIterations": 815,
            "memStressPattern": 3, "preStressPct": 99, "preStressIterations": 21, "preStressPattern": 1,
            "stressAssignmentStrategy": 1}
    got = m.mirror(base)
    # 617 x 194 threads ~ 467 CTAs of 256 -> 512; its pattern 1 is store;load, fuzzgpu's 0
    assert (got["test_ctas"], got["pre_stress_pattern"], got["pre_stress"], got["stride"]) == (512, 0, 20, 2)
    # the runner's stress workgroups hammer only when preStressIterations is a pattern code (its
    # MEM_STRESS passes it as do_stress's pattern): none here
    assert got["stress"] == 0 and got["stress_word"] and got["stripe_ctas"] and not got["permute_threads"]
    two = m.mirror({**base, "preStressIterations": 0})
    # (1012 - 617) x 194 / 256 workgroups' threads, 53% of them; pattern 0 (two stores) is fuzzgpu's 1
    assert two["stress"] == (1012 - 617) * 194 // 256 * 53 // 100 and two["stress_pattern"] == 1
    assert {m.PATTERN[k] for k in range(4)} == {0, 1, 2, 3}
    # 194 threads a workgroup: nearer 256 than 128; 158 (v3's exposing size): 128, its 397 workgroups 490 CTAs -> 512;
    # 40: 32 (the smallest CTA the harness runs)
    assert got["cta_threads"] == 256
    assert (m.mirror({**base, "workgroupSize": 158, "testingWorkgroups": 397})["cta_threads"],
            m.mirror({**base, "workgroupSize": 158, "testingWorkgroups": 397})["test_ctas"]) == (128, 512)
    assert m.mirror({**base, "workgroupSize": 40})["cta_threads"] == 32


def test_the_union_over_runs_and_its_split_by_the_artifacts_gpus(tmp_path: Path) -> None:
    """bench/anchor_union.py: the union over every run is the page's headline; its split by the GPUs
    of the artifact's results table, on a stand-in table (the artifact's own is not in the repository)
    naming two of the variants, puts each where its columns say."""
    u = bench_script("anchor_union.py")
    res = RESULTS / "h200-residue-2s"
    runs = [RESULTS / "h200-full" / f"run{x}" for x in "ABCD"] + [RESULTS / "h200-full" / "rerun", res / "runA", res / "runB"]
    every = u.union(runs, [res / "mechanisms", res / "mechanisms-fz"])
    (total,) = u.table(every, {})
    # the mechanism calls' fixed configurations count too: one variant more than their searches alone (430)
    assert (total["variants"], total["fuzzgpu"], total["runner"], total["either"], total["runner only"]) == (559, 431, 379, 436, 5)
    assert u.table(u.union(runs), {})[0]["fuzzgpu"] == 428
    shown = sorted(v for v, x in every.items() if x["seen"] and x["fuzzgpu"] > 0)[:2]
    (tmp_path / "pldi26-output").mkdir()
    (tmp_path / "pldi26-output" / "results.csv").write_text(
        "test,base,strengthened,a100,h100,gh200\n"
        f"{shown[0]},INSTANCE,INSTANCE,not seen,seen,seen\n{shown[1]},INSTANCE,INSTANCE,not seen,seen,not seen\n")
    by = u.groups(tmp_path)
    assert by == {shown[0]: "H100 and GH200", shown[1]: "H100 only"}
    table = u.table(every, by)
    assert [r["shown by (the artifact)"] for r in table] == ["H100 and GH200", "H100 only", "all"]
    rows = {r["shown by (the artifact)"]: r for r in table}
    assert rows["H100 and GH200"]["variants"] == rows["H100 only"]["variants"] == 1 and rows["all"]["variants"] == 559
    # the variants the stand-in table does not name are counted under "all" alone
    assert rows["H100 and GH200"]["fuzzgpu"] == rows["H100 only"]["fuzzgpu"] == 1


def test_the_gh200_log_gives_what_the_artifact_spent_on_each_variant(tmp_path: Path) -> None:
    """bench/anchor_union.py's effort table: the artifact's GH200 log (a stand-in in its format: the
    log is not in the repository) read per variant -- its names spelled as the results table spells
    them, its iterations summed -- and set beside the instances fuzzgpu ran over the runs."""
    u = bench_script("anchor_union.py")
    assert u.log_name("3.2w-TB_0_1_2-SCOPE_BLOCK-FENCE_SCOPE_DEVICE-FENCE_02") == "three_2w_TB_0_1_2_SCOPE_BLOCK_FENCE_SCOPE_DEVICE_FENCE_02"
    assert u.log_name("wrw+2w-TB_012-SCOPE_DEVICE-NO_FENCE-RELAXED") == "wrw_2w_TB_012_SCOPE_DEVICE_NO_FENCE_RELAXED"
    assert u.log_name("iriw-TB_0_1_23-SCOPE_BLOCK-NO_FENCE-ACQUIRE") == "iriw_TB_0_1_23_SCOPE_BLOCK_NO_FENCE_ACQUIRE"
    (tmp_path / "pldi26-output").mkdir()
    (tmp_path / "pldi26-output" / "gh200.txt").write_text(
        "Compiling z6-3-TB_012-SCOPE_BLOCK-FENCE_SCOPE_BLOCK-FENCE_01 runner\nIteration: 0\n"
        "  Test z6-3-TB_012-SCOPE_BLOCK-FENCE_SCOPE_BLOCK-FENCE_01 weak: 0, total: 71280000, rate: 0 per second\n"
        "  Test wwc-TB_0_1_2-SCOPE_BLOCK-NO_FENCE-ACQ_ACQ weak: 3, total: 1000, rate: 9 per second\nIteration: 1\n"
        "  Test z6-3-TB_012-SCOPE_BLOCK-FENCE_SCOPE_BLOCK-FENCE_01 weak: 2, total: 28720000, rate: 1 per second\n")
    gh = u.gh200_effort(tmp_path)
    assert gh == {"z6_3_TB_012_SCOPE_BLOCK_FENCE_SCOPE_BLOCK_FENCE_01": {"configurations": 2, "instances": 100_000_000, "weak": 2},
                  "wwc_TB_0_1_2_SCOPE_BLOCK_NO_FENCE_ACQ_ACQ": {"configurations": 1, "instances": 1000, "weak": 3}}
    every = {"z6_3_TB_012_SCOPE_BLOCK_FENCE_SCOPE_BLOCK_FENCE_01": {"seen": True, "fuzzgpu": 0, "anchor": 0, "fuzzgpu_instances": 7},
             "wwc_TB_0_1_2_SCOPE_BLOCK_NO_FENCE_ACQ_ACQ": {"seen": True, "fuzzgpu": 5, "anchor": 0, "fuzzgpu_instances": 9},
             "not_in_the_log": {"seen": True, "fuzzgpu": 0, "anchor": 0, "fuzzgpu_instances": 11}}
    rows = u.effort_table(every, {v: "H100 only" for v in every}, gh)
    assert [(r["fuzzgpu showed it"], r["variants"], r["in the GH200's log"], r["GH200 weak instances (sum)"]) for r in rows] == \
        [("yes", 1, 1, 3), ("no", 2, 1, 2)]
    assert rows[1]["GH200 instances / variant (median)"] == "1e+08" and rows[1]["fuzzgpu instances / variant (median, the anchor.py runs)"] == "9"


def test_the_pages_effort_table_is_union_json() -> None:
    """The anchor page's effort table is union.json's, and union.json's fuzzgpu instances are what the committed runs give."""
    u = bench_script("anchor_union.py")
    doc = json.loads((RESULTS / "h200-mended" / "union.json").read_text())
    page = (RESULTS / "README.md").read_text()
    keys = list(doc["effort"][0])
    assert all("| " + " | ".join(str(r[k]) for k in keys) + " |" in page for r in doc["effort"])
    every = u.union([ROOT / d for d in doc["runs"]])
    for r in doc["effort"]:
        assert r["variants"] >= r["in the GH200's log"]
    assert sum(r["variants"] for r in doc["effort"]) == 559
    assert doc["effort"][-1]["fuzzgpu showed it"] == "no" and doc["effort"][-1]["variants"] == 103
    assert all(x["fuzzgpu_instances"] > 0 for x in every.values() if x["seen"])
    # the paragraph's figures, from union.json: the GH200 log's mean a configuration, the H100's estimate, the medians
    log, flat_page = doc["gh200_log"], " ".join(page.split())
    assert f"{log['instances_per_configuration'] / 1e7:.1f}e7 a configuration" in flat_page
    assert f"the H100's {log['h100_iterations']} iterations come to ~{log['h100_instances_per_variant_estimate'] / 1e9:.1f}e9" in flat_page
    unshown = doc["effort"][-1]
    assert f"a median {float(unshown['fuzzgpu instances / variant (median, the anchor.py runs)']) / 1e9:.1f}e9 instances on each of the 103" in flat_page
    assert f"a median {float(unshown['GH200 instances / variant (median)']) / 1e8:.1f}e8 instances on a variant" in flat_page


def test_the_pages_split_by_the_artifacts_gpus_is_union_json() -> None:
    """The split table of the anchor page is union.json's (written by bench/anchor_union.py with the
    artifact, which the repository has not), and union.json's totals are what the committed runs give: the
    present state's (the main page) and the one-run call's (the CTA-size page, where it was the present state)."""
    _split_table_is_union_json(RESULTS / "h200-mended" / "union.json", RESULTS / "README.md")
    _split_table_is_union_json(RESULTS / "h200-one-run" / "union.json", RESULTS / "h200-cta" / "README.md")


def _split_table_is_union_json(union: Path, page_path: Path) -> None:
    u = bench_script("anchor_union.py")
    doc = json.loads(union.read_text())
    page = page_path.read_text()
    keys = list(doc["rows"][0])
    assert all("| " + " | ".join(str(r[k]) for k in keys) + " |" in page for r in doc["rows"])
    runs = [ROOT / d for d in doc["runs"]]
    (total,) = u.table(u.union(runs, [ROOT / d for d in doc["mechanisms"]]), {})
    assert total == doc["rows"][-1]
    # its groups add up to the whole
    assert sum(r["variants"] for r in doc["rows"][:-1]) == total["variants"] and sum(r["fuzzgpu"] for r in doc["rows"][:-1]) == total["fuzzgpu"]


def test_the_mechanisms_table_says_which_names_are_no_variant() -> None:
    """A name of the --names file that is no variant of the artifact is said, quoted, and the table
    of the others is still written (the recorded call's variants plus one bad name)."""
    m = _mechanisms()
    doc = json.loads((RESULTS / "h200-residue-2s" / "mechanisms-fz" / "mechanisms.json").read_text())
    doc["variants"]["no_such\x1b[2Jvariant"] = {"error": "not a convertible variant of results.csv"}
    text = m.table(doc)
    assert "Not run: 'no_such\\x1b[2Jvariant': not a convertible variant of results.csv" in text
    assert "\x1b" not in text and text.count("## ") == 7


def test_where_the_searchs_budget_went_on_the_variants_it_did_not_show() -> None:
    """The one-run page's account of the unshown variants is the run's arms, counted again here: after a
    first bracket that showed nothing, no later bracket ran (only first-round sizes and its probes besides
    the default) and what was left went to the default."""
    import gzip
    import statistics

    run = RESULTS / "h200-one-run"
    rows = json.loads((run / "anchor.json").read_text())["rows"]
    with gzip.open(run / "anchor-arms.json.gz", "rt") as f:
        arms = json.load(f)
    unshown = [r["variant"] for r in rows if r["seen"] and not r["fuzzgpu"].get("condition")]
    one, shares, ratios = [], [], []
    for v in unshown:
        a = arms[v]
        d = next(x for x in a if x["config"] == "default")
        ratios.append(max(x["gpu_s"] / x["instances"] for x in a) / (d["gpu_s"] / d["instances"]))
        big = [x for x in a if x["instances"] > 1 << 20]
        if len(big) == 1 and big[0]["config"] == "default":
            assert {x["instances"] for x in a if x is not big[0]} <= {1 << 20, 1 << 16, 1 << 12}
            one.append(v)
            shares.append(big[0]["gpu_s"] / sum(x["gpu_s"] for x in a))
    page = " ".join((RESULTS / "h200-one-run" / "README.md").read_text().split())
    assert f"on the {len(unshown)} variants it did not show in this run" in page and f"for {len(one)} of them" in page
    assert f"a median {100 * statistics.median(shares):.1f}% of the variant's GPU time" in page
    assert f"a median {statistics.median(ratios):,.0f} times slower per instance than the default (at least {min(ratios):.0f} times)" in page


def test_the_runners_iterations_fit_its_time_in_the_one_run_call() -> None:
    """bench/anchor.py's ``iterations_for`` is the least-squares fit its docstring quotes: over the
    runner's runs of the one-run call, its estimate of their time is within 5% of the runner's own
    clock in the median (the estimate before it was 19% long)."""
    import statistics

    rows = json.loads((RESULTS / "h200-one-run" / "anchor.json").read_text())["rows"]
    runs = [x for r in rows for x in r["anchor"].get("runs", []) if x["iterations"] and x["seconds"] > 0]
    assert len(runs) == 1118
    bench = _bench()

    def ratio(x: dict) -> float:
        per_iteration = x["instances"] // x["iterations"]
        return 1.0 / (bench.iterations_for({"testingWorkgroups": per_iteration, "workgroupSize": 1}, 1.0) * x["seconds"] / x["iterations"])

    assert abs(statistics.median(ratio(x) for x in runs) - 1) < 0.05


def test_the_explore_pass_is_its_runs_figures() -> None:
    """The present state's pass of the changed search (h200-explore/) beside the one-run call: its
    headline counted again from the two anchor.json, the runner's column the one-run call's, copied."""
    new = {r["variant"]: r for r in json.loads((RESULTS / "h200-explore" / "anchor.json").read_text())["rows"]}
    old = {r["variant"]: r for r in json.loads((RESULTS / "h200-one-run" / "anchor.json").read_text())["rows"]}
    assert new.keys() == old.keys() and all(new[v]["anchor"] == old[v]["anchor"] for v in new)

    def fz(r: dict) -> bool:
        return r["fuzzgpu"].get("condition", 0) > 0

    def an(r: dict) -> bool:
        return r["anchor"].get("condition", 0) > 0

    seen = [v for v in new if new[v]["seen"]]
    unshown = [ln.split()[0] for ln in (RESULTS / "h200-one-run" / "unshown.txt").read_text().splitlines()
               if ln.strip() and not ln.startswith("#")]
    counts = (len(seen), sum(fz(new[v]) for v in seen), sum(fz(old[v]) for v in seen),
              sum(fz(new[v]) and an(new[v]) for v in seen), sum(fz(new[v]) and not an(new[v]) for v in seen),
              sum(an(new[v]) and not fz(new[v]) for v in seen), sum(fz(new[v]) for v in unshown),
              sum(fz(old[v]) and not fz(new[v]) for v in seen),
              sum(fz(new[v]) for v in seen if an(old[v]) and not fz(old[v])))
    assert counts == (559, 423, 408, 355, 68, 6, 21, 6, 7)
    assert all(new[v]["fuzzgpu"]["condition"] == 0 and new[v]["fuzzgpu"]["model_forbidden"] == 0
               for v in new if new[v]["forbidden"])
    page = " ".join((RESULTS / "h200-one-run" / "README.md").read_text().split())
    assert "fuzzgpu showed 423 of the 559 (75.7%; 408 in the one-run call), 21 of the 151 it had not shown there, and lost 6" in page
    assert "355 both, 68 fuzzgpu alone, **6 the runner alone (12 in the one-run call: 7 of those 12 shown now)**" in page
    # the budget and the harness throughput, from the run's rows and its throughput table
    doc = json.loads((RESULTS / "h200-explore" / "anchor.json").read_text())
    spent = [r["fuzzgpu"]["gpu_s"] for r in new.values()]
    tput = doc["throughput"]
    assert (f"a mean {sum(spent) / len(spent):.3f} GPU-s a variant; {sum(s > 0.41 for s in spent)} of the {len(spent)} went "
            f"past 0.41, the most {max(spent):.3f}") in page
    assert f"harness {tput['default']['rate'] / 1e9:.2f}e9/s (default), {tput['stripe_ctas']['rate'] / 1e9:.2f}e9/s" in page
    import gzip

    with gzip.open(RESULTS / "h200-one-run" / "anchor-arms.json.gz", "rt") as f:
        old_arms = json.load(f)
    with gzip.open(RESULTS / "h200-explore" / "anchor-arms.json.gz", "rt") as f:
        new_arms = json.load(f)
    # the 6 lost: shown there at "1 per 7e5 to 2.4e8 instances"; the most spent: "one launch ... took 0.21 s"
    lost = [v for v in seen if fz(old[v]) and not fz(new[v])]
    per = [a["instances"] / a["condition"] for v in lost for a in old_arms[v] if a["condition"]]
    assert round(min(per), -5) == 7e5 and round(max(per), -7) == 2.4e8 and "1 per 7e5 to 2.4e8 instances" in page
    worst = max(new, key=lambda v: new[v]["fuzzgpu"]["gpu_s"])
    assert f"{max(a['gpu_s'] for a in new_arms[worst]):.2f} s" == "0.21 s" and "took 0.21 s" in page
    early = [s for v, s in zip(new, spent) if fz(new[v]) and s < 0.35]
    assert f"the {len(early)} variants found early here left {0.4 - max(early):.2f}-{0.4 - min(early):.2f} of their 0.4 GPU-s" in page


def test_every_runs_page_says_what_the_runner_did_on_the_forbidden_variants() -> None:
    """A run that did not run the runner on the base-forbidden variants (``--anchor-forbidden no``)
    says so; a zero there would read as the runner checked and never showed them."""
    a = bench_script("anchor.py")
    pages = sorted(RESULTS.rglob("anchor.md"))
    assert len(pages) >= 11
    for md in pages:
        js = md.parent / "anchor.json"
        text = js.read_text() if js.exists() else gzip.decompress(js.with_suffix(".json.gz").read_bytes()).decode()
        rows = [a.Row(a.row_variant(r), r["fuzzgpu"], r["anchor"]) for r in json.loads(text)["rows"]]
        said = a.anchor_on_forbidden(rows)
        assert f", {said}." in md.read_text(), md


def test_the_present_state_is_the_mended_calls_figures() -> None:
    """The anchor page's present state (h200-mended/: both tools in one run over every variant, then the
    four the runner showed alone at 2 GPU-s) counted again from the two calls' anchor.json, the one-run
    call of 30098f2 beside it, and the per-family table the call wrote."""
    page = (RESULTS / "README.md").read_text()
    flat = " ".join(page.split())
    new = {r["variant"]: r for r in json.loads((RESULTS / "h200-mended" / "anchor.json").read_text())["rows"]}
    old = {r["variant"]: r for r in json.loads((RESULTS / "h200-one-run" / "anchor.json").read_text())["rows"]}

    def fz(r: dict) -> bool:
        return r["fuzzgpu"].get("condition", 0) > 0

    def an(r: dict) -> bool:
        return r["anchor"].get("condition", 0) > 0

    seen = [v for v in new if new[v]["seen"]]
    counts = (len(seen), sum(fz(new[v]) for v in seen), sum(an(new[v]) for v in seen),
              sum(fz(new[v]) and an(new[v]) for v in seen), sum(fz(new[v]) and not an(new[v]) for v in seen),
              sum(an(new[v]) and not fz(new[v]) for v in seen),
              sum(fz(new[v]) and not fz(old[v]) for v in seen), sum(fz(old[v]) and not fz(new[v]) for v in seen))
    assert counts == (559, 429, 368, 364, 65, 4, 27, 6)
    assert ("fuzzgpu showed 429 of the 559 (76.7%), the runner 368 (65.8%); 364 both, 65 fuzzgpu alone, 4 the runner alone; "
            "0 observations of the 98 base-forbidden variants by fuzzgpu**") in flat
    assert "it showed 27 variants that call had not and lost 6" in flat
    forbidden = [r for r in new.values() if r["forbidden"]]
    assert len(forbidden) == 98 and all(r["fuzzgpu"]["condition"] == 0 for r in forbidden)
    assert all(r["fuzzgpu"]["model_forbidden"] == 0 for r in new.values())
    spent = [r["fuzzgpu"]["gpu_s"] for r in new.values()]
    assert (f"a mean {sum(spent) / len(spent):.3f} GPU-s a variant, {sum(s > 0.41 for s in spent)} of the {len(spent)} "
            f"past 0.41, the most {max(spent):.3f}") in flat
    tput = json.loads((RESULTS / "h200-mended" / "anchor.json").read_text())["throughput"]
    assert f"its harness {tput['default']['rate'] / 1e9:.2f}e9/s" in flat
    assert f"({tput['stripe_ctas']['rate'] / 1e9:.2f}e9/s with `stripe_ctas`, {tput['test_ctas=512']['rate'] / 1e9:.2f}e9/s" in flat
    table = [ln for ln in (RESULTS / "h200-mended" / "anchor.md").read_text().splitlines() if ln.startswith("| ")]
    assert len(table) == 17 and all(ln in page for ln in table)
    # the four the runner showed alone, again at 2 GPU-s each
    alone = sorted(v for v in seen if an(new[v]) and not fz(new[v]))
    names = (RESULTS / "h200-mended" / "alone-2s" / "names.txt").read_text().split()
    assert sorted(names) == alone
    two = {r["variant"]: r for r in json.loads((RESULTS / "h200-mended" / "alone-2s" / "anchor.json").read_text())["rows"]}
    assert sorted(two) == alone and all(r["fuzzgpu"]["gpu_s"] <= 2.01 for r in two.values())
    for v, r in two.items():
        f, a = r["fuzzgpu"], r["anchor"]
        if f["condition"]:
            assert f"`{v}` ({f['condition']:,} instances; the runner {a['condition']})" in flat \
                or f"`{v}` ({f['condition']:,}; the runner {a['condition']})" in flat
        else:
            assert (f"`{v}` (0 in {f['instances']:.1e}; the runner {a['condition']} in {a['instances']:.1e})"
                    .replace("e+0", "e")) in flat
