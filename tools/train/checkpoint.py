"""Training checkpoints: a network's weights with everything needed to export or resume it.

A checkpoint is one `torch.save`d dict of plain data and tensors (so `torch.load(weights_only=True)`
reads it without unpickling code):

    format            "saz-checkpoint"
    format_version    CHECKPOINT_VERSION
    net_config        NetConfig.to_dict()
    state_dict        the network's state_dict() (`model.build_net` makes it from net_config)
    game, rules       the game's registry name and rules parameters (as the model card states them)
    feature_version   Game.feature_version the network was trained on
    feature_names     Game.feature_names, in input order
    training          the training record (command, config, board sizes, generations, wall time,
                      hardware), copied into the model card on export
    optimizer_state   optimizer.state_dict() to resume training, or None
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from saz.engine.games.base import Game
from saz.tools.train.model import NetConfig, Network, build_net

CHECKPOINT_FORMAT = "saz-checkpoint"
CHECKPOINT_VERSION = 1


class CheckpointError(ValueError):
    """A file that is not a readable saz checkpoint, or one that contradicts itself."""


@dataclass(frozen=True)
class Checkpoint:
    """A trained (or training) network and what it was trained for."""

    config: NetConfig
    state_dict: Mapping[str, Tensor]
    game: str
    rules: Mapping[str, Any]
    feature_version: int
    feature_names: tuple[str, ...]
    training: Mapping[str, Any] = field(default_factory=dict)
    optimizer_state: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.config.num_features != len(self.feature_names):
            raise CheckpointError(
                f"the network takes {self.config.num_features} features but the checkpoint "
                f"names {len(self.feature_names)}")

    @classmethod
    def of(cls, net: Network, game: type[Game], rules: Mapping[str, Any], *,
           training: Mapping[str, Any] | None = None,
           optimizer_state: Mapping[str, Any] | None = None) -> Checkpoint:
        """A checkpoint of `net` trained for `game` (its feature names and version are taken
        from the class, so they cannot disagree with the rules module)."""
        # On the CPU whatever device trained it: a checkpoint loads on any machine.
        state = {name: tensor.detach().cpu() for name, tensor in net.state_dict().items()}
        return cls(config=net.config, state_dict=state, game=game.name,
                   rules=dict(rules), feature_version=game.feature_version,
                   feature_names=tuple(game.feature_names), training=dict(training or {}),
                   optimizer_state=optimizer_state)

    def build_net(self) -> Network:
        """The network with these weights (of its config's kind), in eval mode."""
        net = build_net(self.config)
        try:
            net.load_state_dict(self.state_dict, strict=True)
        except RuntimeError as exc:  # torch reports missing/unexpected keys and shape mismatches
            raise CheckpointError(f"the weights do not fit {self.config}: "
                                  f"{str(exc).splitlines()[0]}") from None
        return net.eval()


def save_checkpoint(checkpoint: Checkpoint, path: str | Path) -> None:
    """Write `checkpoint` to `path` (beside it first, then renamed: never half a checkpoint)."""
    path = Path(path)
    data = {
        "format": CHECKPOINT_FORMAT,
        "format_version": CHECKPOINT_VERSION,
        "net_config": checkpoint.config.to_dict(),
        "state_dict": dict(checkpoint.state_dict),
        "game": checkpoint.game,
        "rules": dict(checkpoint.rules),
        "feature_version": checkpoint.feature_version,
        "feature_names": list(checkpoint.feature_names),
        "training": dict(checkpoint.training),
        "optimizer_state": checkpoint.optimizer_state,
    }
    tmp = path.with_name(path.name + ".tmp")
    torch.save(data, tmp)
    tmp.replace(path)


def load_checkpoint(path: str | Path) -> Checkpoint:
    """Read a checkpoint; CheckpointError (naming the file) when it is not a valid one."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {path} not found")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises pickle, zip and runtime errors alike
        raise CheckpointError(f"checkpoint {path} cannot be read: "
                              f"{str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{path} is not a saz checkpoint")
    if data.get("format_version") != CHECKPOINT_VERSION:
        raise CheckpointError(f"checkpoint {path} has format version "
                              f"{data.get('format_version')!r}; this saz reads "
                              f"{CHECKPOINT_VERSION}")
    try:
        return Checkpoint(config=NetConfig.from_dict(data["net_config"]),
                          state_dict=data["state_dict"], game=data["game"],
                          rules=data["rules"], feature_version=data["feature_version"],
                          feature_names=tuple(data["feature_names"]),
                          training=data["training"], optimizer_state=data["optimizer_state"])
    except KeyError as exc:
        raise CheckpointError(f"checkpoint {path} lacks {exc.args[0]!r}") from None
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"checkpoint {path}: {exc}") from None
