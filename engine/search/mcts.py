"""Batched PUCT Monte Carlo tree search over any `Game`, evaluated by the GNN.

One iteration collects up to `batch_size` distinct leaves (virtual loss steers each descent away
from the paths already in flight), evaluates them in one network call, expands them and backs
their values up. Positions the rules decide (game over, a win the game proves at once, a threat
that cannot be stopped) are scored exactly and never sent to the network. The tree survives
between calls: searching a position that extends the previous root by a few moves reuses the
subtree.

The tree itself, its descents, expansions and back-ups run in the compiled core
(`engine/core/tree.hpp`, `_core.Tree`) without the GIL, and it holds no positions: a leaf's
position is replayed from the root's and encoded straight into the batch buffer. The tree has a
byte budget (`SearchOptions.max_tree_bytes`, and less under a process memory limit); when it is
reached the search stops growing it and answers from what it has. This module is the part a
person tunes: the limits, pipelining with the network, noise, results.

`MCTS` is driven by one thread at a time; `stop()` may be called from any thread and ends the
running search at the next batch boundary (front-ends use it for pondering and analysis).
"""
from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import astuple, dataclass, field, replace
from math import sqrt
from typing import NamedTuple, Protocol

import numpy as np

from saz.engine import _core
from saz.engine.games.base import Game
from saz.engine.games.capabilities import Solvable, ThreatSearching
from saz.engine.graph import GraphLayout, layout, layout_of
from saz.engine.model_card import MASKED_LOG_PROB
from saz.engine.search.endgame import EndgamePlanner
from saz.engine.search.evalcache import EvalCache, Lookup
from saz.engine.search.gumbel import Gumbel, GumbelRoot
from saz.engine.search.memory import resident_bytes
from saz.engine.search.options import SearchOptions
from saz.engine.search.subgraph import window_masks

#: How many descents one batch may spend per leaf it asks for, counting those the rules settle.
SETTLED_DESCENTS = 4
#: Under a memory limit, the share of it the process may fill: the rest is for what the tree's
#: budget does not count (the network's buffers, a batch in flight, the interpreter's growth).
MEMORY_HEADROOM = 0.9


class PolicyValueEvaluator(Protocol):
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
    #: Whether `value` is a proof (+1 / 0 / -1: the rules, the endgame solver or the proofs
    #: below it decided this move's result), not an average.
    proven: bool = False
    #: The exact final margin (Othello's discs) for the root's side to move after this move,
    #: when the endgame solver solved it exactly.
    exact_score: float | None = None


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
    #: Leaves answered from the evaluation cache (`EvalCache`), not by a network call.
    cached: int = 0

    def __add__(self, other: SearchStats) -> SearchStats:
        """Field by field: the totals of two searches (benches sum a game's searches)."""
        return SearchStats(*(a + b for a, b in zip(astuple(self), astuple(other))))

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
    #: True when the rules decided the move without search (an immediate win, a lone move, an
    #: endgame the solver settled).
    decided_by_rules: bool = False
    num_nodes: int = field(default=0, repr=False)
    #: True when `value` is a proof, not an average: the rules, the endgame solver or the threat
    #: search showed the root won (+1), drawn (0) or lost (-1) whatever the opponent does.
    proven: bool = False
    #: The endgame solver's exact final margin for the side to move (Othello's discs), when it
    #: decided the move; analysis shows it as the score.
    exact_score: float | None = None
    #: Entries of the root game's policy (`Game.policy_size`); 0: `num_nodes`, one per node.
    policy_size: int = field(default=0, repr=False)
    #: Each root move's index in that policy (`Game.policy_indices`); None: the move itself.
    policy_index: Mapping[int, int] | None = field(default=None, repr=False)
    #: A Gumbel root's improved policy over every root move (`GumbelRoot.target`,
    #: `policy_size` wide), the policy target in place of the visits; None: no Gumbel root.
    policy_target: np.ndarray | None = field(default=None, repr=False, compare=False)

    def index_of(self, move: int) -> int:
        """Where `move` sits in the policy target (`policy_index`)."""
        return move if self.policy_index is None else self.policy_index[move]

    def visit_distribution(self) -> np.ndarray:
        """Visits per policy index (`[policy_size]`: in the lattice games per node, pass the extra
        node) normalised to sum 1: the policy target."""
        dist = np.zeros(self.policy_size or self.num_nodes, dtype=np.float32)
        for info in self.moves:
            dist[self.index_of(info.move)] = info.visits
        total = dist.sum()
        if total > 0:
            dist /= total
        else:
            dist[self.index_of(self.best_move)] = 1.0
        return dist


def prune_policy_target(result: SearchResult, c_puct: float,
                        forced_playouts_k: float) -> np.ndarray:
    """The visit distribution with forced playouts taken back out (KataGo's policy target
    pruning): every move but the most visited loses up to its forced visits,
    sqrt(k * prior * root visits), as long as its PUCT score stays below the best move's; a move
    left with a single visit is dropped. Without forced playouts it is `visit_distribution`."""
    if forced_playouts_k <= 0 or len(result.moves) < 2:
        return result.visit_distribution()
    total = sum(m.visits for m in result.moves)
    best = max(result.moves, key=lambda m: m.visits)
    c_sqrt = c_puct * sqrt(total)
    best_score = best.value + c_sqrt * best.prior / (1 + best.visits)
    dist = np.zeros(result.policy_size or result.num_nodes, dtype=np.float32)
    for info in result.moves:
        visits = float(info.visits)
        if info is not best:
            forced = sqrt(forced_playouts_k * info.prior * total)
            floor = max(0.0, visits - forced)
            # Take visits back while the move, with one visit fewer, still scores below the best.
            while (visits - 1.0 >= floor
                   and info.value + c_sqrt * info.prior / visits < best_score):
                visits -= 1.0
            if visits <= 1.0:
                visits = 0.0
        dist[result.index_of(info.move)] = visits
    dist /= dist.sum()
    return dist


