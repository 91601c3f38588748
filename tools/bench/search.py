"""`saz bench search`: how close the search comes to the network's own speed, and what it gains
over a plain alpha-zero-general style MCTS.

    saz bench search --game gomoku --size 15 --visits 800 [--batch 16] [--model PATH]
                     [--hidden H] [--threads T] [--no-pipeline] [--subgraphs K]
                     [--positions P] [--random-plies R] [--baseline-visits V]
    saz bench search --null-network --game go --size 19 [--groups]

For each of P positions (R random plies from the start, seeded) a fresh tree searches V visits.
The report gives the playouts per second, the mean batch the search achieved, the share of the
wall time spent inside the network call, and the network's raw speed at that batch size on the
same positions (the same evaluator, so the same session settings). Descents that end in a position
the rules decide (game over, a proven win or loss) need no network call; they count as playouts
but not as leaves, and the ratio to the network's speed is taken on the leaves. Then the baseline
(`tools/bench/baseline_mcts.py`: single leaf, recursive, dictionaries) runs on the same positions
with the same network. Without `--model` a randomly initialised network of the default shape is
exported to a temporary folder: speed does not depend on the weights (but a trained network's
sharper priors make trees deeper and selection cheaper).

`--null-network` times the search alone, per leaf, with a stand-in network that costs nothing;
with `--groups` the stand-in declares the `group_members` input, so each call also computes the
batch's group members as the evaluator does for such a network (Go's chains: the cost they add
per leaf).
A real network takes groups where its card says so (`--model`); `--groups` is for the stand-in.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from saz.engine.evaluator import Evaluator, ModelError, group_input
from saz.engine.games import GAME_NAMES, Game, game_class, new_game
from saz.engine.graph import GraphLayout, encode, layout_of
from saz.engine.search.mcts import MCTS, SearchLimits, SearchStats
from saz.engine.search.options import SearchOptions, SubgraphSampling
from saz.tools.bench.baseline_mcts import RecursiveMCTS


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from saz.tools.train.model import NetConfig

    p = subparsers.add_parser(
        "search", help="search playouts per second vs the network's raw speed and a baseline",
        description="Measure the batched search against the evaluator's raw speed and against "
                    "an alpha-zero-general style single-leaf MCTS.")
    p.add_argument("--game", choices=GAME_NAMES, default="gomoku")
    p.add_argument("--size", type=int, default=15)
    p.add_argument("--visits", type=int, default=800, help="visits per search (default 800)")
    p.add_argument("--batch", type=int, default=SearchOptions.batch_size,
                   help=f"leaves per network call (default {SearchOptions.batch_size})")
    p.add_argument("--model", type=Path, help="an exported model (default: a random network)")
    p.add_argument("--hidden", type=int, default=NetConfig.hidden)
    p.add_argument("--layers", type=int, default=NetConfig.layers)
    p.add_argument("--threads", type=int, help="onnxruntime intra-op threads")
    p.add_argument("--search-threads", type=int, default=1,
                   help="batches in flight at once, each on its own network thread")
    p.add_argument("--no-pipeline", action="store_true",
                   help="evaluate on the search thread (no overlap of tree work and network)")
    p.add_argument("--subgraphs", type=int, default=0,
                   help="sub-boards evaluated per new leaf (the paper's subgraph sampling)")
    p.add_argument("--positions", type=int, default=4, help="positions searched (default 4)")
    p.add_argument("--random-plies", type=int, default=8,
                   help="random plies from the start to each position (default 8)")
    p.add_argument("--baseline-visits", type=int, default=200,
                   help="simulations of the baseline per position (default 200; 0 skips it)")
    p.add_argument("--null-network", action="store_true",
                   help="answer every leaf at once with a uniform policy and random values: the "
                        "search's own cost per leaf, outside the network (pipeline off)")
    p.add_argument("--groups", action="store_true",
                   help="a network that takes the game's groups (Go's chains): the null network "
                        "computes each batch's group members as the evaluator would (with "
                        "--null-network; a --model's card says whether it takes groups)")
    p.add_argument("--planes", type=int,
                   help="the null network reads only the first K feature planes, as a network "
                        "of an older feature version does (the shipped Go model reads 14 of 17)")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(handler=bench_search)


class NullNet:
    """A stand-in network that costs nothing: a uniform policy and fixed pseudo-random values,
    so that what a search spends per leaf outside the network can be timed. `groups`, a game
    with groups: the stand-in takes them, and computes each batch's group members as the
    evaluator feeds them to such a network (`evaluator.group_input`), so that cost is timed."""

    def __init__(self, seed: int = 0, groups: type[Game] | None = None,
                 planes: int | None = None) -> None:
        self._values = np.tanh(np.random.default_rng(seed).normal(size=4096)).astype(np.float32)
        self._policies: dict[tuple[int, int], np.ndarray] = {}
        self._groups = groups
        if planes is not None:
            #: The planes it reads, as a network of an older feature version would (the
            #: search's leaves skip computing the others where that costs).
            self.num_features = planes

    def run(self, x: np.ndarray, layout: GraphLayout, mask: np.ndarray | None = None
            ) -> tuple[np.ndarray, np.ndarray]:
        if self._groups is not None:
            group_input(np.ascontiguousarray(x, dtype=np.float32), layout, self._groups)
        rows, nodes = x.shape[0], x.shape[1]
        policy = self._policies.get((rows, nodes))
        if policy is None:
            policy = self._policies[(rows, nodes)] = np.full((rows, nodes), -np.log(nodes),
                                                              np.float32)
        start = int(x[0, 0, 0] * 7 + rows) % (len(self._values) - rows)
        return policy, self._values[start:start + rows]


def bench_null(args: argparse.Namespace) -> int:
    """The search's cost per leaf outside the network, over fresh searches of the positions."""
    positions = _positions(args)
    options = SearchOptions(batch_size=args.batch, pipeline=False, seed=args.seed)
    game = game_class(args.game)
    if args.groups and not game.group_roles:
        print(f"saz bench: --groups: {args.game} has no groups", file=sys.stderr)
        return 1
    if args.planes is not None and not 0 < args.planes <= game.num_features():
        print(f"saz bench: --planes must be 1 to {game.num_features()} for {args.game}",
              file=sys.stderr)
        return 1
    net = NullNet(args.seed, game if args.groups else None, args.planes)
    # NullNet answers the calls the search makes of an Evaluator, at no cost.
    stats = _run_search(net, options, positions, args.visits)  # type: ignore[arg-type]  # a stand-in
    tree_seconds = stats.seconds - stats.eval_seconds
    print(f"# search with a null network{' taking groups' if args.groups else ''}: {args.game} "
          f"{args.size}x{args.size}, {args.visits} visits x {len(positions)} positions "
          f"({args.random_plies} random plies), batch {args.batch}, pipeline off"
          + (f", reading {args.planes} planes" if args.planes is not None else ""))
    print()
    print("| what | value |")
    print("|---|---|")
    print(f"| leaves sent to the network | {stats.evaluated:,} |")
    print(f"| playouts (all descents) | {stats.playouts:,} |")
    print(f"| wall time per leaf | {stats.seconds / stats.evaluated * 1e6:.1f} µs |")
    print(f"| of which outside the network call | {tree_seconds / stats.evaluated * 1e6:.1f} µs |")
    print(f"| of which inside it (the group members, if any) | "
          f"{stats.eval_seconds / stats.evaluated * 1e6:.1f} µs |")
    print(f"| leaves/s | {stats.evaluated / stats.seconds:,.0f} |")
    return 0


