"""`saz gtp`: the engine over the Go Text Protocol, version 2.

It speaks GTP v2 as the specification's draft and GNU Go (the reference implementation) do, with
the extensions GUIs rely on: Leela Zero's and KataGo's live analysis (Sabaki, Lizzie), KGS's time
settings and cleanup genmove, GoGui's rules-engine and interrupt commands, and the `set_game` of
Quarry and gtp-rhino for Othello. The commands are `gtp_commands.py`'s; this module frames them.

**Framing** (the specification's section 3). Each input line is cleaned first: control characters
other than HT and LF are removed (so a CR before the LF is), everything from `#` on is a comment,
HT becomes a space; a line left empty is ignored. A command is `[id] name [arguments...]` with an
optional decimal id; its reply is `=[id] text` or `?[id] message` ended by a blank line, and the
replies come in the order of the commands, however many a controller sends at once. Only replies
go to stdout; logs go to stderr.

**Threads.** One thread reads stdin into a queue and the main thread executes the commands in
order. So a live analysis (`lz-analyze`, `kata-analyze`) runs until the next line arrives, which
stops it and is then executed; and GoGui's `# interrupt` line, seen as it arrives, stops a
genmove in progress.

**NBoard.** A session whose first line is `nboard N` is NBoard's (Othello GUIs start every
engine with it): it is handed to `saz nboard`'s loop (`protocol/nboard.py`).

The module imports neither torch nor onnxruntime: GUIs start engines often, and the network loads
on the first search (a missing or broken model is an error reply then, not a crash).
"""
from __future__ import annotations

import argparse
import codecs
import itertools
import logging
import os
import queue
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import TextIO

from saz.engine.engine import Engine
from saz.engine.games import POINT_GAMES, GameError, game_class
from saz.engine.search.options import add_search_arguments
from saz.protocol.engine_options import add_engine_arguments, engine_config
from saz.protocol.gtp_commands import Command, GtpEngine, GtpError, Streamed
from saz.protocol.vertex import vertex_convention

log = logging.getLogger("saz.gtp")

#: GoGui's interrupt: a comment line that stops the command in progress (see `gogui-interrupt`).
INTERRUPT = "# interrupt"
#: An input line and the time it arrived (`time.monotonic`).
_Line = tuple[str, float]
#: Control characters the framing removes: all but HT (9) and LF (10).
_CONTROL = {c: None for c in (*range(32), 127) if c not in (9, 10)}


# -- framing ------------------------------------------------------------------------------------
def clean(line: str) -> str:
    """A raw input line after GTP's preprocessing: control characters other than HT and LF
    removed, the comment from `#` on removed, HT turned into a space, outer spaces stripped."""
    text = line.translate(_CONTROL)
    comment = text.find("#")
    if comment >= 0:
        text = text[:comment]
    return text.replace("\t", " ").strip(" \n")


def parse_command(line: str) -> Command | None:
    """The command on a raw input line; None when the line is empty once cleaned. A line with
    only an id is a command without a name (which no command has)."""
    words = [word for word in clean(line).split(" ") if word]
    if not words:
        return None
    command_id = None
    if words[0].isascii() and words[0].isdigit():
        command_id = int(words[0])
        words = words[1:]
    if not words:
        return Command(command_id, "", ())
    return Command(command_id, words[0], tuple(words[1:]))


def format_reply(ok: bool, command_id: int | None, text: str) -> str:
    """A complete reply: `=[id] text` or `?[id] text`, ended by a blank line. A line after the
    first is never empty (it would end the reply early), so empty ones are dropped."""
    first, *rest = text.split("\n")
    body = "\n".join([first, *(line for line in rest if line)])
    return f"{_head(ok, command_id)} {body}\n\n"


def _head(ok: bool, command_id: int | None) -> str:
    return ("=" if ok else "?") + ("" if command_id is None else str(command_id))


# -- the session ----------------------------------------------------------------------------------
class GtpSession:
    """One controller's conversation: read lines, execute them in order, write the replies."""

    def __init__(self, commands: GtpEngine, stdin: Iterable[str], stdout: TextIO) -> None:
        """`stdin` yields the input lines (with their line ends), `stdout` takes the replies."""
        self.commands = commands
        self._stdin = stdin
        self._stdout = stdout
        #: Input lines as they arrive, with the time they arrived (a move is timed from then,
        #: as the controller times it); None once the input has ended.
        self._lines: queue.Queue[_Line | None] = queue.Queue()
        #: A line taken from the queue to end a live analysis, to be executed next.
        self._pushback: list[_Line | None] = []
        #: Replies and streamed lines are written whole, one writer at a time (a live analysis
        #: writes from its search thread).
        self._write_lock = threading.RLock()

    def run(self) -> int:
        """Serve until `quit` or the end of the input; the exit status (0)."""
        reader = threading.Thread(target=self._read, name="saz-gtp-input", daemon=True)
        reader.start()
        try:
            while True:
                item = self._next_line()
                if item is None:
                    break
                line, arrived = item
                command = parse_command(line)
                if command is None:
                    continue
                self.commands.command_received(arrived)
                self._execute(command)
                self.commands.replied(time.monotonic())
                if self.commands.quitting:
                    break
        except BrokenPipeError:  # the controller has gone: nobody is left to answer
            pass
        finally:
            self.commands.close()
        return 0

    def _read(self) -> None:
        try:
            for line in self._stdin:
                arrived = time.monotonic()
                if line.strip() == INTERRUPT:
                    self.commands.interrupt()
                self._lines.put((line, arrived))
        finally:
            self._lines.put(None)

    def _next_line(self) -> _Line | None:
        if self._pushback:
            return self._pushback.pop()
        return self._lines.get()

    def _execute(self, command: Command) -> None:
        try:
            reply = self.commands.execute(command)
        except GtpError as exc:
            self._write(format_reply(False, command.id, str(exc)))
        except Exception as exc:  # a bug must not end the session: answer it and go on
            log.exception("command %r failed", command.name)
            self._write(format_reply(False, command.id, f"internal error: {exc}"))
        else:
            if isinstance(reply, Streamed):
                self._stream(command.id, reply)
            else:
                self._write(format_reply(True, command.id, reply))

    def _stream(self, command_id: int | None, reply: Streamed) -> None:
        """Write a streamed reply. Its `=` line goes out with the first line of output, so that
        a failure before any output is still an ordinary `?` reply."""
        started = False

        def begin() -> None:
            nonlocal started
            with self._write_lock:
                if not started:
                    started = True
                    self._stdout.write(_head(True, command_id) + "\n")

        def emit(line: str) -> None:
            with self._write_lock:
                begin()
                self._write(line + "\n")

        final: str | None = None
        try:
            final = reply.start(emit)
            if reply.finish is not None:
                begin()
                self._stdout.flush()
                # Any line, even an empty one, ends the analysis; then it is executed.
                self._pushback.append(self._next_line())
                reply.finish()
        except Exception as exc:
            message = str(exc) if isinstance(exc, GtpError) else f"internal error: {exc}"
            if not isinstance(exc, GtpError):
                log.exception("streamed command failed")
            if not started:
                self._write(format_reply(False, command_id, message))
                return
            log.error("%s (after the reply had begun)", message)
        with self._write_lock:
            begin()
            self._write((final + "\n" if final else "") + "\n")

    def _write(self, text: str) -> None:
        with self._write_lock:
            self._stdout.write(text)
            self._stdout.flush()


