"""The exceptions the rules raise. Every one is a ValueError, so front-ends can catch them together
and answer in the protocol's own error form while the position stays as it was."""
from __future__ import annotations


class GameError(ValueError):
    """Base class: the request does not fit the rules; the position is unchanged."""


class IllegalMoveError(GameError):
    """A move that the rules forbid in this position (occupied, suicide, superko, ...)."""

    def __init__(self, move: int, reason: str) -> None:
        super().__init__(f"illegal move {move}: {reason}")
        self.move = move
        self.reason = reason


class UnsupportedSizeError(GameError):
    """A board size the game does not admit (Go 2..25, Gomoku 5.., Othello even 4..)."""


class UnsupportedRuleError(GameError):
    """A rule variant or rule parameter the game does not know or does not allow."""


class UndoError(GameError):
    """undo() with no move left to take back."""
