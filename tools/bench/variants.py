"""Evaluations per second of one network under several ways of running it, and how far each
way's answers are from the plain file's (issue 65: more evaluations per second from the same
network).

    saz bench variants [--model models/go.onnx] [--sizes 9,19] [--batch 1,16,64]
                       [--threads 1,2] [--variants base,int8-fc,...] [--repeat 5]

A variant is a model rewrite (`saz optimize`: int8 matrix products, summed gathers), a session
setting (graph optimisation level, an offline-optimised file, spinning) or a way of calling the
session (pre-bound outputs, a batch cut into cache-sized chunks); `base` is the engine's own
`Evaluator` on the file as it is. Every one runs through an `Evaluator` (its card checks, its
`run`), on random-play positions of the model's game encoded by the engine (`graph.encode`).

The machine is shared, so the variants are measured interleaved: for each board size x batch x
threads cell, `--repeat` rounds, each timing every variant once (the median call over
`--seconds`, in an order rotated every round); the table gives each variant's median over the
rounds and its ratio to `base`. Then each variant's agreement with `base` over `--positions`
positions per size (value, the priors over legal moves, the best move) and the time to open its
session.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import onnxruntime as ort

from saz.engine import evaluator as evaluator_module
from saz.engine.evaluator import Evaluator
from saz.engine.games import game_class
from saz.engine.graph import GraphLayout, encode, layout
from saz.engine.model_card import OUTPUT_NAMES, ModelCard, card_path
from saz.tools.bench.arguments import parse_ints
from saz.tools.bench.timing import median_call
from saz.tools.train.optimize import (
    Agreement,
    Int8Scope,
    agreement,
    optimize_model,
    random_positions,
)

Runner = Literal["run", "iobinding", "chunk"]


@dataclass(frozen=True)
class Variant:
    """One way of running the network: a rewrite of the file, session settings, a caller."""

    name: str
    help: str
    #: `saz optimize`'s rewrites of the file.
    int8: Int8Scope = "none"
    sum_gathers: bool = False
    #: SessionOptions attributes (`graph_optimization_level`, ...) and session config entries
    #: (keys with a dot, `session.intra_op.allow_spinning`) over the evaluator's own.
    options: Mapping[str, Any] = field(default_factory=dict)
    #: Save the file as onnxruntime optimises it (level all) and open that with optimisation off.
    offline: bool = False
    runner: Runner = "run"
    #: The chunk runner's most nodes per call.
    chunk_nodes: int = 0

    @property
    def rewrites(self) -> bool:
        """Whether the variant runs another file than the source."""
        return self.int8 != "none" or self.sum_gathers or self.offline


_LEVEL = ort.GraphOptimizationLevel
#: The candidates, in the tables' order; `base` first.
VARIANTS: tuple[Variant, ...] = (
    Variant("base", "the engine's Evaluator as it is (graph optimisation level all)"),
    Variant("extended", "graph optimisation level extended",
            options={"graph_optimization_level": _LEVEL.ORT_ENABLE_EXTENDED}),
    Variant("basic", "graph optimisation level basic",
            options={"graph_optimization_level": _LEVEL.ORT_ENABLE_BASIC}),
    Variant("offline", "the file optimised once at level all (optimized_model_filepath), opened "
            "with optimisation off", offline=True),
    Variant("int8-fc", "fc1 and fc2 in int8 (saz optimize --int8 fc)", int8="fc"),
    Variant("int8-all", "every matrix product in int8 (saz optimize --int8 all)", int8="all"),
    Variant("sum", "one Sum per chain of gathered rows (saz optimize --sum-gathers)",
            sum_gathers=True),
    Variant("int8-fc+sum", "both rewrites", int8="fc", sum_gathers=True),
    Variant("iobinding", "outputs bound to preallocated arrays, tables bound once (IOBinding)",
            runner="iobinding"),
    Variant("nospin", "intra-op threads do not spin while waiting",
            options={"session.intra_op.allow_spinning": "0"}),
    Variant("chunk", "a batch cut into calls of at most K nodes (one variant chunk-K per "
            "--chunk-nodes K)", runner="chunk"),
)
VARIANT_NAMES: tuple[str, ...] = tuple(v.name for v in VARIANTS)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("variants", help="one network run several ways: speed, agreement",
                              description=__doc__.splitlines()[0])
    p.add_argument("--model", type=Path, default=Path("models/go.onnx"),
                   help="an exported model with its card (default models/go.onnx)")
    p.add_argument("--sizes", type=parse_ints, default=[9, 19], help="board sizes (default 9,19)")
    p.add_argument("--batch", type=parse_ints, default=[1, 16, 64], help="default 1,16,64")
    p.add_argument("--threads", type=parse_ints, default=[1, 2],
                   help="onnxruntime intra-op threads (default 1,2)")
    p.add_argument("--variants", type=_names, default=list(VARIANT_NAMES),
                   help=f"comma-separated, base always included (default all: "
                        f"{','.join(VARIANT_NAMES)})")
    p.add_argument("--repeat", type=int, default=5, help="interleaved rounds (default 5)")
    p.add_argument("--seconds", type=float, default=0.3,
                   help="minimum time per measurement (default 0.3)")
    p.add_argument("--positions", type=int, default=300,
                   help="positions per size for the agreement table (default 300)")
    p.add_argument("--chunk-nodes", type=parse_ints, default=[1024],
                   help="the chunk variant's most nodes per call, one variant chunk-K each "
                        "(default 1024)")
    p.set_defaults(handler=bench_variants)


def _names(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in VARIANT_NAMES]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown variant(s) {', '.join(unknown)}; known: "
                                         f"{', '.join(VARIANT_NAMES)}")
    return ["base", *(n for n in names if n != "base")]


# -- building the variants ------------------------------------------------------------------------
def variant_model(variant: Variant, source: Path, folder: Path) -> Path:
    """The file `variant` runs: `source` itself, its `saz optimize` rewrite, or the file as
    onnxruntime optimises it (`offline`, with a card of its own), written into `folder`."""
    if not variant.rewrites:
        return source
    out = folder / f"{variant.name}.onnx"
    if variant.offline:
        options = ort.SessionOptions()
        options.log_severity_level = 3  # "may contain hardware specific optimizations"
        options.graph_optimization_level = _LEVEL.ORT_ENABLE_ALL
        options.optimized_model_filepath = str(out)
        ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
        ModelCard.load(card_path(source)).describing(out.read_bytes()).save(card_path(out))
        return out
    optimize_model(source, out, int8=variant.int8, sum_adds=variant.sum_gathers)
    return out


def session_options(variant: Variant, threads: int) -> ort.SessionOptions:
    """The evaluator's own session options for `threads` with the variant's over them."""
    options = evaluator_module._session_options(threads)
    if variant.offline:
        options.graph_optimization_level = _LEVEL.ORT_DISABLE_ALL
    for key, value in variant.options.items():
        if "." in key:
            options.add_session_config_entry(key, value)
        else:
            setattr(options, key, value)
    return options


def open_variant(variant: Variant, model: Path, threads: int) -> tuple[Evaluator, float]:
    """An Evaluator on the variant's file (CPU, `threads`) whose session has the variant's
    options, and the seconds its session took to open."""
    evaluator = Evaluator(model, device="cpu", threads=threads)
    data = model.read_bytes()
    start = time.perf_counter()
    session = ort.InferenceSession(data, session_options(variant, threads),
                                   providers=["CPUExecutionProvider"])
    opened = time.perf_counter() - start
    if variant.options or variant.offline:
        # The engine has no knob for these: the bench swaps the session the Evaluator opened.
        evaluator._session = session
    return evaluator, opened


def expand(names: Sequence[str], chunk_nodes: Sequence[int]) -> list[Variant]:
    """The variants called `names`, in `VARIANTS`' order, `chunk` as one `chunk-K` per K."""
    chosen: list[Variant] = []
    for variant in VARIANTS:
        if variant.name not in names:
            continue
        if variant.runner == "chunk":
            chosen += [replace(variant, name=f"chunk-{k}", chunk_nodes=k) for k in chunk_nodes]
        else:
            chosen.append(variant)
    return chosen


