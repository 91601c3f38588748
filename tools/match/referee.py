"""One refereed game between two engines, whatever protocol they speak.

The referee keeps its own copy of the game (`engine/games`), so the rules are the engine's, not
the contestants': it asks the side to move for a move (`tools/match/adapters.py`), times it against
that side's clock (`tools/match/time_control.py`), checks that it is legal and plays it. How a game
ends, and the `RE` its record gets:

| reason       | when                                                         | RE          |
|--------------|--------------------------------------------------------------|-------------|
| `score`      | Go: two passes in a row, Tromp-Taylor area score with komi   | `B+3.5`     |
|              | Othello: neither side can move; the disc difference          | `W+10`, `0` |
| `five`       | Gomoku: five (or more, under freestyle) in a row             | `B+`        |
| `draw`       | Gomoku: the board is full without a five                     | `0`         |
| `checkmate`  | chess: the side to move is mated                             | `1-0`       |
| `stalemate`, `threefold repetition`, `fifty-move rule`, `insufficient material`: chess's    |
|              | draws by the rules                                           | `1/2-1/2`   |
| `move limit` | `max_plies` moves played: Go scored as it stands, else drawn | `B+3.5`,`0` |
| `resign`     | the engine resigned (GTP `resign`)                           | `W+R`       |
| `time`       | the move came after the clock's time and the margin, or not  | `W+T`       |
|              | at all (a hang: the engine is killed)                        |             |
| `illegal`    | a move the rules forbid (an Othello pass while a disc can be | `W+F`       |
|              | placed), an answer that is no move, a refused legal move     |             |
| `crash`      | the engine exited, closed its output, or could not start     | `W+F`       |

Go's passes are moves like any other: the engines are asked and the referee ends the game after
two in a row; `final_score` is never asked (a contestant's own count is not trusted). Othello's
pass is forced, never chosen: a side with no legal disc is not asked, the referee plays its pass.
A game recorded in PGN (chess: `records.games_suffix`) has PGN's result instead of SGF's RE:
`1-0` (White won), `0-1`, `1/2-1/2`, however the game ended (the reason says how); White moves
first there, so the colour that moves first is not always BLACK.
"""
from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from saz.engine.games import BLACK, DRAW, WHITE, Game, game_class, new_game
from saz.engine.games.base import Termination
from saz.protocol.sgf_writer import sgf_result
from saz.tools.match.adapters import (
    EngineAdapter,
    EngineCrashed,
    EngineFailure,
    EngineHung,
    EngineSpec,
    GameSetup,
    open_engine,
)
from saz.tools.match.pgn import pgn_result
from saz.tools.match.records import PGN_SUFFIX, games_suffix
from saz.tools.match.time_control import Clock

T = TypeVar("T")


class Reason(enum.Enum):
    """Why a game ended (see the module docstring)."""

    SCORE = "score"
    FIVE = "five"
    DRAW = "draw"
    CHECKMATE = "checkmate"
    STALEMATE = "stalemate"
    REPETITION = "threefold repetition"
    FIFTY_MOVES = "fifty-move rule"
    INSUFFICIENT_MATERIAL = "insufficient material"
    MOVE_LIMIT = "move limit"
    RESIGN = "resign"
    TIME = "time"
    ILLEGAL = "illegal"
    CRASH = "crash"


#: The reason of each way the rules end a game.
_REASONS = {Termination.SCORE: (Reason.SCORE, ""), Termination.FIVE: (Reason.FIVE, "five in a row"),
            Termination.BOARD_FULL: (Reason.DRAW, "the board is full"),
            Termination.CHECKMATE: (Reason.CHECKMATE, ""),
            Termination.STALEMATE: (Reason.STALEMATE, ""),
            Termination.REPETITION: (Reason.REPETITION, ""),
            Termination.FIFTY_MOVES: (Reason.FIFTY_MOVES, ""),
            Termination.INSUFFICIENT_MATERIAL: (Reason.INSUFFICIENT_MATERIAL, "")}

#: The SGF RE suffix of the reasons that end a game early.
_FORFEIT_SUFFIX = {Reason.RESIGN: "R", Reason.TIME: "T", Reason.ILLEGAL: "F", Reason.CRASH: "F"}


@dataclass(frozen=True)
class GameRecord:
    """A finished game: the moves (the referee's `game`), who played, who won and why."""

    game: Game
    black: str
    white: str
    #: BLACK, WHITE or DRAW.
    winner: int
    reason: Reason
    #: SGF's RE: B+3.5, W+R, B+T, W+F, B+, 0; PGN's result (1-0, 0-1, 1/2-1/2) for a game
    #: recorded in PGN.
    result: str
    #: What happened, in words (the illegal move, the engine's last words).
    detail: str
    #: How many of the moves were the opening's, played by the referee.
    opening_plies: int
    #: Seconds each side used, and its slowest move.
    seconds: dict[int, float]
    slowest: dict[int, float]
    #: Each engine's exit status after the game (None: killed after a failure, or never
    #: started; negative: ended by that signal).
    exit_status: dict[int, int | None]
    #: Each engine-chosen move's seconds and what its engine said of it (a UCI score), by
    #: ply (0-based; the opening's plies are not there).
    move_seconds: dict[int, float] = field(default_factory=dict)
    move_notes: dict[int, str] = field(default_factory=dict)

    def player(self, color: int) -> str:
        return self.black if color == BLACK else self.white

    @property
    def winner_name(self) -> str | None:
        """The winning engine's name; None for a draw."""
        return None if self.winner == DRAW else self.player(self.winner)

    def points_of(self, name: str) -> float:
        """The points the engine called `name` scored: 1, 0.5 or 0."""
        if self.winner == DRAW:
            return 0.5
        return 1.0 if self.player(self.winner) == name else 0.0


