"""Shared fixtures: small random networks, exported once per test session.

torch is imported inside the fixtures, not here, so that test modules that never ask for a network
(rules, search, protocols) do not pay for it.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from saz.tools.train.checkpoint import Checkpoint
    from saz.tools.train.model import PolicyValueNet

#: The tests' fixed files: real records and models that the tests read and never change.
DATA = Path(__file__).parent / "data"

#: Generation 118 of the Gomoku run, shipped until the shape planes (Gomoku features version 3),
#: with its card: the tests that replay one of its searches, or feed it the planes of a newer
#: version, load it from here rather than `models/`, which moves on.
GOMOKU_GEN118 = DATA / "gomoku-gen118.onnx"

#: Two real games against AIWine as `saz match` wrote them, games 1 and 6 of the match
#: gomoku-threats-rootfix-vs-aiwine-15x15 (saz as "saz-rootfix"): the first won as Black, the
#: second lost as White.
AIWINE_GAMES = DATA / "gomoku-threats-rootfix-vs-aiwine-15x15-games-1-6.sgf"

#: Hidden width of the test networks: small enough to export and run fast, wide enough that a
#: wrong aggregation cannot hide in rounding.
TINY_HIDDEN = 24


@dataclass(frozen=True)
class TinyModel:
    """An exported test network: the ONNX file (card beside it) and what it was made from."""

    path: Path
    checkpoint_path: Path
    checkpoint: Checkpoint
    net: PolicyValueNet  # eval mode


def trained_like_net(num_features: int, *, hidden: int = TINY_HIDDEN, layers: int = 3,
                     dropout: float = 0.1, seed: int = 0, heads: bool = False,
                     group_roles: int = 0) -> PolicyValueNet:
    """A random network whose normalisation layers are not at their identity initialisation
    (running statistics and affine weights scrambled, as after training), so that parity tests
    exercise them too; `heads`: with the ownership and score heads; `group_roles`: pooling
    over that many roles' groups, its maps not small (so that a wrong pooling shows), the rest
    of the weights the lattice network's. In eval mode."""
    import torch

    from saz.tools.train.model import NetConfig, PolicyValueNet

    torch.manual_seed(seed)
    net = PolicyValueNet(NetConfig(num_features=num_features, hidden=hidden, layers=layers,
                                   dropout=dropout, ownership_head=heads, score_head=heads))
    with torch.no_grad():
        for bn in (net.bn1, net.bn2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.2, 0.2)
        for ln in net.norms:
            ln.weight.uniform_(0.5, 1.5)
            ln.bias.uniform_(-0.2, 0.2)
    if group_roles:
        from dataclasses import replace

        grouped = PolicyValueNet(replace(net.config, group_roles=group_roles))
        state = dict(net.state_dict())
        torch.manual_seed(seed + 1)
        assert grouped.groups is not None
        for k, lin in enumerate(grouped.groups):
            state[f"groups.{k}.weight"] = torch.randn_like(lin.weight) * 0.3
        grouped.load_state_dict(state)
        net = grouped
    return net.eval()


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., TinyModel]:
    """`tiny_model(game_name, heads=False)`: a small random network for that game (with the
    ownership and score heads if asked), exported through `saz export` itself (so every
    session checks the command end to end), once per game."""
    from saz.engine.games import game_class
    from saz.tools.train.checkpoint import Checkpoint, save_checkpoint
    from saz.tools.train.export import main as export_main

    cache: dict[tuple[str, bool], TinyModel] = {}

    def factory(game: str, heads: bool = False) -> TinyModel:
        if (game, heads) not in cache:
            cls = game_class(game)
            folder = tmp_path_factory.mktemp(f"model-{game}{'-heads' if heads else ''}")
            net = trained_like_net(cls.num_features(), heads=heads)
            checkpoint = Checkpoint.of(net, cls, {"test": True},
                                       training={"command": "tests/conftest.py"})
            checkpoint_path = folder / "checkpoint.pt"
            save_checkpoint(checkpoint, checkpoint_path)
            path = folder / f"{game}.onnx"
            assert export_main([str(checkpoint_path), "--out", str(path)]) == 0
            cache[(game, heads)] = TinyModel(path, checkpoint_path, checkpoint, net)
        return cache[(game, heads)]

    return factory


@pytest.fixture
def aiwine_records() -> Path:
    """`AIWINE_GAMES`: the SGF collection of two real games against AIWine, the first won by
    saz ("saz-rootfix") as Black, the second lost as White."""
    return AIWINE_GAMES
