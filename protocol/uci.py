"""`saz uci`: the engine over the Universal Chess Interface, for chess GUIs (Arena, Cute Chess,
xboard through polyglot), tournament managers (cutechess-cli, fastchess) and python-chess.

It speaks UCI as Stefan Meyer-Kahlen's specification (April 2006) and Stockfish do:

    uci                          id name, id author, the options, uciok
    isready                      readyok, at any time (during a search too); when idle, the
                                 network is loaded and warmed up first, and while none can
                                 load an info string says why instead (see below)
    setoption name N [value V]   see OPTIONS below; option names in any case
    ucinewgame                   a new game of the current variant
    position startpos|fen FEN [moves M...]
    go [ponder] [wtime btime winc binc movestogo movetime nodes depth mate infinite]
       [searchmoves M...]        search; info lines about once a second and at the end,
                                 then bestmove M [ponder P]
    stop                         end the search: bestmove now
    ponderhit                    the expected move was played: the ponder search goes on as
                                 a timed search of the same tree
    quit                         exit (a search stops at once)
    debug on|off, register       accepted, no effect

`info` lines and their scores are `uci_info.py`'s; `go`'s parameters and the time control they
give the shared clock `uci_go.py`'s.

**Bad input.** A line that cannot be honoured (an unknown command, an option we do not have or
a value it does not take, a position with an impossible FEN or an illegal move, a malformed
`go`) is answered `info string <what is wrong>`. Nothing else changes: a rejected `position`
leaves the last good position, and a `go` with bad words searches with the rest. As the
specification asks, unknown words at the start of a line are skipped up to a command
(`joho debug on` is `debug on`), and the skipped words are reported. Only UCI goes to stdout;
logs go to stderr.

**Threads.** One thread reads stdin into a queue and the main thread handles the lines in
order; a search runs on a thread of its own, which writes its `info` lines and its `bestmove`.
So `isready`, `stop` and `ponderhit` are answered while it runs. Any command that changes what
is searched (`position`, `go`, `ucinewgame`, `setoption`) first stops a running search (its
`bestmove` comes first). `go infinite` and `go ponder` never answer before `stop` (or
`ponderhit`), even when the search ends by itself (a proven result, a full tree).

**Time.** `go`'s clock becomes a `TimeControl` of the shared clock (`TimeManager`), whose
policy keeps Move Overhead as its margin and adds the latency it observes: each move is timed
from the moment its `go` (or `ponderhit`) arrived, and the time from the search's end to its
`bestmove` is observed. A move the rules prove wins (a mate in one) or the tree proves is played
at once.

The module imports neither torch nor onnxruntime: the network loads at the first `isready`
(untimed) or else at the first search.

**No network.** Without one nothing can be searched, so the failure comes before a game: a
missing model file is an `info string` before `uciok`, and while the network cannot load
(missing, corrupt, for another game) `isready` gets an `info string` saying why instead of
`readyok`, until the Model option names one that loads. Tournament managers (fastchess,
cutechess-cli) then stop at their first ping, where `bestmove (none)` to each `go` would forfeit
game after game. A `go` sent regardless still answers `bestmove (none)`: `0000` is an illegal
move to cutechess-cli and fastchess as well, and python-chess would take it for a null move.
"""
from __future__ import annotations

import argparse
import io
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from saz.engine.engine import Engine, EngineConfig
from saz.engine.games import WHITE, Game, GameError, IllegalMoveError
from saz.engine.games.chess import VARIANTS, Chess
from saz.engine.search.clock import (
    FixedTimePerMove,
    FixedVisits,
    NoTimeLimit,
    SafetyMargin,
    TimeControl,
    TimeManager,
    TimePolicy,
)
from saz.engine.search.mcts import SearchResult
from saz.engine.search.options import add_search_arguments
from saz.protocol.engine_options import add_engine_arguments, engine_config
from saz.protocol.gomocup import About, fd_lines
from saz.protocol.input_lines import arrivals
from saz.protocol.uci_go import GoParams, parse_go, time_control
from saz.protocol.uci_info import info_lines, mate_moves
from saz.protocol.uci_option import UciOption

log = logging.getLogger("saz.uci")