def caller(variant: Variant, evaluator: Evaluator, x: np.ndarray,
           lay: GraphLayout) -> Callable[[], object]:
    """One evaluation of the batch `x` the variant's way."""
    if variant.runner == "iobinding":
        return _bound_call(evaluator, x, lay)
    if variant.runner == "chunk":
        step = max(1, variant.chunk_nodes // lay.num_nodes)
        return lambda: _chunked(evaluator, x, lay, step)
    return lambda: evaluator.run(x, lay)


def _bound_call(evaluator: Evaluator, x: np.ndarray, lay: GraphLayout) -> Callable[[], object]:
    """`Evaluator.run` through an IOBinding: the tables, mask and outputs bound once, `x` bound
    on each call (no copy), the outputs written into preallocated arrays."""
    session = evaluator._session
    binding = session.io_binding()
    for name, value in evaluator._feed(x, lay, None).items():
        if name != "x":
            binding.bind_cpu_input(name, value)
    outputs = {"log_policy": np.empty((len(x), lay.num_nodes), np.float32),
               "value": np.empty(len(x), np.float32)}
    for name in OUTPUT_NAMES:
        array = outputs[name]
        binding.bind_output(name, "cpu", 0, np.float32, list(array.shape), array.ctypes.data)

    features = evaluator.num_features

    def call() -> object:
        # As `run` does: the network's planes, contiguous (a copy where the game has more).
        binding.bind_cpu_input("x", np.ascontiguousarray(x[:, :, :features]))
        session.run_with_iobinding(binding)
        return outputs["log_policy"], outputs["value"]
    return call


def _chunked(evaluator: Evaluator, x: np.ndarray, lay: GraphLayout,
             step: int) -> tuple[np.ndarray, np.ndarray]:
    """`Evaluator.run` on `x` in calls of `step` positions, the answers joined."""
    parts = [evaluator.run(x[i:i + step], lay) for i in range(0, len(x), step)]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


# -- the benchmark --------------------------------------------------------------------------------
def bench_variants(args: argparse.Namespace) -> int:
    chosen = expand(args.variants, args.chunk_nodes)
    source: Path = args.model
    game = game_class(ModelCard.load(card_path(source)).game)
    rng = np.random.default_rng(0)
    positions = {size: random_positions(game, size, max(args.positions, max(args.batch)), rng)
                 for size in args.sizes}
    with tempfile.TemporaryDirectory(prefix="saz-variants-") as tmp:
        files = {v.name: variant_model(v, source, Path(tmp)) for v in chosen}
        opened: dict[tuple[str, int], tuple[Evaluator, float]] = {
            (v.name, t): open_variant(v, files[v.name], t) for v in chosen for t in args.threads}
        base = opened[("base", args.threads[0])][0]
        print(f"# {source}: {base.game_name}, hidden {base.card.network.get('hidden')} x "
              f"{base.card.network.get('layers')} layers; onnxruntime {ort.__version__} on the "
              f"CPU; {args.repeat} interleaved rounds of {args.seconds} s per cell; evals/s "
              f"(ratio to base)")
        print()
        print("| size | batch | threads | " + " | ".join(v.name for v in chosen) + " |")
        print("|---|---:|---:|" + "---:|" * len(chosen))
        for size in args.sizes:
            lay = layout(size, size, game)
            for batch in args.batch:
                x = encode(positions[size][:batch])
                for threads in args.threads:
                    times = _interleaved(chosen, opened, threads, x, lay, args)
                    print(_speed_row(size, batch, threads, chosen, times), flush=True)
        print()
        print("| variant | size | value max | value mean | priors KL | best move | open ms |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for variant in chosen:
            evaluator, seconds = opened[(variant.name, args.threads[0])]
            for size in args.sizes:
                found = agreement(base, evaluator, positions[size][:args.positions])
                print(_agreement_row(variant.name, size, found, seconds), flush=True)
        print()
        for variant in chosen:
            print(f"* {variant.name}: {variant.help}")
    return 0


def _interleaved(chosen: Sequence[Variant], opened: Mapping[tuple[str, int],
                 tuple[Evaluator, float]], threads: int, x: np.ndarray, lay: GraphLayout,
                 args: argparse.Namespace) -> dict[str, list[float]]:
    """Each variant's median call time per round, the rounds interleaved and the order rotated
    each round."""
    calls = {v.name: caller(v, opened[(v.name, threads)][0], x, lay)
             for v in chosen}
    times: dict[str, list[float]] = {v.name: [] for v in chosen}
    names = list(calls)
    for round_ in range(args.repeat):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            times[name].append(median_call(calls[name], args.seconds))
    return times


def _speed_row(size: int, batch: int, threads: int, chosen: Sequence[Variant],
               times: Mapping[str, list[float]]) -> str:
    base = statistics.median(times["base"])
    cells = [f"{size}x{size}", str(batch), str(threads)]
    for variant in chosen:
        seconds = statistics.median(times[variant.name])
        cells.append(f"{batch / seconds:,.0f}" if variant.name == "base"
                     else f"{batch / seconds:,.0f} ({base / seconds:.2f}x)")
    return "| " + " | ".join(cells) + " |"


def _agreement_row(name: str, size: int, found: Agreement, seconds: float) -> str:
    return (f"| {name} | {size}x{size} | {found.value_max:.4f} | {found.value_mean:.4f} | "
            f"{found.kl_mean:.5f} | {found.top1:.1%} | {seconds * 1e3:.1f} |")
