"""`saz seeds`: one experiment repeated with several seeds, as the paper reports it: the mean score
and its standard error over the repeats.

    saz seeds runs/paper-gomoku-s1 runs/paper-gomoku-s2 runs/paper-gomoku-s3

Each is a `saz match --out PATH` record (its summary, PATH.json) of the same two arms trained from
a different seed. A single match's Elo interval says how sure one pairing of networks is; it says
nothing about how much a second training run would differ. The spread between seeds does: the
standard error here is the sample standard deviation of the per-seed scores over the square root of
their count (n - 1 in the deviation), so it needs at least two repeats. The pooled record and its
Elo are printed as well, for comparison with single matches.

This module imports no torch.
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from saz.tools.match.elo import Record, estimate
from saz.tools.match.strength import StrengthError, StrengthRow, read_record


@dataclass(frozen=True)
class Repeats:
    """The per-seed matches of one experiment and what they say together."""

    rows: tuple[StrengthRow, ...]

    def __post_init__(self) -> None:
        if len(self.rows) < 2:
            raise StrengthError("a standard error needs at least two repeats")

    @property
    def scores(self) -> list[float]:
        """Each repeat's score of the first engine: (wins + draws / 2) / games."""
        return [(r.wins + r.draws / 2) / r.games for r in self.rows]

    @property
    def mean(self) -> float:
        return statistics.fmean(self.scores)

    @property
    def standard_error(self) -> float:
        return statistics.stdev(self.scores) / math.sqrt(len(self.rows))

    @property
    def pooled(self) -> Record:
        return Record(wins=sum(r.wins for r in self.rows), draws=sum(r.draws for r in self.rows),
                      losses=sum(r.losses for r in self.rows))

    def markdown(self) -> str:
        lines = ["| record | engine | opponent | board | W-L-D | score |",
                 "|---|---|---|---|---|---:|"]
        for row, score in zip(self.rows, self.scores, strict=True):
            lines.append(f"| `{row.record}` | {row.engine} | {row.opponent} | {row.board} | "
                         f"{row.wld} | {100 * score:.1f}% |")
        pooled = self.pooled
        lines.append(f"\nmean score {100 * self.mean:.1f}% ± {100 * self.standard_error:.1f}% "
                     f"(standard error over {len(self.rows)} seeds); pooled "
                     f"{pooled} (W-L-D), Elo {estimate(pooled)}")
        return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="saz seeds",
        description="Mean score and its standard error over matches that repeat one "
                    "experiment with different seeds (each a saz match --out PATH record).")
    parser.add_argument("records", nargs="+", type=Path, metavar="PATH",
                        help="match records, one per seed, the same arm first in each")
    args = parser.parse_args(argv)
    try:
        repeats = Repeats(tuple(read_record(d) for d in args.records))
    except StrengthError as exc:
        print(f"saz seeds: {exc}", file=sys.stderr)
        return 2
    print(repeats.markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main())