# -- the command line -----------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="saz gtp",
        description="Play Go, Othello or Gomoku over GTP v2 (GUIs: Sabaki, GoGui, Lizzie, "
                    "Quarry; tournaments: gogui-twogtp).")
    parser.add_argument("--game", choices=tuple(POINT_GAMES), default="go",
                        help="the game to start with (set_game changes it)")
    add_engine_arguments(parser, time_per_move=True)
    parser.add_argument("--size", type=int, metavar="N",
                        help="the starting board size (default: " + ", ".join(
                            f"{name} {cls.info.default_size}"
                            for name, cls in POINT_GAMES.items()) + ")")
    parser.add_argument("--rule", choices=("freestyle", "exact-five", "renju"),
                        help="Gomoku's rule (default freestyle); renju forbids Black double "
                             "threes, double fours and overlines")
    parser.add_argument("--resign-threshold", type=float, metavar="WINRATE",
                        help="resign when the chosen move's winrate is below this (0..1); "
                             "default: never resign")
    parser.add_argument("--seed", type=int, metavar="N",
                        help="seed the search's and the reference players' random choices, so "
                             "that a session can be replayed (default: from the OS)")
    parser.add_argument("--verbose", action="store_true",
                        help="log each search's visits and speed to stderr")
    add_search_arguments(parser)
    return parser


def read_lines(fd: int) -> Iterator[str]:
    """The lines of a file descriptor as UTF-8 text (bytes that are not UTF-8 replaced), split at
    LF only, so that a CR reaches the framing, which drops it.

    Read with `os.read` rather than through `sys.stdin`: the input thread spends its life blocked
    here, and a thread blocked inside `sys.stdin`'s buffer holds its lock, which the interpreter
    needs when it exits after `quit`."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pending = ""
    while chunk := os.read(fd, 1 << 16):
        *lines, pending = (pending + decoder.decode(chunk)).split("\n")
        for line in lines:
            yield line + "\n"
    pending += decoder.decode(b"", final=True)
    if pending:
        yield pending


def main(argv: Sequence[str] | None = None, *, stdin: Iterable[str] | None = None,
         stdout: TextIO | None = None) -> int:
    """`saz gtp ARGS`; the exit status. `stdin` and `stdout` replace the process's streams
    (tests run sessions in memory)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, format="saz gtp: %(message)s",
                        level=logging.INFO if args.verbose else logging.WARNING)
    if args.resign_threshold is not None and not 0 < args.resign_threshold < 1:
        parser.error("--resign-threshold must be a winrate between 0 and 1")
    if args.rule is not None and "rule" not in game_class(args.game).info.rule_options:
        parser.error("--rule is Gomoku's (Go's rules come from komi and kgs-rules)")
    rules = {} if args.rule is None else {"rule": args.rule}
    engine = Engine(engine_config(parser, args, game=args.game, rules=rules, seed=args.seed))
    if args.size is not None:
        try:
            if not vertex_convention(args.game).fits(args.size, args.size):
                raise GameError(f"GTP cannot name the points of a {args.size}x{args.size} board")
            engine.new_game(args.size)
        except GameError as exc:
            parser.error(f"--size: {exc}")
    commands = GtpEngine(engine, resign_threshold=args.resign_threshold)
    if stdin is None:
        stdin = read_lines(sys.stdin.fileno())
    # NBoard starts every engine with `nboard N`: that session is the NBoard protocol's.
    lines = iter(stdin)
    first = next(lines, None)
    if first is not None and first.split()[:1] == ["nboard"]:
        from saz.protocol.nboard import handoff

        return handoff(engine.config, first, lines, stdout)
    stdin = lines if first is None else itertools.chain([first], lines)
    if stdout is not None:
        return _serve(GtpSession(commands, stdin, stdout))
    # LF line ends on every platform; the process's stdout stays open afterwards.
    with open(sys.stdout.fileno(), "w", encoding="utf-8", newline="\n", closefd=False) as out:
        return _serve(GtpSession(commands, stdin, out))


def _serve(session: GtpSession) -> int:
    try:
        return session.run()
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
