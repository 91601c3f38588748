"""`Replay` (tools/match/replay.py): a match record played move by move, as the readers see it."""
from __future__ import annotations

from saz.engine.games import BLACK, WHITE
from saz.protocol.sgf import parse_sgf
from saz.tools.match.replay import Replay

# A 5x5 Go record in saz match's form: two random opening plies, then the engines; White passes.
RECORD = ("(;FF[4]GM[1]SZ[5]KM[0.5]PB[other]PW[ref]GC[B+1 by score; the first 2 moves are the "
          "opening];B[aa];W[ee];B[cc];W[bb];B[dd];W[];B[ca];W[ac])")
# Gomoku 5x5: Black's five along the top row at its fifth move, then one move too many.
PAST_END = ("(;FF[4]GM[4]SZ[5]RU[freestyle]PB[a]PW[b];B[aa];W[ab];B[ba];W[bb];B[ca];W[cb]"
            ";B[da];W[db];B[ea];W[eb])")


def test_each_turn_is_the_position_before_its_move() -> None:
    replay = Replay(parse_sgf(RECORD), komi=0.5)
    seen = [(turn.ply, turn.move, turn.color, turn.player, turn.chosen,
             turn.game.to_move == turn.color) for turn in replay]
    pass_move = replay.game.pass_move
    assert seen == [(0, 0, BLACK, "other", False, True), (1, 24, WHITE, "ref", False, True),
                    (2, 12, BLACK, "other", True, True), (3, 6, WHITE, "ref", True, True),
                    (4, 18, BLACK, "other", True, True),
                    (5, pass_move, WHITE, "ref", True, True),
                    (6, 2, BLACK, "other", True, True), (7, 10, WHITE, "ref", True, True)]
    assert replay.opening == 2
    assert len(replay.game.moves) == 8 and not replay.past_end
    assert replay.game.rules.komi == 0.5


def test_a_reader_that_stops_leaves_the_game_before_that_move() -> None:
    replay = Replay(parse_sgf(RECORD))
    for turn in replay:
        if turn.ply == 3:
            break
    assert len(replay.game.moves) == 3 and replay.game.to_move == WHITE


def test_a_record_past_the_end_of_the_game_stops_there() -> None:
    replay = Replay(parse_sgf(PAST_END), rule="freestyle")
    plies = [turn.ply for turn in replay]
    assert plies == list(range(9))  # W[eb] comes after Black's five
    assert replay.past_end and replay.game.is_over() and replay.game.winner() == BLACK
