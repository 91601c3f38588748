"""Self-play throughput: positions searched a second by one worker, as a training run plays.

    saz bench selfplay --config runs/X/config.toml --model M --size 16 [--focus-side 0,12]
                       [--eval-cache 32] [--chunk-nodes 0,1024] [--rounds 1] [--seconds 60]
                       [--warmup 5] [--threads 1]

One `SelfPlayWorker` (the trainer's own, one process) plays the config's `[selfplay]` recipe on
one board size with the exported network `M` for `--seconds` after a warm-up, once per
`--focus-side` value (0: the whole board; N: each leaf's window of at least N points a side, the
batch cut down to the windows), and per `--eval-cache` value (the worker's evaluation cache in
MiB, 0: off), and per `--chunk-nodes` value (the most nodes a network call takes, 0: the whole
batch). It prints positions searched a second (moves made, full and fast searches alike),
network rows a second, and the games finished. The recipe's own `sizes`, `focus_side`,
`eval_cache_mib` and `chunk_nodes` are replaced by the flags, so one command compares the ways on
one machine; `--rounds` repeats the table, its rows interleaved, against the machine's drift.
Every setting replays the same seeded games: those that give the same answers (the chunks) make
the same moves, so their rates compare position for position.
"""
from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

from saz.engine.evaluator import Evaluator
from saz.engine.games.grid import parse_size
from saz.tools.train.config import TrainConfig
from saz.tools.train.selfplay import SelfPlayConfig, SelfPlayWorker, WorkerStats


def throughput(config: TrainConfig, evaluator: Evaluator, size: tuple[int, int],
               focus_side: int, seconds: float, warmup: float = 5.0,
               eval_cache_mib: int | None = None,
               chunk_nodes: int | None = None) -> tuple[float, float, int]:
    """(positions a second, network rows a second, games finished) of one worker; `chunk_nodes`
    None keeps the evaluator's own, 0 is one call per batch."""
    selfplay = replace(config.selfplay, sizes=(size,), focus_side=focus_side)
    if eval_cache_mib is not None:
        selfplay = replace(selfplay, eval_cache_mib=eval_cache_mib)
    if chunk_nodes is not None:
        evaluator.chunk_nodes = chunk_nodes or None
    worker = SelfPlayWorker(evaluator.card.game, config.rules, selfplay, seed=config.seed)
    worker.load(evaluator, None)
    end = time.perf_counter() + warmup
    while time.perf_counter() < end:  # past the first moves, whose windows are the smallest
        worker.step(WorkerStats())
    stats, games = WorkerStats(), 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        games += len(worker.step(stats))
    wall = time.perf_counter() - start
    return stats.positions / wall, stats.evaluated / wall, games


def run(args: argparse.Namespace) -> int:
    config = TrainConfig.load(args.config)
    evaluator = Evaluator(args.model, threads=args.threads)
    size = parse_size(args.size)
    print(f"{evaluator.card.game} {size[0]}x{size[1]}, {args.model}, the [selfplay] recipe of "
          f"{args.config}, one worker, {args.threads} onnxruntime thread(s), "
          f"{args.seconds:g} s each")
    print()
    print("| --focus-side | --eval-cache | --chunk-nodes | positions/s | network rows/s "
          "| games finished |")
    print("|---:|---:|---:|---:|---:|---:|")
    for _ in range(args.rounds):
        for side in args.focus_side:
            for mib in args.eval_cache:
                for chunk in args.chunk_nodes:
                    positions, rows, games = throughput(config, evaluator, size, side,
                                                        args.seconds, args.warmup, mib, chunk)
                    print(f"| {side} | {mib} | {chunk} | {positions:.1f} | {rows:.0f} "
                          f"| {games} |", flush=True)
    return 0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "selfplay", help="self-play positions a second, whole board against windows",
        description="One self-play worker's positions a second on one board size, the whole "
                    "board against the search's windows (--focus-side).")
    p.add_argument("--config", type=Path, required=True,
                   help="a training config (its [selfplay] recipe and rules)")
    p.add_argument("--model", type=Path, required=True, help="the network (.onnx)")
    p.add_argument("--size", default="16", help="the board, 16 or 16x16 (default 16)")
    p.add_argument("--focus-side", type=lambda t: [int(v) for v in t.split(",")],
                   default=[0, 12], help="comma-separated windows' least sides, 0: the whole "
                                         "board (default 0,12)")
    p.add_argument("--eval-cache", type=lambda t: [int(v) for v in t.split(",")],
                   default=[SelfPlayConfig.eval_cache_mib],
                   help="comma-separated evaluation cache sizes in MiB, 0: off (default "
                        f"{SelfPlayConfig.eval_cache_mib})")
    p.add_argument("--chunk-nodes", type=lambda t: [int(v) for v in t.split(",")],
                   default=[SelfPlayConfig.chunk_nodes],
                   help="comma-separated most nodes a network call takes, 0: the whole batch "
                        f"(default {SelfPlayConfig.chunk_nodes})")
    p.add_argument("--rounds", type=int, default=1,
                   help="times the table is played, rows interleaved (default 1)")
    p.add_argument("--seconds", type=float, default=60.0,
                   help="measured seconds per setting (default 60)")
    p.add_argument("--warmup", type=float, default=5.0,
                   help="seconds played first and not counted (default 5)")
    p.add_argument("--threads", type=int, default=1, help="onnxruntime threads (default 1)")
    p.set_defaults(handler=run)
