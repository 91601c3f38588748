"""`saz optimize MODEL.onnx --out FAST.onnx`: an exported model rewritten to evaluate faster,
with its card.

    saz optimize models/go.onnx --out go-int8.onnx --int8 fc     (int8 fc1/fc2, per channel)
    saz optimize models/go.onnx --out go-sum.onnx --sum-gathers  (the same function, exactly)

Two rewrites, each a candidate for issue 65's "more evaluations per second from the same
network" (`saz bench variants` measures them against the plain file, speed and agreement):

* `--int8 fc|all`: onnxruntime's dynamic quantisation (`quantize_dynamic`) of the matrix
  products with constant weights to int8: weights per output channel (`--per-tensor`: one scale
  per matrix), activations per tensor at run time. `fc` quantises only the two fully connected
  layers after the graph layers (`fc1`, `fc2`), whose inputs are layer-normalised; `all` every
  layer too. The GIN layers' inputs are the neighbour sums, where the extra node's row sums
  every point of the board (`hub`: 81 of them at 9x9, 361 at 19x19), so one per-tensor scale
  crushes the ordinary rows to a few levels: `all` moved the shipped Go model's value by 0.2
  (9x9) to 0.6 (19x19) on average, `fc` by about 0.02 (docs/BENCHMARKS.md).
* `--sum-gathers`: every chain of three or more float Adds whose leaves are Gathers (the
  neighbour aggregation: five gathered rows, four Adds per layer) becomes one `Sum` of them, in
  the same order, so the result is bit for bit the chain's.

The card is the source's with the new size and digest, an `optimized` entry in its training
record (the source's digest and what was done) and an empty strength table (a quantised network
is another network: it earns its own). The result is opened by the engine's `Evaluator` and its
agreement with the source measured on random positions before it is renamed into place.
"""
from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import numpy as np
import onnx
from onnx import helper

from saz.engine.evaluator import Evaluator, ModelError
from saz.engine.games import Game, game_class
from saz.engine.model_card import ModelCard, ModelCardError, card_path
from saz.tools.train.export import write_model

Int8Scope = Literal["none", "fc", "all"]
#: The initializer-name prefixes of the fully connected layers after the graph layers (the
#: lattice network's `fc1` and `fc2`, named by the exporter after the torch parameters).
FC_PREFIXES: tuple[str, ...] = ("fc1.", "fc2.")


class OptimizeError(ValueError):
    """A rewrite that cannot be applied to this model (nothing to quantise, say)."""


