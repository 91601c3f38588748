"""The engine facade: one game, its rules, a clock, a search and the network behind it.

Front-ends (GTP, Gomocup) translate protocol lines into these calls and know nothing of rules or
search; the facade knows nothing of protocols. Everything a front-end may ask is here: set up a
game, play and undo moves, think (generate a move, analyse, ponder), keep the clock, stop.

Concurrency: a front-end reads input on its own thread, so that a running analysis or ponder can
be interrupted. The facade runs at most one background search (analysis or pondering) and halts
it, waiting for it, before anything changes the position; `stop()` may be called from any thread.
Calls that change state come from one thread at a time (the front-end's command loop).
"""
from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from saz.engine.games import Game, GameError, game_class, new_game
from saz.engine.players import PlayerSearch, make_player
from saz.engine.search.clock import (
    FixedTimePerMove,
    FixedVisits,
    MoveBudget,
    NoTimeLimit,
    TimeControl,
    TimeManager,
    expected_moves_left,
)
from saz.engine.search.mcts import MCTS, SearchLimits, SearchResult
from saz.engine.search.options import SearchOptions
from saz.engine.search.ownership import Estimate, OwnershipEstimator
from saz.engine.search.wdl import Wdl, WdlEstimator

#: Visits per move when nothing else limits a move (no clock, no --visits).
DEFAULT_VISITS = 800
#: Visits of the search that reads a finished game's dead stones (`final_ownership`): enough
#: for the PV to settle a group in doubt, a fraction of a second on a CPU.
SCORING_VISITS = 200


@dataclass(frozen=True)
class EngineConfig:
    """What the command line sets once per process."""

    game: str = "go"
    #: The model file; None: the shipped model of the game (`models/<game>.onnx`).
    model: Path | None = None
    device: str = "auto"
    threads: int | None = None
    #: Evaluate a batch of more nodes than this in calls of at most this many
    #: (`Evaluator.chunk_nodes`); None: one call per batch.
    chunk_nodes: int | None = None
    #: Visits per move (a cap even under a clock); None: the clock decides, else DEFAULT_VISITS.
    visits: int | None = None
    #: Seconds per move when no time control is set by the controller.
    time_per_move: float | None = None
    #: Keep searching on the opponent's time after each generated move.
    ponder: bool = False
    search: SearchOptions = field(default_factory=SearchOptions)
    #: Rules keywords for new games (Go: komi; Gomoku: rule).
    rules: dict[str, Any] = field(default_factory=dict)
    #: A reference player ("random", "greedy") that answers instead of the search; no model is
    #: loaded. The front-ends' `--player`, so that matches test the protocol path, not a network.
    player: str | None = None


