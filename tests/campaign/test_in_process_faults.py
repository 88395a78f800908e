"""``fuzzgpu campaign --in-process``: the backend runs in the campaign's own process, with no worker
to restart.  A ``GpuFault`` there (the CUDA context is lost: nothing else can run in this process)
ended the campaign with an internal error: the program was not quarantined, the report not written,
and Hypothesis kept the faulting program as a failing example to replay first on the next run
(hostile review).  Now it is quarantined, the state and the report are saved, one line
says why the campaign stopped, and the exit status is 3 (docs/reliability.md).

No GPU here: the sim backend's ``gpu-fault`` raises the cuda backend's ``GpuFault``.  The sim fires
its process faults only where a supervisor owns the process (``SimBackend.isolated``, set by the
campaign's worker); these tests set it on an in-process backend, which stands for the cuda backend
run with ``--in-process``: ``GpuFault`` is an exception, it neither hangs nor kills the process."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from fuzzgpu import cli
from fuzzgpu.backends.sim import SimBackend
from fuzzgpu.campaign import Campaign, load_profile
from fuzzgpu.workers.supervised import quarantined_hashes

PROFILE = """
description = "MP and SB, a short Hypothesis run (tests)"
[shapes]
MP = 1
SB = 1
[sim]
instances = 2_000
[hypothesis]
max_examples = 20
"""


def in_process_sim(fault: str) -> SimBackend:
    b = SimBackend(fault)
    b.isolated = True  # the gpu-fault fires in this process (see the module docstring)
    return b


def campaign(tmp_path: Path, fault: str, out: io.StringIO) -> Campaign:
    prof = tmp_path / "mp.toml"
    prof.write_text(PROFILE)
    c = Campaign(load_profile(str(prof)), in_process_sim(fault), tmp_path / "corpus", "model", seed=5, out=out, live=False)
    c.max_runs = 3  # never a wall-clock bound: the fault stops it first
    return c


def test_a_gpu_fault_in_process_quarantines_the_program_and_stops(tmp_path):
    out = io.StringIO()
    res = campaign(tmp_path, "gpu-fault:1", out).run(3600)
    root = tmp_path / "corpus"
    assert res.stopped_by_fault and res.stopped_by_fault.startswith("gpu-fault in process: simulated CUDA_ERROR_ILLEGAL_ADDRESS")
    assert res.reason == res.stopped_by_fault and res.session_programs == 1  # nothing ran after the fault
    (rec,) = [json.loads(p.read_text()) for p in (root / "quarantine").glob("*.json")]
    assert rec["schema"] == "fuzzgpu.quarantine" and rec["fault"]["kind"] == "gpu-fault" and rec["program"]["threads"]
    assert (root / "quarantine" / rec["litmus"]).read_text().strip()
    lines = [ln for ln in out.getvalue().splitlines() if ln.startswith("QUARANTINED")]
    assert len(lines) == 1 and "no worker to restart; the campaign stops, exit 3" in lines[0], out.getvalue()
    state = json.loads((root / ".fuzzgpu" / "state.json").read_text())  # saved: nothing lost
    assert state["quarantined"] == 1 and state["faults"] == {"gpu-fault": 1} and state["programs"] == 1
    text = (root / "report" / "report.txt").read_text()
    assert text.rstrip().splitlines()[-1].startswith("exit status 3: the campaign stopped before its time on a fault"), text
    assert json.loads((root / "report" / "report.json").read_text())["stopped_by_fault"] == res.stopped_by_fault
    # resumed, the quarantined program is skipped (and not replayed first as a failing example):
    # the next one faults, a different program
    res2 = campaign(tmp_path, "gpu-fault:1", io.StringIO()).run(3600)
    assert res2.stopped_by_fault and len(quarantined_hashes(root)) == 2
    assert json.loads((root / ".fuzzgpu" / "state.json").read_text())["faults"] == {"gpu-fault": 2}


def test_a_finding_before_a_gpu_fault_is_saved_and_the_status_is_still_3(tmp_path):
    """A fault mid-campaign, here while a finding of the injected release/acquire fault shrinks: the
    smallest failing program seen so far is saved (nothing lost), and the report's status is 3 (cut
    short), not 1.  A count over seeds, not a speed: some seed among these finds before it faults."""
    from test_campaign_classes import PROFILE as MP_LB

    found = 0
    for seed in (2, 3, 4, 5, 6):
        d = tmp_path / f"s{seed}"
        d.mkdir()
        (d / "p.toml").write_text(MP_LB)
        c = Campaign(load_profile(str(d / "p.toml")), in_process_sim("relacq-as-relaxed,gpu-fault:0.05"), d / "corpus", "model",
                     seed=seed, out=io.StringIO(), live=False)
        c.max_runs = 6
        res = c.run(3600)
        if not res.stopped_by_fault:
            continue  # no program of this seed's runs was hit
        assert res.state.faults == {"gpu-fault": 1} and len(quarantined_hashes(d / "corpus")) == 1
        saved = sorted(p.name for p in (d / "corpus").glob("*.json"))
        assert saved == sorted(f["file"] for f in res.new_findings), (saved, res.new_findings)
        last = (d / "corpus" / "report" / "report.txt").read_text().rstrip().splitlines()[-1]
        assert last.startswith("exit status 3:") and f"{len(res.new_findings)} new corpus entr" in last, last
        found += bool(res.new_findings)
        if found:
            break
    assert found, "no seed saved a finding before its gpu-fault"


def _cli(argv: list[str]) -> tuple[int, str, str]:
    import contextlib

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main(argv)
    return rc, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("as_json", [False, True])
def test_the_command_line_says_why_it_stopped_and_exits_3(tmp_path, monkeypatch, as_json):
    import fuzzgpu.campaign.run as run_mod

    made = []

    def make_backend(name, **kw):  # the in-process backend, standing for --backend cuda
        made.append(name)
        return in_process_sim("gpu-fault:1"), "sim (test: gpu-fault in process)"

    monkeypatch.setattr(run_mod, "make_backend", make_backend)
    prof = tmp_path / "mp.toml"
    prof.write_text(PROFILE)
    corpus = tmp_path / "corpus"
    rc, out, err = _cli(["campaign", "--in-process", "--backend", "sim", "--profile", str(prof), "--corpus", str(corpus),
                         "--seed", "5", "--time", "3600", "--no-live"] + (["--json"] if as_json else []))
    assert made == ["sim"] and rc == 3, (rc, out[-3000:], err[-3000:])
    line = "fuzzgpu campaign: environment error: stopped: gpu-fault in process: simulated CUDA_ERROR_ILLEGAL_ADDRESS"
    assert err.splitlines()[-1].startswith(line), err[-2000:]
    if as_json:  # stdout: the report, one JSON document alone
        rep = json.loads(out)
        assert rep["stopped_by_fault"].startswith("gpu-fault in process") and rep["state"]["faults"] == {"gpu-fault": 1}
    else:
        assert "exit status 3: the campaign stopped before its time" in out and "QUARANTINED" in out
    assert json.loads((corpus / ".fuzzgpu" / "state.json").read_text())["quarantined"] == 1


@pytest.mark.parametrize("fault", ["gpu-fault", "hang:1", "relacq-as-relaxed,crash:0.5"])
def test_process_faults_are_refused_with_in_process(tmp_path, fault):
    """The sim refuses its process faults in-process: every program was "not covered" and the
    campaign exited 0, having checked nothing.  Now it is bad usage, said before it starts."""
    rc, out, err = _cli(["campaign", "--in-process", "--backend", "sim", "--sim-fault", fault, "--profile", "classic",
                         "--corpus", str(tmp_path / "c"), "--time", "5", "--no-live"])
    assert rc == 2 and err.count("\n") == 1 and "not with --in-process" in err, (rc, err)
    assert not (tmp_path / "c").exists() or not list((tmp_path / "c").glob("*.json"))


def test_the_fault_line_is_one_printable_line(tmp_path, monkeypatch):
    """A GpuFault's text (a driver message, which may carry a program's or a file's text) reaches the
    terminal, the quarantine record and the report as one printable line (``errors.clip``)."""
    from fuzzgpu.backends.cuda import GpuFault

    def bad_run(self, program, config):
        raise GpuFault("trap\x1b[31m in kernel\x07")

    monkeypatch.setattr(SimBackend, "run", bad_run)
    out = io.StringIO()
    res = campaign(tmp_path, "", out).run(3600)
    (rec,) = [json.loads(p.read_text()) for p in (tmp_path / "corpus" / "quarantine").glob("*.json")]
    for text in (rec["fault"]["detail"], res.stopped_by_fault, out.getvalue()):
        assert "\x1b" not in text and "\x07" not in text, text
    assert rec["fault"]["detail"] == "trap\\x1b[31m in kernel\\x07"


def test_a_program_the_driver_refuses_is_kept_and_the_campaign_goes_on(tmp_path):
    """A launch the CUDA driver refuses (``CUDA_ERROR_INVALID_VALUE``: the context lives on) is not a
    finding: the program is counted not covered -- and kept in ``D/refused/`` with its run
    configuration, the H200 600 s run of 2026-12-03 lost 46 such programs undiagnosed."""
    out = io.StringIO()
    c = campaign(tmp_path, "refused:0.5", out)
    res = c.run(3600)
    root = tmp_path / "corpus"
    recs = [json.loads(p.read_text()) for p in (root / "refused").glob("*.json")]
    assert recs and res.session_programs > len(recs)  # some refused, the others judged
    for rec in recs:
        assert rec["fault"]["kind"] == "driver-refused" and "from cuLaunchKernelEx" in rec["fault"]["detail"]
        assert rec["config"]["instances"] > 0 and (root / "refused" / rec["litmus"]).read_text().strip()
    why = [k for k in c.state.not_covered if "CUDA_ERROR_INVALID_VALUE" in k]
    assert why and all(f"kept in {root / 'refused'}" in k for k in why)
    assert sum(c.state.not_covered[k] for k in why) >= len(recs)
    assert not quarantined_hashes(root)  # not skipped later: a refusal may not repeat
