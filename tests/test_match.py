"""`saz match`: the statistics, the clocks, the SGF records, every referee decision against
scripted fake engines (`tests/fakes/`), the match's schedule and output, and short real matches
against GNU Go and gtp-rhino (skipped when they are not installed)."""
from __future__ import annotations

import io
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from saz.engine.games import BLACK, DRAW, WHITE, new_game
from saz.protocol.sgf import game_trees, parse_sgf
from saz.protocol.sgf_writer import SgfInfo, format_sgf
from saz.protocol.vertex import vertices_for
from saz.tools.match.adapters import EngineSpec, GameSetup, SetupRefused, resolve_program
from saz.tools.match.elo import Record, Sprt, Verdict, elo_of_score, estimate, score_of_elo
from saz.tools.match.match import (
    MatchConfig,
    MatchError,
    main,
    random_openings,
    read_openings,
    run_match,
    schedule,
)
from saz.tools.match.records import OPENING_NOTE, MatchRecord, opening_plies, read_games
from saz.tools.match.referee import Reason, play_game
from saz.tools.match.time_control import Clock, MatchTimeControl, MatchTimeControlError

FAKES = Path(__file__).parent / "fakes"
SAZ = [sys.executable, "-m", "saz.engine.cli"]
GO5 = GameSetup("go", 5, 5, MatchTimeControl.parse("move=5"), {"komi": 0.5})
OTHELLO4 = GameSetup("othello", 4, 4, MatchTimeControl.parse("move=5"))
GOMOKU5 = GameSetup("gomoku", 5, 5, MatchTimeControl.parse("move=5"))
#: A full 5x5 board without five in a row, Black's 13 points and White's 12 (x,y).
DRAWN_BLACK = ["0,0", "1,0", "4,0", "2,1", "3,1", "0,2", "1,2", "4,2", "2,3", "3,3", "0,4", "3,4", "4,4"]
DRAWN_WHITE = ["2,0", "3,0", "0,1", "1,1", "4,1", "2,2", "3,2", "0,3", "1,3", "4,3", "1,4", "2,4"]


def gtp_fake(name: str, *answers: str, log: Path | None = None,
             refuse: tuple[str, ...] = ()) -> EngineSpec:
    options = [*(["--log", str(log)] if log else []), *(f"--refuse={c}" for c in refuse)]
    return EngineSpec(name, (sys.executable, str(FAKES / "fake_gtp.py"), *options, "--",
                             *answers))


def brain_fake(name: str, *answers: str, log: Path | None = None,
               refuse_start: bool = False) -> EngineSpec:
    options = [*(["--log", str(log)] if log else []),
               *(["--refuse-start"] if refuse_start else [])]
    return EngineSpec(name, (sys.executable, str(FAKES / "fake_pbrain.py"), *options, "--",
                             *answers))


def logged(path: Path) -> list[str]:
    return path.read_text().splitlines()


# -- Elo and SPRT -----------------------------------------------------------------------------------
def test_elo_of_a_score_and_back() -> None:
    assert elo_of_score(0.5) == 0.0
    assert elo_of_score(0.75) == pytest.approx(190.848, abs=1e-3)  # 400 * log10(3)
    assert score_of_elo(elo_of_score(0.3)) == pytest.approx(0.3)
    assert elo_of_score(1.0) == math.inf and elo_of_score(0.0) == -math.inf
    with pytest.raises(ValueError):
        elo_of_score(1.5)


def test_elo_interval_by_the_normal_approximation() -> None:
    """6 wins, 2 draws, 2 losses: score 0.7, per-game variance 0.16, so the score's 95% interval
    is 0.7 -+ 1.96 * 0.4 / sqrt(10) = [0.4521, 0.9479]."""
    elo = estimate(Record(wins=6, draws=2, losses=2))
    assert elo.elo == pytest.approx(147.19, abs=0.01)
    assert elo.lower == pytest.approx(elo_of_score(0.7 - 1.959964 * 0.4 / math.sqrt(10)))
    assert elo.upper == pytest.approx(elo_of_score(0.7 + 1.959964 * 0.4 / math.sqrt(10)))
    assert (round(elo.lower), round(elo.upper)) == (-33, 504)
    even = estimate(Record(wins=5, losses=5))
    assert even.elo == 0.0 and even.lower == pytest.approx(-even.upper)


