"""Where a network's prior goes on the empty board, by line from the edge.

    saz bench opening --model models/go.onnx [--sizes 9,13,19]

Not a speed measurement: a probe of how a network trained on small boards reads a larger one.
Every point of a W x H board lies on a line counted from its nearest edge (the edge row is line
1, KataGo's and every Go book's counting); the table gives, per board size, the share of the
empty-board policy prior on lines 1 to 4 and on the lines beyond, the prior's best point and the
value the network gives the side to move. Strong Go players open on the 3rd and 4th lines at
every size; a network that has only seen boards where every point is near an edge may not know
where the edge of a large board is (issue 17: 89% on the 4th line at 9x9, 23% at 19x19).
"""
from __future__ import annotations

import argparse

import numpy as np

from saz.engine.evaluator import Evaluator
from saz.engine.games import new_game
from saz.engine.games.base import Game
from saz.protocol.vertex import vertices_for

#: Lines 1..LINES each get a column; the lines beyond share the last one.
LINES = 4


def line_of(point: int, width: int, height: int) -> int:
    """The point's line counted from its nearest edge: 1 on the edge row."""
    row, col = divmod(point, width)
    return 1 + min(row, col, height - 1 - row, width - 1 - col)


def line_shares(game: Game, moves: list[int], priors: np.ndarray) -> list[float]:
    """The prior's share on each of lines 1..LINES and on the lines beyond (pass excluded)."""
    shares = [0.0] * (LINES + 1)
    for move, prior in zip(moves, priors, strict=True):
        if move == game.pass_move:
            continue
        shares[min(line_of(move, game.width, game.height), LINES + 1) - 1] += float(prior)
    return shares


def run(args: argparse.Namespace) -> int:
    evaluator = Evaluator(args.model, device="cpu", threads=1)
    head = " | ".join(f"line {n}" for n in range(1, LINES + 1))
    print(f"| board | {head} | lines {LINES + 1}+ | best point | value |")
    print("|---" * (LINES + 4) + "|")
    for width, height in args.sizes:
        game = new_game(evaluator.game_name, width, height)
        (priors,), value = evaluator.evaluate([game])
        moves = game.legal_moves()
        shares = line_shares(game, moves, priors)
        best = int(moves[int(np.argmax(priors))])
        cells = " | ".join(f"{100 * s:.0f}%" for s in shares)
        print(f"| {width}x{height} | {cells} | {vertices_for(evaluator.game_name, width, height).format(best)} "
              f"(line {line_of(best, width, height)}) | {float(value[0]):+.2f} |")
    return 0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from saz.tools.bench.cli import parse_sizes  # the CLI imports this module

    p = subparsers.add_parser(
        "opening", help="the empty board's prior by line from the edge (a probe, not a timing)",
        description="Share of the empty-board policy prior on each line from the edge, per "
                    "board size.")
    p.add_argument("--model", required=True, help="an exported model (.onnx with its card)")
    p.add_argument("--sizes", type=parse_sizes, default=parse_sizes("9,13,19"),
                   help="board sizes (default 9,13,19)")
    p.set_defaults(handler=run)
