"""Gomoku on any board from 5x5 to 32x32: freestyle, exact-five and renju rules.

Black moves first; players alternate placing a stone on an empty point, and there is no pass. A
line of five of one's own stones (row, column or diagonal) made by the last move wins; a full
board without one is a draw.

What counts as a winning line is a `GomokuRule`: freestyle lets six or more in a row win, exact
five does not (an overline is just stones, and the game goes on). Renju (the RIF rules, Gomocup's
`rule 4`) lets White's overline win and forbids Black three shapes: a double three, a double four
and an overline, unless the same stone makes five. A three counts only if it can become a straight
four on a point that is not itself forbidden (a "false" three does not). Black's move on a
forbidden point is illegal, so White wins a renju game also by a four whose only block is
forbidden to Black.

The rules, the Zobrist hash, the tactics (`winning_moves`, `forced_moves`, `wins_if_played`), the
forbidden points (`forbidden`), the threat-space search (`threat_win`, `threat_defences`) and
the node features (`encode`, `threats`, `shapes`) live in the compiled core,
`engine/core/gomoku.cpp` (`saz.engine._core.GomokuPosition`); this module is the typed layer
over it: argument checks with their error messages, the rule objects, and the history that
`Game` keeps.
"""
from __future__ import annotations

import operator
from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from types import MappingProxyType
from typing import ClassVar, cast

import numpy as np

from saz.engine._core import GomokuPosition
from saz.engine._core import Position as CorePosition
from saz.engine.games.base import BLACK, DRAW, WHITE, GameInfo, Outcome, Termination
from saz.engine.games.capabilities import (
    DEFAULT_THREAT_NODES,
    SOLVED,
    ThreatSearching,
    node_budget,
)
from saz.engine.games.errors import IllegalMoveError, UnsupportedRuleError, UnsupportedSizeError
from saz.engine.games.grid import Grid, grid, line_walks

#: Smallest and largest side (the Gomocup protocol and GUIs stop at 32).
MIN_SIZE = 5
MAX_SIZE = 32
#: Stones in a row that win.
FIVE = 5
#: The shape planes (`Gomoku.shapes`), in order, for each side: what one stone on an empty point
#: would make across the four directions.
SHAPES = ("open_four", "double_four", "four_three", "open_three", "double_three")
#: A game lasts about this many plies whatever the board's size: the mean of the 1,411 match
#: games against AIWine at 15x15 and 20x20 (median 27, mean 31, 90% within 45) ...
_TYPICAL_LENGTH = 32
#: ... and one that has outlasted it still gets this many: the margin that keeps a long game's
#: clock safe (tests/test_clock.py plays 80-ply games whose every move runs to its hard limit;
#: after a typical length of 32, a tail of 24 loses one of them on time).
_LENGTH_TAIL = 28
#: Line directions (dx, dy): along a row, a column and both diagonals.
_AXES = ((1, 0), (0, 1), (1, 1), (1, -1))
#: How far a run is followed on each side of a point: four stones on one side already make five.
_REACH = 4


@dataclass(frozen=True)
class GomokuRule:
    """What a line of stones through the last move is worth: the part of the rules that varies."""

    name: str
    #: The colours whose six or more in a row win (freestyle: both; exact five: neither;
    #: renju: White, whose overline wins, while Black's is forbidden).
    overline_winners: frozenset[int]
    #: Whether Black may not play a double three, a double four or an overline (renju).
    black_forbidden: bool = False

    def wins(self, length: int, color: int) -> bool:
        """Whether `length` stones of `color` in a row, through the move just played, win."""
        return length == FIVE or (length > FIVE and color in self.overline_winners)


FREESTYLE = GomokuRule("freestyle", frozenset((BLACK, WHITE)))
EXACT_FIVE = GomokuRule("exact-five", frozenset())
RENJU = GomokuRule("renju", frozenset((WHITE,)), black_forbidden=True)
#: The rules by name, as the constructor's `rule` argument takes them.
RULES_BY_NAME: dict[str, GomokuRule] = {r.name: r for r in (FREESTYLE, EXACT_FIVE, RENJU)}


