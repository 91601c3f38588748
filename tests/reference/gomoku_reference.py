"""The pure-Python Gomoku of saz before the rules moved into the compiled core (commit a48fb4d's
`engine/games/gomoku.py`), kept as a slow brute-force reference for the differential test
`tests/test_core_gomoku.py`. It runs standalone: the parts of the old `Game` base class, grid,
bitboard and Zobrist helpers it used come from `old_base.py` beside it (shared by the three
references); only the exception types are shared with the engine, so that both raise the same ones.
Its hashes use its own keys: compare hash *equalities* between positions, never hash values, with
the core.

Do not optimise it: its worth is being the old code, line for line where possible.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import ClassVar

import numpy as np

from saz.engine.games.errors import (
    IllegalMoveError,
    UndoError,
    UnsupportedRuleError,
    UnsupportedSizeError,
)

from reference.old_base import (
    BLACK,
    WHITE,
    EMPTY,
    DRAW,
    Game,
    Grid,
    grid,
    mask_of,
    points_of,
    zobrist_keys,
)


# -- the old engine/games/gomoku.py from here on ---------------------------------------------------
#: Smallest and largest side (the Gomocup protocol and GUIs stop at 32).
MIN_SIZE = 5
MAX_SIZE = 32
#: Stones in a row that win.
FIVE = 5


@dataclass(frozen=True)
class GomokuRule:
    """What a line of stones through the last move is worth: the part of the rules that varies."""

    name: str
    #: Whether six or more in a row win (freestyle) or count for nothing (exact five).
    overline_wins: bool

    def wins(self, length: int, color: int) -> bool:
        """Whether `length` stones of `color` in a row, through the move just played, win.

        `color` is unused by these rules; renju lets White's overline win but not Black's."""
        return length == FIVE or (length > FIVE and self.overline_wins)


FREESTYLE = GomokuRule("freestyle", overline_wins=True)
EXACT_FIVE = GomokuRule("exact-five", overline_wins=False)
#: The rules by name, as the constructor's `rule` argument takes them.
RULES_BY_NAME: dict[str, GomokuRule] = {r.name: r for r in (FREESTYLE, EXACT_FIVE)}
#: Known rules not implemented yet: asking for one is an UnsupportedRuleError that says so.
PLANNED_RULES = ("renju",)

#: The four line directions (dx, dy), each taken with its opposite.
_LINE_DIRECTIONS = ((1, 0), (0, 1), (1, 1), (-1, 1))

_Ray = tuple[int, ...]
_Shifts = tuple[tuple[int, int], ...]


@dataclass(frozen=True, eq=False)
class _Lines:
    """The lines of one board size, for both views of the stones."""

    width: int
    height: int
    #: Every point of the board, as a mask.
    full: int = field(init=False, repr=False)
    #: Per point, per line direction: (the points ahead, the points behind), nearest first. Each
    #: half stops after FIVE points: a run that reaches that far already makes an overline,
    #: whatever lies beyond, so the length it gives decides every rule exactly.
    rays: tuple[tuple[tuple[_Ray, _Ray], ...], ...] = field(init=False, repr=False)
    #: Per line direction: for k = 1..4 steps ahead, then 1..4 behind, (shift, mask) such that
    #: `own >> shift & mask` (ahead) or `own << shift & mask` (behind) has bit p set when the
    #: point k steps from p lies on the board and holds an own stone.
    windows: tuple[tuple[_Shifts, _Shifts], ...] = field(init=False, repr=False)
    #: Every window of five points in a row that lies on the board, `[M, 5]` point indices.
    fives: np.ndarray = field(init=False, repr=False)
    #: Per point, the windows (rows of `fives`) it lies in, `[num_points, K]`, padded with M (a
    #: window that holds nothing).
    point_fives: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        g = grid(self.width, self.height)
        rays = tuple(
            tuple((tuple(g.ray(p, dx, dy)[:FIVE]), tuple(g.ray(p, -dx, -dy)[:FIVE]))
                  for dx, dy in _LINE_DIRECTIONS)
            for p in range(g.num_points))
        windows = []
        for dx, dy in _LINE_DIRECTIONS:
            step = dy * self.width + dx
            ahead, behind = (
                tuple((k * step, self._points_with_neighbour(sign * k * dx, sign * k * dy))
                      for k in range(1, FIVE))
                for sign in (1, -1))
            windows.append((ahead, behind))
        object.__setattr__(self, "full", (1 << g.num_points) - 1)
        object.__setattr__(self, "rays", rays)
        object.__setattr__(self, "windows", tuple(windows))
        fives = [[y * self.width + x + k * (dy * self.width + dx) for k in range(FIVE)]
                 for dx, dy in _LINE_DIRECTIONS
                 for y in range(self.height) for x in range(self.width)
                 if 0 <= x + (FIVE - 1) * dx < self.width and y + (FIVE - 1) * dy < self.height]
        member: list[list[int]] = [[] for _ in range(g.num_points)]
        for i, window in enumerate(fives):
            for p in window:
                member[p].append(i)
        width = max(map(len, member))
        padded = np.full((g.num_points, width), len(fives), dtype=np.intp)
        for p, windows_of_p in enumerate(member):
            padded[p, :len(windows_of_p)] = windows_of_p
        object.__setattr__(self, "fives", np.array(fives, dtype=np.intp).reshape(-1, FIVE))
        object.__setattr__(self, "point_fives", padded)

    def _points_with_neighbour(self, dx: int, dy: int) -> int:
        """The mask of the points p whose point (dx, dy) away from p is on the board."""
        w, h = self.width, self.height
        return mask_of(y * w + x for y in range(h) for x in range(w)
                       if 0 <= x + dx < w and 0 <= y + dy < h)

    def five_points(self, own: int, empty: int) -> int:
        """The empty points where a stone would stand in five or more in a row with `own`, as a
        mask: for each direction, the points whose other four stones of some window of five
        along it are all own (four steps ahead, three ahead and one behind, ..., four behind)."""
        points = 0
        for ahead, behind in self.windows:
            (s1, m1), (s2, m2), (s3, m3), (s4, m4) = ahead
            a1 = (own >> s1) & m1
            a2 = a1 & (own >> s2) & m2
            a3 = a2 & (own >> s3) & m3
            a4 = a3 & (own >> s4) & m4
            (s1, m1), (s2, m2), (s3, m3), (s4, m4) = behind
            b1 = (own << s1) & m1
            b2 = b1 & (own << s2) & m2
            b3 = b2 & (own << s3) & m3
            b4 = b3 & (own << s4) & m4
            points |= a4 | (a3 & b1) | (a2 & b2) | (a1 & b3) | b4
        return points & empty


@lru_cache(maxsize=None)
def _lines(width: int, height: int) -> _Lines:
    return _Lines(width, height)


def _check_size(width: object, height: object) -> tuple[int, int]:
    try:
        w, h = operator.index(width), operator.index(height)  # type: ignore[arg-type]
    except TypeError:
        raise UnsupportedSizeError(
            f"Gomoku board sides must be integers, got {width!r}x{height!r}") from None
    if not (MIN_SIZE <= w <= MAX_SIZE and MIN_SIZE <= h <= MAX_SIZE):
        raise UnsupportedSizeError(
            f"Gomoku needs a board side from {MIN_SIZE} to {MAX_SIZE}, got {w}x{h}")
    return w, h


def _rule_named(name: str) -> GomokuRule:
    rule = RULES_BY_NAME.get(name)
    if rule is None:
        if name in PLANNED_RULES:
            raise UnsupportedRuleError(f"the Gomoku rule {name!r} is not supported yet")
        raise UnsupportedRuleError(
            f"unknown Gomoku rule {name!r}; expected one of {', '.join(RULES_BY_NAME)}")
    return rule


class ReferenceGomoku(Game):
    """A Gomoku position and its history.

    `Gomoku(15)` is freestyle on 15x15; `Gomoku(20, rule="exact-five")`; `Gomoku(12, 9)` a
    12-wide, 9-high board. Beyond the `Game` interface: `rules`, `winning_line()` and
    `wins_if_played()`, and the tactics `winning_moves()` / `forced_moves()`.
    """

    name: ClassVar[str] = "gomoku"
    feature_names: ClassVar[tuple[str, ...]] = (
        "own", "opponent", "empty", "own_five", "own_four", "own_three",
        "opponent_five", "opponent_four", "opponent_three", "extra", "black_forbidden")
    #: 2: the threat planes (`threats`) joined own / opponent / empty.
    feature_version: ClassVar[int] = 3
    RULES: ClassVar[tuple[str, ...]] = tuple(RULES_BY_NAME)

    def __init__(self, width: int, height: int | None = None, *, rule: str = "freestyle") -> None:
        w, h = _check_size(width, width if height is None else height)
        self.rules: GomokuRule = _rule_named(rule)
        self.grid: Grid = grid(w, h)
        self._lines = _lines(w, h)
        black_keys, white_keys, self._white_to_move_key = zobrist_keys(w * h)
        # Lists of three indexed by colour: [1] is Black's, [-1] (the last) is White's.
        self._keys = (None, black_keys, white_keys)
        self._stones = [0, 0, 0]
        self._cells = bytearray(w * h)
        self._board = self._view(self._cells)
        self._to_move = BLACK
        self._hash = 0
        self._moves: list[int] = []
        #: The winning run of the last move, ascending; None while nobody has won.
        self._won: tuple[int, ...] | None = None

    @staticmethod
    def _view(cells: bytearray) -> np.ndarray:
        view = np.frombuffer(cells, dtype=np.int8)
        view.setflags(write=False)
        return view

    # -- state --------------------------------------------------------------------------------
    @property
    def board(self) -> np.ndarray:
        """Stones per point as a read-only int8 `[num_points]` view that follows the game."""
        return self._board

    @property
    def hash(self) -> int:
        return self._hash

    def colors(self) -> list[int]:
        return [self._color_at(move) for move in self._moves]

    def start_position(self) -> tuple[np.ndarray, int]:
        """Gomoku games start on the empty board, Black to move."""
        return np.zeros(self.num_points, dtype=np.int8), BLACK

    def winning_line(self) -> list[int] | None:
        """The points of the winning run (five, or more under freestyle), ascending, which is
        also their order along the line; None unless the game was won."""
        return None if self._won is None else list(self._won)

    def wins_if_played(self, move: int, color: int) -> bool:
        """Whether a stone of `color` on the empty point `move` would win under this game's rule.

        Reads only the four lines through `move` (at most 40 points), whoever is to move, so the
        search can find its own immediate wins and the opponent's that it must block.
        """
        move = operator.index(move)
        if not 0 <= move < self.num_points or self._cells[move] != EMPTY:
            raise IllegalMoveError(move, "not an empty point of the board")
        if color != BLACK and color != WHITE:
            raise ValueError(f"color must be BLACK (1) or WHITE (-1), got {color!r}")
        return self._winning_run(move, color) is not None

    def _winning_run(self, move: int, color: int) -> tuple[int, ...] | None:
        """The run that a stone of `color` on `move` would complete if it wins, else None."""
        cells, cell, wins = self._cells, color & 0xFF, self.rules.wins
        for ahead, behind in self._lines.rays[move]:
            n_ahead = 0
            for p in ahead:
                if cells[p] != cell:
                    break
                n_ahead += 1
            n_behind = 0
            for p in behind:
                if cells[p] != cell:
                    break
                n_behind += 1
            length = 1 + n_ahead + n_behind
            if length >= FIVE and wins(length, color):
                return tuple(sorted((move, *ahead[:n_ahead], *behind[:n_behind])))
        return None

    # -- rules --------------------------------------------------------------------------------
    def legal_moves(self) -> np.ndarray:
        """The empty points, ascending, as int64; none once someone has won or the board is full."""
        if self._won is not None:
            return np.empty(0, dtype=np.int64)
        return np.flatnonzero(self._board == EMPTY)

    def is_legal(self, move: int) -> bool:
        move = operator.index(move)
        return 0 <= move < self.num_points and self._cells[move] == EMPTY and self._won is None

    def play(self, move: int, color: int | None = None) -> None:
        if color is not None and color != self._to_move:
            self._play_out_of_turn(move, color)
            return
        move = operator.index(move)
        if not 0 <= move < self.num_points:
            reason = "Gomoku has no pass" if move == self.num_points else "off the board"
            raise IllegalMoveError(move, reason)
        if self._won is not None:
            raise IllegalMoveError(move, "the game is over")
        if self._cells[move] != EMPTY:
            raise IllegalMoveError(move, "the point is occupied")
        color = self._to_move
        self._won = self._winning_run(move, color)
        self._cells[move] = color & 0xFF
        self._stones[color] |= 1 << move
        self._hash ^= self._keys[color][move] ^ self._white_to_move_key
        self._to_move = -color
        self._moves.append(move)

    def undo(self) -> None:
        if not self._moves:
            raise UndoError("no move to undo")
        move = self._moves[-1]
        self._undo_turn(self._color_at(move))
        self._moves.pop()
        color = -self._to_move
        self._cells[move] = EMPTY
        self._stones[color] ^= 1 << move
        self._hash ^= self._keys[color][move] ^ self._white_to_move_key
        self._to_move = color
        self._won = None  # only the last move can have won: the game ends with it
        self._restore_turn()

    def _switch_turn(self) -> None:
        self._to_move = -self._to_move
        self._hash ^= self._white_to_move_key

    def _color_at(self, point: int) -> int:
        """The colour of the stone on `point` (a white stone is the byte 0xFF)."""
        return BLACK if self._cells[point] == BLACK else WHITE

    def with_rules(self, **changes: object) -> ReferenceGomoku:
        """The same stones under another rule (`rule=`): the moves are replayed, each by its
        own colour, so that the new rule decides which line wins; GameError if one of them
        came after a win under it."""
        unknown = set(changes) - {"rule"}
        if unknown:
            raise UnsupportedRuleError(
                f"Gomoku has no rule parameters {', '.join(sorted(unknown))}")
        rule = changes.get("rule", self.rules.name)
        game = ReferenceGomoku(self.width, self.height, rule=rule)  # type: ignore[arg-type]
        for move in self._moves:
            game.play(move, self._color_at(move))
        game.set_to_move(self._to_move)
        return game

    def is_over(self) -> bool:
        return self._won is not None or len(self._moves) == self.num_points

    def winner(self) -> int | None:
        if self._won is not None:
            return self._color_at(self._won[0])
        return DRAW if len(self._moves) == self.num_points else None

    # -- tactics ------------------------------------------------------------------------------
    def _wins_for(self, color: int) -> list[int]:
        """The empty points where a stone of `color` wins now, ascending."""
        own = self._stones[color]
        if own.bit_count() < FIVE - 1:
            return []
        empty = self._lines.full ^ (self._stones[BLACK] | self._stones[WHITE])
        candidates = self._lines.five_points(own, empty)
        # Candidates make five or more in a row; the rule decides (an overline under exact five).
        return [p for p in points_of(candidates) if self._winning_run(p, color) is not None]

    def winning_moves(self) -> list[int]:
        """The moves that win at once for the side to move, ascending."""
        if self.is_over():
            return []
        return self._wins_for(self._to_move)

    def forced_moves(self) -> list[int] | None:
        """None unless the opponent could win with its next stone. Then: its winning point when
        there is one (a stone there blocks it), none when there are two or more (one stone
        cannot block both: the position is lost), and in both cases any move that wins first."""
        if self.is_over():
            return None
        threats = self._wins_for(-self._to_move)
        if not threats:
            return None
        blocks = threats if len(threats) == 1 else []
        return sorted(set(blocks) | set(self._wins_for(self._to_move)))

    # -- the network's view -----------------------------------------------------------------------
    def encode(self, out: np.ndarray) -> None:
        """Per point, from the side to move's view: own / opponent / empty, then the threat
        planes (`threats`); the extra row has only `extra` = 1. Black's forbidden points (renju's,
        which this reference does not play) are always 0."""
        n = self.num_points
        np.take(_ENCODING[self._to_move], self._board, axis=0, out=out[:n], mode="wrap")
        out[:n, 3:9] = self.threats()
        out[n] = _EXTRA_ROW

    def threats(self) -> np.ndarray:
        """`[num_points, 6]` 0/1: whether a stone of the side to move on this empty point would
        make five, four or three in some window of five points in a row that holds no opponent
        stone, then the same for the opponent.

        The message passing of the graph network sums over neighbours without knowing their
        direction, so it cannot see a line; these planes tell each point what lines run through
        it, as KataGo's inputs tell a Go point its liberties. They are hints: the rules decide
        what wins (an exact-five overline counts here as a five)."""
        lines = self._lines
        # Each window's content as one number, own stones + 6 x opponent stones, then as the
        # bit flags of the threats it offers (`_WINDOW_FLAGS`); a point ORs those of its windows.
        content = _STONE_CODES[self._to_move][self._board][lines.fives].sum(1)
        flags = np.append(_WINDOW_FLAGS[content], np.uint8(0))  # the padding's window: none
        point_flags = np.bitwise_or.reduce(flags[lines.point_fives], axis=1)
        point_flags *= self._board == EMPTY
        return np.unpackbits(point_flags[:, None], axis=1, bitorder="little")[:, :6]

    def copy(self) -> ReferenceGomoku:
        other = object.__new__(ReferenceGomoku)
        other.__dict__.update(self.__dict__)
        other._cells = bytearray(self._cells)
        other._board = self._view(other._cells)
        other._stones = self._stones.copy()
        other._moves = self._moves.copy()
        return other


def _encoding_table(to_move: int) -> np.ndarray:
    """Feature rows indexed by a point's int8 value from `to_move`'s view (EMPTY 0, BLACK 1, and
    WHITE -1, which `np.take(mode="wrap")` reads as the last row)."""
    table = np.zeros((3, len(ReferenceGomoku.feature_names)), dtype=np.float32)
    table[EMPTY, 2] = 1.0
    table[to_move, 0] = 1.0
    table[-to_move, 1] = 1.0
    table.setflags(write=False)
    return table


_ENCODING = {BLACK: _encoding_table(BLACK), WHITE: _encoding_table(WHITE)}
_EXTRA_ROW = np.zeros(len(ReferenceGomoku.feature_names), dtype=np.float32)
_EXTRA_ROW[ReferenceGomoku.feature_names.index("extra")] = 1.0
#: A point's int8 value (EMPTY 0, BLACK 1, WHITE -1 read as the last entry) as its share of a
#: window's content from the view of the side to move: an own stone 1, an opponent's 6.
_STONE_CODES = {BLACK: np.array([0, 1, 6], dtype=np.int8),
                WHITE: np.array([0, 6, 1], dtype=np.int8)}


def _window_flags() -> np.ndarray:
    """For a window's content `own + 6 x opponent` (0..35): bit k set (k = 0, 1, 2) when one more
    own stone there would make 5, 4 or 3 with no opponent stone in the way, bit 3 + k the same
    for the opponent."""
    flags = np.zeros(36, dtype=np.uint8)
    for own in range(FIVE + 1):
        for theirs in range(FIVE + 1 - own):
            for bit, length in enumerate((5, 4, 3)):
                if theirs == 0 and own + 1 == length:
                    flags[own + 6 * theirs] |= 1 << bit
                if own == 0 and theirs + 1 == length:
                    flags[own + 6 * theirs] |= 1 << (3 + bit)
    return flags


_WINDOW_FLAGS = _window_flags()
