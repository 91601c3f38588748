"""What Gomoku's threat-space search costs and finds, on positions of real games.

    saz bench threats [--records PATH ...] [--budget 200000] [--leaf-budget 1000]

Every position of the game records (`saz match` records, SGF files, folders of them) with at
least `--min-stones` stones, not over and with no immediate win or forced block, is searched
three ways, each from scratch: a VCT for the side to move within `--budget` positions (what the
root tries first), a VCF within `--leaf-budget` (what every new leaf of the tree tries), and the
opponent's VCF with its defences (what a new leaf does next). The table gives, per search, how
often it proved a win, the median and slowest time, and the positions visited per second.
"""
from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import cast

from saz.engine.games.gomoku import Gomoku
from saz.tools.match.records import read_games
from saz.tools.match.replay import Replay

#: The shipped Gomoku model's 40 games against AIWine at 15x15 (docs/STRENGTH.md).
DEFAULT_RECORDS = ("models/records/gomoku-lr-gen402-vs-aiwine-15x15",)


def positions(records: list[Path], min_stones: int, limit: int) -> list[Gomoku]:
    """The positions after each move of the records that are worth a threat search: at least
    `min_stones` stones, not over, no win in one and no forced block."""
    found = []
    for recorded in read_games(records):
        replay = Replay(recorded.sgf)
        for game in _after_each_move(replay):
            if (game.is_over() or len(game.moves) < min_stones or game.winning_moves()
                    or game.forced_moves() is not None):
                continue
            found.append(game.copy())
            if len(found) >= limit:
                return found
    return found


def _after_each_move(replay: Replay) -> Iterator[Gomoku]:
    """The replay's game after each of its moves (before each move but the first, then the
    final position)."""
    for turn in replay:
        if turn.ply:
            yield cast(Gomoku, turn.game)
    if replay.game.moves:
        yield cast(Gomoku, replay.game)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("threats", help="Gomoku threat-space search: cost and finds",
                              description=__doc__.splitlines()[0])
    p.add_argument("--records", type=Path, nargs="+", default=[Path(d) for d in DEFAULT_RECORDS],
                   help="saz match records (PATH or PATH.sgf), SGF files or folders of them "
                        "(default: the shipped model's games against AIWine at 15x15)")
    p.add_argument("--budget", type=int, default=200_000, help="VCT positions (default 200000)")
    p.add_argument("--leaf-budget", type=int, default=1_000,
                   help="VCF and defence positions (default 1000)")
    p.add_argument("--min-stones", type=int, default=6)
    p.add_argument("--limit", type=int, default=400, help="positions at most (default 400)")
    p.set_defaults(handler=bench_threats)


def bench_threats(args: argparse.Namespace) -> int:
    games = positions(args.records, args.min_stones, args.limit)
    if not games:
        print("no positions found in", ", ".join(map(str, args.records)))
        return 1
    #: (seconds, positions visited, whether a win was proved) of each search, by search.
    rows: dict[str, list[tuple[float, int, bool]]] = {
        "VCT (root)": [], "VCF (leaf)": [], "opponent VCF + defences (leaf)": []}
    for game in games:
        core = game._core
        start = time.perf_counter()
        status, _, _, nodes = core.prove_threats(args.budget, True)
        rows["VCT (root)"].append((time.perf_counter() - start, nodes, status == 2))
        start = time.perf_counter()
        status, _, _, nodes = core.prove_threats(args.leaf_budget, False)
        rows["VCF (leaf)"].append((time.perf_counter() - start, nodes, status == 2))
        start = time.perf_counter()
        defences = core.threat_defences(args.leaf_budget)
        rows["opponent VCF + defences (leaf)"].append(
            (time.perf_counter() - start, 0, defences is not None))
    print(f"{len(games)} positions from {', '.join(map(str, args.records))}; "
          f"VCT budget {args.budget}, leaf budget {args.leaf_budget}")
    print("| search | found | median ms | slowest ms | positions/s |")
    print("|---|---:|---:|---:|---:|")
    for name, results in rows.items():
        seconds = [r[0] for r in results]
        nodes = sum(r[1] for r in results)
        rate = f"{nodes / sum(seconds):,.0f}" if nodes else "-"
        print(f"| {name} | {sum(r[2] for r in results)} | "
              f"{1000 * statistics.median(seconds):.3f} | {1000 * max(seconds):.2f} | {rate} |")
    return 0
