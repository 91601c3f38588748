"""The batched PUCT search: statistics stay consistent, limits hold, the tree is reused, and the
tactics the rules make exact are found whatever the network says."""
from __future__ import annotations

from collections.abc import Callable
from math import sqrt

import threading
import time

import numpy as np
import pytest

from saz.engine.games import new_game
from saz.engine.games.base import WHITE, Game
from saz.engine.games.othello import Othello
from saz.engine.graph import GraphLayout
from saz.engine.search.mcts import (
    MCTS,
    MoveInfo,
    SearchLimits,
    SearchResult,
    SearchStats,
    choose_move,
    prune_policy_target,
)
from saz.engine.search.options import SearchOptions, SubgraphSampling


class FakeNet:
    """A deterministic stand-in network: pseudo-random priors and values from the input, and a
    record of every call (batch sizes, masks)."""

    def __init__(self, seed: int = 0, policy_size: int | None = None) -> None:
        self.seed = seed
        #: The width of the policy rows (None: one per node, the lattice games').
        self.policy_size = policy_size
        self.calls: list[tuple[int, np.ndarray | None]] = []
        self.layouts: list[GraphLayout] = []

    def run(self, x: np.ndarray, layout: GraphLayout,
            mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        self.calls.append((x.shape[0], None if mask is None else mask.copy()))
        self.layouts.append(layout)
        b, n = x.shape[0], x.shape[1]
        key = (x.reshape(b, -1) * np.arange(1, x[0].size + 1)).sum(axis=1)
        rng = np.random.default_rng([self.seed, int(abs(key.sum()) * 1000) % 2**31])
        logits = rng.normal(size=(b, self.policy_size or n)).astype(np.float32)
        if mask is not None:
            logits = np.where(mask, logits, -1e9)
        log_policy = logits - np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(
            1, keepdims=True)) - logits.max(1, keepdims=True)
        values = np.tanh(rng.normal(size=b)).astype(np.float32)
        return log_policy.astype(np.float32), values


def check_tree(search: MCTS) -> None:
    """Every expanded node's visits are its own evaluation plus its children's; no virtual loss
    is left behind; untried moves stay in descending order of prior (the core checks it)."""
    assert search._tree.validate() == ""


def gomoku_from(rows: list[str]) -> Game:
    """A Gomoku position from a diagram (X black, O white, . empty), black to move if the
    stone counts are equal. Moves alternate, so the counts must differ by at most one."""
    g = new_game("gomoku", len(rows[0]), len(rows))
    blacks = [g.point(x, y) for y, r in enumerate(rows) for x, c in enumerate(r) if c == "X"]
    whites = [g.point(x, y) for y, r in enumerate(rows) for x, c in enumerate(r) if c == "O"]
    assert len(blacks) - len(whites) in (0, 1)
    for i in range(len(blacks)):
        g.play(blacks[i])
        if i < len(whites):
            g.play(whites[i])
    return g


@pytest.mark.parametrize("pipeline", [False, True])
@pytest.mark.parametrize("game_name,size", [("gomoku", 9), ("othello", 8), ("go", 7)])
def test_visits_add_up(game_name: str, size: int, pipeline: bool) -> None:
    game = new_game(game_name, size)
    search = MCTS(FakeNet(), SearchOptions(batch_size=8, pipeline=pipeline, seed=1))
    result = search.search(game, SearchLimits(visits=400, early_stop=False))
    check_tree(search)
    assert 400 <= result.root_visits < 400 + 8
    assert sum(m.visits for m in result.moves) == result.root_visits - 1
    assert result.best_move == result.moves[0].move
    assert game.is_legal(result.best_move)
    assert len(game.moves) == 0  # the caller's game is untouched
    dist = result.visit_distribution()
    assert dist.shape == (game.num_nodes,) and dist.sum() == pytest.approx(1.0)


def test_batches_are_used() -> None:
    net = FakeNet()
    search = MCTS(net, SearchOptions(batch_size=16, seed=2))
    result = search.search(new_game("gomoku", 15), SearchLimits(playouts=320, early_stop=False))
    assert result.stats.playouts >= 320
    assert result.stats.mean_batch > 12  # virtual loss spreads one batch over distinct leaves
    assert max(size for size, _ in net.calls) == 16


def test_tree_is_reused_after_two_moves() -> None:
    game = new_game("othello", 8)
    search = MCTS(FakeNet(), SearchOptions(batch_size=4, seed=3))
    first = search.search(game, SearchLimits(visits=600, early_stop=False))
    game.play(first.best_move)
    reply = first.moves[0].pv[1]
    game.play(reply)
    kept = search._tree.visits_at([first.best_move, reply])
    assert kept > 0
    second = search.search(game, SearchLimits(visits=kept + 50, early_stop=False))
    # The grandchild became the root: its visits carried over, and only ~50 were added.
    assert second.root_visits >= kept + 50
    assert second.stats.playouts < 50 + 4
    check_tree(search)