#: The protocol's name as games give it (`GameInfo.engine_protocol`).
PROTOCOL = "uci"
#: The game UCI plays.
GAME = "chess"
#: Seconds between the `info` lines of a running search.
INFO_INTERVAL = 1.0
#: How often a search looks at its stop, ponderhit, depth and mate conditions (seconds).
WATCH_INTERVAL = 0.05
#: Root visits of a search that only `stop` ends (go infinite, go ponder): no cap in practice.
UNTIL_STOPPED_VISITS = 1 << 62
#: Hash's default in MB (`--max-memory`'s under `saz uci`), a quarter of the other front-ends'
#: 1 GB: a tournament manager runs several engines at once, and a chess tree takes about 350
#: bytes a visit, so 256 MB holds some 750,000 visits, minutes of search on a CPU. A GUI
#: raises it with the option.
DEFAULT_HASH_MB = 256
#: Bounds of the spin options.
MAX_HASH_MB = 1 << 20
MAX_THREADS = 1024
MAX_MULTIPV = 500
MAX_MOVE_OVERHEAD_MS = 60_000
#: Move Overhead's default: the shared clock's own latency margin, in ms.
DEFAULT_MOVE_OVERHEAD_MS = round(TimePolicy().margin.latency * 1000)
#: The most digits a number in a command may have.
MAX_DIGITS = 18
#: The longest `info string` message: what is wrong with a line, not all of it.
MAX_MESSAGE = 400
#: What `string` options show and take for "the default" (Stockfish's spelling).
EMPTY = "<empty>"


class UciError(Exception):
    """A line that cannot be honoured: reported as `info string <message>`, nothing changed."""


def _shown(text: str, limit: int = 40) -> str:
    """`text` quoted for a message (control characters escaped), cut if long."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _whole(name: str, text: str, low: int, high: int) -> int:
    """`text` as a whole number in [low, high]; UciError naming `name` otherwise."""
    digits = text[1:] if text.startswith("-") else text
    if not (digits.isascii() and digits.isdigit()) or len(digits) > MAX_DIGITS:
        raise UciError(f"{name} takes a whole number, got {_shown(text)}")
    number = int(text)
    if not low <= number <= high:
        raise UciError(f"{name} must be between {low} and {high}, got {number}")
    return number


def _check(name: str, text: str) -> bool:
    if text.lower() not in ("true", "false"):
        raise UciError(f"{name} takes true or false, got {_shown(text)}")
    return text.lower() == "true"


def _refusals() -> tuple[type[Exception], ...]:
    """What the engine declines a request with: GameError, and the evaluator's ModelError once
    the evaluator is imported (importing it costs the start-up onnxruntime's import)."""
    evaluator = sys.modules.get("saz.engine.evaluator")
    model_error: tuple[type[Exception], ...] = (evaluator.ModelError,) if evaluator else ()
    return (UciError, GameError, ValueError, OSError, *model_error)


def _cores() -> int:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, cores or 1)


# -- one search ------------------------------------------------------------------------------------
@dataclass
class _Search:
    """A `go` in progress: its parameters, the position, and what the main thread told it."""

    go: GoParams
    root: Chess
    allowed: list[int] | None
    #: When the `go` line arrived (the move is timed from then).
    arrived: float
    #: `stop` (or a command that needs the search out of the way) arrived.
    stopped: threading.Event = field(default_factory=threading.Event)
    #: `ponderhit` arrived, at `ponderhit_at`.
    hit: threading.Event = field(default_factory=threading.Event)
    ponderhit_at: float = 0.0
    #: Set by either: what `go infinite` and `go ponder` wait for before answering.
    released: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    @property
    def pondering(self) -> bool:
        return self.go.ponder and not self.hit.is_set()


