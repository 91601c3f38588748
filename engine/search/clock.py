"""The time manager: turns a time control and our clock into a per-move thinking budget.

The engine must use the time it is given and never lose on time. This module is pure logic with an
injectable time source; the search asks it for a `MoveBudget` before each move and reports back.

* **Time controls** are small frozen value objects (`Absolute`, `CanadianByoyomi`,
  `JapaneseByoyomi`, `Fischer`, `Gomocup`, and the clockless `NoTimeLimit`, `FixedTimePerMove`,
  `FixedVisits`), built by the front-ends from GTP `time_settings` (`from_gtp_time_settings`),
  KGS `kgs-time_settings` (`from_kgs_time_settings`) and Gomocup `INFO` (`Gomocup.with_info`).
  Each one knows its rules: how its clock starts, how a move's time is charged to it, what a
  controller's `time_left` report means, and what the next move may use (`Allowance`).
* **`ClockState`** is what is left on our clock (main time, the current byo-yomi period).
* **`TimePolicy`** turns an allowance into a budget (the policy below); **`SafetyMargin`** is the
  time the controller charges us beyond what we measure.
* **`TimeManager`** keeps our clock for one game: `start_move` gives the budget and starts the
  stopwatch, `end_move` charges the move. It keeps its own account, so it stays right when the
  controller never reports our time; a report (`update_time_left`, `update_gomocup`) overrides it.

Budget policy (`TimePolicy.budget`). The rules give the next move an allowance: a *bank* of time
to share over the moves it must last (main time over the rest of the game, a Canadian period over
its stones, the Gomocup match time), a *per-move* part that cannot be saved for later (a Japanese
period, a Canadian period's share per stone while still in main time, the Fischer increment), and
a *limit*, the most this move may cost without losing or giving up a byo-yomi period.

* soft = bank / moves left + per-move part: the fair share. The search stops here when its best
  move is stable.
* The search stops before soft once its best move cannot change (`MoveBudget.stop_early`) only
  where the time it leaves is kept for later moves, or where there is no clock. A one-stone
  Canadian period (a match's "2 s a move"), a Japanese period or a fixed time per move loses
  what is left, so the search spends it deepening the line it plays, which the next move reuses.
* hard = at most `hard_factor` x soft (the search may go on towards it while the best move is
  unstable), leaving each later move the bank must cover at least 1/`hard_factor` of its fair share
  and never less than the cheapest possible move.
* Both stay within the limit after the safety margin: a move that was told `b` seconds costs at
  most `b * (1 + overrun) + latency` on the controller's clock (the search reads the clock between
  batches, and the reply travels through pipes), so budgets are `(limit - latency) / (1 + overrun)`
  at most. Gomocup gets a wider margin: its manager times the whole turn in wall time, our I/O
  and process scheduling included.
* The latency is measured, not assumed (`TimeManager`): a move's time counts from the moment its
  command arrived (`command_received`), and once its reply is out (`replied`) the time the
  search did not account for (before it started; after it stopped or its limit passed: the last
  batch, playing the move, the reply) is one observation. The margin's latency is the larger
  of the policy's and `latency_factor` x the largest of the last `LATENCY_WINDOW` observations,
  so a loaded machine shortens the budgets of the moves that follow.
* Japanese byo-yomi: a move never plans to overrun a period, however many are left.
* Canadian byo-yomi: a period's time is shared over its stones; where our own account cannot
  know where the controller's periods begin, each stone keeps to its share.
* Gomocup: both the turn limit and the match time hold; the match clock runs from process start,
  so our own account charges the start-up to the first move (a `time_left` report includes it).
* With less time than the cheapest move needs there is nothing safe left to do: every budget is at
  least `min_budget`, the least a search can answer in.

All times are in seconds (floats); `math.inf` means unlimited.
"""
from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

INF = math.inf
#: How many of the last moves' latencies the margin remembers (`TimeManager.observed_latency`).
LATENCY_WINDOW = 16


class TimeControlError(ValueError):
    """A time setting or clock report that is malformed (missing, non-numeric, negative)."""


