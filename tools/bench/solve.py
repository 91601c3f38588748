"""How many empty points the Othello endgame solver (`Othello.solve`) finishes within a time limit.

    saz bench solve [--size 8] [--from 12] [--positions 5] [--limit 1.0] [--seed 0]

For each number of empty points E from `--from` upward, `--positions` positions are reached by
random play from the start (seeded by seed, E and the position's number, so a run is repeatable
and E + 2 does not reuse E's games), and each is solved from an empty table, exactly and in
win/draw/loss mode. A row gives the median and slowest time and the median nodes; the summary,
the largest E whose slowest solve stayed within `--limit` seconds, for each mode. A mode stops
once its median passes the limit (a larger E only takes longer); a solve past `--max-nodes`
counts as not solved.

Random play reaches positions less balanced than a master game's endgame, so these are not
the positions of an endgame test suite; they are the positions a self-play game reaches.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import time

from saz.engine import _core
from saz.engine.games.grid import parse_size
from saz.engine.games.othello import Othello


def position(width: int, height: int, empties: int, seed: str) -> Othello:
    """A game of random play stopped at `empties` empty points, not over, from the start."""
    rng = random.Random(seed)
    while True:
        game = Othello(width, height)
        while not game.is_over() and game.num_empty > empties:
            game.play(rng.choice(game.legal_moves().tolist()))
        if not game.is_over():
            return game


def timed_solve(game: Othello, exact: bool, max_nodes: int) -> tuple[float, int]:
    """(seconds, nodes) of one solve from an empty table; seconds is inf past the budget."""
    _core.clear_solve_table()
    start = time.perf_counter()
    solution = game.solve(max_nodes, exact=exact)
    seconds = time.perf_counter() - start
    return (seconds, solution.nodes) if solution is not None else (float("inf"), max_nodes)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("solve", help="Othello endgame solver: empty points solved in 1 s",
                              description=__doc__.splitlines()[0])
    p.add_argument("--size", type=parse_size, default=(8, 8), help="N or WxH (default 8)")
    p.add_argument("--from", dest="start", type=int, default=12,
                   help="the first number of empty points (default 12)")
    p.add_argument("--positions", type=int, default=5, help="positions per row (default 5)")
    p.add_argument("--limit", type=float, default=1.0, help="seconds per solve (default 1)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-nodes", type=int, default=300_000_000,
                   help="give up on a solve past this many nodes (default 300M)")
    p.set_defaults(handler=bench_solve)


def bench_solve(args: argparse.Namespace) -> int:
    width, height = args.size
    modes = {"exact": True, "wdl": False}
    solved_within: dict[str, int | None] = dict.fromkeys(modes)
    running = set(modes)
    print(f"# Othello {width}x{height} endgames by random play, {args.positions} per row, "
          f"seed {args.seed}; each solve from an empty table; load average at start "
          f"{os.getloadavg()[0]:.2f}")
    print()
    print("| empties | exact median s | exact max s | exact nodes | wdl median s | wdl max s "
          "| wdl nodes |")
    print("|---|---|---|---|---|---|---|")
    empties = args.start
    while running and empties < width * height - 4:
        games = [position(width, height, empties, f"{args.seed}-{empties}-{k}")
                 for k in range(args.positions)]
        cells = [str(empties)]
        for mode, exact in modes.items():
            if mode not in running:
                cells += ["-", "-", "-"]
                continue
            runs = [timed_solve(game, exact, args.max_nodes) for game in games]
            seconds = [s for s, _ in runs]
            median = statistics.median(seconds)
            cells += [f"{median:.3f}", f"{max(seconds):.3f}",
                      f"{statistics.median(n for _, n in runs):,.0f}"]
            if max(seconds) <= args.limit:
                solved_within[mode] = empties
            if median > args.limit:
                running.discard(mode)
        print("| " + " | ".join(cells) + " |", flush=True)
        empties += 1
    print()
    for mode, best in solved_within.items():
        print(f"largest E with every solve within {args.limit:g} s ({mode}): "
              f"{best if best is not None else 'none'}")
    return 0
