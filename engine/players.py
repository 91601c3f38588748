"""The reference players: no network, no search, one look at the position.

They are the yardsticks a trained network must beat (the trainer's periodic evaluation) and the
`--player` choices of the front-ends, so they are deliberately simple and cheap:

* `RandomPlayer` plays a uniformly random legal move.
* `GreedyPlayer` plays one ply of a per-game heuristic, breaking ties at random:
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
from saz.engine.search.mcts import MoveInfo, SearchLimits, SearchResult, SearchStats

#: Line directions (dx, dy) for Gomoku runs: along a row, a column and both diagonals.
_AXES = ((1, 0), (0, 1), (1, 1), (1, -1))
#: How far a run is followed on each side of a point: four stones on one side already make five.
_REACH = 4


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
    """Plays the best move of a one-ply heuristic of its game (see the module docstring)."""

    name = "greedy"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        self._heuristics: dict[str, Callable[[Game, np.ndarray], int]] = {
            "othello": self._othello, "gomoku": self._gomoku, "go": self._go}

    def choose(self, game: Game) -> int:
        heuristic = self._heuristics.get(game.name)
        if heuristic is None:
            raise ValueError(f"the greedy player knows no heuristic for {game.name!r}")
        return heuristic(game, _legal_or_raise(game))

    def _best(self, moves: np.ndarray | list[int], scores: np.ndarray | list[float]) -> int:
        """One of the highest-scoring moves, at random."""
        scores = np.asarray(scores)
        return int(np.asarray(moves)[self.rng.choice(np.flatnonzero(scores == scores.max()))])

    # -- Othello -------------------------------------------------------------------------------
    def _othello(self, game: Game, legal: np.ndarray) -> int:
        if legal[0] == game.pass_move:  # the forced pass is the only legal move
            return int(legal[0])
        return self._best(legal, [len(game.flips(int(m))) for m in legal])  # type: ignore[attr-defined]

    # -- Gomoku --------------------------------------------------------------------------------
    def _gomoku(self, game: Game, legal: np.ndarray) -> int:
        wins = game.winning_moves()
        if wins:
            return int(self.rng.choice(wins))
        if game.forced_moves() is not None:  # the opponent wins next move unless blocked
            opponent = -game.to_move
            threats = [int(m) for m in legal
                       if game.wins_if_played(int(m), opponent)]  # type: ignore[attr-defined]
            return int(self.rng.choice(threats))
        board = game.board.reshape(game.height, game.width)
        own = longest_lines(board == game.to_move).reshape(-1)[legal]
        cut = longest_lines(board == -game.to_move).reshape(-1)[legal]
        # Own line first; the opponent's line through the point only breaks ties (lines are at
        # most 2 * _REACH + 1 long, so the weight keeps the two apart).
        return self._best(legal, own * (2 * _REACH + 2) + cut)

    # -- Go ------------------------------------------------------------------------------------
    def _go(self, game: Game, legal: np.ndarray) -> int:
        me = game.to_move
        board = game.board
        neighbors = game.grid.neighbors
        candidates = [int(m) for m in legal if m != game.pass_move
                      and not _is_own_eye(board, neighbors[m], me)]
        if not candidates:
            return game.pass_move
        captured = np.zeros(len(candidates), dtype=np.int64)
        safe = np.zeros(len(candidates), dtype=bool)
        before = game.captures(me)  # type: ignore[attr-defined]
        for i, move in enumerate(candidates):
            game.play(move)
            captured[i] = game.captures(me) - before  # type: ignore[attr-defined]
            safe[i] = game.liberties(move) > 1  # type: ignore[attr-defined]
            game.undo()
        if captured.max() > 0:
            return self._best(candidates, captured)
        pool = [m for m, ok in zip(candidates, safe) if ok] or candidates
        return int(self.rng.choice(pool))


def _is_own_eye(board: np.ndarray, neighbors: tuple[int, ...], color: int) -> bool:
    """An empty point all of whose orthogonal neighbours are stones of `color`."""
    return all(board[q] == color for q in neighbors)


def longest_lines(stones: np.ndarray) -> np.ndarray:
    """For every point of a `[height, width]` bool board: the length of the longest row, column or
    diagonal run of `stones` that a stone on that point would stand in (itself included, up to
    `_REACH` stones followed on each side). Vectorised: 4 axes x 2 sides x `_REACH` slices."""
    h, w = stones.shape
    padded = np.pad(stones, _REACH)
    best = np.zeros((h, w), dtype=np.int64)
    for dx, dy in _AXES:
        length = np.ones((h, w), dtype=np.int64)
        for sign in (1, -1):
            run = np.ones((h, w), dtype=bool)
            for k in range(1, _REACH + 1):
                y0, x0 = _REACH + sign * k * dy, _REACH + sign * k * dx
                run &= padded[y0:y0 + h, x0:x0 + w]
                length += run
        np.maximum(best, length, out=best)
    return best


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
        result = SearchResult(
            best_move=move, value=0.0, root_visits=1,
            moves=(MoveInfo(move, 1, 0.0, 1.0, 0.0, (move,)),),
            stats=SearchStats(playouts=1, seconds=time.monotonic() - started),
            num_nodes=game.num_nodes)
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


__all__ = ["PLAYERS", "GreedyPlayer", "Player", "PlayerSearch", "RandomPlayer", "longest_lines",
           "make_player"]
