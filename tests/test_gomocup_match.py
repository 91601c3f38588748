"""Two `pbrain-saz` processes play a game of Gomoku under Gomocup time limits, refereed here as a
Gomocup manager would: the referee sends the limits, `time_left` before every move, BEGIN, or
BOARD when the game starts from an opening, then TURN; it checks every move against the rules,
times every turn in wall time (our I/O and the pipes included), charges each brain its start-up
and its own turns, and scores the end by the rules. Staying within the turn and match limits is
the property under test (a brain over them loses the game), not a speed figure.

The default run plays fast (200 ms a turn, where our whole turn overhead must fit in the margin);
the slow one at the limits of the brief (1 s a turn, 60 s a match, 15x15):

    .venv/bin/python -m pytest tests/test_gomocup_match.py -m slow -q -s
"""
from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from saz.engine.games import BLACK, DRAW, WHITE
from saz.engine.games.gomoku import Gomoku
from saz.protocol.gomocup_client import PbrainClient

#: How long past the turn limit the referee waits before it gives up on a brain (a hang).
TOLERANCE = 1.0


@dataclass
class Player:
    client: PbrainClient
    #: Match time used so far, as the manager counts it: from process creation to the answer to
    #: START, then its own turns.
    used: float = 0.0
    turns: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class MatchRecord:
    game: Gomoku
    #: Moves of the opening, played by the referee.
    opening: int
    #: Wall times of each brain's turns, as the referee measured them.
    black_turns: tuple[float, ...]
    white_turns: tuple[float, ...]
    #: Match time used by Black's brain and White's.
    used: tuple[float, float]


def play_match(model: Path, size: int, turn_ms: int, match_ms: int,
               opening: Sequence[tuple[int, int]] = ()) -> MatchRecord:
    """One game; with an `opening` (moves from Black's first), each brain first gets the position
    by BOARD, as Gomocup managers start games from openings, and TURN after that."""
    players: list[Player] = []  # Black's brain, White's
    try:
        for _ in range(2):  # one after the other: neither one's start-up is the other's time
            client = PbrainClient.spawn([sys.executable, "-m", "saz.protocol.gomocup",
                                         "--model", str(model)])
            players.append(Player(client))
            for key, value in (("timeout_turn", turn_ms), ("timeout_match", match_ms),
                               ("max_memory", 0), ("game_type", 1), ("rule", 0)):
                client.info(key, value)
            client.send(f"START {size}")
            reply = client.read_reply(timeout=30, sent_at=client.spawned_at)
            assert reply.text == "OK", reply
            players[-1].used = reply.seconds  # the match clock runs from process creation
        game = Gomoku(size)
        for x, y in opening:
            game.play(game.point(x, y))
        informed = [False, False]
        while not game.is_over():
            side = len(game.moves) % 2
            player = players[side]
            player.client.info("time_left", round(match_ms - 1000 * player.used))
            timeout = turn_ms / 1000 + TOLERANCE
            if not game.moves:
                reply = player.client.begin(timeout)
            elif not informed[side]:
                reply = player.client.board(
                    [(m % size, m // size, 1 if i % 2 == side else 2)
                     for i, m in enumerate(game.moves)], timeout)
            else:
                last = game.moves[-1]
                reply = player.client.turn(last % size, last // size, timeout=timeout)
            informed[side] = True
            player.used += reply.seconds
            player.turns.append(reply.seconds)
            game.play(game.point(*reply.move))  # IllegalMoveError: the brain broke the rules
        for player in players:
            assert player.client.close() == 0
    finally:
        for player in players:
            player.client.kill()
    return MatchRecord(game, len(opening), tuple(players[0].turns), tuple(players[1].turns),
                       (players[0].used, players[1].used))


def check(record: MatchRecord, turn_ms: int, match_ms: int) -> None:
    game = record.game
    turns = record.black_turns + record.white_turns
    assert len(turns) == len(game.moves) - record.opening
    assert max(turns) <= turn_ms / 1000, f"a turn took {max(turns):.3f} s"
    assert max(record.used) <= match_ms / 1000, f"match time used: {record.used}"
    winner = game.winner()
    assert winner in (BLACK, WHITE, DRAW)
    if winner != DRAW:  # the last move made the five, for the side that played it
        line = game.winning_line()
        assert line is not None and game.moves[-1] in line
        assert winner == (BLACK if len(game.moves) % 2 else WHITE)
    else:
        assert len(game.moves) == game.num_points
    print(f"\n{len(game.moves)} moves, winner {winner}; slowest turn {max(turns):.3f} s, "
          f"median {sorted(turns)[len(turns) // 2]:.3f} s; match time used "
          f"{record.used[0]:.2f} s and {record.used[1]:.2f} s")


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
