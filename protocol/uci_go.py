"""UCI's `go`: its parameters as a GUI sends them, and the limits they give the shared clock.

    go [ponder] [wtime MS] [btime MS] [winc MS] [binc MS] [movestogo N] [movetime MS]
       [nodes N] [depth N] [mate N] [infinite] [searchmoves MOVE...]

`parse_go` reads the words after `go` in any order. A keyword without a whole number after it,
or a word it does not know, is a problem (`GoParams.problems`, which the front-end reports as
`info string`) and is skipped: the search still starts, because a GUI that sent `go` waits for
`bestmove`. `searchmoves` takes every following word up to the next keyword.

The time control (`time_control`) is the shared clock's (`engine.search.clock`): our side's
`wtime`/`winc` (`btime`/`binc` for Black) is Fischer's main time and increment, with
`movestogo` a bank that must last that many moves (`MovesToGo`); `movetime` a fixed time per
move; `nodes` a cap on the root's visits under any of them (`WithVisits`). The clock's policy
turns that into a soft and a hard limit with its safety margin (Move Overhead) and the latency it
observes.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from saz.engine.search.clock import (
    Allowance,
    ClockState,
    Fischer,
    FixedTimePerMove,
    FixedVisits,
    NoTimeLimit,
    TimeControl,
)

INF = math.inf
#: The `go` keywords that take a whole number (milliseconds for the times).
NUMBER_KEYS = ("wtime", "btime", "winc", "binc", "movestogo", "movetime", "nodes", "depth", "mate")
#: Keywords that take nothing.
FLAG_KEYS = ("infinite", "ponder")
KEYWORDS = frozenset((*NUMBER_KEYS, *FLAG_KEYS, "searchmoves"))
#: Keys whose number may be negative: a clock the GUI saw run out (cutechess sends that).
_SIGNED = frozenset({"wtime", "btime"})
#: The most digits a number may have: int() refuses more than 4,300 and is slow well before.
MAX_DIGITS = 18


@dataclass(frozen=True)
class GoParams:
    """One `go` command's parameters (None: not given). Times are in milliseconds."""

    wtime: int | None = None
    btime: int | None = None
    winc: int | None = None
    binc: int | None = None
    movestogo: int | None = None
    movetime: int | None = None
    nodes: int | None = None
    depth: int | None = None
    mate: int | None = None
    infinite: bool = False
    ponder: bool = False
    #: The root moves to search, as sent (the front-end reads them in the position).
    searchmoves: tuple[str, ...] = ()
    #: What was wrong with the command (skipped words), for `info string`.
    problems: tuple[str, ...] = field(default=(), compare=False)

    @property
    def until_stopped(self) -> bool:
        """`go infinite` and `go ponder`: no `bestmove` before `stop` (or `ponderhit`)."""
        return self.infinite or self.ponder

    def clock(self, white: bool) -> tuple[int | None, int | None]:
        """Our time left and increment (ms) when we play White (`white`) or Black."""
        return (self.wtime, self.winc) if white else (self.btime, self.binc)


def _number(key: str, word: str) -> int | None:
    """`word` as the whole number `key` takes, or None if it is none (or too long to be one)."""
    digits = word[1:] if word.startswith("-") and key in _SIGNED else word
    if not (digits.isascii() and digits.isdigit()) or len(digits) > MAX_DIGITS:
        return None
    return int(word)


def _shown(word: str, limit: int = 30) -> str:
    """`word` quoted for a message, cut if long, its control characters escaped."""
    return repr(word if len(word) <= limit else word[:limit] + "...")


