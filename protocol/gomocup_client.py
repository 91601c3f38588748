"""A client for Gomocup brains (`pbrain-*` engines): start one, talk to it, time it, end it.

    with PbrainClient(["pbrain-saz", "--model", "gomoku.onnx"]) as brain:
        brain.start_game(15)
        brain.info("timeout_turn", 1000)
        x, y = brain.begin(timeout=2.0).move

What a manager needs and the raw protocol leaves to it: each answer is read past the MESSAGE and
DEBUG lines before it (kept with the answer), timed from the moment its command was written to the
moment its line arrived, and waited for with a deadline (`EngineTimeout`). A brain that exits or
closes its output is reported as `EngineExited` with its exit status and the end of its stderr,
which is drained all along so that a chatty brain never blocks on a full pipe. `close` (and the
context manager) sends END and kills the process if it has not gone within a second.

The process and its pipes are `engine_process.EngineProcess`'s; the client is for one thread.
"""
from __future__ import annotations

import enum
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass

from saz.protocol.client_errors import ClientError, EngineTimeout
from saz.protocol.engine_process import EngineProcess

#: How long END may take before the brain is killed (the Gomocup managers' grace).
END_GRACE = 1.0

_MOVE = re.compile(r"(\d+)\s*,\s*(\d+)")
_ABOUT_PAIR = re.compile(r'(\w+)\s*=\s*"([^"]*)"')

Point = tuple[int, int]


class UnexpectedReply(ClientError):
    """An answer of the wrong kind (ERROR where a move was due, for instance)."""

    def __init__(self, expected: str, reply: Reply) -> None:
        super().__init__(f"expected {expected}, got {reply.text!r}")
        self.reply = reply


class ReplyKind(enum.Enum):
    OK = "OK"
    ERROR = "ERROR"
    UNKNOWN = "UNKNOWN"
    #: One or more points `x,y`, space-separated (a move; swap2 stones).
    MOVE = "MOVE"
    #: The swap2 choice of taking the other colour.
    SWAP = "SWAP"
    #: The brain proposes a move and waits for PLAY (or END).
    SUGGEST = "SUGGEST"
    #: Anything else (the ABOUT line).
    TEXT = "TEXT"


@dataclass(frozen=True)
class Reply:
    """One answer of a brain."""

    #: The answer line, stripped.
    text: str
    #: The MESSAGE and DEBUG lines that came before it, in order.
    messages: tuple[str, ...] = ()
    #: Seconds from writing the command to the arrival of the answer.
    seconds: float = 0.0

    @property
    def kind(self) -> ReplyKind:
        word = self.text.split(None, 1)[0].upper() if self.text else ""
        if word in ("OK", "ERROR", "UNKNOWN", "SWAP", "SUGGEST"):
            return ReplyKind(word)
        if self.text and all(_MOVE.fullmatch(part) for part in self.text.split()):
            return ReplyKind.MOVE
        return ReplyKind.TEXT

    @property
    def points(self) -> tuple[Point, ...]:
        """The points of a MOVE answer (three for a swap2 opening); UnexpectedReply otherwise."""
        if self.kind is not ReplyKind.MOVE:
            raise UnexpectedReply("a move x,y", self)
        matches = (_MOVE.fullmatch(part) for part in self.text.split())
        return tuple((int(m[1]), int(m[2])) for m in matches if m)

    @property
    def move(self) -> Point:
        """The one point of a move answer; UnexpectedReply otherwise."""
        points = self.points
        if len(points) != 1:
            raise UnexpectedReply("one move x,y", self)
        return points[0]


def _is_message(line: str) -> bool:
    word = line.split(None, 1)[0].upper() if line else ""
    return word in ("MESSAGE", "DEBUG")


class PbrainClient(EngineProcess):
    """One running brain process and the conversation with it (`EngineProcess` with the
    Gomocup commands): `write` a line, `read_reply` an answer, `ask` both."""

    # -- answers -----------------------------------------------------------------------------------
    def read_reply(self, timeout: float | None = None, *,
                   sent_at: float | None = None) -> Reply:
        """The next answer, past the MESSAGE and DEBUG lines before it; `timeout` bounds the
        whole wait, and `seconds` counts from `sent_at` (default: now)."""
        start = time.monotonic()
        sent_at = start if sent_at is None else sent_at
        deadline = None if timeout is None else start + timeout
        messages: list[str] = []
        while True:
            try:
                line, arrived = self.read_line(deadline)
            except EngineTimeout:
                raise EngineTimeout(f"{self.name} gave no answer within {timeout} s"
                                    + (f" (it said: {messages[-1]!r})" if messages else "")
                                    ) from None
            if not line:
                continue
            if _is_message(line):
                messages.append(line)
                continue
            return Reply(line, tuple(messages), arrived - sent_at)

    def ask(self, line: str, timeout: float | None = None) -> Reply:
        """Send a command and read its answer."""
        return self.read_reply(timeout, sent_at=self.write(line))

    # -- the protocol ------------------------------------------------------------------------------
    def about(self, timeout: float | None = 5.0) -> dict[str, str]:
        """ABOUT as a dict (`name`, `version`, ...); an old-style free text answer comes back as
        {"text": answer}."""
        text = self.ask("ABOUT", timeout).text
        pairs = dict(_ABOUT_PAIR.findall(text))
        return pairs or {"text": text}

    def start_game(self, width: int, height: int | None = None,
                   timeout: float | None = 5.0) -> None:
        """START (square) or RECTSTART; UnexpectedReply unless the brain answers OK."""
        command = f"START {width}" if height in (None, width) else f"RECTSTART {width},{height}"
        self._expect_ok(command, timeout)

    def restart(self, timeout: float | None = 5.0) -> None:
        self._expect_ok("RESTART", timeout)

    def info(self, key: str, value: object) -> None:
        """INFO key value (never answered)."""
        self.write(f"INFO {key} {value}")

    def begin(self, timeout: float | None = None) -> Reply:
        return self.ask("BEGIN", timeout)

    def turn(self, x: int, y: int, timeout: float | None = None) -> Reply:
        return self.ask(f"TURN {x},{y}", timeout)

    def play(self, x: int, y: int, timeout: float | None = None) -> Reply:
        return self.ask(f"PLAY {x},{y}", timeout)

    def board(self, stones: Iterable[tuple[int, int, int]],
              timeout: float | None = None) -> Reply:
        """BOARD, one `x,y,field` line per stone in the order played, DONE; timed from DONE."""
        self.write("BOARD")
        for x, y, owner in stones:
            self.write(f"{x},{y},{owner}")
        return self.ask("DONE", timeout)

    def takeback(self, x: int, y: int, timeout: float | None = 5.0) -> None:
        self._expect_ok(f"TAKEBACK {x},{y}", timeout)

    def _expect_ok(self, command: str, timeout: float | None) -> None:
        reply = self.ask(command, timeout)
        if reply.kind is not ReplyKind.OK:
            raise UnexpectedReply(f"OK to {command}", reply)

    # -- the end -----------------------------------------------------------------------------------
    def close(self, goodbye: str | None = "END", grace: float = END_GRACE) -> int | None:
        """Send END and wait up to `grace` seconds for the brain to exit, then kill it; returns
        the exit status (negative: killed by that signal)."""
        return super().close(goodbye, grace)
