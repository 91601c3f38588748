"""`saz bench threats` (tools/bench/threats.py): the positions it takes from match records.

The record is real: game 6 of the match gomoku-threats-rootfix-vs-aiwine-15x15, the second of
the two games in `tests/data` (`conftest.AIWINE_GAMES`).
"""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import AIWINE_GAMES

from saz.protocol.sgf import game_trees
from saz.tools.bench.cli import main
from saz.tools.bench.threats import positions


@pytest.fixture
def records(tmp_path: Path) -> Path:
    """A folder holding game 6 alone, as a file of its own."""
    (tmp_path / "0006.sgf").write_text(game_trees(AIWINE_GAMES.read_text())[1])
    return tmp_path


def test_every_open_position_with_enough_stones_and_no_forced_move(records: Path) -> None:
    found = positions([records], min_stones=6, limit=400)
    assert found, "game 6 has open positions"
    for game in found:
        assert (game.width, game.height) == (15, 15)
        assert len(game.moves) >= 6 and not game.is_over()
        assert not game.winning_moves() and game.forced_moves() is None
    plies = [len(game.moves) for game in found]
    assert plies == sorted(set(plies))  # one position a ply, in the game's order
    assert [len(g.moves) for g in positions([records], 6, 2)] == plies[:2]


def test_a_record_with_setup_stones_is_refused(records: Path) -> None:
    path = records / "0006.sgf"
    path.write_text(path.read_text().replace(";B[", ";AB[aa];B[", 1))
    with pytest.raises(ValueError, match="setup stones are not supported"):
        positions([records], min_stones=6, limit=400)


def test_the_three_searches_over_the_positions(records: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """`saz bench threats` end to end: each search a row, its finds at most the positions."""
    assert main(["threats", "--records", str(records), "--limit", "5", "--budget", "5000",
                 "--leaf-budget", "200"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("5 positions from ")
    assert out[0].endswith("; VCT budget 5000, leaf budget 200")
    rows = {cells[0]: cells[1:] for cells in ([c.strip() for c in line.split("|")[1:-1]]
                                             for line in out[3:])}
    assert list(rows) == ["VCT (root)", "VCF (leaf)", "opponent VCF + defences (leaf)"]
    for name, (found, median, slowest, rate) in rows.items():
        assert 0 <= int(found) <= 5
        assert 0 <= float(median) <= float(slowest) + 0.005  # median to 1 µs, slowest to 10 µs
        # the defence search reports no positions visited: no rate
        assert rate == "-" if name.startswith("opponent") else float(rate.replace(",", "")) > 0


def test_records_without_an_open_position_are_an_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["threats", "--records", str(tmp_path)]) == 1
    assert capsys.readouterr().out.startswith("no positions found in")