def test_changed_position_gets_a_fresh_tree() -> None:
    game = new_game("gomoku", 9)
    search = MCTS(FakeNet(), SearchOptions(batch_size=4))
    search.search(game, SearchLimits(visits=50, early_stop=False))
    other = new_game("gomoku", 9)
    other.play(0)
    other.play(80)
    other.play(1)
    search.search(other, SearchLimits(visits=50, early_stop=False))
    assert search._root.moves == [0, 80, 1]
    assert search._tree.root_visits < 60


def test_stop_ends_an_unlimited_search() -> None:
    search = MCTS(FakeNet(), SearchOptions(batch_size=8))
    results = []
    worker = threading.Thread(
        target=lambda: results.append(search.search(new_game("gomoku", 9), SearchLimits())))
    worker.start()
    time.sleep(0.2)
    search.stop()
    worker.join(timeout=5)
    assert not worker.is_alive()
    assert results and results[0].root_visits > 8


def test_stop_when_idle_does_not_cut_the_next_search() -> None:
    search = MCTS(FakeNet(), SearchOptions(batch_size=8))
    search.stop()
    result = search.search(new_game("gomoku", 9), SearchLimits(visits=200, early_stop=False))
    assert result.root_visits >= 200


class FakeClock:
    """A clock that advances only when the fake network runs: 10 ms per call."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


class TimedNet:
    """Wraps a fake network so that each call takes 10 ms of the fake clock."""

    def __init__(self, inner: FakeNet, clock: FakeClock) -> None:
        self.inner = inner
        self.clock = clock
        self.calls = inner.calls

    def run(self, x, layout, mask=None):
        self.clock.t += 0.01
        return self.inner.run(x, layout, mask)


@pytest.mark.parametrize("pipeline", [False, True])
def test_time_limit_is_kept(pipeline: bool) -> None:
    clock = FakeClock()
    net = TimedNet(FakeNet(), clock)
    search = MCTS(net, SearchOptions(batch_size=8, pipeline=pipeline), now=clock)
    result = search.search(new_game("go", 9), SearchLimits(soft_seconds=0.3, hard_seconds=0.3,
                                                           early_stop=False))
    # 30 network calls fit in 0.3 s. The search stops when the next turn of its loop would
    # pass the hard limit, the batch in flight included: it never runs over.
    assert 28 <= len(net.calls) <= 30
    assert result.stats.seconds == pytest.approx(clock.t)
    assert result.stats.seconds <= 0.3 + 1e-9


def test_early_stop_when_the_leader_cannot_be_caught() -> None:
    search = MCTS(FakeNet(), SearchOptions(batch_size=8, seed=4))
    result = search.search(new_game("othello", 8), SearchLimits(visits=2000))
    first, second = result.moves[0], result.moves[1]
    assert result.root_visits < 2000
    assert first.visits - second.visits > 2000 - result.root_visits - 8


class OneMoveNet(FakeNet):
    """Puts nearly all the prior on one move: its lead soon cannot be caught."""

    def run(self, x, layout, mask=None):
        log_policy, values = super().run(x, layout, mask)
        log_policy[:] = -20.0
        log_policy[:, 3] = 0.0
        return log_policy, values


def test_early_stop_on_time_when_the_leader_cannot_be_caught() -> None:
    clock = FakeClock()
    net = TimedNet(OneMoveNet(), clock)
    search = MCTS(net, SearchOptions(batch_size=8, pipeline=False), now=clock)
    result = search.search(new_game("gomoku", 9), SearchLimits(soft_seconds=4, hard_seconds=30))
    assert result.best_move == 3
    # The leader takes ~85% of the visits, so its lead passes the playouts the remaining soft
    # time could still bring after about 4 / 1.85 s of the fake clock.
    assert 1.5 < clock.t < 3.2


def test_immediate_win_is_played_without_search() -> None:
    game = gomoku_from([
        ".........",
        ".XXXX....",
        ".........",
        "..OOO....",
        ".........",
        ".........",
        ".........",
        ".........",
        ".O.......",
    ])
    net = FakeNet()
    result = MCTS(net).search(game, SearchLimits(visits=100))
    assert result.decided_by_rules
    assert result.best_move in (game.point(0, 1), game.point(5, 1))
    assert net.calls == []


def test_forced_block_is_found_whatever_the_prior() -> None:
    # White threatens five at (5, 3); black has no four of its own.
    game = gomoku_from([
        ".........",
        "X........",
        "..X......",
        "OOOO.....",
        "......X..",
        "........X",
        ".........",
        ".........",
        ".........",
    ])
    assert game.to_move == 1  # black
    result = MCTS(FakeNet()).search(game, SearchLimits(visits=100))
    assert result.best_move == game.point(4, 3)


#: White has an open four; Black, to move, has scattered stones and no four of its own.
WHITE_OPEN_FOUR = [
    ".........",
    ".........",
    "..OOOO...",
    ".........",
    "X........",
    ".........",
    "X.......X",
    ".........",
    "X........",
]


def test_unstoppable_threat_is_scored_exactly() -> None:
    """White has an open four: every black reply lets white win at once, which the search
    scores as an exact loss for each black move instead of trusting the network's values."""
    game = gomoku_from(WHITE_OPEN_FOUR)
    assert game.forced_moves() == []
    search = MCTS(FakeNet(), SearchOptions(batch_size=4, seed=5))
    result = search.search(game, SearchLimits(visits=300, early_stop=False))
    assert not result.decided_by_rules
    assert all(m.value == -1.0 for m in result.moves)
    assert result.value < -0.95
    assert result.stats.evaluated == 1  # the root alone: every reply was settled by the rules


