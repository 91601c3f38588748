"""`saz train`: AlphaZero training on small boards, in generations, resumable.

    saz train --game gomoku [--config FILE.toml] --out RUN_DIR [--hours H | --generations N]
    saz train --out RUN_DIR --resume [--hours H | --generations N] [--set SECTION.KEY=VALUE ...]

A generation is: self-play games with the newest network (`selfplay.py`, worker processes), their
positions into the replay buffer (`replay.py`), training steps on the buffer (`learner.py`), the
export of the new network to ONNX (so the next self-play uses it: no gating, as AlphaZero), and
every few generations matches against the previous network and the reference players
(`arena.py`). The run directory holds everything:

    config.toml            the configuration the run was started with (a copy)
    checkpoint.pt          the newest network, optimiser and training record
    checkpoints/gen_N.pt   snapshots every `snapshot_every` generations
    models/gen_N.onnx      every generation's exported network with its card (gen_00000: random)
    models/gen_N.pt        with selfplay.runtime = torch: the last two generations' weights
    model.onnx, model.json the newest exported network and its card
    replay/gen_N.npz       the self-play positions still in the replay window
    metrics.csv, plots/    one row per generation; losses, game length and evaluation plots
    nodes.json             games and positions each machine played (Ray's nodes, or "local")

Writing `checkpoint.pt` (beside, then renamed) commits a generation; everything a generation writes
before it is either replaced by the resumed run or read back (a generation's self-play file is
reused). So a run killed at any moment resumes with `--resume` losing at most the generation in
progress, and no file.

With `selfplay.runtime = torch` the workers play from the weights (`models/gen_N.pt`), and the
ONNX export runs in a process of its own while the next generation goes on
(`export.BackgroundExport`): the export held the lent GPU idle for a third of each generation.
A run killed before the committed generation's file was written exports it again on resuming.

`--ray [ADDRESS]` plays the self-play on a Ray cluster instead of local worker processes
(`distributed.py`); everything else is the same.

`--hours` bounds this invocation: no generation starts that would, at the last one's pace, end
after it. `--generations N` runs until N generations are complete (counting earlier sessions).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import shlex
import shutil
import sys
import time
from collections.abc import Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import onnxruntime
import torch
from tqdm import tqdm

from saz.engine.evaluator import Evaluator
from saz.engine.games import GAME_NAMES, Game, game_class
from saz.engine.model_card import ModelCard, card_path
from saz.engine.players import make_player
from saz.tools.train.arena import Contestant, NetworkPlayer, play_match
from saz.tools.train.checkpoint import (
    Checkpoint,
    CheckpointError,
    load_checkpoint,
    save_checkpoint,
)
from saz.tools.train.config import CONFIGS_DIR, PREVIOUS, ConfigError, TrainConfig
from saz.tools.train.export import BackgroundExport, ExportError, export_checkpoint
from saz.tools.train.learner import Learner, Losses
from saz.tools.train.metrics import MetricsLog, columns_for, eval_column, plies_column, plot
from saz.tools.train.model import (
    NetConfig,
    add_groups,
    build_net,
    deepen,
    net_config_for,
    widen_inputs,
)
from saz.tools.train.positions import PositionBatch
from saz.tools.train.replay_buffer import ReplayBuffer
from saz.tools.train.selfplay import (
    Resignation,
    SelfPlayBatch,
    SelfPlayPool,
    SelfPlayRecord,
    tally,
)
from saz.tools.train.torch_evaluator import weights_path

if TYPE_CHECKING:  # ray is imported only for --ray
    from saz.tools.train.distributed import RaySelfPlayPool

#: A file of one generation (`gen_00012.onnx`, its card, its staging files).
_GENERATION_FILE = re.compile(r"gen_(\d+)\.")


class RunError(RuntimeError):
    """A run directory that cannot be started or resumed as asked."""


class RunDir:
    """The paths of a run directory."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.config = self.root / "config.toml"
        self.checkpoint = self.root / "checkpoint.pt"
        self.checkpoints = self.root / "checkpoints"
        self.models = self.root / "models"
        self.model = self.root / "model.onnx"
        self.replay = self.root / "replay"
        self.metrics = self.root / "metrics.csv"
        self.plots = self.root / "plots"
        self.nodes = self.root / "nodes.json"

    def model_of(self, generation: int) -> Path:
        return self.models / f"gen_{generation:05d}.onnx"

    def snapshot_of(self, generation: int) -> Path:
        return self.checkpoints / f"gen_{generation:05d}.pt"