# -- parsing helpers ----------------------------------------------------------------------------
# Protocols send text; the API takes numbers as well. Both go through these, so that a setting is
# validated once, whoever made it.
def _seconds(name: str, value: str | float, *, negative: bool = False) -> float:
    """`value` as a finite number of seconds (>= 0 unless `negative`)."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise TimeControlError(f"{name} must be a number of seconds, got {value!r}") from None
    if not math.isfinite(seconds):
        raise TimeControlError(f"{name} must be finite, got {value!r}")
    if seconds < 0 and not negative:
        raise TimeControlError(f"{name} must be >= 0, got {value!r}")
    return seconds


def _count(name: str, value: str | float, *, minimum: int | None = 0) -> int:
    """`value` as a whole number (>= `minimum` unless that is None): 5.0 is one, 5.5 and "5.0"
    are not."""
    try:
        if isinstance(value, float) and not value.is_integer():
            raise ValueError(value)
        count = int(value)
    except (TypeError, ValueError):
        raise TimeControlError(f"{name} must be a whole number, got {value!r}") from None
    if minimum is not None and count < minimum:
        raise TimeControlError(f"{name} must be >= {minimum}, got {value!r}")
    return count


def _normalise(obj: object, name: str, value: object) -> None:
    """Store the validated form of a frozen value object's field (in its `__post_init__`)."""
    object.__setattr__(obj, name, value)


# -- our clock and what the rules allow ---------------------------------------------------------
@dataclass(frozen=True)
class ClockState:
    """What is left on our clock. Which fields matter depends on the time control."""

    #: Main time left (Gomocup: match time left); `inf` when there is none to run out.
    main_left: float = INF
    #: Seconds left in the current byo-yomi period.
    period_left: float = 0.0
    #: Canadian: stones still to play in the current period; 0 while in main time.
    stones_left: int = 0
    #: Japanese: byo-yomi periods left.
    periods_left: int = 0
    #: Canadian: whether our periods begin where the controller's do. Not after main time ran
    #: out on our own account: our clock and the controller's differ by the latency we cannot
    #: measure, so the move that ended it may not have ended it on the controller's clock.
    phase_known: bool = True


@dataclass(frozen=True)
class Allowance:
    """What the rules let the next move use, before any policy (see the module docstring)."""

    #: Time to share over `horizon` moves (main time, a Canadian period, the Gomocup match).
    bank: float
    #: Moves the bank must last.
    horizon: float
    #: Time every move gets besides its share of the bank, lost if unused.
    per_move: float
    #: The most this move may cost on the controller's clock without losing (or losing a period).
    limit: float


_UNLIMITED = Allowance(bank=INF, horizon=1.0, per_move=0.0, limit=INF)


# -- time controls ------------------------------------------------------------------------------
class TimeControl(ABC):
    """How a move is limited, and the rules of its clock. Subclasses are frozen dataclasses."""

    __slots__ = ()

    @property
    def max_visits(self) -> int | None:
        """A visit count that ends every search, or None."""
        return None

    def start_state(self) -> ClockState:
        """Our clock when the game starts."""
        return ClockState()

    def charge(self, state: ClockState, seconds: float) -> ClockState:
        """Our clock after a move that cost `seconds` (a lost game shows as a negative time or no
        periods left)."""
        return state

    def reported(self, state: ClockState, time_left: float, count: int) -> ClockState:
        """Our clock as a GTP `time_left <time> <count>` report describes it; `count` is the
        stones (Canadian) or periods (Japanese) left, 0 while in main time. Clockless controls
        keep theirs: a fixed per-move limit is the user's choice."""
        return state

    @abstractmethod
    def allowance(self, state: ClockState, moves_left: float) -> Allowance:
        """What the next move may use, given our clock and the moves the game still asks of us."""


@dataclass(frozen=True, slots=True)
class NoTimeLimit(TimeControl):
    """No clock: the search runs to its own limits (its configured visits) or until stopped."""

    def allowance(self, state: ClockState, moves_left: float) -> Allowance:
        return _UNLIMITED


@dataclass(frozen=True, slots=True)
class FixedTimePerMove(TimeControl):
    """Every move may take `seconds`; unused time is not saved."""

    seconds: float

    def __post_init__(self) -> None:
        _normalise(self, "seconds", _seconds("seconds per move", self.seconds))
        if self.seconds == 0:
            raise TimeControlError("seconds per move must be > 0")

    def allowance(self, state: ClockState, moves_left: float) -> Allowance:
        return replace(_UNLIMITED, limit=self.seconds)