def test_a_nil_or_perfect_score_is_bounded_by_the_exact_binomial_bound() -> None:
    lost = estimate(Record(losses=10))
    assert lost.elo == -math.inf and lost.lower == -math.inf
    assert lost.upper == pytest.approx(elo_of_score(1 - 0.025 ** 0.1))
    assert round(lost.upper) == -140
    won = estimate(Record(wins=10))
    assert (won.elo, won.upper, won.lower) == (math.inf, math.inf, pytest.approx(-lost.upper))
    assert str(lost) == "-inf [-inf, -140]"


def test_records_count_and_reject_nonsense() -> None:
    record = Record().plus(1.0).plus(0.5).plus(0.0).plus(1.0)
    assert (record.wins, record.draws, record.losses, str(record)) == (2, 1, 1, "2-1-1")
    assert record.score == 0.625 and record.reversed().score == 0.375
    with pytest.raises(ValueError):
        record.plus(0.25)
    with pytest.raises(ValueError):
        Record(wins=-1)
    with pytest.raises(ValueError, match="no games"):
        _ = Record().score


def test_sprt_bounds_and_straight_wins() -> None:
    """With wins only, the closest distribution of mean s wins with probability s, so each win
    adds log(s1 / s0) to the LLR: 0.418 for elo1 = 200, H1 after 8 wins (7 * 0.418 < 2.944)."""
    sprt = Sprt(0, 200)
    assert sprt.upper_bound == -sprt.lower_bound == pytest.approx(math.log(19))  # 2.944
    step = math.log(score_of_elo(200) / 0.5)
    assert sprt.llr(Record(wins=8)) == pytest.approx(8 * step, abs=1e-3)
    assert sprt.verdict(Record(wins=7)) is Verdict.CONTINUE
    assert sprt.verdict(Record(wins=8)) is Verdict.H1
    assert sprt.verdict(Record(losses=8)) is Verdict.H0
    assert sprt.llr(Record()) == 0.0


def test_sprt_agrees_with_the_normal_approximation_on_a_long_match() -> None:
    """The GSPRT and its approximation N (s1 - s0)(2s - s0 - s1) / (2 var) agree closely when
    the sample is large: 4307 wins, 8620 draws, 4063 losses, elo0 = 0, elo1 = 3."""
    record = Record(wins=4307, draws=8620, losses=4063)
    s, s0, s1 = record.score, score_of_elo(0), score_of_elo(3)
    variance = sum(p * (a - s) ** 2 for a, p in zip((0, 0.5, 1), record.frequencies()))
    approximation = record.games * (s1 - s0) * (2 * s - s0 - s1) / (2 * variance)
    assert Sprt(0, 3).llr(record) == pytest.approx(approximation, rel=1e-3)
    assert str(estimate(record)) == "+5 [+1, +9]"
    assert Sprt(0, 3).verdict(record) is Verdict.H1
    assert Sprt(0, 10).verdict(record) is Verdict.CONTINUE  # +5 lies halfway
    assert Sprt(5, 10).verdict(record) is Verdict.H0


def test_an_even_score_reads_plus_zero_not_minus_zero() -> None:
    """10-10 computes to an Elo of about -1e-14; it must print as +0, as cutechess-cli does."""
    assert str(estimate(Record(wins=10, losses=10))) == "+0 [-163, +163]"


@pytest.mark.parametrize("args", [(5, 0), (0, 5, 0.0, 0.05), (0, 5, 0.05, 0.7)])
def test_sprt_rejects_bad_hypotheses(args) -> None:
    with pytest.raises(ValueError):
        Sprt(*args)


# -- time controls ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "control", "gtp", "gomocup"), [
    ("5+0.1", MatchTimeControl(5, 0.1), "time_settings 5 0 0", (5000, 5000)),
    ("move=2", MatchTimeControl(per_move=2), "time_settings 0 2 1", (2000, 0)),
    ("60+0,move=1", MatchTimeControl(60, 0, 1), "time_settings 60 0 0", (1000, 60000)),
])
def test_time_controls_parse_and_announce(text, control, gtp, gomocup) -> None:
    parsed = MatchTimeControl.parse(text)
    assert parsed == control and str(parsed) == text
    assert parsed.gtp_settings() == gtp
    limits = parsed.gomocup_limits()
    assert (limits["timeout_turn"], limits["timeout_match"]) == gomocup


@pytest.mark.parametrize("text", ["5", "move=0", "0+1", "-1+0", "5+x", "move=1,move=2", "",
                                  "inf+0"])
def test_bad_time_controls_are_rejected(text: str) -> None:
    with pytest.raises(MatchTimeControlError):
        MatchTimeControl.parse(text)


