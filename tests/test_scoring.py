"""`saz scoring`: reading final_score replies and game records, and a count against GNU Go."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import DATA
from saz.tools.match.adapters import resolve_program
from saz.tools.match.scoring import Count, go_records, how_it_ended, main, parse_score, summary


@pytest.mark.parametrize("reply,margin", [("B+3.5", 3.5), ("W+12", -12.0), ("0", 0.0),
                                          (" W+0.5 ", -0.5)])
def test_final_score_replies_parse_to_blacks_margin(reply: str, margin: float) -> None:
    assert parse_score(reply) == margin


@pytest.mark.parametrize("reply", ["B+R", "Jigo", "", "B+", "X+3"])
def test_anything_else_is_not_a_score(reply: str) -> None:
    with pytest.raises(ValueError, match="not a final_score reply"):
        parse_score(reply)


def test_records_say_how_their_games_ended(tmp_path: Path) -> None:
    for name, result in (("a", "B+R"), ("b", "W+12.5"), ("c", "B+Time")):
        (tmp_path / f"{name}.sgf").write_text(f"(;GM[1]SZ[9]RE[{result}];B[ee])")
    # A collection: the Gomoku game in it is skipped, the two games of Go kept in their places.
    (tmp_path / "d.sgf").write_text("(;GM[1]SZ[9]RE[0];B[ee])\n(;GM[4]SZ[15]RE[B+];B[hh])\n"
                                    "(;GM[1]SZ[9]RE[W+F];B[ee])\n")
    records = go_records([tmp_path])
    assert [r.where for r in records] == [f"{tmp_path.as_posix()}/{name}" for name in (
        "a.sgf#1", "b.sgf#1", "c.sgf#1", "d.sgf#1", "d.sgf#3")]
    assert [how_it_ended(r) for r in records] == ["resign", "score", "time", "?", "forfeit"]


def test_the_summary_counts_winners_and_margins() -> None:
    counts = [Count("a#1", 3.5, 3.5, "score"), Count("a#2", 3.5, 1.5, "score"),
              Count("b#1", -0.5, 2.5, "resign")]
    table = summary(counts)
    assert "| all | 3 | 2 (67%) | 1 (33%) |" in table
    assert "| ended by resign | 1 | 0 (0%) | 0 (0%) |" in table


def test_saz_counts_finished_games_as_gnu_go_does(capsys: pytest.CaptureFixture[str]) -> None:
    try:
        resolve_program("gnugo")
    except ValueError:
        pytest.skip("gnugo is not installed (apt-get install -y gnugo)")
    # The ten games the greedy player lost to GNU Go at 9x9, played out to the end: every stone
    # counts (one SGF collection).
    engine = f"{sys.executable} -m saz.engine.cli gtp --player greedy"
    assert main([str(DATA / "greedy-vs-gnugo-9x9.sgf"), "--engine", engine]) == 0
    table = capsys.readouterr().out
    assert "| all | 10 | 10 (100%) |" in table
