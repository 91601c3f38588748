"""`saz match --game othello` with NBoard engines (`--protocol ENGINE=nboard`): the referee
against the scripted fake (`tests/fakes/fake_nboard.py`), what it is sent (depth, contempt,
the game in GGF with both clocks), every way an NBoard engine loses a game, and whole matches
whose GGF record reads back as the SGF one does; against NTest when `SAZ_NTEST` names it."""
from __future__ import annotations

import io
import json
import os
import shlex
import sys
from pathlib import Path

import pytest

from saz.engine.games import BLACK, WHITE
from saz.protocol.ggf import clock_seconds, parse_ggf, parse_ggf_collection, to_game
from saz.protocol.sgf import SgfMove
from saz.tools.match.adapters import EngineSpec, GameSetup, SetupRefused
from saz.tools.match.match import main
from saz.tools.match.records import MatchRecord, RecordedGame, ggf_result, read_games
from saz.tools.match.referee import Reason, play_game
from saz.tools.match.time_control import MatchTimeControl

FAKE = Path(__file__).parent / "fakes" / "fake_nboard.py"
OTHELLO = GameSetup("othello", 8, 8, MatchTimeControl.parse("move=5"), {})
NTEST = os.environ.get("SAZ_NTEST")


def fake(name: str, *answers: str, log: Path | None = None,
         options: tuple[tuple[str, str], ...] = ()) -> EngineSpec:
    flags = ["--log", str(log)] if log else []
    return EngineSpec(name, (sys.executable, str(FAKE), *flags, "--", *answers), options,
                      protocol="nboard")


def fake_command(*answers: str) -> str:
    return shlex.join([sys.executable, str(FAKE), "--", *answers])


def sent_games(log: Path) -> list[str]:
    return [line.split(None, 2)[2] for line in log.read_text().splitlines()
            if line.startswith("set game ")]


def test_a_game_between_nboard_engines_is_played_out(tmp_path: Path) -> None:
    black_log, white_log = tmp_path / "b", tmp_path / "w"
    game = play_game(OTHELLO, fake("b", log=black_log), fake("w", log=white_log))
    assert game.reason is Reason.SCORE and game.game.is_over()
    assert game.exit_status == {BLACK: 0, WHITE: 0}
    assert game.move_notes[0] == "+0.50"  # the engine's eval, kept for the records
    sent = black_log.read_text().splitlines()
    assert sent[:4] == ["nboard 2", "ping 1", "set depth 60", "ping 2"]
    assert sent[4].startswith("set game (;GM[Othello]") and sent[5] == "go"
    assert sent[-1] == "quit"
    # Each `set game` is the whole game so far, which replays to the position asked about.
    games = [parse_ggf(text) for text in sent_games(black_log)]
    assert [len(g.moves) for g in games[:3]] == [0, 2, 4]
    final = games[-1]
    assert to_game(final).moves == game.game.moves[:len(final.moves)]
    assert final.tags["TI"] == "5"  # the limit per move, as both clocks
    assert all(move.seconds is None for move in final.moves)


def test_a_game_clock_is_sent_as_each_sides_time_left(tmp_path: Path) -> None:
    setup = GameSetup("othello", 8, 8, MatchTimeControl.parse("100+2"), {})
    log = tmp_path / "w"
    # Black takes 0.05 s a move, so the time its moves carry cannot round to nothing.
    play_game(setup, fake("b", "!sleep=0.05:!legal", "!sleep=0.05:!legal"), fake("w", log=log),
              max_plies=6)
    first, second = (parse_ggf(text) for text in sent_games(log)[:2])
    assert first.tags["TI"] == second.tags["TI"] == "1:40/2"
    black_left, white_left = clock_seconds(second, BLACK), clock_seconds(second, WHITE)
    assert black_left is not None and 100 < black_left <= 104  # used a little (to 0.01 s), got 2 per move
    assert white_left is not None and 100 < white_left <= 102
    assert sum(m.seconds or 0 for m in second.moves) > 0


def test_depth_and_contempt_are_set_and_other_options_refuse_the_match(tmp_path: Path) -> None:
    log = tmp_path / "w"
    play_game(OTHELLO, fake("b"), fake("w", log=log, options=(("depth", "3"), ("contempt", "-1"))),
              max_plies=2)
    assert log.read_text().splitlines()[2:5] == ["set depth 3", "set contempt -1", "ping 2"]
    for options, words in (((("Hash", "1"),), "depth and contempt, not 'Hash'"),
                           ((("depth", "0"),), "a positive whole number"),
                           ((("depth", "x"),), "a positive whole number"),
                           ((("contempt", "nan"),), "a number")):
        with pytest.raises(SetupRefused, match=words):
            play_game(OTHELLO, fake("b"), fake("w", options=options))
    with pytest.raises(SetupRefused, match="play Othello, not go"):
        play_game(GameSetup("go", 9, 9, MatchTimeControl.parse("move=5"), {"komi": 7.5}),
                  fake("b"), fake("w"))


@pytest.mark.parametrize("answer, reason, words", [
    ("!crash", Reason.CRASH, "exit status 3"),
    ("!empty", Reason.ILLEGAL, "starts with a move"),
    ("Z9", Reason.ILLEGAL, "not a move"),
    ("A1", Reason.ILLEGAL, "A1"),
    ("PA", Reason.ILLEGAL, "PA"),
])
def test_engine_failures_lose_the_game(answer: str, reason: Reason, words: str) -> None:
    game = play_game(OTHELLO, fake("b", answer), fake("w"))
    assert (game.reason, game.winner) == (reason, WHITE)
    assert words in game.detail
    assert game.game.moves == []


