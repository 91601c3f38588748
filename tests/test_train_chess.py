"""The trainer on chess: self-play games that end by the rules or at the ply cap (a draw), policy
targets at the moves' policy indices, the win/draw/loss value loss, and `saz train --game chess`
end to end: a tiny generation, then a resumed one."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from saz.engine.games import DRAW, new_game
from saz.engine.graph import GraphLayout
from saz.tools.train.lockstep import Lockstep, TreeSearch
from saz.tools.train.selfplay import SelfPlayConfig, SelfPlayGame

#: A run small enough for a test: a tiny network, the two small boards, a few visits.
TINY_CHESS = """
seed = 5
snapshot_every = 1
[network]
hidden = 8
layers = 1
[selfplay]
sizes = ["5x5", "6x6"]
games_per_generation = 3
visits = 6
full_search_fraction = 0.5
fast_visits = 2
forced_playouts_k = 2.0
games_in_flight = 3
opening_plies = 2
max_plies = 1.0
resign_threshold = -1.0
workers = 1
[learner]
batch_size = 16
samples_per_position = 1.0
threads = 1
[replay]
window = 200
[evaluation]
every = 0
"""


class UniformMoves:
    """A stand-in chess network: uniform over every policy entry, value 0."""

    def run(self, x: np.ndarray, layout: GraphLayout,
            mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        width = layout.num_points ** 2 + 3 * len(layout.table("promo"))  # P*P + 9W
        return (np.full((len(x), width), -np.log(width), np.float32),
                np.zeros(len(x), np.float32))


def play(size: int, config: SelfPlayConfig, seed: int) -> SelfPlayGame:
    """One self-play game of chess on a size x size board, played to its end."""
    game = SelfPlayGame(new_game("chess", size),
                        TreeSearch(UniformMoves(), config.search_options(seed), config.visits),
                        config, np.random.default_rng(seed), None)
    lockstep = Lockstep()
    while (search := game.advance()) is not None:
        lockstep.step([search])
    return game


@pytest.mark.parametrize("size", [5, 6])
def test_chess_selfplay_ends_by_the_rules_or_the_cap(size: int) -> None:
    """Each game ends by checkmate or a draw of the rules, or at the ply cap as a draw; every
    position with a choice is recorded, its policy target on its legal moves' policy indices
    (the board flipped for Black) and its value the outcome from the side to move's view."""
    config = SelfPlayConfig(sizes=((size, size),), visits=6, max_plies=3.0,
                            resign_threshold=-1.0)
    endings = set()
    for seed in range(6):
        played = play(size, config, seed)
        game, record = played.game, played.record()
        cap = 3 * size * size
        if record.capped:
            assert record.plies == cap and not game.is_over() and record.winner == DRAW
        else:
            assert game.is_over() and record.winner == game.winner()
            endings.add(game.outcome().termination)
        positions = record.positions
        assert positions.policy.shape[1] == game.policy_size == size ** 4 + 9 * size
        replay = new_game("chess", size)
        row = 0
        for move in game.moves:
            legal = replay.legal_moves()
            if len(legal) > 1:  # a lone legal move is played unsearched
                policy = positions.policy[row].astype(np.float32)
                assert set(np.flatnonzero(policy)) <= set(replay.policy_indices(legal).tolist())
                assert abs(policy.sum() - 1) < 2e-3
                x = np.empty((replay.num_nodes, replay.num_features()), np.float32)
                replay.encode(x)
                np.testing.assert_array_equal(positions.features()[row], x)
                outcome = 0 if record.winner == DRAW else replay.to_move * record.winner
                assert positions.value[row] == outcome
                row += 1
            replay.play(move)
        assert row == len(positions)
        assert not positions.counted.any()  # chess has no ownership or score targets
    assert endings, "no game ended by the rules"


def test_a_game_stopped_at_the_ply_cap_is_a_draw() -> None:
    config = SelfPlayConfig(sizes=((8, 8),), visits=4, max_plies=0.1, resign_threshold=-1.0)
    record = play(8, config, seed=1).record()
    assert record.capped and record.plies == 6 and record.winner == DRAW
    assert len(record.positions) == 6 and not record.positions.value.any()


def test_the_learner_fits_win_draw_loss() -> None:
    """The value loss of a moves network is the cross-entropy of its win/draw/loss logits
    against the outcome; a few steps on fixed positions fit it and the policy."""
    from saz.engine.games import game_class
    from saz.tools.train.learner import Learner, LearnerConfig, wdl_class
    from saz.tools.train.model import build_net, net_config_for
    from saz.tools.train.positions import PositionPool

    np.testing.assert_array_equal(wdl_class(np.array([1, 0, -1], np.int8)), [0, 1, 2])
    config = SelfPlayConfig(sizes=((5, 5),), visits=4, max_plies=3.0, resign_threshold=-1.0)
    records = [play(5, config, seed).record() for seed in range(3)]
    pool = PositionPool([r.positions for r in records])
    chess = game_class("chess")
    learner = Learner(build_net(net_config_for(chess, hidden=16, layers=2, dropout=0.0)),
                      LearnerConfig(batch_size=32, lr_schedule=((0, 3e-3),), threads=1), chess)
    rng = np.random.default_rng(0)
    first = learner.train(pool, 2, rng)
    last = learner.train(pool, 40, rng)
    assert last.value < first.value and last.policy < first.policy
    assert last.ownership == last.score == 0.0
    with pytest.raises(ValueError, match="pass the game"):
        Learner(build_net(net_config_for(chess, hidden=8)), LearnerConfig())


def test_a_tiny_chess_run_trains_exports_and_resumes(tmp_path: Path) -> None:
    """`saz train --game chess`: a generation of self-play, training and export whose model the
    engine's evaluator opens (its card names the wdl head), then a second generation resumed."""
    from saz.engine.evaluator import Evaluator
    from saz.engine.model_card import ModelCard
    from saz.tools.train.checkpoint import load_checkpoint
    from saz.tools.train.run import main

    config = tmp_path / "tiny.toml"
    config.write_text(TINY_CHESS)
    run = tmp_path / "run"
    assert main(["--game", "chess", "--config", str(config), "--out", str(run),
                 "--generations", "1"]) == 0
    card = ModelCard.load(run / "model.json")
    assert card.game == "chess" and card.outputs == ("log_policy", "value", "wdl")
    assert card.network["kind"] == "moves" and card.training["generations"] == 1
    with np.load(run / "replay" / "gen_00001.npz") as arrays:
        for size in (5, 6):
            if f"{size}x{size}/policy" in arrays:
                assert arrays[f"{size}x{size}/policy"].shape[1] == size ** 4 + 9 * size

    assert main(["--out", str(run), "--resume", "--generations", "2"]) == 0
    record = load_checkpoint(run / "checkpoint.pt").training
    assert record["generations"] == 2 and record["steps"] > 0
    assert [s["generations"] for s in record["sessions"]] == [[1, 1], [2, 2]]
    evaluator = Evaluator(run / "model.onnx", device="cpu")
    game = new_game("chess", 8)
    priors, values = evaluator.evaluate([game])
    assert len(priors[0]) == 20 and abs(priors[0].sum() - 1) < 1e-5 and -1 <= values[0] <= 1
