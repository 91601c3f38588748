"""Gumbel AlphaZero's root for self-play (Danihelka, Guez, Schrittwieser and Silver, "Policy
improvement by planning with Gumbel", ICLR 2022).

At the root of a search with n simulations, m moves are sampled without replacement by the
Gumbel-top-k trick (the m largest g + logits, g ~ Gumbel(0, 1)), and sequential halving spends
the simulations on them: ceil(log2 m) phases, each giving every move still in
floor(n / (phases * |remaining|)) visits (at least 1; the last phase the rest of the budget, as
mctx does), then keeping the better half by g + logits + sigma(q). The survivor is the move
played, and the policy target is the improved policy softmax(logits + sigma(completed q)) over
every root move, unvisited ones included (appendix D), not the visit counts. There is no
Dirichlet noise at such a root; below it the tree stays PUCT.

The functions are the paper's formulas on arrays over the root's moves, q from the root's side to
move's view; `GumbelRoot` drives one search's root through the tree's root targets
(`_core.Tree.set_root_targets`), a phase at a time.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from saz.engine import _core
from saz.engine.games.base import Game

#: sigma(q) = (C_VISIT + max_b N(b)) * C_SCALE * q: the paper's constants for board games.
C_VISIT = 50.0
C_SCALE = 1.0
#: The floor of a prior before its log: a move the network gives no mass to stays a finite logit.
_TINY_PRIOR = 1e-30
#: The smallest spread of q that rescaling divides by (mctx's epsilon).
_EPSILON = 1e-8


@dataclass(frozen=True)
class Gumbel:
    """A Gumbel root's parameters: `simulations` (n) descents below the root, spent on at most
    `actions` (m) sampled moves."""

    simulations: int
    actions: int = 16
    c_visit: float = C_VISIT
    c_scale: float = C_SCALE

    def __post_init__(self) -> None:
        if self.simulations < 1 or self.actions < 1:
            raise ValueError("a Gumbel root needs at least one simulation and one action")


class Phase(NamedTuple):
    """One phase of sequential halving."""

    #: Moves searched in the phase (the better half of the previous phase's).
    actions: int
    #: Visits each of them gets.
    visits: int
    #: The best this many of them get one visit more (the last phase's odd visit).
    extra: int = 0

    @property
    def total(self) -> int:
        return self.actions * self.visits + self.extra


def halving_schedule(simulations: int, actions: int) -> tuple[Phase, ...]:
    """The phases of sequential halving of `actions` moves within `simulations` visits: phase k of
    P = ceil(log2 m) keeps ceil(r / 2) of the previous phase's r moves and gives each
    floor(n / (P * r_k)) visits, at least 1; the last phase gets what is left, so the phases
    spend exactly n. `actions` is cut to the most moves for which n gives that visit in every
    phase (n = 8 searches 4: 4 x 1, then 2 x 2)."""
    if simulations < 1 or actions < 1:
        raise ValueError("sequential halving needs at least one simulation and one action")
    for m in range(actions, 0, -1):
        phases = _phases(simulations, m)
        if phases is not None:
            return phases
    raise AssertionError("one action always fits")  # m = 1: one phase of n visits


def _phases(n: int, m: int) -> tuple[Phase, ...] | None:
    """`halving_schedule` for exactly `m` moves; None when `n` cannot give each a visit."""
    count = max(1, (m - 1).bit_length())  # ceil(log2 m)
    phases, left, remaining = [], n, m
    for k in range(count):
        if k < count - 1:
            phase = Phase(remaining, max(1, n // (count * remaining)))
        else:
            phase = Phase(remaining, *divmod(left, remaining))
        if phase.visits < 1 or phase.total > left:
            return None
        phases.append(phase)
        left -= phase.total
        remaining = (remaining + 1) // 2
    return tuple(phases)


def gumbel_top_k(logits: np.ndarray, gumbel: np.ndarray, k: int) -> np.ndarray:
    """The indices of the `k` largest `gumbel + logits`, best first (ties: the lower index): `k`
    draws without replacement from softmax(logits) when `gumbel` is Gumbel(0, 1) noise."""
    return np.argsort(-(gumbel + logits), kind="stable")[:k]


def mixed_value(value: float, q: np.ndarray, visits: np.ndarray, prior: np.ndarray) -> float:
    """v_mix (appendix D): the network's root `value` mixed with the prior-weighted q of the
    visited moves, (v_hat + N * sum_visited pi q / sum_visited pi) / (1 + N), N the total
    visits; `value` itself when no move was visited."""
    seen = visits > 0
    if not seen.any():
        return float(value)
    pi = np.maximum(prior[seen], _TINY_PRIOR)
    total = float(visits.sum())
    weighted = float((pi * q[seen]).sum() / pi.sum())
    return (float(value) + total * weighted) / (1.0 + total)


def completed_q(value: float, q: np.ndarray, visits: np.ndarray,
                prior: np.ndarray) -> np.ndarray:
    """q of the visited moves, v_mix (`mixed_value`) for the others."""
    return np.where(visits > 0, q, mixed_value(value, q, visits, prior))


def rescale(q: np.ndarray) -> np.ndarray:
    """q mapped onto [0, 1] by its minimum and maximum (mctx's rescaling; all equal: 0)."""
    low = q.min()
    return (q - low) / max(float(q.max() - low), _EPSILON)


def sigma(q: np.ndarray, visits: np.ndarray, c_visit: float = C_VISIT,
          c_scale: float = C_SCALE) -> np.ndarray:
    """sigma(q) = (c_visit + max_b N(b)) * c_scale * q, for q in [0, 1]: the weight of the
    search's values against the logits, growing with the visits."""
    return (c_visit + float(visits.max(initial=0))) * c_scale * q


def transformed_q(value: float, logits: np.ndarray, q: np.ndarray, visits: np.ndarray,
                  c_visit: float = C_VISIT, c_scale: float = C_SCALE) -> np.ndarray:
    """sigma(rescaled completed q) of every root move: what the halving's scores and the
    improved policy add to the logits."""
    completed = completed_q(value, q, visits, softmax(logits))
    return sigma(rescale(completed), visits, c_visit, c_scale)


def improved_policy(value: float, logits: np.ndarray, q: np.ndarray, visits: np.ndarray,
                    c_visit: float = C_VISIT, c_scale: float = C_SCALE) -> np.ndarray:
    """The policy target: softmax(logits + sigma(completed q)) over every root move."""
    return softmax(logits + transformed_q(value, logits, q, visits, c_visit, c_scale))


def softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()


class GumbelRoot:
    """One search's Gumbel root: the moves sampled, the halving's phases and the moves left.

    Made once the root is expanded; `advance` before each collect and after each absorb sets the
    tree's root targets to the phase's visits and, once they are spent and answered, keeps the
    better half for the next phase. The search is over (`over`) when the last phase is spent,
    the root is proven, or the tree is full with nothing in flight.
    """

    def __init__(self, spec: Gumbel, tree: _core.Tree, rng: np.random.Generator) -> None:
        moves, priors = tree.root_edges()
        self.spec = spec
        self.moves = np.asarray(moves, dtype=np.int64)
        self.logits = np.log(np.maximum(np.asarray(priors, dtype=np.float64), _TINY_PRIOR))
        self.gumbel = rng.gumbel(size=len(moves))
        self.schedule = halving_schedule(spec.simulations, min(spec.actions, len(moves)))
        #: Indices into `moves` of the moves still searched, best first.
        self.remaining = gumbel_top_k(self.logits, self.gumbel, self.schedule[0].actions)
        self.phase = 0
        self.over = False
        # The network's root value, v_hat: a node's value sums its own evaluation and its
        # children's, so a reused root gives it back exactly (no descent is in flight yet).
        # (A root reopened after a proof has exact visits of its own: clipped to a value.)
        visits, q = self.stats(tree, proven=False)
        v_hat = tree.root_value * tree.root_visits - float((visits * q).sum())
        self.value = min(1.0, max(-1.0, v_hat))
        self._set_targets(tree)

    def stats(self, tree: _core.Tree, proven: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """(visits, q for the root's side to move) of every root move, 0 for the unvisited;
        `proven`: a move whose result is proven has its proof as q."""
        index = {int(m): i for i, m in enumerate(self.moves)}
        visits = np.zeros(len(self.moves), dtype=np.float64)
        q = np.zeros(len(self.moves), dtype=np.float64)
        for move, n, value, _ in tree.root_children():
            visits[index[move]], q[index[move]] = n, value
        if proven:
            for move, value in tree.root_settled():
                if visits[index[move]] > 0:
                    q[index[move]] = value
        return visits, q

    def scores(self, tree: _core.Tree) -> np.ndarray:
        """g + logits + sigma(q) of every root move: what the halving keeps the best of."""
        visits, q = self.stats(tree)
        spec = self.spec
        return self.gumbel + self.logits + transformed_q(self.value, self.logits, q, visits,
                                                         spec.c_visit, spec.c_scale)

    def advance(self, tree: _core.Tree) -> bool:
        """Move on to the next phase when this one's visits are spent and answered; whether
        there is more to search."""
        if self.over:
            return False
        if tree.root_proven or (tree.full and not tree.pending_batches):
            return self._finish(tree)
        if tree.pending_batches or any(left for _, left in tree.root_targets()):
            return True
        if self.phase + 1 == len(self.schedule):  # the last phase is spent: its survivor
            self._keep_best(tree, 1)
            return self._finish(tree)
        self.phase += 1
        self._set_targets(tree)
        return True

    def choice(self, tree: _core.Tree) -> int:
        """The move to play: a move proven to win, else the best remaining one by score (the
        survivor, once the halving is over)."""
        proven = tree.root_proven_move
        if proven >= 0:
            return int(proven)
        best = self.remaining[int(np.argmax(self.scores(tree)[self.remaining]))]
        return int(self.moves[best])

    def target(self, game: Game, tree: _core.Tree) -> np.ndarray:
        """The improved policy laid out at `game`'s policy indices (`policy_size` wide)."""
        visits, q = self.stats(tree)
        spec = self.spec
        policy = improved_policy(self.value, self.logits, q, visits, spec.c_visit, spec.c_scale)
        out = np.zeros(game.policy_size, dtype=np.float32)
        out[np.asarray(game.policy_indices(self.moves))] = policy
        return out

    def _keep_best(self, tree: _core.Tree, keep: int) -> None:
        """Keep the `keep` best remaining moves by score, best first (ties: the earlier)."""
        scores = self.scores(tree)[self.remaining]
        self.remaining = self.remaining[np.argsort(-scores, kind="stable")[:keep]]

    def _set_targets(self, tree: _core.Tree) -> None:
        """The tree's root targets: this phase's visits for each remaining move (the odd visit
        of the last phase to the best)."""
        phase = self.schedule[self.phase]
        self._keep_best(tree, phase.actions)  # ordered by score, so the extra goes to the best
        visits = [phase.visits + (i < phase.extra) for i in range(phase.actions)]
        tree.set_root_targets(self.moves[self.remaining].tolist(), visits)

    def _finish(self, tree: _core.Tree) -> bool:
        self.over = True
        tree.set_root_targets([], [])
        return False
