"""The compiled search tree (`engine/core/tree.hpp`) through its bindings: batches of distinct
leaves encoded into the caller's buffer, expansion and back-up, reuse of a subtree, the byte
budget, and the errors of a misuse."""
from __future__ import annotations

import numpy as np
import pytest

from saz.engine import _core
from saz.engine.games import Game, new_game


def tree_for(game: Game, max_bytes: int = 1 << 30, max_nodes: int = 50_000_000) -> _core.Tree:
    options = _core.TreeOptions()
    options.max_bytes = max_bytes
    options.max_nodes = max_nodes
    tree = _core.Tree(options)
    tree.reset(game._core)
    return tree


def answer(tree: _core.Tree, leaves: int, nodes: int, rng: np.random.Generator) -> None:
    """A random network's answer for the oldest batch."""
    logits = rng.normal(size=(leaves, nodes)).astype(np.float32)
    log_policy = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    tree.absorb(log_policy.astype(np.float32), np.tanh(rng.normal(size=leaves)).astype(np.float32))


def grow(tree: _core.Tree, game: Game, steps: int, batch: int = 8, seed: int = 0) -> int:
    rng = np.random.default_rng(seed)
    x = np.zeros((batch, game.num_nodes, game.num_features()), np.float32)
    total = 0
    for _ in range(steps):
        leaves, _, _ = tree.collect(batch, 4 * batch, x)
        if leaves:
            answer(tree, leaves, game.num_nodes, rng)
            total += leaves
        elif tree.full:
            break
    return total


def test_the_first_leaf_is_the_root_encoded_as_the_game_encodes_it() -> None:
    game = new_game("go", 9)
    game.play(40)
    tree = tree_for(game)
    x = np.full((4, game.num_nodes, game.num_features()), np.nan, np.float32)
    # The root is the one leaf; the next descent meets it in flight and ends the batch.
    assert tree.collect(4, 16, x) == (1, 0, 1)
    expected = np.empty((game.num_nodes, game.num_features()), np.float32)
    game.encode(expected)
    np.testing.assert_array_equal(x[0], expected)
    assert tree.collect(4, 16, x) == (0, 0, 1)  # it is still in flight: a collision
    assert tree.pending_batches == 1


def test_a_batch_holds_distinct_new_leaves_and_the_visits_add_up() -> None:
    game = new_game("othello", 8)
    tree = tree_for(game)
    evaluated = grow(tree, game, steps=60)
    assert tree.validate() == ""
    assert tree.root_visits == evaluated  # no rule settled anything this early in Othello
    children = tree.root_children()
    assert sorted(move for move, *_ in children) == game.legal_moves().tolist()
    assert sum(visits for _, visits, _, _ in children) == tree.root_visits - 1


def test_rows_are_the_positions_of_the_new_leaves() -> None:
    """Each row of a batch is the encoding of some position one or two moves below the root."""
    game = new_game("gomoku", 7)
    tree = tree_for(game)
    grow(tree, game, steps=1, batch=1)  # the root
    x = np.zeros((8, game.num_nodes, game.num_features()), np.float32)
    leaves, _, _ = tree.collect(8, 32, x)
    assert leaves == 8
    children = {}
    for move in game.legal_moves().tolist():
        child = game.copy()
        child.play(move)
        row = np.empty_like(x[0])
        child.encode(row)
        children[row.tobytes()] = move
    assert all(x[i].tobytes() in children for i in range(leaves))
    assert len({x[i].tobytes() for i in range(leaves)}) == leaves


def test_advance_keeps_the_subtree_of_the_moves_played() -> None:
    game = new_game("go", 7)
    tree = tree_for(game)
    grow(tree, game, steps=80)
    first = max(tree.root_children(), key=lambda c: c[1])[0]
    line = [first, *tree.principal_variation(first)][:2]
    kept = tree.visits_at(line)
    assert kept > 1
    for move in line:
        game.play(move)
    assert tree.advance(line, game._core)
    assert tree.root_visits == kept
    assert tree.validate() == ""
    grow(tree, game, steps=10)
    assert tree.validate() == ""
    assert not tree.advance([game.num_nodes + 5], game._core)  # no such child: unchanged


def test_the_tree_never_grows_past_its_byte_budget() -> None:
    game = new_game("go", 19)
    budget = 4 * 2**20
    tree = tree_for(game, max_bytes=budget)
    grow(tree, game, steps=10_000, batch=16)
    assert tree.full
    assert tree.bytes <= budget
    assert tree.validate() == ""
    before = tree.root_visits
    x = np.zeros((16, game.num_nodes, game.num_features()), np.float32)
    assert tree.collect(16, 64, x)[0] == 0  # full: no new leaf, the tree is answered from
    assert tree.root_visits == before and tree.validate() == ""


