"""`saz bench pool` (tools/bench/pool.py): the trainer's self-play pool, positions a second for
each worker count."""
from __future__ import annotations

import pytest

from saz.tools.bench.cli import main


def test_one_row_per_worker_count(tiny_model, capsys: pytest.CaptureFixture[str]) -> None:
    model = tiny_model("gomoku").path
    capsys.readouterr()  # the export's own report
    assert main(["pool", "--game", "gomoku", "--size", "9", "--visits", "16", "--games", "8",
                 "--games-in-flight", "4", "--workers", "1", "--model", str(model)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split("|")[1].strip() == "workers"
    rows = [[cell.strip() for cell in line.split("|")[1:-1]] for line in out[2:]]
    assert len(rows) == 1
    workers, games, positions, seconds, rate, evaluations = rows[0]
    assert workers == "1" and int(games) >= 8
    # A game lasts at least 9 moves: a five needs five stones of one colour.
    assert int(positions) >= 9 * int(games)
    assert float(seconds) > 0  # printed to 0.1 s: the rate is checked to that precision
    low, high = int(positions) / (float(seconds) + 0.05), int(positions) / (float(seconds) - 0.05)
    assert low <= float(rate) <= high
    assert int(evaluations) > 0


def test_bad_worker_counts_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["pool", "--workers", "1,x"])
    assert exit_.value.code == 2
    assert "expected counts such as 1,2" in capsys.readouterr().err
