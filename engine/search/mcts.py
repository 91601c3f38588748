"""Batched PUCT Monte Carlo tree search over any `Game`, evaluated by the GNN.

One iteration collects up to `batch_size` distinct leaves (virtual loss steers each descent away
from the paths already in flight), evaluates them in one network call, expands them and backs
their values up. Positions the rules decide (game over, a win the game proves at once, a threat
that cannot be stopped) are scored exactly and never sent to the network. The tree survives
between calls: searching a position that extends the previous root by a few moves reuses the
subtree.

`MCTS` is driven by one thread at a time; `stop()` may be called from any thread and ends the
running search at the next batch boundary (front-ends use it for pondering and analysis).
"""
from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Collection
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from math import sqrt
from typing import Protocol

import numpy as np

from saz.engine.games.base import Game
from saz.engine.graph import GraphLayout, layout, move_priors
from saz.engine.search.memory import allocated_by, resident_bytes
from saz.engine.search.options import SearchOptions
from saz.engine.search.subgraph import window_masks
from saz.engine.search.tree import (
    Node,
    add_virtual_loss,
    backup,
    principal_variation,
    revert_virtual_loss,
    select,
)

#: How many descents one batch may spend per leaf it asks for, counting those the rules settle.
SETTLED_DESCENTS = 4
#: Under a memory limit, the share of it the process may fill: the rest is for what the node
#: cap does not count (the network's buffers, a batch in flight, the interpreter's own growth).
MEMORY_HEADROOM = 0.9
#: A node's measured bytes (`node_bytes`) times this is what the cap reckons with: the allocator's
#: own overhead and fragmentation, which tracemalloc does not see (measured: docs/PROTOCOLS.md).
NODE_BYTES_MARGIN = 1.25
#: Nodes made to measure what one costs.
NODE_SAMPLES = 300


class PolicyValueNet(Protocol):
    """What the search needs from an evaluator (`engine.evaluator.Evaluator` is one)."""

    def run(self, x: np.ndarray, layout: GraphLayout,
            mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]: ...


@dataclass(frozen=True)
class SearchLimits:
    """When a search stops: whichever limit comes first (None = no such limit).

    `visits` counts the root's visits including those reused from the previous move (Leela's
    `--visits`); `playouts` counts only new ones. `soft_seconds` is the normal budget,
    `hard_seconds` the most the search may take when the best move is still unstable.
    With none set, the search runs until `stop()` (pondering, analysis).
    """

    visits: int | None = None
    playouts: int | None = None
    soft_seconds: float | None = None
    hard_seconds: float | None = None
    #: Stop as soon as the most visited move can no longer be overtaken within the limits.
    early_stop: bool = True


@dataclass(frozen=True)
class MoveInfo:
    """Search statistics of one root move, as analysis front-ends display them."""

    move: int
    visits: int
    #: Mean value for the side to move at the root, in [-1, 1].
    value: float
    prior: float
    #: A lower confidence bound of `value` (what Leela/KataGo call lcb).
    lcb: float
    pv: tuple[int, ...]


@dataclass(frozen=True)
class SearchStats:
    """What one search did: descents, network calls and where the time went."""

    #: Descents backed up, those the rules settled without the network included.
    playouts: int = 0
    batches: int = 0
    evaluated: int = 0
    collisions: int = 0
    seconds: float = 0.0
    eval_seconds: float = 0.0
    nodes: int = 0

    @property
    def mean_batch(self) -> float:
        return self.evaluated / self.batches if self.batches else 0.0

    @property
    def playouts_per_second(self) -> float:
        return self.playouts / self.seconds if self.seconds > 0 else 0.0


@dataclass(frozen=True)
class SearchResult:
    """The outcome of one search from the root's side to move's view."""

    best_move: int
    #: The root's value for the side to move, in [-1, 1].
    value: float
    root_visits: int
    moves: tuple[MoveInfo, ...]
    stats: SearchStats
    #: True when the rules decided the move without search (an immediate win, a lone move).
    decided_by_rules: bool = False
    num_nodes: int = field(default=0, repr=False)

    def visit_distribution(self) -> np.ndarray:
        """Visits per node index (pass = the extra node) normalised to sum 1: the policy target."""
        dist = np.zeros(self.num_nodes, dtype=np.float32)
        for info in self.moves:
            dist[info.move] = info.visits
        total = dist.sum()
        if total > 0:
            dist /= total
        else:
            dist[self.best_move] = 1.0
        return dist


