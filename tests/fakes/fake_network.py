"""A stand-in exported network: an ONNX file and its card whose outputs are constants.

It takes every input the contract names for a game (x, the game's graph tables, mask), so a
test sees each of them fed, and answers every position with the same log-policy row, value and
win/draw/loss: what a test of the evaluator's plumbing, the search's priors or a protocol's
`wdl` needs, without torch or a trained network. Needs the `onnx` package (the train extra).
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from saz.engine.games.base import Game
from saz.engine.graph import layout
from saz.engine.model_card import OPSET, ModelCard, card_path, file_digest, input_names


def write_network(path: Path, game: type[Game], width: int, height: int, policy: np.ndarray, *,
                  value: float = 0.25, wdl: Sequence[float] | None = (0.5, 0.3, 0.2),
                  inputs: Sequence[str] | None = None) -> Path:
    """Write `path` (.onnx) and its card: a network of `game` on a width x height board whose
    log-policy is `policy` (one row, any width: the game's `policy_size` for a well-formed
    one), whose value is `value` and whose wdl output (None: none) is `wdl`. `inputs`
    overrides the inputs the card and the graph declare (default: the contract's for the
    game)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    lay = layout(width, height, game)
    names = tuple(inputs) if inputs is not None else input_names(tuple(lay.tables))
    f = game.num_features()
    declared = []
    nodes = []
    used = []  # each input summed to a scalar, times zero, so that the graph reads it
    for name in names:
        if name == "x":
            declared.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "N", f]))
        elif name == "mask":
            declared.append(helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["B", "N"]))
        else:
            table = lay.tables[name] if name in lay.tables else np.zeros((1, 1), np.int64)
            kind = TensorProto.INT64 if table.dtype == np.int64 else TensorProto.FLOAT
            declared.append(helper.make_tensor_value_info(name, kind, list(table.shape)))
        nodes.append(helper.make_node("Cast", [name], [f"{name}_f"], to=TensorProto.FLOAT))
        nodes.append(helper.make_node("ReduceSum", [f"{name}_f"], [f"{name}_s"], keepdims=0))
        used.append(f"{name}_s")
    constants = [
        numpy_helper.from_array(np.array([2], np.int64), "axes2"),
        numpy_helper.from_array(np.array([1], np.int64), "axes1"),
        numpy_helper.from_array(np.float32(0.0), "zero"),
        numpy_helper.from_array(np.asarray(policy, np.float32).reshape(1, -1), "policy"),
        numpy_helper.from_array(np.float32(value), "value_c"),
    ]
    nodes += [
        helper.make_node("ReduceSum", ["x", "axes2"], ["x_nodes"], keepdims=0),  # [B, N]
        helper.make_node("ReduceSum", ["x_nodes", "axes1"], ["x_rows"], keepdims=1),  # [B, 1]
        helper.make_node("Sum", used, ["inputs_s"]),
        helper.make_node("Add", ["x_rows", "inputs_s"], ["all_rows"]),
        helper.make_node("Mul", ["all_rows", "zero"], ["rows0"]),  # [B, 1] of zeros
        helper.make_node("Add", ["rows0", "policy"], ["log_policy"]),
        helper.make_node("ReduceSum", ["rows0", "axes1"], ["rows0_b"], keepdims=0),
        helper.make_node("Add", ["rows0_b", "value_c"], ["value"]),
    ]
    outputs = [
        helper.make_tensor_value_info("log_policy", TensorProto.FLOAT, ["B", len(policy)]),
        helper.make_tensor_value_info("value", TensorProto.FLOAT, ["B"]),
    ]
    if wdl is not None:
        constants.append(numpy_helper.from_array(np.asarray(wdl, np.float32).reshape(1, 3),
                                                 "wdl_c"))
        nodes.append(helper.make_node("Add", ["rows0", "wdl_c"], ["wdl"]))
        outputs.append(helper.make_tensor_value_info("wdl", TensorProto.FLOAT, ["B", 3]))
    graph = helper.make_graph(nodes, "fake-saz", declared, outputs, initializer=constants)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              ir_version=8)
    onnx.checker.check_model(model)
    data = model.SerializeToString()
    path.write_bytes(data)
    ModelCard(game=game.name, rules={}, feature_version=game.feature_version,
              feature_names=game.feature_names, network={"hidden": 0, "fake": True},
              opset=OPSET, inputs=names, outputs=tuple(o.name for o in outputs),
              onnx_bytes=len(data), onnx_sha256=file_digest(data)).save(card_path(path))
    return path


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """A log-policy row from logits."""
    logits = np.asarray(logits, np.float64)
    shifted = logits - logits.max()
    return (shifted - np.log(np.exp(shifted).sum())).astype(np.float32)
