"""A client for UCI chess engines: start one, shake hands, set options, give positions, time
its `go`, end it.

    with UciClient(["stockfish"]) as engine:
        engine.handshake(timeout=10.0)             # uci ... uciok: id and options
        engine.set_option("Skill Level", 0)
        engine.new_game()                          # ucinewgame
        engine.is_ready(timeout=10.0)              # isready ... readyok
        engine.position(None, ["e2e4", "e7e5"])    # position startpos moves e2e4 e7e5
        best = engine.go(timeout=2.5, movetime=2000)
        print(best.move, best.ponder, best.seconds)

What a controller needs and the raw protocol leaves to it: every wait has a deadline
(`EngineTimeout`, the engine still runs); the `info` and unknown lines before an answer are
skipped (the last `info` lines are kept with `bestmove`, for a diagnosis); an answer is timed
from the moment its command was written to the arrival of its line; an engine that exits or
closes its output is `EngineExited` with its exit status and the end of its stderr, which is
drained all along (out of the way of stdout) so that a chatty engine never blocks on a full pipe.
A `bestmove` without a move, or a `setoption` of an option the engine did not announce, is a
`UciProtocolError` or `UnknownOption`. `close` (and the context manager) sends `quit` and kills
the process if it has not gone within a grace period.

UCI names options case-insensitively; `options` keeps each as the engine spelled it and
`option` finds it in any case. The process and its pipes are `engine_process.EngineProcess`'s;
the client is for one thread.
"""
from __future__ import annotations

import os
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from saz.protocol.client_errors import ClientError, EngineTimeout
from saz.protocol.engine_process import EngineProcess
from saz.protocol.uci_option import UciOption

#: `info` lines kept with a `bestmove`.
INFO_TAIL = 8
#: The words of an `option` line that start a field after its name and type.
_OPTION_FIELDS = ("default", "min", "max", "var")


class UciProtocolError(ClientError):
    """An answer that breaks the protocol: a `bestmove` with no move, a malformed line."""


class UnknownOption(ClientError):
    """A `setoption` of an option the engine did not announce in its `uci` answer."""


def parse_option(line: str) -> UciOption:
    """An `option name N type T [default D] [min A] [max B] [var V]...` line; UciProtocolError
    when it has no name or type. A name runs to `type` (an option may be called "Skill Level"),
    a default or choice to the next of `default min max var`, so both may hold spaces."""
    words = line.split()
    if words[:2] != ["option", "name"] or "type" not in words[2:]:
        raise UciProtocolError(f"not an option line (option name N type T ...): {line!r}")
    at_type = words.index("type", 2)
    name = " ".join(words[2:at_type])
    if not name or at_type + 1 >= len(words):
        raise UciProtocolError(f"an option needs a name and a type: {line!r}")
    fields: list[tuple[str, list[str]]] = []
    for word in words[at_type + 2:]:
        if word in _OPTION_FIELDS:
            fields.append((word, []))
        elif fields:
            fields[-1][1].append(word)
    values = {key: " ".join(parts) for key, parts in fields if key != "var"}
    try:
        low = int(values["min"]) if "min" in values else None
        high = int(values["max"]) if "max" in values else None
    except ValueError:
        raise UciProtocolError(f"a spin option's bounds are integers: {line!r}") from None
    return UciOption(name, words[at_type + 1].lower(), values.get("default"), low, high,
                     tuple(" ".join(parts) for key, parts in fields if key == "var"))


@dataclass(frozen=True)
class BestMove:
    """A `go`'s answer: the move as the engine wrote it (`e2e4`, `e7e8q`; `0000` or `(none)`
    where it had none), the move it would ponder on, the last `info` lines before it, and the
    seconds from writing `go` to the arrival of `bestmove`."""

    move: str
    ponder: str | None = None
    info: tuple[str, ...] = ()
    seconds: float = 0.0