def choose_move(result: SearchResult, temperature: float, rng: np.random.Generator) -> int:
    """The move to play: the best one at temperature 0, else sampled with p ~ visits^(1/T)."""
    if temperature <= 0 or len(result.moves) <= 1:
        return result.best_move
    visits = np.array([m.visits for m in result.moves], dtype=np.float64)
    weights = visits ** (1.0 / temperature)
    return int(result.moves[int(rng.choice(len(visits), p=weights / weights.sum()))].move)


class MCTS:
    """A reusable search tree bound to one evaluator."""

    def __init__(self, evaluator: PolicyValueNet, options: SearchOptions | None = None, *,
                 now: Callable[[], float] = time.monotonic) -> None:
        self.evaluator = evaluator
        #: The time source of the search's limits (a fake clock in tests).
        self._now = now
        self.options = options or SearchOptions()
        self.rng = np.random.default_rng(self.options.seed)
        self.root: Node | None = None
        self._nodes = 0
        #: The most nodes the last search (or the one running) may hold: `options.max_nodes`, or
        #: fewer under `options.memory_limit` (see `_node_cap`).
        self.node_cap = self.options.max_nodes
        self._buffers: dict[tuple[int, int], list[np.ndarray]] = {}
        self._pool: ThreadPoolExecutor | None = None
        self._lock: _Lockstep | None = None
        self._stop = threading.Event()
        self._running = False
        self._state_lock = threading.Lock()

    # -- control ---------------------------------------------------------------------------------
    def stop(self) -> None:
        """End the running search at the next batch boundary (no effect when idle)."""
        with self._state_lock:
            if self._running:
                self._stop.set()

    def warm_up(self, game: Game) -> None:
        """Run the network on `game`'s position at batch 1 and at the search's batch size, the
        tree untouched: onnxruntime's first runs at a new shape cost tens of milliseconds more
        than the later ones, which a timed move should not pay."""
        if game.is_over():
            return
        lay = layout(game.width, game.height)
        x = self._buffer(lay, game.num_features(), self.options.batch_size)
        game.encode(x[0])
        x[1:] = x[0]
        for rows in (1, self.options.batch_size):
            self.evaluator.run(x[:rows], lay)
        self._release(x)
        self._executor()

    def reset(self) -> None:
        """Forget the tree (new game, changed rules)."""
        self.root = None
        self._nodes = 0

    # -- search ----------------------------------------------------------------------------------
    def search(self, game: Game, limits: SearchLimits,
               on_progress: Callable[[SearchResult], None] | None = None,
               progress_interval: float = 0.0,
               allowed: Collection[int] | None = None,
               stop: threading.Event | None = None) -> SearchResult:
        """Search `game` (left untouched) within `limits`; `on_progress` receives snapshots every
        `progress_interval` seconds (analysis front-ends). `allowed` restricts the root's moves
        (GTP cleanup, analysis allow/avoid lists); such a search starts a fresh tree. `stop`,
        when given, ends the search once set, even if it was set before the search began: a
        caller that starts a search on another thread cannot lose its stop request."""
        if game.is_over():
            raise ValueError("the game is over: there is no move to search")
        if allowed is not None:
            allowed = {int(m) for m in allowed}
            if not any(game.is_legal(m) for m in allowed):
                raise ValueError("none of the allowed moves is legal")
            self.reset()
        with self._state_lock:
            self._stop.clear()
            self._running = True
        try:
            return self._search(game, limits, on_progress, progress_interval, allowed,
                                stop or threading.Event())
        finally:
            with self._state_lock:
                self._running = False
                self._stop.clear()

    def _search(self, game: Game, limits: SearchLimits,
                on_progress: Callable[[SearchResult], None] | None,
                progress_interval: float, allowed: set[int] | None,
                stop: threading.Event) -> SearchResult:
        start = self._now()
        self.node_cap = self._node_cap(game)
        root = self._root_for(game)

        def decided(move: int, value: float) -> SearchResult:
            result = self._decided(root, move, value, start)
            if on_progress is not None:  # analysis shows the move the rules chose
                on_progress(result)
            return result

        wins = [m for m in root.game.winning_moves() if allowed is None or m in allowed]
        if wins:
            return decided(wins[0], 1.0)
        counters = _Counters()
        if not root.expanded:
            add_virtual_loss([root], self.options.virtual_loss)
            batch = self._encode([[root]], [root])
            self._finish(batch, self._run(batch), counters)
        if allowed is not None:
            _restrict(root, allowed)
        if len(root.moves) == 1:  # type: ignore[arg-type]
            return decided(root.moves[0], -root.q())  # type: ignore[index]
        if self.options.dirichlet_epsilon > 0:
            self._add_root_noise(root)

        # With pipelining, the network evaluates one batch on a worker thread (onnxruntime
        # releases the GIL) while this thread descends for the next: Python's tree work hides
        # behind the network's instead of adding to it.
        depth = 1 if self.options.pipeline else 0
        in_flight: deque[tuple[_Batch, Future[_Output] | _Output]] = deque()
        next_progress = start + progress_interval
        # One turn of the loop: the hard limit is checked once per turn, so a search that would
        # pass it during the next turn (and then wait for the batch in flight) stops now.
        turn, turn_start = 0.0, start
        while not (self._stop.is_set() or stop.is_set()):
            now = self._now()
            turn, turn_start = now - turn_start, now
            if self._limit_reached(root, limits, counters, now - start, turn):
                break
            if self._nodes >= self.node_cap:
                break
            batch = self._collect(root, counters)
            if batch is not None:
                job = self._executor().submit(self._run, batch) if depth else self._run(batch)
                in_flight.append((batch, job))
            if len(in_flight) > depth or (batch is None and in_flight):
                self._finish_oldest(in_flight, counters)
            if on_progress is not None and self._now() >= next_progress:
                on_progress(self._result(root, counters, start))
                next_progress = self._now() + progress_interval
        while in_flight:
            self._finish_oldest(in_flight, counters)
        return self._result(root, counters, start)

    def _collect(self, root: Node, counters: _Counters) -> _Batch | None:
        """One batch of new leaves, encoded for one network call (None when there are none)."""
        paths, leaves = self._descend_batch(root, counters, self.options.batch_size)
        return self._encode(paths, leaves) if leaves else None

    def _descend_batch(self, root: Node, counters: _Counters,
                       size: int) -> tuple[list[list[Node]], list[Node]]:
        """Descend until `size` new leaves need the network; back up positions the rules decide
        at once on the way. Those cost no network call, so they do not count towards the batch
        (else a tree full of settled lines sends the network small batches), but at most
        `size * SETTLED_DESCENTS` descents are made for one batch."""
        vl = self.options.virtual_loss
        paths: list[list[Node]] = []
        leaves: list[Node] = []
        for _ in range(size * SETTLED_DESCENTS):
            if len(leaves) == size:
                break
            path, created = self._descend(root, vl)
            leaf = path[-1]
            if leaf.terminal is not None:
                backup(path, leaf.terminal, vl)
                counters.playouts += 1
            elif created:
                paths.append(path)
                leaves.append(leaf)
            else:  # the leaf already waits for the network in this or the previous batch
                revert_virtual_loss(path, vl)
                counters.collisions += 1
                break
        counters.started += len(leaves)
        return paths, leaves

    def _finish_oldest(self, in_flight: deque[tuple[_Batch, Future[_Output] | _Output]],
                       counters: _Counters) -> None:
        batch, job = in_flight.popleft()
        self._finish(batch, job.result() if isinstance(job, Future) else job, counters)

    def _descend(self, root: Node, vl: int) -> tuple[list[Node], bool]:
        """Walk from the root to a leaf, leaving virtual loss; True if the leaf is new."""
        c_puct, fpu_reduction = self.options.c_puct, self.options.fpu_reduction
        node = root
        node.n += vl
        node.w -= vl
        path = [node]
        while node.terminal is None and node.moves is not None:
            i = select(node, c_puct, fpu_reduction)
            if i < node.tried:
                node = node.children[i]
                created = False
            else:
                node = self._make_child(node, i)
                created = True
            node.n += vl
            node.w -= vl
            path.append(node)
            if created:
                return path, True
        return path, False

    def _make_child(self, parent: Node, i: int) -> Node:
        self._nodes += 1
        return _new_child(parent, i)

    # -- lockstep: many trees, one network call (self-play) ---------------------------------------
    def begin(self, game: Game) -> SearchResult | None:
        """Start a lockstep search of `game` (the tree is reused as by `search`), then alternate
        `gather` and `absorb` until `result()` has enough visits. Returns a result at once when
        the rules decide the move (an immediate win); the network is then not needed.

        This lets a caller drive many trees and evaluate all their leaves in one network call:
        self-play's way to feed the network big batches from Python. Subgraph sampling is not
        available here (the caller builds the network input from full positions)."""
        if game.is_over():
            raise ValueError("the game is over: there is no move to search")
        if self.options.subgraphs.enabled:
            raise ValueError("lockstep search evaluates full positions: disable subgraphs")
        self._lock = _Lockstep(self._root_for(game), _Counters(), self._now())
        root = self._lock.root
        wins = root.game.winning_moves()
        if wins:
            return self._decided(root, wins[0], 1.0, self._lock.start)
        if root.expanded and self.options.dirichlet_epsilon > 0:
            self._add_root_noise(root)
        return None

    def gather(self, max_leaves: int) -> list[Game]:
        """Positions for the network, in order (at most `max_leaves`; maybe none when every
        descent ended in a position the rules decide). Answer them with `absorb`."""
        lock = self._require_lockstep()
        root = lock.root
        if not root.expanded:
            add_virtual_loss([root], self.options.virtual_loss)
            lock.paths, lock.leaves = [[root]], [root]
        else:
            lock.paths, lock.leaves = self._descend_batch(root, lock.counters, max_leaves)
        return [leaf.game for leaf in lock.leaves]

    def absorb(self, log_policy: np.ndarray, values: np.ndarray) -> None:
        """The network's outputs (rows in `gather`'s order) for the last gathered positions."""
        lock = self._require_lockstep()
        root_was_leaf = not lock.root.expanded
        self._absorb_rows(lock.paths, lock.leaves, log_policy, values, 1)
        lock.counters.evaluated += len(lock.leaves)
        lock.counters.playouts += len(lock.leaves)
        lock.counters.batches += 1
        lock.paths, lock.leaves = [], []
        if root_was_leaf and self.options.dirichlet_epsilon > 0:
            self._add_root_noise(lock.root)

    def result(self) -> SearchResult:
        """The lockstep search's result so far."""
        lock = self._require_lockstep()
        return self._result(lock.root, lock.counters, lock.start)

    def _require_lockstep(self) -> _Lockstep:
        if self._lock is None:
            raise RuntimeError("call begin() before gather(), absorb() or result()")
        return self._lock

    # -- evaluation ------------------------------------------------------------------------------
    def _encode(self, paths: list[list[Node]], leaves: list[Node]) -> _Batch:
        """The network input for `leaves`: each position, then its sub-boards when sampling."""
        first = leaves[0].game
        lay = layout(first.width, first.height)
        sub = self.options.subgraphs
        k = sub.count if sub.enabled else 0
        group = 1 + k
        rows = len(leaves) * group
        x = self._buffer(lay, first.num_features(), rows)
        for j, leaf in enumerate(leaves):
            r = j * group
            leaf.game.encode(x[r])
            if k:
                x[r + 1:r + group] = x[r]
        mask = self._subgraph_masks(lay, len(leaves), k) if k else None
        return _Batch(paths, leaves, lay, x, mask, group)

    def _run(self, batch: _Batch) -> _Output:
        """The network call (on the worker thread when pipelining)."""
        t0 = time.perf_counter()
        log_policy, values = self.evaluator.run(batch.x, batch.layout, batch.mask)
        return log_policy, values, time.perf_counter() - t0

    def _finish(self, batch: _Batch, output: _Output, counters: _Counters) -> None:
        """Expand the evaluated leaves and back their values up."""
        log_policy, values, seconds = output
        self._absorb_rows(batch.paths, batch.leaves, log_policy, values, batch.group)
        self._release(batch.x)
        counters.eval_seconds += seconds
        counters.batches += 1
        counters.evaluated += len(batch.leaves)
        counters.playouts += len(batch.leaves)

    def _absorb_rows(self, paths: list[list[Node]], leaves: list[Node], log_policy: np.ndarray,
                     values: np.ndarray, group: int) -> None:
        vl = self.options.virtual_loss
        for j, (path, leaf) in enumerate(zip(paths, leaves)):
            r = j * group
            self._expand(leaf, log_policy[r], log_policy[r + 1:r + group] if group > 1 else None)
            backup(path, float(values[r]), vl)

    def _expand(self, node: Node, log_policy: np.ndarray, sub_policies: np.ndarray | None) -> None:
        moves = _candidate_moves(node)
        priors = move_priors(log_policy, moves)
        if sub_policies is not None:
            sub = np.zeros_like(priors)
            for row in sub_policies:
                sub += move_priors(row, moves)
            blend = self.options.subgraphs.blend
            priors = (1.0 - blend) * priors + blend * (sub / len(sub_policies))
        order = np.argsort(-priors, kind="stable")
        node.set_moves(moves[order].tolist(), priors[order].tolist())

    def _buffer(self, lay: GraphLayout, features: int, rows: int) -> np.ndarray:
        """An input buffer of `rows` rows from a small per-size pool: a batch in flight on the
        worker thread keeps its buffer until `_release`."""
        pool = self._buffers.setdefault((lay.num_nodes, features), [])
        cap = max(rows, self.options.batch_size * (1 + self.options.subgraphs.count))
        for i, buf in enumerate(pool):
            if buf.shape[0] >= rows:
                del pool[i]
                return buf[:rows]
        return np.zeros((cap, lay.num_nodes, features), dtype=np.float32)[:rows]

    def _release(self, x: np.ndarray) -> None:
        base = x.base if x.base is not None else x
        self._buffers.setdefault((base.shape[1], base.shape[2]), []).append(base)

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="saz-eval")
        return self._pool

    def _subgraph_masks(self, lay: GraphLayout, leaves: int, k: int) -> np.ndarray:
        mask = np.ones((leaves * (1 + k), lay.num_nodes), dtype=bool)
        windows = window_masks(lay.width, lay.height, leaves * k, self.options.subgraphs, self.rng)
        for j in range(leaves):
            mask[j * (1 + k) + 1:(j + 1) * (1 + k)] = windows[j * k:(j + 1) * k]
        return mask

    def _add_root_noise(self, root: Node) -> None:
        priors = np.asarray(root.priors, dtype=np.float64)
        alpha = self.options.dirichlet_alpha_scale / len(priors)
        noise = self.rng.dirichlet(np.full(len(priors), alpha))
        eps = self.options.dirichlet_epsilon
        root.reorder_untried(((1.0 - eps) * priors + eps * noise).tolist())

    # -- tree reuse ------------------------------------------------------------------------------
    def _root_for(self, game: Game) -> Node:
        """The root for `game`: the matching subtree of the previous tree, or a fresh node."""
        root = self.root
        if root is not None and _same_rules(root.game, game):
            known = root.game.moves
            moves = game.moves
            if len(moves) >= len(known) and moves[:len(known)] == known:
                node: Node | None = root
                for move in moves[len(known):]:
                    i = node.child_index(move) if node is not None else -1
                    node = node.children[i] if i >= 0 else None
                # A position the rules ended (two passes) is searched only as played on
                # (`Game.continued`), which the tree's node of it is not.
                if (node is not None and node.game.hash == game.hash
                        and not node.game.is_over()):
                    node.terminal = None  # a proven loss is still a position to move from
                    self.root = node
                    self._nodes = _count(node)
                    return node
        self.root = Node(game.copy())
        self.root.forced = self.root.game.forced_moves()
        self._nodes = 1
        return self.root

    # -- memory ----------------------------------------------------------------------------------
    def _node_cap(self, game: Game) -> int:
        """The most nodes a search of `game` may hold: `options.max_nodes`, and under a memory
        limit the nodes that fit in what the limit leaves.

        The process's resident memory now includes the tree of the previous search, whose nodes
        the new one reuses or frees for reuse, so they count as room: the cap is that tree's
        nodes plus the memory still free under the limit (less the headroom) divided by a
        node's bytes. A process already over its limit gets no new nodes (the search then
        answers from the tree it has, or the network's favourite move)."""
        limit = self.options.memory_limit
        if limit is None:
            return self.options.max_nodes
        spare = limit * MEMORY_HEADROOM - resident_bytes()
        room = self._nodes + int(spare / (node_bytes(game) * NODE_BYTES_MARGIN))
        return max(0, min(self.options.max_nodes, room))

    # -- stopping --------------------------------------------------------------------------------
    def _limit_reached(self, root: Node, limits: SearchLimits, counters: _Counters,
                       elapsed: float, turn: float = 0.0) -> bool:
        """Whether to stop after `elapsed` seconds, the last turn of the loop having taken
        `turn`: the hard limit is kept with the next turn included."""
        if limits.visits is not None and root.n >= limits.visits:
            return True
        if limits.playouts is not None and counters.started >= limits.playouts:
            return True
        if limits.hard_seconds is not None and elapsed + turn >= limits.hard_seconds:
            return True
        if limits.soft_seconds is not None and elapsed >= limits.soft_seconds:
            if limits.hard_seconds is None or not _unstable(root):
                return True
        if limits.early_stop and counters.playouts > 0:
            return _decided_early(root, limits, counters, elapsed)
        return False

    # -- results ---------------------------------------------------------------------------------
    def _decided(self, root: Node, move: int, value: float, start: float) -> SearchResult:
        """The result of a move the rules chose: one exact evaluation, counted as one visit."""
        stats = SearchStats(seconds=self._now() - start, nodes=self._nodes)
        info = MoveInfo(move, 1, value, 1.0, value, (move,))
        return SearchResult(move, value, root.n, (info,), stats, True, root.game.num_nodes)

    def _result(self, root: Node, counters: _Counters, start: float) -> SearchResult:
        infos = []
        for child in root.children:
            if child.n <= 0:
                continue
            q = child.q()
            lcb = q - 1.96 * sqrt(max(1.0 - q * q, 0.01) / child.n)
            pv = (child.move, *principal_variation(child))
            infos.append(MoveInfo(child.move, child.n, q, child.prior, lcb, pv))
        infos.sort(key=lambda m: (m.visits, m.value), reverse=True)
        if infos:
            best = infos[0].move
        else:  # nothing searched yet: the network's favourite, else any legal move
            best = root.moves[0] if root.moves else int(root.game.legal_moves()[0])
        value = -root.w / root.n if root.n else 0.0
        stats = counters.freeze(self._now() - start, self._nodes)
        return SearchResult(best, value, root.n, tuple(infos), stats, False, root.game.num_nodes)