def test_subgraph_sampling_sends_masked_copies() -> None:
    net = FakeNet()
    sub = SubgraphSampling(count=2, min_fraction=0.5, max_fraction=0.6, blend=0.5)
    search = MCTS(net, SearchOptions(batch_size=4, subgraphs=sub, seed=6))
    search.search(new_game("gomoku", 12), SearchLimits(playouts=40, early_stop=False))
    size, mask = net.calls[-1]
    assert mask is not None and size == mask.shape[0] and size % 3 == 0
    assert mask[0].all()  # the full position
    windows = mask[1:3]
    assert windows[:, -1].all()  # the extra node stays
    assert (windows[:, :-1].sum(axis=1) < 144).all()
    assert (windows[:, :-1].sum(axis=1) >= 36).all()
    check_tree(search)


def test_focus_shows_the_network_each_leafs_window_and_searches_only_there() -> None:
    from saz.engine.graph import encode
    net = FakeNet()
    game = new_game("gomoku", 20)
    for x, y in ((10, 10), (11, 10), (10, 11)):
        game.play(game.point(x, y))
    search = MCTS(net, SearchOptions(batch_size=4, seed=1))  # focus_side 12, the default
    result = search.search(game, SearchLimits(playouts=60, early_stop=False))
    # The root alone first: the network gets its 12x12 window as a 12x12 board.
    assert (net.layouts[0].width, net.layouts[0].height) == (12, 12)
    for (rows, mask), lay in zip(net.calls, net.layouts, strict=True):
        # each leaf in its window; the batch cut to the windows' bounding box where it is less
        # than the board
        assert 12 <= lay.width <= 20 and 12 <= lay.height <= 20
        assert mask is not None and mask.shape == (rows, lay.num_nodes) and mask[:, -1].all()
        assert ((mask[:, :-1].sum(axis=1) >= 144) & (mask[:, :-1].sum(axis=1) < 400)).all()
    assert any(lay.num_points < 400 for lay in net.layouts[1:])
    root = type(game).focus_masks(encode([game]), 20, 20, 12)
    assert root is not None
    window = root[0, :-1].reshape(20, 20)  # the root's own: x 5..16, y 5..16
    assert window.sum() == 144
    for info in result.moves:
        x, y = info.move % 20, info.move // 20
        assert window[y, x], f"visited {x},{y} outside the window"
    check_tree(search)


def test_without_focus_the_network_sees_the_whole_board() -> None:
    net = FakeNet()
    game = new_game("gomoku", 20)
    game.play(game.point(10, 10))
    MCTS(net, SearchOptions(batch_size=4, focus_side=0, seed=1)).search(
        game, SearchLimits(playouts=20, early_stop=False))
    assert all(mask is None for _, mask in net.calls)


def test_root_noise_is_seeded_and_keeps_a_distribution() -> None:
    def root_priors(seed: int) -> list[float]:
        search = MCTS(FakeNet(), SearchOptions(dirichlet_epsilon=0.25, seed=seed))
        search.search(new_game("gomoku", 9), SearchLimits(visits=20, early_stop=False))
        return search._tree.root_edges()[1]

    a, b, c = root_priors(7), root_priors(7), root_priors(8)
    assert a == b and a != c
    assert sum(a) == pytest.approx(1.0)


def test_temperature_samples_by_visits() -> None:
    search = MCTS(FakeNet(), SearchOptions(seed=9))
    result = search.search(new_game("othello", 6), SearchLimits(visits=200, early_stop=False))
    rng = np.random.default_rng(0)
    assert choose_move(result, 0.0, rng) == result.best_move
    picks = {choose_move(result, 1.0, rng) for _ in range(200)}
    assert picks <= {m.move for m in result.moves} and len(picks) > 1


def test_game_over_is_rejected() -> None:
    game = new_game("go", 5)
    game.play(game.pass_move)
    game.play(game.pass_move)
    with pytest.raises(ValueError, match="over"):
        MCTS(FakeNet()).search(game, SearchLimits(visits=10))


