"""The self-play network in torch: for GPU machines whose onnxruntime has no CUDA provider.

Self-play normally runs the exported ONNX network in onnxruntime (`engine.evaluator.Evaluator`),
on the CPU or through onnxruntime-gpu's CUDA provider. The GPU machines lent to this project
have torch with CUDA but only the CPU package of onnxruntime, and nothing can be installed there,
so their self-play ran on the CPU cores while the GPU sat idle between learner steps.
`selfplay.runtime = "torch"` runs the same network in each worker with torch instead: the export
twin (`PolicyValueNetExport`, the computation the ONNX file holds) on the weights the trainer
writes beside each generation's ONNX file (`weights_path`); a moves network (chess) is its own
export form and reads its graph's `promo` table too, and a network with groups is fed each
batch's group members (`GraphLayout.group_members`) as the ONNX one is. Only the trainer uses it;
the engine never imports torch. On a lent H200, 15 workers with it made 24 times the 2-core
development machine's games.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from saz.engine.games import game_class
from saz.engine.graph import GraphLayout
from saz.engine.graph import layout as graph_layout
from saz.tools.train.checkpoint import load_checkpoint
from saz.tools.train.model import export_form


def weights_path(model_path: str | Path) -> Path:
    """Where the trainer puts the torch weights of the network exported to `model_path`."""
    return Path(model_path).with_suffix(".pt")


class TorchEvaluator:
    """`Evaluator.run` of one generation's network in torch, on `device` ("cpu", "cuda", or
    "auto": the GPU when torch sees one). Satisfies the search's `PolicyValueEvaluator`."""

    def __init__(self, model_path: str | Path, *, device: str = "auto", threads: int = 1) -> None:
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        if device == "cuda" and not torch.cuda.is_available():
            raise ValueError("selfplay.device 'cuda' with the torch runtime, but torch sees no GPU")
        # One thread a worker as with onnxruntime: the workers already fill the cores.
        torch.set_num_threads(threads)
        self.device = torch.device(device)
        #: "cuda" or "cpu": where the network runs (the training record reads it).
        self.provider = self.device.type
        checkpoint = load_checkpoint(weights_path(model_path))
        self.game_name = checkpoint.game
        self.num_features = checkpoint.config.num_features
        self._net = export_form(checkpoint.build_net()).to(self.device)
        #: Whether the network pools over the positions' groups (`PolicyValueGroupsExport`).
        self._groups = bool(checkpoint.config.group_roles)
        self._game = game_class(checkpoint.game)
        # Per board size: the graph tables the network reads (the neighbour table, the hub row,
        # a moves network's promo table) on the device, and an all-kept mask.
        self._layouts: dict[tuple[int, int], tuple[torch.Tensor, ...]] = {}
        self._all_kept: dict[tuple[int, int], torch.Tensor] = {}

    def run(self, x: np.ndarray, layout: GraphLayout,
            mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """`(log_policy [B, policy_size], value [B])` for a batch of one board size, as
        `Evaluator.run` returns them (`layout`: the game's, `graph.layout_of`)."""
        if x.ndim != 3 or x.shape[1] != layout.num_nodes or x.shape[2] != self.num_features:
            raise ValueError(f"x of shape {x.shape} does not fit [B, {layout.num_nodes}, "
                             f"{self.num_features}] ({layout.width}x{layout.height})")
        key = (layout.width, layout.height)
        tables = self._layouts.get(key)
        if tables is None:
            tables = self._layouts[key] = tuple(
                torch.tensor(layout.table(name), device=self.device) for name in self._net.TABLES)
        batch = x.shape[0]
        with torch.inference_mode():
            if mask is None:
                kept = self._all_kept.get((batch, layout.num_nodes))
                if kept is None:
                    kept = self._all_kept[(batch, layout.num_nodes)] = torch.ones(
                        (batch, layout.num_nodes), device=self.device)
            else:
                kept = torch.from_numpy(np.ascontiguousarray(mask, np.float32)).to(self.device)
            x = np.ascontiguousarray(x, np.float32)
            inputs = torch.from_numpy(x).to(self.device)
            groups = (torch.from_numpy(self._groups_layout(layout).group_members(x))
                      .to(self.device),) if self._groups else ()
            outputs = self._net(inputs, *tables, *groups, kept)
            log_policy, value = outputs[0].cpu().numpy(), outputs[1].cpu().numpy()
        return log_policy, value

    def _groups_layout(self, lay: GraphLayout) -> GraphLayout:
        """`lay` where it knows the game's groups, else the game's layout of its size (a
        window cut to a smaller board comes with the plain lattice's), as `Evaluator` does."""
        return lay if lay.group_roles else graph_layout(lay.width, lay.height, self._game)

    def __repr__(self) -> str:
        return f"<TorchEvaluator game={self.game_name} device={self.device}>"
