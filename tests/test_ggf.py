"""GGF records (protocol/ggf.py): real GGS games read and replayed, the writer's round trip,
non-standard start positions, clocks, and malformed text rejected with a reason."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from saz.engine.games.base import BLACK, WHITE
from saz.engine.games.othello import Othello
from saz.protocol.ggf import (
    GgfClock,
    GgfError,
    GgfGame,
    GgfMove,
    clock_seconds,
    format_clock,
    format_ggf,
    format_ggf_collection,
    from_game,
    parse_clock,
    parse_ggf,
    parse_ggf_collection,
    to_game,
)

#: Three games of GGS's Saio from NTest's test games (src/resource/TestGames.ggf): the first
#: as GGS writes it, the second with Black's `pass`, the third with upper-case moves and `PA`.
DATA = Path(__file__).parent / "data" / "ntest-testgames.ggf"
NBOARD = ("(;GM[Othello]PC[NBoard]DT[2014-02-21 20:52:27 GMT]PB[./mEdax]PW[chris]RE[?]TI[15:00]"
          "TY[8]BO[8 ---------------------------O*------*O--------------------------- *]"
          "B[F5]W[F6]B[D3];)")


def _margin(game: Othello) -> int:
    black, white = game.disc_count()
    return black - white


def test_real_ggs_games_replay_to_their_recorded_result() -> None:
    games = parse_ggf_collection(DATA.read_text())
    assert len(games) == 3
    for ggf in games:
        assert ggf.size == 8 and ggf.to_move == BLACK and ggf.tags["GM"] == "Othello"
        game = to_game(ggf)
        assert game.is_over()
        assert _margin(game) == float(ggf.tags["RE"])
    first = games[0]
    assert first.tags["PB"] == "Saio1200" and first.tags["TI"] == "05:00//02:00"
    assert first.moves[0] == GgfMove("d3", None, 0.01)
    assert first.moves[7] == GgfMove("d2", 2.39, 0.01) and first.colors[7] == WHITE
    assert [m.move for m in games[1].moves if m.is_pass] == ["pass"]
    assert [m.move for m in games[2].moves if m.is_pass] == ["PA"]


def test_nboard_game_reads_and_replays() -> None:
    ggf = parse_ggf(NBOARD)
    assert [m.move for m in ggf.moves] == ["F5", "F6", "D3"]
    assert ggf.colors == (BLACK, WHITE, BLACK)
    assert ggf.tags["PW"] == "chris" and ggf.tags["RE"] == "?"
    game = to_game(ggf)
    assert game.to_move == WHITE and game.disc_count() == (5, 2)


@pytest.mark.parametrize("index", [0, 1, 2])
def test_round_trip_of_real_games(index: int) -> None:
    ggf = parse_ggf_collection(DATA.read_text())[index]
    text = format_ggf(ggf)
    assert parse_ggf(text) == ggf
    assert format_ggf(parse_ggf(text)) == text


def test_collection_round_trip_and_engine_game_round_trip() -> None:
    rng = np.random.default_rng(3)
    games = []
    for size in (8, 10):
        game = Othello(size)
        while not game.is_over():
            game.play(int(rng.choice(game.legal_moves())))
        evals: list[float | None] = [None if i % 3 else i / 4 - 2 for i in range(len(game.moves))]
        seconds: list[float | None] = [0.25 * (i % 5) for i in range(len(game.moves))]
        games.append(from_game(game, {"PC": "saz", "PB": "a", "PW": "b", "TI": "1:00",
                                      "RE": f"{_margin(game):+d}"}, evals=evals, seconds=seconds))
        replayed = to_game(games[-1])
        assert replayed.moves == game.moves and replayed.colors() == game.colors()
    text = format_ggf_collection(games)
    assert text.count("\n") == 2
    assert parse_ggf_collection(text) == games
    assert "BO[10 " in text and all(move.move[0] in "ABCDEFGHIJP" for move in games[1].moves)


def test_non_standard_start_position() -> None:
    # Black's corner and edge set up; White to move. Not reachable by play from the start.
    rows = ["*-------", "--------", "--------", "---OOO--",
            "---*O---", "--------", "--------", "-------O"]
    board = "".join(rows)
    ggf = GgfGame(8, board, WHITE, (GgfMove("C5"), GgfMove("PA")), (WHITE, BLACK),
                  {"PB": "x", "PW": "y"})
    text = format_ggf(ggf)
    assert "BO[8 " + board + " O]" in text
    back = parse_ggf(text)
    assert back == ggf
    game = to_game(parse_ggf(text.replace("B[PA]", "")))  # the start only, then W's move
    start, first = game.start_position()
    assert first == WHITE and start[0] == BLACK and start[63] == WHITE
    assert game.board[4 * 8 + 3] == WHITE  # C5 (x 2, y 4) turned D5 over


def test_a_pass_left_out_of_the_record_is_played() -> None:
    # White cannot move at all here: Black's two moves in a row read as Black, (pass), Black.
    board = "".join(["*O------", "--------", "--------", "--------",
                     "--------", "--------", "--------", "-------*"])
    ggf = parse_ggf(f"(;GM[Othello]BO[8 {board} *]B[C1];)")
    game = to_game(ggf)
    assert game.disc_count() == (4, 0) and game.is_over()


def test_moves_the_position_forbids_are_errors() -> None:
    with pytest.raises(GgfError, match=r"move 2 \(White F5\) is illegal"):
        to_game(parse_ggf(NBOARD.replace("W[F6]", "W[F5]")))
    with pytest.raises(GgfError, match=r"move 2 \(Black D6\): White is to move"):
        to_game(parse_ggf(NBOARD.replace("W[F6]", "B[D6]")))
    with pytest.raises(GgfError, match=r"illegal"):
        to_game(parse_ggf(NBOARD.replace("W[F6]", "W[PA]")))


@pytest.mark.parametrize("text, message", [
    ("", "expected one GGF game, found 0"),
    (NBOARD + NBOARD, "expected one GGF game, found 2"),
    ("GM[Othello]", "starts with '\\(;'"),
    (NBOARD[:-2], "no end"),
    (NBOARD.replace("BO[", "XO["), "no board"),
    (NBOARD.replace("B[F5]", "B[Z9]"), "off the 8x8 board"),
    (NBOARD.replace("B[F5]", "B[F5/x]"), "evaluation 'x' is not a number"),
    (NBOARD.replace("B[F5]", "B[F5/1/2/3]"), "move/eval/seconds"),
    (NBOARD.replace("B[F5]", "B[55]"), "not a move"),
    (NBOARD.replace("B[F5]", "B[F5//1:xx]"), "not a number"),
    (NBOARD.replace(" *]", " X]"), "side to move"),
    (NBOARD.replace("BO[8 -", "BO[8 "), "64 cells"),
    (NBOARD.replace("BO[8", "BO[eight"), "board size"),
    (NBOARD.replace("BO[8", "BO[88"), "octagonal"),
    (NBOARD.replace("PW[chris]", "PW[chris]PB[again]"), "PB appears twice"),
    (NBOARD.replace("PW[chris]", "PW[chris"), "no closing"),
    (NBOARD.replace("TY[8]", "ty[8]"), "expected a tag"),
    (NBOARD.replace(";)", "; x"), "';' without '\\)'"),
])
def test_malformed_text_is_rejected_with_a_reason(text: str, message: str) -> None:
    with pytest.raises(GgfError, match=message):
        parse_ggf(text)


def test_writer_refuses_what_ggf_cannot_hold() -> None:
    ggf = parse_ggf(NBOARD)
    with pytest.raises(GgfError, match="cannot hold"):
        format_ggf(GgfGame(8, ggf.board, BLACK, tags={"PB": "a]b"}))
    with pytest.raises(GgfError, match="line break"):
        format_ggf(GgfGame(8, ggf.board, BLACK, tags={"CO": "two\nlines"}))
    with pytest.raises(GgfError, match="record's own"):
        format_ggf(GgfGame(8, ggf.board, BLACK, tags={"B": "F5"}))
    with pytest.raises(GgfError, match="cells"):
        GgfGame(8, ggf.board[:-1], BLACK)


def test_clocks() -> None:
    assert parse_clock("05:00//02:00") == GgfClock(300, 0, 120)
    assert parse_clock("15:00") == GgfClock(900)
    assert parse_clock("0//2:00") == GgfClock(0, 0, 120)
    assert parse_clock("1:00:00/5") == GgfClock(3600, 5)
    assert parse_clock("1.2:00:00") == GgfClock(86400 + 7200)
    assert format_clock(GgfClock(300, 0, 120)) == "5:00//2:00"
    assert format_clock(GgfClock(3725, 2)) == "1:02:05/2"
    assert format_clock(GgfClock(30)) == "30"
    for clock in (GgfClock(300, 0, 120), GgfClock(3725, 2), GgfClock(30), GgfClock(60, 1)):
        assert parse_clock(format_clock(clock)) == clock
    first = parse_ggf_collection(DATA.read_text())[0]
    black = sum(m.seconds or 0 for m, c in zip(first.moves, first.colors) if c == BLACK)
    assert clock_seconds(first, BLACK) == pytest.approx(300 - black)
    white = sum(m.seconds or 0 for m, c in zip(first.moves, first.colors) if c == WHITE)
    assert clock_seconds(first, WHITE) == pytest.approx(300 - white)
    # Past the flag the grace is added once, then the clock stays at 0.
    slow = parse_ggf(NBOARD.replace("TI[15:00]", "TI[1:00//30]").replace("B[F5]", "B[F5//80]"))
    assert clock_seconds(slow, BLACK) == pytest.approx(10)
    slower = parse_ggf(slow_text := format_ggf(slow).replace("B[D3]", "B[D3//20]"))
    assert clock_seconds(slower, BLACK) == 0 and "B[D3//20]" in slow_text
    assert clock_seconds(parse_ggf(NBOARD), WHITE) == 900
    ggf = parse_ggf(NBOARD.replace("TI[15:00]", "TB[1:00/2]TW[30]"))
    assert clock_seconds(ggf, BLACK) == 64 and clock_seconds(ggf, WHITE) == 30
    assert clock_seconds(parse_ggf(NBOARD.replace("TI[15:00]", "")), BLACK) is None
    with pytest.raises(GgfError, match="not a time"):
        parse_clock("1:2:3:4")
