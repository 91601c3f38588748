"""Self-play throughput of `saz train`'s whole pool: positions a second for each worker count,
or across a Ray cluster (`saz train --ray`).

    saz bench pool [--game gomoku] [--size 9] [--visits 100] [--workers 1,2] [--games 64]
                   [--model M] [--layers 3] [--device cpu] [--runtime onnxruntime]
                   [--ray [ADDRESS]]

Each measurement starts the trainer's own pool (`SelfPlayPool`, one process a worker, or
`RaySelfPlayPool`, one actor a core), plays a quarter of `--games` to warm it up, then `--games`
more, and prints one Markdown row: games, positions (a move played after a search), wall
seconds, positions a second and network evaluations a second. Without `--model` the network is
a random one of the default width: self-play speed does not depend on the weights. `saz bench
selfplay` measures one worker's windows and cache instead.
"""
from __future__ import annotations

import argparse
import tempfile
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING

from saz.engine.games import GAME_NAMES, game_class
from saz.engine.games.grid import parse_size
from saz.tools.train.selfplay import DEVICES, RUNTIMES, SelfPlayConfig, SelfPlayPool

if TYPE_CHECKING:  # ray is imported only for --ray
    from saz.tools.train.distributed import RaySelfPlayPool

#: The columns of the table, in order.
HEADER = ("| workers | games | positions | seconds | positions/s | evaluations/s |\n"
          "|---:|---:|---:|---:|---:|---:|")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "pool", help="self-play positions a second of the trainer's pool, by workers or on Ray",
        description="Self-play throughput of saz train's worker pool: positions searched a "
                    "second for each worker count, or across a Ray cluster.")
    p.add_argument("--game", default="gomoku", choices=GAME_NAMES)
    p.add_argument("--size", type=parse_size, default=(9, 9), help="board size (default 9)")
    p.add_argument("--visits", type=int, default=100)
    p.add_argument("--workers", type=_counts, default=[1, 2],
                   help="comma-separated worker counts to compare (default 1,2)")
    p.add_argument("--games", type=int, default=64, help="games per measurement "
                   "(after a warm-up of a quarter as many)")
    p.add_argument("--games-in-flight", type=int, default=SelfPlayConfig.games_in_flight)
    p.add_argument("--model", type=Path, help="an exported model (default: a random network "
                   "of the default shape, exported to a temporary folder; with --runtime "
                   "torch its weights must lie beside it, as a run writes them)")
    p.add_argument("--layers", type=int, default=3,
                   help="GIN layers of the random network (default 3)")
    p.add_argument("--device", default="cpu", choices=DEVICES,
                   help="where the workers' networks run (selfplay.device; default cpu)")
    p.add_argument("--runtime", default="onnxruntime", choices=RUNTIMES,
                   help="what runs them (selfplay.runtime; default onnxruntime)")
    p.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                   help="measure the Ray pool instead (`saz train --ray`): one actor per core "
                        "of every node of the cluster at ADDRESS (alone: a new local one); "
                        "--workers is then ignored")
    p.set_defaults(handler=run)


def _counts(text: str) -> list[int]:
    try:
        counts = [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected counts such as 1,2, not {text!r}") from None
    if any(c < 1 for c in counts):
        raise argparse.ArgumentTypeError(f"worker counts must be at least 1, not {text!r}")
    return counts


def run(args: argparse.Namespace) -> int:
    from saz.tools.train.export import export_random_network  # torch: only without --model

    counts = args.workers if args.ray is None else [0]
    with tempfile.TemporaryDirectory(prefix="saz-pool-") as tmp:
        model = args.model
        if model is None:
            model = Path(tmp) / "random.onnx"
            export_random_network(game_class(args.game), model, layers=args.layers,
                                  with_weights=True)
        print(HEADER)
        for workers in counts:
            config = SelfPlayConfig(sizes=(args.size,), visits=args.visits,
                                    workers=max(workers, 1),
                                    games_in_flight=args.games_in_flight,
                                    resign_threshold=-1.0, device=args.device,
                                    runtime=args.runtime)
            pool: SelfPlayPool | RaySelfPlayPool
            ray_pool: RaySelfPlayPool | None = None
            if args.ray is None:
                pool = SelfPlayPool(args.game, {}, config, seed=workers)
            else:
                from saz.tools.train.distributed import RaySelfPlayPool  # ray: only with --ray

                pool = ray_pool = RaySelfPlayPool(args.game, {}, config, seed=1,
                                                  address=args.ray or None,
                                                  log=lambda text: None)
            with closing(pool):
                pool.play(model, max(1, args.games // 4), None)  # start-up and warm-up
                batch = pool.play(model, args.games, None)
                # The cluster's actors are known once they have played.
                label = str(workers) if ray_pool is None else f"ray: {ray_pool.layout}"
            stats = batch.stats
            print(f"| {label} | {len(batch.records)} | {stats.positions} | "
                  f"{batch.wall_seconds:.1f} | {batch.positions_per_second:.1f} | "
                  f"{stats.evaluated / batch.wall_seconds:.0f} |", flush=True)
    return 0
