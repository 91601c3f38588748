"""The graph a chess network reads: each square hears along its lines and knight jumps in one hop.

Go's lattice (each point's four neighbours) is the wrong graph for chess: a rook's influence
reaches along a whole file in one move. Here each square's in-neighbours are typed by relation,
so the network can weigh a neighbour by where it stands:

* relations 0..7, the eight ray directions N NE E SE S SW W NW in the side to move's frame
  (N is towards row y = 0, the side to move's last rank: the encoding flips the board for
  Black, so one table serves both colours); slot k of a ray is the square k + 1 steps along it;
* relation 8, the knight jumps, one slot each, clockwise from (x + 1, y - 2);
* relation 9, the extra node, in its slot 0.

`nbr [P, R * D]` holds relation r's D slots in columns `r * D .. r * D + D - 1`, D the longest
ray (`max(width, height) - 1`) and at least the eight knight jumps; every slot off the board is
padded with `num_nodes`, the index of the all-zero row the model appends. `hub [1, N]` is the
extra node's in-neighbours (every square) as in the lattice. `promo [3 * width, 2]` names the
two squares of each underpromotion family: for `j = from_x * 3 + (dir + 1)`, dir -1, 0, 1 the
file step of a pawn's capture left, push or capture right, the (from, to) squares of that pawn
move from row y = 1 onto row y = 0 (the side to move's 7th and 8th ranks); `(N, N)` where it
leaves the board. The policy's underpromotion block is laid out `j * 3 + (piece - 2)`.
"""
from __future__ import annotations

import numpy as np

#: The ray directions as (dx, dy), y growing downwards from the side to move's last rank.
DIRECTIONS: tuple[tuple[int, int], ...] = (
    (0, -1), (1, -1), (1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1))
#: The knight jumps as (dx, dy), clockwise from one file right, two rows up.
KNIGHT_JUMPS: tuple[tuple[int, int], ...] = (
    (1, -2), (2, -1), (2, 1), (1, 2), (-1, 2), (-2, 1), (-2, -1), (-1, -2))
#: The relations of `nbr`, in column order.
RELATIONS: tuple[str, ...] = ("N", "NE", "E", "SE", "S", "SW", "W", "NW", "knight", "extra")


def slots_per_relation(width: int, height: int) -> int:
    """D: the slots each relation has in `nbr`, the longest ray and at least the eight jumps."""
    return max(max(width, height) - 1, len(KNIGHT_JUMPS))


def chess_graph_tables(width: int, height: int) -> dict[str, np.ndarray]:
    """The tables of a chess board of `width` x `height` squares (module docstring):
    `nbr [P, 10 * D]` int64, `hub [1, P + 1]` float32 and `promo [3 * width, 2]` int64."""
    if width < 1 or height < 1:
        raise ValueError(f"a board needs at least one square, not {width}x{height}")
    points = width * height
    extra, pad = points, points + 1
    depth = slots_per_relation(width, height)
    squares_all = np.arange(points)  # row-major: square s = y * width + x
    xs, ys = squares_all % width, squares_all // width

    def squares(dx: int, dy: int) -> np.ndarray:
        """The square (x + dx, y + dy) of every square, `pad` off the board."""
        tx, ty = xs + dx, ys + dy
        inside = (tx >= 0) & (tx < width) & (ty >= 0) & (ty < height)
        return np.where(inside, ty * width + tx, pad)

    nbr = np.full((points, len(RELATIONS) * depth), pad, dtype=np.int64)
    for r, (dx, dy) in enumerate(DIRECTIONS):
        for k in range(min(depth, max(width, height) - 1)):
            nbr[:, r * depth + k] = squares(dx * (k + 1), dy * (k + 1))
    knight = RELATIONS.index("knight") * depth
    for j, (dx, dy) in enumerate(KNIGHT_JUMPS):
        nbr[:, knight + j] = squares(dx, dy)
    nbr[:, RELATIONS.index("extra") * depth] = extra

    hub = np.ones((1, points + 1), dtype=np.float32)
    hub[0, extra] = 0.0

    promo = np.full((3 * width, 2), pad, dtype=np.int64)
    if height >= 2:
        for from_x in range(width):
            for step in (-1, 0, 1):
                to_x = from_x + step
                if 0 <= to_x < width:
                    promo[from_x * 3 + step + 1] = (width + from_x, to_x)
    return {"nbr": nbr, "hub": hub, "promo": promo}
