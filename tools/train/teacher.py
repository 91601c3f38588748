"""Training positions from a stronger player's games: its moves as the policy's targets.

AlphaZero learns from its own searches only, and on two CPU cores a few hundred generations of
small-board self-play did not teach the Gomoku network the quiet moves a Gomocup engine wins with
(docs/STRENGTH.md). AlphaGo started the other way, from the moves of stronger players. This module
reads `saz match` records of such a player (a teacher: AIWine against itself, GNU Go against
itself) into the replay buffer's compact form, so the learner can fit the network to them
(`saz distill`) before self-play carries on:

* the position before each move of a teacher, after the random opening nobody chose;
* the policy target is that move, all of the probability on it;
* the value target is the game's outcome from the side to move's view, as the rules scored it.

A game the rules did not end (a resignation, a forfeit on time, a crash, the move cap) has no
outcome to learn from and is skipped whole; so is a record of another game or with setup stones.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from saz.protocol.sgf import SgfGame
from saz.tools.match.match import read_records
from saz.tools.match.replay import Replay
from saz.tools.train.positions import PositionBatch


@dataclass(frozen=True)
class TeacherPositions:
    """What a set of records gave: positions by board size to learn from, those of the games
    held out to check the learning on, and how many games were left out."""

    train: tuple[PositionBatch, ...]
    held_out: tuple[PositionBatch, ...]
    games: int
    #: Games skipped because the rules did not end them (no outcome to learn).
    unfinished: int

    @property
    def positions(self) -> int:
        """Positions to learn from."""
        return sum(len(b) for b in self.train)

    @property
    def held_out_positions(self) -> int:
        return sum(len(b) for b in self.held_out)


def game_positions(sgf: SgfGame, rules: Mapping[str, Any],
                   teachers: Iterable[str] | None = None) -> PositionBatch | None:
    """The positions of one record before each move of a teacher (every player when `teachers`
    is None), as a batch of its game and board size; None when the rules did not end the
    game."""
    chosen = None if teachers is None else set(teachers)
    replay = Replay(sgf, **rules)
    game = replay.game
    n, f = game.num_nodes, game.num_features()
    features: list[np.ndarray] = []
    moves: list[int] = []
    colors: list[int] = []
    for turn in replay:
        if turn.chosen and (chosen is None or turn.player in chosen):
            x = np.empty((n, f), dtype=np.float32)
            game.encode(x)
            features.append(x)
            moves.append(turn.move)
            colors.append(game.to_move)
    if replay.past_end or not game.is_over():
        return None  # moves past the end: not a record of this game under these rules
    winner = game.winner()
    assert winner is not None
    t = len(moves)
    policy = np.zeros((t, n), dtype=np.float32)
    policy[np.arange(t), moves] = 1.0
    x = np.stack(features) if features else np.empty((0, n, f), np.float32)
    value = np.asarray(colors, dtype=np.int8) * np.int8(winner)
    return PositionBatch.pack(game.width, game.height, x, policy, value)


def teacher_positions(folders: Sequence[Path], game_name: str, rules: Mapping[str, Any],
                      teachers: Iterable[str] | None = None,
                      holdout_every: int = 0) -> TeacherPositions:
    """The positions of every record under `folders` (`saz match` output folders) before a
    teacher's moves, joined by board size; every `holdout_every`-th finished game (in record
    order; 0: none) is held out whole. ValueError for a record of another game."""
    teachers = None if teachers is None else tuple(teachers)
    parts: tuple[dict[tuple[int, int], list[PositionBatch]], ...] = ({}, {})
    games = unfinished = 0
    for path, sgf in read_records(folders):
        if sgf.game != game_name:
            raise ValueError(f"{path} is a record of {sgf.game}, not {game_name}")
        batch = game_positions(sgf, rules, teachers)
        if batch is None:
            unfinished += 1
            continue
        games += 1
        held = holdout_every > 0 and games % holdout_every == 0
        parts[held].setdefault(batch.size, []).append(batch)
    train, held_out = (tuple(PositionBatch.concatenate(p) for p in side.values())
                       for side in parts)
    return TeacherPositions(train, held_out, games, unfinished)
