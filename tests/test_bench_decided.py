"""`saz bench decided` (tools/bench/decided.py): the first win by threats of each side in records.

The records are real: docs/matches/gomoku-threats-rootfix-vs-aiwine-15x15, game 1, which saz won
as Black, and game 6, which it lost to AIWine as White (Black's threats stood from ply 7 on, with
White to move: `tests/test_bench_guard.py`).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from saz.engine.games import BLACK, WHITE
from saz.protocol.sgf import SgfGame, parse_sgf
from saz.tools.bench.cli import main
from saz.tools.bench.decided import read_game, read_games
from saz.tools.match.match import OPENING_NOTE


def test_each_games_first_win_by_threats(aiwine_records: Path) -> None:
    saz = read_games([aiwine_records], "saz-rootfix", 500_000)
    assert [(g.record.name, g.color, g.winner, g.plies, g.first_own, g.first_other)
            for g in saz] == [("0001.sgf", BLACK, BLACK, 31, 16, None),
                              ("0006.sgf", WHITE, BLACK, 21, None, 8)]
    assert all(g.winner_was_first and not g.let_go_own and not g.let_go_other for g in saz)
    # The same games from AIWine's side: the sides swap, the plies stay.
    aiwine = read_games([aiwine_records], "aiwine", 500_000)
    assert [(g.color, g.first_own, g.first_other) for g in aiwine] == [(WHITE, None, 16),
                                                                       (BLACK, 8, None)]
    assert read_games([aiwine_records], "nobody", 500_000) == []


def _record(moves: str, opening: int) -> SgfGame:
    """A 15x15 freestyle record of `moves` ("B[fh];W[aa];..."), its first `opening` plies
    random, as `saz match` writes it."""
    note = f"GC[no result{OPENING_NOTE.format(opening)}]" if opening else ""
    return parse_sgf(f"(;FF[4]GM[4]SZ[15]RU[freestyle]PB[b]PW[w]{note};{moves})")


def test_a_win_let_go_is_reported_at_the_ply_it_stood() -> None:
    """Black's open three with Black to move (ply 6) wins; Black plays in the corner instead,
    White blocks one end, and at ply 8 the three is a dead one."""
    moves = "B[fh];W[aa];B[gh];W[ab];B[hh];W[ac];B[oo];W[eh];B[nn];W[ih]"
    read = read_game(Path("x.sgf"), _record(moves, 0), BLACK, 100_000)
    assert (read.plies, read.winner) == (10, None)
    assert (read.first_own, read.let_go_own) == (6, (6,))
    assert (read.first_other, read.let_go_other) == (None, ())
    assert not read.winner_was_first  # no winner
    # The random opening is not judged: with six plies of it, Black's win shows from ply 6 on
    # just the same, and with seven it is never seen.
    assert read_game(Path("x.sgf"), _record(moves, 6), BLACK, 100_000).first_own == 6
    late = read_game(Path("x.sgf"), _record(moves, 7), BLACK, 100_000)
    assert (late.first_own, late.let_go_own) == (None, ())
    # From White's side the same game swaps the columns.
    white = read_game(Path("x.sgf"), _record(moves, 0), WHITE, 100_000)
    assert (white.first_other, white.let_go_other, white.first_own) == (6, (6,), None)


def test_the_table(aiwine_records: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decided", "--records", str(aiwine_records), "--player", "saz-rootfix",
                 "--judge", "500000"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2].split("|")[2:7] == [" Black ", " won ", " 31 ", " 16 ", " - "]
    assert out[3].split("|")[2:7] == [" White ", " lost ", " 21 ", " - ", " 8 "]
    assert out[-1] == ("2 games, 1 won by saz-rootfix, judged at 500000 positions: the winner "
                       "was first to a win by threats in 2; a win by threats was let go in 0")


def test_a_player_not_in_the_records_is_an_error(aiwine_records: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decided", "--records", str(aiwine_records), "--player", "nobody"]) == 1
    assert "no game of nobody" in capsys.readouterr().out
