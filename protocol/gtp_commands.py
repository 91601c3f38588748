"""The GTP commands: one handler per command, over the engine facade.

`GtpEngine.execute(command)` runs one parsed command and returns its reply: text, or a `Streamed`
reply for the commands that print while the engine works (analysis). A failure raises `GtpError`,
whose text is the error message, and leaves the position as it was. The framing (ids, `=`/`?`,
blank lines) and the input thread are `gtp.py`'s; the names of points are `vertex.py`'s.

**Error texts** are the GTP v2 specification's, exactly, where it names one (`unknown command`,
`illegal move`, `unacceptable size`, `cannot undo`, `board not empty`, `invalid number of stones`,
`bad vertex list`, `cannot score`); argument errors are `syntax error: <what>`, and `cannot load
file: <why>`. Other failures (no model, a game that is over) say what happened in words.

**Colours.** `play`, `genmove` and the analysis commands name a colour, and GUIs use that to set
up positions (Sabaki replays setup stones as `play` or `set_free_handicap` and then asks for the
colour it expects to move). The named colour moves, whoever is to move (`Game.play`), as GNU Go
and KataGo do: no pass is invented for the other side, and `undo` takes back exactly that move.

**The end of a game** is the controller's decision: after two passes in Go, `play` and `genmove`
go on (a dispute, a cleanup phase), as GNU Go, KataGo, Sabaki and GoGui do.

**Games.** Go, Othello and Gomoku (`set_game`, as Quarry and gtp-rhino speak it); what the
commands say of a game (its title, how its points are named, which of GoGui's commands it offers)
is on its class. The Go-only commands (handicap, rules, `final_status_list`) are `gtp_go.py`'s
and fail in the other games; `komi` is accepted and ignored there, since every controller sends
it. GoGui plays any game through its rules-engine commands (`gogui-rules_*`).
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from saz.engine.engine import Engine
from saz.engine.games import (
    POINT_GAMES,
    Game,
    GameError,
    UnsupportedSizeError,
    game_class,
)
from saz.engine.games import new_game as make_game
from saz.engine.games.base import BLACK, COLOR_NAMES, DRAW, EMPTY, WHITE
from saz.engine.games.capabilities import AreaScored
from saz.engine.search.clock import (
    TimeControlError,
    from_gtp_time_settings,
    from_kgs_time_settings,
)
from saz.engine.search.mcts import SearchResult
from saz.engine.search.ownership import Estimate
from saz.protocol.gtp_analysis import (
    AnalysisRequest,
    InfoFormat,
    kata_info,
    lz_info,
    parse_analysis,
    sabaki_info,
)
from saz.protocol.gtp_errors import (
    BAD_VERTEX_LIST,
    CANNOT_LOAD,
    CANNOT_SCORE,
    CANNOT_UNDO,
    ILLEGAL_MOVE,
    UNACCEPTABLE_SIZE,
    UNKNOWN_COMMAND,
    GtpError,
    check_arguments,
    check_empty,
    parse_integer,
    syntax_error,
)
from saz.protocol.gtp_go import GoCommands
from saz.protocol.sgf import SgfError, SgfGame, parse_sgf
from saz.protocol.sgf_writer import SgfInfo, format_sgf, sgf_result
from saz.protocol.vertex import (
    GtpValueError,
    Vertices,
    parse_color,
    vertex_convention,
    vertices_for,
)

log = logging.getLogger("saz.gtp")

PROTOCOL_VERSION = 2
ENGINE_NAME = "saz"

#: GoGui's analyze menu: `type/label/command` (GoGui's manual, "Analyze Commands").
GOGUI_ANALYZE_COMMANDS = (
    "string/Show board/showboard",
    "plist/Legal moves/gogui-rules_legal_moves",
    "string/Side to move/gogui-rules_side_to_move",
    "string/Final result/gogui-rules_final_result",
    "string/Final score/final_score",
    "plist/Final status: alive/final_status_list alive",
)
#: The largest SGF file `loadsgf` reads (a long game record is a few hundred kilobytes).
MAX_SGF_BYTES = 16 << 20
_STONES = {BLACK: "X", WHITE: "O", EMPTY: "."}


Emit = Callable[[str], None]


@dataclass(frozen=True)
class Streamed:
    """A reply written while the engine works: `=[id]` on a line of its own, the lines `start`
    emits, then the line `start` returns (if any) and the blank line that ends every reply.

    With `finish`, the work runs in the background after `start` returns, until the next input
    line arrives: the session then calls `finish` (which stops it) before ending the reply.
    Without it, the reply ends when `start` returns.
    """

    start: Callable[[Emit], str | None]
    finish: Callable[[], None] | None = None


Handler = Callable[[tuple[str, ...]], "str | Streamed"]


@dataclass(frozen=True)
class Command:
    """One command line, parsed: the optional numeric id, the name and its arguments."""

    id: int | None
    name: str
    args: tuple[str, ...]


class GtpEngine:
    """The command table and its handlers, over one `Engine`."""

    def __init__(self, engine: Engine, *, resign_threshold: float | None = None) -> None:
        if resign_threshold is not None and not 0.0 < resign_threshold < 1.0:
            raise ValueError(f"resign threshold must be a winrate in (0, 1), not "
                             f"{resign_threshold}")
        self.engine = engine
        self.resign_threshold = resign_threshold
        #: Set by `quit`: the session ends after its reply.
        self.quitting = False
        go = GoCommands(self)
        self.commands: dict[str, Handler] = {
            "protocol_version": self.protocol_version,
            "name": self.name,
            "version": self.version,
            "known_command": self.known_command,
            "list_commands": self.list_commands,
            "quit": self.quit,
            "boardsize": self.boardsize,
            "rectangular_boardsize": self.rectangular_boardsize,
            "clear_board": self.clear_board,
            "komi": self.komi,
            "play": self.play,
            "genmove": self.genmove,
            "reg_genmove": self.reg_genmove,
            "restricted_genmove": self.restricted_genmove,
            "kgs-genmove_cleanup": self.genmove_cleanup,
            "undo": self.undo,
            "fixed_handicap": go.fixed_handicap,
            "place_free_handicap": go.place_free_handicap,
            "set_free_handicap": go.set_free_handicap,
            "time_settings": self.time_settings,
            "kgs-time_settings": self.kgs_time_settings,
            "time_left": self.time_left,
            "final_score": self.final_score,
            "final_status_list": go.final_status_list,
            "loadsgf": self.loadsgf,
            "showboard": self.showboard,
            "list_games": self.list_games,
            "set_game": self.set_game,
            "lz-analyze": self.lz_analyze,
            "kata-analyze": self.kata_analyze,
            "lz-genmove_analyze": self.lz_genmove_analyze,
            "kata-genmove_analyze": self.kata_genmove_analyze,
            # Sabaki's own names (docs/guides/engine-analysis-integration.md), which Sabaki
            # prefers to the others: Leela's format with KataGo's scoreLead (sabaki_info).
            "analyze": self.sabaki_analyze,
            "genmove_analyze": self.sabaki_genmove_analyze,
            "stop": self.stop,
            "gogui-analyze_commands": self.gogui_analyze_commands,
            "gogui-interrupt": self.gogui_interrupt,
            "gogui-rules_game_id": self.rules_game_id,
            "gogui-rules_board_size": self.rules_board_size,
            "gogui-rules_board": self.rules_board,
            "gogui-rules_legal_moves": self.rules_legal_moves,
            "gogui-rules_side_to_move": self.rules_side_to_move,
            "gogui-rules_final_result": self.rules_final_result,
            "gogui-rules_setup": self.gogui_setup,
            "gogui-setup": self.gogui_setup,
            "gogui-setup_player": self.gogui_setup_player,
            "cputime": self.cputime,
            "printsgf": self.printsgf,
            "get_komi": go.get_komi,
            "kgs-rules": go.kgs_rules,
            "kata-get-rules": go.kata_get_rules,
            "kata-set-rules": go.kata_set_rules,
            "clear_cache": self.clear_cache,
        }

    # -- dispatch ---------------------------------------------------------------------------------
    #: Commands that only read: they leave a background search (pondering) running.
    _READ_ONLY = frozenset({
        "protocol_version", "name", "version", "known_command", "list_commands",
        "gogui-analyze_commands", "gogui-interrupt", "showboard", "list_games",
        "gogui-rules_game_id", "gogui-rules_board_size", "gogui-rules_board",
        "gogui-rules_legal_moves", "gogui-rules_side_to_move", "gogui-rules_final_result",
        "final_score", "final_status_list", "cputime", "printsgf", "get_komi",
        "kata-get-rules",
    })

    def offers(self, name: str) -> bool:
        """Whether the command `name` exists in the current game (`list_commands`)."""
        return name in self.commands and name not in _not_offered(self.game)

    def execute(self, command: Command) -> str | Streamed:
        """Run one command; GtpError when it fails (the position is then unchanged)."""
        handler = self.commands.get(command.name)
        if handler is None or not self.offers(command.name):
            raise GtpError(UNKNOWN_COMMAND)
        if command.name not in self._READ_ONLY:
            self.halt()
        return handler(command.args)

    def halt(self) -> None:
        """Stop a background search (analysis, pondering) and wait until it has stopped."""
        self.engine.halt()

    def command_received(self, at: float) -> None:
        """The command about to be executed arrived at `at` (`time.monotonic`): a move it asks
        for is timed from then, as the controller times it."""
        self.engine.clock.command_received(at)

    def replied(self, at: float) -> None:
        """The reply to the last command went out at `at`: the clock learns the latency."""
        self.engine.clock.replied(at)

    # -- the values of the current game -----------------------------------------------------------
    @property
    def game(self) -> Game:
        return self.engine.game

    @property
    def vertices(self) -> Vertices:
        game = self.engine.game
        return vertices_for(game.name, game.width, game.height)

    def _vertex(self, text: str) -> int:
        try:
            return self.vertices.parse(text)
        except GtpValueError as exc:
            raise syntax_error(exc) from None

    def _format(self, move: int) -> str:
        return self.vertices.format(move)

    # -- administration ---------------------------------------------------------------------------
    def protocol_version(self, args: tuple[str, ...]) -> str:
        return str(PROTOCOL_VERSION)

    def name(self, args: tuple[str, ...]) -> str:
        return ENGINE_NAME

    def version(self, args: tuple[str, ...]) -> str:
        from importlib import metadata  # only when asked: it costs start-up time

        try:
            return metadata.version("saz")
        except metadata.PackageNotFoundError:
            return "unknown"

    def known_command(self, args: tuple[str, ...]) -> str:
        check_arguments(args, 1, "known_command COMMAND")
        return "true" if self.offers(args[0]) else "false"

    def list_commands(self, args: tuple[str, ...]) -> str:
        return "\n".join(name for name in self.commands if self.offers(name))

    def cputime(self, args: tuple[str, ...]) -> str:
        """The CPU seconds this process has used, all its threads (the network's) included:
        gogui-twogtp's CPU column, GNU Go's command."""
        return f"{time.process_time():.3f}"

    def clear_cache(self, args: tuple[str, ...]) -> str:
        """KataGo's: forget the search trees, so that the next search starts afresh."""
        self.engine.clear_cache()
        return ""

    def quit(self, args: tuple[str, ...]) -> str:
        self.quitting = True
        return ""

    # -- setting up -------------------------------------------------------------------------------
    def boardsize(self, args: tuple[str, ...]) -> str:
        check_arguments(args, 1, "boardsize SIZE")
        size = parse_integer(args[0], "board size")
        self._new_board(size, size)
        return ""

    def rectangular_boardsize(self, args: tuple[str, ...]) -> str:
        check_arguments(args, 2, "rectangular_boardsize WIDTH HEIGHT")
        self._new_board(parse_integer(args[0], "width"), parse_integer(args[1], "height"))
        return ""

    def _new_board(self, width: int, height: int) -> None:
        if not _nameable(self.engine.game_name, width, height):
            raise GtpError(UNACCEPTABLE_SIZE)
        try:
            self.engine.new_game(width, height)
        except UnsupportedSizeError:
            raise GtpError(UNACCEPTABLE_SIZE) from None

    def clear_board(self, args: tuple[str, ...]) -> str:
        self.engine.new_game()
        return ""

    def komi(self, args: tuple[str, ...]) -> str:
        check_arguments(args, 1, "komi KOMI")
        try:
            komi = float(args[0])
        except ValueError:
            raise syntax_error(f"komi {args[0]!r} is not a number") from None
        if "komi" in self.game.info.rule_options:  # the other games have none: accepted, ignored
            try:
                self.engine.set_rules(komi=komi)
            except GameError as exc:
                raise syntax_error(exc) from None
        return ""

    def list_games(self, args: tuple[str, ...]) -> str:
        return "\n".join(cls.info.title for cls in POINT_GAMES.values())

    def set_game(self, args: tuple[str, ...]) -> str:
        check_arguments(args, 1, "set_game GAME")
        name = args[0].lower()
        if name not in POINT_GAMES:
            raise GtpError("unsupported game")
        self.engine.set_game(name)
        return ""

    def gogui_setup(self, args: tuple[str, ...]) -> str:
        """GoGui's `gogui-setup b A1 w B2 ...` (and `gogui-rules_setup` for its rules
        engines): the stones are the starting position of a new game (not moves: `undo` stops
        at them), on the empty board right after `clear_board`; Black is to move until
        `gogui-setup_player` says otherwise. A chain without liberties is refused."""
        if len(args) % 2:
            raise syntax_error("usage: gogui-setup COLOR VERTEX [COLOR VERTEX ...]")
        check_empty(self.game)
        board = np.array(self.game.board)
        for color_text, vertex in zip(args[::2], args[1::2]):
            point = self._vertex(vertex)
            if point == self.game.pass_move:
                raise GtpError(BAD_VERTEX_LIST)
            board[point] = _color(color_text)
        try:
            game = _set_up(self.game, board, self.game.to_move, self.engine.rules)
        except GameError as exc:
            raise GtpError(f"cannot set up: {exc}") from None
        self._adopt(game)
        return ""

    def gogui_setup_player(self, args: tuple[str, ...]) -> str:
        """GoGui's: the colour to move in a set-up position (any position, in fact)."""
        check_arguments(args, 1, "gogui-setup_player COLOR")
        self.engine.set_to_move(_color(args[0]))
        return ""

    def _adopt(self, game: Game) -> None:
        """Make a position set up on a copy the engine's."""
        self.engine.replace_game(game)

    # -- moves ------------------------------------------------------------------------------------
    def play(self, args: tuple[str, ...]) -> str:
        check_arguments(args, 2, "play COLOR VERTEX")
        color = _color(args[0])
        move = self._vertex(args[1])
        self._play_as(color, move)
        return ""

    def _play_as(self, color: int, move: int) -> None:
        """Play `move` for `color`, in turn or not (see the module's docstring)."""
        try:
            self.engine.play(move, color)
        except GameError:
            raise GtpError(ILLEGAL_MOVE) from None

    def genmove(self, args: tuple[str, ...]) -> str:
        check_arguments(args, 1, "genmove COLOR")
        return self._vertex_or_resign(self._generate(_color(args[0])))

    def genmove_cleanup(self, args: tuple[str, ...]) -> str:
        """KGS's cleanup phase: a genmove that passes only when nothing else is legal."""
        check_arguments(args, 1, "kgs-genmove_cleanup COLOR")
        return self._vertex_or_resign(self._generate(_color(args[0]), cleanup=True))

    def reg_genmove(self, args: tuple[str, ...]) -> str:
        """The move genmove would choose, not played (regression tests)."""
        check_arguments(args, 1, "reg_genmove COLOR")
        return self._vertex_or_resign(self._generate(_color(args[0]), play=False))

    def restricted_genmove(self, args: tuple[str, ...]) -> str:
        """GNU Go's `restricted_genmove COLOR VERTEX...` (its regression suites use it): the move
        reg_genmove would choose among the vertices given, not played; a pass when none of them
        is legal, as GNU Go answers."""
        if len(args) < 2:
            raise syntax_error("usage: restricted_genmove COLOR VERTEX [VERTEX ...]")
        color = _color(args[0])
        allowed = [self._vertex(text) for text in args[1:]]
        try:
            position = self.engine.position(color)
        except GameError:
            return self._format(self.game.pass_move)
        if not any(position.is_legal(move) for move in allowed):
            return self._format(position.pass_move)
        return self._vertex_or_resign(self._generate(color, play=False, allowed=allowed))

    def _vertex_or_resign(self, move: int | None) -> str:
        return "resign" if move is None else self._format(move)

    def _generate(self, color: int, *, play: bool = True, cleanup: bool = False,
                  allowed: list[int] | None = None,
                  on_progress: Callable[[SearchResult], None] | None = None,
                  interval: float = 0.0) -> int | None:
        """Search for `color` and play the move for it (unless `play` is False); the move, or
        None to resign. `allowed` restricts the moves searched; `cleanup` to every move but the
        pass, where there is one. A game over for good (a five, no disc to place) has no move
        to search: the answer is a pass, not played."""
        try:
            position = self.engine.position(color)
        except GameError:
            return self.game.pass_move
        try:
            if cleanup:
                allowed = _non_passes(position)
            think = self.engine.genmove if play else self.engine.think
            result = think(color, on_progress=on_progress, progress_interval=interval,
                           allowed=allowed)
        except (GameError, ValueError) as exc:  # ModelError is a ValueError
            raise GtpError(str(exc)) from None
        log.info("%s: %d visits, value %+.3f, %.0f playouts/s", self._format(result.best_move),
                 result.root_visits, result.value, result.stats.playouts_per_second)
        if self._resigns(result):
            if play:
                self.halt()  # the ponder genmove started
                self.engine.undo()
            return None
        return result.best_move

    def _resigns(self, result: SearchResult) -> bool:
        """Whether to resign rather than play: the chosen move's winrate is below the
        threshold (never for a move the rules decided)."""
        if self.resign_threshold is None or result.decided_by_rules:
            return False
        return (result.value + 1.0) / 2.0 < self.resign_threshold

    def undo(self, args: tuple[str, ...]) -> str:
        try:
            self.engine.undo()
        except GameError:
            raise GtpError(CANNOT_UNDO) from None
        return ""

    # -- time -------------------------------------------------------------------------------------
    def time_settings(self, args: tuple[str, ...]) -> str:
        check_arguments(args, 3, "time_settings MAIN_TIME BYO_YOMI_TIME BYO_YOMI_STONES")
        try:
            self.engine.set_time_control(from_gtp_time_settings(*args))
        except TimeControlError as exc:
            raise syntax_error(exc) from None
        self._load_network()
        return ""

    def kgs_time_settings(self, args: tuple[str, ...]) -> str:
        try:
            self.engine.set_time_control(from_kgs_time_settings(args))
        except TimeControlError as exc:
            raise syntax_error(exc) from None
        self._load_network()
        return ""

    def _load_network(self) -> None:
        """A timed game is about to start: load the network now, off the clock, rather than
        during the first move (which the controller times). A model that fails to load is
        reported by the first genmove, as without a clock."""
        try:
            self.engine.load_network()
        except (GameError, ValueError) as exc:  # ModelError is a ValueError
            log.warning("the network could not be loaded: %s", exc)

    def time_left(self, args: tuple[str, ...]) -> str:
        """Our clock, as the controller sees it. Controllers report the colour about to move
        before its genmove; a report for the other colour is not about our clock (we think for
        whichever colour is to move), so it is checked and set aside."""
        check_arguments(args, 3, "time_left COLOR TIME STONES")
        color = _color(args[0])
        try:
            seconds, stones = float(args[1]), int(args[2])
        except ValueError:
            raise syntax_error(f"time {args[1]!r} and stones {args[2]!r} must be numbers") \
                from None
        if color == self.game.to_move:
            try:
                self.engine.clock.update_time_left(seconds, stones)
            except TimeControlError as exc:
                raise syntax_error(exc) from None
        return ""

    # -- the end of the game ----------------------------------------------------------------------
    def final_score(self, args: tuple[str, ...]) -> str:
        """The game's count at its end (`Game.final_score`). Go: the area score (komi included)
        once the dead stones are off the board (`final_status_list dead`); all stones count
        where the network has no ownership head. Othello: the disc difference. Gomoku has a
        winner, not a score (see gogui-rules_final_result)."""
        score = self.game.final_score(self.final_ownership)
        if score is None:
            raise GtpError(CANNOT_SCORE)
        if score == 0:
            return "0"
        return f"{'B' if score > 0 else 'W'}+{abs(score):g}"

    def final_ownership(self) -> np.ndarray | None:
        """Who owns each point at the end by the network's judgement (`Engine.final_ownership`),
        to find the dead stones: None without an ownership head, or when no network loads (the
        count of the board as it stands needs none; the log says why)."""
        try:
            return self.engine.final_ownership()
        except (GameError, ValueError) as exc:  # ModelError is a ValueError
            log.warning("scoring every stone as alive: %s", exc)
            return None

    # -- SGF --------------------------------------------------------------------------------------
    def printsgf(self, args: tuple[str, ...]) -> str:
        """GNU Go's `printsgf [FILE]`: the game so far as SGF, in the reply or written to FILE
        (the reply is then empty)."""
        if len(args) > 1:
            raise syntax_error("usage: printsgf [FILE]")
        game = self.game
        result = sgf_result(game) if game.is_over() else ""
        text = format_sgf(game, SgfInfo(result=result, rules=self._rules_text()))
        if not args:
            return text.rstrip("\n")
        try:
            Path(args[0]).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise GtpError(f"cannot save file: {exc.strerror or exc}") from None
        return ""

    def _rules_text(self) -> str:
        rules = self.game.rules
        return str(getattr(rules, "rule", getattr(rules, "name", rules)))

    def loadsgf(self, args: tuple[str, ...]) -> str:
        if not 1 <= len(args) <= 2:
            raise syntax_error("usage: loadsgf FILE [MOVE_NUMBER]")
        until = parse_integer(args[1], "move number") if len(args) == 2 else None
        if until is not None and until < 1:
            raise syntax_error(f"move number {until} must be >= 1")
        try:
            record = parse_sgf(_read_record(Path(args[0])))
            game = self._replay(record, until)
        except (OSError, SgfError, GameError) as exc:
            raise GtpError(f"{CANNOT_LOAD}: {exc}") from None
        if isinstance(game, AreaScored):
            self.engine.set_rules(komi=game.komi)
        self._adopt(game)
        return ""

    def _replay(self, record: SgfGame, until: int | None) -> Game:
        """The position of `record` before move number `until` (all moves if None)."""
        if record.game != self.engine.game_name:
            raise GameError(f"the record is a {record.game} game; the engine plays "
                            f"{self.engine.game_name} (set_game {record.game} first)")
        if not _nameable(record.game, record.width, record.height):
            raise GameError(f"GTP cannot name the points of a {record.width}x{record.height} "
                            "board")
        rules = dict(self.engine.rules)
        if record.komi is not None:
            rules["komi"] = record.komi
        game = make_game(record.game, record.width, record.height, **rules)
        played = 0
        for index, node in enumerate(record.nodes):
            if node.move is not None:
                if until is not None and played >= until - 1:
                    break
                game.play(node.move.move, node.move.color)
                played += 1
            if node.has_setup:
                # The root's setup is the whole starting position (Othello records list the
                # centre discs); a later node's adds to the board as it stands.
                board = np.zeros_like(game.board) if index == 0 else np.array(game.board)
                board[list(node.add_black)] = BLACK
                board[list(node.add_white)] = WHITE
                board[list(node.add_empty)] = EMPTY
                to_move = node.to_play or _next_mover(record, index) or game.to_move
                game = _set_up(game, board, to_move, rules)
            elif node.to_play is not None:
                game.set_to_move(node.to_play)
        return game

    # -- showing the board ------------------------------------------------------------------------
    def showboard(self, args: tuple[str, ...]) -> str:
        game = self.game
        lines = ["", board_diagram(game, self.vertices)]
        status = f"{COLOR_NAMES[game.to_move]} to move"
        if game.is_over():
            status = f"game over: {_result_word(game)}"
        if isinstance(game, AreaScored):
            status += f"; captures: black {game.captures(BLACK)}, white {game.captures(WHITE)}"
        lines.append(status)
        return "\n".join(lines)

    # -- analysis ---------------------------------------------------------------------------------
    def lz_analyze(self, args: tuple[str, ...]) -> Streamed:
        return self._analyze(args, lz_info, kata=False, scores=False)

    def kata_analyze(self, args: tuple[str, ...]) -> Streamed:
        return self._analyze(args, kata_info, kata=True, scores=True)

    def sabaki_analyze(self, args: tuple[str, ...]) -> Streamed:
        return self._analyze(args, sabaki_info, kata=False, scores=True)

    def lz_genmove_analyze(self, args: tuple[str, ...]) -> Streamed:
        return self._genmove_analyze(args, lz_info, kata=False, scores=False)

    def kata_genmove_analyze(self, args: tuple[str, ...]) -> Streamed:
        return self._genmove_analyze(args, kata_info, kata=True, scores=True)

    def sabaki_genmove_analyze(self, args: tuple[str, ...]) -> Streamed:
        return self._genmove_analyze(args, sabaki_info, kata=False, scores=True)

    def stop(self, args: tuple[str, ...]) -> str:
        """KataGo's `stop`: a running analysis or ponder has already stopped (every command
        stops it); nothing more to do."""
        return ""

    def _analyze(self, args: tuple[str, ...], info: InfoFormat, *, kata: bool,
                 scores: bool) -> Streamed:
        vertices = self.vertices
        try:
            request = parse_analysis(args, vertices, kata=kata)
        except GtpValueError as exc:
            raise syntax_error(exc) from None
        try:
            position = self.engine.position(request.color)
        except GameError as exc:
            raise GtpError(str(exc)) from None
        allowed = request.root_moves(position)
        if allowed is not None and not allowed:
            raise GtpError("allow/avoid leave no legal move to analyse")
        estimate = self._estimates(request, position, scores=scores)

        def start(emit: Emit) -> None:
            snapshot = _info_writer(info, vertices, request.max_moves, emit, estimate)
            try:
                self.engine.analyze(snapshot, request.interval, allowed, request.color)
            except (GameError, ValueError) as exc:
                raise GtpError(str(exc)) from None

        return Streamed(start, finish=self.halt)

    def _genmove_analyze(self, args: tuple[str, ...], info: InfoFormat, *, kata: bool,
                         scores: bool) -> Streamed:
        vertices = self.vertices
        try:
            request = parse_analysis(args, vertices, kata=kata)
        except GtpValueError as exc:
            raise syntax_error(exc) from None
        if request.filters:
            raise syntax_error("allow/avoid are for lz-analyze and kata-analyze")
        color = self.game.to_move if request.color is None else request.color
        try:
            position: Game | None = self.engine.position(color).copy()
        except GameError:
            position = None  # nothing to search: _generate answers a pass
        estimate = None if position is None else self._estimates(request, position,
                                                                 scores=scores)

        def start(emit: Emit) -> str:
            snapshot = _info_writer(info, vertices, request.max_moves, emit, estimate)
            move = self._generate(color, on_progress=snapshot, interval=request.interval)
            return f"play {self._vertex_or_resign(move)}"

        return Streamed(start)

    def _estimates(self, request: AnalysisRequest, position: Game, *,
                   scores: bool) -> Callable[[SearchResult], Estimate | None] | None:
        """What reads the score and ownership of each snapshot of a search of `position`: for
        a format that shows `scores`, with a network that has the heads (GtpError when
        `ownership true` asks for a head the network lacks); None otherwise."""
        if not scores:
            return None
        try:
            estimator = self.engine.estimator()
        except ValueError as exc:  # ModelError
            raise GtpError(str(exc)) from None
        if request.ownership and (estimator is None or not estimator.evaluator.has_ownership):
            raise GtpError("ownership is not available: the network has no ownership head")
        if estimator is None:
            return None
        root = position.copy()
        wanted = request.ownership

        def estimate(result: SearchResult) -> Estimate:
            found = self.engine.estimate(root, result, request.max_moves)
            assert found is not None
            return found if wanted else replace(found, ownership=None)

        return estimate

    # -- GoGui -------------------------------------------------------------------------------------
    def gogui_analyze_commands(self, args: tuple[str, ...]) -> str:
        return "\n".join(GOGUI_ANALYZE_COMMANDS)

    def gogui_interrupt(self, args: tuple[str, ...]) -> str:
        """Announces GoGui's interrupt: a `# interrupt` line stops a running genmove (the
        session's input thread sees it)."""
        return ""

    def rules_game_id(self, args: tuple[str, ...]) -> str:
        """The game's name as GoGui wants it: a capital, then lower case (`Go`, `Othello`)."""
        return self.game.info.title

    def rules_board_size(self, args: tuple[str, ...]) -> str:
        game = self.game
        if game.width != game.height:
            raise GtpError(f"GoGui boards are square; this one is {game.width}x{game.height}")
        return str(game.width)

    def rules_board(self, args: tuple[str, ...]) -> str:
        return "\n" + "\n".join(_stone_rows(self.game.board, self.game.width))

    def rules_legal_moves(self, args: tuple[str, ...]) -> str:
        return " ".join(self._format(int(m)) for m in self.game.legal_moves())

    def rules_side_to_move(self, args: tuple[str, ...]) -> str:
        return COLOR_NAMES[self.game.to_move]

    def rules_final_result(self, args: tuple[str, ...]) -> str:
        game = self.game
        return _result_word(game) if game.is_over() else "unknown"

    # -- from the input thread ---------------------------------------------------------------------
    def interrupt(self) -> None:
        """GoGui's `# interrupt`: end the running search now. Safe from any thread; the command
        in progress answers with what the search has found."""
        self.engine.stop()

    # -- shutting down ----------------------------------------------------------------------------
    def close(self) -> None:
        """Stop whatever runs in the background (the session is over)."""
        self.halt()


# -- rules of the protocol ------------------------------------------------------------------------
def _not_offered(game: Game) -> frozenset[str]:
    """The commands `game` does not offer. GoGui adopts the answer to `gogui-rules_board_size`
    as its board size when it attaches a program, which is right for its rules engines but not
    for a game whose controllers know the rules (Go: the size is the user's choice; GNU Go and
    KataGo have no such command). `gogui-rules_setup` tells GoGui that stones of either colour
    may be set up by playing them: not in Othello, where every disc must turn others over."""
    if game.info.controllers_know_rules:
        return frozenset({"gogui-rules_board_size", "gogui-rules_setup"})
    return frozenset() if game.info.setup_by_play else frozenset({"gogui-rules_setup"})


def board_diagram(game: Game, vertices: Vertices) -> str:
    """The board with its GTP coordinates around it, rows from the top: X black, O white."""
    digits = len(str(game.height))
    header = " " * (digits + 1) + " ".join(vertices.columns[:game.width])
    rows = [f"{vertices.y_to_row(y):>{digits}} {cells} {vertices.y_to_row(y)}"
            for y, cells in enumerate(_stone_rows(game.board, game.width))]
    return "\n".join([header, *rows, header])


def _stone_rows(board: np.ndarray, width: int) -> list[str]:
    """The rows of a board from the top, as `X` (black), `O` (white) and `.` separated by
    spaces: the format of `str(game)`, which `from_diagram` reads back."""
    return [" ".join(_STONES[int(v)] for v in board[start:start + width])
            for start in range(0, len(board), width)]


def _info_writer(info: InfoFormat, vertices: Vertices, max_moves: int | None, emit: Emit,
                 estimate: Callable[[SearchResult], Estimate | None] | None = None
                 ) -> Callable[[SearchResult], None]:
    """The search's progress callback that emits each snapshot as one `info` line (with the
    score and ownership `estimate` reads, when there is one)."""
    def write(result: SearchResult) -> None:
        shown = [m for m in result.moves if m.visits > 0]
        extra = estimate(result) if estimate is not None and shown else None
        line = info(result, vertices, max_moves, extra)
        if line:  # nothing visited yet: an empty line would end the reply
            emit(line)
    return write


def _result_word(game: Game) -> str:
    """`black`, `white` or `draw`: the winner of a finished game."""
    winner = game.winner()
    if winner is None:
        raise ValueError("the game is not over")
    return "draw" if winner == DRAW else COLOR_NAMES[winner]


def _set_up(game: Game, board: np.ndarray, to_move: int, rules: dict) -> Game:
    """A new game of `game`'s kind and size starting from `board` (SGF setup): the history
    before it is gone, as with any set-up position."""
    from_diagram = getattr(game_class(game.name), "from_diagram", None)
    if from_diagram is None:
        raise GameError(f"{game.name} positions cannot be set up, only played")
    diagram = "\n".join(_stone_rows(board, game.width))
    return from_diagram(diagram, to_move=to_move, **rules)


def _read_record(path: Path) -> str:
    """The text of an SGF file, refusing what no game record is (a device, a huge file)."""
    if not path.is_file():
        raise OSError(f"{path} is not a file")
    with path.open("rb") as stream:
        data = stream.read(MAX_SGF_BYTES + 1)
    if len(data) > MAX_SGF_BYTES:
        raise OSError(f"{path} is larger than {MAX_SGF_BYTES >> 20} MiB: not a game record")
    return data.decode("utf-8", errors="replace")


def _next_mover(record: SgfGame, index: int) -> int | None:
    """The colour of the record's first move after node `index` (who moves after a setup)."""
    for node in record.nodes[index + 1:]:
        if node.move is not None:
            return node.move.color
    return None


def _non_passes(game: Game) -> list[int] | None:
    """The legal moves other than the pass, or None when the pass is all there is."""
    moves = [int(m) for m in game.legal_moves() if m != game.pass_move]
    return moves or None


def _nameable(game: str, width: int, height: int) -> bool:
    """Whether GTP can name every point of such a board (Go letters stop at 25 columns)."""
    return vertex_convention(game).fits(width, height)


def _color(text: str) -> int:
    try:
        return parse_color(text)
    except GtpValueError as exc:
        raise syntax_error(exc) from None
