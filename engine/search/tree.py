"""The search tree and its hot loops: PUCT selection, virtual loss and back-up.

Speed comes from one invariant. A node's children are kept in descending order of prior, and an
unvisited child's score is `fpu + c * P * sqrt(N)`, the same first-play value for all of them, so
the best unvisited child is always the first unvisited one. Hence the visited children are always
a prefix of the list (`tried` long) and selection scans only that prefix plus one candidate:
a few children deep in the tree, tens at the root, never the whole board. Child nodes are created
on first visit, each holding its own copy of the position, so a descent never replays moves.

Values: `Node.w` sums the results from the view of the player who moved *into* the node, so a
parent reads `child.w / child.n` directly as the value of that move for itself.
"""
from __future__ import annotations

from math import sqrt

from saz.engine.games.base import Game


class Node:
    """A position in the tree with the statistics of the move that led to it."""

    __slots__ = ("game", "move", "n", "w", "prior", "moves", "priors", "children", "tried",
                 "terminal", "forced")

    def __init__(self, game: Game, move: int = -1, prior: float = 1.0) -> None:
        self.game = game
        #: The move that led here (-1 at a root created from scratch).
        self.move = move
        #: Visits, virtual ones included while a descent is in flight.
        self.n = 0
        #: Sum of values from the view of the player who moved into this node.
        self.w = 0.0
        self.prior = prior
        #: Candidate moves, visited ones first then the rest by descending prior; None until the
        #: network has evaluated this node (a node without them is a leaf awaiting evaluation).
        self.moves: list[int] | None = None
        self.priors: list[float] | None = None
        #: Child nodes for moves[:tried].
        self.children: list[Node] = []
        self.tried = 0
        #: Exact value from the side to move's view when the rules decide it (game over, or a
        #: win or loss the game proves at once); such a node is never expanded.
        self.terminal: float | None = None
        #: The only moves that stop an immediate loss, when the game knows them (else None).
        self.forced: list[int] | None = None

    @property
    def expanded(self) -> bool:
        return self.moves is not None

    def q(self) -> float:
        """Mean value of this node for the player who moved into it (0 when unvisited)."""
        return self.w / self.n if self.n else 0.0

    def set_moves(self, moves: list[int], priors: list[float]) -> None:
        """Install the expansion: moves and priors, already sorted by descending prior."""
        self.moves = moves
        self.priors = priors
        self.children = []
        self.tried = 0

    def reorder_untried(self, priors: list[float]) -> None:
        """Replace the priors (e.g. after root noise) and restore the invariant: the untried
        moves sorted by descending prior after the tried prefix."""
        assert self.moves is not None
        t = self.tried
        for child, p in zip(self.children, priors):
            child.prior = p
        rest = sorted(zip(priors[t:], self.moves[t:]), key=lambda pm: -pm[0])
        self.priors = priors[:t] + [p for p, _ in rest]
        self.moves = self.moves[:t] + [m for _, m in rest]

    def child_index(self, move: int) -> int:
        """Index of `move` among the tried children, or -1."""
        for i, child in enumerate(self.children):
            if child.move == move:
                return i
        return -1


def select(node: Node, c_puct: float, fpu_reduction: float) -> int:
    """The index of the child maximising PUCT. Scans the tried prefix and one candidate.

    A move the rules have proven lost (its child's side to move wins: `terminal == 1`) is not
    visited again: another visit could only confirm it, and it would cost a descent (in Go, a
    pass that lets the opponent end the game won is revisited otherwise). When every move is
    proven lost, any will do."""
    children = node.children
    priors = node.priors
    tried = node.tried
    n_parent = node.n
    c_sqrt = c_puct * sqrt(n_parent if n_parent > 0 else 1)
    # First-play urgency: the parent's own value (side to move's view) minus a reduction.
    fpu = (-node.w / n_parent if n_parent else 0.0) - fpu_reduction
    if tried < len(priors):  # type: ignore[arg-type]
        best_i = tried
        best = fpu + c_sqrt * priors[tried]  # type: ignore[index]
    else:
        best_i = -1
        best = -1e300
    for i in range(tried):
        child = children[i]
        if child.terminal == 1.0:
            continue
        n = child.n
        score = (child.w / n if n else fpu) + c_sqrt * priors[i] / (1 + n)  # type: ignore[index]
        if score > best:
            best, best_i = score, i
    return best_i if best_i >= 0 else 0


def add_virtual_loss(path: list[Node], amount: int) -> None:
    """Count an in-flight descent as `amount` lost visits on every node of its path."""
    for node in path:
        node.n += amount
        node.w -= amount


def revert_virtual_loss(path: list[Node], amount: int) -> None:
    for node in path:
        node.n -= amount
        node.w += amount


def backup(path: list[Node], value: float, virtual_loss: int) -> None:
    """Back up `value` (from the leaf's side to move's view) along the path, root first in
    `path`, removing the descent's virtual loss on the way."""
    v = -value  # the leaf's statistics are from the view of the player who moved into it
    for node in reversed(path):
        node.n += 1 - virtual_loss
        node.w += v + virtual_loss
        v = -v


def principal_variation(node: Node, limit: int = 32) -> list[int]:
    """The most visited line below `node`."""
    line: list[int] = []
    while node.children and len(line) < limit:
        node = max(node.children, key=lambda c: c.n)
        if node.n <= 0:
            break
        line.append(node.move)
    return line