def test_a_fischer_clock_adds_the_increment_and_forgives_the_margin() -> None:
    clock = Clock(MatchTimeControl(2, 0.5), margin=0.25)
    assert clock.deadline == 2.25 and clock.report() == (2, 0)
    assert clock.charge(1.5)
    assert clock.remaining == pytest.approx(1.0)  # 2 - 1.5 + 0.5
    assert clock.charge(1.2)  # 0.2 over: within the margin, the clock stops at 0
    assert clock.remaining == pytest.approx(0.5)
    assert not clock.charge(0.8)  # 0.3 over
    assert clock.used == pytest.approx(3.5) and clock.slowest == 1.5


def test_a_per_move_clock_never_carries_time_over() -> None:
    clock = Clock(MatchTimeControl(per_move=1), margin=0.5)
    assert clock.charge(0.1) and clock.deadline == 1.5 and clock.report() == (1, 1)
    assert clock.charge(1.4)
    assert not clock.charge(1.6)


def test_both_limits_at_once() -> None:
    clock = Clock(MatchTimeControl(1, 0, per_move=0.4), margin=0.0)
    assert clock.deadline == 0.4
    assert clock.charge_setup(0.3)
    assert clock.charge(0.4) and clock.deadline == pytest.approx(0.3)
    assert not clock.charge(0.35)


# -- SGF records ------------------------------------------------------------------------------------
def test_a_go_record_round_trips_through_our_reader() -> None:
    game = new_game("go", 9, komi=6.5)
    for move in (game.point(2, 2), game.point(6, 6), game.pass_move, game.point(4, 4)):
        game.play(move)
    text = format_sgf(game, SgfInfo(black="a]b", white="w\\x", result="B+R", rules="Tromp-Taylor"))
    assert text.startswith("(;FF[4]CA[UTF-8]GM[1]") and "SZ[9]KM[6.5]" in text
    assert "PB[a\\]b]PW[w\\\\x]" in text and "RE[B+R]" in text and ";B[]" in text
    record = parse_sgf(text)
    assert (record.game, record.width, record.height, record.komi) == ("go", 9, 9, 6.5)
    assert (record.player_black, record.player_white) == ("a]b", "w\\x")
    assert (record.result, record.rules) == ("B+R", "Tromp-Taylor")
    assert [(n.move.color, n.move.move) for n in record.nodes if n.move] == [
        (BLACK, game.point(2, 2)), (WHITE, game.point(6, 6)), (BLACK, game.pass_move),
        (WHITE, game.point(4, 4))]


def test_the_opening_a_record_notes_is_read_back() -> None:
    game = new_game("go", 9)
    for move in (game.point(2, 2), game.point(6, 6), game.point(4, 4)):
        game.play(move)
    comment = "B+R by resignation" + OPENING_NOTE.format(12)
    record = parse_sgf(format_sgf(game, SgfInfo(comment=comment)))
    assert opening_plies(record.game_comment) == 12
    assert opening_plies("B+R by resignation") == 0
    assert opening_plies(None) == 0


def test_othello_and_rectangular_gomoku_records_round_trip() -> None:
    othello = new_game("othello", 4)
    for vertex in ("B1", "C1", "D3", "A1", "pass", "A3"):
        othello.play(vertices_for("othello", 4, 4).parse(vertex))
    record = parse_sgf(format_sgf(othello))
    assert (record.game, record.width) == ("othello", 4)
    assert [n.move.move for n in record.nodes if n.move] == othello.moves
    assert [n.move.color for n in record.nodes if n.move][4] == BLACK  # Black's forced pass

    gomoku = new_game("gomoku", 12, 7)
    for x, y in ((11, 6), (0, 0), (5, 3)):
        gomoku.play(gomoku.point(x, y))
    text = format_sgf(gomoku, SgfInfo(result="B+", move_comments={1: "end of the opening"}))
    assert "GM[4]" in text and "SZ[12:7]" in text and ";B[lg];W[aa]C[end of the opening]" in text
    record = parse_sgf(text)
    assert (record.game, record.width, record.height) == ("gomoku", 12, 7)
    assert [n.move.move for n in record.nodes if n.move] == gomoku.moves


