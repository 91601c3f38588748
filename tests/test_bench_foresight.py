"""`saz bench foresight` (tools/bench/foresight.py): the value against recorded results, on the
whole board and in the search's window. The records are two real games against AIWine at 15x15
(the `aiwine_records` fixture: saz won game 1 as Black in 31 plies, lost game 6 as White in 21)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from saz.engine.evaluator import Evaluator
from saz.tools.bench.cli import main
from saz.tools.bench.foresight import read_values


def test_every_position_after_the_opening_is_set_against_its_result(
        tiny_model, aiwine_records: Path) -> None:
    evaluator = Evaluator(tiny_model("gomoku").path, threads=1)
    f = read_values(evaluator, [aiwine_records], 12, 30)
    # plies 2..30 of the 31-ply game (not its last, which ended it) and 2..20 of the 21-ply one
    assert sorted(f.plies.tolist()) == sorted([*range(2, 31), *range(2, 21)])
    # Black won both: +1 where Black is to move (an even number of plies played), -1 else
    assert (f.result == np.where(f.plies % 2 == 0, 1.0, -1.0)).all()
    assert ((f.share > 0) & (f.share <= 1)).all()
    assert (f.share < 1).any()  # a window of 12 cuts 15x15 early in a game
    cut = f.share < 1
    assert not np.allclose(f.whole[cut], f.window[cut], atol=1e-6)
    # A window as wide as the board is the board: the two readings agree.
    same = read_values(evaluator, [aiwine_records], 15, 30)
    assert (same.share == 1).all() and np.allclose(same.whole, same.window, atol=1e-6)


def test_the_table(tiny_model, aiwine_records: Path,
                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["foresight", "--model", str(tiny_model("gomoku").path),
                 "--records", str(aiwine_records)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("48 positions")
    assert out[4].startswith("| whole board | 48 |") and out[5].startswith("| window | 48 |")


def test_records_without_the_models_game_are_an_error(
        tiny_model, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "games").mkdir()
    assert main(["foresight", "--model", str(tiny_model("othello").path),
                 "--records", str(tmp_path)]) == 1
    assert "no position to evaluate" in capsys.readouterr().out