#: What one network call returns: log-policy [rows, N], values [rows], seconds inside the call.
_Output = tuple[np.ndarray, np.ndarray, float]


@dataclass
class _Batch:
    """Leaves waiting for one network call, with their paths and encoded input."""

    paths: list[list[Node]]
    leaves: list[Node]
    layout: GraphLayout
    x: np.ndarray
    mask: np.ndarray | None
    #: Rows per leaf: the position itself, then its sub-boards.
    group: int


@dataclass
class _Lockstep:
    """The state of a lockstep search between calls."""

    root: Node
    counters: _Counters
    start: float
    paths: list[list[Node]] = field(default_factory=list)
    leaves: list[Node] = field(default_factory=list)


@dataclass
class _Counters:
    #: Leaves sent to the network (counted when collected, so limits never overshoot a batch).
    started: int = 0
    playouts: int = 0
    batches: int = 0
    evaluated: int = 0
    collisions: int = 0
    eval_seconds: float = 0.0

    def freeze(self, seconds: float, nodes: int) -> SearchStats:
        return SearchStats(self.playouts, self.batches, self.evaluated, self.collisions,
                           seconds, self.eval_seconds, nodes)


def _restrict(root: Node, allowed: set[int]) -> None:
    """Keep only the allowed moves at a freshly expanded root (no children yet)."""
    kept = [(m, p) for m, p in zip(root.moves, root.priors) if m in allowed]  # type: ignore[arg-type]
    if not kept:  # the rules forced other moves: keep them rather than having none
        return
    total = sum(p for _, p in kept)
    root.set_moves([m for m, _ in kept], [p / total for _, p in kept])


