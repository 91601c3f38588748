"""The one board-to-graph encoding, used by the evaluator and the trainer alike.

Nodes: every point of the board in row-major order, then one extra node joined to every point (its
index `width * height` is also the pass move). Edges: orthogonal neighbours in both directions, plus
the extra node's edges to and from every point. Node features come from the game (`Game.encode`),
from the side to move's view.

Besides the edge list (what torch-geometric trains on) each size carries the scatter-free tables
the exported network runs on (docs/ARCHITECTURE.md, "The network and the model contract"):

* `nbr [num_points, 5]` int64: the in-neighbours of each point (its orthogonal neighbours and the
  extra node), padded with `num_nodes`, an index that reads an all-zero row appended by the model;
* `hub [1, num_nodes]` float32: the extra node's in-neighbours as a 0/1 row (every point), so that
  its aggregate is `hub @ h`.

Layouts are built once per size and cached; all arrays are read-only. The way back, from the
network's policy over nodes to priors over moves, is `move_priors`.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from saz.engine.games.base import Game
from saz.engine.games.grid import grid

#: Each point's in-neighbours: up to four orthogonal neighbours and the extra node.
MAX_IN_DEGREE = 5


@dataclass(frozen=True, eq=False)
class GraphLayout:
    """The graph of one board size: edge list and the scatter-free aggregation tables."""

    width: int
    height: int
    num_points: int = field(init=False)
    num_nodes: int = field(init=False)
    #: Directed edges [2, E] int64 (row 0 source, row 1 target), the torch-geometric convention.
    edge_index: np.ndarray = field(init=False, repr=False)
    #: In-neighbours of each point [num_points, MAX_IN_DEGREE] int64, padded with num_nodes.
    nbr: np.ndarray = field(init=False, repr=False)
    #: The extra node's in-neighbours as a [1, num_nodes] float32 row.
    hub: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        g = grid(self.width, self.height)
        n = g.num_points
        extra = n
        points = np.arange(n, dtype=np.int64)
        to_extra = np.stack([points, np.full(n, extra, dtype=np.int64)])
        edge_index = np.concatenate([g.edges, to_extra, to_extra[::-1]], axis=1)
        nbr = np.full((n, MAX_IN_DEGREE), n + 1, dtype=np.int64)
        nbr[:, :4] = np.where(g.neighbor_table < n, g.neighbor_table, n + 1)
        nbr[:, 4] = extra
        hub = np.ones((1, n + 1), dtype=np.float32)
        hub[0, extra] = 0.0
        for name, arr in (("edge_index", edge_index), ("nbr", nbr), ("hub", hub)):
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        object.__setattr__(self, "num_points", n)
        object.__setattr__(self, "num_nodes", n + 1)


@cache
def layout(width: int, height: int) -> GraphLayout:
    """The cached graph layout of a width x height board."""
    return GraphLayout(width, height)


def encode(games: Sequence[Game], out: np.ndarray | None = None) -> np.ndarray:
    """Node features of positions of one board size and one game as `[B, num_nodes, F]` float32.

    `out`, when given, is a preallocated buffer with at least B rows of the right shape; the
    returned array is its first B rows (a view), so a caller can reuse one buffer per size.
    """
    if not games:
        raise ValueError("encode needs at least one position")
    first = games[0]
    shape = (len(games), first.num_nodes, first.num_features())
    if out is None:
        out = np.empty(shape, dtype=np.float32)
    elif out.shape[1:] != shape[1:] or out.shape[0] < shape[0] or out.dtype != np.float32:
        raise ValueError(f"buffer of shape {out.shape} cannot hold a batch of shape {shape}")
    for i, game in enumerate(games):
        if game.grid is not first.grid or type(game) is not type(first):
            raise ValueError("a batch holds positions of one game and one board size")
        game.encode(out[i])
    return out[: len(games)]


def move_priors(log_policy: np.ndarray, moves: np.ndarray) -> np.ndarray:
    """The network's policy (log-probabilities over nodes, one row) restricted to `moves` (node
    indices: points, and `num_points` for pass) and renormalised to sum to 1.

    Shifting by the maximum keeps it exact when the network puts almost no mass on `moves`, and
    uniform when every one of them was masked out (all equal to MASKED_LOG_PROB)."""
    if moves.size == 0:
        return np.empty(0, np.float32)
    logits = log_policy[moves]
    p = np.exp(logits - logits.max())
    return p / p.sum()
