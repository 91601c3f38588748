"""`saz bench guard` (tools/bench/guard.py): which position of a lost game it takes, and the table.

The records are real: docs/matches/gomoku-threats-rootfix-vs-aiwine-15x15, game 6, which saz
lost to AIWine as White, and game 1 of the same match, which saz won. The table is judged with
generation 118 of the Gomoku run (shipped when the test was written), whose plain search walks
into the win there and whose second look finds the defence.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import GOMOKU_GEN118
from saz.tools.bench.cli import main
from saz.tools.bench.guard import blunders


def test_it_takes_the_move_before_the_winners_first_win_by_threats(
        aiwine_records: Path) -> None:
    found = blunders([aiwine_records], "aiwine", 500_000)
    assert [(b.record.name, b.ply) for b in found] == [("0006.sgf", 7)]
    position = found[0].game
    assert position.to_move == -1 and len(position.moves) == 7  # White, saz, to move
    turned = position.copy()
    turned.set_to_move(1)
    assert turned.threat_win(500_000, threes=True) is not None  # Black threatens already
    # The other way round: only game 1, which AIWine lost.
    won = blunders([aiwine_records], "saz-rootfix", 500_000)
    assert [b.record.name for b in won] == ["0001.sgf"]


def test_the_table_judges_both_searches(aiwine_records: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["guard", "--model", str(GOMOKU_GEN118), "--records",
                 str(aiwine_records), "--opponent", "aiwine"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2].split("|")[2:5] == [" 7 ", " L10 refuted ", " L8 holds "]
    assert out[-1].endswith("without the second look: 0 held, with it (default): 1 held")
