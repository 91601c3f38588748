"""`saz bench agreement` (tools/bench/agreement.py): which moves it takes from the records, and
how it scores a policy against them."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from saz.engine.games.base import Game
from saz.tools.bench.agreement import agreement, player_positions

# A 5x5 record in saz match's form: two random opening plies, then ref (White) and other (Black).
RECORD = ("(;FF[4]GM[1]SZ[5]KM[0.5]PB[other]PW[ref]GC[B+1 by score; the first 2 moves are the "
          "opening];B[aa];W[ee];B[cc];W[bb];B[dd];W[];B[ca];W[ac])")


@pytest.fixture
def records(tmp_path: Path) -> list[Path]:
    (tmp_path / "games").mkdir()
    (tmp_path / "games" / "0001.sgf").write_text(RECORD)
    return [tmp_path]


def test_only_the_players_own_choices_are_taken(records: list[Path]) -> None:
    """The opening's W[ee] and ref's pass are nobody's choice of a point; ref's B-side moves
    belong to the other engine."""
    found = player_positions(records, ["ref"], {}, "go")
    assert [move for _, move in found] == [1 * 5 + 1, 2 * 5 + 0]     # bb, ac
    assert [len(game.moves) for game, _ in found] == [3, 7]
    assert found[0][0].rules.komi == 0.5                                    # the record's KM


def test_max_ply_stops_each_game_there(records: list[Path]) -> None:
    assert [move for _, move in player_positions(records, ["ref"], {}, "go", max_ply=5)] == [6]
    both = player_positions(records, ["ref", "other"], {}, "go")
    assert len(both) == 5                                             # cc bb dd ca ac


class Pointing:
    """A stand-in evaluator whose prior puts `weight` on one point and spreads the rest."""

    def __init__(self, point: int, weight: float) -> None:
        self.point, self.weight = point, weight

    def evaluate(self, games: Sequence[Game]) -> tuple[list[np.ndarray], np.ndarray]:
        priors = []
        for game in games:
            moves = np.asarray(game.legal_moves())
            prior = np.full(len(moves), (1 - self.weight) / (len(moves) - 1), np.float32)
            prior[moves == self.point] = self.weight
            priors.append(prior)
        return priors, np.zeros(len(games), np.float32)


def test_agreement_counts_top1_topk_and_the_prior_given(records: list[Path]) -> None:
    positions = player_positions(records, ["ref"], {}, "go")         # bb, then ac
    result = agreement(Pointing(6, 0.5), positions, top=3)  # type: ignore[arg-type]
    assert result.positions == 2
    assert result.top1 == 0.5                                         # bb at the first position
    # ac at the second: the spread prior ties, and ties keep the legal moves' order.
    assert result.topk == 0.5
    legal = len(positions[1][0].legal_moves())
    assert result.mean_prior == pytest.approx((0.5 + 0.5 / (legal - 1)) / 2)


def test_a_record_with_setup_stones_is_refused(tmp_path: Path) -> None:
    (tmp_path / "games").mkdir()
    (tmp_path / "games" / "0001.sgf").write_text("(;GM[1]SZ[5]PB[a]PW[ref]AB[cc];W[dd])")
    with pytest.raises(ValueError, match="setup stones"):
        player_positions([tmp_path], ["ref"], {}, "go")


def test_a_record_of_another_game_is_refused(records: list[Path]) -> None:
    with pytest.raises(ValueError, match="is a record of go, not gomoku"):
        player_positions(records, ["ref"], {}, "gomoku")
