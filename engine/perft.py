"""Perft: the number of leaf positions of the move tree after a given number of plies.

Perft checks move generation against published counts (Othello 8x8, chess's test positions)
and measures its speed, the hot path under every search. It walks the tree in the compiled core
(`engine/core/`), so it measures the rules the search runs, not the Python layer over them.
Passes count as plies where the game has them; a position whose game is over has no children,
so a line that ends early contributes no leaf; chess's draws (repetition, fifty moves,
insufficient material) end no line, as in the published counts. The last ply is counted in bulk
(the number of legal moves) rather than played, as is usual for perft.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Any

from saz.engine.games import GAME_NAMES, Game, GameError, game_class
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


def _new_game(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Game:
    """The game the command line names: its size, variant and FEN (GameError when the game
    rejects them)."""
    cls = game_class(args.game)
    takes_variant = "variant" in cls.info.rule_options
    if args.variant is not None and not takes_variant:
        parser.error(f"--variant: {args.game} has no variants")
    from_fen = getattr(cls, "from_fen", None)
    if args.fen is not None and from_fen is None:
        parser.error(f"--fen: {args.game} positions are not set up from FEN")
    if args.size is None and not takes_variant:
        parser.error(f"--size is required for {args.game}")
    rules: dict[str, Any] = {} if args.rule is None else {"rule": args.rule}
    if args.variant is not None:
        rules["variant"] = args.variant
    if args.size is None and args.fen is not None:  # the FEN's board decides the size
        return from_fen(args.fen, args.variant)  # type: ignore[misc]  # checked above
    if args.fen is not None:
        rules["fen"] = args.fen
    if args.size is None:
        return cls(None, **rules)  # type: ignore[arg-type]  # the variant's own size
    return cls(*args.size, **rules)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="saz perft",
        description="Count the leaf positions after DEPTH plies; speed goes to stderr.")
    parser.add_argument("--game", required=True, choices=GAME_NAMES)
    parser.add_argument("--size", type=parse_size,
                        help="N or WxH (optional where the variant decides it: chess)")
    parser.add_argument("--rule", help="rule variant (e.g. gomoku: freestyle, exact-five, renju)")
    parser.add_argument("--variant", help="the game's variant (chess: chess, gardner, losalamos)")
    parser.add_argument("--fen", help="start from this position (chess)")
    parser.add_argument("--depth", required=True, type=int)
    parser.add_argument("--divide", action="store_true",
                        help="print the count below each first move")
    args = parser.parse_args(argv)
    if args.depth < 0:
        parser.error("--depth must be >= 0")
    try:
        game = _new_game(args, parser)
    except GameError as exc:
        print(f"saz perft: {exc}", file=sys.stderr)
        return 2
    counter = PerftCounter()
    start = time.perf_counter()
    if args.divide and args.depth > 0:
        counts = divide(game, args.depth, counter)
        name = getattr(game, "uci", str)  # a game's own move text where it has one (chess)
        for move, count in counts.items():
            print(f"{name(move)}: {count}")
        total = sum(counts.values())
    else:
        total = perft(game, args.depth, counter)
    seconds = max(time.perf_counter() - start, 1e-9)
    print(total)
    print(f"{args.game} {game.width}x{game.height} depth {args.depth}: {total} leaves in "
          f"{seconds:.3f} s; {total / seconds:,.0f} leaves/s (last ply counted, not played); "
          f"{counter.plays:,} moves played, {counter.plays / seconds:,.0f} moves/s",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
