"""Go rules: hand-made positions with exact expectations, and a brute-force reference implementation
that the fast one must agree with move for move on random games (legal moves, captures, superko,
liberties, hashes, features, undo)."""
from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pytest

from saz.engine.games import (
    BLACK,
    DRAW,
    EMPTY,
    WHITE,
    GameError,
    IllegalMoveError,
    UndoError,
    UnsupportedRuleError,
    UnsupportedSizeError,
    new_game,
)
from saz.engine.games.go import Go, GoRules, fixed_handicap_points
from saz.engine.games.zobrist import zobrist_keys
from saz.engine.perft import perft

# -- the reference: obviously correct, recomputes everything from scratch ----------------------
#: The moves one ladder read may play (go.cpp's kLadderBudget): a read that runs out calls the
#: chain out.
LADDER_BUDGET = 1000
#: The moves a ladder must run past the chaser's atari for the search to leave that atari out
#: when the chain gets away (go.cpp's kLadderRun).
LADDER_RUN = 15


@dataclass
class Read:
    """One ladder read's state: the moves it may still play, and the most stones any position it
    reached has had on top of where it started (how far the ladder ran)."""

    start: int
    budget: int = LADDER_BUDGET
    reach: int = 0


class Reference:
    """Go from first principles: the board is a list, chains are flood-filled on every question,
    superko compares the whole board with every earlier one. Slow, and simple enough to trust."""

    def __init__(self, width: int, height: int, komi: float = 7.5,
                 board: list[int] | None = None, to_move: int = BLACK) -> None:
        self.width, self.height, self.komi = width, height, komi
        self.num_points = width * height
        self.board = board or [EMPTY] * self.num_points
        self.to_move = to_move
        self.history = [tuple(self.board)]
        self.passes = 0
        self.captures = {BLACK: 0, WHITE: 0}

    def neighbours(self, p: int) -> Iterator[int]:
        x, y = p % self.width, p // self.width
        for nx, ny in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if 0 <= nx < self.width and 0 <= ny < self.height:
                yield ny * self.width + nx

    def chain(self, board: list[int], p: int) -> tuple[set[int], set[int]]:
        """The stones of the chain on p and its liberties."""
        stones, liberties, todo = {p}, set(), [p]
        while todo:
            for q in self.neighbours(todo.pop()):
                if board[q] == EMPTY:
                    liberties.add(q)
                elif board[q] == board[p] and q not in stones:
                    stones.add(q)
                    todo.append(q)
        return stones, liberties

    def stone_on(self, p: int) -> tuple[list[int] | None, str, int]:
        """(board after a stone on p, or None; why not; stones captured), superko aside."""
        if self.board[p] != EMPTY:
            return None, "occupied", 0
        board = self.board[:]
        board[p] = self.to_move
        captured = 0
        for q in self.neighbours(p):
            if board[q] == -self.to_move:
                stones, liberties = self.chain(board, q)
                if not liberties:
                    captured += len(stones)
                    for s in stones:
                        board[s] = EMPTY
        if not self.chain(board, p)[1]:
            return None, "suicide", 0
        return board, "", captured

    def after(self, p: int) -> tuple[list[int] | None, str, int]:
        """`stone_on`, with positional superko: no board may repeat an earlier one."""
        board, why, captured = self.stone_on(p)
        if board is not None and tuple(board) in self.history:
            return None, "superko", 0
        return board, why, captured

    def legal_moves(self) -> list[int]:
        if self.passes >= 2:
            return []
        points = [p for p in range(self.num_points) if self.after(p)[0] is not None]
        return [*points, self.num_points]

    def own_eye(self, p: int) -> bool:
        """An empty point whose neighbours are all the mover's stones, with no opponent stone
        on its diagonals at the edge and at most one inside."""
        me = self.to_move
        if self.board[p] != EMPTY or any(self.board[q] != me for q in self.neighbours(p)):
            return False
        x, y = p % self.width, p // self.width
        diagonals = [(x + dx, y + dy) for dx in (-1, 1) for dy in (-1, 1)]
        inside = [(u, v) for u, v in diagonals if 0 <= u < self.width and 0 <= v < self.height]
        theirs = sum(self.board[v * self.width + u] == -me for u, v in inside)
        return theirs <= (1 if len(inside) == 4 else 0)

    def search_moves(self) -> list[int]:
        """The legal moves but own eyes, the extensions that run into a working ladder and the
        ataris that start a broken one (the ladder moves stay when nothing else but the pass is
        legal)."""
        moves = self.legal_moves()
        points = {m for m in moves if m != self.num_points}
        unsound = {p for p in points if self.runs_into_ladder(p) or self.starts_broken_ladder(p)}
        if unsound == points:
            unsound = set()
        return [m for m in moves
                if m == self.num_points or not (self.own_eye(m) or m in unsound)]

    # -- ladders, read as the core reads them (go.cpp: ladder_takes, ladder_escapes) ---------------
    def ladder_step(self, p: int, read: Read) -> Reference | None:
        """The position after the side to move plays `p` (one move of the read's budget spent),
        or None where the rules refuse it."""
        if self.after(p)[0] is None:
            return None
        child = self.copy()
        child.play(p)
        read.budget -= 1
        read.reach = max(read.reach, len(child.history) - read.start)
        return child

    def ladder_takes(self, stone: int, read: Read) -> bool:
        """The attacker to move: whether its ataris take the chain on `stone`."""
        liberties = self.chain(self.board, stone)[1]
        if len(liberties) <= 1:
            return True
        if len(liberties) >= 3 or read.budget <= 0:
            return False
        for p in sorted(liberties):
            child = self.ladder_step(p, read)
            if child is not None and not child.ladder_escapes(stone, read):
                return True
        return False

    def ladder_escapes(self, stone: int, read: Read) -> bool:
        """The chain on `stone` to move, in atari: whether running or capturing an attacker's
        chain in atari beside it gets it out."""
        stones, liberties = self.chain(self.board, stone)
        if len(liberties) >= 2 or read.budget <= 0:
            return True
        moves = set(liberties)
        for s in stones:
            for q in self.neighbours(s):
                if self.board[q] == -self.board[stone]:
                    theirs = self.chain(self.board, q)[1]
                    if len(theirs) == 1:
                        moves |= theirs
        for p in sorted(moves):
            child = self.ladder_step(p, read)
            if child is not None and not child.ladder_takes(stone, read):
                return True
        return False

    def as_mover(self, color: int) -> Reference:
        twin = self.copy()
        twin.to_move = color
        return twin

    def read(self) -> Read:
        """A new ladder read from this position."""
        return Read(start=len(self.history))

    def ladder_captured(self, stone: int) -> bool:
        """In atari: the chain's side first; two liberties: the attacker first; more: never."""
        color, liberties = self.board[stone], self.chain(self.board, stone)[1]
        if len(liberties) == 1:
            return not self.as_mover(color).ladder_escapes(stone, self.read())
        return len(liberties) == 2 and self.as_mover(-color).ladder_takes(stone, self.read())

    def ladder_starts(self, stone: int) -> set[int]:
        """The attacker's ataris on the two-liberty chain on `stone` that take it."""
        attacker = self.as_mover(-self.board[stone])
        starts = set()
        for p in sorted(self.chain(self.board, stone)[1]):
            read = self.read()
            child = attacker.ladder_step(p, read)
            if child is not None and not child.ladder_escapes(stone, read):
                starts.add(p)
        return starts

    def runs_into_ladder(self, p: int) -> bool:
        """Whether `p` extends a chain of ours in atari, captures nothing, and a ladder takes the
        chain it makes."""
        me = self.to_move
        if not any(self.board[q] == me and len(self.chain(self.board, q)[1]) == 1
                   for q in self.neighbours(p)):
            return False
        board, _, captured = self.after(p)
        if board is None or captured:
            return False
        child = self.copy()
        child.play(p)
        return child.ladder_takes(p, self.read())

    def starts_broken_ladder(self, p: int) -> bool:
        """Whether `p` is only an atari on an opponent chain with two liberties (it captures
        nothing, ataris no other chain, joins no chain of ours in atari) that runs LADDER_RUN
        moves or more down the ladder and gets out, read within the budget."""
        me = self.to_move
        if any(self.board[q] == me and len(self.chain(self.board, q)[1]) == 1
               for q in self.neighbours(p)):
            return False
        chased = {min(self.chain(self.board, q)[0]) for q in self.neighbours(p)
                  if self.board[q] == -me and len(self.chain(self.board, q)[1]) == 2}
        board, _, captured = self.after(p)
        if board is None or captured or len(chased) != 1:
            return False
        child = self.copy()
        child.play(p)
        read = child.read()
        return (child.ladder_escapes(chased.pop(), read) and read.budget > 0
                and read.reach >= LADDER_RUN)

    def play(self, move: int) -> None:
        if move == self.num_points:
            self.passes += 1
        else:
            board, why, captured = self.after(move)
            assert board is not None, why
            self.board = board
            self.history.append(tuple(board))
            self.captures[self.to_move] += captured
            self.passes = 0
        self.to_move = -self.to_move

    def area(self, color: int) -> int:
        count = 0
        for p in range(self.num_points):
            if self.board[p] == color:
                count += 1
            elif self.board[p] == EMPTY:
                region, todo, touches = {p}, [p], set()
                while todo:
                    for q in self.neighbours(todo.pop()):
                        if self.board[q] == EMPTY and q not in region:
                            region.add(q)
                            todo.append(q)
                        elif self.board[q] != EMPTY:
                            touches.add(self.board[q])
                count += touches == {color}
        return count

    def copy(self) -> Reference:
        twin = Reference(self.width, self.height, self.komi)
        twin.board, twin.to_move, twin.passes = self.board[:], self.to_move, self.passes
        twin.history, twin.captures = self.history[:], dict(self.captures)
        return twin

    def hash(self) -> int:
        black, white, white_to_move = zobrist_keys(self.num_points)
        h = white_to_move if self.to_move == WHITE else 0
        for p, c in enumerate(self.board):
            h ^= black[p] if c == BLACK else white[p] if c == WHITE else 0
        return h