# -- the referee, Go ----------------------------------------------------------------------------
def test_two_passes_end_go_and_the_referee_scores_it(tmp_path: Path) -> None:
    """Black's lone stone owns the whole 5x5 board under Tromp-Taylor: B+24.5 with komi 0.5.
    White's passes are sent to Black as `play w pass`."""
    log = tmp_path / "black.log"
    game = play_game(GO5, gtp_fake("b", "C3", "pass", log=log), gtp_fake("w", "pass", "pass"))
    assert (game.result, game.reason, game.winner) == ("B+24.5", Reason.SCORE, BLACK)
    assert game.game.moves == [12, 25, 25]
    assert "play w pass" in logged(log)
    assert game.exit_status == {BLACK: 0, WHITE: 0}


def test_an_illegal_move_loses_and_the_position_keeps_the_legal_ones() -> None:
    game = play_game(GO5, gtp_fake("b", "C3", "D4"), gtp_fake("w", "C3"))
    assert (game.result, game.reason, game.winner) == ("B+F", Reason.ILLEGAL, BLACK)
    assert game.game.moves == [12]
    assert "illegal move C3" in game.detail


@pytest.mark.parametrize(("answer", "reason", "words"), [
    ("resign", Reason.RESIGN, "resigned"),
    ("Z99", Reason.ILLEGAL, "not a move"),
    ("!error", Reason.ILLEGAL, "genmove failed"),
    ("!crash", Reason.CRASH, "exit status 3"),
])
def test_engine_failures_lose_the_game(answer: str, reason: Reason, words: str) -> None:
    game = play_game(GO5, gtp_fake("b", "C3"), gtp_fake("w", answer))
    assert (game.winner, game.reason) == (BLACK, reason)
    assert game.result == ("B+R" if reason is Reason.RESIGN else "B+F")
    assert words in game.detail
    assert game.exit_status[BLACK] == 0


def test_a_crash_mid_game_loses_it_and_the_other_engine_is_told_nothing_more(
        tmp_path: Path) -> None:
    log = tmp_path / "white.log"
    game = play_game(GO5, gtp_fake("b", "C3", "B2", "!crash"), gtp_fake("w", "D4", "E5", log=log))
    assert (game.result, game.reason) == ("W+F", Reason.CRASH)
    assert len(game.game.moves) == 4
    assert game.exit_status[BLACK] is None  # killed, not asked to quit
    assert [line for line in logged(log) if line.startswith("genmove")] == ["genmove w"] * 2


def test_a_hang_loses_on_time_and_the_engine_is_killed() -> None:
    setup = GameSetup("go", 5, 5, MatchTimeControl.parse("move=0.2"), {"komi": 0.5})
    game = play_game(setup, gtp_fake("b", "C3"), gtp_fake("w", "!hang"), margin=0.1)
    assert (game.result, game.reason, game.winner) == ("B+T", Reason.TIME, BLACK)
    assert "within 0.3 s" in game.detail
    assert game.exit_status[WHITE] is None


def test_a_slow_move_within_the_margin_stands() -> None:
    setup = GameSetup("go", 5, 5, MatchTimeControl.parse("move=0.1"), {"komi": 0.5})
    game = play_game(setup, gtp_fake("b", "!sleep=0.3:C3", "pass"), gtp_fake("w", "pass"),
                     margin=3.0)
    assert (game.reason, game.result) == (Reason.SCORE, "B+24.5")
    assert game.slowest[BLACK] >= 0.3


def test_the_gtp_engines_get_the_settings_and_the_clock(tmp_path: Path) -> None:
    setup = GameSetup("go", 5, 5, MatchTimeControl.parse("10+1"), {"komi": 0.5})
    log = tmp_path / "black.log"
    play_game(setup, gtp_fake("b", "C3", "pass", log=log), gtp_fake("w", "pass", "pass"))
    lines = logged(log)
    assert lines[:6] == ["known_command set_game", "set_game Go", "boardsize 5", "clear_board",
                         "komi 0.5", "time_settings 10 0 0"]
    reports = [line for line in lines if line.startswith("time_left")]
    assert reports[0] == "time_left b 10.000 0"
    assert 10.0 < float(reports[1].split()[2]) <= 11.0  # less the first move, plus 1


def test_a_refused_setting_is_a_setup_error_not_a_game() -> None:
    with pytest.raises(SetupRefused, match="boardsize 5"):
        play_game(GO5, gtp_fake("b", refuse=("boardsize",)), gtp_fake("w"))


def test_refusing_the_opponents_legal_move_loses() -> None:
    game = play_game(GO5, gtp_fake("b", "C3", "D4"), gtp_fake("w", "B2", refuse=("play",)))
    assert (game.winner, game.reason) == (BLACK, Reason.ILLEGAL)
    assert "refused the legal move b C3" in game.detail


