"""`pbrain-saz` (also `saz gomocup`): the engine over the Gomocup protocol, for Piskvork,
c-gomoku-cli, Gomocup tournaments and the GUIs that speak it.

The protocol is Petr Laštovička's "new protocol" (https://plastovicka.github.io/protocl2en.htm):
the manager writes one command per line on stdin, the brain answers on stdout. Coordinates are
`x,y`, 0-based from the top-left, which is the engine's own convention (point = y * width + x).

    START n | RECTSTART w,h     OK, or ERROR: the size, or a network that cannot be loaded
    RESTART                     OK: a new game on the same board
    BEGIN                       our move on the empty board
    TURN x,y                    the opponent played x,y; our move
    BOARD, x,y,f lines, DONE    a whole position (f: 1 ours, 2 the opponent's); our move
    TAKEBACK x,y                OK once the last move, which must be x,y, is taken back
    PLAY x,y                    x,y is played for us (the manager's reply to SUGGEST); x,y
    SWAP2BOARD, x,y lines, DONE the swap2 opening: 3 stones, or SWAP / our stone(s)
    INFO key value              no answer (see `GomocupBrain._info`)
    ABOUT                       name="saz", version="...", author="..."
    END                         exit (a search running then stops at once)
    STOP | YXSTOP               (c-gomoku-cli, Yixin) stop thinking; the best move so far answers

Any other command is answered `UNKNOWN`; a request that cannot be honoured (a malformed line, an
occupied or off-board point, a move after the end of the game) `ERROR` and the reason, with the
game left as it was. Commands are case-insensitive, lines may end in CR LF, and spaces around
the words and commas are ignored. Numbers are what a manager writes: the ASCII digits 0-9 (not
every digit Python's int() reads), at most `MAX_DIGITS` of them (`MAX_INFO_DIGITS` in INFO).
Nothing is removed from a line: one with a control character is malformed, and an answer that
repeats input shows it quoted, escaped and cut (`_quote`, `_echo`). Inside a BOARD or
SWAP2BOARD block, a line that starts with a command ends the block (ERROR, then the command);
any other line belongs to it, and a malformed one makes DONE answer ERROR: one answer per block.

INFO is never answered: the manager does not read after it. A problem with one (a rule we do not
play, a malformed time) is reported as MESSAGE lines just before the next answer, as the protocol
asks, and the setting is not changed. Every INFO applies whenever it comes, before START or
between moves: thread_num reopens the network's session with that many threads (at most the
cores), max_memory bounds the search tree (`Engine.set_memory_limit`; 0: no limit).

Each answer that a search chose (a move, swap2 stones or SWAP) comes after one MESSAGE line
about that search (`search_message`): visits, depth, winrate, speed, time and the principal
variation, which managers show and log.

Threads: `serve` reads stdin on its own thread, so that END and STOP reach a running search at
once (`GomocupBrain.notice`); otherwise each command waits for the one before it and gets its
answer in order. A new command ends pondering.

Time: the network is loaded at START, which the manager does not time as part of a turn (and,
under a memory limit, what a tree node costs on this board is measured then), and the match
clock counts from process start (`process_start_time`), as the manager's does.
"""
from __future__ import annotations

import argparse
import io
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace

from saz.engine.engine import Engine
from saz.engine.games import DRAW, Game, GameError, IllegalMoveError, new_game
from saz.engine.games.base import COLOR_NAMES
from saz.engine.games.gomoku import Gomoku
from saz.engine.search.clock import GOMOCUP_TIME_KEYS, Gomocup, TimeControlError, TimeManager
from saz.engine.search.mcts import SearchResult
from saz.engine.search.options import add_search_arguments
from saz.protocol.engine_options import add_engine_arguments, engine_config
from saz.protocol.input_lines import arrivals, fd_lines

log = logging.getLogger("saz.gomocup")