def _new_child(parent: Node, i: int) -> Node:
    """The child of `parent` for its move `i` (the first untried one), as the search makes it:
    its own copy of the position with the move played, scored now if the rules settle it."""
    game = parent.game.copy()
    game.play(parent.moves[i])  # type: ignore[index]
    child = Node(game, parent.moves[i], parent.priors[i])  # type: ignore[index]
    parent.children.append(child)
    parent.tried += 1
    _decide_by_rules(child)
    return child


#: Bytes per tree node by (game class, width, height, rules): measured once per board.
_NODE_BYTES: dict[tuple[object, ...], float] = {}


def node_bytes(game: Game) -> float:
    """What one tree node of `game`'s kind and size costs in bytes: its position, the node and
    its expansion (the lists of moves and priors), as `NODE_SAMPLES` nodes made and expanded as
    the search does (`_sample_tree`) allocate them. Measured once per game, size and rules (a
    few tens of milliseconds), then remembered."""
    key = (type(game), game.width, game.height, getattr(game, "rules", None))
    cost = _NODE_BYTES.get(key)
    if cost is None:
        _sample_tree(game, 8)  # the rules' tables of a new size are built once, not per node
        nodes, allocated = allocated_by(lambda: _sample_tree(game, NODE_SAMPLES))
        cost = _NODE_BYTES[key] = max(1.0, allocated / len(nodes))
    return cost


