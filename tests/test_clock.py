"""The time manager: parsers, clock accounting, budgets, and simulated games on a fake clock in
which the search always thinks to its hard limit (and a little past it) yet never loses on time.

The `Referee` below is the controller's clock for our side, written from the rules on its own so
that the manager's account is checked against something it does not share code with.
"""
from __future__ import annotations

import math
import random
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from saz.engine.games import new_game
from saz.engine.search.clock import (
    LATENCY_WINDOW,
    Absolute,
    CanadianByoyomi,
    ClockState,
    Fischer,
    FixedTimePerMove,
    FixedVisits,
    Gomocup,
    JapaneseByoyomi,
    MoveBudget,
    NoTimeLimit,
    SafetyMargin,
    TimeControl,
    TimeControlError,
    TimeManager,
    TimePolicy,
    expected_moves_left,
    from_gtp_time_settings,
    from_kgs_time_settings,
)

#: A policy without margins, for exact arithmetic on the account.
EXACT = TimePolicy(margin=SafetyMargin(0.0, 0.0), gomocup_margin=SafetyMargin(0.0, 0.0),
                   initial_latency=0.0)
DEFAULT = TimePolicy()


class FakeClock:
    """A monotonic clock that moves only when told to."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


class Referee:
    """The controller's clock for our side, and whether we have lost on time (or a period)."""

    def __init__(self, control: TimeControl, startup: float = 0.0) -> None:
        self.control = control
        self.lost = False
        self.periods_lost = 0
        self.main = math.inf
        self.period = 0.0
        self.stones = 0
        self.periods = 0
        if isinstance(control, (Absolute, Fischer, CanadianByoyomi, JapaneseByoyomi)):
            self.main = control.main_time
        if isinstance(control, CanadianByoyomi) and self.main == 0:
            self.period, self.stones = control.period_time, control.period_stones
        if isinstance(control, JapaneseByoyomi):
            self.periods = control.periods
        if isinstance(control, Gomocup):
            self.main = control.match_limit or math.inf
            self.main -= startup

    def play(self, cost: float) -> None:
        """Our move took `cost` seconds on the controller's clock."""
        c = self.control
        if isinstance(c, FixedTimePerMove):
            self.lost |= cost > c.seconds
        elif isinstance(c, (Absolute, Gomocup)):
            if isinstance(c, Gomocup) and c.turn_limit is not None:
                self.lost |= cost > c.turn_limit
            self.main -= cost
            self.lost |= self.main < 0
        elif isinstance(c, Fischer):
            self.main -= cost
            self.lost |= self.main < 0
            self.main += c.increment
        elif isinstance(c, CanadianByoyomi):
            if self.stones == 0:
                if cost < self.main:
                    self.main -= cost
                    return
                cost -= self.main
                self.main = 0.0
                self.period, self.stones = c.period_time, c.period_stones
            self.period -= cost
            self.stones -= 1
            self.lost |= self.period < 0
            if self.stones == 0:
                self.period, self.stones = c.period_time, c.period_stones
        elif isinstance(c, JapaneseByoyomi):
            if cost < self.main:
                self.main -= cost
                return
            overrun, self.main = cost - self.main, 0.0
            used = int(overrun // c.period_time)
            self.periods -= used
            self.periods_lost += used
            self.lost |= self.periods <= 0

    def report(self, manager: TimeManager) -> None:
        """Tell the manager our time, as a GTP controller or the Gomocup manager would: truncated
        (here to milliseconds; GTP controllers send whole seconds)."""
        c = self.control
        if isinstance(c, Gomocup):
            ms = 2147483647 if self.main == math.inf else math.floor(self.main * 1000)
            manager.update_gomocup("time_left", str(ms))
        elif isinstance(c, CanadianByoyomi) and self.stones > 0:
            manager.update_time_left(str(math.floor(self.period * 1000) / 1000), self.stones)
        elif isinstance(c, JapaneseByoyomi) and self.main == 0:
            manager.update_time_left(str(c.period_time), str(self.periods))
        elif isinstance(c, (Absolute, Fischer, CanadianByoyomi, JapaneseByoyomi)):
            manager.update_time_left(str(math.floor(self.main * 1000) / 1000), "0")

    def assert_tracked_by(self, state: ClockState, moves: int, latency: float) -> None:
        """Our own account is never more optimistic than the controller's clock, and drifts from
        it by less than the latency it charges per move."""
        pairs = [(state.main_left, self.main)]
        if isinstance(self.control, CanadianByoyomi) and state.phase_known:
            assert state.stones_left == self.stones
            pairs.append((state.period_left, self.period))
        if isinstance(self.control, JapaneseByoyomi):
            assert state.periods_left == self.periods
        for ours, theirs in pairs:
            if theirs == math.inf:
                assert ours == math.inf
            else:
                assert theirs - moves * latency - 1e-9 <= ours <= theirs + 1e-9


def play_game(control: TimeControl, game: str, points: int, own_moves: int, *, seed: int,
              report: bool, usage: Callable[[random.Random], float] = lambda rng: 1.0,
              startup: float = 0.0) -> tuple[Referee, list[MoveBudget]]:
    """A game of `own_moves` of ours on a fake clock. The search thinks `usage` of its hard budget
    and runs up to the policy's overrun past it; the controller's clock adds a latency below the
    policy's. Reporting controllers send our time before each move, the others never do."""
    rng = random.Random(seed)
    clock = FakeClock()
    manager = TimeManager(control, now=clock, started_at=0.0)
    if report and isinstance(control, Gomocup):
        # A reporting Gomocup manager announces its limits by INFO, in milliseconds.
        manager = TimeManager(now=clock, started_at=0.0)
        for key, value in (("timeout_turn", control.turn_limit),
                           ("timeout_match", control.match_limit)):
            if value is not None:
                manager.update_gomocup(key, str(round(value * 1000)))
    clock.advance(startup)
    referee = Referee(control, startup)
    margin = DEFAULT.margin_for(control)
    budgets = []
    for k in range(own_moves):
        if report:
            referee.report(manager)
        budget = manager.start_move(moves_left(game, points, 2 * k))
        assert DEFAULT.min_budget <= budget.soft <= budget.hard
        budgets.append(budget)
        clock.advance(budget.hard * usage(rng) * (1 + rng.random() * margin.overrun))
        spent = manager.end_move()
        referee.play(spent + rng.random() * margin.latency)
        assert not referee.lost, f"lost on time at move {k + 1}: {referee.__dict__}"
        if not report:
            referee.assert_tracked_by(manager.state, k + 1, margin.latency)
        clock.advance(rng.random() * 3)  # the opponent thinks; our clock is stopped
    return referee, budgets


# -- time controls and parsers ------------------------------------------------------------------
@pytest.mark.parametrize("args, expected", [
    (("0", "1", "0"), NoTimeLimit()),              # GoGui's "no time limit"
    (("600", "30", "0"), NoTimeLimit()),
    (("600", "0", "0"), Absolute(600)),
    (("600", "0", "5"), Absolute(600)),            # no byo-yomi time: the stones mean nothing
    (("0", "0", "0"), Absolute(0)),
    (("600", "300", "25"), CanadianByoyomi(600, 300, 25)),
    (("0", "30", "1"), CanadianByoyomi(0, 30, 1)),
    ((900, 60.5, 10), CanadianByoyomi(900, 60.5, 10)),
])
def test_gtp_time_settings(args: tuple, expected: TimeControl) -> None:
    assert from_gtp_time_settings(*args) == expected


@pytest.mark.parametrize("args, message", [
    (("-1", "30", "5"), "main time must be >= 0"),
    (("600", "-30", "5"), "byo-yomi time must be >= 0"),
    (("600", "30", "-5"), "byo-yomi stones must be >= 0"),
    (("ten", "30", "5"), "main time must be a number"),
    (("600", "30", "2.5"), "byo-yomi stones must be a whole number"),
    (("inf", "30", "5"), "main time must be finite"),
    (("nan", "30", "5"), "main time must be finite"),
])
def test_gtp_time_settings_rejects(args: tuple, message: str) -> None:
    with pytest.raises(TimeControlError, match=message):
        from_gtp_time_settings(*args)


@pytest.mark.parametrize("args, expected", [
    (["none"], NoTimeLimit()),
    (["absolute", "600"], Absolute(600)),
    (["byoyomi", "600", "30", "5"], JapaneseByoyomi(600, 30, 5)),
    (["BYOYOMI", "0", "10", "1"], JapaneseByoyomi(0, 10, 1)),
    (["byoyomi", "600", "0", "0"], Absolute(600)),
    (["byoyomi", "600", "30", "0"], Absolute(600)),
    (["canadian", "600", "300", "25"], CanadianByoyomi(600, 300, 25)),
    (["canadian", "600", "300", "0"], NoTimeLimit()),
])
def test_kgs_time_settings(args: list[str], expected: TimeControl) -> None:
    assert from_kgs_time_settings(args) == expected


@pytest.mark.parametrize("args, message", [
    ([], "needs a time system"),
    (["fischer", "600", "5"], "unknown time system 'fischer'"),
    (["none", "5"], "none needs 0 values, got 1"),
    (["absolute"], "absolute needs 1 values, got 0"),
    (["byoyomi", "600", "30"], "byoyomi needs 3 values, got 2"),
    (["canadian", "600", "300", "25", "1"], "canadian needs 3 values, got 4"),
    (["absolute", "-5"], "main time must be >= 0"),
    (["canadian", "x", "300", "25"], "main time must be a number"),
    (["byoyomi", "600", "30", "-1"], "byo-yomi periods must be >= 0"),
    (["byoyomi", "600", "30", "two"], "byo-yomi periods must be a whole number"),
])
def test_kgs_time_settings_rejects(args: list[str], message: str) -> None:
    with pytest.raises(TimeControlError, match=message):
        from_kgs_time_settings(args)


@pytest.mark.parametrize("make, message", [
    (lambda: Absolute(-1), "main time must be >= 0"),
    (lambda: Fischer(60, -1), "increment must be >= 0"),
    (lambda: CanadianByoyomi(0, 0, 5), "period time must be > 0"),
    (lambda: CanadianByoyomi(0, 30, 0), "byo-yomi stones must be >= 1"),
    (lambda: JapaneseByoyomi(0, 30, 0), "byo-yomi periods must be >= 1"),
    (lambda: JapaneseByoyomi(0, -30, 5), "period time must be >= 0"),
    (lambda: FixedTimePerMove(0), "seconds per move must be > 0"),
    (lambda: FixedVisits(0), "visits must be >= 1"),
    (lambda: FixedVisits(2.5), "visits must be a whole number"),
    (lambda: Gomocup(turn_limit=-1), "timeout_turn must be >= 0"),
    (lambda: Gomocup(time_left=math.nan), "time_left must be finite"),
])
def test_controls_reject_bad_values(make: Callable[[], TimeControl], message: str) -> None:
    with pytest.raises(TimeControlError, match=message):
        make()


def test_controls_are_normalised_values() -> None:
    assert Absolute(600) == Absolute(600.0) and Absolute(600).main_time.__class__ is float
    assert hash(CanadianByoyomi(600, 300, 25)) == hash(CanadianByoyomi(600.0, 300.0, 25))
    assert FixedVisits(800.0).visits == 800
    with pytest.raises(AttributeError):
        Absolute(600).main_time = 5  # type: ignore[misc]


def test_gomocup_info() -> None:
    control = Gomocup().with_info("timeout_turn", "5000").with_info("timeout_match", "180000")
    assert control == Gomocup(5.0, 180.0)
    assert control.with_info("time_left", "-20").time_left == -0.02
    assert control.with_info("time_left", "2147483647").time_left == math.inf
    assert Gomocup(5.0, 0.0).match_time == math.inf  # 0: no match limit
    for key, value, message in [("timeout_turn", "-1", "timeout_turn must be >= 0"),
                                ("timeout_match", "1.5", "must be a whole number"),
                                ("time_left", "soon", "must be a whole number"),
                                ("max_memory", "0", "not a time setting")]:
        with pytest.raises(TimeControlError, match=message):
            control.with_info(key, value)


# -- the rules' account of a move ---------------------------------------------------------------
def charged(control: TimeControl, *moves: float) -> ClockState:
    state = control.start_state()
    for seconds in moves:
        state = control.charge(state, seconds)
    return state


def test_absolute_and_fischer_accounts() -> None:
    assert charged(Absolute(10), 3, 2.5) == ClockState(main_left=4.5)
    assert charged(Fischer(10, 5), 3) == ClockState(main_left=12)   # 10 - 3 + 5
    assert charged(Fischer(10, 5), 3, 8) == ClockState(main_left=9)
    assert charged(Fischer(10, 5), 11).main_left == -1  # flag fell: no increment after it


def test_canadian_account() -> None:
    control = CanadianByoyomi(10, 30, 5)
    assert charged(control) == ClockState(main_left=10)
    # 2 s run into the first period; that move is its first stone. Our own account cannot be
    # sure the controller's clock agrees where the period began.
    assert charged(control, 12) == ClockState(0, 28, 4, phase_known=False)
    assert charged(control, 10) == ClockState(0, 30, 4, phase_known=False)
    assert charged(control, 12, 5, 5, 5) == ClockState(0, 13, 1, phase_known=False)
    assert charged(control, 12, 5, 5, 5, 13) == ClockState(0, 30, 5, phase_known=False)
    assert charged(control, 12, 5, 5, 5, 14).period_left == -1          # lost
    # Starting in byo-yomi, the periods are the controller's.
    assert charged(CanadianByoyomi(0, 30, 5)) == ClockState(0, 30, 5)
    assert charged(CanadianByoyomi(0, 30, 5), 10, 10) == ClockState(0, 10, 3)
    assert charged(CanadianByoyomi(0, 30, 1), 29, 29) == ClockState(0, 30, 1)


def test_japanese_account() -> None:
    control = JapaneseByoyomi(10, 30, 3)
    assert charged(control, 4) == ClockState(6, 30, 0, 3)
    assert charged(control, 12) == ClockState(0, 30, 0, 3)   # 2 s into a period: kept
    assert charged(control, 40) == ClockState(0, 30, 0, 2)   # 30 s overrun: one period used
    assert charged(control, 10, 29.9) == ClockState(0, 30, 0, 3)
    assert charged(control, 10, 61) == ClockState(0, 30, 0, 1)
    assert charged(control, 10, 90).periods_left == 0         # all used: lost


def test_clockless_accounts() -> None:
    for control in (NoTimeLimit(), FixedTimePerMove(5), FixedVisits(100)):
        assert charged(control, 1000) == ClockState()


# -- budgets ------------------------------------------------------------------------------------
def first_budget(control: TimeControl, game: str = "go", points: int = 361,
                 policy: TimePolicy = DEFAULT) -> MoveBudget:
    return policy.budget(control, control.start_state(), moves_left(game, points, 0))


def test_plenty_of_time_is_used() -> None:
    budget = first_budget(Absolute(600))
    assert 600 / 150 < budget.soft < 600 / 140   # 145 moves of ours expected at 19x19
    assert budget.hard == pytest.approx(DEFAULT.hard_factor * budget.soft)
    assert first_budget(CanadianByoyomi(0, 300, 25)).soft == pytest.approx(12)  # 300 s / 25


def test_unlimited_and_fixed_budgets() -> None:
    assert first_budget(NoTimeLimit()) == MoveBudget(math.inf, math.inf)
    assert first_budget(NoTimeLimit()).unlimited
    assert first_budget(FixedVisits(800)) == MoveBudget(math.inf, math.inf, 800)
    assert not first_budget(FixedVisits(800)).unlimited
    fixed = first_budget(FixedTimePerMove(2))
    assert fixed.soft == fixed.hard == pytest.approx((2 - 0.05) / 1.02)


def test_early_stops_only_where_the_time_saved_is_kept() -> None:
    # Kept: main time, a Canadian period with stones to come, the Gomocup match; no clock at all.
    for control in (Absolute(600), Fischer(60, 5), CanadianByoyomi(0, 300, 25),
                    CanadianByoyomi(60, 2, 1), JapaneseByoyomi(60, 30, 5),
                    Gomocup(turn_limit=5, match_limit=60), NoTimeLimit(), FixedVisits(100)):
        assert first_budget(control).stop_early, control
    # Lost: a one-stone period (GTP `time_settings 0 2 1`, a match's "2 s a move"), a Japanese
    # period, a fixed time per move, a Gomocup turn limit with no match limit.
    for control in (CanadianByoyomi(0, 2, 1), JapaneseByoyomi(0, 30, 5), FixedTimePerMove(2),
                    Gomocup(turn_limit=5, match_limit=0)):
        assert not first_budget(control).stop_early, control
    # Main time over, the period's last stone: nothing saved now reaches the next move.
    canadian = CanadianByoyomi(0, 60, 3)
    state = canadian.charge(canadian.charge(canadian.start_state(), 10), 10)
    assert DEFAULT.budget(canadian, state, 40).stop_early is False
    assert DEFAULT.budget(canadian, canadian.start_state(), 40).stop_early is True


def test_safety_margin_bounds_every_limit() -> None:
    margin = DEFAULT.margin
    japanese = first_budget(JapaneseByoyomi(0, 30, 5))
    assert japanese.soft == japanese.hard == pytest.approx(margin.budget_within(30))
    assert margin.cost(japanese.hard) == pytest.approx(30)
    # Nearly out of sudden-death time with many moves to go: every later move keeps the cost of
    # the cheapest move.
    budget = DEFAULT.budget(Absolute(600), ClockState(main_left=2.5), 40)
    cheapest = margin.cost(DEFAULT.min_budget)
    assert margin.cost(budget.hard) == pytest.approx(2.5 - 39 * cheapest)
    assert budget.hard < DEFAULT.hard_factor * 2.5 / 40
    # Two stones to go in a Canadian period: the second keeps 1/hard_factor of its share.
    canadian = CanadianByoyomi(0, 30, 5)
    two = DEFAULT.budget(canadian, ClockState(0, 10, 2), 100)
    assert two.soft == 5 and margin.cost(two.hard) == pytest.approx(10 - 5 / DEFAULT.hard_factor)
    # The last stone may use the whole rest of its period.
    last = DEFAULT.budget(canadian, ClockState(0, 7.5, 1), 100)
    assert last.soft == last.hard == pytest.approx(margin.budget_within(7.5))
    # Where the periods begin is unknown: each stone keeps to its share, 30 s / 5.
    unplaced = DEFAULT.budget(canadian, ClockState(0, 25, 4, phase_known=False), 100)
    assert unplaced.soft == unplaced.hard == pytest.approx(margin.budget_within(6))


def test_japanese_main_time_runs_into_one_period_at_most() -> None:
    budget = DEFAULT.budget(JapaneseByoyomi(600, 30, 5), ClockState(2.0, 30, 0, 5), 50)
    assert budget.hard > 30
    assert DEFAULT.margin.cost(budget.hard) == pytest.approx(2 + 30)


def test_gomocup_budgets() -> None:
    turn = first_budget(Gomocup(turn_limit=0), "gomoku", 400)
    assert 0 < turn.soft == turn.hard == DEFAULT.min_budget   # "as fast as possible"
    five = first_budget(Gomocup(5, 0), "gomoku", 400)          # no match limit: the whole turn
    assert five.soft == five.hard == pytest.approx((5 - 0.15) / 1.05)
    match = first_budget(Gomocup(30, 180), "gomoku", 400)      # the match is the tighter limit
    assert match.soft == pytest.approx(180 / 16)                # 16 of a 32-ply game's moves
    assert first_budget(Gomocup(), "gomoku", 400).unlimited     # nothing announced


def test_budget_rejects_bad_estimate() -> None:
    for moves_left in (0, -3, math.nan):
        with pytest.raises(ValueError, match="moves_left must be > 0"):
            DEFAULT.budget(Absolute(60), ClockState(60), moves_left)


def test_policy_rejects_bad_settings() -> None:
    with pytest.raises(ValueError, match="hard_factor"):
        TimePolicy(hard_factor=0.5)
    with pytest.raises(ValueError, match="margins"):
        SafetyMargin(latency=-0.01, overrun=0)
    with pytest.raises(ValueError, match="soft <= hard"):
        MoveBudget(soft=2, hard=1)


# -- the manager --------------------------------------------------------------------------------
def test_manager_measures_and_charges_a_move() -> None:
    clock = FakeClock()
    manager = TimeManager(Absolute(60), now=clock)
    manager.start_move(20)
    clock.advance(1.5)
    assert manager.elapsed() == 1.5
    clock.advance(0.5)
    assert manager.end_move() == 2.0
    assert manager.state.main_left == pytest.approx(60 - 2.0 - DEFAULT.margin.latency)


def test_manager_rejects_unpaired_calls() -> None:
    manager = TimeManager(Absolute(60), now=FakeClock())
    with pytest.raises(RuntimeError, match="no move in progress"):
        manager.end_move()
    manager.start_move(10)
    with pytest.raises(RuntimeError, match="in progress"):
        manager.start_move(10)


def test_a_move_is_timed_from_its_command_arriving() -> None:
    """What happens before the search (a model loading, a ponder stopping) is on the
    controller's clock too: it comes off the budget, and the move is charged from arrival."""
    clock = FakeClock()
    manager = TimeManager(JapaneseByoyomi(0, 1, 1), policy=EXACT, now=clock)
    manager.command_received(clock())
    clock.advance(0.3)
    budget = manager.start_move(100)
    assert budget.hard == pytest.approx(0.7)
    clock.advance(0.7)
    assert manager.end_move() == pytest.approx(1.0)


def test_observed_latency_shortens_the_next_budgets() -> None:
    """The period is 1 s. A reply that went out 0.2 s after the search's limit is latency the
    margin did not allow for: the following moves keep 1.5 x 0.2 s back, until it ages out."""
    clock = FakeClock()
    manager = TimeManager(JapaneseByoyomi(0, 1, 1), now=clock)
    margin = manager.policy.margin
    usual = margin.budget_within(1.0)

    def move(search: float | None, reply_after: float) -> MoveBudget:
        """A move that searches `search` seconds (None: up to its hard limit), then replies
        `reply_after` seconds later."""
        manager.command_received(clock())
        budget = manager.start_move(100)
        clock.advance(budget.hard if search is None else search)
        manager.end_move()
        clock.advance(reply_after)
        manager.replied(clock())
        return budget

    first = move(None, 0.2)  # nothing measured yet: the initial guess is kept back
    initial = manager.policy.initial_latency
    assert first.hard == pytest.approx((1.0 - initial) / (1 + margin.overrun))
    assert manager.observed_latency == pytest.approx(0.3)
    second = move(0.5, 0.0)
    assert second.hard == pytest.approx((1.0 - 0.3) / (1 + manager.policy.margin.overrun))
    assert second.hard + 0.2 < 1.0  # the same delay again would still be in time
    for _ in range(LATENCY_WINDOW - 1):
        move(0.5, 0.0)  # the 0.2 s ages out of the window: the policy's own margin is left
    assert manager.observed_latency == 0.0
    assert move(0.5, 0.0).hard == pytest.approx(usual)


def test_a_reply_that_was_no_move_is_no_observation() -> None:
    clock = FakeClock()
    manager = TimeManager(JapaneseByoyomi(0, 1, 1), now=clock)
    manager.command_received(clock())
    clock.advance(5)
    manager.replied(clock())
    assert manager.observed_latency == 0.0
    assert manager.latency_reserve == manager.policy.initial_latency


def test_time_left_overrides_the_account() -> None:
    clock = FakeClock()
    manager = TimeManager(CanadianByoyomi(600, 300, 25), policy=EXACT, now=clock)
    manager.update_time_left("45", "3")
    assert manager.state == ClockState(0, 45, 3)
    assert manager.start_move(100).soft == pytest.approx(15)
    clock.advance(10)
    manager.end_move()
    assert manager.state == ClockState(0, 35, 2)
    manager.update_time_left(520.5, 0)
    assert manager.state == ClockState(520.5)


def test_bad_time_left_changes_nothing() -> None:
    manager = TimeManager(JapaneseByoyomi(600, 30, 5), now=FakeClock())
    before = manager.state
    for args, message in [(("soon", "0"), "time_left must be a number"),
                          (("30", "-1"), "stones must be >= 0"),
                          (("inf", "0"), "must be finite")]:
        with pytest.raises(TimeControlError, match=message):
            manager.update_time_left(*args)
        assert manager.state == before


def test_japanese_time_left_counts_periods() -> None:
    manager = TimeManager(JapaneseByoyomi(600, 30, 5), now=FakeClock())
    manager.update_time_left(30, 2)
    assert manager.state == ClockState(0, 30, 0, 2)
    manager.update_time_left(100, 0)
    assert manager.state == ClockState(100, 30, 0, 2)


def test_time_left_without_settings_adopts_a_clock() -> None:
    manager = TimeManager(now=FakeClock())
    manager.update_time_left(120, 0)
    assert manager.control == Absolute(120) and manager.state == ClockState(120)
    manager = TimeManager(now=FakeClock())
    manager.update_time_left(30, 5)
    assert manager.control == CanadianByoyomi(0, 30, 5)
    assert manager.state == ClockState(0, 30, 5)
    manager = TimeManager(FixedVisits(400), now=FakeClock())  # the user's choice stands
    manager.update_time_left(120, 0)
    assert manager.control == FixedVisits(400)


def test_gtp_time_left_does_not_apply_to_gomocup() -> None:
    manager = TimeManager(Gomocup(5, 180), now=FakeClock())
    with pytest.raises(TimeControlError, match="Gomocup"):
        manager.update_time_left(100, 0)


def test_gomocup_info_through_the_manager() -> None:
    manager = TimeManager(now=FakeClock())
    manager.update_gomocup("timeout_turn", "5000")
    manager.update_gomocup("timeout_match", "180000")
    assert manager.control == Gomocup(5, 180) and manager.state == ClockState(180)
    manager.update_gomocup("time_left", "170000")
    assert manager.state == ClockState(170)
    manager.update_gomocup("timeout_match", "120000")  # the report stands
    assert manager.state == ClockState(170) and manager.control.match_limit == 120
    manager.update_gomocup("time_left", "2147483647")
    assert manager.state == ClockState(math.inf)


def test_gomocup_startup_counts_against_the_match() -> None:
    clock = FakeClock()
    manager = TimeManager(Gomocup(5, 10), policy=EXACT, now=clock, started_at=0.0)
    clock.advance(3.0)  # loading the model
    manager.start_move(20)
    assert manager.state == ClockState(7.0)
    clock.advance(1.0)
    manager.end_move()
    clock.advance(2.0)  # the opponent's turn is not ours
    manager.start_move(20)
    assert manager.state == ClockState(6.0)

    reported = TimeManager(Gomocup(5, 10), policy=EXACT, now=clock, started_at=0.0)
    reported.update_gomocup("time_left", "9500")  # the manager's figure includes the start-up
    reported.start_move(20)
    assert reported.state == ClockState(9.5)


def test_fischer_gets_richer_with_increments() -> None:
    clock = FakeClock()
    manager = TimeManager(Fischer(10, 5), now=clock)
    budgets = []
    for k in range(10):
        budgets.append(manager.start_move(moves_left("go", 81, 2 * k)))
        clock.advance(1.0)
        manager.end_move()
    assert manager.state.main_left == pytest.approx(10 + 10 * (5 - 1 - DEFAULT.margin.latency))
    assert budgets[-1].soft > budgets[0].soft + 1


# -- how long a game goes on --------------------------------------------------------------------
#: Typical plies left after `played` moves on `points` points: stand-ins for the games' own
#: estimates (`Game.plies_left`, tested in test_game_knowledge.py) that drive the clock here.
PLIES_LEFT = {
    "go": lambda points, played: max(0.8 * points - played, 0.2 * points),
    "othello": lambda points, played: points - 4 - played,
    "gomoku": lambda points, played: min(max(32 - played, 28), points - played),
}


def moves_left(game: str, points: int, played: int) -> float:
    return expected_moves_left(PLIES_LEFT[game](points, played))


@pytest.mark.parametrize("name, size", [("go", 9), ("go", 19), ("othello", 8), ("gomoku", 15)])
def test_stand_ins_are_the_games_estimates(name: str, size: int) -> None:
    # The simulated games below test the estimates they stand in for only while they equal
    # them: Gomoku's stand-in was once far more generous than the game's own estimate.
    game, rng = new_game(name, size), random.Random(0)
    for _ in range(40):
        stand_in = PLIES_LEFT[name](game.num_points, len(game.moves))
        assert stand_in == pytest.approx(game.plies_left())
        game.play(rng.choice(game.legal_moves().tolist()))
        if game.is_over():
            break


def test_expected_moves_left_counts_every_other_ply_from_now() -> None:
    assert expected_moves_left(60) == 30
    assert expected_moves_left(3) == 2      # three plies left, two of them ours
    assert expected_moves_left(0.5) == 1
    assert expected_moves_left(0) == 1      # the move asked for is always one
    assert expected_moves_left(288.8) == 145
    with pytest.raises(ValueError):
        expected_moves_left(-1)


# -- simulated games: never lose on time --------------------------------------------------------
GAMES = [
    pytest.param(Absolute(600), "go", 361, 150, id="absolute-19x19"),
    pytest.param(Absolute(60), "othello", 64, 30, id="absolute-othello"),
    pytest.param(Absolute(30), "go", 81, 33, id="absolute-9x9-30s"),
    pytest.param(CanadianByoyomi(300, 300, 25), "go", 361, 200, id="canadian"),
    pytest.param(CanadianByoyomi(5, 10, 10), "go", 81, 120, id="canadian-1s-per-stone"),
    pytest.param(JapaneseByoyomi(300, 30, 5), "go", 361, 200, id="japanese"),
    pytest.param(JapaneseByoyomi(1, 0.5, 1), "go", 81, 100, id="japanese-one-short-period"),
    pytest.param(Fischer(60, 2), "go", 361, 200, id="fischer"),
    pytest.param(Fischer(1, 0.1), "go", 361, 200, id="fischer-bullet"),
    pytest.param(FixedTimePerMove(1.0), "gomoku", 225, 100, id="fixed-time"),
    pytest.param(Gomocup(5, 180), "gomoku", 400, 50, id="gomocup-freestyle"),
    pytest.param(Gomocup(30, 120), "gomoku", 225, 40, id="gomocup-match-bound"),
    pytest.param(Gomocup(2, 0), "gomoku", 225, 100, id="gomocup-turn-only"),
]


@pytest.mark.parametrize("report", [True, False], ids=["reported", "own-account"])
@pytest.mark.parametrize("control, game, points, moves", GAMES)
def test_full_hard_budget_never_loses(control: TimeControl, game: str, points: int, moves: int,
                                      report: bool) -> None:
    for seed in range(3):
        referee, budgets = play_game(control, game, points, moves, seed=seed, report=report,
                                     startup=1.5 if isinstance(control, Gomocup) else 0.0)
        assert referee.periods_lost == 0
        assert all(b.hard < math.inf for b in budgets)


def test_canadian_own_account_keeps_to_the_share_per_stone() -> None:
    """Our account charges a latency the controller may not: it can see main time run out one
    move early, and start its periods one stone before the controller's. Spending a period as if
    we knew where it began would then lose."""
    control = CanadianByoyomi(2, 10, 2)
    policy = TimePolicy(margin=SafetyMargin(latency=0.5, overrun=0.0))
    clock = FakeClock()
    manager = TimeManager(control, policy=policy, now=clock)
    referee = Referee(control)
    for searched in [1.6, None, None, None, None, None]:   # None: the whole hard budget
        budget = manager.start_move(100)
        clock.advance(budget.hard if searched is None else searched)
        referee.play(manager.end_move())                  # the controller sees no latency
        assert not referee.lost
    # 2.1 s on our account, 1.6 s on the controller's: we believe we are in byo-yomi, it does not.
    assert not manager.state.phase_known
    assert manager.start_move(100).hard == pytest.approx(10 / 2 - 0.5)


# -- properties ---------------------------------------------------------------------------------
renewable_controls = st.one_of(
    st.builds(CanadianByoyomi, st.floats(0, 600), st.floats(1, 600), st.integers(1, 25)).filter(
        lambda c: c.period_time / c.period_stones >= 0.1),
    st.builds(JapaneseByoyomi, st.floats(0, 600), st.floats(0.1, 60), st.integers(1, 5)),
    st.builds(Fischer, st.floats(0.1, 600), st.floats(0.1, 30)),
)
any_control = st.one_of(
    renewable_controls,
    st.builds(Absolute, st.floats(0, 3600)),
    st.builds(FixedTimePerMove, st.floats(0.01, 60)),
    st.builds(Gomocup, st.one_of(st.none(), st.floats(0, 60)), st.one_of(st.none(),
                                                                        st.floats(0, 3600))),
)


@settings(deadline=None)
@given(control=renewable_controls, moves=st.integers(1, 300), report=st.booleans(),
       usage=st.floats(0, 1), seed=st.integers(0, 2**16))
def test_byoyomi_and_increments_last_any_game(control: TimeControl, moves: int, report: bool,
                                              usage: float, seed: int) -> None:
    """Clocks that renew per move are never lost, however long the game and however the search
    uses its budget."""
    play_game(control, "go", 361, moves, seed=seed, report=report,
              usage=lambda rng: usage if rng.random() < 0.5 else 1.0)


@given(control=any_control, moves=st.lists(st.floats(0, 100), max_size=30),
       moves_left=st.floats(0.5, 500))
def test_budget_is_within_the_limit(control: TimeControl, moves: list[float],
                                    moves_left: float) -> None:
    state = control.start_state()
    for seconds in moves:
        state = control.charge(state, seconds)
    budget = DEFAULT.budget(control, state, moves_left)
    assert DEFAULT.min_budget <= budget.soft <= budget.hard
    margin = DEFAULT.margin_for(control)
    limit = control.allowance(state, max(moves_left, DEFAULT.min_moves_left)).limit
    if margin.budget_within(limit) >= DEFAULT.min_budget:
        assert margin.cost(budget.hard) <= limit + 1e-9
