"""The endgame planner (engine/search/endgame.py): its estimates, its decisions from an injected
rate and clock, and the search that uses it by default."""
from __future__ import annotations

import math
import random

import pytest

from saz.engine.games.capabilities import Solution
from saz.engine.games.othello import Othello
from saz.engine.search import endgame
from saz.engine.search.endgame import EndgamePlanner, NodeModel
from saz.engine.search.mcts import MCTS, SearchLimits, SearchResult
from saz.engine.search.options import SearchOptions
from tests.test_othello_solver import UniformNet


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


class SlowGame:
    """A stand-in for a solvable position whose solves need `needs` nodes at `rate` a second on
    the fake clock: a solve within budget finishes, one past it runs the budget out."""

    def __init__(self, empties: int, needs: int, rate: float, clock: FakeClock) -> None:
        self.num_empty = empties
        self.needs, self.rate, self.clock = needs, rate, clock
        self.solves: list[tuple[int, bool]] = []

    def solve(self, max_nodes: int, *, exact: bool = True,
              max_seconds: float | None = None) -> Solution | None:
        self.solves.append((max_nodes, exact))
        if max_seconds is not None:  # the solver's clock: the budget is what fits in the time
            max_nodes = min(max_nodes, int(max_seconds * self.rate))
        spent = min(max_nodes, self.needs)
        self.clock.t += spent / self.rate
        return Solution(19, 4 if exact else 1, exact, spent) if self.needs <= max_nodes else None


def by_play(empties: int, seed: int) -> Othello:
    """A random-play 8x8 position with `empties` empty points, not over."""
    rng = random.Random(seed)
    while True:
        game = Othello(8)
        while not game.is_over() and game.num_empty > empties:
            game.play(rng.choice(game.legal_moves().tolist()))
        if not game.is_over():
            return game


# -- estimates ------------------------------------------------------------------------------------
def test_node_model_grows_per_empty_point_and_learns() -> None:
    model = NodeModel((1000.0, 2.0))
    assert model.nodes(18) == pytest.approx(1000.0)
    assert model.nodes(20) == pytest.approx(4000.0)
    # Solves that took 100 times the estimate raise it; the growth stays within its bounds.
    for _ in range(10):
        model.observe(18, 100_000.0)
    assert 10_000.0 < model.nodes(18) <= 100_000.0
    for e, n in ((10, 1.0), (26, 1e15)):  # a wildly steep series: the growth is clamped
        for _ in range(10):
            model.observe(e, n)
    assert model.growth == pytest.approx(endgame._MAX_GROWTH)


def test_rate_follows_the_timed_solves_only() -> None:
    planner = EndgamePlanner(rate=1e6)
    planner.note_solve(18, True, 10_000_000, 0.5, True)  # 20M a second
    assert 1e6 < planner.rate < 20e6
    rate = planner.rate
    planner.note_solve(10, True, 100, 0.0001, True)  # too short to time
    assert planner.rate == rate


# -- decisions ------------------------------------------------------------------------------------
def test_too_many_empties_for_the_time_is_not_solved_and_one_that_fits_is() -> None:
    planner = EndgamePlanner(rate=10e6)
    assert not planner.plan_root(30, 1.0).wld
    assert planner.plan_root(12, 1.0).wld
    # More time reaches further; the budget is the rate times the root's share of the time.
    reach = [max(e for e in range(1, 40) if planner.plan_root(e, t).wld) for t in (0.1, 1, 10)]
    assert reach == sorted(reach) and reach[0] < reach[-1]
    plan = planner.plan_root(12, 1.0)
    assert plan.nodes == int(10e6 * endgame.ROOT_SHARE)
    # No clock: the default time.
    assert planner.plan_root(12, None).seconds == endgame.NO_CLOCK_SECONDS


def test_a_solve_that_fits_gives_the_exact_margin() -> None:
    game = by_play(12, 3)
    truth = game.solve(exact=True)
    assert truth is not None
    solved = EndgamePlanner(rate=10e6).solve_root(game, 1.0)
    assert solved is not None and solved.exact
    assert solved.solution.margin == truth.margin


def test_a_failed_solve_leaves_time_for_the_search() -> None:
    clock = FakeClock()
    planner = EndgamePlanner(rate=1e6, now=clock)
    # The estimate says it fits; the position needs far more than the budget.
    game = SlowGame(empties=12, needs=10**9, rate=1e6, clock=clock)
    assert planner.plan_root(12, 2.0).wld
    assert planner.solve_root(game, 2.0) is None  # type: ignore[arg-type]  # a stand-in
    assert game.solves == [(int(2 * 1e6 * endgame.ROOT_SHARE * 2.0), False)]
    assert clock.t <= endgame.ROOT_SHARE * 2.0 + 1e-9  # the rest of the move is the search's
    # What it learned: that many empty points now look dearer.
    assert planner.wld.nodes(12) > NodeModel(endgame.SEED_WLD).nodes(12)


