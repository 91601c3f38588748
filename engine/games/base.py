"""The one game interface that search, trainer, protocols and perft use (OpenSpiel-style).

A `Game` object is a position together with the line of play that led to it: `play` and `undo`
walk along that line. Moves are point indices `y * width + x` (see `grid.py`); the index
`width * height` (`pass_move`) is the pass and also the graph's extra node. Colours are
`BLACK = 1` and `WHITE = -1`, so the opponent of `c` is `-c` and `board * to_move` is the board
from the side to move's view (+1 own, -1 opponent, 0 empty).

Rules variants are explicit constructor parameters (a frozen rules object per game), never globals.
Bad input raises a `GameError` subclass (see `errors.py`) and leaves the position unchanged.
"""
from __future__ import annotations

import enum
import operator
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar, Self

import numpy as np

from saz.engine._core import Position as CorePosition
from saz.engine.games.errors import GameError, IllegalMoveError, UndoError, UnsupportedRuleError
from saz.engine.games.grid import Grid

BLACK = 1
WHITE = -1
EMPTY = 0
#: The value `winner()` returns for a drawn game.
DRAW = 0

COLOR_NAMES = {BLACK: "black", WHITE: "white"}

#: The moves the core's bindings take (32-bit); anything beyond is off the board.
_INT32_MIN, _INT32_MAX = -2**31, 2**31 - 1



class Termination(enum.Enum):
    """How the rules ended a game."""

    #: Counted: Go after two passes (area), Othello when neither side can place a disc (discs).
    SCORE = "score"
    #: A line of five decided it (Gomoku).
    FIVE = "five"
    #: The board filled with no line of five: a draw (Gomoku).
    BOARD_FULL = "board full"
    #: The side to move is in check and has no legal move: it lost (chess).
    CHECKMATE = "checkmate"
    #: The side to move has no legal move and is not in check: a draw (chess).
    STALEMATE = "stalemate"
    #: The same position for the third time (chess's threefold repetition): a draw.
    REPETITION = "threefold repetition"
    #: A hundred plies without a capture or pawn move (chess's fifty-move rule): a draw.
    FIFTY_MOVES = "fifty-move rule"
    #: Neither side has the pieces left to mate (chess): a draw.
    INSUFFICIENT_MATERIAL = "insufficient material"


@dataclass(frozen=True)
class Outcome:
    """The end of a game by its rules: who won, how, and the count where the game has one."""

    #: BLACK, WHITE or DRAW.
    winner: int
    termination: Termination
    #: Black's lead by the game's own count (Go's area with komi, Othello's discs); None for a
    #: game decided without a count.
    score: float | None = None


class Coordinates(enum.Enum):
    """How text protocols (GTP) name a game's points: a column letter and a row number."""

    #: Go's: columns A..Z without I (so at most 25), row 1 at the bottom. Gomoku's too: GoGui
    #: draws it on a Go board.
    GO = "go"
    #: Othello's (gtp-rhino, Quarry): columns A..Z with I, row 1 at the top.
    TOP_LEFT = "top-left"


@dataclass(frozen=True)
class GameInfo:
    """What protocols, record files and controllers know of a game, apart from any position
    (OpenSpiel's GameType): one value per game class, `Game.info`."""

    #: The name GTP gives the game (`list_games`, `set_game`, `gogui-rules_game_id`), as Quarry
    #: and gtp-rhino spell it: a capital, then lower case.
    title: str
    #: SGF's game type (`GM`): 1 Go, 2 Othello, 4 Gomoku.
    sgf_game_type: int
    #: The board side a game starts on unless told: SGF's default without `SZ`, and the
    #: engine's until a controller asks for another.
    default_size: int
    #: How GTP names the points.
    coordinates: Coordinates = Coordinates.GO
    #: The protocol tournament engines of the game speak: "gomocup" (Gomoku: Piskvork,
    #: c-gomoku-cli) or "gtp".
    engine_protocol: str = "gtp"
    #: The constructor's rule parameters a player chooses between games (a match's `--komi`
    #: and `--rule`), leaving out those that have one value (Go's rule set, Othello's).
    rule_options: tuple[str, ...] = ()
    #: Whether controllers know the rules themselves (Go: GoGui, Sabaki, GNU Go): they choose
    #: the board and set positions up as they please, so the engine offers none of GoGui's
    #: rules-engine commands that would impose its own (`gogui-rules_board_size`,
    #: `gogui-rules_setup`).
    controllers_know_rules: bool = False
    #: Whether the game's moves are points (a stone or disc placed, or the pass): what GTP and
    #: SGF speak. Not chess, whose moves join two squares: it has UCI and FEN instead.
    point_moves: bool = True
    #: Whether a stone of either colour may be set up by playing it on any empty point (GoGui's
    #: `gogui-rules_setup`): not in Othello, where every disc must turn others over.
    setup_by_play: bool = True