# -- the session -----------------------------------------------------------------------------------
class UciSession:
    """The protocol over an `Engine`: `handle` takes one input line; replies go to `write`
    (one line each, thread-safe).

    One thread drives `handle` (`serve`'s loop, or a test); searches run on their own."""

    def __init__(self, engine: Engine, write: Callable[[str], None], *,
                 about: About | None = None) -> None:
        if engine.game.info.engine_protocol != PROTOCOL:
            raise ValueError(f"UCI plays chess, not {engine.game_name}")
        self.engine = engine
        self.about = about or About()
        self._raw_write = write
        self._write_lock = threading.Lock()
        self._search: _Search | None = None
        self.finished = False
        self.debug = False
        self.multipv = 1
        self.ponder = False
        self.show_wdl = True
        self.move_overhead_ms = DEFAULT_MOVE_OVERHEAD_MS
        self.variant = str(engine.rules.get("variant", GAME))
        self.model = "" if engine.config.model is None else str(engine.config.model)
        #: What the network was last warmed up for (model, variant); None: not loaded yet.
        self._warm: tuple[str, str] | None = None
        #: The problems with the network already logged on stderr.
        self._told: set[str] = set()
        self._set_overhead(self.move_overhead_ms)
        self._commands: dict[str, Callable[[list[str], float], None]] = {
            "uci": self._uci, "isready": self._isready, "setoption": self._setoption,
            "ucinewgame": self._ucinewgame, "position": self._position, "go": self._go,
            "stop": self._stop, "ponderhit": self._ponderhit, "quit": self._quit,
            "debug": self._debug, "register": self._ignore}

    # -- output -------------------------------------------------------------------------------
    def write(self, line: str) -> None:
        with self._write_lock:
            self._raw_write(line)

    def tell(self, message: str) -> None:
        """`info string MESSAGE`: how problems with the input are reported (control characters
        escaped, so that the message stays one line; cut at `MAX_MESSAGE` characters)."""
        text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)
        if len(text) > MAX_MESSAGE:
            text = text[:MAX_MESSAGE] + "..."
        self.write(f"info string {text}")

    # -- input --------------------------------------------------------------------------------
    def handle(self, line: str, arrived: float | None = None) -> None:
        """One input line, which arrived at `arrived` (time.monotonic; default: now)."""
        if self.finished:
            return
        arrived = time.monotonic() if arrived is None else arrived
        words = line.split()
        if not words:
            return
        skipped = 0
        while skipped < len(words) and words[skipped] not in self._commands:
            skipped += 1
        if skipped:
            shown = _shown(" ".join(words[:skipped]))
            if skipped == len(words):
                self.tell(f"unknown command {shown}; ignored")
                return
            self.tell(f"unknown words {shown} before {words[skipped]} ignored")
        name, args = words[skipped], words[skipped + 1:]
        try:
            self._commands[name](args, arrived)
        except _refusals() as exc:
            self.tell(f"{name}: {exc}")
        except Exception as exc:  # a bug must not end the session: report it and go on
            log.exception("%s failed", name)
            self.tell(f"{name}: internal error: {exc}")

    def close(self) -> None:
        """End any search (its `bestmove` is written) and wait for it."""
        self._end_search()

    # -- commands -----------------------------------------------------------------------------
    def _uci(self, args: list[str], arrived: float) -> None:
        self.write(f"id name {self.about.name} {self.about.version}")
        self.write(f"id author {self.about.author}")
        for option in self.options():
            self.write(option.line())
        problem = self._missing_model()
        if problem is not None:
            self._no_network(problem)
        self.write("uciok")

    def options(self) -> list[UciOption]:
        """The options `uci` announces, with their current values as defaults."""
        search = self.engine.config.search
        threads = self.engine.config.threads or _cores()
        return [
            UciOption("Hash", "spin", str(max(1, search.max_tree_bytes >> 20)), 1, MAX_HASH_MB),
            UciOption("Threads", "spin", str(threads), 1, MAX_THREADS),
            UciOption("MultiPV", "spin", str(self.multipv), 1, MAX_MULTIPV),
            UciOption("Ponder", "check", _bool(self.ponder)),
            UciOption("Move Overhead", "spin", str(self.move_overhead_ms), 0,
                   MAX_MOVE_OVERHEAD_MS),
            UciOption("UCI_Variant", "combo", self.variant, choices=tuple(VARIANTS)),
            UciOption("UCI_ShowWDL", "check", _bool(self.show_wdl)),
            UciOption("Model", "string", self.model or EMPTY),
            UciOption("Clear Hash", "button"),
        ]

    def _isready(self, args: list[str], arrived: float) -> None:
        """`readyok`, once the network has loaded (at once during a search). While no network
        can load, the answer is an `info string` saying why and no `readyok`: a tournament
        manager then stops at its first ping, before any game, where a `go` could only answer
        `bestmove (none)` and forfeit every game one by one."""
        if self._searching() or self._warm_up():
            self.write("readyok")

    def _warm_up(self) -> bool:
        """Load the network and run it once on this board, off the clock. False when it cannot
        be loaded (told as `info string`; the next `isready` or `go` tries again)."""
        key = (self.model, self.variant)
        if self._warm == key:
            return True
        try:
            self.engine.load_network()
        except _refusals() as exc:
            self._no_network(str(exc), at_isready=True)
            return False
        self._warm = key
        self._told.clear()
        return True

    def _missing_model(self) -> str | None:
        """What is missing for the network to load, as far as the file system tells without
        loading it (the model file); None when it is there or a reference player answers."""
        try:
            path = self.engine.model_path()
        except _refusals() as exc:  # no shipped model
            return str(exc)
        if path is not None and not path.is_file():
            return f"{path}: model file not found"
        return None

    def _no_network(self, problem: str, *, at_isready: bool = False) -> None:
        """Say that no network can search, why, and what mends it: as `info string` (the GUI's
        log; cutechess and fastchess show it with their debug output) and, once per problem,
        on stderr (a terminal and python-chess show it)."""
        mend = "setoption name Model value PATH, or saz uci --model PATH"
        if at_isready:
            self.tell(f"isready: no readyok without a chess network: {problem}; {mend}")
        else:
            self.tell(f"no chess network: {problem}; isready waits for one: {mend}")
        if problem not in self._told:
            self._told.add(problem)
            log.warning("no chess network: %s; isready is not answered until one loads (%s)",
                        problem, mend)

    def _setoption(self, args: list[str], arrived: float) -> None:
        if not args or args[0] != "name":
            raise UciError("usage: setoption name NAME [value VALUE]")
        rest = args[1:]
        cut = rest.index("value") if "value" in rest else len(rest)
        name, value = " ".join(rest[:cut]), " ".join(rest[cut + 1:])
        has_value = cut < len(rest)
        option = {o.name.lower(): o for o in self.options()}.get(name.lower())
        if option is None:
            raise UciError(f"no option {_shown(name)}; the options are "
                           + ", ".join(o.name for o in self.options()))
        if option.type != "button" and not has_value:
            raise UciError(f"{option.name} needs a value")
        self._end_search()
        self._apply(option, value)

    def _apply(self, option: UciOption, value: str) -> None:
        name = option.name
        if name == "Hash":
            self.engine.set_tree_bytes(_whole(name, value, 1, MAX_HASH_MB) << 20)
        elif name == "Threads":
            self.engine.set_threads(_whole(name, value, 1, MAX_THREADS))
        elif name == "MultiPV":
            self.multipv = _whole(name, value, 1, MAX_MULTIPV)
        elif name == "Ponder":
            self.ponder = _check(name, value)
        elif name == "Move Overhead":
            self._set_overhead(_whole(name, value, 0, MAX_MOVE_OVERHEAD_MS))
        elif name == "UCI_Variant":
            self._set_variant(value)
        elif name == "UCI_ShowWDL":
            self.show_wdl = _check(name, value)
        elif name == "Model":
            self._set_model(value)
        elif name == "Clear Hash":
            self.engine.clear_cache()

    def _set_overhead(self, millis: int) -> None:
        """Move Overhead: the clock's latency margin (the latency it observes is added where it
        is larger). A new clock: the latencies seen so far are forgotten."""
        policy = TimePolicy()
        margin = SafetyMargin(latency=millis / 1000.0, overrun=policy.margin.overrun)
        self.engine.clock = TimeManager(self.engine.clock.control,
                                        policy=replace(policy, margin=margin))
        self.move_overhead_ms = millis

    def _set_variant(self, value: str) -> None:
        variant = value.lower()
        if variant not in VARIANTS:
            raise UciError(f"UCI_Variant {_shown(value)} is not played; the variants are "
                           + ", ".join(VARIANTS))
        if variant != self.variant:
            size = VARIANTS[variant][0]
            self.engine.set_game(GAME, size, size, variant=variant)
            self.variant = variant

    def _set_model(self, value: str) -> None:
        """Model: another network file (EMPTY or nothing: the game's shipped model). The
        engine is rebuilt around the current position; the file loads at the next isready."""
        text = "" if value in ("", EMPTY) else value
        path = Path(text) if text else None
        if path is not None and not path.is_file():
            raise UciError(f"no model file {_shown(text)}")
        old = self.engine
        engine = Engine(replace(old.config, model=path), clock=old.clock)
        engine.set_game(GAME, old.game.width, old.game.height, **old.rules)
        engine.replace_game(old.game)
        self.engine, self.model, self._warm = engine, text, None

    def _ucinewgame(self, args: list[str], arrived: float) -> None:
        self._end_search()
        self.engine.new_game()

    def _position(self, args: list[str], arrived: float) -> None:
        if not args or args[0] not in ("startpos", "fen"):
            raise UciError("usage: position startpos|fen FEN [moves MOVE...]; the position "
                           "stays as it was")
        cut = args.index("moves") if "moves" in args else len(args)
        if args[0] == "startpos" and cut != 1:
            raise UciError(f"unexpected {_shown(' '.join(args[1:cut]))} after startpos (only "
                           "moves may follow); the position stays as it was")
        fen = " ".join(args[1:cut]) if args[0] == "fen" else None
        if fen == "":
            raise UciError("a FEN must follow fen; the position stays as it was")
        game = self._setup(fen)
        for number, text in enumerate(args[cut + 1:], 1):
            game = game.continued() or game  # a move after a claimable draw plays on
            try:
                game.play(game.parse_uci(text))
            except GameError as exc:
                raise UciError(f"move {number} {_shown(text)}: {_reason(exc)}; the position "
                               "stays as it was") from None
        self._end_search()
        self.engine.replace_game(game)

    def _setup(self, fen: str | None) -> Chess:
        """A new game of the current variant from its start or from `fen`."""
        try:
            return Chess(variant=self.variant, fen=fen)
        except GameError as exc:
            raise UciError(f"{exc}; the position stays as it was") from None

    def _go(self, args: list[str], arrived: float) -> None:
        go = parse_go(args)
        for problem in go.problems:
            self.tell(problem)
        self._end_search()
        engine = self.engine
        game = _chess(engine.game)
        resumed = game.continued()  # after a claimable draw: the GUI plays on
        if resumed is not None:
            engine.replace_game(resumed)
            game = resumed
        reason = game.termination()
        if reason is not None:
            self.tell(f"go: the game is over ({reason.value}): there is no move to search")
            self.write("bestmove (none)")
            return
        root = _chess(engine.game).copy()
        allowed = self._root_moves(root, go.searchmoves)
        search = _Search(go, root, allowed, arrived)
        search.thread = threading.Thread(target=self._run, args=(search,), name="saz-uci-search",
                                         daemon=True)
        self._search = search
        search.thread.start()

    def _root_moves(self, root: Chess, words: Sequence[str]) -> list[int] | None:
        """`searchmoves`' moves that are legal at `root` (None: all moves); the others are
        reported and left out."""
        if not words:
            return None
        moves: list[int] = []
        for word in words:
            if word == "0000":  # python-chess's stand-in for an empty list
                continue
            try:
                moves.append(root.parse_uci(word))
            except GameError as exc:
                self.tell(f"go searchmoves: {_shown(word)} left out: {_reason(exc)}")
        if not moves:
            self.tell("go searchmoves: no legal move given; searching them all")
            return None
        return moves

    def _stop(self, args: list[str], arrived: float) -> None:
        self._end_search()  # its bestmove comes before the answer to the next line

    def _ponderhit(self, args: list[str], arrived: float) -> None:
        search = self._search
        if search is None or not search.pondering or not self._searching():
            self.tell("ponderhit without a go ponder in progress; ignored")
            return
        search.ponderhit_at = arrived
        search.hit.set()
        search.released.set()
        self.engine.stop()

    def _quit(self, args: list[str], arrived: float) -> None:
        self.finished = True
        self._end_search()

    def _debug(self, args: list[str], arrived: float) -> None:
        if args[:1] not in (["on"], ["off"]):
            raise UciError("usage: debug on|off")
        self.debug = args[0] == "on"

    def _ignore(self, args: list[str], arrived: float) -> None:
        pass

    # -- searching ----------------------------------------------------------------------------
    def _searching(self) -> bool:
        search = self._search
        return search is not None and search.thread is not None and search.thread.is_alive()

    def _end_search(self) -> None:
        """Stop the search in progress, if any, and wait for its `bestmove`."""
        search, self._search = self._search, None
        if search is None:
            return
        search.stopped.set()
        search.released.set()
        self.engine.stop()
        if search.thread is not None:
            search.thread.join()

    def _run(self, search: _Search) -> None:
        """The search thread: think, wait for stop or ponderhit where the command asks it,
        then write the last info lines and bestmove."""
        go = search.go
        result: SearchResult | None = None
        timed = not go.until_stopped
        try:
            result = self._think(search, pondering=go.ponder, received=search.arrived)
            if go.until_stopped:
                search.released.wait()
            if go.ponder and search.hit.is_set() and not search.stopped.is_set():
                timed = True
                if not result.proven:  # a proof stands: played at once
                    result = self._think(search, pondering=False, received=search.ponderhit_at)
        except Exception as exc:
            known = isinstance(exc, _refusals())
            if not known:
                log.exception("the search failed")
            self.tell(f"go: {'' if known else 'internal error: '}{exc}")
            if go.until_stopped:
                search.released.wait()
        try:
            if result is None:
                self.write("bestmove (none)")
                return
            self._report(search, result)
            self.write(self._bestmove(search.root, result))
            if timed:
                self.engine.clock.replied(time.monotonic())
        except BrokenPipeError:
            pass

    def _think(self, search: _Search, *, pondering: bool, received: float) -> SearchResult:
        """One search of the position under `go`'s limits (until stopped while `pondering`)."""
        go = search.go
        engine = self.engine
        white = search.root.to_move == WHITE
        limited = replace(go, infinite=True) if pondering else go
        control = time_control(limited, white=white, until_stopped_visits=UNTIL_STOPPED_VISITS,
                               default=self._default_control())
        engine.clock.set_control(control)
        engine.clock.command_received(received)
        watch = self._watcher(search, pondering=pondering)
        return engine.think(on_progress=watch, progress_interval=WATCH_INTERVAL,
                            allowed=search.allowed)

    def _default_control(self) -> TimeControl:
        """A `go` with no limit: the command line's --time-per-move or --visits, else the
        engine's visits per move."""
        config = self.engine.config
        if config.time_per_move is not None:
            return FixedTimePerMove(config.time_per_move)
        if config.visits is not None:
            return FixedVisits(config.visits)
        return NoTimeLimit()

    def _watcher(self, search: _Search, *, pondering: bool) -> Callable[[SearchResult], None]:
        """The search's progress callback: stops it when told to or when `go depth` / `go
        mate` is reached, and writes the info lines about once a second."""
        go = search.go
        last = time.monotonic()
        until_stopped = pondering or go.infinite

        def watch(result: SearchResult) -> None:
            nonlocal last
            told = search.stopped.is_set() or (pondering and search.hit.is_set())
            if told or (not until_stopped and _reached(go, result)):
                self.engine.stop()
            now = time.monotonic()
            if now - last >= INFO_INTERVAL:
                last = now
                try:
                    self._report(search, result)
                except Exception:  # a report must not end the search
                    log.exception("info lines failed")

        return watch

    def _report(self, search: _Search, result: SearchResult) -> None:
        wdl = None
        if self.show_wdl:
            def wdl(value: float, proven: bool) -> Sequence[float] | None:
                return self.engine.wdl(search.root, value, proven=proven)
        for line in info_lines(result, search.root, multipv=self.multipv, wdl=wdl,
                               hashfull=self.engine.tree_permille()):
            self.write(line)

    def _bestmove(self, root: Chess, result: SearchResult) -> str:
        best = root.uci(result.best_move)
        pv = next((m.pv for m in result.moves if m.move == result.best_move), ())
        if len(pv) >= 2:
            after = root.copy()
            after.play(pv[0])
            if after.is_legal(pv[1]):
                return f"bestmove {best} ponder {after.uci(pv[1])}"
        return f"bestmove {best}"


