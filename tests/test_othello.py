"""Othello rules: published perft counts, a naive reference on random games, and exact positions."""
from __future__ import annotations

import random

import numpy as np
import pytest

from saz.engine.games import BLACK, DRAW, WHITE, new_game
from saz.engine.games.bitboard import mask_of
from saz.engine.games.errors import (
    GameError,
    IllegalMoveError,
    UndoError,
    UnsupportedRuleError,
    UnsupportedSizeError,
)
from saz.engine.games.othello import Othello
from saz.engine.perft import perft

LETTERS = "abcdefghijklmnopqrstuvwxyz"


# -- helpers ------------------------------------------------------------------------------------
def pt(game: Othello, name: str) -> int:
    """The move of an Othello coordinate: column letter from the left, row 1 at the top; "pass"."""
    if name == "pass":
        return game.pass_move
    return game.point(LETTERS.index(name[0]), int(name[1:]) - 1)


def played(game: Othello, moves: str) -> Othello:
    for name in moves.split():
        game.play(pt(game, name))
    return game


def diagram(game: Othello) -> list[str]:
    return str(game).replace(" ", "").split("\n")


def from_rows(rows: list[str], to_move: int = BLACK) -> Othello:
    return Othello.from_diagram("\n".join(rows), to_move=to_move)


def snapshot(game: Othello) -> tuple:
    """Everything observable about a position, to check that something left it unchanged."""
    return (game.board.copy().tobytes(), game.to_move, game.hash, list(game.moves),
            game.legal_moves().tolist(), game.is_over(), game.winner(), game.disc_count())


