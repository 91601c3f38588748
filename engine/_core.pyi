# The compiled core's interface (engine/core/module.cpp), for the type checker.
# Written by nanobind's stubgen (python -m nanobind.stubgen -m saz.engine._core), then the two
# factories' return types narrowed to the classes they return (OthelloPosition, GoPosition).
# tests/test_core_stub.py checks that it names exactly what the module defines.
"""
saz's compiled core: the rules, Zobrist hashing, feature encoding and search tree.
"""

from collections.abc import Sequence
from typing import Annotated, TypeAlias

import numpy
from numpy.typing import NDArray

class Position:
    """A position and its history under one game's rules (see position.hpp)."""

    @property
    def width(self) -> int: ...

    @property
    def height(self) -> int: ...

    @property
    def num_points(self) -> int: ...

    @property
    def num_features(self) -> int: ...

    @property
    def to_move(self) -> int: ...

    @property
    def hash(self) -> int: ...

    @property
    def ply(self) -> int: ...

    @property
    def num_empty(self) -> int: ...

    def board(self) -> Annotated[NDArray[numpy.int8], dict(shape=(None,))]:
        """Stones per point as a new int8 array (BLACK 1, WHITE -1, EMPTY 0)."""

    def legal_moves(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))]: ...

    def search_moves(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))]: ...

    def urgent_moves(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))]: ...

    def is_legal(self, move: int) -> bool: ...

    def play(self, move: int) -> None: ...

    def undo(self) -> None: ...

    def switch_turn(self) -> None: ...

    def is_over(self) -> bool: ...

    def winner(self) -> int: ...

    def winning_moves(self) -> list[int]: ...

    def forced_moves(self) -> list[int] | None: ...

    def encode(self, out: Annotated[NDArray[numpy.float32], dict(shape=(None, None), order='C', device='cpu')]) -> None: ...

    @property
    def policy_size(self) -> int:
        """The network's policy width: num_nodes, or chess's move pairs."""

    def policy_indices(self, moves: Annotated[NDArray[numpy.int32], dict(shape=(None,), order='C', writable=False)]) -> Annotated[NDArray[numpy.int32], dict(shape=(None,))]:
        """
        Each move's index in the policy (side to move's frame), as a new int32 array.
        """

    def clone(self) -> Position: ...

    def perft(self, depth: int) -> tuple[int, int]:
        """(leaves, moves played) `depth` plies below; the position is restored."""

    def solve(self, max_nodes: int, exact: bool = True, max_seconds: float = 0.0) -> tuple[int, int, int, int]:
        """
        (status, move, value, nodes) of an exact endgame solve (position.hpp's Solution; status 0: the game has no solver, 1: out of nodes or past max_seconds > 0, 2: solved).
        """

    def prove_threats(self, max_nodes: int, threes: bool = True) -> tuple[int, int, int, int]:
        """
        (status, move, value, nodes) of a threat-space search for a forced win (status 0: the game has none, 1: no win found, 2: proven win by `move`); the position is restored.
        """

    def threat_defences(self, max_nodes: int) -> list[int] | None:
        """
        None when the opponent has no win by fours found; else the moves that may stop it (empty: none does).
        """

class Othello64(Position):
    def flips(self, move: int) -> list[int]: ...

    def disc_count(self) -> tuple[int, int]: ...

    def words(self) -> tuple[list[int], list[int]]: ...

    def unsafe_words(self) -> tuple[list[int], list[int]]: ...

class Othello128(Position):
    def flips(self, move: int) -> list[int]: ...

    def disc_count(self) -> tuple[int, int]: ...

    def words(self) -> tuple[list[int], list[int]]: ...

    def unsafe_words(self) -> tuple[list[int], list[int]]: ...

class Othello192(Position):
    def flips(self, move: int) -> list[int]: ...

    def disc_count(self) -> tuple[int, int]: ...

    def words(self) -> tuple[list[int], list[int]]: ...

    def unsafe_words(self) -> tuple[list[int], list[int]]: ...

class Othello256(Position):
    def flips(self, move: int) -> list[int]: ...

    def disc_count(self) -> tuple[int, int]: ...

    def words(self) -> tuple[list[int], list[int]]: ...

    def unsafe_words(self) -> tuple[list[int], list[int]]: ...

