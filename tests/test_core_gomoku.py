"""The compiled Gomoku (`engine/core/gomoku.cpp` behind `engine/games/gomoku.py`) against the old
pure-Python rules kept in `tests/reference/gomoku_reference.py`: random games on several sizes
under both rules, compared after every move and every undo on everything observable (legal moves,
board, side to move, end and winner, winning line, the tactics, the features, errors), with moves
out of turn and turn switches mixed in, and transpositions hashed alike."""
from __future__ import annotations

import random

import numpy as np
import pytest
from reference.gomoku_reference import ReferenceGomoku

from saz.engine.games import BLACK, WHITE
from saz.engine.games.errors import GameError
from saz.engine.games.gomoku import Gomoku


def assert_same(game: Gomoku, ref: ReferenceGomoku, rng: random.Random) -> None:
    """Everything the two games show agrees (hash values excepted: their keys differ)."""
    assert game.to_move == ref.to_move
    assert game.moves == ref.moves
    assert game.colors() == ref.colors()
    np.testing.assert_array_equal(game.board, ref.board)
    assert game.legal_moves().tolist() == ref.legal_moves().tolist()
    assert game.is_over() == ref.is_over()
    assert game.winner() == ref.winner()
    assert game.winning_line() == ref.winning_line()
    assert game.winning_moves() == ref.winning_moves()
    assert game.forced_moves() == ref.forced_moves()
    n = game.num_points
    out = np.full((n + 1, game.num_features()), np.nan, dtype=np.float32)
    expected = np.full((n + 1, ref.num_features()), np.nan, dtype=np.float32)
    game.encode(out)
    ref.encode(expected)
    # The reference encodes version 3, the first eleven planes; the shape planes appended since
    # are checked against their definition in tests/test_gomoku.py.
    np.testing.assert_array_equal(out[:, :ref.num_features()], expected)
    np.testing.assert_array_equal(game.threats(), ref.threats())
    empty = np.flatnonzero(ref.board == 0).tolist()
    for p in rng.sample(empty, min(len(empty), 6)):
        for color in (BLACK, WHITE):
            assert game.wins_if_played(p, color) == ref.wins_if_played(p, color)
    for move in rng.sample(range(-2, n + 3), 4):
        assert game.is_legal(move) == ref.is_legal(move)


def same_error(game: Gomoku, ref: ReferenceGomoku, move: int, color: int | None) -> bool:
    """Play `move` on both; True if both accepted it, an assertion unless both refused it with
    the same error and message."""
    errors = []
    for g in (game, ref):
        try:
            g.play(move, color)
            errors.append(None)
        except GameError as exc:
            errors.append((type(exc), str(exc)))
    assert errors[0] == errors[1]
    return errors[0] is None


def random_move(ref: ReferenceGomoku, rng: random.Random) -> int:
    """Mostly a point next to a stone (so that lines, threats and fives happen), else any."""
    legal = ref.legal_moves().tolist()
    stones = [p for p in range(ref.num_points) if ref.board[p] != 0]
    if stones and rng.random() < 0.8:
        w, h = ref.width, ref.height
        x, y = divmod(rng.choice(stones), w)[::-1]
        near = [(y + dy) * w + x + dx for dx in (-1, 0, 1) for dy in (-1, 0, 1)
                if 0 <= x + dx < w and 0 <= y + dy < h and ref.board[(y + dy) * w + x + dx] == 0]
        if near:
            return rng.choice(near)
    return rng.choice(legal)


