"""Gomoku rules: fives in every direction and at the edges, overlines under both rules, draws,
bad input, history, features, and the tactics helpers against a naive line count."""
from __future__ import annotations

import random

import numpy as np
import pytest

from saz.engine.games import BLACK, DRAW, WHITE, new_game
from saz.engine.games.errors import (
    IllegalMoveError,
    UndoError,
    UnsupportedRuleError,
    UnsupportedSizeError,
)
from saz.engine.games.gomoku import EXACT_FIVE, FREESTYLE, RENJU, Gomoku
from saz.engine.perft import perft

Point = tuple[int, int]
#: Four white stones on 15x15, spread along row 7 so that they never make a line of their own.
WHITE_ELSEWHERE = [(1, 7), (3, 7), (5, 7), (7, 7)]


# -- helpers ------------------------------------------------------------------------------------
def play_stones(game: Gomoku, black: list[Point], white: list[Point]) -> Gomoku:
    """Alternate black[0], white[0], black[1], ... (Black first), as (x, y) points."""
    assert len(black) - 1 <= len(white) <= len(black)
    for i, (x, y) in enumerate(black):
        game.play(game.point(x, y))
        if i < len(white):
            game.play(game.point(*white[i]))
    return game


def snapshot(game: Gomoku) -> tuple:
    """Everything observable about a position, to check that something left it unchanged."""
    return (game.board.tobytes(), game.to_move, game.hash, list(game.moves),
            game.legal_moves().tolist(), game.is_over(), game.winner(), game.winning_line())


def naive_wins(game: Gomoku, move: int, color: int) -> bool:
    """Count the whole run through `move` in each direction on a copy of the board as rows."""
    w, h = game.width, game.height
    rows = game.board.reshape(h, w).tolist()
    x0, y0 = move % w, move // w
    for dx, dy in ((1, 0), (0, 1), (1, 1), (1, -1)):
        length = 1
        for sign in (1, -1):
            x, y = x0 + sign * dx, y0 + sign * dy
            while 0 <= x < w and 0 <= y < h and rows[y][x] == color:
                length += 1
                x, y = x + sign * dx, y + sign * dy
        if length == 5 or (length > 5 and game.rules is FREESTYLE):
            return True
    return False


# -- winning lines ------------------------------------------------------------------------------
@pytest.mark.parametrize("five", [
    [(0, 0), (1, 0), (2, 0), (3, 0), (4, 0)],  # top row from the top-left corner
    [(14, 10), (14, 11), (14, 12), (14, 13), (14, 14)],  # right column into the bottom-right corner
    [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4)],  # main diagonal from the top-left corner
    [(14, 0), (13, 1), (12, 2), (11, 3), (10, 4)],  # anti-diagonal from the top-right corner
    [(4, 10), (3, 11), (2, 12), (1, 13), (0, 14)],  # anti-diagonal into the bottom-left corner
    [(10, 14), (11, 14), (12, 14), (13, 14), (14, 14)],  # bottom row into the bottom-right corner
])
@pytest.mark.parametrize("rule", ["freestyle", "exact-five"])
def test_five_in_each_direction_at_the_edges_wins(five: list[Point], rule: str) -> None:
    game = play_stones(Gomoku(15, rule=rule), five[:4], WHITE_ELSEWHERE)
    last = game.point(*five[4])
    assert game.winner() is None and not game.is_over()
    assert last in game.winning_moves()
    game.play(last)
    assert game.is_over()
    assert game.winner() == BLACK
    assert game.outcome_for(BLACK) == 1.0
    assert game.winning_line() == sorted(game.point(x, y) for x, y in five)
    assert game.legal_moves().tolist() == []


def test_five_on_the_smallest_board_corner_to_corner() -> None:
    game = play_stones(Gomoku(5), [(4, 0), (3, 1), (2, 2), (1, 3), (0, 4)],
                       [(0, 0), (1, 0), (0, 1), (4, 4)])
    assert game.winner() == BLACK
    assert game.winning_line() == [4, 8, 12, 16, 20]


def test_white_wins_too() -> None:
    game = play_stones(Gomoku(15), [(0, 0), (9, 9), (0, 2), (9, 11), (0, 4)],
                       [(5, 5), (6, 5), (7, 5), (8, 5), (9, 5)])
    assert game.winner() == WHITE
    assert game.outcome_for(BLACK) == -1.0
    assert game.winning_line() == [game.point(x, 5) for x in range(5, 10)]


