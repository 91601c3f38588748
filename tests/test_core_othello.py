"""The compiled Othello (`engine/core/othello.cpp` behind `engine/games/othello.py`) against the old
pure-Python rules kept in `tests/reference/othello_reference.py`: random games on sizes that cover
every word count of the core's bitboards (one to eleven 64-bit words), compared after every move
and every undo on everything observable (legal moves, board, side to move, end and winner, flips,
disc counts, unsafe discs, the features value for value, errors), with moves out of turn and turn
switches mixed in, and positions hashed alike exactly when the reference hashes them alike. Random
set-up positions (discs anywhere, not reachable by play) probe the board's edges."""
from __future__ import annotations

import random

import numpy as np
import pytest
from reference.othello_reference import ReferenceOthello

from saz.engine.games import BLACK, WHITE
from saz.engine.games.errors import GameError
from saz.engine.games.othello import Othello
from saz.engine.perft import perft

#: (width, height) with the core's word count: 1, 1, 1, 2, 3, 4, 6, 8, 11 words, then one word
#: again with runs longer than 8x8's (the one-word fast paths must not assume 8x8).
SIZES = [(4, 4), (6, 6), (8, 8), (10, 6), (12, 10), (4, 26), (16, 16), (18, 18), (22, 22),
         (4, 16), (16, 4)]
BIG = (26, 26)


def assert_same(game: Othello, ref: ReferenceOthello, rng: random.Random) -> None:
    """Everything the two games show agrees (hash values excepted: their keys differ)."""
    n = game.num_points
    assert game.to_move == ref.to_move
    assert game.moves == ref.moves
    assert game.colors() == ref.colors()
    np.testing.assert_array_equal(game.board, ref.board)
    legal = ref.legal_moves().tolist()
    assert game.legal_moves().tolist() == legal
    assert game.is_over() == ref.is_over()
    assert game.winner() == ref.winner()
    assert game.disc_count() == ref.disc_count()
    assert game.score() == ref.score()
    assert game.bitboards() == ref.bitboards()
    assert game.unsafe_discs() == ref.unsafe_discs()
    out, expected = (np.full((n + 1, 7), np.nan, dtype=np.float32) for _ in range(2))
    game.encode(out)
    ref.encode(expected)
    np.testing.assert_array_equal(out, expected)
    for move in legal + rng.sample(range(-2, n + 3), 6):
        assert game.is_legal(move) == ref.is_legal(move)
        assert game.flips(move) == ref.flips(move)


def same_error(game: Othello, ref: ReferenceOthello, move: int, color: int | None) -> bool:
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


def play_and_compare(width: int, height: int, seed: int, *, max_plies: int = 10**6) -> int:
    """One random game (to its end or `max_plies`), compared at every ply, then undone move by
    move; returns the number of positions compared."""
    rng = random.Random(seed)
    game, ref = Othello(width, height), ReferenceOthello(width, height)
    n = game.num_points
    hashes: dict[int, int] = {}  # core hash -> reference hash: must be one-to-one

    def check() -> None:
        assert_same(game, ref, rng)
        assert hashes.setdefault(game.hash, ref.hash) == ref.hash
        assert len(set(hashes.values())) == len(hashes)

    check()
    compared = 1
    while not ref.is_over() and len(ref.moves) < max_plies:
        r = rng.random()
        legal = ref.legal_moves().tolist()
        if r < 0.04:  # a disc for the colour not to move (GUI set-up): it must flip too
            same_error(game, ref, rng.randrange(n + 1), -ref.to_move)
        elif r < 0.07:  # the turn handed over without a move
            color = rng.choice((BLACK, WHITE))
            game.set_to_move(color)
            ref.set_to_move(color)
        elif r < 0.12:  # something illegal: off the board, occupied, flipping nothing, a pass
            empty = np.flatnonzero(ref.board == 0).tolist()
            bad = rng.choice([-1, -2**31, n + 1, 2**31 - 1, n, rng.choice(empty)] +
                             np.flatnonzero(ref.board).tolist()[:3])
            if bad not in legal:
                assert not same_error(game, ref, bad, None)
        elif r < 0.15 and ref.moves:  # a take-back on the way
            game.undo()
            ref.undo()
        else:
            assert same_error(game, ref, rng.choice(legal), None)
        check()
        compared += 1
    if ref.is_over():
        for move in (0, n - 1, n):  # after the end
            assert not same_error(game, ref, move, None)
    while ref.moves:
        game.undo()
        ref.undo()
        check()
        compared += 1
    errors = []
    for g in (game, ref):
        with pytest.raises(GameError) as info:
            g.undo()
        errors.append((info.type, str(info.value)))
    assert errors[0] == errors[1]
    return compared


