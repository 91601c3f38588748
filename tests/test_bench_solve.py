"""`saz bench solve` (tools/bench/solve.py): how many empty points the Othello endgame solver
finishes within a time limit, on positions random play reaches."""
from __future__ import annotations

import pytest

from saz.tools.bench.cli import main
from saz.tools.bench.solve import position


def _rows(out: str) -> list[list[str]]:
    return [[cell.strip() for cell in line.split("|")[1:-1]]
            for line in out.splitlines() if line.startswith("| ")][1:]


def test_a_row_per_number_of_empty_points(capsys: pytest.CaptureFixture[str]) -> None:
    """On 4x4 every endgame is solved at once: a row for each E from 3 up to the opening's 12
    empty points (exclusive), each with its nodes, and every E within the limit."""
    assert main(["solve", "--size", "4", "--from", "3", "--positions", "2", "--limit", "5"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Othello 4x4 endgames by random play, 2 per row, seed 0")
    rows = _rows(out)
    assert [int(row[0]) for row in rows] == list(range(3, 12))
    for _, *cells in rows:
        exact_median, exact_max, exact_nodes, wdl_median, wdl_max, wdl_nodes = cells
        assert 0 <= float(exact_median) <= float(exact_max) < 5
        assert 0 <= float(wdl_median) <= float(wdl_max) < 5
        assert int(exact_nodes.replace(",", "")) > 0 and int(wdl_nodes.replace(",", "")) > 0
    assert out.rstrip().endswith("largest E with every solve within 5 s (exact): 11\n"
                                 "largest E with every solve within 5 s (wdl): 11")


def test_a_solve_past_its_node_budget_is_not_solved(capsys: pytest.CaptureFixture[str]) -> None:
    """Ten empty points on 6x6 take over a thousand nodes: with ten allowed, neither mode solves
    its first row, and both stop there."""
    assert main(["solve", "--size", "6", "--from", "10", "--positions", "1",
                 "--max-nodes", "10"]) == 0
    out = capsys.readouterr().out
    assert _rows(out) == [["10", "inf", "inf", "10", "inf", "inf", "10"]]
    assert "(exact): none" in out and "(wdl): none" in out


@pytest.mark.parametrize("empties", [4, 9, 20])
def test_positions_are_repeatable_games_with_that_many_empty_points(empties: int) -> None:
    game = position(6, 6, empties, "0-9-1")
    assert game.num_empty == empties and not game.is_over()
    assert position(6, 6, empties, "0-9-1").moves == game.moves
