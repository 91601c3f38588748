"""`saz match --game chess`: the referee against scripted UCI engines (`tests/fakes/fake_uci.py`),
the commands and clocks they are sent, every way a UCI engine loses a game, the variants and
options, openings from EPD and PGN files, and whole matches whose PGN record python-chess
reads: between scripted engines, between saz's reference players over `saz uci`, and against
Stockfish (skipped when it is not installed)."""
from __future__ import annotations

import io
import json
import shutil
import sys
from pathlib import Path

import chess
import chess.pgn
import pytest

from saz.engine.games import BLACK, DRAW, WHITE
from saz.engine.games.chess import Chess
from saz.tools.match.adapters import EngineSpec, GameSetup, SetupRefused, uci_variant
from saz.tools.match.match import main, read_opening_file, schedule
from saz.tools.match.pgn import PgnOpening, pgn_result, read_pgn_games
from saz.tools.match.records import MatchRecord
from saz.tools.match.referee import Reason, play_game
from saz.tools.match.strength import read_record
from saz.tools.match.time_control import MatchTimeControl

FAKE = Path(__file__).parent / "fakes" / "fake_uci.py"
DATA = Path(__file__).parent / "data"
SAZ_UCI = f"{sys.executable} -m saz.engine.cli uci"
CHESS = GameSetup("chess", 8, 8, MatchTimeControl.parse("move=5"), {"variant": None})
STOCKFISH = shutil.which("stockfish", path="/usr/games:/usr/bin")
FAIRY = shutil.which("fairy-stockfish", path="/usr/games:/usr/bin")
#: Fool's mate, by colour.
FOOL = {WHITE: ("f2f3", "g2g4"), BLACK: ("e7e5", "d8h4")}


def fake(name: str, *answers: str, log: Path | None = None, variants: str | None = None,
         options: tuple[tuple[str, str], ...] = ()) -> EngineSpec:
    flags = [*(["--log", str(log)] if log else []),
             *(["--variants", variants] if variants else [])]
    return EngineSpec(name, (sys.executable, str(FAKE), *flags, "--", *answers), options)


def logged(path: Path) -> list[str]:
    return path.read_text().splitlines()


def read_pgn(path: Path) -> list[chess.pgn.Game]:
    games = []
    with path.open(encoding="utf-8") as stream:
        while (game := chess.pgn.read_game(stream)) is not None:
            assert not game.errors, game.errors
            games.append(game)
    return games


# -- the referee ----------------------------------------------------------------------------------
def test_a_mate_ends_the_game_and_the_engines_hear_the_whole_game(tmp_path: Path) -> None:
    white_log, black_log = tmp_path / "w", tmp_path / "b"
    game = play_game(CHESS, fake("b", *FOOL[BLACK], log=black_log),
                     fake("w", *FOOL[WHITE], log=white_log))
    assert (game.result, game.reason, game.winner) == ("0-1", Reason.CHECKMATE, BLACK)
    assert [game.game.uci(m) for m in game.game.moves[-1:]] == ["d8h4"]
    assert sorted(game.move_seconds) == [0, 1, 2, 3] and game.move_notes[3] == "+0.00/1"
    assert logged(white_log) == [
        "uci", "ucinewgame", "isready", "position startpos", "go movetime 5000",
        "position startpos moves f2f3 e7e5", "go movetime 5000", "quit"]
    assert logged(black_log)[3:] == [
        "position startpos moves f2f3", "go movetime 5000",
        "position startpos moves f2f3 e7e5 g2g4", "go movetime 5000", "quit"]
    assert game.exit_status == {WHITE: 0, BLACK: 0}


def test_a_game_clock_is_sent_as_both_sides_milliseconds(tmp_path: Path) -> None:
    setup = GameSetup("chess", 8, 8, MatchTimeControl.parse("10+0.1"), {"variant": None})
    log = tmp_path / "w"
    play_game(setup, fake("b", *FOOL[BLACK]), fake("w", *FOOL[WHITE], log=log))
    first, second = (line.split() for line in logged(log) if line.startswith("go"))
    assert first == ["go", "wtime", "10000", "btime", "10000", "winc", "100", "binc", "100"]
    # White's clock lost its first move's time and gained the increment; Black's its reply's.
    assert 9900 < int(second[2]) <= 10100 and 9900 < int(second[4]) <= 10100
    both = GameSetup("chess", 8, 8, MatchTimeControl.parse("10+0.1,move=2"), {"variant": None})
    log.unlink()
    play_game(both, fake("b", *FOOL[BLACK]), fake("w", *FOOL[WHITE], log=log))
    assert next(line for line in logged(log) if line.startswith("go")).endswith("movetime 2000")


