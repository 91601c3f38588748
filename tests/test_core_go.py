"""The compiled Go (`engine/core/go.cpp` behind `engine/games/go.py`) against the old pure-Python
rules kept in `tests/reference/go_reference.py`: random games on several sizes (every bitboard
width the core has, rectangular boards, 2x2 to 25x25), komi values, handicap and set-up starts,
compared after every move and every undo on everything observable (legal moves, board, side to
move, hash value, end, winner and score, areas, captures, liberties, the features, errors), with
moves out of turn, turn switches, illegal attempts and play after two passes mixed in."""
from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from reference.go_reference import ReferenceGo

from saz.engine.games import BLACK, WHITE
from saz.engine.games.errors import GameError
from saz.engine.games.go import Go

KOMIS = (7.5, 0.0, 6.0, -2.5, 0.5)


def assert_same(game: Go, ref: ReferenceGo, rng: random.Random) -> None:
    """Everything the two games show agrees, hash values included (both use zobrist.py's keys)."""
    n = game.num_points
    assert game.to_move == ref.to_move
    assert game.moves == ref.moves
    assert game.colors() == ref.colors()
    assert game.hash == ref.hash
    np.testing.assert_array_equal(game.board, ref.board)
    assert game.legal_moves().tolist() == ref.legal_moves().tolist()
    assert game.is_over() == ref.is_over()
    assert game.winner() == ref.winner()
    assert game.score() == ref.score()
    assert game.winning_moves() == ref.winning_moves()
    assert game.forced_moves() is None
    for color in (BLACK, WHITE):
        assert game.area(color) == ref.area(color)
        assert game.captures(color) == ref.captures(color)
    # The old rules encode features version 2 (14 planes); the ladder planes after them are
    # checked against tests/test_go.py's reference. Encoding reads ladders on the position
    # itself: what is compared after it shows it took every move back.
    old = Go.feature_prefixes[2]
    out = np.full((n + 1, Go.num_features()), np.nan, dtype=np.float32)
    expected = np.full((n + 1, old), np.nan, dtype=np.float32)
    game.encode(out)
    ref.encode(expected)
    assert not np.isnan(out).any()
    np.testing.assert_array_equal(out[:, :old], expected)
    for p in rng.sample(range(n), min(n, 8)):
        assert game.liberties(p) == ref.liberties(p)
    for move in rng.sample(range(-2, n + 3), 5):
        assert game.is_legal(move) == ref.is_legal(move)


def try_both(game: Go, ref: ReferenceGo, move: int, color: int | None,
             refusals: Counter | None = None) -> bool:
    """Play `move` on both; True if both accepted it, an assertion unless both refused it with
    the same error and message (counted by reason in `refusals`)."""
    errors = []
    for g in (game, ref):
        try:
            g.play(move, color)
            errors.append(None)
        except GameError as exc:
            errors.append((type(exc), str(exc)))
    assert errors[0] == errors[1]
    if errors[0] is not None and refusals is not None:
        refusals[errors[0][1].split(": ", 1)[1].split(":")[0]] += 1
    return errors[0] is None


def random_move(ref: ReferenceGo, rng: random.Random) -> int:
    """A legal point mostly, the pass now and then (more often as the game grows long)."""
    legal = ref.legal_moves().tolist()
    pass_chance = 0.02 if len(ref.moves) < 2 * ref.num_points else 0.3
    if len(legal) == 1 or rng.random() < pass_chance:
        return ref.pass_move
    return rng.choice(legal[:-1])


