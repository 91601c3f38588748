"""The run's metrics CSV: a resumed session with another config keeps the run's history."""
from __future__ import annotations

from pathlib import Path

from saz.tools.train.metrics import MetricsLog, columns_for, plies_column


def test_a_resume_with_fewer_sizes_keeps_the_dropped_sizes_columns(tmp_path: Path) -> None:
    path = tmp_path / "metrics.csv"
    before = columns_for(["eval_previous_9x9"], [plies_column((5, 5)), plies_column((9, 9))])
    first = MetricsLog(path, before)
    first.append({"generation": 1, "games": 100, "plies_5x5": 35.5, "plies_9x9": 98,
                  "eval_previous_9x9": 0.5})
    first.append({"generation": 2, "games": 100, "plies_5x5": 36, "plies_9x9": 97})

    # The next session draws 9x9 and 7x7 only and evaluates nothing: generation 2 was lost.
    after = MetricsLog(path, columns_for([], [plies_column((7, 7)), plies_column((9, 9))]))
    after.load(up_to=1)
    after.append({"generation": 2, "games": 100, "plies_7x7": 60, "plies_9x9": 99})

    lines = path.read_text().splitlines()
    assert lines[0].split(",") == list(before) + ["plies_7x7"]
    header = lines[0].split(",")
    rows = [dict(zip(header, line.split(","))) for line in lines[1:]]
    assert [r["generation"] for r in rows] == ["1", "2"]
    assert (rows[0]["plies_5x5"], rows[0]["eval_previous_9x9"], rows[0]["plies_7x7"]) == \
        ("35.5", "0.5", "")
    assert (rows[1]["plies_5x5"], rows[1]["plies_7x7"], rows[1]["plies_9x9"]) == ("", "60", "99")
