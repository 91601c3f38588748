"""Matches between a network and an opponent: the trainer's periodic evaluation.

The network plays through the engine's search (`MCTS`) at a fixed visit count, without noise,
taking the most visited move; its opponent is a reference player (`engine/players.py`) or another
network searched the same way. Colours alternate from game to game, and the first
`opening_plies` moves of every game are uniformly random (`Game.play_random`), so that two
deterministic searches still play different games. All games of a match run at once, their
searches stepped in lockstep (one network call per network per step).

    python -m saz.tools.train.arena MODEL.onnx --opponent greedy --size 15 --games 100 --visits 200
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

import numpy as np

from saz.engine.games import BLACK, DRAW, WHITE, Game, new_game
from saz.engine.games.grid import parse_sizes
from saz.engine.players import PLAYERS, Player, make_player
from saz.engine.search.mcts import PolicyValueEvaluator
from saz.engine.search.options import SearchOptions
from saz.tools.train.lockstep import Lockstep, TreeSearch


@dataclass(frozen=True)
class NetworkPlayer:
    """A network searched to a fixed visit count; plays the most visited move."""

    name: str
    evaluator: PolicyValueEvaluator
    visits: int
    options: SearchOptions = field(default_factory=SearchOptions)

    def search(self) -> TreeSearch:
        return TreeSearch(self.evaluator, self.options, self.visits)


#: Either side of a match.
Contestant: TypeAlias = NetworkPlayer | Player


@dataclass(frozen=True)
class MatchResult:
    """The first contestant's record against the second at one board size."""

    player: str
    opponent: str
    width: int
    height: int
    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        """Points per game, a draw counting half: 1.0 won every game."""
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.0

    def __str__(self) -> str:
        return (f"{self.player} vs {self.opponent} at {self.width}x{self.height}: "
                f"+{self.wins} ={self.draws} -{self.losses} (score {self.score:.3f})")


class _MatchGame:
    """One game of a match: asks the side to move for its move until the game ends."""

    def __init__(self, game: Game, black: Contestant, white: Contestant) -> None:
        self.game = game
        # A network side gets its own tree for this game, reused from move to move.
        self._sides: dict[int, Player | TreeSearch] = {
            color: side.search() if isinstance(side, NetworkPlayer) else side
            for color, side in ((BLACK, black), (WHITE, white))}
        self._searching = False

    def advance(self) -> TreeSearch | None:
        """Play until a network side must search (its search is returned) or the game ends."""
        game = self.game
        while not game.is_over():
            side = self._sides[game.to_move]
            if isinstance(side, TreeSearch):
                if not self._searching:
                    side.start(game)
                    self._searching = True
                if not side.done:
                    return side
                self._searching = False
                game.play(side.result().best_move)
            else:
                game.play(side.choose(game))
        return None


def play_match(game_name: str, rules: Mapping[str, Any], size: tuple[int, int],
               player: NetworkPlayer, opponent: Contestant, games: int, *,
               opening_plies: int = 0, seed: int = 0, lockstep: Lockstep | None = None,
               on_game: Callable[[], None] | None = None) -> MatchResult:
    """`games` games at `size`, `player` taking Black in the even ones; `on_game` is called as
    each finishes."""
    if games < 1:
        raise ValueError("a match needs at least one game")
    lockstep = lockstep or Lockstep()
    rng = np.random.default_rng(seed)
    width, height = size
    pending: list[tuple[_MatchGame, int]] = []
    for i in range(games):
        color = BLACK if i % 2 == 0 else WHITE
        black, white = (player, opponent) if color == BLACK else (opponent, player)
        game = new_game(game_name, width, height, **rules)
        game.play_random(opening_plies, rng)
        pending.append((_MatchGame(game, black, white), color))
    wins = draws = losses = 0
    while pending:
        waiting: list[TreeSearch] = []
        still: list[tuple[_MatchGame, int]] = []
        for match, color in pending:
            search = match.advance()
            if search is None:
                winner = match.game.winner()
                wins += winner == color
                draws += winner == DRAW
                losses += winner == -color
                if on_game is not None:
                    on_game()
            else:
                waiting.append(search)
                still.append((match, color))
        pending = still
        lockstep.step(waiting)
    return MatchResult(player.name, getattr(opponent, "name", "?"), width, height,
                       wins, draws, losses)


def main(argv: Sequence[str] | None = None) -> int:
    from saz.engine.evaluator import Evaluator, ModelError

    parser = argparse.ArgumentParser(
        prog="python -m saz.tools.train.arena",
        description="Play a network (searched at a fixed visit count) against a reference "
                    "player or another network, alternating colours.")
    parser.add_argument("model", type=Path)
    parser.add_argument("--opponent", default="random",
                        help=f"{' or '.join(PLAYERS)}, or another model file (default random)")
    parser.add_argument("--size", type=parse_sizes,
                        default=[(9, 9)], help="board sizes, e.g. 9,15 or 12x9 (default 9)")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--visits", type=int, default=200)
    parser.add_argument("--opening-plies", type=int, default=0,
                        help="random moves that open every game (default 0)")
    parser.add_argument("--threads", type=int, help="onnxruntime threads")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        evaluator = Evaluator(args.model, device="cpu", threads=args.threads)
        opponent: Contestant
        if args.opponent in PLAYERS:
            opponent = make_player(args.opponent, args.seed)
        else:
            other = Evaluator(args.opponent, device="cpu", threads=args.threads,
                              game=evaluator.game_name)
            opponent = NetworkPlayer(Path(args.opponent).stem, other, args.visits)
    except (ModelError, OSError) as exc:
        print(f"arena: {exc}", file=sys.stderr)
        return 1
    player = NetworkPlayer(args.model.stem, evaluator, args.visits)
    for size in args.size:
        result = play_match(evaluator.game_name, evaluator.card.rules, size, player, opponent,
                            args.games, opening_plies=args.opening_plies, seed=args.seed)
        print(result, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