def test_win_draw_loss_first_then_exact_in_the_time_left() -> None:
    clock = FakeClock()
    planner = EndgamePlanner(rate=1e6, now=clock)
    game = SlowGame(empties=10, needs=1000, rate=1e6, clock=clock)
    solved = planner.solve_root(game, 1.0)  # type: ignore[arg-type]  # a stand-in
    assert solved is not None and solved.exact and solved.solution.margin == 4
    assert [exact for _, exact in game.solves] == [False, True]
    # An exact solve that runs out still plays the proven win.
    clock = FakeClock()
    planner = EndgamePlanner(rate=1e6, now=clock,
                             exact=NodeModel((1.0, 1.5)))  # the exact estimate looks cheap
    game = SlowGame(empties=10, needs=1000, rate=1e6, clock=clock)

    def wld_only(max_nodes: int, *, exact: bool = True,
                 max_seconds: float | None = None) -> Solution | None:
        game.solves.append((max_nodes, exact))
        clock.t += 0.001
        return None if exact else Solution(19, 1, False, 1000)

    game.solve = wld_only  # type: ignore[method-assign]
    solved = planner.solve_root(game, 1.0)  # type: ignore[arg-type]  # a stand-in
    assert solved is not None and not solved.exact and solved.solution.result == 1


def test_leaf_threshold_follows_the_cost_of_a_network_call() -> None:
    slow_net = EndgamePlanner(rate=10e6, leaf_seconds=0.01)
    fast_net = EndgamePlanner(rate=10e6, leaf_seconds=0.0001)
    assert slow_net.leaf_threshold(64) > fast_net.leaf_threshold(64) > 0
    assert EndgamePlanner(rate=1.0).leaf_threshold(64) < fast_net.leaf_threshold(64)
    assert slow_net.leaf_threshold(5) == 5
    # Each threshold's estimate fits one leaf's budget, and the next does not.
    e = slow_net.leaf_threshold(64)
    assert slow_net.wld.nodes(e) <= slow_net.leaf_budget() < slow_net.wld.nodes(e + 1)


# -- in the search --------------------------------------------------------------------------------
def test_the_search_solves_by_default_and_sets_the_leaf_threshold() -> None:
    game = by_play(12, 5)
    truth = game.solve(exact=True)
    assert truth is not None
    net = UniformNet()
    search = MCTS(net)  # the default options: auto
    threshold = search.endgame.leaf_threshold(64)  # before this search's solve measured more
    result = search.search(game, SearchLimits(soft_seconds=1.0, hard_seconds=1.0))
    assert result.decided_by_rules and result.proven and net.calls == 0
    assert result.exact_score == truth.margin
    assert search._tree.options.solve_empties == threshold > 0
    # Fixed override and off.
    assert MCTS(UniformNet(), SearchOptions(solve_empties=0))._tree.options.solve_empties == 0
    assert MCTS(UniformNet(), SearchOptions(solve_empties=9))._tree.options.solve_empties == 9


def test_the_search_goes_on_with_the_time_left_after_a_failed_solve() -> None:
    game = by_play(22, 7)
    search = MCTS(UniformNet())
    # The planner thinks it fits, but its rate allows only a few hundred nodes.
    search.endgame = EndgamePlanner(rate=1000.0, wld=NodeModel((1.0, 1.5)))
    result = search.search(game, SearchLimits(visits=40, soft_seconds=1.0, hard_seconds=1.0))
    assert not result.decided_by_rules and result.root_visits >= 40


def test_analysis_of_a_solved_root_shows_each_move_s_exact_margin() -> None:
    from saz.protocol.gtp_analysis import kata_info
    from saz.protocol.vertex import vertices_for
    game = by_play(10, 11)
    margins = {}
    for move in game.legal_moves().tolist():
        child = game.copy()
        child.play(move)
        solution = child.solve(exact=True)
        assert solution is not None
        margins[move] = solution.margin * (1 if child.to_move == game.to_move else -1)
    seen: list[SearchResult] = []
    result = MCTS(UniformNet()).search(game, SearchLimits(), on_progress=seen.append)
    assert seen and result.exact_score == max(margins.values())
    assert {m.move: m.exact_score for m in result.moves} == margins
    assert all(m.proven for m in result.moves)
    assert [m.exact_score for m in result.moves] == sorted(margins.values(), reverse=True)
    vertices = vertices_for("othello", 8, 8)
    line = kata_info(result, vertices, None, None)
    for move, margin in margins.items():
        shown = line.split(f"move {vertices.format(move)} ")[1].split(" info ")[0]
        assert f"scoreLead {margin:g} " in shown


def test_settled_root_moves_are_proven_in_the_result() -> None:
    """Leaves the tree's solves settle show as proofs at the root (value +1/0/-1, proven)."""
    game = by_play(13, 13)
    search = MCTS(UniformNet(), SearchOptions(solve_empties=12))  # the root's children only
    result = search.search(game, SearchLimits(visits=200))
    assert not result.decided_by_rules
    assert any(m.proven for m in result.moves)
    for m in result.moves:
        if m.proven:
            child = game.copy()
            child.play(m.move)
            solution = child.solve(exact=False)
            assert solution is not None
            mover = 1 if child.to_move == game.to_move else -1
            assert m.value == solution.result * mover and math.isclose(m.lcb, m.value)
