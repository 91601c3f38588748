"""GGF, the Generic Game Format of GGS and NBoard: Othello game records, read and written.

    (;GM[Othello]PC[NBoard]DT[2014-02-21 20:52:27 GMT]PB[./mEdax]PW[chris]RE[?]TI[15:00]TY[8]
      BO[8 ---------------------------O*------*O--------------------------- *]B[F5]W[F6]B[D3];)

A game is `(;` then tags `NAME[value]`, then `;)`; a collection is games one after another
(GGS prefixes a synchro game's two halves with `1 ` / `2 `, which is read over). Values have no
escapes: a value ends at the first `]`. What the tags mean (the ODK's `OsObjects.cpp`, which
GGS, NTest and NBoard share):

* `BO[size cells mover]`: the start position. `size` (8), then `size*size` cells row-major
  from the top-left, `*` black, `O` white, `-` empty (spaces between them ignored), then the
  side to move, `*` or `O` (Black when left out).
* `B[move/eval/seconds]`, `W[...]`: the moves in order, each by the colour of its tag. The move
  is a column letter and a row number from the top (`F5`, `J10` on larger boards), or the pass
  `PA` (GGS also writes `pass`); the evaluation (the mover's, in discs) and the seconds the move
  took may each be blank or left out (`d3//0.01`).
* `TI[time/increment/grace]` (both sides) or `TB[...]` / `TW[...]`: the clocks, each part
  `[[[days.]hours:]minutes:]seconds` and blank for 0 (`05:00//02:00`: 5 minutes, no increment,
  2 minutes' grace after the flag falls).
* `TY` (the game type: `8`, `8r`, `s8`...), `RE` (Black's disc margin, `+2.000`; `?` while
  unknown), `PB` / `PW`, `RB` / `RW` (ratings), `DT`, `PC`, `GM` and anything else: kept as
  text in `GgfGame.tags`.

`parse_ggf` / `parse_ggf_collection` read, `format_ggf` writes (a round trip gives the same
`GgfGame`), `to_game` replays a record into an engine `Othello`, `from_game` writes one, and
`clock_seconds` says what a side's clock shows after the moves. Malformed text is a `GgfError`
(a ValueError) that says what and where.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from saz.engine.games import game_class
from saz.engine.games.base import BLACK, EMPTY, WHITE, Game, GameError
from saz.engine.games.othello import Othello
from saz.protocol.vertex import GtpValueError, TopLeftVertices

#: BO's cells.
BLACK_CELL, WHITE_CELL, EMPTY_CELL = "*", "O", "-"
_CELL_OF = {BLACK: BLACK_CELL, WHITE: WHITE_CELL, EMPTY: EMPTY_CELL}
_COLOR_OF_CELL = {BLACK_CELL: BLACK, WHITE_CELL: WHITE}
_MOVE_TAGS = {"B": BLACK, "W": WHITE}
_TAG_OF_COLOR = {BLACK: "B", WHITE: "W"}
#: The pass as written (GGS also writes `pass`; any word starting with P reads as one).
PASS = "PA"
_TAG_NAME = re.compile(r"[A-Z][A-Z0-9]*")
_SQUARE = re.compile(r"[A-Za-z][0-9]{1,2}")
_PASS_WORD = re.compile(r"[Pp][A-Za-z]*")


class GgfError(ValueError):
    """Text that is not a GGF record this reader understands, or a record that cannot be
    replayed (an illegal move)."""


@dataclass(frozen=True)
class GgfMove:
    """One move of a record: its text as read (`F5`, `d3`, `PA`, `pass`), the mover's
    evaluation and the seconds it took (None where blank or left out)."""

    move: str
    eval: float | None = None
    seconds: float | None = None

    @property
    def is_pass(self) -> bool:
        return bool(_PASS_WORD.fullmatch(self.move))


@dataclass(frozen=True)
class GgfGame:
    """A GGF game: the start position (BO), the moves with their colours, and the other tags.

    `board` is BO's cells row-major without spaces (`*` black, `O` white, `-` empty); `to_move`
    is BLACK (1) or WHITE (-1); `colors[i]` is the colour of `moves[i]` (its tag, B or W).
    `tags` holds every tag but BO and the moves, in the order read (GM, PC, DT, PB, PW, RE,
    TI, TY...); GM (`Othello`) and TY (the size) are filled in where missing."""

    size: int
    board: str
    to_move: int
    moves: tuple[GgfMove, ...] = ()
    colors: tuple[int, ...] = ()
    tags: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # GM and TY are always there (what a writer puts in a record that lacks them), so that
        # a record reads back equal to what was written. A copy: the caller's dict stays theirs.
        tags = {"GM": "Othello", **self.tags}
        tags.setdefault("TY", str(self.size))
        object.__setattr__(self, "tags", tags)
        if self.size < 1:
            raise GgfError(f"a board of size {self.size}")
        if len(self.board) != self.size * self.size or set(self.board) - set("*O-"):
            raise GgfError(f"the board must be {self.size * self.size} cells of * O -, "
                           f"got {self.board!r}")
        if self.to_move not in (BLACK, WHITE):
            raise GgfError(f"to_move must be BLACK (1) or WHITE (-1), got {self.to_move!r}")
        if len(self.moves) != len(self.colors) or set(self.colors) - {BLACK, WHITE}:
            raise GgfError("every move needs a colour, BLACK (1) or WHITE (-1)")


@dataclass(frozen=True)
class GgfClock:
    """A GGF clock (TI/TB/TW): the time on it, what each move adds, and the grace period a side
    gets once when it runs out, all in seconds."""

    seconds: float
    increment: float = 0.0
    grace: float = 0.0


# -- reading ------------------------------------------------------------------------------------
def parse_ggf(text: str) -> GgfGame:
    """The one game in `text`; GgfError if it is malformed, or holds no game or more than one."""
    games = parse_ggf_collection(text)
    if len(games) != 1:
        raise GgfError(f"expected one GGF game, found {len(games)}")
    return games[0]


def parse_ggf_collection(text: str) -> list[GgfGame]:
    """Every game in `text`, in order (blank text is no game); GgfError on malformed text."""
    games = []
    at = _skip_space(text, 0)
    while at < len(text):
        game, at = _read_game(text, at)
        games.append(game)
        at = _skip_space(text, at)
    return games


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at].isspace():
        at += 1
    return at


def _where(text: str, at: int) -> str:
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    return f"line {line}, column {column}"


def _read_game(text: str, at: int) -> tuple[GgfGame, int]:
    """The game starting at `at` and the index after it."""
    start = at
    if text[at] in "12" and at + 1 < len(text) and text[at + 1].isspace():  # a synchro half
        at = _skip_space(text, at + 1)
    if not text.startswith("(;", at):
        raise GgfError(f"a GGF game starts with '(;' ({_where(text, at)}): {text[at:at + 20]!r}")
    at += 2
    tags: dict[str, str] = {}
    moves: list[GgfMove] = []
    colors: list[int] = []
    bo: str | None = None
    while True:
        at = _skip_space(text, at)
        if at >= len(text):
            raise GgfError(f"the game starting at {_where(text, start)} has no end ';)'")
        if text[at] == ";":
            end = _skip_space(text, at + 1)
            if not text.startswith(")", end):
                raise GgfError(f"';' without ')' at {_where(text, at)}")
            at = end + 1
            break
        open_at = text.find("[", at)
        name = text[at:open_at].strip() if open_at >= 0 else text[at:at + 10]
        if open_at < 0 or not _TAG_NAME.fullmatch(name):
            raise GgfError(f"expected a tag NAME[value] or ';)' at {_where(text, at)}: "
                           f"{text[at:at + 20]!r}")
        close_at = text.find("]", open_at + 1)
        if close_at < 0:
            raise GgfError(f"tag {name} at {_where(text, at)} has no closing ']'")
        value = text[open_at + 1:close_at]
        where = _where(text, at)
        if "[" in value:
            raise GgfError(f"tag {name} at {where} has no closing ']' before the next '['")
        at = close_at + 1
        if name in _MOVE_TAGS:
            moves.append(_parse_move(value, where))
            colors.append(_MOVE_TAGS[name])
        elif name == "BO":
            if bo is not None:
                raise GgfError(f"a second BO at {where}")
            bo = value
        elif name in tags:
            raise GgfError(f"tag {name} appears twice (again at {where})")
        else:
            tags[name] = value
    if bo is None:
        raise GgfError(f"the game starting at {_where(text, start)} has no board (BO)")
    size, board, to_move = _parse_board(bo)
    game = GgfGame(size, board, to_move, tuple(moves), tuple(colors), tags)
    for index, move in enumerate(game.moves):
        if not move.is_pass:
            _square(size, move.move, index)
    return game, at


def _parse_board(value: str) -> tuple[int, str, int]:
    """BO's (size, cells, side to move)."""
    words = value.split()
    if not words or not words[0].isdigit():
        raise GgfError(f"BO must start with the board size: BO[{value}]")
    size = int(words[0])
    if size == 88:
        raise GgfError("octagonal boards (BO[88 ...]) are not supported")
    if not 1 <= size <= 26:
        raise GgfError(f"a board of size {size}: GGF names columns A..Z")
    n = size * size
    cells = words[1:]
    to_move = BLACK  # ODK's default when the side to move is left out
    if len(cells) > 1 and cells[-1] in _COLOR_OF_CELL:
        to_move = _COLOR_OF_CELL[cells.pop()]
    board = "".join(cells)
    if set(board) - set("*O-"):
        raise GgfError(f"BO holds cells of * O - and ends with the side to move, * or O: "
                       f"BO[{value}]")
    if len(board) != n:
        raise GgfError(f"BO needs {n} cells after the size {size}, got {len(board)}: "
                       f"BO[{value}]")
    return size, board, to_move


