"""`saz nboard`: the engine over the NBoard protocol, version 2, for NBoard (Chris Welty's
Othello GUI) and for whatever drives NTest and Edax the same way.

The protocol is the one NTest's `instructions/Protocol.htm` describes. NBoard writes one command
per line on stdin; the engine answers on stdout:

    nboard 2                    set myname saz (the network loads now; a failure is a status)
    set game GGF                the position at the end of that GGF game (its TI clock too)
    set depth N                 the search budget of hint, go and analyze (DEPTH below)
    set contempt N              kept; the search values a draw as 0 whatever it says
    move F5[/eval[/time]]       the move is played (PA: a pass); eval and time may be blank
    hint N                      the N best moves, while the search runs and at its end:
                                  search PV EVAL 0 DEPTH TEXT
    go                          the move saz would play, after the same search lines:
                                  === F5/EVAL/TIME    (the board is not changed: a move comes)
    ping N                      any search stops first, then pong N
    learn                       learned (there is no book to add the game to)
    analyze                     analysis MOVES EVAL for every position of the game, last first
    quit                        exit (a search running then stops at once)

**Evaluations** are in discs, from the side to move's view (NBoard's convention): for a move,
the disc margin its side expects after it. Where the endgame solver settled a move exactly, it
is the exact final margin and the line's depth is `100%`; where it proved only the result
(win, draw or loss), the margin keeps the proven sign (at least one disc for a win) and the
depth is `100%W`. Otherwise the margin is the network's score head averaged along the move's
principal variation (`Engine.estimate`), or, for a network without one, the value v in
[-1, 1] mapped as `points / 8 * atanh(v)` (8x8: v = 0.5 is 4.4 discs), within the board.
Every hint line of one batch has the same depth (NBoard greys out the hints of another
depth): `100%` when all of them are exact, `100%W` when all are proven, else the length of
the best move's principal variation in plies.

**DEPTH.** `set depth N` gives each search `visits(N) = round(100 * 2 ** (N / 2))` root visits
(depth 1: 141, 4: 400, 8: 1,600, 12: 6,400, 16: 25,600, 20: 102,400), the depth clamped to
1..40: doubling every two plies, as an alpha-beta search's cost grows with its depth. Until
NBoard sends one, the depth is `DEFAULT_DEPTH` (12). `--visits` replaces the mapping with a
fixed count. `hint` and `analyze` are limited by the visits alone; `go` also by the clock of
the game NBoard sent (GGF `TI`, `TB`, `TW`: the time left after the seconds each of our
moves took, `move`'s time included, shared over the moves still to play by the engine's time
policy), else by `--time-per-move` if given. The endgame solver is part of the search.

**Status and node counts.** A search says `status saz is thinking` (go) or `status saz is
analysing` (hint, analyze) when it starts and `status` when it is done, and `nodestats NODES
SECONDS` (the search's visits, its time) after each one.

**Bad input.** A line that cannot be honoured (an unknown command, a malformed number, a GGF
record that does not parse or replay, an illegal move) is answered `status` with what is wrong,
and nothing changes: the position and the settings stay as they were. Only protocol lines go to
stdout; logs go to stderr.

**Threads.** A thread reads stdin; the main thread handles the lines in order, searches
included. A command line that arrives while a search runs (ping, quit, a new position, a new
request) stops it: the search answers with what it has (its last hint lines, or its `===`),
then the command is handled, so `pong` always comes after the search it stopped. NBoard
ignores what answers an older ping.

`saz gtp` hands its session to this loop when its first line is `nboard N` (`handoff`).
"""
from __future__ import annotations

import argparse
import io
import logging
import math
import os
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TextIO