def test_go_games_stop_at_the_move_limit_and_are_scored() -> None:
    game = play_game(GO5, gtp_fake("b", "C3", "C2"), gtp_fake("w", "A1", "E5"), max_plies=3)
    assert game.reason is Reason.MOVE_LIMIT and len(game.game.moves) == 3
    assert game.result == "B+0.5"  # areas 2 and 1 (the empty points touch both), komi 0.5
    assert game.winner == BLACK


# -- the referee, Othello -----------------------------------------------------------------------
def test_an_othello_pass_while_a_disc_can_be_placed_is_illegal() -> None:
    game = play_game(OTHELLO4, gtp_fake("b", "pass"), gtp_fake("w"))
    assert (game.result, game.reason, game.game.moves) == ("W+F", Reason.ILLEGAL, [])


def test_a_forced_othello_pass_is_played_by_the_referee_and_never_sent(tmp_path: Path) -> None:
    """After B1 C1 D3 A1 on 4x4, Black has no disc to place: it is not asked, White moves
    twice in a row, and neither engine ever sees a pass."""
    vertices = vertices_for("othello", 4, 4)
    opening = [vertices.parse(v) for v in ("B1", "C1", "D3")]
    black_log, white_log = tmp_path / "black.log", tmp_path / "white.log"
    game = play_game(OTHELLO4, gtp_fake("b", "resign", log=black_log),
                     gtp_fake("w", "A1", "A3", log=white_log), opening)
    assert (game.result, game.reason) == ("W+R", Reason.RESIGN)
    assert game.game.moves[3:] == [vertices.parse("A1"), 16, vertices.parse("A3")]
    black = logged(black_log)
    assert black[1] == "set_game Othello"
    assert [line for line in black if line.startswith(("play", "genmove"))] == [
        "play b B1", "play w C1", "play b D3", "play w A1", "play w A3", "genmove b"]
    assert [line for line in logged(white_log) if line.startswith("genmove")] == ["genmove w"] * 2


def test_othello_is_scored_by_discs() -> None:
    """B1 C1 D3 A1, Black passes, A3, then Black resigns in the test above; here White plays
    on to the end: a 4x4 game that the fakes finish (W wins on discs)."""
    vertices = vertices_for("othello", 4, 4)
    game = new_game("othello", 4)
    for v in ("B1", "C1", "D3", "A1"):
        game.play(vertices.parse(v))
    answers = {BLACK: [], WHITE: []}
    while not game.is_over():  # a whole game, recorded to script the fakes
        legal = [int(m) for m in game.legal_moves()]
        move = legal[0]
        if legal != [game.pass_move]:
            answers[game.to_move].append(vertices.format(move))
        game.play(move)
    black, white = game.disc_count()
    played = play_game(OTHELLO4, gtp_fake("b", *answers[BLACK]), gtp_fake("w", *answers[WHITE]),
                       game.moves[:4])
    assert played.game.moves == game.moves and played.reason is Reason.SCORE
    expected = "0" if black == white else f"{'B' if black > white else 'W'}+{abs(black - white)}"
    assert played.result == expected


# -- the referee, Gomoku ------------------------------------------------------------------------
def test_five_in_a_row_wins_gomoku(tmp_path: Path) -> None:
    black_log, white_log = tmp_path / "black.log", tmp_path / "white.log"
    game = play_game(GOMOKU5, brain_fake("b", "0,0", "1,0", "2,0", "3,0", "4,0", log=black_log),
                     brain_fake("w", "0,4", "1,4", "2,4", "3,4", log=white_log))
    assert (game.result, game.reason, game.winner) == ("B+", Reason.FIVE, BLACK)
    assert len(game.game.moves) == 9
    black = logged(black_log)
    assert black[:5] == ["INFO timeout_turn 5000", "INFO timeout_match 0", "INFO max_memory 0",
                         "INFO game_type 1", "INFO rule 0"]
    assert black[5:8] == ["START 5", "BEGIN", "TURN 0,4"]
    white = logged(white_log)
    assert [line for line in white if line.startswith(("TURN", "BOARD", "BEGIN"))] == [
        "BOARD", "TURN 1,0", "TURN 2,0", "TURN 3,0"]  # its first look at the game: a board
    assert white[white.index("BOARD") + 1:white.index("DONE")] == ["0,0,2"]
    assert game.exit_status == {BLACK: 0, WHITE: 0}