class Othello384(Position):
    def flips(self, move: int) -> list[int]: ...

    def disc_count(self) -> tuple[int, int]: ...

    def words(self) -> tuple[list[int], list[int]]: ...

    def unsafe_words(self) -> tuple[list[int], list[int]]: ...

class Othello512(Position):
    def flips(self, move: int) -> list[int]: ...

    def disc_count(self) -> tuple[int, int]: ...

    def words(self) -> tuple[list[int], list[int]]: ...

    def unsafe_words(self) -> tuple[list[int], list[int]]: ...

class Othello704(Position):
    def flips(self, move: int) -> list[int]: ...

    def disc_count(self) -> tuple[int, int]: ...

    def words(self) -> tuple[list[int], list[int]]: ...

    def unsafe_words(self) -> tuple[list[int], list[int]]: ...

#: The Othello classes, one per board width in 64-bit words; new_othello returns one of them.
OthelloPosition: TypeAlias = (
    Othello64 | Othello128 | Othello192 | Othello256 | Othello384 | Othello512 | Othello704)

def new_othello(width: int, height: int, black: Sequence[int], white: Sequence[int], to_move: int) -> OthelloPosition:
    """
    An Othello position with these discs (point lists) and side to move; its class holds the fewest 64-bit words that cover the board.
    """

def clear_solve_table() -> None:
    """
    Empty this thread's endgame table, which solves otherwise keep and reuse: for timing a solve from scratch.
    """

class GomokuPosition(Position):
    """
    Gomoku under freestyle, exact-five or renju rules on a width x height board (5..32 a side).
    """

    def __init__(self, width: int, height: int, rule: str = 'freestyle') -> None: ...

    @property
    def rule(self) -> str: ...

    def cells(self) -> Annotated[NDArray[numpy.int8], dict(shape=(None,), writable=False)]:
        """
        The stones as a read-only int8 view that follows the position (no copy).
        """

    def wins_if_played(self, move: int, color: int) -> bool: ...

    def forbidden(self, move: int) -> int:
        """
        Why renju forbids Black the empty point: 0 not, 1 double three, 2 double four, 3 overline (always 0 under the other rules).
        """

    def winning_line(self) -> list[int] | None: ...

    def threats(self) -> Annotated[NDArray[numpy.uint8], dict(shape=(None, None))]:
        """[num_points, 6] 0/1 threat planes (see encode), as a new uint8 array."""

    def shapes(self) -> Annotated[NDArray[numpy.uint8], dict(shape=(None, None))]:
        """[num_points, 10] 0/1 shape planes (see encode), as a new uint8 array."""

class Go64(Position):
    @property
    def komi(self) -> float: ...

    @komi.setter
    def komi(self, arg: float, /) -> None: ...

    @property
    def passes(self) -> int: ...

    def resume(self) -> None: ...

    def captures(self, color: int) -> int: ...

    def liberties(self, point: int) -> int: ...

    def ladder_captured(self, point: int) -> bool:
        """Whether a ladder captures the chain on `point` (in atari: its side first; two
        liberties: the attacker first; more: False)."""

    def areas(self) -> tuple[int, int]: ...

    def owners(self) -> list[int]: ...

    def score(self) -> float: ...

class Go128(Position):
    @property
    def komi(self) -> float: ...

    @komi.setter
    def komi(self, arg: float, /) -> None: ...

    @property
    def passes(self) -> int: ...

    def resume(self) -> None: ...

    def captures(self, color: int) -> int: ...

    def liberties(self, point: int) -> int: ...

    def ladder_captured(self, point: int) -> bool:
        """Whether a ladder captures the chain on `point` (in atari: its side first; two
        liberties: the attacker first; more: False)."""

    def areas(self) -> tuple[int, int]: ...

    def owners(self) -> list[int]: ...

    def score(self) -> float: ...

class Go256(Position):
    @property
    def komi(self) -> float: ...

    @komi.setter
    def komi(self, arg: float, /) -> None: ...

    @property
    def passes(self) -> int: ...

    def resume(self) -> None: ...

    def captures(self, color: int) -> int: ...

    def liberties(self, point: int) -> int: ...

    def ladder_captured(self, point: int) -> bool:
        """Whether a ladder captures the chain on `point` (in atari: its side first; two
        liberties: the attacker first; more: False)."""

    def areas(self) -> tuple[int, int]: ...

    def owners(self) -> list[int]: ...

    def score(self) -> float: ...

