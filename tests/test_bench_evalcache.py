"""`saz bench cache` (tools/bench/evalcache.py): a player's positions in records searched with the
evaluation cache off and on, the tree reused from move to move as the engine reuses it.

The records are real (`aiwine_records`: two 15x15 games against AIWine); the network is the
shipped Gomoku model, so the priors are sharp and the searches meet the same positions again.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from saz.tools.bench.cli import main


def test_the_cache_answers_leaves_the_searches_met_before(
        aiwine_records: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cache", "--records", str(aiwine_records), "--player", "saz-rootfix",
                 "--games", "1", "--visits", "200", "--threads", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    rows = {line.split("|")[1].strip(): [cell.strip().replace(",", "")
                                        for cell in line.split("|")[2:-1]]
            for line in out if line.startswith("| cache ")}
    off, on = rows["cache off"], rows["cache on"]
    assert off[0] == on[0] and int(off[0]) > 5  # searches: every position saz chose a move in
    assert off[3] == "0 (0.0%)"
    cached = int(on[3].split()[0])
    assert cached > 0
    # The same visits over the same positions: what the cache answered, the network did not.
    assert int(on[2]) + cached == pytest.approx(int(off[2]), rel=0.05)
    assert out[-1].startswith("1 game at 200 visits: the cache on took")


def test_a_player_not_in_the_records_is_an_error(aiwine_records: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cache", "--records", str(aiwine_records), "--player", "nobody"]) == 1
    assert "no game of nobody" in capsys.readouterr().out
