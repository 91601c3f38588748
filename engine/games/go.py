"""Go under Tromp-Taylor rules: area scoring, positional superko, suicide illegal.

The rules, the Zobrist hash and the node features live in the compiled core, `engine/core/go.cpp`
(bitboards of one to ten 64-bit words; incremental chains with their liberties and an undo
journal; legal moves by one dilation plus the capturing points; positional superko checked
against earlier positions of the right stone count only). This module is the typed layer over
it: the rules object (komi, rule set) with its checks, set-up from a diagram and handicap, the
end of the game (`continued`, `score`, `area`) and the extras that GTP and the players read
(`captures`, `liberties`).
"""
from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from saz.engine import _core
from saz.engine.games.base import BLACK, DRAW, EMPTY, WHITE, GameInfo, parse_diagram
from saz.engine.games.capabilities import AreaScored
from saz.engine.games.errors import GameError, UnsupportedRuleError, UnsupportedSizeError
from saz.engine.games.grid import grid
from saz.engine.games.zobrist import zobrist_keys

if TYPE_CHECKING:  # an alias of the stub's (engine/_core.pyi), not a class at run time
    from saz.engine._core import GoPosition

MIN_SIZE = 2
MAX_SIZE = 25
#: The rule sets `Go` knows: Tromp-Taylor (area scoring, positional superko, no suicide).
RULES: tuple[str, ...] = ("tromp-taylor",)
#: Go games last about this fraction of the board's area in moves (19x19: ~290, 9x9: ~65) ...
_TYPICAL_LENGTH = 0.8
#: ... and a longer game (captures let it run past any bound) still gets this fraction as a tail.
_LENGTH_TAIL = 0.2


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


