"""The reference players: exact choices of the greedy heuristics, coverage of the random player,
and legality over whole games of every game."""
from __future__ import annotations

import numpy as np
import pytest

from saz.engine.games import BLACK, WHITE, GameError, new_game
from saz.engine.games.go import Go
from saz.engine.games.gomoku import Gomoku
from saz.engine.games.othello import Othello
from saz.engine.games.gomoku import longest_lines
from saz.engine.players import GreedyPlayer, RandomPlayer, make_player


def gomoku(size: int, black: list[tuple[int, int]], white: list[tuple[int, int]]) -> Gomoku:
    """A Gomoku position reached by playing Black's and White's points alternately."""
    assert len(black) - len(white) in (0, 1)
    game = Gomoku(size)
    for i in range(len(black) + len(white)):
        x, y = (black if i % 2 == 0 else white)[i // 2]
        game.play(game.point(x, y))
    return game


def choices(player: GreedyPlayer | RandomPlayer, game, times: int = 40) -> set[int]:
    """Every move the player picks over `times` tries (the game is left unchanged)."""
    before = list(game.moves)
    picked = {player.choose(game) for _ in range(times)}
    assert game.moves == before
    return picked


# -- Othello ---------------------------------------------------------------------------------------
def test_greedy_othello_plays_the_move_that_flips_most() -> None:
    game = Othello.from_diagram("""
        . . . . . .
        . X O O O .
        . . . . . .
        . . O . . .
        . . X . . .
        . . . . . .
    """)
    # Black's two legal moves: (5, 1) flips the three discs of row 1, (2, 2) only (2, 3).
    assert sorted(len(game.flips(int(m))) for m in game.legal_moves()) == [1, 3]
    assert choices(GreedyPlayer(0), game) == {game.point(5, 1)}


def test_greedy_othello_passes_when_it_must() -> None:
    game = Othello.from_diagram("""
        X X X X
        X X X X
        X X X O
        X X X .
    """, to_move=WHITE)
    assert list(game.legal_moves()) == [game.pass_move]
    assert GreedyPlayer(0).choose(game) == game.pass_move


# -- Gomoku ----------------------------------------------------------------------------------------
def test_greedy_gomoku_wins_before_it_blocks() -> None:
    # Black to move has four on row 0; White also has four on row 2.
    game = gomoku(9, [(0, 0), (1, 0), (2, 0), (3, 0), (8, 8)],
                  [(0, 2), (1, 2), (2, 2), (3, 2)])
    assert game.to_move == WHITE
    game.play(game.point(8, 7))  # White wastes a move: Black to move with both threats on board
    assert choices(GreedyPlayer(1), game) == {game.point(4, 0)}


def test_greedy_gomoku_blocks_the_opponents_five() -> None:
    # White threatens five at (4, 3) (its other end (-1, 3) is off the board); Black has no win.
    game = gomoku(9, [(8, 0), (8, 2), (6, 6), (0, 8)], [(0, 3), (1, 3), (2, 3), (3, 3)])
    assert game.to_move == BLACK
    assert choices(GreedyPlayer(2), game) == {game.point(4, 3)}


def test_greedy_gomoku_extends_its_longest_line() -> None:
    # Black has three in a column (4, 2..4); White scattered stones make at most two.
    game = gomoku(9, [(4, 2), (4, 3), (4, 4)], [(0, 0), (8, 8), (0, 8)])
    assert choices(GreedyPlayer(3), game) == {game.point(4, 1), game.point(4, 5)}


def test_greedy_gomoku_breaks_ties_by_cutting_the_opponents_line() -> None:
    # Black's pair on row 0 grows to three at (2, 0) or (5, 0); only (2, 0) also stands on
    # White's column (2, 1)-(2, 2), so that end wins the tie.
    game = gomoku(9, [(3, 0), (4, 0)], [(2, 1), (2, 2)])
    picked = choices(GreedyPlayer(4), game)
    assert picked == {game.point(2, 0)}


def test_longest_lines_counts_runs_through_each_point() -> None:
    stones = np.zeros((5, 5), dtype=bool)
    stones[2, 0:3] = True  # a row of three on y = 2
    stones[0, 4] = True
    lines = longest_lines(stones)
    assert lines[2, 3] == 4  # extends the row to four
    assert lines[1, 3] == 3  # diagonal (4, 0)-(3, 1)-(2, 2): two stones plus itself
    assert lines[4, 4] == 1  # touches nothing


# -- Go --------------------------------------------------------------------------------------------
def test_greedy_go_captures_the_most_stones() -> None:
    # Black captures the white stone (4, 0) at (3, 0), or the two-stone chain (1, 3)-(1, 4) at
    # (2, 3): the bigger capture wins.
    game = Go.from_diagram("""
        . . . . O
        . . . . X
        . X . . .
        X O . . .
        X O X . .
    """)
    assert game.to_move == BLACK
    assert choices(GreedyPlayer(5), game) == {game.point(2, 3)}


def test_greedy_go_neither_fills_its_eye_nor_plays_into_atari() -> None:
    # (0, 0) is Black's single-point eye; a black stone on (4, 4) would have one liberty.
    game = Go.from_diagram("""
        . X . . .
        X X . . .
        . . . . .
        . . . . .
        . . . O .
    """)
    picked = choices(GreedyPlayer(6), game, times=200)
    assert game.point(0, 0) not in picked
    assert game.point(4, 4) not in picked
    assert game.pass_move not in picked


def test_greedy_go_passes_only_when_every_point_left_is_its_own_eye() -> None:
    game = Go.from_diagram("""
        . X . X
        X X X X
        X . X X
        X X X .
    """)
    assert GreedyPlayer(7).choose(game) == game.pass_move


# -- both players ----------------------------------------------------------------------------------
def test_random_player_covers_every_legal_move() -> None:
    game = new_game("go", 5)
    legal = set(game.legal_moves().tolist())
    assert choices(RandomPlayer(8), game, times=600) == legal  # 26 moves, pass included


@pytest.mark.parametrize("name,size", [("gomoku", 9), ("othello", 6), ("go", 5)])
def test_players_play_only_legal_moves_to_the_end(name: str, size: int) -> None:
    rng_seeds = range(3)
    for seed in rng_seeds:
        game = new_game(name, size)
        players = {BLACK: GreedyPlayer(seed), WHITE: RandomPlayer(seed)}
        if seed % 2:
            players = {BLACK: RandomPlayer(seed), WHITE: GreedyPlayer(seed)}
        while not game.is_over():
            move = players[game.to_move].choose(game)
            assert game.is_legal(move)
            game.play(move)
        assert game.winner() is not None


@pytest.mark.parametrize("player", [RandomPlayer(0), GreedyPlayer(0)])
def test_players_refuse_a_finished_game(player: RandomPlayer | GreedyPlayer) -> None:
    game = gomoku(9, [(0, 0), (1, 0), (2, 0), (3, 0), (4, 0)], [(0, 5), (1, 5), (2, 5), (3, 5)])
    assert game.is_over()
    with pytest.raises(GameError):
        player.choose(game)


def test_make_player_by_name() -> None:
    assert isinstance(make_player("greedy", 1), GreedyPlayer)
    assert isinstance(make_player("random"), RandomPlayer)
    with pytest.raises(ValueError, match="unknown player 'minimax'"):
        make_player("minimax")


# -- behind the engine's search interface (the front-ends' --player) ------------------------------
def test_player_search_answers_the_players_move_as_a_search_result() -> None:
    from saz.engine.players import PlayerSearch

    game = Othello.from_diagram("""
        . . . . . .
        . X O O O .
        . . . . . .
        . . O . . .
        . . X . . .
        . . . . . .
    """)
    seen = []
    result = PlayerSearch(GreedyPlayer(0)).search(game, on_progress=seen.append)
    assert result.best_move == game.point(5, 1)
    assert [info.move for info in result.moves] == [result.best_move]
    assert seen == [result]
    assert game.moves == []  # the position is left as it was


def test_player_search_keeps_to_the_allowed_moves() -> None:
    from saz.engine.players import PlayerSearch

    game = new_game("go", 5)
    allowed = {game.point(4, 4), game.pass_move}
    result = PlayerSearch(RandomPlayer(1)).search(game, allowed={game.point(4, 4)})
    assert result.best_move == game.point(4, 4)
    for seed in range(10):
        assert PlayerSearch(RandomPlayer(seed)).search(game, allowed=allowed).best_move in allowed
    game.play(game.pass_move)
    game.play(game.pass_move)
    with pytest.raises(ValueError, match="over"):
        PlayerSearch(RandomPlayer(0)).search(game)


@pytest.mark.parametrize(("argv", "lines", "expected"), [
    (["--player", "greedy"], ("boardsize 5\nplay w C3\nplay b B3\nplay w pass\n"
                              "play b D3\nplay w pass\nplay b C2\nplay w pass\ngenmove b\n"),
     "C4"),
    (["--player", "greedy", "--game", "othello"], "boardsize 8\nplay b D3\ngenmove w\n", None),
])
def test_saz_gtp_answers_genmove_with_the_reference_player(argv, lines, expected) -> None:
    """No model anywhere: the greedy player captures the atari'd stone at C3 (Go), or answers
    one of White's three legal replies to d3 (Othello)."""
    import io

    from saz.protocol.gtp import main

    out = io.StringIO()
    assert main(argv, stdin=io.StringIO(lines), stdout=out) == 0
    answer = out.getvalue().strip().split("\n\n")[-1]
    if expected is not None:
        assert answer == f"= {expected}"
    else:
        assert answer in {"= C3", "= E3", "= C5"}