def _parse_move(value: str, where: str) -> GgfMove:
    parts = value.strip().split("/")
    if len(parts) > 3:
        raise GgfError(f"a move is move/eval/seconds, not {value!r} ({where})")
    move = parts[0].strip()
    if not (_SQUARE.fullmatch(move) or _PASS_WORD.fullmatch(move)):
        raise GgfError(f"{move!r} is not a move: a square like F5, or PA ({where})")
    evaluation = _number(parts[1], "evaluation", where) if len(parts) > 1 else None
    seconds = _time(parts[2], where) if len(parts) > 2 else None
    return GgfMove(move, evaluation, seconds)


def _number(text: str, what: str, where: str) -> float | None:
    text = text.strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise GgfError(f"the {what} {text!r} is not a number ({where})") from None
    if not math.isfinite(value):
        raise GgfError(f"the {what} {text!r} is not a finite number ({where})")
    return value


def _time(text: str, where: str) -> float | None:
    """`[[[days.]hours:]minutes:]seconds` in seconds; None when blank."""
    text = text.strip().split(",")[0]  # GGS's clock options (",N...") are not kept
    if not text:
        return None
    days = 0.0
    day_part, dot, rest = text.partition(".")
    if dot and ":" in rest:  # days.h:m:s (a dot before a colon is a day count)
        days = _number(day_part, "day count", where) or 0.0
        text = rest
    parts = text.split(":")
    if len(parts) > 3:
        raise GgfError(f"{text!r} is not a time: [[hours:]minutes:]seconds ({where})")
    seconds = 0.0
    for part in parts:
        value = _number(part, "time", where)
        if value is None or value < 0:
            raise GgfError(f"{text!r} is not a time: [[hours:]minutes:]seconds ({where})")
        seconds = seconds * 60 + value
    return days * 86400 + seconds


