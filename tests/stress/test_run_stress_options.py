"""``fuzzgpu run``'s stress options (issue 16): one option per StressConfig knob, ``--stress-config``
reading a ``[stress]`` table (``fuzzgpu tune --out``'s, or a profile's), the precedence option >
file > default, the configuration reaching the backend's RunConfig and the run's output, and
``fuzzgpu tune``'s reproducing ``fuzzgpu run`` line.  On the CPU the backend is a stand-in that
records the RunConfig and samples outcomes with the sim backend; the GPU run is marked ``gpu``."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import random
import shlex
import tomllib
from pathlib import Path
from typing import Any

import pytest
from paths import LITMUS, ROOT

from fuzzgpu import cli
from fuzzgpu.backends.base import RunConfig
from fuzzgpu.backends.sim import SimBackend
from fuzzgpu.commands import run as run_cmd
from fuzzgpu.commands import stress_options, tune as tune_cmd
from fuzzgpu.stress.space import BOUNDS, SPACE, StressConfig, read_knobs, sample

MP = str(LITMUS / "gpu" / "MP-relaxed-gpu.litmus")
TMA = "tests/litmus/async-proxy/TMA-store-no-fence.litmus"
TUNED = "strategies/stress/tma-store-tuned.toml"
KNOBS = [f.name for f in dataclasses.fields(StressConfig)]


def main(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = cli.main(argv)
        except SystemExit as e:  # argparse
            rc = e.code if isinstance(e.code, int) else 2
    return rc, out.getvalue(), err.getvalue()


def parse_run(argv: list[str]) -> Any:
    return cli.build_parser().parse_args(["run", *argv])


def one_line(err: str, *names: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    for n in names:
        assert n in lines[0], (n, lines[0])
    return lines[0]


# -- the options ----------------------------------------------------------------------------


def _run_parser() -> Any:
    sub = next(a for a in cli.build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    return sub.choices["run"]


def test_every_knob_has_an_option_with_help() -> None:
    p = _run_parser()
    strings = {s for a in p._actions for s in a.option_strings}
    for k in KNOBS:
        opt = "--" + k.replace("_", "-")
        assert opt in strings, opt
        if isinstance(getattr(StressConfig(), k), bool):
            assert "--no-" + k.replace("_", "-") in strings, k
        f = next(f for f in dataclasses.fields(StressConfig) if f.name == k)
        assert f.metadata.get("help"), k
    # the existing options keep their spelling
    assert {"--stride", "--barrier", "--spin", "--stress", "--stress-config"} <= strings
    text = p.format_help()
    assert all(("--" + k.replace("_", "-")) in text for k in KNOBS)


def test_defaults_are_those_of_run_before_the_options() -> None:
    """No option: exactly the RunConfig `fuzzgpu run` built before (stride 1, no barrier, spin 0,
    no stress; every other knob RunConfig's default)."""
    args = parse_run([MP])
    before = RunConfig(instances=100_000_000, stride=1, barrier=False, spin=0, stress=0, seed=1, budget=100_000,
                       pdl_delay_ns=30_000, pdl=True, host_epoch=True)
    assert run_cmd.run_config(args, run_cmd.stress_config(args)) == before
    assert run_cmd.DEFAULT_STRESS == StressConfig.of(RunConfig())


def test_each_option_sets_its_knob_and_only_it() -> None:
    for k in KNOBS:
        d = getattr(run_cmd.DEFAULT_STRESS, k)
        if isinstance(d, bool):
            argv = ["--no-" + k.replace("_", "-")] if d else ["--" + k.replace("_", "-")]
            want: Any = not d
        else:
            # a value the tuner tries, or (a knob it does not search) the other end of its bounds
            want = next((v for v in SPACE[k] if v != d), None)
            if want is None:
                want = next(v for v in BOUNDS[k] if v != d)
            argv = ["--" + k.replace("_", "-"), str(want)]
        got = run_cmd.stress_config(parse_run([*argv, MP]))
        assert got == dataclasses.replace(run_cmd.DEFAULT_STRESS, **{k: want}), (k, got)


@pytest.mark.parametrize("knob", [k for k in KNOBS if k in BOUNDS])
def test_out_of_bounds_and_non_integers_exit_2_naming_the_option(knob: str) -> None:
    lo, hi = BOUNDS[knob]
    opt = "--" + knob.replace("_", "-")
    for bad in (str(lo - 1), str(hi + 1), "x", "1.5", ""):
        rc, _, err = main(["run", opt, bad, MP])
        assert rc == 2, (opt, bad, err)
        one_line(err, opt)


def test_test_ctas_must_be_a_power_of_two() -> None:
    rc, _, err = main(["run", "--test-ctas", "300", MP])
    assert rc == 2
    one_line(err, "--test-ctas", "power of two")
    assert run_cmd.stress_config(parse_run(["--test-ctas", "512", MP])).test_ctas == 512
    with pytest.raises(ValueError, match="stress.test_ctas: expected a power of two"):
        StressConfig.from_table({"test_ctas": 384})  # a profile's table too


# -- --stress-config ------------------------------------------------------------------------


def test_the_shipped_tuned_table_is_the_h200_tune_output() -> None:
    shipped = read_knobs(ROOT / TUNED)
    bench = read_knobs(ROOT / "bench" / "results" / "campaigns" / "h200-all-600s" / "tma-store-tuned.toml")
    # a knob added after the tune (stripe_ctas) is at its default in the shipped table
    assert shipped == {**{k: v for k, v in StressConfig().to_table().items() if k not in bench}, **bench}
    sc = run_cmd.stress_config(parse_run(["--stress-config", str(ROOT / TUNED), TMA]))
    assert (sc.stride, sc.stress, sc.barrier, sc.spin) == (32, 256, False, 0)
    assert sc == StressConfig(**bench) and not sc.stripe_ctas


def test_precedence_option_over_file_over_default(tmp_path: Path) -> None:
    f = tmp_path / "partial.toml"
    f.write_text("[stress]\nstride = 8\nbarrier = true\nspin = 3000\ninstances = 5\n")
    # the file over the defaults; knobs it does not name keep run's defaults; instances is not read
    sc = run_cmd.stress_config(parse_run(["--stress-config", str(f), MP]))
    assert sc == dataclasses.replace(run_cmd.DEFAULT_STRESS, stride=8, barrier=True, spin=3000)
    assert run_cmd.run_config(parse_run(["--stress-config", str(f), MP]), sc).instances == 100_000_000
    # options over the file, wherever they stand on the line
    for argv in (["--stress-config", str(f), "--no-barrier", "--stride", "2", MP],
                 ["--no-barrier", "--stride", "2", "--stress-config", str(f), MP]):
        sc = run_cmd.stress_config(parse_run(argv))
        assert sc == dataclasses.replace(run_cmd.DEFAULT_STRESS, stride=2, barrier=False, spin=3000), argv


def test_a_profile_with_a_stress_table_is_read() -> None:
    sc = run_cmd.stress_config(parse_run(["--stress-config", str(ROOT / "strategies" / "classic.toml"), MP]))
    table = tomllib.loads((ROOT / "strategies" / "classic.toml").read_text())["stress"]
    assert sc == dataclasses.replace(run_cmd.DEFAULT_STRESS, **{k: v for k, v in table.items() if k in KNOBS})
    assert sc.barrier and sc.spin == 1000


BAD_FILES = [
    ("[stress]\nstride = 0\n", "stress.stride", ":2:"),
    ("# c\n[stress]\nspin = 10\nbarrier = 1\n", "stress.barrier", ":4:"),
    ("[stress]\nstress = -1\n", "stress.stress", ":2:"),
    ("[stress]\ntest_ctas = 300\n", "stress.test_ctas", ":2:"),
    ("[stress]\nspin = \"many\"\n", "stress.spin", ":2:"),
    ("[stress]\nstrde = 4\n", "stress.strde", ":2:"),
    ("[stress]\npre_stress_pattern = 4\n", "stress.pre_stress_pattern", ":2:"),
    ("stress.stride = 0\n", "stress.stride", ":1:"),
    ("x = 1\nstress = 3\n", "key 'stress' must be a table", ":2:"),
    ("[shapes]\nstride = 0\n[stress]\nspin = -1\n", "stress.spin", ":4:"),
    # quoted keys and headers, dotted keys, inline tables, a string that looks like a table
    ("x = 1\nstress = { spin = -1 }\n", "stress.spin", ":2:"),
    ("x = 1\n\nstress = { spin = 1, strde = 4 }\n", "stress.strde", ":3:"),
    ("[ \"stress\" ]\nspin = -1\n", "stress.spin", ":2:"),
    ("# c\n\"stress\".'spin' = -1\n", "stress.spin", ":2:"),
    ("[stress]\n\"spin\" = 1\n'stride' = 0\n", "stress.stride", ":3:"),
    ("[stress]\n\"a.b\" = 1\n", "stress.a.b", ":2:"),
    ("doc = \"\"\"\n[stress]\nspin = 1\n\"\"\"\n[stress]\nspin = -1\n", "stress.spin", ":6:"),
    ("x = [\n  1,\n]\n\"stress\" = 3\n", "key 'stress' must be a table", ":4:"),
    ("[shapes]\nMP = 1\n", "[stress]", ""),
    ("[stress\nstride = 1\n", "not valid TOML", ""),
    (b"[stress]\nstride = \xff\n", "UTF-8", ""),
]


@pytest.mark.parametrize("text,key,line", BAD_FILES, ids=[k for _, k, _ in BAD_FILES])
def test_bad_stress_files_exit_2_with_one_line_naming_the_file_and_key(tmp_path: Path, text: Any, key: str,
                                                                    line: str) -> None:
    f = tmp_path / "bad.toml"
    (f.write_bytes if isinstance(text, bytes) else f.write_text)(text)
    rc, out, err = main(["run", "--stress-config", str(f), MP])
    assert rc == 2 and not out, err
    msg = one_line(err, str(f) + line, key)
    assert "Traceback" not in msg


def test_missing_stress_file_and_a_folder_exit_2(tmp_path: Path) -> None:
    for f in (tmp_path / "none.toml", tmp_path):
        rc, _, err = main(["run", "--stress-config", str(f), MP])
        assert rc == 2, err
        one_line(err, str(f))


# -- the config reaches the backend and the output ------------------------------------------


class _Recorder:
    """A stand-in for CudaBackend: records each RunConfig and samples outcomes on the CPU."""

    configs: list[RunConfig] = []

    def __init__(self, *_: Any, **__: Any) -> None:
        self.sim = SimBackend()

    def run(self, program: Any, config: RunConfig, watch: Any = None) -> Any:
        type(self).configs.append(config)
        return self.sim.run(program, dataclasses.replace(config, instances=min(config.instances, 1 << 16)))

    def compile(self, program: Any) -> Any:
        return program

    def run_compiled(self, program: Any, config: RunConfig) -> Any:
        return self.run(program, config)

    def describe(self) -> str:
        return "recorder (sim)"

    def close(self) -> None:
        pass


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> type[_Recorder]:
    from fuzzgpu.backends import cuda

    monkeypatch.setattr(cuda, "CudaBackend", _Recorder)
    monkeypatch.setattr(cuda, "nvcc_path", lambda: "nvcc")
    monkeypatch.setattr(_Recorder, "configs", [])
    return _Recorder


def test_the_config_reaches_the_backend_and_the_text_output(recorder: type[_Recorder]) -> None:
    rc, out, err = main(["run", "--stress-config", str(ROOT / TUNED), "--pre-stress", "16", "--no-permute-threads",
                         "--instances", "65536", "--seed", "7", MP])
    assert rc == 0, err
    (cfg,) = recorder.configs
    want = dataclasses.replace(StressConfig(**read_knobs(ROOT / TUNED)), pre_stress=16, permute_threads=False)
    assert StressConfig.of(cfg) == want and cfg.seed == 7 and cfg.instances == 65536
    (line,) = [ln for ln in out.splitlines() if ln.startswith("Stress ")]
    assert line.startswith("Stress " + " ".join(f"{k}={v}" for k, v in want.to_table().items()) + " (seed=7; knobs from ")


def test_the_config_is_in_the_json_output(recorder: type[_Recorder]) -> None:
    rc, out, err = main(["run", "--json", "--stride", "4", "--barrier", "--instances", "65536", MP])
    assert rc == 0, err
    d = json.loads(out)
    want = dataclasses.replace(run_cmd.DEFAULT_STRESS, stride=4, barrier=True)
    assert d["stress"] == want.to_table() and d["stress_config"] is None
    assert StressConfig.from_table(d["config"]) == want == StressConfig.of(recorder.configs[0])


# -- fuzzgpu tune's reproducing command line ------------------------------------------------


def _stress_of_command(line: str) -> StressConfig:
    words = shlex.split(line)
    assert words[:2] == ["fuzzgpu", "run"]
    return run_cmd.stress_config(parse_run(words[2:]))


def test_run_command_reproduces_every_configuration() -> None:
    for sc in sample(random.Random(5), 40):
        line = tune_cmd.run_command("tests/litmus/a b.litmus", sc)
        assert _stress_of_command(line) == sc, line
        assert shlex.split(line)[-1] == "tests/litmus/a b.litmus"
    assert tune_cmd.run_command("x.litmus", run_cmd.DEFAULT_STRESS) == "fuzzgpu run x.litmus"
    assert tune_cmd.run_command(TMA, StressConfig(**read_knobs(ROOT / TUNED))) == \
        f"fuzzgpu run --stride 32 --stress 256 {TMA}"
    assert shlex.split(tune_cmd.run_command("-x.litmus", StressConfig()))[-2:] == ["--", "-x.litmus"]


def test_arguments_are_minimal() -> None:
    sc = dataclasses.replace(run_cmd.DEFAULT_STRESS, spin=300)
    assert stress_options.arguments(sc, run_cmd.DEFAULT_STRESS) == ["--spin", "300"]


def test_tune_prints_the_run_line_of_its_best(recorder: type[_Recorder], tmp_path: Path) -> None:
    out_file = tmp_path / "tuned.toml"
    base = ["tune", "--budget", "0.2", "--candidates", "4", "--instances", "65536"]
    rc, out, err = main([*base, "--out", str(out_file), MP])
    assert rc == 0, err
    last = out.strip().splitlines()[-1]
    assert last.startswith("Run the best: fuzzgpu run ") and "  (or: fuzzgpu run --stress-config " in last, last
    direct, via = last[len("Run the best: "):].split("  (or: ")
    best = StressConfig.from_table(tomllib.loads(out_file.read_text())["stress"])
    assert _stress_of_command(direct) == best == _stress_of_command(via.rstrip(")"))
    rc, out, err = main([*base, "--json", MP])
    assert rc == 0, err
    d = json.loads(out)
    assert _stress_of_command(d["run_command"]) == StressConfig.from_table(d["best"]["stress"])


# -- on a GPU -------------------------------------------------------------------------------


@pytest.mark.gpu
def test_the_tuned_table_runs_on_the_gpu() -> None:
    """The --help example: the H200-tuned stress for TMA-store-no-fence reaches the harness."""
    rc, out, err = main(["run", "--json", "--instances", "4e6", "--stress-config", str(ROOT / TUNED), str(ROOT / TMA)])
    assert rc in (0, 1), err
    d = json.loads(out)
    assert d["stress"] == StressConfig(**read_knobs(ROOT / TUNED)).to_table()
    assert (d["config"]["stride"], d["config"]["stress"], d["config"]["barrier"], d["config"]["spin"]) == (32, 256, False, 0)
