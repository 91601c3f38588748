"""The trainer: packed positions, the replay window, resignation calibration,
lockstep self-play and matches, the learner, configs, and `saz train` end to end (a tiny run
whose model the engine plays, and a run killed mid-generation and resumed)."""
from __future__ import annotations

import csv
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from saz.engine.games import BLACK, DRAW, new_game
from saz.engine.graph import GraphLayout
from saz.engine.players import GreedyPlayer, RandomPlayer
from saz.tools.train.arena import NetworkPlayer, play_match
from saz.tools.train.lockstep import Lockstep
from saz.tools.train.positions import PackError, PositionBatch
from saz.tools.train.replay_buffer import ReplayBuffer
from saz.tools.train.selfplay import (Resignation, SelfPlayConfig, SelfPlayGame, SelfPlayWorker,
                                      WorkerStats)
from saz.tools.train.config import CONFIGS_DIR, ConfigError, TrainConfig

#: A run small enough for a test: a tiny network, 5x5/6x6 boards, a few visits.
TINY_CONFIG = """
seed = 3
snapshot_every = 2
[network]
hidden = 8
layers = 1
[selfplay]
sizes = ["5x5", "6x6"]
games_per_generation = 4
visits = 8
games_in_flight = 4
workers = 1
[learner]
batch_size = 16
samples_per_position = 1.0
threads = 1
[replay]
window = 150
[evaluation]
every = 2
sizes = ["5x5"]
games = 2
visits = 4
threads = 1
"""


class UniformNet:
    """A stand-in network: uniform priors, value 0, and a log of the batch sizes it saw."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def run(self, x: np.ndarray, layout: GraphLayout,
            mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        b, n = x.shape[:2]
        self.calls.append((b, layout.width))
        return np.full((b, n), -np.log(n), np.float32), np.zeros(b, np.float32)


def batch(width: int, height: int, count: int, seed: int = 0, features: int = 4) -> PositionBatch:
    """`count` random positions of one size (binary point features, a real-valued extra row)."""
    rng = np.random.default_rng(seed)
    n = width * height + 1
    x = (rng.random((count, n, features)) < 0.4).astype(np.float32)
    x[:, -1] = rng.normal(size=(count, features))
    policy = rng.random((count, n)).astype(np.float32)
    policy /= policy.sum(1, keepdims=True)
    return PositionBatch.pack(width, height, x, policy, rng.integers(-1, 2, count))


# -- packed positions --------------------------------------------------------------------------------
def test_packed_positions_round_trip() -> None:
    rng = np.random.default_rng(1)
    x = (rng.random((3, 26, 4)) < 0.5).astype(np.float32)
    x[:, -1] = [0.25, -1.5, 1.0, 0.0]
    policy = np.eye(26, dtype=np.float32)[[0, 7, 25]]
    packed = PositionBatch.pack(5, 5, x, policy, np.array([1, 0, -1]))
    assert packed.bits.shape == (3, 13)  # 25 points x 4 features = 100 bits
    assert np.array_equal(packed.features(), x)
    assert np.array_equal(packed.select([2]).features()[0], x[2])
    assert packed.value.tolist() == [1, 0, -1]
    assert np.array_equal(packed.policy.astype(np.float32), policy)


def test_positions_packed_with_another_number_of_features_are_refused() -> None:
    """Unpacking 4-feature bits as 6 features would read zeros past the end, silently."""
    arrays = batch(5, 5, 3, features=4).to_arrays()
    assert len(PositionBatch.from_arrays(arrays, 4)[0]) == 3
    with pytest.raises(ValueError, match="another number of features than 6"):
        PositionBatch.from_arrays(arrays, 6)


def test_a_real_valued_point_feature_cannot_be_packed() -> None:
    x = np.zeros((1, 26, 4), np.float32)
    x[0, 3, 1] = 0.5
    with pytest.raises(PackError):
        PositionBatch.pack(5, 5, x, np.full((1, 26), 1 / 26, np.float32), np.zeros(1))


# -- the replay buffer -----------------------------------------------------------------------------
def test_replay_window_trims_the_oldest_positions_and_files(tmp_path: Path) -> None:
    buffer = ReplayBuffer(tmp_path, window=100, num_features=4)
    buffer.add(1, [batch(5, 5, 40), batch(6, 6, 20)], {"games": 3})
    buffer.add(2, [batch(5, 5, 30, seed=1)], {"games": 2})
    assert len(buffer) == 90 and buffer.generations == [1, 2]
    buffer.add(3, [batch(6, 6, 50, seed=2)], {"games": 4})
    # 140 positions: the 40 oldest go, all from generation 1 (in proportion: 27 of 5x5, 13 of 6x6).
    assert len(buffer) == 100 and buffer.generations == [1, 2, 3]
    assert buffer.sizes() == {"5x5": 13 + 30, "6x6": 7 + 50}
    buffer.add(4, [batch(5, 5, 80, seed=3)], {"games": 5})
    assert buffer.generations == [3, 4] and len(buffer) == 100
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gen_00003.npz", "gen_00004.npz"]

    reloaded = ReplayBuffer(tmp_path, window=100, num_features=4)
    reloaded.load()
    assert reloaded.generations == [3, 4] and len(reloaded) == 100
    assert reloaded.meta(4) == {"games": 5}
    assert reloaded.sizes() == buffer.sizes()


def test_replay_samples_group_positions_by_size(tmp_path: Path) -> None:
    buffer = ReplayBuffer(tmp_path, window=1000, num_features=4)
    buffer.add(1, [batch(5, 5, 100), batch(7, 7, 300)], {})
    groups = buffer.sample(400, np.random.default_rng(0))
    counts = {g.size: len(g) for g in groups}
    assert sum(counts.values()) == 400 and set(counts) == {(5, 5), (7, 7)}
    assert 60 < counts[(5, 5)] < 140  # about a quarter, as stored
    with pytest.raises(ValueError):
        buffer.add(1, [batch(5, 5, 1)], {})  # not newer than the last generation


# -- resignation -----------------------------------------------------------------------------------
def test_resignation_threshold_keeps_false_positives_within_target() -> None:
    resign = Resignation(ceiling=-0.8, target=0.25)
    # Sides that would resign below these levels, and what became of them.
    resign.observe([(-0.99, -1), (-0.97, -1), (-0.95, -1), (-0.93, 1), (-0.91, -1),
                    (-0.88, 1), (-0.86, 1), (-0.5, 1)])
    # Resigning below -0.88 takes the first five: one survivor of five, 20% <= 25%;
    # taking -0.88 too would make two of six (33%).
    assert resign.threshold == -0.88
    assert resign.false_positive_rate() == pytest.approx(0.2)
    assert resign.false_positive_rate(-0.8) == pytest.approx(3 / 7)


def test_resignation_stays_at_its_ceiling_without_false_positives() -> None:
    resign = Resignation(ceiling=-0.9)
    resign.observe([(-0.99, -1), (-0.95, -1)])
    assert resign.threshold == -0.9 and resign.false_positive_rate() == 0.0


# -- self-play and matches in lockstep ---------------------------------------------------------------
def test_selfplay_records_positions_policies_and_outcomes() -> None:
    net = UniformNet()
    config = SelfPlayConfig(sizes=((5, 5), (6, 6)), visits=12, games_in_flight=6,
                            resign_threshold=-1.0)
    worker = SelfPlayWorker("gomoku", {}, config, seed=4)
    worker.load(net, None)
    records, stats = [], WorkerStats()
    while len(records) < 10:
        records += worker.step(stats)
    assert stats.games == len(records) and stats.positions >= sum(len(r.positions)
                                                                   for r in records)
    for record in records:
        positions = record.positions
        assert positions.size in {(5, 5), (6, 6)}
        # Every move was searched but the lone last point of a full board.
        full = record.plies == positions.width * positions.height
        assert len(positions) == record.plies - full
        np.testing.assert_allclose(positions.policy.astype(np.float32).sum(1), 1.0, atol=2e-3)
        x = positions.features()
        to_move = np.where(np.arange(len(positions)) % 2 == 0, BLACK, -BLACK)
        # Outcome from the side to move's view: +1 for the winner's positions, 0 in a draw.
        expected = to_move * (0 if record.winner == DRAW else record.winner)
        assert np.array_equal(positions.value, expected)
        assert x[0, :-1, 2].all()  # the first position is the empty board
    # Leaves of every game were batched: calls carry several searches' leaves at once.
    assert max(b for b, _ in net.calls) > config.leaves_per_search


def test_selfplay_hands_games_on_in_the_order_they_started(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A 9x9 game can last three 5x5 ones: handed on as they end, the first games would be 5x5
    only. In start order they are the sizes drawn, whatever the boards."""
    config = SelfPlayConfig(sizes=((5, 5), (9, 9)), visits=4, games_in_flight=8,
                            resign_threshold=-1.0)
    worker = SelfPlayWorker("gomoku", {}, config, seed=4)
    started: list[tuple[int, int]] = []
    new_game = worker._new_game

    def logged() -> SelfPlayGame:
        game = new_game()
        started.append((game.game.width, game.game.height))
        return game

    monkeypatch.setattr(worker, "_new_game", logged)
    worker.load(UniformNet(), None)
    records, stats = [], WorkerStats()
    while len(records) < 16:
        records += worker.step(stats)
    assert stats.games == len(records)
    assert [r.positions.size for r in records] == started[:len(records)]
    assert (9, 9) in started[:8] and (5, 5) in started[:8]  # both sizes in the first turn