#: How many plies a point a game may last before a referee or self-play stops it (`max_length`).
_PLIES_PER_POINT = 4


def _check_color(color: object) -> None:
    if color != BLACK and color != WHITE:
        raise GameError(f"a colour must be BLACK (1) or WHITE (-1), not {color!r}")


def parse_diagram(diagram: str, to_move: int) -> tuple[int, int, list[int], list[int]]:
    """Read a board diagram in the format of `str(game)`: one line per row from the top, `X`
    black, `O` white, `.` empty, spaces ignored. Returns (width, height, black points, white
    points); GameError on a malformed diagram or side to move."""
    rows = ["".join(line.split()) for line in diagram.strip().splitlines()]
    rows = [row for row in rows if row]
    if not rows or any(len(row) != len(rows[0]) for row in rows):
        raise GameError("a diagram needs rows of equal length")
    text = "".join(rows)
    unknown = set(text) - set("XO.")
    if unknown:
        raise GameError(f"unknown diagram characters {''.join(sorted(unknown))!r}; use X O .")
    if to_move != BLACK and to_move != WHITE:
        raise GameError(f"to_move must be BLACK (1) or WHITE (-1), got {to_move!r}")
    black = [p for p, char in enumerate(text) if char == "X"]
    white = [p for p, char in enumerate(text) if char == "O"]
    return len(rows[0]), len(rows), black, white