def test_lockstep_drives_many_trees_with_one_network_call_per_step() -> None:
    net = FakeNet()
    games = [new_game("othello", 8), new_game("othello", 8)]
    games[1].play(games[1].legal_moves()[0])
    searches = [MCTS(net, SearchOptions(seed=i, dirichlet_epsilon=0.25)) for i in range(2)]
    for search, game in zip(searches, games):
        assert search.begin(game) is None
    steps = 0
    while min(s.result().root_visits for s in searches) < 200:
        rows, owners = [], []
        for search in searches:
            batch = search.gather(8)  # the leaves, encoded by the core
            rows.append(batch.copy())
            owners.append(len(batch))
        x = np.concatenate(rows)
        log_policy, values = net.run(x, None)
        start = 0
        for search, count in zip(searches, owners):
            search.absorb(log_policy[start:start + count], values[start:start + count])
            start += count
        steps += 1
    assert len(net.calls) == steps
    for search, game in zip(searches, games):
        check_tree(search)
        result = search.result()
        assert game.is_legal(result.best_move)
        assert sum(m.visits for m in result.moves) == result.root_visits - 1


def test_a_lockstep_searchs_fresh_root_gets_its_noise() -> None:
    """The root a lockstep search expands itself (a game's first move) gets the Dirichlet
    noise, as a reused one does in `begin`; `explore=False` leaves it out."""
    game = new_game("gomoku", 7)
    x = np.empty((1, game.num_nodes, game.num_features()), np.float32)
    game.encode(x[0])
    logits, _ = FakeNet().run(x, None)
    policy = np.exp(logits[0, :-1])  # over the candidates: the points, not the extra node
    network = sorted((policy / policy.sum()).tolist(), reverse=True)
    for explore in (True, False):
        search = MCTS(FakeNet(), SearchOptions(seed=1, dirichlet_epsilon=0.25))
        assert search.begin(game, explore=explore) is None
        rows = search.gather(4)
        search.absorb(*FakeNet().run(rows, None))
        _, priors = search._tree.root_edges()
        assert (priors != pytest.approx(network, abs=1e-6)) == explore


def test_lockstep_needs_begin() -> None:
    with pytest.raises(RuntimeError, match="begin"):
        MCTS(FakeNet()).gather(4)


def test_allowed_moves_restrict_the_root() -> None:
    game = new_game("go", 5)
    search = MCTS(FakeNet(), SearchOptions(batch_size=4))
    search.search(game, SearchLimits(visits=50, early_stop=False))
    allowed = {game.point(1, 1), game.point(3, 3)}
    result = search.search(game, SearchLimits(visits=50, early_stop=False), allowed=allowed)
    assert {m.move for m in result.moves} <= allowed
    assert result.best_move in allowed
    with pytest.raises(ValueError, match="allowed"):
        search.search(game, SearchLimits(visits=5), allowed={game.num_nodes + 3})


@pytest.mark.parametrize("diagram,expected", [
    # Black wins at once at either end of its open four.
    ([".........", ".XXXX....", ".........", "..OOO....", ".........", ".........",
      ".........", ".........", ".O......."], {(0, 1), (5, 1)}),
    # White threatens five at (4, 3): the only move that does not lose at once.
    ([".........", "X........", "..X......", "OOOO.....", "......X..", "........X",
      ".........", ".........", "........."], {(4, 3)}),
])
def test_tactics_with_a_random_network(tiny_model, diagram: list[str],
                                       expected: set[tuple[int, int]]) -> None:
    from saz.engine.evaluator import Evaluator

    game = gomoku_from(diagram)
    evaluator = Evaluator(tiny_model("gomoku").path, game="gomoku")
    result = MCTS(evaluator, SearchOptions(batch_size=8)).search(game, SearchLimits(visits=64))
    assert game.grid.xy(result.best_move) in expected


def test_a_move_proven_lost_is_not_visited_again() -> None:
    """Black faces an open four: each black move is a proven loss after one visit, so the search
    tries every move once and never returns to those it has settled (one must take the rest).
    The root's threat guard is off: it would settle them all before the first visit."""
    game = gomoku_from(WHITE_OPEN_FOUR)
    search = MCTS(FakeNet(), SearchOptions(batch_size=4, seed=5, threat_root_nodes=0))
    result = search.search(game, SearchLimits(visits=300, early_stop=False))
    visits = sorted(m.visits for m in result.moves)
    assert len(visits) == len(game.legal_moves())
    assert visits[:-1] == [1] * (len(visits) - 1)


def wiped_out_next(game: Othello, move: int) -> bool:
    """Brute force: after `move`, some reply leaves the player of `move` without a disc."""
    game.play(move)
    try:
        for reply in game.legal_moves().tolist():
            game.play(reply)
            wiped = min(game.disc_count()) == 0
            game.undo()
            if wiped:
                return True
        return False
    finally:
        game.undo()


