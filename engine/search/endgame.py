"""The endgame planner: when the search hands a position to the exact solver, and with how many
nodes.

Where a game has an exact endgame solver (`Solvable`: Othello), a solved root is a perfect move
and a solved leaf a proof that travels up the tree; an unsolved attempt is time lost. The planner
decides from two things it measures, not from a fixed number of empty points:

* the solver's **rate**, positions a second, from the root solves it ran (a geometric moving
  average of those that took long enough to time; seeded by `DEFAULT_RATE`, a loaded core's);
* the **nodes a solve needs** at E empty points, per mode (win/draw/loss, exact margin): a line
  in log space, log n = a + b (E - 18), fitted by ridge regression to the solves it ran (a
  solve that ran out counts as needing twice its budget) and pulled towards the seed
  (`SEED_WLD`, `SEED_EXACT`, measured on 8x8 by `saz bench solve`). The slope b is the growth
  per empty point.

At the root (`plan_root`, `solve_root`): the solve may spend `ROOT_SHARE` of the move's soft
time (`SearchLimits.soft_seconds`; without a clock, a visit cap or an analysis,
`NO_CLOCK_SECONDS`). A win/draw/loss solve is tried when its estimate fits in that, with the
whole share as its time (the solver's own clock stops it there); then an exact solve: when the
root is won or drawn, always, within `PROVEN_SHARE` of the time (the proof's move is played if
it runs out); when lost, if its estimate fits in what is left of the share. A solve that runs
out leaves the rest of the move's time to the tree search, which gets at least the other
`1 - ROOT_SHARE` of it unless the root was proven won or drawn.

In the tree (`leaf_threshold`): a new leaf is solved (win/draw/loss) when the estimate costs no
more than one network evaluation of a leaf, as the search measured it (`note_search`; seeded by
`DEFAULT_LEAF_SECONDS`, a CPU's), so that the proofs it settles travel up the tree
(docs/ARCHITECTURE.md, the MCTS-solver).

Board sizes: the estimates are in empty points, the solver's depth, on every board; the rate
adapts to the larger boards' slower multi-word bitboards.
"""
from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from saz.engine.games.capabilities import Solution, Solvable

#: Positions a second the planner assumes before it timed a solve: a loaded desktop core
#: (docs/BENCHMARKS.md measured 15-18M on an idle one).
DEFAULT_RATE = 5_000_000.0
#: Seconds of one network evaluation per leaf before the search measured one (a CPU's).
DEFAULT_LEAF_SECONDS = 0.001
#: (nodes at 18 empty points, growth per empty point) of each mode before any solve: 8x8
#: random-play positions, about twice their median (`saz bench solve`).
SEED_WLD = (100_000.0, 2.2)
SEED_EXACT = (3_000_000.0, 2.4)
#: The share of the move's soft time a root solve may take; the search keeps the rest.
ROOT_SHARE = 0.6
#: Once the root is proven won or drawn, the share of the soft time the exact solve may take
#: in all: the search would only choose among moves the proof already beats or matches.
PROVEN_SHARE = 0.9
#: The time a root solve may take without a clock (visit caps, analysis, pondering).
NO_CLOCK_SECONDS = 1.0
#: Solves shorter than this are not timed for the rate (their set-up dominates).
MIN_TIMED_SECONDS = 0.02
#: The empty points the fitted line is centred on (the seeds' point).
_PIVOT = 18
#: Solves each mode's fit remembers.
_WINDOW = 32
#: Ridge weights pulling the fit towards the seed: the offset as two solves, the slope as
#: about two solves five empty points from the pivot.
_PRIOR_OFFSET = 2.0
_PRIOR_SLOPE = 50.0
#: The growth per empty point a fit may claim.
_MIN_GROWTH, _MAX_GROWTH = 1.5, 4.0
#: The weight of a new timing in the rate's log-average.
_RATE_WEIGHT = 0.3