def test_a_hang_loses_on_time() -> None:
    setup = GameSetup("othello", 8, 8, MatchTimeControl.parse("move=0.2"), {})
    game = play_game(setup, fake("b"), fake("w", "!hang"), margin=0.1)
    assert (game.reason, game.winner) == (Reason.TIME, BLACK)


def test_a_match_writes_ggf_beside_sgf_and_both_read_back_alike(tmp_path: Path) -> None:
    out = tmp_path / "m"
    stdout = io.StringIO()
    status = main(["--game", "othello", "--games", "3", "--tc", "60+1", "--random-plies", "2",
                   "--seed", "4", "--out", str(out),
                   "--engine", f"a={fake_command()}", "--engine", f"b={fake_command('!crash')}",
                   "--protocol", "a=nboard", "--protocol", "b=NBoard",
                   "--option", "a:depth=2"], stdout=stdout)
    assert status == 0
    text = stdout.getvalue()
    record = MatchRecord.of(out)
    assert f"games in {record.games} and {record.with_suffix('.ggf')}" in text
    ggf_text = record.with_suffix(".ggf").read_text()
    games = parse_ggf_collection(ggf_text)
    assert len(games) == 3 and ggf_text.count("\n") == 3
    from_sgf = list(read_games([record.games]))
    from_ggf = list(read_games([record.with_suffix(".ggf")]))
    def moves(game: RecordedGame) -> list[SgfMove]:
        return [node.move for node in game.sgf.nodes if node.move is not None]

    assert [moves(g) for g in from_ggf] == [moves(g) for g in from_sgf]
    assert [g.sgf.moves for g in from_ggf] == [len(g.moves) for g in games]
    # GGF has no forfeit: a crash is written as a resignation (`:r`).
    assert [g.sgf.result for g in from_ggf] == [str(g.sgf.result).replace("+F", "+R")
                                               for g in from_sgf]
    assert str(from_ggf[0].sgf.game_comment).endswith("the first 2 moves are the opening")
    first = games[0]
    assert (first.tags["PB"], first.tags["PW"], first.tags["TI"]) == ("a", "b", "1:00/1")
    assert "game 1" in first.tags["CO"]
    assert first.moves[2].seconds is not None and first.moves[2].eval == 0.5
    assert first.moves[0].seconds is None  # the opening's plies were the referee's
    # Game 2: b plays Black, crashes on its first move: a wipe-out for White, `:r`.
    assert games[1].tags["RE"] == "-64:r" and ggf_result("-64:r") == "W+R"
    summary = json.loads(record.summary.read_text())
    assert summary["protocols"] == {"a": "nboard", "b": "nboard"}
    assert summary["options"] == {"a": {"depth": "2"}}


def test_a_folder_of_records_reads_each_game_once(tmp_path: Path) -> None:
    status = main(["--game", "othello", "--games", "1", "--out", str(tmp_path / "m"),
                   "--engine", f"a={fake_command()}", "--engine", f"b={fake_command()}",
                   "--protocol", "a=nboard", "--protocol", "b=nboard"], stdout=io.StringIO())
    assert status == 0
    only_ggf = tmp_path / "only.ggf"
    only_ggf.write_text((tmp_path / "m.ggf").read_text())
    found = [g.where for g in read_games([tmp_path])]
    assert found == [f"{(tmp_path / 'm.sgf').as_posix()}#1", f"{only_ggf.as_posix()}#1"]
    assert [g.source for g in read_games([tmp_path / "only"])] == [only_ggf]


def test_protocol_mistakes_exit_with_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    engines = ["--engine", f"a={fake_command()}", "--engine", f"b={fake_command()}"]
    for extra, words in ((["--protocol", "c=nboard"], "ENGINE one of"),
                         (["--protocol", "a"], "ENGINE=PROTOCOL"),
                         (["--protocol", "a=telnet"], "no protocol"),
                         (["--protocol", "a=uci"], "cannot speak uci"),
                         (["--option", "a:depth=2"], "speaks gtp, which has no engine options")):
        with pytest.raises(SystemExit) as exited:
            main(["--game", "othello", *engines, *extra], stdout=io.StringIO())
        assert exited.value.code == 2, extra
        assert words in capsys.readouterr().err, extra
    with pytest.raises(SystemExit):
        main(["--game", "go", "--size", "5", *engines, "--protocol", "a=nboard"],
             stdout=io.StringIO())
    assert "NBoard engines play Othello" in capsys.readouterr().err


@pytest.mark.skipif(not NTEST, reason="SAZ_NTEST (a command that starts NTest in NBoard mode) "
                                      "is not set")
def test_a_short_match_against_ntest(tmp_path: Path) -> None:
    assert NTEST is not None
    out = tmp_path / "m"
    status = main(["--game", "othello", "--games", "2", "--tc", "move=2", "--random-plies", "2",
                   "--out", str(out), "--engine", f"a={fake_command()}",
                   "--engine", f"ntest={NTEST}", "--protocol", "a=nboard",
                   "--protocol", "ntest=nboard", "--option", "ntest:depth=1"],
                  stdout=io.StringIO())
    assert status == 0
    summary = json.loads(MatchRecord.of(out).summary.read_text())
    assert [g["reason"] for g in summary["games"]] == ["score", "score"]
    games = parse_ggf_collection(MatchRecord.of(out).with_suffix(".ggf").read_text())
    assert all(to_game(g).is_over() for g in games)