def assert_search_avoids(seed: int, loses: Callable[[Othello, int], bool],
                         skip: Callable[[Othello], bool]) -> None:
    """Five random 6x6 set-ups (none `skip`s) where some but not all of Black's moves `loses`:
    whatever the network says, the search plays one that does not."""
    rng = np.random.default_rng(seed)
    checked = 0
    while checked < 5:
        cells = rng.choice(list("XO....."), size=36)
        game = Othello.from_diagram("\n".join("".join(cells[r * 6:r * 6 + 6]) for r in range(6)))
        if game.is_over() or game.winning_moves() or skip(game):
            continue
        losing = {move for move in game.legal_moves().tolist() if loses(game, move)}
        if not losing or len(losing) == len(game.legal_moves()):
            continue
        result = MCTS(FakeNet(checked)).search(game, SearchLimits(visits=200))
        assert result.best_move not in losing
        checked += 1


def test_othello_moves_that_let_the_opponent_wipe_out_are_avoided() -> None:
    """Set-ups where some of Black's moves let White turn over every black disc next: whatever
    the network says, the search settles those replies and plays a move that survives."""
    assert_search_avoids(3, wiped_out_next, lambda game: False)


def wiped_out_later(game: Othello, move: int) -> bool:
    """Brute force: after `move`, some reply leaves the player of `move` only moves (at least
    one) that let the opponent turn over all its discs."""
    game.play(move)
    try:
        for reply in game.legal_moves().tolist():
            game.play(reply)
            moves = [] if game.is_over() else game.legal_moves().tolist()
            lost = bool(moves) and all(wiped_out_next(game, m) for m in moves)
            game.undo()
            if lost:
                return True
        return False
    finally:
        game.undo()


def test_othello_moves_that_lose_to_a_wipeout_three_plies_later_are_avoided() -> None:
    """Set-ups where some of Black's moves let White reply with a move after which every black
    move allows a wipeout (what the greedy player did to the shipped model at 16x16): the
    search settles those replies as White's wins and plays a move that survives."""
    # Only set-ups without a two-ply threat: the three-ply one is what is tested.
    assert_search_avoids(4, wiped_out_later, lambda game: game.forced_moves() is not None)


def test_forced_playouts_give_every_visited_root_move_its_minimum() -> None:
    """KataGo's forced playouts: a visited root move gets at least sqrt(k P N) visits (less one,
    as N grows past it); without them, low-prior moves fall well below it."""
    def minimum_shortfall(k: float) -> float:
        search = MCTS(FakeNet(), SearchOptions(batch_size=8, seed=5, forced_playouts_k=k,
                                               pipeline=False))
        result = search.search(new_game("gomoku", 9), SearchLimits(visits=600, early_stop=False))
        total = sum(m.visits for m in result.moves)
        return min(m.visits - sqrt(2.0 * m.prior * total) for m in result.moves)

    assert minimum_shortfall(2.0) >= -1
    assert minimum_shortfall(0.0) < -5


def test_policy_target_pruning_takes_forced_visits_back() -> None:
    best = MoveInfo(0, 100, 0.1, 0.5, 0.0, (0,))
    good = MoveInfo(1, 20, -0.5, 0.01, 0.0, (1,))
    forced = MoveInfo(2, 2, -0.9, 0.02, 0.0, (2,))
    stats = SearchStats()
    result = SearchResult(0, 0.1, 123, (best, good, forced), stats, num_nodes=4)
    target = prune_policy_target(result, c_puct=1.5, forced_playouts_k=2.0)
    assert target[2] == 0.0                      # only forced visits: pruned away
    assert 18 / 118 <= target[1] / target.sum() <= 20 / 120  # at most sqrt(2 * 0.01 * 122) taken
    assert target.sum() == pytest.approx(1.0) and target[0] > 0.8
    np.testing.assert_array_equal(prune_policy_target(result, 1.5, 0.0),
                                  result.visit_distribution())


def test_an_analysis_at_the_tree_budget_keeps_reporting_until_stopped() -> None:
    """A full tree stops growing; an analysis (no limit, snapshots wanted) keeps sending what it
    knows until the GUI stops it, instead of going quiet."""
    search = MCTS(FakeNet(), SearchOptions(batch_size=8, max_tree_bytes=2 * 2**20))
    snapshots: list[int] = []
    stop = threading.Event()

    def report(result: SearchResult) -> None:
        snapshots.append(result.root_visits)
        if len(snapshots) >= 40:
            stop.set()

    result = search.search(new_game("go", 19), SearchLimits(), on_progress=report,
                           progress_interval=0.01, stop=stop)
    assert search._tree.full and search.tree_bytes <= 2 * 2**20
    assert len(snapshots) >= 40 and snapshots[-1] == snapshots[-5] == result.root_visits


