"""How many empty points the Othello endgame solver (`Othello.solve`) finishes within a time limit,
and what the search's endgame planner decides with a given time per move.

    saz bench solve [--size 8] [--from 12] [--positions 5] [--limit 1.0] [--seed 0]
    saz bench solve --decision [--empties 10-24] [--times 0.1,0.5,1,2,5] [--positions 2]
    saz bench solve --write-set tests/data/othello-endgames.txt

For each number of empty points E from `--from` upward, `--positions` positions are reached by
random play from the start (seeded by seed, E and the position's number, so a run is repeatable
and E + 2 does not reuse E's games), and each is solved from an empty table, exactly and in
win/draw/loss mode. A row gives the median and slowest time and the median nodes; the summary,
the largest E whose slowest solve stayed within `--limit` seconds, for each mode. A mode stops
once its median passes the limit (a larger E only takes longer); a solve past `--max-nodes`
counts as not solved.

Random play reaches positions less balanced than a master game's endgame, so these are not
the positions of an endgame test suite; they are the positions a self-play game reaches.

`--decision` shows the search's own choice (`EndgamePlanner.solve_root`, what `MCTS` runs at
the root with the default `--solve-empties auto`): for each time per move (the soft budget)
one planner, as a game would use it, meets the positions from the most empty points down, each
solve from an empty table. A cell: `exact` (the margin proved), `wld` (only who wins), `no`
(not tried: the estimate did not fit) or `out` (tried, ran out of time or nodes; the search has
the rest of the move), each outcome the row's positions met, with the seconds the slowest of
them took.

`--write-set` builds and verifies the endgame position set that the tests check and that the
default engine must play perfectly (`endgame_set`).
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from dataclasses import dataclass

from saz.engine import _core
from saz.engine.games.base import BLACK, WHITE
from saz.engine.games.grid import parse_size
from saz.engine.games.othello import Othello
from saz.engine.search.endgame import EndgamePlanner
from saz.protocol.vertex import vertices_for


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
    p.add_argument("--decision", action="store_true",
                   help="show the search's solve decision: empties against time per move")
    p.add_argument("--empties", default="10-24", metavar="A-B",
                   help="--decision: the empty points of the rows (default 10-24)")
    p.add_argument("--times", default="0.1,0.5,1,2,5", metavar="T,...",
                   help="--decision: the seconds per move of the columns (default "
                        "0.1,0.5,1,2,5)")
    p.add_argument("--write-set", metavar="PATH",
                   help="write the verified endgame position set (10-20 empties, 3 each)")
    p.set_defaults(handler=bench_solve)


def bench_solve(args: argparse.Namespace) -> int:
    if args.write_set:
        endgames = endgame_set(range(10, 21), 3, args.seed or 64)
        with open(args.write_set, "w", encoding="utf-8") as out:
            out.write(format_endgames(endgames))
        print(f"{len(endgames)} positions, {sum(e.greedy_wrong for e in endgames)} where the "
              f"greedy move is wrong: {args.write_set}")
        return 0
    if args.decision:
        return bench_decision(args)
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


def bench_decision(args: argparse.Namespace) -> int:
    """The planner's decision table (see the module docstring)."""
    width, height = args.size
    first, _, last = args.empties.partition("-")
    rows = range(int(last or first), int(first) - 1, -1)
    times = [float(t) for t in args.times.split(",")]
    games = {e: [position(width, height, e, f"{args.seed}-{e}-{k}")
                 for k in range(args.positions)] for e in rows}
    cells: dict[tuple[int, float], str] = {}
    for seconds in times:
        planner = EndgamePlanner()
        for e in rows:
            outcomes, worst = [], 0.0
            for game in games[e]:
                _core.clear_solve_table()
                start = time.perf_counter()
                solved = planner.solve_root(game, seconds)
                took = time.perf_counter() - start
                worst = max(worst, took)
                if solved is not None:
                    outcomes.append("exact" if solved.exact else "wld")
                else:
                    outcomes.append("out" if took > 0.0005 else "no")
            shown = "/".join(sorted(set(outcomes), key=["exact", "wld", "out", "no"].index))
            cells[e, seconds] = f"{shown} {worst:.2f}"
    print(f"# The search's root solve (EndgamePlanner) on Othello {width}x{height} random-play "
          f"positions, {args.positions} per row, seed {args.seed}; the worst of each row's "
          f"positions; load average at start {os.getloadavg()[0]:.2f}")
    print()
    print("| empties | " + " | ".join(f"{t:g} s/move" for t in times) + " |")
    print("|---|" + "---|" * len(times))
    for e in sorted(rows):
        print(f"| {e} | " + " | ".join(cells[e, t] for t in times) + " |")
    return 0


