"""AlphaZero self-play: many games at once per process, their leaves evaluated in shared batches.

Each worker process keeps `games_in_flight` games going, one `TreeSearch` per game, and steps all
their searches together (`lockstep.Lockstep`): one onnxruntime call per board size per step. A
finished game goes to the trainer as a `SelfPlayRecord` (its positions packed, see `positions.py`)
and a new game, on a board size drawn from the configured mix, takes its place. A worker hands
its games on in the order they started, so that a generation's sizes are the mix's and not
those that end first.

The recipe is AlphaZero's:

* Dirichlet noise on the root priors (alpha scaled by the number of legal moves, so comparable
  across sizes); moves sampled in proportion to visits for the first plies (a fraction of the
  board's points), the most visited move afterwards;
* each position yields its features, the visit distribution (the policy target, pass included,
  laid out at the moves' policy indices: `Game.policy_indices`, chess's from-to pairs in the side
  to move's frame) and the game's outcome from the side to move's view, and, when the game
  ends counted (Go, Othello; not resigned), the final owner of every point and the final margin
  from that side's view;
* resignation when the side to move's root value stays below a threshold for a few of its moves.
  A fraction of games never resigns: they record whether each side *would* have resigned and
  whether it then really lost. `Resignation` keeps the false-positive rate of the threshold below
  its target from those games (the threshold only ever tightens below the configured one).

With `root = "gumbel"` the root is Gumbel AlphaZero's instead (`engine/search/gumbel.py`): the
moves are sampled by Gumbel-top-k and sequential halving, the move played is the halving's
survivor and the policy target its improved policy, with no Dirichlet noise or temperature.

`SelfPlayPool` runs the workers. They persist across generations: between two `play` calls a
worker parks its unfinished games and continues them with the next network (with fresh trees),
so no game is thrown away and no generation ends on a tail of half-empty batches. With
`play_while_learning` they do not park: they play on with the network they have while the
learner trains, and the games they finish meanwhile open the next generation (KataGo's
self-play never waits for its trainer either), up to one generation's games: where the learner
is the slower, more would make every generation longer than the one before.

`saz bench pool` measures the pool's throughput (docs/BENCHMARKS.md, "Self-play").
"""
from __future__ import annotations

import math
import multiprocessing as mp
import platform
import queue
import signal
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

import numpy as np

from saz.engine.games import DRAW, Game, new_game
from saz.engine.games.grid import Size
from saz.engine.search.mcts import PolicyValueEvaluator, choose_move, prune_policy_target
from saz.engine.search.options import SearchOptions
from saz.tools.train.child import let_go, parent_alive, receive
from saz.tools.train.lockstep import Lockstep, TreeSearch
from saz.tools.train.positions import PositionBatch

#: Where a network may run, in self-play and in the learner (`Evaluator`'s devices).
DEVICES = ("auto", "cpu", "cuda")
#: What may run the self-play networks (`SelfPlayConfig.runtime`).
RUNTIMES = ("onnxruntime", "torch")
#: The roots a self-play search may have (`SelfPlayConfig.root`).
ROOTS = ("puct", "gumbel")


def tally(ledger: dict[str, dict[str, Any]], node: str, host: str, games: int,
          positions: int) -> None:
    """Add games and positions to `node`'s line of a ledger of who played what
    (node -> {"host", "games", "positions"}: `SelfPlayBatch.by_node`, the run's `nodes.json`)."""
    line = ledger.setdefault(node, {"host": host, "games": 0, "positions": 0})
    line["games"] += games
    line["positions"] += positions


