"""UCI's `go` parameters and the clock's controls they make; the score and wdl of info lines."""
from __future__ import annotations

import math

import pytest

from saz.engine.search.clock import (
    Fischer,
    FixedTimePerMove,
    FixedVisits,
    NoTimeLimit,
    TimeManager,
    TimePolicy,
)
from saz.protocol.uci_go import GoParams, MovesToGo, WithVisits, parse_go, time_control
from saz.protocol.uci_info import centipawns, mate_moves, score_text, wdl_text

BIG = 1 << 62


def words(text: str) -> list[str]:
    return text.split()


def control(text: str, white: bool = True) -> object:
    return time_control(parse_go(words(text)), white=white, until_stopped_visits=BIG,
                        default=NoTimeLimit())


def test_cutechess_go() -> None:
    go = parse_go(words("wtime 60000 btime 59000 winc 100 binc 200"))
    assert go == GoParams(wtime=60000, btime=59000, winc=100, binc=200)
    assert not go.problems and not go.until_stopped
    assert go.clock(True) == (60000, 100) and go.clock(False) == (59000, 200)


def test_python_chess_go_every_keyword() -> None:
    # The order python-chess's _go writes them in.
    go = parse_go(words("ponder wtime 1000 btime 2000 winc 10 binc 20 movestogo 5 depth 7 "
                        "nodes 800 mate 3 movetime 500 infinite searchmoves e2e4 d2d4"))
    assert go == GoParams(1000, 2000, 10, 20, 5, 500, 800, 7, 3, True, True, ("e2e4", "d2d4"))


def test_searchmoves_anywhere() -> None:
    go = parse_go(words("searchmoves e2e4 g1f3 movetime 100"))
    assert go.searchmoves == ("e2e4", "g1f3") and go.movetime == 100


@pytest.mark.parametrize("text, problem", [
    ("wtime", "go wtime needs a whole number"),
    ("wtime abc btime 10", "go wtime needs a whole number, got 'abc'"),
    ("nodes -5", "go nodes needs a whole number, got '-5'"),
    ("depth \uff19", "go depth needs a whole number"),
    ("movetime " + "9" * 5000, "go movetime needs a whole number"),
    ("fast", "go: unknown word 'fast' ignored"),
    ("depth 0", "go depth 0 means nothing"),
])
def test_bad_words_are_problems_not_errors(text: str, problem: str) -> None:
    go = parse_go(words(text))
    assert any(p.startswith(problem) for p in go.problems), go.problems


def test_a_bad_number_does_not_swallow_the_next_keyword() -> None:
    go = parse_go(words("wtime btime 500"))
    assert go.wtime is None and go.btime == 500


def test_negative_clock_is_kept() -> None:
    assert parse_go(words("wtime -20 btime 100")).wtime == -20


def test_controls() -> None:
    assert control("wtime 60000 btime 1000 winc 500 binc 0") == Fischer(60.0, 0.5)
    assert control("wtime 60000 btime 1000 winc 500 binc 0", white=False) == Fischer(1.0, 0.0)
    assert control("wtime 30000 btime 1 movestogo 10") == MovesToGo(30.0, 0.0, 10)
    assert control("movetime 250 wtime 60000") == FixedTimePerMove(0.25)
    assert control("nodes 400") == FixedVisits(400)
    assert control("wtime 5000 nodes 400") == WithVisits(Fischer(5.0, 0.0), 400)
    assert control("infinite") == FixedVisits(BIG)
    assert control("depth 5") == FixedVisits(BIG)
    assert control("mate 2") == FixedVisits(BIG)
    assert control("depth 5 movetime 100") == FixedTimePerMove(0.1)
    assert control("wtime -50 btime 100") == Fischer(0.0, 0.0)
    assert control("") == NoTimeLimit()


def test_movestogo_shares_the_bank_over_the_moves_to_go() -> None:
    clock = TimeManager(MovesToGo(10.0, 0.0, 4), policy=TimePolicy(), now=lambda: 0.0)
    budget = clock.start_move(40.0)
    # Five shares (four moves and one in reserve), not forty.
    assert budget.soft == pytest.approx(2.0)
    assert budget.hard < 10.0 - 2.0  # the later moves keep their share
    clock.end_move()
    last = TimeManager(MovesToGo(10.0, 0.0, 1), now=lambda: 0.0).start_move(40.0)
    assert last.soft == pytest.approx(5.0) and last.hard < 10.0


def test_with_visits_caps_a_clock() -> None:
    budget = TimeManager(WithVisits(Fischer(5.0, 0.0), 300), now=lambda: 0.0).start_move(20.0)
    assert budget.max_visits == 300 and budget.hard < 5.0


# -- scores ------------------------------------------------------------------------------------
def test_centipawns_are_lc0s_monotone_map() -> None:
    assert centipawns(0.0) == 0
    assert centipawns(0.5) == -centipawns(-0.5)
    assert centipawns(0.5) == 89  # Lc0's: about a pawn at 75% expected score
    values = [v / 100 for v in range(-100, 101)]
    cps = [centipawns(v) for v in values]
    assert cps == sorted(cps) and len(set(cps)) == len(cps)
    assert centipawns(2.0) == centipawns(1.0) < 20_000
    assert math.isfinite(centipawns(1.0))


def test_mate_from_the_proven_line() -> None:
    assert mate_moves(1, True) == 1  # our mating move
    assert mate_moves(3, True) == 2
    assert mate_moves(2, False) == -1  # we move, they mate
    assert mate_moves(4, False) == -2
    assert score_text(1.0, 3, proven=True) == "mate 2"
    assert score_text(-1.0, 2, proven=True) == "mate -1"
    assert score_text(0.0, 6, proven=True) == "cp 0"
    assert score_text(1.0, 3, proven=False).startswith("cp ")


def test_wdl_sums_to_a_thousand() -> None:
    assert wdl_text(1.0, True) == "1000 0 0"
    assert wdl_text(-1.0, True) == "0 0 1000"
    assert wdl_text(0.0, True) == "0 1000 0"
    assert wdl_text(0.2, False) == "600 0 400"
    assert wdl_text(0.2, False, (0.5, 0.2, 0.3)) == "500 200 300"
    for value in (-0.73, 0.0, 0.333, 0.999):
        for wdl in (None, (0.1, 0.8, 0.1), (0.6666, 0.3334, 0.0)):
            assert sum(map(int, wdl_text(value, False, wdl).split())) == 1000
