"""Game rules behind one interface (`base.Game`): Go, Gomoku, Othello and chess on any admissible
size.

What a game is beyond the rules (its GTP title, SGF game type, default size, how GTP names its
points) is on its class, and what only some games can do (an endgame solver, a threat search,
Go's count by area) is an interface of `capabilities.py`: front-ends and tools ask the class or
the interface, never the game's name.
"""
from __future__ import annotations

from types import MappingProxyType
from typing import Any

from saz.engine.games.base import BLACK, DRAW, EMPTY, WHITE, Game, GameInfo
from saz.engine.games.chess import Chess
from saz.engine.games.errors import (
    GameError,
    IllegalMoveError,
    UndoError,
    UnsupportedRuleError,
    UnsupportedSizeError,
)
from saz.engine.games.go import Go
from saz.engine.games.gomoku import Gomoku
from saz.engine.games.othello import Othello

#: Every game by its registry name (`Game.name`), in the order protocols list them.
GAMES: MappingProxyType[str, type[Game]] = MappingProxyType(
    {cls.name: cls for cls in (Go, Gomoku, Othello, Chess)})
GAME_NAMES = tuple(GAMES)
#: The games whose moves are points (`GameInfo.point_moves`): those GTP and SGF serve.
POINT_GAMES: MappingProxyType[str, type[Game]] = MappingProxyType(
    {name: cls for name, cls in GAMES.items() if cls.info.point_moves})


def game_class(name: str) -> type[Game]:
    """The Game subclass registered under `name` ("go", "gomoku", "othello", "chess")."""
    cls = GAMES.get(name)
    if cls is None:
        raise UnsupportedRuleError(
            f"unknown game {name!r}; expected one of {', '.join(GAME_NAMES)}")
    return cls


def new_game(name: str, width: int, height: int | None = None, **rules: Any) -> Game:
    """A new game at its start position; `rules` are the game's own keyword parameters."""
    return game_class(name)(width, height, **rules)


__all__ = [
    "BLACK",
    "DRAW",
    "EMPTY",
    "GAMES",
    "GAME_NAMES",
    "POINT_GAMES",
    "WHITE",
    "Game",
    "GameError",
    "GameInfo",
    "IllegalMoveError",
    "UndoError",
    "UnsupportedRuleError",
    "UnsupportedSizeError",
    "game_class",
    "new_game",
]
