"""The reference players: no network, no search, one look at the position.

They are the yardsticks a trained network must beat (the trainer's periodic evaluation) and the
`--player` choices of the front-ends, so they are deliberately simple and cheap:

* `RandomPlayer` plays a uniformly random legal move.
* `GreedyPlayer` plays one ply of its game's heuristic (`Game.heuristic`), breaking ties at
  random:
  - Othello: the move that flips the most discs;
  - Gomoku: win if it can, else block the opponent's immediate win, else the point that makes the
    longest own line (among those, the one that cuts the opponent's longest line);
  - Go: the move that captures the most stones; failing any capture, a move that neither puts its
    own chain in atari nor fills one of its own single-point eyes; else any move that fills no
    such eye. Go's greedy player passes only when nothing else is left.

Both take a seed so that an evaluation can be replayed. `PlayerSearch` puts a player behind the
search's interface, so that the front-ends' `--player` answers genmove and TURN through the same
path as the network does. Torch-free: the engine imports this.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection
from typing import Protocol

import numpy as np

from saz.engine.games.base import Game
from saz.engine.games.errors import GameError
from saz.engine.search.mcts import (
    MoveInfo,
    SearchLimits,
    SearchResult,
    SearchStats,
    policy_fields,
)


class Player(Protocol):
    """Anything that picks a move: the reference players here, a search front-end elsewhere."""

    name: str

    def choose(self, game: Game) -> int:
        """A legal move for the side to move of `game` (left unchanged); GameError once the game
        is over."""
        ...


def _legal_or_raise(game: Game) -> np.ndarray:
    legal = game.legal_moves()
    if legal.size == 0:
        raise GameError("the game is over: there is no move to choose")
    return legal


class RandomPlayer:
    """Plays a uniformly random legal move."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def choose(self, game: Game) -> int:
        return int(self.rng.choice(_legal_or_raise(game)))


class GreedyPlayer:
    """Plays the best move of its game's one-ply heuristic (`Game.heuristic`, see the module
    docstring), breaking ties at random."""

    name = "greedy"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def choose(self, game: Game) -> int:
        legal = _legal_or_raise(game)
        scores = np.asarray(game.heuristic(legal))
        return int(legal[self.rng.choice(np.flatnonzero(scores == scores.max()))])


class PlayerSearch:
    """A reference player where the engine expects a search (`MCTS.search`'s signature).

    The answer is the player's move with one "visit" and no value (0.0): there is nothing to
    search, so limits, clocks and stop requests are moot. `allowed` (GTP's cleanup genmove,
    analysis allow-lists) is honoured: a choice outside it is replaced by the first allowed
    legal move."""

    def __init__(self, player: Player) -> None:
        self.player = player

    def warm_up(self, game: Game) -> None:
        """Nothing to prepare: a reference player has no network."""

    def search(self, game: Game, limits: SearchLimits | None = None,
               on_progress: Callable[[SearchResult], None] | None = None,
               progress_interval: float = 0.0, allowed: Collection[int] | None = None,
               stop: threading.Event | None = None) -> SearchResult:
        if game.is_over():
            raise ValueError("the game is over: there is no move to search")
        started = time.monotonic()
        move = self.player.choose(game)
        if allowed is not None and move not in allowed:
            legal = [m for m in sorted(int(a) for a in allowed) if game.is_legal(m)]
            if not legal:
                raise ValueError("none of the allowed moves is legal")
            move = legal[0]
        size, index = policy_fields(game, (move,))
        result = SearchResult(
            best_move=move, value=0.0, root_visits=1,
            moves=(MoveInfo(move, 1, 0.0, 1.0, 0.0, (move,)),),
            stats=SearchStats(playouts=1, seconds=time.monotonic() - started),
            num_nodes=game.num_nodes, policy_size=size, policy_index=index)
        if on_progress is not None:
            on_progress(result)
        return result


#: The reference players by the name the command lines use.
PLAYERS: dict[str, type[RandomPlayer | GreedyPlayer]] = {
    "random": RandomPlayer, "greedy": GreedyPlayer}


def make_player(name: str, seed: int | None = None) -> Player:
    """The reference player called `name` ("random" or "greedy"); ValueError for another."""
    try:
        return PLAYERS[name](seed)
    except KeyError:
        raise ValueError(f"unknown player {name!r}; expected one of "
                         f"{', '.join(PLAYERS)}") from None


__all__ = ["PLAYERS", "GreedyPlayer", "Player", "PlayerSearch", "RandomPlayer",
           "make_player"]