def play_and_compare(game: Go, ref: ReferenceGo, seed: int, refusals: Counter) -> int:
    """One random game from the two equal starts to two passes (perhaps played on past them),
    compared at every ply, then undone move by move; returns the positions compared."""
    rng = random.Random(seed)
    n = ref.num_points

    def check() -> None:
        assert_same(game, ref, rng)

    check()
    compared = 1
    resumed = False
    while True:
        if ref.is_over():
            if resumed or rng.random() < 0.5:
                break
            resumed = True
            if rng.random() < 0.5:  # a stone after two passes: the game goes on from there
                empty = np.flatnonzero(ref.board == 0).tolist()
                for p in rng.sample(empty, len(empty)):
                    if try_both(game, ref, p, None, refusals):
                        break
                else:
                    break
            else:  # a controller continues the finished game
                game, ref = game.continued(), ref.continued()
                assert game is not None and ref is not None
            check()
            compared += 1
            continue
        r = rng.random()
        if r < 0.04:  # a move for the colour not to move (GUI set-up)
            try_both(game, ref, random_move(ref, rng), -ref.to_move, refusals)
        elif r < 0.07:  # the turn handed over without a move
            color = rng.choice((BLACK, WHITE))
            game.set_to_move(color)
            ref.set_to_move(color)
        elif r < 0.18:  # any point: occupied, suicide, superko, off the board, or legal
            try_both(game, ref, rng.randrange(-2, n + 3), None, refusals)
        elif r < 0.25:  # an empty point that is not legal: suicide or superko
            illegal = sorted(set(np.flatnonzero(ref.board == 0).tolist())
                             - set(ref.legal_moves().tolist()))
            if illegal:
                assert not try_both(game, ref, rng.choice(illegal), None, refusals)
        elif r < 0.27:  # far off the board
            try_both(game, ref, rng.choice((-(2**40), 2**31, 2**63)), None, refusals)
        elif r < 0.29:  # the same position under another komi, history kept
            komi = rng.choice(KOMIS)
            game, ref = game.with_rules(komi=komi), ref.with_rules(komi=komi)
        else:
            try_both(game, ref, random_move(ref, rng), None, refusals)
        check()
        compared += 1
    if rng.random() < 0.3:  # a copy walks back on its own; the original must not notice
        game_copy, ref_copy = game.copy(), ref.copy()
        for _ in range(min(3, len(ref_copy.moves))):
            game_copy.undo()
            ref_copy.undo()
        check()
    while ref.moves:
        game.undo()
        ref.undo()
        check()
        compared += 1
    with pytest.raises(GameError, match="no move to undo"):
        game.undo()
    return compared


