"""`saz bench BENCHMARK ...`: the product's benchmarks, printed as Markdown tables for
docs/BENCHMARKS.md.

    saz bench evaluator --game go --sizes 9,15,19 --batch 1,8,32,128 [--hidden H] [--device D]
                        [--model PATH] [--threads T] [--cpu-time]
    saz bench search --game gomoku --size 15 --visits 800 ...   (see tools/bench/search.py)
    saz bench gtp [--runs 20] [-- ENGINE ...]              (see tools/bench/gtp.py)
    saz bench gomocup [--runs 20] [--turns 40]             (see tools/bench/gomocup.py)
    saz bench clock --size 19 --moves 200 --time "time_settings 0 1 1" (see tools/bench/clock.py)
    saz bench memory gtp|gomocup [--seconds S]             (see tools/bench/memory.py)
    saz bench solve --size 8 --from 12 --positions 5      (see tools/bench/solve.py)
    saz bench solve --decision                            (the search's solve decision)
    saz bench threats --records DIR                       (see tools/bench/threats.py)
    saz bench selfplay --config C --model M --size 16     (see tools/bench/selfplay.py)
    saz bench pool [--workers 1,2 | --ray [ADDRESS]]      (see tools/bench/pool.py)
    saz bench cache --records DIR --player NAME           (see tools/bench/evalcache.py)
    saz bench variants --model M --sizes 9,19 --batch 1,16,64 (see tools/bench/variants.py)
    saz bench judgement --estimates CSV --model M          (see tools/bench/judgement.py)

`evaluator` times the exported network in onnxruntime (`Evaluator.run`, the search's hot path) for
each board size x batch size, and the same network in torch eager (the torch-geometric model under
`torch.inference_mode()`, its batch built once) for comparison. Without `--model` it exports a
randomly initialised network of the given shape to a temporary folder: speed does not depend on the
weights. Inputs are random 0/1 features (encoding is not what is timed here).

Each benchmark is an argparse subcommand whose handler takes the parsed arguments and returns the
exit status; add one with another `_add_*` function in `main`.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch

from saz.engine.evaluator import Evaluator, ModelError
from saz.engine.games import GAME_NAMES, game_class
from saz.engine.games.grid import parse_sizes
from saz.engine.graph import layout
from saz.tools.bench import clock as bench_clock
from saz.tools.bench import evalcache as bench_evalcache
from saz.tools.bench import gomocup as bench_gomocup
from saz.tools.bench import gtp as bench_gtp
from saz.tools.bench import judgement as bench_judgement
from saz.tools.bench import memory as bench_memory
from saz.tools.bench import pool as bench_pool
from saz.tools.bench import search as bench_search
from saz.tools.bench import selfplay as bench_selfplay
from saz.tools.bench import solve as bench_solve
from saz.tools.bench import threats as bench_threats
from saz.tools.bench import variants as bench_variants
from saz.tools.bench.arguments import parse_ints
from saz.tools.bench.timing import call_times, warm_up
from saz.tools.train.export import export_random_network
from saz.tools.train.model import NetConfig, PolicyValueNet, collate


class Timing(NamedTuple):
    """A median wall time and how busy the rest of the machine was while it was taken."""

    seconds: float
    #: CPU cores other processes used on average during the measurement (None off Linux).
    other_load: float | None


def other_cpu_seconds() -> float | None:
    """CPU seconds all processes have used (from /proc/stat) minus this process's own; None
    where /proc/stat does not exist."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            ticks = [int(v) for v in f.readline().split()[1:9]]
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = ticks
    busy = (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")
    return busy - time.process_time()


#: A measurement during which other processes used more CPU cores than this is taken again.
MAX_OTHER_LOAD = 0.10


def measure(fn: Callable[[], object], *, min_seconds: float, min_runs: int = 5,
            attempts: int = 8, pause: float = 1.0, cpu_time: bool = False) -> Timing:
    """Median wall time of `fn()` after warm-up, over at least `min_runs` calls and
    `min_seconds`. The development machine is shared, so a measurement during which other
    processes used more than MAX_OTHER_LOAD cores is taken again after `pause` seconds (up to
    `attempts` times; the quietest one is kept).

    `cpu_time` times this process's CPU seconds instead of wall time: what a single-threaded
    `fn` costs while other processes take turns on the cores (no retries needed then)."""
    clock = time.process_time if cpu_time else time.perf_counter
    warm_up(fn)
    best: Timing | None = None
    for _ in range(attempts):
        other_start = other_cpu_seconds()
        wall_start = time.perf_counter()
        times = call_times(fn, min_seconds=min_seconds, min_runs=min_runs, clock=clock)
        wall = time.perf_counter() - wall_start
        other_end = other_cpu_seconds()
        load = None if other_start is None or other_end is None or cpu_time else \
            max(0.0, (other_end - other_start) / wall)
        timing = Timing(statistics.median(times), load)
        if load is None or load <= MAX_OTHER_LOAD:
            return timing
        if best is None or load < (best.other_load or 0.0):
            best = timing
        time.sleep(pause)
    assert best is not None
    return best


# -- saz bench evaluator ---------------------------------------------------------------------------
def _add_evaluator(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "evaluator", help="evaluations per second: onnxruntime vs torch eager",
        description="Time the exported network in onnxruntime and in torch eager for each board "
                    "size x batch size.")
    p.add_argument("--game", choices=GAME_NAMES, default="go")
    p.add_argument("--sizes", type=parse_sizes, default=parse_sizes("9,15,19"),
                   help="board sizes, e.g. 9,15,19 or 7x11 (default 9,15,19)")
    p.add_argument("--batch", type=parse_ints, default=[1, 8, 32, 128],
                   help="batch sizes (default 1,8,32,128)")
    p.add_argument("--hidden", type=int, default=NetConfig.hidden,
                   help=f"hidden width of the random network (default {NetConfig.hidden})")
    p.add_argument("--layers", type=int, default=NetConfig.layers,
                   help=f"GIN layers of the random network (default {NetConfig.layers})")
    p.add_argument("--model", type=Path, help="time this exported model instead (no torch "
                   "comparison: the ONNX file has no torch twin)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    p.add_argument("--threads", type=int, help="onnxruntime intra-op threads (default: the "
                   "evaluator's own choice)")
    p.add_argument("--seconds", type=float, default=0.5,
                   help="minimum time per measurement (default 0.5)")
    p.add_argument("--repeat", type=int, default=3, help="measure each cell this many times, "
                   "alternating engines, and report the median (default 3)")
    p.add_argument("--no-torch", action="store_true", help="skip the torch eager comparison")
    p.add_argument("--cpu-time", action="store_true",
                   help="time CPU seconds of this process instead of wall time, one thread for "
                        "onnxruntime and torch alike: comparable figures on a busy machine")
    p.set_defaults(handler=bench_evaluator)


def bench_evaluator(args: argparse.Namespace) -> int:
    game = game_class(args.game)
    if args.cpu_time:
        if args.threads not in (None, 1):
            print("saz bench: --cpu-time measures one thread; drop --threads or pass 1",
                  file=sys.stderr)
            return 2
        args.threads = 1
        torch.set_num_threads(1)
    with tempfile.TemporaryDirectory(prefix="saz-bench-") as tmp:
        net: PolicyValueNet | None = None
        model = args.model
        if model is None:
            model = Path(tmp) / f"{args.game}.onnx"
            random_net = export_random_network(game, model, hidden=args.hidden,
                                               layers=args.layers)
            # The torch comparison runs torch-geometric batches: the lattice network's form.
            net = random_net if isinstance(random_net, PolicyValueNet) else None

        def open_evaluator() -> Evaluator:
            return Evaluator(model, device=args.device, threads=args.threads, game=args.game)

        try:
            evaluator = open_evaluator()
        except ModelError as exc:
            print(f"saz bench: {exc}", file=sys.stderr)
            return 1
        startup = measure(open_evaluator, min_seconds=0.0, min_runs=7)
        shape = evaluator.card.network
        print(f"# evaluator: {args.game}, hidden {shape.get('hidden')} x "
              f"{shape.get('layers')} layers, {shape.get('parameters')} parameters; "
              f"onnxruntime on {evaluator.provider} ({evaluator.threads} intra-op threads); "
              f"torch {torch.__version__} eager ({torch.get_num_threads()} threads)")
        print(f"# start-up (card checks + session): {startup.seconds * 1e3:.1f} ms")
        if args.cpu_time:
            print("# times are CPU seconds of this process per call (--cpu-time)")
        print()
        print("| size | batch | ORT evals/s | ORT ms | torch evals/s | torch ms | ORT speed-up |")
        print("|---|---|---|---|---|---|---|")
        rng = np.random.default_rng(0)
        use_torch = net is not None and not args.no_torch
        noisy = False
        for width, height in args.sizes:
            lay = layout(width, height, game)
            for batch in args.batch:
                x = rng.integers(0, 2, (batch, lay.num_nodes, evaluator.num_features)
                                 ).astype(np.float32)
                graphs = collate(list(x), [lay] * batch) if use_torch else None
                ort_runs: list[Timing] = []
                torch_runs: list[Timing] = []
                timer = partial(measure, min_seconds=args.seconds, cpu_time=args.cpu_time)
                for _ in range(args.repeat):
                    ort_runs.append(timer(partial(evaluator.run, x, lay)))
                    if net is not None and graphs is not None:
                        with torch.inference_mode():
                            torch_runs.append(timer(partial(net, *graphs)))
                noisy |= any((t.other_load or 0.0) > MAX_OTHER_LOAD
                             for t in ort_runs + torch_runs)
                print(_row(f"{width}x{height}", batch, ort_runs, torch_runs), flush=True)
        if noisy:
            print(f"\n* other processes used more than {MAX_OTHER_LOAD} cores during every "
                  "attempt at this measurement: treat it as an upper bound")
    return 0


def _median(runs: list[Timing]) -> str:
    """The median time in ms, starred if even the quietest attempt was disturbed."""
    seconds = statistics.median(t.seconds for t in runs)
    star = "*" if any((t.other_load or 0.0) > MAX_OTHER_LOAD for t in runs) else ""
    return f"{seconds * 1e3:.3f}{star}"


def _row(size: str, batch: int, ort_runs: list[Timing], torch_runs: list[Timing]) -> str:
    ort_s = statistics.median(t.seconds for t in ort_runs)
    cells = [size, str(batch), f"{batch / ort_s:,.0f}", _median(ort_runs)]
    if not torch_runs:
        cells += ["-", "-", "-"]
    else:
        torch_s = statistics.median(t.seconds for t in torch_runs)
        cells += [f"{batch / torch_s:,.0f}", _median(torch_runs), f"{torch_s / ort_s:.2f}x"]
    return "| " + " | ".join(cells) + " |"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="saz bench", description="saz's benchmarks: speed, memory and the tactics' reach")
    subparsers = parser.add_subparsers(dest="benchmark", required=True, metavar="BENCHMARK")
    _add_evaluator(subparsers)
    bench_search.add_parser(subparsers)
    bench_gomocup.add_parser(subparsers)
    bench_gtp.add_parser(subparsers)
    bench_clock.add_parser(subparsers)
    bench_memory.add_parser(subparsers)
    bench_solve.add_parser(subparsers)
    bench_threats.add_parser(subparsers)
    bench_selfplay.add_parser(subparsers)
    bench_pool.add_parser(subparsers)
    bench_evalcache.add_parser(subparsers)
    bench_variants.add_parser(subparsers)
    bench_judgement.add_parser(subparsers)
    args = parser.parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
