"""bench/compile_phases.py's reading of nvcc's ``--time`` CSV (the file nvcc 13.0 writes; its rows
below as nvcc wrote them for a batch of 16 harnesses)."""

from __future__ import annotations

from paths import ROOT, bench_script

CSV = """source file name , phase name , phase input files , phase output file , arch , tool, metric , unit
b16.cu , gcc (preprocessing 1) , b16.cu  , /tmp/nv/k16/b16.cpp1.ii , compute_90 , nvcc , 119.7990 , ms
b16.cu , cicc , /tmp/nv/k16/b16.cpp1.ii  , /tmp/nv/k16/b16.ptx , compute_90 , nvcc , 994.8530 , ms
b16.cu , ptxas , /tmp/nv/k16/b16.ptx  , b16.cubin , sm_90 , nvcc , 858.1710 , ms
 , nvcc (driver) ,  , b16.cubin ,  , nvcc , 0.3340 , ms
"""


def test_the_phases_of_nvccs_time_csv() -> None:
    mod = bench_script("compile_phases.py")
    assert mod.parse_time_csv(CSV) == {"gcc": 119.799, "cicc": 994.853, "ptxas": 858.171, "nvcc": 0.334}
    # two rows of one phase (two archs, say) add up; the header is no phase
    two = CSV + "b16.cu , ptxas , b16.ptx , b.cubin , sm_100a , nvcc , 1.8290 , ms\n"
    assert mod.parse_time_csv(two)["ptxas"] == 858.171 + 1.829


def test_the_throughput_pages_figures_are_the_benches_json() -> None:
    """bench/results/throughput/README.md's section on what stands between a campaign and the GPU
    quotes its three benches' results files: the compile table row for row, the SASS comparison's
    counts and NVRTC's figures as computed from their JSON."""
    import json

    res = ROOT / "bench" / "results"
    page = " ".join((res / "throughput" / "README.md").read_text().split())
    rows = [ln for ln in (res / "throughput" / "compile-phases.md").read_text().splitlines() if ln.startswith("| ")]
    cp = json.loads((res / "throughput" / "compile-phases.json").read_text())
    assert len(rows) == len(cp["table"]) + 1 and all(" ".join(ln.split()) in page for ln in rows)  # (+ the header)
    # the stress helpers' figures: this tree's harness against the "before" commit's, from the JSON
    per = {(t["kind"], t["what"]): t["per_program_ms"] for t in cp["table"]}
    old, new = f"harness at {cp['before']}", "harness"
    assert (f"ptxas costs {per[new, 'ptxas (wall)']} ms a program instead of {per[old, 'ptxas (wall)']}, nvcc "
            f"{per[new, 'nvcc, CPU (all phases)']} CPU ms instead of {per[old, 'nvcc, CPU (all phases)']}") in page
    sv = json.loads((res / "sass" / "static-vs-harness.json").read_text())["counts"]
    assert (f"of {sv['programs']} distinct campaign programs the harness runs, the SASS oracle finds the same in the "
            f"static kernels and in the harness kernels for {sv['agree']}") in page
    assert f"{sv['forbidden_static_only']} have a forbidden finding" in page and f"{sv['forbidden_harness_only']} only in the harness" in page
    nv = json.loads((res / "throughput" / "nvrtc-static.json").read_text())
    cn, cr = nv["cpu_s"]["nvcc"] / nv["batches"], nv["cpu_s"]["nvrtc"] / nv["batches"]
    assert f"the same findings (check, verdict, operations) for {nv['same_findings']}, at {1 - cr / cn:.0%} less CPU a batch ({cn:.3f} -> {cr:.3f} CPU-s" in page
    assert f"(registers, addresses, offsets) for {nv['programs'] - nv['same_sass_text']}." in page


def test_the_stage_comparison_on_the_page_is_its_json() -> None:
    """bench/results/throughput/README.md quotes bench/stages.py --compare's table row for row, and its
    sentence on the batched compile is the JSON's figures."""
    import json

    res = ROOT / "bench" / "results" / "throughput"
    page = " ".join((res / "README.md").read_text().split())
    rows = [ln for ln in (res / "stages-compare-9a0bd98.md").read_text().splitlines() if ln.startswith("| ")]
    assert len(rows) == 8 and all(" ".join(ln.split()) in page for ln in rows)
    doc = json.loads((res / "stages-compare-9a0bd98.json").read_text())
    before, now = doc["before"]["stages"]["compile (batch16)"], doc["stages"]["compile (batch16)"]
    assert f"(a batch of 16: {before['cpu_ms_per_program']} -> {now['cpu_ms_per_program']} CPU ms a program)" in page
    assert doc["before"]["commit"] == "9a0bd98" and doc["hashes"]
    # the README's row: the latest two stage comparisons' figures of this tree (81b7c0c the "before")
    readme = " ".join((ROOT / "README.md").read_text().split())
    a, b = (json.loads((res / f"stages-compare-{label}.json").read_text())["stages"] for label in ("ndf", "ndf-again"))
    ms = lambda st, k: st[k]["cpu_ms_per_program"]  # noqa: E731
    assert (f"harness compile {ms(a, 'compile (batch16)')} CPU ms a program ({ms(a, 'compile (single)')}), static SASS check "
            f"{ms(a, 'sass (batch16)')} ({ms(a, 'sass (single)')}), and {ms(b, 'compile (batch16)')} ({ms(b, 'compile (single)')}), "
            f"{ms(b, 'sass (batch16)')} ({ms(b, 'sass (single)')}) in a second run") in readme
    cp = json.loads((res / "compile-phases.json").read_text())
    row = {(t["kind"], t["what"]): t for t in cp["table"]}
    marginal = row["harness", "nvcc, CPU (all phases)"]["per_program_ms"]
    assert f"of the harness's nvcc {marginal} CPU ms a program is marginal" in readme
    fixed = row["static kernels", "sass.disassemble ndf_first (-ndf unless needed), CPU"]["fixed_ms"]
    assert f"a call's fixed cost is now mostly nvdisasm's (~{fixed / 1000:.2f} CPU-s)" in readme