#: The protocol's name as games give it (`GameInfo.engine_protocol`): the brain plays those games.
PROTOCOL = "gomocup"
#: How often a search looks whether END or STOP has arrived (seconds). The input thread also
#: stops a running search directly; this catches a command that lands as a search is starting.
WATCH_INTERVAL = 0.1
#: The most digits of a coordinate, a board size or a rule: a manager sends small numbers, and a
#: number of thousands of digits must be refused before int() reads it (Python refuses more than
#: 4,300 digits with a ValueError, and converts fewer in quadratic time).
MAX_DIGITS = 9
#: The most digits of an INFO value: memory in bytes and "no limit" (Yixin's max_node is the
#: largest unsigned 64-bit number, 20 digits) need more than a coordinate.
MAX_INFO_DIGITS = 20
#: The most lines a BOARD or SWAP2BOARD block keeps (a 32x32 board's points); more are refused.
MAX_BLOCK_LINES = 32 * 32
#: Moves of the principal variation shown in the MESSAGE about each search.
PV_SHOWN = 10
#: INFO rule bits (the protocol's bitmask), with what each one asks for.
EXACT_FIVE_BIT = 1
RENJU_BIT = 4
_RULE_BITS = {1: "exact five", 2: "continuous game", 4: "renju", 8: "caro"}
#: Commands that need a board, i.e. a START before them.
_NEED_BOARD = frozenset({"RESTART", "BEGIN", "TURN", "BOARD", "TAKEBACK", "PLAY", "SWAP2BOARD"})
#: swap2 stones: the opener's three (black, white, black), then the two of the third option.
_SWAP2_COUNTS = (0, 3, 5)

#: A list of comma-separated whole numbers in any script: what int() and `\d` would read (the
#: fullwidth seven U+FF17, the Arabic-Indic three U+0663), and so what a malformed number line
#: looks like.
_NUMBERS = re.compile(r"-?\d+(?:\s*,\s*-?\d+)*")
#: The same list as a manager writes it: the ASCII digits 0-9, spaces and tabs.
_ASCII_NUMBERS = re.compile(r"-?[0-9]+(?:[ \t]*,[ \t]*-?[0-9]+)*")


class Refusal(Exception):
    """A command that cannot be honoured: answered `ERROR <message>`, nothing changed."""


@dataclass(frozen=True)
class About:
    """The brain's self-description, answered to ABOUT as `key="value"` pairs."""

    name: str = "saz"
    version: str = "unknown"
    author: str = "unknown"

    @classmethod
    def of_package(cls) -> About:
        """Version and author from the installed package's metadata."""
        from importlib import metadata

        try:
            meta = metadata.metadata("saz")
        except metadata.PackageNotFoundError:
            return cls()
        version, author = (meta.get_all(key) or ["unknown"] for key in ("Version", "Author"))
        return cls(version=version[0], author=author[0])

    def line(self) -> str:
        pairs = {"name": self.name, "version": self.version, "author": self.author}
        return ", ".join(f'{key}="{value.replace(chr(34), chr(39))}"'
                         for key, value in pairs.items())


@dataclass
class _Block:
    """A multi-line command (BOARD, SWAP2BOARD) being read: its lines of numbers until DONE,
    checked then (x,y,field for BOARD, x,y for SWAP2BOARD). A line that is no such list is kept
    as the block's `problem` and refused at DONE, so that the block still gets one answer."""

    command: str
    entries: list[tuple[int, ...]] = field(default_factory=list)
    #: What is wrong with the first bad line, if any.
    problem: str | None = None

    def add(self, line: str) -> None:
        if self.problem is not None:
            return
        if len(self.entries) >= MAX_BLOCK_LINES:
            self.problem = f"{self.command} has more than {MAX_BLOCK_LINES} lines"
            return
        try:
            self.entries.append(_numbers(line))
        except _NotNumbers as exc:
            self.problem = f"{self.command} line {_quote(line)} is not x,y" + (
                ",field" if self.command == "BOARD" else "") + exc.suffix