class NodeModel:
    """Nodes one solve mode needs by empty points: log n = a + b (E - 18), fitted to the solves
    seen and pulled towards a seed (see the module docstring)."""

    def __init__(self, seed: tuple[float, float]) -> None:
        self._a0 = math.log(seed[0])
        self._b0 = math.log(seed[1])
        self.offset, self.slope = self._a0, self._b0
        self._seen: deque[tuple[int, float]] = deque(maxlen=_WINDOW)

    def nodes(self, empties: int) -> float:
        """The estimated nodes of a solve at `empties` empty points."""
        return math.exp(self.offset + self.slope * (empties - _PIVOT))

    @property
    def growth(self) -> float:
        """The estimated growth of a solve's nodes per empty point."""
        return math.exp(self.slope)

    def observe(self, empties: int, nodes: float) -> None:
        """A solve at `empties` took `nodes` positions: refit."""
        self._seen.append((empties, math.log(max(nodes, 1.0))))
        # Ridge regression with the seed as prior: minimise the squared residuals plus
        # weighted squared distances of (a, b) from (a0, b0); the normal equations are 2x2.
        sxx = _PRIOR_SLOPE
        sx = 0.0
        n = _PRIOR_OFFSET
        sy = _PRIOR_OFFSET * self._a0
        sxy = _PRIOR_SLOPE * self._b0
        for e, y in self._seen:
            x = e - _PIVOT
            n += 1
            sx += x
            sxx += x * x
            sy += y
            sxy += x * y
        det = n * sxx - sx * sx
        a = (sy * sxx - sx * sxy) / det
        b = (n * sxy - sx * sy) / det
        self.slope = min(max(b, math.log(_MIN_GROWTH)), math.log(_MAX_GROWTH))
        if self.slope != b:  # clamped: the offset that fits best with that slope
            a = (sy - self.slope * sx) / n
        self.offset = a


@dataclass(frozen=True)
class RootPlan:
    """What `plan_root` decided for a root with some empty points and a time budget."""

    #: Try the win/draw/loss solve, within `nodes` positions.
    wld: bool
    #: Seconds the root's solves may take in all (`ROOT_SHARE` of the move's time).
    seconds: float
    #: The nodes the rate says `seconds` allow (the solves get twice that, and the clock).
    nodes: int
    #: The estimated seconds of each mode.
    wld_seconds: float
    exact_seconds: float


@dataclass(frozen=True)
class RootSolve:
    """What the root's solves proved. `solution` is the exact one when `exact`, else only the
    win/draw/loss one; `seconds` the time they took."""

    solution: Solution
    exact: bool
    seconds: float