class NaiveOthello:
    """Obviously correct reference rules: every ray walked point by point on a list of rows."""

    DIRECTIONS = [(dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if (dx, dy) != (0, 0)]

    def __init__(self, width: int, height: int) -> None:
        self.w, self.h = width, height
        self.cells = [[0] * width for _ in range(height)]
        cx, cy = width // 2, height // 2
        self.cells[cy - 1][cx - 1] = self.cells[cy][cx] = WHITE
        self.cells[cy - 1][cx] = self.cells[cy][cx - 1] = BLACK
        self.to_move = BLACK
        self.history: list[tuple[list[list[int]], int]] = []

    def flips(self, point: int, color: int) -> list[int]:
        x, y = point % self.w, point // self.w
        if self.cells[y][x]:
            return []
        out = []
        for dx, dy in self.DIRECTIONS:
            run, cx, cy = [], x + dx, y + dy
            while 0 <= cx < self.w and 0 <= cy < self.h and self.cells[cy][cx] == -color:
                run.append(cy * self.w + cx)
                cx, cy = cx + dx, cy + dy
            if run and 0 <= cx < self.w and 0 <= cy < self.h and self.cells[cy][cx] == color:
                out += run
        return sorted(out)

    def placements(self, color: int) -> list[int]:
        return [p for p in range(self.w * self.h) if self.flips(p, color)]

    def legal_moves(self) -> list[int]:
        own = self.placements(self.to_move)
        if own:
            return own
        return [self.w * self.h] if self.placements(-self.to_move) else []

    def play(self, move: int) -> None:
        self.history.append(([row[:] for row in self.cells], self.to_move))
        if move < self.w * self.h:
            for p in self.flips(move, self.to_move) + [move]:
                self.cells[p // self.w][p % self.w] = self.to_move
        self.to_move = -self.to_move

    def undo(self) -> None:
        self.cells, self.to_move = self.history.pop()

    def board(self) -> list[int]:
        return [v for row in self.cells for v in row]

    def final_result(self) -> int:
        score = sum(self.board())
        return BLACK if score > 0 else WHITE if score < 0 else DRAW


def assert_same(game: Othello, ref: NaiveOthello) -> list[int]:
    """Compare everything observable; return the legal moves."""
    assert game.board.tolist() == ref.board()
    assert game.to_move == ref.to_move
    legal = ref.legal_moves()
    assert game.legal_moves().tolist() == legal
    assert game.is_over() == (not legal)
    assert game.winner() == (None if legal else ref.final_result())
    for move in legal:
        if move != game.pass_move:
            assert game.flips(move) == ref.flips(move, ref.to_move)
    # The incrementally kept hash equals the one computed from scratch for the same discs.
    fresh = Othello.from_diagram(str(game), to_move=game.to_move)
    assert game.hash == fresh.hash
    return legal


# -- move generation ----------------------------------------------------------------------------
#: Leaf counts from the start position by depth, as published (passes count as plies).
PUBLISHED_PERFT_8X8 = {
    1: 4, 2: 12, 3: 56, 4: 244, 5: 1396, 6: 8200, 7: 55092, 8: 390216, 9: 3005288,
}


@pytest.mark.parametrize("depth", range(1, 8))
def test_perft_8x8_matches_published_counts(depth: int) -> None:
    assert perft(Othello(8), depth) == PUBLISHED_PERFT_8X8[depth]


@pytest.mark.slow
@pytest.mark.parametrize("depth", [8, 9])
def test_perft_8x8_deep(depth: int) -> None:
    assert perft(Othello(8), depth) == PUBLISHED_PERFT_8X8[depth]


@pytest.mark.parametrize("width, height, seed, games", [
    (4, 4, 1, 100), (6, 6, 2, 30), (8, 8, 3, 10), (10, 10, 4, 3), (8, 4, 5, 30), (4, 6, 6, 30),
])
def test_random_games_agree_with_naive_rules(width: int, height: int, seed: int,
                                             games: int) -> None:
    """Whole random games (passes and the end included), with a few take-backs on the way."""
    rng = random.Random(seed)
    passes = 0
    for _ in range(games):
        game, ref = Othello(width, height), NaiveOthello(width, height)
        legal = assert_same(game, ref)
        while legal:
            move = rng.choice(legal)
            passes += move == game.pass_move
            game.play(move)
            ref.play(move)
            if rng.random() < 0.05:
                for _ in range(min(rng.randint(1, 3), len(game.moves))):
                    game.undo()
                    ref.undo()
            legal = assert_same(game, ref)
        with pytest.raises(IllegalMoveError, match="game is over"):
            game.play(game.pass_move)
    assert passes > 0  # every size meets forced passes within these games


def test_perft_6x6_agrees_with_naive_rules() -> None:
    def naive_perft(ref: NaiveOthello, depth: int) -> int:
        if depth == 0:
            return 1
        total = 0
        for move in ref.legal_moves():
            ref.play(move)
            total += naive_perft(ref, depth - 1)
            ref.undo()
        return total

    assert perft(Othello(6), 5) == naive_perft(NaiveOthello(6, 6), 5)


# -- positions ----------------------------------------------------------------------------------
def test_start_position_8x8() -> None:
    game = Othello(8)
    assert diagram(game)[2:6] == ["........", "...OX...", "...XO...", "........"]
    assert game.board[pt(game, "d4")] == WHITE and game.board[pt(game, "e5")] == WHITE
    assert game.board[pt(game, "d5")] == BLACK and game.board[pt(game, "e4")] == BLACK
    assert game.to_move == BLACK
    assert game.disc_count() == (2, 2)
    assert game.legal_moves().tolist() == sorted(pt(game, m) for m in ("d3", "c4", "f5", "e6"))


@pytest.mark.parametrize("width, height, white", [
    (6, 6, ("c3", "d4")), (10, 10, ("e5", "f6")), (8, 4, ("d2", "e3")), (4, 26, ("b13", "c14")),
])
def test_start_position_other_sizes(width: int, height: int, white: tuple[str, str]) -> None:
    game = Othello(width, height)
    assert np.flatnonzero(game.board == WHITE).tolist() == sorted(pt(game, m) for m in white)
    black = np.flatnonzero(game.board == BLACK).tolist()
    a, b = (pt(game, m) for m in white)
    assert black == sorted([a + 1, b - 1])
    assert game.disc_count() == (2, 2)
    assert len(game.legal_moves()) == 4


def test_play_flips_and_alternates() -> None:
    game = played(Othello(8), "d3")
    assert diagram(game)[2:5] == ["...X....", "...XX...", "...XO..."]
    assert game.to_move == WHITE
    assert game.disc_count() == (4, 1)
    assert game.legal_moves().tolist() == sorted(pt(game, m) for m in ("c3", "e3", "c5"))


def test_flips_along_all_eight_directions_in_one_move() -> None:
    game = from_rows([
        "X..X..X.",
        ".O.O.O..",
        "..OOO...",
        "XOO.OOOX",
        "..OOO...",
        ".O.O.O..",
        "X..X..X.",
        "...O....",
    ])
    d4 = pt(game, "d4")
    flipped = ["b2", "d2", "f2", "c3", "d3", "e3", "b4", "c4", "e4", "f4", "g4", "c5", "d5", "e5",
               "b6", "d6", "f6"]
    assert game.flips(d4) == sorted(pt(game, m) for m in flipped)
    game.play(d4)
    assert diagram(game) == [
        "X..X..X.",
        ".X.X.X..",
        "..XXX...",
        "XXXXXXXX",
        "..XXX...",
        ".X.X.X..",
        "X..X..X.",
        "...O....",
    ]
    assert game.disc_count() == (26, 1)


def test_runs_do_not_wrap_around_the_board_edge() -> None:
    # In the bit string, h1 -> a2 -> b2 (east), a4 -> h3 -> g3 (west) and h5 -> a7 -> b8
    # (south-east) are consecutive steps; on the board they are no lines, so Black must pass.
    game = from_rows([
        "........",
        "OX......",
        "......XO",
        "........",
        "........",
        "........",
        "O.......",
        ".X......",
    ])
    for name in ("h1", "a4", "h5"):
        assert game.flips(pt(game, name)) == []
    assert game.legal_moves().tolist() == [game.pass_move]


def test_forced_pass() -> None:
    game = played(Othello(4), "b1 c1 d3 a1")
    assert diagram(game) == ["OOO.", ".XX.", ".XXX", "...."]
    assert game.to_move == BLACK
    assert game.legal_moves().tolist() == [game.pass_move]
    assert game.is_legal(game.pass_move) and not game.is_over() and game.winner() is None
    before = snapshot(game)
    with pytest.raises(IllegalMoveError, match="flip nothing"):
        game.play(pt(game, "d1"))
    assert snapshot(game) == before

    game.play(game.pass_move)
    assert game.moves[-1] == game.pass_move
    assert game.to_move == WHITE
    assert diagram(game) == ["OOO.", ".XX.", ".XXX", "...."]
    assert pt(game, "a3") in game.legal_moves().tolist()
    game.undo()
    assert snapshot(game) == before


def test_pass_is_illegal_while_a_disc_can_be_placed() -> None:
    game = Othello(8)
    before = snapshot(game)
    assert not game.is_legal(game.pass_move)
    with pytest.raises(IllegalMoveError, match="pass is legal only"):
        game.play(game.pass_move)
    assert snapshot(game) == before


def test_game_ends_when_neither_side_can_move() -> None:
    game = played(Othello(4), "b1 c1 d1 a1 a3 pass d4")
    assert diagram(game) == ["OXXX", ".XX.", "XXX.", "...X"]
    assert game.is_over()
    assert game.legal_moves().tolist() == []
    assert game.disc_count() == (9, 1)
    assert game.winner() == BLACK
    assert game.outcome_for(WHITE) == -1.0
    before = snapshot(game)
    for move in (pt(game, "a2"), pt(game, "d2"), game.pass_move):
        assert not game.is_legal(move)
        with pytest.raises(IllegalMoveError, match="game is over"):
            game.play(move)
    assert snapshot(game) == before


def test_draw_by_disc_count() -> None:
    game = played(Othello(4), "b1 c1 d4 a1 d1 c4 d3 a4 b4 a2")
    assert diagram(game) == ["OOOX", "OOO.", ".XXX", "OXXX"]
    assert game.is_over()
    assert game.disc_count() == (7, 7)
    assert game.winner() == DRAW
    assert game.outcome_for(BLACK) == 0.0


def test_white_wins_on_disc_count_with_empty_points_left() -> None:
    game = from_rows(["OOOO", "OOOO", "....", "...X"], to_move=BLACK)
    assert game.is_over()
    assert game.winner() == WHITE


def test_wipe_out_ends_the_game() -> None:
    game = from_rows(["X...", ".X..", "....", "...."], to_move=WHITE)
    assert game.legal_moves().tolist() == []
    assert game.winner() == BLACK


def test_a_wipeout_is_a_winning_move() -> None:
    game = from_rows(["......", "......", "..OX..", "......", "......", "......"], to_move=BLACK)
    assert game.winning_moves() == [pt(game, "b3")]
    game.play(pt(game, "b3"))
    assert game.is_over() and game.winner() == BLACK
    # One white disc out of reach: no move wipes White out.
    game = from_rows(["......", "......", "..OX..", "......", "......", "O....."], to_move=BLACK)
    assert game.winning_moves() == []


#: The most discs of a side whose wipeout the tactics look for (engine/core/othello.cpp).
WIPEOUT_DISCS = 16


def sparse_diagram(width: int, height: int, rng: random.Random) -> str:
    """One to three discs of the opponent among many of the side to move: wipeouts are common."""
    cells = ["X" if rng.random() < 0.3 else "." for _ in range(width * height)]
    for p in rng.sample(range(width * height), rng.choice((1, 1, 2, 3))):
        cells[p] = "O"
    return "\n".join("".join(cells[y * width:(y + 1) * width]) for y in range(height))


def wiped_out(game: Othello, color: int) -> bool:
    return game.disc_count()[0 if color == BLACK else 1] == 0


def lost_to_a_wipeout(game: Othello) -> bool:
    """Brute force of the two-ply loss: the side to move has a move (a pass counts) and every
    one lets the opponent turn over all its discs in reply. Only wipeouts of at most
    WIPEOUT_DISCS discs are looked for, and none of a side that has more than WIPEOUT_DISCS - 2
    before its move (the core's cheap bounds)."""
    mover = game.to_move
    if game.is_over() or game.disc_count()[0 if mover == BLACK else 1] + 2 > WIPEOUT_DISCS:
        return False
    for move in game.legal_moves().tolist():
        game.play(move)
        mine = game.disc_count()[0 if mover == BLACK else 1]
        wiped = False
        if mine <= WIPEOUT_DISCS:
            for reply in game.legal_moves().tolist():
                game.play(reply)
                wiped = wiped or wiped_out(game, mover)
                game.undo()
        game.undo()
        if not wiped:
            return False
    return True


@pytest.mark.parametrize("width, height", [(4, 4), (6, 6), (8, 8), (10, 6), (16, 16)])
def test_winning_moves_are_exactly_the_wipeouts_and_the_wipeouts_one_move_later(
        width: int, height: int) -> None:
    """Against brute force: every legal move played; it wins if the opponent is left without a
    disc, or if every reply lets the side to move do that (three plies). The core's bounds:
    wipeouts of at most WIPEOUT_DISCS discs, and the three-ply ones only while the opponent
    has at most twice that before the move."""
    rng = random.Random(width * 31 + height)
    found = later = 0
    for _ in range(300):
        game = Othello.from_diagram(sparse_diagram(width, height, rng), to_move=BLACK)
        if game.is_over():
            continue
        expected, white = [], game.disc_count()[1]
        for move in game.legal_moves().tolist():
            game.play(move)
            if wiped_out(game, WHITE):
                if white <= WIPEOUT_DISCS:
                    expected.append(move)
            elif white <= 2 * WIPEOUT_DISCS and lost_to_a_wipeout(game):
                expected.append(move)
                later += 1
            game.undo()
        assert game.winning_moves() == expected
        found += bool(expected)
    assert found >= 10 and later >= 10  # the set-ups do exercise both kinds


def test_a_wipeout_three_plies_ahead_is_a_winning_move() -> None:
    """The greedy player's win in a 16x16 match (game 15 of
    models/records/othello-15-gen25-vs-greedy-16x16-tactics.sgf): after Black's 49th move White plays d4, and every black move then lets
    White turn over all of Black's discs. Black's 49th move already lost to it."""
    sgf = ("ij hj gi jj gh fg gg hg gj gk ji ki fk fj gf fe ef de hk hl fi ej di fl gl ek il jl "
           "el dj hm dm em in ci bh cj bj cn bo bi dh jh fm ff kg hf if ee dd bk bl").split()
    game = Othello(16)
    for move in sgf[:49]:
        game.play(game.point(ord(move[0]) - 97, ord(move[1]) - 97))
    d4 = game.point(3, 3)
    assert d4 in game.winning_moves()
    assert game.forced_moves() is None  # two plies could not see it
    game.play(d4)
    assert game.forced_moves() == []  # lost: every black move allows the wipeout


@pytest.mark.parametrize("width, height", [(4, 4), (6, 6), (8, 8), (10, 6), (16, 16)])
def test_forced_moves_are_exactly_those_that_leave_no_wipeout(width: int, height: int) -> None:
    """Against brute force: the opponent's every reply to every move, own discs counted. None
    when no move allows a wipeout; otherwise the moves that don't (empty: the position is lost).
    Only wipeouts of at most WIPEOUT_DISCS discs are looked for (the core's cheap bound)."""
    rng = random.Random(width * 17 + height)
    threats = lost = 0
    for _ in range(200):
        # The side to move is the one with few discs here: O to move among many X.
        game = Othello.from_diagram(sparse_diagram(width, height, rng), to_move=WHITE)
        if game.is_over():
            continue
        safe, unsafe = [], []
        for move in game.legal_moves().tolist():
            game.play(move)
            wiped = False
            if game.disc_count()[1] > WIPEOUT_DISCS:
                game.undo()
                safe.append(move)
                continue
            for reply in game.legal_moves().tolist():
                game.play(reply)
                wiped = wiped or game.disc_count()[1] == 0
                game.undo()
            game.undo()
            (unsafe if wiped else safe).append(move)
        assert game.forced_moves() == (safe if unsafe else None)
        threats += bool(unsafe)
        lost += bool(unsafe) and not safe
    assert threats >= 10 and lost >= 1  # the set-ups do exercise both


# -- bad input ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name, reason", [
    ("d4", "occupied"), ("a1", "flip nothing"), ("e3", "flip nothing"), (-1, "off the board"),
    (65, "off the board"), (10**6, "off the board"), ("pass", "pass is legal only"),
])
def test_illegal_moves_leave_the_position_unchanged(name: str | int, reason: str) -> None:
    game = played(Othello(8), "d3 c3")
    move = name if isinstance(name, int) else pt(game, name)
    before = snapshot(game)
    assert not game.is_legal(move)
    with pytest.raises(IllegalMoveError, match=reason) as info:
        game.play(move)
    assert info.value.move == move
    assert snapshot(game) == before