def reference_perft(ref: Reference, depth: int) -> int:
    moves = ref.legal_moves()
    if depth == 1:
        return len(moves)
    total = 0
    for move in moves:
        child = ref.copy()
        child.play(move)
        total += reference_perft(child, depth - 1)
    return total


def assert_agrees(game: Go, ref: Reference) -> None:
    """Every observable of `game` equals what the reference computes from scratch."""
    n = ref.num_points
    assert game.board.tolist() == ref.board
    assert game.to_move == ref.to_move
    assert game.hash == ref.hash()
    assert game.captures(BLACK) == ref.captures[BLACK]
    assert game.captures(WHITE) == ref.captures[WHITE]
    legal = ref.legal_moves()
    assert game.legal_moves().tolist() == legal
    assert game.search_moves().tolist() == ref.search_moves()
    # is_legal is what play accepts: after two passes, the moves of the game played on.
    playable = game.continued().legal_moves().tolist() if game.is_over() else legal
    assert [p for p in range(-2, n + 3) if game.is_legal(p)] == playable
    liberties = [len(ref.chain(ref.board, p)[1]) if ref.board[p] else 0 for p in range(n)]
    assert [game.liberties(p) for p in range(n)] == liberties
    features = np.full((n + 1, Go.num_features()), np.nan, dtype=np.float32)
    game.encode(features)
    me, board = ref.to_move, np.array(ref.board)
    libs = np.array(liberties)
    expected = np.zeros((n + 1, 10), dtype=np.float32)
    expected[:n, 0] = board == me
    expected[:n, 1] = board == -me
    expected[:n, 2] = board == EMPTY
    expected[legal, 3] = 1
    expected[:n, 4] = (board == me) & (libs == 1)
    expected[:n, 5] = (board == -me) & (libs == 1)
    expected[:n, 6] = (board == me) & (libs == 2)
    expected[:n, 7] = (board == -me) & (libs == 2)
    expected[n, 8] = 1
    expected[n, 9] = -me * ref.komi / n
    np.testing.assert_array_equal(features[:, :10], expected)  # the line planes: their own test
    # Features version 3: the ladder planes, from the reference's own ladder reader.
    ladders = np.zeros((n + 1, 3), dtype=np.float32)
    for p in range(n):
        if board[p] != EMPTY and libs[p] <= 2 and ref.ladder_captured(p):
            ladders[p, 0 if board[p] == me else 1] = 1
        if board[p] == -me and libs[p] == 2:
            ladders[list(ref.ladder_starts(p)), 2] = 1
    first = Go.feature_names.index("own_ladder")
    np.testing.assert_array_equal(features[:, first:first + 3], ladders)


