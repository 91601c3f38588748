"""The pure-Python Othello of saz before the rules moved into the compiled core (commit a48fb4d's
`engine/games/othello.py`), kept as a slow reference for the differential test
`tests/test_core_othello.py`. It runs standalone: the parts of the old `Game` base class, grid,
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
    DRAW,
    Game,
    Grid,
    grid,
    mask_of,
    parse_diagram,
    points_of,
    zobrist_keys,
)


# -- the old engine/games/othello.py from here on --------------------------------------------------
#: Smallest and largest side; over GTP the columns are the letters a..z.
MIN_SIZE = 4
MAX_SIZE = 26


@dataclass(frozen=True, eq=False)
class _Bitboards:
    """The constants of one board size: masks, shift steps and per-point Zobrist keys."""

    width: int
    height: int
    num_points: int = field(init=False)
    #: Every point of the board.
    full: int = field(init=False)
    #: Every point off the first and last column: where a sideways run of discs to flip can lie.
    inner: int = field(init=False)
    #: Bytes that hold a bitboard with its pass bit (for `np.unpackbits`).
    num_bytes: int = field(init=False)
    #: Zobrist keys per point of a black disc, of a white disc, and of a disc turned over.
    black_keys: tuple[int, ...] = field(init=False, repr=False)
    white_keys: tuple[int, ...] = field(init=False, repr=False)
    flip_keys: tuple[int, ...] = field(init=False, repr=False)
    #: Zobrist key of White to move.
    white_to_move_key: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        w, n = self.width, self.width * self.height
        inner = mask_of(p for p in range(n) if 0 < p % w < w - 1)
        black, white, side = zobrist_keys(n)
        values = {
            "num_points": n,
            "full": (1 << n) - 1,
            "inner": inner,
            "num_bytes": (n + 1 + 7) // 8,
            "black_keys": black,
            "white_keys": white,
            "flip_keys": tuple(b ^ k for b, k in zip(black, white)),
            "white_to_move_key": side,
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def keys_of(self, color: int) -> tuple[int, ...]:
        return self.black_keys if color == BLACK else self.white_keys

    def start(self) -> tuple[int, int]:
        """(black, white) discs of the start position: White on the centre square's diagonal."""
        cx, cy, w = self.width // 2, self.height // 2, self.width
        top_left = (cy - 1) * w + cx - 1
        bottom_left = cy * w + cx - 1
        white = (1 << top_left) | (1 << (bottom_left + 1))
        black = (1 << (top_left + 1)) | (1 << bottom_left)
        return black, white

    def mobility(self, own: int, opp: int) -> int:
        """The empty points where the owner of `own` may place a disc, as a mask.

        From every own disc at once, step onto adjacent opponent discs and keep stepping through
        them: an empty point one step past such a run closes a line, so a disc there flips it.
        Each loop runs as many times as the longest run of opponent discs in its direction.
        """
        empty = self.full ^ (own | opp)
        side = opp & self.inner
        moves = 0
        for step, through in self._axes(opp, side):
            run = (own << step) & through
            while run:
                run <<= step
                moves |= run & empty
                run &= through
            run = (own >> step) & through
            while run:
                run >>= step
                moves |= run & empty
                run &= through
        return moves

    def flips(self, point: int, own: int, opp: int) -> int:
        """The opponent discs a disc of `own`'s owner placed on `point` turns over, as a mask.

        Walks from the point in each direction through opponent discs; the run flips when the walk
        then lands on an own disc. Zero means the placement is illegal (or the point occupied).
        """
        bit = 1 << point
        side = opp & self.inner
        flips = 0
        for step, through in self._axes(opp, side):
            run, x = 0, bit << step
            while x & through:
                run |= x
                x <<= step
            if x & own:
                flips |= run
            run, x = 0, bit >> step
            while x & through:
                run |= x
                x >>= step
            if x & own:
                flips |= run
        return flips

    def exposed(self, own: int, opp: int) -> int:
        """The opponent discs that `own`'s owner could turn over with its next placement (the
        union of `flips` over its legal placements), as a mask.

        A line of opponent discs flips when one end touches an own disc and the other an empty
        point, where the placement goes. Per direction, a flood from every own disc through
        opponent discs marks the lines with an own disc behind them (whole lines: a flood
        crosses a line entirely or not at all), and a flood back from every empty point through
        those lines keeps the ones with an empty point ahead.
        """
        empty = self.full ^ (own | opp)
        exposed = 0
        for step, through in self._axes(opp, opp & self.inner):
            exposed |= _flood_down(empty, step, _flood_up(own, step, through))
            exposed |= _flood_up(empty, step, _flood_down(own, step, through))
        return exposed

    def _axes(self, opp: int, side: int) -> tuple[tuple[int, int], ...]:
        """The four axes as (shift step, discs a run may cross): row, column, both diagonals."""
        w = self.width
        return (1, side), (w, opp), (w + 1, side), (w - 1, side)

    def unpack(self, *masks: int) -> np.ndarray:
        """The bits of each mask as a `[len(masks), num_points + 1]` 0/1 uint8 array."""
        data = b"".join(m.to_bytes(self.num_bytes, "little") for m in masks)
        bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8), bitorder="little")
        return bits.reshape(len(masks), -1)[:, : self.num_points + 1]


