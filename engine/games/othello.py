"""Othello (Reversi) on any even board from 4x4 to 26x26.

Rules: Black moves first from the four centre discs (White on the centre square's top-left and
bottom-right: d4 and e5 on 8x8 with a1 at the top-left). A move places a disc that flips at least
one line of opponent discs. A side that cannot place a disc passes, and only then; the game ends
when neither side can place a disc, and the side with more discs wins.

The rules, the Zobrist hash and the node features live in the compiled core,
`engine/core/othello.cpp`: bitboards of one to eleven 64-bit words (one template, the fewest
words that cover the board), legal moves by one shift-and-mask flood per direction. This module
is the typed layer over it: argument checks with their error messages, set-up from a diagram,
and the extras that players, GUIs and tests read (`flips`, `disc_count`, `unsafe_discs`,
`bitboards`).
"""
from __future__ import annotations

import operator
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from saz.engine import _core
from saz.engine.games.base import BLACK, WHITE, Coordinates, GameInfo, parse_diagram
from saz.engine.games.capabilities import (
    DEFAULT_SOLVE_NODES,
    SOLVED,
    Solution,
    Solvable,
    node_budget,
)
from saz.engine.games.errors import UnsupportedRuleError, UnsupportedSizeError
from saz.engine.games.grid import Grid, grid, line_slots

if TYPE_CHECKING:  # an alias of the stub's (engine/_core.pyi), not a class at run time
    from saz.engine._core import OthelloPosition

#: Smallest and largest side; over GTP the columns are the letters a..z.
MIN_SIZE = 4
MAX_SIZE = 26


def _check_size(width: object, height: object) -> tuple[int, int]:
    try:
        # Anything may arrive here; TypeError below says it is not a whole number.
        w, h = operator.index(width), operator.index(height)  # type: ignore[arg-type]  # any object
    except TypeError:
        raise UnsupportedSizeError(
            f"Othello board sides must be integers, got {width!r}x{height!r}") from None
    for side in (w, h):
        if side % 2 or not MIN_SIZE <= side <= MAX_SIZE:
            raise UnsupportedSizeError(
                f"Othello needs an even board side from {MIN_SIZE} to {MAX_SIZE}, got {w}x{h}")
    return w, h


def _start_discs(width: int, height: int) -> tuple[list[int], list[int]]:
    """(black, white) discs of the start position: White on the centre square's diagonal."""
    cx, cy = width // 2, height // 2
    top_left = (cy - 1) * width + cx - 1
    bottom_left = cy * width + cx - 1
    return [top_left + 1, bottom_left], [top_left, bottom_left + 1]


def _mask(words: list[int]) -> int:
    """A bitboard's 64-bit words (lowest first) as one Python int, bit p for point p."""
    return sum(word << (64 * i) for i, word in enumerate(words))