def parse_clock(text: str) -> GgfClock:
    """A TI/TB/TW value (`05:00//02:00`); GgfError if malformed."""
    parts = text.split("/")
    if len(parts) > 3:
        raise GgfError(f"a clock is time/increment/grace, not {text!r}")
    where = f"clock {text!r}"
    values = [_time(part, where) for part in parts] + [None] * (3 - len(parts))
    return GgfClock(values[0] or 0.0, values[1] or 0.0, values[2] or 0.0)


def records_game(game: str) -> bool:
    """Whether GGF records games of `game` (a registry name): Othello's, whatever the size."""
    return issubclass(game_class(game), Othello)


def move_index(size: int, text: str) -> int:
    """The engine's move index of a move's text on a size x size board (`F5`, `j10`; `PA` or
    `pass` is the pass, `size * size`); GgfError if it is no move on that board."""
    word = text.strip()
    if _PASS_WORD.fullmatch(word):
        return size * size
    if not _SQUARE.fullmatch(word):
        raise GgfError(f"{text!r} is not a move: a square like F5, or PA")
    try:
        return TopLeftVertices(size, size).parse(word)
    except GtpValueError as err:
        raise GgfError(str(err)) from None


def _square(size: int, text: str, index: int) -> int:
    """The engine's point index of a move's square; GgfError if it is off the board."""
    try:
        return TopLeftVertices(size, size).parse(text)
    except GtpValueError as err:
        raise GgfError(f"move {index + 1} ({text}): {err}") from None