from saz.engine.engine import Engine, EngineConfig
from saz.engine.games import GameError, IllegalMoveError
from saz.engine.games.othello import Othello
from saz.engine.search.clock import (
    Absolute,
    FixedTimePerMove,
    NoTimeLimit,
    TimeControl,
    TimeControlError,
)
from saz.engine.search.mcts import MoveInfo, SearchResult
from saz.engine.search.options import add_search_arguments
from saz.protocol.engine_options import add_engine_arguments, engine_config
from saz.protocol.ggf import (
    GgfError,
    GgfGame,
    GgfMove,
    clock_seconds,
    from_game,
    move_text,
    parse_clock,
    parse_ggf,
    to_game,
)
from saz.protocol.input_lines import arrivals, fd_lines
from saz.protocol.vertex import GtpValueError, TopLeftVertices

log = logging.getLogger("saz.nboard")

#: The protocol version spoken.
PROTOCOL_VERSION = 2
#: The name NBoard shows (`set myname`: one word).
NAME = "saz"
#: The depth before NBoard sets one (NTest's default too).
DEFAULT_DEPTH = 12
#: Depths beyond this count as this (visits(40) is about 10^8).
MAX_DEPTH = 40
#: visits(N) = BASE_VISITS * 2 ** (N / 2).
BASE_VISITS = 100
#: How often a search looks whether a command has arrived (seconds).
WATCH_INTERVAL = 0.1
#: Hint lines go out when the depth changes, at most this often, and at least every
#: `HINT_EVERY` seconds while the search runs.
HINT_MIN_INTERVAL = 0.25
HINT_EVERY = 1.0
#: The longest number a command may carry (NBoard's ints are 32-bit).
MAX_DIGITS = 10
#: Status messages that repeat input show at most this much of it.
ECHO = 40
#: The commands; a line starting with one stops a running search.
COMMANDS = ("nboard", "set", "move", "hint", "go", "ping", "learn", "analyze", "quit")


class NBoardError(Exception):
    """A line that cannot be honoured: answered with a `status` saying why, nothing changed."""


def depth_visits(depth: int) -> int:
    """The root visits of a search at NBoard depth `depth` (module docstring: DEPTH)."""
    clamped = min(max(depth, 1), MAX_DEPTH)
    return round(BASE_VISITS * 2 ** (clamped / 2))


def is_hello(line: str) -> bool:
    """Whether `line` is NBoard's first command, `nboard N` (what `saz gtp` looks for)."""
    return line.split()[:1] == ["nboard"]


def interrupts(line: str) -> bool:
    """Whether `line` is a command, which stops a running search."""
    words = line.split(None, 1)
    return bool(words) and words[0].lower() in COMMANDS


def _quote(text: str, limit: int = ECHO) -> str:
    """`text` for a status message: quoted with control characters escaped, cut if long."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _whole(name: str, text: str, minimum: int | None = None) -> int:
    """`text` as one whole number of ASCII digits (a sign allowed), at least `minimum`."""
    word = text.strip()
    digits = word[1:] if word.startswith(("+", "-")) else word
    if not digits or not (digits.isascii() and digits.isdigit()):
        raise NBoardError(f"{name} must be a whole number, got {_quote(word)}")
    if len(digits) > MAX_DIGITS:
        raise NBoardError(f"{name} must have at most {MAX_DIGITS} digits, got {_quote(word)}")
    number = int(word)
    if minimum is not None and number < minimum:
        raise NBoardError(f"{name} must be at least {minimum}, got {number}")
    return number


def _number(name: str, text: str) -> float | None:
    """A decimal number (blank: None) as a move's eval or time; NBoardError otherwise."""
    word = text.strip()
    if not word:
        return None
    try:
        value = float(word)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not word.isascii() or "_" in word:
        raise NBoardError(f"{name} must be a number, got {_quote(word)}")
    return value


def value_discs(value: float, num_points: int) -> float:
    """A search value in [-1, 1] as a disc margin: `num_points / 8 * atanh(v)`, within
    +-num_points (the mapping for a network without a score head)."""
    v = min(0.999999, max(-0.999999, value))
    return max(-num_points, min(num_points, num_points / 8 * math.atanh(v)))