def bench_search(args: argparse.Namespace) -> int:
    if args.null_network:
        return bench_null(args)
    if args.groups:
        print("saz bench: --groups goes with --null-network; a real network takes groups where "
              "its card says so (--model)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="saz-bench-") as tmp:
        model = args.model or _random_model(args, Path(tmp) / f"{args.game}.onnx")
        try:
            evaluator = Evaluator(model, threads=args.threads, game=args.game)
        except ModelError as exc:
            print(f"saz bench: {exc}", file=sys.stderr)
            return 1
        positions = _positions(args)
        options = SearchOptions(
            batch_size=args.batch, pipeline=not args.no_pipeline, seed=args.seed,
            search_threads=args.search_threads,
            subgraphs=SubgraphSampling(count=args.subgraphs))
        stats = _run_search(evaluator, options, positions, args.visits)
        mean_batch = max(1, round(stats.mean_batch))
        raw = _raw_speed(evaluator, positions, mean_batch * (1 + args.subgraphs))
        raw_positions = raw / (1 + args.subgraphs)  # leaves per second the network allows
        shape = evaluator.card.network
        print(f"# search: {args.game} {args.size}x{args.size}, {args.visits} visits x "
              f"{len(positions)} positions ({args.random_plies} random plies), batch "
              f"{args.batch}, pipeline {'off' if args.no_pipeline else 'on'}, search threads "
              f"{args.search_threads}, subgraphs "
              f"{args.subgraphs}; network hidden {shape.get('hidden')} x {shape.get('layers')} "
              f"layers on {evaluator.provider}, {evaluator.threads} intra-op threads")
        print()
        print("| what | value |")
        print("|---|---|")
        leaves_per_second = stats.evaluated / stats.seconds
        print(f"| playouts/s (all descents) | {stats.playouts_per_second:,.0f} |")
        print(f"| of which new leaves sent to the network, per s | {leaves_per_second:,.0f} |")
        print(f"| mean batch achieved | {stats.mean_batch:.1f} |")
        print(f"| time inside the network call | {stats.eval_seconds / stats.seconds:.0%} |")
        print(f"| network alone at batch {mean_batch * (1 + args.subgraphs)}, evals/s | "
              f"{raw:,.0f} |")
        print(f"| search leaves/s / network evals/s | {leaves_per_second / raw_positions:.2f} |")
        if args.baseline_visits > 0:
            baseline = _run_baseline(evaluator, positions, args.baseline_visits)
            single = _raw_speed(evaluator, positions, 1)
            print(f"| baseline (recursive, single leaf) playouts/s | {baseline:,.0f} |")
            print(f"| search / baseline | {stats.playouts_per_second / baseline:.2f}x |")
            print(f"| network alone at batch 1, evals/s | {single:,.0f} |")
            print(f"| the cap on search / baseline: network batch {mean_batch} / batch 1 | "
                  f"{raw / single:.2f}x |")
    return 0


def _random_model(args: argparse.Namespace, path: Path) -> Path:
    from saz.tools.train.export import export_random_network  # torch: only without --model

    export_random_network(game_class(args.game), path, hidden=args.hidden, layers=args.layers,
                          seed=args.seed)
    return path


def _positions(args: argparse.Namespace) -> list[Game]:
    rng = np.random.default_rng(args.seed)
    out = []
    for _ in range(args.positions):
        game = new_game(args.game, args.size)
        game.play_random(args.random_plies, rng)
        out.append(game)
    return out


def _run_search(evaluator: Evaluator, options: SearchOptions, positions: list[Game],
                visits: int) -> SearchStats:
    """The summed statistics of one fresh search per position (after one warm-up search)."""
    MCTS(evaluator, options).search(positions[0], SearchLimits(visits=visits, early_stop=False))
    runs = []
    for game in positions:
        start = time.perf_counter()
        result = MCTS(evaluator, options).search(game, SearchLimits(visits=visits,
                                                                    early_stop=False))
        runs.append((time.perf_counter() - start, result.stats))
    return SearchStats(
        playouts=sum(s.playouts for _, s in runs), batches=sum(s.batches for _, s in runs),
        evaluated=sum(s.evaluated for _, s in runs),
        collisions=sum(s.collisions for _, s in runs), seconds=sum(w for w, _ in runs),
        eval_seconds=sum(s.eval_seconds for _, s in runs), nodes=sum(s.nodes for _, s in runs))


def _raw_speed(evaluator: Evaluator, positions: list[Game], batch: int) -> float:
    """The network's evaluations per second at `batch`, on copies of the benchmark positions."""
    games = [positions[i % len(positions)] for i in range(batch)]
    lay = layout_of(games[0])
    x = encode(games)
    for _ in range(3):
        evaluator.run(x, lay)
    times: list[float] = []
    deadline = time.perf_counter() + 2.0
    while time.perf_counter() < deadline or len(times) < 5:
        t = time.perf_counter()
        evaluator.run(x, lay)
        times.append(time.perf_counter() - t)
    return batch / statistics.median(times)


def _run_baseline(evaluator: Evaluator, positions: list[Game], simulations: int) -> float:
    playouts, seconds = 0, 0.0
    for game in positions:
        search = RecursiveMCTS(evaluator)
        start = time.perf_counter()
        search.search_visits(game, simulations)
        seconds += time.perf_counter() - start
        playouts += simulations
    return playouts / seconds


if __name__ == "__main__":
    # Runnable as a file too (`python tools/bench/search.py --null-network ...`), so that the
    # same benchmark can time an older checkout's search through its public API.
    _parser = argparse.ArgumentParser(prog="bench_search")
    add_parser(_parser.add_subparsers(dest="benchmark", required=True))
    _args = _parser.parse_args(["search", *sys.argv[1:]])
    sys.exit(_args.handler(_args))