def test_four_in_a_row_does_not_win() -> None:
    game = play_stones(Gomoku(15), [(5, 5), (6, 5), (7, 5), (8, 5)], WHITE_ELSEWHERE[:3])
    assert game.winner() is None and not game.is_over()
    assert game.winning_line() is None
    assert game.to_move == WHITE
    assert len(game.legal_moves()) == 225 - 7


def test_filling_the_gap_wins_with_the_last_stone_in_the_middle() -> None:
    game = play_stones(Gomoku(15), [(3, 9), (4, 9), (6, 9), (7, 9), (5, 9)], WHITE_ELSEWHERE)
    assert game.winner() == BLACK
    assert game.winning_line() == [game.point(x, 9) for x in range(3, 8)]


# Black x x x . x x on row 9: the stone on (6, 9) makes six in a row.
OVERLINE = [(3, 9), (4, 9), (5, 9), (7, 9), (8, 9), (6, 9)]
WHITE_FOR_OVERLINE = [(1, 7), (3, 7), (5, 7), (7, 7), (9, 7)]


def test_overline_wins_under_freestyle() -> None:
    game = play_stones(Gomoku(15), OVERLINE, WHITE_FOR_OVERLINE)
    assert game.winner() == BLACK
    assert game.winning_line() == [game.point(x, 9) for x in range(3, 9)]


def test_overline_does_not_win_under_exact_five_and_the_game_goes_on() -> None:
    game = play_stones(Gomoku(15, rule="exact-five"), OVERLINE[:5], WHITE_FOR_OVERLINE)
    six = game.point(6, 9)
    assert not game.wins_if_played(six, BLACK)
    assert game.winning_moves() == []
    game.play(six)
    assert game.winner() is None and not game.is_over()
    assert game.to_move == WHITE
    assert len(game.legal_moves()) == 225 - 11
    # The game goes on, and an exact five still wins: down column 4 through the overline.
    for x, y in [(0, 14), (4, 10), (6, 14), (4, 11), (8, 14), (4, 12), (10, 14)]:
        game.play(game.point(x, y))
    assert game.winning_moves() == [game.point(4, 8), game.point(4, 13)]
    game.play(game.point(4, 13))
    assert game.winner() == BLACK
    assert game.winning_line() == [game.point(4, y) for y in range(9, 14)]


def test_exact_five_wins_when_another_direction_is_an_overline() -> None:
    # One stone on (5, 5) completes six across row 5 and exactly five down column 5.
    black = [(2, 5), (3, 5), (4, 5), (6, 5), (7, 5), (5, 6), (5, 7), (5, 8), (5, 9)]
    white = [(0, 0), (2, 0), (4, 0), (6, 0), (8, 0), (10, 0), (12, 0), (14, 0), (0, 2)]
    game = play_stones(Gomoku(15, rule="exact-five"), black, white)
    game.play(game.point(5, 5))
    assert game.winner() == BLACK
    assert game.winning_line() == [game.point(5, y) for y in range(5, 10)]


def test_full_board_without_five_is_a_draw() -> None:
    rows = ["OXOOX",
            "XXXOO",
            "XXOXO",
            "XOXOO",
            "OXXOX"]
    black = [(x, y) for y in range(5) for x in range(5) if rows[y][x] == "X"]
    white = [(x, y) for y in range(5) for x in range(5) if rows[y][x] == "O"]
    game = Gomoku(5)
    for i in range(12):
        play_stones(game, [black[i]], [white[i]])
        assert game.winner() is None
    game.play(game.point(*black[12]))
    assert str(game).replace(" ", "").split("\n") == rows
    assert game.is_over()
    assert game.winner() == DRAW
    assert game.winning_line() is None
    assert game.legal_moves().tolist() == []
    assert game.outcome_for(WHITE) == 0.0


def test_moves_after_the_end_are_rejected() -> None:
    game = play_stones(Gomoku(15), [(0, 0), (1, 0), (2, 0), (3, 0), (4, 0)], WHITE_ELSEWHERE)
    before = snapshot(game)
    for move in (game.point(5, 0), game.point(10, 10)):
        assert not game.is_legal(move)
        with pytest.raises(IllegalMoveError, match="game is over"):
            game.play(move)
    assert game.winning_moves() == [] and game.forced_moves() is None
    assert snapshot(game) == before