@dataclass(frozen=True, slots=True)
class FixedVisits(TimeControl):
    """No clock: every search stops after `visits` root visits."""

    visits: int

    def __post_init__(self) -> None:
        _normalise(self, "visits", _count("visits", self.visits, minimum=1))

    @property
    def max_visits(self) -> int | None:
        return self.visits

    def allowance(self, state: ClockState, moves_left: float) -> Allowance:
        return _UNLIMITED


@dataclass(frozen=True, slots=True)
class Absolute(TimeControl):
    """Sudden death: `main_time` for the whole game."""

    main_time: float

    def __post_init__(self) -> None:
        _normalise(self, "main_time", _seconds("main time", self.main_time))

    def start_state(self) -> ClockState:
        return ClockState(main_left=self.main_time)

    def charge(self, state: ClockState, seconds: float) -> ClockState:
        return replace(state, main_left=state.main_left - seconds)

    def reported(self, state: ClockState, time_left: float, count: int) -> ClockState:
        return ClockState(main_left=time_left)

    def allowance(self, state: ClockState, moves_left: float) -> Allowance:
        main = max(0.0, state.main_left)
        return Allowance(bank=main, horizon=moves_left, per_move=0.0, limit=main)


@dataclass(frozen=True, slots=True)
class Fischer(TimeControl):
    """`main_time`, and `increment` added to it after each of our moves."""

    main_time: float
    increment: float

    def __post_init__(self) -> None:
        _normalise(self, "main_time", _seconds("main time", self.main_time))
        _normalise(self, "increment", _seconds("increment", self.increment))

    def start_state(self) -> ClockState:
        return ClockState(main_left=self.main_time)

    def charge(self, state: ClockState, seconds: float) -> ClockState:
        left = state.main_left - seconds
        # The increment comes after the move: a flag that fell during it stays fallen.
        return replace(state, main_left=left + self.increment if left >= 0 else left)

    def reported(self, state: ClockState, time_left: float, count: int) -> ClockState:
        return ClockState(main_left=time_left)

    def allowance(self, state: ClockState, moves_left: float) -> Allowance:
        main = max(0.0, state.main_left)
        return Allowance(bank=main, horizon=moves_left, per_move=self.increment, limit=main)


@dataclass(frozen=True, slots=True)
class CanadianByoyomi(TimeControl):
    """`main_time`, then periods of `period_time` seconds, each covering `period_stones` moves
    (GTP `time_settings`, KGS `canadian`). The move during which main time runs out is the first
    stone of the first period; a period whose stones are all played starts afresh.

    Where the periods begin is known from the start of byo-yomi or from a report. When main time
    runs out on our own account it is not (see `ClockState.phase_known`), and until a report
    places us, every stone keeps within its share of a period: safe wherever periods begin.
    """

    main_time: float
    period_time: float
    period_stones: int

    def __post_init__(self) -> None:
        _normalise(self, "main_time", _seconds("main time", self.main_time))
        _normalise(self, "period_time", _seconds("byo-yomi period time", self.period_time))
        _normalise(self, "period_stones", _count("byo-yomi stones", self.period_stones, minimum=1))
        if self.period_time == 0:
            raise TimeControlError("byo-yomi period time must be > 0 (0 means absolute time)")

    def _fresh_period(self, phase_known: bool = True) -> ClockState:
        return ClockState(main_left=0.0, period_left=self.period_time,
                          stones_left=self.period_stones, phase_known=phase_known)

    def _settled(self, state: ClockState) -> ClockState:
        """Main time that has run out means the first period has begun."""
        if state.stones_left == 0 and state.main_left <= 0:
            return self._fresh_period()
        return state

    def start_state(self) -> ClockState:
        return self._settled(ClockState(main_left=self.main_time))

    def charge(self, state: ClockState, seconds: float) -> ClockState:
        if state.stones_left == 0:
            left = state.main_left - seconds
            if left > 0:
                return replace(state, main_left=left)
            # Main time ran out: the rest of the move ran in the first period.
            state, seconds = self._fresh_period(phase_known=False), -left
        period_left = state.period_left - seconds
        stones_left = state.stones_left - 1
        if period_left < 0:
            return replace(state, period_left=period_left)  # lost on time
        if stones_left == 0:
            return self._fresh_period(state.phase_known)
        return replace(state, period_left=period_left, stones_left=stones_left)

    def reported(self, state: ClockState, time_left: float, count: int) -> ClockState:
        if count == 0:
            return self._settled(ClockState(main_left=time_left))
        return ClockState(main_left=0.0, period_left=time_left, stones_left=count)

    def allowance(self, state: ClockState, moves_left: float) -> Allowance:
        per_stone = self.period_time / self.period_stones
        if state.stones_left == 0:
            # Main time may run over into the first period by one stone's share of it: the rest
            # of that period still gives each of its other stones at least that share.
            main = max(0.0, state.main_left)
            return Allowance(bank=main, horizon=moves_left, per_move=per_stone,
                             limit=main + per_stone)
        if not state.phase_known:
            return Allowance(bank=0.0, horizon=1.0, per_move=per_stone, limit=per_stone)
        period = max(0.0, state.period_left)
        return Allowance(bank=period, horizon=state.stones_left, per_move=0.0, limit=period)