class Go384(Position):
    @property
    def komi(self) -> float: ...

    @komi.setter
    def komi(self, arg: float, /) -> None: ...

    @property
    def passes(self) -> int: ...

    def resume(self) -> None: ...

    def captures(self, color: int) -> int: ...

    def liberties(self, point: int) -> int: ...

    def ladder_captured(self, point: int) -> bool:
        """Whether a ladder captures the chain on `point` (in atari: its side first; two
        liberties: the attacker first; more: False)."""

    def areas(self) -> tuple[int, int]: ...

    def owners(self) -> list[int]: ...

    def score(self) -> float: ...

class Go640(Position):
    @property
    def komi(self) -> float: ...

    @komi.setter
    def komi(self, arg: float, /) -> None: ...

    @property
    def passes(self) -> int: ...

    def resume(self) -> None: ...

    def captures(self, color: int) -> int: ...

    def liberties(self, point: int) -> int: ...

    def ladder_captured(self, point: int) -> bool:
        """Whether a ladder captures the chain on `point` (in atari: its side first; two
        liberties: the attacker first; more: False)."""

    def areas(self) -> tuple[int, int]: ...

    def owners(self) -> list[int]: ...

    def score(self) -> float: ...

#: The Go classes, one per board width in 64-bit words; new_go returns one of them.
GoPosition: TypeAlias = Go64 | Go128 | Go256 | Go384 | Go640

def new_go(width: int, height: int, black: Sequence[int], white: Sequence[int], to_move: int, komi: float, black_keys: Sequence[int], white_keys: Sequence[int], white_to_move_key: int) -> GoPosition:
    """
    A Go position with these stones (point lists), side to move, komi and Zobrist keys; its class holds the fewest 64-bit words that cover the board. GameError for a chain without liberty.
    """

def go_group_members(x: Annotated[NDArray[numpy.float32], dict(shape=(None, None, None), order='C', device='cpu', writable=False)], width: int, height: int) -> Annotated[NDArray[numpy.int32], dict(shape=(None, None, None))]:
    """
    The chain groups of encoded Go positions x [B, width*height + 1, F] (F >= 2; plane 0 own stones, 1 opponent stones, > 0.5 a stone) as int32 [B, width*height, 4]: per point its entries slot * 2 + role, ascending, padded with -1. A stone: its chain's slot, role 0. An empty point: role 1 for each chain it is a liberty of. The slots of a position are 0..G-1, its chains by lowest point. ValueError for bad shapes or sizes.
    """

class ChessPosition(Position):
    """
    Chess (8x8) or a small board of its family (Gardner 5x5, Los Alamos 6x6): chess.cpp.
    """

    @property
    def variant(self) -> str: ...

    def fen(self) -> str:
        """The position as FEN (en passant only when legal)."""

    def termination(self) -> int:
        """
        Why the game ended: 0 not over, 1 checkmate, 2 stalemate, 3 threefold repetition, 4 fifty-move rule, 5 insufficient material.
        """

    def in_check(self) -> bool: ...

    @property
    def halfmove_clock(self) -> int: ...

    @property
    def fullmove_number(self) -> int: ...

    @property
    def repetitions(self) -> int:
        """
        How often this position occurred before (since the last capture or pawn move).
        """

def new_chess(variant: str = 'chess', fen: str | None = None) -> ChessPosition:
    """
    A chess position of the variant ('chess', 'gardner', 'losalamos') from a FEN, or its start position; GameError for an impossible FEN.
    """