def test_a_full_gomoku_board_without_five_is_a_draw() -> None:
    game = play_game(GOMOKU5, brain_fake("b", *DRAWN_BLACK), brain_fake("w", *DRAWN_WHITE))
    assert (game.result, game.reason, game.winner) == ("0", Reason.DRAW, DRAW)
    assert len(game.game.moves) == 25


def test_a_gomoku_opening_reaches_both_brains_by_board(tmp_path: Path) -> None:
    """Each brain first sees the game as a BOARD (own stones 1, the opponent's 2, in the order
    played), then TURN; with a match clock, `INFO time_left` comes before every move."""
    setup = GameSetup("gomoku", 5, 5, MatchTimeControl.parse("30+0,move=5"))
    opening = [new_game("gomoku", 5).point(x, y) for x, y in ((2, 2), (0, 0), (3, 3))]
    black_log, white_log = tmp_path / "black.log", tmp_path / "white.log"
    game = play_game(setup, brain_fake("b", "4,4", log=black_log),
                     brain_fake("w", "1,1", "4,0", log=white_log), opening)
    assert (game.winner, game.reason) == (WHITE, Reason.ILLEGAL)  # Black's script ran out
    assert "ERROR no more moves" in game.detail
    white = logged(white_log)
    assert "INFO timeout_turn 5000" in white and "INFO timeout_match 30000" in white
    assert white[white.index("BOARD") - 1].startswith("INFO time_left ")
    assert white[white.index("BOARD"):white.index("DONE") + 1] == [
        "BOARD", "2,2,2", "0,0,1", "3,3,2", "DONE"]
    assert "TURN 4,4" in white
    black = logged(black_log)
    assert black[black.index("BOARD"):black.index("DONE") + 1] == [
        "BOARD", "2,2,1", "0,0,2", "3,3,1", "1,1,2", "DONE"]
    assert black[-1] == "TURN 4,0" or black[-2] == "TURN 4,0"
    assert game.seconds[WHITE] > 0  # its start-up was charged to its match clock


@pytest.mark.parametrize(("answer", "reason", "words"), [
    ("7,7", Reason.ILLEGAL, "off the board"),
    ("0,0", Reason.ILLEGAL, "illegal move 0,0"),
    ("!crash", Reason.CRASH, "exit status 3"),
])
def test_gomocup_failures_lose_the_game(answer: str, reason: Reason, words: str) -> None:
    game = play_game(GOMOKU5, brain_fake("b", "0,0"), brain_fake("w", answer))
    assert (game.winner, game.reason) == (BLACK, reason)
    assert words in game.detail


def test_a_hanging_brain_loses_on_time() -> None:
    setup = GameSetup("gomoku", 5, 5, MatchTimeControl.parse("move=0.2"))
    game = play_game(setup, brain_fake("b", "!hang"), brain_fake("w"), margin=0.1)
    assert (game.result, game.reason) == ("W+T", Reason.TIME)


def test_a_brain_refusing_the_board_is_a_setup_error() -> None:
    with pytest.raises(SetupRefused, match="START 5"):
        play_game(GOMOKU5, brain_fake("b"), brain_fake("w", refuse_start=True))


# -- the match --------------------------------------------------------------------------------------
def test_each_opening_is_played_with_both_colours() -> None:
    a, b = EngineSpec("a", ("a",)), EngineSpec("b", ("b",))
    pairings = schedule(a, b, 5, [(1,), (2,)])
    assert [(p.number, p.black.name, p.white.name, p.opening) for p in pairings] == [
        (1, "a", "b", (1,)), (2, "b", "a", (1,)), (3, "a", "b", (2,)), (4, "b", "a", (2,)),
        (5, "a", "b", (1,))]


def test_random_openings_are_seeded_legal_and_pass_free() -> None:
    setup = GameSetup("go", 9, 9, MatchTimeControl.parse("move=1"))
    openings = random_openings(setup, 6, 3, seed=7)
    assert openings == random_openings(setup, 6, 3, seed=7)
    assert openings != random_openings(setup, 6, 3, seed=8)
    assert len(set(openings)) == 3
    for opening in openings:
        assert len(opening) == 6 and 81 not in opening
        game = new_game("go", 9)  # legal, or play raises
        for move in opening:
            game.play(move)


