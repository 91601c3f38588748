"""A client for NBoard-protocol Othello engines (NTest, Edax): start one, give it a game, time
its `go`, end it.

    with NBoardClient(["ntest", "n"]) as engine:
        engine.start(timeout=10.0)                   # nboard 2, then ping ... pong
        engine.set_depth(4)                          # set depth 4
        engine.set_game(ggf)                         # set game (;GM[Othello]...;) (a GgfGame)
        answer = engine.go(timeout=2.5)              # go ... === F5/-1.50/0.31
        print(answer.move, answer.eval, answer.seconds)

The protocol (version 2, as NTest's `instructions/Protocol.htm` describes it) has the GUI send
`nboard 2` first, then `set depth N` (the engine's midgame depth; endgame depths are its own)
and `set game GGF` before any `go`; `set contempt N` and `move F5/eval/time` are optional. The
engine answers `go` with `=== MOVE/EVAL/TIME` (Edax writes `=== MOVE EVAL TIME`), eval and time
optional, and does not play the move itself: the next `set game` or `move` says what happened.
Its other lines, `status`, `set myname`, `nodestats`, `search`/`book` (thinking) are kept
(`engine_name`, `status`, `nodestats`, each answer's `thinking`) and otherwise read over; so is
any line not in the protocol. `ping N` is answered by `pong N` once the engine has stopped
thinking: `ping` waits for it, the protocol's way of knowing the engine has caught up.

Every wait has a deadline (`EngineTimeout`, the engine still runs); an engine that exits or
closes its output is `EngineExited` with its exit status and the end of its stderr (the process
plumbing is `engine_process.EngineProcess`). A `===` line without a move is an
`NBoardProtocolError`. `close` (and the context manager) sends `quit` (which NTest and Edax
take) and kills the process if it has not gone within a grace period.
"""
from __future__ import annotations

import os
import re
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from saz.protocol.client_errors import ClientError, EngineTimeout
from saz.protocol.engine_process import EngineProcess
from saz.protocol.ggf import GgfGame, GgfMove, format_ggf, format_move

#: The protocol version `start` announces.
VERSION = 2
#: Thinking lines (`search`, `book`) kept with an answer.
THINKING_TAIL = 8
_MOVE = re.compile(r"[A-Za-z][0-9]{1,2}|[Pp][Aa]([Ss][Ss])?")


class NBoardProtocolError(ClientError):
    """An answer that breaks the protocol: a `===` with no move, a malformed line."""


@dataclass(frozen=True)
class NBoardAnswer:
    """A `go`'s answer: the move as the engine wrote it (`F5`, `d3`, `PA`), its evaluation
    and the seconds it says it took (None where it said none), the thinking lines before it,
    and the seconds from writing `go` to the arrival of `===`."""

    move: str
    eval: float | None = None
    reported_seconds: float | None = None
    thinking: tuple[str, ...] = ()
    seconds: float = 0.0


def parse_answer(line: str) -> NBoardAnswer:
    """A `=== MOVE[/EVAL[/TIME]]` line (or `=== MOVE EVAL TIME`); NBoardProtocolError when it
    has no move. An evaluation or time that is no number is left out (None)."""
    rest = line[3:].strip() if line.startswith("===") else ""
    parts = rest.split("/") if "/" in rest else rest.split()
    if not parts or not _MOVE.fullmatch(parts[0].strip()):
        raise NBoardProtocolError(f"{line!r}: a '===' answer starts with a move (F5, PA)")
    numbers: list[float | None] = []
    for part in parts[1:3]:
        try:
            numbers.append(float(part))
        except ValueError:
            numbers.append(None)
    numbers += [None] * (2 - len(numbers))
    return NBoardAnswer(parts[0].strip(), numbers[0], numbers[1])