def _flood_up(seed: int, step: int, through: int) -> int:
    """The points of `through` that steps of `<< step` from `seed` reach crossing only `through`.
    One loop per step the longest run takes: cheaper than Kogge-Stone's fixed doubling steps on
    Python ints, where runs are short and each operation costs far more than its bits."""
    reached = 0
    run = (seed << step) & through
    while run:
        reached |= run
        run = (run << step) & through
    return reached


def _flood_down(seed: int, step: int, through: int) -> int:
    """The points of `through` that steps of `>> step` from `seed` reach crossing only `through`
    (`_flood_up` the other way)."""
    reached = 0
    run = (seed >> step) & through
    while run:
        reached |= run
        run = (run >> step) & through
    return reached


@lru_cache(maxsize=None)
def _bitboards(width: int, height: int) -> _Bitboards:
    return _Bitboards(width, height)


def _check_size(width: object, height: object) -> tuple[int, int]:
    try:
        w, h = operator.index(width), operator.index(height)  # type: ignore[arg-type]
    except TypeError:
        raise UnsupportedSizeError(
            f"Othello board sides must be integers, got {width!r}x{height!r}") from None
    for side in (w, h):
        if side % 2 or not MIN_SIZE <= side <= MAX_SIZE:
            raise UnsupportedSizeError(
                f"Othello needs an even board side from {MIN_SIZE} to {MAX_SIZE}, got {w}x{h}")
    return w, h


