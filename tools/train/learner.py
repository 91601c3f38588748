"""The learner: fits the network to the replay buffer's positions.

Loss per position (AlphaZero's): policy cross-entropy between the search's visit distribution and
the network's log-policy over all nodes, plus the squared error of the value against the game's
outcome, plus an L2 penalty on the weights (written out in the loss rather than as the optimiser's
weight decay, so that it means the same under SGD and Adam and shows up in the metrics).

Each batch mixes board sizes: the buffer samples uniformly across the window and `model.collate`
joins the graphs of all sizes into one torch-geometric batch. There is no rotation or reflection
augmentation (the product follows the paper here): the network must learn what it knows from
the positions as they were played, the same on every board size.

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
from typing import Any

import numpy as np
import torch

from saz.engine.graph import layout
from saz.tools.train.model import PolicyValueNet, collate
from saz.tools.train.positions import PositionBatch
from saz.tools.train.replay import ReplayBuffer

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
    optimizer: str = "adam"
    #: Piecewise-constant learning rate: (from_step, rate) pairs, the first from step 0.
    lr_schedule: tuple[tuple[int, float], ...] = ((0, 1e-3),)
    momentum: float = 0.9
    l2: float = 1e-4
    value_weight: float = 1.0
    #: torch threads (0: torch's default).
    threads: int = 0

    def __post_init__(self) -> None:
        if self.batch_size < 1 or self.samples_per_position <= 0:
            raise ValueError("learner.batch_size and samples_per_position must be positive")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"learner.optimizer must be one of {', '.join(OPTIMIZERS)}, "
                             f"got {self.optimizer!r}")
        steps = [step for step, _ in self.lr_schedule]
        if not steps or steps[0] != 0 or steps != sorted(set(steps)):
            raise ValueError("learner.lr_schedule needs increasing steps starting at 0")
        if any(rate <= 0 for _, rate in self.lr_schedule):
            raise ValueError("learner.lr_schedule rates must be positive")
        if self.l2 < 0 or self.value_weight < 0 or self.threads < 0:
            raise ValueError("learner.l2, value_weight and threads must be >= 0")

    def learning_rate(self, step: int) -> float:
        """The scheduled rate at training step `step`."""
        rate = self.lr_schedule[0][1]
        for start, value in self.lr_schedule:
            if step >= start:
                rate = value
        return rate

    def steps_for(self, new_positions: int) -> int:
        return max(1, math.ceil(new_positions * self.samples_per_position / self.batch_size))


@dataclass(frozen=True)
class Losses:
    """Mean losses over the steps of one `train` call."""

    policy: float
    value: float
    l2: float
    steps: int

    @property
    def total(self) -> float:
        return self.policy + self.value + self.l2


class Learner:
    """A network, its optimiser and the count of steps taken (the learning-rate clock)."""

    def __init__(self, net: PolicyValueNet, config: LearnerConfig) -> None:
        self.net = net
        self.config = config
        self.step = 0
        params = list(net.parameters())
        rate = config.learning_rate(0)
        self.optimizer: torch.optim.Optimizer = (
            torch.optim.Adam(params, lr=rate) if config.optimizer == "adam"
            else torch.optim.SGD(params, lr=rate, momentum=config.momentum, nesterov=True))
        # Only weight matrices are penalised: biases and normalisation gains are not weights.
        self._penalised = [p for p in params if p.ndim > 1]

    def train(self, buffer: ReplayBuffer, steps: int, rng: np.random.Generator,
              on_step: Callable[[int], None] | None = None) -> Losses:
        """`steps` optimiser steps on batches from `buffer`; `on_step(i)` after each."""
        if self.config.threads:
            torch.set_num_threads(self.config.threads)
        self.net.train()
        sums = np.zeros(3)
        for i in range(steps):
            rate = self.config.learning_rate(self.step)
            for group in self.optimizer.param_groups:
                group["lr"] = rate
            sums += self.train_step(buffer.sample(self.config.batch_size, rng))
            self.step += 1
            if on_step is not None:
                on_step(i)
        self.net.eval()
        policy, value, l2 = sums / max(steps, 1)
        return Losses(float(policy), float(value), float(l2), steps)

    def train_step(self, groups: Sequence[PositionBatch]) -> tuple[float, float, float]:
        """One optimiser step on positions grouped by board size; the step's (policy, value,
        l2) losses before the update."""
        policy_loss, value_loss = self.losses(groups)
        l2 = self.config.l2 * torch.stack([(p * p).sum() for p in self._penalised]).sum()
        loss = policy_loss + self.config.value_weight * value_loss + l2
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.flush_subnormal()
        return policy_loss.item(), value_loss.item(), l2.item()

    def flush_subnormal(self) -> None:
        """Set the network's subnormal weights to zero (see the module docstring)."""
        with torch.no_grad():
            for p in self.net.parameters():
                p.masked_fill_(p.abs() < SMALLEST_NORMAL, 0.0)

    def losses(self, groups: Sequence[PositionBatch]) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean policy cross-entropy and value squared error of the network on the positions."""
        xs: list[np.ndarray] = []
        layouts = []
        targets: list[np.ndarray] = []
        values: list[np.ndarray] = []
        for group in groups:
            x = group.features()
            policy = group.policy.astype(np.float32)
            xs.extend(x)
            layouts.extend([layout(group.width, group.height)] * len(group))
            targets.append(policy.reshape(-1))
            values.append(group.value.astype(np.float32))
        batch = collate(xs, layouts)
        log_policy, value = self.net(*batch)
        target = torch.from_numpy(np.concatenate(targets))
        policy_loss = -(target * log_policy).sum() / batch.num_graphs
        value_loss = torch.mean((value - torch.from_numpy(np.concatenate(values))) ** 2)
        return policy_loss, value_loss

    # -- resuming ------------------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        return {"step": self.step, "optimizer": self.optimizer.state_dict()}

    def restore(self, state: Mapping[str, Any]) -> None:
        self.step = int(state["step"])
        self.optimizer.load_state_dict(state["optimizer"])