class NBoardClient(EngineProcess):
    """An NBoard engine in a subprocess."""

    def __init__(self, command: Sequence[str | os.PathLike[str]] | str, *,
                 cwd: str | os.PathLike[str] | None = None,
                 env: dict[str, str] | None = None, name: str | None = None) -> None:
        super().__init__(command, cwd=cwd, env=env, name=name)
        #: What the engine said of itself (`set myname`), its last `status` and `nodestats`.
        self.engine_name: str | None = None
        self.status = ""
        self.nodestats: tuple[int, float] | None = None
        self._pings = 0
        #: The last warning-like line it wrote (NTest's `warning ...`), for a diagnosis.
        self.last_warning: str | None = None

    def _note(self, line: str, thinking: deque[str] | None = None) -> None:
        """Keep what a line not awaited tells: the engine's name, status, node count."""
        word, _, rest = line.partition(" ")
        if word == "set" and rest.startswith("myname"):
            self.engine_name = rest[len("myname"):].strip() or None
        elif word == "status":
            self.status = rest.strip()
        elif word == "nodestats":
            values = rest.split()
            try:
                self.nodestats = (int(float(values[0])), float(values[1]))
            except (IndexError, ValueError):
                pass
        elif word in ("search", "book") and thinking is not None:
            thinking.append(line)
        elif word == "warning":
            self.last_warning = line

    def _await(self, accept: re.Pattern[str], what: str, timeout: float | None,
               sent_at: float, thinking: deque[str] | None = None) -> tuple[str, float]:
        """The next line `accept` matches (in full), and the seconds since `sent_at`; every
        line before it is noted (`_note`) and skipped."""
        deadline = None if timeout is None else sent_at + timeout
        while True:
            try:
                line, arrived = self.read_line(deadline)
            except EngineTimeout:
                hint = f" (it said {self.last_warning!r})" if self.last_warning else ""
                raise EngineTimeout(f"{self.name} gave no {what} within {timeout:g} s{hint}"
                                    ) from None
            if accept.fullmatch(line):
                return line, arrived - sent_at
            self._note(line, thinking)

    # -- the protocol ---------------------------------------------------------------------------
    def start(self, timeout: float | None = 10.0, version: int = VERSION) -> float:
        """`nboard VERSION`, then a ping to know the engine has taken it; the seconds it took."""
        sent_at = self.write(f"nboard {version}")
        self.ping(timeout)
        return time.monotonic() - sent_at

    def ping(self, timeout: float | None = 10.0) -> float:
        """`ping N` ... `pong N` (lines before it, older pongs too, are noted and skipped);
        the seconds it took."""
        self._pings += 1
        number = self._pings
        sent_at = self.write(f"ping {number}")
        return self._await(re.compile(rf"pong\s+{number}"), f"'pong {number}'", timeout,
                           sent_at)[1]

    def set_depth(self, depth: int) -> None:
        """`set depth N`: the engine's midgame search depth (ValueError below 1)."""
        if depth < 1:
            raise ValueError(f"a search depth is at least 1, not {depth}")
        self.write(f"set depth {depth}")

    def set_contempt(self, contempt: float) -> None:
        """`set contempt N`: what a book draw is worth to Black, in discs (100: a win)."""
        self.write(f"set contempt {contempt:g}")

    def set_game(self, game: GgfGame | str) -> None:
        """`set game GGF`: all further commands are about the position at the game's end."""
        text = game if isinstance(game, str) else format_ggf(game)
        self.write(f"set game {text}")

    def move(self, move: GgfMove | str) -> None:
        """`move F5/EVAL/TIME`: the position moves on by that move."""
        self.write(f"move {move if isinstance(move, str) else format_move(move)}")

    def go(self, timeout: float | None = None) -> NBoardAnswer:
        """`go`, then the engine's `===` within `timeout` seconds of writing it.
        NBoardProtocolError for a `===` without a move."""
        thinking: deque[str] = deque(maxlen=THINKING_TAIL)
        line, seconds = self._await(re.compile(r"===.*"), "'=== move'", timeout,
                                    self.write("go"), thinking)
        answer = parse_answer(line)
        return NBoardAnswer(answer.move, answer.eval, answer.reported_seconds, tuple(thinking),
                            seconds)


__all__ = ["VERSION", "NBoardAnswer", "NBoardClient", "NBoardProtocolError", "parse_answer"]
