"""The learner: fits the network to the replay buffer's positions.

Loss per position (AlphaZero's): policy cross-entropy between the search's visit distribution and
the network's log-policy (over all nodes; a moves network's over all moves), plus the squared error
of the value against the game's outcome, plus an L2 penalty on the weights (written out in the loss
rather than as the optimiser's weight decay, so that it means the same under SGD and Adam and shows
up in the metrics).

A moves network (`MovePolicyNet`, chess) has a win/draw/loss head instead of a tanh value, as
Lc0's: its value loss is the cross-entropy of the three logits against the outcome (+1 a win,
0 a draw, -1 a loss for the side to move), so `value_loss` is that cross-entropy there.

A network with the auxiliary heads (KataGo's) adds, over the positions of counted games only:
ownership, the binary cross-entropy of each point's predicted owner against its final owner
(`(1 + tanh) / 2` against `(1 + target) / 2`, mean over the points, so every board size weighs
the same); and score, the squared error of the predicted margin against the final one, both
divided by the number of points (a margin of the whole board is 1 on every size). Their weights
are `ownership_weight` and `score_weight`.

Each batch mixes board sizes: the buffer samples uniformly across the window and `model.collate`
joins the graphs of all sizes into one torch-geometric batch (a moves network runs once per
size on that size's dense tables, and the losses sum over the sizes). A network with groups
reads them from each position's features: `collate` asks the game's layout of each size
(`GraphLayout.group_members`, one call per size), so the replay buffer stores nothing more.
There is no rotation or reflection augmentation (the product follows the paper here): the
network must learn what it knows from the positions as they were played, the same on every
board size.

Weights never become subnormal: a weight whose data gradient has vanished (a dead unit) decays
geometrically under the L2 term into the subnormal range, where CPUs compute many times slower. In
a one-hour Gomoku run, 3,900 of 38,000 weights got there and the exported network evaluated 13x
slower than at the start (5,500 against 430 positions/s at 9x9, one thread), so self-play slowed
down generation after generation. Each step therefore flushes subnormal weights to zero; their
contribution was below 1e-38 anyway.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import numpy as np
import torch

from saz.engine.games.base import Game
from saz.engine.graph import layout
from saz.tools.train.model import MoveOutput, MovePolicyNet, NetOutput, Network, collate
from saz.tools.train.positions import PositionBatch
from saz.tools.train.selfplay import DEVICES

OPTIMIZERS = ("adam", "sgd")
#: The smallest normal float32; anything nonzero below it in magnitude is subnormal.
SMALLEST_NORMAL = float(np.finfo(np.float32).tiny)


@dataclass(frozen=True)
class LearnerConfig:
    """How the network is fitted (the `[learner]` table of a training config)."""

    batch_size: int = 256
    #: Training samples drawn per new self-play position: a generation that adds P positions
    #: trains ceil(P * samples_per_position / batch_size) steps.
    samples_per_position: float = 4.0
    #: The learner trains nothing until the replay window holds this many positions (KataGo's
    #: minimum rows). A run carried to a machine without its buffer would otherwise take its
    #: `samples_per_position` samples from the first generation's few thousand positions alone,
    #: learning them many times over; 0 trains from the first generation, as a new run must.
    min_positions: int = 0
    optimizer: str = "adam"
    #: Piecewise-constant learning rate: (from_step, rate) pairs, the first from step 0.
    lr_schedule: tuple[tuple[int, float], ...] = ((0, 1e-3),)
    momentum: float = 0.9
    l2: float = 1e-4
    value_weight: float = 1.0
    #: Weights of the auxiliary losses (used only by a network with those heads). KataGo weighs
    #: its ownership loss 1.5 per point-mean; the score's is kept small because a margin is far
    #: noisier than an owner.
    ownership_weight: float = 1.5
    score_weight: float = 0.5
    #: torch threads (0: torch's default).
    threads: int = 0
    #: Where the network trains: "cpu", "cuda" or "auto" (the GPU when torch sees one).
    #: Checkpoints are written from the CPU either way, so a run moves freely between machines.
    device: str = "cpu"

    def __post_init__(self) -> None:
        if self.batch_size < 1 or self.samples_per_position <= 0:
            raise ValueError("learner.batch_size and samples_per_position must be positive")
        if self.min_positions < 0:
            raise ValueError(f"learner.min_positions must be >= 0, got {self.min_positions}")
        if self.device not in DEVICES:
            raise ValueError(f"learner.device must be one of {', '.join(DEVICES)}, "
                             f"got {self.device!r}")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"learner.optimizer must be one of {', '.join(OPTIMIZERS)}, "
                             f"got {self.optimizer!r}")
        steps = [step for step, _ in self.lr_schedule]
        if not steps or steps[0] != 0 or steps != sorted(set(steps)):
            raise ValueError("learner.lr_schedule needs increasing steps starting at 0")
        if any(rate <= 0 for _, rate in self.lr_schedule):
            raise ValueError("learner.lr_schedule rates must be positive")
        if min(self.l2, self.value_weight, self.ownership_weight, self.score_weight,
               self.threads) < 0:
            raise ValueError("learner.l2, value_weight, ownership_weight, score_weight and "
                             "threads must be >= 0")

    def learning_rate(self, step: int) -> float:
        """The scheduled rate at training step `step`."""
        rate = self.lr_schedule[0][1]
        for start, value in self.lr_schedule:
            if step >= start:
                rate = value
        return rate

    def steps_for(self, new_positions: int, buffered: int) -> int:
        """Steps for a generation that added `new_positions`, the window now holding `buffered`:
        none while the window is short of `min_positions`."""
        if buffered < self.min_positions:
            return 0
        return max(1, math.ceil(new_positions * self.samples_per_position / self.batch_size))


@dataclass(frozen=True)
class Losses:
    """Mean losses over the steps of one `train` call."""

    policy: float
    value: float
    l2: float
    steps: int
    #: The auxiliary losses (0 for a network without those heads), unweighted.
    ownership: float = 0.0
    score: float = 0.0

    @property
    def total(self) -> float:
        """The sum of the unweighted losses."""
        return self.policy + self.value + self.l2 + self.ownership + self.score


class LossTerms(NamedTuple):
    """The mean losses of one batch, as tensors (unweighted)."""

    policy: torch.Tensor
    value: torch.Tensor
    ownership: torch.Tensor
    score: torch.Tensor


class Sampler(Protocol):
    """Where the learner's batches come from (the replay buffer)."""

    def sample(self, count: int, rng: np.random.Generator) -> list[PositionBatch]: ...


