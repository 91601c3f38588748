"""`saz bench pressure` (tools/bench/pressure.py): the loser's turns under threat in records.

An open three is the smallest threat with a known answer: blocked at either end next to it, it
is only ever a four that one more block stops; blocked a point further out, or left alone, it
becomes an open four. The real records are `aiwine_records` (conftest.py): game 6 of
docs/matches/gomoku-threats-rootfix-vs-aiwine-15x15, lost by saz as White.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from saz.engine.games import WHITE
from saz.engine.games.gomoku import Gomoku
from saz.engine.search.mcts import opponent_threatens
from saz.tools.bench.cli import main
from saz.tools.bench.pressure import candidates, read_defence, safe_moves

#: Black's open three on row 7 (x = 5, 6, 7), White's stones in two corners; then White plays
#: away (0, 1), Black makes the open four and fives through White's late block.
_GAME = ((5, 7), (0, 0), (6, 7), (14, 14), (7, 7), (0, 1), (8, 7), (4, 7), (9, 7))


def _play(plies: int) -> Gomoku:
    game = Gomoku(15)
    for x, y in _GAME[:plies]:
        game.play(game.point(x, y))
    return game


def test_an_open_three_is_answered_only_next_to_its_ends() -> None:
    game = _play(5)
    assert opponent_threatens(game, 100_000)
    safe, looked_at = safe_moves(game, 100_000, 10_000)
    assert set(safe) == {game.point(4, 7), game.point(8, 7)}
    # 25-point squares round each stone, clipped at the edges, less the stones: the three's
    # squares overlap (7 x 5 = 35), each corner's holds 9.
    assert looked_at == len(candidates(game)) == (35 - 3) + (9 - 1) + (9 - 1)
    # With two Black stones in a row there is nothing to answer yet.
    assert not opponent_threatens(_play(3), 100_000)


def test_candidates_do_not_wrap_round_the_board() -> None:
    game = Gomoku(15)
    game.play(game.point(0, 0))
    assert sorted(candidates(game)) == sorted(game.point(x, y) for x in range(3) for y in range(3)
                                              if (x, y) != (0, 0))


def _white_turns(first_ply: int) -> list[tuple[Gomoku, int]]:
    """White's turns of `_GAME` from `first_ply` on, as `read_defences` takes them from a
    record's `Replay`: each position before its move, and the move."""
    game, turns = Gomoku(15), []
    for x, y in _GAME:
        move = game.point(x, y)
        if game.to_move == WHITE and len(game.moves) >= first_ply:
            turns.append((game.copy(), move))
        game.play(move)
    return turns


def test_the_walk_back_stops_at_the_last_quiet_turn() -> None:
    game = _play(0)
    read = read_defence(Path("x.sgf"), _white_turns(0), WHITE, len(_GAME), 100_000, 10_000)
    assert read.last_quiet == 3
    assert [(t.ply, len(t.safe), t.played) for t in read.turns] == [
        (7, 0, game.point(4, 7)),  # the open four: nothing saves White
        (5, 2, game.point(0, 1))]  # the open three: two answers, and White played neither
    assert read.unsafe_with_safe_standing == (5,)
    assert [t.missed for t in read.turns] == [False, True]
    # Plies of the random opening are never judged: with only the turns after six plies, the
    # walk has no quiet turn to stop at.
    late = read_defence(Path("x.sgf"), _white_turns(6), WHITE, len(_GAME), 100_000, 10_000)
    assert (late.last_quiet, [t.ply for t in late.turns]) == (None, [7])
    assert (late.color, late.plies) == (WHITE, 9)


def test_the_table_of_a_real_loss(aiwine_records: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pressure", "--records", str(aiwine_records), "--player", "saz-rootfix",
                 "--judge", "200000", "--screen", "50000"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 5  # header, rule, the one lost game (6), blank, summary
    # White was under threat from ply 7 on, when it still had twelve safe moves and played
    # none of them (the position `saz bench guard` replays: tests/test_bench_guard.py).
    assert out[2].split("|")[1:] == [f" {aiwine_records.name}/0006.sgf ", " White ", " 21 ",
                                     " 5 ", " 19:0/97 17:0/94 15:0/79 13:0/74 11:0/69 9:1/65 "
                                     "7:12/62! ", ""]
    assert out[-1] == ("1 game lost by saz-rootfix, judged at 200000 positions: 7 turns under "
                       "threat, a safe move standing at 2, played at 1; an unsafe move played "
                       "while a safe one stood: 1")
    # Game 1 was won: asked for alone, there is nothing to read.
    assert main(["pressure", "--records", str(aiwine_records), "--player", "saz-rootfix",
                 "--games", "1"]) == 1
    assert "no game lost by saz-rootfix" in capsys.readouterr().out
