"""The time control of a match (`saz match --tc`) and each side's clock under it.

Three forms, written as on the command line (seconds):

* `BASE+INC` (Fischer), e.g. `5+0.1`: BASE seconds for the whole game, INC added after each
  move. GTP engines get `time_settings BASE 0 0` (absolute time) and, before every genmove,
  `time_left COLOUR SECONDS 0` with the increments included; Gomocup brains get
  `INFO timeout_match` and `INFO timeout_turn` (both BASE) and `INFO time_left` before each turn.
* `move=S`, e.g. `move=2`: S seconds for every move, nothing carried over. GTP engines get
  Canadian byo-yomi of one stone per period, `time_settings 0 S 1` (and `time_left COLOUR S 1`);
  Gomocup brains `INFO timeout_turn` S and `INFO timeout_match 0` (no match limit).
* `BASE+INC,move=S`: both limits at once, as Gomocup tournaments play (`timeout_match` BASE,
  `timeout_turn` S). GTP has no such control: its engines get the Fischer part.

Plain `time_settings` expresses the GTP controls exactly, so `kgs-time_settings` adds nothing and
is not sent. The referee measures each move from the command's last byte written to the answer's
arrival, so the pipes and the engine's own I/O count against it; a Gomocup brain's match time
also pays for its start-up (process creation to START's OK), as Gomocup managers count it.
`margin` seconds past a limit are forgiven (process scheduling on a loaded machine); beyond them
the move loses on time.
"""
from __future__ import annotations

import math
from dataclasses import dataclass


class MatchTimeControlError(ValueError):
    """Text that is not a time control `saz match` knows."""


@dataclass(frozen=True)
class MatchTimeControl:
    """A game clock (`base` + `increment`, Fischer), a limit per move (`per_move`), or both."""

    #: Seconds for the whole game; 0: no game clock (only the limit per move).
    base: float = 0.0
    increment: float = 0.0
    #: Seconds any one move may take; None: no such limit.
    per_move: float | None = None

    def __post_init__(self) -> None:
        numbers = (self.base, self.increment, self.per_move or 0.0)
        if not all(math.isfinite(n) and n >= 0 for n in numbers):
            raise MatchTimeControlError(f"times are finite and not negative: {self!r}")
        if self.per_move is not None and self.per_move <= 0:
            raise MatchTimeControlError("a time per move is a positive number of seconds")
        if self.base <= 0 and (self.per_move is None or self.increment):
            raise MatchTimeControlError("a game clock needs a positive base time")

    @classmethod
    def parse(cls, text: str) -> MatchTimeControl:
        """`BASE+INC`, `move=S` or `BASE+INC,move=S` (see the module docstring)."""
        parts = text.strip().lower().replace(" ", "").split(",")
        limits = [part.removeprefix("move=") for part in parts if part.startswith("move=")]
        clocks = [part for part in parts if not part.startswith("move=")]
        try:
            if len(limits) > 1 or len(clocks) > 1 or not all(parts):
                raise ValueError
            base, plus, increment = clocks[0].partition("+") if clocks else ("0", "+", "0")
            if not plus:
                raise ValueError
            return cls(float(base), float(increment), float(limits[0]) if limits else None)
        except ValueError as exc:
            if isinstance(exc, MatchTimeControlError):
                raise
            raise MatchTimeControlError(f"{text!r} is not a time control: use BASE+INC seconds "
                                   "(e.g. 5+0.1), move=SECONDS (e.g. move=2), or both "
                                   "(5+0,move=0.2)") from None

    @property
    def has_game_clock(self) -> bool:
        return self.base > 0

    def gtp_settings(self) -> str:
        """The GTP command that announces this control (the game clock when there is one)."""
        if self.has_game_clock:
            return f"time_settings {_number(self.base)} 0 0"
        return f"time_settings 0 {_number(self.per_move or 0.0)} 1"

    def gomocup_limits(self) -> dict[str, int]:
        """The INFO keys that announce this control (milliseconds; timeout_match 0: none)."""
        turn = self.per_move if self.per_move is not None else self.base
        return {"timeout_turn": _ms(turn), "timeout_match": _ms(self.base)}

    def __str__(self) -> str:
        parts = []
        if self.has_game_clock:
            parts.append(f"{_number(self.base)}+{_number(self.increment)}")
        if self.per_move is not None:
            parts.append(f"move={_number(self.per_move)}")
        return ",".join(parts)


def _number(seconds: float) -> str:
    return f"{seconds:g}"


def _ms(seconds: float) -> int:
    return round(seconds * 1000)


class Clock:
    """One side's clock in one game."""

    def __init__(self, control: MatchTimeControl, margin: float) -> None:
        if not margin >= 0:
            raise MatchTimeControlError(f"the margin is a number of seconds, not {margin}")
        self.control = control
        self.margin = margin
        #: The game clock's time left (infinite without a game clock).
        self.remaining = control.base if control.has_game_clock else math.inf
        #: Seconds used so far (start-up included where charged), and by the slowest move.
        self.used = 0.0
        self.slowest = 0.0

    @property
    def available(self) -> float:
        """The most the next move may take, before the margin."""
        per_move = self.control.per_move
        return max(0.0, min(self.remaining, math.inf if per_move is None else per_move))

    @property
    def deadline(self) -> float:
        """How long the referee waits for the next move before it is lost on time."""
        return self.available + self.margin

    def report(self) -> tuple[float, int]:
        """(seconds, stones) for GTP's time_left: the game clock's time left and 0 stones
        (absolute time), or without a game clock the time per move and 1 stone."""
        if self.control.has_game_clock:
            return max(self.remaining, 0.0), 0
        return self.available, 1

    def charge_setup(self, seconds: float) -> bool:
        """Book time spent before the first move (a Gomocup brain's start-up) on the game
        clock; False when that alone oversteps it."""
        self.used += seconds
        self.remaining -= seconds
        return self.remaining >= -self.margin

    def charge(self, seconds: float) -> bool:
        """Book a move that took `seconds`; False when it overstepped a limit (margin
        included), and the game is lost. The increment comes after a move in time."""
        self.used += seconds
        self.slowest = max(self.slowest, seconds)
        per_move = self.control.per_move
        if per_move is not None and seconds > per_move + self.margin:
            return False
        self.remaining -= seconds
        if self.remaining < -self.margin:
            return False
        self.remaining = max(self.remaining, 0.0) + self.control.increment
        return True


__all__ = ["Clock", "MatchTimeControl", "MatchTimeControlError"]