@pytest.mark.parametrize(("answer", "reason", "words"), [
    ("e2e5", Reason.ILLEGAL, "played 'e2e5', no legal move"),
    ("z9z9", Reason.ILLEGAL, "no legal move"),
    ("0000", Reason.ILLEGAL, "no legal move"),
    ("!empty", Reason.ILLEGAL, "bestmove without a move"),
    ("!crash", Reason.CRASH, "exit status 3"),
])
def test_engine_failures_lose_the_game(answer: str, reason: Reason, words: str) -> None:
    game = play_game(CHESS, fake("b"), fake("w", answer))
    assert (game.result, game.reason, game.winner) == ("0-1", reason, BLACK)
    assert words in game.detail
    assert game.game.moves == []


def test_a_hang_loses_on_time_and_a_slow_move_within_the_margin_stands() -> None:
    setup = GameSetup("chess", 8, 8, MatchTimeControl.parse("move=0.2"), {"variant": None})
    game = play_game(setup, fake("b", "!hang"), fake("w", "e2e4"), margin=0.1)
    assert (game.result, game.reason, game.winner) == ("1-0", Reason.TIME, WHITE)
    game = play_game(setup, fake("b", "!sleep=0.25:e7e5"), fake("w", "e2e4"), margin=0.3,
                     max_plies=2)
    assert (game.result, game.reason) == ("1/2-1/2", Reason.MOVE_LIMIT)


def test_options_are_set_and_an_unknown_one_refuses_the_match(tmp_path: Path) -> None:
    log = tmp_path / "w"
    play_game(CHESS, fake("b", *FOOL[BLACK]),
              fake("w", *FOOL[WHITE], log=log, options=(("Skill Level", "3"),)))
    assert logged(log)[:3] == ["uci", "setoption name Skill Level value 3", "ucinewgame"]
    with pytest.raises(SetupRefused, match="no option 'UCI_Elo'"):
        play_game(CHESS, fake("b"), fake("w", options=(("UCI_Elo", "1350"),)))
    with pytest.raises(SetupRefused, match=r"0\.\.20"):
        play_game(CHESS, fake("b"), fake("w", options=(("Skill Level", "99"),)))


def test_a_variant_board_sets_uci_variant_or_refuses(tmp_path: Path) -> None:
    gardner = GameSetup("chess", 5, 5, MatchTimeControl.parse("move=5"), {"variant": None})
    assert (uci_variant(gardner), uci_variant(CHESS)) == ("gardner", None)
    with pytest.raises(SetupRefused, match="does not play the variant 'gardner'"):
        play_game(gardner, fake("b"), fake("w"))
    log = tmp_path / "w"
    game = play_game(gardner, fake("b", "a4a3", variants="chess,gardner"),
                     fake("w", "b2b3", log=log, variants="chess,gardner"), max_plies=2)
    assert logged(log)[:4] == ["uci", "setoption name UCI_Variant value gardner",
                               "ucinewgame", "isready"]
    assert (game.reason, game.winner) == (Reason.MOVE_LIMIT, DRAW)


def test_a_set_up_start_is_sent_as_its_fen(tmp_path: Path) -> None:
    fen = "r1bqkbnr/pppp1ppp/2n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3"
    log = tmp_path / "b"
    game = play_game(CHESS, fake("b", "a7a6", log=log), fake("w", "b5a4"), start=fen,
                     max_plies=2)
    assert logged(log)[3] == f"position fen {fen}"
    assert game.game.start_fen == fen and len(game.game.moves) == 2


# -- openings and the schedule --------------------------------------------------------------------
def test_chess_openings_from_epd_pgn_and_uci_lines(tmp_path: Path) -> None:
    epd = read_opening_file(DATA / "chess-openings.epd", CHESS)
    assert [o.fen for o in epd if isinstance(o, PgnOpening)] == [
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
        "r1bqkbnr/pppp1ppp/2n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3",
        "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq c6 0 2"]
    first, second = read_opening_file(DATA / "chess-openings.pgn", CHESS)
    assert isinstance(first, PgnOpening) and isinstance(second, PgnOpening)
    assert first.fen is None and len(first.moves) == 4
    assert second.fen is not None and len(second.moves) == 2
    lines = tmp_path / "book.txt"
    lines.write_text("e2e4 e7e5  # the open game\n\nd2d4 d7d5 c2c4\n")
    game = Chess()
    expected = []
    for text in ("e2e4", "e7e5"):
        expected.append(game.parse_uci(text))
        game.play(expected[-1])
    assert read_opening_file(lines, CHESS)[0] == tuple(expected)