@pytest.mark.parametrize("width, height", [
    (3, 3), (5, 5), (2, 2), (0, 0), (28, 28), (8, 7), (4, 2), (-4, -4),
])
def test_unsupported_sizes(width: int, height: int) -> None:
    with pytest.raises(UnsupportedSizeError):
        Othello(width, height)


def test_supported_sizes_and_rules() -> None:
    assert Othello(26, 4).num_points == 104
    assert new_game("othello", 6).width == 6
    with pytest.raises(UnsupportedRuleError, match="standard"):
        Othello(8, rule="anti")


def test_from_diagram_rejects_bad_diagrams() -> None:
    with pytest.raises(UnsupportedSizeError):
        from_rows(["....", "....", "...."])
    with pytest.raises(GameError, match="unknown diagram characters '#'"):
        from_rows(["....", ".#..", "....", "...."])
    with pytest.raises(GameError, match="equal length"):
        from_rows(["....", "...", "....", "...."])
    with pytest.raises(GameError, match="to_move"):
        from_rows(["...."] * 4, to_move=0)


# -- history, hashing, copies -------------------------------------------------------------------
def test_undo_restores_everything() -> None:
    game = Othello(8)
    states = [snapshot(game)]
    for name in "d3 c3 c4 e3 f2 c5".split():
        game.play(pt(game, name))
        states.append(snapshot(game))
    while game.moves:
        states.pop()
        game.undo()
        assert snapshot(game) == states[-1]
    with pytest.raises(UndoError):
        game.undo()
    assert snapshot(game) == states[0]


