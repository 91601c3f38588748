"""SGF FF[4] records of finished games, as Go, Othello and Gomoku GUIs read them.

    text = format_sgf(game, SgfInfo(black="greedy", white="gnugo", result="W+12.5"))

One game tree without variations: the root holds the game information, then one node per move.
What each game needs (https://www.red-bean.com/sgf/):

* `GM` (1 Go, 2 Othello, 4 Gomoku: `GameInfo.sgf_game_type`), `SZ` (`9`, or `12:9` as columns:rows
  for a rectangle), `KM` for a game with komi (Go);
* moves as two lower-case letters, column then row from the top-left (`aa`); boards wider or
  taller than 26 go on with `A..Z` (SGF's 52-point limit); the pass (Go, Othello's forced pass)
  is the empty value `B[]`, which FF[4] readers take on any board (the old `tt` is a point on
  boards larger than 19x19);
* `RE` as the specification spells it: `B+3.5`, `W+R` (resign), `B+T` (time), `W+F` (forfeit:
  an illegal move, a crash), `B+` (a win without a score, a Gomoku five), `0` (a draw).

Text values escape `]` and `\\`. Each move is written with the colour that played it
(`Game.colors`), a pass included. A game that did not start from its game's usual position (Go
handicap or setup stones, a set-up Othello board) has that position as the root's `AB`/`AW`
(and `HA` for a handicap); `PL` says who is to move where the moves do not (after the last
move, or at the root of a record without moves).
`protocol/sgf.py` reads what this writes (a round-trip test keeps them in step).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from saz.engine.games.base import BLACK, DRAW, WHITE, Game
from saz.engine.games.capabilities import AreaScored

_COLOR_LETTERS = {BLACK: "B", WHITE: "W"}
#: SGF point letters: 0..25 are a..z, 26..51 are A..Z.
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class SgfInfo:
    """The game information of a record's root (empty values are left out)."""

    black: str = ""
    white: str = ""
    #: `RE`: B+3.5, W+R, B+T, W+F, B+, 0 (see the module docstring).
    result: str = ""
    #: `RU`: the rules in words (Tromp-Taylor, freestyle, ...).
    rules: str = ""
    #: `DT`: the day the game was played.
    day: date | None = None
    #: `TM`: the main time in seconds; `OT`: the overtime (increment, byo-yomi) in words.
    main_time: float | None = None
    overtime: str = ""
    #: `GN`: the game's name (its number in a match).
    name: str = ""
    #: `GC`: a comment on the whole game (why it ended, the opening).
    comment: str = ""
    #: `AP`: the program that wrote the record, `name:version`.
    application: str = "saz"
    #: Comments on moves: the move's index (0-based) -> text (`C` of that move's node).
    move_comments: dict[int, str] = field(default_factory=dict)


def format_sgf(game: Game, info: SgfInfo = SgfInfo()) -> str:
    """The record of `game` (played from its start position) with the root's `info`."""
    if max(game.width, game.height) > len(_LETTERS):
        raise ValueError(f"SGF cannot address a {game.width}x{game.height} board (at most 52)")
    root = [("FF", "4"), ("CA", "UTF-8"), ("GM", str(game.info.sgf_game_type)),
            ("AP", info.application), ("SZ", _size(game.width, game.height))]
    board, first = game.start_position()
    if isinstance(game, AreaScored):  # komi and handicap are the SGF properties of Go's count
        root.append(("KM", f"{game.komi:g}"))
        # Black stones alone with White to move are a handicap (SGF's HA; readers infer from it
        # who moves first when the record has no move yet).
        stones = int((board == BLACK).sum())
        if stones >= 2 and not (board == WHITE).any() and first == WHITE:
            root.append(("HA", str(stones)))
    root += [("RU", info.rules), ("GN", info.name), ("PB", info.black), ("PW", info.white),
             ("DT", info.day.isoformat() if info.day else ""), ("RE", info.result),
             ("TM", f"{info.main_time:g}" if info.main_time is not None else ""),
             ("OT", info.overtime), ("GC", info.comment)]
    head = "(;" + "".join(f"{key}[{_escape(value)}]" for key, value in root if value)
    usual, usual_first = type(game)(game.width, game.height).start_position()
    if not (board == usual).all():
        for key, color in (("AB", BLACK), ("AW", WHITE)):
            points = [_point(int(p), game.width, game.height)
                      for p in (board == color).nonzero()[0]]
            if points:
                head += key + "".join(f"[{p}]" for p in points)
    colors = game.colors()
    nodes = []
    for i, (move, color) in enumerate(zip(game.moves, colors)):
        node = f";{_COLOR_LETTERS[color]}[{_point(move, game.width, game.height)}]"
        if i in info.move_comments:
            node += f"C[{_escape(info.move_comments[i])}]"
        nodes.append(node)
    # The side to move now, where the moves (or the usual start) do not imply it.
    if game.to_move != (-colors[-1] if colors else usual_first):
        if nodes:
            nodes[-1] += f"PL[{_COLOR_LETTERS[game.to_move]}]"
        else:
            head += f"PL[{_COLOR_LETTERS[game.to_move]}]"
    lines = [head]
    # Ten moves a line keeps the file readable in a text editor and diffable.
    lines += ["".join(nodes[i:i + 10]) for i in range(0, len(nodes), 10)]
    return "\n".join(lines) + ")\n"


def sgf_result(game: Game, winner: int | None = None, suffix: str = "") -> str:
    """`RE` of a finished game: `B+3.5` by the game's score, `B+` where it has none (a Gomoku
    five), `0` for a draw; or `W+R`, `B+T`, `W+F` with a `suffix` (resign, time, forfeit) for
    `winner`, who then need not be the rules' winner."""
    winner = game.winner() if winner is None else winner
    if winner is None:
        raise ValueError("the game is not over")
    if winner == DRAW:
        return "0"
    if not suffix:
        score = game.score()
        suffix = "" if score is None else f"{abs(score):g}"
    return f"{_COLOR_LETTERS[winner]}+{suffix}"


def _size(width: int, height: int) -> str:
    return str(width) if width == height else f"{width}:{height}"


def _point(move: int, width: int, height: int) -> str:
    """Two letters, column then row from the top; the empty value for the pass."""
    if move == width * height:
        return ""
    y, x = divmod(move, width)
    return _LETTERS[x] + _LETTERS[y]


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("]", "\\]")


__all__ = ["SgfInfo", "format_sgf", "sgf_result"]