def test_the_first_engine_is_white_in_odd_games() -> None:
    a, b = EngineSpec("a", ("a",)), EngineSpec("b", ("b",))
    opening = PgnOpening("8/8/8/8/8/8/8/K1k5 w - - 0 1", ())
    pairings = schedule(a, b, 3, [opening], first_mover=WHITE)
    assert [(p.white.name, p.black.name, p.start) for p in pairings] == [
        ("a", "b", opening.fen), ("b", "a", opening.fen), ("a", "b", opening.fen)]


# -- whole matches --------------------------------------------------------------------------------
def fake_command(*answers: str) -> str:
    return f"{sys.executable} {FAKE} -- {' '.join(answers)}"


def test_a_match_writes_a_pgn_python_chess_reads(tmp_path: Path) -> None:
    """Game 1: the first engine (White) is mated; game 2: the second engine, now White, plays
    Black's script (e7e5), illegal there, and loses by forfeit."""
    out = tmp_path / "m"
    stdout = io.StringIO()
    status = main(["--game", "chess", "--games", "2", "--tc", "move=5", "--out", str(out),
                   "--engine", f"a={fake_command(*FOOL[WHITE])}",
                   "--engine", f"b={fake_command(*FOOL[BLACK])}",
                   "--option", "a:Skill Level=2"], stdout=stdout)
    assert status == 0
    text = stdout.getvalue()
    assert "game 1/2: a (W) - b (B): 0-1 by checkmate, 4 moves" in text
    assert "game 2/2: b (W) - a (B): 0-1 by illegal" in text
    record = MatchRecord.of(out, ".pgn")
    assert f"games in {record.games}" in text
    first, second = read_pgn(record.games)
    assert [m.uci() for m in first.mainline_moves()] == ["f2f3", "e7e5", "g2g4", "d8h4"]
    assert first.end().board().is_checkmate()
    headers = first.headers
    assert (headers["White"], headers["Black"], headers["Result"], headers["Round"]) == \
        ("a", "b", "0-1", "1")
    assert (headers["Termination"], headers["TimeControl"], headers["PlyCount"]) == \
        ("normal", "1/5", "4")
    assert first.end().comment.startswith("+0.00/1 ")  # the engine's score, then its time
    assert "Black mates" in record.games.read_text()
    assert (second.headers["Termination"], second.headers["Result"]) == ("rules infraction",
                                                                         "0-1")
    summary = json.loads(record.summary.read_text())
    assert summary["options"] == {"a": {"Skill Level": "2"}}
    assert [g["reason"] for g in summary["games"]] == ["checkmate", "illegal"]
    assert summary["totals"]["a"] == {"wins": 1, "losses": 1, "draws": 0}


def test_a_match_from_an_epd_book_records_each_start(tmp_path: Path) -> None:
    out = tmp_path / "m"
    stdout = io.StringIO()
    status = main(["--game", "chess", "--games", "4", "--max-plies", "1", "--out", str(out),
                   "--openings", str(DATA / "chess-openings.epd"),
                   "--engine", f"a={fake_command('a7a6', 'a7a6')}",
                   "--engine", f"b={fake_command('a7a6', 'a7a6')}"], stdout=stdout)
    assert status == 0
    # White first on every line, Black to move at the start of games 3 and 4 or not.
    assert "game 3/4: a (W) - b (B): 1/2-1/2 by move limit" in stdout.getvalue()
    games = read_pgn(MatchRecord.of(out, ".pgn").games)
    assert [g.headers.get("FEN") for g in games] == [
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"] * 2 + [
        "r1bqkbnr/pppp1ppp/2n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3"] * 2
    assert games[2].headers["White"] == "a" and len(list(games[2].mainline_moves())) == 1
    summary = json.loads(MatchRecord.of(out).summary.read_text())
    assert summary["games"][0]["start"] == games[0].headers["FEN"]