def _eval_text(value: float) -> str:
    """An eval as NBoard reads it: a decimal without an exponent, two places."""
    text = f"{value:.2f}"
    return "0.00" if text == "-0.00" else text


@dataclass(frozen=True)
class HintLine:
    """One root move as a hint: its eval (discs, the root's side to move's view) and whether
    the solver settled it exactly or proved its result."""

    info: MoveInfo
    eval: float
    exact: bool
    proven: bool


def move_hints(result: SearchResult, shown: Sequence[MoveInfo],
                leads: dict[int, float], num_points: int) -> list[HintLine]:
    """The hint of each of `shown` (module docstring: Evaluations)."""
    lines = []
    for info in shown:
        lead = leads.get(info.move)
        if info.exact_score is not None:
            lines.append(HintLine(info, float(info.exact_score), True, True))
            continue
        if info.proven:
            sign = round(info.value)
            margin = 0.0 if sign == 0 else sign * max(sign * lead if lead is not None else 1.0,
                                                      1.0)
            lines.append(HintLine(info, margin, False, True))
            continue
        margin = lead if lead is not None else value_discs(info.value, num_points)
        lines.append(HintLine(info, margin, False, False))
    return lines


def batch_depth(lines: Sequence[HintLine]) -> str:
    """The depth of one batch of hint lines (module docstring: Evaluations)."""
    if lines and all(line.exact for line in lines):
        return "100%"
    if lines and all(line.proven for line in lines):
        return "100%W"
    return str(max(1, len(lines[0].info.pv))) if lines else "1"