@dataclass(frozen=True)
class SelfPlayConfig:
    """How self-play games are played (the `[selfplay]` table of a training config)."""

    #: Board sizes; each new game draws one uniformly (repeat a size to weight it).
    sizes: tuple[Size, ...] = ((9, 9),)
    #: Finished games per generation.
    games_per_generation: int = 64
    #: Root visits per move (the reused subtree counts).
    visits: int = 100
    #: Playout cap randomization (KataGo): this share of moves gets the full `visits` and is
    #: recorded as a training position; the others get `fast_visits`, are played and not
    #: recorded. 1.0: every move is a full search (off).
    full_search_fraction: float = 1.0
    fast_visits: int = 20
    #: Games each worker keeps going at once: the network batch is about
    #: games_in_flight * leaves_per_search rows, split by board size.
    games_in_flight: int = 32
    leaves_per_search: int = 4
    max_batch: int = 64
    #: MiB of network answers each worker keeps by position (`Lockstep.cache_bytes`): a leaf
    #: that any of its games' trees met before costs no network call. 0: off.
    eval_cache_mib: int = 32
    c_puct: float = 1.5
    fpu_reduction: float = 0.25
    dirichlet_epsilon: float = 0.25
    dirichlet_alpha_scale: float = 10.0
    #: KataGo's forced playouts at the root and policy target pruning (0: off): a noise-favoured
    #: move gets enough visits to be judged, and the visits it got only for that are taken back
    #: out of the policy target.
    forced_playouts_k: float = 0.0
    #: The root of each search: "puct" (the above: noise, forced playouts, the visits as the
    #: target, moves sampled by visits for `temperature_plies`) or "gumbel" (Gumbel AlphaZero,
    #: `engine/search/gumbel.py`: `gumbel_actions` moves sampled by Gumbel-top-k, sequential
    #: halving over `visits` simulations, or `fast_visits` for a fast move, the survivor played
    #: and the improved policy as the target; the noise, forced playouts and temperature keys
    #: do not apply). Below the root the tree is PUCT either way, as is the engine's own play.
    root: str = "puct"
    #: The moves a Gumbel root samples (m), at most the root's moves and cut to what the visits
    #: give one visit each in every phase of the halving (8 visits: 4 moves).
    gumbel_actions: int = 16
    #: Where the game has a window (`Game.focus_masks`, Gomoku): the network sees each leaf's
    #: window of at least this many points a side, as the engine's search shows it
    #: (`SearchOptions.focus_side`), and each batch is cut down to the windows, so a board
    #: larger than the window costs about what the window does. The recorded positions stay
    #: whole. 0: the whole board.
    focus_side: int = 0
    #: Plies played at temperature 1, as a fraction of the board's points (e.g. 0.1: 8 plies on
    #: 9x9, 23 on 15x15); the most visited move afterwards.
    temperature_plies: float = 0.1
    #: Each game opens with a number of uniformly random legal moves drawn uniformly from
    #: 0..opening_plies (`Game.play_random`), played without a search and not recorded. Without
    #: them every game grows from the network's favourite first moves, while matches start from
    #: random ones; drawing from 0 keeps the empty board among the starts. 0: off.
    opening_plies: int = 0
    #: The highest resignation threshold (root value of the side to move); calibration may only
    #: lower it. -1 or less: never resign.
    resign_threshold: float = -0.9
    #: Resign only after this many consecutive own moves below the threshold.
    resign_consecutive: int = 2
    #: Share of games played out to the end to check the threshold.
    resign_check_fraction: float = 0.1
    #: Largest acceptable share of would-be resignations that did not lose.
    resign_false_positives: float = 0.05
    #: Games longer than this many plies per point are stopped and scored as the game scores a
    #: game stopped early (`Game.stopped_winner`: Go by area, the others a draw); never past
    #: the game's own bound (`Game.max_length`, four a point).
    max_plies: float = 3.0
    #: Worker processes, and onnxruntime threads in each.
    workers: int = 1
    threads: int = 1
    #: onnxruntime only: each network call takes at most this many nodes (positions x points),
    #: a larger batch cut into calls of that size with the same answers (`Evaluator.chunk_nodes`).
    #: On one thread a batch of 19x19 positions outgrows the core's cache, and smaller calls run
    #: faster (docs/BENCHMARKS.md, "Chunks"). 0: one call per batch.
    chunk_nodes: int = 0
    #: Where the workers' networks run: "cpu", "cuda" (onnxruntime's CUDA provider; every worker
    #: shares the GPU, batching its games' leaves) or "auto" (the GPU when there is one).
    device: str = "cpu"
    #: What runs the workers' networks: "onnxruntime" (the exported file, as the engine runs it)
    #: or "torch" (the same network in torch, `torch_evaluator`: a GPU for self-play where
    #: onnxruntime has no CUDA provider; the trainer then writes each generation's weights too).
    runtime: str = "onnxruntime"
    #: Keep playing while the learner trains, with the network of the generation before, instead
    #: of waiting for the new one: the cores that the learner leaves idle play the next games.
    play_while_learning: bool = False

    def __post_init__(self) -> None:
        if not self.sizes:
            raise ValueError("selfplay.sizes must name at least one board size")
        if self.device not in DEVICES:
            raise ValueError(f"selfplay.device must be one of {', '.join(DEVICES)}, "
                             f"got {self.device!r}")
        if self.runtime not in RUNTIMES:
            raise ValueError(f"selfplay.runtime must be one of {', '.join(RUNTIMES)}, "
                             f"got {self.runtime!r}")
        if self.root not in ROOTS:
            raise ValueError(f"selfplay.root must be one of {', '.join(ROOTS)}, got {self.root!r}")
        positive = ("games_per_generation", "visits", "games_in_flight", "leaves_per_search",
                    "max_batch", "resign_consecutive", "workers", "threads", "gumbel_actions")
        for name in positive:
            if getattr(self, name) < 1:
                raise ValueError(f"selfplay.{name} must be at least 1, got {getattr(self, name)}")
        if self.eval_cache_mib < 0:
            raise ValueError(f"selfplay.eval_cache_mib must be >= 0 (0: off), "
                             f"got {self.eval_cache_mib}")
        if not 0.0 < self.full_search_fraction <= 1.0:
            raise ValueError("selfplay.full_search_fraction must be in (0, 1]")
        if self.full_search_fraction < 1.0 and not 1 <= self.fast_visits <= self.visits:
            raise ValueError("selfplay.fast_visits must be in 1..visits")
        for name in ("resign_check_fraction", "resign_false_positives", "dirichlet_epsilon"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"selfplay.{name} must be in [0, 1]")
        if self.opening_plies < 0:
            raise ValueError(f"selfplay.opening_plies must be >= 0, got {self.opening_plies}")
        if self.forced_playouts_k < 0:
            raise ValueError("selfplay.forced_playouts_k must be >= 0")
        if self.focus_side < 0:
            raise ValueError(f"selfplay.focus_side must be >= 0 (0: off), got {self.focus_side}")
        if self.chunk_nodes < 0:
            raise ValueError(f"selfplay.chunk_nodes must be >= 0 (0: off), "
                             f"got {self.chunk_nodes}")
        if self.temperature_plies < 0 or self.max_plies <= 0:
            raise ValueError("selfplay.temperature_plies must be >= 0 and max_plies > 0")

    def lockstep(self) -> Lockstep:
        """The driver that steps this recipe's searches together."""
        return Lockstep(self.leaves_per_search, self.max_batch, self.eval_cache_mib << 20)

    @property
    def root_actions(self) -> int:
        """The moves each search's Gumbel root samples (`TreeSearch.gumbel_actions`); 0: a PUCT
        root."""
        return self.gumbel_actions if self.root == "gumbel" else 0

    def search_options(self, seed: int) -> SearchOptions:
        return SearchOptions(c_puct=self.c_puct, fpu_reduction=self.fpu_reduction,
                             dirichlet_epsilon=self.dirichlet_epsilon,
                             dirichlet_alpha_scale=self.dirichlet_alpha_scale,
                             forced_playouts_k=self.forced_playouts_k,
                             focus_side=self.focus_side, seed=seed,
                             # Self-play's searches are visit-capped and stepped in lockstep: the
                             # planner's second-long root solves would stall every game at once.
                             solve_empties=0)


