"""`saz distill`: fit a training run's network to a teacher's games, as one generation of the run.

    saz distill --out RUN_DIR --records DIR [--records DIR ...] [--player NAME ...]
                [--epochs E] [--lr RATE] [--holdout-every K]

The run continues from its checkpoint as `saz train --resume` would (network, optimiser, step
count, training record), learns from the teacher's positions (`teacher.py`: the position before
each of the teacher's moves, its move as the policy target, the game's outcome as the value) for
`--epochs` passes over them, and commits the result as the run's next generation: its ONNX
export, its metrics row (the teacher's games and positions), and a checkpoint that `saz train
--resume` carries on from with self-play. The session's line in the training record (its command
names the records) gives the teacher's games and positions and the held-out losses, so the model
card says what the network learned from someone else.

Every K-th game (`--holdout-every`, by record order) is held out, and its positions' losses are
printed before and after: the figure that says whether the network learned the teacher's moves
or only memorised these games.
"""
from __future__ import annotations

import argparse
import math
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from saz.tools.train.checkpoint import CheckpointError
from saz.tools.train.config import ConfigError
from saz.tools.train.export import ExportError
from saz.tools.train.learner import Learner, Losses
from saz.tools.train.positions import PositionBatch, PositionPool
from saz.tools.train.run import RunDir, RunError, Trainer, open_run
from saz.tools.train.teacher import TeacherPositions, teacher_positions

#: Positions a held-out evaluation runs through the network at once.
EVAL_BATCH = 512


@dataclass(frozen=True)
class HeldOut:
    """The network's mean losses on held-out positions (the teacher's move's cross-entropy,
    the value's squared error) and how often the policy's favourite is the teacher's move."""

    policy: float
    value: float
    top1: float


def held_out_losses(learner: Learner, batches: Sequence[PositionBatch]) -> HeldOut:
    """The network's losses on `batches` (positions with one-hot policy targets), in eval mode."""
    policy_sum = value_sum = hits = 0.0
    count = 0
    learner.net.eval()
    with torch.no_grad():
        for batch in batches:
            for start in range(0, len(batch), EVAL_BATCH):
                part = batch.select(slice(start, start + EVAL_BATCH))
                k = len(part)
                out = learner.forward([part])
                terms = learner.losses([part], out)
                policy_sum += float(terms.policy) * k
                value_sum += float(terms.value) * k
                # The target is one-hot: its node is the teacher's move.
                favourite = out.log_policy.reshape(k, part.num_nodes).argmax(dim=1).cpu().numpy()
                hits += int(np.sum(favourite == part.policy.astype(np.float32).argmax(axis=1)))
                count += k
    if count == 0:
        return HeldOut(math.nan, math.nan, math.nan)
    return HeldOut(policy_sum / count, value_sum / count, hits / count)


def distill(trainer: Trainer, teacher: TeacherPositions, epochs: float, rate: float | None,
            rng: np.random.Generator) -> tuple[Losses, HeldOut, HeldOut]:
    """Train the resumed `trainer`'s network on the teacher's positions for `epochs` passes
    (at `rate`, else the run's schedule) and commit it as the run's next generation; the
    training losses and the held-out figures before and after."""
    learner = trainer.learner
    steps = max(1, math.ceil(epochs * teacher.positions / learner.config.batch_size))
    pool = PositionPool(teacher.train)
    before = held_out_losses(learner, teacher.held_out)
    with tqdm(total=steps, desc="distill", unit="step", file=sys.stderr, leave=False) as bar:
        losses = learner.train(pool, steps, rng, lambda _: bar.update(), rate)
    after = held_out_losses(learner, teacher.held_out)
    trainer.teacher = {
        "games": teacher.games,
        "positions": teacher.positions,
        "positions_by_size": pool.sizes(),
        "held_out_positions": teacher.held_out_positions,
        "unfinished_games_skipped": teacher.unfinished,
        "epochs": epochs,
        "steps": steps,
        "learning_rate": rate if rate is not None else "the run's schedule",
        "held_out_before": _figures(before),
        "held_out_after": _figures(after),
    }
    meta = {"games": teacher.games, "positions": teacher.positions,
            "positions_per_second": math.nan, "mean_plies": math.nan, "resigned": 0,
            "plies_by_size": {}}
    if rate is not None:
        meta["learning_rate"] = rate
    trainer.commit(trainer.generation + 1, meta, losses)
    return losses, before, after


def _figures(held: HeldOut) -> dict[str, float]:
    return {"policy_loss": round(held.policy, 4), "value_loss": round(held.value, 4),
            "top1": round(held.top1, 4)}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="saz distill",
        description="Fit a training run's network to a teacher's game records (saz match "
                    "output folders) and commit it as the run's next generation.")
    parser.add_argument("--out", type=Path, required=True, metavar="RUN_DIR",
                        help="the run to continue (as saz train --resume)")
    parser.add_argument("--records", type=Path, action="append", required=True,
                        help="a saz match output folder (its games/*.sgf); repeatable")
    parser.add_argument("--player", action="append", default=None,
                        help="the teacher's engine name in the records (PB/PW); repeatable "
                             "(default: every player's moves)")
    parser.add_argument("--epochs", type=float, default=2.0,
                        help="passes over the teacher's positions (default 2)")
    parser.add_argument("--lr", type=float, default=None,
                        help="the learning rate throughout (default: the run's schedule)")
    parser.add_argument("--holdout-every", type=int, default=20, metavar="K",
                        help="hold out every K-th game to measure on (default 20; 0: none)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        dest="settings", help="this session's settings over the run's config "
                                              "(e.g. learner.threads=2)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.epochs <= 0 or args.holdout_every < 0 or (args.lr is not None and args.lr <= 0):
        print("saz distill: --epochs and --lr must be positive, --holdout-every at least 0",
              file=sys.stderr)
        return 2
    command = shlex.join(["saz", "distill", *(sys.argv[1:] if argv is None else argv)])
    try:
        run = RunDir(args.out)
        game, config = open_run(run, args.settings)
        teacher = teacher_positions(args.records, game, config.rules, args.player,
                                    args.holdout_every)
        if teacher.positions == 0:
            raise RunError(f"no {game} positions of {', '.join(args.player or ['any player'])} "
                           f"in {', '.join(map(str, args.records))}")
        trainer = Trainer(run, game, config, command)
        if config.learner.threads:
            torch.set_num_threads(config.learner.threads)
        trainer.resume()
        print(f"saz distill: {teacher.games} games ({teacher.unfinished} unfinished skipped), "
              f"{teacher.positions} positions, "
              f"{teacher.held_out_positions} held out", file=sys.stderr)
        rng = np.random.default_rng([config.seed, trainer.generation + 1, 1])
        losses, before, after = distill(trainer, teacher, args.epochs, args.lr, rng)
    except (RunError, ConfigError, CheckpointError, ExportError, ValueError) as exc:
        print(f"saz distill: {exc}", file=sys.stderr)
        return 1
    print(f"saz distill: held out, before -> after: policy loss {before.policy:.3f} -> "
          f"{after.policy:.3f}, top 1 {100 * before.top1:.1f}% -> {100 * after.top1:.1f}%, "
          f"value loss {before.value:.3f} -> {after.value:.3f} ({losses.steps} steps, training "
          f"policy loss {losses.policy:.3f})", file=sys.stderr)
    print(f"saz distill: {run.root} has {trainer.generation} generation(s); newest network "
          f"{run.model}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