class EndgamePlanner:
    """The measured solver rate and node estimates, and the decisions made from them (see the
    module docstring). One per search tree; `now` is the clock the solves are timed by (a fake
    one in tests)."""

    def __init__(self, *, rate: float = DEFAULT_RATE,
                 leaf_seconds: float = DEFAULT_LEAF_SECONDS,
                 wld: NodeModel | None = None, exact: NodeModel | None = None,
                 now: Callable[[], float] = time.perf_counter) -> None:
        self.rate = rate
        self.leaf_seconds = leaf_seconds
        self.wld = wld or NodeModel(SEED_WLD)
        self.exact = exact or NodeModel(SEED_EXACT)
        self._now = now

    def model(self, exact: bool) -> NodeModel:
        return self.exact if exact else self.wld

    def seconds(self, empties: int, exact: bool) -> float:
        """The estimated seconds of one solve at `empties` empty points."""
        return self.model(exact).nodes(empties) / self.rate

    # -- decisions --------------------------------------------------------------------------------
    @staticmethod
    def root_seconds(soft_seconds: float | None, share: float = ROOT_SHARE) -> float:
        """The time the root's solves may take: `share` of the move's soft time, or
        `NO_CLOCK_SECONDS` without a clock."""
        if soft_seconds is None or not math.isfinite(soft_seconds):
            return NO_CLOCK_SECONDS
        return share * max(0.0, soft_seconds)

    def plan_root(self, empties: int, soft_seconds: float | None) -> RootPlan:
        """Whether to solve a root with `empties` empty points when the move has `soft_seconds`
        (None: no clock), and the first solve's node budget."""
        seconds = self.root_seconds(soft_seconds)
        wld_s, exact_s = self.seconds(empties, False), self.seconds(empties, True)
        return RootPlan(wld_s <= seconds, seconds, int(self.rate * seconds), wld_s, exact_s)

    def leaf_budget(self) -> int:
        """The node budget of one leaf's solve: what one network evaluation of a leaf costs in
        solver time."""
        return max(1, int(self.rate * self.leaf_seconds))

    def leaf_threshold(self, max_empties: int) -> int:
        """The most empty points at which a new leaf's win/draw/loss solve is estimated to cost no
        more than one network evaluation (0: none), at most `max_empties`."""
        budget = self.leaf_budget()
        empties = 0
        while empties < max_empties and self.wld.nodes(empties + 1) <= budget:
            empties += 1
        return empties

    # -- measurement ------------------------------------------------------------------------------
    def note_solve(self, empties: int, exact: bool, nodes: int, seconds: float,
                   solved: bool) -> None:
        """One solve ran: `nodes` positions in `seconds`, finished or out of budget."""
        self.model(exact).observe(empties, nodes if solved else 2.0 * nodes)
        if seconds >= MIN_TIMED_SECONDS and nodes > 0:
            measured = nodes / seconds
            self.rate = math.exp((1 - _RATE_WEIGHT) * math.log(self.rate)
                                 + _RATE_WEIGHT * math.log(measured))

    def note_search(self, evaluated: int, eval_seconds: float) -> None:
        """A search evaluated `evaluated` leaves in `eval_seconds` of network time."""
        if evaluated >= 16 and eval_seconds > 0:
            self.leaf_seconds = 0.5 * self.leaf_seconds + 0.5 * eval_seconds / evaluated

    # -- the root ---------------------------------------------------------------------------------
    def _timed(self, game: Solvable, empties: int, seconds: float, exact: bool
               ) -> tuple[Solution | None, float]:
        """One solve within `seconds` (the solver's own clock stops it) and twice the nodes
        the rate says they allow (a rate measured low does not cut it short); measured."""
        start = self._now()
        nodes = max(1, int(2 * self.rate * seconds))
        solution = game.solve(nodes, exact=exact, max_seconds=seconds)
        seconds = self._now() - start
        spent = solution.nodes if solution is not None else nodes
        self.note_solve(empties, exact, spent, seconds, solution is not None)
        return solution, seconds

    def solve_root(self, game: Solvable, soft_seconds: float | None) -> RootSolve | None:
        """Solve `game` as `plan_root` decides: win/draw/loss, then the exact margin in the time
        left of `PROVEN_SHARE` of the soft time once the root is proven won or drawn, or, when
        lost, of `ROOT_SHARE` if its estimate fits there. None when no solve was tried or the first
        ran out: the search then has the move's time that is left."""
        empties = game.num_empty
        plan = self.plan_root(empties, soft_seconds)
        if not plan.wld:
            return None
        wld, spent = self._timed(game, empties, plan.seconds, False)
        if wld is None or wld.move is None:
            return None
        share = PROVEN_SHARE if wld.result >= 0 else ROOT_SHARE
        left = self.root_seconds(soft_seconds, share) - spent
        # Once won or drawn, the exact solve costs nothing the search would use (the proof's
        # move is played if it runs out): tried whatever the estimate. Once lost, only when the
        # estimate fits, since the search then plays on.
        if left > 0 and (wld.result >= 0 or self.seconds(empties, True) <= left):
            exact, took = self._timed(game, empties, left, True)
            spent += took
            if exact is not None and exact.move is not None:
                return RootSolve(exact, True, spent)
        return RootSolve(wld, False, spent)

    def solve_children(self, game: Solvable, moves: list[int], seconds: float
                       ) -> dict[int, int]:
        """The exact final margin, for `game`'s side to move, after each of `moves`, as far as
        `seconds` go (analysis: the N best moves with their margins). Solved in the order
        given; the first that runs out ends it, and the moves not reached are left out."""
        margins: dict[int, int] = {}
        start = self._now()
        empties = game.num_empty - 1
        for move in moves:
            left = seconds - (self._now() - start)
            if left <= 0:
                break
            child = game.copy()
            child.play(move)
            solution, _ = self._timed(child, empties, left, True)
            if solution is None:
                break
            margins[move] = solution.margin * (1 if child.to_move == game.to_move else -1)
        return margins