@dataclass(frozen=True)
class SelfPlayRecord:
    """One finished self-play game."""

    positions: PositionBatch
    plies: int
    winner: int
    resigned: bool
    #: Check games only: for each side that would have resigned, (the threshold below which it
    #: would have, its final outcome: +1 won, 0 draw, -1 lost).
    resign_checks: tuple[tuple[float, float], ...] = ()
    #: Stopped at the ply cap; a game neither resigned nor capped ended by its rules (Go: two
    #: passes).
    capped: bool = False


class SelfPlayGame:
    """One game in flight: plays the searched moves and records the positions."""

    def __init__(self, game: Game, search: TreeSearch, config: SelfPlayConfig,
                 rng: np.random.Generator, resign_threshold: float | None,
                 number: int = 0) -> None:
        self.game = game
        #: Its place among the games its worker started (from 0): the worker hands finished games
        #: on in this order.
        self.number = number
        self.search = search
        self.config = config
        self.rng = rng
        #: None: this game never resigns (a check game, or resignation is off).
        self.resign_threshold = resign_threshold
        self._searching = False
        #: Whether the search under way is a full one (recorded) or a fast one (played only).
        self._full = True
        self._hot_plies = round(config.temperature_plies * game.num_points)
        self._max_plies = min(max(1, int(config.max_plies * game.num_points)), game.max_length)
        self._features: list[np.ndarray] = []
        self._policies: list[np.ndarray] = []
        self._colors: list[int] = []
        self._values: dict[int, list[float]] = {1: [], -1: []}
        self.winner: int | None = None
        self.resigned = False
        #: Whether the game was stopped at the ply cap (rather than ended by its rules or a
        #: resignation).
        self.capped = False

    @property
    def finished(self) -> bool:
        return self.winner is not None

    @property
    def positions(self) -> int:
        """Positions searched and recorded so far."""
        return len(self._policies)

    def advance(self) -> TreeSearch | None:
        """Play every move whose search is complete; the search to step next, or None once the
        game is finished."""
        while self.winner is None:
            if not self._searching:
                legal = self.game.legal_moves()
                if len(legal) == 1:  # nothing to learn from a forced move (Othello's pass)
                    self._play(int(legal[0]))
                    continue
                config = self.config
                self._full = (config.full_search_fraction >= 1.0
                              or self.rng.random() < config.full_search_fraction)
                self.search.visits = config.visits if self._full else config.fast_visits
                self.search.start(self.game, explore=self._full)
                self._searching = True
            if not self.search.done:
                return self.search
            self._searching = False
            self._move_from(self.search)
        return None

    def rebind(self, search: TreeSearch) -> None:
        """Continue with another network: a fresh tree from the current position."""
        self.search = search
        self._searching = False

    def _move_from(self, search: TreeSearch) -> None:
        result = search.result()
        game = self.game
        me = game.to_move
        if self._full:  # a fast search's visits make a poor policy target: played, not recorded
            x = np.empty((game.num_nodes, game.num_features()), dtype=np.float32)
            game.encode(x)
            self._features.append(x)
            target = result.policy_target  # a Gumbel root's improved policy
            if target is None:
                target = prune_policy_target(result, self.config.c_puct,
                                             self.config.forced_playouts_k)
            self._policies.append(target)
            self._colors.append(me)
        values = self._values[me]
        values.append(result.value)
        k = self.config.resign_consecutive
        if (self.resign_threshold is not None and len(values) >= k
                and max(values[-k:]) < self.resign_threshold):
            self.winner, self.resigned = -me, True
            return
        if search.gumbel_actions:  # the halving's survivor: a sample already
            self._play(result.best_move)
            return
        temperature = 1.0 if len(game.moves) < self._hot_plies else 0.0
        self._play(choose_move(result, temperature, self.rng))

    def _play(self, move: int) -> None:
        self.game.play(move)
        if self.game.is_over():
            self.winner = self.game.winner()
        elif len(self.game.moves) >= self._max_plies:
            self.winner = self.game.stopped_winner()
            self.capped = True

    def record(self) -> SelfPlayRecord:
        """The finished game's positions and outcome."""
        if self.winner is None:
            raise RuntimeError("the game is not finished")
        g = self.game
        colors = np.array(self._colors, dtype=np.int8)
        n = g.num_nodes
        x = np.stack(self._features) if self._features else \
            np.empty((0, n, g.num_features()), np.float32)
        policy = np.stack(self._policies) if self._policies else \
            np.empty((0, g.policy_size), np.float32)
        # The auxiliary targets come from the final position as counted; a resigned game was
        # never counted, and its board says nothing about who would have owned what.
        owners = None if self.resigned else g.ownership()
        ownership = score = None
        if owners is not None:
            ownership = colors[:, None] * owners[None, :]
            score = colors.astype(np.float32) * np.float32(g.score())
        positions = PositionBatch.pack(g.width, g.height, x, policy, colors * self.winner,
                                       ownership, score)
        return SelfPlayRecord(positions, len(g.moves), self.winner, self.resigned, self._checks(),
                          self.capped)

    def _checks(self) -> tuple[tuple[float, float], ...]:
        """For a check game: each side's resignation level (the lowest value its root stayed
        under for `resign_consecutive` own moves) with its outcome."""
        if self.resign_threshold is not None or self.resigned:
            return ()
        k = self.config.resign_consecutive
        checks = []
        for color, values in self._values.items():
            if len(values) >= k:
                level = min(max(values[i:i + k]) for i in range(len(values) - k + 1))
                outcome = 0.0 if self.winner == DRAW else (1.0 if self.winner == color else -1.0)
                checks.append((level, outcome))
        return tuple(checks)