# -- bad input ----------------------------------------------------------------------------------
@pytest.mark.parametrize("move, reason", [
    (7 * 15 + 1, "occupied"), (-1, "off the board"), (226, "off the board"),
    (10**6, "off the board"), (225, "no pass"),
])
def test_illegal_moves_leave_the_position_unchanged(move: int, reason: str) -> None:
    game = play_stones(Gomoku(15), [(7, 7), (8, 8)], [(1, 7)])
    before = snapshot(game)
    assert not game.is_legal(move)
    with pytest.raises(IllegalMoveError, match=reason) as info:
        game.play(move)
    assert info.value.move == move
    assert snapshot(game) == before


@pytest.mark.parametrize("width, height", [(4, 4), (33, 33), (0, 0), (15, 4), (4, 15), (-15, -15)])
def test_unsupported_sizes(width: int, height: int) -> None:
    with pytest.raises(UnsupportedSizeError):
        Gomoku(width, height)


def test_supported_sizes_and_rules() -> None:
    assert Gomoku(32).num_points == 1024
    assert Gomoku(5, 32).num_points == 160
    assert Gomoku(15).rules is FREESTYLE
    assert new_game("gomoku", 15, rule="exact-five").rules is EXACT_FIVE
    assert Gomoku(15, rule="renju").rules is RENJU
    with pytest.raises(UnsupportedRuleError, match="freestyle, exact-five, renju"):
        Gomoku(15, rule="caro")


def test_wins_if_played_rejects_bad_points_and_colours() -> None:
    game = play_stones(Gomoku(9), [(4, 4)], [])
    for move in (game.point(4, 4), -1, 81):
        with pytest.raises(IllegalMoveError):
            game.wins_if_played(move, BLACK)
    with pytest.raises(ValueError, match="color"):
        game.wins_if_played(0, 0)


# -- history, hashing, copies -------------------------------------------------------------------
def test_undo_restores_everything_including_a_win() -> None:
    game = Gomoku(15)
    states = [snapshot(game)]
    for x, y in [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1), (3, 0), (3, 1), (4, 0)]:
        game.play(game.point(x, y))
        states.append(snapshot(game))
    assert game.winner() == BLACK
    while game.moves:
        states.pop()
        game.undo()
        assert snapshot(game) == states[-1]
    with pytest.raises(UndoError):
        game.undo()


def test_hash_is_equal_by_transposition_and_depends_on_side_to_move() -> None:
    a = play_stones(Gomoku(15), [(7, 7), (9, 9)], [(8, 8)])
    b = play_stones(Gomoku(15), [(9, 9), (7, 7)], [(8, 8)])
    assert a.moves != b.moves and a.hash == b.hash
    c = play_stones(Gomoku(15), [(7, 7), (9, 9)], [(8, 8), (0, 0)])
    c.undo()
    assert c.hash == a.hash
    others = [Gomoku(15), play_stones(Gomoku(15), [(7, 7)], [(8, 8)]),
              play_stones(Gomoku(15), [(7, 7), (8, 8)], [(9, 9)])]
    assert len({a.hash} | {g.hash for g in others}) == 4


def test_copy_is_independent() -> None:
    game = play_stones(Gomoku(15), [(7, 7)], [(8, 8)])
    twin = game.copy()
    before = snapshot(game)
    twin.play(twin.point(9, 9))
    assert snapshot(game) == before
    assert twin.board[twin.point(9, 9)] == BLACK and game.board[game.point(9, 9)] == 0
    game.undo()
    assert twin.moves == [game.point(7, 7), game.point(8, 8), game.point(9, 9)]
    assert game.winning_moves() == twin.winning_moves() == []


def test_board_is_a_read_only_view_that_follows_the_game() -> None:
    game = Gomoku(9)
    board = game.board
    game.play(40)
    game.play(41)
    assert board[40] == BLACK and board[41] == WHITE
    with pytest.raises(ValueError):
        board[0] = BLACK