def _sample_tree(game: Game, count: int) -> list[Node]:
    """A tree of `count` nodes below `game` (or fewer where the game runs out of moves), grown
    at random parents, each node expanded as the network would expand it (uniform priors)."""
    rng = np.random.default_rng(0)
    root = Node(game.copy())
    root.forced = root.game.forced_moves()
    nodes = [root]
    growing = [root]
    while growing and len(nodes) < count:
        parent = growing[int(rng.integers(len(growing)))]
        if not parent.expanded:
            _expand_uniformly(parent)
        if parent.tried >= len(parent.moves):  # type: ignore[arg-type]
            growing.remove(parent)
            continue
        child = _new_child(parent, parent.tried)
        nodes.append(child)
        if child.terminal is None:
            growing.append(child)
    for node in nodes:
        if node.terminal is None and not node.expanded:
            _expand_uniformly(node)
    return nodes


def _candidate_moves(node: Node) -> np.ndarray:
    """The moves a node's expansion considers: the ones the rules force, when they name any,
    else every legal move."""
    forced = node.forced
    return np.asarray(forced, dtype=np.int64) if forced else node.game.legal_moves()


def _expand_uniformly(node: Node) -> None:
    """`MCTS._expand` with every move equally likely: the same lists of the same types."""
    moves = _candidate_moves(node)
    priors = np.full(len(moves), 1.0 / max(1, len(moves)), dtype=np.float32)
    node.set_moves(moves.tolist(), priors.tolist())


