"""The evaluation cache: a position seen again costs no network call, the search it serves is
the search it would have been, and its bytes stay within their budget."""
from __future__ import annotations

import numpy as np
import pytest

from saz.engine import _core
from saz.engine.games import new_game
from saz.engine.graph import GraphLayout
from saz.engine.search.evalcache import EvalCache, keys
from saz.engine.search.mcts import MCTS, SearchLimits, SearchStats
from saz.engine.search.options import SearchOptions, SubgraphSampling
from saz.tools.train.lockstep import Lockstep, TreeSearch


class RowNet:
    """A stand-in network whose answer for a row depends on that row alone (as a real one's
    does), so that a cached answer is exactly the one the network would give; it counts rows."""

    def __init__(self) -> None:
        self.rows = 0

    def run(self, x: np.ndarray, layout: GraphLayout,
            mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        self.rows += len(x)
        b, n = x.shape[0], x.shape[1]
        weights = np.arange(1, x[0].size + 1, dtype=np.float64).reshape(x[0].shape)
        logits = np.empty((b, n), np.float32)
        values = np.empty(b, np.float32)
        for j, row in enumerate(x):
            rng = np.random.default_rng(int((row * weights).sum()) % 2**31)
            logits[j] = rng.normal(size=n)
            values[j] = np.tanh(rng.normal())
        if mask is not None:
            logits = np.where(mask, logits, -1e9)
        top = logits.max(1, keepdims=True)
        log_policy = logits - top - np.log(np.exp(logits - top).sum(1, keepdims=True))
        return log_policy.astype(np.float32), values


def visits(result) -> dict[int, int]:
    return {m.move: m.visits for m in result.moves}


LIMITS = SearchLimits(visits=300, early_stop=False)


def test_entries_come_back_and_the_oldest_go_first() -> None:
    row = np.zeros(100, np.float32)  # 400 bytes + the entry's overhead: two fit in 1,500
    cache = EvalCache(1_500)
    a, b, c = (EvalCache.key(np.full((3, 2), v, np.float32)) for v in (1, 2, 3))
    cache.put(a, row + 1, 0.5)
    cache.put(b, row + 2, -0.5)
    assert cache.get(a).value == 0.5  # a is now the most recent: b goes first
    cache.put(c, row + 3, 0.25)
    assert cache.get(b) is None and len(cache) == 2
    found = cache.get(a)
    assert found is not None and found.log_policy[0] == 1.0 and found.value == 0.5
    assert cache.bytes <= cache.max_bytes
    assert (cache.hits, cache.misses) == (2, 1)
    cache.resize(800)
    assert len(cache) == 1 and cache.get(a) is not None and cache.get(c) is None


def test_a_row_over_the_whole_budget_is_not_kept_and_a_bad_budget_is_refused() -> None:
    cache = EvalCache(100)
    cache.put(b"k", np.zeros(100, np.float32), 0.0)
    assert len(cache) == 0 and cache.bytes == 0
    with pytest.raises(ValueError, match="max_bytes"):
        EvalCache(-1)
    with pytest.raises(ValueError, match="eval_cache_bytes"):
        SearchOptions(eval_cache_bytes=-1)


def test_keys_tell_rows_and_shapes_apart() -> None:
    row = np.zeros((6, 2), np.float32)
    other = row.copy()
    other[5, 1] = 1.0
    assert EvalCache.key(row) == EvalCache.key(row.copy())
    assert EvalCache.key(row) != EvalCache.key(other)
    assert EvalCache.key(row) != EvalCache.key(row.reshape(4, 3))


def test_digests_see_every_byte_of_a_row_and_only_its_own() -> None:
    """Each row's digest is its own (one flipped bit anywhere, the last bytes of an odd-sized row
    included, changes that row's alone); rows equal in bytes but not in shape differ; a bad array
    is refused."""
    rng = np.random.default_rng(1)
    x = (rng.random((5, 50, 7)) < 0.3).astype(np.float32)
    base = _core.row_digests(x)
    assert base.shape == (5, 2) and base.dtype == np.uint64
    assert len({tuple(row) for row in base.tolist()}) == 5
    for node, plane in ((0, 0), (25, 3), (49, 6)):
        y = x.copy()
        y[2, node, plane] = 0.5
        changed = (_core.row_digests(y) != base).any(axis=1)
        assert changed.tolist() == [False, False, True, False, False]
    assert not (_core.row_digests(x.reshape(5, 7, 50)) == base).all(axis=1).any()
    odd = np.zeros((2, 3, 3), np.float32)  # 36 bytes a row: four words and a 4-byte tail
    tail = odd.copy()
    tail[1, 2, 2] = 1.0
    assert (_core.row_digests(odd)[1] != _core.row_digests(tail)[1]).any()
    assert keys(x[1:2]) == keys(x)[1:2] and all(len(key) == 16 for key in keys(x))
    with pytest.raises(ValueError, match="at least 2 dims"):
        _core.row_digests(np.zeros(4, np.float32))


@pytest.mark.parametrize("game_name,size", [("gomoku", 9), ("go", 7)])
def test_a_position_searched_again_costs_no_network_call(game_name: str, size: int) -> None:
    game = new_game(game_name, size)
    for move in game.legal_moves()[:3]:
        game.play(int(move))
    net = RowNet()
    search = MCTS(net, SearchOptions(batch_size=8, seed=1))
    first = search.search(game, LIMITS)
    rows = net.rows
    assert rows > 0 and first.stats.evaluated == rows
    search.reset()  # a fresh tree, as after undo and redo in a GUI; the cache stays
    again = search.search(game, LIMITS)
    assert net.rows == rows and again.stats.evaluated == 0 and again.stats.batches == 0
    assert again.stats.cached == first.stats.evaluated + first.stats.cached
    assert visits(again) == visits(first)
    search.clear_cache()  # KataGo's clear_cache: the network is asked again
    third = search.search(game, LIMITS)
    assert third.stats.evaluated == first.stats.evaluated and net.rows == 2 * rows


def test_transpositions_are_answered_from_the_cache_and_change_nothing() -> None:
    game = new_game("gomoku", 9)
    results, nets = {}, {}
    for budget in (0, SearchOptions.eval_cache_bytes):
        nets[budget] = RowNet()
        search = MCTS(nets[budget], SearchOptions(batch_size=8, seed=1, eval_cache_bytes=budget))
        results[budget] = search.search(game, SearchLimits(visits=600, early_stop=False))
    off, on = results[0], results[SearchOptions.eval_cache_bytes]
    assert off.stats.cached == 0
    assert on.stats.cached > 0  # two move orders met the same position
    assert on.stats.evaluated + on.stats.cached == off.stats.evaluated
    assert nets[SearchOptions.eval_cache_bytes].rows == on.stats.evaluated
    assert visits(on) == visits(off) and on.best_move == off.best_move


def test_sampled_subgraphs_are_never_cached() -> None:
    game = new_game("gomoku", 9)
    sub = SubgraphSampling(count=2, blend=0.25)
    search = MCTS(RowNet(), SearchOptions(batch_size=4, seed=1, subgraphs=sub, focus_side=0))
    search.search(game, SearchLimits(visits=50, early_stop=False))
    search.reset()
    again = search.search(game, SearchLimits(visits=50, early_stop=False))
    assert again.stats.cached == 0 and len(search.cache) == 0


def test_under_a_memory_limit_the_tree_has_every_byte() -> None:
    game = new_game("gomoku", 9)
    search = MCTS(RowNet(), SearchOptions(memory_limit=320 << 20))
    assert search.cache.max_bytes == 0
    search.search(game, SearchLimits(visits=50, early_stop=False))
    search.reset()
    assert search.search(game, SearchLimits(visits=50, early_stop=False)).stats.cached == 0
    search.options = SearchOptions()  # the limit lifted (a new match without max_memory)
    search.reset()
    search.search(game, SearchLimits(visits=50, early_stop=False))
    assert search.cache.max_bytes == SearchOptions.eval_cache_bytes and len(search.cache) > 0


# -- lockstep: the many trees of self-play and of the trainer's matches ----------------------------
def run_alone(search: TreeSearch, lockstep: Lockstep) -> int:
    """Step one search to its visits; the rows the network evaluated."""
    rows = 0
    while not search.done:
        rows += lockstep.step([search])
    return rows


def test_lockstep_answers_positions_any_search_met_before_and_changes_nothing() -> None:
    game = new_game("gomoku", 9)
    found = {}
    for cache_bytes in (0, 32 << 20):
        net, lockstep = RowNet(), Lockstep(leaves_per_search=4, cache_bytes=cache_bytes)
        first, second = (TreeSearch(net, SearchOptions(seed=1), visits=150) for _ in range(2))
        first.start(game)
        rows_first = run_alone(first, lockstep)
        second.start(game)  # another game's tree reaching the same position later
        rows_second = run_alone(second, lockstep)
        assert net.rows == rows_first + rows_second
        found[cache_bytes] = (rows_first, rows_second, visits(first.result()),
                              visits(second.result()))
    off, on = found[0], found[32 << 20]
    assert on[0] < off[0]  # transpositions within the first tree
    assert on[1] == 0 and off[1] == off[0]  # the second tree is the first one again
    assert on[2:] == off[2:] and on[2] == on[3]


def test_lockstep_never_answers_with_another_networks_cache() -> None:
    game = new_game("gomoku", 9)
    lockstep = Lockstep(leaves_per_search=4)
    old, new = RowNet(), RowNet()
    search = TreeSearch(old, SearchOptions(seed=1), visits=60)
    search.start(game)
    run_alone(search, lockstep)
    search = TreeSearch(new, SearchOptions(seed=1), visits=60)  # self-play loaded a newer one
    search.start(game)
    assert run_alone(search, lockstep) == new.rows > 0
    with pytest.raises(ValueError, match="cache_bytes"):
        Lockstep(cache_bytes=-1)


def test_search_statistics_add_up_field_by_field() -> None:
    a = SearchStats(playouts=10, batches=2, evaluated=20, seconds=1.5, cached=3)
    b = SearchStats(playouts=5, batches=1, evaluated=7, collisions=1, eval_seconds=0.5, nodes=9)
    assert a + b == SearchStats(15, 3, 27, 1, 1.5, 0.5, 9, 3)
    assert SearchStats() + a == a