@dataclass(frozen=True, slots=True)
class JapaneseByoyomi(TimeControl):
    """`main_time`, then `periods` periods of `period_time` seconds (KGS `byoyomi`): each move
    must be played within the current period; overrunning a period uses it up, and overrunning
    the last one loses."""

    main_time: float
    period_time: float
    periods: int

    def __post_init__(self) -> None:
        _normalise(self, "main_time", _seconds("main time", self.main_time))
        _normalise(self, "period_time", _seconds("byo-yomi period time", self.period_time))
        _normalise(self, "periods", _count("byo-yomi periods", self.periods, minimum=1))
        if self.period_time == 0:
            raise TimeControlError("byo-yomi period time must be > 0 (0 means absolute time)")

    def start_state(self) -> ClockState:
        return ClockState(main_left=self.main_time, period_left=self.period_time,
                          periods_left=self.periods)

    def charge(self, state: ClockState, seconds: float) -> ClockState:
        left = state.main_left - seconds
        if left > 0:
            return replace(state, main_left=left)
        overrun = -left if state.main_left > 0 else seconds
        used = 0
        if overrun >= state.period_left:
            used = 1 + int((overrun - state.period_left) // self.period_time)
        return ClockState(main_left=0.0, period_left=self.period_time,
                          periods_left=state.periods_left - used)

    def reported(self, state: ClockState, time_left: float, count: int) -> ClockState:
        if count == 0:
            return replace(state, main_left=time_left)
        return ClockState(main_left=0.0, period_left=time_left, periods_left=count)

    def allowance(self, state: ClockState, moves_left: float) -> Allowance:
        # A period is per-move time: it renews after every move played within it, and the policy
        # never plans to overrun one, however many are left.
        period = max(0.0, state.period_left) if state.periods_left > 0 else 0.0
        main = max(0.0, state.main_left)
        return Allowance(bank=main, horizon=moves_left, per_move=period, limit=main + period)


#: The Gomocup INFO keys that concern time.
GOMOCUP_TIME_KEYS = frozenset({"timeout_turn", "timeout_match", "time_left"})
#: Gomocup's `time_left` when the match time is unlimited (the largest 32-bit int, in ms).
_GOMOCUP__UNLIMITED_MS = 2147483647


@dataclass(frozen=True, slots=True)
class Gomocup(TimeControl):
    """The Gomocup limits, as INFO announces them (None: not announced).

    `turn_limit` (`timeout_turn`) bounds every move; 0 means "play as fast as possible".
    `match_limit` (`timeout_match`) bounds the whole match, counted from process start but not
    during the opponent's turns; 0 means no limit. `time_left` is the match time left as last
    reported (`inf`: unlimited). The manager times everything in wall time, our I/O included.
    """

    turn_limit: float | None = None
    match_limit: float | None = None
    time_left: float | None = None

    def __post_init__(self) -> None:
        if self.turn_limit is not None:
            _normalise(self, "turn_limit", _seconds("timeout_turn", self.turn_limit))
        if self.match_limit is not None:
            _normalise(self, "match_limit", _seconds("timeout_match", self.match_limit))
        if self.time_left is not None and self.time_left != INF:
            _normalise(self, "time_left", _seconds("time_left", self.time_left, negative=True))

    def with_info(self, key: str, value: str | float) -> Gomocup:
        """These limits after `INFO key value` (whole milliseconds, as the protocol sends them;
        `time_left` may be negative when we have overrun)."""
        if key not in GOMOCUP_TIME_KEYS:
            raise TimeControlError(f"INFO {key} is not a time setting; expected one of "
                                   f"{', '.join(sorted(GOMOCUP_TIME_KEYS))}")
        ms = _count(key, value, minimum=None if key == "time_left" else 0)
        if key == "timeout_turn":
            return replace(self, turn_limit=ms / 1000.0)
        if key == "timeout_match":
            return replace(self, match_limit=ms / 1000.0)
        return replace(self, time_left=INF if ms == _GOMOCUP__UNLIMITED_MS else ms / 1000.0)

    @property
    def match_time(self) -> float:
        """The match time, `inf` when unlimited or not announced."""
        return self.match_limit if self.match_limit else INF

    def start_state(self) -> ClockState:
        return ClockState(main_left=self.time_left if self.time_left is not None
                          else self.match_time)

    def charge(self, state: ClockState, seconds: float) -> ClockState:
        return replace(state, main_left=state.main_left - seconds)

    def reported(self, state: ClockState, time_left: float, count: int) -> ClockState:
        raise TimeControlError("GTP time_left does not apply to Gomocup; use INFO time_left")

    def allowance(self, state: ClockState, moves_left: float) -> Allowance:
        match = max(0.0, state.main_left)
        turn = INF if self.turn_limit is None else self.turn_limit
        return Allowance(bank=match, horizon=moves_left, per_move=0.0, limit=min(turn, match))


# -- protocol time settings ---------------------------------------------------------------------
def from_gtp_time_settings(main_time: str | float, byo_yomi_time: str | float,
                           byo_yomi_stones: str | float) -> TimeControl:
    """The control of GTP `time_settings main byo stones` (Canadian byo-yomi): a period time
    with no stones means no time limit, no period time means absolute time."""
    main = _seconds("main time", main_time)
    byo = _seconds("byo-yomi time", byo_yomi_time)
    stones = _count("byo-yomi stones", byo_yomi_stones)
    if byo > 0 and stones == 0:
        return NoTimeLimit()
    if byo == 0:
        return Absolute(main)
    return CanadianByoyomi(main, byo, stones)


def from_kgs_time_settings(args: Sequence[str]) -> TimeControl:
    """The control of `kgs-time_settings` arguments: `none`, `absolute M`, `byoyomi M P N`
    (Japanese) or `canadian M P S`. Byo-yomi without periods or period time is absolute time."""
    if not args:
        raise TimeControlError("kgs-time_settings needs a time system: none, absolute, byoyomi "
                               "or canadian")
    system, values = args[0].lower(), list(args[1:])
    arity = {"none": 0, "absolute": 1, "byoyomi": 3, "canadian": 3}
    if system not in arity:
        raise TimeControlError(f"unknown time system {args[0]!r}; expected none, absolute, "
                               "byoyomi or canadian")
    if len(values) != arity[system]:
        raise TimeControlError(f"kgs-time_settings {system} needs {arity[system]} values, "
                               f"got {len(values)}")
    if system == "none":
        return NoTimeLimit()
    if system == "absolute":
        return Absolute(_seconds("main time", values[0]))
    if system == "canadian":
        return from_gtp_time_settings(*values)
    main = _seconds("main time", values[0])
    period = _seconds("byo-yomi period time", values[1])
    periods = _count("byo-yomi periods", values[2])
    if period == 0 or periods == 0:
        return Absolute(main)
    return JapaneseByoyomi(main, period, periods)


# -- the policy ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class SafetyMargin:
    """What a move costs on the controller's clock beyond the budget it was given."""

    #: Seconds per move that we cannot measure: reading the command, writing the reply, the pipe,
    #: the controller stopping its clock. Our own account charges it on every move.
    latency: float
    #: Fraction of a budget the search may run past it: it reads the clock between batches, and
    #: the scheduler or a garbage collection may pause it.
    overrun: float

    def __post_init__(self) -> None:
        if not (self.latency >= 0 and self.overrun >= 0):
            raise ValueError("safety margins must be >= 0")

    def cost(self, budget: float) -> float:
        """The most a move told `budget` seconds costs on the controller's clock."""
        return budget * (1.0 + self.overrun) + self.latency

    def budget_within(self, limit: float) -> float:
        """The largest budget whose cost stays within `limit` (negative if none does)."""
        return (limit - self.latency) / (1.0 + self.overrun)


@dataclass(frozen=True)
class MoveBudget:
    """How long one search may think, in seconds from `TimeManager.start_move`."""

    #: Stop here when the best move is stable.
    soft: float
    #: Never think past this.
    hard: float
    #: Stop after this many root visits (FixedVisits), or None.
    max_visits: int | None = None
    #: Whether the search may stop before `soft` once its best move cannot change. It may when
    #: the time it leaves stays on the clock for later moves (main time, the later stones of a
    #: Canadian period, the Gomocup match time) or when there is no clock (it saves wall time).
    #: Time that is lost unused (a period's last stone, a Japanese period, a fixed time per
    #: move) is better spent deepening the line it plays: the next move reuses that subtree.
    stop_early: bool = True

    def __post_init__(self) -> None:
        if not 0 <= self.soft <= self.hard:
            raise ValueError(f"a budget needs 0 <= soft <= hard, got {self.soft}, {self.hard}")

    @property
    def unlimited(self) -> bool:
        """No clock and no visit count: the search runs to its own limits or until stopped."""
        return self.hard == INF and self.max_visits is None


@dataclass(frozen=True)
class TimePolicy:
    """How an allowance becomes a budget (the policy is described in the module docstring)."""

    margin: SafetyMargin = SafetyMargin(latency=0.05, overrun=0.02)
    #: The Gomocup manager times the whole turn in wall time; Python's start and pipes included.
    gomocup_margin: SafetyMargin = SafetyMargin(latency=0.15, overrun=0.05)
    #: The search may think up to this multiple of its fair share while its best move is unstable.
    hard_factor: float = 2.5
    #: A bank is never planned over fewer moves than this, whatever the estimate says: games
    #: outlast estimates, and the last moves of a long game deserve time too.
    min_moves_left: float = 10.0
    #: The least budget given: about one batch of the network, to answer at all.
    min_budget: float = 0.01
    #: The margin's latency is this multiple of the largest one observed lately: a pause seen
    #: once may come back longer, and what comes before our input thread wakes is not seen.
    latency_factor: float = 1.5
    #: The latency assumed until a reply has been measured: the first move of a process pays
    #: for what no later one does (the first batch of threads, caches filling).
    initial_latency: float = 0.1

    def __post_init__(self) -> None:
        if not self.hard_factor >= 1:
            raise ValueError("hard_factor must be >= 1")
        if not self.min_moves_left >= 1:
            raise ValueError("min_moves_left must be >= 1")
        if not self.min_budget > 0:
            raise ValueError("min_budget must be > 0")
        if not self.latency_factor >= 1:
            raise ValueError("latency_factor must be >= 1")

    def margin_for(self, control: TimeControl) -> SafetyMargin:
        return self.gomocup_margin if isinstance(control, Gomocup) else self.margin

    def budget(self, control: TimeControl, state: ClockState, moves_left: float,
               latency: float = 0.0) -> MoveBudget:
        """The budget of our next move under `control`, with our clock at `state` and about
        `moves_left` of our own moves still to play (`expected_moves_left`); `latency` is the
        latency observed lately, used where it exceeds the margin's own."""
        if not moves_left > 0:
            raise ValueError(f"moves_left must be > 0, got {moves_left}")
        allowed = control.allowance(state, max(moves_left, self.min_moves_left))
        margin = self.margin_for(control)
        if latency > margin.latency:
            margin = replace(margin, latency=latency)
        share = allowed.bank / allowed.horizon
        soft = share + allowed.per_move
        spendable = allowed.limit
        if allowed.bank != INF and allowed.horizon > 1:
            # Every later move the bank covers keeps 1/hard_factor of its share, and at least
            # what the cheapest move costs, less what its own per-move time pays for.
            later = max(share / self.hard_factor, margin.cost(self.min_budget))
            reserve = (allowed.horizon - 1) * max(0.0, later - allowed.per_move)
            spendable = min(spendable, allowed.bank + allowed.per_move - reserve)
        hard = min(self.hard_factor * soft, margin.budget_within(spendable))
        hard = max(self.min_budget, hard)
        soft = max(self.min_budget, min(soft, hard))
        keeps_unused = 0 < allowed.bank < INF and allowed.horizon > 1
        return MoveBudget(soft=soft, hard=hard, max_visits=control.max_visits,
                          stop_early=keeps_unused or allowed.limit == INF)


# -- how long a game goes on --------------------------------------------------------------------
def expected_moves_left(plies_left: float) -> float:
    """Our own moves still to play, counting this one, when the game has about `plies_left`
    moves to go by both sides (`Game.plies_left`, each game's own estimate): every other one is
    ours, starting now."""
    if not plies_left >= 0:
        raise ValueError(f"plies_left must be >= 0, got {plies_left}")
    return float(max(1, math.ceil(plies_left / 2)))


# -- the manager --------------------------------------------------------------------------------
class TimeManager:
    """Our clock in one game, and the budget of each of our moves.

    Per move: `start_move` (the budget; starts the stopwatch), `elapsed` while searching,
    `end_move` (charges the move to our own account). Between moves the controller may report
    our time (`update_time_left`, `update_gomocup`); a report replaces our account. Report only
    our own colour's time. `set_control` starts a game's clock afresh. Not thread-safe: the
    engine's command thread owns it.
    """

    def __init__(self, control: TimeControl | None = None, *, policy: TimePolicy | None = None,
                 now: Callable[[], float] = time.monotonic,
                 started_at: float | None = None) -> None:
        """`now` is the clock (injectable for tests); `started_at` the process start on that
        clock (default: now), which Gomocup charges to the match."""
        self._now = now
        self._policy = policy if policy is not None else TimePolicy()
        self._started_at = now() if started_at is None else started_at
        self._startup_pending = True
        self._move_start: float | None = None
        #: When the command now being executed arrived (`command_received`), if we were told.
        self._received: float | None = None
        #: The last move's (start, the latest its search was allowed to stop, when it did), from
        #: `end_move` until `replied` turns it into an observation.
        self._unreplied: tuple[float, float, float] | None = None
        #: The latest the move in progress may stop (its start plus its hard budget).
        self._hard_at: float = INF
        #: Latencies observed on the last moves (seconds), newest last.
        self._latencies: deque[float] = deque(maxlen=LATENCY_WINDOW)
        self._control: TimeControl
        self._state: ClockState
        self.set_control(control if control is not None else NoTimeLimit())

    @property
    def control(self) -> TimeControl:
        return self._control

    @property
    def policy(self) -> TimePolicy:
        return self._policy

    @property
    def state(self) -> ClockState:
        """Our clock as we account for it (or as last reported)."""
        return self._state

    def set_control(self, control: TimeControl) -> None:
        """Play under `control` from now on, with its clock reset to the start of a game."""
        if not isinstance(control, TimeControl):
            raise TypeError(f"expected a TimeControl, got {control!r}")
        self._control = control
        self._state = control.start_state()

    def update_time_left(self, time_left: str | float, stones_or_periods: str | float) -> None:
        """GTP `time_left <our colour> <time> <count>`: `count` is the stones (Canadian) or
        periods (Japanese, as KGS sends) left in byo-yomi, 0 in main time.

        A report under `NoTimeLimit` means the controller keeps a clock that `time_settings`
        never described: we adopt the one the report implies (sudden death, or a Canadian period
        of `count` stones) rather than ignore it.
        """
        seconds = _seconds("time_left", time_left, negative=True)
        count = _count("time_left stones", stones_or_periods)
        if isinstance(self._control, NoTimeLimit):
            self.set_control(CanadianByoyomi(0.0, seconds, count) if count > 0 and seconds > 0
                             else Absolute(max(0.0, seconds)))
        self._state = self._control.reported(self._state, seconds, count)

    def update_gomocup(self, key: str, value: str | float) -> None:
        """Gomocup `INFO key value` for a key in `GOMOCUP_TIME_KEYS` (milliseconds).

        A `time_left` report replaces our account of the match time. So does a new
        `timeout_match` before any report: the limits are announced before the first move and
        never change during a tournament match.
        """
        current = self._control if isinstance(self._control, Gomocup) else None
        updated = (current or Gomocup()).with_info(key, value)
        self._control = updated
        if current is None or key == "time_left" or (key == "timeout_match"
                                                     and updated.time_left is None):
            self._state = updated.start_state()

    @property
    def observed_latency(self) -> float:
        """`latency_factor` x the largest latency of the last moves (0 before any reply was
        measured): what the account charges each move beyond the policy's margin."""
        return self._policy.latency_factor * max(self._latencies, default=0.0)

    @property
    def latency_reserve(self) -> float:
        """The latency a budget keeps back beyond the policy's margin: the observed one, or the
        policy's `initial_latency` before any reply was measured."""
        if not self._latencies:
            return self._policy.initial_latency
        return self.observed_latency

    def command_received(self, at: float) -> None:
        """The controller's command now being executed arrived at `at` (on this manager's
        clock): a move it asks for is timed from then, as the controller times it."""
        self._received = at

    def start_move(self, moves_left_estimate: float) -> MoveBudget:
        """Start thinking on a move: its budget given about `moves_left_estimate` of our own
        moves still to play (see `expected_moves_left`), in seconds from now. The move started
        when its command arrived, if `command_received` said so: the time since is deducted."""
        if self._move_start is not None:
            raise RuntimeError("start_move while a move is in progress; call end_move first")
        now = self._now()
        start = now if self._received is None else min(self._received, now)
        self._received = None
        if self._startup_pending and isinstance(self._control, Gomocup):
            # The match clock ran while the process started; a time_left report counts it.
            if self._control.time_left is None:
                self._state = self._control.charge(self._state, start - self._started_at)
            self._startup_pending = False
        budget = self._policy.budget(self._control, self._state, moves_left_estimate,
                                     self.latency_reserve)
        self._move_start = start
        self._hard_at = start + budget.hard
        gone = now - start
        if gone > 0 and budget.hard != INF:
            least = self._policy.min_budget
            hard = max(least, budget.hard - gone)
            budget = replace(budget, soft=max(least, min(budget.soft - gone, hard)), hard=hard)
        return budget

    def elapsed(self) -> float:
        """Seconds since `start_move`."""
        if self._move_start is None:
            raise RuntimeError("no move in progress")
        return self._now() - self._move_start

    def end_move(self) -> float:
        """The move is played: charge the time it took, plus the latency the controller's clock
        sees, to our own account; return the time measured."""
        spent = self.elapsed()
        start, self._move_start = self._move_start, None
        assert start is not None
        self._unreplied = (start, self._hard_at, start + spent)
        latency = max(self._policy.margin_for(self._control).latency, self.observed_latency)
        self._state = self._control.charge(self._state, spent + latency)
        return spent

    def replied(self, at: float) -> None:
        """The reply to the last command went out at `at`: if it was a move, the time its
        search did not account for becomes an observation of the latency."""
        if self._unreplied is None:
            return
        _, hard_at, stopped = self._unreplied
        self._unreplied = None
        self._latencies.append(max(0.0, at - min(stopped, hard_at)))


__all__ = [
    "GOMOCUP_TIME_KEYS",
    "Absolute",
    "Allowance",
    "CanadianByoyomi",
    "ClockState",
    "Fischer",
    "FixedTimePerMove",
    "FixedVisits",
    "Gomocup",
    "JapaneseByoyomi",
    "MoveBudget",
    "NoTimeLimit",
    "SafetyMargin",
    "TimeControl",
    "TimeControlError",
    "TimeManager",
    "TimePolicy",
    "expected_moves_left",
    "from_gtp_time_settings",
    "from_kgs_time_settings",
]
