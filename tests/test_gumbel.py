"""Gumbel AlphaZero's root (`engine/search/gumbel.py`): the halving's schedule, the Gumbel-top-k
draw, the completed-Q policy target on a hand-made root, sequential halving driven through the
tree's root targets (the visits each phase spends, the better half kept, the survivor), the
lockstep search's result, and self-play and a tiny `saz train` run with `root = "gumbel"`."""
from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from saz.engine import _core
from saz.engine.games import Game, new_game
from saz.engine.graph import GraphLayout
from saz.engine.search.gumbel import (
    Gumbel,
    GumbelRoot,
    Phase,
    completed_q,
    gumbel_top_k,
    halving_schedule,
    improved_policy,
    mixed_value,
    rescale,
    sigma,
    transformed_q,
)
from saz.engine.search.options import SearchOptions
from saz.tools.train.config import ConfigError, TrainConfig
from saz.tools.train.lockstep import Lockstep, TreeSearch
from saz.tools.train.selfplay import SelfPlayConfig, SelfPlayRecord, SelfPlayWorker, WorkerStats
from tests.test_train import TINY_CONFIG


class RandomNet:
    """A stand-in network: random logits (`uniform`: a uniform policy) and values, drawn from
    its seed."""

    def __init__(self, seed: int = 0, uniform: bool = False) -> None:
        self.rng = np.random.default_rng(seed)
        self.uniform = uniform

    def run(self, x: np.ndarray, layout: GraphLayout,
            mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        logits = np.zeros(x.shape[:2]) if self.uniform else self.rng.normal(size=x.shape[:2])
        log_policy = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
        return (log_policy.astype(np.float32),
                np.tanh(self.rng.normal(size=len(x))).astype(np.float32))


# -- the schedule and the formulas ---------------------------------------------------------------
def test_the_schedule_halves_the_moves_and_spends_the_whole_budget() -> None:
    # The paper's floor(n / (phases * remaining)) a move, the last phase the rest (mctx).
    assert halving_schedule(100, 16) == (Phase(16, 1), Phase(8, 3), Phase(4, 6), Phase(2, 18))
    assert halving_schedule(200, 16) == (Phase(16, 3), Phase(8, 6), Phase(4, 12), Phase(2, 28))
    assert halving_schedule(17, 4) == (Phase(4, 2), Phase(2, 4, 1))  # the odd visit: the best
    assert halving_schedule(8, 16) == (Phase(4, 1), Phase(2, 2))  # m cut to what 8 visits give
    assert halving_schedule(5, 1) == (Phase(1, 5),)
    assert halving_schedule(1, 16) == (Phase(1, 1),)
    for n in range(1, 120):
        for m in range(1, 40):
            phases = halving_schedule(n, m)
            first = phases[0].actions
            assert first <= m and sum(p.total for p in phases) == n
            assert len(phases) == max(1, math.ceil(math.log2(first)))
            assert all(p.visits >= 1 and p.extra < p.actions for p in phases)
            for a, b in itertools.pairwise(phases):
                assert b.actions == math.ceil(a.actions / 2)
            assert math.ceil(phases[-1].actions / 2) == 1  # the last phase leaves one
            if first < m:  # cut only when the next size would not fit
                assert halving_schedule(n, first + 1)[0].actions == first
    with pytest.raises(ValueError):
        halving_schedule(0, 4)


def test_gumbel_top_k_draws_distinct_moves_in_proportion_to_the_prior() -> None:
    logits = np.log(np.array([0.5, 0.3, 0.15, 0.05]))
    assert gumbel_top_k(logits, np.zeros(4), 3).tolist() == [0, 1, 2]
    rng = np.random.default_rng(0)
    firsts = np.zeros(4)
    for _ in range(4000):
        picked = gumbel_top_k(logits, rng.gumbel(size=4), 2)
        assert picked[0] != picked[1]
        firsts[picked[0]] += 1
    np.testing.assert_allclose(firsts / 4000, np.exp(logits), atol=0.03)


def test_the_completed_q_target_of_a_hand_made_root() -> None:
    """Four moves, two visited: the unvisited ones get v_mix, q is rescaled to [0, 1], sigma
    weighs it by 50 + the most visits, and the target is softmax(logits + sigma(q))."""
    prior = np.array([0.4, 0.3, 0.2, 0.1])
    logits = np.log(prior)
    visits = np.array([3.0, 1.0, 0.0, 0.0])
    q = np.array([0.5, -0.2, 0.9, -0.9])  # the unvisited ones' q is not read
    v_hat = 0.1
    # v_mix = (0.1 + 4 * (0.4 * 0.5 + 0.3 * -0.2) / 0.7) / 5 = (0.1 + 0.8) / 5
    assert mixed_value(v_hat, q, visits, prior) == pytest.approx(0.18)
    completed = completed_q(v_hat, q, visits, prior)
    np.testing.assert_allclose(completed, [0.5, -0.2, 0.18, 0.18])
    np.testing.assert_allclose(rescale(completed), [1.0, 0.0, 0.38 / 0.7, 0.38 / 0.7])
    np.testing.assert_allclose(sigma(rescale(completed), visits), 53 * rescale(completed))
    expected = np.exp(logits + 53 * np.array([1.0, 0.0, 0.38 / 0.7, 0.38 / 0.7]))
    target = improved_policy(v_hat, logits, q, visits)
    np.testing.assert_allclose(target, expected / expected.sum())
    assert target.sum() == pytest.approx(1.0) and (target > 0).all()
    np.testing.assert_allclose(transformed_q(v_hat, logits, q, visits),
                               53 * rescale(completed))
    # Nothing visited: every move's completed q is v_hat, and the target is the prior.
    none = np.zeros(4)
    assert mixed_value(v_hat, q, none, prior) == v_hat
    np.testing.assert_allclose(improved_policy(v_hat, logits, q, none), prior)


# -- sequential halving through the tree -----------------------------------------------------------
def _tree(game: Game) -> _core.Tree:
    tree = _core.Tree(_core.TreeOptions())
    tree.reset(game._core)
    return tree


def _answer(tree: _core.Tree, leaves: int, nodes: int, rng: np.random.Generator,
            value: float | None = None) -> None:
    logits = rng.normal(size=(leaves, nodes))
    log_policy = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    values = np.tanh(rng.normal(size=leaves)) if value is None else np.full(leaves, value)
    tree.absorb(log_policy.astype(np.float32), values.astype(np.float32))


def _grow(tree: _core.Tree, game: Game, rng: np.random.Generator, steps: int) -> None:
    x = np.zeros((4, game.num_nodes, game.num_features()), np.float32)
    for _ in range(steps):
        leaves, _, _ = tree.collect(4, 16, x)
        if leaves:
            _answer(tree, leaves, game.num_nodes, rng)


def _root_visits(tree: _core.Tree) -> dict[int, int]:
    return {move: n for move, n, _, _ in tree.root_children()}


def _scores(plan: GumbelRoot, tree: _core.Tree) -> np.ndarray:
    """g + logits + sigma(completed q) of every move of `plan`, from the tree's statistics."""
    stats = {move: (n, q) for move, n, q, _ in tree.root_children()}
    visits = np.array([stats.get(int(m), (0, 0.0))[0] for m in plan.moves], dtype=np.float64)
    q = np.array([stats.get(int(m), (0, 0.0))[1] for m in plan.moves], dtype=np.float64)
    return plan.gumbel + plan.logits + transformed_q(plan.value, plan.logits, q, visits)


@pytest.mark.parametrize("simulations,reused", [(64, False), (17, False), (40, True)])
def test_sequential_halving_spends_each_phases_visits_and_keeps_the_better_half(
        simulations: int, reused: bool) -> None:
    game = new_game("gomoku", 7)
    tree = _tree(game)
    rng = np.random.default_rng(simulations)
    x = np.zeros((4, game.num_nodes, game.num_features()), np.float32)
    tree.collect(1, 4, x)
    _answer(tree, 1, game.num_nodes, rng, value=0.3)  # the network's root value, v_hat
    if reused:  # a subtree a PUCT search left: its visits do not count against the budget
        _grow(tree, game, rng, steps=6)
    plan = GumbelRoot(Gumbel(simulations, actions=8), tree, np.random.default_rng(7))
    assert plan.value == pytest.approx(0.3, abs=1e-5)  # recovered from the reused statistics
    schedule = plan.schedule
    # The first phase's moves: the Gumbel-top-k of the logits.
    assert sorted(plan.remaining) == sorted(gumbel_top_k(plan.logits, plan.gumbel,
                                                         schedule[0].actions))
    start = _root_visits(tree)
    before = dict(start)
    phase, phase_moves = 0, [int(m) for m in plan.moves[plan.remaining]]
    while True:
        going = plan.advance(tree)
        if plan.phase != phase or not going:  # a phase ended: what it spent, what it kept
            now = _root_visits(tree)
            spent = {m: now.get(m, 0) - before.get(m, 0) for m in now}
            p = schedule[phase]
            assert {m for m, v in spent.items() if v} == set(phase_moves)
            assert sorted(spent[m] for m in phase_moves) == sorted(
                p.visits + (i < p.extra) for i in range(p.actions))
            keep = schedule[phase + 1].actions if going else 1
            scores = _scores(plan, tree)
            index = {int(m): i for i, m in enumerate(plan.moves)}
            best = sorted(phase_moves, key=lambda m: -scores[index[m]])[:keep]
            assert [int(m) for m in plan.moves[plan.remaining]] == best
            phase, phase_moves, before = plan.phase, best, now
        if not going:
            break
        leaves, _, _ = tree.collect(4, 16, x)
        if leaves:
            _answer(tree, leaves, game.num_nodes, rng)
        assert tree.validate() == ""
    assert plan.over and phase == len(schedule) - 1
    end = _root_visits(tree)
    assert sum(end.values()) - sum(start.values()) == simulations  # the whole budget, no more
    # The survivor: the best of the last phase's moves by g + logits + sigma(q), played.
    assert len(plan.remaining) == 1 and plan.choice(tree) == phase_moves[0]
    assert tree.root_targets() == []  # the tree's root is PUCT's again
    target = plan.target(game, tree)
    assert target.sum() == pytest.approx(1.0, abs=1e-5) and (target[:-1] > 0).all()


def test_a_lockstep_search_with_a_gumbel_root_plays_its_survivor() -> None:
    """`TreeSearch` with `gumbel_actions`: done when the halving is, its result's move the
    survivor and its policy target the improved policy over every legal move (unvisited ones
    included, nothing elsewhere), with no Dirichlet noise on the root."""
    game = new_game("gomoku", 7)
    game.play(24)
    net = RandomNet(3, uniform=True)
    options = SearchOptions(seed=2, dirichlet_epsilon=0.25, solve_empties=0)
    search = TreeSearch(net, options, visits=24, gumbel_actions=8)
    lockstep = Lockstep(cache_bytes=0)
    for _ in range(2):  # a fresh tree, then the subtree of the move played
        search.start(game)
        steps = 0
        while not search.done:
            lockstep.step([search])
            steps += 1
        result = search.result()
        mcts = search.mcts
        assert mcts._lock is not None
        plan = mcts._lock.plan
        assert plan is not None and plan.over and mcts.gumbel_done
        assert result.best_move == plan.choice(mcts._tree) == int(plan.moves[plan.remaining[0]])
        target = result.policy_target
        assert target is not None and target.shape == (game.policy_size,)
        legal = game.legal_moves()
        assert target.sum() == pytest.approx(1.0, abs=1e-5)
        assert (target[legal] > 0).all() and target.sum() == pytest.approx(target[legal].sum())
        visited = {m.move for m in result.moves}
        assert len(visited) < len(legal)  # the target covers far more than the visited moves
        moves, priors = mcts._tree.root_edges()
        logits = dict(zip(moves, np.log(priors)))
        assert plan.logits.tolist() == pytest.approx([logits[int(m)] for m in plan.moves])
        # No noise: the root's priors are the network's uniform policy.
        assert max(priors) - min(priors) < 1e-6
        assert mcts._tree.validate() == ""
        game.play(result.best_move)
    assert steps <= 24  # about a step per four leaves, none wasted on an idle phase change


def test_selfplay_with_a_gumbel_root_records_its_improved_policy() -> None:
    config = SelfPlayConfig(sizes=((6, 6),), visits=16, fast_visits=4, full_search_fraction=0.5,
                            games_in_flight=4, resign_threshold=-1.0, root="gumbel",
                            gumbel_actions=8)
    worker = SelfPlayWorker("gomoku", {}, config, seed=4)
    worker.load(RandomNet(1), None)
    records: list[SelfPlayRecord] = []
    while len(records) < 4:
        records += worker.step(WorkerStats())
    recorded = sum(len(r.positions) for r in records)
    assert 0 < recorded < sum(r.plies for r in records)  # the fast moves are not recorded
    for record in records:
        policy = record.positions.policy.astype(np.float32)
        np.testing.assert_allclose(policy.sum(1), 1.0, atol=2e-3)
        # On the legal points only (their smallest shares are lost to float16).
        empty = record.positions.features()[:, :-1, 2] > 0
        assert (policy[:, :-1][~empty] == 0).all() and (policy[:, -1] == 0).all()


def test_the_root_is_a_checked_recipe_key() -> None:
    assert SelfPlayConfig().root == "puct" and SelfPlayConfig().root_actions == 0
    assert SelfPlayConfig(root="gumbel", gumbel_actions=4).root_actions == 4
    with pytest.raises(ConfigError, match=r"selfplay\.root"):
        TrainConfig.from_toml('[selfplay]\nroot = "alphago"\n')
    with pytest.raises(ConfigError, match="gumbel_actions"):
        TrainConfig.from_toml('[selfplay]\nroot = "gumbel"\ngumbel_actions = 0\n')
    with pytest.raises(ConfigError, match="only a machine's settings"):
        TrainConfig.from_toml("").with_overrides(["selfplay.root=gumbel"])


def test_a_tiny_run_trains_on_a_gumbel_roots_targets(tmp_path: Path) -> None:
    from saz.tools.train.run import main

    text = TINY_CONFIG.replace("[selfplay]\n", '[selfplay]\nroot = "gumbel"\ngumbel_actions = 4\n'
                               "full_search_fraction = 0.5\nfast_visits = 4\n")
    config = tmp_path / "tiny.toml"
    config.write_text(text.replace("every = 2", "every = 0"))
    run = tmp_path / "run"
    assert main(["--game", "gomoku", "--config", str(config), "--out", str(run),
                 "--generations", "1"]) == 0
    assert TrainConfig.load(run / "config.toml").selfplay.root == "gumbel"
    assert (run / "model.onnx").exists()
    assert (run / "metrics.csv").read_text().count("\n") == 2  # header and generation 1
    replay = np.load(next((run / "replay").glob("gen_*.npz")))
    policies = [replay[k].astype(np.float32) for k in replay.files if "policy" in k]
    assert policies and all(np.allclose(p.sum(1), 1.0, atol=2e-3) for p in policies)
