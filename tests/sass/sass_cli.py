"""What the tests of ``fuzzgpu sass`` on the command line share: the CLI's cache in the test's own
folder (an autouse fixture: import it into the test module) and one call of the CLI."""

from __future__ import annotations

import pytest

from fuzzgpu.cli import main as cli_main


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """The CLI caches .cu inputs under $XDG_CACHE_HOME: a test's own folder, never the user's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


def sass_cli(capsys, *args: str) -> tuple[int, str, str]:
    """``fuzzgpu sass ARGS`` in process: its exit status, stdout and stderr."""
    rc = cli_main(["sass", *args])
    out, err = capsys.readouterr()
    return rc, out, err