class NBoardSession:
    """The protocol over an `Engine`: `handle` takes one input line and answers through `write`
    (one line each). One thread drives `handle`; `notice` and `dequeued` tell it, from the
    input thread, which command lines wait behind the one in progress."""

    def __init__(self, engine: Engine, write: Callable[[str], None]) -> None:
        if not isinstance(engine.game, Othello):
            raise ValueError(f"NBoard plays Othello, not {engine.game_name}")
        self.engine = engine
        self._write = write
        self.depth = DEFAULT_DEPTH
        self.contempt = 0
        self.version: int | None = None
        self.finished = False
        #: The game as NBoard described it (`set game`), with the moves played since: its
        #: clock tags and per-move times give the time left.
        self.record: GgfGame = from_game(self._othello())
        #: The visits of the command line (`--visits`), which replace the depth mapping.
        self._fixed_visits = engine.config.visits
        #: Command lines queued behind the one in progress (the input thread counts them).
        self._waiting = 0
        self._waiting_lock = threading.Lock()
        self._network_ready = False
        self._commands: dict[str, Callable[[str, float], None]] = {
            "nboard": self._nboard, "set": self._set, "move": self._move, "hint": self._hint,
            "go": self._go, "ping": self._ping, "learn": self._learn, "analyze": self._analyze,
            "quit": self._quit}

    # -- input --------------------------------------------------------------------------------
    def notice(self, line: str) -> None:
        """The input thread saw `line` (thread-safe): a command stops the running search now,
        and any search that starts before the line is handled stops at once."""
        if interrupts(line):
            with self._waiting_lock:
                self._waiting += 1
            self.engine.stop()

    def dequeued(self, line: str) -> None:
        """`line`, which `notice` saw, is about to be handled."""
        if interrupts(line):
            with self._waiting_lock:
                self._waiting = max(0, self._waiting - 1)

    @property
    def interrupted(self) -> bool:
        """A command waits behind the one in progress: a search should end."""
        with self._waiting_lock:
            return self._waiting > 0

    def handle(self, line: str, arrived: float | None = None) -> None:
        """Act on one input line (which arrived at `arrived`, time.monotonic; default: now)."""
        if self.finished:
            return
        arrived = time.monotonic() if arrived is None else arrived
        text = line.strip()
        if not text:
            return
        word, *rest = text.split(None, 1)
        handler = self._commands.get(word.lower())
        if handler is None:
            self.status(f"unknown command {_quote(word)} ignored")
            return
        try:
            handler(rest[0] if rest else "", arrived)
        except BrokenPipeError:
            raise
        except _refusals() as exc:
            self.status(f"{word.lower()}: {exc}")
        except Exception as exc:  # a bug must not end the session: say so and go on
            log.exception("%s failed", word)
            self.status(f"{word.lower()}: internal error (details on stderr): {exc}")

    def close(self) -> None:
        """Stop whatever runs (the session is over)."""
        self.engine.halt()

    # -- output -------------------------------------------------------------------------------
    def write(self, line: str) -> None:
        self._write(line)

    def status(self, text: str) -> None:
        """`status TEXT`, on one line whatever the text holds."""
        clean = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
        self.write(f"status {clean}".rstrip())

    # -- commands -----------------------------------------------------------------------------
    def _nboard(self, args: str, arrived: float) -> None:
        version = _whole("the protocol version", args or "")
        self.version = version
        self.write(f"set myname {NAME}")
        if version != PROTOCOL_VERSION:
            self.status(f"saz speaks NBoard protocol version {PROTOCOL_VERSION}, "
                        f"not {version}; going on with it")
            self._load_network()
        elif self._load_network():
            self.status("")  # NBoard shows "Loading ENGINE" until a status clears it

    def _load_network(self) -> bool:
        """Load the network now, untimed; a failure is a status (the next search says it
        again), not the end of the session. Whether it is loaded."""
        if self._network_ready:
            return True
        try:
            self.engine.load_network()
        except _refusals() as exc:
            self.status(f"the network cannot load: {exc}")
            return False
        self._network_ready = True
        return True

    def _set(self, args: str, arrived: float) -> None:
        name, *rest = args.split(None, 1) or [""]
        value = rest[0] if rest else ""
        if name == "game":
            self._set_game(value)
        elif name == "depth":
            self.depth = _whole("the depth", value, minimum=1)
        elif name == "contempt":
            self.contempt = _whole("the contempt", value)
        elif not name:
            raise NBoardError("a variable is missing: game, depth or contempt")
        else:
            raise NBoardError(f"unknown variable {_quote(name)} ignored (saz knows game, "
                              "depth, contempt)")

    def _set_game(self, text: str) -> None:
        if not text.strip():
            raise NBoardError("set game needs a GGF game: (;GM[Othello]...;)")
        record = parse_ggf(text)
        game = to_game(record)  # GgfError before anything changes
        _ = self._time_left(record, game.to_move)  # a malformed clock is refused here too
        self.engine.replace_game(game)
        self.record = record

    def _move(self, args: str, arrived: float) -> None:
        parts = args.strip().split("/")
        if not parts[0] or len(parts) > 3 or " " in args.strip():
            raise NBoardError(f"expected move F5[/eval[/time]], got {_quote(args.strip())}")
        game = self._othello()
        point = self._point(parts[0], game)
        evaluation = _number("the eval", parts[1]) if len(parts) > 1 else None
        seconds = _number("the time", parts[2]) if len(parts) > 2 else None
        if seconds is not None and seconds < 0:
            raise NBoardError(f"the time must not be negative, got {parts[2].strip()}")
        mover = game.to_move
        try:
            self.engine.play(point)
        except IllegalMoveError as exc:
            raise NBoardError(f"{move_text(game.width, point)} is illegal: {exc.reason}") \
                from None
        record = self.record
        self.record = replace(record,
                              moves=(*record.moves, GgfMove(move_text(game.width, point),
                                                            evaluation, seconds)),
                              colors=(*record.colors, mover))

    def _point(self, text: str, game: Othello) -> int:
        word = text.strip().upper()
        if word in ("PA", "PASS"):
            return game.pass_move
        try:
            return TopLeftVertices(game.width, game.height).parse(word)
        except GtpValueError:
            raise NBoardError(f"{_quote(text.strip())} is not a square of the "
                              f"{game.width}x{game.height} board (nor PA, the pass)") from None

    def _ping(self, args: str, arrived: float) -> None:
        # Searches run on this thread: by now the one this ping stopped has answered.
        self.write(f"pong {_whole('ping', args or '')}")

    def _learn(self, args: str, arrived: float) -> None:
        self.write("learned")

    def _quit(self, args: str, arrived: float) -> None:
        self.finished = True

    def _hint(self, args: str, arrived: float) -> None:
        count = _whole("hint's move count", args or "", minimum=1)
        self._need_moves()
        self.status("saz is analysing")
        try:
            result = self._search(arrived, hints=count, timed=False)
        finally:
            self.status("")
        self._nodestats(result)

    def _go(self, args: str, arrived: float) -> None:
        self._need_moves()
        game = self._othello()
        self.status("saz is thinking")
        try:
            result = self._search(arrived, hints=1, timed=True)
        finally:
            self.status("")
        self._nodestats(result)
        best = self._hint_lines(game, result, 1)
        # A search the clock cut before its first visit still has the root's value to give.
        evaluation = _eval_text(best[0].eval if best else value_discs(result.value,
                                                                      game.num_points))
        spent = max(0.0, time.monotonic() - arrived)
        self.write(f"=== {move_text(game.width, result.best_move)}/{evaluation}/{spent:.2f}")
        self.engine.clock.replied(time.monotonic())

    def _analyze(self, args: str, arrived: float) -> None:
        """`analysis MOVES EVAL` for each position of the game, the last first (a retrograde
        analysis), each searched within the depth's visits; a command that arrives stops it
        (the positions not reached are not answered)."""
        engine = self.engine
        current = self._othello()
        self.status("saz is analysing the game")
        try:
            for moves_made in range(len(current.moves), -1, -1):
                if self.interrupted:
                    break
                position = current.copy()
                for _ in range(len(current.moves) - moves_made):
                    position.undo()
                if position.is_over():
                    margin = position.score() * position.to_move
                    self.write(f"analysis {moves_made} {_eval_text(margin)}")
                    continue
                engine.replace_game(position)
                result = self._search(arrived, hints=0, timed=False)
                lines = self._hint_lines(position, result, 1)
                if lines and not self.interrupted:
                    self.write(f"analysis {moves_made} {_eval_text(lines[0].eval)}")
        finally:
            engine.replace_game(current)
            self.status("")

    # -- searching ----------------------------------------------------------------------------
    def _need_moves(self) -> None:
        game = self._othello()
        if game.is_over():
            black, white = game.disc_count()
            raise NBoardError(f"the game is over ({black}-{white}): there is no move to "
                              "search")

    def _search(self, arrived: float, *, hints: int, timed: bool) -> SearchResult:
        """Search the current position within the depth's visits (and, when `timed`, the
        clock), sending `hints` hint lines per batch while it runs and at its end."""
        engine = self.engine
        game = self._othello().copy()
        visits = self._fixed_visits or depth_visits(self.depth)
        engine.config = replace(engine.config, visits=visits)
        engine.clock.set_control(self._control(game.to_move) if timed else NoTimeLimit())
        engine.clock.command_received(arrived)
        sent: list[str] = []
        sent_at = time.monotonic()
        sent_depth = ""

        def emit(result: SearchResult) -> None:
            nonlocal sent_at, sent_depth
            lines = self._hint_lines(game, result, hints)
            if not lines:
                return
            depth = batch_depth(lines)
            text = [self._search_line(line, depth) for line in lines]
            if text != sent:
                for line in text:
                    self.write(line)
                sent[:] = text
            sent_at, sent_depth = time.monotonic(), depth

        def watch(result: SearchResult) -> None:
            if self.interrupted:
                engine.stop()
                return
            if hints <= 0:
                return
            since = time.monotonic() - sent_at
            best = next((m for m in result.moves if m.move == result.best_move), None)
            depth = str(len(best.pv)) if best is not None else ""
            if since >= HINT_EVERY or (since >= HINT_MIN_INTERVAL and depth != sent_depth):
                emit(result)

        result = engine.think(on_progress=watch,
                              progress_interval=0.0 if self.interrupted else WATCH_INTERVAL)
        if hints > 0:
            emit(result)
        return result

    def _control(self, color: int) -> TimeControl:
        """`go`'s clock: the time left on `color`'s GGF clock, else --time-per-move."""
        left = self._time_left(self.record, color)
        if left is not None:
            return Absolute(left)
        if self.engine.config.time_per_move is not None:
            return FixedTimePerMove(self.engine.config.time_per_move)
        return NoTimeLimit()

    @staticmethod
    def _time_left(record: GgfGame, color: int) -> float | None:
        """The seconds left on `color`'s clock in `record`; None when it keeps none (no TI, or
        a clock of no time and no increment: NBoard's untimed games)."""
        text = record.tags.get("TB" if color > 0 else "TW", record.tags.get("TI"))
        if text is None or not text.strip():
            return None
        clock = parse_clock(text)
        if clock.seconds <= 0 and clock.increment <= 0:
            return None
        return clock_seconds(record, color)

    def _hint_lines(self, game: Othello, result: SearchResult, count: int) -> list[HintLine]:
        """The first `count` visited root moves of `result` (at least the best one) with
        their evals; `game` is the position searched."""
        count = max(1, count)
        shown = [m for m in result.moves if m.visits > 0][:count]
        if not shown:
            shown = [m for m in result.moves if m.move == result.best_move][:1]
        if not shown:
            return []
        estimate = self.engine.estimate(game, result, count) if shown[0].visits > 0 else None
        leads = dict(estimate.score_leads) if estimate is not None else {}
        return move_hints(result, shown, leads, game.num_points)

    def _search_line(self, line: HintLine, depth: str) -> str:
        game = self._othello()
        pv = "-".join(move_text(game.width, move) for move in (line.info.pv or
                                                               (line.info.move,)))
        visits = line.info.visits
        return (f"search {pv} {_eval_text(line.eval)} 0 {depth} "
                f"{visits} visit{'' if visits == 1 else 's'}")

    def _nodestats(self, result: SearchResult) -> None:
        nodes = max(0, result.stats.playouts)  # this search's own, not the reused tree's
        self.write(f"nodestats {nodes} {max(0.0, result.stats.seconds):.2f}")

    def _othello(self) -> Othello:
        game = self.engine.game
        assert isinstance(game, Othello), "the session plays Othello only"
        return game


