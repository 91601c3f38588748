"""`saz bench cache`: what the evaluation cache saves over whole games.

    saz bench cache --records PATH [PATH ...] --player NAME [--model M] [--visits 1500] [--games 4]

A fresh tree per position (as `saz bench search` measures) has nothing to find in a cache: what
it saves shows over a game, where each search reuses the last one's subtree and meets positions
that earlier searches, or other move orders, evaluated already. So this replays recorded games
(`saz match` records) and, at each of `--player`'s turns after the random opening, searches the
recorded position to a visit cap with the engine's own settings, tree reuse included, then plays
the recorded move. Each game is searched twice, once with the cache off and once on, the order
alternating from game to game; the figures are the totals of each mode: network leaves, cached
leaves, network calls and the searches' wall seconds, and how often the two chose the same move
(the same visits on the same tree: they differ only where rounding in a batch of another size
tipped a close choice).
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass, field, replace
from pathlib import Path

from saz.engine.engine import Engine, EngineConfig
from saz.engine.search.mcts import SearchStats
from saz.engine.search.options import SearchOptions
from saz.protocol.sgf import SgfGame
from saz.tools.match.records import read_games
from saz.tools.match.replay import Replay


@dataclass
class Totals:
    """One mode's searches and the sum of their statistics."""

    searches: int = 0
    stats: SearchStats = field(default_factory=SearchStats)

    def add(self, stats: SearchStats) -> None:
        self.searches += 1
        self.stats += stats

    def row(self, name: str) -> str:
        s = self.stats
        leaves = s.evaluated + s.cached
        share = s.cached / leaves if leaves else 0.0
        return (f"| {name} | {self.searches} | {s.playouts:,} | {s.evaluated:,} "
                f"| {s.cached:,} ({share:.1%}) | {s.batches:,} | {s.eval_seconds:.1f} "
                f"| {s.seconds:.1f} | {s.playouts_per_second:,.0f} |")


def search_game(sgf: SgfGame, player: str, config: EngineConfig, totals: Totals) -> list[int]:
    """Search every position of `sgf` where `player` chose the move; the moves chosen."""
    engine = Engine(config)
    chosen = []
    for turn in Replay(sgf):
        if not (turn.chosen and turn.player == player):
            continue
        engine.replace_game(turn.game.copy())
        result = engine.think()
        totals.add(result.stats)
        chosen.append(result.best_move)
    return chosen


def run(args: argparse.Namespace) -> int:
    games = [(game.where, game.sgf) for game in read_games(args.records)
             if game.sgf.color_of(args.player) is not None][:args.games]
    if not games:
        print(f"no game of {args.player} in", *args.records)
        return 1
    options = SearchOptions()
    modes = {"cache off": replace(options, eval_cache_bytes=0), "cache on": options}
    totals = {name: Totals() for name in modes}
    same = compared = 0
    for number, (path, sgf) in enumerate(games):
        moves = {}
        order = list(modes) if number % 2 == 0 else list(modes)[::-1]
        for name in order:
            config = EngineConfig(game=sgf.game, model=args.model, visits=args.visits,
                                  threads=args.threads, search=modes[name])
            moves[name] = search_game(sgf, args.player, config, totals[name])
        pairs = list(zip(*moves.values(), strict=True))  # the same turns in both modes
        same += sum(a == b for a, b in pairs)
        compared += len(pairs)
        print(f"{path}: {len(pairs)} searches, the same move in {sum(a == b for a, b in pairs)}",
              flush=True)
    print()
    print("| mode | searches | playouts | network leaves | cached leaves | network calls "
          "| in the network, s | searching, s | playouts/s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, total in totals.items():
        print(total.row(name))
    off, on = totals["cache off"].stats, totals["cache on"].stats
    if on.seconds:
        games_text = f"{len(games)} game{'s' if len(games) > 1 else ''}"
        print(f"\n{games_text} at {args.visits} visits: the cache on took "
              f"{off.seconds / on.seconds:.2f}x less time; the same move in {same} of "
              f"{compared} searches")
    return 0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "cache", help="what the evaluation cache saves over recorded games",
        description="Search a player's positions in match records with the evaluation cache "
                    "off and on, reusing the tree from move to move as the engine does.")
    p.add_argument("--records", type=Path, nargs="+", required=True,
                   help="saz match records (PATH or PATH.sgf), SGF files or folders of them")
    p.add_argument("--player", required=True, help="the player's name in the records (PB/PW)")
    p.add_argument("--model", type=Path, help="the model (default: the game's shipped one)")
    p.add_argument("--visits", type=int, default=1500, help="visits a search (default 1500)")
    p.add_argument("--games", type=int, default=4, help="games replayed (default 4)")
    p.add_argument("--threads", type=int, help="onnxruntime intra-op threads")
    p.set_defaults(handler=run)