def _quote(text: str, limit: int = 40) -> str:
    """`text` for an error message: quoted (control characters escaped), and cut if long."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _echo(text: str, limit: int = 40) -> str:
    """`text` repeated in a message: as it is when short and printable, else as `_quote` shows
    it, so that no echo is longer than a line or carries a control character."""
    return text if len(text) <= limit and text.isprintable() else _quote(text, limit)


class _NotNumbers(ValueError):
    """Text that is not a list of whole numbers as a manager writes them; `why`, when it looks
    like one all the same (other digits, too many of them)."""

    def __init__(self, why: str = "") -> None:
        super().__init__(why)
        self.why = why

    @property
    def suffix(self) -> str:
        """": why" to append to a message, or nothing."""
        return f": {self.why}" if self.why else ""


def _numbers(text: str, digits: int = MAX_DIGITS) -> tuple[int, ...]:
    """The comma-separated whole numbers of `text` (spaces allowed around them); _NotNumbers if
    it is no such list, or one in other digits than ASCII's 0-9 (which int() would read), or
    with a number of more than `digits` digits (which int() might refuse, or take long over)."""
    text = text.strip()
    if not _ASCII_NUMBERS.fullmatch(text):
        if _NUMBERS.fullmatch(text) and not all(c.isascii() for c in text if c.isdecimal()):
            raise _NotNumbers("numbers are written with the ASCII digits 0-9 only")
        raise _NotNumbers()
    parts = text.split(",")
    if any(len(part.strip().lstrip("-")) > digits for part in parts):
        raise _NotNumbers(f"numbers have at most {digits} digits")
    return tuple(int(part) for part in parts)


def _whole(name: str, value: str, minimum: int | None = 0, digits: int = MAX_DIGITS) -> int:
    """`value` as one whole number, at least `minimum` (None: any); Refusal naming `name`."""
    try:
        numbers = _numbers(value, digits)
    except _NotNumbers as exc:
        raise Refusal(f"{name} must be a whole number, got {_quote(value)}{exc.suffix}") from None
    if len(numbers) != 1:
        raise Refusal(f"{name} must be a whole number, got {_quote(value)}")
    number = numbers[0]
    if minimum is not None and number < minimum:
        raise Refusal(f"{name} must be >= {minimum}, got {number}")
    return number


def _usable_threads(requested: int) -> int:
    """Threads to run with when the manager allows `requested`: no more than the cores this
    process may run on (thread_num is a ceiling, and threads beyond the cores only slow the
    network down)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(requested, cores or 1))


def search_message(result: SearchResult, point: Callable[[int], str], *,
                   flip: bool = False) -> str:
    """The MESSAGE text about one search, sent just before the answer it chose, for managers to
    show and log: root visits, depth (the principal variation's length), the winrate of the side
    to move in the searched position (the other side's with `flip`; "(proven)" when the rules
    or the threat search proved it), speed (new visits per second), time, and the principal
    variation as `x,y` points (its first `PV_SHOWN` moves)."""
    infos = [m for m in result.moves if m.move == result.best_move]
    pv = infos[0].pv if infos and infos[0].pv else (result.best_move,)
    stats = result.stats
    speed = stats.playouts / stats.seconds if stats.seconds > 0 else 0.0
    winrate = 50.0 * (1.0 + (-result.value if flip else result.value))
    proof = " (proven)" if result.proven else ""
    shown = " ".join(point(move) for move in pv[:PV_SHOWN]) + (" ..." if len(pv) > PV_SHOWN
                                                               else "")
    return (f"visits {result.root_visits} | depth {len(pv)} | winrate {winrate:.1f}%{proof} | "
            f"speed {speed:.0f} visits/s | time {stats.seconds:.2f}s | pv {shown}")


def process_start_time(now: Callable[[], float] = time.monotonic) -> float:
    """When this process was created, on the `now` clock.

    The Gomocup manager charges the match time from process creation, Python's own start-up
    included (tens of milliseconds before any module runs). Linux tells the process's age in
    /proc; elsewhere the time of this call stands in."""
    current = now()
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            # Field 22 (start time, in clock ticks since boot) counts from the last field after
            # the parenthesised command name, which may itself contain spaces.
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        since_boot = time.clock_gettime(time.CLOCK_BOOTTIME)
        age = since_boot - start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return current
    return current - max(0.0, age)


def _engine_refusals() -> tuple[type[Exception], ...]:
    """The exceptions by which the engine declines a request, answered with ERROR.

    ModelError lives in the evaluator, whose import (onnxruntime) would cost every start-up a
    tenth of a second; it can only be raised once the engine has imported it."""
    evaluator = sys.modules.get("saz.engine.evaluator")
    model_error: tuple[type[Exception], ...] = (evaluator.ModelError,) if evaluator else ()
    return (Refusal, GameError, TimeControlError, *model_error)


