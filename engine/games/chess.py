"""Chess: the standard 8x8 game, and Gardner's 5x5 and Los Alamos 6x6 of the same family.

Rules as FIDE's (and Fairy-Stockfish's for the small boards): castling, en passant and
promotion with underpromotion on 8x8; on Gardner 5x5 (`rnbqk/ppppp/5/PPPPP/RNBQK`) and Los
Alamos 6x6 (`rnqknr/pppppp/6/6/PPPPPP/RNQKNR`, no bishops, promotion to a queen, rook or
knight) pawns never advance two squares, so there is no en passant, and no side castles. A
game ends by checkmate, or drawn by stalemate, threefold repetition, the fifty-move rule (a
hundred plies without a capture or pawn move; a mate on the last one counts) or insufficient
material (kings alone, a single minor piece, or bishops all on one square colour).

Squares and moves follow `base.py`: square `y * width + x` with x the file (a = 0) and y the
row from the top (y = 0 is the last rank, Black's back rank), so UCI's rank r is row
`height - r`. White is `WHITE = -1` and moves first; `board` holds colour * piece type (1 pawn,
2 knight, 3 bishop, 4 rook, 5 queen, 6 king), so `board * to_move > 0` are the side to move's
pieces as in every game. A move is `from * P + to` (P squares; queen promotions included,
castling is the king's two-square step), and an underpromotion is `P * P + (from_x * 3 +
(to_x - from_x + 1)) * 3 + (piece - 2)`, its ranks implied by the side to move. There is no
pass: `pass_move` is only the graph's extra node. The network's policy is over
`policy_size = P * P + 9 * width` entries, a move's index (`policy_indices`) being the move in
the side to move's frame, the board flipped for Black.

The rules, Zobrist hash and node features live in the compiled core (`engine/core/chess.cpp`,
bitboards with legal move generation); this module is the typed layer: FEN in and out, UCI
move text, the outcome, and what referees, players and the clock ask.
"""
from __future__ import annotations

import operator
import re
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from saz.engine import _core
from saz.engine.games.base import (
    BLACK,
    DRAW,
    WHITE,
    Game,
    GameInfo,
    Outcome,
    Termination,
)
from saz.engine.games.errors import (
    GameError,
    IllegalMoveError,
    UnsupportedRuleError,
    UnsupportedSizeError,
)
from saz.engine.games.grid import Grid, grid

if TYPE_CHECKING:
    from saz.engine._core import ChessPosition