def test_the_batch_repeats_paragraph_is_its_json() -> None:
    """The throughput page's paragraph on each program of a batch compiled once quotes
    bench/batch_repeats.py's results file."""
    import json

    res = ROOT / "bench" / "results" / "throughput"
    page = " ".join((res / "earlier.md").read_text().split())  # a change of earlier code: the earlier rows' page
    doc = json.loads((res / "batch-repeats.json").read_text())
    g, a, t = doc["generation_batches"], doc["all_batches"], doc["timed"]
    big = sum(1 for b in doc["batches"] if b["size"] >= 32)
    assert f"{g['repeats']:g} of the {g['size']:g} programs of its {big} generation batches were repeats" in page
    assert f"fell from {g['before']:g} to {g['after']:g} in those batches ({a['before']:g} to {a['after']:g} in all {len(doc['batches'])} batches)" in page
    assert f"from {t['nvcc_cpu_before']:.1f} to {t['nvcc_cpu_after']:.1f} CPU-s (-{100 * (1 - t['nvcc_cpu_after'] / t['nvcc_cpu_before']):.0f}%)" in page
    assert g["answered_own_not_base"] == 0 and "no program answered under its own configuration only" in page


def test_the_static_pool_paragraph_is_its_json() -> None:
    """The throughput page's paragraph on the static-check pool quotes bench/static_pool.py's results files."""
    import json

    res = ROOT / "bench" / "results" / "throughput"
    page = " ".join((res / "README.md").read_text().split())
    off1, on1 = json.loads((res / "static-pool-w4.json").read_text())["runs"]
    off2, on2 = json.loads((res / "static-pool-w4-round2.json").read_text())["runs"]
    assert not off1["pool"] and on1["pool"] and not off2["pool"] and on2["pool"]
    assert f"judged {on1['judged']:,} and {on2['judged']:,} programs against {off1['judged']:,} and {off2['judged']:,}" in page
    assert f"at {on1['cpu_s_per_judged']:g} and {on2['cpu_s_per_judged']:g} CPU-s a judgement against {off1['cpu_s_per_judged']:g} and {off2['cpu_s_per_judged']:g}" in page
    c1, c2 = on1["pool_counters"], on2["pool_counters"]
    assert f"its {c1['requests']} and {c2['requests']} requests checked in {c1['checks']} and {c2['checks']}" in page
    for off, on in ((off1, on1), (off2, on2)):
        assert on["judged"] > off["judged"] and on["cpu_s_per_judged"] < off["cpu_s_per_judged"]
    off, on = json.loads((res / "static-pool.json").read_text())["runs"]
    assert f"it judged {round(100 * (1 - on['judged'] / off['judged']))}% fewer" in page
    assert f"at {round(100 * (1 - on['cpu_s_per_judged'] / off['cpu_s_per_judged']))}% less CPU a judgement" in page


def test_the_ran_sass_figures_are_the_benchs_json() -> None:
    """The throughput page and the README quote bench/ran_sass.py's results as its JSON has them."""
    import json

    res = ROOT / "bench" / "results"
    c = json.loads((res / "sass" / "ran-sass.json").read_text())["counts"]
    page = " ".join((res / "throughput" / "README.md").read_text().split())
    readme = " ".join((ROOT / "README.md").read_text().split())
    total = c["kernels_same_sass_alone_and_in_batch"] + c["kernels_different"]
    assert (f"of {total} harness kernels of {c['programs']} campaign programs, {c['kernels_same_sass_alone_and_in_batch']} "
            "have the same SASS compiled alone and in their batch") in page
    assert f"{c['fully_checked']} of the {c['programs']} are fully checked" in page
    assert f"{c['program_findings']} findings on the programs' operations ({c['with_program_findings']} programs)" in page
    assert f"for {c['static_agrees']} of the {c['static_compared']}" in page
    assert f"{c['check_cpu_s_per_batch_median']:.2f} CPU-s (median)" in page
    assert (f"on {c['programs']} campaign programs in batches of 16, {c['kernels_same_sass_alone_and_in_batch']} of {total} "
            f"kernels have the SASS of their compile alone") in readme
