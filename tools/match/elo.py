"""Match statistics: a win-draw-loss record, its Elo difference with a 95% interval, and the SPRT.

Everything is from the first player's view and uses the logistic Elo model, in which a rating
difference `e` gives the expected score `s = 1 / (1 + 10 ** (-e / 400))`, and so
`e = -400 * log10(1 / s - 1)`.

**Elo and its interval** (as cutechess-cli reports them). The games are independent trials whose
score is 1, 1/2 or 0. With the fractions `w, d, l` of wins, draws and losses over `N` games the mean
score is `s = w + d / 2` and the per-game variance `var = w (1 - s)^2 + d (1/2 - s)^2 + l s^2`.
The score's 95% interval is `s -+ 1.96 * sqrt(var / N)` (normal approximation), mapped through
the Elo formula (so the Elo interval is not symmetric). A perfect or nil score has no variance
and an infinite Elo; its open side is then bounded by the exact binomial (Clopper-Pearson) bound
instead: after `N` straight losses the score is below `1 - 0.025 ** (1 / N)` with 95% confidence
(-140 Elo after 10 games).

**SPRT** (as fishtest computes it). The generalised sequential probability ratio test of
H0: `elo = elo0` against H1: `elo = elo1` on the trinomial results: the log-likelihood ratio is
`LLR = N * sum_i p_i * log(p1_i / p0_i)` where `p_i` is the observed frequency of score `a_i` and
`pk` is the distribution closest to it (maximum likelihood) whose mean score is `sk` (the score of
`elok`): `pk_i = p_i / (1 + x (a_i - sk))`, with `x` the root of `sum_i p_i (a_i - sk) /
(1 + x (a_i - sk)) = 0` (M. Van den Bergh, "Computing the LLR", the method of fishtest's
LLRcalc). Frequencies with a zero count get a small prior (`1e-3` games spread over the three
results), as fishtest does, so that the logarithms stay finite. The test stops with H1 accepted
once `LLR >= log((1 - beta) / alpha)`, with H0 accepted once `LLR <= log(beta / (1 - alpha))`;
`alpha = beta = 0.05` gives the bounds -+2.944.
"""
from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from statistics import NormalDist

#: The scores of a loss, a draw and a win.
_SCORES = (0.0, 0.5, 1.0)
#: The prior mixed into results with an empty category (fishtest's regularisation), in games.
_PRIOR = 1e-3


def elo_of_score(score: float) -> float:
    """The Elo difference whose expected score is `score` (0 -> -inf, 1 -> +inf)."""
    if not 0.0 <= score <= 1.0:
        raise ValueError(f"a score is a fraction of the points, not {score}")
    if score == 0.0:
        return -math.inf
    if score == 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def score_of_elo(elo: float) -> float:
    """The expected score of a player `elo` points stronger."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


@dataclass(frozen=True)
class Record:
    """Wins, draws and losses of the first player."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    def __post_init__(self) -> None:
        if min(self.wins, self.draws, self.losses) < 0:
            raise ValueError(f"a record counts games: {self}")

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        return self.wins + 0.5 * self.draws

    @property
    def score(self) -> float:
        """Points per game (a draw counts half); ValueError before the first game."""
        if not self.games:
            raise ValueError("no games played: the record has no score")
        return self.points / self.games

    def plus(self, points: float) -> Record:
        """This record after one more game scoring `points` (1, 0.5 or 0)."""
        if points == 1.0:
            return Record(self.wins + 1, self.draws, self.losses)
        if points == 0.5:
            return Record(self.wins, self.draws + 1, self.losses)
        if points == 0.0:
            return Record(self.wins, self.draws, self.losses + 1)
        raise ValueError(f"a game scores 1, 0.5 or 0, not {points}")

    def reversed(self) -> Record:
        """The same games from the other player's view."""
        return Record(self.losses, self.draws, self.wins)

    def frequencies(self) -> tuple[float, float, float]:
        """The fractions of losses, draws and wins (the order of `_SCORES`)."""
        n = self.games
        return self.losses / n, self.draws / n, self.wins / n

    def __str__(self) -> str:
        """W-L-D, as match runners print it."""
        return f"{self.wins}-{self.losses}-{self.draws}"


@dataclass(frozen=True)
class EloEstimate:
    """An Elo difference and its confidence interval (bounds may be infinite)."""

    elo: float
    lower: float
    upper: float
    confidence: float

    def __str__(self) -> str:
        return f"{_signed(self.elo)} [{_signed(self.lower)}, {_signed(self.upper)}]"