class Othello(Solvable):
    """An Othello position and its history.

    `Othello(8)` is the standard game; `Othello(10, 6)` a 10-wide, 6-high board. Every even side
    from 4 to 26 is admitted. Beyond the `Game` interface: `from_diagram()` to set up a position,
    `disc_count()`, `flips(move)` (what a move would turn over: greedy players, GUIs),
    `unsafe_discs()` (what either side could turn over next) and `bitboards()`.

    The search's tactics are the wipeouts, which a network trained on small boards walks into
    on large open ones: `winning_moves()` are the placements that turn over every opponent
    disc, and those after which every reply allows that (a wipeout three plies ahead, which
    the greedy player found at 16x16); `forced_moves()`, when some moves would let the opponent
    wipe out in reply, are the moves that don't (an empty list: every move does, the position
    is lost). They look only at sides of at most 16 discs, where wipeouts happen (of 88 in our
    10x10 and 16x16 match records, all took 3 to 11 discs but one of 14) and the check is cheap.
    Other game-ending moves are not told apart: that needs both sides' move generation for
    every child.

    `solve()` plays the endgame perfectly: an exact alpha-beta search over the bitboards in the
    core, with a transposition table and fastest-first move ordering. On 8x8 it solves about 18
    empty points in a second (docs/BENCHMARKS.md); the margin counts discs only, as `score()`
    and `winner()` do.
    """

    name: ClassVar[str] = "othello"
    info: ClassVar[GameInfo] = GameInfo("Othello", sgf_game_type=2, default_size=8,
                                        coordinates=Coordinates.TOP_LEFT, setup_by_play=False)
    feature_names: ClassVar[tuple[str, ...]] = (
        "own", "opponent", "empty", "legal", "own_unsafe", "opponent_unsafe", "extra")
    #: 2: the unsafe-disc planes (`unsafe_discs`) joined own / opponent / empty / legal.
    feature_version: ClassVar[int] = 2
    #: A side that cannot place a disc passes without being asked.
    passes_implicitly: ClassVar[bool] = True
    #: A group per line of the board (row, column, both diagonals): a move flips along lines, and
    #: whose discs fill a line and where its gaps are decide what turns over, across the whole
    #: board in one hop. Each line's members are its points by what they hold.
    group_roles: ClassVar[tuple[str, ...]] = ("own", "opponent", "empty")
    _core: OthelloPosition
    RULES: ClassVar[tuple[str, ...]] = ("standard",)

    def __init__(self, width: int, height: int | None = None, *, rule: str = "standard") -> None:
        w, h = _check_size(width, width if height is None else height)
        if rule not in self.RULES:
            raise UnsupportedRuleError(
                f"unknown Othello rule {rule!r}; expected one of {', '.join(self.RULES)}")
        #: The rule set's name (Othello has one); the search compares it to reuse trees.
        self.rules: str = rule
        self.grid: Grid = grid(w, h)
        self._set_position(*_start_discs(w, h), BLACK)

    @classmethod
    def group_members(cls, x: np.ndarray, width: int, height: int) -> np.ndarray:
        """Each point's four lines (`grid.line_slots`), each entry's role what the point holds
        in planes 0 `own` and 1 `opponent` of `x`: own 0, opponent 1, empty 2
        (`Game.group_members`; every point is in four lines, so there is no padding)."""
        points = width * height
        own, opponent = x[:, :points, 0] > 0.5, x[:, :points, 1] > 0.5
        role = np.where(own, 0, np.where(opponent, 1, 2)).astype(np.int32)
        roles = len(cls.group_roles)
        return line_slots(width, height)[None] * roles + role[:, :, None]

    @classmethod
    def from_diagram(cls, diagram: str, *, to_move: int = BLACK) -> Othello:
        """A game starting from a text diagram in the format of `str(game)`: one line per row
        from the top, `X` black, `O` white, `.` empty, spaces ignored. The discs are the start
        of the history (`undo` stops there) and need not be reachable by play: for puzzles,
        tests and GUI set-up. GameError on a malformed diagram."""
        width, height, black, white = parse_diagram(diagram, to_move)
        game = cls(width, height)
        game._set_position(black, white, to_move)
        return game

    def _set_position(self, black: list[int], white: list[int], to_move: int) -> None:
        """Start a history at these discs."""
        self._attach(_core.new_othello(self.width, self.height, black, white, to_move))
        board = np.zeros(self.num_points, dtype=np.int8)
        board[black] = BLACK
        board[white] = WHITE
        board.setflags(write=False)
        self._start = (board, to_move)

    # -- state --------------------------------------------------------------------------------
    def start_position(self) -> tuple[np.ndarray, int]:
        board, to_move = self._start
        return board.copy(), to_move

    def bitboards(self) -> tuple[int, int]:
        """(black, white) discs as masks: bit `p` is set where point `p` holds such a disc."""
        black, white = self._core.words()
        return _mask(black), _mask(white)

    def disc_count(self) -> tuple[int, int]:
        """(black discs, white discs)."""
        return self._core.disc_count()

    def score(self) -> float:
        """Black's discs minus White's."""
        black, white = self.disc_count()
        return float(black - white)

    def ownership(self) -> np.ndarray:
        """Each disc counts for its colour; an empty point for nobody."""
        return self.board.astype(np.int8)

    def flips(self, move: int) -> list[int]:
        """The points that `move` would turn over, ascending; none if it is no legal placement."""
        return self._core.flips(operator.index(move))

    def unsafe_discs(self) -> tuple[int, int]:
        """(own discs the opponent could turn over with its next placement, opponent discs the
        side to move can turn over with one of its placements now), as masks.

        Whose move it is does not matter to the first: it holds whatever the opponent could
        flip were it to move. These are the `own_unsafe` / `opponent_unsafe` feature planes: the
        graph network sums its neighbours' messages without knowing their direction, so it
        cannot follow the lines along which discs flip, and is told what they add up to."""
        own, opp = self._core.unsafe_words()
        return _mask(own), _mask(opp)

    def winner(self) -> int | None:
        """BLACK or WHITE by disc count (empty points count for nobody), DRAW when equal; None
        while the game goes on."""
        return super().winner()

    def solve(self, max_nodes: int = DEFAULT_SOLVE_NODES, *, exact: bool = True,
              max_seconds: float | None = None) -> Solution | None:
        """Perfect play by exhaustive search in the compiled core (without the GIL). Solves
        keep what they proved in a table per thread, so a solve of a position near the last
        one's is cheaper. `max_seconds` stops it like the node budget (the search's clock)."""
        seconds = 0.0 if max_seconds is None else max(float(max_seconds), 1e-6)
        status, move, value, nodes = self._core.solve(node_budget(max_nodes), exact, seconds)
        if status != SOLVED:
            return None
        return Solution(None if move < 0 else move, value, exact, nodes)

    # -- what the referee, the clock and the greedy player ask of the game ------------------------
    def plies_left(self) -> float:
        """Every placement fills one empty point, so the empty points are the moves left, up to
        the passes."""
        return float(max(1, int(np.count_nonzero(self.board == 0))))

    def heuristic(self, moves: np.ndarray) -> np.ndarray:
        """The discs a placement turns over (the forced pass, when it is the only move, scores
        0). The greedy player's one ply."""
        return np.array([float(len(self.flips(int(m)))) for m in moves])