def test_the_node_cap_stops_growth_too() -> None:
    game = new_game("gomoku", 9)
    tree = tree_for(game, max_nodes=100)
    grow(tree, game, steps=1000)
    assert tree.full and tree.num_nodes <= 100


def test_misuse_is_a_clear_error() -> None:
    game = new_game("othello", 8)
    tree = tree_for(game)
    with pytest.raises(RuntimeError, match="absorb without a collected batch"):
        tree.absorb(np.zeros((1, game.num_nodes), np.float32), np.zeros(1, np.float32))
    with pytest.raises(ValueError, match="shape"):
        tree.collect(4, 16, np.zeros((4, game.num_nodes + 1, game.num_features()), np.float32))
    empty = _core.Tree(_core.TreeOptions())
    with pytest.raises(ValueError, match="no root"):
        empty.collect(1, 1, np.zeros((1, 65, 7), np.float32))
    assert (empty.root_visits, empty.root_children(), empty.visits_at([])) == (0, [], -1)
    tree.clear()  # forgets the root too
    assert tree.root_visits == 0 and not tree.has_root


def test_root_priors_can_be_replaced_and_restricted() -> None:
    game = new_game("gomoku", 9)
    tree = tree_for(game)
    grow(tree, game, steps=1, batch=1)
    moves, priors = tree.root_edges()
    assert len(moves) == 81 and sum(priors) == pytest.approx(1.0, abs=1e-5)
    assert priors == sorted(priors, reverse=True)
    uniform = [1 / 81] * 81
    tree.set_root_priors(uniform)
    assert tree.root_edges()[1] == pytest.approx(uniform)
    tree.restrict_root([0, 80])
    moves, priors = tree.root_edges()
    assert sorted(moves) == [0, 80] and sum(priors) == pytest.approx(1.0)


def test_root_targets_send_the_descents_to_their_moves_and_then_stop() -> None:
    """A Gumbel root's hook: descents leave the root by the targets only, the most visits left
    first, exactly as many as set (untried moves among them tried in turn, the tried staying a
    prefix); a spent set ends every collect, and an empty one gives PUCT the root back."""
    game = new_game("gomoku", 7)
    tree = tree_for(game)
    rng = np.random.default_rng(1)
    grow(tree, game, steps=1, batch=1)
    moves, _ = tree.root_edges()
    targets = {moves[-1]: 3, moves[20]: 2, moves[0]: 5}  # moves[-1]: the least likely move
    tree.set_root_targets(list(targets), list(targets.values()))
    x = np.zeros((4, game.num_nodes, game.num_features()), np.float32)
    while True:
        leaves, _, _ = tree.collect(4, 16, x)
        if not leaves:
            break
        answer(tree, leaves, game.num_nodes, rng)
        assert tree.validate() == ""
    assert tree.root_targets() == [(move, 0) for move in targets]
    assert {move: visits for move, visits, _, _ in tree.root_children()} == targets
    assert tree.root_visits == 1 + sum(targets.values())
    assert tree.collect(4, 16, x) == (0, 0, 0)  # spent: no descent at all
    tree.set_root_targets([], [])
    grow(tree, game, steps=5)
    assert tree.root_visits > 11 and tree.validate() == ""


def test_a_root_target_taken_back_keeps_its_visit() -> None:
    """A descent that meets a leaf in flight (here the target's own new child) gives its visit
    back; the root's targets are forgotten when the root moves."""
    game = new_game("othello", 8)
    tree = tree_for(game)
    grow(tree, game, steps=1, batch=1)
    move = tree.root_edges()[0][-1]
    tree.set_root_targets([move], [3])
    x = np.zeros((4, game.num_nodes, game.num_features()), np.float32)
    assert tree.collect(4, 16, x) == (1, 0, 1)  # the child, then a collision with it
    assert tree.root_targets() == [(move, 2)]
    answer(tree, 1, game.num_nodes, np.random.default_rng(0))
    assert tree.validate() == ""
    game.play(move)
    assert tree.advance([move], game._core)
    assert tree.root_targets() == []


def test_root_targets_misuse_is_a_clear_error() -> None:
    game = new_game("gomoku", 7)
    tree = tree_for(game)
    with pytest.raises(RuntimeError, match="not expanded"):
        tree.set_root_targets([0], [1])
    grow(tree, game, steps=1, batch=1)
    for moves, visits, message in (([0], [1, 2], "one visit count"),
                                   ([game.num_nodes + 3], [1], "not a root move"),
                                   ([0, 0], [1, 1], "named twice"), ([0], [-1], ">= 0")):
        with pytest.raises(ValueError, match=message):
            tree.set_root_targets(moves, visits)
    assert tree.root_targets() == []