@dataclass
class Resignation:
    """The resignation threshold and its calibration from the check games."""

    #: The configured threshold: calibration never raises the threshold above it.
    ceiling: float
    target: float = 0.05
    #: Check records kept (the most recent ones): the network changes, old evidence fades.
    history: int = 1000
    threshold: float = field(init=False)
    checks: list[tuple[float, float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.threshold = self.ceiling

    @property
    def enabled(self) -> bool:
        return self.threshold > -1.0

    def observe(self, checks: Sequence[tuple[float, float]]) -> None:
        """Add check records and recalibrate the threshold."""
        self.checks.extend((float(level), float(outcome)) for level, outcome in checks)
        del self.checks[:-self.history]
        self.threshold = self.calibrate()

    def false_positive_rate(self, threshold: float | None = None) -> float | None:
        """The share of check sides that would have resigned at `threshold` (default: the
        current one) and did not lose; None when none would have resigned."""
        t = self.threshold if threshold is None else threshold
        outcomes = [outcome for level, outcome in self.checks if level < t]
        return sum(o >= 0 for o in outcomes) / len(outcomes) if outcomes else None

    def calibrate(self) -> float:
        """The highest threshold up to the ceiling whose false-positive rate on the recorded
        checks is within the target."""
        below = sorted((lv, o) for lv, o in self.checks if lv < self.ceiling)
        best_k, false_pos = 0, 0
        for k, (_, outcome) in enumerate(below, start=1):
            false_pos += outcome >= 0
            if false_pos <= self.target * k:
                best_k = k
        # Resigning below the (best_k + 1)-th level takes exactly the first best_k sides.
        return self.ceiling if best_k == len(below) else below[best_k][0]

    def state(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "checks": [list(c) for c in self.checks]}

    def restore(self, state: Mapping[str, Any]) -> None:
        self.checks = [(float(a), float(b)) for a, b in state["checks"]]
        self.threshold = float(state["threshold"])


# -- one process's games ---------------------------------------------------------------------------
@dataclass
class WorkerStats:
    """What a worker did during one `play` call."""

    #: Finished games handed on (in the order they started; some may wait for an earlier one).
    games: int = 0
    #: Positions searched (moves made), in finished games or not.
    positions: int = 0
    evaluated: int = 0
    seconds: float = 0.0
    #: Whether the network ran on a GPU: the session that opened it says, not the list of
    #: providers onnxruntime-gpu was built with (it names CUDA on machines without one).
    on_gpu: bool = False

    def add(self, other: WorkerStats) -> None:
        self.games += other.games
        self.positions += other.positions
        self.evaluated += other.evaluated
        self.seconds = max(self.seconds, other.seconds)
        self.on_gpu = self.on_gpu or other.on_gpu


class SelfPlayWorker:
    """The games of one process and the searches that play them."""

    def __init__(self, game_name: str, rules: Mapping[str, Any], config: SelfPlayConfig,
                 seed: int) -> None:
        self.game_name = game_name
        self.rules = dict(rules)
        self.config = config
        self.rng = np.random.default_rng(seed)
        self.lockstep = config.lockstep()
        self.evaluator: PolicyValueEvaluator | None = None
        self.on_gpu = False
        self.resign_threshold: float | None = None
        self.games: list[SelfPlayGame] = []
        self._started = 0  # games started, the next one's number
        #: Finished games waiting for a game started before them, by number.
        self._held: dict[int, SelfPlayRecord] = {}
        self._next = 0  # the number of the next game to hand on

    def load(self, evaluator: PolicyValueEvaluator, resign_threshold: float | None) -> None:
        """Play on with `evaluator` (the newest network): games in flight keep their moves and
        start fresh trees."""
        self.evaluator = evaluator
        # An Evaluator names the provider its session got; a test's stand-in network has none.
        self.on_gpu = getattr(evaluator, "provider", "cpu") == "cuda"
        self.resign_threshold = resign_threshold
        for game in self.games:
            game.rebind(self._search())
        while len(self.games) < self.config.games_in_flight:
            self.games.append(self._new_game())

    def _search(self) -> TreeSearch:
        assert self.evaluator is not None, "load() sets the network first"
        seed = int(self.rng.integers(2**31))
        return TreeSearch(self.evaluator, self.config.search_options(seed), self.config.visits,
                          self.config.root_actions)

    def _new_game(self) -> SelfPlayGame:
        width, height = self.config.sizes[int(self.rng.integers(len(self.config.sizes)))]
        game = new_game(self.game_name, width, height, **self.rules)
        if self.config.opening_plies:  # off: the random stream of earlier runs, draw for draw
            game.play_random(int(self.rng.integers(self.config.opening_plies + 1)), self.rng)
        check = self.rng.random() < self.config.resign_check_fraction
        threshold = None if check else self.resign_threshold
        number, self._started = self._started, self._started + 1
        return SelfPlayGame(game, self._search(), self.config, self.rng, threshold, number)

    def step(self, stats: WorkerStats) -> list[SelfPlayRecord]:
        """Advance every game by one lockstep round, counting into `stats`; returns the games
        that finished (new ones took their places), in the order they started.

        A finished game waits for those started before it. Handed on as they end, a
        generation would hold the games that end first: at the start of a session, small
        boards only, since a 19x19 game lasts four 9x9 ones (358 plies to 86 in
        models/runs/go). In start order, a generation's sizes are the draws from `sizes`,
        whenever it is taken."""
        if self.evaluator is None:
            raise RuntimeError("load() a network before step()")
        waiting: list[TreeSearch] = []
        for i, game in enumerate(self.games):
            before = game.positions
            search = game.advance()
            while search is None:
                self._held[game.number] = game.record()
                stats.positions += game.positions - before
                game = self.games[i] = self._new_game()
                before = 0
                search = game.advance()
            stats.positions += game.positions - before
            waiting.append(search)
        finished: list[SelfPlayRecord] = []
        while self._next in self._held:
            finished.append(self._held.pop(self._next))
            self._next += 1
        stats.games += len(finished)
        stats.evaluated += self.lockstep.step(waiting)
        stats.on_gpu = stats.on_gpu or self.on_gpu
        return finished


def _worker_main(index: int, game_name: str, rules: dict[str, Any], config: SelfPlayConfig,
                 seed: int, commands: mp.Queue, results: mp.Queue) -> None:
    """A worker process: waits for ("play", model, threshold), plays until the next command,
    reporting ("network", index, on_gpu) once it holds the network, ("game", index, record) as
    games finish and ("paused", index, stats) when a command ends the network's turn:
    ("pause",) waits, ("play", ...) plays on with a new network at once, ("stop",) returns.
    ("more", n) does not end the turn: the worker finishes at most n more games in it, then
    waits for the next command."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the trainer handles Ctrl-C and stops us
    try:
        worker = SelfPlayWorker(game_name, rules, config, seed)
        command = receive(commands, orphaned=("stop",))
        while command[0] != "stop":
            if command[0] in ("pause", "more"):  # already waiting
                command = receive(commands, orphaned=("stop",))
                continue
            _, model_path, threshold = command
            worker.load(open_network(model_path, config), threshold)
            # Said now, not with the turn's stats: a session's last turn is never reported.
            results.put(("network", index, worker.on_gpu))
            stats, start = WorkerStats(), time.perf_counter()
            limit: int | None = None  # the games this turn may finish ("more")
            while True:
                if limit is not None and stats.games >= limit:  # the next generation is played
                    stats.seconds = time.perf_counter() - start
                    command = receive(commands, orphaned=("stop",))
                    break
                try:
                    command = commands.get_nowait()
                except queue.Empty:
                    command = None
                if command is not None and command[0] == "more":
                    limit = stats.games + command[1]
                    continue
                if command is not None:
                    stats.seconds = time.perf_counter() - start
                    break
                for record in worker.step(stats):
                    results.put(("game", index, record))
                if not parent_alive():
                    return
            results.put(("paused", index, stats))
    except Exception:
        results.put(("error", index, traceback.format_exc()))
    finally:
        let_go(results)  # a killed trainer left games unread: exit all the same


def open_network(model_path: str | Path, config: SelfPlayConfig) -> PolicyValueEvaluator:
    """The network a worker plays with, on `config.device` through `config.runtime`."""
    if config.runtime == "torch":
        from saz.tools.train.torch_evaluator import TorchEvaluator

        return TorchEvaluator(model_path, device=config.device, threads=config.threads)
    from saz.engine.evaluator import Evaluator

    # The device is a str from the config; Evaluator refuses an unknown one.
    return Evaluator(model_path, device=config.device,  # type: ignore[arg-type]  # it checks
                     threads=config.threads, chunk_nodes=config.chunk_nodes or None)


class SelfPlayError(RuntimeError):
    """A self-play worker failed (its traceback is the message) or died."""


@dataclass
class SelfPlayBatch:
    """The games of one generation and how fast they came."""

    records: list[SelfPlayRecord]
    #: What the workers did over `wall_seconds`: during the call, or, when they play while the
    #: learner trains, in the turn this call ended (begun in the previous call, and over once
    #: the next generation's games were played or this call came, whichever was first).
    stats: WorkerStats
    wall_seconds: float
    #: Who played them: node id -> {"host", "games", "positions"} (one entry, "local", for the
    #: worker processes of this machine).
    by_node: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def positions(self) -> int:
        """Positions of the finished games (some searched in earlier generations)."""
        return sum(len(r.positions) for r in self.records)

    @property
    def positions_per_second(self) -> float:
        """Positions searched per second of the time the stats cover; NaN where they cover none
        (the first call of workers that play while the learner trains: no turn has ended)."""
        return self.stats.positions / self.wall_seconds if self.wall_seconds > 0 else math.nan


class SelfPlayPool:
    """Self-play worker processes (`close` stops them: use `contextlib.closing`)."""

    def __init__(self, game_name: str, rules: Mapping[str, Any], config: SelfPlayConfig,
                 seed: int) -> None:
        self.config = config
        ctx = mp.get_context("spawn")  # never fork a process holding torch's thread pools
        self._results: mp.Queue = ctx.Queue()
        self._commands: list[mp.Queue] = [ctx.Queue() for _ in range(config.workers)]
        self._procs: list[BaseProcess] = [
            ctx.Process(target=_worker_main, name=f"saz-selfplay-{i}", daemon=True,
                        args=(i, game_name, dict(rules), config, seed * 1000 + i,
                              self._commands[i], self._results))
            for i in range(config.workers)]
        for proc in self._procs:
            proc.start()
        #: Whether the workers are playing between calls (`play_while_learning`).
        self._playing = False

    def play(self, model_path: Path, games: int, resign_threshold: float | None,
             on_game: Callable[[SelfPlayRecord], None] | None = None) -> SelfPlayBatch:
        """At least `games` finished games with the network at `model_path` (those finishing
        while the workers pause are kept too, and with `play_while_learning` those finished since
        the last call, played with the network before); `on_game` is called as each arrives.
        With `play_while_learning` the workers play on with this network after the call."""
        start = time.perf_counter()
        # Workers that played on owe the report of the turn this call ends.
        owed = len(self._procs) if self._playing else 0
        for commands in self._commands:
            commands.put(("play", str(model_path), resign_threshold))
        records: list[SelfPlayRecord] = []
        stats = WorkerStats()
        pausing = False
        while True:
            if len(records) >= games and not pausing and not self.config.play_while_learning:
                for commands in self._commands:
                    commands.put(("pause",))
                pausing, owed = True, owed + len(self._procs)
            if len(records) >= games and not owed:
                break
            kind, _, payload = self._receive()
            if kind == "game":
                records.append(payload)
                if on_game is not None:
                    on_game(payload)
            elif kind == "paused":
                stats.add(payload)
                owed -= 1
            elif kind == "network":
                stats.on_gpu = stats.on_gpu or payload
        self._playing = not pausing
        if self._playing:
            # While the learner trains: the next generation's games, and no more. Where the
            # learner is the slower, more would make every generation longer than the last.
            share = -(-games // len(self._procs))
            for commands in self._commands:
                commands.put(("more", share))
        # Playing on, the stats are those of the turn just ended, which began a call ago.
        seconds = stats.seconds if self._playing else time.perf_counter() - start
        by_node: dict[str, dict[str, Any]] = {}
        tally(by_node, "local", platform.node(), len(records),
              sum(len(r.positions) for r in records))
        return SelfPlayBatch(records, stats, seconds, by_node)

    def _receive(self) -> tuple[str, int, Any]:
        while True:
            try:
                kind, index, payload = self._results.get(timeout=2.0)
            except queue.Empty:
                dead = [p.name for p in self._procs if not p.is_alive()]
                if dead:
                    raise SelfPlayError(f"self-play worker(s) {', '.join(dead)} died") from None
                continue
            if kind == "error":
                raise SelfPlayError(f"self-play worker {index} failed:\n{payload}")
            return kind, index, payload

    def close(self) -> None:
        """Stop the workers (waiting briefly, then terminating)."""
        for commands, proc in zip(self._commands, self._procs):
            if proc.is_alive():
                commands.put(("stop",))
        # A worker cannot exit while what it sent is unread: workers that played on after the
        # last call have games in the queue, which no generation will take.
        deadline = time.monotonic() + 5.0
        while any(p.is_alive() for p in self._procs) and time.monotonic() < deadline:
            try:
                self._results.get(timeout=0.1)
            except queue.Empty:
                pass
        for proc in self._procs:
            if proc.is_alive():
                proc.terminate()
            proc.join()
