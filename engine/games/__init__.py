"""Game rules behind one interface (`base.Game`): Go, Gomoku and Othello on any admissible size."""
from __future__ import annotations

from typing import Any

from saz.engine.games.base import BLACK, DRAW, EMPTY, WHITE, Game
from saz.engine.games.errors import (
    GameError,
    IllegalMoveError,
    UndoError,
    UnsupportedRuleError,
    UnsupportedSizeError,
)

GAME_NAMES = ("go", "gomoku", "othello")


def game_class(name: str) -> type[Game]:
    """The Game subclass registered under `name` ("go", "gomoku", "othello")."""
    if name == "go":
        from saz.engine.games.go import Go
        return Go
    if name == "gomoku":
        from saz.engine.games.gomoku import Gomoku
        return Gomoku
    if name == "othello":
        from saz.engine.games.othello import Othello
        return Othello
    raise UnsupportedRuleError(f"unknown game {name!r}; expected one of {', '.join(GAME_NAMES)}")


def new_game(name: str, width: int, height: int | None = None, **rules: Any) -> Game:
    """A new game at its start position; `rules` are the game's own keyword parameters."""
    return game_class(name)(width, height, **rules)


__all__ = [
    "BLACK", "WHITE", "EMPTY", "DRAW", "Game", "GAME_NAMES", "game_class", "new_game",
    "GameError", "IllegalMoveError", "UndoError", "UnsupportedRuleError", "UnsupportedSizeError",
]
