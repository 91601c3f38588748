"""The pure-Python Go of saz before the rules moved into the compiled core (commit a48fb4d's
`engine/games/go.py`), kept as a slow reference for the differential test `tests/test_core_go.py`.

It runs standalone: the parts of the old `Game` base class, grid, bitboard and Zobrist helpers it
used come from `old_base.py` beside it (shared by the three references); only the exception types
are shared with the engine, so that both raise the same ones. Its Zobrist keys are the ones
`engine/games/zobrist.py` draws (the core is given those too), so hash *values* must match the
core's exactly.

Do not optimise it: its worth is being the old code, line for line where possible.
"""
from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import ClassVar

import numpy as np

from saz.engine.games.errors import (
    GameError,
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
    grid,
    mask_of,
    parse_diagram,
    points_of,
    zobrist_keys,
)


# -- the old engine/games/go.py from here on -------------------------------------------------------

MIN_SIZE = 2
MAX_SIZE = 25
#: The rule sets `Go` knows: Tromp-Taylor (area scoring, positional superko, no suicide).
RULES: tuple[str, ...] = ("tromp-taylor",)


@dataclass(frozen=True)
class GoRules:
    """The rules of one game: komi and the rule set; validated on construction."""

    #: Points added to White's area; finite and a multiple of 0.5 (an integer komi allows jigo).
    komi: float = 7.5
    rule: str = "tromp-taylor"

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise UnsupportedRuleError(
                f"unknown Go rule set {self.rule!r}; expected one of {', '.join(RULES)}")
        komi = self.komi
        if (not isinstance(komi, numbers.Real) or isinstance(komi, bool)
                or not math.isfinite(komi) or not float(2 * komi).is_integer()):
            raise UnsupportedRuleError(f"komi must be a finite multiple of 0.5, not {komi!r}")
        object.__setattr__(self, "komi", float(komi))


