"""How often a network's policy prior picks the move a reference player chose.

    saz bench agreement --model models/go.onnx --player gnugo-l1 \
        --records docs/matches/go-run-gen426-vs-gnugo-l1-19x19

Not a speed measurement: the policy's move-matching rate, the figure KataGo and Leela Zero report
on professional games, here against the moves of a stronger peer in saz's own match records
(`saz match` SGF files). Every position before one of `--player`'s moves (named by the record's
`PB` / `PW`; repeat `--player` for a peer's games against itself) is evaluated without search;
the table gives how often the prior's best move is the player's (top 1), how often the
player's move is among its `--top` best, and the mean prior the network gave it. At 19x19, where every 20-game match against GNU Go level 1 ends 0-20, this
still tells two networks apart. Records with setup stones (handicap, `AB` / `AW`) are refused:
saz match does not write them.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from saz.engine.evaluator import Evaluator
from saz.engine.games.base import Game
from saz.tools.match.match import read_records
from saz.tools.match.replay import Replay

#: Positions evaluated in one batch.
BATCH = 64


@dataclass(frozen=True)
class Agreement:
    """The policy's agreement with a player over a set of positions."""

    positions: int
    top1: float
    topk: float
    mean_prior: float


def player_positions(records: list[Path], players: list[str], rules: dict[str, float],
                     game_name: str, max_ply: int | None = None) -> list[tuple[Game, int]]:
    """(position, the move chosen there) for every move of one of `players` in the records,
    up to ply `max_ply` of each game (all of it when None), replayed under each record's own
    rules with `rules` in their place. ValueError for a record of another game than
    `game_name`."""
    found = []
    for path, sgf in read_records(records):
        if sgf.game != game_name:
            raise ValueError(f"{path} is a record of {sgf.game}, not {game_name}")
        for turn in Replay(sgf, **rules):
            if max_ply is not None and turn.ply >= max_ply:
                break
            if turn.chosen and turn.player in players and turn.move != turn.game.pass_move:
                found.append((turn.game.copy(), turn.move))
    return found


def agreement(evaluator: Evaluator, positions: list[tuple[Game, int]], top: int) -> Agreement:
    """The prior's agreement with the chosen moves (positions of one board size per batch)."""
    top1 = topk = 0
    prior_sum = 0.0
    by_size: dict[tuple[int, int], list[tuple[Game, int]]] = {}
    for game, move in positions:
        by_size.setdefault((game.width, game.height), []).append((game, move))
    for group in by_size.values():
        for start in range(0, len(group), BATCH):
            chunk = group[start:start + BATCH]
            priors, _ = evaluator.evaluate([game for game, _ in chunk])
            for (game, move), prior in zip(chunk, priors, strict=True):
                moves = np.asarray(game.legal_moves())
                order = moves[np.argsort(-prior, kind="stable")]
                top1 += int(order[0] == move)
                topk += int(move in order[:top])
                prior_sum += float(prior[moves == move].sum())
    n = len(positions)
    return Agreement(n, top1 / n, topk / n, prior_sum / n)


def run(args: argparse.Namespace) -> int:
    rules = {"komi": args.komi} if args.komi is not None else {}
    print(f"| model | positions | top 1 | top {args.top} | mean prior |")
    print("|---|---:|---:|---:|---:|")
    positions: list[tuple[Game, int]] | None = None
    for model in args.model:
        evaluator = Evaluator(model, device="cpu", threads=args.threads)
        if positions is None:
            try:
                positions = player_positions(args.records, args.player, rules,
                                             evaluator.game_name, args.max_ply)
            except ValueError as exc:
                raise SystemExit(f"saz bench agreement: {exc}") from None
            if not positions:
                raise SystemExit(f"no moves of {', '.join(args.player)} in "
                                 f"{', '.join(map(str, args.records))}")
        result = agreement(evaluator, positions, args.top)
        print(f"| {model} | {result.positions} | {100 * result.top1:.1f}% | "
              f"{100 * result.topk:.1f}% | {result.mean_prior:.3f} |")
    return 0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "agreement", help="the policy's move-matching rate against a player's recorded moves "
                          "(a probe, not a timing)",
        description="How often each model's policy prior picks the moves a player chose in "
                    "saz match records.")
    p.add_argument("--model", action="append", required=True,
                   help="an exported model (repeat to compare several on the same positions)")
    p.add_argument("--records", type=Path, action="append", required=True,
                   help="a saz match output folder (its games/*.sgf); repeatable")
    p.add_argument("--player", action="append", required=True,
                   help="an engine name (PB/PW) whose moves are the reference; repeatable")
    p.add_argument("--max-ply", type=int, default=None,
                   help="only the first N plies of each game (GNU Go's games end with long "
                        "clean-ups no policy is trained for)")
    p.add_argument("--top", type=int, default=5, help="the k of top-k (default 5)")
    p.add_argument("--komi", type=float, default=None, help="Go's komi (default each record's KM)")
    p.add_argument("--threads", type=int, default=1, help="onnxruntime threads (default 1)")
    p.set_defaults(handler=run)