class GomocupBrain:
    """The protocol over an `Engine`: `handle` takes one input line and answers through `write`.

    One thread drives it (`serve`'s command loop, or a test directly); `notice` may be called
    from any other.
    """

    def __init__(self, engine: Engine, write: Callable[[str], None], *,
                 about: About | None = None) -> None:
        if engine.game.info.engine_protocol != PROTOCOL:
            raise ValueError(f"the Gomocup protocol plays gomoku, not {engine.game_name}")
        self.engine = engine
        self.about = about
        self._write = write
        self._started = False
        self._network_ready = False
        #: The visit cap of the command line, which INFO max_node overrides.
        self._default_visits = engine.config.visits
        self._block: _Block | None = None
        #: Problems with INFO commands, reported before the next answer.
        self._notes: list[str] = []
        self._finished = False
        #: END or STOP seen by the input thread and not yet handled: searches stop at once.
        self._end_noticed = threading.Event()
        self._stop_noticed = threading.Event()
        self._commands: dict[str, Callable[[str], None]] = {
            "START": self._start, "RECTSTART": self._rectstart, "RESTART": self._restart,
            "BEGIN": self._begin, "TURN": self._turn, "BOARD": self._board,
            "TAKEBACK": self._takeback, "PLAY": self._play, "SWAP2BOARD": self._swap2board,
            "INFO": self._info, "ABOUT": self._about, "END": self._end,
            "STOP": self._stop, "YXSTOP": self._stop, "DONE": self._done,
        }
        self._info_keys: dict[str, Callable[[str, str], None]] = {
            **{key: self._set_time for key in GOMOCUP_TIME_KEYS},
            "rule": self._set_rule, "max_node": self._set_max_node,
            "thread_num": self._set_threads, "max_memory": self._set_memory,
            # Acknowledged and not acted on: the search has no depth (max_depth), keeps no files
            # (folder), and prints no evaluations (evaluate, for debug builds only); game_type
            # changes nothing in our play.
            **{key: self._ignore for key in ("max_depth", "game_type", "folder", "evaluate")},
        }

    @property
    def finished(self) -> bool:
        """END has been handled: nothing more is read or answered."""
        return self._finished

    # -- input -------------------------------------------------------------------------------------
    def notice(self, line: str) -> None:
        """See a line the moment it arrives, before its turn comes (thread-safe; the input
        thread calls it). END and STOP stop the running search at once, and every search that
        starts before the command loop reaches them stops after its first batch: each command
        still gets its answer, in order, and END is obeyed within a fraction of a second."""
        words = line.split(None, 1)
        command = words[0].upper() if words else ""
        if command in ("END", "STOP", "YXSTOP"):
            (self._end_noticed if command == "END" else self._stop_noticed).set()
            self.engine.stop()

    def handle(self, line: str) -> None:
        """Act on one input line and write its answer, if it has one."""
        line = line.strip()
        if not line or self._finished:
            return
        self.engine.halt()  # a new command ends pondering
        if self._block is not None and self._extend_block(line):
            return
        word, *rest = line.split(None, 1)
        args = rest[0] if rest else ""
        command = word.upper()
        handler = self._commands.get(command)
        if handler is None:
            self._answer(f"UNKNOWN command {_quote(word)} is not supported")
        elif command in _NEED_BOARD and not self._started:
            self._answer(f"ERROR {command} before START: there is no board yet")
        else:
            self._run(handler, args.strip())

    def close(self) -> None:
        """Stop any background search (the process is about to exit)."""
        self.engine.halt()

    def _run(self, handler: Callable[[str], None], args: str) -> None:
        try:
            handler(args)
        except BrokenPipeError:
            raise
        except _engine_refusals() as exc:
            self._answer(f"ERROR {exc}")
        except Exception as exc:  # a bug: say so and keep serving the game
            log.exception("internal error")
            self._answer(f"ERROR internal error (details on stderr): {exc}")

    def _answer(self, line: str) -> None:
        for note in self._notes:
            self._write(f"MESSAGE {note}")
        self._notes.clear()
        self._write(line)

    # -- multi-line commands -----------------------------------------------------------------------
    def _extend_block(self, line: str) -> bool:
        """Take `line` into the open BOARD / SWAP2BOARD block; False when it is a command (the
        manager has given the block up: it is refused, and the command handled on its own).

        Any other line belongs to the block: a malformed one makes DONE refuse the whole block,
        so that the block gets exactly one answer, as the manager expects."""
        block = self._block
        assert block is not None
        if line.upper() == "DONE":
            self._block = None
            finish = self._finish_board if block.command == "BOARD" else self._finish_swap2
            self._run(lambda _: finish(block), "")
            return True
        if line.split(None, 1)[0].upper() not in self._commands:
            block.add(line)
            return True
        self._block = None
        self._answer(f"ERROR {block.command} interrupted by {_quote(line)} before DONE; "
                     "nothing changed")
        return False

    def _board(self, args: str) -> None:
        self._open_block("BOARD", args)

    def _swap2board(self, args: str) -> None:
        self._open_block("SWAP2BOARD", args)

    def _open_block(self, command: str, args: str) -> None:
        if args:
            raise Refusal(f"{command} takes no arguments, got {_quote(args)}")
        self._block = _Block(command)

    def _done(self, args: str) -> None:
        raise Refusal("DONE without a BOARD or SWAP2BOARD before it")

    # -- commands ----------------------------------------------------------------------------------
    def _start(self, args: str) -> None:
        size = _whole("START's board size", args, minimum=1) if args else None
        if size is None:
            raise Refusal("START needs the board size, e.g. START 15")
        self._new_board(size, size)

    def _rectstart(self, args: str) -> None:
        try:
            numbers = _numbers(args)
        except _NotNumbers as exc:
            numbers, why = (), exc.suffix
        else:
            why = ""
        if len(numbers) != 2:
            raise Refusal(f"RECTSTART needs width,height, e.g. RECTSTART 20,15; got "
                          f"{_quote(args)}{why}")
        self._new_board(*numbers)

    def _new_board(self, width: int, height: int) -> None:
        # The network first: a brain that cannot think must say so now, not on its first move.
        if not self._network_ready:
            self.engine.load_network()
            self._network_ready = True
        try:
            self.engine.new_game(width, height)
        except GameError as exc:
            raise Refusal(f"unsupported size: {exc}") from None
        self._started = True
        self._answer("OK")

    def _restart(self, args: str) -> None:
        self.engine.new_game()
        self._answer("OK")

    def _begin(self, args: str) -> None:
        stones = len(self.engine.game.moves)
        if stones:
            raise Refusal(f"BEGIN needs an empty board, this one has {stones} stones "
                          "(RESTART clears it)")
        self._reply_with_move(rollback=lambda: None)

    def _turn(self, args: str) -> None:
        self._play_move(self._point(args))
        self._reply_with_move(rollback=self.engine.undo)

    def _play(self, args: str) -> None:
        move = self._point(args)
        self._play_move(move)
        self._answer(self._format(move))

    def _takeback(self, args: str) -> None:
        move = self._point(args)
        moves = self.engine.game.moves
        if not moves:
            raise Refusal("TAKEBACK on an empty board")
        if moves[-1] != move:
            raise Refusal(f"TAKEBACK {self._format(move)}: the last move is "
                          f"{self._format(moves[-1])}, and only the last move can be taken back")
        self.engine.undo()
        self._answer("OK")

    def _about(self, args: str) -> None:
        if self.about is None:
            self.about = About.of_package()
        self._answer(self.about.line())

    def _end(self, args: str) -> None:
        self._finished = True

    def _stop(self, args: str) -> None:
        """STOP reaches the command loop after the searches it had to stop: it is done."""
        self._stop_noticed.clear()

    # -- positions ---------------------------------------------------------------------------------
    def _point(self, text: str, game: Game | None = None) -> int:
        """The move of an `x,y` argument on `game` (default: the current one)."""
        try:
            numbers = _numbers(text)
        except _NotNumbers as exc:
            raise Refusal(f"expected a point x,y, got {_quote(text)}{exc.suffix}") from None
        if len(numbers) != 2:
            raise Refusal(f"expected a point x,y, got {_quote(text)}")
        return self._point_at(*numbers, game=game)

    def _point_at(self, x: int, y: int, *, game: Game | None = None) -> int:
        game = game if game is not None else self.engine.game
        if not (0 <= x < game.width and 0 <= y < game.height):
            raise Refusal(f"{x},{y} is off the {game.width}x{game.height} board")
        return game.point(x, y)

    def _play_move(self, move: int) -> None:
        try:
            self.engine.play(move)
        except IllegalMoveError as exc:
            raise Refusal(f"{self._format(move)}: {exc.reason}") from None

    def _format(self, move: int) -> str:
        width = self.engine.game.width
        return f"{move % width},{move // width}"

    def _empty_game(self) -> Game:
        """A new game of the current size and rules."""
        game = self.engine.game
        return new_game(self.engine.game_name, game.width, game.height, **self.engine.rules)

    def _finish_board(self, block: _Block) -> None:
        """BOARD ... DONE: set up the position the lines describe, then answer our move.

        The lines give the moves in the order they were played (renju requires it; under Gomoku
        rules any order gives the same position). We are to move, so we are Black when both
        sides have as many stones, White when the opponent has one more."""
        if block.problem is not None:
            raise Refusal(block.problem)
        own: list[int] = []
        theirs: list[int] = []
        probe = self._empty_game()
        for entry in block.entries:
            if len(entry) != 3:
                raise Refusal(f"BOARD lines are x,y,field; got {','.join(map(str, entry))}")
            x, y, owner = entry
            point = self._point_at(x, y, game=probe)
            if owner == 3:
                raise Refusal(f"BOARD {x},{y},3: continuous-game stones (field 3) are not "
                              "supported")
            if owner not in (1, 2):
                raise Refusal(f"BOARD {x},{y},{owner}: the field must be 1 (own stone) or 2 "
                              "(opponent's)")
            (own if owner == 1 else theirs).append(point)
        if len(own) == len(theirs):
            black, white = own, theirs
        elif len(theirs) == len(own) + 1:
            black, white = theirs, own
        else:
            raise Refusal(f"a board with {len(own)} own and {len(theirs)} opponent stones is "
                          "not ours to move: we need as many stones as the opponent, or one "
                          "fewer")
        # Black and White alternate; Black has the last stone when it has one more.
        game = self._replay(probe, [m for pair in zip(black, white, strict=False) for m in pair]
                            + black[len(white):])
        previous = self.engine.game
        self.engine.replace_game(game)
        self._reply_with_move(rollback=lambda: self.engine.replace_game(previous))

    def _replay(self, game: Game, moves: list[int]) -> Game:
        """`game` after `moves`, which must all be legal in turn."""
        for i, move in enumerate(moves):
            try:
                game.play(move)
            except GameError:
                where = self._format(move)
                if game.is_over():
                    raise Refusal(f"the stones make a finished game before {where} "
                                  f"(stone {i + 1} of {len(moves)})") from None
                raise Refusal(f"{where} is given twice") from None
        return game

    # -- thinking ----------------------------------------------------------------------------------
    def _reply_with_move(self, rollback: Callable[[], None]) -> None:
        """Search the current position, play the best move and answer it. If there is nothing
        to search or the search fails, `rollback` undoes what the command did first."""
        game = self.engine.game
        if game.is_over():
            outcome = _outcome(game)
            rollback()
            raise Refusal(f"the game is over ({outcome}): there is no move to make")
        try:
            result = self._think(play=True)
        except BaseException:
            rollback()
            raise
        self._report(result)
        self._answer(self._format(result.best_move))

    def _think(self, *, play: bool = False,
               allowed: Collection[int] | None = None) -> SearchResult:
        """Search the position, among the `allowed` moves if given; with `play`, play the move
        found (and ponder: `genmove`)."""
        hurried = self._end_noticed.is_set() or self._stop_noticed.is_set()
        search = self.engine.genmove if play else self.engine.think
        return search(on_progress=self._watch,
                      progress_interval=0.0 if hurried else WATCH_INTERVAL, allowed=allowed)

    def _watch(self, _: SearchResult) -> None:
        if self._end_noticed.is_set() or self._stop_noticed.is_set():
            self.engine.stop()

    def _report(self, result: SearchResult, *, flip: bool = False) -> None:
        """Send the MESSAGE about `result` with the next answer (the one that uses it)."""
        self._notes.append(search_message(result, self._format, flip=flip))

    def _finish_swap2(self, block: _Block) -> None:
        """SWAP2BOARD ... DONE, the swap2 opening.

        With no stones we open: three stones (black, white, black) chosen to leave the position
        as balanced as our search can judge, since the opponent then picks the colour. With 3
        or 5 stones (White to move) we pick: `SWAP` (take Black) when the search finds White
        worse, else White's best move. We never use the option of placing two more stones."""
        if block.problem is not None:
            raise Refusal(block.problem)
        entries = block.entries
        if any(len(entry) != 2 for entry in entries):
            raise Refusal("SWAP2BOARD lines are x,y")
        if len(entries) not in _SWAP2_COUNTS:
            raise Refusal(f"SWAP2BOARD comes with 0, 3 or 5 stones, got {len(entries)}")
        probe = self._empty_game()
        game = self._replay(probe, [self._point_at(x, y, game=probe) for x, y in entries])
        previous = self.engine.game
        self.engine.replace_game(game)
        try:
            answer = self._choose_swap2() if entries else self._open_swap2()
        except BaseException:
            self.engine.replace_game(previous)
            raise
        self._answer(answer)

    def _open_swap2(self) -> str:
        game = self.engine.game
        cx, cy = game.width // 2, game.height // 2
        opening = [game.point(cx, cy), game.point(cx + 1, cy + 1)]
        for move in opening:
            self.engine.play(move)
        # The third stone: of the points near the centre, the one after which Black's chances
        # are nearest to even, among the moves the search looked at closely.
        near = [game.point(x, y) for y in range(cy - 2, cy + 3) for x in range(cx - 2, cx + 3)
                if 0 <= x < game.width and 0 <= y < game.height]
        result = self._think(allowed=[p for p in near if game.is_legal(p)])
        self._report(result)
        most = max((m.visits for m in result.moves), default=0)
        closely = [m for m in result.moves if m.visits * 10 >= most]
        third = min(closely, key=lambda m: (abs(m.value), -m.visits)).move if closely \
            else result.best_move
        self.engine.play(third)
        return " ".join(self._format(m) for m in (*opening, third))

    def _choose_swap2(self) -> str:
        result = self._think()
        swap = result.value < 0
        self._report(result, flip=swap)  # after SWAP we play the side that did not move
        if swap:
            return "SWAP"
        self.engine.play(result.best_move)
        return self._format(result.best_move)

    # -- INFO --------------------------------------------------------------------------------------
    def _info(self, args: str) -> None:
        """INFO key value: time limits, the rule, search caps; unknown keys are ignored, as the
        protocol asks. Never answered: problems become notes for the next answer."""
        key, *rest = args.split(None, 1) or [""]
        key, value = key.lower(), rest[0].strip() if rest else ""
        setter = self._info_keys.get(key)
        if setter is None:
            if not key:
                self._notes.append("INFO needs a key and a value")
            return
        try:
            setter(key, value)
        except _engine_refusals() as exc:
            self._notes.append(f"{f'INFO {key} {_echo(value)}'.rstrip()}: {exc}")

    def _set_time(self, key: str, value: str) -> None:
        # Read here, where a number's digits are bounded, and handed on as the clock reads it.
        milliseconds = _whole(key, value, minimum=None, digits=MAX_INFO_DIGITS)
        self.engine.clock.update_gomocup(key, str(milliseconds))

    def _set_rule(self, key: str, value: str) -> None:
        flags = _whole("the rule", value)
        current = self.engine.game.rules_text
        unsupported = [name for bit, name in _RULE_BITS.items() if flags & bit and
                       bit not in (EXACT_FIVE_BIT, RENJU_BIT)]
        if flags >= 2 * max(_RULE_BITS):
            unsupported.append(f"bits above {max(_RULE_BITS)}")
        if unsupported:
            raise Refusal(f"{' and '.join(unsupported)} not supported; the rule stays "
                          f"{current}")
        # Renju (4, which managers also send with the exact-five bit as 5) makes Black's five
        # exact by itself.
        rule = ("renju" if flags & RENJU_BIT else
                "exact-five" if flags & EXACT_FIVE_BIT else "freestyle")
        if rule != current:
            self.engine.set_rules(rule=rule)

    def _set_max_node(self, key: str, value: str) -> None:
        """A cap on each search's visits; 0, negative or the largest values mean none (Yixin
        sends the largest unsigned 64-bit number for that)."""
        nodes = _whole(key, value, minimum=None, digits=MAX_INFO_DIGITS)
        visits = nodes if 0 < nodes < 2 ** 63 - 1 else self._default_visits
        self.engine.config = replace(self.engine.config, visits=visits)

    def _set_threads(self, key: str, value: str) -> None:
        """The most threads we may use: the network runs with as many (no more than the cores),
        from the next search on; a network loaded already reopens with them now (managers send
        INFO after START, between moves)."""
        threads = _whole(key, value, minimum=1, digits=MAX_INFO_DIGITS)
        self.engine.set_threads(_usable_threads(threads))

    def _set_memory(self, key: str, value: str) -> None:
        """The most memory the process may use, in bytes; 0 means no limit. The engine caps each
        search's tree to stay under it (`Engine.set_memory_limit`)."""
        limit = _whole(key, value, minimum=0, digits=MAX_INFO_DIGITS)
        self.engine.set_memory_limit(limit or None)

    def _ignore(self, key: str, value: str) -> None:
        pass