def _refusals() -> tuple[type[Exception], ...]:
    """The exceptions by which a request is declined (a status line, nothing changed).

    ModelError lives in the evaluator, whose import (onnxruntime) would slow every start; it
    can only be raised once the engine has imported it."""
    evaluator = sys.modules.get("saz.engine.evaluator")
    model_error: tuple[type[Exception], ...] = (evaluator.ModelError,) if evaluator else ()
    return (NBoardError, GgfError, GameError, TimeControlError, *model_error)


# -- the process -----------------------------------------------------------------------------------
def serve(session: NBoardSession, lines: Iterable[str]) -> int:
    """Run `session` on `lines` until `quit` or their end; 0.

    A thread takes the lines as they come (each with the time it arrived), so that a command
    stops a running search (`NBoardSession.notice`); this thread handles them in order."""
    try:
        for line, arrived in arrivals(lines, name="saz-nboard-input", notice=session.notice,
                                      finished=lambda: session.finished):
            session.dequeued(line)
            session.handle(line, arrived)
    except BrokenPipeError:  # NBoard has gone: nobody is left to answer
        pass
    finally:
        session.close()
    return 0


def make_engine(config: EngineConfig) -> Engine:
    """The engine of an NBoard session: Othello on 8x8 (a GGF game may set another size).
    A model configured for another game is not Othello's: the shipped model loads instead."""
    model = config.model if config.game == Othello.name else None
    return Engine(replace(config, game=Othello.name, model=model, rules={}, ponder=False))