@dataclass(frozen=True)
class Budget:
    """When this invocation stops: after `generations` in total, or before a generation that
    would end after `hours` (at the pace of the last one); neither: when interrupted."""

    hours: float | None = None
    generations: int | None = None

    def allows(self, next_generation: int, elapsed: float, last_duration: float) -> bool:
        over_count = self.generations is not None and next_generation > self.generations
        over_time = self.hours is not None and elapsed + last_duration > self.hours * 3600
        return not (over_count or over_time)


class Trainer:
    """One training session over a run directory."""

    def __init__(self, run: RunDir, game_name: str, config: TrainConfig, command: str,
                 ray: str | None = None) -> None:
        self.run = run
        #: None: self-play in local worker processes; else on Ray at this address ("": Ray's
        #: default, a new local cluster unless RAY_ADDRESS names one).
        self.ray = ray
        self.game_name = game_name
        self.game_cls = game_class(game_name)
        self.config = config
        #: The command of every session of the run, the one that started it first.
        self.commands = [command]
        torch.manual_seed(config.seed)  # the initial weights (a resumed run loads its own)
        self.net = build_net(network_config(self.game_cls, config))
        try:
            self.learner = Learner(self.net, config.learner, self.game_cls)
        except ValueError as exc:  # a device this machine does not have
            raise RunError(str(exc)) from None
        self.buffer = ReplayBuffer(run.replay, config.replay.window,
                                   self.game_cls.num_features())
        self.resignation = Resignation(config.selfplay.resign_threshold,
                                       config.selfplay.resign_false_positives)
        evaluation = config.evaluation
        eval_columns = [eval_column(o, s) for o in evaluation.opponents for s in evaluation.sizes]
        plies_columns = [plies_column(s) for s in dict.fromkeys(config.selfplay.sizes)]
        self.metrics = MetricsLog(run.metrics, columns_for(eval_columns, plies_columns))
        self.generation = 0
        self.totals = {"games": 0, "positions": 0}
        self.wall_before = 0.0  # wall seconds of earlier sessions
        self.started = datetime.now(UTC).isoformat(timespec="seconds")
        self._session_start = time.monotonic()
        #: Earlier sessions' records (`_session` is this one's): where each ran, for how long.
        self.sessions: list[dict[str, Any]] = []
        self._session_started = self.started
        self._session_first = 1
        #: Whether this session's self-play ran its network on a GPU (the workers report it).
        self._selfplay_on_gpu = False
        #: (layers before, layers now) when this session grew the network (`deepen`).
        self._grown: tuple[int, int] | None = None
        #: (planes before, planes now) when this session widened the network's input.
        self._widened: tuple[int, int] | None = None
        #: (roles before, roles now) when this session gave the network its groups.
        self._grouped: tuple[int, int] | None = None
        #: Games and positions each node played over the run (the local machine is "local").
        self.nodes: dict[str, dict[str, Any]] = {}
        #: The torch runtime's exports, made while the next generation goes on (`_export`).
        self._exports = BackgroundExport()

    # -- starting and resuming -------------------------------------------------------------------
    def _make_folders(self) -> None:
        for folder in (self.run.checkpoints, self.run.models, self.run.replay, self.run.plots):
            folder.mkdir(parents=True, exist_ok=True)

    def start(self) -> None:
        """A new run: the random network is generation 0."""
        self._make_folders()
        checkpoint = self._checkpoint()
        self._export(checkpoint, 0)
        self.metrics.save()
        save_checkpoint(checkpoint, self.run.checkpoint)
        self._publish()

    def resume(self) -> None:
        """Continue from the last committed generation; discard what a killed generation left
        except its self-play positions."""
        try:
            checkpoint = load_checkpoint(self.run.checkpoint)
        except CheckpointError as exc:
            raise RunError(f"cannot resume: {exc}") from None
        if checkpoint.game != self.game_name:
            raise RunError(f"{self.run.checkpoint} trains {checkpoint.game}, not {self.game_name}")
        # A run carried to another machine may be its committed files alone (config, checkpoint,
        # metrics): the rest is rebuilt, the replay buffer from the next generations' self-play.
        self._make_folders()
        state, trained_config = checkpoint.state_dict, checkpoint.config
        if tuple(checkpoint.feature_names) != self.game_cls.feature_names:
            state, trained_config = self._widen(checkpoint)
        if trained_config.group_roles != self.net.config.group_roles:
            state, trained_config = self._add_groups(state, trained_config)
        # Dropout may change between sessions; any other change of shape must be a deeper
        # network, grown from the trained one.
        grown = replace(trained_config, dropout=self.net.config.dropout) != self.net.config
        if grown:
            try:
                state = deepen(state, trained_config, self.net.state_dict(), self.net.config)
            except ValueError as exc:
                raise RunError(f"the [network] of {self.run.config} does not fit the network "
                               f"of {self.run.checkpoint}: {exc}") from None
            self._grown = (checkpoint.config.layers, self.net.config.layers)
            print(f"saz train: the network grows from {checkpoint.config.layers} to "
                  f"{self.net.config.layers} GIN layers (the new ones start silent); the "
                  "optimiser starts afresh", file=sys.stderr)
        self.net.load_state_dict(state)
        self.learner.flush_subnormal()  # checkpoints written before the learner flushed them
        record = checkpoint.training
        self.generation = int(record["generations"])
        self.learner.step = int(record["steps"])
        # Adam's moments belong to the old parameters; a grown or widened network rebuilds its
        # own.
        reshaped = grown or self._widened is not None or self._grouped is not None
        if checkpoint.optimizer_state is not None and not reshaped:
            self.learner.optimizer.load_state_dict(dict(checkpoint.optimizer_state))
        self.totals = {"games": int(record["games"]), "positions": int(record["positions"])}
        self.wall_before = float(record["wall_seconds"])
        self.started = str(record.get("started", self.started))
        # Records written before `commands` existed name only their latest session's command.
        self.commands = [*record.get("commands", [record["command"]]), *self.commands]
        self.sessions = list(record.get("sessions", []))
        self.nodes = {k: dict(v) for k, v in record.get("nodes", {}).items()}
        self._session_first = self.generation + 1
        self.metrics.load(up_to=self.generation)
        self.metrics.save()
        for path in self.run.models.iterdir():  # networks of generations never committed
            match = _GENERATION_FILE.match(path.name)
            if match and int(match.group(1)) > self.generation:
                path.unlink()
        if reshaped:
            # The same function in the new shape, exported and committed as the same
            # generation: the checkpoint and its network agree even if this session trains
            # nothing.
            reshaped_checkpoint = self._checkpoint()
            self._export(reshaped_checkpoint, self.generation)
            save_checkpoint(reshaped_checkpoint, self.run.checkpoint)
        elif not self.run.model_of(self.generation).is_file() or (
                self.config.selfplay.runtime == "torch"
                and not weights_path(self.run.model_of(self.generation)).is_file()):
            self._export(checkpoint, self.generation)  # the committed network
        self._publish()

    def _add_groups(self, state: Mapping[str, torch.Tensor], trained_config: NetConfig
                    ) -> tuple[dict[str, torch.Tensor], NetConfig]:
        """The trained lattice network with its groups maps at zero (`model.add_groups`: the
        same function), when this session asks for groups (`--set network.groups=true`); a
        network never loses the groups it has (`open_run` keeps them)."""
        roles = self.net.config.group_roles
        try:
            grouped = add_groups(state, trained_config, roles)
        except ValueError as exc:
            raise RunError(f"the [network] of this session does not fit the network of "
                           f"{self.run.checkpoint}: {exc}") from None
        self._grouped = (trained_config.group_roles, roles)
        print(f"saz train: the network gains its groups ({', '.join(self.game_cls.group_roles)};"
              " their maps start at zero); the optimiser starts afresh", file=sys.stderr)
        return grouped

    def _widen(self, checkpoint: Checkpoint) -> tuple[dict[str, torch.Tensor], NetConfig]:
        """The checkpoint's network reading the game's features, when the game has appended
        planes since it was trained (`Game.feature_prefixes`): zero columns for the new ones."""
        game = self.game_cls
        old, new = len(checkpoint.feature_names), game.num_features()
        if game.features_read_by(checkpoint.feature_version, checkpoint.feature_names) is None:
            raise RunError(f"{self.run.checkpoint} was trained on {checkpoint.game} features "
                           f"version {checkpoint.feature_version} "
                           f"({list(checkpoint.feature_names)}); this saz encodes version "
                           f"{game.feature_version} ({list(game.feature_names)}), which does "
                           "not extend them")
        try:
            widened = widen_inputs(checkpoint.state_dict, checkpoint.config, new)
        except ValueError as exc:
            raise RunError(f"cannot widen {self.run.checkpoint}: {exc}") from None
        self._widened = (old, new)
        print(f"saz train: the network's input grows from {old} to {new} feature planes "
              f"(version {checkpoint.feature_version} to {game.feature_version}; the new planes "
              "start silent); the optimiser starts afresh", file=sys.stderr)
        # The buffer's positions carry the old planes only: set them aside, and self-play
        # refills it, as on a machine the buffer never reached. A buffer whose positions were
        # given the new planes by hand (they depend on the stones alone) is kept.
        replay = self.run.replay
        if not any(replay.iterdir()):
            return widened
        if ReplayBuffer.packed_for(replay, new):
            print(f"saz train: the replay buffer already holds {new} feature planes; kept",
                  file=sys.stderr)
            return widened
        aside = replay.with_name(f"{replay.name}-features-v{checkpoint.feature_version}")
        if aside.exists():
            raise RunError(f"cannot set the old replay buffer aside: {aside} exists")
        replay.rename(aside)
        replay.mkdir()
        print(f"saz train: the replay buffer holds features version "
              f"{checkpoint.feature_version}; moved to {aside}, refilled from self-play",
              file=sys.stderr)
        return widened

    def load_buffer(self) -> None:
        try:
            self.buffer.load()
        except ValueError as exc:  # positions packed for other features
            raise RunError(f"cannot read the replay buffer: {exc}") from None
        for generation in self.buffer.generations:
            if generation <= self.generation:
                self.resignation.observe(self.buffer.meta(generation)["resign_checks"])

    # -- the generation loop ---------------------------------------------------------------------
    def train(self, budget: Budget) -> None:
        self.load_buffer()
        last_duration = 0.0
        seed = self.config.seed * 100_003 + self.generation
        try:
            with closing(self._pool(seed)) as pool:
                while budget.allows(self.generation + 1, self._elapsed(), last_duration):
                    begun = time.monotonic()
                    self._generation(pool, last=not budget.allows(
                        self.generation + 2, self._elapsed() + 2 * last_duration, 0.0))
                    last_duration = time.monotonic() - begun
            self._exports.wait()  # the session ends with model.onnx its newest network
            self._publish_model()
        finally:
            self._exports.close()

    def _pool(self, seed: int) -> SelfPlayPool | RaySelfPlayPool:
        selfplay = self.config.selfplay
        if self.ray is None:
            return SelfPlayPool(self.game_name, self.config.rules, selfplay, seed)
        from saz.tools.train.distributed import RaySelfPlayPool  # the one place ray is used

        return RaySelfPlayPool(self.game_name, self.config.rules, selfplay, seed,
                               address=self.ray or None)

    def _generation(self, pool: SelfPlayPool | RaySelfPlayPool, last: bool) -> None:
        g = self.generation + 1
        rng = np.random.default_rng([self.config.seed, g])
        if g not in self.buffer.generations:  # else: a killed session already played it
            self.buffer.add(g, *self._selfplay(pool, g))
        meta = self.buffer.meta(g)
        self.resignation.observe(meta["resign_checks"])

        steps = self.config.learner.steps_for(meta["positions"], len(self.buffer))
        with _bar(steps, f"gen {g} training", "step") as bar:
            losses = self.learner.train(self.buffer, steps, rng, lambda _: bar.update())

        self.totals["games"] += meta["games"]
        self.totals["positions"] += meta["positions"]
        for node, played in meta.get("nodes", {}).items():
            tally(self.nodes, node, played["host"], played["games"], played["positions"])
        every = self.config.evaluation.every
        # A generation that trained nothing plays as its predecessor: no match to play.
        due = bool(every) and (g % every == 0 or last) and steps > 0
        self.commit(g, meta, losses, evaluate=due)

    def commit(self, g: int, meta: dict[str, Any], losses: Losses,
               evaluate: bool = False) -> None:
        """Make the network as trained now generation `g`: export it, evaluate it when asked,
        add its metrics row (`meta`: the summary of the positions it learned from) and commit
        the checkpoint."""
        self.generation = g
        checkpoint = self._checkpoint()
        self._export(checkpoint, g, background=True)
        scores = self._evaluate(g) if evaluate else {}
        self.metrics.append(self._row(g, meta, losses, scores))
        save_checkpoint(checkpoint, self.run.checkpoint)  # the commit
        self._publish()
        tqdm.write(self._summary(g, meta, losses, scores), file=sys.stderr)

    def _export(self, checkpoint: Checkpoint, g: int, background: bool = False) -> None:
        """Generation g's network for the workers and the engine: its ONNX file and card, and
        with the torch runtime its weights beside them (`torch_evaluator.weights_path`).

        The torch runtime's workers read the weights alone, so there the ONNX file may be made
        in the `background`, while the next generation plays and trains: it is waited for
        before anything reads it, and a run killed first exports it again on resuming (the
        committed generation's file is missing)."""
        model = self.run.model_of(g)
        if self.config.selfplay.runtime != "torch":
            export_checkpoint(checkpoint, model)
            return
        save_checkpoint(replace(checkpoint, optimizer_state=None), weights_path(model))
        # The workers play with generation g - 1 at most while g is made: older weights (a
        # megabyte a generation) are of no more use. The export that may still be running is
        # g - 1's, which reads g - 1's weights.
        weights_path(self.run.model_of(g - 2)).unlink(missing_ok=True)
        self._exports.submit(g, weights_path(model), model)
        if not background:
            self._exports.wait()

    def _selfplay(self, pool: SelfPlayPool | RaySelfPlayPool,
                  g: int) -> tuple[list[PositionBatch], dict[str, Any]]:
        games = self.config.selfplay.games_per_generation
        threshold = self.resignation.threshold if self.resignation.enabled else None
        with _bar(games, f"gen {g} self-play", "game") as bar:
            batch = pool.play(self.run.model_of(g - 1), games, threshold,
                              on_game=lambda _: bar.update())
        self._selfplay_on_gpu = self._selfplay_on_gpu or batch.stats.on_gpu
        return _group_by_size(batch.records), _summarise(batch, threshold)

    def _evaluate(self, g: int) -> dict[str, float]:
        """Matches of generation g's network against each opponent at each size."""
        evaluation = self.config.evaluation
        self._exports.wait()
        evaluator = Evaluator(self.run.model_of(g), device="cpu", threads=evaluation.threads)
        player = NetworkPlayer(f"gen {g}", evaluator, evaluation.visits)
        total = evaluation.games * len(evaluation.opponents) * len(evaluation.sizes)
        lockstep = self.config.selfplay.lockstep()
        scores: dict[str, float] = {}
        strength: dict[str, Any] = {}
        with _bar(total, f"gen {g} evaluation", "game") as bar:
            for opponent_name in evaluation.opponents:
                opponent = self._opponent(opponent_name, g)
                for size in evaluation.sizes:
                    result = play_match(self.game_name, self.config.rules, size, player,
                                        opponent, evaluation.games,
                                        opening_plies=evaluation.opening_plies,
                                        seed=self.config.seed + g, lockstep=lockstep,
                                        on_game=bar.update)
                    scores[eval_column(opponent_name, size)] = result.score
                    strength[f"{opponent_name} {size[0]}x{size[1]}"] = {
                        "wins": result.wins, "draws": result.draws, "losses": result.losses}
        card = ModelCard.load(card_path(self.run.model_of(g)))
        replace(card, strength={"visits": evaluation.visits,
                                "opening_plies": evaluation.opening_plies,
                                "matches": strength}).save(card_path(self.run.model_of(g)))
        return scores

    def _opponent(self, name: str, g: int) -> Contestant:
        if name == PREVIOUS:
            evaluator = Evaluator(self.run.model_of(g - 1), device="cpu",
                                  threads=self.config.evaluation.threads)
            return NetworkPlayer(f"gen {g - 1}", evaluator, self.config.evaluation.visits)
        return make_player(name, self.config.seed + g)

    # -- records ---------------------------------------------------------------------------------
    def _elapsed(self) -> float:
        return time.monotonic() - self._session_start

    def _checkpoint(self) -> Checkpoint:
        return Checkpoint.of(self.net, self.game_cls, self.config.rules,
                             training=self._record(),
                             optimizer_state=self.learner.optimizer.state_dict())

    def _record(self) -> dict[str, Any]:
        """The training record (the model card carries it): what was trained, how and where."""
        selfplay = self.config.selfplay
        sessions = [*self.sessions, self._session()]
        return {
            "command": self.commands[0],
            "commands": list(self.commands),
            "config": self.run.config.read_text(encoding="utf-8"),
            "board_sizes": [f"{w}x{h}" for w, h in dict.fromkeys(selfplay.sizes)],
            "generations": self.generation,
            "games": self.totals["games"],
            "positions": self.totals["positions"],
            "steps": self.learner.step,
            "visits": selfplay.visits,
            "resign_threshold": self.resignation.threshold,
            "wall_seconds": round(self.wall_before + self._elapsed(), 1),
            "started": self.started,
            "hardware": hardware(),
            "sessions": sessions,
            "nodes": {k: dict(v) for k, v in self.nodes.items()},
            "gpu_minutes": round(sum(s.get("gpu_minutes", 0.0) for s in sessions), 1),
        }

    def _session(self) -> dict[str, Any]:
        """This session's line of the training record: its command, when and where it ran,
        which generations it made, and its GPU minutes (its wall time when the learner or the
        self-play ran on a GPU)."""
        learner = self.learner.device.type
        on_gpu = learner == "cuda" or self._selfplay_on_gpu
        session: dict[str, Any] = {
            "command": self.commands[-1],
            "started": self._session_started,
            "wall_seconds": round(self._elapsed(), 1),
            "generations": ([self._session_first, self.generation]
                            if self.generation >= self._session_first else []),
            "learner_device": learner,
            "selfplay_device": "cuda" if self._selfplay_on_gpu else "cpu",
            "gpu_minutes": round(self._elapsed() / 60, 1) if on_gpu else 0.0,
            "hardware": hardware(),
        }
        if self._grown is not None:
            session["grew_layers"] = list(self._grown)
        if self._widened is not None:
            session["widened_features"] = list(self._widened)
        if self._grouped is not None:
            session["grew_groups"] = list(self._grouped)
        return session

    def _row(self, g: int, meta: dict[str, Any], losses: Losses,
             scores: dict[str, float]) -> dict[str, float | None]:
        false_positives = self.resignation.false_positive_rate()
        row: dict[str, float | None] = {
            "generation": g,
            "wall_seconds": round(self.wall_before + self._elapsed(), 1),
            "games": meta["games"],
            "positions": meta["positions"],
            "positions_per_second": meta["positions_per_second"],
            "game_length": meta["mean_plies"],
            "resign_rate": meta["resigned"] / max(meta["games"], 1),
            "rules_end_rate": meta.get("ended_by_rules", 0) / max(meta["games"], 1),
            "ply_cap_rate": meta.get("capped", 0) / max(meta["games"], 1),
            "resign_threshold": self.resignation.threshold,
            "resign_false_positives": false_positives,
            "buffer_positions": len(self.buffer),
            "steps": self.learner.step,
            "learning_rate": meta.get("learning_rate",
                                      self.config.learner.learning_rate(self.learner.step)),
            "policy_loss": losses.policy,
            "value_loss": losses.value,
            "l2_loss": losses.l2,
            "ownership_loss": losses.ownership,
            "score_loss": losses.score,
            "total_loss": losses.total,
        }
        for size, plies in meta["plies_by_size"].items():
            row[f"plies_{size}"] = plies
        row.update(scores)
        return {k: v for k, v in row.items() if k in self.metrics.columns}

    def _summary(self, g: int, meta: dict[str, Any], losses: Losses,
                 scores: dict[str, float]) -> str:
        rate = meta["positions_per_second"]
        text = (f"gen {g}: {meta['games']} games, {meta['positions']} positions"
                + (f" ({rate:.0f}/s)" if math.isfinite(rate) else "")
                + f", length {meta['mean_plies']:.1f}, ")
        if losses.steps:
            text += f"loss policy {losses.policy:.3f} value {losses.value:.3f}"
        else:
            text += (f"not trained: the buffer holds {len(self.buffer)} of the "
                     f"{self.config.learner.min_positions} positions the learner waits for")
        if scores:
            text += "; " + ", ".join(f"{k[5:]} {v:.2f}" for k, v in scores.items())
        return text

    def _publish(self) -> None:
        """Make the committed generation's network the run's model.onnx (its predecessor's while
        its export runs in the background), keep a snapshot when due, redraw the plots."""
        self._publish_model()
        every = self.config.snapshot_every
        if every and self.generation % every == 0:
            snapshot = self.run.snapshot_of(self.generation)
            tmp = snapshot.with_name(snapshot.name + ".tmp")
            shutil.copyfile(self.run.checkpoint, tmp)
            tmp.replace(snapshot)
        if self.metrics.rows:
            plot(self.metrics, self.run.plots)
        tmp = self.run.nodes.with_name(self.run.nodes.name + ".tmp")
        tmp.write_text(json.dumps(self.nodes, indent=2) + "\n", encoding="utf-8")
        tmp.replace(self.run.nodes)

    def _publish_model(self) -> None:
        """Copy the newest exported network and its card to the run's model.onnx and card."""
        g = self.generation - (self._exports.pending == self.generation)
        source = self.run.model_of(g)
        for src, dst in ((source, self.run.model),
                         (card_path(source), card_path(self.run.model))):
            tmp = dst.with_name(dst.name + ".tmp")
            shutil.copyfile(src, tmp)
            tmp.replace(dst)