def new_pair(width: int, height: int, komi: float, start: str, rng: random.Random
             ) -> tuple[Go, ReferenceGo]:
    """The same start for both: empty, fixed or free handicap, or a random legal diagram."""
    game, ref = Go(width, height, komi=komi), ReferenceGo(width, height, komi=komi)
    n = width * height
    if start == "fixed" and width == height and width >= 7:
        stones = rng.randrange(2, 10 if width % 2 and width >= 9 else 5)
        assert game.place_fixed_handicap(stones) == ref.place_fixed_handicap(stones)
    elif start == "free" and n > 3:
        points = rng.sample(range(n), rng.randrange(2, min(n - 1, 9)))
        game.place_free_handicap(points)
        ref.place_free_handicap(points)
    elif start == "diagram":
        # A random position reached by play, set up as a diagram: its stones become the start.
        walker = ReferenceGo(width, height)
        for _ in range(rng.randrange(n // 2 + 1)):
            walker.play(random_move(walker, rng))
        to_move = rng.choice((BLACK, WHITE))
        diagram = "\n".join(" ".join(".XO"[int(v)] for v in walker.board[y * width:(y + 1) * width])
                            for y in range(height))
        game = Go.from_diagram(diagram, to_move=to_move, komi=komi)
        ref = ReferenceGo.from_diagram(diagram, to_move=to_move, komi=komi)
    assert game.start_position()[1] == ref.start_position()[1]
    np.testing.assert_array_equal(game.start_position()[0], ref.start_position()[0])
    return game, ref


# Every bitboard width of the core (1, 2, 4, 6 and 10 words), with boards on either side of
# a word boundary (8x8 = 64 points, 13x5 = 65), rectangular and the smallest.
SIZES = [(2, 2), (3, 3), (2, 5), (4, 4), (5, 5), (8, 8), (13, 5), (7, 9), (9, 9), (12, 11)]
BIG_SIZES = [(16, 16), (17, 15), (19, 19), (20, 19), (25, 25), (25, 2)]


def run_games(sizes, games_per_size: int, seed0: int) -> Counter:
    refusals: Counter = Counter()
    for width, height in sizes:
        for i in range(games_per_size):
            seed = seed0 + 1000 * i + 37 * width + height
            rng = random.Random(seed)
            start = rng.choice(("empty", "empty", "fixed", "free", "diagram"))
            game, ref = new_pair(width, height, rng.choice(KOMIS), start, rng)
            assert play_and_compare(game, ref, seed, refusals) > 2
    return refusals


def test_random_games_agree_with_the_reference() -> None:
    refusals = run_games(SIZES, 4, 1)
    # The games met every kind of refusal (else the test proves less than it claims).
    for reason in ("occupied point", "off the board", "suicide", "positional superko"):
        assert refusals[reason] > 0, refusals


@pytest.mark.slow
def test_many_random_games_agree_with_the_reference() -> None:
    refusals = run_games(SIZES, 30, 7)
    refusals += run_games(BIG_SIZES, 3, 7)
    assert refusals["positional superko"] > 0


def test_large_boards_agree_with_the_reference() -> None:
    """One game on a board of each of the wider bitboards (6 and 10 words)."""
    run_games([(19, 19), (25, 23)], 1, 3)


@pytest.mark.parametrize("width, height", [(5, 5), (9, 7), (19, 19)])
def test_transpositions_hash_alike(width: int, height: int) -> None:
    """The same stones reached in another order hash the same (and as the reference), and
    differently with the other side to move."""
    rng = random.Random(width * height)
    compared = 0
    for _ in range(10):
        game, ref = Go(width, height), ReferenceGo(width, height)
        length = rng.randrange(2, min(width * height // 2, 60))
        while len(ref.moves) < length:
            move = random_move(ref, rng)
            if move == ref.pass_move:
                continue
            try_both(game, ref, move, None)
        if game.captures(BLACK) or game.captures(WHITE):
            continue  # reordered, a capture might not happen: not the same position
        black, white = game.moves[0::2], game.moves[1::2]
        rng.shuffle(black)
        rng.shuffle(white)
        other = Go(width, height)
        try:
            for i in range(len(game.moves)):
                other.play((black if i % 2 == 0 else white)[i // 2])
        except GameError:
            continue  # the new order passed through a suicide or a capture
        if other.captures(BLACK) or other.captures(WHITE):
            continue
        np.testing.assert_array_equal(other.board, game.board)
        assert other.hash == game.hash == ref.hash
        other.set_to_move(-other.to_move)
        assert other.hash != game.hash
        compared += 1
    assert compared >= 3


def test_superko_in_a_ko_fight() -> None:
    """A ko: the retake is refused by both while the position would repeat, allowed after a
    move elsewhere changed it."""
    diagram = """
        . X O . .
        X . X O .
        . X O . .
        . . . . .
        . . . . .
    """
    game = Go.from_diagram(diagram, to_move=WHITE)
    ref = ReferenceGo.from_diagram(diagram, to_move=WHITE)
    rng = random.Random(0)
    assert try_both(game, ref, game.point(1, 1), None)  # White takes the ko
    assert_same(game, ref, rng)
    refusals: Counter = Counter()
    assert not try_both(game, ref, game.point(2, 1), None, refusals)  # Black may not retake
    assert refusals["positional superko"] == 1
    assert game.point(2, 1) not in game.legal_moves().tolist()
    assert try_both(game, ref, game.point(4, 4), None)  # a threat elsewhere
    assert try_both(game, ref, game.point(4, 3), None)
    assert try_both(game, ref, game.point(2, 1), None)  # now the retake is legal
    assert_same(game, ref, rng)