def _writer(stdout: TextIO | None) -> tuple[Callable[[str], None], Callable[[], None]]:
    """A line writer on `stdout` (default: the process's, LF line ends) and its final flush.
    Without `stdout`, anything printed by mistake goes to stderr from then on."""
    if stdout is None:
        replies: TextIO = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8",
                                           errors="replace", newline="\n")
        sys.stdout = sys.stderr
    else:
        replies = stdout
    lock = threading.Lock()

    def write(line: str) -> None:
        with lock:
            replies.write(line + "\n")
            replies.flush()

    def finish() -> None:
        try:
            replies.flush()
        except BrokenPipeError:
            if stdout is None:  # keep the interpreter's own flush at exit from failing again
                os.dup2(os.open(os.devnull, os.O_WRONLY), replies.fileno())

    return write, finish


def handoff(config: EngineConfig, first: str, lines: Iterable[str],
            stdout: TextIO | None = None) -> int:
    """Serve an NBoard session whose first line `first` (`nboard N`) another front-end read
    (`saz gtp`), the rest of its input being `lines`; the exit status."""
    write, finish = _writer(stdout)
    session = NBoardSession(make_engine(config), write)

    def rest() -> Iterable[str]:
        yield first
        yield from lines

    status = serve(session, rest())
    finish()
    return status


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="saz nboard",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.fill(
            "Play Othello over the NBoard protocol (version 2), for the NBoard GUI and tools "
            "that drive NTest or Edax: the protocol on stdin and stdout, logs on stderr. In "
            "NBoard, add an engine whose command is `saz nboard`.", width=78),
        epilog=textwrap.fill(
            "depth: NBoard's `set depth N` gives each search round(100 * 2^(N/2)) visits "
            "(1: 141, 4: 400, 8: 1600, 12: 6400, 16: 25600, 20: 102400; depths clamped to "
            f"1..{MAX_DEPTH}; {DEFAULT_DEPTH} until NBoard sets one). hint and analyze are "
            "limited by the visits, go also by the game's GGF clock (TI) less the time "
            "already used. Evals are in discs for the side to move; 100%W / 100% mark "
            "results the endgame solver proved / solved exactly.", width=78))
    add_engine_arguments(parser, time_per_move=True, help={
        "model": "the Othello network (default: the shipped models/othello.onnx)",
        "visits": "visits per search, in place of the depth mapping",
        "time_per_move": "seconds per go when the game NBoard sends has no clock",
        "ponder": "unused: NBoard asks for no pondering"})
    parser.add_argument("--seed", type=int, metavar="N",
                        help="seed the search's and the reference players' random choices")
    parser.add_argument("--verbose", action="store_true", help="log to stderr")
    add_search_arguments(parser)
    return parser


def main(argv: Sequence[str] | None = None, *, stdin: Iterable[str] | None = None,
         stdout: TextIO | None = None) -> int:
    """`saz nboard ARGS`; the exit status. `stdin` and `stdout` replace the process's streams
    (tests run sessions in memory)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, format="saz nboard: %(levelname)s: %(message)s",
                        level=logging.INFO if args.verbose else logging.WARNING)
    config = engine_config(parser, args, game=Othello.name, seed=args.seed)
    write, finish = _writer(stdout)
    session = NBoardSession(make_engine(config), write)
    lines = stdin if stdin is not None else fd_lines(sys.stdin.fileno())
    try:
        status = serve(session, lines)
    except KeyboardInterrupt:
        return 130
    finish()
    return status


if __name__ == "__main__":
    sys.exit(main())
