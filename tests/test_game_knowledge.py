"""What every game knows about itself beyond its rules, so that no caller branches on its name:
how it ended (`outcome`), the winner of a game stopped early, how long it goes on and may go on,
whether a forced pass is implicit, the greedy player's one-ply heuristic, what GTP and SGF call
it, and what only some games can do (`capabilities.py`)."""
from __future__ import annotations

import numpy as np
import pytest

from saz.engine.games import BLACK, DRAW, GAMES, WHITE, new_game
from saz.engine.games.base import Outcome, Termination
from saz.engine.games.capabilities import AreaScored, Solvable, ThreatSearching
from saz.engine.games.gomoku import Gomoku
from saz.engine.games.othello import Othello
from saz.protocol.sgf import parse_sgf
from saz.protocol.sgf_writer import format_sgf
from saz.protocol.vertex import vertices_for


def test_go_ends_by_score_after_two_passes() -> None:
    game = new_game("go", 5, komi=0.5)
    game.play(game.point(2, 2))
    assert game.outcome() is None
    game.play(game.pass_move)
    game.play(game.pass_move)
    assert game.outcome() == Outcome(BLACK, Termination.SCORE, 24.5)


def test_go_stopped_early_is_counted_as_it_stands() -> None:
    game = new_game("go", 5, komi=7.5)
    assert game.stopped_winner() == WHITE  # komi alone
    for x in range(5):
        game.play(game.point(x, 2))
        game.play(game.pass_move)
    assert game.stopped_winner() == BLACK  # 25 points to 7.5


def test_gomoku_ends_with_five_or_a_full_board() -> None:
    game = Gomoku(9)
    for x in range(4):
        game.play(game.point(x, 0))
        game.play(game.point(x, 1))
    game.play(game.point(4, 0))
    assert game.outcome() == Outcome(BLACK, Termination.FIVE)
    assert game.stopped_winner() == DRAW


def test_othello_ends_by_disc_count() -> None:
    game = Othello.from_diagram("""
        X X X X
        X X X X
        X X X O
        X X X X
    """)
    assert game.is_over()
    assert game.outcome() == Outcome(BLACK, Termination.SCORE, 14.0)


def test_only_othello_passes_implicitly() -> None:
    assert Othello.passes_implicitly
    assert not new_game("go", 9).passes_implicitly
    assert not new_game("gomoku", 9).passes_implicitly


@pytest.mark.parametrize("name,size,played,plies", [
    ("othello", 8, 0, 60),     # exact: 60 empty points
    ("othello", 6, 0, 32),
    ("go", 19, 0, 0.8 * 361),  # 0.8 of the area ...
    ("go", 9, 0, 0.8 * 81),
    ("gomoku", 15, 0, 32),     # a five ends the typical game within 32 plies
    ("gomoku", 9, 0, 32),
])
def test_plies_left_at_the_start(name: str, size: int, played: int, plies: float) -> None:
    assert new_game(name, size).plies_left() == pytest.approx(plies)


def test_plies_left_shrinks_and_keeps_a_tail() -> None:
    go = new_game("go", 9)
    before = go.plies_left()
    for move in go.legal_moves()[:70].tolist():
        go.play(move)
    assert go.plies_left() == pytest.approx(0.2 * 81)  # past 0.8 x 81: the tail
    assert go.plies_left() < before
    gomoku = new_game("gomoku", 7)
    rng = np.random.default_rng(0)
    for _ in range(40):
        if gomoku.is_over():
            break
        gomoku.play(int(rng.choice(gomoku.legal_moves())))
    assert 1 <= gomoku.plies_left() <= 49 - len(gomoku.moves)  # bounded by the empty points


def test_heuristics_prefer_what_their_greedy_player_should() -> None:
    othello = Othello(8)
    legal = othello.legal_moves()
    assert othello.heuristic(legal).tolist() == [1.0] * 4  # every opening move flips one
    gomoku = Gomoku(9)
    for x in range(4):
        gomoku.play(gomoku.point(x, 0))
        gomoku.play(gomoku.point(x, 8))
    legal = gomoku.legal_moves()
    scores = gomoku.heuristic(legal)
    assert legal[scores == scores.max()].tolist() == [gomoku.point(4, 0)]  # the win
    go = new_game("go", 5)
    go.play(go.point(1, 0))  # black
    go.play(go.point(0, 0))  # white, one liberty left
    legal = go.legal_moves()
    scores = go.heuristic(legal)
    assert legal[scores == scores.max()].tolist() == [go.point(0, 1)]  # the capture
    assert scores[legal == go.pass_move][0] < scores.max()


# -- random openings (matches, self-play, benchmarks) ------------------------------------------
#: A full 5x5 Gomoku board without five in a row: Black's 13 points, White's 12 (x, y).
_DRAWN_BLACK = [(0, 0), (1, 0), (4, 0), (2, 1), (3, 1), (0, 2), (1, 2), (4, 2), (2, 3), (3, 3),
                (0, 4), (3, 4), (4, 4)]