def test_set_up_position_has_no_history() -> None:
    game = from_rows(["....", ".OX.", ".XO.", "...."])
    assert game.moves == []
    assert game.hash == Othello(4).hash
    with pytest.raises(UndoError):
        game.undo()


def test_hash_is_equal_by_transposition_and_depends_on_side_to_move() -> None:
    a = played(Othello(8), "d3 c3 c4 e3")
    b = played(Othello(8), "c4 c3 d3 e3")
    assert a.board.tolist() == b.board.tolist() and a.hash == b.hash
    assert a.hash != played(Othello(8), "d3 c3 c4").hash
    assert Othello.from_diagram(str(a), to_move=BLACK).hash == a.hash
    assert Othello.from_diagram(str(a), to_move=WHITE).hash != a.hash


def test_copy_is_independent() -> None:
    game = played(Othello(8), "d3 c3")
    twin = game.copy()
    before = snapshot(game)
    twin.play(pt(twin, "c4"))
    assert snapshot(game) == before
    game.undo()
    assert twin.moves == [pt(twin, m) for m in ("d3", "c3", "c4")]
    twin.undo()
    twin.undo()
    assert snapshot(twin) == snapshot(game)


def test_board_is_read_only() -> None:
    game = Othello(8)
    with pytest.raises(ValueError):
        game.board[0] = BLACK


