"""A plain single-leaf recursive MCTS in the style of alpha-zero-general: the benchmark baseline.

alpha-zero-general keeps its statistics in dictionaries keyed by the position (Qsa, Nsa, Ns, Ps,
Es, Vs), recurses from the root to one leaf per simulation, replays the moves on the way down and
asks the network about that one leaf. This is that algorithm, written as fast as the style
honestly allows: Zobrist hashes (with the game-over and last-pass flags) instead of board strings
as keys, numpy for the PUCT scores of
all legal moves, the same rules and the same network (batch of one) as saz's search. It exists
only to measure what the batched, array-based search in `engine/search` gains over it.
"""
from __future__ import annotations

import math
import sys

import numpy as np

from saz.engine.games.base import Game
from saz.engine.graph import layout
from saz.engine.search.mcts import PolicyValueEvaluator

#: A position's key: its Zobrist hash, and what the hash does not see but the rules do (whether
#: the game is over, whether the last move was a pass: Go's second pass ends the game).
Key = tuple[int, bool, bool]


def _key(game: Game) -> Key:
    last_was_pass = bool(game.moves) and game.moves[-1] == game.pass_move
    return game.hash, game.is_over(), last_was_pass


class RecursiveMCTS:
    """alpha-zero-general's MCTS over a saz `Game` and a saz evaluator."""

    def __init__(self, evaluator: PolicyValueEvaluator, c_puct: float = 1.5) -> None:
        self.evaluator = evaluator
        self.c_puct = c_puct
        self.Qsa: dict[tuple[Key, int], float] = {}
        self.Nsa: dict[tuple[Key, int], int] = {}
        self.Ns: dict[Key, int] = {}
        self.Ps: dict[Key, tuple[np.ndarray, np.ndarray]] = {}  # legal moves, priors
        self.Es: dict[Key, float | None] = {}
        self.evaluations = 0

    def search_visits(self, game: Game, simulations: int) -> dict[int, int]:
        """Run `simulations` simulations from `game` (left unchanged); visits per root move."""
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 10 * game.num_nodes + 100))
        try:
            for _ in range(simulations):
                self._search(game.copy())
        finally:
            sys.setrecursionlimit(limit)
        s = _key(game)
        moves = self.Ps[s][0] if s in self.Ps else np.empty(0, dtype=np.int64)
        return {int(a): self.Nsa.get((s, int(a)), 0) for a in moves}

    def _search(self, game: Game) -> float:
        """One simulation; returns the value from the view of the player who moved into `game`."""
        s = _key(game)
        if s not in self.Es:
            self.Es[s] = game.outcome_for(game.to_move) if game.is_over() else None
        ended = self.Es[s]
        if ended is not None:
            return -ended
        if s not in self.Ps:
            moves = game.legal_moves()
            lay = layout(game.width, game.height)
            x = np.empty((1, game.num_nodes, game.num_features()), dtype=np.float32)
            game.encode(x[0])
            log_policy, value = self.evaluator.run(x, lay, None)
            self.evaluations += 1
            p = np.exp(log_policy[0][moves])
            self.Ps[s] = (moves, p / p.sum())
            self.Ns[s] = 0
            return -float(value[0])

        moves, priors = self.Ps[s]
        sqrt_n = math.sqrt(self.Ns[s] + 1e-8)
        q = np.array([self.Qsa.get((s, int(a)), 0.0) for a in moves])
        n = np.array([self.Nsa.get((s, int(a)), 0) for a in moves])
        scores = np.where(n > 0, q + self.c_puct * priors * sqrt_n / (1 + n),
                          self.c_puct * priors * sqrt_n)
        a = int(moves[int(np.argmax(scores))])
        game.play(a)
        v = self._search(game)
        key = (s, a)
        if key in self.Qsa:
            self.Qsa[key] = (self.Nsa[key] * self.Qsa[key] + v) / (self.Nsa[key] + 1)
            self.Nsa[key] += 1
        else:
            self.Qsa[key] = v
            self.Nsa[key] = 1
        self.Ns[s] += 1
        return -v