def test_a_cut_down_batch_gives_the_network_outputs_of_the_masked_board(tiny_model) -> None:
    """`crop` moves each row's window to the corner of a board as large as the largest: the
    network has no coordinates, so on the kept nodes it answers exactly what it answers on the
    whole board under the same masks, whatever part of the board each window is on."""
    from saz.engine.evaluator import Evaluator
    from saz.engine.graph import encode, layout
    from saz.engine.model_card import MASKED_LOG_PROB
    from saz.engine.search.mcts import crop
    evaluator = Evaluator(tiny_model("gomoku").path, threads=1)
    games = []
    for stones in (((9, 10), (10, 9), (10, 11)), ((1, 1), (2, 2)), ((12, 14), (13, 12)),
                   ((3, 10), (12, 10))):
        game = new_game("gomoku", 20)
        for x, y in stones:
            game.play(game.point(x, y))
        games.append(game)
    x = encode(games)
    mask = type(games[0]).focus_masks(x, 20, 20, 12)
    assert mask is not None
    cut = crop(x, mask, layout(20, 20))
    # The last window is 18 wide (x 0..17 after sliding inside the board), the others 12x12.
    assert cut is not None and (cut.layout.width, cut.layout.height) == (18, 12)
    assert cut.mask.sum(axis=1).tolist() == mask.sum(axis=1).tolist()  # every kept node is cut
    log_whole, value_whole = evaluator.run(x, layout(20, 20), mask)
    log_cut, value_cut = evaluator.run(cut.x, cut.layout, cut.mask)
    assert np.allclose(value_cut, value_whole, atol=1e-5)
    log_back = cut.expand(log_cut)
    assert log_back.shape == log_whole.shape
    assert np.allclose(log_back[mask], log_whole[mask], atol=1e-4)
    assert (log_back[~mask] == MASKED_LOG_PROB).all()
    # Windows that span the board leave nothing to cut.
    assert crop(x, np.ones_like(mask), layout(20, 20)) is None


def test_an_analysis_of_a_proven_position_keeps_reporting_until_stopped() -> None:
    """White to move in a 9x9 endgame that the tree proves lost within a few dozen visits
    (a game of the shipped model's against GNU Go, move 105): the analysis keeps sending the
    proven result until the GUI stops it, where it used to end without a single snapshot."""
    from saz.engine.games.go import Go
    game = Go.from_diagram("""
        XX.XX.X.X
        XXXXXX.XX
        .X.XXXXXX
        OXOXX.XXO
        XXX.XXXOO
        OX..XXO.O
        OOXXXXOOO
        .OX.XXOXO
        OOOX.XXXO""", to_move=WHITE)
    search = MCTS(FakeNet(), SearchOptions(batch_size=8))
    snapshots: list[SearchResult] = []
    stop = threading.Event()

    def report(result: SearchResult) -> None:
        snapshots.append(result)
        if len(snapshots) >= 5:
            stop.set()

    threading.Timer(10.0, stop.set).start()  # a search that never proves it still ends
    search.search(game, SearchLimits(), on_progress=report, progress_interval=0.01, stop=stop)
    assert search._tree.root_proven
    assert len(snapshots) >= 5 and snapshots[-1].root_visits == snapshots[-2].root_visits


# -- chess: moves join two squares, the policy is over moves, there is no pass --------------------
def chess(fen: str | None = None, size: int = 8) -> Game:
    from saz.engine.games.chess import Chess

    return Chess.from_fen(fen) if fen is not None else Chess(size)


class PeakedNet(FakeNet):
    """A fake network of a game's policy width that puts almost all its mass on one policy
    index, whatever the position."""

    def __init__(self, policy_size: int, peak: int) -> None:
        super().__init__(policy_size=policy_size)
        self.peak = peak

    def run(self, x, layout, mask=None):
        _, values = super().run(x, layout, mask)
        log_policy = np.full((len(x), self.policy_size), -20.0, np.float32)
        log_policy[:, self.peak] = 0.0
        return log_policy, values


@pytest.mark.parametrize("size", [5, 6, 8])
def test_chess_search_sizes_the_policy_by_moves_and_the_target_by_policy_index(size: int) -> None:
    game = chess(size=size)
    search = MCTS(FakeNet(policy_size=game.policy_size), SearchOptions(batch_size=8, seed=0))
    for _ in range(2):  # White, then Black (whose moves are indexed in its flipped frame)
        result = search.search(game, SearchLimits(visits=120))
        check_tree(search)
        assert game.is_legal(result.best_move)
        assert sum(m.visits for m in result.moves) == result.root_visits - 1
        dist = result.visit_distribution()
        assert dist.shape == (game.policy_size,) and dist.sum() == pytest.approx(1.0)
        moves = np.array([m.move for m in result.moves])
        index = game.policy_indices(moves)
        np.testing.assert_allclose(dist[index], [m.visits / (result.root_visits - 1)
                                                 for m in result.moves], rtol=1e-6)
        assert np.count_nonzero(dist) == len(moves)
        game.play(result.best_move)