# -- features -----------------------------------------------------------------------------------
def planes(game: Othello) -> np.ndarray:
    out = np.full((game.num_nodes, game.num_features()), 7.0, dtype=np.float32)
    game.encode(out)
    return out


def expected_planes(game: Othello, own: list[int], opp: list[int], legal: list[int],
                    own_unsafe: list[int], opponent_unsafe: list[int]) -> np.ndarray:
    """The planes of a position with these discs, legal moves (the pass in the extra row) and
    unsafe discs of the side to move and of its opponent."""
    n = game.num_points
    out = np.zeros((n + 1, 7), dtype=np.float32)
    out[own, 0] = 1
    out[opp, 1] = 1
    out[:n, 2] = 1
    out[own + opp, 2] = 0
    out[legal, 3] = 1
    out[own_unsafe, 4] = 1
    out[opponent_unsafe, 5] = 1
    out[n, 6] = 1
    return out


@pytest.mark.parametrize("to_move, own, opp, legal", [
    (BLACK, [6, 9], [5, 10], [1, 4, 11, 14]),  # b1 a2 d3 c4
    (WHITE, [5, 10], [6, 9], [2, 7, 8, 13]),  # c1 d2 a3 b4
])
def test_encode_start_position(to_move: int, own: list[int], opp: list[int],
                               legal: list[int]) -> None:
    game = Othello.from_diagram(str(Othello(4)), to_move=to_move)  # white b2 c3, black c2 b3
    assert game.feature_names == ("own", "opponent", "empty", "legal", "own_unsafe",
                                  "opponent_unsafe", "extra")
    # Each of the four discs lies between the other colour and an empty point: all are unsafe.
    np.testing.assert_array_equal(planes(game), expected_planes(game, own, opp, legal, own, opp))


