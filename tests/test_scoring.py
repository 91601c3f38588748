"""`saz scoring`: reading final_score replies and game records, and a count against GNU Go."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from saz.tools.match.adapters import resolve_program
from saz.tools.match.scoring import Count, go_records, how_it_ended, main, parse_score, summary

MATCHES = Path(__file__).resolve().parent.parent / "docs" / "matches"


@pytest.mark.parametrize("reply,margin", [("B+3.5", 3.5), ("W+12", -12.0), ("0", 0.0),
                                          (" W+0.5 ", -0.5)])
def test_final_score_replies_parse_to_blacks_margin(reply: str, margin: float) -> None:
    assert parse_score(reply) == margin


@pytest.mark.parametrize("reply", ["B+R", "Jigo", "", "B+", "X+3"])
def test_anything_else_is_not_a_score(reply: str) -> None:
    with pytest.raises(ValueError, match="not a final_score reply"):
        parse_score(reply)


def test_records_say_how_their_games_ended(tmp_path: Path) -> None:
    for name, result in (("a", "B+R"), ("b", "W+12.5"), ("c", "B+Time"), ("d", "0")):
        (tmp_path / f"{name}.sgf").write_text(f"(;GM[1]SZ[9]RE[{result}];B[ee])")
    (tmp_path / "gomoku.sgf").write_text("(;GM[4]SZ[15]RE[B+];B[hh])")
    records = go_records([tmp_path])
    assert [r.stem for r in records] == ["a", "b", "c", "d"]
    assert [how_it_ended(r) for r in records] == ["resign", "score", "time", "?"]


def test_the_summary_counts_winners_and_margins() -> None:
    counts = [Count(Path("a"), 3.5, 3.5, "score"), Count(Path("b"), 3.5, 1.5, "score"),
              Count(Path("c"), -0.5, 2.5, "resign")]
    table = summary(counts)
    assert "| all | 3 | 2 (67%) | 1 (33%) |" in table
    assert "| ended by resign | 1 | 0 (0%) | 0 (0%) |" in table


def test_saz_counts_finished_games_as_gnu_go_does(capsys: pytest.CaptureFixture[str]) -> None:
    try:
        resolve_program("gnugo")
    except ValueError:
        pytest.skip("gnugo is not installed (apt-get install -y gnugo)")
    # Games the greedy player lost to GNU Go, played out to the end: every stone counts.
    folder = MATCHES / "greedy-vs-gnugo-9x9"
    engine = f"{sys.executable} -m saz.engine.cli gtp --player greedy"
    assert main([str(folder), "--engine", engine]) == 0
    table = capsys.readouterr().out
    assert "| all | 10 | 10 (100%) |" in table
