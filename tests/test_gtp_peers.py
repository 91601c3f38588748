"""Whole games against real engines, set up as a new user would: `saz gtp` against GNU Go on 9x9
Go and against gtp-rhino on 8x8 Othello (`apt-get install -y gnugo grhino`).

`saz match`'s referee (`tools/match/referee.py`) plays them: it holds its own copy of the game, asks
the side to move for a move over GTP, checks that the move is legal and came within the time
announced to both engines (`time_settings 0 2 1`: two seconds a move, one second of slack), and
tells the other engine. Both games must reach their end by the rules. Then each engine, given
the finished game afresh (`saz gtp` from the SGF record the match wrote, through `loadsgf`),
must count it as the referee did. Skipped, saying why, when a peer is not installed.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from saz.protocol.gtp_client import GtpClient
from saz.protocol.sgf_writer import format_sgf
from saz.protocol.vertex import vertices_for
from saz.tools.match.adapters import EngineSpec, GameSetup, resolve_program
from saz.tools.match.referee import GameRecord, Reason, play_game
from saz.tools.match.time_control import MatchTimeControl

SAZ_GTP = [sys.executable, "-m", "saz.engine.cli", "gtp"]
#: Two seconds a move (Canadian: one stone per period), one second of slack for the pipes and
#: process scheduling on a loaded machine.
TWO_SECONDS = MatchTimeControl(per_move=2.0)
SLACK = 1.0


def _peer(name: str, *args: str) -> EngineSpec:
    """A peer engine; Debian puts games in /usr/games, often not on PATH."""
    try:
        return EngineSpec(name, (resolve_program(name), *args))
    except ValueError:
        pytest.skip(f"{name} is not installed (apt-get install -y gnugo grhino)")


def _saz(game: str, model: Path) -> EngineSpec:
    return EngineSpec("saz", (*SAZ_GTP, "--game", game, "--model", str(model), "--visits", "16"))


def _finished(record: GameRecord) -> None:
    assert record.reason is Reason.SCORE, f"{record.result}: {record.detail}"
    assert record.game.is_over()
    assert max(record.slowest.values()) <= TWO_SECONDS.per_move + SLACK


def _loaded(game: str, model: Path, record: GameRecord, tmp_path: Path) -> GtpClient:
    """A fresh `saz gtp` that has loaded the game's SGF record."""
    path = tmp_path / "game.sgf"
    path.write_text(format_sgf(record.game))
    client = GtpClient([*SAZ_GTP, "--game", game, "--model", str(model)])
    client.command(f"loadsgf {path}", timeout=30)
    return client


def test_a_9x9_game_against_gnu_go(tiny_model, tmp_path: Path) -> None:
    gnugo = _peer("gnugo", "--mode", "gtp", "--level", "1")
    model = tiny_model("go").path
    setup = GameSetup("go", 9, 9, TWO_SECONDS, {"komi": 7.5})
    record = play_game(setup, _saz("go", model), gnugo, margin=SLACK)
    _finished(record)
    score = record.game.score()  # type: ignore[attr-defined]
    with _loaded("go", model, record, tmp_path) as saz:
        assert saz.command("final_score") == f"{'B' if score > 0 else 'W'}+{abs(score):g}"
        assert saz.command("gogui-rules_final_result") == ("black" if score > 0 else "white")


def test_an_8x8_othello_game_against_gtp_rhino(tiny_model, tmp_path: Path) -> None:
    """gtp-rhino passes by itself: it rejects `play COLOR pass` and skips a side that cannot
    move. The referee never sends it a pass nor asks a side that must pass; `saz gtp` takes the
    next move of the other colour as the pass."""
    rhino = _peer("gtp-rhino", "-l", "1")
    model = tiny_model("othello").path
    setup = GameSetup("othello", 8, 8, TWO_SECONDS)
    record = play_game(setup, rhino, _saz("othello", model), margin=SLACK)
    _finished(record)
    black, white = record.game.disc_count()  # type: ignore[attr-defined]
    difference = black - white
    expected = "0" if not difference else f"{'B' if difference > 0 else 'W'}+{abs(difference)}"
    assert record.result == expected
    with _loaded("othello", model, record, tmp_path) as saz:
        assert saz.command("final_score") == expected
    vertices = vertices_for("othello", 8, 8)
    with GtpClient(list(rhino.argv)) as fresh:  # the moves again, passes left out
        for index, move in enumerate(record.game.moves):
            if move != record.game.pass_move:
                color = "b" if index % 2 == 0 else "w"
                fresh.command(f"play {color} {vertices.format(move)}", timeout=30)
        assert fresh.command("showboard").count("X") == black