@dataclass(frozen=True, eq=False)
class _BitGeometry:
    """Everything about one board size that the bitboard code needs, built once per size."""

    width: int
    height: int
    num_points: int = field(init=False)
    #: Orthogonal neighbours of each point (tuples are fastest to loop over).
    neighbors: tuple[tuple[int, ...], ...] = field(init=False, repr=False)
    #: The same neighbours as one bitboard per point.
    neighbor_masks: tuple[int, ...] = field(init=False, repr=False)
    #: Every point; the points not in the first column; the points not in the last column.
    board: int = field(init=False, repr=False)
    not_first_column: int = field(init=False, repr=False)
    not_last_column: int = field(init=False, repr=False)
    #: Zobrist keys per point, indexed by colour: `keys[BLACK]`, `keys[WHITE]` (the last item).
    keys: tuple[tuple[int, ...], ...] = field(init=False, repr=False)
    #: The inverse of `keys`, by colour: key -> point.
    key_points: tuple[dict[int, int], ...] = field(init=False, repr=False)
    white_to_move_key: int = field(init=False, repr=False)
    #: Bytes that hold num_points + 1 bits (the points and the extra node).
    nbytes: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        g = grid(self.width, self.height)
        n = g.num_points
        board = (1 << n) - 1
        first_column = sum(1 << (y * self.width) for y in range(self.height))
        last_column = first_column << (self.width - 1)
        black, white, white_to_move = zobrist_keys(n)
        values = {
            "num_points": n,
            "neighbors": g.neighbors,
            "neighbor_masks": tuple(sum(1 << q for q in nbrs) for nbrs in g.neighbors),
            "board": board,
            "not_first_column": board & ~first_column,
            "not_last_column": board & ~last_column,
            # Index 0 (EMPTY) is unused; BLACK = 1 reads item 1, WHITE = -1 reads the last item.
            "keys": ((), black, white),
            "key_points": ({}, {k: p for p, k in enumerate(black)},
                           {k: p for p, k in enumerate(white)}),
            "white_to_move_key": white_to_move,
            "nbytes": (n + 8) // 8,
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def dilate(self, mask: int) -> int:
        """The points orthogonally next to some point of `mask` (on the board)."""
        w = self.width
        return (((mask << 1) & self.not_first_column) | ((mask >> 1) & self.not_last_column)
                | ((mask << w) & self.board) | (mask >> w))

    def flood(self, seeds: int, within: int) -> int:
        """`seeds` grown through the points of `within` until nothing more is reachable."""
        region = seeds
        while True:
            grown = region | (self.dilate(region) & within)
            if grown == region:
                return region
            region = grown

    def hash_of(self, mask: int, color: int) -> int:
        """The XOR of the keys of `color` stones on the points of `mask`."""
        keys = self.keys[color]
        h = 0
        while mask:
            low = mask & -mask
            h ^= keys[low.bit_length() - 1]
            mask ^= low
        return h

    def unpack(self, *masks: int) -> np.ndarray:
        """Bitboards as a uint8 array [len(masks), num_points + 1] of 0/1 (extra node last)."""
        raw = b"".join(m.to_bytes(self.nbytes, "little") for m in masks)
        bits = np.unpackbits(np.frombuffer(raw, dtype=np.uint8), bitorder="little")
        return bits.reshape(len(masks), -1)[:, : self.num_points + 1]


@cache
def _geometry(width: int, height: int) -> _BitGeometry:
    return _BitGeometry(width, height)


def fixed_handicap_points(size: int, stones: int) -> list[int]:
    """The GTP fixed handicap points (GTP v2 section 4.1.1) of a size x size board, in the spec's
    order, as point indices.

    The 19x19 table is D4 Q16 D16 Q4, then K10 for 5 and 7, D10 Q10 for 6 and up, K4 K16 for 8 and
    up, K10 last for 9. Smaller boards follow the same pattern (GNU Go, the reference
    implementation): corner stones on the 3-3 points below 13x13 and on the 4-4 points from 13x13
    on; 2..9 stones on odd boards from 9x9 on, 2..4 on 7x7 and on even boards, none below 7x7.
    GameError for any other count.
    """
    if size < 7:
        limit = 0
    elif size % 2 == 1 and size >= 9:
        limit = 9
    else:
        limit = 4
    if not 2 <= stones <= limit:
        allowed = f"2..{limit} stones" if limit else "no fixed handicap"
        raise GameError(f"fixed handicap of {stones} stones on {size}x{size}: "
                        f"this size allows {allowed}")
    low = 3 if size >= 13 else 2
    high = size - 1 - low
    mid = size // 2
    # (x, y) from the top-left: D4 is column low, row low from the bottom, i.e. y = high.
    d4, q16, d16, q4 = (low, high), (high, low), (low, low), (high, high)
    d10, q10, k4, k16, k10 = (low, mid), (high, mid), (mid, high), (mid, low), (mid, mid)
    corners = [d4, q16, d16, q4][:min(stones, 4)]
    sides = [d10, q10, k4, k16][:stones - 4 - stones % 2] if stones >= 6 else []
    centre = [k10] if stones >= 5 and stones % 2 == 1 else []
    return [y * size + x for x, y in corners + sides + centre]


#: What `_analyse` finds out about a legal stone move: the own chains it joins, the opponent chains
#: next to it, those it captures, the captured stones, and the stone hash and stone count after it.
_Effect = tuple[list[int], list[int], list[int], int, int, int]


class ReferenceGo(Game):
    """A Go position and its history under Tromp-Taylor rules, on any board from 2x2 to 25x25.

    Handicap stones (`place_fixed_handicap`, `place_free_handicap`) and the stones of a diagram
    (`from_diagram`) are part of the starting position, not moves: `moves` does not list them,
    `undo` stops at them, and superko counts that position as the first of the game.
    """

    name = "go"
    feature_names = (
        "own", "opponent", "empty", "legal", "own_atari", "opponent_atari",
        "own_two_liberties", "opponent_two_liberties", "extra", "komi",
    )
    feature_version = 1
    RULES: ClassVar[tuple[str, ...]] = RULES

    def __init__(self, width: int, height: int | None = None, *, komi: float = 7.5,
                 rule: str = "tromp-taylor") -> None:
        height = width if height is None else height
        for side in (width, height):
            if (not isinstance(side, numbers.Integral) or isinstance(side, bool)
                    or not MIN_SIZE <= side <= MAX_SIZE):
                raise UnsupportedSizeError(
                    f"Go board {width}x{height} is not supported: each side must be "
                    f"{MIN_SIZE}..{MAX_SIZE}")
        self.rules = GoRules(komi, rule)
        self.grid = grid(int(width), int(height))
        self._geo = _geometry(int(width), int(height))
        self._reset(0, 0, BLACK)

    def _reset(self, black: int, white: int, to_move: int) -> None:
        """Start the game from the position with the given stones (bitboards), with no history.
        GameError, before anything changes, if a chain has no liberty."""
        geo = self._geo
        n = geo.num_points
        empty = geo.board & ~(black | white)
        color, chain, stones, libs = [EMPTY] * n, list(range(n)), [0] * n, [0] * n
        short = []
        for me, mine in ((BLACK, black), (WHITE, white)):
            rest = mine
            while rest:
                root = (rest & -rest).bit_length() - 1
                chain_stones = geo.flood(1 << root, mine)
                liberties = geo.dilate(chain_stones) & empty
                if not liberties:
                    raise GameError(f"the {'black' if me == BLACK else 'white'} chain at "
                                    f"point {root} has no liberty")
                for p in points_of(chain_stones):
                    color[p], chain[p] = me, root
                stones[root], libs[root] = chain_stones, liberties
                if liberties.bit_count() <= 2:
                    short.append(root)
                rest ^= chain_stones
        #: The start of the history: (black, white, side to move).
        self._start = (black, white, to_move)
        self._color, self._chain, self._stones, self._libs = color, chain, stones, libs
        #: Roots of the chains with one or two liberties.
        self._short = frozenset(short)
        #: Bitboards indexed by colour: [EMPTY], [BLACK], [WHITE] (the last item).
        self._occupancy = (empty, black, white)
        self._stone_hash = geo.hash_of(black, BLACK) ^ geo.hash_of(white, WHITE)
        self._to_move = to_move
        self._passes = 0
        self._captures = (0, 0, 0)  # stones captured, indexed by the capturing colour
        self._moves: list[int] = []
        self._undo_stack: list[tuple] = []
        self._legal: int | None = None  # the legal points, once computed for this position
        self._scored: tuple[tuple[int, int, int], dict[int, int]] | None = None  # see _areas
        #: Earlier positions (this one included) as stone hashes, keyed by their stone count.
        self._seen: dict[int, tuple[int, ...]] = {(black | white).bit_count(): (self._stone_hash,)}

    # -- construction from a position -------------------------------------------------------------
    @classmethod
    def from_diagram(cls, diagram: str, *, to_move: int = BLACK, komi: float = 7.5,
                     rule: str = "tromp-taylor") -> ReferenceGo:
        """A game starting from a text diagram: one line per row from the top, `X` black, `O`
        white, `.` empty, spaces ignored (the format of `str(game)`). The diagram's stones are
        the starting position, as with SGF setup stones. GameError on a malformed diagram or a
        chain without liberties."""
        width, height, black, white = parse_diagram(diagram, to_move)
        game = cls(width, height, komi=komi, rule=rule)
        game._reset(mask_of(black), mask_of(white), to_move)
        return game

    def place_fixed_handicap(self, stones: int) -> list[int]:
        """Put `stones` black handicap stones on the GTP fixed points (`fixed_handicap_points`);
        White moves next. Square boards only, on an empty board before the first move."""
        if self.width != self.height:
            raise GameError(f"fixed handicap is defined for square boards, not "
                            f"{self.width}x{self.height}")
        points = fixed_handicap_points(self.width, stones)
        self._place_handicap(points)
        return points

    def place_free_handicap(self, points: Sequence[int]) -> None:
        """Put black handicap stones on the given points (GTP `set_free_handicap`): at least 2,
        at most num_points - 1, distinct, on the board; White moves next. On an empty board
        before the first move."""
        points = [operator.index(p) for p in points]
        if not 2 <= len(points) < self.num_points:
            raise GameError(f"free handicap needs 2..{self.num_points - 1} stones, "
                            f"not {len(points)}")
        if len(set(points)) != len(points):
            raise GameError("free handicap points must be distinct")
        off = [p for p in points if not 0 <= p < self.num_points]
        if off:
            raise GameError(f"free handicap points off the board: {off}")
        self._place_handicap(points)

    def _place_handicap(self, points: Sequence[int]) -> None:
        if self._moves or self._occupancy[BLACK] | self._occupancy[WHITE]:
            raise GameError("handicap stones go on an empty board before the first move")
        self._reset(mask_of(points), 0, WHITE)

    # -- state ------------------------------------------------------------------------------------
    @property
    def board(self) -> np.ndarray:
        occupancy = self._occupancy
        bits = self._geo.unpack(occupancy[BLACK], occupancy[WHITE])[:, :-1].view(np.int8)
        board = bits[0] - bits[1]
        board.setflags(write=False)
        return board

    @property
    def hash(self) -> int:
        if self._to_move == WHITE:
            return self._stone_hash ^ self._geo.white_to_move_key
        return self._stone_hash

    def colors(self) -> list[int]:
        return [record[1] for record in self._undo_stack]

    def start_position(self) -> tuple[np.ndarray, int]:
        black, white, to_move = self._start
        bits = self._geo.unpack(black, white)[:, :-1].view(np.int8)
        return bits[0] - bits[1], to_move

    def captures(self, color: int) -> int:
        """How many stones `color` has captured so far."""
        return self._captures[color]

    def liberties(self, point: int) -> int:
        """The number of liberties of the chain on `point`; 0 for an empty point."""
        if not 0 <= point < self._geo.num_points:
            raise GameError(f"point {point} is off the board")
        if self._color[point] == EMPTY:
            return 0
        return self._libs[self._chain[point]].bit_count()

    # -- rules ------------------------------------------------------------------------------------
    def is_over(self) -> bool:
        return self._passes >= 2

    def legal_moves(self) -> np.ndarray:
        if self._passes >= 2:
            return np.empty(0, dtype=np.int64)
        n = self._geo.num_points
        mask = self._legal_mask() | (1 << n)
        bits = np.unpackbits(np.frombuffer(mask.to_bytes(self._geo.nbytes, "little"),
                                           dtype=np.uint8), count=n + 1, bitorder="little")
        return bits.nonzero()[0]

    def is_legal(self, move: int) -> bool:
        try:
            p = operator.index(move)
        except TypeError:
            return False
        return p == self._geo.num_points or not isinstance(self._analyse(p), str)

    def _legal_mask(self) -> int:
        """The legal points for the side to move as a bitboard (pass not included); cached until
        the position changes.

        An empty point is legal, superko aside, when a neighbour is empty, or is our stone in a
        chain with another liberty (a chain not in atari), or when it captures (it is the single
        liberty of an opponent chain in atari): one dilation of (empty points + our stones outside
        atari chains), plus the capturing points.
        """
        if self._legal is not None:
            return self._legal
        geo = self._geo
        me = self._to_move
        color, libs, stones = self._color, self._libs, self._stones
        weak = 0  # our stones in atari: they give no liberty to a stone played next to them
        captures: dict[int, int] = {}  # a capturing point's bit -> the stones it captures
        for root in self._short:
            if libs[root] & (libs[root] - 1):
                continue  # two liberties
            if color[root] == me:
                weak |= stones[root]
            else:
                bit = libs[root]
                captures[bit] = captures.get(bit, 0) | stones[root]
        empty = self._occupancy[EMPTY]
        safe = geo.dilate(empty | (self._occupancy[me] & ~weak))
        for bit in captures:
            safe |= bit
        legal = empty & safe
        # Positional superko, for the non-capturing moves (one stone more than now) and then for
        # each capturing move.
        seen = self._seen
        count = geo.num_points - empty.bit_count()
        later = seen.get(count + 1)
        if later:
            key_points = geo.key_points[me]
            for h in later:
                p = key_points.get(h ^ self._stone_hash)
                if p is not None and (1 << p) not in captures:
                    legal &= ~(1 << p)
        if captures:
            keys = geo.keys[me]
            for bit, gone in captures.items():
                taken = gone.bit_count()
                same_size = seen.get(count + 1 - taken, ())
                if taken == 1:
                    # The stone count stays; the last position of that size is the current one,
                    # which cannot recur (the capturing point is empty now).
                    same_size = same_size[:-1]
                if same_size:
                    h = self._stone_hash ^ keys[bit.bit_length() - 1] ^ geo.hash_of(gone, -me)
                    if h in same_size:
                        legal &= ~bit
        self._legal = legal
        return legal

    def _analyse(self, p: int) -> _Effect | str:
        """What playing a stone on point `p` would do for the side to move, or why it is illegal."""
        geo = self._geo
        if not 0 <= p < geo.num_points:
            return "off the board"
        color = self._color
        if color[p] != EMPTY:
            return "occupied point"
        me = self._to_move
        chain, libs = self._chain, self._libs
        bit = 1 << p
        own: list[int] = []
        enemies: list[int] = []
        breathes = False
        for q in geo.neighbors[p]:
            c = color[q]
            if c == EMPTY:
                breathes = True
            elif c == me:
                root = chain[q]
                if root not in own:
                    own.append(root)
                    breathes = breathes or libs[root] != bit
            else:
                root = chain[q]
                if root not in enemies:
                    enemies.append(root)
        captured = [root for root in enemies if libs[root] == bit]
        if not breathes and not captured:
            return "suicide"
        stone_hash = self._stone_hash ^ geo.keys[me][p]
        count = geo.num_points - self._occupancy[EMPTY].bit_count() + 1
        gone = 0
        if captured:
            for root in captured:
                gone |= self._stones[root]
            count -= gone.bit_count()
            stone_hash ^= geo.hash_of(gone, -me)
        if stone_hash in self._seen.get(count, ()):
            return "positional superko: the position would repeat"
        return own, enemies, captured, gone, stone_hash, count

    def play(self, move: int, color: int | None = None) -> None:
        """Two passes end the game, but a controller may play on (a dispute, a cleanup phase):
        a stone after them is played as usual, and the game goes on from there."""
        if color is not None and color != self._to_move:
            self._play_out_of_turn(move, color)
            return
        p = operator.index(move)
        if p == self._geo.num_points:
            record = (p, self._to_move, self._occupancy, self._stone_hash, self._short,
                      self._captures, self._passes, (), (), ())
            self._passes += 1
        else:
            effect = self._analyse(p)
            if isinstance(effect, str):
                raise IllegalMoveError(p, effect)
            record = self._place(p, effect)
        self._undo_stack.append(record)
        self._to_move = -self._to_move
        self._moves.append(p)
        self._legal = None

    def _place(self, p: int, effect: _Effect) -> tuple:
        """Put a stone of the side to move on `p` with the effect `_analyse` found; returns the
        undo record: (p, the mover, the scalars it replaces, journal, merged roots, captured
        roots)."""
        own, enemies, captured, gone, stone_hash, count = effect
        geo = self._geo
        me = self._to_move
        color, chain, stones, libs = self._color, self._chain, self._stones, self._libs
        occupancy, short, captures = self._occupancy, self._short, self._captures
        record_head = (p, me, occupancy, self._stone_hash, short, captures, self._passes)
        bit = 1 << p
        empty = occupancy[EMPTY]
        #: (root, stones, liberties) of every chain slot before a write, in write order.
        journal: list[tuple[int, int, int]] = []
        color[p] = me
        for root in enemies:
            if root not in captured:
                journal.append((root, stones[root], libs[root]))
                libs[root] ^= bit
        # The new stone and the chains it touches become one chain, rooted at the largest.
        root = p
        if own:
            root = own[0] if len(own) == 1 else max(own, key=lambda r: stones[r].bit_count())
        journal.append((root, stones[root], libs[root]))
        new_stones, new_libs = bit, geo.neighbor_masks[p] & empty
        for r in own:
            new_stones |= stones[r]
            new_libs |= libs[r]
        stones[root], libs[root] = new_stones, new_libs & ~bit
        chain[p] = root
        merged = [r for r in own if r != root]
        for r in merged:
            for q in points_of(stones[r]):
                chain[q] = root
        # Captured stones leave the board; each becomes a liberty of our chains next to it.
        if captured:
            for q in points_of(gone):
                color[q] = EMPTY
                for nb in geo.neighbors[q]:
                    if color[nb] == me:
                        r = chain[nb]
                        journal.append((r, stones[r], libs[r]))
                        libs[r] |= 1 << q
            taken = gone.bit_count()
            if me == BLACK:
                captures = (0, captures[BLACK] + taken, captures[WHITE])
            else:
                captures = (0, captures[BLACK], captures[WHITE] + taken)
            self._captures = captures
        black, white = occupancy[BLACK], occupancy[WHITE]
        if me == BLACK:
            black, white = black | bit, white ^ gone
        else:
            black, white = black ^ gone, white | bit
        self._occupancy = (empty ^ bit | gone, black, white)
        # Short of liberties: forget the chains that changed or vanished, re-add changed ones.
        touched = {entry[0] for entry in journal}
        fresh = [r for r in touched if libs[r].bit_count() <= 2]
        if short:
            short = short.difference(touched, own, captured)
            if fresh:
                short = short.union(fresh)
        elif fresh:
            short = frozenset(fresh)
        self._short = short
        self._stone_hash = stone_hash
        self._seen[count] = (*self._seen.get(count, ()), stone_hash)
        self._passes = 0
        return (*record_head, journal, merged, captured)

    def undo(self) -> None:
        if not self._undo_stack:
            raise UndoError("no move to undo")
        (p, me, occupancy, stone_hash, short, captures, passes,
         journal, merged, captured) = self._undo_stack.pop()
        self._moves.pop()
        self._to_move = me
        self._legal = None
        if p != self._geo.num_points:
            count = self._geo.num_points - self._occupancy[EMPTY].bit_count()
            same_size = self._seen[count][:-1]
            if same_size:
                self._seen[count] = same_size
            else:
                del self._seen[count]
            color, chain, stones, libs = self._color, self._chain, self._stones, self._libs
            color[p] = EMPTY
            for root, old_stones, old_libs in reversed(journal):
                stones[root], libs[root] = old_stones, old_libs
            for root in merged:
                for q in points_of(stones[root]):
                    chain[q] = root
            for root in captured:
                for q in points_of(stones[root]):
                    color[q] = -me
                    chain[q] = root
        self._occupancy, self._stone_hash, self._short = occupancy, stone_hash, short
        self._captures, self._passes = captures, passes
        self._restore_turn()

    def _switch_turn(self) -> None:
        self._to_move = -self._to_move
        self._legal = None

    def continued(self) -> ReferenceGo | None:
        """After two passes: a copy in which they no longer end the game (the controller plays
        on); None while the game goes on."""
        if self._passes < 2:
            return None
        game = self.copy()
        game._passes = 0
        game._legal = None
        return game

    def with_rules(self, **changes: object) -> ReferenceGo:
        """Komi and rule set change how the game is scored, not what was legal: the position,
        its setup stones and its history stay as they are."""
        unknown = set(changes) - {"komi", "rule"}
        if unknown:
            raise UnsupportedRuleError(f"Go has no rule parameters {', '.join(sorted(unknown))}")
        game = self.copy()
        game.rules = replace(self.rules, **changes)  # type: ignore[arg-type]
        return game

    # -- end of the game --------------------------------------------------------------------------
    def area(self, color: int) -> int:
        """Tromp-Taylor area of `color`: its stones plus the empty points that reach only it."""
        return self._areas()[color]

    def score(self) -> float:
        """Black's area minus White's area minus komi (positive: Black is ahead)."""
        areas = self._areas()
        return areas[BLACK] - areas[WHITE] - self.rules.komi

    def _areas(self) -> dict[int, int]:
        """Both areas, from one flood per colour. Remembered for the stones they were counted on:
        the search scores a position after a pass and again after the second pass, on the same
        stones, and each flood takes up to a board's diameter of dilations."""
        occupancy = self._occupancy
        cached = self._scored
        if cached is not None and cached[0] is occupancy:
            return cached[1]
        empty = occupancy[EMPTY]
        reach = {color: self._geo.flood(occupancy[color], occupancy[color] | empty) & empty
                 for color in (BLACK, WHITE)}
        areas = {color: occupancy[color].bit_count() + (reach[color] & ~reach[-color]).bit_count()
                 for color in (BLACK, WHITE)}
        self._scored = (occupancy, areas)
        return areas

    def winner(self) -> int | None:
        if self._passes < 2:
            return None
        score = self.score()
        return BLACK if score > 0 else WHITE if score < 0 else DRAW

    def winning_moves(self) -> list[int]:
        """After the opponent's pass, passing ends the game: it wins if the score favours us."""
        if self._passes == 1 and self.score() * self._to_move > 0:
            return [self._geo.num_points]
        return []

    # -- the network's view -----------------------------------------------------------------------
    def encode(self, out: np.ndarray) -> None:
        geo = self._geo
        n = geo.num_points
        me = self._to_move
        occupancy = self._occupancy
        mine, theirs = occupancy[me], occupancy[-me]
        extra = 1 << n
        legal = 0 if self._passes >= 2 else self._legal_mask() | extra
        one = two = 0  # stones of chains with one liberty, with two liberties
        stones, libs = self._stones, self._libs
        for root in self._short:
            if libs[root] & (libs[root] - 1):
                two |= stones[root]
            else:
                one |= stones[root]
        out[:, :9] = geo.unpack(mine, theirs, occupancy[EMPTY], legal, one & mine, one & theirs,
                                two & mine, two & theirs, extra).T
        out[:, 9] = 0.0
        # Komi helps White: positive when White is to move.
        out[n, 9] = -me * self.rules.komi / n
        # Features version 2: the line planes, a point k-1 steps from the nearest edge in line_k
        # (k = 1..4), nothing further in or on the extra node.
        out[:, 10:14] = 0.0
        width, height = self.width, self.height
        for p in range(n):
            x, y = p % width, p // width
            steps = min(x, y, width - 1 - x, height - 1 - y)
            if steps < 4:
                out[p, 10 + steps] = 1.0

    # -- copies -----------------------------------------------------------------------------------
    def copy(self) -> ReferenceGo:
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new._color = self._color[:]
        new._chain = self._chain[:]
        new._stones = self._stones[:]
        new._libs = self._libs[:]
        new._moves = self._moves[:]
        new._undo_stack = self._undo_stack[:]
        new._seen = self._seen.copy()
        return new

    def __repr__(self) -> str:
        return (f"<ReferenceGo {self.width}x{self.height} komi={self.rules.komi:g} "
                f"moves={len(self._moves)}>")