class Go(AreaScored):
    """A Go position and its history under Tromp-Taylor rules, on any board from 2x2 to 25x25.

    Two passes end the game, but a controller may play on (a dispute, a cleanup phase): a stone
    after them is played as usual, and the game goes on from there.

    Handicap stones (`place_fixed_handicap`, `place_free_handicap`) and the stones of a diagram
    (`from_diagram`) are part of the starting position, not moves: `moves` does not list them,
    `undo` stops at them, and superko counts that position as the first of the game.
    """

    name = "go"
    info = GameInfo("Go", sgf_game_type=1, default_size=19, rule_options=("komi",),
                    controllers_know_rules=True)
    feature_names = (
        "own", "opponent", "empty", "legal", "own_atari", "opponent_atari",
        "own_two_liberties", "opponent_two_liberties", "extra", "komi",
        "line_1", "line_2", "line_3", "line_4",
        "own_ladder", "opponent_ladder", "ladder_capture",
    )
    #: Version 2 added the line planes (a point on the first line from the edge, the second, the
    #: third, the fourth; beyond, none): without them the network's six GIN layers told a 19x19
    #: point nothing of an edge more than six steps away. Version 3 added the ladder planes (the
    #: stones of chains a ladder captures, ours and the opponent's, and our ataris that start a
    #: working ladder; `ladder_captured` says what the reader reads): a ladder is decided by a
    #: stone as far away as the board is wide, which no few layers see.
    feature_version = 3
    feature_prefixes: ClassVar[Mapping[int, int]] = MappingProxyType({1: 10, 2: 14})
    #: A group per chain: its stones, then its liberties (the empty points beside it).
    group_roles: ClassVar[tuple[str, ...]] = ("stones", "liberties")
    _core: GoPosition
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
        self.rules: GoRules = GoRules(komi, rule)
        self.grid = grid(int(width), int(height))
        self._reset([], [], BLACK)

    @classmethod
    def group_members(cls, x: np.ndarray, width: int, height: int) -> np.ndarray:
        """Each point's chain memberships from planes 0 `own` and 1 `opponent` of `x`
        (`Game.group_members`): a stone is its chain's (role 0), an empty point each adjacent
        chain's (role 1); chains numbered by their lowest point. Computed in the core
        (`_core.go_group_members`, the chains GoPosition builds), without the GIL."""
        return _core.go_group_members(x, width, height)

    def _reset(self, black: Sequence[int], white: Sequence[int], to_move: int) -> None:
        """Start the game from the position with the given stones, with no history. GameError,
        before anything changes, if a chain has no liberty."""
        black_keys, white_keys, white_to_move_key = zobrist_keys(self.num_points)
        core = _core.new_go(self.width, self.height, list(black), list(white), to_move,
                            self.rules.komi, black_keys, white_keys, white_to_move_key)
        self._attach(core)
        board = np.zeros(self.num_points, dtype=np.int8)
        board[list(black)] = BLACK
        board[list(white)] = WHITE
        board.setflags(write=False)
        self._start = (board, to_move)

    # -- construction from a position -------------------------------------------------------------
    @classmethod
    def from_diagram(cls, diagram: str, *, to_move: int = BLACK, komi: float = 7.5,
                     rule: str = "tromp-taylor") -> Go:
        """A game starting from a text diagram: one line per row from the top, `X` black, `O`
        white, `.` empty, spaces ignored (the format of `str(game)`). The diagram's stones are
        the starting position, as with SGF setup stones. GameError on a malformed diagram or a
        chain without liberties."""
        width, height, black, white = parse_diagram(diagram, to_move)
        game = cls(width, height, komi=komi, rule=rule)
        game._reset(black, white, to_move)
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
        if self._moves or self.board.any():
            raise GameError("handicap stones go on an empty board before the first move")
        self._reset(points, [], WHITE)

    # -- state ------------------------------------------------------------------------------------
    def start_position(self) -> tuple[np.ndarray, int]:
        board, to_move = self._start
        return board.copy(), to_move

    @property
    def komi(self) -> float:
        """The points added to White's area."""
        return self.rules.komi

    def captures(self, color: int) -> int:
        """How many stones `color` has captured so far."""
        return self._core.captures(color)

    def liberties(self, point: int) -> int:
        """The number of liberties of the chain on `point`; 0 for an empty point."""
        p = operator.index(point)
        if not 0 <= p < self.num_points:
            raise GameError(f"point {p} is off the board")
        return self._core.liberties(p)

    def ladder_captured(self, point: int) -> bool:
        """Whether a ladder captures the chain on `point`, as the core's reader reads it (the
        ladder planes and the search's pruning read the same): the attacker ataris, the chain
        runs or captures an attacker's chain in atari beside it, three liberties is out. A chain
        in atari moves first, a chain with two liberties is attacked first, whoever is to move;
        a chain with more liberties is not captured. GameError for an empty point."""
        p = operator.index(point)
        if not 0 <= p < self.num_points:
            raise GameError(f"point {p} is off the board")
        return self._core.ladder_captured(p)

    # -- rules ------------------------------------------------------------------------------------
    def continued(self) -> Go | None:
        """After two passes: a copy in which they no longer end the game (the controller plays
        on); None while the game goes on."""
        if not self.is_over():
            return None
        game = self.copy()
        game._core.resume()
        return game

    def with_rules(self, **changes: object) -> Go:
        """Komi and rule set change how the game is scored, not what was legal: the position,
        its setup stones and its history stay as they are."""
        unknown = set(changes) - {"komi", "rule"}
        if unknown:
            raise UnsupportedRuleError(f"Go has no rule parameters {', '.join(sorted(unknown))}")
        game = self.copy()
        game.rules = replace(self.rules, **changes)  # type: ignore[arg-type]  # GoRules checks them
        game._core.komi = game.rules.komi
        return game

    @classmethod
    def rules_from_record(cls, komi: float | None, rules: str | None) -> dict[str, object]:
        """The record's komi; its RU is not read: other programs name their own rule sets
        (Chinese, Japanese), and saz plays and scores every game of Go under its one."""
        return {} if komi is None else {"komi": komi}

    @property
    def rules_text(self) -> str:
        return "Tromp-Taylor"

    # -- end of the game --------------------------------------------------------------------------
    def area(self, color: int) -> int:
        """Tromp-Taylor area of `color`: its stones plus the empty points that reach only it."""
        black, white = self._core.areas()
        return black if color == BLACK else white

    def ownership(self) -> np.ndarray:
        """Tromp-Taylor ownership: each colour's stones and the empty points that reach only
        that colour; an empty point reaching both (or none) is EMPTY."""
        return np.asarray(self._core.owners(), dtype=np.int8)

    def score(self) -> float:
        """Black's area minus White's area minus komi (positive: Black is ahead)."""
        return self._core.score()

    def final_score(self, ownership: Callable[[], np.ndarray | None]) -> float:
        """The area score once the stones that `ownership` gives to the other colour are off
        the board; all stones count where it is None (no network can tell)."""
        owners = ownership()
        return self.score() if owners is None else self.score_without(self.dead_stones(owners))

    def dead_stones(self, ownership: np.ndarray) -> list[int]:
        """The stones of chains that `ownership` (`[num_points]`, BLACK's view: positive where
        Black owns the point, as the network predicts it) gives to the other colour on average,
        ascending. A chain lives or dies whole, so its points' predictions are pooled."""
        board = self.board
        if ownership.shape != board.shape:
            raise ValueError(f"ownership of shape {ownership.shape} does not fit "
                             f"{self.width}x{self.height}")
        dead: list[int] = []
        seen = np.zeros(self.num_points, dtype=bool)
        for start in np.flatnonzero(board).tolist():
            if seen[start]:
                continue
            color = board[start]
            chain, frontier = [start], [start]
            seen[start] = True
            while frontier:
                for q in self.grid.neighbors[frontier.pop()]:
                    if board[q] == color and not seen[q]:
                        seen[q] = True
                        chain.append(q)
                        frontier.append(q)
            if color * float(np.mean(ownership[chain])) < 0:
                dead.extend(chain)
        return sorted(dead)

    def score_without(self, dead: Sequence[int]) -> float:
        """`score()` once the `dead` stones are taken off the board (their points then count
        for whoever surrounds them): the count GTP's `final_score` reports."""
        if not len(dead):
            return self.score()
        board = self.board.copy()
        board[list(dead)] = EMPTY
        counted = Go(self.width, self.height, komi=self.rules.komi, rule=self.rules.rule)
        counted._reset(np.flatnonzero(board == BLACK).tolist(),
                       np.flatnonzero(board == WHITE).tolist(), self.to_move)
        return counted.score()

    def __repr__(self) -> str:
        return (f"<Go {self.width}x{self.height} komi={self.rules.komi:g} "
                f"moves={len(self._moves)}>")

    # -- what the referee, the clock and the greedy player ask of the game ------------------------
    def stopped_winner(self) -> int:
        """A game stopped before two passes is counted as it stands (area with komi)."""
        score = self.score()
        return BLACK if score > 0 else WHITE if score < 0 else DRAW

    def plies_left(self) -> float:
        """Go games last about 0.8 of the board's area in moves (19x19: ~290, 9x9: ~65);
        captures let them run past any bound, so a longer game still gets a tail of 0.2 of the
        area."""
        area = self.num_points
        return max(_TYPICAL_LENGTH * area - len(self.moves), _LENGTH_TAIL * area, 1.0)

    def heuristic(self, moves: np.ndarray) -> np.ndarray:
        """Capture first (stones taken), then a move that leaves its stone more than one
        liberty; never fill an own eye (passing is better). The greedy player's one ply."""
        me = self.to_move
        worth = set(self.search_moves().tolist())
        scores = np.zeros(len(moves), dtype=np.float64)
        before = self.captures(me)
        for i, move in enumerate(moves.tolist()):
            if move == self.pass_move:
                scores[i] = -2.0
            elif move not in worth:
                scores[i] = -3.0  # an own eye: filling it only helps the opponent
            else:
                self.play(move)
                captured = self.captures(me) - before
                safe = self.liberties(move) > 1
                self.undo()
                scores[i] = 2.0 * captured + float(safe)
        return scores