def policy_fields(game: Game, moves: Collection[int]) -> tuple[int, dict[int, int]]:
    """A result's `policy_size` and `policy_index` for root `game` and its `moves`."""
    array = np.fromiter(moves, np.int64, len(moves))
    indices = np.asarray(game.policy_indices(array))
    return game.policy_size, dict(zip(array.tolist(), indices.tolist(), strict=True))


def choose_move(result: SearchResult, temperature: float, rng: np.random.Generator) -> int:
    """The move to play: the best one at temperature 0, else sampled with p ~ visits^(1/T)."""
    if temperature <= 0 or len(result.moves) <= 1:
        return result.best_move
    visits = np.array([m.visits for m in result.moves], dtype=np.float64)
    weights = visits ** (1.0 / temperature)
    return int(result.moves[int(rng.choice(len(visits), p=weights / weights.sum()))].move)


class MCTS:
    """A reusable search tree bound to one evaluator."""

    def __init__(self, evaluator: PolicyValueEvaluator, options: SearchOptions | None = None,
                 *, now: Callable[[], float] = time.monotonic) -> None:
        self.evaluator = evaluator
        #: The time source of the search's limits (a fake clock in tests).
        self._now = now
        self.options = options or SearchOptions()
        self.rng = np.random.default_rng(self.options.seed)
        #: The endgame solver's measured rate and the solve decisions (`options.solve_empties`
        #: None: auto); kept across searches, so its measurements build up over a game.
        self.endgame = EndgamePlanner(now=now)
        self._cache = EvalCache(self._cache_budget())
        self._tree = _core.Tree(self._tree_options(held=0))
        #: The position at the tree's root (None: no tree yet).
        self._root: Game | None = None
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
        lay = layout_of(game)
        x = self._buffer(lay, game.num_features(), self.options.batch_size)
        game.encode(x[0])
        x[1:] = x[0]
        for rows in (1, self.options.batch_size):
            self.evaluator.run(x[:rows], lay)
        self._release(x)
        self._executor()

    def reset(self) -> None:
        """Forget the tree (new game, changed rules); a large one is freed off the clock. The
        evaluation cache stays: what the network said about a position does not change."""
        self._root = None
        self._tree.clear()

    def clear_cache(self) -> None:
        """Forget the tree and every cached evaluation (KataGo's `clear_cache`)."""
        self.reset()
        self._cache.clear()

    @property
    def cache(self) -> EvalCache:
        """The network's answers by position, shared by every search of this tree."""
        return self._cache

    @property
    def root_visits(self) -> int:
        """Visits of the tree's root now (0: no tree)."""
        return self._tree.root_visits if self._root is not None else 0

    @property
    def num_nodes(self) -> int:
        """Nodes in the tree now."""
        return self._tree.num_nodes if self._root is not None else 0

    @property
    def tree_bytes(self) -> int:
        """Bytes the tree holds now (it grows in chunks of about a megabyte)."""
        return self._tree.bytes if self._root is not None else 0

    @property
    def tree_budget(self) -> int:
        """The most bytes the tree of the last search (or the one running) may hold."""
        return self._tree.options.max_bytes

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
        root = self._root_for(game)
        tree = self._tree

        def decided(move: int, value: float, *, proven: bool = True,
                    exact_score: float | None = None,
                    infos: tuple[MoveInfo, ...] | None = None) -> SearchResult:
            result = self._decided(move, value, start, proven=proven, exact_score=exact_score,
                                   infos=infos)
            if on_progress is not None:  # analysis shows the move the rules chose
                on_progress(result)
            return result

        wins = [m for m in root.winning_moves() if allowed is None or m in allowed]
        if wins:
            return decided(wins[0], 1.0)
        solved = self._solve_root(root, allowed, limits)
        if solved is not None:
            move, margin, exact = solved
            if not exact:
                return decided(move, float(np.sign(margin)))
            infos = (self._solved_moves(root, move, margin, limits, start)
                     if on_progress is not None else None)
            return decided(move, float(np.sign(margin)), exact_score=float(margin), infos=infos)
        threat_budget = self._threat_budget(limits)
        threat = self._threat_root(root, allowed, self._win_budget(limits, threat_budget))
        if threat is not None:
            return decided(threat, 1.0)
        counters = _Counters()
        lay = layout_of(root)
        if not tree.root_expanded:
            batch = self._collect(lay, counters, 1, focus=True, cached=True)
            if batch is not None:
                self._finish(batch, self._run(batch), counters)
        if allowed is not None:
            tree.restrict_root(sorted(allowed))
        self._lift_urgent_moves(root)
        guarded = self._guard_root(root, threat_budget)
        moves, _ = tree.root_edges()
        if len(moves) == 1:
            return decided(moves[0], tree.root_value, proven=False)
        if self.options.dirichlet_epsilon > 0:
            self._add_root_noise()

        # With pipelining, the network evaluates batches on worker threads (onnxruntime releases
        # the GIL, and so does the tree) while this thread descends for the next: up to
        # `search_threads` batches are in flight at once (more than one feeds a GPU).
        depth = self.options.search_threads if self.options.pipeline else 0
        in_flight: deque[tuple[_Batch, Future[_Output] | _Output]] = deque()
        next_progress = start + progress_interval
        # One turn of the loop: the hard limit is checked once per turn, so a search that would
        # pass it during the next turn (and then wait for the batch in flight) stops now.
        turn, turn_start = 0.0, start
        while not (self._stop.is_set() or stop.is_set()):
            if tree.root_proven:  # the tree proved the result: more visits change nothing
                break
            now = self._now()
            turn, turn_start = now - turn_start, now
            if self._limit_reached(limits, counters, now - start, turn):
                break
            batch = self._collect(lay, counters, self.options.batch_size, focus=True,
                                  cached=True)
            if batch is not None:
                # A batch the cache answered whole still waits its turn: the tree takes
                # batches back in the order they were collected.
                job = (self._executor().submit(self._run, batch) if depth and batch.rows
                       else self._run(batch))
                in_flight.append((batch, job))
            elif tree.full and not in_flight:
                # The tree is at its budget: answer from what it has. An analysis (no limit,
                # snapshots wanted) goes on showing it until stopped, as a GUI expects.
                if on_progress is not None and _unlimited(limits):
                    self._hold(on_progress, counters, start, progress_interval, stop)
                break
            if len(in_flight) > depth or (batch is None and in_flight):
                self._finish_oldest(in_flight, counters)
            if on_progress is not None and self._now() >= next_progress:
                on_progress(self._result(counters, start))
                next_progress = self._now() + progress_interval
        while in_flight:
            self._finish_oldest(in_flight, counters)
        if tree.root_proven and on_progress is not None and _unlimited(limits):
            # An analysis of a proven position goes on showing the proof until stopped, as a
            # GUI expects, rather than ending without a snapshot.
            self._hold(on_progress, counters, start, progress_interval, stop)
        refuted: set[int] = set()
        if guarded and not _unlimited(limits) and not (self._stop.is_set() or stop.is_set()):
            refuted = self._confirm_root(root, limits, threat_budget, start)
        self.endgame.note_search(counters.evaluated, counters.eval_seconds)
        return self._result(counters, start, refuted)

    def _hold(self, on_progress: Callable[[SearchResult], None], counters: _Counters,
              start: float, interval: float, stop: threading.Event) -> None:
        """Keep sending the full tree's result every `interval` seconds until the search is
        stopped (by `stop()` or the caller's `stop` event)."""
        wait = max(interval, 0.05)
        while not (self._stop.is_set() or stop.is_set()):
            stop.wait(wait)
            if not (self._stop.is_set() or stop.is_set()):
                on_progress(self._result(counters, start))

    def _collect(self, lay: GraphLayout, counters: _Counters, size: int, *,
                 focus: bool = False, cached: bool = False) -> _Batch | None:
        """Descend until `size` new leaves need the network, backing up on the way the positions
        the rules settle. Those cost no network call, so they do not count towards the batch
        (else a tree full of settled lines sends the network small batches), but at most
        `size * SETTLED_DESCENTS` descents are made for one batch. None: no new leaf. `focus`:
        each leaf masked to its window (`SearchOptions.focus_side`), the batch cut down to
        them (`crop`); lockstep callers get the rows whole and do that themselves. `cached`:
        leaves the evaluation cache knows are answered from it, and only the others are left
        for the network (not with subgraph sampling, whose windows are random)."""
        root = self._root_game()
        features = root.num_features()
        x = self._buffer(lay, features, size)
        leaves, settled, collisions = self._tree.collect(size, size * SETTLED_DESCENTS, x)
        counters.playouts += settled
        counters.collisions += collisions
        counters.started += leaves
        if not leaves:
            self._release(x)
            return None
        x = x[:leaves]
        sub = self.options.subgraphs
        k = sub.count if sub.enabled else 0
        lookup = None
        if cached and not k and self._cache.max_bytes:
            lookup = Lookup.of(self._cache, x)
            if lookup.missing.size < leaves:
                net_x = x[lookup.missing]
                self._release(x)
                x = net_x
        mask = self.focus_masks(x, lay) if focus and len(x) else None
        if k:  # each leaf, then k copies of it that the masks cut down to sub-boards
            rows = np.repeat(x, 1 + k, axis=0)
            self._release(x)
            x = rows
            windows = self._subgraph_masks(lay, leaves, k)
            mask = windows if mask is None else windows & np.repeat(mask, 1 + k, axis=0)
        cut = crop(x, mask, lay) if focus and mask is not None and len(x) else None
        if cut is None:
            return _Batch(leaves, lay, x, mask, 1 + k, root.policy_size, lookup=lookup)
        self._release(x)
        return _Batch(leaves, cut.layout, cut.x, cut.mask, 1 + k, root.policy_size, cut, lookup)

    def focus_masks(self, x: np.ndarray, lay: GraphLayout) -> np.ndarray | None:
        """The nodes of each encoded leaf `x` of `lay`'s board that the network sees
        (`SearchOptions.focus_side`, `Game.focus_masks`); None: all of them. Lockstep callers
        ask it of the rows they gather."""
        side = self.options.focus_side
        if side <= 0 or self._root is None:
            return None
        return type(self._root).focus_masks(x, lay.width, lay.height, side)

    def _finish_oldest(self, in_flight: deque[tuple[_Batch, Future[_Output] | _Output]],
                       counters: _Counters) -> None:
        batch, job = in_flight.popleft()
        self._finish(batch, job.result() if isinstance(job, Future) else job, counters)

    # -- lockstep: many trees, one network call (self-play) ---------------------------------------
    def begin(self, game: Game, *, explore: bool = True,
              gumbel: Gumbel | None = None) -> SearchResult | None:
        """Start a lockstep search of `game` (the tree is reused as by `search`), then alternate
        `gather` and `absorb` until `result()` has enough visits. Returns a result at once when
        the rules decide the move (an immediate win); the network is then not needed.
        `explore=False` leaves the root noise out for this search (self-play's fast searches,
        whose moves are played but never taught: KataGo's playout cap randomization).
        `gumbel`: a Gumbel root instead of PUCT's (`gumbel.GumbelRoot`: sampled moves, no
        noise whatever `explore` says), which ends the search when its halving is over
        (`gumbel_done`) and chooses the move and the policy target of `result()`.

        This lets a caller drive many trees and evaluate all their leaves in one network call:
        self-play's way to feed the network big batches. Subgraph sampling is not available here
        (the caller evaluates full positions)."""
        if game.is_over():
            raise ValueError("the game is over: there is no move to search")
        if self.options.subgraphs.enabled:
            raise ValueError("lockstep search evaluates full positions: disable subgraphs")
        root = self._root_for(game)
        self._lock = _Lockstep(_Counters(), self._now(), layout_of(root), explore=explore,
                               gumbel=gumbel)
        wins = root.winning_moves()
        if wins:
            return self._decided(wins[0], 1.0, self._lock.start)
        solved = self._solve_root(root, None, SearchLimits())
        if solved is not None:
            move, margin, exact = solved
            return self._decided(move, float(np.sign(margin)), self._lock.start,
                                 exact_score=float(margin) if exact else None)
        if self._tree.root_expanded:
            self._explore_root(self._lock)
        return None

    @property
    def layout(self) -> GraphLayout:
        """The graph layout of the lockstep search's positions (what `gather`'s rows are)."""
        return self._require_lockstep().layout

    def gather(self, max_leaves: int) -> np.ndarray:
        """The encoded positions `[leaves, num_nodes, F]` for the network, at most `max_leaves`
        (maybe none when every descent ended in a position the rules decide). The rows are the
        search's own buffer: use them before the next `gather`. Answer them with `absorb`."""
        lock = self._require_lockstep()
        # The root itself, alone, when it is new (its edges wait for the network from then on).
        lock.fresh_root = not self._tree.root_expanded
        size = 1 if lock.fresh_root else max_leaves
        plan = lock.plan
        batch = None
        if plan is None or plan.advance(self._tree):
            batch = self._collect(lock.layout, lock.counters, size)
            if batch is None and plan is not None:  # settled descents may have spent a phase
                plan.advance(self._tree)
        lock.batch = batch
        if batch is None:
            features = self._root_game().num_features()
            return np.empty((0, lock.layout.num_nodes, features), np.float32)
        return batch.x

    def absorb(self, log_policy: np.ndarray, values: np.ndarray) -> None:
        """The network's outputs (rows in `gather`'s order: `log_policy [rows, policy_size]`,
        `values [rows]`) for the last gathered positions."""
        lock = self._require_lockstep()
        if lock.batch is None:
            return
        self._finish(lock.batch, (log_policy, values, 0.0), lock.counters)
        lock.batch = None
        if lock.fresh_root:
            lock.fresh_root = False
            self._explore_root(lock)
        elif lock.plan is not None:
            lock.plan.advance(self._tree)

    def _explore_root(self, lock: _Lockstep) -> None:
        """At the lockstep search's newly expanded root: its Gumbel root, else the noise."""
        if lock.gumbel is not None:
            lock.plan = GumbelRoot(lock.gumbel, self._tree, self.rng)
        elif lock.explore and self.options.dirichlet_epsilon > 0:
            self._add_root_noise()

    @property
    def gumbel_done(self) -> bool:
        """Whether the lockstep search's Gumbel root is over (False without one)."""
        return self._lock is not None and self._lock.plan is not None and self._lock.plan.over

    def result(self) -> SearchResult:
        """The lockstep search's result so far; with a Gumbel root, its move and its policy
        target."""
        lock = self._require_lockstep()
        result = self._result(lock.counters, lock.start)
        if lock.plan is None:
            return result
        root = self._root_game()
        move = lock.plan.choice(self._tree)
        size, index = policy_fields(root, [move, *(m.move for m in result.moves)])
        return replace(result, best_move=move, policy_size=size, policy_index=index,
                       policy_target=lock.plan.target(root, self._tree))

    def _root_game(self) -> Game:
        """The game at the root; only called while a search has one."""
        if self._root is None:
            raise RuntimeError("the search has no root position")
        return self._root

    def _require_lockstep(self) -> _Lockstep:
        if self._lock is None:
            raise RuntimeError("call begin() before gather(), absorb() or result()")
        return self._lock

    # -- evaluation ------------------------------------------------------------------------------
    def _run(self, batch: _Batch) -> _Output:
        """The network call (on the worker thread when pipelining); none for a batch the
        cache answered whole."""
        if not batch.rows:
            return np.empty((0, batch.policy_size), np.float32), np.empty(0, np.float32), 0.0
        t0 = time.perf_counter()
        log_policy, values = self.evaluator.run(batch.x, batch.layout, batch.mask)
        return log_policy, values, time.perf_counter() - t0

    def _finish(self, batch: _Batch, output: _Output, counters: _Counters) -> None:
        """Expand the evaluated leaves and back their values up."""
        log_policy, values, seconds = output
        if batch.cut is not None:  # a cut-down batch: the board's other nodes were masked
            log_policy = batch.cut.expand(log_policy)
        evaluated = batch.rows // batch.group
        if batch.lookup is not None:
            log_policy, values = batch.lookup.merge(self._cache, log_policy, values)
        self._tree.absorb(np.ascontiguousarray(log_policy, dtype=np.float32),
                          np.ascontiguousarray(values, dtype=np.float32),
                          batch.group, self.options.subgraphs.blend)
        if batch.cut is None:  # a cut-down batch's rows are its own, not the pool's
            self._release(batch.x)
        counters.eval_seconds += seconds
        if evaluated:  # a batch the cache answered whole made no network call
            counters.batches += 1
        counters.evaluated += evaluated
        counters.cached += batch.leaves - evaluated
        counters.playouts += batch.leaves

    def _cache_budget(self) -> int:
        """The evaluation cache's bytes: the option's, and none under a process memory limit
        (Gomocup's `INFO max_memory`), where every byte goes to the tree: at 20x20 under 350 MB
        the peak was 334-338 MiB without the cache, 341 MiB with 1/32 of the limit for it and
        346 MiB with an eighth (docs/PROTOCOLS.md), too close to a limit that disqualifies."""
        return 0 if self.options.memory_limit is not None else self.options.eval_cache_bytes

    def _buffer(self, lay: GraphLayout, features: int, rows: int) -> np.ndarray:
        """An input buffer of `rows` rows from a small per-size pool: a batch in flight on the
        worker thread keeps its buffer until `_release`."""
        pool = self._buffers.setdefault((lay.num_nodes, features), [])
        cap = max(rows, self.options.batch_size)
        for i, buf in enumerate(pool):
            if buf.shape[0] >= rows:
                del pool[i]
                return buf[:rows]
        return np.zeros((cap, lay.num_nodes, features), dtype=np.float32)[:rows]

    def _release(self, x: np.ndarray) -> None:
        base = x.base if x.base is not None else x
        if base.flags.owndata and base.shape[0] >= self.options.batch_size:
            self._buffers.setdefault((base.shape[1], base.shape[2]), []).append(base)

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.options.search_threads,
                                            thread_name_prefix="saz-eval")
        return self._pool

    def _subgraph_masks(self, lay: GraphLayout, leaves: int, k: int) -> np.ndarray:
        mask = np.ones((leaves * (1 + k), lay.num_nodes), dtype=bool)
        windows = window_masks(lay.width, lay.height, leaves * k, self.options.subgraphs, self.rng)
        for j in range(leaves):
            mask[j * (1 + k) + 1:(j + 1) * (1 + k)] = windows[j * k:(j + 1) * k]
        return mask

    def _lift_urgent_moves(self, root: Game) -> None:
        """Raise the root priors of the game's urgent moves (`Game.urgent_moves`) to at least
        `urgent_prior`: PUCT then visits them early, and what the network says of the position
        after them decides, not its prior for them."""
        floor = self.options.urgent_prior
        urgent = set(root.urgent_moves().tolist()) if floor > 0 else set()
        if not urgent:
            return
        moves, priors = self._tree.root_edges()
        lifted = [max(p, floor) if m in urgent else p for m, p in zip(moves, priors, strict=True)]
        if lifted != list(priors):
            self._tree.set_root_priors(lifted)

    def _add_root_noise(self) -> None:
        _, priors = self._tree.root_edges()
        p = np.asarray(priors, dtype=np.float64)
        alpha = self.options.dirichlet_alpha_scale / len(p)
        noise = self.rng.dirichlet(np.full(len(p), alpha))
        eps = self.options.dirichlet_epsilon
        self._tree.set_root_priors(((1.0 - eps) * p + eps * noise).tolist())

    # -- tree reuse and budget -------------------------------------------------------------------
    def _tree_options(self, held: int) -> _core.TreeOptions:
        """The tree's constants from `options`, its budget counting `held` bytes of the tree
        now resident as room (see `_tree_budget`)."""
        options = _core.TreeOptions()
        options.c_puct = self.options.c_puct
        options.fpu_reduction = self.options.fpu_reduction
        options.virtual_loss = self.options.virtual_loss
        options.forced_playouts_k = self.options.forced_playouts_k
        options.max_nodes = self.options.max_nodes
        if self.options.solve_empties is None:  # auto: leaf solves about a network call's cost
            options.solve_empties = self.endgame.leaf_threshold(_MAX_LEAF_EMPTIES)
            options.solve_nodes = 2 * self.endgame.leaf_budget()
        else:
            options.solve_empties = self.options.solve_empties
            options.solve_nodes = self.options.solve_nodes
        options.threat_nodes = self.options.threat_nodes
        options.max_bytes = self._tree_budget(held)
        # A network of an older feature version reads a prefix of the game's planes (its
        # `num_features`): the leaves skip computing the rest where that costs (Go's ladders).
        planes = getattr(self.evaluator, "num_features", None)
        if isinstance(planes, int):
            options.planes_read = planes
        return options

    def _tree_budget(self, held: int) -> int:
        """The most bytes the tree may hold: `options.max_tree_bytes`, and under a process
        memory limit no more than what the limit leaves (less the headroom). The `held` bytes
        of the tree now resident count as room: the new search reuses or frees them."""
        budget = self.options.max_tree_bytes
        limit = self.options.memory_limit
        if limit is not None:
            budget = min(budget, int(limit * MEMORY_HEADROOM) - (resident_bytes() - held))
        return max(0, budget)

    def _root_for(self, game: Game) -> Game:
        """Make the tree's root `game`'s position: the matching subtree of the previous tree
        when `game` extends its root by a few moves, else a fresh tree. Returns the root."""
        root = self._root
        self._cache.resize(self._cache_budget())
        self._tree.options = self._tree_options(held=self._tree.bytes)
        if root is not None and _same_rules(root, game):
            known, moves = root.moves, game.moves
            if len(moves) >= len(known) and moves[:len(known)] == known:
                suffix = moves[len(known):]
                # The tree's line must lead to this very position (moves played out of turn or
                # a changed side to move lead elsewhere); a position the rules ended (two
                # passes) is searched only as played on (`Game.continued`).
                if _replays_to(root, suffix, game) and self._tree.advance(suffix, game._core):
                    self._root = game.copy()
                    return self._root
        self._root = game.copy()
        self._tree.reset(game._core)
        return self._root

    # -- stopping --------------------------------------------------------------------------------
    def _limit_reached(self, limits: SearchLimits, counters: _Counters,
                       elapsed: float, turn: float = 0.0) -> bool:
        """Whether to stop after `elapsed` seconds, the last turn of the loop having taken
        `turn`: the hard limit is kept with the next turn included."""
        tree = self._tree
        if limits.visits is not None and tree.root_visits >= limits.visits:
            return True
        if limits.playouts is not None and counters.started >= limits.playouts:
            return True
        if limits.hard_seconds is not None and elapsed + turn >= limits.hard_seconds:
            return True
        children = tree.root_children() if (limits.soft_seconds is not None
                                            or limits.early_stop) else []
        if (limits.soft_seconds is not None and elapsed >= limits.soft_seconds
                and (limits.hard_seconds is None or not _unstable(children))):
            return True
        if limits.early_stop and counters.playouts > 0:
            return _decided_early(children, tree.root_visits, limits, counters, elapsed)
        return False

    # -- results ---------------------------------------------------------------------------------
    def _solve_root(self, root: Game, allowed: set[int] | None, limits: SearchLimits
                    ) -> tuple[int, int, bool] | None:
        """(move, margin, exact) when the endgame solver settles the root: the move with the best
        final margin and that margin for the side to move (`exact`), or only a move that keeps a
        proven win or draw and its sign. With `options.solve_empties` None the planner decides
        from the move's time (`limits`) and the rates it measured (`EndgamePlanner`); a fixed
        N solves at most N empty points exactly within `solve_root_nodes`. None when off, too
        far from the end, past the budget, proven lost without the exact margin (the search
        then plays on with the time left), or the move is not among `allowed`."""
        if not isinstance(root, Solvable):
            return None
        empties = self.options.solve_empties
        if empties is None:
            soft = limits.soft_seconds if limits.soft_seconds is not None else limits.hard_seconds
            solved = self.endgame.solve_root(root, soft)
            if solved is None:
                return None
            solution = solved.solution
            if not solved.exact and solution.result < 0:
                return None
        else:
            if empties <= 0 or root.num_empty > empties:
                return None
            found = root.solve(self.options.solve_root_nodes)
            if found is None:
                return None
            solution = found
        if solution.move is None or (allowed is not None and solution.move not in allowed):
            return None
        return solution.move, solution.margin, solution.exact

    def _solved_moves(self, root: Game, best: int, margin: int, limits: SearchLimits,
                      start: float) -> tuple[MoveInfo, ...] | None:
        """For analysis of an exactly solved root: every legal move with its exact margin, best
        first, as far as the planner's time allows (`EndgamePlanner.solve_children`; under a
        clock what is left of the root's solve share). None: only the best move is known."""
        if not isinstance(root, Solvable):
            return None
        soft = limits.soft_seconds if limits.soft_seconds is not None else limits.hard_seconds
        seconds = self.endgame.root_seconds(soft)
        if soft is not None:
            seconds -= self._now() - start
        others = [int(m) for m in root.legal_moves() if int(m) != best]
        margins = self.endgame.solve_children(root, others, seconds)
        margins[best] = margin
        priors: dict[int, float] = {}
        if self._tree.root_expanded:
            moves, edge_priors = self._tree.root_edges()
            priors = dict(zip(moves, edge_priors, strict=True))
        ranked = sorted(margins, key=lambda m: (m != best, -margins[m]))
        infos = []
        for move in ranked:
            value = float(np.sign(margins[move]))
            infos.append(MoveInfo(move, 1, value, priors.get(move, 0.0), value, (move,),
                                  proven=True, exact_score=float(margins[move])))
        return tuple(infos)

    def _threat_budget(self, limits: SearchLimits) -> int:
        """The positions each of the root's threat searches may visit: `threat_root_nodes`, under
        a clock no more than `_THREAT_SHARE` of the move's time, and under a visit cap no more
        than `_THREAT_NODES_PER_VISIT` per visit."""
        return _within(self.options.threat_root_nodes, limits, _THREAT_SHARE)

    def _win_budget(self, limits: SearchLimits, budget: int) -> int:
        """The positions the root's search for its own win by threats may visit: the root's
        `budget`, and under a clock up to `threat_win_nodes` within `_THREAT_WIN_SHARE` of the
        move's time (a win found ends the move at once; one not found costs that share)."""
        if budget <= 0 or limits.soft_seconds is None:
            return budget
        return max(budget, _within(self.options.threat_win_nodes, limits, _THREAT_WIN_SHARE))

    def _threat_root(self, root: Game, allowed: set[int] | None, budget: int) -> int | None:
        """A move that wins by a series of threats (fours and threes) found at the root within
        `budget` positions, where the game has a threat search; None otherwise."""
        if budget <= 0 or not isinstance(root, ThreatSearching):
            return None
        move = root.threat_win(budget, threes=True)
        if move is None or (allowed is not None and move not in allowed):
            return None
        return move

    def _guard_root(self, root: Game, budget: int) -> bool:
        """When the opponent, were it to move, would win by threats (a VCT within `budget`
        positions), settle as lost the root moves after which it still does: the network's
        favourites first, until `_GUARDED_MOVES` of them were found safe. The tree's leaves
        already answer the opponent's wins by fours; this reaches its threes. Returns whether
        the opponent had such a win (the search's move is then confirmed: `_confirm_root`)."""
        if (budget <= 0 or not isinstance(root, ThreatSearching)
                or not opponent_threatens(root, budget)):
            return False
        moves, priors = self._tree.root_edges()
        safe = 0
        ranked = [m for _, m in sorted(zip(priors, moves), reverse=True)]
        # At most three times as many searches as safe moves wanted, a quarter budget each.
        for move in ranked[:3 * _GUARDED_MOVES]:
            if safe >= _GUARDED_MOVES:
                break
            if not threat_refutes(root, move, budget // 4):
                safe += 1
            else:
                self._tree.settle_root_move(move, 1.0)  # the opponent, to move there, wins
        return True

    def _confirm_root(self, root: Game, limits: SearchLimits, budget: int,
                      start: float) -> set[int]:
        """After a guarded search, check the move it would play against the opponent's threats
        more deeply than the guard's screen did (a quarter budget each, where a refutation
        often needs more: the moves AIWine refuted took 50,000 to 500,000 positions). A
        refuted move is settled as lost and the next one checked, up to
        `threat_confirm_moves`, within `_CONFIRM_FACTOR` budgets each and, under a clock, half
        the time left before the hard limit. Returns the refuted moves, which the result ranks
        last."""
        refuted: set[int] = set()
        if self._tree.root_proven or not isinstance(root, ThreatSearching):
            return refuted
        for _ in range(self.options.threat_confirm_moves):
            nodes = budget * _CONFIRM_FACTOR
            if limits.hard_seconds is not None:
                left = limits.hard_seconds - (self._now() - start)
                nodes = min(nodes, int(left * 0.5 * _THREAT_RATE))
            if nodes <= budget // 4:  # no deeper than the guard's screen: nothing to learn
                break
            candidates = [(visits, q, move) for move, visits, q, _ in self._tree.root_children()
                          if move not in refuted]
            if not candidates:
                break
            move = max(candidates)[2]
            if not threat_refutes(root, move, nodes):
                break
            self._tree.settle_root_move(move, 1.0)
            refuted.add(move)
        return refuted

    def _decided(self, move: int, value: float, start: float, *, proven: bool = True,
                 exact_score: float | None = None,
                 infos: tuple[MoveInfo, ...] | None = None) -> SearchResult:
        """The result of a move the rules chose: one exact evaluation, counted as one visit
        (`proven` unless it is only the lone legal move, valued by the network). `infos`: the
        root moves an exact solve valued (analysis), the chosen one first; else that one."""
        root = self._root
        assert root is not None
        stats = SearchStats(seconds=self._now() - start, nodes=self.num_nodes)
        if infos is None:
            infos = (MoveInfo(move, 1, value, 1.0, value, (move,), proven=proven,
                              exact_score=exact_score),)
        return SearchResult(move, value, self._tree.root_visits, infos, stats, True,
                            root.num_nodes, proven, exact_score,
                            *policy_fields(root, [m.move for m in infos]))

    def _result(self, counters: _Counters, start: float,
                refuted: Collection[int] = ()) -> SearchResult:
        root = self._root
        assert root is not None
        tree = self._tree
        infos = []
        settled = dict(tree.root_settled())
        for move, visits, q, prior in tree.root_children():
            pv = (move, *tree.principal_variation(move))
            if move in settled:  # a proof, not an average
                q = settled[move]
                infos.append(MoveInfo(move, visits, q, prior, q, pv, proven=True))
                continue
            lcb = q - 1.96 * sqrt(max(1.0 - q * q, 0.01) / visits)
            infos.append(MoveInfo(move, visits, q, prior, lcb, pv))
        infos.sort(key=lambda m: (m.visits, m.value), reverse=True)
        if refuted:  # moves the opponent's threats were found to beat: lost, whatever their visits
            infos = [replace(m, value=-1.0, lcb=-1.0) if m.move in refuted else m for m in infos]
            infos.sort(key=lambda m: m.move in refuted)
        proven = tree.root_proven_move
        if proven >= 0:  # a move proven to win comes first, however few its visits
            infos = [replace(m, value=1.0, lcb=1.0) if m.move == proven else m for m in infos]
            infos.sort(key=lambda m: m.move != proven)
        if infos:
            best = infos[0].move
        else:  # nothing searched yet: the network's favourite, else any legal move
            moves, _ = tree.root_edges() if tree.root_expanded else ([], [])
            best = moves[0] if moves else int(root.legal_moves()[0])
        stats = counters.freeze(self._now() - start, self.num_nodes)
        proof = tree.root_proven
        value = float(proof) if proof else tree.root_value  # a proof outranks the average
        size, index = policy_fields(root, [best, *(m.move for m in infos)])
        return SearchResult(best, value, tree.root_visits, tuple(infos), stats, False,
                            root.num_nodes, proven=bool(proof), policy_size=size,
                            policy_index=index)


#: The most empty points the planner's leaf solves may reach (`EndgamePlanner.leaf_threshold`).
_MAX_LEAF_EMPTIES = 64
#: Root moves found safe from the opponent's threats before `MCTS._guard_root` stops looking.
_GUARDED_MOVES = 8
#: Under a clock, each of the guard's threat searches gets at most this share of the move's
#: time, counted at this many positions a second (measured: about 1.8M on this machine's
#: cores): the opponent's VCT, then at most 24 checks of a quarter each, so under half the
#: move's time at worst.
_THREAT_SHARE = 0.07
_THREAT_RATE = 2_000_000
#: Under a clock, the root's search for its own win by threats gets at most this share of the
#: move's time (`SearchOptions.threat_win_nodes`): with the guard's, under three quarters at
#: worst; the tree gets the rest.
_THREAT_WIN_SHARE = 0.25
#: Under a visit cap, each root threat search visits at most this many positions per visit
#: (100 visits: the full default budget; 2 visits: a millisecond or two).
_THREAT_NODES_PER_VISIT = 2_000
#: After a guarded search, `MCTS._confirm_root` checks each move it would play within this many
#: root budgets: four times the guard's own, sixteen times its screen of a move.
_CONFIRM_FACTOR = 4

def _within(nodes: int, limits: SearchLimits, share: float) -> int:
    """`nodes` positions of a threat search, no more than `share` of the move's time at
    `_THREAT_RATE` under a clock, nor `_THREAT_NODES_PER_VISIT` per visit under a visit cap (a
    quick search keeps its root quick)."""
    if limits.soft_seconds is not None:
        nodes = min(nodes, int(limits.soft_seconds * share * _THREAT_RATE))
    for cap in (limits.visits, limits.playouts):
        if cap is not None:
            nodes = min(nodes, cap * _THREAT_NODES_PER_VISIT)
    return nodes


#: What one network call returns: log-policy [rows, policy_size], values [rows], its seconds.
_Output = tuple[np.ndarray, np.ndarray, float]


@dataclass
class _Batch:
    """Leaves waiting for one network call (the tree keeps their paths), and their input."""

    leaves: int
    layout: GraphLayout
    x: np.ndarray
    mask: np.ndarray | None
    #: Rows per leaf: the position itself, then its sub-boards.
    group: int
    #: The width of the network's policy rows for these positions (`Game.policy_size`).
    policy_size: int
    #: A batch cut down to its rows' windows (`crop`), which `x`, `mask` and `layout` are;
    #: None when the rows are whole positions.
    cut: Cut | None = None
    #: The leaves the evaluation cache answered (`x` then holds only the others); None: the
    #: cache was not asked.
    lookup: Lookup | None = None

    @property
    def rows(self) -> int:
        """Rows for the network."""
        return len(self.x)


class Cut(NamedTuple):
    """A batch cut down to its rows' windows (`crop`): each row's kept rectangle moved to the
    top-left corner of a board as large as the largest of them."""

    x: np.ndarray
    mask: np.ndarray
    layout: GraphLayout
    #: `[rows, cut nodes]`: the board's node under each of a row's cut nodes, the extra node
    #: last; the board's node count where a row's window is smaller than the cut (padding).
    nodes: np.ndarray
    #: The board's node count, extra node included.
    board_nodes: int

    def expand(self, log_policy: np.ndarray) -> np.ndarray:
        """The cut's log-policy `[rows, cut nodes]` laid back on the whole board, every node
        outside the windows at `MASKED_LOG_PROB`."""
        whole = np.full((len(log_policy), self.board_nodes + 1), MASKED_LOG_PROB, np.float32)
        np.put_along_axis(whole, self.nodes, log_policy, axis=1)  # padding lands in the spare
        return whole[:, :self.board_nodes]


def crop(x: np.ndarray, mask: np.ndarray, lay: GraphLayout) -> Cut | None:
    """The rows `x [B, nodes, F]` of `lay`'s board, masked by `mask [B, nodes]`, each cut to
    the rectangle its mask keeps and moved to the corner of a board the size of the largest
    rectangle: the graph network has no coordinates, and a masked node sends nothing and is
    not pooled, as a node off the board, so it computes the same outputs on the kept nodes for
    a fraction of the work. Rows of different games, their windows on different parts of the
    board, share one call (self-play's lockstep batches). None when no row's cut is smaller
    than the board, or the graph is not the lattice."""
    if not lay.lattice:  # a window of another graph (chess's lines) is no smaller board
        return None
    width, height = lay.width, lay.height
    rows = len(x)
    kept = mask[:, :-1].reshape(rows, height, width)
    in_row = np.any(kept, axis=2)  # [B, H]
    in_col = np.any(kept, axis=1)  # [B, W]
    y0, x0 = in_row.argmax(axis=1), in_col.argmax(axis=1)
    y1 = height - 1 - in_row[:, ::-1].argmax(axis=1)
    x1 = width - 1 - in_col[:, ::-1].argmax(axis=1)
    h, w = np.maximum(y1 - y0 + 1, 1), np.maximum(x1 - x0 + 1, 1)  # a row keeping no point: 1x1
    cut_h, cut_w = int(h.max()), int(w.max())
    if cut_h == height and cut_w == width:
        return None
    ys = np.arange(cut_h)[None, :, None]
    xs = np.arange(cut_w)[None, None, :]
    inside = (ys < h[:, None, None]) & (xs < w[:, None, None])
    points = (y0[:, None, None] + ys) * width + (x0[:, None, None] + xs)
    board_nodes = lay.num_nodes
    nodes = np.where(inside, points, board_nodes).reshape(rows, -1)
    nodes = np.concatenate([nodes, np.full((rows, 1), board_nodes - 1)], axis=1)  # extra node
    index = np.arange(rows)[:, None]
    # A spare node of zeros, not kept, under every padding node.
    spare_x = np.concatenate([x, np.zeros((rows, 1, x.shape[2]), x.dtype)], axis=1)
    spare_mask = np.concatenate([mask.astype(bool), np.zeros((rows, 1), bool)], axis=1)
    return Cut(spare_x[index, nodes], spare_mask[index, nodes], layout(cut_w, cut_h), nodes,
               board_nodes)


@dataclass
class _Lockstep:
    """The state of a lockstep search between calls."""

    counters: _Counters
    start: float
    layout: GraphLayout
    batch: _Batch | None = None
    #: Whether the root gets its noise (False for self-play's fast searches).
    explore: bool = True
    #: Whether the last gather collected the root itself, whose noise or Gumbel root then
    #: waits for its expansion.
    fresh_root: bool = False
    #: A Gumbel root's parameters, and the root once expanded (None: PUCT's root).
    gumbel: Gumbel | None = None
    plan: GumbelRoot | None = None


@dataclass
class _Counters:
    #: Leaves sent to the network (counted when collected, so limits never overshoot a batch).
    started: int = 0
    playouts: int = 0
    batches: int = 0
    evaluated: int = 0
    collisions: int = 0
    eval_seconds: float = 0.0
    cached: int = 0

    def freeze(self, seconds: float, nodes: int) -> SearchStats:
        return SearchStats(self.playouts, self.batches, self.evaluated, self.collisions,
                           seconds, self.eval_seconds, nodes, self.cached)


def _same_rules(a: Game, b: Game) -> bool:
    return (type(a) is type(b) and a.grid is b.grid
            and getattr(a, "rules", None) == getattr(b, "rules", None))


def _replays_to(root: Game, suffix: list[int], game: Game) -> bool:
    """Whether playing `suffix` from `root` reaches `game`'s position, still open."""
    if game.is_over():
        return False
    if not suffix:
        return root.hash == game.hash
    line = root.copy()
    try:
        for move in suffix:
            line.play(move)
    except ValueError:
        return False
    return line.hash == game.hash


#: (move, visits, value, prior) of a visited root move, as `_core.Tree.root_children` gives it.
_Child = tuple[int, int, float, float]


def opponent_threatens(root: ThreatSearching, nodes: int) -> bool:
    """Whether the opponent of the side to move in `root`, were it to move, would win by threats
    (fours and threes) that the threat search finds within `nodes` positions: what wakes the
    root's guard."""
    turned = root.copy()
    turned.set_to_move(-root.to_move)
    return turned.threat_win(nodes, threes=True) is not None


def threat_refutes(root: ThreatSearching, move: int, nodes: int) -> bool:
    """Whether, after `move` in `root`, the opponent wins by threats (fours and threes) that the
    threat search finds within `nodes` positions: the root guard's test of a move."""
    after = root.copy()
    after.play(move)
    return not after.is_over() and after.threat_win(nodes, threes=True) is not None


def _unlimited(limits: SearchLimits) -> bool:
    """Whether only a stop ends a search under `limits` (analysis, pondering)."""
    return (limits.visits is None and limits.playouts is None and limits.soft_seconds is None
            and limits.hard_seconds is None)


def _top_two(children: list[_Child]) -> tuple[_Child | None, _Child | None]:
    first = second = None
    for child in children:
        if first is None or child[1] > first[1]:
            first, second = child, first
        elif second is None or child[1] > second[1]:
            second = child
    return first, second


def _unstable(children: list[_Child]) -> bool:
    """The most visited move is not the best valued among well-visited ones: think longer."""
    first, second = _top_two(children)
    if first is None or second is None or first[1] == 0:
        return False
    return second[1] >= 0.3 * first[1] and second[2] > first[2]


def _decided_early(children: list[_Child], root_visits: int, limits: SearchLimits,
                   counters: _Counters, elapsed: float) -> bool:
    """True when the runner-up cannot catch the leader within the remaining visits or time."""
    first, second = _top_two(children)
    if first is None:
        return False
    lead = first[1] - (second[1] if second is not None else 0)
    remaining = float("inf")
    if limits.visits is not None:
        remaining = min(remaining, limits.visits - root_visits)
    if limits.playouts is not None:
        remaining = min(remaining, limits.playouts - counters.playouts)
    if limits.soft_seconds is not None and elapsed > 0:
        rate = counters.playouts / elapsed
        remaining = min(remaining, rate * (limits.soft_seconds - elapsed))
    return lead > remaining