def new_position(setup: GameSetup, opening: Sequence[int] = (), start: str | None = None
                 ) -> Game:
    """The game of `setup` after the `opening` moves (IllegalMoveError if one is illegal),
    played from `start` (a FEN: where the game sets its position up from one; None: the usual
    start). GameError for a start the game cannot set up."""
    if start is None:
        game = new_game(setup.game, setup.width, setup.height, **setup.rules)
    else:
        game = game_class(setup.game)(setup.width, setup.height, **setup.rules, fen=start)
    for move in opening:
        game.play(move)
    return game


class _Forfeit(Exception):
    """The side `color` has lost the game before its end by the rules."""

    def __init__(self, color: int, reason: Reason, detail: str) -> None:
        super().__init__(detail)
        self.color, self.reason, self.detail = color, reason, detail


def play_game(setup: GameSetup, black: EngineSpec, white: EngineSpec,
              opening: Sequence[int] = (), *, margin: float = 0.5,
              max_plies: int | None = None, start: str | None = None) -> GameRecord:
    """Referee one game from the `opening` moves (played by the referee, told to the engines
    with the first move they are asked for), themselves from `start` (a FEN; None: the usual
    start). `max_plies` bounds the game's length (default: the game's `max_length`, four plies
    a point). SetupRefused, after both engines are ended, when one refuses the settings."""
    game = new_position(setup, opening, start)
    limit = max_plies if max_plies is not None else game.max_length
    specs = {BLACK: black, WHITE: white}
    adapters = {color: open_engine(spec, setup) for color, spec in specs.items()}
    clocks = {color: Clock(setup.time_control, margin) for color in specs}
    failed: set[int] = set()
    exit_status: dict[int, int | None] = {BLACK: None, WHITE: None}
    seconds: dict[int, float] = {}
    notes: dict[int, str] = {}
    try:
        try:
            for color, adapter in adapters.items():
                if not clocks[color].charge_setup(_run(color, adapter.start)):
                    raise _Forfeit(color, Reason.TIME, f"{adapter.name} used "
                                   f"{clocks[color].used:.2f} s to start")
            reason, detail = _play(game, adapters, clocks, limit, seconds, notes)
            winner = game.winner() if reason is not Reason.MOVE_LIMIT else _adjudicate(game)
            assert winner is not None
        except _Forfeit as forfeit:
            failed.add(forfeit.color)
            reason, detail, winner = forfeit.reason, forfeit.detail, -forfeit.color
    finally:
        for color, adapter in adapters.items():
            if color in failed:
                adapter.kill()
            else:
                try:
                    exit_status[color] = adapter.close()
                except OSError:
                    adapter.kill()
    return GameRecord(game, black.name, white.name, winner, reason,
                      _result(setup, game, winner, reason), detail, len(opening),
                      {c: clocks[c].used for c in clocks}, {c: clocks[c].slowest for c in clocks},
                      exit_status, seconds, notes)


def _play(game: Game, adapters: dict[int, EngineAdapter], clocks: dict[int, Clock],
          limit: int, seconds: dict[int, float], notes: dict[int, str]) -> tuple[Reason, str]:
    """Play the game to its end by the rules or the move limit (a `_Forfeit` otherwise)."""
    while not game.is_over():
        if len(game.moves) >= limit:
            return Reason.MOVE_LIMIT, f"{limit} moves played"
        color = game.to_move
        if game.passes_implicitly and game.legal_moves().tolist() == [game.pass_move]:
            game.play(game.pass_move)  # forced: the side is not asked
            continue
        adapter, clock = adapters[color], clocks[color]
        answer = _run(color, adapter.genmove, game, clock, clocks[-color])
        seconds[len(game.moves)] = answer.seconds
        if answer.note:
            notes[len(game.moves)] = answer.note
        if not clock.charge(answer.seconds):
            raise _Forfeit(color, Reason.TIME, f"{adapter.name} took {answer.seconds:.2f} s "
                           f"for move {len(game.moves) + 1} ({clock.control}, margin "
                           f"{clock.margin:g} s)")
        if answer.move is None:
            raise _Forfeit(color, Reason.RESIGN, f"{adapter.name} resigned")
        if not game.is_legal(answer.move):
            raise _Forfeit(color, Reason.ILLEGAL, f"{adapter.name} played the illegal move "
                           f"{answer.text} (move {len(game.moves) + 1})")
        game.play(answer.move)
    outcome = game.outcome()
    assert outcome is not None
    return _REASONS[outcome.termination]


def _run(color: int, call: Callable[..., T], *args: Any) -> T:
    """`call(*args)`, an engine's failure turned into the loss of the game by `color`."""
    try:
        return call(*args)
    except EngineFailure as failure:
        reason = (Reason.CRASH if isinstance(failure, EngineCrashed) else
                  Reason.TIME if isinstance(failure, EngineHung) else Reason.ILLEGAL)
        raise _Forfeit(color, reason, str(failure)) from None


def _adjudicate(game: Game) -> int:
    """The winner of a game stopped at the move limit, as the game counts it (Go by area, the
    others a draw: `Game.stopped_winner`)."""
    return game.stopped_winner()


def _result(setup: GameSetup, game: Game, winner: int, reason: Reason) -> str:
    """SGF's RE of a finished game, or PGN's result for a game recorded in PGN."""
    if games_suffix(setup.game) == PGN_SUFFIX:
        return pgn_result(winner)
    return sgf_result(game, winner, _FORFEIT_SUFFIX.get(reason, ""))


__all__ = ["GameRecord", "Reason", "new_position", "play_game"]