class ReferenceOthello(Game):
    """An Othello position and its history.

    `Othello(8)` is the standard game; `Othello(10, 6)` a 10-wide, 6-high board. Every even side
    from 4 to 26 is admitted. Beyond the `Game` interface: `from_diagram()` to set up a position,
    `disc_count()`, `flips(move)` (what a move would turn over: greedy players, GUIs),
    `unsafe_discs()` (what either side could turn over next) and `bitboards()`. The search's
    `winning_moves()` keeps the interface's default (none known): telling a move that ends the
    game needs both sides' move generation for every child.
    """

    name: ClassVar[str] = "othello"
    feature_names: ClassVar[tuple[str, ...]] = (
        "own", "opponent", "empty", "legal", "own_unsafe", "opponent_unsafe", "extra")
    #: 2: the unsafe-disc planes (`unsafe_discs`) joined own / opponent / empty / legal.
    feature_version: ClassVar[int] = 2
    RULES: ClassVar[tuple[str, ...]] = ("standard",)

    def __init__(self, width: int, height: int | None = None, *, rule: str = "standard") -> None:
        w, h = _check_size(width, width if height is None else height)
        if rule not in self.RULES:
            raise UnsupportedRuleError(
                f"unknown Othello rule {rule!r}; expected one of {', '.join(self.RULES)}")
        #: The rule set's name (Othello has one); the search compares it to reuse trees.
        self.rules = rule
        self.grid: Grid = grid(w, h)
        self._bb = _bitboards(w, h)
        self._set_position(*self._bb.start(), BLACK)

    @classmethod
    def from_diagram(cls, diagram: str, *, to_move: int = BLACK) -> ReferenceOthello:
        """A game starting from a text diagram in the format of `str(game)`: one line per row
        from the top, `X` black, `O` white, `.` empty, spaces ignored. The discs are the start
        of the history (`undo` stops there) and need not be reachable by play: for puzzles,
        tests and GUI set-up. GameError on a malformed diagram."""
        width, height, black, white = parse_diagram(diagram, to_move)
        game = cls(width, height)
        game._set_position(mask_of(black), mask_of(white), to_move)
        return game

    def _set_position(self, black: int, white: int, to_move: int) -> None:
        """Start a history at these discs."""
        bb = self._bb
        self._start = (black, white, to_move)
        self._to_move = to_move
        #: Discs of the side to move and of its opponent.
        self._own, self._opp = (black, white) if to_move == BLACK else (white, black)
        self._hash = bb.white_to_move_key if to_move == WHITE else 0
        for p in points_of(black):
            self._hash ^= bb.black_keys[p]
        for p in points_of(white):
            self._hash ^= bb.white_keys[p]
        #: Legal moves of the side to move (bit num_points: the forced pass); None until computed.
        self._legal: int | None = None
        self._moves: list[int] = []
        #: Per move played: (the mover, placed disc, flipped discs, legal mask and hash before the
        #: move).
        self._undo: list[tuple[int, int, int, int | None, int]] = []
        self._board: np.ndarray | None = None

    # -- state --------------------------------------------------------------------------------
    @property
    def board(self) -> np.ndarray:
        """Discs per point as read-only int8 `[num_points]`, built on demand from the bitboards."""
        if self._board is None:
            black, white = self.bitboards()
            bits = self._bb.unpack(black, white)[:, : self.num_points].astype(np.int8)
            board = bits[0] - bits[1]
            board.setflags(write=False)
            self._board = board
        return self._board

    @property
    def hash(self) -> int:
        return self._hash

    def bitboards(self) -> tuple[int, int]:
        """(black, white) discs as masks: bit `p` is set where point `p` holds such a disc."""
        if self._to_move == BLACK:
            return self._own, self._opp
        return self._opp, self._own

    def colors(self) -> list[int]:
        return [record[0] for record in self._undo]

    def start_position(self) -> tuple[np.ndarray, int]:
        black, white, to_move = self._start
        bits = self._bb.unpack(black, white)[:, : self.num_points].astype(np.int8)
        return bits[0] - bits[1], to_move

    def disc_count(self) -> tuple[int, int]:
        """(black discs, white discs)."""
        black, white = self.bitboards()
        return black.bit_count(), white.bit_count()

    def score(self) -> float:
        """Black's discs minus White's."""
        black, white = self.disc_count()
        return float(black - white)

    def flips(self, move: int) -> list[int]:
        """The points that `move` would turn over, ascending; none if it is no legal placement."""
        move = operator.index(move)
        if not 0 <= move < self.num_points or (self._own | self._opp) >> move & 1:
            return []
        return points_of(self._bb.flips(move, self._own, self._opp))

    def unsafe_discs(self) -> tuple[int, int]:
        """(own discs the opponent could turn over with its next placement, opponent discs the
        side to move can turn over with one of its placements now), as masks.

        Whose move it is does not matter to the first: it holds whatever the opponent could
        flip were it to move. These are the `own_unsafe` / `opponent_unsafe` feature planes: the
        graph network sums its neighbours' messages without knowing their direction, so it
        cannot follow the lines along which discs flip, and is told what they add up to."""
        own, opp = self._own, self._opp
        return self._bb.exposed(opp, own), self._bb.exposed(own, opp)

    # -- rules --------------------------------------------------------------------------------
    def _legal_mask(self) -> int:
        """Legal moves as a mask of num_points + 1 bits; the top bit is the forced pass."""
        legal = self._legal
        if legal is None:
            legal = self._bb.mobility(self._own, self._opp)
            if not legal and self._bb.mobility(self._opp, self._own):
                legal = 1 << self.num_points
            self._legal = legal
        return legal

    def legal_moves(self) -> np.ndarray:
        """The legal moves, ascending, as int64: the placements, or only `pass_move` when the side
        to move cannot place but its opponent can, or none once the game is over."""
        return np.array(points_of(self._legal_mask()), dtype=np.int64)

    def is_legal(self, move: int) -> bool:
        move = operator.index(move)
        return 0 <= move <= self.num_points and bool(self._legal_mask() >> move & 1)

    def play(self, move: int, color: int | None = None) -> None:
        """A colour that is not to move may place a disc too (GUI set-up): it must flip
        something, as always."""
        if color is not None and color != self._to_move:
            self._play_out_of_turn(move, color)
            return
        move = operator.index(move)
        n = self.num_points
        own, opp = self._own, self._opp
        if move == n:
            legal = self._legal_mask()
            if not legal >> n & 1:
                raise IllegalMoveError(move, "the game is over" if not legal
                                       else "a pass is legal only when no disc can be placed")
            placed = flips = 0
        else:
            if not 0 <= move < n:
                raise IllegalMoveError(move, f"off the board (points are 0..{n - 1}, pass is {n})")
            placed = 1 << move
            if (own | opp) & placed:
                raise IllegalMoveError(move, "the point is occupied")
            flips = self._bb.flips(move, own, opp)
            if not flips:
                raise IllegalMoveError(move, "the game is over" if not self._legal_mask()
                                       else "the disc would flip nothing")
        self._undo.append((self._to_move, placed, flips, self._legal, self._hash))
        self._moves.append(move)
        h = self._hash ^ self._bb.white_to_move_key
        if placed:
            h ^= self._bb.keys_of(self._to_move)[move]
            flip_keys = self._bb.flip_keys
            for p in points_of(flips):
                h ^= flip_keys[p]
        self._own, self._opp = opp ^ flips, own | placed | flips
        self._to_move = -self._to_move
        self._hash = h
        self._legal = None
        self._board = None

    def undo(self) -> None:
        if not self._undo:
            raise UndoError("no move to undo")
        self._undo_turn(self._undo[-1][0])
        mover, placed, flips, self._legal, self._hash = self._undo.pop()
        self._moves.pop()
        # The previous mover owns the opponent discs now, less the disc it placed and the flips.
        self._own, self._opp = self._opp ^ (placed | flips), self._own | flips
        self._to_move = mover
        self._board = None
        self._restore_turn()

    def _switch_turn(self) -> None:
        self._to_move = -self._to_move
        self._own, self._opp = self._opp, self._own
        self._hash ^= self._bb.white_to_move_key
        self._legal = None

    def is_over(self) -> bool:
        return not self._legal_mask()

    def winner(self) -> int | None:
        """BLACK or WHITE by disc count (empty points count for nobody), DRAW when equal; None
        while the game goes on."""
        if self._legal_mask():
            return None
        black, white = self.disc_count()
        return BLACK if black > white else WHITE if white > black else DRAW

    def encode(self, out: np.ndarray) -> None:
        """own / opponent / empty / legal / own_unsafe / opponent_unsafe per point (from the side
        to move's view); the extra row has `legal` for a forced pass and `extra` = 1."""
        n = self.num_points
        own, opp = self._own, self._opp
        planes = self._bb.unpack(own, opp, self._bb.full ^ (own | opp), self._legal_mask(),
                                 *self.unsafe_discs())
        out[:, :6] = planes.T  # the pass bit lands in the extra row; the other masks have none
        out[:n, 6] = 0.0
        out[n, 6] = 1.0

    def copy(self) -> ReferenceOthello:
        other = object.__new__(ReferenceOthello)
        other.__dict__.update(self.__dict__)
        other._moves = self._moves.copy()
        other._undo = self._undo.copy()
        return other