_DRAWN_WHITE = [(2, 0), (3, 0), (0, 1), (1, 1), (4, 1), (2, 2), (3, 2), (0, 3), (1, 3), (4, 3),
                (1, 4), (2, 4)]


def test_random_plies_are_seeded_and_pass_free() -> None:
    games = [new_game("go", 5, komi=0.5) for _ in range(3)]
    for game, seed in zip(games, (7, 7, 8)):
        assert game.play_random(12, np.random.default_rng(seed)) == 12
    assert games[0].moves == games[1].moves != games[2].moves
    assert all(game.pass_move not in game.moves for game in games)


def test_random_plies_never_end_the_game() -> None:
    """Two points left on a board that cannot make five: either fills one, and the second would
    fill the board (a draw), so it is never played."""
    game = Gomoku(5)
    for (bx, by), (wx, wy) in zip(_DRAWN_BLACK[:12], _DRAWN_WHITE[:11]):
        game.play(game.point(bx, by))
        game.play(game.point(wx, wy))
    game.play(game.point(*_DRAWN_BLACK[11]))
    assert len(game.moves) == 23 and game.to_move == WHITE
    for seed in range(4):
        trial = game.copy()
        assert trial.play_random(3, np.random.default_rng(seed)) == 1
        assert len(trial.moves) == 24 and not trial.is_over()


def test_random_plies_take_othellos_forced_pass() -> None:
    game = Othello(4)
    for x, y in ((1, 0), (2, 0), (3, 2), (0, 0)):  # b1 c1 d3 a1: Black has no disc to place
        game.play(game.point(x, y))
    assert game.legal_moves().tolist() == [game.pass_move]
    assert game.play_random(2, np.random.default_rng(0)) == 2
    assert game.moves[-2] == game.pass_move != game.moves[-1]


# -- what programs and files call a game (GTP, SGF) --------------------------------------------
@pytest.mark.parametrize("name,title,gm,size", [
    ("go", "Go", 1, 19), ("gomoku", "Gomoku", 4, 15), ("othello", "Othello", 2, 8)])
def test_sgf_and_gtp_read_the_game_from_its_class(name: str, title: str, gm: int,
                                                  size: int) -> None:
    cls = GAMES[name]
    assert (cls.info.title, cls.info.sgf_game_type, cls.info.default_size) == (title, gm, size)
    record = parse_sgf(f"(;GM[{gm}])")  # no SZ: the game's default size
    assert (record.game, record.width, record.height) == (name, size, size)
    game = new_game(name, 9 if name != "othello" else 8)
    assert f"GM[{gm}]" in format_sgf(game)
    assert new_game(name, size).width == size


def test_each_game_names_its_points_in_its_convention() -> None:
    go, gomoku, othello = (vertices_for(name, 8, 8) for name in ("go", "gomoku", "othello"))
    assert go.parse("D4") == gomoku.parse("D4") == 4 * 8 + 3  # row 1 at the bottom, no I
    assert vertices_for("go", 9, 9).format(8) == "J9"  # the ninth column skips I
    assert othello.parse("d3") == 2 * 8 + 3  # row 1 at the top
    assert othello.format(7) == "H1"


# -- what only some games can do -----------------------------------------------------------------
def test_each_capability_belongs_to_its_game() -> None:
    capable = {name: {cap.__name__ for cap in (Solvable, ThreatSearching, AreaScored)
                      if issubclass(cls, cap)} for name, cls in GAMES.items()}
    assert capable == {"go": {"AreaScored"}, "gomoku": {"ThreatSearching"},
                       "othello": {"Solvable"}, "chess": set()}
    assert new_game("go", 9, komi=6.5).komi == 6.5


def test_the_final_score_takes_dead_stones_off_only_where_the_game_counts_them() -> None:
    go = new_game("go", 5, komi=0.5)
    go.play(go.point(2, 2))
    go.play(go.point(0, 0))  # one stone each: the empty points reach both, so count for none
    assert go.final_score(lambda: None) == go.score() == -0.5  # 1 - 1 - komi
    white = np.full(25, -1.0)
    assert go.final_score(lambda: white) == -25.5  # Black's stone judged dead: all White's

    def never() -> np.ndarray:
        raise AssertionError("the disc count needs no ownership")

    othello = Othello(4)
    assert othello.final_score(never) == 0.0
    assert Gomoku(9).final_score(never) is None


def test_games_end_well_within_their_maximum_length() -> None:
    rng = np.random.default_rng(3)
    for name, size in (("othello", 6), ("gomoku", 7), ("go", 5)):
        game = new_game(name, size)
        assert game.max_length == 4 * size * size
        while not game.is_over() and len(game.moves) < game.max_length:
            game.play(int(rng.choice(game.legal_moves())))
        if name != "go":  # every placement fills a point: the board bounds the game
            assert game.is_over() and len(game.moves) <= 2 * size * size