def test_chess_match_mistakes_exit_with_status_2(tmp_path: Path, capsys) -> None:
    engines = ["--engine", f"a={fake_command()}", "--engine", f"b={fake_command()}"]
    for extra in (["--option", "c:Hash=1"], ["--option", "a-Hash=1"], ["--size", "7"],
                  ["--openings", str(tmp_path / "missing.epd")]):
        with pytest.raises(SystemExit) as exited:
            main(["--game", "chess", *engines, *extra], stdout=io.StringIO())
        assert exited.value.code == 2, extra
    with pytest.raises(SystemExit):
        main(["--game", "go", "--size", "5", *engines, "--option", "a:Hash=1"],
             stdout=io.StringIO())
    assert "no engine options" in capsys.readouterr().err


def test_saz_uci_reference_players_play_a_match(tmp_path: Path) -> None:
    """`saz uci --player random` against `--player greedy`, both colours, random openings:
    every game a legal one to its end by the rules or the move limit."""
    out = tmp_path / "m"
    status = main(["--game", "chess", "--games", "2", "--tc", "move=2", "--random-plies", "4",
                   "--max-plies", "80", "--out", str(out),
                   "--engine", f"random={SAZ_UCI} --player random",
                   "--engine", f"greedy={SAZ_UCI} --player greedy"], stdout=io.StringIO())
    assert status == 0
    summary = json.loads(MatchRecord.of(out).summary.read_text())
    reasons = {g["reason"] for g in summary["games"]}
    assert reasons <= {"checkmate", "stalemate", "threefold repetition", "fifty-move rule",
                       "insufficient material", "move limit"}, summary["games"]
    games = read_pgn(MatchRecord.of(out, ".pgn").games)
    assert len(games) == 2
    for game, entry in zip(games, summary["games"]):
        assert game.headers["Result"] == entry["result"]
        assert len(list(game.mainline_moves())) == entry["moves"]


@pytest.mark.skipif(STOCKFISH is None, reason="Stockfish is not installed")
def test_a_short_match_against_stockfish(tmp_path: Path) -> None:
    out = tmp_path / "m"
    status = main(["--game", "chess", "--games", "2", "--tc", "2+0.05", "--max-plies", "40",
                   "--out", str(out), "--engine", f"random={SAZ_UCI} --player random",
                   "--engine", f"sf={STOCKFISH}", "--option", "sf:UCI_LimitStrength=true",
                   "--option", "sf:UCI_Elo=1350", "--option", "sf:Threads=1"],
                  stdout=io.StringIO())
    assert status == 0
    summary = json.loads(MatchRecord.of(out).summary.read_text())
    assert all(g["reason"] not in ("time", "illegal", "crash") for g in summary["games"]), \
        summary["games"]
    assert summary["options"]["sf"] == {"UCI_LimitStrength": "true", "UCI_Elo": "1350",
                                        "Threads": "1"}
    row = read_record(out)  # a model card's row says at what strength Stockfish played
    assert row.opponent_command == f"{STOCKFISH} (UCI_LimitStrength=true, UCI_Elo=1350, " \
                                   "Threads=1)"
    assert len(read_pgn(MatchRecord.of(out, ".pgn").games)) == 2


@pytest.mark.skipif(FAIRY is None, reason="Fairy-Stockfish is not installed")
def test_a_gardner_match_against_fairy_stockfish(tmp_path: Path) -> None:
    """Gardner 5x5: Fairy-Stockfish is set to the variant, and the record names it; our own
    PGN reader replays each game (python-chess has no 5x5 board)."""
    out = tmp_path / "m"
    status = main(["--game", "chess", "--size", "5", "--games", "2", "--tc", "2+0.05",
                   "--max-plies", "40", "--out", str(out),
                   "--engine", f"random={SAZ_UCI} --player random",
                   "--engine", f"fsf={FAIRY}", "--option", "fsf:Skill Level=0"],
                  stdout=io.StringIO())
    assert status == 0
    summary = json.loads(MatchRecord.of(out).summary.read_text())
    assert all(g["reason"] not in ("time", "illegal", "crash") for g in summary["games"]), \
        summary["games"]
    text = MatchRecord.of(out, ".pgn").games.read_text()
    assert text.count('[Variant "gardner"]') == 2
    replayed = read_pgn_games(text, lambda fen: Chess(5, fen=fen))
    assert [len(g.moves) for g in replayed] == [g["moves"] for g in summary["games"]]
    assert [pgn_result(g.winner()) if g.is_over() else "1/2-1/2" for g in replayed] == \
        [g["result"] for g in summary["games"]]
