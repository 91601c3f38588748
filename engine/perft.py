"""Perft: the number of leaf positions of the move tree after a given number of plies.

Perft checks move generation against published counts (Othello 8x8) and measures its speed, the
hot path under every search. It walks the tree in the compiled core (`engine/core/`), so it
measures the rules the search runs, not the Python layer over them. Passes count as plies where
the game has them; a position whose game is over has no children, so a line that ends early
contributes no leaf. The last ply is counted
in bulk (the number of legal moves) rather than played, as is usual for perft.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from saz.engine.games import GAME_NAMES, Game, GameError, new_game
from saz.engine.games.grid import parse_size


class PerftCounter:
    """Moves actually played by a perft (bulk-counted leaves are not): the honest speed unit,
    since each costs a play, a move generation and an undo."""

    def __init__(self) -> None:
        self.plays = 0


def perft(game: Game, depth: int, counter: PerftCounter | None = None) -> int:
    """Leaf positions `depth` plies below `game` (which is restored before returning). The
    walk runs in the compiled core, without the GIL."""
    leaves, plays = game._core.perft(depth)
    if counter is not None:
        counter.plays += plays
    return int(leaves)


def divide(game: Game, depth: int, counter: PerftCounter | None = None) -> dict[int, int]:
    """Perft split by first move: {move: leaves below it}, the usual tool to find a divergence."""
    counts = {}
    for move in game.legal_moves().tolist():
        game.play(move)
        counts[move] = perft(game, depth - 1, counter)
        game.undo()
    if counter is not None and depth > 1:
        counter.plays += len(counts)
    return counts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="saz perft",
        description="Count the leaf positions after DEPTH plies; speed goes to stderr.")
    parser.add_argument("--game", required=True, choices=GAME_NAMES)
    parser.add_argument("--size", required=True, type=parse_size, help="N or WxH")
    parser.add_argument("--rule", help="rule variant (e.g. gomoku: freestyle, exact-five, renju)")
    parser.add_argument("--depth", required=True, type=int)
    parser.add_argument("--divide", action="store_true",
                        help="print the count below each first move")
    args = parser.parse_args(argv)
    if args.depth < 0:
        parser.error("--depth must be >= 0")
    rules = {} if args.rule is None else {"rule": args.rule}
    try:
        game = new_game(args.game, *args.size, **rules)
    except GameError as exc:
        print(f"saz perft: {exc}", file=sys.stderr)
        return 2
    counter = PerftCounter()
    start = time.perf_counter()
    if args.divide and args.depth > 0:
        counts = divide(game, args.depth, counter)
        for move, count in counts.items():
            print(f"{move}: {count}")
        total = sum(counts.values())
    else:
        total = perft(game, args.depth, counter)
    seconds = max(time.perf_counter() - start, 1e-9)
    print(total)
    print(f"{args.game} {args.size[0]}x{args.size[1]} depth {args.depth}: {total} leaves in "
          f"{seconds:.3f} s; {total / seconds:,.0f} leaves/s (last ply counted, not played); "
          f"{counter.plays:,} moves played, {counter.plays / seconds:,.0f} moves/s",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
