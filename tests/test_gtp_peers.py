"""Whole games against real engines, set up as a new user would: `saz gtp` against GNU Go on 9x9
Go and against gtp-rhino on 8x8 Othello (`apt-get install -y gnugo grhino`).

A referee holds its own copy of the game (`engine/games`), asks the side to move for a move over
GTP (`protocol/gtp_client.py`), checks that the move is legal and came within the time the
controller allowed (`time_settings`, told to both engines), plays it on its board and tells the
other engine. Both games must reach their end. Skipped, saying why, when a peer is not installed.
"""
from __future__ import annotations

import os
import shutil
import sys

import pytest

from saz.engine.games import Game, new_game
from saz.engine.games.base import BLACK, WHITE
from saz.protocol.gtp_client import GtpClient
from saz.protocol.vertex import Vertices, vertices_for

SAZ_GTP = [sys.executable, "-m", "saz.engine.cli", "gtp"]
#: Seconds per move, as `time_settings 0 SECONDS 1` (Canadian: one stone per period).
MOVE_SECONDS = 2
#: What the referee adds for process scheduling and the pipes on a loaded machine.
SLACK = 1.0
COLORS = {BLACK: "b", WHITE: "w"}


def _peer(name: str) -> str:
    """The path of a peer engine; Debian puts games in /usr/games, often not on PATH."""
    path = shutil.which(name, path=os.pathsep.join([os.environ.get("PATH", ""), "/usr/games"]))
    if path is None:
        pytest.skip(f"{name} is not installed (apt-get install -y gnugo grhino)")
    return path


def _genmove(client: GtpClient, color: int) -> str:
    reply = client.send(f"genmove {COLORS[color]}", timeout=MOVE_SECONDS + 30)
    assert reply.ok, f"{client.argv[0]}: genmove failed: {reply.text}"
    assert reply.seconds <= MOVE_SECONDS + SLACK, (
        f"{client.argv[0]} took {reply.seconds:.2f} s for a move; {MOVE_SECONDS} s allowed")
    return reply.text


def _referee_move(game: Game, vertices: Vertices, text: str, who: str) -> int:
    move = vertices.parse(text)
    assert game.is_legal(move), f"{who} played the illegal {text} in\n{game}"
    game.play(move)
    return move


def test_a_9x9_game_against_gnu_go(tiny_model) -> None:
    gnugo = _peer("gnugo")
    referee = new_game("go", 9, komi=7.5)
    vertices = vertices_for("go", 9, 9)
    with GtpClient([*SAZ_GTP, "--model", str(tiny_model("go").path), "--visits", "16"]) as saz, \
            GtpClient([gnugo, "--mode", "gtp", "--level", "1"]) as gnu:
        for client in (saz, gnu):
            for command in ("boardsize 9", "clear_board", "komi 7.5",
                            f"time_settings 0 {MOVE_SECONDS} 1"):
                client.command(command, timeout=30)
        players = {BLACK: saz, WHITE: gnu}
        while not referee.is_over():
            assert len(referee.moves) < 500, "the game does not end"
            color = referee.to_move
            mover, other = players[color], players[-color]
            text = _genmove(mover, color)
            _referee_move(referee, vertices, text, mover.argv[0])
            other.command(f"play {COLORS[color]} {text}", timeout=30)
        score = referee.score()  # type: ignore[attr-defined]
        assert saz.command("final_score") == f"{'B' if score > 0 else 'W'}+{abs(score):g}"
        assert saz.command("gogui-rules_final_result") == ("black" if score > 0 else "white")


def test_an_8x8_othello_game_against_gtp_rhino(tiny_model) -> None:
    """gtp-rhino passes by itself: it rejects `play COLOR pass` and skips a side that cannot
    move. So a forced pass is never sent to it, and `saz gtp` must take the next move of the
    other colour as the pass (and answer `pass` itself when it is the one that cannot move)."""
    rhino_path = _peer("gtp-rhino")
    referee = new_game("othello", 8)
    vertices = vertices_for("othello", 8, 8)
    with GtpClient([*SAZ_GTP, "--game", "othello", "--model",
                    str(tiny_model("othello").path), "--visits", "16"]) as saz, \
            GtpClient([rhino_path, "-l", "1"]) as rhino:
        for client in (saz, rhino):
            for command in ("set_game Othello", "boardsize 8", "clear_board",
                            f"time_settings 0 {MOVE_SECONDS} 1"):
                client.command(command, timeout=30)
        players = {BLACK: rhino, WHITE: saz}
        while not referee.is_over():
            color = referee.to_move
            mover, other = players[color], players[-color]
            forced_pass = [int(m) for m in referee.legal_moves()] == [referee.pass_move]
            if forced_pass and mover is rhino:
                referee.play(referee.pass_move)  # rhino has skipped this turn on its own
                continue
            text = _genmove(mover, color)
            if _referee_move(referee, vertices, text, mover.argv[0]) == referee.pass_move:
                continue  # forced: the other engine will see the next move of this colour
            other.command(f"play {COLORS[color]} {text}", timeout=30)
        black, white = referee.disc_count()  # type: ignore[attr-defined]
        difference = black - white
        expected = "0" if not difference else f"{'B' if difference > 0 else 'W'}+{abs(difference)}"
        assert saz.command("final_score") == expected
        assert rhino.command("showboard").count("X") == black
