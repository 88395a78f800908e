"""What a person reads when something fails (issue 28.5): a failing Hypothesis test's falsifying
example is a short, litmus-like summary of the Program (it was the dataclass's repr, field by field:
~60-100 lines before the litmus text); pytest's ``NotAHardwareRun`` warning names the user's test."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzgpu import litmus
from fuzzgpu.ir import Program

from paths import DAT3M, LITMUS, ROOT, own_litmus

MP = litmus.parse_file(LITMUS / "core" / "MP-relacq-gpu.litmus")


def test_a_falsifying_program_is_a_few_readable_lines() -> None:
    @settings(max_examples=3, database=None, deadline=None, derandomize=True)
    @given(st.just(MP))
    def fails(p: Program) -> None:
        raise AssertionError("the user's own assertion")

    with pytest.raises(AssertionError) as e:
        fails()
    notes = "\n".join(getattr(e.value, "__notes__", ()))
    assert "p=Program(MP-relacq-gpu" in notes, notes
    assert "P0@cta 0: st x, 1; st.release.gpu y, 1" in notes, notes
    assert "P1@cta 1: ld.acquire.gpu r0, y; ld r1, x" in notes, notes
    assert r"exists (P1:r0 == 1 /\ P1:r1 == 0)" in notes, notes
    assert "Placement(" not in notes and "Sem." not in notes, notes
    assert len(notes.splitlines()) <= 10, notes


def test_the_summary_is_one_line_per_thread_and_says_what_differs_from_the_defaults() -> None:
    pdl = litmus.parse_file(LITMUS / "pdl" / "PDL-wait-nc.litmus")
    assert repr(pdl).splitlines() == [
        "Program(PDL-wait-nc, pdl_grids=(1,)",
        "  { x=0 }",
        "  P0@cta 0: griddepcontrol launch_dependents; st x, 1",
        "  P1@cta 0,grid 1: griddepcontrol wait; ld.nc r1, x",
        "  exists P1:r1 == 0)",
    ]
    named = litmus.parse_file(DAT3M / "Manual" / "SB+named-bar-reg-diff.litmus")
    assert "{r0=0, r2=1}" in repr(named)


@pytest.mark.parametrize("path", own_litmus()[::7], ids=lambda p: p.stem)
def test_every_program_has_a_short_summary(path) -> None:
    p = litmus.parse_file(path)
    text = repr(p)
    assert len(text.splitlines()) == 2 + len(p.threads) + (p.condition is not None)
    assert all(t.name + "@" in text for t in p.threads)


def test_the_not_a_hardware_run_warning_points_at_the_users_test(tmp_path) -> None:
    """pytest's warnings summary names the line of the user's test that called ``fuzzgpu_run`` (it
    named ``_pytest/fixtures.py``, where the session fixture was set up), once per test and line
    however many examples Hypothesis draws."""
    (tmp_path / "test_user.py").write_text(textwrap.dedent('''
        from hypothesis import given, settings, strategies as st
        from fuzzgpu import litmus

        MP = litmus.parse_file(%r)

        def test_once(fuzzgpu_run):
            assert fuzzgpu_run(MP, instances=500).instances == 500

        @settings(max_examples=5, deadline=None, database=None, derandomize=True)
        @given(st.integers(1, 3))
        def test_drawn(fuzzgpu_run, k):
            assert fuzzgpu_run(MP, instances=100 * k).instances == 100 * k
    ''' % str(LITMUS / "core" / "MP-relacq-gpu.litmus")))
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q", "--fuzzgpu-backend", "sim",
                        "test_user.py"], check=False, capture_output=True, text=True, cwd=tmp_path, timeout=300, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    summary = r.stdout[r.stdout.index("warnings summary"):]
    assert "fixtures.py" not in summary and "pytest_plugin.py" not in summary, summary
    assert f"{tmp_path / 'test_user.py'}:8: NotAHardwareRun: fuzzgpu_run on backend sim" in summary, summary
    assert f"{tmp_path / 'test_user.py'}:13: NotAHardwareRun: fuzzgpu_run on backend sim" in summary, summary
    assert "2 passed, 2 warnings" in r.stdout, r.stdout[-2000:]