# -- helpers ------------------------------------------------------------------------------------


def snapshot(game: Go) -> tuple:
    """Everything a failed move must leave as it was."""
    return (game.board.tolist(), game.hash, list(game.moves), game.to_move,
            game.legal_moves().tolist(), game.captures(BLACK), game.captures(WHITE))


def gtp_points(vertices: str, size: int) -> list[int]:
    """GTP vertices (column letters without I, row 1 at the bottom) as point indices."""
    columns = "ABCDEFGHJKLMNOPQRSTUVWXYZ"
    return [(size - int(v[1:])) * size + columns.index(v[0]) for v in vertices.split()]


def lines(text: str) -> str:
    """A diagram normalised to the format of `str(game)`."""
    return "\n".join(" ".join(row.split()) for row in text.strip().splitlines())


# -- construction and bad input -----------------------------------------------------------------


def test_new_game_is_empty_with_black_to_move() -> None:
    game = new_game("go", 9)
    assert isinstance(game, Go)
    assert (game.width, game.height, game.pass_move) == (9, 9, 81)
    assert game.to_move == BLACK and game.hash == 0 and game.moves == []
    assert game.legal_moves().tolist() == list(range(82))
    assert game.rules == GoRules(komi=7.5, rule="tromp-taylor")


@pytest.mark.parametrize("size", [(0, 0), (1, 1), (26, 26), (9, 26), (26, 9), (9, 1), (2.5, 3)])
def test_unsupported_sizes(size: tuple) -> None:
    with pytest.raises(UnsupportedSizeError, match=r"2\.\.25"):
        Go(*size)


def test_rectangular_boards_are_supported() -> None:
    game = Go(7, 4)
    assert (game.width, game.height, game.num_points) == (7, 4, 28)
    game.play(game.point(6, 3))
    assert game.board[27] == BLACK


@pytest.mark.parametrize("komi", [float("nan"), float("inf"), -float("inf"), 7.3, "7.5", None])
def test_bad_komi(komi: object) -> None:
    with pytest.raises(UnsupportedRuleError, match="komi"):
        Go(9, komi=komi)


def test_bad_rule() -> None:
    with pytest.raises(UnsupportedRuleError, match="japanese"):
        Go(9, rule="japanese")
    assert Go.RULES == ("tromp-taylor",)


@pytest.mark.parametrize("move", [-1, -82, 82, 83, 10**6])
def test_off_board_moves_are_rejected_and_change_nothing(move: int) -> None:
    game = Go(9)
    game.play(40)
    before = snapshot(game)
    assert not game.is_legal(move)
    with pytest.raises(IllegalMoveError, match="off the board"):
        game.play(move)
    assert snapshot(game) == before


def test_occupied_point_is_rejected_and_changes_nothing() -> None:
    game = Go(9)
    game.play(40)
    before = snapshot(game)
    assert not game.is_legal(40)
    with pytest.raises(IllegalMoveError, match="occupied") as info:
        game.play(40)
    assert info.value.move == 40
    assert snapshot(game) == before