def _outcome(game: Game) -> str:
    winner = game.winner()
    if winner is None:
        raise ValueError("the game is not over")
    return "a draw" if winner == DRAW else f"{COLOR_NAMES[winner]} has won"


# -- the process -----------------------------------------------------------------------------------
def serve(brain: GomocupBrain, lines: Iterable[str]) -> int:
    """Run `brain` on `lines` (an input stream, say) until END or their end; returns 0.

    A thread takes the lines as they come, so that END and STOP reach a running search
    (`GomocupBrain.notice`); the calling thread handles them in order. Each line carries the
    time it arrived: a turn is timed from then, as the manager times it, and the time from then
    to the answer teaches the clock the latency it must allow for (`TimeManager.replied`)."""
    clock = brain.engine.clock
    try:
        for line, arrived in arrivals(lines, name="gomocup-input", notice=brain.notice,
                                      finished=lambda: brain.finished):
            clock.command_received(arrived)
            brain.handle(line)
            clock.replied(time.monotonic())
    except BrokenPipeError:  # the manager has gone: nobody is left to answer
        pass
    finally:
        brain.close()
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pbrain-saz", description="The saz engine as a Gomocup (Piskvork) brain: the "
        "protocol on stdin and stdout, logs on stderr.")
    add_engine_arguments(p, help={
        "model": "the Gomoku network (default: the shipped models/gomoku.onnx)",
        "player": "answer with a reference player instead of the network (random; greedy: win, "
                  "else block, else the longest line); no model needed",
        "visits": "a cap on each move's visits (default: the clock decides)",
        "threads": "onnxruntime threads (INFO thread_num, whenever it comes, overrides it)",
        "ponder": "think on the opponent's time (Gomocup tournaments forbid it)"})
    add_search_arguments(p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    started_at = process_start_time()
    parser = _parser()
    args = parser.parse_args(argv)
    config = engine_config(parser, args, game=Gomoku.name)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="pbrain-saz: %(levelname)s: %(message)s")
    replies = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", errors="replace")
    # Only protocol lines may reach the manager: anything printed by mistake goes to stderr.
    sys.stdout = sys.stderr

    def write(line: str) -> None:
        replies.write(line + "\n")
        replies.flush()

    engine = Engine(config, clock=TimeManager(Gomocup(), started_at=started_at))
    status = serve(GomocupBrain(engine, write), fd_lines(sys.stdin.fileno()))
    try:
        replies.flush()
    except BrokenPipeError:
        # Keep the interpreter's own flush at exit from failing on the closed pipe again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), replies.fileno())
    return status


if __name__ == "__main__":
    sys.exit(main())