def _group_by_size(records: Sequence[SelfPlayRecord]) -> list[PositionBatch]:
    by_size: dict[tuple[int, int], list[PositionBatch]] = {}
    for record in records:
        by_size.setdefault(record.positions.size, []).append(record.positions)
    return [PositionBatch.concatenate(parts) for parts in by_size.values()]


def _summarise(batch: SelfPlayBatch, threshold: float | None) -> dict[str, Any]:
    """The JSON-ready summary of a generation's games, stored with its positions."""
    records = batch.records
    plies: dict[str, list[int]] = {}
    for r in records:
        plies.setdefault(f"{r.positions.width}x{r.positions.height}", []).append(r.plies)
    return {
        "games": len(records),
        "positions": batch.positions,
        "positions_per_second": round(batch.positions_per_second, 2),
        "selfplay_seconds": round(batch.wall_seconds, 2),
        "evaluated": batch.stats.evaluated,
        "mean_plies": float(np.mean([r.plies for r in records])),
        "plies_by_size": {k: float(np.mean(v)) for k, v in sorted(plies.items())},
        "resigned": sum(r.resigned for r in records),
        "capped": sum(r.capped for r in records),
        "ended_by_rules": sum(not r.resigned and not r.capped for r in records),
        "resign_threshold": threshold,
        "resign_checks": [list(c) for r in records for c in r.resign_checks],
        "winners": {str(w): sum(r.winner == w for r in records) for w in (1, 0, -1)},
        "nodes": batch.by_node,
    }