def test_encode_after_a_move() -> None:
    # Black's b1 flipped b2; White's c3 can take back b2 (a1), c2 (c1) or b3 (a3), and Black can
    # flip c3 back from d3 (b3 c3 d3), but Black's b1 on the top edge lies on no line that flips.
    game = played(Othello(4), "b1")
    expected = expected_planes(game, own=[10], opp=[1, 5, 6, 9], legal=[0, 2, 8],
                               own_unsafe=[10], opponent_unsafe=[5, 6, 9])
    np.testing.assert_array_equal(planes(game), expected)


def test_encode_forced_pass_marks_the_extra_node() -> None:
    game = played(Othello(4), "b1 c1 d3 a1")
    out = planes(game)
    np.testing.assert_array_equal(out[16], [0, 0, 0, 1, 0, 0, 1])
    assert out[:16, 3].sum() == 0
    assert out[:16, 0].sum() == 5 and out[:16, 1].sum() == 3


#: Black's discs are unsafe where a run of them has White on one end and an empty point on the
#: other: d1 (c1 d1 e1) and c4 (b3 c4 d5). White's b1 c1 (a1 .. d1) and d2 (d1 d2 d3) likewise;
#: d5 lies between two Black discs (c4 d5 e6), f2 and e6 between the edge and an empty point.
#: In the bit string f2 a3 b3 and e2 f2 a3 are consecutive, but no line: a3 and f2 stay safe.
UNSAFE_POSITION = [
    ".OOX..",
    "...O.O",
    "X.....",
    "..X...",
    "...O..",
    "....X.",
]


