"""GTP's values for the board: vertices (the text a controller sends for a point) and colours.

The engine numbers points `y * width + x` from the top-left (see `engine/games/grid.py`); GTP
names them by a column letter and a row number, in the convention the game's class names
(`GameInfo.coordinates`):

* **Go** (also Gomoku, which GoGui draws on a Go board): columns `A..Z` without `I` (so at most
  25), row 1 at the *bottom*. `D4` on 19x19 is x = 3, y = 15.
* **Top-left** (Othello, as gtp-rhino and Quarry speak it): columns `a..z` (with `i`), row 1 at
  the *top*. `d3` on 8x8 is x = 3, y = 2.

Input is case-insensitive; output is upper case (as GNU Go and gtp-rhino answer), and the pass is
`pass` either way. A `Vertices` object is bound to one board size, so that parsing can check that
the point is on the board. `GtpValueError` (a ValueError) says why text is not the value expected.
"""
from __future__ import annotations

import string
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

from saz.engine.games import game_class
from saz.engine.games.base import BLACK, WHITE, Coordinates

PASS = "pass"
#: GTP colours, case-insensitive: `b`, `black`, `w`, `white`.
_COLORS = {"B": BLACK, "BLACK": BLACK, "W": WHITE, "WHITE": WHITE}


class GtpValueError(ValueError):
    """Text that is not the value expected: a colour, or a vertex of this board."""


def parse_color(text: str) -> int:
    """BLACK or WHITE from a GTP colour; GtpValueError otherwise."""
    color = _COLORS.get(text.upper())
    if color is None:
        raise GtpValueError(f"{text!r} is not a colour")
    return color


def is_color(text: str) -> bool:
    return text.upper() in _COLORS


@dataclass(frozen=True)
class Vertices:
    """The GTP names of the points of one width x height board, under one convention."""

    width: int
    height: int
    #: The column letters, left to right (upper case).
    columns: ClassVar[str]
    #: Whether row 1 is the top row (else it is the bottom row, as in Go).
    rows_from_top: ClassVar[bool]

    def __post_init__(self) -> None:
        if not 1 <= self.width <= len(self.columns) or self.height < 1:
            raise GtpValueError(f"{type(self).__name__} name at most {len(self.columns)} columns, "
                              f"not a {self.width}x{self.height} board")

    @classmethod
    def fits(cls, width: int, height: int) -> bool:
        """Whether every point of a width x height board has a name."""
        return 1 <= width <= len(cls.columns) and height >= 1

    @property
    def pass_move(self) -> int:
        return self.width * self.height

    def parse(self, text: str) -> int:
        """The move index of a vertex (`pass` is the pass move); GtpValueError if it is not one."""
        word = text.strip().upper()
        if word == PASS.upper():
            return self.pass_move
        if len(word) < 2 or not word[1:].isdigit() or not word[1:].isascii():
            raise GtpValueError(f"{text!r} is not a vertex")
        x = self.columns.find(word[0])
        if x < 0:
            raise GtpValueError(f"{text!r} is not a vertex: the columns are "
                                f"{self.columns[0]}..{self.columns[-1]} without I"
                                if "I" not in self.columns else f"{text!r} is not a vertex")
        row = int(word[1:])
        if x >= self.width or not 1 <= row <= self.height:
            raise GtpValueError(f"{text!r} is off the {self.width}x{self.height} board")
        return self.row_to_y(row) * self.width + x

    def format(self, move: int) -> str:
        """The vertex of a move index (the pass move is `pass`)."""
        if move == self.pass_move:
            return PASS
        if not 0 <= move < self.pass_move:
            raise GtpValueError(f"move {move} is off the {self.width}x{self.height} board")
        y, x = divmod(move, self.width)
        return f"{self.columns[x]}{self.y_to_row(y)}"

    def row_to_y(self, row: int) -> int:
        """The engine's y (from the top) of a GTP row number."""
        return row - 1 if self.rows_from_top else self.height - row

    def y_to_row(self, y: int) -> int:
        """The GTP row number of the engine's y (from the top)."""
        return y + 1 if self.rows_from_top else self.height - y


class GoVertices(Vertices):
    """Go's convention: `A..Z` without `I`, row 1 at the bottom."""

    columns = string.ascii_uppercase.replace("I", "")
    rows_from_top = False


class TopLeftVertices(Vertices):
    """Othello's convention (gtp-rhino, Quarry): `A..Z` with `I`, row 1 at the top."""

    columns = string.ascii_uppercase
    rows_from_top = True


_VERTICES: dict[Coordinates, type[Vertices]] = {
    Coordinates.GO: GoVertices,
    Coordinates.TOP_LEFT: TopLeftVertices,
}


def vertex_convention(game: str) -> type[Vertices]:
    """The convention the game `game` (a registry name) speaks over GTP."""
    return _VERTICES[game_class(game).info.coordinates]


@lru_cache(maxsize=64)
def vertices_for(game: str, width: int, height: int) -> Vertices:
    """The vertices of a game's board (cached: every command that names a point asks)."""
    return vertex_convention(game)(width, height)