class Game(ABC):
    """A position and its history under one game's rules.

    The rules themselves live in the compiled core (`engine/core/`): every game keeps its
    position in `_core`, a `saz.engine._core.Position`, and this class is the typed layer over
    it that front-ends, referee, players and tests use. What the core does not keep is here:
    the moves and their colours (for `moves`, `colors` and game records) and the moves played
    out of turn."""

    #: Registry name: "go", "gomoku", "othello".
    name: ClassVar[str]
    #: Names of the node feature planes `encode` writes, in order; the model's input width.
    feature_names: ClassVar[tuple[str, ...]]
    #: Bumped whenever the meaning of the features changes; a model card must match it, or
    #: name an older version listed in `feature_prefixes`.
    feature_version: ClassVar[int]
    #: Older feature versions whose planes are this version's first k, unchanged (planes were
    #: only appended since): `{version: k}`. A network trained on one still runs (the evaluator
    #: feeds it those k planes), and a training run resumed from one grows its input.
    feature_prefixes: ClassVar[Mapping[int, int]] = MappingProxyType({})
    #: Whether a side whose only legal move is the pass passes without being asked (Othello):
    #: referees play it for the side, and GTP does not send it (engines skip such a side
    #: themselves). Where False (Go), a pass is a move like any other.
    passes_implicitly: ClassVar[bool] = False
    #: Whether the game has a pass (`pass_move`) at all; where not (chess), `pass_move` is only
    #: the extra node's index and may coincide with a move's.
    has_pass: ClassVar[bool] = True
    #: The roles of the members of a position's groups (`group_members`), in role order; empty
    #: (the default) where the game has no groups. Go's groups are its chains (role 0 a
    #: chain's stones, role 1 its liberties), Gomoku's its line segments, Othello's its lines.
    #: A network may pool over them (docs/ARCHITECTURE.md).
    group_roles: ClassVar[tuple[str, ...]] = ()

    #: What protocols, files and controllers know of the game.
    info: ClassVar[GameInfo]

    grid: Grid
    #: The rule set, of the game's own type (Go's `GoRules`, Gomoku's `GomokuRule`, Othello's
    #: rule name); `with_rules` derives a game under other rules.
    rules: object
    #: The position in the compiled core: the rules, hash and encoding run there.
    _core: CorePosition
    #: The moves played so far and the colour that played each.
    _moves: list[int]
    _colors: list[int]
    #: The board as last read from the core (None after a change).
    _board: np.ndarray | None = None
    #: Indices into `_moves` of the moves played out of turn (`play(move, color)` for the side
    #: not to move), so that `undo` gives the move back to the side that had it. Immutable and
    #: almost always empty, so copies share it.
    _out_of_turn: tuple[int, ...] = ()

    @abstractmethod
    def __init__(self, width: int, height: int | None = None, **rules: Any) -> None:
        """A new game at its start position on a `width` x `height` board (square when
        `height` is None); `rules` are the game's own keyword parameters (komi, rule)."""

    def _attach(self, core: CorePosition) -> None:
        """Start the history at `core`'s position (a subclass's constructor calls this)."""
        self._core = core
        self._moves = []
        self._colors = []
        self._board = None
        self._out_of_turn = ()

    # -- geometry -----------------------------------------------------------------------------
    @property
    def width(self) -> int:
        return self.grid.width

    @property
    def height(self) -> int:
        return self.grid.height

    @property
    def num_points(self) -> int:
        return self.grid.num_points

    @property
    def pass_move(self) -> int:
        """The pass move's index, one past the last point (the graph's extra node)."""
        return self.grid.num_points

    @property
    def num_nodes(self) -> int:
        """Nodes of the position's graph: every point plus the extra node."""
        return self.grid.num_points + 1

    @property
    def policy_size(self) -> int:
        """Entries of the network's policy: one per node (the extra node's is the pass) unless
        the game's moves are not points (chess: one per from-to pair and underpromotion)."""
        return self.num_nodes

    def policy_indices(self, moves: np.ndarray) -> np.ndarray:
        """Where each of `moves` sits in the network's policy (`[policy_size]`), in the side to
        move's frame; the default is the move itself (a point, or the pass: the extra node)."""
        return moves

    @classmethod
    def graph_tables(cls, width: int, height: int) -> dict[str, np.ndarray] | None:
        """The tables the network reads for a width x height board (`engine/graph.py`), by
        ONNX input name; None (the default) for the lattice: orthogonal neighbours and the
        extra node."""
        return None

    @classmethod
    def group_members(cls, x: np.ndarray, width: int, height: int) -> np.ndarray:
        """The groups of each encoded position `x [B, nodes, planes]` (float32, C-contiguous)
        of a width x height board, as `[B, points, K]` int32: each point's memberships, an
        entry `slot * len(group_roles) + role` (slots 0..G-1 per position), ascending, padded
        with -1. A function of the features alone, so the engine (from a batch) and the
        trainer (from replay) compute the same groups. Only for a game with `group_roles`."""
        raise NotImplementedError(f"{cls.__name__} has no groups (its group_roles are empty)")

    @property
    def num_empty(self) -> int:
        """Empty points: how far an endgame is from its end (the solver's measure)."""
        return self._core.num_empty

    @classmethod
    def num_features(cls) -> int:
        return len(cls.feature_names)

    @classmethod
    def features_read_by(cls, version: int, names: Sequence[str]) -> int | None:
        """How many of this version's planes, from the first, a network trained on features
        `version` named `names` reads: all of them for this version, k for an older version
        listed in `feature_prefixes` whose names are this version's first k; None when the
        network cannot read these features at all."""
        if version == cls.feature_version:
            return len(names) if tuple(names) == cls.feature_names else None
        k = cls.feature_prefixes.get(version)
        return k if k is not None and tuple(names) == cls.feature_names[:k] else None

    @classmethod
    def focus_masks(cls, x: np.ndarray, width: int, height: int,
                    min_side: int) -> np.ndarray | None:
        """Where only part of the board bears on a position, the nodes the network should see
        of each encoded position `x [B, nodes, planes]` (its features) on a width x height
        board: `[B, nodes]` bool, True = kept, the extra node always; a window at least
        `min_side` points a side where the board allows. None: the whole board, for every row.
        The default is None: in Go and Othello a point anywhere can decide the game."""
        return None

    # -- state --------------------------------------------------------------------------------
    @property
    def board(self) -> np.ndarray:
        """Stones per point as read-only int8 `[num_points]` (BLACK, WHITE, EMPTY)."""
        board = self._board
        if board is None:
            board = self._core.board()
            board.setflags(write=False)
            self._board = board
        return board

    @property
    def to_move(self) -> int:
        """The colour to move (BLACK or WHITE)."""
        return self._core.to_move

    @property
    def hash(self) -> int:
        """Zobrist hash of the position, side to move included."""
        return self._core.hash

    @property
    def moves(self) -> list[int]:
        """The moves played so far, oldest first (passes included). Do not modify."""
        return self._moves

    def colors(self) -> list[int]:
        """The colour that played each move of `moves` (they alternate unless a move was
        played out of turn)."""
        return list(self._colors)

    @abstractmethod
    def start_position(self) -> tuple[np.ndarray, int]:
        """The board the history starts from (int8 `[num_points]`; handicap and setup stones
        included) and the side to move there: what a game record's setup holds."""

    # -- rules --------------------------------------------------------------------------------
    def legal_moves(self) -> np.ndarray:
        """The moves the side to move may choose from, ascending, as an int64 array (empty once
        the game is over)."""
        return self._core.legal_moves()

    def search_moves(self) -> np.ndarray:
        """The legal moves worth a search's visits, ascending: `legal_moves` less those that can
        only hurt the side that plays them (Go: filling one's own eye). The tree expands these;
        `play` still takes every legal move."""
        return self._core.search_moves()

    def urgent_moves(self) -> np.ndarray:
        """The search moves the root should look at whatever the network's prior, ascending:
        moves whose worth the rules tell at a glance and a network seeing a few steps may miss
        (Go: capturing a chain of three stones or more in atari). The search lifts their root
        priors to `SearchOptions.urgent_prior`. Empty for most games."""
        return self._core.urgent_moves()

    def is_legal(self, move: int) -> bool:
        """Whether `play(move)` would accept `move` now; never raises. After an end
        that the rules let a controller continue (Go's two passes) this is the move's legality
        in the continued game, while `legal_moves` is empty."""
        try:
            move = operator.index(move)
        except TypeError:  # not a move at all
            return False
        # Checked here: the core takes 32-bit moves, and no game has a move outside 0..pass.
        return 0 <= move <= self.pass_move and self._core.is_legal(move)

    def play(self, move: int, color: int | None = None) -> None:
        """Play `move` for `color` (default: the side to move); afterwards the other colour is
        to move. IllegalMoveError leaves the position unchanged.

        A colour that is not to move may play too: GUIs set up positions with moves of one colour
        (GTP `play`, SGF records), and GTP engines such as GNU Go and KataGo accept them. No move
        is invented for the other side: the move is simply played out of turn."""
        if color is not None and color != self._core.to_move:
            self._play_out_of_turn(move, color)
            return
        move = operator.index(move)
        if not _INT32_MIN <= move <= _INT32_MAX:  # beyond what the core takes: off any board
            raise IllegalMoveError(move, "off the board")
        mover = self._core.to_move
        self._core.play(move)
        self._moves.append(move)
        self._colors.append(mover)
        self._board = None

    def undo(self) -> None:
        """Take back the last move, returning to the position before it, side to move included;
        UndoError when there is none."""
        if not self._moves:
            raise UndoError("no move to undo")
        self._core.undo()  # restores the side to move the move was played with
        self._moves.pop()
        self._colors.pop()
        self._board = None
        self._restore_turn()

    def play_random(self, plies: int, rng: np.random.Generator) -> int:
        """Play up to `plies` uniformly random legal moves, a pass only when it is the one legal
        move (Othello's forced pass), and never a move that ends the game: the varied openings
        of matches, self-play and benchmarks. Returns how many were played: fewer than `plies`
        only when every legal move left would end the game."""
        played = 0
        while played < plies and not self.is_over():
            legal = self.legal_moves()
            if len(legal) > 1 and self.has_pass:
                legal = legal[legal != self.pass_move]
            while True:
                move = int(rng.choice(legal))
                self.play(move)
                if not self.is_over():
                    break
                self.undo()  # an opening leaves a game to play: draw again among the others
                legal = legal[legal != move]
                if len(legal) == 0:
                    return played
            played += 1
        return played

    def set_to_move(self, color: int) -> None:
        """Make `color` the side to move without a move (SGF's `PL`, GTP's `genmove` for the
        colour not to move). It is not a move: `moves` does not list it, and `undo` returns to
        the position before the last move, with the side to move it had then."""
        _check_color(color)
        if color != self._core.to_move:
            self._switch_turn()

    def _switch_turn(self) -> None:
        """Give the move to the other colour in place, without a move."""
        self._core.switch_turn()

    def _play_out_of_turn(self, move: int, color: int) -> None:
        """`play` for a colour that is not to move: the turn passes to it, then it moves; `undo`
        gives the turn back (it reads `_out_of_turn`)."""
        _check_color(color)
        self._switch_turn()
        try:
            self.play(move)
        except GameError:
            self._switch_turn()
            raise
        self._out_of_turn = (*self._out_of_turn, len(self._moves) - 1)

    def _restore_turn(self) -> None:
        """After an undo (which leaves the mover to move): the turn goes back to the side that
        had it when the move was played out of turn."""
        out_of_turn = self._out_of_turn
        if out_of_turn and out_of_turn[-1] == len(self._moves):
            self._out_of_turn = out_of_turn[:-1]
            self._switch_turn()

    def continued(self) -> Self | None:
        """A copy of this finished game that goes on, for a controller that plays on after the
        end (Go after two passes: the passes no longer end it); None where the end is final (a
        five in Gomoku, no disc left to place in Othello), which is the default."""
        return None

    def with_rules(self, **changes: Any) -> Self:
        """This position and its history under other rule parameters (Go's komi, Gomoku's
        rule): setup stones and the colour of every move are kept; nothing is replayed onto an
        empty board. UnsupportedRuleError for parameters the game does not have or values it
        does not accept; GameError if the history is not legal under the new rules."""
        raise UnsupportedRuleError(
            f"{self.name} has no rule parameters {', '.join(sorted(changes))}")

    @classmethod
    def rules_from_record(cls, komi: float | None, rules: str | None) -> dict[str, Any]:
        """The constructor's rule parameters for a game recorded with SGF's komi (KM) and rules
        (RU), each None where the record has none: what a reader replays the record under. The
        default, a game with one rule set, takes none."""
        return {}

    @property
    def rules_text(self) -> str:
        """The rules in words, for SGF's RU; "" (the default) where the game has one rule set
        and nothing to say. `rules_from_record` reads it back."""
        return ""

    def is_over(self) -> bool:
        """Whether the game has ended."""
        return self._core.is_over()

    def winner(self) -> int | None:
        """BLACK, WHITE or DRAW once the game is over; None while it goes on."""
        return self._core.winner() if self._core.is_over() else None

    def outcome(self) -> Outcome | None:
        """How the game ended (None while it goes on). The default is a game decided by its
        count, `score` (Go after two passes, Othello when neither side can place a disc); a
        game that ends otherwise says so (Gomoku)."""
        winner = self.winner()
        if winner is None:
            return None
        return Outcome(winner, Termination.SCORE, self.score())

    def stopped_winner(self) -> int:
        """The winner of a game stopped before its end (a referee's move limit): by the count
        where the count is the game's own result (Go), else a draw (the default)."""
        return DRAW

    @property
    def max_length(self) -> int:
        """The plies, passes included, after which a referee stops a game and scores it by
        `stopped_winner`, and past which self-play never runs (its own share of the points may
        stop it sooner): four a point. Games that end by their rules stay well within it
        (Othello fills a point a placement, Gomoku too); it bounds Go, whose captures let a
        game run on."""
        return _PLIES_PER_POINT * self.num_points

    @abstractmethod
    def heuristic(self, moves: np.ndarray) -> np.ndarray:
        """A one-ply score of each of `moves` (legal moves of the side to move), higher is
        better: what the greedy reference player maximises (engine/players.py)."""

    @abstractmethod
    def plies_left(self) -> float:
        """A generous estimate of the moves still to play by both sides, passes included: what
        the clock divides the remaining time by. Never below 1 while the game goes on."""

    def score(self) -> float | None:
        """Black's lead by the game's own count of the position as it stands (Go: area with
        komi; Othello: discs), positive when Black is ahead; None for a game that has a winner
        but no score (Gomoku), which is the default."""
        return None

    def final_score(self, ownership: Callable[[], np.ndarray | None]) -> float | None:
        """Black's lead as a controller scores the game at its end (GTP's `final_score`): the
        count as it stands (`score`, the default). A game whose dead stones leave the count
        (Go) asks `ownership` for who owns each point (`[num_points]`, positive for Black; None
        where no network can tell) and takes off the stones it gives to the other side; it is
        asked only there, since it costs a search."""
        return self.score()

    def ownership(self) -> np.ndarray | None:
        """Who each point counts for if the position were scored as it stands, `[num_points]`
        int8: BLACK, WHITE or EMPTY (neither). At the end of a game this is the ownership target
        the network learns (Go: Tromp-Taylor area; Othello: the discs). None for a game whose
        result is not a count of points (Gomoku), which is the default."""
        return None

    def encode(self, out: np.ndarray) -> None:
        """Write the node features `[num_nodes, num_features]` (float32) from the side to move's
        view into `out`, overwriting every entry: rows 0..num_points-1 are the points, the last row
        is the extra node. The core writes them straight into `out`."""
        self._core.encode(out)

    def copy(self) -> Self:
        """An independent copy with the same position and history."""
        other = object.__new__(type(self))
        other.__dict__.update(self.__dict__)
        other._core = self._core.clone()
        other._moves = self._moves.copy()
        other._colors = self._colors.copy()
        return other

    # -- tactics the rules make exact (the search's depth-1 and depth-2 knowledge) ---------------
    def winning_moves(self) -> list[int]:
        """Moves that win by force for the side to move, as far as the rules make that cheap to
        know: at once, or (Othello) by leaving the opponent only moves that lose at once. The
        search scores such a position as won without asking the network and plays the move at
        the root."""
        return self._core.winning_moves()

    def forced_moves(self) -> list[int] | None:
        """When the opponent threatens to win on its next move: the moves that stop every such
        threat (an empty list: none can, the position is lost). None when there is no threat or
        the game cannot tell cheaply; the search then considers every legal move."""
        return self._core.forced_moves()

    def book_moves(self) -> list[int] | None:
        """Where the game's own knowledge settles the choice without a network: the moves the
        engine's search keeps at the root, when the caller has not restricted them itself. None
        (the default) when the game has no such knowledge of the position."""
        return None

    # -- conveniences shared by every game ------------------------------------------------------
    def outcome_for(self, color: int) -> float:
        """+1 if `color` won, -1 if it lost, 0 for a draw; ValueError while the game goes on."""
        w = self.winner()
        if w is None:
            raise ValueError("the game is not over")
        return 0.0 if w == DRAW else (1.0 if w == color else -1.0)

    def point(self, x: int, y: int) -> int:
        """The move index of column x, row y (0-based from the top-left)."""
        return self.grid.point(x, y)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.width}x{self.height} moves={len(self.moves)}>"

    def __str__(self) -> str:
        """The board as text, rows from the top: X black, O white, . empty."""
        chars = {BLACK: "X", WHITE: "O", EMPTY: "."}
        b = self.board
        rows = []
        for y in range(self.height):
            rows.append(" ".join(chars[int(v)] for v in b[y * self.width:(y + 1) * self.width]))
        return "\n".join(rows)