@pytest.mark.parametrize("to_move", [BLACK, WHITE])
def test_unsafe_planes_of_a_known_position(to_move: int) -> None:
    game = from_rows(UNSAFE_POSITION, to_move=to_move)

    def points(names: str) -> list[int]:
        return sorted(pt(game, name) for name in names.split())

    black, white = points("d1 a3 c4 e6"), points("b1 c1 d2 f2 d5")
    black_unsafe, white_unsafe = points("d1 c4"), points("b1 c1 d2")
    if to_move == BLACK:
        expected = expected_planes(game, black, white, points("a1 d3"), black_unsafe,
                                   white_unsafe)
        unsafe = (mask_of(black_unsafe), mask_of(white_unsafe))
    else:
        expected = expected_planes(game, white, black, points("e1 b3"), white_unsafe,
                                   black_unsafe)
        unsafe = (mask_of(white_unsafe), mask_of(black_unsafe))
    assert game.unsafe_discs() == unsafe
    np.testing.assert_array_equal(planes(game), expected)


def unsafe_by_definition(game: Othello) -> tuple[list[int], list[int]]:
    """(own_unsafe, opponent_unsafe) the slow way: the union of the flips of every placement of
    the opponent, and of the side to move, walked ray by ray by the naive rules."""
    ref = NaiveOthello(game.width, game.height)
    ref.cells = game.board.reshape(game.height, game.width).tolist()

    def exposed_by(color: int) -> list[int]:
        return sorted({p for move in ref.placements(color) for p in ref.flips(move, color)})

    return exposed_by(-game.to_move), exposed_by(game.to_move)


@pytest.mark.parametrize("width, height, seed, games", [
    (4, 4, 11, 60), (6, 6, 12, 20), (8, 8, 13, 8), (10, 10, 14, 3), (8, 4, 15, 20),
    (4, 10, 16, 10), (12, 6, 17, 4),
])
def test_encode_matches_its_definition_over_random_games(width: int, height: int, seed: int,
                                                         games: int) -> None:
    rng = random.Random(seed)
    for _ in range(games):
        game = Othello(width, height)
        while True:
            own = np.flatnonzero(game.board == game.to_move).tolist()
            opp = np.flatnonzero(game.board == -game.to_move).tolist()
            expected = expected_planes(game, own, opp, game.legal_moves().tolist(),
                                       *unsafe_by_definition(game))
            np.testing.assert_array_equal(planes(game), expected)
            if game.is_over():
                break
            game.play(rng.choice(game.legal_moves().tolist()))


# -- moves out of turn (GUIs, GTP) ----------------------------------------------------------------
def test_a_disc_out_of_turn_must_flip_and_undo_restores_the_turn() -> None:
    game = Othello(8)
    game.play(game.legal_moves()[0])  # Black
    before = (game.board.tolist(), game.hash, game.to_move, game.legal_moves().tolist())
    black = game.copy()
    black.set_to_move(BLACK)
    move = int(black.legal_moves()[0])
    game.play(move, BLACK)
    assert game.colors() == [BLACK, BLACK] and game.to_move == WHITE
    game.undo()
    assert (game.board.tolist(), game.hash, game.to_move, game.legal_moves().tolist()) == before
    empty = next(p for p in range(64) if game.board[p] == 0 and not black.flips(p))
    with pytest.raises(IllegalMoveError):
        game.play(empty, BLACK)  # flips nothing
    assert (game.board.tolist(), game.hash, game.to_move, game.legal_moves().tolist()) == before
