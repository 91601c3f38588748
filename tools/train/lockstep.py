"""Many searches, one network call per board size: the lockstep driver of self-play and evaluation.

A single search feeds the network a few leaves at a time, far below the batch sizes where
onnxruntime is efficient (docs/BENCHMARKS.md, "Evaluator"). Self-play and the trainer's matches
run dozens of games at once instead: `Lockstep.step` gathers a few leaves from each of their
searches (`MCTS.gather`), evaluates the leaves of each (network, board size) group in one
`Evaluator.run` call, and hands every search its own rows back (`MCTS.absorb`). Where a search
shows the network only a window of its positions (`SearchOptions.focus_side`, Gomoku), each row
is cut down to its window (`mcts.crop`): a call costs what its largest window does. Leaves
whose positions the network answered before, in any of the searches, are answered from the
driver's evaluation cache (`EvalCache`, one per network) and never sent.

`TreeSearch` is one player's search tree in one game with its visit budget: `start` it on the
position, `step` it with the others until `done`, then read its `result`. With `gumbel_actions`
its root is Gumbel AlphaZero's (`engine/search/gumbel.py`): the budget is the simulations of its
sequential halving, and the result's move and policy target are the halving's.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from saz.engine.games.base import Game
from saz.engine.graph import GraphLayout
from saz.engine.search.evalcache import EvalCache, Lookup
from saz.engine.search.gumbel import Gumbel
from saz.engine.search.mcts import MCTS, PolicyValueEvaluator, SearchResult, crop
from saz.engine.search.options import SearchOptions

#: One search's gathered rows in a step, with the window of each (None: the whole board).
_Rows = tuple[MCTS, np.ndarray, "np.ndarray | None"]


class TreeSearch:
    """One player's search in one game, kept between its moves so that the tree is reused."""

    __slots__ = ("_decided", "gumbel_actions", "mcts", "policy_size", "visits")

    def __init__(self, evaluator: PolicyValueEvaluator, options: SearchOptions,
                 visits: int, gumbel_actions: int = 0) -> None:
        if visits < 1:
            raise ValueError(f"a search needs at least one visit, got {visits}")
        if gumbel_actions < 0:
            raise ValueError(f"gumbel_actions must be >= 0 (0: PUCT's root), got {gumbel_actions}")
        self.mcts = MCTS(evaluator, options)
        self.visits = visits
        #: Moves a Gumbel root samples (its m); 0: PUCT's root, searched to `visits` root visits.
        self.gumbel_actions = gumbel_actions
        self._decided: SearchResult | None = None
        #: The width of the network's policy rows for the game searched (`Game.policy_size`).
        self.policy_size = 0

    def start(self, game: Game, *, explore: bool = True) -> None:
        """Begin searching `game` (the subtree of the previous search is reused when it fits);
        `explore=False`: without root noise (`MCTS.begin`). A Gumbel root spends `visits`
        simulations below it, whatever the reused subtree holds."""
        self.policy_size = game.policy_size
        gumbel = Gumbel(self.visits, self.gumbel_actions) if self.gumbel_actions else None
        self._decided = self.mcts.begin(game, explore=explore, gumbel=gumbel)

    @property
    def done(self) -> bool:
        """Whether the rules decided the move, or the root has its visits (a Gumbel root: its
        halving is over)."""
        if self._decided is not None:
            return True
        if self.gumbel_actions:
            return self.mcts.gumbel_done
        return self.mcts.root_visits >= self.visits

    def result(self) -> SearchResult:
        return self._decided if self._decided is not None else self.mcts.result()