# -- writing ------------------------------------------------------------------------------------
def format_ggf(game: GgfGame) -> str:
    """The record of `game` on one line: GM first, the other tags in order, TY and BO (its
    cells in one word, as NBoard sends them to engines), the moves. GgfError for a value that
    GGF cannot hold (a `]`)."""
    tags = game.tags
    out = ["(;"]
    for name, value in tags.items():
        if name in _MOVE_TAGS or name == "BO":
            raise GgfError(f"tag {name} is the record's own (moves, board), not a game tag")
        if name != "TY":
            out.append(_tag(name, value))
    out.append(_tag("TY", tags["TY"]))
    out.append(_tag("BO", f"{game.size} {game.board} {_CELL_OF[game.to_move]}"))
    for move, color in zip(game.moves, game.colors):
        out.append(_tag(_TAG_OF_COLOR[color], format_move(move)))
    out.append(";)")
    return "".join(out)


def format_ggf_collection(games: list[GgfGame]) -> str:
    """Games one per line, as GGS writes a collection."""
    return "".join(format_ggf(game) + "\n" for game in games)


def _tag(name: str, value: str) -> str:
    if not _TAG_NAME.fullmatch(name):
        raise GgfError(f"{name!r} is not a GGF tag name (upper-case letters and digits)")
    if "]" in value or "\n" in value or "\r" in value:
        raise GgfError(f"tag {name}: GGF values cannot hold ']' or a line break, as a record "
                       f"is one line ({value!r})")
    return f"{name}[{value}]"


def format_move(move: GgfMove) -> str:
    """`F5`, `F5/-1.5`, `F5//0.01`, `F5/2/0.5`: blank parts left out from the end."""
    text = move.move
    if move.eval is not None or move.seconds is not None:
        text += "/" + (_format_number(move.eval) if move.eval is not None else "")
        if move.seconds is not None:
            text += "/" + _format_number(move.seconds)
    return text


def _format_number(value: float) -> str:
    """The shortest text that reads back as `value` (`2`, `0.01`, `-1.5`)."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def format_time(seconds: float) -> str:
    """A clock part: `h:mm:ss`, `m:ss` or whole seconds, as GGS writes it (seconds rounded)."""
    total = round(seconds)
    minutes, secs = divmod(total, 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    if minutes:
        return f"{minutes}:{secs:02d}"
    return str(secs)


def format_clock(clock: GgfClock) -> str:
    """A TI value (`5:00`, `1:00/1`, `0//2:00`): blank parts left out from the end."""
    text = format_time(clock.seconds)
    if clock.increment or clock.grace:
        text += "/" + (format_time(clock.increment) if clock.increment else "")
        if clock.grace:
            text += "/" + format_time(clock.grace)
    return text


# -- engine positions ---------------------------------------------------------------------------
def move_text(size: int, move: int) -> str:
    """The GGF text of an engine move index on a size x size board (`F5`, `PA`)."""
    if move == size * size:
        return PASS
    return TopLeftVertices(size, size).format(move)


def start_game(ggf: GgfGame) -> Othello:
    """An Othello at the record's start position (BO), before its moves."""
    if ggf.board == _start_board(ggf.size) and ggf.to_move == BLACK:
        try:
            return Othello(ggf.size)
        except GameError as err:
            raise GgfError(f"BO: {err}") from None
    rows = [ggf.board[row:row + ggf.size] for row in range(0, len(ggf.board), ggf.size)]
    diagram = "\n".join(row.replace("*", "X").replace("-", ".") for row in rows)
    try:
        return Othello.from_diagram(diagram, to_move=ggf.to_move)
    except GameError as err:
        raise GgfError(f"BO: {err}") from None


