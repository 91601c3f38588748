"""Two `pbrain-saz` processes play a game of Gomoku under Gomocup time limits, refereed by
`saz match`'s referee (`tools/match/referee.py`) as a Gomocup manager would: it sends the limits
(`timeout_turn`, `timeout_match`), `time_left` before every move, BEGIN, or BOARD when the game
starts from an opening, then TURN; it checks every move against the rules, times every turn in
wall time (our I/O and the pipes included), charges each brain its start-up (process creation
to START's OK) and its own turns, and scores the end by the rules. Staying within the turn and
match limits is the property under test: with no margin, a brain over either loses the game on
time, so every game must end by the rules; it is not a speed figure.

The default run plays fast (200 ms a turn, where our whole turn overhead must fit in the margin);
the slow one at the limits of the brief (1 s a turn, 60 s a match, 15x15):

    .venv/bin/python -m pytest tests/test_gomocup_match.py -m slow -q -s
"""
from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from saz.engine.games import BLACK, DRAW, WHITE
from saz.engine.games.gomoku import Gomoku
from saz.tools.match.adapters import EngineSpec, GameSetup
from saz.tools.match.referee import GameRecord, Reason, play_game
from saz.tools.match.time_control import MatchTimeControl


def play_match(model: Path, size: int, turn_ms: int, match_ms: int,
               opening: Sequence[tuple[int, int]] = ()) -> GameRecord:
    """One game between two brains; with an `opening` (moves from Black's first), each brain
    first gets the position by BOARD, as Gomocup managers start games from openings."""
    brain = [sys.executable, "-m", "saz.protocol.gomocup", "--model", str(model)]
    setup = GameSetup("gomoku", size, size,
                      MatchTimeControl(base=match_ms / 1000, per_move=turn_ms / 1000))
    points = [Gomoku(size).point(x, y) for x, y in opening]
    return play_game(setup, EngineSpec("black", tuple(brain)), EngineSpec("white", tuple(brain)),
                     points, margin=0.0)


def check(record: GameRecord, turn_ms: int, match_ms: int) -> None:
    game = record.game
    assert record.reason in (Reason.FIVE, Reason.DRAW), f"{record.result}: {record.detail}"
    assert record.exit_status == {BLACK: 0, WHITE: 0}
    assert max(record.slowest.values()) <= turn_ms / 1000, f"a turn took {record.slowest}"
    assert max(record.seconds.values()) <= match_ms / 1000, f"match time: {record.seconds}"
    if record.winner != DRAW:  # the last move made the five, for the side that played it
        line = game.winning_line()  # type: ignore[attr-defined]
        assert line is not None and game.moves[-1] in line
        assert record.winner == (BLACK if len(game.moves) % 2 else WHITE)
    else:
        assert len(game.moves) == game.num_points
    print(f"\n{len(game.moves)} moves, {record.result}; slowest turns "
          f"{record.slowest[BLACK]:.3f} s and {record.slowest[WHITE]:.3f} s; match time used "
          f"{record.seconds[BLACK]:.2f} s and {record.seconds[WHITE]:.2f} s")


#: Openings as Gomocup starts games from (moves from Black's first).
OPENINGS = {"empty board": (), "three stones": ((7, 7), (8, 6), (9, 9)),
            "four stones": ((3, 3), (4, 4), (11, 3), (7, 10))}


@pytest.mark.parametrize("opening", ["empty board", "three stones"])
def test_a_fast_game_between_two_brains(tiny_model, opening: str) -> None:
    record = play_match(tiny_model("gomoku").path, 15, turn_ms=200, match_ms=5000,
                        opening=OPENINGS[opening])
    check(record, 200, 5000)


@pytest.mark.slow
@pytest.mark.parametrize("opening", sorted(OPENINGS))
def test_a_game_at_gomocup_limits(tiny_model, opening: str) -> None:
    record = play_match(tiny_model("gomoku").path, 15, turn_ms=1000, match_ms=60000,
                        opening=OPENINGS[opening])
    check(record, 1000, 60000)