def play_and_compare(width: int, height: int, rule: str, seed: int) -> int:
    """One random game to its end, compared at every ply, then undone move by move; returns the
    number of positions compared."""
    rng = random.Random(seed)
    game, ref = Gomoku(width, height, rule=rule), ReferenceGomoku(width, height, rule=rule)
    hashes: dict[int, int] = {}  # core hash -> reference hash: must be one-to-one

    def check() -> None:
        assert_same(game, ref, rng)
        assert hashes.setdefault(game.hash, ref.hash) == ref.hash
        assert len(set(hashes.values())) == len(hashes)

    check()
    compared = 1
    while not ref.is_over():
        r = rng.random()
        if r < 0.05:  # a move for the colour not to move (GUI set-up)
            same_error(game, ref, random_move(ref, rng), -ref.to_move)
        elif r < 0.08:  # the turn handed over without a move
            color = rng.choice((BLACK, WHITE))
            game.set_to_move(color)
            ref.set_to_move(color)
        elif r < 0.12:  # something illegal: occupied, off the board, the pass
            bad = rng.choice([-1, ref.num_points, ref.num_points + 7] +
                             [p for p in ref.moves[:3]])
            assert not same_error(game, ref, bad, None)
        else:
            same_error(game, ref, random_move(ref, rng), None)
        check()
        compared += 1
    for move in (0, ref.num_points - 1):  # after the end (a five or a full board)
        assert not same_error(game, ref, move, None)
    while ref.moves:
        game.undo()
        ref.undo()
        check()
        compared += 1
    return compared


SIZES = [(5, 5), (6, 6), (7, 9), (9, 9), (11, 6), (15, 15)]


@pytest.mark.parametrize("rule", ["freestyle", "exact-five"])
@pytest.mark.parametrize("width, height", SIZES)
def test_random_games_agree_with_the_reference(width: int, height: int, rule: str) -> None:
    games = 12 if width * height < 100 else 4
    for seed in range(games):
        assert play_and_compare(width, height, rule, seed * 1000 + width * 37 + height) > 2


@pytest.mark.slow
@pytest.mark.parametrize("rule", ["freestyle", "exact-five"])
@pytest.mark.parametrize("width, height", SIZES + [(32, 32), (32, 5), (5, 17), (19, 19)])
def test_many_random_games_agree_with_the_reference(width: int, height: int, rule: str) -> None:
    for seed in range(40):
        play_and_compare(width, height, rule, seed + 7)


@pytest.mark.parametrize("rule", ["freestyle", "exact-five"])
@pytest.mark.parametrize("width, height", [(7, 7), (9, 6), (15, 15)])
def test_transpositions_hash_alike(width: int, height: int, rule: str) -> None:
    """The same stones reached in another order hash the same in the core, whichever order, and
    differently with the other side to move; the reference agrees on which positions are one."""
    rng = random.Random(width * height)
    for _ in range(20):
        game, ref = Gomoku(width, height, rule=rule), ReferenceGomoku(width, height, rule=rule)
        for _ in range(rng.randrange(2, width * height // 2)):
            if ref.is_over():
                break
            same_error(game, ref, random_move(ref, rng), None)
        if game.is_over():
            game.undo()
            ref.undo()
        black, white = game.moves[0::2], game.moves[1::2]
        rng.shuffle(black)
        rng.shuffle(white)
        other, other_ref = Gomoku(width, height, rule=rule), ReferenceGomoku(width, height, rule=rule)
        try:
            for i, move in enumerate(black):
                for g in (other, other_ref):
                    g.play(move)
                    if i < len(white):
                        g.play(white[i])
        except GameError:  # the new order made a five before the last stone: no transposition
            continue
        assert other.board.tolist() == game.board.tolist()
        assert other.hash == game.hash and other_ref.hash == ref.hash
        other.set_to_move(-other.to_move)
        assert other.hash != game.hash


def test_undo_restores_the_state_of_the_last_play_whatever_the_turn() -> None:
    """The core's undo returns to the saved side to move and hash even after switch_turn."""
    game = Gomoku(9)
    start = game.hash
    game.play(40)
    after = game.hash
    game.set_to_move(WHITE)
    game.set_to_move(BLACK)
    game.set_to_move(WHITE)
    assert game.hash == after
    game.set_to_move(BLACK)
    game.undo()
    assert game.hash == start and game.to_move == BLACK


def test_copies_and_their_board_views_are_independent() -> None:
    game = Gomoku(7)
    game.play(24)
    twin = game.copy()
    board = twin.board
    twin.play(25)
    assert board[25] == WHITE and game.board[25] == 0
    game.undo()
    assert twin.board[24] == BLACK and board[24] == BLACK
    del twin
    assert board[24] == BLACK  # the view keeps the core it shows alive