def _start_board(size: int) -> str:
    """The usual start position's cells (the four centre discs, white on the main diagonal)."""
    cells = [EMPTY_CELL] * (size * size)
    low, high = size // 2 - 1, size // 2
    for y, x, cell in ((low, low, WHITE_CELL), (low, high, BLACK_CELL),
                       (high, low, BLACK_CELL), (high, high, WHITE_CELL)):
        cells[y * size + x] = cell
    return "".join(cells)


def to_game(ggf: GgfGame) -> Othello:
    """The record replayed: an Othello at the end of its moves (from BO's position). A pass
    the record leaves out (the side to move has no placement and the other colour moves) is
    played; GgfError on an illegal move, or a move for the side not to move."""
    game = start_game(ggf)
    names = {BLACK: "Black", WHITE: "White"}
    for index, (move, color) in enumerate(zip(ggf.moves, ggf.colors)):
        label = f"move {index + 1} ({names[color]} {move.move})"
        if game.is_over():
            raise GgfError(f"{label}: the game is already over")
        if color != game.to_move:
            if game.legal_moves().tolist() != [game.pass_move]:
                raise GgfError(f"{label}: {names[game.to_move]} is to move")
            game.play(game.pass_move)  # the pass the record left out
            if game.is_over():
                raise GgfError(f"{label}: the game is already over")
        point = game.pass_move if move.is_pass else _square(ggf.size, move.move, index)
        if not game.is_legal(point):
            raise GgfError(f"{label} is illegal in this position")
        game.play(point)
    return game


def from_game(game: Game, tags: dict[str, str] | None = None, *,
              evals: list[float | None] | None = None,
              seconds: list[float | None] | None = None) -> GgfGame:
    """The GGF record of `game` (from its start position), with `tags` and, per move, the
    mover's evaluation and the seconds it took where known. Every move is written, the
    passes (`PA`) included, with the colour that played it."""
    if game.width != game.height:
        raise GgfError(f"GGF boards are square, not {game.width}x{game.height}")
    size = game.width
    board, to_move = game.start_position()
    cells = "".join(_CELL_OF[int(value)] for value in board)
    moves = game.moves
    evals = evals if evals is not None else [None] * len(moves)
    seconds = seconds if seconds is not None else [None] * len(moves)
    if len(evals) != len(moves) or len(seconds) != len(moves):
        raise GgfError("one evaluation and one time per move")
    records = tuple(GgfMove(move_text(size, move), value, taken)
                    for move, value, taken in zip(moves, evals, seconds))
    return GgfGame(size, cells, to_move, records, tuple(game.colors()), dict(tags or {}))


def clock_seconds(ggf: GgfGame, color: int) -> float | None:
    """The time left on `color`'s clock after the record's moves: its clock (TB/TW, else TI)
    less the seconds each of its moves took, plus the increments, with the grace period added
    once when it runs out (floored at 0). None when the record has no clock for it."""
    text = ggf.tags.get("TB" if color == BLACK else "TW", ggf.tags.get("TI"))
    if text is None or not text.strip():
        return None
    clock = parse_clock(text)
    left, timed_out = clock.seconds, False
    for move, mover in zip(ggf.moves, ggf.colors):
        if mover != color:
            continue
        left -= move.seconds or 0.0
        if left < 0 and not timed_out:
            left += clock.grace
            timed_out = True
        left = max(left, 0.0) + clock.increment
    return left