class Engine:
    """A game in progress and the means to think about it."""

    def __init__(self, config: EngineConfig, *, clock: TimeManager | None = None) -> None:
        self.config = config
        self.game_name = config.game
        self.rules: dict[str, Any] = dict(config.rules)
        self.game: Game = new_game(self.game_name, game_class(self.game_name).info.default_size,
                                   **self.rules)
        self.clock = clock or TimeManager(self._default_control())
        self._searches: dict[str, MCTS | PlayerSearch] = {}
        self._estimators: dict[str, OwnershipEstimator | None] = {}
        self._wdl: dict[str, WdlEstimator | None] = {}
        self._background: threading.Thread | None = None
        #: The stop request of the search running now (or about to): a fresh one per search, so
        #: a stop that arrives before the search's thread gets going is never lost.
        self._stop_request = threading.Event()

    # -- the position ----------------------------------------------------------------------------
    def set_game(self, name: str, width: int | None = None, height: int | None = None,
                 **rules: Any) -> None:
        """Switch to another game (GTP `set_game`), on its default or the given size."""
        self.halt()
        size = width or game_class(name).info.default_size
        game = new_game(name, size, height, **rules)  # raises before anything changes
        self.game_name, self.rules, self.game = name, dict(rules), game

    def new_game(self, width: int | None = None, height: int | None = None) -> None:
        """A fresh game on a width x height board (default: the current size)."""
        self.halt()
        w = self.game.width if width is None else width
        h = (self.game.height if width is None else w) if height is None else height
        self.game = new_game(self.game_name, w, h, **self.rules)
        self.clock.set_control(self.clock.control)  # a new game restarts the clock
        collect_garbage()

    def set_rules(self, **rules: Any) -> None:
        """Change rule parameters (e.g. Go's komi) for this game and the next ones. The position
        stays as it is, setup stones and all (`Game.with_rules`); GameError changes nothing."""
        self.halt()
        game = self.game.with_rules(**rules)
        self.rules, self.game = {**self.rules, **rules}, game

    def replace_game(self, game: Game) -> None:
        """Adopt a position set up elsewhere (SGF, handicap, board transfer) of the same game."""
        if game.name != self.game_name:
            raise GameError(f"a {game.name} position cannot replace a {self.game_name} game")
        self.halt()
        self.game = game

    def play(self, move: int, color: int | None = None) -> None:
        """Play `move` for `color` (default: the side to move; another colour plays out of
        turn, see `Game.play`); GameError leaves everything unchanged."""
        self.halt()
        self.game.play(move, color)

    def undo(self) -> None:
        self.halt()
        self.game.undo()

    def set_to_move(self, color: int) -> None:
        """Make `color` the side to move without a move (`Game.set_to_move`)."""
        self.halt()
        self.game.set_to_move(color)

    def clear_cache(self) -> None:
        """Forget every search tree and cached evaluation (KataGo's `clear_cache`): the next
        search starts afresh."""
        self.halt()
        for search in self._searches.values():
            if isinstance(search, MCTS):
                search.clear_cache()

    # -- thinking --------------------------------------------------------------------------------
    def position(self, color: int | None = None) -> Game:
        """The position a search for `color` (default: the side to move) starts from: the
        current one with `color` to move, played on if the controller continues a game the
        rules ended (`Game.continued`). The current game itself when nothing differs (do not
        modify it); GameError when the game is over for good."""
        game = self.game
        if game.is_over():
            resumed = game.continued()
            if resumed is None:
                raise GameError("the game is over: there is no move to search")
            game = resumed
        if color is not None and color != game.to_move:
            if game is self.game:
                game = game.copy()
            game.set_to_move(color)
        return game

    def think(self, color: int | None = None, *,
              on_progress: Callable[[SearchResult], None] | None = None,
              progress_interval: float = 0.0,
              allowed: Collection[int] | None = None) -> SearchResult:
        """Search for `color` (default: the side to move; see `position`) within the clock's
        budget; the move is not played."""
        self.halt()
        game = self.position(color)
        search = self._searcher()  # a model that fails to load costs no clock time
        stop = self._new_stop_request()
        budget = self.clock.start_move(
            expected_moves_left(game.plies_left()))
        if allowed is None and self.config.player is None:
            # The game's book (Gomoku's empty board: the centre) over the network's choice.
            allowed = game.book_moves()
        try:
            with _cyclic_gc_paused():
                return search.search(game, self._limits(budget), on_progress,
                                     progress_interval, allowed, stop)
        finally:
            self.clock.end_move()

    def genmove(self, color: int | None = None, **kwargs: Any) -> SearchResult:
        """Think for `color`, play the chosen move for it, and ponder afterwards if
        configured."""
        result = self.think(color, **kwargs)
        self.game.play(result.best_move, color)
        if self.config.ponder and not self.game.is_over():
            self._start_ponder()
        return result

    def analyze(self, on_progress: Callable[[SearchResult], None], interval: float,
                allowed: Collection[int] | None = None, color: int | None = None) -> None:
        """Search the position for `color` (see `position`) in the background until `stop()`,
        sending snapshots every `interval` seconds (GTP lz-analyze / kata-analyze)."""
        self.halt()
        game = self.position(color)
        search = self._searcher()
        if game is self.game:
            game = game.copy()
        self._start_background(
            lambda stop: search.search(game, SearchLimits(), on_progress, interval, allowed, stop))

    # -- ownership and score (the network's auxiliary heads) ---------------------------------------
    def estimator(self) -> OwnershipEstimator | None:
        """The reader of the current network's ownership and score heads; None when it has
        neither (every model before them) or a reference player answers (ModelError if the
        network fails to load)."""
        if self.game_name not in self._estimators:
            search = self._searcher()
            estimator = None
            if isinstance(search, MCTS):
                # The engine's MCTS always runs an ONNX Evaluator, which has the aux heads' call.
                candidate = OwnershipEstimator(search.evaluator)  # type: ignore[arg-type]  # an Evaluator
                estimator = candidate if candidate.available else None
            self._estimators[self.game_name] = estimator
        return self._estimators[self.game_name]

    def estimate(self, root: Game, result: SearchResult, max_moves: int | None = None
                 ) -> Estimate | None:
        """Ownership and score leads for a search snapshot of `root` (its visited moves, at most
        `max_moves`); None without the heads."""
        estimator = self.estimator()
        if estimator is None:
            return None
        moves = [m for m in result.moves if m.visits > 0][:max_moves]
        return estimator.estimate(root, moves)

    def wdl(self, root: Game, value: float, *, proven: bool = False) -> Wdl | None:
        """(win, draw, loss) for `root`'s side to move of a search that valued it `value`
        (`SearchResult.value`, or a root move's `MoveInfo.value`): the draw probability from the
        network's wdl head at `root`, W - L the search's value (`search.wdl.split`); certain
        when `proven`. None when the network has no wdl head or a reference player answers
        (ModelError if the network fails to load)."""
        if self.game_name not in self._wdl:
            search = self._searcher()
            estimator = None
            if isinstance(search, MCTS):
                # The engine's MCTS always runs an ONNX Evaluator, which has run_heads.
                candidate = WdlEstimator(search.evaluator)  # type: ignore[arg-type]  # an Evaluator
                estimator = candidate if candidate.available else None
            self._wdl[self.game_name] = estimator
        estimator = self._wdl[self.game_name]
        return None if estimator is None else estimator.wdl(root, value, proven=proven)

    def final_ownership(self, visits: int = SCORING_VISITS) -> np.ndarray | None:
        """Who owns each point at the end, from BLACK's view (`[num_points]` floats in [-1, 1]):
        the ownership head along the PV of a `visits` search of the current position (played on
        past two passes, as a controller may ask after the game). None without the head."""
        estimator = self.estimator()
        if estimator is None or not estimator.evaluator.has_ownership:
            return None
        self.halt()
        game = self.game
        if game.is_over():
            game = game.continued() or game
        search = self._searcher()
        result = None
        if not game.is_over():
            result = search.search(game, SearchLimits(visits=visits))
        return estimator.ownership(game, result.moves[:1] if result else ())

    def load_network(self) -> None:
        """Load the current game's network now rather than at its first search (ModelError).

        Loading costs a good part of a second (onnxruntime's import, the session). A front-end
        whose controller times each move but not the set-up (Gomocup's START) loads it during
        set-up, so that the first move's budget goes to the search alone. The network is also
        run once on the current board (`MCTS.warm_up`): its first runs at a new size cost tens
        of milliseconds more than the rest, which a one-second byo-yomi cannot spare."""
        self._searcher().warm_up(self.game)

    def model_path(self) -> Path | None:
        """The network file the current game loads: the configured model, else the game's
        shipped `models/<game>.onnx` (ModelError when there is none); None when a reference
        player answers. Nothing is loaded or checked beyond that (the shipped model's path
        imports the evaluator's module, and so onnxruntime)."""
        if self.config.player is not None:
            return None
        if self.config.model is not None:
            return self.config.model
        from saz.engine.evaluator import default_model_path

        return default_model_path(self.game_name)

    def stop(self) -> None:
        """End a running search (analysis, ponder, or a genmove in progress): thread-safe."""
        self._stop_request.set()

    def halt(self) -> None:
        """Stop any background search and wait for it."""
        thread = self._background
        if thread is not None:
            self.stop()
            thread.join()
            self._background = None

    @property
    def searching_in_background(self) -> bool:
        thread = self._background
        return thread is not None and thread.is_alive()

    # -- the clock -------------------------------------------------------------------------------
    def set_time_control(self, control: TimeControl) -> None:
        self.clock.set_control(control)

    # -- resources -------------------------------------------------------------------------------
    @property
    def memory_limit(self) -> int | None:
        """The bytes the process may use (None: no limit); see `set_memory_limit`."""
        return self.config.search.memory_limit

    def set_memory_limit(self, limit: int | None) -> None:
        """Keep the process within `limit` bytes (None: no limit), from the next search on.

        The search tree is what grows: each search, genmove and pondering alike, gives its tree
        the bytes the limit leaves (`MCTS.tree_budget`) and stops growing it there, answering
        with its best move."""
        options = replace(self.config.search, memory_limit=limit)  # ValueError if not > 0
        self.halt()
        self.config = replace(self.config, search=options)
        for search in self._searches.values():
            if isinstance(search, MCTS):
                search.options = replace(search.options, memory_limit=limit)

    def set_tree_bytes(self, size: int) -> None:
        """Let the search tree hold `size` bytes from the next search on (UCI's Hash;
        ValueError if not positive), the network and its tree kept."""
        options = replace(self.config.search, max_tree_bytes=size)  # ValueError if not > 0
        self.halt()
        self.config = replace(self.config, search=options)
        for search in self._searches.values():
            if isinstance(search, MCTS):
                search.options = replace(search.options, max_tree_bytes=size)

    def tree_permille(self) -> int | None:
        """How full the current game's tree is: its bytes per mille of its budget (UCI's
        hashfull), at most 1000; None without a tree search (a reference player answers, or
        the network has not loaded yet)."""
        search = self._searches.get(self.game_name)
        if not isinstance(search, MCTS) or search.tree_budget <= 0:
            return None
        return min(1000, round(1000 * search.tree_bytes / search.tree_budget))

    def set_threads(self, threads: int | None) -> None:
        """Evaluate the network with `threads` threads (None: the evaluator's default). A network
        already loaded reopens its session with them now, between moves, keeping the search
        tree; ModelError if the model file cannot be opened again (the old session stays)."""
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be positive, got {threads}")
        self.halt()
        for search in self._searches.values():
            # The ONNX evaluator; the stand-ins of tests and reference players have no threads.
            set_threads = getattr(getattr(search, "evaluator", None), "set_threads", None)
            if set_threads is not None:
                set_threads(threads)
        self.config = replace(self.config, threads=threads)

    # -- internals -------------------------------------------------------------------------------
    def _default_control(self) -> TimeControl:
        if self.config.time_per_move is not None:
            return FixedTimePerMove(self.config.time_per_move)
        if self.config.visits is not None:
            return FixedVisits(self.config.visits)
        return NoTimeLimit()

    def _limits(self, budget: MoveBudget) -> SearchLimits:
        visits = budget.max_visits
        if self.config.visits is not None:
            visits = self.config.visits if visits is None else min(visits, self.config.visits)
        if budget.unlimited and visits is None:
            visits = DEFAULT_VISITS
        def finite(t: float) -> float | None:
            return t if t != float("inf") else None

        return SearchLimits(visits=visits, soft_seconds=finite(budget.soft),
                            hard_seconds=finite(budget.hard), early_stop=budget.stop_early)

    def _searcher(self) -> MCTS | PlayerSearch:
        """The search of the current game, loading its network on first use (ModelError); the
        configured reference player instead, when there is one."""
        search = self._searches.get(self.game_name)
        if search is None and self.config.player is not None:
            search = PlayerSearch(make_player(self.config.player, self.config.search.seed))
            self._searches[self.game_name] = search
        if search is None:
            from saz.engine.evaluator import Evaluator

            path = self.model_path()
            assert path is not None  # a reference player answers above
            # The device is a str from the command line; Evaluator refuses an unknown one.
            evaluator = Evaluator(path, device=self.config.device,  # type: ignore[arg-type]  # it checks
                                  threads=self.config.threads, game=self.game_name,
                                  chunk_nodes=self.config.chunk_nodes)
            search = MCTS(evaluator, self.config.search)
            self._searches[self.game_name] = search
        return search

    def _start_background(self, work: Callable[[threading.Event], object]) -> None:
        """Run `work(stop_request)` on the background thread, after halting the previous one."""
        self.halt()
        stop = self._new_stop_request()
        self._background = threading.Thread(target=work, args=(stop,), name="saz-background",
                                            daemon=True)
        self._background.start()

    def _new_stop_request(self) -> threading.Event:
        self._stop_request = threading.Event()
        return self._stop_request

    def _start_ponder(self) -> None:
        search = self._searcher()
        game = self.game.copy()
        limits = SearchLimits(visits=self.config.search.max_nodes)
        self._start_background(lambda stop: search.search(game, limits, stop=stop))


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector kept out of a timed search.

    Its pauses (5-23 ms each at 19x19 with the old Python tree) could fall anywhere in a move.
    The tree now lives in the core and the search makes few Python objects, so the collector
    simply waits until the search is over; `collect_garbage` collects between games."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def collect_garbage() -> None:
    """Collect everything (a new game: nobody is timing us)."""
    gc.collect()
