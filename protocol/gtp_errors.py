"""How a GTP command fails: `GtpError`, whose text is the `?` reply, and the specification's error
texts, with the argument checks every command module shares (`gtp_commands.py`, `gtp_go.py`).

The texts are the GTP v2 specification's, exactly, where it names one; argument errors are
`syntax error: <what>`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from saz.engine.games import Game

SYNTAX_ERROR = "syntax error"
UNKNOWN_COMMAND = "unknown command"
ILLEGAL_MOVE = "illegal move"
UNACCEPTABLE_SIZE = "unacceptable size"
CANNOT_UNDO = "cannot undo"
BOARD_NOT_EMPTY = "board not empty"
INVALID_STONES = "invalid number of stones"
BAD_VERTEX_LIST = "bad vertex list"
CANNOT_LOAD = "cannot load file"
CANNOT_SCORE = "cannot score"


class GtpError(Exception):
    """A command failed: the text is the error message of the `?` reply."""


def syntax_error(detail: object) -> GtpError:
    """The error of arguments that do not fit the command: `syntax error: <detail>`."""
    return GtpError(f"{SYNTAX_ERROR}: {detail}")


def check_arguments(args: tuple[str, ...], count: int, usage: str) -> None:
    """A syntax error, showing `usage`, unless there are exactly `count` arguments."""
    if len(args) != count:
        raise syntax_error(f"usage: {usage}")


def parse_integer(text: str, name: str) -> int:
    """The integer `text`, the argument called `name`; a syntax error when it is none."""
    try:
        return int(text)
    except ValueError:
        raise syntax_error(f"{name} {text!r} is not an integer") from None


def check_empty(game: Game) -> None:
    """`board not empty` unless no stone is on the board and no move was played (where
    handicap and set-up stones go)."""
    if game.moves or game.board.any():
        raise GtpError(BOARD_NOT_EMPTY)
