"""Engines as the referee sees them: one interface over GTP (Go, Othello), Gomocup (Gomoku),
UCI (chess) and NBoard (Othello engines such as NTest and Edax, chosen per engine).

    adapter = open_engine(EngineSpec.parse("gnugo=gnugo --mode gtp --level 1"), setup)
    adapter.start()                       # the game's settings: size, komi, time
    answer = adapter.genmove(game, clock) # tells the moves it has not seen, asks for its move
    adapter.close()

An adapter runs one engine process for one game (engines restart every game: no state leaks
from one game into the next, and a crashed engine is simply started again). `genmove` brings
the engine's board up to the referee's game first and then asks for a move within the clock's
deadline. Everything an engine can do wrong becomes one of three exceptions, which the referee
turns into a lost game: `EngineCrashed` (it exited or could not start), `EngineHung` (no
answer in time) and `EngineMisbehaved` (an answer that is no move, a refused legal move, a
broken reply). `SetupRefused` is different: the engine refuses the match's settings (a board
size it does not play), a mistake in the match, not in a game.

GTP dialects: Go as GNU Go speaks it (`play b pass`); Othello as gtp-rhino speaks it (`set_game
Othello`, vertices from the top-left, no pass ever sent: an engine skips a side that cannot move
on its own, and the referee never asks such a side for a move). Gomocup: `INFO` limits, `START`
(or `RECTSTART`), then `BEGIN` on an empty board, `BOARD` when the brain has not seen every move
but the last (an opening; the first move it is asked for), `TURN` otherwise. UCI: `uci` (its
options), `setoption` for the match's options of that engine (`EngineSpec.options`) and for
`UCI_Variant` on a board other than standard chess (an engine without that variant refuses the
settings), `ucinewgame`, `isready`; then each move `position startpos|fen FEN moves ...` (the
whole game from its start) and `go` with the clock: `wtime btime winc binc` in milliseconds under
a game clock, `movetime` under a limit per move (both under both, `movetime` the time left to
this move). A `bestmove` that is no legal move is an illegal move; UCI has no resignation.
NBoard (an engine's `EngineSpec.protocol`, `saz match --protocol ENGINE=nboard`): `nboard 2`,
`set depth` (the option `depth`; without it `DEFAULT_NBOARD_DEPTH`, so that the clock decides)
and `set contempt` (the option `contempt`), a ping; then each move `set game` with the whole
game in GGF (`protocol/ggf.py`: every move, the forced passes as `PA`) and `go`. The game's
`TI` and its moves' times make the engine's clocks read the referee's (`_ggf_clocks`, in whole
seconds as GGF's readers take them): under a game clock, the match's clock and the time each
side has used; under a limit per move, that limit as the clock, which the engine budgets as the
rest of its game (so it plays faster than the limit, never past it; its strength is then set by
its depth). NTest with a depth plays at that depth whatever the clock; without one it searches
on past a short clock (6.6 s of a 5 s clock, measured), so give NTest a depth.
"""
from __future__ import annotations

import math
import os
import shlex
import shutil
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from saz.engine.games import GameError, game_class, new_game
from saz.engine.games.base import BLACK, WHITE, Game
from saz.protocol.client_errors import EngineExited, EngineTimeout
from saz.protocol.ggf import GgfClock, GgfError, format_clock, from_game, move_index, records_game
from saz.protocol.gomocup_client import PbrainClient, ReplyKind
from saz.protocol.gtp_client import GtpClient, GtpReply, ProtocolError
from saz.protocol.nboard_client import NBoardClient, NBoardProtocolError
from saz.protocol.uci_client import UciClient, UciProtocolError, UnknownOption
from saz.protocol.vertex import GtpValueError, vertices_for
from saz.tools.match.pgn import notation, start_of
from saz.tools.match.time_control import Clock, MatchTimeControl

