"""What the old pure-Python games shared (commit a48fb4d's `engine/games/bitboard.py`, `grid.py`,
`zobrist.py` and `base.py`), inlined once for the three references beside it
(`go_reference.py`, `gomoku_reference.py`, `othello_reference.py`), so that they run standalone:
only the exception types are shared with the engine, so that both raise the same ones.

Do not optimise it: its worth is being the old code, line for line where possible.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from saz.engine.games.errors import GameError

BLACK = 1
WHITE = -1
EMPTY = 0
DRAW = 0


# -- inlined from engine/games/bitboard.py, grid.py, zobrist.py, base.py (a48fb4d) ---------------
def points_of(mask: int) -> list[int]:
    """The points of `mask`, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def mask_of(points: Iterable[int]) -> int:
    """The mask of a collection of points."""
    mask = 0
    for p in points:
        mask |= 1 << p
    return mask


@dataclass(frozen=True, eq=False)
class Grid:
    width: int
    height: int
    num_points: int = field(init=False)
    neighbors: tuple[tuple[int, ...], ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        w, h = self.width, self.height
        nbrs = []
        for p in range(w * h):
            x, y = p % w, p // w
            nbrs.append(tuple(ny * w + nx for nx, ny in ((x + 1, y), (x, y + 1), (x - 1, y),
                                                          (x, y - 1))
                              if 0 <= nx < w and 0 <= ny < h))
        object.__setattr__(self, "num_points", w * h)
        object.__setattr__(self, "neighbors", tuple(nbrs))

    def point(self, x: int, y: int) -> int:
        return y * self.width + x

    def xy(self, point: int) -> tuple[int, int]:
        return point % self.width, point // self.width

    def ray(self, point: int, dx: int, dy: int) -> list[int]:
        x, y = self.xy(point)
        out = []
        x, y = x + dx, y + dy
        while 0 <= x < self.width and 0 <= y < self.height:
            out.append(y * self.width + x)
            x, y = x + dx, y + dy
        return out


@lru_cache(maxsize=None)
def grid(width: int, height: int) -> Grid:
    return Grid(width, height)


@lru_cache(maxsize=None)
def zobrist_keys(num_points: int) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    rng = np.random.default_rng([0x5A2_600D, num_points])
    raw = rng.integers(1, 2**63 - 1, size=2 * num_points + 1, dtype=np.int64)
    keys = [int(v) for v in raw]
    return tuple(keys[:num_points]), tuple(keys[num_points:2 * num_points]), keys[-1]


def _check_color(color: object) -> None:
    if color != BLACK and color != WHITE:
        raise GameError(f"a colour must be BLACK (1) or WHITE (-1), not {color!r}")


def parse_diagram(diagram: str, to_move: int) -> tuple[int, int, list[int], list[int]]:
    rows = ["".join(line.split()) for line in diagram.strip().splitlines()]
    rows = [row for row in rows if row]
    if not rows or any(len(row) != len(rows[0]) for row in rows):
        raise GameError("a diagram needs rows of equal length")
    text = "".join(rows)
    unknown = set(text) - set("XO.")
    if unknown:
        raise GameError(f"unknown diagram characters {''.join(sorted(unknown))!r}; use X O .")
    if to_move != BLACK and to_move != WHITE:
        raise GameError(f"to_move must be BLACK (1) or WHITE (-1), got {to_move!r}")
    black = [p for p, char in enumerate(text) if char == "X"]
    white = [p for p, char in enumerate(text) if char == "O"]
    return len(rows[0]), len(rows), black, white


class Game:
    """The parts of the old `engine/games/base.Game` that the old games used."""

    _out_of_turn: tuple[int, ...] = ()

    @property
    def width(self) -> int:
        return self.grid.width

    @property
    def height(self) -> int:
        return self.grid.height

    @property
    def num_points(self) -> int:
        return self.grid.num_points

    @property
    def pass_move(self) -> int:
        return self.grid.num_points

    @property
    def num_nodes(self) -> int:
        return self.grid.num_points + 1

    @classmethod
    def num_features(cls) -> int:
        return len(cls.feature_names)

    @property
    def to_move(self) -> int:
        return self._to_move

    @property
    def moves(self) -> list[int]:
        return self._moves

    def point(self, x: int, y: int) -> int:
        return self.grid.point(x, y)

    def set_to_move(self, color: int) -> None:
        _check_color(color)
        if color != self._to_move:
            self._switch_turn()

    def _play_out_of_turn(self, move: int, color: int) -> None:
        _check_color(color)
        self._switch_turn()
        try:
            self.play(move)
        except GameError:
            self._switch_turn()
            raise
        self._out_of_turn = (*self._out_of_turn, len(self._moves) - 1)

    def _undo_turn(self, mover: int) -> None:
        if self._to_move == mover:
            self._switch_turn()

    def _restore_turn(self) -> None:
        out_of_turn = self._out_of_turn
        if out_of_turn and out_of_turn[-1] == len(self._moves):
            self._out_of_turn = out_of_turn[:-1]
            self._switch_turn()

    def __str__(self) -> str:
        chars = {BLACK: "X", WHITE: "O", EMPTY: "."}
        b = self.board
        rows = []
        for y in range(self.height):
            rows.append(" ".join(chars[int(v)] for v in b[y * self.width:(y + 1) * self.width]))
        return "\n".join(rows)
