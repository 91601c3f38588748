"""PGN: chess games in Standard Algebraic Notation, written from the game's own rules, and the
openings `saz match` reads from PGN and EPD files.

    text = format_pgn(game, {"Event": "saz vs sf", "White": "saz", "Black": "sf", ...},
                      comment="Black mates")

What the PGN standard (1994, "Standard: Portable Game Notation Specification and Implementation
Guide", export format) asks and this writes:

* the Seven Tag Roster first, in its order (Event, Site, Date, Round, White, Black, Result),
  `?` for a value not known; then `SetUp "1"` and `FEN` when the game did not start from its
  variant's usual position, and `Variant` for a variant other than standard chess (Gardner,
  Los Alamos: the names Fairy-Stockfish and cutechess give them); then the caller's other tags
  (`TimeControl`, `Termination`, `PlyCount`);
* SAN: the piece letter (none for a pawn), the from-square's file, rank or both where another
  piece of the same type could reach the same square (file first, as the standard prefers),
  `x` for a capture (en passant included), the destination, `=Q` for a promotion, `O-O` and
  `O-O-O` for castling, `+` for check and `#` for mate; every SAN is computed from the legal
  moves of the position before it, so it is unambiguous exactly as far as the rules are;
* move numbers from the start position's FEN (`12...` where Black moves first or after a
  comment), comments in braces, the result at the end, lines of at most 79 characters.

The game object is the engine's chess position (`engine/games`): it names a move in UCI
(`uci`, `parse_uci`), writes its FEN (`fen`) and says when the side to move is in check
(`in_check`); `ChessNotation` is that interface, and a game offers it or not.

Reading: `read_pgn_games` replays each game of a PGN file (its FEN tag, its main line in SAN;
comments, variations and annotations left out), `read_pgn_openings` takes each as an opening,
and `read_epd_openings` each line of an EPD file (the four FEN fields, then either the two
counters or the `hmvc`/`fmvn` operations), as the start positions of a match's games.

This module imports no torch.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from saz.engine.games.base import DRAW, WHITE, Game
from saz.engine.games.errors import GameError

#: The Seven Tag Roster, in the order the standard exports it.
SEVEN_TAGS = ("Event", "Site", "Date", "Round", "White", "Black", "Result")
#: The piece types of `Game.board` (colour * type) and their SAN letters.
PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING = 1, 2, 3, 4, 5, 6
_LETTERS = {KNIGHT: "N", BISHOP: "B", ROOK: "R", QUEEN: "Q", KING: "K"}
#: PGN's results.
WHITE_WINS, BLACK_WINS, DRAWN, UNFINISHED = "1-0", "0-1", "1/2-1/2", "*"
#: The longest line of movetext the standard's export format allows (it says under 80).
LINE = 79

_UCI = re.compile(r"([a-z])(\d+)([a-z])(\d+)([a-z]?)")
_TAG = re.compile(r'\[\s*(\w+)\s*"((?:[^"\\]|\\.)*)"\s*\]')
_MOVE_NUMBER = re.compile(r"\d+\.+")
_SQUARE = re.compile(r"[a-z]\d+")
_CASTLING = re.compile(r"[0O]-[0O](-[0O])?")
_RESULTS = (WHITE_WINS, BLACK_WINS, DRAWN, UNFINISHED)


@runtime_checkable
class ChessNotation(Protocol):
    """What a game offers to be written and read as PGN (the engine's chess)."""

    def uci(self, move: int) -> str:
        """The move in UCI's long algebraic form (`e2e4`, `e7e8q`) in the position now."""
        ...

    def parse_uci(self, text: str) -> int:
        """The legal move `text` names (GameError otherwise)."""
        ...

    def fen(self) -> str:
        """The position as FEN."""
        ...

    def in_check(self) -> bool:
        """Whether the side to move is in check."""
        ...


def notation(game: Game) -> ChessNotation:
    """`game` as a ChessNotation; TypeError for a game that is no chess."""
    if not isinstance(game, ChessNotation):
        raise TypeError(f"{game.name} games have no PGN: no UCI moves or FEN")
    return game


def pgn_result(winner: int | None) -> str:
    """The result token of a winner (BLACK, WHITE or DRAW; None: unfinished)."""
    if winner is None:
        return UNFINISHED
    return DRAWN if winner == DRAW else WHITE_WINS if winner == WHITE else BLACK_WINS


# -- SAN ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Squares:
    """A UCI move's from and to squares as board indices, files (x) and its promotion letter."""

    start: int
    end: int
    from_x: int
    from_rank: str
    to_x: int
    to_name: str
    promotion: str


def _squares(game: Game, text: str) -> _Squares:
    found = _UCI.fullmatch(text)
    if found is None:
        raise GameError(f"{text!r} is not a UCI move")
    from_x, to_x = ord(found[1]) - ord("a"), ord(found[3]) - ord("a")

    def index(x: int, rank: str) -> int:
        return (game.height - int(rank)) * game.width + x

    return _Squares(index(from_x, found[2]), index(to_x, found[4]), from_x, found[2], to_x,
                    found[3] + found[4], found[5])


def san(game: Game, move: int) -> str:
    """The SAN of the legal `move` in `game`'s position (which is left as it was)."""
    chess = notation(game)
    board, mover = game.board, game.to_move
    squares = _squares(game, chess.uci(move))
    piece = abs(int(board[squares.start]))
    target = int(board[squares.end])
    if piece == KING and (abs(squares.to_x - squares.from_x) == 2 or target * mover > 0):
        # Two files sideways, or onto one's own rook (Chess960's notation): castling.
        text = "O-O" if squares.to_x > squares.from_x else "O-O-O"
    elif piece == PAWN:
        text = (chr(ord("a") + squares.from_x) + "x" if squares.to_x != squares.from_x else "")
        text += squares.to_name + (f"={squares.promotion.upper()}" if squares.promotion else "")
    else:
        text = _LETTERS[piece] + _disambiguation(game, chess, move, squares, piece)
        text += ("x" if target else "") + squares.to_name
    return text + _check_suffix(game, chess, move, mover)


def _disambiguation(game: Game, chess: ChessNotation, move: int, squares: _Squares,
                    piece: int) -> str:
    """The file, rank or square that tells `move` from the other moves of a piece of the same
    type to the same square ("" when there is none)."""
    board = game.board
    rivals = []
    for other in game.legal_moves().tolist():
        if other == move:
            continue
        theirs = _squares(game, chess.uci(other))
        if (theirs.end == squares.end and theirs.start != squares.start
                and abs(int(board[theirs.start])) == piece):
            rivals.append(theirs)
    if not rivals:
        return ""
    file = chr(ord("a") + squares.from_x)
    if all(rival.from_x != squares.from_x for rival in rivals):
        return file
    if all(rival.from_rank != squares.from_rank for rival in rivals):
        return squares.from_rank
    return file + squares.from_rank


def _check_suffix(game: Game, chess: ChessNotation, move: int, mover: int) -> str:
    """`#` when `move` mates, `+` when it checks, else ""."""
    game.play(move)
    try:
        if game.is_over() and game.winner() == mover:
            return "#"
        return "+" if chess.in_check() else ""
    finally:
        game.undo()


def _bare(text: str) -> str:
    """A SAN as a reader compares it: no check, mate or annotation marks, castling with O."""
    text = text.rstrip("+#!?")
    return text.replace("0", "O") if _CASTLING.fullmatch(text) else text


def parse_san(game: Game, text: str) -> int:
    """The legal move a SAN names in `game`'s position (its check and annotation marks
    ignored; a UCI move is taken too); GameError when it names none, or more than one. Only
    the moves to the SAN's square (a king's, for castling) are written to compare."""
    chess, wanted = notation(game), _bare(text)
    squares = _SQUARE.findall(wanted)
    candidates = []
    for move in game.legal_moves().tolist():
        found = _UCI.fullmatch(chess.uci(move))
        if found is None or (squares and found[3] + found[4] != squares[-1]):
            continue
        if not squares and abs(int(game.board[_squares(game, found[0]).start])) != KING:
            continue  # castling: a king's move
        candidates.append(move)
    moves = [move for move in candidates if _bare(san(game, move)) == wanted]
    if len(moves) == 1:
        return int(moves[0])
    if not moves:
        try:
            return notation(game).parse_uci(text)
        except GameError:
            raise GameError(f"{text!r} is no legal move here") from None
    raise GameError(f"{text!r} is ambiguous here")


# -- writing --------------------------------------------------------------------------------------
def start_of(game: Game) -> Game:
    """A copy of `game` at the position its moves were played from."""
    start = game.copy()
    while start.moves:
        start.undo()
    return start


def sans(game: Game) -> list[str]:
    """The SAN of each of `game`'s moves, from its start position."""
    replay = start_of(game)
    out = []
    for move in game.moves:
        out.append(san(replay, move))
        replay.play(move)
    return out


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _comment(text: str) -> str:
    """A brace comment (a brace inside one would end it)."""
    return "{" + text.replace("}", ")").replace("{", "(").strip() + "}"


def format_pgn(game: Game, tags: Mapping[str, str], *, variant: str | None = None,
               usual_start: str | None = None, comments: Mapping[int, str] | None = None,
               comment: str | None = None) -> str:
    """The PGN of `game`: `tags` (the Seven Tag Roster's missing ones `?`, Result the game's
    when not given: its winner, or `*` while it goes on), SetUp and FEN when its start position
    is not `usual_start` (a FEN; None: the variant's usual start, compared by FEN of a new game
    of the same board), Variant when `variant` is given, then the moves in SAN with
    `comments` after the moves they are keyed by (0-based ply), and `comment` before the
    result (why the game ended)."""
    start = start_of(game)
    start_fen = notation(start).fen()
    if usual_start is None:
        usual_start = notation(type(game)(game.width, game.height)).fen()
    result = tags.get("Result") or pgn_result(game.winner())
    head = {name: tags.get(name) or "?" for name in SEVEN_TAGS}
    head["Result"] = result
    if start_fen != usual_start:
        head["SetUp"], head["FEN"] = "1", start_fen
    if variant is not None:
        head["Variant"] = variant
    head.update({name: value for name, value in tags.items() if name not in head})
    lines = [f'[{name} "{_escape(str(value))}"]' for name, value in head.items()]
    tokens = list(_movetext(game, start, start_fen, comments or {}))
    if comment:
        tokens.append(_comment(comment))
    tokens.append(result)
    return "\n".join([*lines, "", *_wrap(tokens), ""]) + "\n"


def _movetext(game: Game, start: Game, start_fen: str,
              comments: Mapping[int, str]) -> Iterator[str]:
    """The movetext tokens of `game`'s moves played from `start`: numbers, SANs, comments."""
    fields = start_fen.split()
    number = int(fields[5]) if len(fields) > 5 and fields[5].isdigit() else 1
    replay, resume = start, True  # resume: Black's move needs its number ("12...")
    for ply, move in enumerate(game.moves):
        white = replay.to_move == WHITE
        # A number and its move are one token: a line never ends between them.
        prefix = f"{number}. " if white else f"{number}... " if resume else ""
        yield prefix + san(replay, move)
        replay.play(move)
        resume = ply in comments
        if resume:
            yield _comment(comments[ply])
        if not white:
            number += 1


def _wrap(tokens: Sequence[str]) -> list[str]:
    """Tokens joined by spaces in lines of at most LINE characters (a longer token alone)."""
    lines: list[str] = []
    line = ""
    for token in tokens:
        if line and len(line) + 1 + len(token) > LINE:
            lines.append(line)
            line = token
        else:
            line = f"{line} {token}" if line else token
    if line:
        lines.append(line)
    return lines


# -- reading openings -----------------------------------------------------------------------------
@dataclass(frozen=True)
class PgnOpening:
    """An opening read from a file: the FEN its moves start from (None: the usual start), and
    the moves."""

    fen: str | None
    moves: tuple[int, ...]


def split_pgn(text: str) -> Iterator[tuple[dict[str, str], str]]:
    """Each game of a PGN text: its tags and its movetext (as written)."""
    tags: dict[str, str] = {}
    movetext: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("%"):  # an escaped line: for other programs
            continue
        if stripped.startswith("["):
            if movetext and any(part.strip() for part in movetext):
                yield tags, "\n".join(movetext)
                tags, movetext = {}, []
            for name, value in _TAG.findall(stripped):
                tags[name] = re.sub(r"\\(.)", r"\1", value)
        else:
            movetext.append(line)
    if tags or any(part.strip() for part in movetext):
        yield tags, "\n".join(movetext)


def san_tokens(movetext: str) -> list[str]:
    """The main line's moves of a movetext: comments (`{}` and `;`), variations, NAGs, move
    numbers and the result left out."""
    text = re.sub(r"\{[^}]*\}", " ", movetext)
    text = re.sub(r";[^\n]*", " ", text)
    while True:  # variations nest: take the innermost first
        text, count = re.subn(r"\([^()]*\)", " ", text)
        if not count:
            break
    moves = []
    for token in text.split():
        token = _MOVE_NUMBER.sub("", token)  # "12.e4" has its number glued on
        if not token or token in _RESULTS or token.startswith("$"):
            continue
        moves.append(token)
    return moves


def read_pgn_games(text: str, new_game: Callable[[str | None], Game]) -> list[Game]:
    """Every game of a PGN text replayed: `new_game(fen)` makes its start (the FEN tag; None
    without one), on which its main line's moves are played. GameError naming the game and
    move that cannot be read."""
    games = []
    for number, (tags, movetext) in enumerate(split_pgn(text), 1):
        fen = tags.get("FEN") if tags.get("SetUp", "1") != "0" else None
        try:
            game = new_game(fen)
        except GameError as exc:
            raise GameError(f"game {number}: FEN {fen!r}: {exc}") from None
        for token in san_tokens(movetext):
            try:
                game.play(parse_san(game, token))
            except GameError as exc:
                raise GameError(f"game {number}: {token}: {exc}") from None
        games.append(game)
    return games


def read_pgn_openings(text: str, new_game: Callable[[str | None], Game]) -> list[PgnOpening]:
    """Every game of a PGN text as an opening (`read_pgn_games`): the FEN it starts from and
    its moves. GameError as there, or naming a game the opening ends."""
    openings = []
    for number, game in enumerate(read_pgn_games(text, new_game), 1):
        if game.is_over():
            raise GameError(f"game {number}: the opening ends the game")
        start = start_of(game)
        fen = notation(start).fen()
        usual = notation(new_game(None)).fen()
        openings.append(PgnOpening(None if fen == usual else fen, tuple(game.moves)))
    return openings


def epd_fen(line: str) -> str:
    """The FEN of an EPD line (or of a FEN line): its four position fields, then its two
    counters or its `hmvc` and `fmvn` operations (0 and 1 without them). GameError when it has
    fewer than four fields."""
    fields = line.split()
    if len(fields) < 4:
        raise GameError(f"{line!r} is no EPD: it needs the board, side, castling and en "
                        "passant fields")
    rest = fields[4:]
    if len(rest) >= 2 and rest[0].isdigit() and rest[1].isdigit():
        counters = rest[:2]
    else:
        operations = dict(_operation(part) for part in " ".join(rest).split(";") if part.strip())
        counters = [operations.get("hmvc", "0"), operations.get("fmvn", "1")]
    return " ".join([*fields[:4], *counters])


def _operation(text: str) -> tuple[str, str]:
    opcode, _, operand = text.strip().partition(" ")
    return opcode, operand.strip().strip('"')


def read_epd_openings(lines: Sequence[str], new_game: Callable[[str | None], Game]
                      ) -> list[PgnOpening]:
    """Each EPD line (blank lines and `#` comments skipped) as an opening without moves;
    GameError naming the line of a position that cannot be set up or is over."""
    openings = []
    for number, line in enumerate(lines, 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            fen = epd_fen(line)
            game = new_game(fen)
        except GameError as exc:
            raise GameError(f"line {number}: {exc}") from None
        if game.is_over():
            raise GameError(f"line {number}: the position is over")
        openings.append(PgnOpening(fen, ()))
    return openings


__all__ = [
    "BLACK_WINS", "DRAWN", "SEVEN_TAGS", "UNFINISHED", "WHITE_WINS", "ChessNotation",
    "PgnOpening", "epd_fen", "format_pgn", "notation", "parse_san", "pgn_result",
    "read_epd_openings", "read_pgn_games", "read_pgn_openings", "san", "san_tokens", "sans",
    "split_pgn", "start_of",
]