#: How long an engine may take to start and take the game's settings, and to take a move it is
#: told (neither is charged to its clock).
SETUP_TIMEOUT = 30.0
COMMAND_TIMEOUT = 10.0
#: Where Debian installs games (GNU Go, gtp-rhino), often not on PATH.
EXTRA_PATH = "/usr/games"
#: Gomocup INFO rule values of the Gomoku rules (0 freestyle, 1 exact five, 4 renju).
_GOMOCUP_RULES = {"freestyle": 0, "exact-five": 1, "renju": 4}
#: The protocols an engine can speak to the referee (`EngineSpec.protocol`).
PROTOCOLS = ("gtp", "gomocup", "uci", "nboard")
#: The options NBoard engines take (`set depth N`, `set contempt N`).
NBOARD_OPTIONS = ("depth", "contempt")
#: An NBoard engine's midgame depth when the match gives none: deep enough that the clock,
#: not the depth, ends its search.
DEFAULT_NBOARD_DEPTH = 60
T = TypeVar("T")


class EngineFailure(Exception):
    """An engine did something that loses it the game."""


class EngineCrashed(EngineFailure):
    """The engine exited, closed its output or could not be started."""


class EngineHung(EngineFailure):
    """No answer within the deadline."""


class EngineMisbehaved(EngineFailure):
    """An answer that breaks the protocol or the game: no move, a refused legal move."""


class SetupRefused(Exception):
    """The engine refuses the match's settings (size, komi, rules): the match cannot be played."""


@dataclass(frozen=True)
class EngineSpec:
    """A contestant: its name, the command that starts it, the options it is given (UCI's
    `setoption`, NBoard's `set`: name and value, in order) and the protocol it speaks where it
    is not its game's (`GameSetup.protocol`): `nboard` for an NBoard Othello engine."""

    name: str
    argv: tuple[str, ...]
    options: tuple[tuple[str, str], ...] = ()
    protocol: str | None = None

    @classmethod
    def parse(cls, text: str) -> EngineSpec:
        """`NAME=COMMAND` (the command split as a shell would, without running one); the
        program is looked up on PATH and in /usr/games. ValueError when malformed or not found."""
        name, equals, command = text.partition("=")
        name = name.strip()
        if not equals or not name or not command.strip():
            raise ValueError(f"{text!r} is not NAME=COMMAND")
        argv = shlex.split(command)
        return cls(name, (resolve_program(argv[0]), *argv[1:]))

    @property
    def command(self) -> str:
        return shlex.join(self.argv)

    def with_option(self, text: str) -> EngineSpec:
        """This engine with the option `NAME=VALUE` added (ValueError when malformed)."""
        name, equals, value = text.partition("=")
        if not equals or not name.strip():
            raise ValueError(f"{text!r} is not an engine option NAME=VALUE")
        return replace(self, options=(*self.options, (name.strip(), value.strip())))

    def with_protocol(self, protocol: str) -> EngineSpec:
        """This engine speaking `protocol` (one of `PROTOCOLS`; ValueError otherwise)."""
        protocol = protocol.strip().lower()
        if protocol not in PROTOCOLS:
            raise ValueError(f"{protocol!r} is no protocol; expected one of {', '.join(PROTOCOLS)}")
        return replace(self, protocol=protocol)

    def protocol_in(self, setup: GameSetup) -> str:
        """The protocol this engine speaks in a match of `setup`: its own, else its game's."""
        return self.protocol or setup.protocol


def resolve_program(program: str) -> str:
    """The path of `program`: as given when it has a directory part, else found on PATH or in
    /usr/games; ValueError when there is no such executable."""
    if os.sep in program:
        if not os.access(program, os.X_OK):
            raise ValueError(f"{program} is not an executable file")
        return program
    search = os.pathsep.join(filter(None, [os.environ.get("PATH", ""), EXTRA_PATH]))
    path = shutil.which(program, path=search)
    if path is None:
        raise ValueError(f"{program} is not installed (looked on PATH and in {EXTRA_PATH})")
    return path