def _reason(exc: GameError) -> str:
    """What is wrong, without an illegal move's internal number."""
    return exc.reason if isinstance(exc, IllegalMoveError) else str(exc)


def _chess(game: Game) -> Chess:
    if not isinstance(game, Chess):
        raise TypeError(f"UCI plays chess, not {game.name}")
    return game


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _reached(go: GoParams, result: SearchResult) -> bool:
    """Whether `go depth` or `go mate` is reached by this snapshot."""
    best = next((m for m in result.moves if m.move == result.best_move), None)
    length = len(best.pv) if best is not None else 0
    if go.depth is not None and length >= go.depth:
        return True
    return (go.mate is not None and result.proven and result.value > 0
            and mate_moves(length, True) <= go.mate)


# -- the process -----------------------------------------------------------------------------------
def serve(session: UciSession, lines: Iterable[str]) -> int:
    """Run `session` on `lines` until `quit` or their end; 0.

    A thread takes the lines as they come (each with the time it arrived) into a queue; the
    calling thread handles them in order."""
    try:
        for line, arrived in arrivals(lines, name="saz-uci-input",
                                      finished=lambda: session.finished):
            session.handle(line, arrived)
    except BrokenPipeError:  # the GUI has gone: nobody is left to answer
        pass
    finally:
        session.close()
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="saz uci", description="Play chess (and Gardner's 5x5, Los Alamos 6x6) over UCI, "
        "for chess GUIs, cutechess-cli, fastchess and python-chess: the protocol on stdin and "
        "stdout, logs on stderr.")
    add_engine_arguments(parser, time_per_move=True, help={
        "model": "the chess network (default: the shipped models/chess.onnx); the Model option "
                 "sets it too",
        "visits": "a cap on each search's visits; a go with no limit uses it",
        "time_per_move": "seconds for a go with no limit",
        "threads": "network threads (the Threads option sets it too; default: the cores)",
        "ponder": "unused: over UCI the GUI asks for pondering (go ponder)"})
    parser.add_argument("--variant", choices=tuple(VARIANTS), default=GAME,
                        help="the variant to start with (the UCI_Variant option changes it)")
    parser.add_argument("--seed", type=int, metavar="N",
                        help="seed the search's and the reference players' random choices")
    parser.add_argument("--verbose", action="store_true", help="log to stderr")
    add_search_arguments(parser, max_memory=DEFAULT_HASH_MB << 20)
    return parser


