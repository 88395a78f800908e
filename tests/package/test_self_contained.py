"""The repository depends on no file outside itself (issue 28.1): a fresh clone with nothing beside
it runs every test and every ``--help`` example.  ``fuzzgpu check --help`` once named
``../shared/peer-suites/dat3m-ptx`` and 18 tests skipped where that folder was not beside the
checkout; the Dat3M suite now lives in tests/litmus/dat3m."""

from __future__ import annotations

import csv
import re
import subprocess

from paths import DAT3M, ROOT

#: a path that leaves the repository: the sibling ``shared/`` folder of the development machine, or a
#: (tests sit one folder down, tests/<group>/, so parents[2] is the root and parents[3] above it)
#: Python path computed above the repository root
OUTSIDE = re.compile(r"\.\./shared|peer-suites|ROOT\.parent\b|parents\[[3-9]\]")
TEXT = (".py", ".toml", ".ini", ".md", ".cfg", ".txt", ".sh", ".cu", ".cuh")


def _repo_files() -> list[str]:
    """The files a clone has: tracked, and untracked ones git does not ignore."""
    r = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                       cwd=ROOT, capture_output=True, text=True, check=True, timeout=60)
    return [f for f in r.stdout.split("\0") if f]


def test_no_file_refers_outside_the_repository() -> None:
    hits = []
    for rel in _repo_files():
        path = ROOT / rel
        if not (rel.endswith(TEXT) or rel == ".ci/run") or not path.is_file() or rel == "tests/package/test_self_contained.py":
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if OUTSIDE.search(line):
                hits.append(f"{rel}:{n}: {line.strip()}")
    assert not hits, "\n".join(hits)


def test_the_dat3m_suite_is_in_the_repository_with_its_licences_and_provenance() -> None:
    files = _repo_files()
    rel = DAT3M.relative_to(ROOT).as_posix()
    litmus = [f for f in files if f.startswith(rel + "/") and f.endswith(".litmus")]
    with open(DAT3M / "expected.csv") as f:
        listed = {r[0] for r in csv.reader(f) if r and not r[0].startswith("#")}
    assert len(litmus) == 183 and {f[len(rel) + 1:] for f in litmus} == listed
    for licence in ("LICENCE-Dat3M.txt", "Nvidia/LICENSE"):
        assert f"{rel}/{licence}" in files, licence
    readme = (DAT3M / "README.md").read_text()
    assert "hernanponcedeleon/Dat3M" in readme and "30640123b88d" in readme and "litmus/PTX/" in readme