#: The variants by name: (board side, start FEN).
VARIANTS: dict[str, tuple[int, str]] = {
    "chess": (8, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
    "gardner": (5, "rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1"),
    "losalamos": (6, "rnqknr/pppppp/6/6/PPPPPP/RNQKNR w - - 0 1"),
}
#: The variant a board side plays unless told.
_VARIANT_OF_SIZE = {side: name for name, (side, _) in VARIANTS.items()}

PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING = 1, 2, 3, 4, 5, 6
#: FEN's and UCI's piece letters by type (lower case).
PIECE_LETTERS = " pnbrqk"
#: Material in pawns, for the greedy player's one ply.
_VALUES = (0.0, 1.0, 3.0, 3.0, 5.0, 9.0, 0.0)

#: The core's `termination()` codes (chess.cpp) as the game's Termination.
_TERMINATIONS = {
    1: Termination.CHECKMATE,
    2: Termination.STALEMATE,
    3: Termination.REPETITION,
    4: Termination.FIFTY_MOVES,
    5: Termination.INSUFFICIENT_MATERIAL,
}

#: Draws the rules let a player claim but that do not end the game by themselves (FIDE's
#: threefold repetition and fifty moves): a controller may play on after them (`continued`).
_CLAIMABLE = frozenset({Termination.REPETITION, Termination.FIFTY_MOVES})

_UCI = re.compile(r"([a-z])(\d+)([a-z])(\d+)([nbrq]?)")

#: Plies a point a game may last before a referee stops it: 512 on 8x8.
_PLIES_PER_SQUARE = 8


def _variant_and_side(width: int | None, height: int | None, variant: str | None
                      ) -> tuple[str, int]:
    """The variant and board side that a size and a variant name (either may be None) ask for."""
    if variant is not None:
        if variant not in VARIANTS:
            raise UnsupportedRuleError(
                f"unknown chess variant {variant!r}; expected one of {', '.join(VARIANTS)}")
        side = VARIANTS[variant][0]
        if (width is not None and width != side) or (height is not None and height != side):
            raise UnsupportedSizeError(
                f"the {variant} variant is played on {side}x{side}, not {width}x{height or width}")
        return variant, side
    try:
        w = 8 if width is None else operator.index(width)
        h = w if height is None else operator.index(height)
    except TypeError:
        raise UnsupportedSizeError(
            f"chess board sides must be integers, got {width!r}x{height!r}") from None
    if w != h or w not in _VARIANT_OF_SIZE:
        raise UnsupportedSizeError(
            f"chess is played on 5x5 (gardner), 6x6 (losalamos) or 8x8 (chess), not {w}x{h}")
    return _VARIANT_OF_SIZE[w], w


class Chess(Game):
    """A chess position and its history.

    `Chess()` or `Chess(8)` is the standard game, `Chess(5)` Gardner's, `Chess(6)` Los Alamos;
    `Chess(variant="gardner")` names the variant instead, and `fen=` (or `from_fen`) starts
    from a position. Beyond the `Game` interface: `fen()`, `uci(move)` / `parse_uci(text)` for
    UCI's move text, `in_check()`, `termination()`, `halfmove_clock`, `fullmove_number` and
    `repetitions`. `winning_moves()` are the mates in one.
    """

    name: ClassVar[str] = "chess"
    info: ClassVar[GameInfo] = GameInfo("Chess", sgf_game_type=3, default_size=8,
                                        engine_protocol="uci", rule_options=("variant",),
                                        point_moves=False, setup_by_play=False)
    feature_names: ClassVar[tuple[str, ...]] = (
        "own_pawn", "own_knight", "own_bishop", "own_rook", "own_queen", "own_king",
        "opp_pawn", "opp_knight", "opp_bishop", "opp_rook", "opp_queen", "opp_king",
        "en_passant", "own_castle", "opp_castle", "own_attacks", "opp_attacks", "checkers",
        "extra", "halfmove", "repetition")
    feature_version: ClassVar[int] = 1
    has_pass: ClassVar[bool] = False
    _core: ChessPosition

    def __init__(self, width: int | None = None, height: int | None = None, *,
                 variant: str | None = None, fen: str | None = None) -> None:
        """A game of `variant` (default: the board side's, 8 for chess) from its start
        position or `fen`. UnsupportedSizeError for another size, GameError for an impossible
        FEN."""
        variant, side = _variant_and_side(width, height, variant)
        #: The variant's name; the search compares it to reuse trees.
        self.rules: str = variant
        self.grid: Grid = grid(side, side)
        self._set_position(VARIANTS[variant][1] if fen is None else fen)

    @classmethod
    def from_fen(cls, fen: str, variant: str | None = None) -> Chess:
        """A game starting from `fen` (the start of its history: `undo` stops there); the
        variant, unless named, follows the board's size. GameError for an impossible FEN."""
        if not isinstance(fen, str):
            raise GameError(f"a FEN is text, not {type(fen).__name__}")
        if variant is None:
            rows = fen.split()[0].count("/") + 1 if fen.split() else 0
            variant = _VARIANT_OF_SIZE.get(rows)
            if variant is None:
                raise GameError(f"invalid FEN {fen!r}: {rows} rows is no chess board "
                                f"(5, 6 or 8)")
        return cls(variant=variant, fen=fen)

    def _set_position(self, fen: str) -> None:
        self._attach(_core.new_chess(self.rules, fen))
        self._start_fen = self._core.fen()

    def with_rules(self, **changes: Any) -> Chess:
        """The variant decides the board, so a game changes to no other; the same variant is
        this game."""
        unknown = set(changes) - {"variant"}
        if unknown:
            raise UnsupportedRuleError(f"chess has no rule parameters {', '.join(sorted(unknown))}")
        if changes.get("variant", self.rules) != self.rules:
            raise UnsupportedRuleError("a chess game cannot change its variant")
        return self.copy()

    @property
    def variant(self) -> str:
        return self.rules

    # -- state --------------------------------------------------------------------------------
    def fen(self) -> str:
        """The position as FEN (the en passant square only when a capture onto it is legal)."""
        return self._core.fen()

    @property
    def start_fen(self) -> str:
        """The FEN the history starts from."""
        return self._start_fen

    def start_position(self) -> tuple[np.ndarray, int]:
        start = _core.new_chess(self.rules, self._start_fen)
        return start.board(), start.to_move

    @property
    def halfmove_clock(self) -> int:
        """Plies since the last capture or pawn move (the fifty-move rule's count)."""
        return self._core.halfmove_clock

    @property
    def fullmove_number(self) -> int:
        return self._core.fullmove_number

    @property
    def repetitions(self) -> int:
        """How often the current position occurred before in the game."""
        return self._core.repetitions

    def in_check(self) -> bool:
        """Whether the side to move is in check."""
        return self._core.in_check()

    def termination(self) -> Termination | None:
        """Why the game ended, None while it goes on."""
        return _TERMINATIONS.get(self._core.termination())

    def outcome(self) -> Outcome | None:
        reason = self.termination()
        if reason is None:
            return None
        return Outcome(self._core.winner(), reason, None)

    def continued(self) -> Chess | None:
        """After a draw a player may claim (threefold repetition, fifty moves), a game that goes
        on from this position, for a controller that plays on (a UCI GUI sends the moves after
        it; python-chess plays on unless told to claim). Its history starts here: earlier
        positions no longer count as repetitions, and the fifty-move count starts again (the
        FEN's other fields are kept). None while the game goes on, and after an end that is
        final (checkmate, stalemate, insufficient material)."""
        if self.termination() not in _CLAIMABLE:
            return None
        fields = self.fen().split()
        fields[4] = "0"
        return Chess(variant=self.variant, fen=" ".join(fields))

    # -- moves --------------------------------------------------------------------------------
    @property
    def policy_size(self) -> int:
        """From-to pairs and the underpromotions: P * P + 9 * width."""
        return self._core.policy_size

    def policy_indices(self, moves: np.ndarray) -> np.ndarray:
        """Each move's policy index in the side to move's frame (flipped for Black)."""
        return self._core.policy_indices(np.ascontiguousarray(moves, dtype=np.int32))

    @classmethod
    def graph_tables(cls, width: int, height: int) -> dict[str, np.ndarray] | None:
        """Rays and knight jumps per square (`chess_graph.py`)."""
        from saz.engine.games.chess_graph import chess_graph_tables
        return chess_graph_tables(width, height)

    def is_legal(self, move: int) -> bool:
        try:
            move = operator.index(move)
        except TypeError:
            return False
        return 0 <= move < self.policy_size and self._core.is_legal(move)

    def square_name(self, square: int) -> str:
        """UCI's name of a square (e2)."""
        x, y = square % self.width, square // self.width
        return f"{chr(ord('a') + x)}{self.height - y}"

    def uci(self, move: int) -> str:
        """A move of the side to move as UCI writes it: e2e4, e7e8q, a7a8n, e1g1 (castling).
        GameError for a number that is no move on this board."""
        move = operator.index(move)
        p = self.num_points
        if 0 <= move < p * p:
            src, dst = divmod(move, p)
            text = self.square_name(src) + self.square_name(dst)
            last = 0 if self.to_move == WHITE else self.height - 1
            if abs(int(self.board[src])) == PAWN and dst // self.width == last:
                text += "q"
            return text
        if p * p <= move < self.policy_size:
            j, piece = divmod(move - p * p, 3)
            fx, step = divmod(j, 3)
            tx = fx + step - 1
            fy, ty = (1, 0) if self.to_move == WHITE else (self.height - 2, self.height - 1)
            if 0 <= tx < self.width:
                return (self.square_name(fy * self.width + fx)
                        + self.square_name(ty * self.width + tx) + PIECE_LETTERS[piece + 2])
        raise GameError(f"{move} is no chess move on a {self.width}x{self.height} board")

    def parse_uci(self, text: str) -> int:
        """The legal move of the side to move that UCI's text names (e2e4, e7e8q). GameError for
        text that names no move, IllegalMoveError (a GameError) for one the rules forbid now."""
        match = _UCI.fullmatch(text.strip()) if isinstance(text, str) else None
        if match is None:
            raise GameError(f"{text!r} is not a UCI move (from and to square, and a promotion "
                            "piece where a pawn promotes: e2e4, e7e8q)")
        squares = []
        for file, rank in ((match[1], match[2]), (match[3], match[4])):
            x, r = ord(file) - ord("a"), int(rank)
            if not (0 <= x < self.width and 1 <= r <= self.height):
                raise GameError(f"{text!r}: {file}{rank} is off the "
                                f"{self.width}x{self.height} board")
            squares.append((self.height - r) * self.width + x)
        src, dst = squares
        promo = match[5]
        p = self.num_points
        last = 0 if self.to_move == WHITE else self.height - 1
        promotes = abs(int(self.board[src])) == PAWN and dst // self.width == last
        if promo and not promotes:
            raise IllegalMoveError(src * p + dst, f"{text} is no promotion")
        if promotes and not promo:
            raise IllegalMoveError(src * p + dst,
                                   f"{text} promotes a pawn: name the piece ({text}q)")
        if promo in ("", "q"):
            move = src * p + dst
        else:
            fx, tx = src % self.width, dst % self.width
            if src // self.width != (1 if self.to_move == WHITE else self.height - 2) \
                    or abs(tx - fx) > 1:
                raise IllegalMoveError(src * p + dst, f"{text} is not legal here")
            move = p * p + (fx * 3 + (tx - fx + 1)) * 3 + PIECE_LETTERS.index(promo) - 2
        if not self.is_legal(move):
            reason = ("the game is over" if self.is_over()
                      else f"{text} is not legal in {self.fen()}")
            raise IllegalMoveError(move, reason)
        return move

    def winning_moves(self) -> list[int]:
        """The mates in one."""
        return self._core.winning_moves()

    # -- what the referee, the clock and the greedy player ask of the game ------------------------
    @property
    def max_length(self) -> int:
        """Eight plies a square: 512 on 8x8, 200 on Gardner's 5x5. Games that end by the rules
        end well before (the fifty-move rule bounds a game that goes nowhere)."""
        return _PLIES_PER_SQUARE * self.num_points

    def plies_left(self) -> float:
        """A generous guess for a clock: about 40 moves each at the start of an 8x8 game,
        fewer as it goes on, never under 20 plies; scaled by the board's size."""
        scale = self.num_points / 64
        return max(1.0, 20.0 * scale, 120.0 * scale - len(self.moves) / 2)

    def heuristic(self, moves: np.ndarray) -> np.ndarray:
        """Mate first; else the material a move wins (the piece taken, and the promotion's
        gain). The greedy player's one ply."""
        mates = set(self.winning_moves())
        board = self.board
        p = self.num_points
        out = np.zeros(len(moves))
        for i, move in enumerate(int(m) for m in moves):
            if move in mates:
                out[i] = 100.0
                continue
            last = 0 if self.to_move == WHITE else self.height - 1
            if move >= p * p:  # an underpromotion: a knight, bishop or rook for a pawn
                j, piece = divmod(move - p * p, 3)
                fx, step = divmod(j, 3)
                dst = last * self.width + fx + step - 1
                out[i] = _VALUES[piece + 2] - 1.0 + _VALUES[abs(int(board[dst]))]
                continue
            src, dst = divmod(move, p)
            out[i] = _VALUES[abs(int(board[dst]))]
            if abs(int(board[src])) == PAWN and dst // self.width == last:
                out[i] += _VALUES[QUEEN] - 1.0
        return out

    def __str__(self) -> str:
        """The board as text, rows from the top: FEN's letters (White upper case), . empty."""
        b = self.board
        rows = []
        for y in range(self.height):
            row = b[y * self.width:(y + 1) * self.width]
            rows.append(" ".join(
                "." if v == 0 else
                (PIECE_LETTERS[abs(int(v))].upper() if v == WHITE * abs(int(v))
                 else PIECE_LETTERS[abs(int(v))])
                for v in row))
        return "\n".join(rows)


__all__ = ["BLACK", "DRAW", "VARIANTS", "WHITE", "Chess"]
