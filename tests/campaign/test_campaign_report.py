"""The report a person reads first (issue 28, item 4): report.md and report.html (plots embedded)
beside report.txt and report.json, findings and programs/s over time per class, honest plots (no
empty plot: "nothing to plot" and why), and per-shape counts that say what they count.

In-process campaigns on the sim backend stopped after a number of Hypothesis runs (never a
wall-clock time); plots drawn from real campaign states."""

from __future__ import annotations

import json
from pathlib import Path

from test_campaign_classes import MP_CLASS, campaign

from fuzzgpu.campaign.document import draw_plots
from fuzzgpu.campaign.plot import plot_findings_over_time, plot_weak_rates
from fuzzgpu.campaign.timeline import MAX_SAMPLES, merge, rates, sample


def test_the_report_a_person_reads_first(tmp_path):
    c, _ = campaign(tmp_path, 4)
    d = c.root / "report"
    md = (d / "report.md").read_text()
    assert md.startswith("# fuzzgpu campaign report") and "**exit status 1:" in md
    assert "## What to look at" in md and f"`{MP_CLASS}`" in md and "fuzzgpu explain" in md
    assert "## Findings per class" in md and "## Over time" in md and "## Shapes" in md
    rep = json.loads((d / "report.json").read_text())
    assert set(rep["plots"]) == {"findings-over-time", "programs-per-second", "weak-rates"}
    # programs/s needs samples at least 2 s apart (timeline.rates): a campaign this short may end
    # sooner on a fast machine, and then the report says "nothing to plot" instead of drawing it
    drawn = [k for k, p in rep["plots"].items() if p["file"]]
    assert {"findings-over-time", "weak-rates"} <= set(drawn), rep["plots"]
    for name, p in rep["plots"].items():
        png = f"{name}.png"
        if p["file"]:
            assert (d / png).is_file() and f"]({png})" in md, png
        else:
            assert name == "programs-per-second" and p["note"] and not (d / png).exists(), p
    page = (d / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("data:image/png;base64,") == len(drawn)
    assert MP_CLASS.replace("|", "|") in page


def test_the_timeline_follows_the_campaign(tmp_path):
    c, _ = campaign(tmp_path, 3)
    tl = c.state.timeline
    assert len(tl) >= 2
    assert [s["t"] for s in tl] == sorted(s["t"] for s in tl)
    last = tl[-1]
    assert last["programs"] == c.state.programs
    assert last["findings"] == {k: v["findings"] for k, v in c.state.classes.items() if v["findings"]}
    # saved with the state, read back with it
    st = json.loads((c.state_dir / "state.json").read_text()) if (c.state_dir / "state.json").exists() else None
    assert st is None or st["timeline"] == tl


def test_per_shape_known_counts_only_the_known_list(tmp_path):
    """report.json's per-shape ``known`` counted the variants of classes saved this session; it now
    counts failures in a class of the known list, and ``repeats`` the others."""
    c, _ = campaign(tmp_path, 4)
    shapes = c.state.shapes
    assert all(s.get("known", 0) == 0 for s in shapes.values()), shapes  # no known list given
    assert sum(s.get("repeats", 0) for s in shapes.values()) > 0
    known = tmp_path / "k" / "known.json"
    known.parent.mkdir()
    known.write_text(json.dumps({"schema": "fuzzgpu.known", "version": 1, "known": [
        {"class": MP_CLASS, "title": "release/acquire ignored (the injected fault)", "writeup": "docs/findings.md#relacq"}]}))
    c2, _ = campaign(tmp_path / "k", 3, known=known)
    assert sum(s.get("known", 0) for s in c2.state.shapes.values()) > 0
    md = (c2.root / "report" / "report.md").read_text()
    assert "known class(es), counted, not saved again" in md and "| KNOWN |" in md
    assert "(docs/findings.md#relacq: release/acquire ignored (the injected fault))" in md  # its title, a wheel has no docs/


def test_no_empty_plot_nothing_to_plot_instead(tmp_path):
    """A static run executes nothing, a scopes/sc run can see no weak outcome: no plot is drawn (it
    drew an empty one, a y axis from -0.04 to 0.04), and the note says why; a stale plot of an
    earlier report does not stay beside the new one."""
    none_ran = {"PDL": {"programs": 9, "instances": 0, "weak": 0, "failures": 9, "unsupported": 0, "findings": 1}}
    file, note = plot_weak_rates(none_ran, tmp_path / "w.png", "static: no execution")
    assert file is None and "nothing to plot" in note and "static" in note
    zero = {"MP": {"programs": 3, "instances": 30000, "weak": 0, "failures": 0, "unsupported": 0, "findings": 0}}
    file, note = plot_weak_rates(zero, tmp_path / "w.png", "sim: x")
    assert file is None and "no weak (non-SC) outcome in 3e+04 instances: nothing to plot" == note
    assert plot_findings_over_time([], {}, tmp_path / "f.png", "x") == (None, "no findings: nothing to plot")
    (tmp_path / "weak-rates.png").write_bytes(b"stale")
    plots = draw_plots(tmp_path, [], {}, zero, "sim: x", "x")
    assert all(f is None for f, _ in plots.values()) and not list(tmp_path.glob("*.png"))


def test_timeline_sampling_merging_and_rates():
    tl: list[dict] = []
    for i in range(2000):
        sample(tl, i * 1.0, i * 10, i * 1000, {"k": {"findings": i // 100}})
    assert len(tl) <= MAX_SAMPLES and tl[-1]["t"] >= 1997.0 and tl[0]["t"] == 0.0
    sample(tl, 1999.5, 19995, 0, {"k": {"findings": 19}}, force=True)  # a forced sample (a finding, the end) is kept
    assert tl[-1]["t"] == 1999.5
    assert all(abs(r - 10.0) < 1e-9 for _, r in rates(tl))
    a = [{"t": 0, "programs": 0, "instances": 0, "findings": {}}, {"t": 10, "programs": 100, "instances": 1, "findings": {"k": 1}}]
    b = [{"t": 5, "programs": 50, "instances": 2, "findings": {"k": 2, "j": 1}}]
    m = merge([a, b])
    assert [s["t"] for s in m] == [0, 5, 10]
    assert m[1]["programs"] == 50 and m[2]["programs"] == 150 and m[2]["findings"] == {"k": 3, "j": 1}


def test_a_parallel_campaign_writes_the_same_report(tmp_path):
    """--workers N wrote no plot: the combined report is drawn by the same code, from the workers'
    timelines merged."""
    import subprocess
    import sys

    corpus = tmp_path / "c"
    r = subprocess.run([sys.executable, "-m", "fuzzgpu", "campaign", "--backend", "sim", "--sim-fault", "relacq-as-relaxed",
                        "--profile", "classic", "--no-live", "--workers", "2", "--seed", "3", "--max-findings", "1", "--time", "120",
                        "--corpus", str(corpus)], check=False, capture_output=True, text=True, timeout=300,
                       cwd=Path(__file__).resolve().parents[2])
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-3000:]
    d = corpus / "report"
    md = (d / "report.md").read_text()
    assert md.startswith("# fuzzgpu parallel campaign report") and "## Findings per class" in md
    assert (d / "findings-over-time.png").is_file() and (d / "report.html").is_file()
    rep = json.loads((d / "report.json").read_text())
    assert rep["plots"]["findings-over-time"]["file"] == "findings-over-time.png" and rep["timeline"]
