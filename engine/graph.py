"""The one board-to-graph encoding, used by the evaluator and the trainer alike.

Nodes: every point of the board in row-major order, then one extra node joined to every point (its
index `width * height` is also the pass move of the games that have one). Node features come from
the game (`Game.encode`), from the side to move's view.

Each (game, board size) has a layout: the edge list (what torch-geometric trains on) and the
tables the exported network reads, by ONNX input name (docs/ARCHITECTURE.md, "The network and the
model contract"). A game names its own tables (`Game.graph_tables`: chess's relation-typed lines
and jumps, `games/chess_graph.py`); the others have the lattice:

* `nbr [num_points, 5]` int64: the in-neighbours of each point (its orthogonal neighbours and the
  extra node), padded with `num_nodes`, an index that reads an all-zero row appended by the model;
* `hub [1, num_nodes]` float32: the extra node's in-neighbours as a 0/1 row (every point), so that
  its aggregate is `hub @ h`.

A game with groups (`Game.group_roles`: Go's chains, Gomoku's line segments, Othello's lines)
gets a lattice layout of its own that also knows them: per position, computed from the batch's
features (`group_members`: each point's groups, `[B, P, K]` int32, the `group_members` input of a
network that pools over them). `layout(w, h)` without a game is the bare lattice.

Layouts are built once per (game's tables, size) and cached; all arrays are read-only. The way
back, from the network's policy to priors over moves, is `move_priors` at the game's policy
indices (`Game.policy_indices`).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import InitVar, dataclass, field
from functools import cache
from types import MappingProxyType

import numpy as np

from saz.engine.games.base import Game
from saz.engine.games.grid import grid

#: Each lattice point's in-neighbours: up to four orthogonal neighbours and the extra node.
MAX_IN_DEGREE = 5


@dataclass(frozen=True, eq=False)
class GraphLayout:
    """The graph of one board size: the edge list and the tables the network reads.

    `given` None builds the lattice; otherwise they are a game's own (`Game.graph_tables`),
    which must hold `nbr [num_points, K]` (padded with `num_nodes`) and `hub [1, num_nodes]`.
    `grouped`, a Game class with `group_roles`, gives the layout that game's groups."""

    width: int
    height: int
    #: A game's own tables (`Game.graph_tables`); None: the lattice's.
    given: InitVar[Mapping[str, np.ndarray] | None] = None
    #: The game whose groups the layout computes (`Game.group_members`); None: no groups.
    grouped: InitVar[type[Game] | None] = None
    #: The tables by ONNX input name, read-only.
    tables: Mapping[str, np.ndarray] = field(init=False, repr=False)
    num_points: int = field(init=False)
    num_nodes: int = field(init=False)
    #: Whether the graph is the lattice (only a lattice board may be cut down to a window).
    lattice: bool = field(init=False)
    #: Directed edges [2, E] int64 (row 0 source, row 1 target), the torch-geometric convention.
    edge_index: np.ndarray = field(init=False, repr=False)
    #: The roles of a group's members (`Game.group_roles`), R; 0: the layout has no groups.
    group_roles: int = field(init=False)
    _grouped: type[Game] | None = field(init=False, repr=False)

    def __post_init__(self, given: Mapping[str, np.ndarray] | None,
                      grouped: type[Game] | None) -> None:
        if grouped is not None and not grouped.group_roles:
            raise ValueError(f"{grouped.__name__} has no groups (its group_roles are empty)")
        g = grid(self.width, self.height)
        n = g.num_points
        extra = n
        lattice = given is None
        if given is None:
            points = np.arange(n, dtype=np.int64)
            to_extra = np.stack([points, np.full(n, extra, dtype=np.int64)])
            edge_index = np.concatenate([g.edges, to_extra, to_extra[::-1]], axis=1)
            nbr = np.full((n, MAX_IN_DEGREE), n + 1, dtype=np.int64)
            nbr[:, :4] = np.where(g.neighbor_table < n, g.neighbor_table, n + 1)
            nbr[:, 4] = extra
            hub = np.ones((1, n + 1), dtype=np.float32)
            hub[0, extra] = 0.0
            tables: dict[str, np.ndarray] = {"nbr": nbr, "hub": hub}
        else:
            tables = {name: np.array(arr) for name, arr in given.items()}
            _check_tables(tables, n)
            edge_index = _edges_of(tables["nbr"], tables["hub"])
        for arr in (edge_index, *tables.values()):
            arr.setflags(write=False)
        object.__setattr__(self, "tables", MappingProxyType(tables))
        object.__setattr__(self, "edge_index", edge_index)
        object.__setattr__(self, "num_points", n)
        object.__setattr__(self, "num_nodes", n + 1)
        object.__setattr__(self, "lattice", lattice)
        object.__setattr__(self, "_grouped", grouped)
        object.__setattr__(self, "group_roles", len(grouped.group_roles) if grouped else 0)

    @property
    def nbr(self) -> np.ndarray:
        """In-neighbours of each point `[num_points, K]` int64, padded with num_nodes."""
        return self.table("nbr")

    @property
    def hub(self) -> np.ndarray:
        """The extra node's in-neighbours as a `[1, num_nodes]` float32 row."""
        return self.table("hub")

    def group_members(self, x: np.ndarray) -> np.ndarray:
        """The groups of each position of the batch `x [B, num_nodes, F]` (float32): `[B,
        num_points, K]` int32, each point's entries `slot * group_roles + role`, ascending,
        padded with -1 (`Game.group_members`): the network's `group_members` input as it is.
        ValueError where the layout has no groups."""
        return self._group_game().group_members(self._batch(x), self.width, self.height)

    def _group_game(self) -> type[Game]:
        if self._grouped is None:
            raise ValueError(f"the {self.width}x{self.height} layout has no groups (its game has "
                             f"no group_roles)")
        return self._grouped

    def _batch(self, x: np.ndarray) -> np.ndarray:
        """`x` as the C-contiguous float32 `[B, num_nodes, F]` the core reads."""
        if x.ndim != 3 or x.shape[1] != self.num_nodes:
            raise ValueError(f"x of shape {x.shape} does not fit [B, {self.num_nodes}, F] "
                             f"({self.width}x{self.height})")
        return np.ascontiguousarray(x, dtype=np.float32)

    def table(self, name: str) -> np.ndarray:
        """The table the network's input `name` reads; KeyError naming the ones there are."""
        try:
            return self.tables[name]
        except KeyError:
            raise KeyError(f"the {self.width}x{self.height} graph has no table {name!r} "
                           f"(it has {', '.join(self.tables)})") from None