# -- the rewrites -----------------------------------------------------------------------------
def without_shapes(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of `model` without its intermediate shape annotations (`value_info`). The dynamo
    exporter's annotations of the weights disagree with what the quantiser's shape inference
    derives after it turns a Gemm into a MatMul, which it refuses; onnxruntime needs none."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    del copy.graph.value_info[:]
    return copy


def weight_products(model: onnx.ModelProto, scope: Int8Scope) -> list[onnx.NodeProto]:
    """The Gemm and MatMul nodes of `scope` whose second input is a constant weight: those of
    the fully connected layers (`fc`) or all of them (`all`; `none`: no node)."""
    weights = {init.name for init in model.graph.initializer}
    nodes = [node for node in model.graph.node
             if node.op_type in ("Gemm", "MatMul") and len(node.input) > 1
             and node.input[1] in weights]
    if scope == "fc":
        return [node for node in nodes if node.input[1].startswith(FC_PREFIXES)]
    return nodes if scope == "all" else []


def quantize_int8(model: onnx.ModelProto, scope: Int8Scope, *, per_channel: bool = True
                  ) -> onnx.ModelProto:
    """`model` with the matrix products of `scope` in int8 (onnxruntime's dynamic quantisation:
    signed weights, activations quantised per tensor at run time). OptimizeError when the scope
    has no such product, or the quantiser did not take every one of them."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    chosen = weight_products(model, scope)
    if not chosen:
        raise OptimizeError(f"no matrix product with constant weights to quantise for "
                            f"--int8 {scope} (the fully connected layers are the initializers "
                            f"{', '.join(p + '*' for p in FC_PREFIXES)})")
    # The quantiser first turns each Gemm into a MatMul named after it (then an Add for the
    # bias) and quantises those by name.
    names = [node.name + "_MatMul" if node.op_type == "Gemm" else node.name for node in chosen]
    logger = logging.getLogger()
    level = logger.level
    logger.setLevel(logging.ERROR)  # "consider pre-processing" on every call
    try:
        with tempfile.TemporaryDirectory(prefix="saz-int8-") as tmp:
            out = Path(tmp) / "int8.onnx"
            quantize_dynamic(without_shapes(model), out, nodes_to_quantize=names,
                             per_channel=per_channel, weight_type=QuantType.QInt8)
            quantized = onnx.load(out)
    finally:
        logger.setLevel(level)
    done = sum(node.op_type == "MatMulInteger" for node in quantized.graph.node)
    if done != len(chosen):
        raise OptimizeError(f"the quantiser took {done} of the {len(chosen)} matrix products "
                            f"chosen for --int8 {scope}")
    return quantized


def sum_gathers(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of `model` in which every chain of float Adds with three or more leaves, each a
    Gather's output, is one `Sum` of the leaves in the chain's order (left to right, as onnxruntime
    accumulates a Sum), so the value is exactly the chain's; the chain's inner Adds go. The
    neighbour aggregation's five gathers cost four passes over the batch's activations as Adds.
    """
    rewritten = without_shapes(model)
    graph = rewritten.graph
    floats = _float_tensors(rewritten)
    producer = {name: node for node in graph.node for name in node.output}
    uses: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            uses[name] = uses.get(name, 0) + 1
    inner: set[int] = set()
    sums: dict[int, onnx.NodeProto] = {}
    for node in graph.node:
        if node.op_type != "Add" or id(node) in inner or node.output[0] not in floats:
            continue
        leaves, adds = _add_chain(node, producer, uses)
        if len(leaves) >= 3 and all(producer.get(leaf) is not None
                                    and producer[leaf].op_type == "Gather" for leaf in leaves):
            inner.update(id(add) for add in adds)
            sums[id(node)] = helper.make_node("Sum", leaves, list(node.output),
                                              name=f"{node.name}_sum")
    # A chain's root comes after every Add under it, so it is met last: drop those now.
    kept = [sums.get(id(node), node) for node in graph.node if id(node) not in inner]
    del graph.node[:]
    graph.node.extend(kept)
    onnx.checker.check_model(rewritten)
    return rewritten


def _add_chain(root: onnx.NodeProto, producer: dict[str, onnx.NodeProto],
               uses: dict[str, int]) -> tuple[list[str], list[onnx.NodeProto]]:
    """The leaves (left to right) and the inner Adds of the tree of Adds under `root`: an input
    made by an Add that nothing else reads is part of the tree."""
    leaves: list[str] = []
    adds: list[onnx.NodeProto] = []

    def walk(name: str) -> None:
        node = producer.get(name)
        if node is not None and node.op_type == "Add" and uses.get(name, 0) == 1:
            adds.append(node)
            walk(node.input[0])
            walk(node.input[1])
        else:
            leaves.append(name)

    walk(root.input[0])
    walk(root.input[1])
    return leaves, adds


def _float_tensors(model: onnx.ModelProto) -> set[str]:
    """The names of the graph's float32 tensors, from onnx's shape inference."""
    inferred = onnx.shape_inference.infer_shapes(model)
    values = [*inferred.graph.value_info, *inferred.graph.input, *inferred.graph.output]
    return {v.name for v in values if v.type.tensor_type.elem_type == onnx.TensorProto.FLOAT}


# -- agreement with the source ------------------------------------------------------------------
@dataclass(frozen=True)
class Agreement:
    """How far a candidate network's answers are from a reference's on the same positions:
    what the search reads, the value and the priors over the legal moves."""

    positions: int
    #: Largest and mean |value - reference value|, values in [-1, 1].
    value_max: float
    value_mean: float
    #: Mean KL(reference priors || candidate priors) over the legal moves, in nats.
    kl_mean: float
    #: Fraction of positions whose most probable legal move is the reference's.
    top1: float


def random_positions(game: type[Game], size: int, count: int, rng: np.random.Generator,
                     fill: float = 0.8) -> list[Game]:
    """`count` positions of `game` on a `size` board after 0 to `fill` x points uniformly
    random legal moves each (`Game.play_random`: never one that ends the game)."""
    positions = []
    for _ in range(count):
        position = game(size)
        position.play_random(int(rng.integers(0, int(fill * size * size) + 1)), rng)
        positions.append(position)
    return positions


def agreement(reference: Evaluator, candidate: Evaluator, positions: Sequence[Game],
              batch: int = 64) -> Agreement:
    """The candidate's `Agreement` with the reference over `positions` (one board size),
    evaluated `batch` at a time through `Evaluator.evaluate` as the search would."""
    values: list[np.ndarray] = []
    kls: list[float] = []
    same: list[bool] = []
    for start in range(0, len(positions), batch):
        chunk = positions[start:start + batch]
        ref_priors, ref_values = reference.evaluate(chunk)
        priors, cand_values = candidate.evaluate(chunk)
        values.append(np.abs(cand_values - ref_values))
        for p, q in zip(ref_priors, priors, strict=True):
            kls.append(_kl(p, q))
            same.append(int(np.argmax(p)) == int(np.argmax(q)))
    diffs = np.concatenate(values)
    return Agreement(len(positions), float(diffs.max()), float(diffs.mean()),
                     float(np.mean(kls)), float(np.mean(same)))


def _kl(p: np.ndarray, q: np.ndarray) -> float:
    """KL(p || q) in nats of two distributions over the same moves (0 log 0 = 0; q floored at
    1e-12 so a prior the candidate zeroes costs a finite amount)."""
    p64, q64 = p.astype(np.float64), np.maximum(q.astype(np.float64), 1e-12)
    kept = p64 > 0
    return float(np.sum(p64[kept] * (np.log(p64[kept]) - np.log(q64[kept]))))


# -- the command ----------------------------------------------------------------------------------
def optimize_model(source: Path, out: Path, *, int8: Int8Scope = "none",
                   per_channel: bool = True, sum_adds: bool = False) -> ModelCard:
    """Write `source` rewritten (`quantize_int8` of `int8`, then `sum_gathers` if `sum_adds`)
    to `out` with its card, opened by the engine's Evaluator before it is renamed into place;
    returns the card. ModelCardError for a source whose card does not describe it,
    OptimizeError when nothing was asked for or a rewrite does not apply."""
    if int8 == "none" and not sum_adds:
        raise OptimizeError("nothing to do: pass --int8 fc|all and/or --sum-gathers")
    card = ModelCard.load(card_path(source))
    data = source.read_bytes()
    try:
        card.check_contents(data)
    except ModelCardError as exc:
        raise ModelCardError(f"{source}: {exc}") from None
    model = onnx.load_from_string(data)
    if int8 != "none":
        model = quantize_int8(model, int8, per_channel=per_channel)
    if sum_adds:
        model = sum_gathers(model)
    done = {"from_sha256": card.onnx_sha256, "int8": int8,
            "per_channel": per_channel if int8 != "none" else None, "sum_gathers": sum_adds}
    optimized = replace(card, training={**card.training, "optimized": done}, strength={})
    return write_model(out, model.SerializeToString(), optimized)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="saz optimize",
        description="Rewrite an exported model to evaluate faster (int8 matrix products, "
                    "summed gathers) and write it with its card; then report how far its "
                    "answers are from the source's on random positions.")
    parser.add_argument("model", type=Path, metavar="MODEL.onnx",
                        help="an exported model with its card beside it")
    parser.add_argument("--out", type=Path, required=True, metavar="FAST.onnx")
    parser.add_argument("--int8", choices=("none", "fc", "all"), default="none",
                        help="quantise the fully connected layers' (fc) or every (all) matrix "
                             "product to int8 (default none)")
    parser.add_argument("--per-tensor", action="store_true",
                        help="one weight scale per matrix instead of one per output channel")
    parser.add_argument("--sum-gathers", action="store_true",
                        help="one Sum for each chain of Adds of gathered rows (exact)")
    parser.add_argument("--positions", type=int, default=200,
                        help="random positions per board size for the agreement report "
                             "(default 200; 0: none)")
    parser.add_argument("--sizes", default="9,19",
                        help="board sizes of the agreement report (default 9,19)")
    args = parser.parse_args(argv)
    if args.out.resolve() == args.model.resolve():
        print(f"saz optimize: --out {args.out} is the input", file=sys.stderr)
        return 1
    try:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        card = optimize_model(args.model, args.out, int8=args.int8,
                              per_channel=not args.per_tensor, sum_adds=args.sum_gathers)
        print(f"wrote {args.out} ({card.onnx_bytes} bytes) and {card_path(args.out)}")
        if args.positions > 0:
            report(args.model, args.out, [int(s) for s in args.sizes.split(",")],
                   args.positions)
    except (ModelCardError, ModelError, OptimizeError, ValueError, OSError) as exc:
        print(f"saz optimize: {exc}", file=sys.stderr)
        return 1
    return 0


def report(source: Path, out: Path, sizes: Sequence[int], count: int) -> None:
    """Print the rewritten model's `Agreement` with its source at each board size."""
    reference, candidate = Evaluator(source, device="cpu"), Evaluator(out, device="cpu")
    game = game_class(reference.game_name)
    rng = np.random.default_rng(0)
    for size in sizes:
        found = agreement(reference, candidate, random_positions(game, size, count, rng))
        print(f"{size}x{size}, {found.positions} random positions: value |diff| mean "
              f"{found.value_mean:.4f} max {found.value_max:.4f}; priors KL "
              f"{found.kl_mean:.5f}; best move agrees {found.top1:.1%}")


if __name__ == "__main__":
    sys.exit(main())