def test_openings_files_name_moves_in_gtp_vertices() -> None:
    lines = ["# two openings", "", "D4 E5, pass  # a pass is a move in Go", "c3 C4"]
    openings = read_openings(lines, GO5)
    vertices = vertices_for("go", 5, 5)
    assert openings == [(vertices.parse("D4"), vertices.parse("E5"), 25),
                        (vertices.parse("C3"), vertices.parse("C4"))]
    with pytest.raises(MatchError, match="line 2: D4"):
        read_openings(["C3", "C3 D4 D4"], GO5)
    with pytest.raises(MatchError, match="line 1: Z9"):
        read_openings(["Z9"], GO5)
    with pytest.raises(MatchError, match="no opening"):
        read_openings(["# nothing"], GO5)


def _winner_and_loser(tmp_path: Path) -> tuple[EngineSpec, EngineSpec]:
    """`five` makes five along the top row whatever happens; `broken` answers no move, so it
    loses every game at its first turn, as Black or as White."""
    return (brain_fake("five", "0,0", "1,0", "2,0", "3,0", "4,0"),
            brain_fake("broken", "nonsense"))


def test_a_match_writes_lines_records_and_a_summary(tmp_path: Path) -> None:
    five, broken = _winner_and_loser(tmp_path)
    out = io.StringIO()
    status = main(["--game", "gomoku", "--size", "5", "--games", "3", "--tc", "move=5",
                   "--out", str(tmp_path / "m"), "--concurrency", "2",
                   "--engine", f"five={five.command}", "--engine", f"broken={broken.command}"],
                  stdout=out)
    assert status == 0
    lines = out.getvalue().splitlines()
    assert lines[0] == ("five vs broken: 3 games of gomoku 5x5, move=5, openings: none")
    games = sorted(line for line in lines if line.startswith("game "))
    assert games[0] == ("game 1/3: five (B) - broken (W): B+F by illegal, 1 moves (answered "
                        "'nonsense' to BOARD, not a move x,y)")
    assert games[1].startswith("game 2/3: broken (B) - five (W): W+F by illegal, 0 moves")
    assert lines[-2] == "  five vs broken: 3-0-0 (W-L-D), Elo +inf [-154, +inf]"
    assert lines[-1] == f"games in {tmp_path}/m.sgf, summary in {tmp_path}/m.json"
    summary = json.loads((tmp_path / "m.json").read_text())
    assert summary["totals"] == {"five": {"wins": 3, "losses": 0, "draws": 0},
                                 "broken": {"wins": 0, "losses": 3, "draws": 0}}
    assert (summary["elo"]["elo"], summary["elo"]["lower"]) == (None, -153.5)
    assert [g["winner"] for g in summary["games"]] == ["five"] * 3
    assert summary["games"][1] | {"seconds": None, "slowest_move": None, "detail": None} == {
        "game": 2, "black": "broken", "white": "five", "result": "W+F", "winner": "five",
        "reason": "illegal", "detail": None, "moves": 0, "opening_plies": 0,
        "seconds": None, "slowest_move": None}
    assert summary["settings"]["time_control"] == "move=5"
    # One collection, its games in the order of their numbers (two were played at once), as the
    # summary lists them.
    assert sorted(path.name for path in tmp_path.iterdir() if path.name.startswith("m")) == [
        "m.json", "m.sgf"]
    trees = game_trees((tmp_path / "m.sgf").read_text())
    assert [f"GN[five vs broken, game {n}]" in tree for n, tree in zip(
        (1, 2, 3), trees, strict=True)] == [True] * 3
    record = parse_sgf(trees[0])
    assert record.game == "gomoku" and [n.move.move for n in record.nodes if n.move] == [0]
    assert record.rules == "freestyle"  # RU, which `Replay` reads back
    assert "RE[W+F]" in trees[1]
    assert [game.sgf.result for game in read_games([tmp_path / "m"])] == [
        g["result"] for g in summary["games"]]


def test_the_match_stops_once_the_sprt_decides(tmp_path: Path) -> None:
    five, broken = _winner_and_loser(tmp_path)
    config = MatchConfig(GOMOKU5, five, broken, games=12, sprt=Sprt(0, 200))
    ended: list[int] = []
    standings = run_match(config, lambda number, game, s: ended.append(number))
    assert ended == list(range(1, 9))  # H1 after 8 straight wins (see the SPRT test)
    assert standings.verdict is Verdict.H1 and str(standings.record) == "8-0-0"
    assert standings.line().endswith(": H1 accepted")


