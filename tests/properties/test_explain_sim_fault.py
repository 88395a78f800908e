"""An entry found under a simulated fault (``--sim-fault relacq-as-relaxed``) says so (issue 27, item 2):
``explain`` names the fault instead of "the hardware or the compiler deviates ... report it", and every
replay command it suggests carries the fault; ``replay`` without the fault says the property holds
because the fault is off, not that anything was fixed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fuzzgpu import properties
from fuzzgpu.backends.base import RunConfig
from fuzzgpu.backends.sim import SimBackend
from fuzzgpu.commands.explain import explain_text, injected_fault
from fuzzgpu.corpus import Corpus, load_entry, make_entry
from fuzzgpu.litmus import parse

ROOT = Path(__file__).resolve().parents[2]

MP = """PTX MP
{
x=0;
y=0;
}
 P0@cta 0,gpu 0      | P1@cta 0,gpu 0       ;
 st.weak x, 1        | ld.acquire.cta r0, y ;
 st.release.cta y, 2 | ld.weak r1, x        ;
exists (P1:r0 == 2 /\\ P1:r1 == 0)
"""


def _fault_entry(tmp_path: Path, fault: str = "relacq-as-relaxed"):
    p = parse(MP)
    backend = SimBackend(fault)
    cfg = RunConfig(instances=100_000, seed=1)
    h = backend.run(p, cfg)
    v = properties.MODEL.check(p, h)
    assert v.failed, v.summary()
    path, _ = Corpus(tmp_path).add(make_entry(p, v, h, backend, cfg))
    return load_entry(path)


def test_explain_names_the_simulated_fault_and_its_replay_carries_it(tmp_path):
    entry = _fault_entry(tmp_path)
    text = explain_text(entry)
    assert "FOUND UNDER A SIMULATED FAULT (--sim-fault relacq-as-relaxed)" in text
    assert "report it" not in text and "the hardware or the compiler deviates" not in text
    assert f"replay: fuzzgpu replay {entry.path} --backend sim --sim-fault relacq-as-relaxed" in text
    # the suggested command, run as printed, still sees the finding (exit 1), not "fixed"
    cmd = text.split("replay: ", 1)[1].splitlines()[0].split()
    assert cmd[:2] == ["fuzzgpu", "replay"]
    r = subprocess.run([sys.executable, "-m", "fuzzgpu", *cmd[1:]], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "STILL VIOLATES" in r.stdout


def test_replay_without_the_fault_says_the_fault_is_off_not_fixed(tmp_path):
    entry = _fault_entry(tmp_path)
    r = subprocess.run([sys.executable, "-m", "fuzzgpu", "replay", str(entry.path), "--backend", "sim"],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert "found under the simulated fault --sim-fault relacq-as-relaxed, replayed without it" in r.stdout, r.stdout


def test_a_hostile_fault_text_never_reaches_a_suggested_command(tmp_path):
    entry = _fault_entry(tmp_path)
    d = json.loads(entry.path.read_text())
    d["histogram"]["meta"]["fault"] = "relacq-as-relaxed; rm -rf ~"
    assert injected_fault(d) == "(unrecognised)"
    entry.path.write_text(json.dumps(d))
    text = explain_text(load_entry(entry.path))
    assert "rm -rf" not in text
    assert "FOUND UNDER A SIMULATED FAULT (--sim-fault (unrecognised))" in text


def test_an_entry_without_a_fault_keeps_its_deviation_text(tmp_path):
    entry = load_entry(ROOT / "corpus" / "73416467ed043580.json")
    text = explain_text(entry)
    assert injected_fault(entry.data) is None
    assert "SIMULATED FAULT" not in text and "--sim-fault" not in text
    assert "the hardware or the compiler deviates" in text
