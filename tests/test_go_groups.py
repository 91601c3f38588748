"""The core's chain groups (`_core.go_group_members`, issue 65's chain graph) against a pure-Python
flood fill kept here: random boards of every bitboard width the core has (2x2 to 25x25,
rectangles too), the encodings of random games (where the liberties must also agree with the
position's own chains), hand-made positions with known answers, and the inputs it refuses."""
from __future__ import annotations

import numpy as np
import pytest

from saz.engine import _core
from saz.engine.games.go import Go

SIZES = ((2, 2), (5, 5), (9, 9), (19, 19), (25, 25), (3, 7), (25, 2), (13, 9))


def reference_members(own: np.ndarray, opponent: np.ndarray, width: int,
                      height: int) -> np.ndarray:
    """[P, 4] of one position by a plain flood fill: a stone holds its chain's slot * 2, an empty
    point slot * 2 + 1 for each adjacent chain, ascending, padded with -1; chains are numbered in
    the order of their lowest point (a row-major scan meets each chain first at its lowest)."""
    n = width * height
    color = [1 if own[p] else -1 if opponent[p] else 0 for p in range(n)]

    def neighbours(p: int) -> list[int]:
        x, y = p % width, p // width
        return [q for q, ok in ((p + 1, x + 1 < width), (p + width, y + 1 < height),
                                (p - 1, x > 0), (p - width, y > 0)) if ok]

    slot = [-1] * n
    chains = 0
    for start in range(n):
        if color[start] == 0 or slot[start] >= 0:
            continue
        slot[start], stack = chains, [start]
        while stack:
            p = stack.pop()
            for q in neighbours(p):
                if color[q] == color[start] and slot[q] < 0:
                    slot[q] = chains
                    stack.append(q)
        chains += 1
    out = np.full((n, 4), -1, dtype=np.int32)
    for p in range(n):
        if color[p]:
            out[p, 0] = 2 * slot[p]
        else:
            adjacent = sorted({slot[q] for q in neighbours(p) if color[q]})
            out[p, :len(adjacent)] = [2 * s + 1 for s in adjacent]
    return out


def random_boards(rng: np.random.Generator, batch: int, width: int, height: int,
                  features: int) -> np.ndarray:
    """[batch, P + 1, features] with random stones at random densities (chains without
    liberties included: the groups do not judge legality), values that are and are not > 0.5,
    and noise in the other planes and the extra node's row, which must not matter."""
    n = width * height
    x = rng.random((batch, n + 1, features), dtype=np.float32)
    for b in range(batch):
        kind = rng.choice(3, size=n, p=[1 - (d := rng.uniform(0.1, 0.9)), d / 2, d / 2])
        x[b, :n, 0] = np.where(kind == 1, rng.uniform(0.51, 1.0, n), rng.uniform(0.0, 0.5, n))
        x[b, :n, 1] = np.where(kind == 2, rng.uniform(0.51, 1.0, n), rng.uniform(0.0, 0.5, n))
    return x


def assert_matches_reference(x: np.ndarray, width: int, height: int) -> np.ndarray:
    n = width * height
    got = _core.go_group_members(x, width, height)
    assert got.dtype == np.int32 and got.shape == (len(x), n, 4)
    for b in range(len(x)):
        expected = reference_members(x[b, :n, 0] > 0.5, x[b, :n, 1] > 0.5, width, height)
        np.testing.assert_array_equal(got[b], expected, err_msg=f"{width}x{height} #{b}")
    return got


@pytest.mark.parametrize("width,height", SIZES)
def test_random_boards_match_the_reference_flood_fill(width: int, height: int) -> None:
    rng = np.random.default_rng(width * 100 + height)
    for features in (2, 14):
        assert_matches_reference(random_boards(rng, 6, width, height, features), width, height)


@pytest.mark.parametrize("width,height", SIZES)
def test_played_positions_match_the_reference_and_the_positions_liberties(
        width: int, height: int) -> None:
    rng = np.random.default_rng(width * 31 + height)
    n = width * height
    games = []
    x = np.zeros((8, n + 1, Go.num_features()), dtype=np.float32)
    for b in range(len(x)):
        game = Go(width, height)
        game.play_random(int(rng.integers(0, 2 * n)), rng)
        game.encode(x[b])
        games.append(game)
    got = assert_matches_reference(x, width, height)
    for game, members in zip(games, got, strict=True):
        for p in np.flatnonzero(game.board):
            chain = members[p, 0]
            assert game.liberties(int(p)) == int((members == chain + 1).any(axis=1).sum())


