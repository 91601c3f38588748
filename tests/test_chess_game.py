"""Chess behind the `Game` interface: what referees, self-play, players and protocols ask of
every game (copy, undo, outcome, random openings, the greedy player's heuristic, the board)."""
from __future__ import annotations

import numpy as np
import pytest

from saz.engine.games import DRAW, GAMES, POINT_GAMES, WHITE, GameError, new_game
from saz.engine.games.base import Termination
from saz.engine.games.chess import Chess
from saz.engine.players import GreedyPlayer


def test_chess_is_registered_for_uci_not_gtp() -> None:
    assert GAMES["chess"] is Chess
    assert "chess" not in POINT_GAMES
    info = Chess.info
    assert (info.title, info.sgf_game_type, info.default_size, info.engine_protocol) == (
        "Chess", 3, 8, "uci")
    assert info.rule_options == ("variant",)


@pytest.mark.parametrize("size", [4, 7, 9, (8, 6)])
def test_other_sizes_are_unsupported(size: int | tuple[int, int]) -> None:
    with pytest.raises(GameError):
        new_game("chess", *(size if isinstance(size, tuple) else (size,)))


def test_copy_undo_and_hash_walk_a_line_and_back() -> None:
    game = Chess()
    start = game.hash
    game.play(game.parse_uci("e2e4"))
    copy = game.copy()
    copy.play(copy.parse_uci("e7e5"))
    assert len(game.moves) == 1 and len(copy.moves) == 2
    game.undo()
    assert game.hash == start and game.fen() == Chess().fen()
    assert game.moves == [] and game.colors() == []
    board, to_move = copy.start_position()
    assert to_move == WHITE and np.array_equal(board, Chess().board)


def test_transpositions_share_a_hash() -> None:
    a, b = Chess(), Chess()
    for text in ("g1f3", "g8f6", "b1c3"):
        a.play(a.parse_uci(text))
    for text in ("b1c3", "g8f6", "g1f3"):
        b.play(b.parse_uci(text))
    assert a.hash == b.hash and a.fen() == b.fen()


def test_random_openings_never_end_the_game() -> None:
    rng = np.random.default_rng(3)
    for _ in range(5):
        game = Chess(5)
        game.play_random(12, rng)
        assert not game.is_over() and len(game.moves) > 0


def test_outcomes() -> None:
    mate = Chess.from_fen("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3")
    assert mate.is_over() and mate.winner() == 1  # Black (BLACK = +1) mated White
    assert mate.outcome() is not None and mate.outcome().termination is Termination.CHECKMATE
    assert mate.outcome_for(WHITE) == -1.0
    stalemate = Chess.from_fen("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")
    assert stalemate.winner() == DRAW and stalemate.termination() is Termination.STALEMATE
    bare = Chess.from_fen("7k/8/6K1/8/8/8/8/2B5 b - - 0 1")
    assert bare.termination() is Termination.INSUFFICIENT_MATERIAL
    fifty = Chess.from_fen("7k/8/6K1/8/8/8/8/R7 b - - 100 80")
    assert fifty.termination() is Termination.FIFTY_MOVES and fifty.legal_moves().size == 0
    # A mate on the hundredth halfmove is a mate.
    late = Chess.from_fen("7k/8/6K1/8/8/8/8/R7 w - - 99 80")
    late.play(late.parse_uci("a1a8"))
    assert late.termination() is Termination.CHECKMATE
    assert Chess().outcome() is None and Chess().winner() is None


def test_a_claimable_draw_is_played_on_and_a_final_end_is_not() -> None:
    """Threefold repetition and the fifty-move rule let a player claim a draw; a controller
    that plays on gets a game from the position, its history and fifty-move count restarted."""
    assert Chess().continued() is None  # nothing has ended
    game = Chess()
    for text in "g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1 f6g8".split():
        game.play(game.parse_uci(text))
    assert game.termination() is Termination.REPETITION
    resumed = game.continued()
    assert resumed is not None and not resumed.is_over() and resumed.moves == []
    assert resumed.fen() == Chess().fen().replace(" 0 1", " 0 5")
    assert game.is_over()  # the finished game itself is left as it was
    resumed.play(resumed.parse_uci("e2e4"))
    fifty = Chess.from_fen("7k/8/6K1/8/8/8/8/R7 b - - 100 80")
    played_on = fifty.continued()
    assert played_on is not None and played_on.fen() == "7k/8/6K1/8/8/8/8/R7 b - - 0 80"
    assert played_on.legal_moves().size > 0
    small = Chess.from_fen("4k/5/5/5/R3K w - - 100 60")
    assert small.variant == "gardner" and small.continued().variant == "gardner"
    for final in ("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",
                  "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", "7k/8/6K1/8/8/8/8/2B5 b - - 0 1"):
        assert Chess.from_fen(final).continued() is None


def test_the_turn_does_not_pass_out_of_check() -> None:
    game = Chess.from_fen("4k3/8/8/8/8/8/8/4K2r w - - 0 1")
    before = game.fen()
    with pytest.raises(GameError):
        game.set_to_move(-game.to_move)
    assert game.fen() == before
    open_game = Chess()
    e7e5 = (1 * 8 + 4) * 64 + 3 * 8 + 4
    open_game.play(e7e5, color=-open_game.to_move)  # out of turn: Black moves first
    assert open_game.fen().split()[:2] == ["rnbqkbnr/pppp1ppp/8/4p3/8/8/PPPPPPPP/RNBQKBNR", "w"]
    open_game.undo()
    assert open_game.fen() == Chess().fen()


def test_the_greedy_player_takes_material_and_mates() -> None:
    mate = Chess.from_fen("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    assert mate.uci(GreedyPlayer(seed=0).choose(mate)) == "a1a8"
    capture = Chess.from_fen("6k1/5ppp/8/8/8/q7/5PPP/R5K1 w - - 0 1")
    scores = dict(zip(capture.legal_moves().tolist(), capture.heuristic(capture.legal_moves())))
    assert scores[capture.parse_uci("a1a3")] == 9.0 == max(scores.values())
    assert capture.uci(GreedyPlayer(seed=0).choose(capture)) == "a1a3"


def test_lengths_and_text() -> None:
    assert Chess().max_length == 512 and Chess(5).max_length == 200
    assert Chess().plies_left() >= 20
    assert str(Chess(5)).splitlines() == ["r n b q k", "p p p p p", ". . . . .", "P P P P P",
                                          "R N B Q K"]
    assert Chess().with_rules(variant="chess").fen() == Chess().fen()
    with pytest.raises(GameError):
        Chess().with_rules(variant="gardner")
    tables = Chess.graph_tables(6, 6)
    assert tables is not None and tables["promo"].shape == (3 * 6, 2)