def test_selfplay_opens_with_random_plies_it_does_not_record() -> None:
    config = SelfPlayConfig(sizes=((6, 6),), visits=8, games_in_flight=12, opening_plies=3,
                            resign_threshold=-1.0)
    worker = SelfPlayWorker("gomoku", {}, config, seed=2)
    worker.load(UniformNet(), None)
    # Each game starts with 0..3 random stones: the empty board stays among the starts.
    assert {len(game.game.moves) for game in worker.games} == {0, 1, 2, 3}
    records, stats = [], WorkerStats()
    while len(records) < 12:
        records += worker.step(stats)
    for record in records:
        positions = record.positions
        opening = int((positions.features()[0, :-1, 2] == 0).sum())  # stones when recording began
        assert 0 <= opening <= 3
        full = record.plies == positions.width * positions.height
        assert len(positions) == record.plies - opening - full
    with pytest.raises(ValueError, match="opening_plies"):
        SelfPlayConfig(opening_plies=-1)


class WindowNet:
    """A stand-in network that honours masks as the exported one does (uniform over the kept
    nodes, `MASKED_LOG_PROB` elsewhere) and logs each call's layout and masks."""

    def __init__(self) -> None:
        self.calls: list[tuple[GraphLayout, np.ndarray | None]] = []

    def run(self, x: np.ndarray, layout: GraphLayout,
            mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        from saz.engine.model_card import MASKED_LOG_PROB
        self.calls.append((layout, None if mask is None else mask.copy()))
        keep = np.ones(x.shape[:2], bool) if mask is None else mask.astype(bool)
        kept = keep[:, :-1].sum(axis=1, keepdims=True)
        log_policy = np.where(keep, -np.log(kept), MASKED_LOG_PROB).astype(np.float32)
        return log_policy, np.zeros(len(x), np.float32)


def test_selfplay_shows_the_network_windows_cut_down_when_asked() -> None:
    """With `focus_side`, Gomoku's self-play sends the network each leaf's window, cut down to
    a board the size of the batch's largest; the positions it records stay whole."""
    from saz.engine.games.gomoku import Gomoku
    net = WindowNet()
    # Without root noise, which reaches every legal move, windows or not.
    config = SelfPlayConfig(sizes=((16, 16),), visits=8, games_in_flight=3, focus_side=8,
                            opening_plies=2, dirichlet_epsilon=0.0, resign_threshold=-1.0,
                            leaves_per_search=4, max_batch=8)
    worker = SelfPlayWorker("gomoku", {}, config, seed=3)
    worker.load(net, None)
    records: list = []
    while len(records) < 3:
        records += worker.step(WorkerStats())
    cut = [(lay, mask) for lay, mask in net.calls if lay.num_points < 256]
    assert cut, "no batch was cut down"
    for lay, mask in cut:
        assert mask is not None and mask[:, -1].all()  # the extra node is always seen
        assert (mask[:, :-1].sum(axis=1) >= 64).all()  # 8x8 at least
        assert min(lay.width, lay.height) >= 8
    for record in records:
        assert record.positions.size == (16, 16)
        # The search stays in the windows: every recorded policy is zero outside the window of
        # its position.
        x = record.positions.features()
        window = Gomoku.focus_masks(x, 16, 16, 8)
        if window is not None:
            policy = record.positions.policy.astype(np.float32)
            assert (policy[~window] == 0).all()
    with pytest.raises(ValueError, match="focus_side"):
        SelfPlayConfig(focus_side=-1)


@pytest.mark.parametrize("play_on", [False, True])
def test_workers_play_through_the_learners_turn_only_when_asked(tmp_path: Path,
                                                                 play_on: bool) -> None:
    """With play_while_learning the workers do not wait between two `play` calls: the turn the
    second call ends began in the first and spans the learner's time in between."""
    from contextlib import closing

    from saz.engine.games import Gomoku
    from saz.tools.train.export import export_random_network
    from saz.tools.train.selfplay import SelfPlayPool

    model = tmp_path / "random.onnx"
    export_random_network(Gomoku, model)
    config = SelfPlayConfig(sizes=((5, 5),), visits=4, games_in_flight=2, workers=1,
                            resign_threshold=-1.0, play_while_learning=play_on)
    learning = 1.5
    with closing(SelfPlayPool("gomoku", {}, config, seed=1)) as pool:
        first = pool.play(model, 2, None)
        time.sleep(learning)  # the learner's turn
        second = pool.play(model, 1, None)
    assert len(first.records) >= 2 and len(second.records) >= 1
    # Playing on, the first call ends no turn: there is no rate to report, not a rate of 0.
    assert math.isnan(first.positions_per_second) == play_on
    if play_on:
        # The turn the second call ended began in the first: its games include the first's.
        assert second.stats.games >= len(first.records)
        assert second.wall_seconds == second.stats.seconds
        # ... and stopped once the next generation (2 games, a few more finishing in the same
        # steps) was played, however long the learner took: not the dozens 1.5 s would play.
        assert len(second.records) <= 8
    else:
        assert second.stats.games == len(second.records)
        assert second.stats.seconds <= second.wall_seconds < learning


def test_a_worker_says_where_its_network_runs_as_it_loads_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker reports its network's device on loading it, before any turn ends: a
    session's last turn is never reported, so a one-generation session on a GPU machine
    (a lent machine's chunk) recorded its self-play as run on the CPU."""
    import queue as queues

    from saz.engine.evaluator import Evaluator
    from saz.engine.games import Gomoku
    from saz.tools.train import selfplay
    from saz.tools.train.export import export_random_network

    model = tmp_path / "random.onnx"
    export_random_network(Gomoku, model)
    network = Evaluator(model, device="cpu")
    network.provider = "cuda"  # what a session on onnxruntime's CUDA provider names
    monkeypatch.setattr(selfplay, "open_network", lambda path, config: network)
    monkeypatch.setattr(signal, "signal", lambda *args: None)  # not this test process's SIGINT
    commands: queues.Queue = queues.Queue()
    results: queues.Queue = queues.Queue()
    for command in [("play", str(model), None), ("more", 0), ("stop",)]:
        commands.put(command)
    config = SelfPlayConfig(sizes=((5, 5),), visits=4, games_in_flight=2, workers=1)
    selfplay._worker_main(3, "gomoku", {}, config, 1, commands, results)  # type: ignore[arg-type]
    said = [results.get_nowait() for _ in range(results.qsize())]
    assert said[0] == ("network", 3, True)
    assert [kind for kind, _, _ in said] == ["network", "paused"]


_KILLED_TRAINER = """
import sys, time
from pathlib import Path
from saz.engine.games import Gomoku
from saz.tools.train.export import export_random_network
from saz.tools.train.selfplay import SelfPlayConfig, SelfPlayPool
model = Path(sys.argv[1]) / "random.onnx"
export_random_network(Gomoku, model)
config = SelfPlayConfig(sizes=((9, 9),), visits=4, games_in_flight=8, workers=1,
                        resign_threshold=-1.0, play_while_learning=True)
pool = SelfPlayPool("gomoku", {}, config, seed=1)
pool.play(model, 24, None)  # the worker plays on: the next 24 games, which nobody reads
print(pool._procs[0].pid, flush=True)
time.sleep(600)
"""


def test_workers_of_a_killed_trainer_exit(tmp_path: Path) -> None:
    """SIGKILL the trainer while its worker plays on through the learner's turn: the worker's
    games fill the results pipe, which nobody will read, and the worker must exit all the
    same rather than wait forever to write them (as it did, holding its memory, before
    `child.let_go`)."""
    trainer = subprocess.Popen([sys.executable, "-c", _KILLED_TRAINER, str(tmp_path)],
                               stdout=subprocess.PIPE)
    assert trainer.stdout is not None
    worker = int(trainer.stdout.readline())
    try:
        time.sleep(3.0)  # the next generation's 24 games are played (more than a pipe holds)
        os.kill(trainer.pid, signal.SIGKILL)
        trainer.wait()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and _running(worker):
            time.sleep(0.1)
        assert not _running(worker), "the worker outlived its trainer"
    finally:
        trainer.kill()
        if _running(worker):
            os.kill(worker, signal.SIGKILL)


def _running(pid: int) -> bool:
    """Whether `pid` runs (a zombie, which has exited and waits to be reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_playout_cap_randomization_records_only_the_full_searches() -> None:
    net = UniformNet()
    config = SelfPlayConfig(sizes=((6, 6),), visits=16, fast_visits=2, full_search_fraction=0.25,
                            games_in_flight=4, resign_threshold=-1.0)
    worker = SelfPlayWorker("gomoku", {}, config, seed=7)
    worker.load(net, None)
    records = []
    while len(records) < 6:
        records += worker.step(WorkerStats())
    recorded = sum(len(r.positions) for r in records)
    plies = sum(r.plies for r in records)
    assert 0 < recorded < 0.5 * plies  # about a quarter of the moves are full searches
    with pytest.raises(ValueError, match="fast_visits"):
        SelfPlayConfig(visits=16, fast_visits=17, full_search_fraction=0.5)
    with pytest.raises(ValueError, match="full_search_fraction"):
        SelfPlayConfig(full_search_fraction=0.0)


def test_selfplay_in_chunks_plays_the_same_games(tiny_model) -> None:
    """`chunk_nodes` cuts each network call to that many nodes and changes nothing else: the
    worker's network is chunked, and the same seed plays the same games move for move."""
    from saz.tools.train.selfplay import open_network
    model = tiny_model("go").path
    plays = []
    for chunk in (0, 100):  # 100 nodes: one 7x7 position (50 nodes) or two a call
        config = SelfPlayConfig(sizes=((7, 7),), visits=8, games_in_flight=3, max_plies=1.0,
                                chunk_nodes=chunk, resign_threshold=-1.0)
        network = open_network(model, config)
        assert network.chunk_nodes == (chunk or None)  # type: ignore[attr-defined]
        worker = SelfPlayWorker("go", {}, config, seed=6)
        worker.load(network, None)
        records: list = []
        while len(records) < 3:
            records += worker.step(WorkerStats())
        plays.append([(r.plies, r.winner, r.positions.policy.tobytes()) for r in records[:3]])
    assert plays[0] == plays[1]
    with pytest.raises(ValueError, match="chunk_nodes"):
        SelfPlayConfig(chunk_nodes=-1)


@pytest.mark.parametrize("game,size", [("go", 5), ("othello", 6)])
def test_selfplay_plays_go_and_othello_to_a_result(game: str, size: int) -> None:
    config = SelfPlayConfig(sizes=((size, size),), visits=8, games_in_flight=4, max_plies=2.0)
    worker = SelfPlayWorker(game, {}, config, seed=5)
    worker.load(UniformNet(), None)
    records = []
    while len(records) < 4:
        records += worker.step(WorkerStats())
    for record in records:
        positions = record.positions
        # Lone forced moves (Othello's pass) are played unsearched; Go stops at the ply cap.
        assert 0 < len(positions) <= record.plies <= 2 * size * size
        assert set(np.abs(positions.value).tolist()) == {0 if record.winner == DRAW else 1}
        if game == "go":  # the extra node's komi feature survives packing: 7.5 / 25 points
            assert np.allclose(np.abs(positions.features()[:, -1, 9]), 0.3)
        # How it ended: at the ply cap (then counted as the game counts a stopped game), or by
        # the rules; never by resignation here (no threshold is reached with a uniform net).
        assert not record.resigned
        assert record.capped == (record.plies >= 2 * size * size)


def test_match_alternates_colours_and_counts_every_game() -> None:
    player = NetworkPlayer("uniform", UniformNet(), visits=8)
    result = play_match("gomoku", {}, (7, 7), player, GreedyPlayer(1), games=6,
                        lockstep=Lockstep(leaves_per_search=2))
    assert result.games == 6 and result.width == 7
    assert result.opponent == "greedy"
    assert 0.0 <= result.score <= 1.0


def test_a_search_player_with_the_rules_tactics_beats_random_at_gomoku() -> None:
    # Even a network that knows nothing wins: the search completes fives and blocks fours.
    player = NetworkPlayer("uniform", UniformNet(), visits=48)
    result = play_match("gomoku", {}, (9, 9), player, RandomPlayer(2), games=8)
    assert result.wins >= 7


# -- the learner -----------------------------------------------------------------------------------
def test_learner_fits_a_fixed_set_of_positions(tmp_path: Path) -> None:
    import torch
    from saz.tools.train.learner import Learner, LearnerConfig
    from saz.tools.train.model import NetConfig, PolicyValueNet

    torch.manual_seed(0)
    buffer = ReplayBuffer(tmp_path, window=1000, num_features=4)
    buffer.add(1, [batch(5, 5, 32), batch(6, 6, 32, seed=1)], {})
    learner = Learner(PolicyValueNet(NetConfig(num_features=4, hidden=16, layers=2)),
                      LearnerConfig(batch_size=32, lr_schedule=((0, 3e-3),),
                                    threads=1))
    rng = np.random.default_rng(0)
    first = learner.train(buffer, 5, rng)
    learner.train(buffer, 150, rng)
    last = learner.train(buffer, 5, rng)
    assert learner.step == 160
    assert last.value < 0.6 * first.value
    assert last.policy < first.policy


def test_learner_flushes_subnormal_weights() -> None:
    import torch

    from saz.tools.train.learner import SMALLEST_NORMAL, Learner, LearnerConfig
    from saz.tools.train.model import NetConfig, PolicyValueNet

    learner = Learner(PolicyValueNet(NetConfig(num_features=4, hidden=8, layers=1)),
                      LearnerConfig(batch_size=8, threads=1))
    weight = learner.net.fc1.weight
    with torch.no_grad():
        weight[0, :4] = torch.tensor([1e-40, -3e-39, 2e-38, 0.5])
    learner.flush_subnormal()
    assert weight[0, :4].tolist() == [0.0, 0.0, pytest.approx(2e-38), 0.5]
    for p in learner.net.parameters():
        assert not ((p != 0) & (p.abs() < SMALLEST_NORMAL)).any()


def test_learning_rate_schedule_is_piecewise_constant() -> None:
    from saz.tools.train.learner import LearnerConfig

    config = LearnerConfig(lr_schedule=((0, 1e-2), (100, 1e-3)))
    assert [config.learning_rate(s) for s in (0, 99, 100, 5000)] == [1e-2, 1e-2, 1e-3, 1e-3]
    with pytest.raises(ValueError, match="lr_schedule"):
        LearnerConfig(lr_schedule=((10, 1e-2),))


def test_the_learner_waits_for_its_minimum_of_positions() -> None:
    from saz.tools.train.learner import LearnerConfig

    config = LearnerConfig(batch_size=16, samples_per_position=2.0, min_positions=100)
    assert config.steps_for(40, buffered=99) == 0
    assert config.steps_for(40, buffered=100) == 5  # 40 positions x 2 samples / 16 a batch
    assert LearnerConfig(batch_size=16).steps_for(1, buffered=1) == 1  # 0 waits for nothing
    with pytest.raises(ValueError, match="min_positions must be >= 0"):
        LearnerConfig(min_positions=-1)


# -- configs ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("game", ["gomoku", "othello", "go", "chess"])
def test_shipped_configs_load(game: str) -> None:
    config = TrainConfig.load(CONFIGS_DIR / f"{game}.toml")
    assert config.selfplay.sizes and config.replay.window > 0
    for width, height in config.selfplay.sizes:
        new_game(game, width, height, **config.rules)  # every size is one the game admits


def test_devices_are_checked_where_the_run_starts() -> None:
    with pytest.raises(ConfigError, match="learner.device"):
        TrainConfig.from_toml('[learner]\ndevice = "tpu"\n')
    with pytest.raises(ConfigError, match="selfplay.device"):
        TrainConfig.from_toml('[selfplay]\ndevice = "gpu"\n')
    from saz.tools.train.learner import torch_device
    import torch

    assert torch_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="torch sees no GPU"):
            torch_device("cuda")


def test_config_errors_name_the_key() -> None:
    with pytest.raises(ConfigError, match="vistis"):
        TrainConfig.from_toml("[selfplay]\nvistis = 100\n")
    with pytest.raises(ConfigError, match="invalid board size '9y9'"):
        TrainConfig.from_toml('[selfplay]\nsizes = ["9y9"]\n')
    with pytest.raises(ConfigError, match="num_features"):
        TrainConfig.from_toml("[network]\nnum_features = 3\n")
    with pytest.raises(ConfigError, match="opponents"):
        TrainConfig.from_toml('[evaluation]\nopponents = ["stockfish"]\n')


def test_a_session_overrides_only_machine_settings() -> None:
    config = TrainConfig.from_toml(TINY_CONFIG)
    gpu = config.with_overrides(["selfplay.workers=14", "selfplay.device=cuda",
                                 'learner.device="auto"', "selfplay.games_per_generation=400",
                                 "evaluation.every=0"])
    assert (gpu.selfplay.workers, gpu.selfplay.device, gpu.learner.device) == (14, "cuda", "auto")
    assert (gpu.selfplay.games_per_generation, gpu.evaluation.every) == (400, 0)
    assert gpu.selfplay.visits == config.selfplay.visits and gpu.seed == config.seed
    assert config.selfplay.workers == 1  # the config it came from is unchanged
    with pytest.raises(ConfigError, match="only a machine's settings.*recipe"):
        config.with_overrides(["selfplay.visits=800"])
    with pytest.raises(ConfigError, match="only a machine's settings"):
        config.with_overrides(["network.hidden=128"])
    for malformed in ("selfplay.workers", "seed=4"):
        with pytest.raises(ConfigError, match="expected SECTION.KEY=VALUE"):
            config.with_overrides([malformed])
    with pytest.raises(ConfigError, match="selfplay.workers must be at least 1"):
        config.with_overrides(["selfplay.workers=0"])
    with pytest.raises(ConfigError, match="selfplay.device must be one of"):
        config.with_overrides(["selfplay.device=tpu"])
    with pytest.raises(ConfigError, match="workers='many': a value of the wrong type"):
        config.with_overrides(["selfplay.workers=many"])


# -- saz train end to end ----------------------------------------------------------------------------
def _train(*args: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.Popen([sys.executable, "-m", "saz.engine.cli", "train", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def test_tiny_run_exports_a_model_the_engine_plays(tmp_path: Path) -> None:
    from saz.engine.engine import Engine, EngineConfig
    from saz.engine.model_card import ModelCard
    from saz.tools.train.run import main

    config = tmp_path / "tiny.toml"
    config.write_text(TINY_CONFIG)
    run = tmp_path / "run"
    assert main(["--game", "gomoku", "--config", str(config), "--out", str(run),
                 "--generations", "1"]) == 0
    card = ModelCard.load(run / "model.json")
    assert card.training["generations"] == 1
    assert card.training["board_sizes"] == ["5x5", "6x6"]
    assert card.training["games"] >= 4
    assert (run / "metrics.csv").read_text().count("\n") == 2  # header and generation 1
    assert {p.name for p in (run / "plots").iterdir()} == {
        "losses.png", "game_length.png", "evaluation.png"}

    engine = Engine(EngineConfig(game="gomoku", model=run / "model.onnx", visits=16))
    engine.new_game(9)
    result = engine.genmove()
    assert engine.game.moves == [result.best_move]

    assert main(["--game", "gomoku", "--config", str(config), "--out", str(run)]) == 1


def test_killed_run_resumes_without_losing_files(tmp_path: Path) -> None:
    config = tmp_path / "tiny.toml"
    config.write_text(TINY_CONFIG)
    run = tmp_path / "run"
    proc = _train("--game", "gomoku", "--config", str(config), "--out", str(run),
                  "--generations", "2")
    metrics = run / "metrics.csv"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if metrics.is_file() and metrics.read_text().count("\n") >= 2:  # generation 1 is in
            break
        time.sleep(0.05)
    time.sleep(0.5)
    assert proc.poll() is None, proc.communicate()[0].decode()[-2000:]
    os.kill(proc.pid, signal.SIGKILL)  # in generation 2 (or just before generation 1's commit)
    proc.wait()

    resumed = _train("--out", str(run), "--resume", "--generations", "2")
    output = resumed.communicate(timeout=180)[0].decode()
    assert resumed.returncode == 0, output[-2000:]

    from saz.tools.train.checkpoint import load_checkpoint

    record = load_checkpoint(run / "checkpoint.pt").training
    assert record["generations"] == 2
    assert record["command"].startswith("saz train --game gomoku --config")  # how it began
    assert [c.split(" --out")[0] for c in record["commands"]] == [
        f"saz train --game gomoku --config {config}", "saz train"]  # and every session
    assert record["commands"][1].endswith("--resume --generations 2")
    # Each session says what it made and where; none of them ran on a GPU.
    assert [s["generations"] for s in record["sessions"]] == [[1, 1], [2, 2]]
    assert record["sessions"][1]["command"] == record["commands"][1]
    assert [s["learner_device"] for s in record["sessions"]] == ["cpu", "cpu"]
    assert record["gpu_minutes"] == 0
    rows = metrics.read_text().splitlines()[1:]
    assert [row.split(",")[0] for row in rows] == ["1", "2"]
    models = sorted(p.name for p in (run / "models").iterdir())
    assert models == [f"gen_0000{g}.{ext}" for g in range(3) for ext in ("json", "onnx")]
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == [
        "gen_00000.pt", "gen_00002.pt"]
    assert sorted(p.name for p in (run / "replay").iterdir()) == [
        "gen_00001.npz", "gen_00002.npz"]
    assert not list(run.rglob("*.tmp*")) and not list(run.rglob("*staging*"))


def test_a_run_carried_as_its_committed_files_resumes(tmp_path: Path) -> None:
    """What a session commits of a run (config, checkpoint, metrics; no replay buffer, models or
    plots) continues on another machine: the buffer refills from the next generation's games."""
    from saz.tools.train.checkpoint import load_checkpoint
    from saz.tools.train.run import main

    config = tmp_path / "tiny.toml"
    config.write_text(TINY_CONFIG)
    run = tmp_path / "run"
    assert main(["--game", "gomoku", "--config", str(config), "--out", str(run),
                 "--generations", "1"]) == 0
    carried = tmp_path / "carried"
    carried.mkdir()
    for name in ("config.toml", "checkpoint.pt", "metrics.csv"):
        (carried / name).write_bytes((run / name).read_bytes())

    assert main(["--out", str(carried), "--resume", "--generations", "2"]) == 0
    assert load_checkpoint(carried / "checkpoint.pt").training["generations"] == 2
    assert [row.split(",")[0] for row in
            (carried / "metrics.csv").read_text().splitlines()[1:]] == ["1", "2"]
    assert sorted(p.name for p in (carried / "replay").iterdir()) == ["gen_00002.npz"]
    assert (carried / "model.onnx").is_file()


def test_a_carried_run_refills_its_buffer_before_the_learner_trains(tmp_path: Path) -> None:
    """With `learner.min_positions`, the generations a carried run plays into an empty buffer
    train nothing (their networks are their predecessor's; no loss is recorded) until the
    window holds the minimum; then the learner trains on."""
    from saz.tools.train.run import main

    config = tmp_path / "tiny.toml"
    config.write_text(TINY_CONFIG)
    run = tmp_path / "run"
    assert main(["--game", "gomoku", "--config", str(config), "--out", str(run),
                 "--generations", "1", "--set", "evaluation.every=0"]) == 0
    carried = tmp_path / "carried"
    carried.mkdir()
    for name in ("checkpoint.pt", "metrics.csv"):
        (carried / name).write_bytes((run / name).read_bytes())
    # 4 games of at most 36 plies: the first generation alone cannot fill 150 positions.
    waiting = TINY_CONFIG.replace("threads = 1\n[replay]\nwindow = 150",
                                  "threads = 1\nmin_positions = 150\n[replay]\nwindow = 1000")
    assert waiting != TINY_CONFIG
    (carried / "config.toml").write_text(waiting)
    assert main(["--out", str(carried), "--resume", "--generations", "9",
                 "--set", "evaluation.every=0"]) == 0

    with (carried / "metrics.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [int(r["generation"]) for r in rows] == list(range(1, 10))
    steps = [int(r["steps"]) for r in rows]
    waited = [r["policy_loss"] == "" for r in rows[1:]]
    assert waited[0], "the first carried generation trained on an unfilled buffer"
    assert not waited[-1], "the learner never started"
    for before, row, idle in zip(steps, rows[1:], waited):
        assert idle == (int(row["buffer_positions"]) < 150)
        assert (int(row["steps"]) == before) == idle
    models = carried / "models"
    assert (models / "gen_00002.onnx").read_bytes() == (models / "gen_00001.onnx").read_bytes()


def test_a_carried_run_resumes_with_this_machines_settings(tmp_path: Path) -> None:
    """`--set` changes how this session runs (workers, devices), never the run's config.toml;
    the record says where the networks really ran: onnxruntime-gpu lists CUDA among its
    providers on machines without a GPU, so only the sessions the workers opened can tell."""
    from saz.engine.evaluator import Evaluator
    from saz.tools.train.checkpoint import load_checkpoint
    from saz.tools.train.run import main

    config = tmp_path / "tiny.toml"
    config.write_text(TINY_CONFIG)
    run = tmp_path / "run"
    assert main(["--game", "gomoku", "--config", str(config), "--out", str(run),
                 "--generations", "1"]) == 0
    assert main(["--out", str(run), "--resume", "--generations", "3",
                 "--set", "selfplay.workers=2", "--set", "selfplay.device=auto",
                 "--set", "learner.device=auto", "--set", "evaluation.every=0",
                 "--set", "selfplay.play_while_learning=true"]) == 0
    assert (run / "config.toml").read_text() == TINY_CONFIG
    session = load_checkpoint(run / "checkpoint.pt").training["sessions"][-1]
    assert "--set selfplay.workers=2" in session["command"]
    really = Evaluator(run / "model.onnx", device="auto").provider
    assert session["selfplay_device"] == really
    import torch

    assert session["learner_device"] == ("cuda" if torch.cuda.is_available() else "cpu")
    if really == "cpu" and not torch.cuda.is_available():
        assert session["gpu_minutes"] == 0

    assert main(["--out", str(run), "--resume", "--generations", "4",
                 "--set", "selfplay.visits=800"]) == 1  # the recipe is not a machine setting
    assert load_checkpoint(run / "checkpoint.pt").training["generations"] == 3


def test_a_run_grows_its_network_deeper_when_its_config_asks(tmp_path: Path) -> None:
    """More layers in the run's config.toml: the resumed run deepens the trained network (the
    record says so) and trains on; any other change of the network is refused."""
    from saz.tools.train.checkpoint import load_checkpoint
    from saz.tools.train.run import main

    config = tmp_path / "tiny.toml"
    config.write_text(TINY_CONFIG)
    run = tmp_path / "run"
    assert main(["--game", "gomoku", "--config", str(config), "--out", str(run),
                 "--generations", "1", "--set", "evaluation.every=0"]) == 0
    (run / "config.toml").write_text(TINY_CONFIG.replace("layers = 1", "layers = 3"))
    assert main(["--out", str(run), "--resume", "--generations", "2",
                 "--set", "evaluation.every=0"]) == 0
    checkpoint = load_checkpoint(run / "checkpoint.pt")
    assert checkpoint.config.layers == 3 and checkpoint.training["generations"] == 2
    assert checkpoint.training["sessions"][-1]["grew_layers"] == [1, 3]
    assert "grew_layers" not in checkpoint.training["sessions"][0]
    assert checkpoint.state_dict["fc1.weight"].shape[1] == 3 * 8

    (run / "config.toml").write_text(TINY_CONFIG.replace("layers = 1", "layers = 3")
                                     .replace("hidden = 8", "hidden = 16"))
    assert main(["--out", str(run), "--resume", "--generations", "3"]) == 1
    assert load_checkpoint(run / "checkpoint.pt").training["generations"] == 2


def _cut_replay_planes(path: Path, planes: int, keep: int) -> None:
    """Rewrite a replay file's positions with their first `keep` feature planes only."""
    from saz.tools.train.positions import PositionBatch

    with np.load(path) as arrays:
        stored = {k: arrays[k] for k in arrays.files}
    meta = stored.pop("meta")
    cut = {"meta": meta}
    for batch in PositionBatch.from_arrays(stored, planes):
        x = batch.features()[:, :, :keep]
        cut.update(PositionBatch.pack(batch.width, batch.height, x, batch.policy.astype(np.float32),
                                      batch.value).to_arrays())
    np.savez_compressed(path, **cut)


@pytest.mark.parametrize(("version", "planes"), [(1, 10), (2, 14)])
def test_a_run_of_older_go_features_widens_its_input_and_trains_on(tmp_path: Path, version: int,
                                                                   planes: int) -> None:
    """A Go checkpoint of an older features version (1: the ten planes before the line planes;
    2: the fourteen before the ladder planes) resumes with the input widened (the record says
    so) and trains the new columns; a checkpoint whose features this saz cannot extend is
    refused."""
    from dataclasses import replace

    from saz.engine.games.go import Go
    from saz.tools.train.checkpoint import load_checkpoint, save_checkpoint
    from saz.tools.train.model import INPUT_WEIGHT
    from saz.tools.train.run import main

    features = Go.num_features()
    config = tmp_path / "tiny.toml"
    config.write_text(TINY_CONFIG.replace('"5x5", "6x6"', '"5x5"').replace("every = 2", "every = 0"))
    run = tmp_path / "run"
    assert main(["--game", "go", "--config", str(config), "--out", str(run),
                 "--generations", "1"]) == 0
    trained = load_checkpoint(run / "checkpoint.pt")
    state = dict(trained.state_dict)
    state[INPUT_WEIGHT] = state[INPUT_WEIGHT][:, :planes].clone()
    old = replace(trained, config=replace(trained.config, num_features=planes), state_dict=state,
                  feature_version=version, feature_names=Go.feature_names[:planes])
    save_checkpoint(old, run / "checkpoint.pt")
    _cut_replay_planes(run / "replay" / "gen_00001.npz", features, planes)  # as it packed them
    assert main(["--out", str(run), "--resume", "--generations", "2"]) == 0
    widened = load_checkpoint(run / "checkpoint.pt")
    assert (widened.feature_version, widened.feature_names) == (Go.feature_version,
                                                                Go.feature_names)
    weight = widened.state_dict[INPUT_WEIGHT]
    # trained, not left at zero
    assert weight.shape[1] == features and weight[:, planes:].abs().sum() > 0
    assert widened.training["sessions"][-1]["widened_features"] == [planes, features]
    assert "widened_features" not in widened.training["sessions"][0]
    # The buffer the old network's self-play filled is set aside, not read as the new planes.
    aside = run / f"replay-features-v{version}"
    assert [p.name for p in aside.iterdir()] == ["gen_00001.npz"]
    assert sorted(p.name for p in (run / "replay").iterdir()) == ["gen_00002.npz"]

    # A buffer that already holds the new planes (given them by hand) is kept: the same
    # generation's network cut back to the old planes resumes on it.
    state = dict(widened.state_dict)
    state[INPUT_WEIGHT] = state[INPUT_WEIGHT][:, :planes].clone()
    save_checkpoint(replace(widened, config=replace(widened.config, num_features=planes),
                            state_dict=state, feature_version=version,
                            feature_names=Go.feature_names[:planes]), run / "checkpoint.pt")
    # (Setting it aside again would fail: the old buffer's folder exists.)
    assert main(["--out", str(run), "--resume", "--generations", "3"]) == 0
    assert "gen_00003.npz" in [p.name for p in (run / "replay").iterdir()]
    assert [p.name for p in aside.iterdir()] == ["gen_00001.npz"]

    save_checkpoint(replace(old, feature_version=7), run / "checkpoint.pt")
    assert main(["--out", str(run), "--resume", "--generations", "4"]) == 1
    assert load_checkpoint(run / "checkpoint.pt").feature_version == 7  # left as it was


def test_the_torch_runtime_runs_what_onnxruntime_runs(tiny_model, tmp_path: Path) -> None:
    """`selfplay.runtime = torch` plays with the export twin on the generation's weights: the
    same outputs as the ONNX file in onnxruntime, masked or not."""
    import shutil

    from saz.engine.evaluator import Evaluator
    from saz.engine.graph import encode, layout
    from saz.engine.model_card import card_path
    from saz.tools.train.torch_evaluator import TorchEvaluator, weights_path

    model = tiny_model("go", heads=True)
    onnx = tmp_path / "gen_00001.onnx"
    shutil.copy(model.path, onnx)
    shutil.copy(card_path(model.path), card_path(onnx))
    shutil.copy(model.checkpoint_path, weights_path(onnx))
    reference = Evaluator(onnx, device="cpu", threads=1)
    torch_net = TorchEvaluator(onnx, device="cpu")
    assert torch_net.provider == "cpu"
    rng = np.random.default_rng(5)
    for size in (5, 9):
        games = []
        for _ in range(3):
            game = new_game("go", size)
            for _ in range(int(rng.integers(0, 12))):
                game.play(int(rng.choice(game.legal_moves())))
            games.append(game)
        x, lay = encode(games), layout(size, size)
        for mask in (None, rng.random(x.shape[:2]) < 0.7):
            for got, want in zip(torch_net.run(x, lay, mask), reference.run(x, lay, mask)):
                np.testing.assert_allclose(got, want, atol=1e-5)
    import torch

    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="torch sees no GPU"):
            TorchEvaluator(onnx, device="cuda")


def test_a_run_plays_with_the_torch_runtime(tmp_path: Path) -> None:
    from saz.engine.model_card import ModelCard
    from saz.tools.train.checkpoint import load_checkpoint
    from saz.tools.train.run import main

    config = tmp_path / "tiny.toml"
    config.write_text(TINY_CONFIG)
    run = tmp_path / "run"
    assert main(["--game", "gomoku", "--config", str(config), "--out", str(run),
                 "--generations", "3", "--set", "evaluation.every=0",
                 "--set", "selfplay.runtime=torch", "--set", "selfplay.device=cpu"]) == 0
    assert load_checkpoint(run / "checkpoint.pt").training["sessions"][-1][
        "selfplay_device"] == "cpu"
    # The weights of the last two generations stay (the workers may still play the older).
    assert sorted(p.name for p in (run / "models").glob("*.pt")) == [
        "gen_00002.pt", "gen_00003.pt"]
    # Exported in the background, every generation's ONNX file is there when the session ends,
    # and the run's model.onnx is the newest.
    assert sorted(p.name for p in (run / "models").glob("*.onnx")) == [
        f"gen_0000{g}.onnx" for g in range(4)]
    assert (run / "model.onnx").read_bytes() == (run / "models/gen_00003.onnx").read_bytes()

    # A run killed before its committed generation's export was written exports it again.
    (run / "models/gen_00003.onnx").unlink()
    (run / "models/gen_00003.json").unlink()
    assert main(["--out", str(run), "--resume", "--generations", "4"]) == 0
    assert sorted(p.name for p in (run / "models").glob("*.onnx"))[-2:] == [
        "gen_00003.onnx", "gen_00004.onnx"]
    assert ModelCard.load(run / "model.json").training["generations"] == 4


def test_a_background_export_reports_its_failure_and_goes_on(tmp_path: Path) -> None:
    """A failed export is raised by the next wait, naming its generation; the process then
    exports the next one."""
    from saz.engine.games import game_class
    from saz.engine.model_card import ModelCard
    from saz.tools.train.checkpoint import Checkpoint, save_checkpoint
    from saz.tools.train.export import BackgroundExport, ExportError
    from saz.tools.train.model import NetConfig, PolicyValueNet

    broken = tmp_path / "gen_00007.pt"
    broken.write_bytes(b"not a checkpoint")
    game = game_class("gomoku")
    net = PolicyValueNet(NetConfig(num_features=game.num_features(), hidden=8, layers=1))
    good = tmp_path / "gen_00008.pt"
    save_checkpoint(Checkpoint.of(net, game, {"rule": "freestyle"}, training={}), good)
    exports = BackgroundExport()
    try:
        exports.submit(7, broken, tmp_path / "gen_00007.onnx")
        assert exports.pending == 7
        with pytest.raises(ExportError, match="generation 7's export failed: .*gen_00007.pt"):
            exports.submit(8, good, tmp_path / "gen_00008.onnx")
        assert exports.pending is None and not (tmp_path / "gen_00007.onnx").exists()
        exports.submit(8, good, tmp_path / "gen_00008.onnx")
        exports.wait()
        assert ModelCard.load(tmp_path / "gen_00008.json").game == "gomoku"
    finally:
        exports.close()


# -- the auxiliary targets (ownership, score) ---------------------------------------------------------
def test_positions_carry_ownership_and_score_when_the_game_was_counted(tmp_path: Path) -> None:
    x = np.zeros((2, 26, 4), np.float32)
    policy = np.full((2, 26), 1 / 26, np.float32)
    owners = np.array([[1] * 25, [-1] * 25], np.int8)
    counted = PositionBatch.pack(5, 5, x, policy, np.array([1, -1]), owners,
                                 np.array([3.5, -3.5], np.float32))
    assert counted.counted.tolist() == [True, True]
    assert counted.select([1]).ownership.tolist() == [[-1] * 25]
    uncounted = PositionBatch.pack(5, 5, x, policy, np.array([1, -1]))
    assert uncounted.counted.tolist() == [False, False] and not uncounted.ownership.any()
    with pytest.raises(ValueError, match="do not fit"):
        PositionBatch.pack(5, 5, x, policy, np.array([1, -1]), owners[:, :24], np.zeros(2))
    # A game whose every move was a fast search records nothing, and packs all the same.
    empty = PositionBatch.pack(5, 5, x[:0], policy[:0], np.zeros(0), owners[:0],
                               np.zeros(0, np.float32))
    assert len(empty) == 0 and empty.features().shape == (0, 26, 4)
    # Through a replay file, and a file written before the targets existed loads as uncounted.
    buffer = ReplayBuffer(tmp_path, window=100, num_features=4)
    buffer.add(1, [counted], {})
    arrays = {k: v for k, v in counted.to_arrays().items()
              if k.split("/")[1] in ("bits", "extra", "policy", "value")}
    np.savez_compressed(tmp_path / "gen_00002.npz", meta=np.array("{}"), **arrays)
    buffer.load()
    first, second = (buffer.sample(1, np.random.default_rng(0)) and
                     [p for g in buffer._generations for p in g.parts])
    assert first.counted.all() and first.score.tolist() == [3.5, -3.5]
    assert not second.counted.any() and second.ownership.shape == (2, 25)


def test_go_selfplay_records_the_final_owners_from_each_side_to_move() -> None:
    config = SelfPlayConfig(sizes=((5, 5),), visits=8, games_in_flight=4, max_plies=2.0,
                            resign_threshold=-1.0)
    worker = SelfPlayWorker("go", {"komi": 0.5}, config, seed=3)
    worker.load(UniformNet(), None)
    records = []
    while len(records) < 3:
        records += worker.step(WorkerStats())
    for record in records:
        p = record.positions
        assert p.counted.all()
        # One final board seen from each side to move: every row is the first one (Black's,
        # the empty board's) or its negation, and the score turns with it.
        sides = np.where((p.ownership == p.ownership[0]).all(axis=1), 1, -1)
        assert np.array_equal(p.ownership * sides[:, None],
                              np.broadcast_to(p.ownership[0], p.ownership.shape))
        assert np.allclose(p.score * sides, p.score[0])
        black_view, black_score = p.ownership[0], p.score
        # Tromp-Taylor: the margin is Black's owned points less White's, less komi.
        assert black_score[0] == pytest.approx(black_view.sum() - 0.5)
        assert np.sign(black_score[0]) == record.winner


def test_resigned_games_and_gomoku_have_no_counted_positions() -> None:
    config = SelfPlayConfig(sizes=((5, 5),), visits=8, games_in_flight=4, max_plies=2.0,
                            resign_threshold=-1.0)
    worker = SelfPlayWorker("gomoku", {}, config, seed=3)
    worker.load(UniformNet(), None)
    records = []
    while len(records) < 2:
        records += worker.step(WorkerStats())
    assert not any(r.positions.counted.any() for r in records)


def test_learner_fits_ownership_and_score_only_on_counted_positions(tmp_path: Path) -> None:
    import torch
    from saz.tools.train.learner import Learner, LearnerConfig
    from saz.tools.train.model import NetConfig, PolicyValueNet

    torch.manual_seed(0)
    rng = np.random.default_rng(2)
    plain = batch(5, 5, 32)
    # The owner of a point is whoever's "stone" feature 0 says; the score is their sum.
    x = plain.features()
    owners = np.where(x[:, :-1, 0] > 0, 1, -1).astype(np.int8)
    counted = PositionBatch.pack(5, 5, x, plain.policy.astype(np.float32), plain.value,
                                 owners, owners.sum(1).astype(np.float32))
    net = PolicyValueNet(NetConfig(num_features=4, hidden=16, layers=2, ownership_head=True,
                                   score_head=True))
    learner = Learner(net, LearnerConfig(batch_size=32, lr_schedule=((0, 3e-3),), threads=1))
    buffer = ReplayBuffer(tmp_path, window=1000, num_features=4)
    buffer.add(1, [counted], {})
    first = learner.train(buffer, 5, rng)
    learner.train(buffer, 400, rng)
    last = learner.train(buffer, 5, rng)
    assert last.ownership < first.ownership and last.score < 0.5 * first.score
    # Dropout keeps the training loss up; evaluated, the owners beat the majority guess well.
    from saz.engine.graph import layout
    from saz.tools.train.model import collate

    with torch.inference_mode():
        out = net(*collate(list(x), [layout(5, 5)] * len(x)))
    predicted = np.sign(out.ownership_logit.numpy().reshape(len(x), 26)[:, :-1])
    majority = max((owners == 1).mean(), (owners == -1).mean())
    assert (predicted == owners).mean() > majority + 0.1
    assert last.total == pytest.approx(last.policy + last.value + last.l2 + last.ownership
                                       + last.score)
    # Uncounted positions teach the heads nothing: their losses are 0.
    terms = learner.losses([plain])
    assert terms.ownership.item() == 0.0 and terms.score.item() == 0.0
    # A network without the heads trains as before.
    plain_learner = Learner(PolicyValueNet(NetConfig(num_features=4, hidden=16, layers=2)),
                            LearnerConfig(batch_size=32, threads=1))
    losses = plain_learner.train(buffer, 2, rng)
    assert losses.ownership == 0.0 and losses.score == 0.0
