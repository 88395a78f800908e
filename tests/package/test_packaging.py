"""The package as a wheel ships: every subpackage of fuzzgpu/ and its data files (the profiles,
py.typed). A listed set of packages once built a wheel without fuzzgpu.model and fuzzgpu.commands,
so an installed fuzzgpu failed on --help (issue 12.3). `.ci/run` also builds the wheel, installs it in
a fresh venv and runs every subcommand's --help and a `check` from it; this test builds the wheel and
reads its file list, which is enough to catch a missing package on every test run."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from paths import ROOT


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory) -> set[str]:
    out = tmp_path_factory.mktemp("wheel")
    src = tmp_path_factory.mktemp("src") / "fuzzgpu"
    # build from a copy: setuptools writes build/ and *.egg-info into the source tree
    # (bench/, tests/, corpus/ at the top only: fuzzgpu/corpus/ is a subpackage that must ship)
    anywhere = shutil.ignore_patterns(".git", ".hypothesis", "build", "*.egg-info", ".tox", "__pycache__", ".venv*", "fuzz-corpus")
    top = {"bench", "tests", "corpus"}

    def ignore(folder: str, names: list[str]) -> set[str]:
        return set(anywhere(folder, names)) | (top & set(names) if Path(folder) == ROOT else set())

    shutil.copytree(ROOT, src, ignore=ignore)
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(src)],
                       capture_output=True, text=True, check=False, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    (whl,) = out.glob("fuzzgpu-*.whl")
    with zipfile.ZipFile(whl) as z:
        return set(z.namelist())


def test_wheel_has_every_subpackage(wheel_names):
    pkg = ROOT / "fuzzgpu"
    inits = {str(p.relative_to(ROOT)) for p in pkg.rglob("__init__.py") if "__pycache__" not in p.parts}
    assert inits and inits <= wheel_names, sorted(inits - wheel_names)


def test_wheel_has_the_data_files(wheel_names):
    pkg = ROOT / "fuzzgpu"
    data = {str(p.relative_to(ROOT)) for ext in ("*.toml", "*.cuh", "py.typed") for p in pkg.rglob(ext)}
    assert any(n.endswith(".toml") for n in data)
    assert data <= wheel_names, sorted(data - wheel_names)


def test_shipped_profiles_are_the_top_level_ones():
    """``strategies/*.toml`` is what users edit; the package ships the same files as its defaults."""
    top = {p.name: p.read_bytes() for p in (ROOT / "strategies").glob("*.toml")}
    shipped = {p.name: p.read_bytes() for p in (ROOT / "fuzzgpu" / "profiles").glob("*.toml")}
    assert top == shipped
