"""A client for Gomocup brains (`pbrain-*` engines): start one, talk to it, time it, end it.

    with PbrainClient.spawn(["pbrain-saz", "--model", "gomoku.onnx"]) as brain:
        brain.start_game(15)
        brain.info("timeout_turn", 1000)
        x, y = brain.begin(timeout=2.0).move

What a manager needs and the raw protocol leaves to it: each answer is read past the MESSAGE and
DEBUG lines before it (kept with the answer), timed from the moment its command was written to the
moment its line arrived, and waited for with a deadline (`EngineTimeout`). A brain that exits or
closes its output is reported as `EngineExited` with its exit status and the end of its stderr,
which is drained all along so that a chatty brain never blocks on a full pipe. `close` (and the
context manager) sends END and kills the process if it has not gone within a second.

Separate threads read the brain's stdout and stderr; the client itself is for one thread.
"""
from __future__ import annotations

import enum
import os
import queue
import re
import subprocess
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Self

from saz.protocol.client_errors import ClientError, EngineExited, EngineTimeout

#: How long END may take before the brain is killed (the Gomocup managers' grace).
END_GRACE = 1.0
#: stderr lines kept for the diagnosis of a brain that died.
STDERR_TAIL = 50

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


class PbrainClient:
    """One running brain process and the conversation with it."""

    def __init__(self, process: subprocess.Popen[bytes], *, spawned_at: float,
                 name: str = "brain") -> None:
        """Adopt a started process with piped stdin, stdout and stderr (see `spawn`)."""
        if process.stdin is None or process.stdout is None or process.stderr is None:
            raise ValueError("the brain's stdin, stdout and stderr must be pipes")
        self.process = process
        self.name = name
        #: `time.monotonic()` just before the process was created.
        self.spawned_at = spawned_at
        self._lines: queue.SimpleQueue[tuple[str, float] | None] = queue.SimpleQueue()
        self._stderr: deque[str] = deque(maxlen=STDERR_TAIL)
        self._eof = False
        threading.Thread(target=self._pump_stdout, name=f"{name}-stdout", daemon=True).start()
        self._stderr_pump = threading.Thread(target=self._pump_stderr, name=f"{name}-stderr",
                                             daemon=True)
        self._stderr_pump.start()

    @classmethod
    def spawn(cls, command: Sequence[str | os.PathLike[str]], *, cwd: str | None = None,
              env: Mapping[str, str] | None = None, name: str | None = None) -> PbrainClient:
        """Start `command` (the program and its arguments) as a brain."""
        spawned_at = time.monotonic()
        process = subprocess.Popen(
            [os.fspath(part) for part in command], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
            env=dict(env) if env is not None else None)
        return cls(process, spawned_at=spawned_at, name=name or os.fspath(command[0]))

    # -- the pipes ---------------------------------------------------------------------------------
    def _pump_stdout(self) -> None:
        assert self.process.stdout is not None
        try:
            for raw in self.process.stdout:
                self._lines.put((raw.decode("utf-8", "replace").strip(), time.monotonic()))
        finally:
            self._lines.put(None)

    def _pump_stderr(self) -> None:
        assert self.process.stderr is not None
        for raw in self.process.stderr:
            self._stderr.append(raw.decode("utf-8", "replace").rstrip())

    @property
    def stderr_tail(self) -> tuple[str, ...]:
        """The last lines the brain wrote on stderr."""
        return tuple(self._stderr)

    @property
    def returncode(self) -> int | None:
        """The exit status, or None while the brain runs."""
        return self.process.poll()

    def _exited(self, what: str) -> EngineExited:
        try:
            code = self.process.wait(timeout=END_GRACE)
        except subprocess.TimeoutExpired:
            code = None
        else:
            # The brain's last words may still be in the pipe: let the pump reach its end, but not
            # wait on a child of the brain that still holds the pipe open.
            self._stderr_pump.join(timeout=END_GRACE)
        return EngineExited(f"{self.name} {what}", code, self.stderr_tail)

    # -- talking -----------------------------------------------------------------------------------
    def send(self, line: str) -> float:
        """Write one command line; returns the monotonic time just before it was written."""
        assert self.process.stdin is not None
        if "\n" in line or "\r" in line:
            raise ValueError(f"one line at a time: {line!r}")
        sent_at = time.monotonic()
        try:
            self.process.stdin.write(line.encode("utf-8") + b"\n")
            self.process.stdin.flush()
        except (BrokenPipeError, ValueError):
            raise self._exited(f"no longer reads its input ({line!r} not sent)") from None
        return sent_at

    def read_line(self, timeout: float | None = None) -> tuple[str, float]:
        """The next output line, raw (MESSAGE lines included), with its arrival time."""
        if self._eof:
            raise self._exited("has closed its output")
        try:
            item = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise EngineTimeout(f"{self.name} said nothing within {timeout} s") from None
        if item is None:
            self._eof = True
            raise self._exited("has closed its output")
        return item

    def read_reply(self, timeout: float | None = None, *,
                   sent_at: float | None = None) -> Reply:
        """The next answer, past the MESSAGE and DEBUG lines before it; `timeout` bounds the
        whole wait, and `seconds` counts from `sent_at` (default: now)."""
        start = time.monotonic()
        sent_at = start if sent_at is None else sent_at
        messages: list[str] = []
        while True:
            left = None if timeout is None else max(0.0, timeout - (time.monotonic() - start))
            try:
                line, arrived = self.read_line(left)
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
        return self.read_reply(timeout, sent_at=self.send(line))

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
        self.send(f"INFO {key} {value}")

    def begin(self, timeout: float | None = None) -> Reply:
        return self.ask("BEGIN", timeout)

    def turn(self, x: int, y: int, timeout: float | None = None) -> Reply:
        return self.ask(f"TURN {x},{y}", timeout)

    def play(self, x: int, y: int, timeout: float | None = None) -> Reply:
        return self.ask(f"PLAY {x},{y}", timeout)

    def board(self, stones: Iterable[tuple[int, int, int]],
              timeout: float | None = None) -> Reply:
        """BOARD, one `x,y,field` line per stone in the order played, DONE; timed from DONE."""
        self.send("BOARD")
        for x, y, owner in stones:
            self.send(f"{x},{y},{owner}")
        return self.ask("DONE", timeout)

    def takeback(self, x: int, y: int, timeout: float | None = 5.0) -> None:
        self._expect_ok(f"TAKEBACK {x},{y}", timeout)

    def _expect_ok(self, command: str, timeout: float | None) -> None:
        reply = self.ask(command, timeout)
        if reply.kind is not ReplyKind.OK:
            raise UnexpectedReply(f"OK to {command}", reply)

    # -- the end -----------------------------------------------------------------------------------
    def close(self, grace: float = END_GRACE) -> int:
        """Send END and wait up to `grace` seconds for the brain to exit, then kill it; returns
        the exit status (negative: killed by that signal)."""
        if self.process.poll() is None:
            try:
                self.send("END")
            except EngineExited:
                pass
            try:
                self.process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.kill()
        self._close_pipes()
        return self.process.returncode

    def kill(self) -> None:
        """Kill the brain at once and reap it."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self._close_pipes()

    def _close_pipes(self) -> None:
        stdin = self.process.stdin
        if stdin is not None and not stdin.closed:
            try:
                stdin.close()
            except BrokenPipeError:
                pass

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "running" if self.returncode is None else f"exited {self.returncode}"
        return f"<PbrainClient {self.name} pid={self.process.pid} {state}>"