def test_non_integer_moves() -> None:
    game = Go(5)
    assert not game.is_legal(2.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        game.play(2.0)  # type: ignore[arg-type]
    game.play(np.int64(12))  # numpy integers, as legal_moves() returns them, are fine
    assert game.board[12] == BLACK


def test_undo_with_nothing_to_undo() -> None:
    with pytest.raises(UndoError):
        Go(9).undo()


# -- captures, suicide, ko ----------------------------------------------------------------------


def test_single_stone_capture() -> None:
    game = Go.from_diagram("""
        . . . . .
        . . X . .
        . X O . .
        . . X . .
        . . . . .""")
    assert game.liberties(game.point(2, 2)) == 1
    game.play(game.point(3, 2))
    assert str(game) == lines("""
        . . . . .
        . . X . .
        . X . X .
        . . X . .
        . . . . .""")
    assert game.captures(BLACK) == 1 and game.captures(WHITE) == 0


def test_multi_stone_capture() -> None:
    game = Go.from_diagram("""
        . X X . .
        X O O . .
        . X X . .
        . . . . .""")
    game.play(game.point(3, 1))
    assert str(game) == lines("""
        . X X . .
        X . . X .
        . X X . .
        . . . . .""")
    assert game.captures(BLACK) == 2
    # The freed points are liberties of the capturing chains again.
    assert game.liberties(game.point(3, 1)) == 4
    assert game.liberties(game.point(1, 0)) == 4


def test_capture_in_the_corner_and_on_the_edge() -> None:
    game = Go.from_diagram("""
        O X . X O X
        . . . . . .
        . . . . . .""")
    game.play(game.point(0, 1))  # corner: the white stone's last liberty
    assert game.board[game.point(0, 0)] == EMPTY
    game.play(game.point(5, 2))  # white elsewhere
    game.play(game.point(4, 1))  # edge
    assert game.board[game.point(4, 0)] == EMPTY
    assert game.captures(BLACK) == 2


def test_snapback() -> None:
    game = Go.from_diagram("""
        . . X O .
        X X X O .
        O O O O .
        . . . . .""", to_move=WHITE)
    throw_in, corner = game.point(1, 0), game.point(0, 0)
    game.play(throw_in)  # white sacrifices one stone; black's chain is now in atari
    game.play(corner)  # black captures it, leaving the chain a single liberty: the throw-in point
    assert game.captures(BLACK) == 1 and game.liberties(corner) == 1
    game.play(throw_in)  # not ko: it captures five stones
    assert str(game) == lines("""
        . O . O .
        . . . O .
        O O O O .
        . . . . .""")
    assert game.captures(WHITE) == 5


def test_urgent_moves_are_the_captures_of_chains_of_three_stones_or_more_in_atari() -> None:
    """Black to move: the capture of White's three stones in atari (at (3, 2)) is urgent; that
    of its two stones in atari (at (0, 3)) is not, nor is saving Black's own stone in atari.
    White to move, nothing is: Black's one chain in atari is a single stone."""
    diagram = """
        . X X X . . .
        X O O O X . .
        . X X . . . .
        . O X . . . .
        X O X . . . .
        . X . . . O O
        . . . . . . X"""
    game = Go.from_diagram(diagram, to_move=BLACK)
    at = game.point
    assert [game.liberties(at(x, y)) for x, y in ((1, 1), (1, 3), (6, 6))] == [1, 1, 1]
    assert game.urgent_moves().tolist() == [at(3, 2)]
    assert set(game.urgent_moves().tolist()) <= set(game.search_moves().tolist())
    assert Go.from_diagram(diagram, to_move=WHITE).urgent_moves().tolist() == []


def test_search_moves_leave_out_filling_own_eyes_only() -> None:
    game = Go.from_diagram("""
        . X . X .
        X X X X X
        . X . X O
        X X X X .
        . . . . .""", to_move=BLACK)
    at = game.point
    eyes = {at(0, 0), at(2, 0), at(4, 0), at(0, 2), at(2, 2)}  # corners, edges, inside
    legal = set(game.legal_moves().tolist())
    assert set(game.search_moves().tolist()) == legal - eyes
    assert game.pass_move in game.search_moves()
    for eye in eyes:  # still legal: the rules take the move, the search does not try it
        assert game.is_legal(eye)
    # White's search keeps every legal move but one: none of these points is White's eye, and
    # only extending its stone in atari (at(4, 3), to one liberty) runs into a ladder.
    white = Go.from_diagram(str(game), to_move=WHITE)
    assert set(white.search_moves().tolist()) == set(white.legal_moves().tolist()) - {at(4, 3)}


def test_false_eyes_are_searched() -> None:
    edge = Go.from_diagram("""
        X X . X X
        . O X X .
        . . . . .""", to_move=BLACK)
    assert edge.point(2, 0) in edge.search_moves()  # a white diagonal at the edge
    false = Go.from_diagram("""
        . . . . .
        . O X . .
        . X . X .
        . . X O .
        . . . . .""", to_move=BLACK)
    assert false.point(2, 2) in false.search_moves()  # two white diagonals inside
    real = Go.from_diagram("""
        . . . . .
        . O X . .
        . X . X .
        . . X . .
        . . . . .""", to_move=BLACK)
    assert real.point(2, 2) not in real.search_moves()  # one inside: still an eye


def test_a_search_with_only_eyes_left_passes() -> None:
    game = Go.from_diagram("""
        . X . X
        X X X X
        X . X .
        X X X X""", to_move=BLACK)
    assert game.search_moves().tolist() == [game.pass_move]
    assert len(game.legal_moves()) == 5


def test_random_games_with_eyes_agree_with_the_reference() -> None:
    """Random games that never fill their own eyes (as the search plays) build eyes that the
    reference's test must find too."""
    pruned = 0
    for seed in range(6):
        rng = random.Random(seed)
        game = Go(6)
        ref = Reference(6, 6, game.rules.komi)
        for _ in range(90):
            assert_agrees(game, ref)
            moves = ref.search_moves()
            pruned += len(ref.legal_moves()) - len(moves)
            if not moves:
                break
            move = rng.choice(moves)
            game.play(move)
            ref.play(move)
    assert pruned > 20


def test_single_stone_suicide_is_illegal() -> None:
    game = Go.from_diagram("""
        . O .
        O . .
        . . .""")
    before = snapshot(game)
    assert not game.is_legal(0) and 0 not in game.legal_moves()
    with pytest.raises(IllegalMoveError, match="suicide"):
        game.play(0)
    assert snapshot(game) == before
    game.play(game.pass_move)
    assert game.is_legal(0)  # white may fill its own eye


def test_multi_stone_suicide_is_illegal() -> None:
    game = Go.from_diagram("""
        . X O .
        X X O .
        O O O .""")
    before = snapshot(game)
    assert not game.is_legal(0)
    with pytest.raises(IllegalMoveError, match="suicide"):
        game.play(0)
    assert snapshot(game) == before
    game.play(game.pass_move)
    game.play(0)  # for white the same point captures the three black stones
    assert game.captures(WHITE) == 3


def test_a_move_without_liberties_that_captures_is_legal() -> None:
    game = Go.from_diagram("""
        . O X .
        O X . .
        X . . .
        . . . .""")
    assert game.is_legal(0) and 0 in game.legal_moves()
    game.play(0)
    assert str(game) == lines("""
        X . X .
        . X . .
        X . . .
        . . . .""")
    assert game.captures(BLACK) == 2 and game.liberties(0) == 2


def test_simple_ko() -> None:
    game = Go.from_diagram("""
        . X O . .
        X O . O .
        . X O . .
        . . . . .
        . . . . .""")
    start = game.board.tolist()
    take, retake = game.point(2, 1), game.point(1, 1)
    game.play(take)
    assert game.captures(BLACK) == 1
    assert not game.is_legal(retake) and retake not in game.legal_moves()
    with pytest.raises(IllegalMoveError, match="superko"):
        game.play(retake)
    game.play(game.point(4, 4))  # a ko threat ...
    game.play(game.point(4, 3))  # ... answered
    game.play(retake)  # now the whole board differs from every earlier one
    expected = start[:]
    expected[game.point(4, 4)], expected[game.point(4, 3)] = WHITE, BLACK
    assert game.board.tolist() == expected


def test_positional_superko_beyond_simple_ko() -> None:
    """On 2x2 (points 0 1 / 2 3): B0 W1 B2 W3 (captures 0 and 2) B0 W2 (captures 0). Black at 0
    would capture the three white stones and recreate the board after move 1 (a lone black stone
    on 0), five plies back: only positional superko forbids it."""
    game = Go(2)
    for move in (0, 1, 2, 3, 0, 2):
        game.play(move)
    assert str(game) == lines("""
        . O
        O O""")
    assert game.liberties(1) == 1  # black at 0 would capture, so it is not suicide
    assert not game.is_legal(0) and game.legal_moves().tolist() == [4]
    before = snapshot(game)
    with pytest.raises(IllegalMoveError, match="superko"):
        game.play(0)
    assert snapshot(game) == before
    # The same board without that history: the move is legal and leaves the lone black stone.
    fresh = Go.from_diagram(str(game))
    fresh.play(0)
    assert str(fresh) == lines("""
        X .
        . .""")


def test_passes_never_change_the_position_for_superko() -> None:
    game = Go.from_diagram("""
        . X O . .
        X O . O .
        . X O . .
        . . . . .""")
    game.play(game.point(2, 1))  # black takes the ko
    game.play(game.pass_move)
    game.play(game.pass_move - 1)  # black plays elsewhere
    assert game.is_legal(game.point(1, 1))  # the retake no longer repeats a position


# -- end of the game and scoring ----------------------------------------------------------------

SCORED = """
    . X O . .
    . X O . X
    . X O . .
    . X . O .
    . X O . ."""


def test_two_passes_end_the_game_but_a_controller_may_play_on() -> None:
    """GNU Go, KataGo, Sabaki and GoGui let a game go on after two passes (a dispute, KGS's
    cleanup): the rules end it for the search and the referee, not for the controller."""
    game = Go(5)
    game.play(12)
    game.play(game.pass_move)
    assert not game.is_over() and game.winner() is None
    assert game.legal_moves().tolist() == [p for p in range(26) if p != 12]
    game.play(game.pass_move)
    assert game.is_over() and game.winner() == BLACK  # 25 points against komi
    assert game.legal_moves().tolist() == []  # nothing to choose from: the game has ended
    assert game.is_legal(0) and not game.is_legal(12)  # what play accepts, should it go on
    before = snapshot(game)
    with pytest.raises(IllegalMoveError, match="occupied"):
        game.play(12)
    assert snapshot(game) == before
    game.play(0)  # White plays on
    assert not game.is_over() and game.to_move == BLACK
    assert game.legal_moves().tolist() == [p for p in range(26) if p not in (0, 12)]
    game.undo()
    assert snapshot(game) == before and game.is_over()
    game.undo()
    assert not game.is_over() and game.is_legal(0)


def test_continued_copy_of_a_finished_game_plays_on() -> None:
    game = Go(5)
    assert game.continued() is None  # nothing has ended
    game.play(12)
    game.play(game.pass_move)
    game.play(game.pass_move)
    resumed = game.continued()
    assert resumed is not None and not resumed.is_over()
    assert resumed.to_move == WHITE and resumed.hash == game.hash
    assert len(resumed.legal_moves()) == 25
    assert game.is_over()  # the original is untouched


def test_a_move_out_of_turn_is_played_by_its_colour_and_undone_exactly() -> None:
    game = Go(5)
    game.play(12)  # Black
    before = snapshot(game), game.hash, game.to_move
    game.play(13, BLACK)  # Black again, with White to move: no pass is invented
    assert game.moves == [12, 13] and game.board[13] == BLACK and game.to_move == WHITE
    assert game.captures(BLACK) == 0
    game.undo()
    assert (snapshot(game), game.hash, game.to_move) == before


def test_an_out_of_turn_move_that_is_illegal_changes_nothing() -> None:
    game = Go.from_diagram("""
    . X . . .
    X . . . .
    . . . . .
    . . . . .
    . . . . .""", to_move=BLACK)
    before = snapshot(game), game.hash, game.to_move
    with pytest.raises(IllegalMoveError, match="suicide"):
        game.play(0, WHITE)
    assert (snapshot(game), game.hash, game.to_move) == before


def test_set_to_move_is_no_move_and_undo_returns_to_the_position_before_the_last_one() -> None:
    game = Go(5)
    game.play(12)
    after_black = game.hash
    game.set_to_move(BLACK)
    assert game.to_move == BLACK and game.moves == [12] and game.hash != after_black
    assert 13 in game.legal_moves().tolist()
    game.undo()
    assert game.to_move == BLACK and game.hash == Go(5).hash and not game.moves
    with pytest.raises(GameError):
        game.set_to_move(0)


def test_new_komi_keeps_handicap_stones_and_every_move() -> None:
    """GoGui sends komi before new moves and Sabaki whenever the user edits it: the position
    stays as it is (it was once rebuilt from the moves alone, losing the handicap)."""
    game = Go(9)
    game.place_free_handicap([game.point(2, 6), game.point(6, 2)])
    game.play(game.point(4, 4))  # White
    game.play(game.point(3, 4))  # Black
    changed = game.with_rules(komi=0.5)
    assert changed.rules.komi == 0.5 and game.rules.komi == 7.5
    assert snapshot(changed) == snapshot(game) and changed.to_move == WHITE
    assert changed.hash == game.hash
    changed.undo()
    changed.undo()
    with pytest.raises(UndoError):
        changed.undo()  # the handicap is the start of the game
    assert changed.board[game.point(2, 6)] == BLACK
    with pytest.raises(UnsupportedRuleError):
        game.with_rules(komi=float("nan"))
    with pytest.raises(UnsupportedRuleError):
        game.with_rules(overline=True)


def test_area_scoring() -> None:
    """Black: 6 stones + the 5 points of the left column = 11. White: 5 stones; the point below
    the white wall touches black and white, and so does the right-hand region (the lone black
    stone in it counts as alive under Tromp-Taylor): 5. Score 11 - 5 - 7.5."""
    game = Go.from_diagram(SCORED)
    assert (game.area(BLACK), game.area(WHITE)) == (11, 5)
    assert game.score() == -1.5


@pytest.mark.parametrize("komi,winner", [(7.5, WHITE), (6, DRAW), (5.5, BLACK), (-0.5, BLACK)])
def test_winner_from_the_final_score(komi: float, winner: int) -> None:
    game = Go.from_diagram(SCORED, komi=komi)
    game.play(game.pass_move)
    assert game.winner() is None
    game.play(game.pass_move)
    assert game.winner() == winner
    assert game.outcome_for(BLACK) == {BLACK: 1.0, WHITE: -1.0, DRAW: 0.0}[winner]


def test_empty_board_scores_minus_komi() -> None:
    assert Go(9, komi=6.5).score() == -6.5


@pytest.mark.parametrize("komi,first,winning", [
    (7.5, BLACK, True),  # white leads by 1.5 and may end the game by passing
    (7.5, WHITE, False),  # black trails: its pass would end the game lost
    (5.5, WHITE, True),  # black leads by 0.5
    (6, WHITE, False),  # a draw is no win
])
def test_winning_moves_is_the_final_pass_when_it_wins(komi: float, first: int,
                                                      winning: bool) -> None:
    game = Go.from_diagram(SCORED, komi=komi, to_move=first)
    assert game.winning_moves() == []  # nobody has passed: a pass would not end the game
    game.play(game.pass_move)
    assert game.winning_moves() == ([game.pass_move] if winning else [])
    game.play(game.pass_move)
    assert game.winning_moves() == []  # the game is over
    assert (game.winner() == -first) == winning


# -- handicap -----------------------------------------------------------------------------------

HANDICAP_19 = {
    2: "D4 Q16", 3: "D4 Q16 D16", 4: "D4 Q16 D16 Q4", 5: "D4 Q16 D16 Q4 K10",
    6: "D4 Q16 D16 Q4 D10 Q10", 7: "D4 Q16 D16 Q4 D10 Q10 K10",
    8: "D4 Q16 D16 Q4 D10 Q10 K4 K16", 9: "D4 Q16 D16 Q4 D10 Q10 K4 K16 K10",
}
HANDICAP_13 = {
    2: "D4 K10", 3: "D4 K10 D10", 4: "D4 K10 D10 K4", 5: "D4 K10 D10 K4 G7",
    6: "D4 K10 D10 K4 D7 K7", 7: "D4 K10 D10 K4 D7 K7 G7",
    8: "D4 K10 D10 K4 D7 K7 G4 G10", 9: "D4 K10 D10 K4 D7 K7 G4 G10 G7",
}
HANDICAP_9 = {
    2: "C3 G7", 3: "C3 G7 C7", 4: "C3 G7 C7 G3", 5: "C3 G7 C7 G3 E5",
    6: "C3 G7 C7 G3 C5 G5", 7: "C3 G7 C7 G3 C5 G5 E5",
    8: "C3 G7 C7 G3 C5 G5 E3 E7", 9: "C3 G7 C7 G3 C5 G5 E3 E7 E5",
}


@pytest.mark.parametrize("size,table", [(19, HANDICAP_19), (13, HANDICAP_13), (9, HANDICAP_9)])
def test_fixed_handicap_follows_the_gtp_table(size: int, table: dict[int, str]) -> None:
    for stones, vertices in table.items():
        game = Go(size)
        points = game.place_fixed_handicap(stones)
        assert points == gtp_points(vertices, size)
        assert sorted(np.flatnonzero(game.board == BLACK).tolist()) == sorted(points)
        assert game.to_move == WHITE and game.moves == []


@pytest.mark.parametrize("size,stones", [(9, 1), (9, 10), (19, 0), (8, 5), (10, 5), (7, 5),
                                         (6, 2), (5, 4)])
def test_fixed_handicap_rejects_counts_the_size_does_not_allow(size: int, stones: int) -> None:
    game = Go(size)
    with pytest.raises(GameError, match="fixed handicap"):
        game.place_fixed_handicap(stones)
    assert game.board.tolist() == [EMPTY] * size * size and game.to_move == BLACK


def test_fixed_handicap_on_small_and_even_boards() -> None:
    assert fixed_handicap_points(7, 4) == gtp_points("C3 E5 C5 E3", 7)
    assert fixed_handicap_points(8, 4) == gtp_points("C3 F6 C6 F3", 8)
    assert fixed_handicap_points(12, 2) == gtp_points("C3 K10", 12)  # 3-3 points below 13x13
    assert fixed_handicap_points(25, 5) == gtp_points("D4 W22 D22 W4 N13", 25)


def test_handicap_needs_an_empty_board_before_the_first_move() -> None:
    game = Go(9)
    game.play(40)
    before = snapshot(game)
    with pytest.raises(GameError, match="empty board"):
        game.place_fixed_handicap(2)
    with pytest.raises(GameError, match="empty board"):
        game.place_free_handicap([0, 1])
    assert snapshot(game) == before
    with pytest.raises(GameError, match="square"):
        Go(9, 13).place_fixed_handicap(2)


def test_handicap_stones_are_the_starting_position() -> None:
    game = Go(9)
    game.place_fixed_handicap(2)
    with pytest.raises(UndoError):
        game.undo()
    game.play(40)
    game.undo()
    assert game.to_move == WHITE
    expected = Go.from_diagram(str(game), to_move=WHITE)
    assert game.hash == expected.hash


def test_free_handicap() -> None:
    game = Go(5)
    game.place_free_handicap([0, 6, 24])
    assert np.flatnonzero(game.board == BLACK).tolist() == [0, 6, 24]
    assert game.to_move == WHITE and game.liberties(0) == 2


@pytest.mark.parametrize("points,match", [([3], "2..24"), (list(range(25)), "2..24"),
                                          ([3, 3], "distinct"), ([3, 25], "off the board"),
                                          ([-1, 3], "off the board")])
def test_free_handicap_rejects_bad_lists(points: list[int], match: str) -> None:
    game = Go(5)
    with pytest.raises(GameError, match=match):
        game.place_free_handicap(points)
    assert game.board.tolist() == [EMPTY] * 25 and game.to_move == BLACK


# -- diagrams -----------------------------------------------------------------------------------


def test_from_diagram_round_trips_and_sets_the_side_to_move() -> None:
    text = lines("""
        X O . .
        . X . O
        . . . .""")
    game = Go.from_diagram(text, to_move=WHITE, komi=0.5)
    assert str(game) == text and (game.width, game.height) == (4, 3)
    assert game.to_move == WHITE and game.rules.komi == 0.5 and game.moves == []
    assert game.liberties(0) == 1 and game.liberties(1) == 1


@pytest.mark.parametrize("text,error", [
    ("X O\nO .", "point 0 has no liberty"),
    ("X .\n. . .", "equal length"),
    ("X #\n. .", "unknown"),
    ("", "equal length"),
])
def test_from_diagram_rejects_bad_diagrams(text: str, error: str) -> None:
    with pytest.raises(GameError, match=error):
        Go.from_diagram(text)


# -- hashing, undo, copies ----------------------------------------------------------------------


def test_hash_is_the_position_not_the_move_order() -> None:
    a, b = Go(9), Go(9)
    for move in (20, 60, 24):
        a.play(move)
    for move in (24, 60, 20):
        b.play(move)
    assert a.hash == b.hash and a.board.tolist() == b.board.tolist()
    assert a.hash == Go.from_diagram(str(a), to_move=WHITE).hash
    assert a.hash != Go.from_diagram(str(a), to_move=BLACK).hash  # the side to move counts
    a.play(a.pass_move)
    assert a.hash == Go.from_diagram(str(a), to_move=BLACK).hash


def test_undo_after_a_capture_restores_everything() -> None:
    game = Go.from_diagram("""
        . X X . .
        X O O . .
        . X X . .
        . . . . .""")
    before = snapshot(game)
    liberties = [game.liberties(p) for p in range(game.num_points)]
    game.play(game.point(3, 1))
    assert game.hash != before[1]
    game.undo()
    assert snapshot(game) == before
    assert [game.liberties(p) for p in range(game.num_points)] == liberties
    game.play(game.point(3, 1))  # and the capture replays identically
    assert game.captures(BLACK) == 2


def test_copy_is_independent() -> None:
    game = Go(9)
    for move in (40, 41, 31):
        game.play(move)
    before = snapshot(game)
    twin = game.copy()
    assert snapshot(twin) == before
    twin.play(49)
    twin.play(39)
    assert snapshot(game) == before
    twin.undo()
    twin.undo()
    assert snapshot(twin) == before
    game.play(49)
    assert twin.moves == [40, 41, 31] and twin.board[49] == EMPTY
    twin.undo()  # the copy keeps the history
    assert twin.moves == [40, 41]


# -- the network's view -------------------------------------------------------------------------


@pytest.mark.parametrize("to_move", [BLACK, WHITE])
def test_encode_planes(to_move: int) -> None:
    """Black (1) has one liberty, black (3) two; white (2) has one, white (4) two.
    Points: 0 1 2 / 3 4 5 / 6 7 8."""
    game = Go.from_diagram("""
        . X O
        X O .
        . . .""", to_move=to_move)
    out = np.full((10, Go.num_features()), np.nan, dtype=np.float32)
    game.encode(out)
    own, other = ({1, 3}, {2, 4}) if to_move == BLACK else ({2, 4}, {1, 3})
    columns = {
        "own": own, "opponent": other, "empty": {0, 5, 6, 7, 8}, "legal": {0, 5, 6, 7, 8, 9},
        "own_atari": own & {1, 2}, "opponent_atari": other & {1, 2},
        "own_two_liberties": own & {3, 4}, "opponent_two_liberties": other & {3, 4},
        "extra": {9},
    }
    for name, rows in columns.items():
        column = out[:, Go.feature_names.index(name)]
        assert set(np.flatnonzero(column).tolist()) == rows, name
        assert set(np.unique(column).tolist()) <= {0.0, 1.0}
    komi = out[:, Go.feature_names.index("komi")]
    assert np.flatnonzero(komi).tolist() == [9]
    assert komi[9] == pytest.approx(7.5 / 9 * (1 if to_move == WHITE else -1))


#: Three white chains short of liberties, Black's stones around them: the top one in atari
#: by the edge (it runs along the first line and dies), the one at (6, 4) in atari in the open
#: (its liberty gives it three), the lower one on two liberties with its ladder to the upper
#: right (Black's atari at (3, 5) works, the one at (4, 6) lets it out).
LADDER_BOARD = """
    . X O . . . . . .
    . . X . . . . . .
    . . . . . . . . .
    . . . . . . X . .
    . . . . . X O X .
    . . . . . . . . .
    . . X O . . . . .
    . . . X X . . . .
    . . . . . . . . ."""


@pytest.mark.parametrize("to_move", [BLACK, WHITE])
def test_encode_ladder_planes(to_move: int) -> None:
    """own_ladder / opponent_ladder mark the stones of the chains a ladder takes, the attacker
    moving next for each chain whoever is to move (in atari: the chain's side first; two
    liberties: the attacker first); ladder_capture marks the side to move's ataris that take an
    opponent's two-liberty chain. Black's chains here all have room: no ladder for White."""
    game = Go.from_diagram(LADDER_BOARD, to_move=to_move)
    at = game.point
    out = np.full((82, Go.num_features()), np.nan, dtype=np.float32)
    game.encode(out)
    first = Go.feature_names.index("own_ladder")
    assert Go.feature_names[first:] == ("own_ladder", "opponent_ladder", "ladder_capture")
    planes = {name: set(np.flatnonzero(out[:, first + i]).tolist())
              for i, name in enumerate(Go.feature_names[first:])}
    taken = {at(2, 0), at(3, 6)}  # the edge chain and the lower one; not (6, 4)
    if to_move == BLACK:
        assert planes == {"own_ladder": set(), "opponent_ladder": taken,
                          "ladder_capture": {at(3, 5)}}
    else:
        assert planes == {"own_ladder": taken, "opponent_ladder": set(), "ladder_capture": set()}
    assert set(np.unique(out[:, first:]).tolist()) <= {0.0, 1.0}
    assert all(game.ladder_captured(p) == (p in taken)
               for p in np.flatnonzero(game.board).tolist())


def test_search_moves_leave_out_running_from_a_working_ladder() -> None:
    """White's search leaves out the extension of its edge stone (the ladder along the first
    line takes it) and keeps the one in the open (three liberties); Black's search keeps both
    its ataris on the two-liberty chain, the one that fails too (the network must learn not to
    chase a broken ladder)."""
    white = Go.from_diagram(LADDER_BOARD, to_move=WHITE)
    at = white.point
    assert set(white.legal_moves().tolist()) - set(white.search_moves().tolist()) == {at(3, 0)}
    assert white.is_legal(at(3, 0))  # the rules still take it
    black = Go.from_diagram(LADDER_BOARD, to_move=BLACK)
    assert black.search_moves().tolist() == black.legal_moves().tolist()


def test_an_extension_that_captures_or_is_all_there_is_is_searched() -> None:
    """Black's stone at (2, 0) in atari: its extension (3, 0) captures White's (4, 0), so it is
    searched though the chain it makes, on two liberties, is still taken (White's atari at
    (3, 1), Black's (4, 0), White's (4, 2)). Below, White's two chains in atari can only extend
    into chains with one liberty, and nothing else but the pass is legal: both stay."""
    captures = Go.from_diagram("""
        X O X . O
        . O O . X
        . . X . .
        . . O . X
        . X O O X""", to_move=BLACK)
    at = captures.point
    assert at(3, 0) in captures.search_moves()
    captures.play(at(3, 0))
    assert captures.captures(BLACK) == 1 and captures.liberties(at(3, 0)) == 2
    assert captures.ladder_captured(at(3, 0))
    cornered = Go.from_diagram("""
        O . O
        . X O
        O X X""", to_move=WHITE)
    at = cornered.point
    assert cornered.search_moves().tolist() == cornered.legal_moves().tolist() == [
        at(1, 0), at(0, 1), cornered.pass_move]
    for p in (at(1, 0), at(0, 1)):  # either extension leaves one liberty
        after = cornered.copy()
        after.play(p)
        assert after.liberties(p) == 1


@pytest.mark.parametrize(("width", "height"), [(19, 19), (13, 9), (3, 2)])
def test_encode_line_planes(width: int, height: int) -> None:
    """line_k marks the points k-1 steps from the nearest edge, for k = 1..4; the points further
    in (the centre of a large board) and the extra node have none. Stones change nothing."""
    game = Go(width, height)
    game.play(0)
    out = np.full((width * height + 1, Go.num_features()), np.nan, dtype=np.float32)
    game.encode(out)
    first = Go.feature_names.index("line_1")
    assert Go.feature_names[first:first + 4] == ("line_1", "line_2", "line_3", "line_4")
    lines = out[:, first:first + 4]
    assert set(np.unique(lines).tolist()) <= {0.0, 1.0}
    for p in range(width * height):
        x, y = p % width, p // width
        steps = min(x, y, width - 1 - x, height - 1 - y)
        expected = [1.0 if k == steps else 0.0 for k in range(4)]
        assert lines[p].tolist() == expected, (x, y)
    assert not lines[-1].any()


def test_encode_marks_illegal_points_and_a_finished_game() -> None:
    game = Go.from_diagram("""
        . O .
        O . .
        . . .""")
    out = np.empty((10, Go.num_features()), dtype=np.float32)
    game.encode(out)
    assert np.flatnonzero(out[:, 3]).tolist() == [2, 4, 5, 6, 7, 8, 9]  # 0 is suicide
    game.play(9)
    game.play(9)
    game.encode(out)
    assert not out[:, 3].any()


# -- perft and the reference --------------------------------------------------------------------

#: Perft counts (passes are plies), each equal to the reference's count.
PERFT = [
    (2, 2, 1, 5), (2, 2, 2, 21), (2, 2, 3, 68), (2, 2, 4, 156), (2, 2, 5, 316), (2, 2, 6, 604),
    (2, 2, 7, 1088), (3, 3, 1, 10), (3, 3, 2, 91), (3, 3, 3, 738), (3, 3, 4, 5281),
    (3, 2, 5, 3242), (4, 4, 3, 4112), (9, 9, 2, 6643),
]


@pytest.mark.parametrize("width,height,depth,count", PERFT)
def test_perft(width: int, height: int, depth: int, count: int) -> None:
    game = Go(width, height)
    assert perft(game, depth) == count
    assert game.moves == [] and game.hash == 0  # perft restores the position
    assert reference_perft(Reference(width, height), depth) == count


@pytest.mark.slow
@pytest.mark.parametrize("width,height,depth,count", [
    (2, 2, 10, 8024), (3, 2, 8, 45332), (3, 3, 5, 33384), (4, 4, 4, 57984), (5, 5, 4, 361041),
    (9, 9, 3, 531522), (19, 19, 2, 130683),
])
def test_perft_deeper(width: int, height: int, depth: int, count: int) -> None:
    assert perft(Go(width, height), depth) == count
    assert reference_perft(Reference(width, height), depth) == count


def play_against_reference(game: Go, seed: int, plies: int, pass_rate: float = 0.03) -> int:
    """A random game from `game`'s starting position, played on it and on the reference and
    compared after every move, then taken back move by move and compared again. Returns how many
    moves along the way were illegal only by superko and would have repeated a position older
    than the one before the opponent's last move (so not a simple ko)."""
    rng = random.Random(seed)
    ref = Reference(game.width, game.height, game.rules.komi, game.board.tolist(), game.to_move)
    history: list[Reference] = []
    long_cycles = 0
    for _ in range(plies):
        assert_agrees(game, ref)
        older = set(ref.history[:-2])  # not the position before the last stone: not simple ko
        long_cycles += sum(tuple(ref.stone_on(p)[0] or ()) in older for p in range(ref.num_points))
        moves = ref.legal_moves()
        if not moves:
            break
        points = moves[:-1]
        move = moves[-1] if not points or rng.random() < pass_rate else rng.choice(points)
        history.append(ref.copy())
        game.play(move)
        ref.play(move)
    assert_agrees(game, ref)
    assert game.score() == ref.area(BLACK) - ref.area(WHITE) - ref.komi
    while history:
        game.undo()
        ref = history.pop()
        assert_agrees(game, ref)
    return long_cycles


def test_random_games_on_tiny_boards_agree_with_the_reference() -> None:
    """Tiny boards fill up fast, so long random games there are full of captures and cycles."""
    long_cycles = sum(play_against_reference(Go(2 + s % 3, 2 + s // 3 % 3), s, 120, 0.05)
                      for s in range(18))
    assert long_cycles > 0  # superko beyond simple ko was exercised, not just simple ko


@pytest.mark.parametrize("width,height,seed", [(5, 5, 1), (6, 7, 2), (7, 7, 3), (9, 9, 4)])
def test_random_games_agree_with_the_reference(width: int, height: int, seed: int) -> None:
    play_against_reference(Go(width, height), seed, plies=2 * width * height)


def test_random_games_from_set_up_positions_agree_with_the_reference() -> None:
    handicap = Go(9, komi=0.5)
    handicap.place_fixed_handicap(5)
    play_against_reference(handicap, seed=5, plies=120)
    play_against_reference(Go.from_diagram(SCORED, to_move=WHITE), seed=6, plies=40)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(12))
def test_many_random_games_agree_with_the_reference(seed: int) -> None:
    size = (5, 6, 7, 8, 9, 9)[seed % 6]
    play_against_reference(Go(size), 1000 + seed, plies=4 * size * size, pass_rate=0.01)
