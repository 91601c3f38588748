"""Board geometry shared by every game and by the graph encoding: point indices, neighbour
tables and board sizes.

A point is `y * width + x` with x the column from the left and y the row from the top. The index
`width * height` is one past the last point: it is the pass move and the graph's extra node, and the
neighbour tables use it as padding, so that `board_padded[table]` reads an off-board sentinel.
Tables are built once per size (cached) and are read-only. A board size as people write it, `N` or
`WxH` (width x height), is read here too (`parse_size`), for every command line and config.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from functools import cache

import numpy as np

#: A board's (width, height).
Size = tuple[int, int]

#: The eight directions (dx, dy); the first four are orthogonal.
DIRECTIONS: tuple[tuple[int, int], ...] = (
    (1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1),
)


@dataclass(frozen=True, eq=False)
class Grid:
    """The geometry of a width x height board of points."""

    width: int
    height: int
    num_points: int = field(init=False)
    #: Orthogonal neighbours of each point, as tuples (for Python loops on hot paths).
    neighbors: tuple[tuple[int, ...], ...] = field(init=False, repr=False)
    #: Orthogonal neighbours as an int64 array [num_points, 4], padded with `num_points`.
    neighbor_table: np.ndarray = field(init=False, repr=False)
    #: Directed orthogonal edges as an int64 array [2, E] (source row, target row), both directions.
    edges: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        w, h = self.width, self.height
        n = w * h
        object.__setattr__(self, "num_points", n)
        table = np.full((n, 4), n, dtype=np.int64)
        nbrs: list[tuple[int, ...]] = []
        for p in range(n):
            x, y = p % w, p // w
            row = [q for q in self._orthogonal(x, y)]
            table[p, : len(row)] = row
            nbrs.append(tuple(row))
        table.setflags(write=False)
        object.__setattr__(self, "neighbors", tuple(nbrs))
        object.__setattr__(self, "neighbor_table", table)
        src = np.repeat(np.arange(n, dtype=np.int64), 4)
        dst = table.reshape(-1)
        keep = dst < n
        edges = np.stack([src[keep], dst[keep]])
        edges.setflags(write=False)
        object.__setattr__(self, "edges", edges)

    def _orthogonal(self, x: int, y: int) -> list[int]:
        out = []
        for dx, dy in DIRECTIONS[:4]:
            nx, ny = x + dx, y + dy
            if 0 <= nx < self.width and 0 <= ny < self.height:
                out.append(ny * self.width + nx)
        return out

    def point(self, x: int, y: int) -> int:
        """The index of column x, row y (both from the top-left, 0-based)."""
        return y * self.width + x

    def xy(self, point: int) -> tuple[int, int]:
        """(x, y) of a point index."""
        return point % self.width, point // self.width

    def on_board(self, x: int, y: int) -> bool:
        return 0 <= x < self.width and 0 <= y < self.height

    def ray(self, point: int, dx: int, dy: int) -> list[int]:
        """The points from `point` (exclusive) in direction (dx, dy) up to the board's edge."""
        x, y = self.xy(point)
        out = []
        x, y = x + dx, y + dy
        while 0 <= x < self.width and 0 <= y < self.height:
            out.append(y * self.width + x)
            x, y = x + dx, y + dy
        return out


@cache
def grid(width: int, height: int) -> Grid:
    """The cached Grid of one size."""
    return Grid(width, height)


#: The four line directions of `line_slots`, in slot order: rows, columns, diagonals (down to
#: the right), anti-diagonals (down to the left).
LINE_DIRECTIONS: tuple[tuple[int, int], ...] = ((1, 0), (0, 1), (1, 1), (-1, 1))


@cache
def line_slots(width: int, height: int) -> np.ndarray:
    """Each point's four lines `[num_points, 4]` int32, one column per `LINE_DIRECTIONS`:
    the rows are slots 0..height-1, the columns the next width, then the width + height - 1
    diagonals (by x - y) and as many anti-diagonals (by x + y), so every point's slots ascend
    along its row. Every line of the board is some point's, the corners' one-point diagonals
    too: a game that pools over its lines (Othello) numbers them 0..num_lines-1."""
    y, x = np.divmod(np.arange(width * height), width)
    diagonals = width + height - 1
    table = np.stack([y, height + x, height + width + x - y + height - 1,
                      height + width + diagonals + x + y], axis=1).astype(np.int32)
    table.setflags(write=False)
    return table


class SizeSyntaxError(ValueError, argparse.ArgumentTypeError):
    """Text that is not a board size. An ArgumentTypeError as well, so that a command line's
    `type=parse_size` reports this message rather than argparse's generic one."""


def parse_size(text: str) -> Size:
    """A board size as written: "9" -> (9, 9); "12x9" -> (12, 9), width x height. Whether a game
    admits the size is the game's to say (`UnsupportedSizeError`); this only reads the text."""
    parts = str(text).strip().lower().split("x")
    try:
        if len(parts) in (1, 2):
            width, height = int(parts[0]), int(parts[-1])
            if width >= 1 and height >= 1:
                return width, height
    except ValueError:
        pass
    raise SizeSyntaxError(f"invalid board size {text!r}: expected N or WxH (e.g. 9 or 9x7)")


def parse_sizes(text: str) -> list[Size]:
    """Comma-separated board sizes: "9,15,7x11" -> [(9, 9), (15, 15), (7, 11)]."""
    return [parse_size(item) for item in str(text).split(",")]


@cache
def line_walks(width: int, height: int) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """Per `LINE_DIRECTIONS`, the board walked line after line: (the points in that order
    `[num_points]` int64, whether each begins its line `[num_points]` bool). Within a line the
    points follow the direction (rows left to right, the rest from the top down), so a run
    along a line is a run of the walk."""
    walks = []
    for column in range(len(LINE_DIRECTIONS)):
        slots = line_slots(width, height)[:, column]
        order = np.argsort(slots, kind="stable")  # point order is the direction's, row by row
        begins = np.ones(len(order), dtype=bool)
        begins[1:] = slots[order][1:] != slots[order][:-1]
        for arr in (order, begins):
            arr.setflags(write=False)
        walks.append((order, begins))
    return tuple(walks)