def make_engine(config: EngineConfig, variant: str = GAME) -> Engine:
    """The engine of a UCI session, on `variant`'s board."""
    engine = Engine(replace(config, game=GAME, ponder=False))
    if variant != GAME:
        size = VARIANTS[variant][0]
        engine.set_game(GAME, size, size, variant=variant)
    return engine


def session_from_args(argv: Sequence[str] | None, write: Callable[[str], None]) -> UciSession:
    """The session `saz uci ARGV` serves, answering through `write` (a bad argument is the
    parser's error: exit status 2)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, format="saz uci: %(levelname)s: %(message)s",
                        level=logging.INFO if args.verbose else logging.WARNING)
    engine = make_engine(engine_config(parser, args, game=GAME, seed=args.seed), args.variant)
    return UciSession(engine, write, about=About.of_package())


def main(argv: Sequence[str] | None = None) -> int:
    replies = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", errors="replace",
                               newline="\n")

    def write(line: str) -> None:
        replies.write(line + "\n")
        replies.flush()

    session = session_from_args(argv, write)  # --help and argument errors before this
    # Only UCI may reach the GUI: anything printed by mistake goes to stderr.
    sys.stdout = sys.stderr
    status = serve(session, fd_lines(sys.stdin.fileno()))
    try:
        replies.flush()
    except BrokenPipeError:
        # Keep the interpreter's own flush at exit from failing on the closed pipe again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), replies.fileno())
    return status


if __name__ == "__main__":
    sys.exit(main())
