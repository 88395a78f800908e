"""Where the tests find the project's files (all inside the repository)."""

from __future__ import annotations

import csv
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
LITMUS = ROOT / "tests" / "litmus"
#: Dat3M's PTX litmus suite with its verdicts (provenance and licences in its README.md)
DAT3M = LITMUS / "dat3m"
#: the focused profile of the kill/restart tests
KILL_PROFILE = ROOT / "tests" / "profiles" / "kill-mp.toml"



def bench_script(file: str) -> ModuleType:
    """``bench/FILE`` imported as a module (named ``FILE``'s stem with ``_bench``: the benches are
    scripts, not a package; their own imports of other benches find them on ``sys.path``)."""
    name = Path(file).stem + "_bench"
    if name in sys.modules:
        return sys.modules[name]
    if str(ROOT / "bench") not in sys.path:
        sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / file)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def own_litmus() -> list[Path]:
    """The project's own .litmus files under tests/litmus (Dat3M's suite, under tests/litmus/dat3m, not included)."""
    return sorted(f for f in LITMUS.rglob("*.litmus") if DAT3M not in f.parents)


def catalogue_rows(folder: Path) -> list[dict[str, str]]:
    """The rows of a litmus catalogue's ``expected.csv`` (a header line; blank lines and ``#``
    comments skipped); none when the folder has no such file."""
    path = folder / "expected.csv"
    if not path.exists():
        return []
    with open(path) as f:
        return list(csv.DictReader(line for line in f if line.strip() and not line.startswith("#")))
