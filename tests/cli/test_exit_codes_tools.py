"""A missing CUDA toolchain program (nvcc, ptxas, nvdisasm, cuobjdump) is the environment's failure:
every command exits 3 with one line naming the program and how to get it (DESIGN.md, "Exit codes"),
never 2 (bad input) and never a campaign that counts each program "not covered".

The tools are hidden the way a machine without them looks: PATH without the folders that hold them,
no ``$NVCC``, no nvidia wheels (``import nvidia`` fails), no /usr/local/cuda/bin
(``sass.toolchain.TOOLKIT_DIRS``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from fuzzgpu import sass
from fuzzgpu.backends import cuda
from fuzzgpu.cli import main as cli_main
from fuzzgpu.errors import EXIT_ENVIRONMENT

ROOT = Path(__file__).resolve().parents[2]
LITMUS = ROOT / "tests" / "litmus" / "cp-async" / "CPASYNC-wait-all.litmus"
TOOLS = ("nvcc", "ptxas", "nvdisasm", "cuobjdump")


def _hide(monkeypatch, tools: tuple[str, ...]) -> None:
    keep = [d for d in os.environ.get("PATH", "").split(os.pathsep)
            if d and not any((Path(d) / t).exists() for t in tools)]
    monkeypatch.setenv("PATH", os.pathsep.join(keep))
    if "nvcc" in tools:
        monkeypatch.delenv("NVCC", raising=False)
    monkeypatch.setitem(sys.modules, "nvidia", None)  # the pip wheels' namespace package: ImportError
    monkeypatch.setattr(sass.toolchain, "TOOLKIT_DIRS", ())
    sass.find_tool.cache_clear()
    sass.toolchain_id.cache_clear()


@pytest.fixture
def no_toolchain(monkeypatch):
    _hide(monkeypatch, TOOLS)
    assert all(sass.find_tool(t) is None for t in TOOLS)
    yield
    sass.find_tool.cache_clear()
    sass.toolchain_id.cache_clear()


@pytest.fixture
def no_disassembler(monkeypatch):
    _hide(monkeypatch, ("nvdisasm", "cuobjdump"))
    if sass.find_tool("nvcc") is None:
        pytest.skip("needs nvcc on PATH (the disassembler is what is missing)")
    yield
    sass.find_tool.cache_clear()
    sass.toolchain_id.cache_clear()


def _one_line_env_error(capsys, tool: str, how: str) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert err, "no message"
    (line,) = [l for l in err if "environment error" in l]
    assert f"{tool} not found" in line and how in line, line
    return line


@pytest.mark.parametrize("argv", [
    ["sass", "--arch", "sm_90", str(LITMUS)],
    ["run", str(LITMUS)],
    ["campaign", "--profile", "classic", "--backend", "static", "--time", "1", "--no-live", "--corpus", "{tmp}"],
    ["campaign", "--profile", "classic", "--backend", "cuda", "--time", "1", "--no-live", "--corpus", "{tmp}"],
    ["campaign", "--profile", "classic", "--backend", "auto", "--time", "1", "--no-live", "--corpus", "{tmp}"],
    ["campaign", "--profile", "classic", "--backend", "static", "--workers", "2", "--time", "1", "--corpus", "{tmp}"],
    ["replay", str(ROOT / "corpus"), "--backend", "static"],
    ["replay", str(ROOT / "corpus"), "--backend", "auto"],
], ids=lambda a: " ".join(x for x in a[:4] if not x.startswith(("/", "{"))))
def test_missing_nvcc_exits_3_with_one_line(no_toolchain, argv, tmp_path, capsys):
    argv = [a.replace("{tmp}", str(tmp_path / "c")) for a in argv]
    assert cli_main(argv) == EXIT_ENVIRONMENT
    line = _one_line_env_error(capsys, "nvcc", "install the CUDA toolkit")
    assert line.startswith(f"fuzzgpu {argv[0]}: environment error: ")
    assert not (tmp_path / "c").exists() or not any((tmp_path / "c").glob("*.json"))  # nothing ran


def test_missing_disassembler_exits_3_with_one_line(no_disassembler, tmp_path, capsys):
    assert cli_main(["sass", "--arch", "sm_90", str(LITMUS)]) == EXIT_ENVIRONMENT
    _one_line_env_error(capsys, "nvdisasm", "pip install nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump")
    assert cli_main(["campaign", "--profile", "classic", "--backend", "static", "--time", "1", "--no-live",
                     "--corpus", str(tmp_path / "c")]) == EXIT_ENVIRONMENT
    _one_line_env_error(capsys, "nvdisasm", "pip install nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump")


def test_missing_ptxas_for_ptx_input_exits_3(monkeypatch, tmp_path, capsys):
    _hide(monkeypatch, ("ptxas",))
    ptx = tmp_path / "k.ptx"
    ptx.write_text(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n")
    try:
        assert cli_main(["sass", "--arch", "sm_90", str(ptx)]) == EXIT_ENVIRONMENT
        _one_line_env_error(capsys, "ptxas", "install the CUDA toolkit")
    finally:
        sass.find_tool.cache_clear()


def test_sim_backend_and_check_need_no_toolchain(no_toolchain, tmp_path, capsys):
    """What needs no tool still runs: the model checker and the simulation."""
    assert cli_main(["check", str(LITMUS)]) in (0, 1)
    assert cli_main(["campaign", "--profile", "classic", "--backend", "sim", "--time", "1", "--no-live",
                     "--corpus", str(tmp_path / "c")]) in (0, 1)
    assert "environment error" not in capsys.readouterr().err


def test_cuda_identity_without_nvcc_is_no_nvcc(no_toolchain):
    """The evidence-cache identity of the cuda backend keeps its "no-nvcc" toolchain when nvcc is
    missing (it caught UserError before; MissingTool is an EnvError)."""
    assert cuda.CudaBackend.identity(SimpleNamespace(arch="sm_90")) == (
        f"cuda:values-v{cuda.codegen.VALUES_VERSION}", "sm_90", "no-nvcc")
    with pytest.raises(cuda.MissingTool, match="nvcc not found"):
        cuda.nvcc_path()


def test_nvcc_env_var_is_used_first(no_toolchain, monkeypatch, tmp_path):
    fake = tmp_path / "nvcc"
    fake.write_text("#!/bin/sh\necho fake\n")
    monkeypatch.setenv("NVCC", str(fake))
    assert cuda.nvcc_path() == str(fake)


# ------------------------------------------------------------------------------------------------
# issue 12, item 6: never "fixed" / "clean" where the SASS was not fully checked
# ------------------------------------------------------------------------------------------------


class _Static:
    """The static backend's answer for a program: its SASS findings and what it could not check."""

    name = "static"

    def __init__(self, unchecked: list[str]) -> None:
        self.unchecked = unchecked

    def describe(self) -> str:
        return "static (test)"

    def run(self, program, config=None):
        from fuzzgpu.backends.base import Histogram

        meta = (("static", True), ("sass_findings", []), ("sass_notes", []), ("sass_unchecked", self.unchecked))
        return Histogram(program.outcome_keys(), (), 0, 0, 0.0, "static", meta)


