"""Ownership maps and score leads from the network's auxiliary heads, along the search's lines.

The tree backs up values only: keeping an ownership array per node (361 floats at 19x19) would
multiply its memory. What a GUI shows beside the moves, a territory map (`kata-analyze ...
ownership true`) and a score lead, comes instead from the network's ownership and score heads
evaluated along the search's principal variations, in one batch per snapshot:

* a move's score lead is the mean score of the positions its PV passes through (after each of
  its first `depth` plies), from the root's side to move's view;
* the ownership map is the mean ownership of the root and the positions along the best move's PV.

Averaging along the line the search expects looks as deep as the search looked there, so a
group the search sees dying shows as dead even when the root's own evaluation is unsure of it:
a cheap stand-in for KataGo's averages over the whole subtree. Evaluations are cached by
position (bounded), so a long analysis pays only for the lines that changed.
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from saz.engine.games.base import Game
from saz.engine.graph import layout_of
from saz.engine.search.mcts import MoveInfo

if TYPE_CHECKING:  # onnxruntime loads with the network, not with the front-end
    from saz.engine.evaluator import Evaluator

#: Plies of each PV evaluated: past this the PV rests on few visits.
DEFAULT_DEPTH = 8
#: Cached evaluations (at 19x19 about 1.5 KB each: a few MB at most).
CACHE_SIZE = 4096


@dataclass(frozen=True)
class Estimate:
    """Ownership and score leads of one search snapshot, from the root's side to move's view."""

    #: Mean ownership `[num_points]` in [-1, 1] (positive: the side to move owns the point), in
    #: point order (row-major from the top-left, as KataGo prints it); None without the head.
    ownership: np.ndarray | None
    #: Root move -> the margin the side to move leads by after it, in points; empty without the
    #: score head.
    score_leads: Mapping[int, float] = field(default_factory=dict)
    #: The root position's own score lead (None without the score head).
    root_score: float | None = None


class OwnershipEstimator:
    """Evaluates the auxiliary heads along principal variations (module docstring)."""

    def __init__(self, evaluator: Evaluator, depth: int = DEFAULT_DEPTH,
                 cache_size: int = CACHE_SIZE) -> None:
        if depth < 0 or cache_size < 1:
            raise ValueError("depth must be >= 0 and cache_size >= 1")
        self.evaluator = evaluator
        self.depth = depth
        self.cache_size = cache_size
        #: hash -> (side to move, ownership [num_points] or None, score or None), side to
        #: move's view.
        self._cache: OrderedDict[int, tuple[int, np.ndarray | None, float | None]] = \
            OrderedDict()

    @property
    def available(self) -> bool:
        """Whether the network has either auxiliary head."""
        return self.evaluator.has_ownership or self.evaluator.has_score

    def estimate(self, root: Game, moves: Sequence[MoveInfo]) -> Estimate:
        """The estimate for a snapshot whose root is `root` and whose moves (best first) are
        `moves`; `root` is left untouched."""
        lines = [self._line(root, info.pv or (info.move,)) for info in moves]
        self._evaluate([root] + [g for line in lines for g in line])
        me = root.to_move
        root_entry = self._view(root, me)
        ownership: np.ndarray | None = None
        if root_entry[0] is not None:
            # One network answers every position here, so a line's entries have ownership
            # exactly when the root's has.
            owned = [root_entry[0]] + [self._owned(g, me) for g in (lines[0] if lines else ())]
            ownership = np.mean(np.stack(owned), axis=0).astype(np.float32)
        leads: dict[int, float] = {}
        if root_entry[1] is not None:
            for info, line in zip(moves, lines, strict=True):
                scores = [self._scored(g, me) for g in line]
                leads[info.move] = float(np.mean(scores)) if scores else root_entry[1]
        return Estimate(ownership, leads, root_entry[1])

    def ownership(self, game: Game, moves: Sequence[MoveInfo] = ()) -> np.ndarray | None:
        """The mean ownership from BLACK's view (positive: Black owns the point), or None
        without the head; what scoring reads (dead stones)."""
        estimate = self.estimate(game, moves)
        if estimate.ownership is None:
            return None
        return estimate.ownership * game.to_move  # BLACK is +1

    # -- internals ----------------------------------------------------------------------------
    def _line(self, root: Game, pv: Sequence[int]) -> list[Game]:
        """The positions after each of the first `depth` plies of `pv` (fewer if it ends)."""
        out: list[Game] = []
        game = root.copy()
        for move in pv[:max(1, self.depth)]:
            if game.is_over() or not game.is_legal(move):
                break
            game.play(move)
            out.append(game.copy())
        return out

    def _view(self, game: Game, me: int) -> tuple[np.ndarray | None, float | None]:
        """The cached ownership and score of `game` turned to `me`'s view."""
        to_move, ownership, score = self._cache[game.hash]
        sign = 1.0 if to_move == me else -1.0
        return (None if ownership is None else sign * ownership,
                None if score is None else sign * score)

    def _owned(self, game: Game, me: int) -> np.ndarray:
        """`_view`'s ownership where the network is known to have an ownership head."""
        ownership = self._view(game, me)[0]
        assert ownership is not None, "the network answered the root with ownership"
        return ownership

    def _scored(self, game: Game, me: int) -> float:
        """`_view`'s score where the network is known to have a score head."""
        score = self._view(game, me)[1]
        assert score is not None, "the network answered the root with a score"
        return score

    def _evaluate(self, games: Sequence[Game]) -> None:
        """Evaluate the positions not cached yet, in one network call per board size (all share
        the root's here), and cache them."""
        fresh: dict[int, Game] = {}
        for game in games:
            if game.hash in self._cache:
                self._cache.move_to_end(game.hash)
            else:
                fresh.setdefault(game.hash, game)
        if fresh:
            todo = list(fresh.values())
            first = todo[0]
            x = np.empty((len(todo), first.num_nodes, first.num_features()), np.float32)
            for row, game in zip(x, todo, strict=True):
                game.encode(row)
            _, _, ownership, score = self.evaluator.run_aux(x, layout_of(first))
            points = first.num_points
            for i, game in enumerate(todo):
                self._cache[game.hash] = (
                    game.to_move,
                    None if ownership is None else ownership[i, :points].copy(),
                    None if score is None else float(score[i]))
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