def _bar(total: int, desc: str, unit: str) -> tqdm:
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False,
                dynamic_ncols=True)


def hardware() -> dict[str, Any]:
    """What the run ran on, for the training record."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f
                        if line.startswith("model name")), cpu)
    except OSError:
        pass
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    return {"cpu": cpu, "cores": os.cpu_count(), "gpu": gpu, "platform": platform.platform(),
            "python": platform.python_version(), "torch": str(torch.__version__),
            "onnxruntime": onnxruntime.__version__}


# -- the command -----------------------------------------------------------------------------------
def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="saz train",
        description="AlphaZero self-play training on small boards, in generations, into a run "
                    "directory that --resume continues.")
    parser.add_argument("--game", choices=GAME_NAMES,
                        help="the game (required for a new run; a resumed run knows it)")
    parser.add_argument("--config", type=Path,
                        help="training config TOML (default: the game's shipped config)")
    parser.add_argument("--out", type=Path, required=True, metavar="RUN_DIR",
                        help="the run directory")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run in RUN_DIR (uses its config.toml)")
    parser.add_argument("--seed", type=int,
                        help="a new run's seed, written into its config.toml in place of the "
                             "config's own (for repeats of one config)")
    parser.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                        help="play self-play on a Ray cluster (the distributed extra): alone, "
                             "Ray's default (RAY_ADDRESS, else a new local cluster); 'auto' for "
                             "the cluster `ray start` made here; HOST:PORT for a head elsewhere")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        dest="settings",
                        help="this session's machine settings over the config's, e.g. "
                             "selfplay.workers=14 selfplay.device=cuda learner.device=cuda "
                             "(repeatable; the run's config.toml is unchanged); on --resume, "
                             "network.groups=true gives a lattice network its groups (kept "
                             "from then on)")
    limit = parser.add_mutually_exclusive_group()
    limit.add_argument("--hours", type=float, help="stop before a generation would end after "
                       "this many hours (this session)")
    limit.add_argument("--generations", type=int, help="stop once the run has this many "
                       "generations")
    return parser


def _open(args: argparse.Namespace) -> tuple[RunDir, str, TrainConfig]:
    """The run directory, game and config of the command line, checked; RunError or
    ConfigError otherwise."""
    run = RunDir(args.out)
    if args.resume:
        if args.seed is not None:
            raise RunError("--seed is for a new run; a resumed run keeps its config's seed")
        game, config = open_run(run, args.settings)
        if args.game is not None and args.game != game:
            raise RunError(f"{run.root} trains {game}, not {args.game}")
        if args.config is not None and args.config.read_text(encoding="utf-8") != \
                run.config.read_text(encoding="utf-8"):
            raise RunError(f"{args.config} differs from the run's own {run.config}; a resumed "
                           "run keeps its config")
        return run, game, config
    if args.game is None:
        raise RunError("a new run needs --game")
    if run.root.exists() and any(run.root.iterdir()):
        raise RunError(f"{run.root} is not empty: pass --resume to continue it, or choose "
                       "another --out")
    source = args.config or CONFIGS_DIR / f"{args.game}.toml"
    # Errors name what the user wrote, before the run directory is made.
    network_config(game_class(args.game), TrainConfig.load(source).with_overrides(args.settings))
    text = source.read_text(encoding="utf-8")
    if args.seed is not None:
        text = with_seed(text, args.seed)
    run.root.mkdir(parents=True, exist_ok=True)
    tmp = run.config.with_name(run.config.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(run.config)
    return run, args.game, TrainConfig.load(run.config).with_overrides(args.settings)


def open_run(run: RunDir, settings: Sequence[str] = ()) -> tuple[str, TrainConfig]:
    """The game and config (with this session's `settings` over it) of the run to resume in
    `run`; RunError when it holds none."""
    if not run.checkpoint.is_file() or not run.config.is_file():
        raise RunError(f"{run.root} holds no run to resume (no checkpoint.pt or config.toml)")
    config = TrainConfig.load(run.config).with_overrides(settings)
    checkpoint = load_checkpoint(run.checkpoint)
    if checkpoint.config.group_roles and "groups" not in config.network:
        # A network that grew its groups (`--set network.groups=true`) keeps them.
        config = replace(config, network={**config.network, "groups": True})
    return checkpoint.game, config


def network_config(game: type[Game], config: TrainConfig) -> NetConfig:
    """The NetConfig of `config`'s [network] for `game` (`model.net_config_for`); ConfigError
    for one the game cannot have (groups for a game without them)."""
    try:
        return net_config_for(game, **config.network)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def with_seed(config_text: str, seed: int) -> str:
    """The config TOML with its top-level `seed` set to `seed`, everything else (comments
    included) as it was: the run directory's copy then says which seed the run used."""
    line = f"seed = {seed}"
    top_level = re.search(r"^\[", config_text, flags=re.MULTILINE)
    end = top_level.start() if top_level else len(config_text)
    head, tables = config_text[:end], config_text[end:]
    head, found = re.subn(r"^seed\s*=.*$", line, head, flags=re.MULTILINE)
    if not found:
        head = head + ("" if not head or head.endswith("\n") else "\n") + line + "\n\n"
    return head + tables


def _require_ray() -> None:
    """RunError, before anything is written, when `--ray` is given without Ray installed."""
    try:
        import ray  # noqa: F401
    except ImportError:
        raise RunError("--ray needs Ray: pip install 'saz[distributed]'") from None


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.generations is not None and args.generations < 1:
        print("saz train: --generations must be at least 1", file=sys.stderr)
        return 2
    command = shlex.join(["saz", "train", *(sys.argv[1:] if argv is None else argv)])
    try:
        if args.ray is not None:
            _require_ray()
        run, game, config = _open(args)
        if args.ray is not None and config.selfplay.play_while_learning:
            raise RunError("selfplay.play_while_learning is for local workers; Ray's actors "
                           "wait for each network")
        if args.ray is not None and config.selfplay.runtime != "onnxruntime":
            raise RunError("selfplay.runtime = torch is for local workers; Ray's actors are "
                           "sent the ONNX file")
        trainer = Trainer(run, game, config, command, ray=args.ray)
        if config.learner.threads:
            torch.set_num_threads(config.learner.threads)
        torch.set_flush_denormal(True)  # subnormal arithmetic is many times slower on CPUs
        if args.resume:
            trainer.resume()
        else:
            trainer.start()
        trainer.train(Budget(args.hours, args.generations))
    except (RunError, ConfigError, CheckpointError, ExportError) as exc:
        print(f"saz train: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nsaz train: interrupted; continue with --resume", file=sys.stderr)
        return 130
    finally:
        # The processor's flush-to-zero is global: a caller in the same process (the tests, whose
        # hypothesis needs subnormal floats) gets IEEE arithmetic back.
        torch.set_flush_denormal(False)
    print(f"saz train: {run.root} has {trainer.generation} generation(s); newest network "
          f"{run.model}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