def test_replay_on_static_is_not_fixed_where_the_sass_was_not_fully_checked():
    """A SASS entry whose program, recompiled, has no finding but SASS the oracle could not fully
    account for is "not checked" (exit 3), not "fixed" (exit 0)."""
    from fuzzgpu.commands.replay import replay_entry
    from fuzzgpu.corpus import load_entry

    entry = load_entry(ROOT / "corpus" / "7be901686d91609a.json")
    assert entry.data.get("sass")
    r = replay_entry(entry, _Static(["PTX line 9 `ld.global.nc.u32 %r1, [%rd1]`: no SASS mapped"]))
    assert r["status"] == "skipped" and "not fully checked" in r["reason"] and "ld.global.nc" in r["reason"]
    assert replay_entry(entry, _Static([]))["status"] == "fixed"


def test_cuda_backend_without_a_gpu_exits_3(tmp_path, capsys, monkeypatch):
    """No PyCUDA (or no driver, no device) is the environment's failure, exit 3 -- it was a bad-input
    error (exit 2) once.  Without PyCUDA installed the import fails; with it, the device is hidden."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    monkeypatch.setitem(sys.modules, "pycuda", None)  # import pycuda -> ImportError, PyCUDA or not
    monkeypatch.setitem(sys.modules, "pycuda.driver", None)
    argv = ["campaign", "--profile", "classic", "--backend", "cuda", "--time", "1", "--no-live",
            "--corpus", str(tmp_path / "c")]
    assert cli_main(argv) == EXIT_ENVIRONMENT
    err = capsys.readouterr().err
    assert "environment error" in err and "PyCUDA" in err, err


def test_a_static_campaign_counts_sass_it_could_not_fully_check_as_not_covered(tmp_path):
    """A campaign on the static backend (nothing executed) over programs whose SASS the oracle could
    not fully account for does not count them as checked: each is 'not covered', with the reason
    (it counted them as passed before)."""
    import io

    from fuzzgpu import campaign as C

    prof = tmp_path / "mp.toml"
    prof.write_text("[shapes]\nMP = 1\n[hypothesis]\nmax_examples = 3\n")
    c = C.Campaign(C.load_profile(str(prof)), _Static(["PTX line 3 `ld.relaxed.gpu.u32`: no SASS mapped"]),
                   tmp_path / "corpus", prop="model", seed=3, out=io.StringIO(), live=False)
    c.max_runs = 1
    res = c.run(30)
    assert res.state.programs > 0
    assert sum(n for why, n in res.state.not_covered.items() if "SASS not fully checked" in why) == res.state.programs
    assert all(s["unsupported"] == s["programs"] for s in res.state.shapes.values())


@pytest.mark.parametrize("argv,kind,code", [
    (["run", "--json", "/nonexistent/x.litmus"], "usage", 2),
    (["tune", "--json", "/nonexistent/x.litmus"], "usage", 2),
    (["check", "--json", "/nonexistent/x.litmus"], "usage", 2),
])
def test_json_commands_print_their_error_as_json(capsys, argv, kind, code):
    """With --json a failure is one JSON object on stdout besides the line on stderr: a program
    reading stdout got nothing (hostile review: run --json and tune --json without a
    GPU printed nothing on stdout)."""
    import json

    assert cli_main(argv) == code
    out, err = capsys.readouterr()
    doc = json.loads(out.strip().splitlines()[-1])
    assert doc["kind"] == kind and doc.get("exit", code) == code and "x.litmus" in doc["error"] and "x.litmus" in err


def test_json_run_without_a_gpu_is_an_environment_error_as_json(capsys, monkeypatch):
    import json

    from fuzzgpu.errors import EnvError

    def no_gpu(*a, **k):
        raise EnvError("no GPU to run on")

    monkeypatch.setattr(cuda, "CudaBackend", no_gpu)
    assert cli_main(["run", "--json", str(ROOT / "tests/litmus/async-proxy/TMA-store-no-fence.litmus")]) == EXIT_ENVIRONMENT
    doc = json.loads(capsys.readouterr().out)
    assert doc["kind"] == "environment" and doc["exit"] == 3 and doc["error"].startswith("fuzzgpu run: environment error: no GPU")


def test_no_usable_gpu_is_the_environment_with_gpus_as_with_backend_cuda(tmp_path, capsys, monkeypatch):
    """Issue 27, item 6: the same condition, one exit code.  ``--backend cuda`` without a GPU exits 3;
    ``--gpus all`` with no GPU visible exited 2 (bad input), and ``--gpus N`` with fewer than N too:
    no usable GPU is the environment (docs/reliability.md, "Exit codes"), 3 in every form.  A
    malformed --gpus stays bad usage (2)."""
    from fuzzgpu.errors import EXIT_USAGE

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    monkeypatch.setitem(sys.modules, "pycuda", None)
    monkeypatch.setitem(sys.modules, "pycuda.driver", None)
    base = ["campaign", "--profile", "classic", "--time", "1", "--no-live", "--corpus", str(tmp_path / "c")]
    assert cli_main([*base, "--backend", "cuda"]) == EXIT_ENVIRONMENT
    capsys.readouterr()
    for gpus in ("all", "2"):
        assert cli_main([*base, "--backend", "cuda", "--gpus", gpus]) == EXIT_ENVIRONMENT, gpus
        err = capsys.readouterr().err
        assert "environment error" in err and err.count("\n") == 1, err
    assert cli_main([*base, "--backend", "cuda", "--gpus", "two"]) == EXIT_USAGE


def test_a_parallel_campaign_whose_every_worker_finds_no_gpu_exits_3_not_0(tmp_path):
    """Two (fake) GPUs visible, no PyCUDA: each worker stops with its environment error before its first
    program.  The parent restarted them until the time was up and ended "no new finding", exit 0;
    now it stops them at once (nothing heals by restarting) and exits 3 with one line."""
    import subprocess

    env = dict(os.environ, CUDA_VISIBLE_DEVICES="3,5", PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-c", "import sys; sys.modules['pycuda'] = None; sys.modules['pycuda.driver'] = None; "
                        "from fuzzgpu.cli import main; sys.exit(main(sys.argv[1:]))", "campaign", "--gpus", "all", "--backend", "cuda",
                        "--profile", "classic", "--time", "20", "--no-live", "--corpus", str(tmp_path / "c")],
                       capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "every worker failed" in r.stderr and r.stderr.count("\n") == 1, r.stderr