def _decide_by_rules(node: Node) -> None:
    """Score a new node exactly when the rules settle it (the depth-1 and depth-2 tactics), and
    note the moves it is forced to."""
    game = node.game
    if game.is_over():
        node.terminal = game.outcome_for(game.to_move)
    elif game.winning_moves():
        node.terminal = 1.0
    else:
        node.forced = game.forced_moves()
        if node.forced == []:
            node.terminal = -1.0


def _same_rules(a: Game, b: Game) -> bool:
    return (type(a) is type(b) and a.grid is b.grid
            and getattr(a, "rules", None) == getattr(b, "rules", None))


def _count(node: Node) -> int:
    total, stack = 0, [node]
    while stack:
        n = stack.pop()
        total += 1
        stack.extend(n.children)
    return total


def _top_two(root: Node) -> tuple[Node | None, Node | None]:
    first = second = None
    for child in root.children:
        if first is None or child.n > first.n:
            first, second = child, first
        elif second is None or child.n > second.n:
            second = child
    return first, second


def _unstable(root: Node) -> bool:
    """The most visited move is not the best valued among well-visited ones: think longer."""
    first, second = _top_two(root)
    if first is None or second is None or first.n == 0:
        return False
    return second.n >= 0.3 * first.n and second.q() > first.q()


def _decided_early(root: Node, limits: SearchLimits, counters: _Counters, elapsed: float) -> bool:
    """True when the runner-up cannot catch the leader within the remaining visits or time."""
    first, second = _top_two(root)
    if first is None:
        return False
    lead = first.n - (second.n if second is not None else 0)
    remaining = float("inf")
    if limits.visits is not None:
        remaining = min(remaining, limits.visits - root.n)
    if limits.playouts is not None:
        remaining = min(remaining, limits.playouts - counters.playouts)
    if limits.soft_seconds is not None and elapsed > 0:
        rate = counters.playouts / elapsed
        remaining = min(remaining, rate * (limits.soft_seconds - elapsed))
    return lead > remaining