def _signed(elo: float) -> str:
    # round() first: an even score computes to -1e-14 or so, which "+.0f" would print as "-0".
    return f"{round(elo):+d}" if math.isfinite(elo) else ("+inf" if elo > 0 else "-inf")


def estimate(record: Record, confidence: float = 0.95) -> EloEstimate:
    """The Elo difference of `record` and its two-sided `confidence` interval (module
    docstring); ValueError before the first game."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence is a probability, not {confidence}")
    s, n = record.score, record.games
    tail = (1.0 - confidence) / 2.0
    if s in (0.0, 1.0):  # no variance: the exact binomial bound for the open side
        bound = 1.0 - tail ** (1.0 / n)
        low, high = (0.0, bound) if s == 0.0 else (1.0 - bound, 1.0)
    else:
        variance = sum(p * (a - s) ** 2 for a, p in zip(_SCORES, record.frequencies()))
        half_width = NormalDist().inv_cdf(1.0 - tail) * math.sqrt(variance / n)
        low, high = max(0.0, s - half_width), min(1.0, s + half_width)
    return EloEstimate(elo_of_score(s), elo_of_score(low), elo_of_score(high), confidence)


class Verdict(enum.Enum):
    """Where an SPRT stands."""

    CONTINUE = "continue"
    #: elo = elo0 accepted (the first player is not `elo1` stronger).
    H0 = "H0"
    #: elo = elo1 accepted.
    H1 = "H1"


@dataclass(frozen=True)
class Sprt:
    """The test of H0: elo = elo0 against H1: elo = elo1 with error rates alpha and beta."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not self.elo0 < self.elo1:
            raise ValueError(f"the SPRT needs elo0 < elo1, got {self.elo0}, {self.elo1}")
        if not (0.0 < self.alpha < 0.5 and 0.0 < self.beta < 0.5):
            raise ValueError(f"alpha and beta are error rates in (0, 0.5), got {self.alpha}, "
                             f"{self.beta}")

    @property
    def lower_bound(self) -> float:
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper_bound(self) -> float:
        return math.log((1.0 - self.beta) / self.alpha)

    def llr(self, record: Record) -> float:
        """The generalised log-likelihood ratio of H1 against H0 (0 before any game)."""
        if not record.games:
            return 0.0
        counts: list[float] = [record.losses, record.draws, record.wins]
        n = record.games
        if 0 in counts:
            counts = [c * (1.0 - _PRIOR / n) + _PRIOR / len(counts) for c in counts]
        total = sum(counts)
        observed = [c / total for c in counts]
        s0, s1 = score_of_elo(self.elo0), score_of_elo(self.elo1)
        ll0 = _log_likelihood(observed, _closest(observed, s0))
        ll1 = _log_likelihood(observed, _closest(observed, s1))
        return n * (ll1 - ll0)

    def verdict(self, record: Record) -> Verdict:
        llr = self.llr(record)
        if llr >= self.upper_bound:
            return Verdict.H1
        if llr <= self.lower_bound:
            return Verdict.H0
        return Verdict.CONTINUE

    def __str__(self) -> str:
        return f"SPRT elo0={self.elo0:g} elo1={self.elo1:g} alpha={self.alpha:g} " \
               f"beta={self.beta:g}"


def _closest(observed: list[float], mean: float) -> list[float]:
    """The distribution over `_SCORES` of mean score `mean` that maximises the likelihood of
    the `observed` frequencies: `p_i / (1 + x (a_i - mean))`, solving for `x` by bisection.

    The left-hand side `f(x) = sum p_i (a_i - mean) / (1 + x (a_i - mean))` falls from +inf to
    -inf between the poles `-1 / (1 - mean)` and `1 / mean`, so it has one root there."""
    deviations = [a - mean for a in _SCORES]

    def f(x: float) -> float:
        return sum(p * d / (1.0 + x * d) for p, d in zip(observed, deviations))

    low, high = -1.0 / (1.0 - mean), 1.0 / mean
    for _ in range(200):
        middle = (low + high) / 2.0
        if middle in (low, high):
            break
        if f(middle) > 0.0:
            low = middle
        else:
            high = middle
    x = (low + high) / 2.0
    return [p / (1.0 + x * d) for p, d in zip(observed, deviations)]


def _log_likelihood(observed: list[float], model: list[float]) -> float:
    return sum(p * math.log(q) for p, q in zip(observed, model) if p > 0.0)


__all__ = ["EloEstimate", "Record", "Sprt", "Verdict", "elo_of_score", "estimate",
           "score_of_elo"]
