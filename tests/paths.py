"""Where the tests find the project's and shared/'s files."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LITMUS = ROOT / "tests" / "litmus"
#: Dat3M's PTX litmus suite, read in place from ../shared (never copied)
DAT3M = ROOT.parent / "shared" / "peer-suites" / "dat3m-ptx"
#: the focused profile of the kill/restart tests
KILL_PROFILE = ROOT / "tests" / "profiles" / "kill-mp.toml"