class TreeOptions:
    """The tree's search constants and limits."""

    def __init__(self) -> None: ...

    @property
    def c_puct(self) -> float: ...

    @c_puct.setter
    def c_puct(self, arg: float, /) -> None: ...

    @property
    def fpu_reduction(self) -> float: ...

    @fpu_reduction.setter
    def fpu_reduction(self, arg: float, /) -> None: ...

    @property
    def virtual_loss(self) -> int: ...

    @virtual_loss.setter
    def virtual_loss(self, arg: int, /) -> None: ...

    @property
    def forced_playouts_k(self) -> float: ...

    @forced_playouts_k.setter
    def forced_playouts_k(self, arg: float, /) -> None: ...

    @property
    def max_bytes(self) -> int: ...

    @max_bytes.setter
    def max_bytes(self, arg: int, /) -> None: ...

    @property
    def max_nodes(self) -> int: ...

    @max_nodes.setter
    def max_nodes(self, arg: int, /) -> None: ...

    @property
    def solve_empties(self) -> int: ...

    @solve_empties.setter
    def solve_empties(self, arg: int, /) -> None: ...

    @property
    def solve_nodes(self) -> int: ...

    @solve_nodes.setter
    def solve_nodes(self, arg: int, /) -> None: ...

    @property
    def threat_nodes(self) -> int: ...

    @threat_nodes.setter
    def threat_nodes(self, arg: int, /) -> None: ...

    @property
    def planes_read(self) -> int: ...

    @planes_read.setter
    def planes_read(self, arg: int, /) -> None: ...

class Tree:
    """The search tree as flat arrays with a byte budget (tree.hpp)."""

    def __init__(self, options: TreeOptions) -> None: ...

    @property
    def options(self) -> TreeOptions: ...

    @options.setter
    def options(self, arg: TreeOptions, /) -> None: ...

    def reset(self, position: Position) -> None: ...

    def advance(self, moves: Sequence[int], position: Position) -> bool: ...

    def clear(self) -> None: ...

    @property
    def has_root(self) -> bool: ...

    def collect(self, max_leaves: int, max_descents: int, x: Annotated[NDArray[numpy.float32], dict(shape=(None, None, None), order='C', device='cpu')]) -> tuple[int, int, int]:
        """
        (leaves, settled, collisions): new leaves encoded into x[:leaves], as one batch.
        """

    def absorb(self, log_policy: Annotated[NDArray[numpy.float32], dict(shape=(None, None), order='C', device='cpu', writable=False)], values: Annotated[NDArray[numpy.float32], dict(shape=(None,), order='C', device='cpu', writable=False)], group: int = 1, blend: float = 0.0) -> None: ...

    @property
    def pending_batches(self) -> int: ...

    @property
    def root_expanded(self) -> bool: ...

    @property
    def root_visits(self) -> int: ...

    @property
    def root_value(self) -> float: ...

    @property
    def root_proven(self) -> int:
        """+1 / -1 when the root's result is proven by settled children, else 0."""

    def settle_root_move(self, move: int, exact: float) -> bool:
        """
        Settle the root's child for `move` at `exact` (its side to move's value).
        """

    @property
    def root_proven_move(self) -> int:
        """A root move proven to win (its child settled as lost), -1 when none."""

    def root_children(self) -> list[tuple[int, int, float, float]]:
        """
        [(move, visits, value for the root's side to move, prior)] of the visited moves.
        """

    def root_settled(self) -> list[tuple[int, float]]:
        """
        [(move, proven value for the root's side to move)] of the root's settled children.
        """

    def root_edges(self) -> tuple[list[int], list[float]]: ...

    def set_root_priors(self, priors: Sequence[float]) -> None: ...

    def restrict_root(self, allowed: Sequence[int]) -> None: ...

    def set_root_targets(self, moves: Sequence[int], visits: Sequence[int]) -> None:
        """
        The next descents leave the root by `moves` only, each at most `visits` more times, the
        most left first; collect stops once all are spent. Empty: PUCT.
        """

    def root_targets(self) -> list[tuple[int, int]]:
        """[(move, visits left)] of the root targets, in the order they were set."""

    def principal_variation(self, move: int, limit: int = 32) -> list[int]: ...

    def visits_at(self, moves: Sequence[int]) -> int: ...

    def validate(self) -> str: ...

    @property
    def num_nodes(self) -> int: ...

    @property
    def bytes(self) -> int: ...

    @property
    def full(self) -> bool: ...

def row_digests(x: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)]) -> Annotated[NDArray[numpy.uint64], dict(shape=(None, 2))]:
    """
    Two 64-bit digests [rows, 2] of each row x[i] of a float32 C-contiguous array, from its bytes and its shape (x.shape[1:]): the evaluation cache's keys.
    """
