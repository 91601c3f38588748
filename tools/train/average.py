"""`saz average A B ... --out AVG`: one network whose weights are the mean of several.

    saz average RUN/checkpoints/gen_00590.pt ... --out AVG.pt        (then saz export AVG.pt)
    saz average RUN/models/gen_00593.onnx ... --out AVG.onnx         (a model and its card)

Stochastic weight averaging (Izmailov et al., 2018), as KataGo exports its networks: the argument
is that snapshots of one run a few generations apart lie in one basin and their mean nearer its
centre than any of them. Along a run at a low, constant learning rate single generations scatter:
neighbouring generations of the Gomoku run moved an 80-game match against AIWine by about eight
games. The mean costs no training. (Measured there, two means of the open branch were no
stronger against AIWine than its generations: 18-22 and 17-23 in 40 games at 20x20.)

The snapshots must be one network shape for one game and feature set, normally one run's
`checkpoints/gen_N.pt`. Floating-point tensors are averaged, batch normalisation's running
statistics included (close snapshots see nearly the same activations, so their mean stands in
for statistics recomputed on the averaged network); integer tensors (`num_batches_tracked`)
take the newest snapshot's. The result is a checkpoint without optimiser state, ready for `saz
export`; its training record is the newest snapshot's, with the averaged files under `averaged`.

A run keeps a checkpoint every `snapshot_every` generations but an exported model of every one, so
the models can be averaged too, initializer by initializer. The export folds batch normalisation
into the linear layer before it, so the mean of the files is the mean of the affine maps each
generation applies there, not exactly the export of the mean checkpoint; for snapshots as close as
one run's the two agree to the export's own tolerance (a test checks it). The files must be one
graph, node for node; the card is the newest file's, with its size, digest and `averaged` redone,
and the result is opened by the engine's `Evaluator` before it is renamed into place.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from torch import Tensor

from saz.engine.evaluator import ModelError
from saz.engine.model_card import ModelCard, ModelCardError, card_path
from saz.tools.train.checkpoint import (
    Checkpoint,
    CheckpointError,
    load_checkpoint,
    save_checkpoint,
)
from saz.tools.train.export import write_model


def average_checkpoints(checkpoints: Sequence[Checkpoint],
                        names: Sequence[str] | None = None) -> Checkpoint:
    """The checkpoint whose weights are the mean of `checkpoints`' (the last is the newest: its
    game, rules and training record are kept). `names` label them in the training record.
    CheckpointError when they are not one network for one game."""
    if not checkpoints:
        raise CheckpointError("nothing to average")
    newest = checkpoints[-1]
    for other in checkpoints[:-1]:
        if other.config != newest.config:
            raise CheckpointError(f"cannot average different networks: {other.config} and "
                                  f"{newest.config}")
        if (other.game, other.feature_names) != (newest.game, newest.feature_names):
            raise CheckpointError(f"cannot average networks of different games or features: "
                                  f"{other.game} {list(other.feature_names)} and {newest.game} "
                                  f"{list(newest.feature_names)}")
        if other.state_dict.keys() != newest.state_dict.keys():
            raise CheckpointError("cannot average checkpoints whose weights have different names")
    state: dict[str, Tensor] = {
        name: (torch.from_numpy(_mean([c.state_dict[name].numpy() for c in checkpoints]))
               if last.is_floating_point() else last.clone())
        for name, last in newest.state_dict.items()}
    labels = list(names) if names is not None else [f"#{i}" for i in range(len(checkpoints))]
    training = {**newest.training, "averaged": labels}
    return Checkpoint(config=newest.config, state_dict=state, game=newest.game,
                      rules=newest.rules, feature_version=newest.feature_version,
                      feature_names=newest.feature_names, training=training,
                      optimizer_state=None)


def average_models(paths: Sequence[Path], out: Path) -> ModelCard:
    """Write the model whose initializers are the mean of the exported models at `paths` (the
    last is the newest: its card is kept) to `out`, with its card; returns the card.
    ModelCardError when the files are not one network of one game."""
    if not paths:
        raise ModelCardError("nothing to average")
    cards = [ModelCard.load(card_path(path)) for path in paths]
    models = []
    for path, path_card in zip(paths, cards):
        data = path.read_bytes()
        try:
            path_card.check_contents(data)
        except ModelCardError as exc:
            raise ModelCardError(f"{path}: {exc}") from None
        models.append(onnx.load_from_string(data))
    newest, card = models[-1], cards[-1]
    structure = _structure(newest)
    for path, other, other_card in zip(paths, models, cards):
        if (other_card.game, other_card.feature_names, other_card.network) != (
                card.game, card.feature_names, card.network):
            raise ModelCardError(f"cannot average {path} with {paths[-1]}: different networks or "
                                 f"games ({other_card.game}, {other_card.network})")
        if _structure(other) != structure:
            raise ModelCardError(f"cannot average {path} with {paths[-1]}: the graphs differ")
    for i, initializer in enumerate(newest.graph.initializer):
        arrays = [numpy_helper.to_array(model.graph.initializer[i]) for model in models]
        last = arrays[-1]
        if last.dtype.kind == "f":
            mean = _mean(arrays)
        elif all(np.array_equal(a, last) for a in arrays):
            mean = last
        else:
            raise ModelCardError(f"cannot average {initializer.name}: integer constants differ")
        initializer.CopyFrom(numpy_helper.from_array(mean, initializer.name))
    averaged = replace(card, training={**card.training, "averaged": [str(p) for p in paths]},
                       strength={})
    return write_model(out, newest.SerializeToString(), averaged)


def _mean(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """The element-wise mean of same-shaped float arrays, in the last one's dtype. Summed in
    float64: thirty float32 snapshots lose no digit to the order of the sum."""
    return (np.sum([a.astype(np.float64) for a in arrays], axis=0)
            / len(arrays)).astype(arrays[-1].dtype)


def _structure(model: onnx.ModelProto) -> bytes:
    """The model without its initializers' values: the nodes, inputs, outputs and the
    initializers' names, types and shapes."""
    graph = onnx.GraphProto()
    graph.CopyFrom(model.graph)
    for initializer in graph.initializer:
        initializer.ClearField("raw_data")
        for values in ("float_data", "int32_data", "int64_data", "double_data"):
            initializer.ClearField(values)
    return graph.SerializeToString()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="saz average",
        description="Average the weights of several networks of one run (stochastic weight "
                    "averaging): checkpoints into one checkpoint without optimiser state (for "
                    "saz export), or exported models into one model and its card.")
    parser.add_argument("inputs", type=Path, nargs="+", metavar="CHECKPOINT.pt|MODEL.onnx",
                        help="networks of one run, all checkpoints or all models, oldest first "
                             "(the last one's training record is kept)")
    parser.add_argument("--out", type=Path, required=True, metavar="AVG.pt|AVG.onnx",
                        help="where to write the mean, of the inputs' kind")
    args = parser.parse_args(argv)
    kinds = {path.suffix for path in [*args.inputs, args.out]}
    if len(kinds) != 1 or not kinds <= {".pt", ".onnx"}:
        print("saz average: the inputs and --out must be all checkpoints (.pt) or all models "
              f"(.onnx), got {', '.join(sorted(kinds))}", file=sys.stderr)
        return 1
    if args.out.resolve() in {path.resolve() for path in args.inputs}:
        print(f"saz average: --out {args.out} is one of the inputs", file=sys.stderr)
        return 1
    try:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        if kinds == {".onnx"}:
            card = average_models(args.inputs, args.out)
            game = card.game
        else:
            loaded = [load_checkpoint(path) for path in args.inputs]
            averaged = average_checkpoints(loaded, [str(path) for path in args.inputs])
            save_checkpoint(averaged, args.out)
            game = averaged.game
    except (CheckpointError, ModelCardError, ModelError, OSError) as exc:
        print(f"saz average: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.out}: the mean of {len(args.inputs)} networks of {game}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