def layout(width: int, height: int, game: type[Game] | None = None) -> GraphLayout:
    """The cached graph layout of a width x height board of `game` (a Game class): its own
    tables (`Game.graph_tables`) where it has them, else the lattice, which a lattice game
    without groups would share (None: the bare lattice); a game with groups
    (`Game.group_roles`) gets a lattice layout that knows them."""
    if game is None:
        return _lattice(width, height)
    return _of_game(game, width, height)


def layout_of(game: Game) -> GraphLayout:
    """The layout of `game`'s board: `layout(game.width, game.height, type(game))`."""
    return _of_game(type(game), game.width, game.height)


@cache
def _lattice(width: int, height: int) -> GraphLayout:
    return GraphLayout(width, height)


@cache
def _of_game(game: type[Game], width: int, height: int) -> GraphLayout:
    tables = game.graph_tables(width, height)
    grouped = game if game.group_roles else None
    if tables is None and grouped is None:
        return _lattice(width, height)
    return GraphLayout(width, height, tables, grouped)


def _check_tables(tables: Mapping[str, np.ndarray], points: int) -> None:
    """ValueError unless `tables` hold the `nbr` and `hub` every network reads, of the board's
    shape, `nbr` within the nodes and the padding row."""
    for name in ("nbr", "hub"):
        if name not in tables:
            raise ValueError(f"graph tables need {name!r}, got {', '.join(tables) or 'none'}")
    nbr, hub = tables["nbr"], tables["hub"]
    if nbr.ndim != 2 or nbr.shape[0] != points or nbr.dtype != np.int64:
        raise ValueError(f"nbr must be int64 [{points}, K], got {nbr.dtype} {nbr.shape}")
    if nbr.size and (nbr.min() < 0 or nbr.max() > points + 1):
        raise ValueError(f"nbr must index nodes 0..{points + 1} (the last: the padding row)")
    if hub.shape != (1, points + 1) or hub.dtype != np.float32:
        raise ValueError(f"hub must be float32 [1, {points + 1}], got {hub.dtype} {hub.shape}")


def _edges_of(nbr: np.ndarray, hub: np.ndarray) -> np.ndarray:
    """The edge list `[2, E]` the tables aggregate over: each point's in-neighbours in `nbr`
    (padding left out) and the extra node's in `hub`, in table order."""
    points = nbr.shape[0]
    dst = np.repeat(np.arange(points, dtype=np.int64), nbr.shape[1])
    src = nbr.reshape(-1)
    keep = src <= points
    to_extra = np.flatnonzero(hub[0]).astype(np.int64)
    return np.concatenate([np.stack([src[keep], dst[keep]]),
                           np.stack([to_extra, np.full_like(to_extra, points)])], axis=1)


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


def move_priors(log_policy: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """The network's policy (log-probabilities, one row `[policy_size]`) restricted to the moves
    at `indices` (`Game.policy_indices` of the moves: in the lattice games the moves themselves,
    points and `num_points` for pass) and renormalised to sum to 1.

    Shifting by the maximum keeps it exact when the network puts almost no mass on the moves, and
    uniform when every one of them was masked out (all equal to MASKED_LOG_PROB)."""
    if indices.size == 0:
        return np.empty(0, np.float32)
    logits = log_policy[indices]
    p = np.exp(logits - logits.max())
    return p / p.sum()