def test_chess_priors_are_read_at_each_moves_policy_index_in_the_side_to_moves_frame() -> None:
    white = chess()
    e4 = white.parse_uci("e2e4")
    peak = int(white.policy_indices(np.array([e4]))[0])
    search = MCTS(PeakedNet(white.policy_size, peak), SearchOptions(seed=0))
    result = search.search(white, SearchLimits(visits=30))
    assert result.best_move == e4
    black = chess()
    black.play(black.parse_uci("g1f3"))
    # The same index, for Black, is its mirror move e7e5.
    result = search.search(black, SearchLimits(visits=30))
    assert black.uci(result.best_move) == "e7e5"
    moves, priors = search._tree.root_edges()
    assert moves[int(np.argmax(priors))] == black.parse_uci("e7e5")


def test_chess_lockstep_gathers_rows_and_absorbs_rows_of_the_policys_width() -> None:
    games = [chess(size=5), chess(size=5)]
    games[1].play(int(games[1].legal_moves()[0]))
    net = FakeNet(policy_size=games[0].policy_size)
    searches = [MCTS(net, SearchOptions(seed=i)) for i in range(2)]
    for search, game in zip(searches, games, strict=True):
        assert search.begin(game) is None
        assert not search.layout.lattice and "promo" in search.layout.tables
    for _ in range(10):
        for search in searches:
            x = search.gather(4)
            if len(x):
                log_policy, values = net.run(x, search.layout)
                search.absorb(log_policy, values)
    for search, game in zip(searches, games, strict=True):
        result = search.result()
        assert result.root_visits > 10 and game.is_legal(result.best_move)
        assert result.visit_distribution().shape == (game.policy_size,)
        check_tree(search)


def test_a_chess_mate_in_one_is_played_whatever_the_network_says() -> None:
    game = chess("rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2")
    search = MCTS(FakeNet(policy_size=game.policy_size), SearchOptions(seed=0))
    result = search.search(game, SearchLimits(visits=200))
    assert game.uci(result.best_move) == "d8h4" and result.value == 1.0
    target = result.visit_distribution()
    assert target.shape == (game.policy_size,)
    assert target[game.policy_indices(np.array([result.best_move]))[0]] == 1.0


def test_a_chess_search_never_plays_or_lists_a_pass() -> None:
    """Chess has no pass: `pass_move` is only the extra node's index (there also a real move's,
    b8a8), and a search's moves are the legal ones, a lone one played at once."""
    game = chess("k7/8/8/8/8/8/1R6/1R5K b - - 0 1")  # Black's king has one move, a8a7
    search = MCTS(FakeNet(policy_size=game.policy_size), SearchOptions(seed=0))
    result = search.search(game, SearchLimits(visits=50))
    assert game.uci(result.best_move) == "a8a7" and result.decided_by_rules
    assert result.visit_distribution().shape == (game.policy_size,)


def test_player_search_gives_a_chess_target_of_the_policys_width() -> None:
    from saz.engine.players import PlayerSearch, RandomPlayer

    game = chess()
    game.play(game.parse_uci("e2e4"))
    result = PlayerSearch(RandomPlayer(0)).search(game)
    target = result.visit_distribution()
    assert target.shape == (game.policy_size,)
    assert target[game.policy_indices(np.array([result.best_move]))[0]] == 1.0