class Forbidden(IntEnum):
    """Why renju forbids Black a point (the core's codes)."""

    NOT_FORBIDDEN = 0
    DOUBLE_THREE = 1
    DOUBLE_FOUR = 2
    OVERLINE = 3


def _lone(stones: np.ndarray) -> np.ndarray:
    """`[B, H, W]` bool: the stones of `stones [B, H, W]` with no other stone within `FIVE - 1`
    points in any direction (counted over the square round each, from an integral image)."""
    reach = FIVE - 1
    side = 2 * reach + 1
    count = np.pad(stones.astype(np.int32), ((0, 0), (reach + 1, reach), (reach + 1, reach)))
    count = count.cumsum(axis=1).cumsum(axis=2)
    near = (count[:, side:, side:] - count[:, :-side, side:] - count[:, side:, :-side]
            + count[:, :-side, :-side])
    return stones & (near == 1)


def _span(occupied: np.ndarray, margin: int, min_side: int,
          full: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row of `occupied [B, full]` (rows with none give junk), the first and last index of
    the window round its occupied span: `margin` either side, widened evenly to `min_side`,
    then shifted (not cut) to lie within `0..full-1` where it fits."""
    first = occupied.argmax(axis=1)
    last = full - 1 - occupied[:, ::-1].argmax(axis=1)
    lo, hi = first - margin, last + margin
    short = np.maximum(min_side - (hi - lo + 1), 0)
    lo, hi = lo - short // 2, hi + (short - short // 2)
    hi = hi - np.minimum(lo, 0)  # off the low edge: slide up
    lo = np.maximum(lo, 0)
    lo = lo - np.maximum(hi - (full - 1), 0)  # off the high edge: slide down
    return np.maximum(lo, 0), np.minimum(hi, full - 1)


def _check_size(width: object, height: object) -> tuple[int, int]:
    try:
        # Anything may arrive here; TypeError below says it is not a whole number.
        w, h = operator.index(width), operator.index(height)  # type: ignore[arg-type]  # any object
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
        raise UnsupportedRuleError(
            f"unknown Gomoku rule {name!r}; expected one of {', '.join(RULES_BY_NAME)}")
    return rule


class Gomoku(ThreatSearching):
    """A Gomoku position and its history.

    `Gomoku(15)` is freestyle on 15x15; `Gomoku(20, rule="exact-five")`; `Gomoku(12, 9)` a
    12-wide, 9-high board. Beyond the `Game` interface: `rules`, `winning_line()`,
    `wins_if_played()`, `forbidden()` and the feature planes `threats()`.
    """

    name: ClassVar[str] = "gomoku"
    info: ClassVar[GameInfo] = GameInfo("Gomoku", sgf_game_type=4, default_size=15,
                                        engine_protocol="gomocup", rule_options=("rule",))
    feature_names: ClassVar[tuple[str, ...]] = (
        "own", "opponent", "empty", "own_five", "own_four", "own_three",
        "opponent_five", "opponent_four", "opponent_three", "extra", "black_forbidden",
        *(f"{who}_{shape}" for who in ("own", "opponent") for shape in SHAPES))
    #: 2: the threat planes (`threats`) joined own / opponent / empty. 3: Black's forbidden
    #: points under renju (zero under the other rules), after the extra node's marker. 4: the
    #: shape planes (`shapes`) appended, so a version-3 network reads the first 11 unchanged.
    feature_version: ClassVar[int] = 4
    feature_prefixes: ClassVar[Mapping[int, int]] = MappingProxyType({3: 11})
    RULES: ClassVar[tuple[str, ...]] = tuple(RULES_BY_NAME)
    #: A group per line segment a side could still make five in: along each row, column and
    #: diagonal, a maximal run of points the other side has no stone on, for each side; its
    #: members that side's stones and the empty points. Its length and its stones are what a
    #: threat needs, and a network sees the whole run in one hop however long it is.
    group_roles: ClassVar[tuple[str, ...]] = (
        "own_stones", "own_empty", "opponent_stones", "opponent_empty")

    _core: GomokuPosition
    #: The core's stones as a read-only view that follows the game (`board`).
    _cells: np.ndarray

    def __init__(self, width: int, height: int | None = None, *, rule: str = "freestyle") -> None:
        w, h = _check_size(width, width if height is None else height)
        self.rules: GomokuRule = _rule_named(rule)
        self.grid: Grid = grid(w, h)
        self._attach(GomokuPosition(w, h, self.rules.name))

    @classmethod
    def group_members(cls, x: np.ndarray, width: int, height: int) -> np.ndarray:
        """Each point's segments from planes 0 `own` and 1 `opponent` of `x`
        (`Game.group_members`), `[B, points, 8]`: an empty point is in eight (each side's, in
        four directions), a stone in its side's four. Numbered side to move first, then by
        direction, then along the board's walk (`grid.line_walks`)."""
        points = width * height
        own, opponent = x[:, :points, 0] > 0.5, x[:, :points, 1] > 0.5
        batch = x.shape[0]
        roles = len(cls.group_roles)
        members = np.empty((batch, points, 8), dtype=np.int64)
        base = np.zeros((batch, 1), dtype=np.int64)  # segments numbered so far, per position
        column = 0
        for side, (mine, theirs) in enumerate(((own, opponent), (opponent, own))):
            for order, begins in line_walks(width, height):
                blocked = theirs[:, order]
                member = ~blocked
                starts = member.copy()
                starts[:, 1:] &= begins[1:] | blocked[:, :-1]
                segment = base + np.cumsum(starts, axis=1) - 1
                base += starts.sum(axis=1, keepdims=True)
                role = 2 * side + np.where(mine[:, order], 0, 1)
                members[:, order, column] = np.where(member, segment * roles + role, -1)
                column += 1
        # Ascending with the padding last: an opponent stone's four entries are the last
        # columns (its side's), moved to the front; an own stone's are already first.
        out = members.astype(np.int32)
        out[opponent, :4] = out[opponent, 4:]
        out[opponent, 4:] = -1
        return out

    def _attach(self, core: CorePosition) -> None:
        super()._attach(core)
        # Every core a Gomoku holds is one it made: a GomokuPosition or a copy of one.
        self._cells = self._view(cast(GomokuPosition, core))

    @staticmethod
    def _view(core: GomokuPosition) -> np.ndarray:
        view = core.cells()
        view.setflags(write=False)
        return view

    @property
    def board(self) -> np.ndarray:
        """Stones per point as a read-only int8 `[num_points]` view that follows the game."""
        return self._cells

    def start_position(self) -> tuple[np.ndarray, int]:
        """Gomoku games start on the empty board, Black to move."""
        return np.zeros(self.num_points, dtype=np.int8), BLACK

    def copy(self) -> Gomoku:
        other = super().copy()
        other._cells = self._view(other._core)
        return other

    # -- rules --------------------------------------------------------------------------------
    def with_rules(self, **changes: object) -> Gomoku:
        """The same stones under another rule (`rule=`): the moves are replayed, each by its
        own colour, so that the new rule decides which line wins; GameError if one of them
        came after a win under it."""
        unknown = set(changes) - {"rule"}
        if unknown:
            raise UnsupportedRuleError(
                f"Gomoku has no rule parameters {', '.join(sorted(unknown))}")
        rule = changes.get("rule", self.rules.name)
        game = Gomoku(self.width, self.height, rule=rule)  # type: ignore[arg-type]  # checks it
        for move, color in zip(self._moves, self._colors):
            game.play(move, color)
        game.set_to_move(self.to_move)
        return game

    @classmethod
    def rules_from_record(cls, komi: float | None, rules: str | None) -> dict[str, object]:
        """The rule the record's RU names (UnsupportedRuleError, when the game is made, for a
        rule saz does not play); freestyle where it names none."""
        return {"rule": rules.strip().lower()} if rules else {}

    @property
    def rules_text(self) -> str:
        return self.rules.name

    def winning_line(self) -> list[int] | None:
        """The points of the winning run (five, or more under freestyle), ascending, which is
        also their order along the line; None unless the game was won."""
        return self._core.winning_line()

    def wins_if_played(self, move: int, color: int) -> bool:
        """Whether a stone of `color` on the empty point `move` would win under this game's rule.

        Reads only the four lines through `move`, whoever is to move, so the search can find its
        own immediate wins and the opponent's that it must block. IllegalMoveError unless `move`
        is an empty point; ValueError for a colour other than BLACK or WHITE."""
        move = operator.index(move)
        if not 0 <= move < self.num_points:
            raise IllegalMoveError(move, "not an empty point of the board")
        if color != BLACK and color != WHITE:
            if self._cells[move] != 0:  # the point's error comes first, as it always has
                raise IllegalMoveError(move, "not an empty point of the board")
            raise ValueError(f"color must be BLACK (1) or WHITE (-1), got {color!r}")
        return self._core.wins_if_played(move, int(color))

    def forbidden(self, move: int) -> Forbidden:
        """Why renju forbids Black the empty point `move` now, whoever is to move
        (`Forbidden.NOT_FORBIDDEN` under the other rules and where it may play);
        IllegalMoveError unless `move` is an empty point."""
        move = operator.index(move)
        if not 0 <= move < self.num_points:
            raise IllegalMoveError(move, "not an empty point of the board")
        return Forbidden(self._core.forbidden(move))

    # -- the threat-space search --------------------------------------------------------------
    def threat_win(self, max_nodes: int = DEFAULT_THREAT_NODES, *, threes: bool = True
                   ) -> int | None:
        """The search runs in the compiled core, without the GIL."""
        status, move, _, _ = self._core.prove_threats(node_budget(max_nodes), threes)
        return move if status == SOLVED else None

    def threat_defences(self, max_nodes: int = DEFAULT_THREAT_NODES) -> list[int] | None:
        """Each defence is checked by searching again after it."""
        return self._core.threat_defences(node_budget(max_nodes))

    # -- the network's view -------------------------------------------------------------------
    def threats(self) -> np.ndarray:
        """`[num_points, 6]` 0/1 (uint8): whether a stone of the side to move on this empty point
        would make five, four or three in some window of five points in a row that holds no
        opponent stone, then the same for the opponent. `encode` writes them as features 3..8.

        The message passing of the graph network sums over neighbours without knowing their
        direction, so it cannot see a line; these planes tell each point what lines run through
        it, as KataGo's inputs tell a Go point its liberties. They are hints: the rules decide
        what wins (an exact-five overline counts here as a five)."""
        return self._core.threats()

    def shapes(self) -> np.ndarray:
        """`[num_points, 10]` 0/1 (uint8): what a stone of the side to move on this empty point
        would make, then (columns 5..9) a stone of the opponent, named by `SHAPES`. `encode`
        writes them as features 11..20.

        Each direction is classed by the stone's line alone: a five; an open four (two empty
        points would each complete a five through the stone: it cannot be stopped); a four (one
        would); an open three (one more stone would make an open four). The planes combine the
        four directions as the tactics do: an open four, fours in two directions, a four and an
        open three in two directions (each wins unless the opponent wins first), an open three,
        open threes in two directions. The threat planes (`threats`) see five points at a time
        and cannot tell a three that both ends leave open from a dead one, nor one direction
        from two; these planes can, where a strong Gomoku player looks first. Hints again: the
        rules decide (renju forbids Black the double three these planes show as any other)."""
        return self._core.shapes()

    @classmethod
    def focus_masks(cls, x: np.ndarray, width: int, height: int,
                    min_side: int) -> np.ndarray | None:
        """The window of each position that a five can reach: the stones' bounding box and
        `FIVE - 1` points round it (a five through a stone lies within four of it), widened to
        `min_side` where shorter and moved inside the board. The network, trained on boards of
        12 to 14, sees a 20x20 position as a board of about that size: the mean it pools its
        value over is no longer diluted by hundreds of empty points far from the play, and on
        the records against AIWine at 20x20 its value then had the eventual winner's sign in
        87.5% of the positions instead of 86.1%. An empty board is seen whole.

        A lone stone, with no other stone within four points (a random opening stone on the
        edge, far from the fight), does not stretch the window: it shares no five with the
        others, and the window would otherwise span the board from the first moves. Where
        every stone is lone, all count."""
        planes = cls.feature_names
        stones = (x[:, :-1, planes.index("own")] != 0) | (x[:, :-1, planes.index("opponent")] != 0)
        grid_ = stones.reshape(-1, height, width)
        near = grid_ & ~_lone(grid_)
        grid_ = np.where(near.any(axis=(1, 2), keepdims=True), near, grid_)
        rows, cols = grid_.any(axis=2), grid_.any(axis=1)  # [B, H], [B, W]
        played = rows.any(axis=1)
        if not played.any():
            return None
        y0, y1 = _span(rows, FIVE - 1, min_side, height)
        x0, x1 = _span(cols, FIVE - 1, min_side, width)
        if not played.all():  # an empty board: the whole of it
            y0, y1 = np.where(played, y0, 0), np.where(played, y1, height - 1)
            x0, x1 = np.where(played, x0, 0), np.where(played, x1, width - 1)
        if (y0 == 0).all() and (x0 == 0).all() and (y1 == height - 1).all() and (
                x1 == width - 1).all():
            return None
        ys = np.arange(height)[None, :, None]
        xs = np.arange(width)[None, None, :]
        inside = ((ys >= y0[:, None, None]) & (ys <= y1[:, None, None])
                  & (xs >= x0[:, None, None]) & (xs <= x1[:, None, None]))
        keep = np.ones(x.shape[:2], dtype=bool)
        keep[:, :-1] = inside.reshape(len(x), -1)
        return keep

    # -- what the referee, the clock and the greedy player ask of the game ------------------------
    def outcome(self) -> Outcome | None:
        """A five (or, under exact five, exactly five) wins; a full board is a draw."""
        if not self.is_over():
            return None
        winner = self.winner()
        assert winner is not None
        return Outcome(winner, Termination.BOARD_FULL if winner == DRAW else Termination.FIVE)

    def plies_left(self) -> float:
        """A five ends the typical game within about 32 plies whatever the board's size, so a
        game gets that, and past it a tail of 28, bounded by the empty points. The mean, not a
        bound: the clock's time left after the last move is wasted, and the moves that decide a
        game come early (later ones are mostly forced blocks that take no thought)."""
        played = len(self.moves)
        empty = int(np.count_nonzero(self.board == 0))
        return float(max(1, min(max(_TYPICAL_LENGTH - played, _LENGTH_TAIL), empty)))

    def book_moves(self) -> list[int] | None:
        """On an empty board, the centre (`width // 2, height // 2`, as the swap2 opener places
        its first stone): every strong player opens there, and traditional renju requires it.
        Self-play on small boards teaches the network nothing reliable about the empty position,
        which it is never asked to vary from."""
        if self.moves or np.any(self.board):
            return None
        return [self.point(self.width // 2, self.height // 2)]

    def heuristic(self, moves: np.ndarray) -> np.ndarray:
        """Win now; else block the opponent's win; else extend the own longest line through the
        point, the opponent's line through it breaking ties. The greedy player's one ply."""
        wins = set(self.winning_moves())
        if wins:
            return np.array([1.0 if int(m) in wins else 0.0 for m in moves])
        if self.forced_moves() is not None:  # the opponent wins next move unless blocked
            opponent = -self.to_move
            return np.array([1.0 if self.wins_if_played(int(m), opponent) else 0.0
                             for m in moves])
        board = self.board.reshape(self.height, self.width)
        own = longest_lines(board == self.to_move).reshape(-1)[moves]
        cut = longest_lines(board == -self.to_move).reshape(-1)[moves]
        # Lines are at most 2 * _REACH + 1 long, so the weight keeps the two apart.
        return (own * (2 * _REACH + 2) + cut).astype(np.float64)


def longest_lines(stones: np.ndarray) -> np.ndarray:
    """For every point of a `[height, width]` bool board: the length of the longest row, column or
    diagonal run of `stones` that a stone on that point would stand in (itself included, up to
    `_REACH` stones followed on each side). Vectorised: 4 axes x 2 sides x `_REACH` slices."""
    h, w = stones.shape
    padded = np.pad(stones, _REACH)
    best = np.zeros((h, w), dtype=np.int64)
    for dx, dy in _AXES:
        length = np.ones((h, w), dtype=np.int64)
        for sign in (1, -1):
            run = np.ones((h, w), dtype=bool)
            for k in range(1, _REACH + 1):
                y0, x0 = _REACH + sign * k * dy, _REACH + sign * k * dx
                run &= padded[y0:y0 + h, x0:x0 + w]
                length += run
        np.maximum(best, length, out=best)
    return best