def random_diagram(width: int, height: int, rng: random.Random) -> str:
    """Discs anywhere, with a density of its own: the board's edges and corners get crowded,
    emptied and mixed in ways that play from the start rarely reaches."""
    full, black = rng.random(), rng.random()
    cells = ["." if rng.random() > full else "X" if rng.random() < black else "O"
             for _ in range(width * height)]
    return "\n".join(" ".join(cells[y * width:(y + 1) * width]) for y in range(height))


@pytest.mark.parametrize("width, height", SIZES)
def test_random_games_agree_with_the_reference(width: int, height: int) -> None:
    games, plies = (20, 10**6) if width * height <= 64 else (2, 60)
    for seed in range(games):
        assert play_and_compare(width, height, seed * 1000 + width * 37 + height,
                                max_plies=plies) > 2


def test_a_long_game_on_the_largest_board_agrees() -> None:
    """26x26: eleven words, runs across word boundaries (whole games: the slow test)."""
    play_and_compare(*BIG, seed=26, max_plies=120)


@pytest.mark.slow
@pytest.mark.parametrize("width, height", SIZES + [BIG, (26, 4), (6, 24)])
def test_many_random_games_agree_with_the_reference(width: int, height: int) -> None:
    for seed in range(50 if width * height <= 100 else 4):
        play_and_compare(width, height, seed + 7)


@pytest.mark.parametrize("width, height", SIZES + [BIG, (26, 4)])
def test_random_set_ups_agree_with_the_reference(width: int, height: int) -> None:
    """Set-up positions: the rules read from them, and a move from each played and taken back."""
    rng = random.Random(width * 100 + height)
    for _ in range(25 if width * height <= 100 else 6):
        text, to_move = random_diagram(width, height, rng), rng.choice((BLACK, WHITE))
        game = Othello.from_diagram(text, to_move=to_move)
        ref = ReferenceOthello.from_diagram(text, to_move=to_move)
        assert_same(game, ref, rng)
        start = game.start_position()
        expected = ref.start_position()
        np.testing.assert_array_equal(start[0], expected[0])
        assert start[1] == expected[1]
        legal = ref.legal_moves().tolist()
        if legal:
            assert same_error(game, ref, rng.choice(legal), None)
            assert_same(game, ref, rng)
            game.undo()
            ref.undo()
            assert_same(game, ref, rng)
        assert str(game) == str(ref)


def test_transpositions_hash_alike() -> None:
    """Positions with the same discs and side to move hash alike however they were reached (here:
    against the hash of the same discs set up from scratch), and differently with the other side
    to move."""
    rng = random.Random(5)
    for width, height in [(6, 6), (8, 8), (10, 6), (16, 16), BIG]:
        game = Othello(width, height)
        for _ in range(40):
            legal = game.legal_moves().tolist()
            if not legal:
                break
            game.play(rng.choice(legal))
            fresh = Othello.from_diagram(str(game), to_move=game.to_move)
            assert fresh.hash == game.hash
            fresh.set_to_move(-fresh.to_move)
            assert fresh.hash != game.hash


def test_perft_agrees_with_the_reference_by_first_move() -> None:
    """Move generation on boards the published counts do not cover, split by first move."""
    def ref_perft(ref: ReferenceOthello, depth: int) -> int:
        if depth == 0:
            return 1
        total = 0
        for move in ref.legal_moves().tolist():
            ref.play(move)
            total += ref_perft(ref, depth - 1)
            ref.undo()
        return total

    for (width, height), depth in [((4, 4), 6), ((10, 6), 3), ((14, 12), 3), (BIG, 3)]:
        game, ref = Othello(width, height), ReferenceOthello(width, height)
        for move in ref.legal_moves().tolist():
            game.play(move)
            ref.play(move)
            assert perft(game, depth - 1) == ref_perft(ref, depth - 1)
            game.undo()
            ref.undo()
        assert game.hash == Othello(width, height).hash and game._core.ply == 0


def test_undo_restores_the_state_of_the_last_play_whatever_the_turn() -> None:
    """The core's undo returns to the saved side to move and hash even after switch_turn."""
    game = Othello(8)
    start = game.hash
    game.play(19)
    after = game.hash
    for color in (BLACK, WHITE, BLACK):
        game.set_to_move(color)
    assert game.to_move == BLACK and game.hash != after
    game.set_to_move(WHITE)
    assert game.hash == after
    game.set_to_move(BLACK)
    game.undo()
    assert game.hash == start and game.to_move == BLACK


def test_copies_are_independent() -> None:
    game, ref = Othello(10, 6), ReferenceOthello(10, 6)
    for g in (game, ref):
        g.play(23)
    twin = game.copy()
    twin.play(int(twin.legal_moves()[0]))
    twin.set_to_move(-twin.to_move)
    assert_same(game, ref, random.Random(0))
    twin.undo()
    twin.undo()
    assert twin.moves == [] and game.moves == [23]
    assert_same(game, ref, random.Random(1))