def test_a_random_chess_network_round_trips_through_the_evaluator_and_the_search(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """A random chess network as `saz export` writes it (the trainer's export, torch/ONNX
    parity checked there), run by the engine's own evaluator and search on every board of the
    family: priors over the legal moves, value W - L of its wdl head, a consistent tree."""
    pytest.importorskip("torch")
    from saz.engine.evaluator import Evaluator
    from saz.engine.games.chess import Chess
    from saz.engine.graph import encode, layout_of
    from saz.tools.train.export import export_random_network

    path = tmp_path_factory.mktemp("chess") / "chess.onnx"
    export_random_network(Chess, path, hidden=16, layers=2, seed=0)
    evaluator = Evaluator(path, device="cpu", game="chess")
    assert evaluator.card.inputs == ("x", "nbr", "hub", "promo", "mask") and evaluator.has_wdl
    for size in (5, 6, 8):
        game = chess(size=size)
        priors, values = evaluator.evaluate([game])
        assert priors[0].shape == game.legal_moves().shape
        assert priors[0].sum() == pytest.approx(1.0, abs=1e-5)
        heads = evaluator.run_heads(encode([game]), layout_of(game))
        assert heads.wdl is not None and heads.log_policy.shape == (1, game.policy_size)
        np.testing.assert_allclose(heads.wdl.sum(axis=1), 1.0, atol=1e-5)
        np.testing.assert_allclose(heads.value, heads.wdl[:, 0] - heads.wdl[:, 2], atol=1e-5)
        np.testing.assert_allclose(values, heads.value)
        search = MCTS(evaluator, SearchOptions(batch_size=8, seed=0))
        for _ in range(2):  # White, then Black on the reused tree
            result = search.search(game, SearchLimits(visits=48))
            check_tree(search)
            assert game.is_legal(result.best_move) and result.root_visits >= 48
            game.play(result.best_move)


class MaterialNet(PeakedNet):
    """A `PeakedNet` whose value is the side to move's stones less the opponent's (the first
    two input planes), squashed: a capture shows in the value of the position after it."""

    def run(self, x, layout, mask=None):
        log_policy, _ = super().run(x, layout, mask)
        stones = x[:, :, 0].sum(axis=1) - x[:, :, 1].sum(axis=1)
        return log_policy, np.tanh(0.05 * stones).astype(np.float32)


@pytest.mark.parametrize("floor", [0.1, 0.0])
def test_the_roots_urgent_moves_get_their_prior_lifted_and_are_searched(floor: float) -> None:
    """Go: White's three stones in atari, a network that puts its mass on a corner point and
    values stones. The capture (an urgent move) gets `urgent_prior` at the root, so it is
    visited, and its value brings it more visits; with the floor off, its near-zero prior leaves
    it all but unvisited."""
    from saz.engine.games.go import Go

    game = Go.from_diagram("""
        . X X X . . .
        X O O O X . .
        . X X . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .""")
    capture, corner = game.point(3, 2), game.point(6, 6)
    assert game.urgent_moves().tolist() == [capture]
    peak = int(game.policy_indices(np.array([corner]))[0])
    search = MCTS(MaterialNet(game.policy_size, peak), SearchOptions(urgent_prior=floor, batch_size=1, seed=0))
    result = search.search(game, SearchLimits(visits=60, early_stop=False))
    check_tree(search)
    info = {m.move: m for m in result.moves}
    visits = info[capture].visits if capture in info else 0
    if floor:  # visited early, then again and again on its value
        assert info[capture].prior == pytest.approx(floor, rel=1e-6) and visits >= 8
    else:
        assert visits <= 1


def test_urgent_prior_is_a_front_end_option(capsys: pytest.CaptureFixture[str]) -> None:
    """`--urgent-prior` sets the floor (0: off); a value outside [0, 1] is the parser's error."""
    import argparse

    from saz.engine.search.options import add_search_arguments, search_options

    parser = argparse.ArgumentParser()
    add_search_arguments(parser)
    assert search_options(parser, parser.parse_args([])).urgent_prior == 0.1
    assert search_options(parser, parser.parse_args(["--urgent-prior", "0"])).urgent_prior == 0
    with pytest.raises(SystemExit) as exit_:
        search_options(parser, parser.parse_args(["--urgent-prior", "1.5"]))
    assert exit_.value.code == 2
    assert "urgent_prior must be in [0, 1]" in capsys.readouterr().err


class PrefixNet:
    """A stand-in network that answers from the first `reads` planes alone and says it reads
    only those (`num_features`, as an Evaluator of an older feature version does) when
    `declares`; every row it is sent is kept."""

    def __init__(self, reads: int, declares: bool) -> None:
        if declares:
            self.num_features = reads
        self.read = reads
        self.rows: list[np.ndarray] = []

    def run(self, x: np.ndarray, layout: GraphLayout,
            mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        self.rows.extend(np.array(row) for row in x)
        seen = x[:, :, :self.read]
        b, n = x.shape[0], x.shape[1]
        key = (seen.reshape(b, -1) * np.arange(1, seen[0].size + 1)).sum(axis=1)
        logits = np.sin(key[:, None] * np.arange(1, n + 1)).astype(np.float32)
        log_policy = logits - np.log(np.exp(logits).sum(1, keepdims=True))
        return log_policy.astype(np.float32), np.cos(key).astype(np.float32)


def test_leaves_leave_the_planes_a_network_does_not_read_zero() -> None:
    """A Go network of features version 2 reads 14 of the 17 planes: the search's leaves skip
    the ladder reads and send those planes as zeros; the planes it reads, and so the search,
    are the same as for a network that reads them all."""
    from saz.engine.games.go import Go

    game = Go.from_diagram("""
        . . . . . . .
        . . . . . . .
        . . . X . . .
        . . X O X . .
        . . . . . . .
        . . . . . . .
        . . . . . . .""", to_move=WHITE)
    ladder = Go.feature_names.index("own_ladder")
    found: dict[bool, tuple[SearchResult, np.ndarray]] = {}
    for declares in (False, True):
        net = PrefixNet(ladder, declares)
        search = MCTS(net, SearchOptions(batch_size=8, seed=1))
        found[declares] = search.search(game, SearchLimits(visits=200)), np.stack(net.rows)
    (full, every), (prefix, short) = found[False], found[True]
    assert every[:, :, ladder:].any()  # the ladder in the middle, read at the leaves
    assert not short[:, :, ladder:].any()
    assert np.array_equal(every[:, :, :ladder], short[:, :, :ladder])
    assert full.best_move == prefix.best_move
    assert [(m.move, m.visits) for m in full.moves] == [(m.move, m.visits) for m in prefix.moves]