def parse_go(words: Sequence[str]) -> GoParams:
    """The parameters of `go WORDS...` (see the module docstring); never raises."""
    values: dict[str, object] = {}
    problems: list[str] = []
    moves: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if word in FLAG_KEYS:
            values[word] = True
        elif word in NUMBER_KEYS:
            number = _number(word, words[i]) if i < len(words) else None
            if number is None:
                got = f", got {_shown(words[i])}" if i < len(words) else ""
                problems.append(f"go {word} needs a whole number{got}; ignored")
                if i < len(words) and words[i] not in KEYWORDS:
                    i += 1
                continue
            values[word] = number
            i += 1
        elif word == "searchmoves":
            while i < len(words) and words[i] not in KEYWORDS:
                moves.append(words[i])
                i += 1
        else:
            problems.append(f"go: unknown word {_shown(word)} ignored")
    for key in ("movestogo", "nodes", "depth", "mate"):
        if values.get(key) == 0:
            problems.append(f"go {key} 0 means nothing; ignored")
            del values[key]
    return GoParams(**values, searchmoves=tuple(moves),  # type: ignore[arg-type]  # keys are fields
                    problems=tuple(problems))


# -- time controls ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class MovesToGo(TimeControl):
    """UCI's `movestogo`: `main_time` must last `moves` more moves (then the GUI's next time
    control adds to it), `increment` after each. The bank is shared over `moves + 1` moves (or
    the game's expected moves left, if fewer), so that the last move before the control keeps
    a share in reserve as every other control's bank does for its later moves."""

    main_time: float
    increment: float
    moves: int

    def __post_init__(self) -> None:
        Fischer(self.main_time, self.increment)  # the same checks: finite, >= 0
        if self.moves < 1:
            raise ValueError(f"movestogo must be >= 1, got {self.moves}")

    def start_state(self) -> ClockState:
        return ClockState(main_left=self.main_time)

    def charge(self, state: ClockState, seconds: float) -> ClockState:
        return Fischer(self.main_time, self.increment).charge(state, seconds)

    def reported(self, state: ClockState, time_left: float, count: int) -> ClockState:
        return ClockState(main_left=time_left)

    def allowance(self, state: ClockState, moves_left: float) -> Allowance:
        main = max(0.0, state.main_left)
        return Allowance(bank=main, horizon=min(moves_left, self.moves + 1.0),
                         per_move=self.increment, limit=main)


@dataclass(frozen=True, slots=True)
class WithVisits(TimeControl):
    """`control` with a cap of `visits` root visits (UCI's `nodes` beside a clock)."""

    control: TimeControl
    visits: int

    @property
    def max_visits(self) -> int | None:
        inner = self.control.max_visits
        return self.visits if inner is None else min(inner, self.visits)

    def start_state(self) -> ClockState:
        return self.control.start_state()

    def charge(self, state: ClockState, seconds: float) -> ClockState:
        return self.control.charge(state, seconds)

    def reported(self, state: ClockState, time_left: float, count: int) -> ClockState:
        return self.control.reported(state, time_left, count)

    def allowance(self, state: ClockState, moves_left: float) -> Allowance:
        return self.control.allowance(state, moves_left)


def time_control(go: GoParams, *, white: bool, until_stopped_visits: int,
                 default: TimeControl) -> TimeControl:
    """The clock's control for `go` when we play White (`white`) or Black.

    `movetime` comes first, then our clock; `nodes` caps either. A search that only `stop`
    ends (`infinite`; a front-end pondering asks for that until `ponderhit`), or one that waits
    for a depth or a mate with nothing else to end it, gets `until_stopped_visits` (the tree's
    own cap). With no
    limit at all it is `default` (the command line's: --time-per-move, --visits, or the
    engine's visits per move)."""
    control: TimeControl | None = None
    time_left, increment = go.clock(white)
    if go.movetime is not None:
        control = FixedTimePerMove(max(go.movetime, 1) / 1000.0)
    elif time_left is not None:
        main = max(time_left, 0) / 1000.0
        inc = max(increment or 0, 0) / 1000.0
        control = (MovesToGo(main, inc, go.movestogo) if go.movestogo is not None
                   else Fischer(main, inc))
    if go.infinite or (control is None and go.nodes is None
                       and (go.depth is not None or go.mate is not None)):
        control = FixedVisits(until_stopped_visits)
    if go.nodes is not None:
        return FixedVisits(go.nodes) if control is None else WithVisits(control, go.nodes)
    return default if control is None or isinstance(control, NoTimeLimit) else control


__all__ = ["GoParams", "MovesToGo", "WithVisits", "parse_go", "time_control"]
