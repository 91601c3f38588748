"""A client for GTP engines: start one, send commands, read the replies in time, end it.

    with GtpClient(["gnugo", "--mode", "gtp", "--level", "1"]) as gnugo:
        gnugo.command("boardsize 9")
        reply = gnugo.send("genmove b", timeout=10.0)
        if reply.ok:
            print(reply.text, reply.seconds)

What a controller needs and the raw protocol leaves to it: each command gets a numeric id and its
reply must carry it back (a reply to another command is a `ProtocolError`, not silently taken);
lines before a reply that do not start a reply (some engines print junk) are skipped; every wait
has a deadline (`EngineTimeout`, the engine still runs); an engine that exits or closes its
output is `EngineExited`, with its exit status and the end of its stderr, which is drained all
along so that a chatty engine never blocks on a full pipe. `close` (and the context manager) sends
`quit` and kills the process if it has not gone within a grace period.

Streamed replies (`lz-analyze`) last until the next command: `begin` sends the command and reads
its status line, `read_line` reads what follows line by line (an empty line ends the reply), and
`write` sends the command that stops it.
The process and its pipes are `engine_process.EngineProcess`'s; the client is for one thread.
"""
from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Self

from saz.protocol.client_errors import ClientError
from saz.protocol.engine_process import QUIT_GRACE, EngineProcess


class ProtocolError(ClientError):
    """A reply that breaks the protocol (for another command, malformed)."""


class CommandFailed(ClientError):
    """A `?` reply where the caller needed success (`GtpClient.command`)."""

    def __init__(self, command: str, reply: GtpReply) -> None:
        super().__init__(f"{command!r} failed: {reply.text}")
        self.command = command
        self.reply = reply


@dataclass(frozen=True)
class GtpReply:
    """One reply: success (`=`) or failure (`?`), its text (lines joined by newlines, without the
    status, id and the blank line that ended it), its id, and the seconds from writing the
    command to the reply's last line."""

    ok: bool
    text: str
    id: int | None = None
    seconds: float = 0.0

    @property
    def lines(self) -> list[str]:
        """The text's non-empty lines (a streamed reply's `info` lines, a list reply's items)."""
        return [line for line in self.text.split("\n") if line]


def parse_reply(lines: Sequence[str]) -> GtpReply:
    """A reply from its lines (the first starts with `=` or `?`; the ending blank line is not
    included)."""
    if not lines or not lines[0] or lines[0][0] not in "=?":
        raise ProtocolError(f"not a GTP reply: {lines[:1]!r}")
    head, _, first = lines[0].partition(" ")
    digits = head[1:]
    if digits and not digits.isdigit():
        raise ProtocolError(f"malformed reply id in {lines[0]!r}")
    return GtpReply(ok=head[0] == "=", text="\n".join([first, *lines[1:]]),
                    id=int(digits) if digits else None)


class GtpClient:
    """A GTP engine in a subprocess: an `EngineProcess` whose commands carry ids and whose
    replies span lines."""

    def __init__(self, command: Sequence[str | os.PathLike[str]] | str, *,
                 cwd: str | os.PathLike[str] | None = None,
                 env: dict[str, str] | None = None, ids: bool = True) -> None:
        """Start the engine. `command` is an argument list, or a command line split as a shell
        would (without running one). With `ids`, commands are numbered and replies checked."""
        # Lines keep their leading spaces: a reply's text (a board, a list) is the engine's.
        self._engine = EngineProcess(command, cwd=cwd, env=env, strip=False)
        self.argv = self._engine.argv
        self._ids = ids
        self._next_id = 1
        #: When the last command was written: replies are timed from it.
        self._written_at = time.monotonic()

    @property
    def stderr_tail(self) -> tuple[str, ...]:
        """The last lines the engine wrote to stderr."""
        return self._engine.stderr_tail

    @property
    def returncode(self) -> int | None:
        return self._engine.returncode

    @property
    def pid(self) -> int:
        return self._engine.pid

    # -- commands -------------------------------------------------------------------------------
    def write(self, command: str) -> int | None:
        """Send one command line without waiting; its id (None without ids)."""
        if "\n" in command or "\r" in command:
            raise ValueError(f"a GTP command is one line: {command!r}")
        command_id = None
        if self._ids:
            command_id = self._next_id
            self._next_id += 1
            command = f"{command_id} {command}"
        self._written_at = self._engine.write(command)
        return command_id

    def interrupt(self) -> None:
        """GoGui's interrupt: the comment line `# interrupt`, which an engine that announces
        `gogui-interrupt` takes as a request to end the command in progress now."""
        self._engine.write("# interrupt")

    def read_line(self, timeout: float | None = None) -> str:
        """The next line of output (a streamed reply's lines; empty at the reply's end)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        return self._get(deadline)

    def read_reply(self, timeout: float | None = None,
                   expect_id: int | None = None) -> GtpReply:
        """The next complete reply, skipping output before it that starts none."""
        deadline = None if timeout is None else time.monotonic() + timeout
        head = self._status_line(deadline, expect_id)
        lines = [head]
        while line := self._get(deadline):
            lines.append(line)
        reply = parse_reply(lines)
        return GtpReply(reply.ok, reply.text, reply.id, time.monotonic() - self._written_at)

    def begin(self, command: str, timeout: float | None = None) -> GtpReply:
        """Send a command whose reply streams (`lz-analyze`) and read its status line only: the
        reply so far, its text the status line's. A failure is read whole."""
        command_id = self.write(command)
        deadline = None if timeout is None else time.monotonic() + timeout
        head = parse_reply([self._status_line(deadline, command_id)])
        if head.ok:
            return GtpReply(True, head.text, head.id, time.monotonic() - self._written_at)
        lines = [head.text]
        while line := self._get(deadline):
            lines.append(line)
        return GtpReply(False, "\n".join(lines), head.id, time.monotonic() - self._written_at)

    def _status_line(self, deadline: float | None, expect_id: int | None) -> str:
        """The next line that starts a reply (of command `expect_id`, if given)."""
        line = self._get(deadline)
        while not line or line[0] not in "=?":
            line = self._get(deadline)
        if expect_id is not None and parse_reply([line]).id != expect_id:
            raise ProtocolError(f"expected the reply to command {expect_id}, got {line!r}")
        return line

    def send(self, command: str, timeout: float | None = None) -> GtpReply:
        """Send a command and wait for its reply (`EngineTimeout` after `timeout` seconds)."""
        command_id = self.write(command)
        return self.read_reply(timeout, expect_id=command_id)

    def command(self, command: str, timeout: float | None = None) -> str:
        """Send a command that must succeed: its reply's text; CommandFailed on `?`."""
        reply = self.send(command, timeout)
        if not reply.ok:
            raise CommandFailed(command, reply)
        return reply.text

    def _get(self, deadline: float | None) -> str:
        return self._engine.read_line(deadline)[0]

    # -- the end --------------------------------------------------------------------------------
    def close(self, grace: float = QUIT_GRACE) -> int | None:
        """Send `quit` and read its reply, wait up to `grace` seconds for the engine to exit,
        kill it otherwise; the exit status."""
        if self.returncode is None:
            try:
                self.send("quit", timeout=grace)
            except ClientError:
                pass
        return self._engine.close(None, grace)

    def kill(self) -> None:
        """End the engine now."""
        self._engine.kill()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if kind is None:
            self.close()
        else:
            self.kill()

    def __repr__(self) -> str:
        return f"<GtpClient {' '.join(self.argv)!r} pid={self.pid}>"