def test_a_chain_and_its_liberties() -> None:
    # 5x5, own stones at (1,1), (2,1), (2,2): points 6, 7, 12, one chain with seven liberties.
    x = np.zeros((1, 26, 2), dtype=np.float32)
    x[0, [6, 7, 12], 0] = 1.0
    got = _core.go_group_members(x, 5, 5)[0]
    assert got[[6, 7, 12], 0].tolist() == [0, 0, 0]
    liberties = sorted(int(p) for p in np.flatnonzero(got[:, 0] == 1))
    assert liberties == [1, 2, 5, 8, 11, 13, 17]
    assert (got[:, 1:] == -1).all()
    others = np.setdiff1d(np.arange(25), [6, 7, 12, *liberties])
    assert (got[others] == -1).all()


def test_an_empty_point_between_four_chains() -> None:
    # 3x3, the centre empty, own stones above and below it, opponent stones left and right:
    # four chains, numbered by point (1, 3, 5, 7), all adjacent to the centre.
    x = np.zeros((1, 10, 14), dtype=np.float32)
    x[0, [1, 7], 0] = 1.0
    x[0, [3, 5], 1] = 1.0
    got = _core.go_group_members(x, 3, 3)[0]
    assert got[4].tolist() == [1, 3, 5, 7]
    assert got[[1, 3, 5, 7], 0].tolist() == [0, 2, 4, 6]
    assert got[0].tolist() == [1, 3, -1, -1] and got[8].tolist() == [5, 7, -1, -1]


def test_shared_liberties_of_same_coloured_chains() -> None:
    # 3x2: own stones at 0 and 2 are two chains (slots 0, 1); 1 is a liberty of both, 3 and 5
    # of one each.
    x = np.zeros((1, 7, 2), dtype=np.float32)
    x[0, [0, 2], 0] = 1.0
    got = _core.go_group_members(x, 3, 2)[0]
    assert got.tolist() == [[0, -1, -1, -1], [1, 3, -1, -1], [2, -1, -1, -1],
                            [1, -1, -1, -1], [-1] * 4, [3, -1, -1, -1]]


def test_an_empty_board_and_an_empty_batch() -> None:
    x = np.zeros((3, 362, 14), dtype=np.float32)
    x[:, 361, :] = 1.0  # the extra node is in no group
    got = _core.go_group_members(x, 19, 19)
    assert got.shape == (3, 361, 4) and (got == -1).all()
    assert _core.go_group_members(np.zeros((0, 82, 2), np.float32), 9, 9).shape == (0, 81, 4)


def test_a_stone_is_a_value_above_one_half() -> None:
    x = np.zeros((1, 5, 2), dtype=np.float32)
    x[0, 0, 0], x[0, 1, 1], x[0, 2, 0] = 0.5, 0.5001, 0.5  # only point 1 holds a stone
    assert _core.go_group_members(x, 2, 2)[0].tolist() == [
        [1, -1, -1, -1], [0, -1, -1, -1], [-1] * 4, [1, -1, -1, -1]]


@pytest.mark.parametrize("shape,width,height,error", [
    ((2, 81, 14), 9, 9, "nodes"),
    ((2, 83, 14), 9, 9, "nodes"),
    ((2, 82, 1), 9, 9, "features"),
    ((1, 26 * 26 + 1, 2), 26, 26, "2..25"),
    ((1, 3, 2), 1, 2, "2..25"),
])
def test_bad_shapes_and_sizes_are_value_errors(shape: tuple[int, int, int], width: int,
                                               height: int, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        _core.go_group_members(np.zeros(shape, dtype=np.float32), width, height)


def test_a_point_with_both_colours_is_a_value_error() -> None:
    x = np.zeros((3, 10, 2), dtype=np.float32)
    x[2, 4, :] = 1.0
    with pytest.raises(ValueError, match="position 2, point 4 has both"):
        _core.go_group_members(x, 3, 3)
