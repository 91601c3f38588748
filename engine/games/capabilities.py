"""What some games can do beyond `Game`: each an interface a game class implements or does not.

Each is an abstract kind of `Game` (so that a game narrowed to one keeps the whole interface).
Callers ask `isinstance(game, Solvable)`, never which game it is, so that a game gains a
capability by implementing its interface and no search, protocol or tool changes:

* `Solvable`: an exact endgame solver (Othello's, in the compiled core);
* `ThreatSearching`: a threat-space search, wins by an unbroken series of threats (Gomoku's);
* `AreaScored`: a count by area with komi, handicap stones and dead stones taken off at the
  end (Go's): what GTP's Go commands (`protocol/gtp_go.py`) and SGF's `KM` and `HA` serve.
"""
from __future__ import annotations

import operator
from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from saz.engine.games.base import BLACK, Game

#: `_core.Position`'s status for a finished search (position.hpp's Solution::SOLVED).
SOLVED = 2
#: The node budget `Solvable.solve` uses unless told: about a second of search on a desktop core.
DEFAULT_SOLVE_NODES = 10_000_000
#: Positions a threat-space search (`ThreatSearching.threat_win`) visits by default: a few
#: milliseconds.
DEFAULT_THREAT_NODES = 20_000


def node_budget(max_nodes: int) -> int:
    """`max_nodes` as the core's searches take it: at least 1 (ValueError otherwise), at most
    what a 64-bit count holds."""
    max_nodes = operator.index(max_nodes)
    if max_nodes < 1:
        raise ValueError(f"max_nodes must be at least 1, got {max_nodes}")
    return min(max_nodes, 2**63 - 1)


@dataclass(frozen=True)
class Solution:
    """What an exact endgame solve (`Solvable.solve`) proved about a position under perfect
    play."""

    #: A best move for the side to move: the pass move where it must pass, None when the game
    #: is already over.
    move: int | None
    #: The final count under perfect play from the side to move's view: what `score()` would
    #: give at the end, times `to_move` (Othello: its discs minus the opponent's). When `exact`
    #: is False only the sign was proved, and this is -1, 0 or +1 (loss, draw, win).
    margin: int
    #: Whether `margin` is the exact count or only its sign.
    exact: bool
    #: Positions searched.
    nodes: int

    @property
    def result(self) -> int:
        """+1 if the side to move wins with perfect play, -1 if it loses, 0 for a draw."""
        return (self.margin > 0) - (self.margin < 0)


class Solvable(Game):
    """A game whose endgame can be searched to its end: a few empty points leave a tree small
    enough (Othello)."""

    @classmethod
    @abstractmethod
    def from_diagram(cls, diagram: str, *, to_move: int = BLACK) -> Solvable:
        """The position of a text diagram (`str(game)`'s format), `to_move` to play: how a
        solver's endgame arrives (`saz solve`). GameError on a malformed diagram."""

    @abstractmethod
    def solve(self, max_nodes: int = DEFAULT_SOLVE_NODES, *, exact: bool = True,
              max_seconds: float | None = None) -> Solution | None:
        """Perfect play from this position by exhaustive search, at most `max_nodes` positions
        (and, when given, `max_seconds` of time): the best move and the final margin, or with
        `exact=False` only who wins (a search around a margin of 0, often ten times faster or
        more). None when the budget ran out; ValueError for a budget below 1."""


class ThreatSearching(Game):
    """A game with a threat-space search: wins forced by threats the opponent must answer
    (Gomoku's fours and threes)."""

    @abstractmethod
    def threat_win(self, max_nodes: int = DEFAULT_THREAT_NODES, *, threes: bool = True
                   ) -> int | None:
        """A move that wins by force through an unbroken series of threats: fours only with
        `threes=False` (VCF), or also threats to make an open or double four (VCT), within
        `max_nodes` positions. None when no such win was found, which proves nothing."""

    @abstractmethod
    def threat_defences(self, max_nodes: int = DEFAULT_THREAT_NODES) -> list[int] | None:
        """When the opponent, were it to move, would win by fours alone (a VCF found within
        `max_nodes` positions): the legal moves that may stop it (an empty list: none does, the
        position is lost). None when no such win was found: every legal move stays a
        candidate."""


class AreaScored(Game):
    """A game counted by area (stones and the empty points they alone reach, komi for White),
    in which a weaker Black may take handicap stones and the stones left dead on the board come
    off before the count (Go)."""

    @property
    @abstractmethod
    def komi(self) -> float:
        """The points added to White's area."""

    @abstractmethod
    def captures(self, color: int) -> int:
        """How many stones `color` has captured so far."""

    @abstractmethod
    def place_fixed_handicap(self, stones: int) -> list[int]:
        """Put `stones` black handicap stones on the game's fixed points and return them; White
        moves next. GameError for a count the board does not allow, or a board not empty."""

    @abstractmethod
    def place_free_handicap(self, points: Sequence[int]) -> None:
        """Put black handicap stones on the given points; White moves next. GameError for
        points that are not distinct points of the board, or a board not empty."""

    @abstractmethod
    def dead_stones(self, ownership: np.ndarray) -> list[int]:
        """The stones that `ownership` (`[num_points]`, positive where Black owns the point)
        gives to the other colour, ascending."""

    @abstractmethod
    def score_without(self, dead: Sequence[int]) -> float:
        """The count (Black's lead, komi included) once the `dead` stones are off the board."""