@dataclass(frozen=True)
class GameSetup:
    """What every game of a match shares."""

    game: str
    width: int
    height: int
    time_control: MatchTimeControl
    #: The rules keywords of `new_game` (Go: komi; Gomoku: rule).
    rules: dict[str, Any] = field(default_factory=dict)

    @property
    def protocol(self) -> str:
        """The protocol engines of this game speak (`GameInfo.engine_protocol`): Gomocup for
        Gomoku, UCI for chess, GTP otherwise."""
        return game_class(self.game).info.engine_protocol


@dataclass(frozen=True)
class Answer:
    """An engine's move: a move index, or None for a resignation; as it wrote it; how long it
    took (write to arrival); what it said of it (a UCI engine's score and depth: `+0.31/12`)."""

    move: int | None
    text: str
    seconds: float
    note: str = ""


class EngineAdapter(ABC):
    """One engine process for one game."""

    def __init__(self, spec: EngineSpec, setup: GameSetup) -> None:
        self.spec = spec
        self.setup = setup
        #: How many of the game's moves the engine has on its board.
        self._known = 0

    @property
    def name(self) -> str:
        return self.spec.name

    @abstractmethod
    def start(self) -> float:
        """Start the process if not yet and give it the game's settings; the seconds to charge
        to its game clock for that (a Gomocup brain's start-up, as its managers count it)."""

    @abstractmethod
    def genmove(self, game: Game, clock: Clock, opponent: Clock | None = None) -> Answer:
        """The engine's move for the side to move of `game` (which is not changed), on its
        `clock`; `opponent` is the other side's (UCI tells an engine both)."""

    @abstractmethod
    def close(self) -> int | None:
        """End the engine politely (quit / END), killing it if it does not go; its exit
        status (None if it never started)."""

    @abstractmethod
    def kill(self) -> None:
        """End the engine now (after a failure)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"

    #: The client's errors for a reply that breaks its protocol (a Gomocup client has none).
    protocol_errors: tuple[type[Exception], ...] = ()

    def _guard(self, what: str, timeout: float, call: Callable[..., T], *args: Any,
               **kwargs: Any) -> T:
        """`call(*args, **kwargs)` on the client, its errors turned into the adapter's: a
        timeout is a hang, an exit a crash, a protocol error misbehaviour."""
        try:
            return call(*args, **kwargs)
        except EngineTimeout:
            raise EngineHung(f"no answer to {what} within {timeout:g} s") from None
        except EngineExited as exc:
            raise EngineCrashed(str(exc)) from None
        except self.protocol_errors as exc:
            raise EngineMisbehaved(f"broke the protocol after {what}: {exc}") from None


class GtpAdapter(EngineAdapter):
    """A GTP engine (Go, Othello)."""

    protocol_errors = (ProtocolError,)

    def __init__(self, spec: EngineSpec, setup: GameSetup) -> None:
        super().__init__(spec, setup)
        self.vertices = vertices_for(setup.game, setup.width, setup.height)
        self._client: GtpClient | None = None

    @property
    def client(self) -> GtpClient:
        if self._client is None:
            try:
                self._client = GtpClient(self.spec.argv)
            except OSError as exc:
                raise EngineCrashed(f"could not start: {exc}") from None
        return self._client

    def start(self) -> float:
        setup = self.setup
        if self._call("known_command set_game", SETUP_TIMEOUT).text.strip() == "true":
            self._require(f"set_game {game_class(setup.game).info.title}")
        if setup.width == setup.height:
            self._require(f"boardsize {setup.width}")
        else:
            self._require(f"rectangular_boardsize {setup.width} {setup.height}")
        self._require("clear_board")
        if "komi" in game_class(setup.game).info.rule_options:
            self._require(f"komi {setup.rules.get('komi', 7.5):g}")
        self._call(setup.time_control.gtp_settings(), SETUP_TIMEOUT)  # `?`: told nothing
        self._known = 0
        return 0.0

    def genmove(self, game: Game, clock: Clock, opponent: Clock | None = None) -> Answer:
        for index in range(self._known, len(game.moves)):
            self._tell(game, index)
        seconds, stones = clock.report()
        color = _gtp_color(game.to_move)
        self._call(f"time_left {color} {seconds:.3f} {stones}", COMMAND_TIMEOUT)
        reply = self._call(f"genmove {color}", clock.deadline)
        if not reply.ok:
            raise EngineMisbehaved(f"genmove failed: {reply.text}")
        text = reply.text.strip()
        self._known = len(game.moves) + 1
        if text.lower() == "resign":
            return Answer(None, text, reply.seconds)
        try:
            move = self.vertices.parse(text)
        except GtpValueError as exc:
            raise EngineMisbehaved(f"answered {text!r}, not a move: {exc}") from None
        return Answer(move, text, reply.seconds)

    def _tell(self, game: Game, index: int) -> None:
        """`play` the game's move `index`, which the engine has not seen. Othello's forced
        passes are never sent (`Game.passes_implicitly`): GTP Othello engines skip a side that
        cannot move themselves."""
        move = game.moves[index]
        if game.passes_implicitly and move == game.pass_move:
            return
        color = _gtp_color(BLACK if index % 2 == 0 else WHITE)
        vertex = self.vertices.format(move)
        reply = self._call(f"play {color} {vertex}", COMMAND_TIMEOUT)
        if not reply.ok:
            raise EngineMisbehaved(f"refused the legal move {color} {vertex}: {reply.text}")

    def _call(self, command: str, timeout: float) -> GtpReply:
        return self._guard(repr(command), timeout,
                           lambda: self.client.send(command, timeout=timeout))

    def _require(self, command: str) -> None:
        reply = self._call(command, SETUP_TIMEOUT)
        if not reply.ok:
            raise SetupRefused(f"{self.name} refused {command!r}: {reply.text}")

    def close(self) -> int | None:
        return None if self._client is None else self._client.close()

    def kill(self) -> None:
        if self._client is not None:
            self._client.kill()


class GomocupAdapter(EngineAdapter):
    """A Gomocup brain (Gomoku)."""

    def __init__(self, spec: EngineSpec, setup: GameSetup) -> None:
        super().__init__(spec, setup)
        self._brain: PbrainClient | None = None
        #: Whether the brain has been given a position (BEGIN or BOARD) this game.
        self._seated = False

    @property
    def brain(self) -> PbrainClient:
        if self._brain is None:
            try:
                self._brain = PbrainClient(self.spec.argv, name=self.name)
            except OSError as exc:
                raise EngineCrashed(f"could not start: {exc}") from None
        return self._brain

    def start(self) -> float:
        setup = self.setup
        rule = setup.rules.get("rule", "freestyle")
        if rule not in _GOMOCUP_RULES:
            raise SetupRefused(f"the Gomocup protocol has no rule {rule!r}")
        settings = {**setup.time_control.gomocup_limits(), "max_memory": 0, "game_type": 1,
                    "rule": _GOMOCUP_RULES[rule]}
        brain = self.brain
        for key, value in settings.items():
            self._guard(f"INFO {key}", SETUP_TIMEOUT, brain.info, key, value)
        command = (f"START {setup.width}" if setup.width == setup.height
                   else f"RECTSTART {setup.width},{setup.height}")
        self._guard(command, SETUP_TIMEOUT, brain.write, command)
        reply = self._guard(command, SETUP_TIMEOUT, brain.read_reply, SETUP_TIMEOUT,
                            sent_at=brain.spawned_at)
        if reply.kind is not ReplyKind.OK:
            raise SetupRefused(f"{self.name} refused {command!r}: {reply.text}")
        self._known, self._seated = 0, False
        return reply.seconds  # from process creation: the managers' match clock

    def genmove(self, game: Game, clock: Clock, opponent: Clock | None = None) -> Answer:
        brain, deadline = self.brain, clock.deadline
        if clock.control.has_game_clock:
            left = round(1000 * clock.report()[0])
            self._guard("INFO time_left", deadline, brain.info, "time_left", left)
        moves = game.moves
        if not moves:
            asked = "BEGIN"
            reply = self._guard(asked, deadline, brain.begin, deadline)
        elif self._seated and self._known == len(moves) - 1:
            x, y = self._xy(moves[-1])
            asked = f"TURN {x},{y}"
            reply = self._guard(asked, deadline, brain.turn, x, y, deadline)
        else:
            mover = len(moves) % 2  # stones of the side to move are the brain's own (1)
            stones = [(*self._xy(m), 1 if i % 2 == mover else 2) for i, m in enumerate(moves)]
            asked = "BOARD"
            reply = self._guard(asked, deadline, brain.board, stones, deadline)
        if reply.kind is not ReplyKind.MOVE or len(reply.points) != 1:
            raise EngineMisbehaved(f"answered {reply.text!r} to {asked}, not a move x,y")
        x, y = reply.move
        self._known, self._seated = len(moves) + 1, True
        if not (x < self.setup.width and y < self.setup.height):
            raise EngineMisbehaved(f"answered {reply.text!r}: off the board")
        return Answer(y * self.setup.width + x, reply.text, reply.seconds)

    def _xy(self, move: int) -> tuple[int, int]:
        y, x = divmod(move, self.setup.width)
        return x, y

    def close(self) -> int | None:
        return None if self._brain is None else self._brain.close()

    def kill(self) -> None:
        if self._brain is not None:
            self._brain.kill()


class UciAdapter(EngineAdapter):
    """A UCI engine (chess)."""

    protocol_errors = (UciProtocolError,)

    def __init__(self, spec: EngineSpec, setup: GameSetup) -> None:
        super().__init__(spec, setup)
        self._client: UciClient | None = None
        #: The game's start as the engine is told it (None: `startpos`), and the UCI of each
        #: move told so far, replayed on `_replay` (a move's UCI depends on its position).
        self._start: str | None = None
        self._told: list[str] = []
        self._replay: Game | None = None

    @property
    def client(self) -> UciClient:
        if self._client is None:
            try:
                self._client = UciClient(self.spec.argv, name=self.name)
            except OSError as exc:
                raise EngineCrashed(f"could not start: {exc}") from None
        return self._client

    def start(self) -> float:
        client = self.client
        self._guard("uci", SETUP_TIMEOUT, client.handshake, SETUP_TIMEOUT)
        variant = uci_variant(self.setup)
        offered = client.option("UCI_Variant")
        if variant is not None:
            if offered is None or not offered.accepts(variant):
                raise SetupRefused(f"{self.name} does not play the variant {variant!r} "
                                   "(no UCI_Variant of that name)")
            self._set("UCI_Variant", variant)
        for name, value in self.spec.options:
            self._set(name, value)
        client.new_game()
        self._guard("isready", SETUP_TIMEOUT, client.is_ready, SETUP_TIMEOUT)
        self._start, self._told, self._replay = None, [], None
        return 0.0

    def _set(self, name: str, value: str) -> None:
        try:
            self._guard(f"setoption name {name}", SETUP_TIMEOUT, self.client.set_option, name,
                        value)
        except UnknownOption as exc:
            raise SetupRefused(str(exc)) from None

    def genmove(self, game: Game, clock: Clock, opponent: Clock | None = None) -> Answer:
        client = self.client
        replay = self._replay
        if replay is None or len(replay.moves) > len(game.moves):
            replay = start_of(game)
            usual = notation(type(game)(game.width, game.height, **self.setup.rules)).fen()
            fen = notation(replay).fen()
            self._start, self._told = (None if fen == usual else fen), []
        for move in game.moves[len(replay.moves):]:
            self._told.append(notation(replay).uci(move))
            replay.play(move)
        self._replay = replay
        self._guard("position", COMMAND_TIMEOUT, client.position, self._start, self._told)
        limits: dict[str, float] = {}
        control = clock.control
        if control.has_game_clock:
            theirs = opponent.report()[0] if opponent is not None else clock.report()[0]
            mine = clock.report()[0]
            white = game.to_move == WHITE
            limits = {"wtime": mine if white else theirs, "btime": theirs if white else mine,
                      "winc": control.increment, "binc": control.increment}
        if control.per_move is not None:
            limits["movetime"] = clock.available
        best = self._guard("go", clock.deadline, client.go, clock.deadline, **limits)
        try:
            move = notation(game).parse_uci(best.move)
        except GameError as exc:
            raise EngineMisbehaved(f"played {best.move!r}, no legal move: {exc}") from None
        return Answer(move, best.move, best.seconds, _score_note(best.info))

    def close(self) -> int | None:
        return None if self._client is None else self._client.close()

    def kill(self) -> None:
        if self._client is not None:
            self._client.kill()


class NBoardAdapter(EngineAdapter):
    """An NBoard engine (Othello: NTest, Edax)."""

    protocol_errors = (NBoardProtocolError,)

    def __init__(self, spec: EngineSpec, setup: GameSetup) -> None:
        super().__init__(spec, setup)
        self._client: NBoardClient | None = None

    @property
    def client(self) -> NBoardClient:
        if self._client is None:
            try:
                self._client = NBoardClient(self.spec.argv, name=self.name)
            except OSError as exc:
                raise EngineCrashed(f"could not start: {exc}") from None
        return self._client

    def settings(self) -> tuple[int, float | None]:
        """The engine's depth and contempt from its options; SetupRefused for another option
        or a value that is no number."""
        depth, contempt = DEFAULT_NBOARD_DEPTH, None
        for name, value in self.spec.options:
            key = name.lower()
            try:
                if key == "depth":
                    depth = int(value)
                    if depth < 1:
                        raise ValueError
                elif key == "contempt":
                    contempt = float(value)
                    if not math.isfinite(contempt):
                        raise ValueError
                else:
                    raise SetupRefused(f"{self.name}: NBoard engines take the options "
                                       f"{' and '.join(NBOARD_OPTIONS)}, not {name!r}")
            except ValueError:
                kind = "a positive whole number" if key == "depth" else "a number"
                raise SetupRefused(f"{self.name}: the option {name} is {kind}, not "
                                   f"{value!r}") from None
        return depth, contempt

    def start(self) -> float:
        if self.setup.width != self.setup.height:
            raise SetupRefused(f"NBoard engines play square boards, not "
                               f"{self.setup.width}x{self.setup.height}")
        depth, contempt = self.settings()
        client = self.client
        self._guard("nboard 2", SETUP_TIMEOUT, client.start, SETUP_TIMEOUT)
        self._guard("set depth", SETUP_TIMEOUT, client.set_depth, depth)
        if contempt is not None:
            self._guard("set contempt", SETUP_TIMEOUT, client.set_contempt, contempt)
        self._guard("ping", SETUP_TIMEOUT, client.ping, SETUP_TIMEOUT)
        self._known = 0
        return 0.0

    def genmove(self, game: Game, clock: Clock, opponent: Clock | None = None) -> Answer:
        client = self.client
        mover = game.to_move
        clocks = {mover: clock, -mover: opponent or clock}
        clock_text, seconds = _ggf_clocks(game, clocks)
        tags = {"PC": "saz match", "PB": "black", "PW": "white", "TI": clock_text}
        try:
            record = from_game(game, tags, seconds=seconds)
        except GgfError as exc:
            raise SetupRefused(f"GGF cannot hold this game: {exc}") from None
        self._guard("set game", COMMAND_TIMEOUT, client.set_game, record)
        answer = self._guard("go", clock.deadline, client.go, clock.deadline)
        self._known = len(game.moves)
        try:
            move = move_index(game.width, answer.move)
        except GgfError as exc:
            raise EngineMisbehaved(f"answered {answer.move!r}, not a move: {exc}") from None
        note = f"{answer.eval:+.2f}" if answer.eval is not None else ""
        return Answer(move, answer.move, answer.seconds, note)

    def close(self) -> int | None:
        return None if self._client is None else self._client.close()

    def kill(self) -> None:
        if self._client is not None:
            self._client.kill()


def _ggf_clocks(game: Game, clocks: dict[int, Clock]) -> tuple[str, list[float | None]]:
    """The TI an NBoard engine is sent and the seconds of each move, so that its clocks read
    what the referee's say. GGF clocks are whole seconds (what NTest's reader takes), and an
    engine works out a side's time left as TI's time less its moves' seconds plus TI's
    increment for each of them: under a game clock, TI is the match's (base and increment
    rounded down) and each side's moves carry, spread evenly, what that leaves to take off;
    under a limit per move alone, TI is that limit and the moves carry no time."""
    control = next(iter(clocks.values())).control
    if not control.has_game_clock:
        return format_clock(GgfClock(max(1, math.floor(control.per_move or 1)))), [None] * len(
            game.moves)
    base, increment = max(1, math.floor(control.base)), math.floor(control.increment)
    colors = game.colors()
    spent: dict[int, float] = {}
    for color, side in clocks.items():
        count = colors.count(color)
        if count:
            spent[color] = max(0.0, base + increment * count - side.remaining) / count
    return (format_clock(GgfClock(base, increment)),
            [round(spent[color], 3) for color in colors])


def uci_variant(setup: GameSetup) -> str | None:
    """The `UCI_Variant` a UCI engine is set to for the match's board: None for standard chess
    (which needs none), else the game's variant name (`gardner`, `losalamos`)."""
    game = new_game(setup.game, setup.width, setup.height, **setup.rules)
    variant = getattr(game, "variant", None)
    return None if variant in (None, "chess") else str(variant)