def test_openings_alternate_colours_through_the_match(tmp_path: Path) -> None:
    """Two random 2-ply openings, four games: games 1 and 2 start from the first with the
    engines' colours swapped, games 3 and 4 from the second."""
    out = tmp_path / "m"
    command = f"{sys.executable} -m saz.engine.cli gtp --player random"
    status = main(["--game", "go", "--size", "5", "--games", "4", "--random-plies", "2",
                   "--seed", "3", "--tc", "move=10", "--out", str(out),
                   "--engine", f"r1={command}", "--engine", f"r2={command}"], stdout=io.StringIO())
    assert status == 0
    summary = json.loads(MatchRecord.of(out).summary.read_text())
    assert [(g["black"], g["white"]) for g in summary["games"]] == [
        ("r1", "r2"), ("r2", "r1"), ("r1", "r2"), ("r2", "r1")]
    records = [game.sgf for game in read_games([out])]
    assert {r.rules for r in records} == {"Tromp-Taylor"}
    openings = [tuple(n.move.move for n in r.nodes if n.move)[:2] for r in records]
    setup = GameSetup("go", 5, 5, MatchTimeControl.parse("move=10"), {"komi": 7.5})
    expected = random_openings(setup, 2, 2, seed=3)
    assert openings == [expected[0], expected[0], expected[1], expected[1]]
    for game, record in zip(summary["games"], records):  # the records replay to the result
        replay = new_game("go", 5, komi=7.5)
        for node in record.nodes:
            if node.move:
                replay.play(node.move.move)
        assert game["reason"] in ("score", "move limit", "resign")
        if game["reason"] == "score":
            assert replay.is_over() and game["result"] in (
                f"B+{replay.score():g}", f"W+{-replay.score():g}", "0")


def test_match_mistakes_exit_with_status_2(tmp_path: Path, capsys) -> None:
    refusing = gtp_fake("refusing", refuse=("boardsize",))
    fine = gtp_fake("fine")
    args = ["--game", "go", "--size", "5", "--engine", f"x={refusing.command}",
            "--engine", f"y={fine.command}"]
    assert main(args, stdout=io.StringIO()) == 2
    assert "refused 'boardsize 5'" in capsys.readouterr().err
    for bad in (["--engine", "a=gnugo"], ["--engine", f"a={fine.command}", "--engine",
                                          f"a={fine.command}"],
                ["--engine", "a=no-such-engine-x", "--engine", f"b={fine.command}"],
                ["--tc", "fast", "--engine", f"a={fine.command}", "--engine", f"b={fine.command}"]):
        with pytest.raises(SystemExit) as exit_info:
            main(["--game", "go", "--size", "5", *bad], stdout=io.StringIO())
        assert exit_info.value.code == 2


def test_saz_match_imports_no_torch() -> None:
    code = ("import sys; import saz.tools.match.match; "
            "sys.exit(bool({'torch', 'onnxruntime'} & set(sys.modules)))")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


# -- real peers ---------------------------------------------------------------------------------
def _peer(name: str) -> str:
    try:
        return resolve_program(name)
    except ValueError:
        pytest.skip(f"{name} is not installed (apt-get install -y gnugo grhino)")


@pytest.mark.parametrize(("game", "size", "peer"), [
    ("go", "7", "gnugo --mode gtp --level 0 --chinese-rules --capture-all-dead"),
    ("othello", "8", "gtp-rhino -l 1"),
])
def test_a_short_match_against_a_real_peer(tmp_path: Path, game: str, size: str,
                                           peer: str) -> None:
    """`saz gtp --player greedy` against GNU Go or gtp-rhino, both colours, through the whole
    protocol path: every game ends by the rules (no forfeit on either side). Small and quick:
    the 10-game matches of docs/STRENGTH.md are the real measurement. The peers' clock is
    generous: GNU Go at level 0 reads for up to 2 s a move on 7x7 here, and more on a loaded
    CI machine, where a 5 s limit once lost it a game on time."""
    _peer(peer.split()[0])
    greedy = f"{sys.executable} -m saz.engine.cli gtp --player greedy"
    out = tmp_path / "m"
    assert main(["--game", game, "--size", size, "--games", "2", "--tc", "move=60",
                 "--out", str(out), "--engine", f"greedy={greedy}",
                 "--engine", f"peer={peer}"], stdout=io.StringIO()) == 0
    summary = json.loads(MatchRecord.of(out).summary.read_text())
    assert [g["reason"] for g in summary["games"]] == ["score", "score"]
    for entry, recorded in zip(summary["games"], read_games([out]), strict=True):
        record = recorded.sgf
        replay = new_game(game, int(size))
        for node in record.nodes:
            if node.move:
                replay.play(node.move.move)
        assert replay.is_over() and len(replay.moves) == entry["moves"]