def format_value(value: object) -> str:
    """An option's value as `setoption` writes it (booleans as `true`/`false`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class UciClient(EngineProcess):
    """A UCI engine in a subprocess."""

    def __init__(self, command: Sequence[str | os.PathLike[str]] | str, *,
                 cwd: str | os.PathLike[str] | None = None,
                 env: dict[str, str] | None = None, name: str | None = None) -> None:
        """Start the engine. `command` is an argument list, or a command line split as a shell
        would (without running one)."""
        super().__init__(command, cwd=cwd, env=env, name=name)
        #: What the engine said of itself (`id name`, `id author`) and its options, by name.
        self.id: dict[str, str] = {}
        self.options: dict[str, UciOption] = {}

    def _await(self, word: str, timeout: float | None, sent_at: float,
               info: deque[str] | None = None) -> tuple[str, float]:
        """The next line whose first word is `word`, and the seconds since `sent_at`; the lines
        before it are skipped (`info` lines kept in `info`)."""
        deadline = None if timeout is None else sent_at + timeout
        while True:
            try:
                line, arrived = self.read_line(deadline)
            except EngineTimeout:
                raise EngineTimeout(f"{self.name} gave no {word!r} within {timeout:g} s"
                                    ) from None
            first = line.split(None, 1)[0] if line else ""
            if first == word:
                return line, arrived - sent_at
            if first == "info" and info is not None:
                info.append(line)

    # -- the protocol ---------------------------------------------------------------------------
    def handshake(self, timeout: float | None = 10.0) -> dict[str, UciOption]:
        """`uci`, then the engine's `id` and `option` lines up to `uciok`: its options, kept in
        `options` (and `id` in `id`)."""
        sent_at = self.write("uci")
        deadline = None if timeout is None else sent_at + timeout
        self.id, self.options = {}, {}
        while True:
            try:
                line, _ = self.read_line(deadline)
            except EngineTimeout:
                raise EngineTimeout(f"{self.name} gave no 'uciok' within {timeout:g} s"
                                    ) from None
            words = line.split(None, 2)
            if words[:1] == ["uciok"]:
                return self.options
            if words[:1] == ["id"] and len(words) == 3:
                self.id[words[1]] = words[2]
            elif words[:1] == ["option"]:
                option = parse_option(line)
                self.options[option.name] = option

    def option(self, name: str) -> UciOption | None:
        """The announced option called `name` (in any case), None when there is none."""
        wanted = name.lower()
        return next((o for key, o in self.options.items() if key.lower() == wanted), None)

    def set_option(self, name: str, value: object = None) -> None:
        """`setoption name N [value V]` for an option the engine announced (UnknownOption
        otherwise, or for a value outside what it announced); a button takes no value."""
        option = self.option(name)
        if option is None:
            raise UnknownOption(f"{self.name} has no option {name!r} (it has: "
                                f"{', '.join(self.options) or 'none'})")
        if value is None:
            self.write(f"setoption name {option.name}")
            return
        text = format_value(value)
        if not option.accepts(text):
            bounds = (f" ({option.min}..{option.max})" if option.type == "spin" else
                      f" ({', '.join(option.choices)})" if option.type == "combo" else "")
            raise UnknownOption(f"{self.name}'s option {option.name!r} takes no value "
                                f"{text!r}{bounds}")
        self.write(f"setoption name {option.name} value {text}")

    def is_ready(self, timeout: float | None = 10.0) -> float:
        """`isready` ... `readyok`; the seconds it took."""
        return self._await("readyok", timeout, self.write("isready"))[1]

    def new_game(self) -> None:
        """`ucinewgame`: the next position is of another game."""
        self.write("ucinewgame")

    def position(self, fen: str | None, moves: Sequence[str] = ()) -> None:
        """`position startpos|fen FEN [moves M...]` (startpos where `fen` is None)."""
        line = "position startpos" if fen is None else f"position fen {fen}"
        if moves:
            line += " moves " + " ".join(moves)
        self.write(line)

    def go(self, timeout: float | None = None, *, wtime: float | None = None,
           btime: float | None = None, winc: float | None = None, binc: float | None = None,
           movestogo: int | None = None, movetime: float | None = None,
           depth: int | None = None, nodes: int | None = None) -> BestMove:
        """`go` with the limits given (times in seconds, sent as whole milliseconds), then the
        engine's `bestmove` within `timeout` seconds of writing `go`. UciProtocolError for a
        `bestmove` with no move."""
        words = ["go"]
        for key, seconds in (("wtime", wtime), ("btime", btime), ("winc", winc),
                             ("binc", binc), ("movetime", movetime)):
            if seconds is not None:
                words += [key, str(max(0, round(seconds * 1000)))]
        for key, count in (("movestogo", movestogo), ("depth", depth), ("nodes", nodes)):
            if count is not None:
                words += [key, str(count)]
        info: deque[str] = deque(maxlen=INFO_TAIL)
        line, seconds = self._await("bestmove", timeout, self.write(" ".join(words)), info)
        parts = line.split()
        if len(parts) < 2:
            raise UciProtocolError(f"{self.name} answered {line!r}: a bestmove without a move")
        ponder = parts[3] if len(parts) >= 4 and parts[2] == "ponder" else None
        return BestMove(parts[1], ponder, tuple(info), seconds)

    def stop(self) -> None:
        """`stop`: answer the search in progress now."""
        self.write("stop")


__all__ = ["BestMove", "UciClient", "UciOption", "UciProtocolError", "UnknownOption",
           "format_value", "parse_option"]