def _score_note(info: tuple[str, ...]) -> str:
    """The last score and depth of a UCI engine's `info` lines, as cutechess writes them in
    PGN comments: `+0.31/12` (pawns), `+M3/20` (mate in 3 moves), "" when none said."""
    for line in reversed(info):
        words = line.split()
        if "score" not in words:
            continue
        at = words.index("score")
        depth = words[words.index("depth") + 1] if "depth" in words[:-1] else ""
        kind, value = [*words[at + 1:at + 3], "", ""][:2]
        try:
            number = int(value)
        except ValueError:
            return ""
        text = (f"{number / 100:+.2f}" if kind == "cp" else
                f"{'+' if number > 0 else '-'}M{abs(number)}" if kind == "mate" else "")
        return f"{text}/{depth}" if text and depth else text
    return ""


def _gtp_color(color: int) -> str:
    return "b" if color == BLACK else "w"


def open_engine(spec: EngineSpec, setup: GameSetup) -> EngineAdapter:
    """The adapter of the protocol the engine speaks (`EngineSpec.protocol_in`; the process
    starts with `start`). SetupRefused for options to an engine whose protocol has none, or
    an NBoard engine in a game GGF does not record."""
    protocol = spec.protocol_in(setup)
    if spec.options and protocol not in ("uci", "nboard"):
        raise SetupRefused(f"{spec.name}: only UCI and NBoard engines take options")
    if protocol == "nboard":
        if not records_game(setup.game):
            raise SetupRefused(f"{spec.name}: NBoard engines play Othello, not {setup.game}")
        return NBoardAdapter(spec, setup)
    if protocol == "gomocup":
        return GomocupAdapter(spec, setup)
    if protocol == "uci":
        return UciAdapter(spec, setup)
    return GtpAdapter(spec, setup)


__all__ = [
    "Answer", "EngineAdapter", "EngineCrashed", "EngineFailure", "EngineHung",
    "EngineMisbehaved", "EngineSpec", "GameSetup", "GomocupAdapter", "GtpAdapter",
    "NBoardAdapter", "SetupRefused", "UciAdapter", "open_engine", "resolve_program",
    "uci_variant",
]
