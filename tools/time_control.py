"""The time control of a match (`saz match --tc`) and each side's clock under it.

Two forms, written as on the command line:

* `BASE+INC` (Fischer), e.g. `5+0.1`: BASE seconds for the whole game, INC seconds added after
  each move. GTP engines get `time_settings BASE 0 0` (absolute time) and, before every genmove,
  `time_left COLOUR SECONDS 0` with the increments included; Gomocup brains get
  `INFO timeout_match` and `INFO timeout_turn` (both BASE) and `INFO time_left` before each turn.
* `move=S`, e.g. `move=2`: S seconds for every move, nothing carried over. GTP engines get
  Canadian byo-yomi of one stone per period, `time_settings 0 S 1` (and `time_left COLOUR S 1`);
  Gomocup brains `INFO timeout_turn` S and `INFO timeout_match 0` (no match limit).

Plain `time_settings` expresses both exactly, so `kgs-time_settings` adds nothing and is not sent.
The referee measures each move from the command's last byte written to the answer's arrival,
so the pipes and the engine's own I/O count against it. `margin` seconds past the limit are
forgiven (process scheduling on a loaded machine); beyond them the move loses on time.
"""
from __future__ import annotations

import math
from dataclasses import dataclass


class TimeControlError(ValueError):
    """Text that is not a time control `saz match` knows."""


@dataclass(frozen=True)
class TimeControl:
    """Fischer (`base` + `increment`) or a fixed time per move (`per_move`)."""

    base: float = 0.0
    increment: float = 0.0
    #: Seconds for every move; None for a Fischer clock.
    per_move: float | None = None

    def __post_init__(self) -> None:
        numbers = (self.base, self.increment, self.per_move or 0.0)
        if not all(math.isfinite(n) and n >= 0 for n in numbers):
            raise TimeControlError(f"times are finite and not negative: {self}")
        if self.per_move is not None:
            if self.per_move <= 0 or self.base or self.increment:
                raise TimeControlError("a time per move is a positive number of seconds alone")
        elif self.base <= 0:
            raise TimeControlError("a Fischer clock needs a positive base time")

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """`BASE+INC` or `move=S` (seconds; see the module docstring)."""
        word = text.strip().lower()
        try:
            if word.startswith("move="):
                return cls(per_move=float(word[len("move="):]))
            base, plus, increment = word.partition("+")
            return cls(float(base), float(increment) if plus else 0.0)
        except ValueError as exc:
            if isinstance(exc, TimeControlError):
                raise
            raise TimeControlError(f"{text!r} is not a time control: use BASE+INC seconds "
                                   "(e.g. 5+0.1) or move=SECONDS (e.g. move=2)") from None

    @property
    def is_per_move(self) -> bool:
        return self.per_move is not None

    def gtp_settings(self) -> str:
        """The GTP command that announces this control."""
        if self.per_move is not None:
            return f"time_settings 0 {_number(self.per_move)} 1"
        return f"time_settings {_number(self.base)} 0 0"

    def gomocup_limits(self) -> dict[str, int]:
        """The INFO keys that announce this control (milliseconds)."""
        if self.per_move is not None:
            return {"timeout_turn": _ms(self.per_move), "timeout_match": 0}
        return {"timeout_turn": _ms(self.base), "timeout_match": _ms(self.base)}

    def __str__(self) -> str:
        if self.per_move is not None:
            return f"move={_number(self.per_move)}"
        return f"{_number(self.base)}+{_number(self.increment)}"


def _number(seconds: float) -> str:
    return f"{seconds:g}"


def _ms(seconds: float) -> int:
    return round(seconds * 1000)


class Clock:
    """One side's clock in one game."""

    def __init__(self, control: TimeControl, margin: float) -> None:
        if not margin >= 0:
            raise TimeControlError(f"the margin is a number of seconds, not {margin}")
        self.control = control
        self.margin = margin
        #: Fischer: the time left now; per move: the time of every move.
        self.remaining = control.per_move if control.per_move is not None else control.base
        #: Seconds used so far, and by the slowest move.
        self.used = 0.0
        self.slowest = 0.0

    @property
    def deadline(self) -> float:
        """How long the referee waits for the next move before it is lost on time."""
        return max(self.remaining, 0.0) + self.margin

    def report(self) -> tuple[float, int]:
        """(seconds, stones) for GTP's time_left: the time left, and the stones to play in it
        (1 per period for per-move time, 0 for absolute time)."""
        return max(self.remaining, 0.0), 1 if self.control.is_per_move else 0

    def charge(self, seconds: float) -> bool:
        """Book a move that took `seconds`; False when it overstepped the time (margin
        included), and the game is lost."""
        self.used += seconds
        self.slowest = max(self.slowest, seconds)
        if self.control.per_move is not None:
            return seconds <= self.control.per_move + self.margin
        self.remaining -= seconds
        if self.remaining < -self.margin:
            return False
        self.remaining = max(self.remaining, 0.0) + self.control.increment
        return True


__all__ = ["Clock", "TimeControl", "TimeControlError"]