# -- features -----------------------------------------------------------------------------------
@pytest.mark.parametrize("white_to_move", [False, True])
def test_encode_exact_planes(white_to_move: bool) -> None:
    game = play_stones(Gomoku(5), [(0, 0), (4, 4)], [(2, 1), (1, 3)])  # Black 0 24, White 7 16
    black, white = [0, 24], [7, 16]
    if white_to_move:
        game.play(game.point(3, 3))
        black.append(18)
    own, opp = (white, black) if white_to_move else (black, white)
    expected = np.zeros((26, 21), dtype=np.float32)
    expected[own, 0] = 1
    expected[opp, 1] = 1
    expected[:25, 2] = 1
    expected[own + opp, 2] = 0
    expected[:25, 3:9] = game.threats()
    expected[25, 9] = 1
    expected[:25, 11:21] = game.shapes()
    out = np.full((26, 21), 7.0, dtype=np.float32)
    game.encode(out)
    shapes = ("open_four", "double_four", "four_three", "open_three", "double_three")
    assert game.feature_names == ("own", "opponent", "empty", "own_five", "own_four",
                                  "own_three", "opponent_five", "opponent_four",
                                  "opponent_three", "extra", "black_forbidden",
                                  *(f"own_{s}" for s in shapes),
                                  *(f"opponent_{s}" for s in shapes))
    # Version 4 appended the shape planes to version 3's eleven, which older networks read.
    assert (game.feature_version, dict(game.feature_prefixes)) == (4, {3: 11})
    np.testing.assert_array_equal(out, expected)


