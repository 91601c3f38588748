"""`saz solve`: perfect play from an endgame position, by the game's exact solver.

    saz solve --game othello board.txt --to-move white     # a diagram from a file
    saz solve --game othello --to-move black < board.txt   # ... or from stdin
    saz solve --game othello --moves "f5 d6 c3 d3 c4"      # moves from the start position

A diagram is in the format of `Othello.from_diagram` (and `str(game)`): one row per line from the
top, `X` black, `O` white, `.` empty. Moves are GTP vertices in the game's own convention, parsed
by the GTP front-end's `protocol/vertex.py` (Othello: column letter, row 1 at the top); a side
with no placement passes without being told, as over GTP. The answer goes to stdout: the best move,
the margin (or with `--wdl` only who wins), the nodes searched and the time. Bad input is one line
on stderr and exit status 2; a solve that runs out of nodes is exit status 1.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from saz.engine.games import BLACK, GAMES, WHITE, Game, GameError, game_class
from saz.engine.games.base import COLOR_NAMES
from saz.engine.games.capabilities import DEFAULT_SOLVE_NODES, Solvable
from saz.engine.games.grid import parse_size
from saz.protocol.vertex import GtpValueError, vertices_for

#: The games that have a solver (`Solvable`).
SOLVABLE = tuple(name for name, cls in GAMES.items() if issubclass(cls, Solvable))
_COLORS = {"black": BLACK, "white": WHITE}


class _Parser(argparse.ArgumentParser):
    """argparse that reports bad arguments in one line, as every other input error here."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: {message}", file=sys.stderr)
        sys.exit(2)


class InputError(ValueError):
    """The position the user gave cannot be set up; the message says why, in one line."""


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="saz solve",
        description="Solve an endgame exactly: the best move and the final margin under perfect "
                    "play from the side to move's view.")
    parser.add_argument("--game", required=True, choices=SOLVABLE)
    parser.add_argument("diagram", nargs="?", help="a file with the board diagram (X black, O "
                        "white, . empty, one row per line from the top); '-' or none: stdin")
    parser.add_argument("--to-move", choices=tuple(_COLORS),
                        help="the side to move in the diagram (default black)")
    parser.add_argument("--moves", help="moves from the start position instead of a diagram, "
                        "e.g. \"f5 d6 c3\" (GTP vertices; forced passes may be left out)")
    parser.add_argument("--size", type=parse_size, help="N or WxH: the board of --moves "
                        "(default 8), or the size the diagram must have")
    parser.add_argument("--max-nodes", type=int, default=DEFAULT_SOLVE_NODES,
                        help=f"give up after this many positions (default {DEFAULT_SOLVE_NODES:,})")
    parser.add_argument("--wdl", action="store_true",
                        help="prove only who wins (faster): the margin's sign")
    return parser


def position(args: argparse.Namespace, stdin: str | None = None) -> Game:
    """The position `args` describe: `--moves` from the start, else the diagram (read from
    `args.diagram`, or `stdin` when there is no file). InputError says what is wrong."""
    cls = game_class(args.game)
    if not issubclass(cls, Solvable):
        raise InputError(f"{cls.info.title} has no solver; one of {', '.join(SOLVABLE)} has")
    if args.moves is not None:
        if args.diagram is not None:
            raise InputError("give either a diagram or --moves, not both")
        if args.to_move is not None:
            raise InputError("--to-move applies to a diagram; with --moves the moves decide it")
        width, height = args.size or (8, 8)
        return _play_moves(cls(width, height), args.moves)
    if args.diagram in (None, "-"):
        text = sys.stdin.read() if stdin is None else stdin
    else:
        try:
            text = Path(args.diagram).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read {args.diagram}: {exc}") from None
    game = cls.from_diagram(text, to_move=_COLORS[args.to_move or "black"])
    if args.size is not None and args.size != (game.width, game.height):
        raise InputError(f"the diagram is {game.width}x{game.height}, not "
                         f"{args.size[0]}x{args.size[1]} as --size says")
    return game


def _play_moves(game: Game, moves: str) -> Game:
    """Play the GTP vertices of `moves` in turn; a forced pass is played where it is left out."""
    vertices = vertices_for(game.name, game.width, game.height)
    for number, word in enumerate(moves.replace(",", " ").split(), 1):
        try:
            move = vertices.parse(word)
        except GtpValueError as exc:
            raise InputError(f"move {number}: {exc}") from None
        if (game.passes_implicitly and move != game.pass_move
                and game.legal_moves().tolist() == [game.pass_move]):
            game.play(game.pass_move)
        if not game.is_legal(move):
            raise InputError(f"move {number} ({word}) is illegal for "
                             f"{COLOR_NAMES[game.to_move]}" +
                             (": the game is over" if game.is_over() else ""))
        game.play(move)
    return game


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.max_nodes < 1:
        print("saz solve: --max-nodes must be at least 1", file=sys.stderr)
        return 2
    try:
        game = position(args)
    except (InputError, GameError) as exc:
        print(f"saz solve: {exc}", file=sys.stderr)
        return 2
    assert isinstance(game, Solvable)  # --game offers only the SOLVABLE games
    start = time.perf_counter()
    solution = game.solve(args.max_nodes, exact=not args.wdl)
    seconds = time.perf_counter() - start
    if solution is None:
        print(f"saz solve: not solved within {args.max_nodes:,} nodes ({seconds:.2f} s); "
              "raise --max-nodes", file=sys.stderr)
        return 1
    mover = COLOR_NAMES[game.to_move]
    vertices = vertices_for(game.name, game.width, game.height)
    best = "none, the game is over" if solution.move is None else vertices.format(solution.move)
    print(f"move: {best}")
    if solution.exact:
        print(f"margin: {solution.margin:+d} for {mover} (to move)")
    else:
        print(f"result: {('loss', 'draw', 'win')[solution.result + 1]} for {mover} (to move)")
    print(f"nodes: {solution.nodes}")
    print(f"time: {seconds:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