class Learner:
    """A network, its optimiser and the count of steps taken (the learning-rate clock)."""

    def __init__(self, net: Network, config: LearnerConfig,
                 game: type[Game] | None = None) -> None:
        """`game`: whose graph a moves network reads (`graph.layout`), and whose groups a
        network with groups pools over; a lattice network without groups reads the lattice
        whatever its game."""
        if isinstance(net, MovePolicyNet) and game is None:
            raise ValueError("a moves network trains on its game's graph: pass the game")
        if net.config.group_roles and game is None:
            raise ValueError("a network with groups trains on its game's groups: pass the game")
        self.device = torch_device(config.device)
        self.net = net.to(self.device)
        self.game = game
        #: A moves network's graph tables per board size, on the device.
        self._tables: dict[tuple[int, int], tuple[torch.Tensor, ...]] = {}
        self.config = config
        self.step = 0
        params = list(net.parameters())
        rate = config.learning_rate(0)
        self.optimizer: torch.optim.Optimizer = (
            torch.optim.Adam(params, lr=rate) if config.optimizer == "adam"
            else torch.optim.SGD(params, lr=rate, momentum=config.momentum, nesterov=True))
        # Only weight matrices are penalised: biases and normalisation gains are not weights.
        self._penalised = [p for p in params if p.ndim > 1]

    def train(self, buffer: Sampler, steps: int, rng: np.random.Generator,
              on_step: Callable[[int], None] | None = None) -> Losses:
        """`steps` optimiser steps on batches from `buffer`; `on_step(i)` after each, at the
        schedule's learning rate for each step."""
        if self.config.threads:
            torch.set_num_threads(self.config.threads)
        self.net.train()
        sums = np.zeros(5)
        for i in range(steps):
            for group in self.optimizer.param_groups:
                group["lr"] = self.config.learning_rate(self.step)
            sums += self.train_step(buffer.sample(self.config.batch_size, rng))
            self.step += 1
            if on_step is not None:
                on_step(i)
        self.net.eval()
        if steps == 0:  # no losses were measured, which is not a loss of 0
            return Losses(math.nan, math.nan, math.nan, 0, math.nan, math.nan)
        policy, value, l2, ownership, score = (float(v) for v in sums / steps)
        return Losses(policy, value, l2, steps, ownership, score)

    def train_step(self, groups: Sequence[PositionBatch]) -> tuple[float, ...]:
        """One optimiser step on positions grouped by board size; the step's (policy, value,
        l2, ownership, score) losses before the update."""
        terms = self.losses(groups)
        l2 = self.config.l2 * torch.stack([(p * p).sum() for p in self._penalised]).sum()
        config = self.config
        loss = (terms.policy + config.value_weight * terms.value + l2
                + config.ownership_weight * terms.ownership + config.score_weight * terms.score)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.flush_subnormal()
        return (terms.policy.item(), terms.value.item(), l2.item(), terms.ownership.item(),
                terms.score.item())

    def flush_subnormal(self) -> None:
        """Set the network's subnormal weights to zero (see the module docstring)."""
        with torch.no_grad():
            for p in self.net.parameters():
                p.masked_fill_(p.abs() < SMALLEST_NORMAL, 0.0)

    def forward(self, groups: Sequence[PositionBatch]) -> NetOutput | list[MoveOutput]:
        """The network's output on positions grouped by board size: one graph batch for a
        lattice network, one `MoveOutput` per group for a moves network."""
        if isinstance(self.net, MovePolicyNet):
            return [self._forward_moves(self.net, group) for group in groups]
        xs: list[np.ndarray] = []
        layouts = []
        with_groups = bool(self.net.config.group_roles)
        for group in groups:
            xs.extend(group.features())
            lay = layout(group.width, group.height, self.game if with_groups else None)
            layouts.extend([lay] * len(group))
        batch = collate(xs, layouts, groups=with_groups)
        return self.net(*(t.to(self.device) if isinstance(t, torch.Tensor) else t for t in batch))

    def _forward_moves(self, net: MovePolicyNet, group: PositionBatch) -> MoveOutput:
        tables = self._tables.get(group.size)
        if tables is None:
            lay = layout(group.width, group.height, self.game)
            tables = self._tables[group.size] = tuple(
                torch.tensor(lay.table(name), device=self.device) for name in net.TABLES)
        return net.predict(self._tensor(group.features()), *tables)

    def losses(self, groups: Sequence[PositionBatch],
               out: NetOutput | list[MoveOutput] | None = None) -> LossTerms:
        """The mean losses of the network on the positions (module docstring), from `out` when
        the caller has already run `forward` on them; the auxiliary ones are 0 without their
        heads or without counted positions."""
        if out is None:
            out = self.forward(groups)
        if isinstance(out, list):
            return self._moves_losses(groups, out)
        policy = self._tensor(np.concatenate([g.policy.astype(np.float32).reshape(-1)
                                              for g in groups]))
        policy_loss = -(policy * out.log_policy).sum() / sum(len(g) for g in groups)
        outcome = self._tensor(np.concatenate([g.value.astype(np.float32) for g in groups]))
        value_loss = torch.mean((out.value - outcome) ** 2)
        zero = out.value.new_zeros(())
        ownership_loss = score_loss = zero
        counted = self._tensor(np.concatenate([g.counted for g in groups]))
        if counted.any():
            if out.ownership_logit is not None:
                ownership_loss = _ownership_loss(out.ownership_logit, groups, counted)
            if out.score is not None:
                points = self._tensor(np.concatenate(
                    [np.full(len(g), g.width * g.height, np.float32) for g in groups]))
                final = self._tensor(np.concatenate([g.score for g in groups]))
                error = ((out.score - final) / points)[counted]
                score_loss = torch.mean(error ** 2)
        return LossTerms(policy_loss, value_loss, ownership_loss, score_loss)

    def _moves_losses(self, groups: Sequence[PositionBatch],
                      outs: Sequence[MoveOutput]) -> LossTerms:
        """A moves network's losses: the policy cross-entropy summed over each size's moves,
        the win/draw/loss cross-entropy of the outcome (`WDL_CLASS`), both means over the
        positions; it has no auxiliary heads."""
        total = sum(len(g) for g in groups)
        policy_loss = value_loss = outs[0].value.new_zeros(())
        for group, out in zip(groups, outs, strict=True):
            target = self._tensor(group.policy.astype(np.float32))
            policy_loss = policy_loss - (target * out.log_policy).sum()
            wdl = self._tensor(wdl_class(group.value))
            value_loss = value_loss + torch.nn.functional.cross_entropy(
                out.wdl_logit, wdl, reduction="sum")
        zero = policy_loss.new_zeros(())
        return LossTerms(policy_loss / total, value_loss / total, zero, zero)

    def _tensor(self, array: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(array).to(self.device)

    # -- resuming ----------------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        return {"step": self.step, "optimizer": self.optimizer.state_dict()}

    def restore(self, state: Mapping[str, Any]) -> None:
        self.step = int(state["step"])
        self.optimizer.load_state_dict(state["optimizer"])


def wdl_class(value: np.ndarray) -> np.ndarray:
    """The win/draw/loss class (0, 1, 2: the `wdl` head's order) of outcomes -1/0/+1 from the
    side to move's view."""
    return (1 - value.astype(np.int64)).astype(np.int64)


def torch_device(name: str) -> torch.device:
    """The torch device a config's `device` names; ValueError for "cuda" where torch sees no
    GPU (a CPU build of torch, or no device), so the run stops before its first step."""
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("learner.device is 'cuda', but torch sees no GPU here (a CPU build of "
                         "torch, or no CUDA device); use 'auto' to fall back to the CPU")
    return torch.device("cuda" if name != "cpu" and torch.cuda.is_available() else "cpu")


def _ownership_loss(logits: torch.Tensor, groups: Sequence[PositionBatch],
                    counted: torch.Tensor) -> torch.Tensor:
    """Mean over the counted positions of the per-point-mean binary cross-entropy between the
    predicted owner `(1 + tanh(logit)) / 2` and the final one. `logits` is per node, graph after
    graph, each graph's extra node last (it has no owner and is left out)."""
    per_position = []
    start = 0
    for group in groups:
        n = group.num_nodes
        rows = logits[start:start + n * len(group)].reshape(len(group), n)[:, :-1]
        target = (torch.from_numpy(group.ownership.astype(np.float32)).to(logits.device)
                  + 1.0) / 2.0
        # (1 + tanh(z)) / 2 = sigmoid(2z): the cross-entropy on logits 2z is exact and stable.
        bce = torch.nn.functional.binary_cross_entropy_with_logits(2.0 * rows, target,
                                                                   reduction="none")
        per_position.append(bce.mean(dim=1))
        start += n * len(group)
    return torch.cat(per_position)[counted].mean()