def test_threat_planes_of_a_known_position() -> None:
    # Black (to move) has three in row 4 at x = 2..4; White three on the diagonal from (0, 0).
    game = play_stones(Gomoku(9), [(2, 4), (3, 4), (4, 4)], [(0, 0), (1, 1), (2, 2)])
    threats = game.threats()

    def marked(plane: int) -> set[tuple[int, int]]:
        return {(p % 9, p // 9) for p in np.flatnonzero(threats[:, plane])}

    assert marked(0) == set()  # no own five
    # Fours: every window of row 4 that holds all three (broken fours included).
    assert marked(1) == {(0, 4), (1, 4), (5, 4), (6, 4)}
    # Threes: the windows [3..7] of row 4 hold two; (1, 4) lies only in windows that hold three.
    assert marked(2) == {(5, 4), (6, 4), (7, 4)}
    # Black's stone on (4, 4) lies in every diagonal window through two White stones: White has
    # nothing at all.
    assert marked(3) == marked(4) == marked(5) == set()


def _threats_by_definition(game: Gomoku) -> np.ndarray:
    """The threat planes from their definition, window by window."""
    board = game.board.reshape(game.height, game.width)
    me = game.to_move
    out = np.zeros((game.num_points, 6), dtype=np.uint8)
    for y in range(game.height):
        for x in range(game.width):
            if board[y, x] != 0:
                continue
            for dx, dy in ((1, 0), (0, 1), (1, 1), (-1, 1)):
                for start in range(-4, 1):
                    cells = [(x + (start + k) * dx, y + (start + k) * dy) for k in range(5)]
                    if not all(0 <= cx < game.width and 0 <= cy < game.height for cx, cy in cells):
                        continue
                    values = [board[cy, cx] for cx, cy in cells]
                    for side, offset in ((me, 0), (-me, 3)):
                        if -side in values:
                            continue
                        length = values.count(side) + 1
                        if length in (5, 4, 3):
                            out[y * game.width + x, offset + 5 - length] = 1
    return out


@pytest.mark.parametrize("size", [(5, 5), (9, 9), (15, 15), (12, 7)])
def test_threat_planes_match_their_definition_over_random_games(size: tuple[int, int]) -> None:
    rng = np.random.default_rng(sum(size))
    for _ in range(6):
        game = Gomoku(*size)
        while not game.is_over() and len(game.moves) < 0.6 * game.num_points:
            game.play(int(rng.choice(game.legal_moves())))
            np.testing.assert_array_equal(game.threats(), _threats_by_definition(game))


def test_shape_planes_of_a_known_position() -> None:
    """Black (to move): an open three in row 5 (x = 3..5) and a two in column 7 (y = 3, 4).
    White: a three on the top edge (x = 0..2), which the edge closes, and a two in row 9."""
    game = play_stones(Gomoku(11), [(3, 5), (4, 5), (5, 5), (7, 3), (7, 4)],
                       [(0, 0), (1, 0), (2, 0), (4, 9), (5, 9)])
    shapes = game.shapes()

    def marked(plane: int) -> set[tuple[int, int]]:
        return {(p % 11, p // 11) for p in np.flatnonzero(shapes[:, plane])}

    # Open fours: either end of the open three. (1, 5) and (7, 5) make fours that one point
    # completes.
    assert marked(0) == {(2, 5), (6, 5)}
    assert marked(1) == set()                      # fours in two directions: nowhere
    # (7, 5): a four in row 5 and an open three in column 7, a win unless White wins first.
    assert marked(2) == {(7, 5)}
    assert {(7, 2), (7, 1), (7, 5), (7, 6)} <= marked(3)
    assert (7, 0) not in marked(3)                 # 0, _, _, 3, 4: two more to a four
    # White, were it to move: the edge's three makes a closed four at (3, 0), nothing more.
    assert marked(5) == marked(6) == marked(7) == set()
    assert (3, 0) not in marked(8)
    assert {(2, 9), (3, 9), (6, 9), (7, 9)} <= marked(8)
    assert not shapes[[game.point(x, y) for x, y in [(3, 5), (0, 0)]]].any()  # stones: none


OPEN_THREE_CLASS, FOUR_CLASS, OPEN_FOUR_CLASS, FIVE_CLASS = 1, 2, 3, 4


def _run_through(stones: set[tuple[int, int]], point: tuple[int, int], dx: int, dy: int) -> int:
    """The length of the run of `stones` through `point` (which must be one) along (dx, dy)."""
    length = 1
    for sign in (1, -1):
        x, y = point[0] + sign * dx, point[1] + sign * dy
        while (x, y) in stones:
            length += 1
            x, y = x + sign * dx, y + sign * dy
    return length


def _line_class(game: Gomoku, point: tuple[int, int], color: int, dx: int, dy: int) -> int:
    """What a stone of `color` on the empty `point` makes along (dx, dy), by the definition in
    `Gomoku.shapes`, on the whole board rather than nine points of it."""
    board = game.board.reshape(game.height, game.width)
    own = {(x, y) for y in range(game.height) for x in range(game.width) if board[y, x] == color}
    line = [(point[0] + k * dx, point[1] + k * dy) for k in range(-game.width, game.width + 1)]
    empty = [(x, y) for x, y in line if 0 <= x < game.width and 0 <= y < game.height
             and board[y, x] == 0 and (x, y) != point]
    stones = own | {point}

    def completions(stones: set[tuple[int, int]], empty: list[tuple[int, int]]) -> int:
        return sum(_run_through(stones | {e}, point, dx, dy) >= 5 for e in empty)

    if _run_through(stones, point, dx, dy) >= 5:
        return FIVE_CLASS
    now = completions(stones, empty)
    if now:
        return OPEN_FOUR_CLASS if now >= 2 else FOUR_CLASS
    if any(completions(stones | {e}, [f for f in empty if f != e]) >= 2 for e in empty):
        return OPEN_THREE_CLASS
    return 0


def _shapes_by_definition(game: Gomoku) -> np.ndarray:
    """The shape planes from their definition, direction by direction on the whole board."""
    out = np.zeros((game.num_points, 10), dtype=np.uint8)
    board = game.board
    for p in range(game.num_points):
        if board[p] != 0:
            continue
        point = (p % game.width, p // game.width)
        for offset, color in ((0, game.to_move), (5, -game.to_move)):
            classes = [_line_class(game, point, color, dx, dy)
                       for dx, dy in ((1, 0), (0, 1), (1, 1), (-1, 1))]
            fours = sum(c >= FOUR_CLASS for c in classes)
            threes = sum(c == OPEN_THREE_CLASS for c in classes)
            out[p, offset:offset + 5] = (max(classes) >= OPEN_FOUR_CLASS, fours >= 2,
                                         fours >= 1 and threes >= 1, threes >= 1, threes >= 2)
    return out


@pytest.mark.parametrize("size", [(6, 6), (9, 9), (12, 7)])
def test_shape_planes_match_their_definition_over_random_games(size: tuple[int, int]) -> None:
    """Random games crowd the board with every kind of line, edges and blocks included; each
    position's planes are the definition's, computed on the whole board."""
    rng = np.random.default_rng(7 + sum(size))
    checked = 0
    for _ in range(2):
        game = Gomoku(*size)
        while not game.is_over() and len(game.moves) < 0.6 * game.num_points:
            # Mostly next to the last stone, so that lines grow.
            moves = game.legal_moves()
            if game.moves and rng.random() < 0.7:
                last = game.moves[-1]
                near = [m for m in moves if abs(m % size[0] - last % size[0]) <= 1
                        and abs(m // size[0] - last // size[0]) <= 1]
                moves = np.asarray(near) if near else moves
            game.play(int(rng.choice(moves)))
            np.testing.assert_array_equal(game.shapes(), _shapes_by_definition(game))
            checked += int(game.shapes().any())
    assert checked >= 5  # the positions had shapes to check


# -- tactics ------------------------------------------------------------------------------------
WHITE_FOUR = [(5, 5), (6, 5), (7, 5), (8, 5)]


def test_forced_moves_without_a_threat_is_none() -> None:
    game = play_stones(Gomoku(15), [(0, 0), (0, 2), (0, 4)], WHITE_FOUR[:3])
    assert game.forced_moves() is None


def test_forced_moves_blocks_a_single_threat() -> None:
    game = play_stones(Gomoku(15), [(4, 5), (0, 0), (0, 2), (0, 4)], WHITE_FOUR)
    assert game.winning_moves() == []
    assert game.forced_moves() == [game.point(9, 5)]


def test_forced_moves_of_an_open_four_is_lost() -> None:
    game = play_stones(Gomoku(15), [(0, 0), (0, 2), (0, 4), (0, 6)], WHITE_FOUR)
    assert game.forced_moves() == []


def test_forced_moves_keeps_a_win_that_comes_first() -> None:
    game = play_stones(Gomoku(15), [(0, 0), (0, 1), (0, 2), (0, 3)], WHITE_FOUR)
    assert game.winning_moves() == [game.point(0, 4)]
    assert game.forced_moves() == [game.point(0, 4)]


# -- tactics helpers against the naive count ------------------------------------------------------
@pytest.mark.parametrize("rule", ["freestyle", "exact-five"])
@pytest.mark.parametrize("width, height, seed", [(7, 7, 1), (9, 9, 2), (12, 6, 3)])
def test_tactics_agree_with_naive_lines_on_random_games(width: int, height: int, seed: int,
                                                       rule: str) -> None:
    """Random dense games: `wins_if_played` for both colours, `winning_moves`, `forced_moves`
    and actually playing each move all agree with a naive count of the whole run."""
    rng = random.Random(seed)
    seen = {"wins": 0, "forced": 0, "lost": 0}
    for _ in range(12):
        game = Gomoku(width, height, rule=rule)
        while not game.is_over():
            me = game.to_move
            empty = game.legal_moves().tolist()
            mine = [p for p in empty if naive_wins(game, p, me)]
            theirs = [p for p in empty if naive_wins(game, p, -me)]
            for p in empty:
                assert game.wins_if_played(p, me) == (p in mine)
                assert game.wins_if_played(p, -me) == (p in theirs)
            assert game.winning_moves() == mine
            blocks = theirs if len(theirs) == 1 else []  # one stone cannot stop two threats
            expected = sorted(set(mine) | set(blocks)) if theirs else None
            assert game.forced_moves() == expected
            for p in mine[:2] + empty[:2]:
                game.play(p)
                assert (game.winner() == me) == (p in mine)
                game.undo()
            seen["wins"] += bool(mine)
            seen["forced"] += bool(theirs)
            seen["lost"] += expected == []
            game.play(rng.choice(empty))
    assert min(seen.values()) > 0  # every branch of the tactics met


# -- perft --------------------------------------------------------------------------------------
@pytest.mark.parametrize("width, height, depth, count", [
    (15, 15, 1, 225), (15, 15, 2, 225 * 224), (15, 15, 3, 225 * 224 * 223),
    (7, 5, 4, 35 * 34 * 33 * 32), (32, 32, 2, 1024 * 1023),
])
def test_perft_before_any_five_is_possible(width: int, height: int, depth: int, count: int) -> None:
    assert perft(Gomoku(width, height), depth) == count


def test_perft_counts_no_children_after_a_win() -> None:
    # Black has four on row 0 and White, to move, 18 empty points. Blocking at (4, 0) leaves
    # 17 x 16 lines; each of White's 17 other moves leaves Black 16 quiet moves with 16 replies
    # each, and the win on (4, 0), which has no children.
    game = play_stones(Gomoku(5), [(0, 0), (1, 0), (2, 0), (3, 0)], [(0, 2), (2, 2), (4, 4)])
    assert perft(game, 1) == 18
    assert perft(game, 2) == 18 * 17
    assert perft(game, 3) == 17 * 16 + 17 * 16 * 16


# -- moves out of turn and rule changes (GUIs, GTP) -----------------------------------------------
def state(game: Gomoku) -> tuple:
    return game.board.tolist(), game.hash, list(game.moves), game.to_move, game.winner()


def test_a_five_made_out_of_turn_wins_for_its_colour() -> None:
    game = Gomoku(9)
    for x in range(4):
        game.play(game.point(x, 4), BLACK)  # Black four times in a row: a set-up line
    assert game.colors() == [BLACK] * 4 and game.to_move == WHITE
    before = state(game)
    game.play(game.point(4, 4), BLACK)
    assert game.is_over() and game.winner() == BLACK
    game.undo()
    assert state(game) == before  # White to move again, as before the move


def test_set_to_move_then_undo_returns_to_the_position_before_the_last_move() -> None:
    game = Gomoku(9)
    game.play(40)
    white_to_move = game.hash
    game.set_to_move(BLACK)
    assert game.to_move == BLACK and game.hash != white_to_move
    game.set_to_move(WHITE)
    assert game.hash == white_to_move
    game.set_to_move(BLACK)
    game.undo()
    assert state(game) == state(Gomoku(9))


def test_a_rule_change_replays_every_move_by_its_colour() -> None:
    """Six black stones in a row win under freestyle only: under exact five the game goes on,
    and back under freestyle it is won again."""
    game = Gomoku(9, rule="exact-five")
    for x in (0, 1, 2, 4, 5):
        game.play(game.point(x, 0), BLACK)
    game.play(game.point(3, 0), BLACK)  # an overline: no win under exact five
    assert not game.is_over() and game.to_move == WHITE
    free = game.with_rules(rule="freestyle")
    assert free.winner() == BLACK and free.colors() == [BLACK] * 6
    assert free.board.tolist() == game.board.tolist()
    back = free.with_rules(rule="exact-five")
    assert state(back) == state(game)
    with pytest.raises(UnsupportedRuleError):
        game.with_rules(komi=6.5)


@pytest.mark.parametrize("width, height, centre", [(15, 15, (7, 7)), (20, 20, (10, 10)),
                                                   (9, 7, (4, 3)), (5, 5, (2, 2))])
def test_the_book_opens_in_the_centre_of_an_empty_board(width: int, height: int,
                                                        centre: tuple[int, int]) -> None:
    game = Gomoku(width, height, rule="renju")
    assert game.book_moves() == [game.point(*centre)]
    game.play(game.point(0, 0))
    assert game.book_moves() is None  # any stone on the board: the network decides
    game.undo()
    assert game.book_moves() == [game.point(*centre)]
    assert new_game("go", 9).book_moves() is None and new_game("othello", 8).book_moves() is None


# -- the window the network sees (`focus_masks`) ---------------------------------------------------
def _window(keep: np.ndarray, size: int) -> tuple[int, int, int, int]:
    """(x0, x1, y0, y1) of a focus mask's kept points, which must form that rectangle."""
    ys, xs = np.nonzero(keep[:-1].reshape(size, size))
    x0, x1, y0, y1 = int(xs.min()), int(xs.max()), int(ys.min()), int(ys.max())
    assert len(xs) == (x1 - x0 + 1) * (y1 - y0 + 1)
    return x0, x1, y0, y1


def test_focus_is_the_stones_reach_widened_to_the_least_side() -> None:
    from saz.engine.graph import encode
    game = Gomoku(20)
    for x, y in ((8, 10), (12, 10), (10, 6)):
        game.play(game.point(x, y))
    keep = Gomoku.focus_masks(encode([game]), 20, 20, 12)
    assert keep is not None and keep.shape == (1, 401) and keep[0, -1]
    # x: 8..12 and four either side, 4..16 (13 > 12); y: 6..10 and four, 2..14, widened to 13
    assert _window(keep[0], 20) == (4, 16, 2, 14)
    # one stone: 9 points a side, widened evenly to 12
    single = Gomoku(20)
    single.play(single.point(10, 10))
    keep = Gomoku.focus_masks(encode([single]), 20, 20, 12)
    assert keep is not None and _window(keep[0], 20) == (5, 16, 5, 16)


def test_focus_slides_inside_the_board_and_keeps_its_side() -> None:
    from saz.engine.graph import encode
    game = Gomoku(20)
    game.play(game.point(1, 18))
    keep = Gomoku.focus_masks(encode([game]), 20, 20, 12)
    assert keep is not None and _window(keep[0], 20) == (0, 11, 8, 19)


def test_a_lone_stone_does_not_stretch_the_window() -> None:
    from saz.engine.graph import encode
    game = Gomoku(20)
    for x, y in ((0, 19), (10, 10), (11, 11)):  # a stone in the corner, far from the fight
        game.play(game.point(x, y))
    keep = Gomoku.focus_masks(encode([game]), 20, 20, 12)
    assert keep is not None and _window(keep[0], 20) == (5, 16, 5, 16)  # as without the corner
    # Within four points of another stone (here diagonally), a stone counts.
    game.play(game.point(14, 14))
    keep = Gomoku.focus_masks(encode([game]), 20, 20, 12)
    assert keep is not None and _window(keep[0], 20) == (6, 18, 6, 18)  # 10..14 and four round
    # Once play reaches it, the corner stone is no longer lone.
    game.play(game.point(3, 16))
    keep = Gomoku.focus_masks(encode([game]), 20, 20, 12)
    assert keep is not None and _window(keep[0], 20) == (0, 19, 2, 19)


def test_focus_is_the_whole_board_when_the_stones_span_it_or_there_are_none() -> None:
    from saz.engine.graph import encode
    spread = Gomoku(20)
    spread.play(spread.point(2, 2))
    spread.play(spread.point(17, 17))
    assert Gomoku.focus_masks(encode([spread]), 20, 20, 12) is None
    assert Gomoku.focus_masks(encode([Gomoku(20)]), 20, 20, 12) is None
    small = Gomoku(12)  # the least side is the board itself
    small.play(small.point(6, 6))
    assert Gomoku.focus_masks(encode([small]), 12, 12, 12) is None
    centre = Gomoku(20)
    centre.play(centre.point(10, 10))
    keep = Gomoku.focus_masks(encode([centre, Gomoku(20)]), 20, 20, 12)
    assert keep is not None and keep[1].all()  # the empty board in a batch is seen whole
    assert keep[0].sum() == 12 * 12 + 1


def test_other_games_are_seen_whole() -> None:
    from saz.engine.graph import encode
    for name, size in (("go", 19), ("othello", 16)):
        game = new_game(name, size)
        game.play(game.legal_moves()[0])
        assert type(game).focus_masks(encode([game]), size, size, 12) is None


def test_the_network_sees_a_window_as_a_board_that_size(tiny_model) -> None:
    """Masked to its window, a 20x20 position evaluates as the same stones on a 12x12 board:
    the window's edge is an edge to the network, and the points beyond it add nothing."""
    from saz.engine.evaluator import Evaluator
    from saz.engine.graph import encode
    evaluator = Evaluator(tiny_model("gomoku").path, threads=1)
    stones = ((9, 10), (10, 9), (10, 11), (11, 12))
    big, small = Gomoku(20), Gomoku(12)
    for x, y in stones:  # the window is x 5..16, y 5..16 (four round 9..12 / 9..12, widened)
        big.play(big.point(x, y))
        small.play(small.point(x - 5, y - 5))
    x = encode([big])
    keep = Gomoku.focus_masks(x, 20, 20, 12)
    assert keep is not None and _window(keep[0], 20) == (5, 16, 5, 16)
    _, value_big = evaluator.evaluate([big], keep)
    _, value_small = evaluator.evaluate([small])
    _, value_whole = evaluator.evaluate([big])
    assert value_big[0] == pytest.approx(value_small[0], abs=1e-5)
    assert abs(value_whole[0] - value_small[0]) > 1e-4  # the whole board reads otherwise
    from saz.engine.graph import layout
    log_big, _ = evaluator.run(x, layout(20, 20), keep)
    log_small, _ = evaluator.run(encode([small]), layout(12, 12))
    inside = log_big[0, :-1].reshape(20, 20)[5:17, 5:17].ravel()
    assert np.allclose(inside, log_small[0, :-1], atol=1e-4)