# -- the endgame position set (tests/data/othello-endgames.txt) ------------------------------------
@dataclass(frozen=True)
class Endgame:
    """A verified endgame: the position, its side to move, every optimal move (by exact margin)
    and that margin for the side to move; `greedy_wrong` when the move that flips most discs is
    not among the optimal ones."""

    game: Othello
    optimal: tuple[int, ...]
    margin: int
    greedy_wrong: bool


def verify(game: Othello, max_nodes: int = 2_000_000_000) -> Endgame:
    """Every legal move's exact margin by solving each child: the optimal moves and the margin.
    ValueError when a solve runs out of nodes."""
    margins: dict[int, int] = {}
    for move in game.legal_moves().tolist():
        child = game.copy()
        child.play(move)
        solution = child.solve(max_nodes, exact=True)
        if solution is None:
            raise ValueError("a child was not solved within the node budget")
        margins[move] = solution.margin * (1 if child.to_move == game.to_move else -1)
    best = max(margins.values())
    optimal = tuple(sorted(m for m, v in margins.items() if v == best))
    greedy = max(margins, key=lambda m: (len(game.flips(m)), -m))
    return Endgame(game, optimal, best, greedy not in optimal)


def endgame_set(empties: range, per_count: int, seed: int) -> list[Endgame]:
    """`per_count` positions per number of empty points, from 8x8 games where each side plays
    its most-flipping move half the time and a random one otherwise (seeded). A position is kept
    when it has two legal moves or more and not every one is optimal; per count, the first
    `per_count - 1` kept are ones where the greedy move is wrong, when found within 200 games."""
    rng = random.Random(seed)
    out: list[Endgame] = []
    for count in empties:
        found: list[Endgame] = []
        tries = 0
        while len(found) < per_count:
            tries += 1
            game = Othello(8)
            while not game.is_over() and game.num_empty > count:
                moves = game.legal_moves().tolist()
                if rng.random() < 0.5:
                    game.play(max(moves, key=lambda m: len(game.flips(m))))
                else:
                    game.play(rng.choice(moves))
            if game.is_over() or len(game.legal_moves()) < 2:
                continue
            endgame = verify(game)
            if len(endgame.optimal) == len(game.legal_moves()):
                continue
            want_wrong = len(found) < per_count - 1 and tries < 200
            if want_wrong and not endgame.greedy_wrong:
                continue
            found.append(endgame)
        out.extend(found)
    return out


def format_endgames(endgames: list[Endgame]) -> str:
    """The position set's text: a block per position (see `parse_endgames`)."""
    vertices = vertices_for("othello", 8, 8)
    lines = ["# Othello 8x8 endgames, each verified by the exact solver (saz bench solve "
             "--write-set).",
             "# A block: `position N`, `empties E`, `to_move X|O`, `optimal MOVE...` (every move",
             "# reaching the best final disc margin), `margin M` (that margin for the side to",
             "# move), `greedy_wrong yes|no` (the most-flipping move is not optimal), then the",
             "# board: rows from the top, X black, O white, . empty; A1 is the top-left corner.",
             ""]
    for k, e in enumerate(endgames, 1):
        lines += [f"position {k}", f"empties {e.game.num_empty}",
                  f"to_move {'X' if e.game.to_move == BLACK else 'O'}",
                  "optimal " + " ".join(vertices.format(m) for m in e.optimal),
                  f"margin {e.margin:+d}", f"greedy_wrong {'yes' if e.greedy_wrong else 'no'}",
                  str(e.game), ""]
    return "\n".join(lines)


def parse_endgames(text: str) -> list[Endgame]:
    """The blocks of `format_endgames` back as verified-by-record endgames."""
    vertices = vertices_for("othello", 8, 8)
    out = []
    blocks = [b for b in text.split("\n\n") if b.strip() and not b.lstrip().startswith("#")]
    for block in blocks:
        rows = [line for line in block.strip().splitlines() if not line.startswith("#")]
        fields = dict(line.split(" ", 1) for line in rows[:6])
        to_move = BLACK if fields["to_move"] == "X" else WHITE
        game = Othello.from_diagram("\n".join(rows[6:]), to_move=to_move)
        if game.num_empty != int(fields["empties"]):
            raise ValueError(f"position {fields['position']}: the board has {game.num_empty} "
                             f"empty points, not {fields['empties']}")
        optimal = tuple(vertices.parse(v) for v in fields["optimal"].split())
        out.append(Endgame(game, optimal, int(fields["margin"]),
                           fields["greedy_wrong"] == "yes"))
    return out
