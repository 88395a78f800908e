"""bench/oracle_speed.py --bars: the fix search's question of a candidate asked over every path and with
``prune_bars`` (the answers must be equal: tests/model/test_bar_pruning.py says why); here on a few
campaign draws, and the committed run's file: every answer equal, and the page's figures its own."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_few_campaign_draws_get_the_same_answer() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    import oracle_speed

    rows = oracle_speed.bars_rows("all", 12, [1])
    assert any("mbarrier" in r["uses"] for r in rows) and all(r["same"] for r in rows)
    assert all(r["full"] == r["pruned"] for r in rows)
