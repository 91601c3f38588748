"""How well a network's value foresees the winner of recorded games, seeing the whole board or
only the window the search shows it (`Game.focus_masks`, `--focus-side`).

    saz bench foresight --model models/gomoku.onnx --records DIR [DIR ...] [--focus-side 12]
                        [--max-ply 30]

Not a speed measurement: a probe of the value head. Every position of every game in the records,
from the end of the random opening up to `--max-ply` plies, is evaluated twice, on the whole board
and masked to its window, and each value (the side to move's view, in [-1, 1]) is set against the
game's result from the same side (+1 won, -1 lost, 0 drawn). The table gives the mean |value|,
the mean squared error against the result, and how often the value's sign was the winner's, over
all positions and by bands of plies. A value head that pools a mean over every node reads a large
board's few stones among many empty points; this measures what the window changes.
"""
from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from saz.engine.evaluator import Evaluator
from saz.engine.games import game_class
from saz.engine.graph import encode, layout
from saz.tools.match.match import read_records
from saz.tools.match.replay import Replay

#: Ply bands of the table (from, to): the opening, the middle game, the threats.
_BANDS = ((0, 8), (8, 14), (14, 22), (22, 32), (32, 10_000))


@dataclass(frozen=True)
class Foresight:
    """Per position: the plies played, the value whole and in the window, the result (all from
    the side to move's view), and the share of the points the window kept."""

    plies: np.ndarray
    whole: np.ndarray
    window: np.ndarray
    result: np.ndarray
    share: np.ndarray


def read_values(evaluator: Evaluator, records: Sequence[Path], focus_side: int,
                max_ply: int) -> Foresight:
    """Every recorded game of the evaluator's game, replayed and evaluated as the module says."""
    cls = game_class(evaluator.game_name)
    plies, whole, window, result, share = [], [], [], [], []
    for _, sgf in read_records(list(records)):
        if sgf.game != evaluator.game_name:
            continue
        winner = sgf.winner
        # the positions each side chose a move in, up to max_ply: after the random opening
        positions = [turn.game.copy() for turn in Replay(sgf)
                     if turn.chosen and turn.ply <= max_ply]
        if not positions:
            continue
        x = encode(positions)  # once, for both readings
        keep = cls.focus_masks(x, sgf.width, sgf.height, focus_side)
        lay = layout(sgf.width, sgf.height)
        _, v_whole = evaluator.run(x, lay)
        _, v_window = evaluator.run(x, lay, keep)
        plies += [len(p.moves) for p in positions]
        whole.append(v_whole)
        window.append(v_window)
        result += [0 if winner is None else (1 if winner == p.to_move else -1) for p in positions]
        nodes = x.shape[1]
        share += ([1.0] * len(positions) if keep is None
                  else list((keep[:, :-1].sum(axis=1)) / (nodes - 1)))
    if not plies:
        return Foresight(*(np.zeros(0) for _ in range(5)))
    return Foresight(np.array(plies), np.concatenate(whole), np.concatenate(window),
                     np.array(result, dtype=np.float64), np.array(share))


def _row(name: str, values: np.ndarray, result: np.ndarray) -> str:
    decided = result != 0
    sign = (np.sign(values[decided]) == result[decided]).mean() if decided.any() else float("nan")
    return (f"| {name} | {len(values)} | {np.abs(values).mean():.3f} "
            f"| {((values - result) ** 2).mean():.4f} | {100 * sign:.1f}% |")


def run(args: argparse.Namespace) -> int:
    evaluator = Evaluator(args.model, threads=args.threads)
    f = read_values(evaluator, args.records, args.focus_side, args.max_ply)
    if not len(f.plies):
        print("no position to evaluate in", *args.records)
        return 1
    print(f"{len(f.plies)} positions of {args.model}'s game, plies up to {args.max_ply}; the "
          f"window (--focus-side {args.focus_side}) kept {100 * f.share.mean():.1f}% of the points "
          f"on average")
    print()
    print("| seen | positions | mean abs value | squared error against the result "
          "| sign of the winner |")
    print("|---|---:|---:|---:|---:|")
    print(_row("whole board", f.whole, f.result))
    print(_row("window", f.window, f.result))
    for lo, hi in _BANDS:
        band = (f.plies >= lo) & (f.plies < hi)
        if band.any():
            label = f"plies {lo}-{hi - 1}" if hi < 10_000 else f"plies {lo}+"
            print(_row(f"{label}, whole", f.whole[band], f.result[band]))
            print(_row(f"{label}, window", f.window[band], f.result[band]))
    return 0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "foresight", help="how well the value foresees recorded games' winners, whole board "
                          "against the search's window (a probe, not a timing)",
        description="The network's value on every recorded position, whole board and masked to "
                    "the window the search shows it, against each game's result.")
    p.add_argument("--model", type=Path, required=True, help="the network (.onnx)")
    p.add_argument("--records", type=Path, nargs="+", required=True,
                   help="directories of saz match records")
    p.add_argument("--focus-side", type=int, default=12,
                   help="the window's least side, as the search's --focus-side (default 12)")
    p.add_argument("--max-ply", type=int, default=30,
                   help="positions up to this many plies (default 30)")
    p.add_argument("--threads", type=int, default=1, help="onnxruntime threads (default 1)")
    p.set_defaults(handler=run)
