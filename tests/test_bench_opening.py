"""`saz bench opening` (tools/bench/opening.py): lines counted from the edge, and the table."""
from __future__ import annotations

import numpy as np
import pytest

from saz.engine.evaluator import default_model_path
from saz.engine.games.go import Go
from saz.tools.bench.cli import main
from saz.tools.bench.opening import line_of, line_shares


@pytest.mark.parametrize("point, width, height, line", [
    (0, 19, 19, 1),             # the corner
    (3 * 19 + 3, 19, 19, 4),    # D16, a star point
    (9 * 19 + 9, 19, 19, 10),   # tengen
    (4 * 9 + 4, 9, 9, 5),
    (2 * 7 + 6, 7, 5, 1),       # the right edge of a wide board
    (2 * 7 + 3, 7, 5, 3),       # the middle row of five
])
def test_a_points_line_counts_from_its_nearest_edge(point: int, width: int, height: int,
                                                    line: int) -> None:
    assert line_of(point, width, height) == line


def test_the_shares_split_the_prior_by_line_and_leave_out_pass() -> None:
    game = Go(9)
    moves = [0, 1 * 9 + 1, 2 * 9 + 2, 3 * 9 + 3, 4 * 9 + 4, game.pass_move]
    priors = np.array([0.1, 0.2, 0.05, 0.4, 0.15, 0.1], dtype=np.float32)
    assert line_shares(game, moves, priors) == pytest.approx([0.1, 0.2, 0.05, 0.4, 0.15])


def test_the_table_has_a_row_per_size_and_its_shares_sum_to_the_board_prior(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["opening", "--model", str(default_model_path("go")), "--sizes", "7,9x7"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("|")[1].strip() for line in lines[2:]] == ["7x7", "9x7"]
    for row in lines[2:]:
        cells = [c.strip() for c in row.split("|")[2:7]]
        assert 97 <= sum(int(c.rstrip("%")) for c in cells) <= 100  # pass takes the rest