@dataclass
class Lockstep:
    """Steps searches together; owns the reusable input buffers of each (board size, features)."""

    #: Leaves each search contributes per step (spread apart by virtual loss). Few keep each
    #: tree's selection close to sequential PUCT; many games in flight make the batch big.
    leaves_per_search: int = 4
    #: The most rows of one network call: throughput falls past ~64 rows on a CPU, as the
    #: activations leave the cache (docs/BENCHMARKS.md), so bigger groups are split.
    max_batch: int = 64
    #: Bytes of network answers kept by position for each network the searches use (shared by
    #: all of them: games that pass through the same positions, trees that transpose). 0: off.
    cache_bytes: int = 32 << 20
    _buffers: dict[tuple[int, int], np.ndarray] = field(default_factory=dict, repr=False)
    #: id(network) -> (the network, its cache); the network is held so that its id stays its own.
    _caches: dict[int, tuple[PolicyValueEvaluator, EvalCache]] = field(default_factory=dict,
                                                                 repr=False)

    def __post_init__(self) -> None:
        if self.leaves_per_search < 1 or self.max_batch < 1:
            raise ValueError("leaves_per_search and max_batch must be positive")
        if self.cache_bytes < 0:
            raise ValueError("cache_bytes must be >= 0 (0: off)")

    def step(self, searches: Sequence[TreeSearch]) -> int:
        """One round for every unfinished search: gather, evaluate, absorb. Returns the number of
        positions the network evaluated."""
        groups: dict[tuple[int, int, int], list[_Rows]] = {}
        widths: dict[tuple[int, int, int], int] = {}  # each group's policy width
        # A network no search uses any more (self-play loaded a newer one) takes its cache along.
        in_use = {id(search.mcts.evaluator) for search in searches}
        self._caches = {key: entry for key, entry in self._caches.items() if key in in_use}
        for search in searches:
            if search.done:
                continue
            rows = search.mcts.gather(self.leaves_per_search)
            if len(rows):  # none when every descent ended in a position the rules decide
                lay = search.mcts.layout
                key = (id(search.mcts.evaluator), lay.width, lay.height)
                groups.setdefault(key, []).append(
                    (search.mcts, rows, search.mcts.focus_masks(rows, lay)))
                widths[key] = search.policy_size
        evaluated = 0
        for key, members in groups.items():
            evaluated += self._evaluate(members, widths[key])
        return evaluated

    def _evaluate(self, members: list[_Rows], policy_size: int) -> int:
        """Evaluate one (network, size) group, the leaves the cache knows left out, and hand
        every search its rows' answers (`policy_size` wide). Returns the rows the network
        evaluated."""
        cache = self._cache(members[0][0].evaluator)
        if cache is None:
            for (mcts, _, _), outputs in zip(members, self._run(members, policy_size)):
                mcts.absorb(*outputs)
            return sum(len(leaves) for _, leaves, _ in members)
        lookups = [Lookup.of(cache, leaves) for _, leaves, _ in members]
        sent = [(mcts, leaves[lookup.missing], None if mask is None else mask[lookup.missing])
                for (mcts, leaves, mask), lookup in zip(members, lookups)]
        for (mcts, _, _), lookup, outputs in zip(members, lookups, self._run(sent, policy_size)):
            mcts.absorb(*lookup.merge(cache, *outputs))
        return sum(len(leaves) for _, leaves, _ in sent)

    def _cache(self, evaluator: PolicyValueEvaluator) -> EvalCache | None:
        """The evaluation cache of `evaluator`'s answers; None when caching is off."""
        if not self.cache_bytes:
            return None
        entry = self._caches.get(id(evaluator))
        if entry is None:
            entry = self._caches[id(evaluator)] = (evaluator, EvalCache(self.cache_bytes))
        return entry[1]

    def _run(self, members: list[_Rows],
             policy_size: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each member's log-policies `[rows, policy_size]` and values from calls of at most
        `max_batch` rows (a search's leaves never straddle two calls; a member without rows
        gets empty arrays)."""
        evaluator = members[0][0].evaluator
        lay = members[0][0].layout
        features = members[0][1].shape[2]
        outputs = [(np.empty((0, policy_size), np.float32), np.empty(0, np.float32))
                   for _ in members]
        order = [i for i, (_, leaves, _) in enumerate(members) if len(leaves)]
        if any(m is not None for _, _, m in members):
            # Smallest windows first: a call is cut to its largest window, so games whose
            # windows are alike share calls and one game's whole board does not widen them all.
            order.sort(key=lambda i: _window_points(members[i]))
        start = 0
        while start < len(order):
            stop, rows = start, 0
            while stop < len(order) and (rows == 0 or
                                         rows + len(members[order[stop]][1]) <= self.max_batch):
                rows += len(members[order[stop]][1])
                stop += 1
            chunk = order[start:stop]
            x = self._buffer(lay, features, rows)[:rows]
            mask = None
            if any(members[i][2] is not None for i in chunk):
                mask = np.ones((rows, lay.num_nodes), dtype=bool)
            offset = 0
            for i in chunk:  # each search encoded its leaves in the core already
                _, leaves, m = members[i]
                x[offset:offset + len(leaves)] = leaves
                if mask is not None and m is not None:  # a mask exists when any m does
                    mask[offset:offset + len(leaves)] = m
                offset += len(leaves)
            cut = crop(x, mask, lay) if mask is not None else None
            if cut is not None:
                log_policy, values = evaluator.run(cut.x, cut.layout, cut.mask)
                log_policy = cut.expand(log_policy)
            else:
                log_policy, values = evaluator.run(x, lay, mask)
            offset = 0
            for i in chunk:
                n = len(members[i][1])
                outputs[i] = (log_policy[offset:offset + n], values[offset:offset + n])
                offset += n
            start = stop
        return outputs

    def _buffer(self, lay: GraphLayout, features: int, rows: int) -> np.ndarray:
        buf = self._buffers.get((lay.num_nodes, features))
        if buf is None or buf.shape[0] < rows:
            buf = np.empty((max(rows, self.max_batch), lay.num_nodes, features), np.float32)
            self._buffers[(lay.num_nodes, features)] = buf
        return buf


def _window_points(rows: _Rows) -> int:
    """The most nodes one of a search's gathered rows shows the network."""
    _, leaves, mask = rows
    return leaves.shape[1] if mask is None else int(mask.sum(axis=1).max())
